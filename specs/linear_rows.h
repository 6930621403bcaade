/* Rows composed for the linear layer's drivers (issue 8): what the rows run proves
 * (-DRESNORM_WP_ROWS, proofs/linear.sh, session proofs/session_linear_rows; proofs/README-sublayers.md
 * "Rows composed: the forward drivers").  Included by ref/linear.c in that run only, so the contracts
 * that attention, ffn and the block are proved against (specs/linear.h) are unchanged; Frama-C merges
 * the clause below into linear_forward_*'s contract there.
 *
 *   y_rows: every row r of y is row r of x times Wᵀ plus b, over the inputs at entry:
 *     y[r·out + j] == b[j] + sum_k x[r·in + k]·W[j·in + k]   (lin_bias + lin_dot, as the row kernel's y_def)
 *   dx_acc (row backward), dx_rows (backward driver): every row of dx has accumulated dy's row times W;
 *   dw_mul (row backward), dw_sum (backward driver): every dW[j, k] has accumulated
 *     sum_r dy[r·out + j]·x[r·in + k]   (lin_dw_sum, left to right over the rows)
 *
 * The row kernel states its y_def over the memory of its call; the driver needs it over the memory at
 * entry.  Equating the recursive lin_dot over two memory states is an induction, proved by WP's
 * induction tactic from scripts committed in proofs/session_linear_rows/script/ (the pattern of
 * LayerNorm's and RMSNorm's stats_rows / rstd_rows, proofs/README.md "Rows composed: induction by
 * script"):
 *   lin_dot_at(x, sx, w, sw, n) = sum_k x[sx + k]·w[sw + k]  == lin_dot(x + sx, w + sw, n)  (lin_dot_shift)
 * with the offsets in the indices (a frame hypothesis over x's and W's own indices then applies), and
 * each product through lin_mul_v (the solvers do not carry equal reads into a bare product of them).
 */
#ifndef RESNORM_LINEAR_ROWS_H
#define RESNORM_LINEAR_ROWS_H

#include "linear.h"

