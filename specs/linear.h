/* The linear layer of a Transformer sublayer, y = x·Wᵀ + b (torch.nn.functional.linear): contracts
 * of the kernels in ref/linear.c (llm.c's matmul_forward / matmul_backward, in this project's naming).
 *
 * Shapes (row-major): x [rows, in], weight W [out, in], bias b [out] (may be NULL), y [rows, out],
 * dy [rows, out], dx [rows, in], dW [out, in], db [out] (may be NULL).
 *   forward:   y[r, j]  = b[j] + sum_k x[r, k]·W[j, k]           (0 for b[j] when b == NULL)
 *   backward:  dx[r, k] += sum_j dy[r, j]·W[j, k]                 (ACCUMULATED, as llm.c does)
 *              dW[j, k] += sum_r dy[r, j]·x[r, k]                 (summed over the rows: the batch)
 *              db[j]    += sum_r dy[r, j]
 * Each sum is formed left to right in the compute type, starting from b[j] (forward) or from the
 * output's previous value (backward), one product then one addition per term (no FMA: compile with
 * -ffp-contract=off).  Error analysis: specs/error-analysis-linear.md (any summation order).
 *
 * Real model (ACSL, below): lin_dot(x, w, n) = sum_{k<n} x[k]·w[k] and the strided
 * lin_sdot(a, w, c, s, n) = sum_{j<n} a[j]·w[j·s + c] (a column of W), left to right.
 *
 * Contracts (ACSL, proved by `make prove-linear`, proofs/linear.sh; see proofs/README-sublayers.md).
 * With -wp-model real every float/double value and operation is the exact real one, so the
 * postconditions say: the dot products (linear_dot_*: a row of x with a row of W, linear_sdot_*: a
 * row of dy with a column of W) compute exactly these sums in this order; one row of dW accumulates
 * dW[j, k] += dy[j]·x[k] exactly (linear_acc_row_*, static in ref/linear.c), and the row backward
 * accumulates db[j] += dy[j] exactly.  At the row level (issue 8): the row forward's every
 * y[j] == lin_bias(b, j) + lin_dot(x, W[j, :], in) (y_def) and the row backward's every
 * dW[j·in + k] (dw_acc), over the inputs at entry; the backward driver states db over the rows
 * (db_sum: db[j] += sum_r dy[r, j], lin_csum).  The dot is carried from the memory of each call to
 * the memory at entry by a ghost loop (an induction over the dot's length; proofs/README-sublayers.md,
 * "Rows composed (issue 8)").  In a run of their own, with specs/linear_rows.h (Frama-C merges its
 * clauses into these contracts there; induction lemmas proved by WP's induction tactic from committed
 * scripts): the forward drivers' rows of y (y_rows: y[r·out + j] == b[j] + lin_dot(x + r·in,
 * W[j, :], in)), the row backward's dx (dx_acc: dx[k] == \old(dx[k]) + lin_sdot(dy, W, k, in, out))
 * and the backward driver's rows of dx (dx_rows), over the inputs at entry.  Not stated: dW summed
 * over the rows.  Everything is proved free of runtime errors (RTE, index arithmetic included), assigning
 * only its outputs, and terminating.  The rounding: specs/error-analysis-linear.md.
 * Float model (issue 13): the dot helpers' dot_err / sdot_err (and dot_fin / sdot_fin, the result is
 * finite) are proved in WP's IEEE float model on ref/linear.c itself (-DRESNORM_WP_FLOAT,
 * proofs/linear_float.sh, part of `make prove-linear`): for 1 <= n <= 4096, |x[k]|, |w[k]| <= 2^50,
 * |acc| <= 2^100 (lin_in_range32/64), |result - (acc + sum x_k w_k)| <=
 * (1 + 2^-11)(n + 1) u (|acc| + sum |x_k w_k|) + n 2^-149 (f64: n 2^-1074) (lin_err32/64,
 * specs/fperr_linear.h; specs/error-analysis-linear.md §2a).  LN_EXACT(p) / LN_FLOAT(p) (specs/wp_only.h)
 * keep the two runs apart: each reads only its own model's statements.
 * EVA (proofs/eva_linear.c, -warn-special-float non-finite, `make prove-linear`): 0 alarms, float
 * and double, forward then backward, for 1 <= in <= 64, 1 <= out <= 4, 1 <= rows <= 2 (EVA unrolls
 * every loop: the sizes are kept small where loops nest), and the dot helpers alone for
 * 1 <= n <= 4096, with |x|, |W|, |b|, |dy| <= 1.0e4 (every partial sum is at most
 * 4096·1.0e8 + 1.0e4, far below FLT_MAX).
 */
