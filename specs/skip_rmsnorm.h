/* Skip + RMSNorm (onnxruntime's SkipSimplifiedLayerNormalization): contracts of the kernels in
 * ref/skip_rmsnorm.c.
 *
 * For each row r of n elements (rows x n row-major; ONNX axis as for RMSNorm):
 *   s_i    = x_i + skip_i (+ bias_i)          the sum, in that order: (x + skip) + bias
 *   rstd, y = RMSNorm(s) with gamma, eps, offset (specs/rmsnorm.h; offset 1: y = shat (1 + gamma))
 *   sum_i  = s_i                               (ORT's input_skip_bias_sum output)
 * Shapes: x, skip, y, sum: [rows*n]; gamma, bias: [n] (bias may be NULL); rstd: [rows].
 * sum may alias x or skip (the sum is formed before it is normalized); y and rstd must not alias
 * any input.  The reference values (ref/skip_rmsnorm_mpfr.c) are the exact RMSNorm of the exact sum,
 * rounded once; `sum` is the exact sum rounded once.  An implementation's error is bounded in
 * specs/error-analysis-residual.md §8 (the sum's rounding composed with RMSNorm's analysis, as §7
 * does for LayerNorm).
 *
 * Contracts (ACSL, proved by `make prove-skip`, proofs/skip.mk; see proofs/README-skip.md): WP in the
 * real model (float and double values are the reals they denote), from the contracts of the callees
 * (specs/residual.h, specs/rmsnorm.h).  Proved: no runtime error, every callee precondition
 * (validity, separation, in-place use of the residual add, int index arithmetic with
 * rows*n <= INT_MAX), assigns, termination, and `sum_def` (without bias): every sum element is the
 * exact x + skip of the inputs, and `sum_bias_def` (with bias): every sum element of row q, column j
 * is (x + skip) + bias[j] of the inputs, exactly (the in-place bias loop's invariants, with the rows'
 * index facts from ghost functions in ref/skip_rmsnorm.c).  The rows run (-DRESNORM_WP_ROWS,
 * specs/skip_rmsnorm_rows.h, from the RMSNorm drivers' rows contracts) proves, forward, y_rows and
 * rstd_rows (every row of y is RMSNorm of its own row of the sum output, with that row's own
 * statistics), and, backward, dx_rows (every row of dx is RMSNorm's backward of its own rows of dy
 * and sum), the parameter gradients over the rows, and dbias_sum (dbias is dx's column sum in row
 * order).  Not composed: the float error bounds per row (the statements are over the reals).
 */
#ifndef RESNORM_SKIP_RMSNORM_H
#define RESNORM_SKIP_RMSNORM_H

#include <limits.h>

#include "fperr.h" /* LN_EXACT: sum_def is exact over the reals only, so EVA (-DRESNORM_EVA) does not read it */
#include "rmsnorm_model.h" /* rms_row_start: the first index of a row (sum_bias_def) */

/*@ requires rows_nonneg: rows >= 0;
    requires n_pos: n >= 1;
    requires size_fits: rows * n <= INT_MAX;
    requires eps_pos: eps > 0;
    requires valid_x: \valid_read(x + (0 .. rows * n - 1));
    requires valid_skip: \valid_read(skip + (0 .. rows * n - 1));
    requires valid_gamma: \valid_read(gamma + (0 .. n - 1));
    requires valid_sum: \valid(sum + (0 .. rows * n - 1));
    requires valid_y: \valid(y + (0 .. rows * n - 1));
    requires valid_rstd: \valid(rstd + (0 .. rows - 1));
    requires alias_x: sum == x || \separated(sum + (0 .. rows * n - 1), x + (0 .. rows * n - 1));
    requires alias_skip: sum == skip || \separated(sum + (0 .. rows * n - 1), skip + (0 .. rows * n - 1));
    requires sep_sum: \separated(sum + (0 .. rows * n - 1), gamma + (0 .. n - 1));
    requires sep_out: \separated(y + (0 .. rows * n - 1), rstd + (0 .. rows - 1), sum + (0 .. rows * n - 1));
    requires sep_x: \separated(y + (0 .. rows * n - 1), rstd + (0 .. rows - 1), x + (0 .. rows * n - 1));
    requires sep_skip: \separated(y + (0 .. rows * n - 1), rstd + (0 .. rows - 1), skip + (0 .. rows * n - 1));
    requires sep_gamma: \separated(y + (0 .. rows * n - 1), rstd + (0 .. rows - 1), gamma + (0 .. n - 1));
    assigns y[0 .. rows * n - 1], rstd[0 .. rows - 1], sum[0 .. rows * n - 1];
    behavior no_bias:
      assumes bias == \null;
      ensures sum_def: LN_EXACT(\forall integer k; 0 <= k < rows * n ==> sum[k] == \old(x[k]) + \old(skip[k]));
    behavior with_bias:
      assumes bias != \null;
      requires valid_bias: \valid_read(bias + (0 .. n - 1));
      requires sep_bias: \separated(bias + (0 .. n - 1), sum + (0 .. rows * n - 1), y + (0 .. rows * n - 1),
                                     rstd + (0 .. rows - 1));
      ensures sum_bias_def: LN_EXACT(\forall integer q, j; 0 <= q < rows && 0 <= j < n ==>
        sum[rms_row_start(q, n) + j] ==
          (\old(x[rms_row_start(q, n) + j]) + \old(skip[rms_row_start(q, n) + j])) + \old(bias[j]));
    complete behaviors;
    disjoint behaviors;
*/
void skip_rmsnorm_forward_f32(float *y, float *rstd, float *sum, const float *x, const float *skip,
                              const float *gamma, const float *bias, int rows, int n, float eps,
                              int offset);
