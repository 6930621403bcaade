/* The feed-forward sublayer's backward, composed (issues 8/9): what the ffn rows run proves of
 * ffn_backward_* (-DRESNORM_WP_ROWS, proofs/ffn.sh, session proofs/session_ffn_rows;
 * proofs/README-sublayers.md "FFN: the backward composed").  Included by ref/ffn.c in that run only,
 * after specs/ffn_rows.h (the forward's) — and by nothing else: specs/block_rows.h includes
 * specs/ffn_rows.h, and the block's runs (their goals, sessions and call sites of ffn_backward_*)
 * stay as they were.  Frama-C merges the clauses below into FFN_BWD_CONTRACT there, under one
 * extra precondition, sep_mask_db (the mask separated from db1 and db2: the base contract's sep_mask
 * separates it from dh, dx, dw1, dw2 only, and a db2 over the mask would change the mask the dropout
 * reads).  Over the reals (-wp-model real), from linear_backward's rows contract (dx_rows, dw_sum,
 * specs/linear_rows.h) and db_sum (specs/linear.h), dropout's y_def, the activation gradients'
 * contracts and the fill's rows-only value (ref/ffn.c):
 *   dw2_sum: dw2[j·ff + k] += sum_r dy[r·d + j]·h[r·ff + k]       (lin_dw_rows, dy and h at entry)
 *   db2_sum: db2[j] += sum_r dy[r·d + j]                           (lin_csum, dy at entry)
 *   dz_rows: dh on return is dz: dh[r·ff + k] == act'(z[r·ff + k])·g, g = sum_j dy[r·d + j]·w2[j·ff + k]
 *            times mask[r·ff + k]/(1 − p) with a mask               (ffn_dz32/64; z, mask, dy, w2 at entry)
 *   dx_rows: dx[r·d + k] += sum_j dh[r·ff + j]·w1[j·d + k]         (lin_sdot, dh on return)
 *   dw1_sum: dw1[j·d + k] += sum_r dh[r·ff + j]·x[r·d + k]         (lin_dw_sum, dh on return)
 *   db1_sum: db1[j] += sum_r dh[r·ff + j]                          (lin_csum, dh on return)
 * So dw2 += dyᵀ·h, db2 += Σ dy, dz = act'(z)·((dy·w2)·mask/(1 − p)), dx += dz·w1, dw1 += dzᵀ·x,
 * db1 += Σ dz, row by row (the gelus under libm_erf, libm_tanh, libm_exp).  The dots over two
 * memory states: lin_sdot_off_eq, lin_sdot_off_frame (specs/linear_rows.h, proved by prove-linear's
 * rows run); the sums over rows over two states: ffn_dw_sum_frame, ffn_csum_frame below, proved by
 * this run's lemma pass (the *_frame ones by Wp.induction scripts, proofs/session_ffn_rows/script/).
 */
#ifndef RESNORM_FFN_BWD_ROWS_H
#define RESNORM_FFN_BWD_ROWS_H

#include "ffn_rows.h"

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