#ifndef RESNORM_LINEAR_H
#define RESNORM_LINEAR_H

#include <limits.h>
#include <stddef.h>

#include "wp_only.h" /* LN_EXACT: the real-model postconditions */

/* The float-model clauses, and the float-model logic they use (specs/fperr_linear.h, with
   specs/fperr.h's axiomatic FpErr), exist only where they are read: in ref/linear.c's own runs
   (which include fperr_linear.h themselves) and the float-model run (-DRESNORM_WP_FLOAT).  Every
   other file that includes this header (attention, ffn, the block: proved against these contracts
   from committed sessions) sees the contracts as they were before them, so its goals are unchanged. */
#if defined(RESNORM_WP_FLOAT) && !defined(RESNORM_EVA)
#include "fperr_linear.h"
#define LIN_FLOAT_REQUIRES(name, ...) requires name: __VA_ARGS__;
#define LIN_FLOAT_ENSURES(name, ...) ensures name: __VA_ARGS__;
#else
#define LIN_FLOAT_REQUIRES(name, ...)
#define LIN_FLOAT_ENSURES(name, ...)
#endif

/*@
  logic real lin_dot{L}(float *x, float *w, integer n) =
    n <= 0 ? 0.0 : lin_dot(x, w, n - 1) + x[n - 1] * w[n - 1];
  logic real lin_dot{L}(double *x, double *w, integer n) =
    n <= 0 ? 0.0 : lin_dot(x, w, n - 1) + x[n - 1] * w[n - 1];
  logic real lin_sdot{L}(float *a, float *w, integer c, integer s, integer n) =
    n <= 0 ? 0.0 : lin_sdot(a, w, c, s, n - 1) + a[n - 1] * w[(n - 1) * s + c];
  logic real lin_sdot{L}(double *a, double *w, integer c, integer s, integer n) =
    n <= 0 ? 0.0 : lin_sdot(a, w, c, s, n - 1) + a[n - 1] * w[(n - 1) * s + c];
  logic real lin_acc_prod(real acc, real a, real b) = acc + a * b;

  // ---- rows (the row kernels and the rows x in drivers) ----
  // Row r of a row-major [rows, n] matrix starts at lin_row_start(r, n) = r·n (the guard keeps the
  // symbol: Why3 inlines a bare product, and a quantified fact about q·n then has no trigger).
  logic integer lin_row_start(integer r, integer n) = 0 <= r ? r * n : 0;
  // The forward's accumulator: b[j], or 0 without a bias.
  logic real lin_bias{L}(float *b, integer j) = b == \null ? 0.0 : b[j];
  logic real lin_bias{L}(double *b, integer j) = b == \null ? 0.0 : b[j];
  // sum_{r<n} a[r·s + c] (db[j] over the rows: a = dy, column j), left to right.
  logic real lin_csum{L}(float *a, integer c, integer s, integer n) =
    n <= 0 ? 0.0 : lin_csum(a, c, s, n - 1) + a[(n - 1) * s + c];
  logic real lin_csum{L}(double *a, integer c, integer s, integer n) =
    n <= 0 ? 0.0 : lin_csum(a, c, s, n - 1) + a[(n - 1) * s + c];

  // Row j of dW (from s) has accumulated dy[q]·x[k] for every k: dW (at L2) from dW, dy, x at L1.
  predicate lin_dw_row{L1, L2}(float *dw, float *dy, float *x, integer s, integer q, integer in) =
    \forall integer k; 0 <= k < in ==>
      \at(dw[s + k], L2) == lin_acc_prod(\at(dw[s + k], L1), \at(dy[q], L1), \at(x[k], L1));
  predicate lin_dw_row{L1, L2}(double *dw, double *dy, double *x, integer s, integer q, integer in) =
    \forall integer k; 0 <= k < in ==>
      \at(dw[s + k], L2) == lin_acc_prod(\at(dw[s + k], L1), \at(dy[q], L1), \at(x[k], L1));
*/