/*@ requires rows_nonneg: rows >= 0;
    requires n_pos: n >= 1;
    requires size_fits: rows * n <= INT_MAX;
    requires eps_pos: eps > 0;
    requires valid_x: \valid_read(x + (0 .. rows * n - 1));
    requires valid_skip: \valid_read(skip + (0 .. rows * n - 1));
    requires valid_gamma: \valid_read(gamma + (0 .. n - 1));
    requires valid_sum: \valid(sum + (0 .. rows * n - 1));
    requires valid_y: \valid(y + (0 .. rows * n - 1));
    requires valid_rstd: \valid(rstd + (0 .. rows - 1));
    requires alias_x: sum == x || \separated(sum + (0 .. rows * n - 1), x + (0 .. rows * n - 1));
    requires alias_skip: sum == skip || \separated(sum + (0 .. rows * n - 1), skip + (0 .. rows * n - 1));
    requires sep_sum: \separated(sum + (0 .. rows * n - 1), gamma + (0 .. n - 1));
    requires sep_out: \separated(y + (0 .. rows * n - 1), rstd + (0 .. rows - 1), sum + (0 .. rows * n - 1));
    requires sep_x: \separated(y + (0 .. rows * n - 1), rstd + (0 .. rows - 1), x + (0 .. rows * n - 1));
    requires sep_skip: \separated(y + (0 .. rows * n - 1), rstd + (0 .. rows - 1), skip + (0 .. rows * n - 1));
    requires sep_gamma: \separated(y + (0 .. rows * n - 1), rstd + (0 .. rows - 1), gamma + (0 .. n - 1));
    assigns y[0 .. rows * n - 1], rstd[0 .. rows - 1], sum[0 .. rows * n - 1];
    behavior no_bias:
      assumes bias == \null;
      ensures sum_def: LN_EXACT(\forall integer k; 0 <= k < rows * n ==> sum[k] == \old(x[k]) + \old(skip[k]));
    behavior with_bias:
      assumes bias != \null;
      requires valid_bias: \valid_read(bias + (0 .. n - 1));
      requires sep_bias: \separated(bias + (0 .. n - 1), sum + (0 .. rows * n - 1), y + (0 .. rows * n - 1),
                                     rstd + (0 .. rows - 1));
      ensures sum_bias_def: LN_EXACT(\forall integer q, j; 0 <= q < rows && 0 <= j < n ==>
        sum[rms_row_start(q, n) + j] ==
          (\old(x[rms_row_start(q, n) + j]) + \old(skip[rms_row_start(q, n) + j])) + \old(bias[j]));
    complete behaviors;
    disjoint behaviors;
*/
void skip_rmsnorm_forward_f64(double *y, double *rstd, double *sum, const double *x,
                              const double *skip, const double *gamma, const double *bias,
                              int rows, int n, double eps, int offset);

