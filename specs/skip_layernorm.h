/* Skip + LayerNorm (onnxruntime's SkipLayerNormalization): contracts of the kernels in
 * ref/skip_layernorm.c.
 *
 * For each row r of n elements (rows x n row-major; ONNX axis as for LayerNorm):
 *   s_i    = x_i + skip_i (+ bias_i)          the sum, in that order: (x + skip) + bias
 *   mean, rstd, y = LayerNorm(s) with gamma, beta, eps (specs/layernorm.h)
 *   sum_i  = s_i                               (ORT's input_skip_bias_sum output)
 * Shapes: x, skip, y, sum: [rows*n]; gamma, beta, bias: [n] (bias may be NULL); mean, rstd: [rows].
 * sum may alias x or skip (the sum is formed before it is normalized); y, mean, rstd must not alias
 * any input.  The reference values (ref/skip_layernorm_mpfr.c) are the exact LayerNorm of the
 * exact sum, rounded once; `sum` is the exact sum rounded once.  An implementation's error is bounded
 * in specs/error-analysis-residual.md §7 (the sum's rounding composed with LayerNorm's analysis).
 *
 * Contracts (ACSL, proved by `make prove-skip`, proofs/skip.mk; see proofs/README-skip.md): WP in the
 * real model (float and double values are the reals they denote), from the contracts of the callees
 * (specs/residual.h, specs/layernorm.h).  Proved: no runtime error, every callee precondition
 * (validity, separation, in-place use of the residual add, int index arithmetic with
 * rows*n <= INT_MAX), assigns, termination, and `sum_def` (without bias): every sum element is the
 * exact x + skip of the inputs, and `sum_bias_def` (with bias): every sum element of row q, column j
 * is (x + skip) + bias[j] of the inputs, exactly (the in-place bias loop's invariants, with the rows'
 * index facts from ghost functions in ref/skip_layernorm.c).  The rows run (-DRESNORM_WP_ROWS,
 * specs/skip_layernorm_rows.h, from the LayerNorm drivers' rows contracts) proves, forward, y_rows and
 * stats_rows (every row of y is LayerNorm of its own row of the sum output, with that row's own
 * statistics), and, backward, dx_rows (every row of dx is LayerNorm's backward of its own rows of dy
 * and sum), the parameter gradients over the rows, and dbias_sum (dbias is dx's column sum in row
 * order).  Not composed: the float error bounds per row (the statements are over the reals).
 */
#ifndef RESNORM_SKIP_LAYERNORM_H
#define RESNORM_SKIP_LAYERNORM_H

#include <limits.h>

#include "fperr.h" /* LN_EXACT: sum_def is exact over the reals only, so EVA (-DRESNORM_EVA) does not read it */
#include "layernorm_model.h" /* ln_row_start: the first index of a row (sum_bias_def) */

/*@ requires rows_nonneg: rows >= 0;
    requires n_pos: n >= 1;
    requires size_fits: rows * n <= INT_MAX;
    requires eps_pos: eps > 0;
    requires valid_x: \valid_read(x + (0 .. rows * n - 1));
    requires valid_skip: \valid_read(skip + (0 .. rows * n - 1));
    requires valid_gamma: \valid_read(gamma + (0 .. n - 1));
    requires valid_beta: \valid_read(beta + (0 .. n - 1));
    requires valid_sum: \valid(sum + (0 .. rows * n - 1));
    requires valid_y: \valid(y + (0 .. rows * n - 1));
    requires valid_mean: \valid(mean + (0 .. rows - 1));
    requires valid_rstd: \valid(rstd + (0 .. rows - 1));
    requires alias_x: sum == x || \separated(sum + (0 .. rows * n - 1), x + (0 .. rows * n - 1));
    requires alias_skip: sum == skip || \separated(sum + (0 .. rows * n - 1), skip + (0 .. rows * n - 1));
    requires sep_sum: \separated(sum + (0 .. rows * n - 1), gamma + (0 .. n - 1), beta + (0 .. n - 1));
    requires sep_out: \separated(y + (0 .. rows * n - 1), mean + (0 .. rows - 1), rstd + (0 .. rows - 1),
                                  sum + (0 .. rows * n - 1));
    requires sep_x: \separated(y + (0 .. rows * n - 1), mean + (0 .. rows - 1), rstd + (0 .. rows - 1),
                                x + (0 .. rows * n - 1));
    requires sep_skip: \separated(y + (0 .. rows * n - 1), mean + (0 .. rows - 1), rstd + (0 .. rows - 1),
                                   skip + (0 .. rows * n - 1));
    requires sep_gamma: \separated(y + (0 .. rows * n - 1), mean + (0 .. rows - 1), rstd + (0 .. rows - 1),
                                    gamma + (0 .. n - 1));
    requires sep_beta: \separated(y + (0 .. rows * n - 1), mean + (0 .. rows - 1), rstd + (0 .. rows - 1),
                                   beta + (0 .. n - 1));
    assigns y[0 .. rows * n - 1], mean[0 .. rows - 1], rstd[0 .. rows - 1], sum[0 .. rows * n - 1];
    behavior no_bias:
      assumes bias == \null;
      ensures sum_def: LN_EXACT(\forall integer k; 0 <= k < rows * n ==> sum[k] == \old(x[k]) + \old(skip[k]));
    behavior with_bias:
      assumes bias != \null;
      requires valid_bias: \valid_read(bias + (0 .. n - 1));
      requires sep_bias: \separated(bias + (0 .. n - 1), sum + (0 .. rows * n - 1), y + (0 .. rows * n - 1),
                                     mean + (0 .. rows - 1), rstd + (0 .. rows - 1));
      ensures sum_bias_def: LN_EXACT(\forall integer q, j; 0 <= q < rows && 0 <= j < n ==>
        sum[ln_row_start(q, n) + j] ==
          (\old(x[ln_row_start(q, n) + j]) + \old(skip[ln_row_start(q, n) + j])) + \old(bias[j]));
    complete behaviors;
    disjoint behaviors;
*/
void skip_layernorm_forward_f32(float *y, float *mean, float *rstd, float *sum, const float *x,
                                const float *skip, const float *gamma, const float *beta,
                                const float *bias, int rows, int n, float eps);