/* acc + sum_{k<n} x[k]·w[k], left to right. */
/*@ requires n_nonneg: n >= 0;
    requires valid_x: \valid_read(x + (0 .. n - 1));
    requires valid_w: \valid_read(w + (0 .. n - 1));
    LIN_FLOAT_REQUIRES(fl_range, lin_in_range32(acc, x, w, n))
    assigns \nothing;
    ensures dot_def: LN_EXACT(\result == acc + lin_dot(x, w, n));
    LIN_FLOAT_ENSURES(dot_fin, \is_finite(\result))
    LIN_FLOAT_ENSURES(dot_err, \abs(\result - (acc + lin_dot(x, w, n))) <= lin_err32(n, \abs(acc) + lin_adot(x, w, n)))
*/
float linear_dot_f32(float acc, const float *x, const float *w, int n);
/*@ requires n_nonneg: n >= 0;
    requires valid_x: \valid_read(x + (0 .. n - 1));
    requires valid_w: \valid_read(w + (0 .. n - 1));
    LIN_FLOAT_REQUIRES(fl_range, lin_in_range64(acc, x, w, n))
    assigns \nothing;
    ensures dot_def: LN_EXACT(\result == acc + lin_dot(x, w, n));
    LIN_FLOAT_ENSURES(dot_fin, \is_finite(\result))
    LIN_FLOAT_ENSURES(dot_err, \abs(\result - (acc + lin_dot(x, w, n))) <= lin_err64(n, \abs(acc) + lin_adot(x, w, n)))
*/
double linear_dot_f64(double acc, const double *x, const double *w, int n);

/* acc + sum_{j<n} a[j]·w[j·s + c], left to right (column c of a row-major [n, s] matrix). */
/*@ requires n_pos: n >= 1;
    requires s_pos: s >= 1;
    requires c_range: 0 <= c < s;
    requires size: n * s <= INT_MAX;
    requires valid_a: \valid_read(a + (0 .. n - 1));
    requires valid_w: \valid_read(w + (0 .. n * s - 1));
    LIN_FLOAT_REQUIRES(fl_range, lin_sin_range32(acc, a, w, c, s, n))
    assigns \nothing;
    ensures sdot_def: LN_EXACT(\result == acc + lin_sdot(a, w, c, s, n));
    LIN_FLOAT_ENSURES(sdot_fin, \is_finite(\result))
    LIN_FLOAT_ENSURES(sdot_err, \abs(\result - (acc + lin_sdot(a, w, c, s, n)))
                               <= lin_err32(n, \abs(acc) + lin_sadot(a, w, c, s, n)))
*/
float linear_sdot_f32(float acc, const float *a, const float *w, int c, int s, int n);
/*@ requires n_pos: n >= 1;
    requires s_pos: s >= 1;
    requires c_range: 0 <= c < s;
    requires size: n * s <= INT_MAX;
    requires valid_a: \valid_read(a + (0 .. n - 1));
    requires valid_w: \valid_read(w + (0 .. n * s - 1));
    LIN_FLOAT_REQUIRES(fl_range, lin_sin_range64(acc, a, w, c, s, n))
    assigns \nothing;
    ensures sdot_def: LN_EXACT(\result == acc + lin_sdot(a, w, c, s, n));
    LIN_FLOAT_ENSURES(sdot_fin, \is_finite(\result))
    LIN_FLOAT_ENSURES(sdot_err, \abs(\result - (acc + lin_sdot(a, w, c, s, n)))
                               <= lin_err64(n, \abs(acc) + lin_sadot(a, w, c, s, n)))
*/
double linear_sdot_f64(double acc, const double *a, const double *w, int c, int s, int n);