/* Backward, from the forward's `sum` and `rstd` (as training keeps them): dx = RMSNorm's input
 * gradient at sum (specs/rmsnorm.h, overwritten); dskip is the same array (d s / d skip = 1: the
 * caller uses dx for both); dbias_j = sum_r dx_rj (overwritten, summed from zero in row order);
 * dgamma accumulated as rmsnorm_backward's.  Shapes: dx, dy, sum: [rows*n]; dbias, dgamma, gamma:
 * [n]; rstd: [rows].  Error: specs/error-analysis-residual.md §9. */
/*@ requires rows_nonneg: rows >= 0;
    requires n_pos: n >= 1;
    requires size_fits: rows * n <= INT_MAX;
    requires valid_dy: \valid_read(dy + (0 .. rows * n - 1));
    requires valid_sum: \valid_read(sum + (0 .. rows * n - 1));
    requires valid_gamma: \valid_read(gamma + (0 .. n - 1));
    requires valid_rstd: \valid_read(rstd + (0 .. rows - 1));
    requires valid_dx: \valid(dx + (0 .. rows * n - 1));
    requires valid_dbias: \valid(dbias + (0 .. n - 1));
    requires valid_dgamma: \valid(dgamma + (0 .. n - 1));
    requires sep_out: \separated(dx + (0 .. rows * n - 1), dgamma + (0 .. n - 1));
    requires sep_dy: \separated(dx + (0 .. rows * n - 1), dgamma + (0 .. n - 1), dy + (0 .. rows * n - 1));
    requires sep_sum: \separated(dx + (0 .. rows * n - 1), dgamma + (0 .. n - 1), sum + (0 .. rows * n - 1));
    requires sep_gamma: \separated(dx + (0 .. rows * n - 1), dgamma + (0 .. n - 1), gamma + (0 .. n - 1));
    requires sep_rstd: \separated(dx + (0 .. rows * n - 1), dgamma + (0 .. n - 1), rstd + (0 .. rows - 1));
    requires sep_dbias: \separated(dbias + (0 .. n - 1), dx + (0 .. rows * n - 1), dgamma + (0 .. n - 1),
                                    dy + (0 .. rows * n - 1), sum + (0 .. rows * n - 1), gamma + (0 .. n - 1),
                                    rstd + (0 .. rows - 1));
    assigns dx[0 .. rows * n - 1], dbias[0 .. n - 1], dgamma[0 .. n - 1];
*/
void skip_rmsnorm_backward_f32(float *dx, float *dbias, float *dgamma, const float *dy,
                               const float *sum, const float *gamma, const float *rstd, int rows,
                               int n, int offset);
/*@ requires rows_nonneg: rows >= 0;
    requires n_pos: n >= 1;
    requires size_fits: rows * n <= INT_MAX;
    requires valid_dy: \valid_read(dy + (0 .. rows * n - 1));
    requires valid_sum: \valid_read(sum + (0 .. rows * n - 1));
    requires valid_gamma: \valid_read(gamma + (0 .. n - 1));
    requires valid_rstd: \valid_read(rstd + (0 .. rows - 1));
    requires valid_dx: \valid(dx + (0 .. rows * n - 1));
    requires valid_dbias: \valid(dbias + (0 .. n - 1));
    requires valid_dgamma: \valid(dgamma + (0 .. n - 1));
    requires sep_out: \separated(dx + (0 .. rows * n - 1), dgamma + (0 .. n - 1));
    requires sep_dy: \separated(dx + (0 .. rows * n - 1), dgamma + (0 .. n - 1), dy + (0 .. rows * n - 1));
    requires sep_sum: \separated(dx + (0 .. rows * n - 1), dgamma + (0 .. n - 1), sum + (0 .. rows * n - 1));
    requires sep_gamma: \separated(dx + (0 .. rows * n - 1), dgamma + (0 .. n - 1), gamma + (0 .. n - 1));
    requires sep_rstd: \separated(dx + (0 .. rows * n - 1), dgamma + (0 .. n - 1), rstd + (0 .. rows - 1));
    requires sep_dbias: \separated(dbias + (0 .. n - 1), dx + (0 .. rows * n - 1), dgamma + (0 .. n - 1),
                                    dy + (0 .. rows * n - 1), sum + (0 .. rows * n - 1), gamma + (0 .. n - 1),
                                    rstd + (0 .. rows - 1));
    assigns dx[0 .. rows * n - 1], dbias[0 .. n - 1], dgamma[0 .. n - 1];
*/
void skip_rmsnorm_backward_f64(double *dx, double *dbias, double *dgamma, const double *dy,
                               const double *sum, const double *gamma, const double *rstd,
                               int rows, int n, int offset);

#endif