/*@
  // a·b as a function of its own (Why3 would inline a bare a * b: the guard keeps the symbol)
  logic real lin_mul_v(real a, real b) = a == 0.0 ? 0.0 : a * b;

  logic real lin_dot_at{L}(float *x, integer sx, float *w, integer sw, integer n) =
    n <= 0 ? 0.0 : lin_dot_at(x, sx, w, sw, n - 1) + lin_mul_v(x[sx + n - 1], w[sw + n - 1]);
  logic real lin_dot_at{L}(double *x, integer sx, double *w, integer sw, integer n) =
    n <= 0 ? 0.0 : lin_dot_at(x, sx, w, sw, n - 1) + lin_mul_v(x[sx + n - 1], w[sw + n - 1]);

  lemma lin_dot_unfold_f32{L}: \forall float *x, float *w, integer n; 0 < n ==>
    lin_dot(x, w, n) == lin_dot(x, w, n - 1) + lin_mul_v(x[n - 1], w[n - 1]);
  lemma lin_dot_unfold_f64{L}: \forall double *x, double *w, integer n; 0 < n ==>
    lin_dot(x, w, n) == lin_dot(x, w, n - 1) + lin_mul_v(x[n - 1], w[n - 1]);

  lemma lin_dot_shift_step_f32{L}: \forall float *x, float *w, integer sx, sw, n; 0 < n ==>
    lin_dot(x + sx, w + sw, n - 1) == lin_dot_at(x, sx, w, sw, n - 1) ==>
    lin_dot(x + sx, w + sw, n) == lin_dot_at(x, sx, w, sw, n);
  lemma lin_dot_shift_step_f64{L}: \forall double *x, double *w, integer sx, sw, n; 0 < n ==>
    lin_dot(x + sx, w + sw, n - 1) == lin_dot_at(x, sx, w, sw, n - 1) ==>
    lin_dot(x + sx, w + sw, n) == lin_dot_at(x, sx, w, sw, n);

  lemma lin_dot_shift_f32{L}: \forall float *x, float *w, integer sx, sw, n; 0 <= n ==>
    lin_dot(x + sx, w + sw, n) == lin_dot_at(x, sx, w, sw, n);
  lemma lin_dot_shift_f64{L}: \forall double *x, double *w, integer sx, sw, n; 0 <= n ==>
    lin_dot(x + sx, w + sw, n) == lin_dot_at(x, sx, w, sw, n);

  lemma lin_dot_at_step_f32{A, B}: \forall float *x, float *w, integer sx, sw, n; 0 < n ==>
    \at(x[sx + n - 1], A) == \at(x[sx + n - 1], B) ==> \at(w[sw + n - 1], A) == \at(w[sw + n - 1], B) ==>
    lin_dot_at{A}(x, sx, w, sw, n - 1) == lin_dot_at{B}(x, sx, w, sw, n - 1) ==>
    lin_dot_at{A}(x, sx, w, sw, n) == lin_dot_at{B}(x, sx, w, sw, n);
  lemma lin_dot_at_step_f64{A, B}: \forall double *x, double *w, integer sx, sw, n; 0 < n ==>
    \at(x[sx + n - 1], A) == \at(x[sx + n - 1], B) ==> \at(w[sw + n - 1], A) == \at(w[sw + n - 1], B) ==>
    lin_dot_at{A}(x, sx, w, sw, n - 1) == lin_dot_at{B}(x, sx, w, sw, n - 1) ==>
    lin_dot_at{A}(x, sx, w, sw, n) == lin_dot_at{B}(x, sx, w, sw, n);

  lemma lin_dot_at_frame_f32{A, B}: \forall float *x, float *w, integer sx, sw, n; 0 <= n ==>
    (\forall integer i; sx <= i < sx + n ==> \at(x[i], A) == \at(x[i], B)) ==>
    (\forall integer i; sw <= i < sw + n ==> \at(w[i], A) == \at(w[i], B)) ==>
    lin_dot_at{A}(x, sx, w, sw, n) == lin_dot_at{B}(x, sx, w, sw, n);
  lemma lin_dot_at_frame_f64{A, B}: \forall double *x, double *w, integer sx, sw, n; 0 <= n ==>
    (\forall integer i; sx <= i < sx + n ==> \at(x[i], A) == \at(x[i], B)) ==>
    (\forall integer i; sw <= i < sw + n ==> \at(w[i], A) == \at(w[i], B)) ==>
    lin_dot_at{A}(x, sx, w, sw, n) == lin_dot_at{B}(x, sx, w, sw, n);

  // The strided dot (column c of W against a): lin_sdot with its products through lin_mul_v and
  // its index through lin_col_idx (a symbol of its own, so that a frame hypothesis over W's column
  // matches the term of the unfolding; the solvers normalize a bare (n - 1)·s + c apart).
  logic integer lin_col_idx(integer j, integer s, integer c) = 0 <= j ? j * s + c : c;
  lemma lin_col_idx_def: \forall integer j, s, c; 0 <= j ==> lin_col_idx(j, s, c) == j * s + c;
  lemma lin_sdot_unfold_f32{L}: \forall float *a, float *w, integer c, s, n; 0 < n ==>
    lin_sdot(a, w, c, s, n) == lin_sdot(a, w, c, s, n - 1) + lin_mul_v(a[n - 1], w[(n - 1) * s + c]);
  lemma lin_sdot_unfold_f64{L}: \forall double *a, double *w, integer c, s, n; 0 < n ==>
    lin_sdot(a, w, c, s, n) == lin_sdot(a, w, c, s, n - 1) + lin_mul_v(a[n - 1], w[(n - 1) * s + c]);
  logic real lin_sdot_at{L}(float *a, float *w, integer c, integer s, integer n) =
    n <= 0 ? 0.0 : lin_sdot_at(a, w, c, s, n - 1) + lin_mul_v(a[n - 1], w[lin_col_idx(n - 1, s, c)]);
  logic real lin_sdot_at{L}(double *a, double *w, integer c, integer s, integer n) =
    n <= 0 ? 0.0 : lin_sdot_at(a, w, c, s, n - 1) + lin_mul_v(a[n - 1], w[lin_col_idx(n - 1, s, c)]);
  lemma lin_sdot_at_eq_step_f32{L}: \forall float *a, float *w, integer c, s, n; 0 < n ==>
    lin_sdot(a, w, c, s, n - 1) == lin_sdot_at(a, w, c, s, n - 1) ==>
    lin_sdot(a, w, c, s, n) == lin_sdot_at(a, w, c, s, n);
  lemma lin_sdot_at_eq_step_f64{L}: \forall double *a, double *w, integer c, s, n; 0 < n ==>
    lin_sdot(a, w, c, s, n - 1) == lin_sdot_at(a, w, c, s, n - 1) ==>
    lin_sdot(a, w, c, s, n) == lin_sdot_at(a, w, c, s, n);
  lemma lin_sdot_at_eq_f32{L}: \forall float *a, float *w, integer c, s, n; 0 <= n ==>
    lin_sdot(a, w, c, s, n) == lin_sdot_at(a, w, c, s, n);
  lemma lin_sdot_at_eq_f64{L}: \forall double *a, double *w, integer c, s, n; 0 <= n ==>
    lin_sdot(a, w, c, s, n) == lin_sdot_at(a, w, c, s, n);
  lemma lin_sdot_at_step_f32{A, B}: \forall float *a, float *w, integer c, s, n; 0 < n ==>
    \at(a[n - 1], A) == \at(a[n - 1], B) ==>
    \at(w[lin_col_idx(n - 1, s, c)], A) == \at(w[lin_col_idx(n - 1, s, c)], B) ==>
    lin_sdot_at{A}(a, w, c, s, n - 1) == lin_sdot_at{B}(a, w, c, s, n - 1) ==>
    lin_sdot_at{A}(a, w, c, s, n) == lin_sdot_at{B}(a, w, c, s, n);
  lemma lin_sdot_at_step_f64{A, B}: \forall double *a, double *w, integer c, s, n; 0 < n ==>
    \at(a[n - 1], A) == \at(a[n - 1], B) ==>
    \at(w[lin_col_idx(n - 1, s, c)], A) == \at(w[lin_col_idx(n - 1, s, c)], B) ==>
    lin_sdot_at{A}(a, w, c, s, n - 1) == lin_sdot_at{B}(a, w, c, s, n - 1) ==>
    lin_sdot_at{A}(a, w, c, s, n) == lin_sdot_at{B}(a, w, c, s, n);
  lemma lin_sdot_at_frame_f32{A, B}: \forall float *a, float *w, integer c, s, n; 0 <= n ==>
    (\forall integer j; 0 <= j < n ==> \at(a[j], A) == \at(a[j], B)) ==>
    (\forall integer j; 0 <= j < n ==> \at(w[lin_col_idx(j, s, c)], A) == \at(w[lin_col_idx(j, s, c)], B)) ==>
    lin_sdot_at{A}(a, w, c, s, n) == lin_sdot_at{B}(a, w, c, s, n);
  lemma lin_sdot_at_frame_f64{A, B}: \forall double *a, double *w, integer c, s, n; 0 <= n ==>
    (\forall integer j; 0 <= j < n ==> \at(a[j], A) == \at(a[j], B)) ==>
    (\forall integer j; 0 <= j < n ==> \at(w[lin_col_idx(j, s, c)], A) == \at(w[lin_col_idx(j, s, c)], B)) ==>
    lin_sdot_at{A}(a, w, c, s, n) == lin_sdot_at{B}(a, w, c, s, n);

  logic real lin_sdot_off{L}(float *a, integer sa, float *w, integer c, integer s, integer n) =
    n <= 0 ? 0.0 : lin_sdot_off(a, sa, w, c, s, n - 1) + lin_mul_v(a[sa + n - 1], w[lin_col_idx(n - 1, s, c)]);
  logic real lin_sdot_off{L}(double *a, integer sa, double *w, integer c, integer s, integer n) =
    n <= 0 ? 0.0 : lin_sdot_off(a, sa, w, c, s, n - 1) + lin_mul_v(a[sa + n - 1], w[lin_col_idx(n - 1, s, c)]);
  lemma lin_sdot_off_eq_step_f32{L}: \forall float *a, float *w, integer sa, c, s, n; 0 < n ==>
    lin_sdot(a + sa, w, c, s, n - 1) == lin_sdot_off(a, sa, w, c, s, n - 1) ==>
    lin_sdot(a + sa, w, c, s, n) == lin_sdot_off(a, sa, w, c, s, n);
  lemma lin_sdot_off_eq_step_f64{L}: \forall double *a, double *w, integer sa, c, s, n; 0 < n ==>
    lin_sdot(a + sa, w, c, s, n - 1) == lin_sdot_off(a, sa, w, c, s, n - 1) ==>
    lin_sdot(a + sa, w, c, s, n) == lin_sdot_off(a, sa, w, c, s, n);
  lemma lin_sdot_off_eq_f32{L}: \forall float *a, float *w, integer sa, c, s, n; 0 <= n ==>
    lin_sdot(a + sa, w, c, s, n) == lin_sdot_off(a, sa, w, c, s, n);
  lemma lin_sdot_off_eq_f64{L}: \forall double *a, double *w, integer sa, c, s, n; 0 <= n ==>
    lin_sdot(a + sa, w, c, s, n) == lin_sdot_off(a, sa, w, c, s, n);
  lemma lin_sdot_off_step_f32{A, B}: \forall float *a, float *w, integer sa, c, s, n; 0 < n ==>
    \at(a[sa + n - 1], A) == \at(a[sa + n - 1], B) ==>
    \at(w[lin_col_idx(n - 1, s, c)], A) == \at(w[lin_col_idx(n - 1, s, c)], B) ==>
    lin_sdot_off{A}(a, sa, w, c, s, n - 1) == lin_sdot_off{B}(a, sa, w, c, s, n - 1) ==>
    lin_sdot_off{A}(a, sa, w, c, s, n) == lin_sdot_off{B}(a, sa, w, c, s, n);
  lemma lin_sdot_off_step_f64{A, B}: \forall double *a, double *w, integer sa, c, s, n; 0 < n ==>
    \at(a[sa + n - 1], A) == \at(a[sa + n - 1], B) ==>
    \at(w[lin_col_idx(n - 1, s, c)], A) == \at(w[lin_col_idx(n - 1, s, c)], B) ==>
    lin_sdot_off{A}(a, sa, w, c, s, n - 1) == lin_sdot_off{B}(a, sa, w, c, s, n - 1) ==>
    lin_sdot_off{A}(a, sa, w, c, s, n) == lin_sdot_off{B}(a, sa, w, c, s, n);
  lemma lin_sdot_off_frame_f32{A, B}: \forall float *a, float *w, integer sa, c, s, n; 0 <= n ==>
    (\forall integer i; sa <= i < sa + n ==> \at(a[i], A) == \at(a[i], B)) ==>
    (\forall integer j; 0 <= j < n ==> \at(w[lin_col_idx(j, s, c)], A) == \at(w[lin_col_idx(j, s, c)], B)) ==>
    lin_sdot_off{A}(a, sa, w, c, s, n) == lin_sdot_off{B}(a, sa, w, c, s, n);
  lemma lin_sdot_off_frame_f64{A, B}: \forall double *a, double *w, integer sa, c, s, n; 0 <= n ==>
    (\forall integer i; sa <= i < sa + n ==> \at(a[i], A) == \at(a[i], B)) ==>
    (\forall integer j; 0 <= j < n ==> \at(w[lin_col_idx(j, s, c)], A) == \at(w[lin_col_idx(j, s, c)], B)) ==>
    lin_sdot_off{A}(a, sa, w, c, s, n) == lin_sdot_off{B}(a, sa, w, c, s, n);
  // Row q of dx (at L2) has accumulated row q of dy times W (dy, W and the old dx at L1).
  predicate lin_row_dx{L1, L2}(float *dx, float *dy, float *w, integer q, integer in, integer out) =
    \forall integer k; 0 <= k < in ==>
      \at(dx[lin_row_start(q, in) + k], L2) ==
        \at(dx[lin_row_start(q, in) + k], L1) + lin_sdot{L1}(dy + lin_row_start(q, out), w, k, in, out);
  // Row q of dx (at L2) has accumulated row q of dy times W (dy, W and the old dx at L1).
  predicate lin_row_dx{L1, L2}(double *dx, double *dy, double *w, integer q, integer in, integer out) =
    \forall integer k; 0 <= k < in ==>
      \at(dx[lin_row_start(q, in) + k], L2) ==
        \at(dx[lin_row_start(q, in) + k], L1) + lin_sdot{L1}(dy + lin_row_start(q, out), w, k, in, out);

  // dW[j, k] over the rows (the backward driver's dw_sum): sum_{q<r} dy[q·out + j]·x[q·in + k], left
  // to right, each product through lin_mul_v (the row kernel's dw_acc adds it as lin_acc_prod; the
  // driver carries the product to the reads at entry, which the solvers do in a symbol, not in a
  // bare product).  Its step is one unfolding over one memory state (the driver reads dy and x at
  // entry: dy_same, x_same), so no frame lemma and no induction are needed (as lin_csum for db).
  logic real lin_dw_sum{L}(float *dy, float *x, integer j, integer k, integer in, integer out, integer r) =
    r <= 0 ? 0.0 : lin_dw_sum(dy, x, j, k, in, out, r - 1) +
                   lin_mul_v(dy[lin_row_start(r - 1, out) + j], x[lin_row_start(r - 1, in) + k]);
  logic real lin_dw_sum{L}(double *dy, double *x, integer j, integer k, integer in, integer out, integer r) =
    r <= 0 ? 0.0 : lin_dw_sum(dy, x, j, k, in, out, r - 1) +
                   lin_mul_v(dy[lin_row_start(r - 1, out) + j], x[lin_row_start(r - 1, in) + k]);

  // Every dW[j, k] (at L2) has accumulated rows 0 .. r-1 of dyᵀ·x (dy, x and the old dW at L1).
  predicate lin_dw_rows{L1, L2}(float *dw, float *dy, float *x, integer r, integer in, integer out) =
    \forall integer j, k; 0 <= j < out && 0 <= k < in ==>
      \at(dw[lin_col_idx(j, in, k)], L2) ==
        \at(dw[lin_col_idx(j, in, k)], L1) + lin_dw_sum{L1}(dy, x, j, k, in, out, r);
  predicate lin_dw_rows{L1, L2}(double *dw, double *dy, double *x, integer r, integer in, integer out) =
    \forall integer j, k; 0 <= j < out && 0 <= k < in ==>
      \at(dw[lin_col_idx(j, in, k)], L2) ==
        \at(dw[lin_col_idx(j, in, k)], L1) + lin_dw_sum{L1}(dy, x, j, k, in, out, r);

  // Row q of y (at L2) is row q of x times Wᵀ plus b (at L1).
  predicate lin_row_y{L1, L2}(float *y, float *x, float *w, float *b, integer q, integer in, integer out) =
    \forall integer j; 0 <= j < out ==>
      \at(y[lin_row_start(q, out) + j], L2) ==
        lin_bias{L1}(b, j) + lin_dot{L1}(x + lin_row_start(q, in), w + lin_row_start(j, in), in);
  predicate lin_row_y{L1, L2}(double *y, double *x, double *w, double *b, integer q, integer in, integer out) =
    \forall integer j; 0 <= j < out ==>
      \at(y[lin_row_start(q, out) + j], L2) ==
        lin_bias{L1}(b, j) + lin_dot{L1}(x + lin_row_start(q, in), w + lin_row_start(j, in), in);
*/

