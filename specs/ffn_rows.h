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

/*@
  // The backward: g·act'(a), with the constants of the compute type (as ffn_act_backward_*).
  logic real ffn_act_grad32(ffn_act act, real a, real g) =
    act == FFN_RELU ? ffn_relu_grad(a, g) :
    act == FFN_GELU ? ffn_gelu_grad(a, g, 0x1.6a09e6p-1, 0x1.988454p-2) :
                      ffn_gelu_tanh_grad(a, g, 0x1.988454p-1, 0x1.6e4e26p-5);
  logic real ffn_act_grad64(ffn_act act, real a, real g) =
    act == FFN_RELU ? ffn_relu_grad(a, g) :
    act == FFN_GELU ? ffn_gelu_grad(a, g, 0x1.6a09e667f3bcdp-1, 0x1.9884533d43651p-2) :
                      ffn_gelu_tanh_grad(a, g, 0x1.9884533d43651p-1, 0x1.6e4e26d4801f7p-5);
  // dz[i] for the gradient g of h[i]: through the dropout's map (mask[i]/(1 − p)) when a mask is
  // given, then act'(z[i]).
  // v[0 .. n - 1] are all 0 (a predicate of its own: the goals then carry no bare real 0, which
  // Frama-C 25's real model prints as an integer literal that Why3 1.5.1 rejects).
  predicate ffn_zeroed{L}(float *v, integer n) = \forall integer k; 0 <= k < n ==> v[k] == 0.0;
  predicate ffn_zeroed{L}(double *v, integer n) = \forall integer k; 0 <= k < n ==> v[k] == 0.0;
  logic real ffn_dz32{L}(ffn_act act, float *z, float *mask, real p, integer i, real g) =
    ffn_act_grad32(act, z[i], mask == \null ? g : dropout_val(g, mask[i], 1.0 / (1.0 - p)));
  logic real ffn_dz64{L}(ffn_act act, double *z, double *mask, real p, integer i, real g) =
    ffn_act_grad64(act, z[i], mask == \null ? g : dropout_val(g, mask[i], 1.0 / (1.0 - p)));
*/

/*@
  // The backward's frame lemmas (proved by this run's lemma pass, the *_frame ones by induction
  // scripts in proofs/session_ffn_rows/script/): linear_backward's dw_sum and db_sum are stated over
  // the memory of its call; the driver restates them over the memory at entry (dh, the only array
  // written before the call, is separated from dy and h), and the second call's over the memory on
  // return.  lin_csum reads a[(n - 1)·s + c]: the frame's hypothesis is over lin_col_idx(q, s, c)
  // (a symbol with q a direct argument: a trigger the solvers can instantiate).
  lemma ffn_dw_sum_step_f32{A, B}: \forall float *dy, float *x, integer j, k, in, out, r; 0 < r ==>
    \at(dy[lin_row_start(r - 1, out) + j], A) == \at(dy[lin_row_start(r - 1, out) + j], B) ==>
    \at(x[lin_row_start(r - 1, in) + k], A) == \at(x[lin_row_start(r - 1, in) + k], B) ==>
    lin_dw_sum{A}(dy, x, j, k, in, out, r - 1) == lin_dw_sum{B}(dy, x, j, k, in, out, r - 1) ==>
    lin_dw_sum{A}(dy, x, j, k, in, out, r) == lin_dw_sum{B}(dy, x, j, k, in, out, r);
  lemma ffn_dw_sum_step_f64{A, B}: \forall double *dy, double *x, integer j, k, in, out, r; 0 < r ==>
    \at(dy[lin_row_start(r - 1, out) + j], A) == \at(dy[lin_row_start(r - 1, out) + j], B) ==>
    \at(x[lin_row_start(r - 1, in) + k], A) == \at(x[lin_row_start(r - 1, in) + k], B) ==>
    lin_dw_sum{A}(dy, x, j, k, in, out, r - 1) == lin_dw_sum{B}(dy, x, j, k, in, out, r - 1) ==>
    lin_dw_sum{A}(dy, x, j, k, in, out, r) == lin_dw_sum{B}(dy, x, j, k, in, out, r);
  lemma ffn_dw_sum_frame_f32{A, B}: \forall float *dy, float *x, integer j, k, in, out, r; 0 <= r ==>
    (\forall integer q; 0 <= q < r ==>
       \at(dy[lin_row_start(q, out) + j], A) == \at(dy[lin_row_start(q, out) + j], B)) ==>
    (\forall integer q; 0 <= q < r ==>
       \at(x[lin_row_start(q, in) + k], A) == \at(x[lin_row_start(q, in) + k], B)) ==>
    lin_dw_sum{A}(dy, x, j, k, in, out, r) == lin_dw_sum{B}(dy, x, j, k, in, out, r);
  lemma ffn_dw_sum_frame_f64{A, B}: \forall double *dy, double *x, integer j, k, in, out, r; 0 <= r ==>
    (\forall integer q; 0 <= q < r ==>
       \at(dy[lin_row_start(q, out) + j], A) == \at(dy[lin_row_start(q, out) + j], B)) ==>
    (\forall integer q; 0 <= q < r ==>
       \at(x[lin_row_start(q, in) + k], A) == \at(x[lin_row_start(q, in) + k], B)) ==>
    lin_dw_sum{A}(dy, x, j, k, in, out, r) == lin_dw_sum{B}(dy, x, j, k, in, out, r);

  lemma ffn_csum_step_f32{A, B}: \forall float *a, integer c, s, n; 0 < n ==>
    \at(a[lin_col_idx(n - 1, s, c)], A) == \at(a[lin_col_idx(n - 1, s, c)], B) ==>
    lin_csum{A}(a, c, s, n - 1) == lin_csum{B}(a, c, s, n - 1) ==>
    lin_csum{A}(a, c, s, n) == lin_csum{B}(a, c, s, n);
  lemma ffn_csum_step_f64{A, B}: \forall double *a, integer c, s, n; 0 < n ==>
    \at(a[lin_col_idx(n - 1, s, c)], A) == \at(a[lin_col_idx(n - 1, s, c)], B) ==>
    lin_csum{A}(a, c, s, n - 1) == lin_csum{B}(a, c, s, n - 1) ==>
    lin_csum{A}(a, c, s, n) == lin_csum{B}(a, c, s, n);
  lemma ffn_csum_frame_f32{A, B}: \forall float *a, integer c, s, n; 0 <= n ==>
    (\forall integer q; 0 <= q < n ==> \at(a[lin_col_idx(q, s, c)], A) == \at(a[lin_col_idx(q, s, c)], B)) ==>
    lin_csum{A}(a, c, s, n) == lin_csum{B}(a, c, s, n);
  lemma ffn_csum_frame_f64{A, B}: \forall double *a, integer c, s, n; 0 <= n ==>
    (\forall integer q; 0 <= q < n ==> \at(a[lin_col_idx(q, s, c)], A) == \at(a[lin_col_idx(q, s, c)], B)) ==>
    lin_csum{A}(a, c, s, n) == lin_csum{B}(a, c, s, n);
*/