/* One row: y[j] = b[j] + x·W[j, :] for j < out (b == NULL: 0 + x·W[j, :]). */
/*@ requires in_pos: in >= 1;
    requires out_pos: out >= 1;
    requires size_w: in * out <= INT_MAX;
    requires valid_x: \valid_read(x + (0 .. in - 1));
    requires valid_w: \valid_read(w + (0 .. in * out - 1));
    requires valid_b: b == \null || \valid_read(b + (0 .. out - 1));
    requires valid_y: \valid(y + (0 .. out - 1));
    requires sep_x: \separated(y + (0 .. out - 1), x + (0 .. in - 1));
    requires sep_w: \separated(y + (0 .. out - 1), w + (0 .. in * out - 1));
    requires sep_b: b == \null || \separated(y + (0 .. out - 1), b + (0 .. out - 1));
    assigns y[0 .. out - 1];
    ensures y_def: LN_EXACT(\forall integer j; 0 <= j < out ==>
                     y[j] == lin_bias{Pre}(b, j) + lin_dot{Pre}(x, w + lin_row_start(j, in), in));
*/
void linear_row_forward_f32(float *y, const float *x, const float *w, const float *b, int in, int out);
/*@ requires in_pos: in >= 1;
    requires out_pos: out >= 1;
    requires size_w: in * out <= INT_MAX;
    requires valid_x: \valid_read(x + (0 .. in - 1));
    requires valid_w: \valid_read(w + (0 .. in * out - 1));
    requires valid_b: b == \null || \valid_read(b + (0 .. out - 1));
    requires valid_y: \valid(y + (0 .. out - 1));
    requires sep_x: \separated(y + (0 .. out - 1), x + (0 .. in - 1));
    requires sep_w: \separated(y + (0 .. out - 1), w + (0 .. in * out - 1));
    requires sep_b: b == \null || \separated(y + (0 .. out - 1), b + (0 .. out - 1));
    assigns y[0 .. out - 1];
    ensures y_def: LN_EXACT(\forall integer j; 0 <= j < out ==>
                     y[j] == lin_bias{Pre}(b, j) + lin_dot{Pre}(x, w + lin_row_start(j, in), in));
*/
void linear_row_forward_f64(double *y, const double *x, const double *w, const double *b, int in,
                            int out);

/* One row of the backward, accumulated: dx[k] += sum_j dy[j]·W[j, k]; dW[j, k] += dy[j]·x[k];
   db[j] += dy[j] (db == NULL: skipped). */
/*@ requires in_pos: in >= 1;
    requires out_pos: out >= 1;
    requires size_w: in * out <= INT_MAX;
    requires valid_dy: \valid_read(dy + (0 .. out - 1));
    requires valid_x: \valid_read(x + (0 .. in - 1));
    requires valid_w: \valid_read(w + (0 .. in * out - 1));
    requires valid_dx: \valid(dx + (0 .. in - 1));
    requires valid_dw: \valid(dw + (0 .. in * out - 1));
    requires valid_db: db == \null || \valid(db + (0 .. out - 1));
    requires sep_out: \separated(dx + (0 .. in - 1), dw + (0 .. in * out - 1));
    requires sep_db: db == \null || \separated(db + (0 .. out - 1), dx + (0 .. in - 1), dw + (0 .. in * out - 1),
                                               dy + (0 .. out - 1), x + (0 .. in - 1), w + (0 .. in * out - 1));
    requires sep_in: \separated(dx + (0 .. in - 1), dw + (0 .. in * out - 1), dy + (0 .. out - 1));
    requires sep_x: \separated(dx + (0 .. in - 1), dw + (0 .. in * out - 1), x + (0 .. in - 1));
    requires sep_w: \separated(dx + (0 .. in - 1), dw + (0 .. in * out - 1), w + (0 .. in * out - 1));
    assigns dx[0 .. in - 1], dw[0 .. in * out - 1], db[0 .. out - 1];
    ensures db_acc: LN_EXACT(db != \null ==> \forall integer j; 0 <= j < out ==> db[j] == \old(db[j]) + \old(dy[j]));
    ensures dw_acc: LN_EXACT(\forall integer j; 0 <= j < out ==> lin_dw_row{Pre, Post}(dw, dy, x, lin_row_start(j, in), j, in));
*/
void linear_row_backward_f32(float *dx, float *dw, float *db, const float *dy, const float *x,
                             const float *w, int in, int out);