/*@ requires rows_nonneg: rows >= 0;
    requires n_pos: n >= 1;
    requires size_fits: rows * n <= INT_MAX;
    requires eps_pos: eps > 0;
    requires valid_x: \valid_read(x + (0 .. rows * n - 1));
    requires valid_skip: \valid_read(skip + (0 .. rows * n - 1));
    requires valid_gamma: \valid_read(gamma + (0 .. n - 1));
    requires valid_beta: \valid_read(beta + (0 .. n - 1));
    requires valid_sum: \valid(sum + (0 .. rows * n - 1));
    requires valid_y: \valid(y + (0 .. rows * n - 1));
    requires valid_mean: \valid(mean + (0 .. rows - 1));
    requires valid_rstd: \valid(rstd + (0 .. rows - 1));
    requires alias_x: sum == x || \separated(sum + (0 .. rows * n - 1), x + (0 .. rows * n - 1));
    requires alias_skip: sum == skip || \separated(sum + (0 .. rows * n - 1), skip + (0 .. rows * n - 1));
    requires sep_sum: \separated(sum + (0 .. rows * n - 1), gamma + (0 .. n - 1), beta + (0 .. n - 1));
    requires sep_out: \separated(y + (0 .. rows * n - 1), mean + (0 .. rows - 1), rstd + (0 .. rows - 1),
                                  sum + (0 .. rows * n - 1));
    requires sep_x: \separated(y + (0 .. rows * n - 1), mean + (0 .. rows - 1), rstd + (0 .. rows - 1),
                                x + (0 .. rows * n - 1));
    requires sep_skip: \separated(y + (0 .. rows * n - 1), mean + (0 .. rows - 1), rstd + (0 .. rows - 1),
                                   skip + (0 .. rows * n - 1));
    requires sep_gamma: \separated(y + (0 .. rows * n - 1), mean + (0 .. rows - 1), rstd + (0 .. rows - 1),
                                    gamma + (0 .. n - 1));
    requires sep_beta: \separated(y + (0 .. rows * n - 1), mean + (0 .. rows - 1), rstd + (0 .. rows - 1),
                                   beta + (0 .. n - 1));
    assigns y[0 .. rows * n - 1], mean[0 .. rows - 1], rstd[0 .. rows - 1], sum[0 .. rows * n - 1];
    behavior no_bias:
      assumes bias == \null;
      ensures sum_def: LN_EXACT(\forall integer k; 0 <= k < rows * n ==> sum[k] == \old(x[k]) + \old(skip[k]));
    behavior with_bias:
      assumes bias != \null;
      requires valid_bias: \valid_read(bias + (0 .. n - 1));
      requires sep_bias: \separated(bias + (0 .. n - 1), sum + (0 .. rows * n - 1), y + (0 .. rows * n - 1),
                                     mean + (0 .. rows - 1), rstd + (0 .. rows - 1));
      ensures sum_bias_def: LN_EXACT(\forall integer q, j; 0 <= q < rows && 0 <= j < n ==>
        sum[ln_row_start(q, n) + j] ==
          (\old(x[ln_row_start(q, n) + j]) + \old(skip[ln_row_start(q, n) + j])) + \old(bias[j]));
    complete behaviors;
    disjoint behaviors;
*/
void skip_layernorm_forward_f64(double *y, double *mean, double *rstd, double *sum,
                                const double *x, const double *skip, const double *gamma,
                                const double *beta, const double *bias, int rows, int n,
                                double eps);

/* Backward, from the forward's `sum`, `mean` and `rstd` (as training keeps them): dx = LayerNorm's
 * input gradient at sum (specs/layernorm.h); dskip is the same array (d s / d skip = 1: the caller
 * uses dx for both); dbias_j = sum_r dx_rj (overwritten, summed from zero in row order); dgamma,
 * dbeta as layernorm_backward's.  Shapes: dx, dy, sum: [rows*n]; dbias, dgamma, dbeta, gamma: [n];
 * mean, rstd: [rows].  Error: specs/error-analysis-residual.md §9. */
