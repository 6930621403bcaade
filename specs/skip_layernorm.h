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
 * ACSL contracts are to be added by the proof work of issue 3 (the composition of specs/residual.h
 * and specs/layernorm.h).
 */
#ifndef RESNORM_SKIP_LAYERNORM_H
#define RESNORM_SKIP_LAYERNORM_H

void skip_layernorm_forward_f32(float *y, float *mean, float *rstd, float *sum, const float *x,
                                const float *skip, const float *gamma, const float *beta,
                                const float *bias, int rows, int n, float eps);
void skip_layernorm_forward_f64(double *y, double *mean, double *rstd, double *sum,
                                const double *x, const double *skip, const double *gamma,
                                const double *beta, const double *bias, int rows, int n,
                                double eps);

/* Backward, from the forward's `sum`, `mean` and `rstd` (as training keeps them): dx = LayerNorm's
 * input gradient at sum (specs/layernorm.h); dskip is the same array (d s / d skip = 1: the caller
 * uses dx for both); dbias_j = sum_r dx_rj (overwritten, summed from zero in row order); dgamma,
 * dbeta as layernorm_backward's.  Shapes: dx, dy, sum: [rows*n]; dbias, dgamma, dbeta, gamma: [n];
 * mean, rstd: [rows].  Error: specs/error-analysis-residual.md §9. */
void skip_layernorm_backward_f32(float *dx, float *dbias, float *dgamma, float *dbeta,
                                 const float *dy, const float *sum, const float *gamma,
                                 const float *mean, const float *rstd, int rows, int n);
void skip_layernorm_backward_f64(double *dx, double *dbias, double *dgamma, double *dbeta,
                                 const double *dy, const double *sum, const double *gamma,
                                 const double *mean, const double *rstd, int rows, int n);

#endif