/*@ requires in_pos: in >= 1;
    requires out_pos: out >= 1;
    requires size_w: in * out <= INT_MAX;
    requires valid_dy: \valid_read(dy + (0 .. out - 1));
    requires valid_x: \valid_read(x + (0 .. in - 1));
    requires valid_w: \valid_read(w + (0 .. in * out - 1));
    requires valid_dx: \valid(dx + (0 .. in - 1));
    requires valid_dw: \valid(dw + (0 .. in * out - 1));
    requires valid_db: db == \null || \valid(db + (0 .. out - 1));
    requires sep_out: \separated(dx + (0 .. in - 1), dw + (0 .. in * out - 1));
    requires sep_db: db == \null || \separated(db + (0 .. out - 1), dx + (0 .. in - 1), dw + (0 .. in * out - 1),
                                               dy + (0 .. out - 1), x + (0 .. in - 1), w + (0 .. in * out - 1));
    requires sep_in: \separated(dx + (0 .. in - 1), dw + (0 .. in * out - 1), dy + (0 .. out - 1));
    requires sep_x: \separated(dx + (0 .. in - 1), dw + (0 .. in * out - 1), x + (0 .. in - 1));
    requires sep_w: \separated(dx + (0 .. in - 1), dw + (0 .. in * out - 1), w + (0 .. in * out - 1));
    assigns dx[0 .. in - 1], dw[0 .. in * out - 1], db[0 .. out - 1];
    ensures db_acc: LN_EXACT(db != \null ==> \forall integer j; 0 <= j < out ==> db[j] == \old(db[j]) + \old(dy[j]));
    ensures dw_acc: LN_EXACT(\forall integer j; 0 <= j < out ==> lin_dw_row{Pre, Post}(dw, dy, x, lin_row_start(j, in), j, in));
*/
void linear_row_backward_f64(double *dx, double *dw, double *db, const double *dy, const double *x,
                             const double *w, int in, int out);

/* rows × in -> rows × out drivers: the row kernels applied to every row (backward: dW, db summed
   over the rows by the row kernels' accumulation).  Backward: db_sum (db[j] += sum_r dy[r, j],
   lin_csum, over dy at entry). */
/*@ requires rows_nonneg: rows >= 0;
    requires in_pos: in >= 1;
    requires out_pos: out >= 1;
    requires size: rows * in <= INT_MAX && rows * out <= INT_MAX && in * out <= INT_MAX;
    requires valid_x: \valid_read(x + (0 .. rows * in - 1));
    requires valid_w: \valid_read(w + (0 .. in * out - 1));
    requires valid_b: b == \null || \valid_read(b + (0 .. out - 1));
    requires valid_y: \valid(y + (0 .. rows * out - 1));
    requires sep_x: \separated(y + (0 .. rows * out - 1), x + (0 .. rows * in - 1));
    requires sep_w: \separated(y + (0 .. rows * out - 1), w + (0 .. in * out - 1));
    requires sep_b: b == \null || \separated(y + (0 .. rows * out - 1), b + (0 .. out - 1));
    assigns y[0 .. rows * out - 1];
*/
void linear_forward_f32(float *y, const float *x, const float *w, const float *b, int rows, int in,
                        int out);
/*@ requires rows_nonneg: rows >= 0;
    requires in_pos: in >= 1;
    requires out_pos: out >= 1;
    requires size: rows * in <= INT_MAX && rows * out <= INT_MAX && in * out <= INT_MAX;
    requires valid_x: \valid_read(x + (0 .. rows * in - 1));
    requires valid_w: \valid_read(w + (0 .. in * out - 1));
    requires valid_b: b == \null || \valid_read(b + (0 .. out - 1));
    requires valid_y: \valid(y + (0 .. rows * out - 1));
    requires sep_x: \separated(y + (0 .. rows * out - 1), x + (0 .. rows * in - 1));
    requires sep_w: \separated(y + (0 .. rows * out - 1), w + (0 .. in * out - 1));
    requires sep_b: b == \null || \separated(y + (0 .. rows * out - 1), b + (0 .. out - 1));
    assigns y[0 .. rows * out - 1];
*/
void linear_forward_f64(double *y, const double *x, const double *w, const double *b, int rows,
                        int in, int out);