/*@ requires rows_nonneg: rows >= 0;
    requires n_pos: n >= 1;
    requires size_fits: rows * n <= INT_MAX;
    requires valid_dy: \valid_read(dy + (0 .. rows * n - 1));
    requires valid_sum: \valid_read(sum + (0 .. rows * n - 1));
    requires valid_gamma: \valid_read(gamma + (0 .. n - 1));
    requires valid_mean: \valid_read(mean + (0 .. rows - 1));
    requires valid_rstd: \valid_read(rstd + (0 .. rows - 1));
    requires valid_dx: \valid(dx + (0 .. rows * n - 1));
    requires valid_dbias: \valid(dbias + (0 .. n - 1));
    requires valid_dgamma: \valid(dgamma + (0 .. n - 1));
    requires valid_dbeta: \valid(dbeta + (0 .. n - 1));
    requires sep_dy: \separated(dx + (0 .. rows * n - 1), dgamma + (0 .. n - 1), dbeta + (0 .. n - 1),
                                 dy + (0 .. rows * n - 1));
    requires sep_sum: \separated(dx + (0 .. rows * n - 1), dgamma + (0 .. n - 1), dbeta + (0 .. n - 1),
                                  sum + (0 .. rows * n - 1));
    requires sep_gamma: \separated(dx + (0 .. rows * n - 1), dgamma + (0 .. n - 1), dbeta + (0 .. n - 1),
                                    gamma + (0 .. n - 1));
    requires sep_stats: \separated(dx + (0 .. rows * n - 1), dgamma + (0 .. n - 1), dbeta + (0 .. n - 1),
                                    mean + (0 .. rows - 1), rstd + (0 .. rows - 1));
    requires sep_dbias: \separated(dbias + (0 .. n - 1), dx + (0 .. rows * n - 1), dgamma + (0 .. n - 1),
                                    dbeta + (0 .. n - 1), dy + (0 .. rows * n - 1), sum + (0 .. rows * n - 1),
                                    gamma + (0 .. n - 1), mean + (0 .. rows - 1), rstd + (0 .. rows - 1));
    assigns dx[0 .. rows * n - 1], dbias[0 .. n - 1], dgamma[0 .. n - 1], dbeta[0 .. n - 1];
*/
void skip_layernorm_backward_f32(float *dx, float *dbias, float *dgamma, float *dbeta,
                                 const float *dy, const float *sum, const float *gamma,
                                 const float *mean, const float *rstd, int rows, int n);
/*@ requires rows_nonneg: rows >= 0;
    requires n_pos: n >= 1;
    requires size_fits: rows * n <= INT_MAX;
    requires valid_dy: \valid_read(dy + (0 .. rows * n - 1));
    requires valid_sum: \valid_read(sum + (0 .. rows * n - 1));
    requires valid_gamma: \valid_read(gamma + (0 .. n - 1));
    requires valid_mean: \valid_read(mean + (0 .. rows - 1));
    requires valid_rstd: \valid_read(rstd + (0 .. rows - 1));
    requires valid_dx: \valid(dx + (0 .. rows * n - 1));
    requires valid_dbias: \valid(dbias + (0 .. n - 1));
    requires valid_dgamma: \valid(dgamma + (0 .. n - 1));
    requires valid_dbeta: \valid(dbeta + (0 .. n - 1));
    requires sep_dy: \separated(dx + (0 .. rows * n - 1), dgamma + (0 .. n - 1), dbeta + (0 .. n - 1),
                                 dy + (0 .. rows * n - 1));
    requires sep_sum: \separated(dx + (0 .. rows * n - 1), dgamma + (0 .. n - 1), dbeta + (0 .. n - 1),
                                  sum + (0 .. rows * n - 1));
    requires sep_gamma: \separated(dx + (0 .. rows * n - 1), dgamma + (0 .. n - 1), dbeta + (0 .. n - 1),
                                    gamma + (0 .. n - 1));
    requires sep_stats: \separated(dx + (0 .. rows * n - 1), dgamma + (0 .. n - 1), dbeta + (0 .. n - 1),
                                    mean + (0 .. rows - 1), rstd + (0 .. rows - 1));
    requires sep_dbias: \separated(dbias + (0 .. n - 1), dx + (0 .. rows * n - 1), dgamma + (0 .. n - 1),
                                    dbeta + (0 .. n - 1), dy + (0 .. rows * n - 1), sum + (0 .. rows * n - 1),
                                    gamma + (0 .. n - 1), mean + (0 .. rows - 1), rstd + (0 .. rows - 1));
    assigns dx[0 .. rows * n - 1], dbias[0 .. n - 1], dgamma[0 .. n - 1], dbeta[0 .. n - 1];
*/
void skip_layernorm_backward_f64(double *dx, double *dbias, double *dgamma, double *dbeta,
                                 const double *dy, const double *sum, const double *gamma,
                                 const double *mean, const double *rstd, int rows, int n);

#endif
