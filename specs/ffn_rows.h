/* The feed-forward sublayer's forward, composed (issue 8; the block's issue 9 builds on it): what the
 * ffn rows run proves (-DRESNORM_WP_ROWS, proofs/ffn.sh, session proofs/session_ffn_rows;
 * proofs/README-sublayers.md "FFN: the forward composed").  Included by ref/ffn.c in that run only,
 * after specs/linear_rows.h, whose rows contract of linear_forward_* (y_rows, proved by prove-linear's
 * rows run) the driver is proved against; Frama-C merges the clauses below into ffn_forward_*'s
 * contract there.  Every statement is over the reals (-wp-model real) and over the kernel's outputs
 * and caches on return:
 *
 *   z_rows:  every row r of the cache z is row r of x times w1ᵀ plus b1, over the inputs at entry:
 *              z[r·ff + k] == b1[k] + sum_c x[r·d + c]·w1[k·d + c]       (lin_row_y, specs/linear_rows.h)
 *   h_def:   every h[i] is the activation of z[i], times mask[i]/(1 − p) with a dropout mask:
 *              h[i] == act(z[i])                     (no mask, eval mode)
 *              h[i] == act(z[i])·mask[i]·(1/(1 − p))  (dropout_val, specs/dropout.h)
 *            act: relu, gelu (erf) or gelu_tanh with the f32 / f64 constants of specs/ffn.h
 *            (ffn_act32 / ffn_act64; libm_erf, libm_tanh: proofs/libm-assumptions.md)
 *   y_rows:  every row r of y is row r of h times w2ᵀ plus b2, over h, w2 and b2 on return:
 *              y[r·d + j] == b2[j] + sum_k h[r·ff + k]·w2[j·ff + k]
 * So y = (act(x·w1ᵀ + b1)·mask/(1 − p))·w2ᵀ + b2, the formula of specs/ffn.h, row by row.
 * The lemmas this run uses (lin_dot_shift, lin_dot_at_frame: a dot over two memory states) are
 * those of specs/linear_rows.h, proved by prove-linear's rows run from committed induction scripts.
 */
#ifndef RESNORM_FFN_ROWS_H
#define RESNORM_FFN_ROWS_H

#include "dropout.h"
#include "ffn.h"
#include "linear_rows.h"

/*@
  // The activation act of a, with the constants of the compute type (as ffn_act_forward_*).
  logic real ffn_act32(ffn_act act, real a) =
    act == FFN_RELU ? ffn_relu(a) :
    act == FFN_GELU ? ffn_gelu(a, 0x1.6a09e6p-1) : ffn_gelu_tanh(a, 0x1.988454p-1, 0x1.6e4e26p-5);
  logic real ffn_act64(ffn_act act, real a) =
    act == FFN_RELU ? ffn_relu(a) :
    act == FFN_GELU ? ffn_gelu(a, 0x1.6a09e667f3bcdp-1) :
                      ffn_gelu_tanh(a, 0x1.9884533d43651p-1, 0x1.6e4e26d4801f7p-5);
  // h[i]: the activation of z[i], dropped with the mask (scale 1/(1 − p)) when one is given.
  logic real ffn_h32{L}(ffn_act act, float *z, float *mask, real p, integer i) =
    mask == \null ? ffn_act32(act, z[i]) : dropout_val(ffn_act32(act, z[i]), mask[i], 1.0 / (1.0 - p));
  logic real ffn_h64{L}(ffn_act act, double *z, double *mask, real p, integer i) =
    mask == \null ? ffn_act64(act, z[i]) : dropout_val(ffn_act64(act, z[i]), mask[i], 1.0 / (1.0 - p));
*/

/*@ ensures z_rows: \forall integer r; 0 <= r < rows ==> lin_row_y{Pre, Post}(z, x, w1, b1, r, d, ff);
    ensures h_def: \forall integer i; 0 <= i < rows * ff ==> h[i] == ffn_h32(act, z, mask, p, i);
    ensures y_rows: \forall integer r; 0 <= r < rows ==> lin_row_y{Post, Post}(y, h, w2, b2, r, ff, d); */
void ffn_forward_f32(float *y, float *z, float *h, const float *x, const float *w1, const float *b1,
                     const float *w2, const float *b2, const float *mask, float p, ffn_act act, int rows,
                     int d, int ff);
/*@ ensures z_rows: \forall integer r; 0 <= r < rows ==> lin_row_y{Pre, Post}(z, x, w1, b1, r, d, ff);
    ensures h_def: \forall integer i; 0 <= i < rows * ff ==> h[i] == ffn_h64(act, z, mask, p, i);
    ensures y_rows: \forall integer r; 0 <= r < rows ==> lin_row_y{Post, Post}(y, h, w2, b2, r, ff, d); */
void ffn_forward_f64(double *y, double *z, double *h, const double *x, const double *w1, const double *b1,
                     const double *w2, const double *b2, const double *mask, double p, ffn_act act,
                     int rows, int d, int ff);

#endif