/*@ ensures dx_acc: \forall integer k; 0 <= k < in ==> dx[k] == \old(dx[k]) + lin_sdot{Pre}(dy, w, k, in, out);
    ensures dw_mul: \forall integer j, k; 0 <= j < out && 0 <= k < in ==>
      dw[lin_col_idx(j, in, k)] == \old(dw[lin_col_idx(j, in, k)]) + lin_mul_v(\old(dy[j]), \old(x[k])); */
void linear_row_backward_f32(float *dx, float *dw, float *db, const float *dy, const float *x,
                             const float *w, int in, int out);
/*@ ensures dx_acc: \forall integer k; 0 <= k < in ==> dx[k] == \old(dx[k]) + lin_sdot{Pre}(dy, w, k, in, out);
    ensures dw_mul: \forall integer j, k; 0 <= j < out && 0 <= k < in ==>
      dw[lin_col_idx(j, in, k)] == \old(dw[lin_col_idx(j, in, k)]) + lin_mul_v(\old(dy[j]), \old(x[k])); */
void linear_row_backward_f64(double *dx, double *dw, double *db, const double *dy, const double *x,
                             const double *w, int in, int out);

/*@ ensures dx_rows: \forall integer r; 0 <= r < rows ==> lin_row_dx{Pre, Post}(dx, dy, w, r, in, out);
    ensures dw_sum: lin_dw_rows{Pre, Post}(dw, dy, x, rows, in, out); */
void linear_backward_f32(float *dx, float *dw, float *db, const float *dy, const float *x,
                         const float *w, int rows, int in, int out);
/*@ ensures dx_rows: \forall integer r; 0 <= r < rows ==> lin_row_dx{Pre, Post}(dx, dy, w, r, in, out);
    ensures dw_sum: lin_dw_rows{Pre, Post}(dw, dy, x, rows, in, out); */
void linear_backward_f64(double *dx, double *dw, double *db, const double *dy, const double *x,
                         const double *w, int rows, int in, int out);

/*@ ensures y_rows: \forall integer r; 0 <= r < rows ==> lin_row_y{Pre, Post}(y, x, w, b, r, in, out); */
void linear_forward_f32(float *y, const float *x, const float *w, const float *b, int rows, int in,
                        int out);
/*@ ensures y_rows: \forall integer r; 0 <= r < rows ==> lin_row_y{Pre, Post}(y, x, w, b, r, in, out); */
void linear_forward_f64(double *y, const double *x, const double *w, const double *b, int rows,
                        int in, int out);

#endif