/*@ requires rows_nonneg: rows >= 0;
    requires in_pos: in >= 1;
    requires out_pos: out >= 1;
    requires size: rows * in <= INT_MAX && rows * out <= INT_MAX && in * out <= INT_MAX;
    requires valid_dy: \valid_read(dy + (0 .. rows * out - 1));
    requires valid_x: \valid_read(x + (0 .. rows * in - 1));
    requires valid_w: \valid_read(w + (0 .. in * out - 1));
    requires valid_dx: \valid(dx + (0 .. rows * in - 1));
    requires valid_dw: \valid(dw + (0 .. in * out - 1));
    requires valid_db: db == \null || \valid(db + (0 .. out - 1));
    requires sep_out: \separated(dx + (0 .. rows * in - 1), dw + (0 .. in * out - 1));
    requires sep_db: db == \null || \separated(db + (0 .. out - 1), dx + (0 .. rows * in - 1), dw + (0 .. in * out - 1),
                                               dy + (0 .. rows * out - 1), x + (0 .. rows * in - 1), w + (0 .. in * out - 1));
    requires sep_in: \separated(dx + (0 .. rows * in - 1), dw + (0 .. in * out - 1), dy + (0 .. rows * out - 1));
    requires sep_x: \separated(dx + (0 .. rows * in - 1), dw + (0 .. in * out - 1), x + (0 .. rows * in - 1));
    requires sep_w: \separated(dx + (0 .. rows * in - 1), dw + (0 .. in * out - 1), w + (0 .. in * out - 1));
    assigns dx[0 .. rows * in - 1], dw[0 .. in * out - 1], db[0 .. out - 1];
    ensures db_sum: LN_EXACT(db != \null ==> \forall integer j; 0 <= j < out ==> db[j] == \old(db[j]) + lin_csum{Pre}(dy, j, out, rows));
*/
void linear_backward_f32(float *dx, float *dw, float *db, const float *dy, const float *x,
                         const float *w, int rows, int in, int out);
/*@ requires rows_nonneg: rows >= 0;
    requires in_pos: in >= 1;
    requires out_pos: out >= 1;
    requires size: rows * in <= INT_MAX && rows * out <= INT_MAX && in * out <= INT_MAX;
    requires valid_dy: \valid_read(dy + (0 .. rows * out - 1));
    requires valid_x: \valid_read(x + (0 .. rows * in - 1));
    requires valid_w: \valid_read(w + (0 .. in * out - 1));
    requires valid_dx: \valid(dx + (0 .. rows * in - 1));
    requires valid_dw: \valid(dw + (0 .. in * out - 1));
    requires valid_db: db == \null || \valid(db + (0 .. out - 1));
    requires sep_out: \separated(dx + (0 .. rows * in - 1), dw + (0 .. in * out - 1));
    requires sep_db: db == \null || \separated(db + (0 .. out - 1), dx + (0 .. rows * in - 1), dw + (0 .. in * out - 1),
                                               dy + (0 .. rows * out - 1), x + (0 .. rows * in - 1), w + (0 .. in * out - 1));
    requires sep_in: \separated(dx + (0 .. rows * in - 1), dw + (0 .. in * out - 1), dy + (0 .. rows * out - 1));
    requires sep_x: \separated(dx + (0 .. rows * in - 1), dw + (0 .. in * out - 1), x + (0 .. rows * in - 1));
    requires sep_w: \separated(dx + (0 .. rows * in - 1), dw + (0 .. in * out - 1), w + (0 .. in * out - 1));
    assigns dx[0 .. rows * in - 1], dw[0 .. in * out - 1], db[0 .. out - 1];
    ensures db_sum: LN_EXACT(db != \null ==> \forall integer j; 0 <= j < out ==> db[j] == \old(db[j]) + lin_csum{Pre}(dy, j, out, rows));
*/
void linear_backward_f64(double *dx, double *dw, double *db, const double *dy, const double *x,
                         const double *w, int rows, int in, int out);

#endif
