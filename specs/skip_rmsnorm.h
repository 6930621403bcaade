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
 * ACSL contracts are to be added by the proof work of issue 3 (the composition of specs/residual.h
 * and specs/rmsnorm.h).
 */
#ifndef RESNORM_SKIP_RMSNORM_H
#define RESNORM_SKIP_RMSNORM_H

void skip_rmsnorm_forward_f32(float *y, float *rstd, float *sum, const float *x, const float *skip,
                              const float *gamma, const float *bias, int rows, int n, float eps,
                              int offset);
void skip_rmsnorm_forward_f64(double *y, double *rstd, double *sum, const double *x,
                              const double *skip, const double *gamma, const double *bias,
                              int rows, int n, double eps, int offset);

/* Backward, from the forward's `sum` and `rstd` (as training keeps them): dx = RMSNorm's input
 * gradient at sum (specs/rmsnorm.h, overwritten); dskip is the same array (d s / d skip = 1: the
 * caller uses dx for both); dbias_j = sum_r dx_rj (overwritten, summed from zero in row order);
 * dgamma accumulated as rmsnorm_backward's.  Shapes: dx, dy, sum: [rows*n]; dbias, dgamma, gamma:
 * [n]; rstd: [rows].  Error: specs/error-analysis-residual.md §9. */
void skip_rmsnorm_backward_f32(float *dx, float *dbias, float *dgamma, const float *dy,
                               const float *sum, const float *gamma, const float *rstd, int rows,
                               int n, int offset);
void skip_rmsnorm_backward_f64(double *dx, double *dbias, double *dgamma, const double *dy,
                               const double *sum, const double *gamma, const double *rstd,
                               int rows, int n, int offset);

#endif