/*@ requires sep_mask_db: mask == \null ||
      ((db1 == \null || \separated(mask + (0 .. rows * ff - 1), db1 + (0 .. ff - 1))) &&
       (db2 == \null || \separated(mask + (0 .. rows * ff - 1), db2 + (0 .. d - 1))));
    ensures dw2_sum: lin_dw_rows{Pre, Post}(dw2, dy, h, rows, ff, d);
    ensures db2_sum: db2 != \null ==> \forall integer j; 0 <= j < d ==> db2[j] == \old(db2[j]) + lin_csum{Pre}(dy, j, d, rows);
    ensures dz_rows: \forall integer r, k; 0 <= r < rows && 0 <= k < ff ==>
      dh[lin_col_idx(r, ff, k)] ==
        ffn_dz32{Pre}(act, z, mask, p, lin_col_idx(r, ff, k), lin_sdot{Pre}(dy + lin_row_start(r, d), w2, k, ff, d));
    ensures dx_rows: \forall integer r, k; 0 <= r < rows && 0 <= k < d ==>
      dx[lin_row_start(r, d) + k] == \old(dx[lin_row_start(r, d) + k]) + lin_sdot(dh + lin_row_start(r, ff), w1, k, d, ff);
    ensures dw1_sum: \forall integer j, k; 0 <= j < ff && 0 <= k < d ==>
      dw1[lin_col_idx(j, d, k)] == \old(dw1[lin_col_idx(j, d, k)]) + lin_dw_sum(dh, x, j, k, d, ff, rows);
    ensures db1_sum: db1 != \null ==> \forall integer j; 0 <= j < ff ==> db1[j] == \old(db1[j]) + lin_csum(dh, j, ff, rows); */
void ffn_backward_f32(float *dx, float *dw1, float *db1, float *dw2, float *db2, float *dh,
                      const float *dy, const float *x, const float *z, const float *h,
                      const float *w1, const float *w2, const float *mask, float p, ffn_act act,
                      int rows, int d, int ff);
/*@ requires sep_mask_db: mask == \null ||
      ((db1 == \null || \separated(mask + (0 .. rows * ff - 1), db1 + (0 .. ff - 1))) &&
       (db2 == \null || \separated(mask + (0 .. rows * ff - 1), db2 + (0 .. d - 1))));
    ensures dw2_sum: lin_dw_rows{Pre, Post}(dw2, dy, h, rows, ff, d);
    ensures db2_sum: db2 != \null ==> \forall integer j; 0 <= j < d ==> db2[j] == \old(db2[j]) + lin_csum{Pre}(dy, j, d, rows);
    ensures dz_rows: \forall integer r, k; 0 <= r < rows && 0 <= k < ff ==>
      dh[lin_col_idx(r, ff, k)] ==
        ffn_dz64{Pre}(act, z, mask, p, lin_col_idx(r, ff, k), lin_sdot{Pre}(dy + lin_row_start(r, d), w2, k, ff, d));
    ensures dx_rows: \forall integer r, k; 0 <= r < rows && 0 <= k < d ==>
      dx[lin_row_start(r, d) + k] == \old(dx[lin_row_start(r, d) + k]) + lin_sdot(dh + lin_row_start(r, ff), w1, k, d, ff);
    ensures dw1_sum: \forall integer j, k; 0 <= j < ff && 0 <= k < d ==>
      dw1[lin_col_idx(j, d, k)] == \old(dw1[lin_col_idx(j, d, k)]) + lin_dw_sum(dh, x, j, k, d, ff, rows);
    ensures db1_sum: db1 != \null ==> \forall integer j; 0 <= j < ff ==> db1[j] == \old(db1[j]) + lin_csum(dh, j, ff, rows); */
void ffn_backward_f64(double *dx, double *dw1, double *db1, double *dw2, double *db2, double *dh,
                      const double *dy, const double *x, const double *z, const double *h,
                      const double *w1, const double *w2, const double *mask, double p, ffn_act act,
                      int rows, int d, int ff);

#endif
