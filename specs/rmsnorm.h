/* RMSNorm over the last dimension of row-major data: prototypes of the kernels in ref/rmsnorm.c.
 *
 * For one row x[0..n) with parameters gamma[0..n) and offset in {0, 1}:
 *   ms   = (1/n) sum_i x_i^2                 (mean of the squares: no mean is subtracted)
 *   rstd = 1 / sqrt(ms + eps)
 *   w_i  = gamma_i            (offset 0, Llama / T5 form)
 *        = 1 + gamma_i        (offset 1, Gemma form; the kernels compute 1 + gamma_i in the
 *                              compute precision: one rounding, covered by the error analysis)
 *   y_i  = x_i * rstd * w_i   (evaluated as (x_i * rstd) * w_i)
 * Backward, with xhat_i = x_i * rstd and g_i = dy_i * w_i:
 *   dx_i      = rstd * (g_i - xhat_i * mean_j(g_j * xhat_j))   (overwritten)
 *   dgamma_i += dy_i * xhat_i                                   (accumulated; for both offsets,
 *                                                                since d(1 + gamma)/dgamma = 1)
 * The rows x n drivers apply the row kernel to each row r (x + r*n, ...) and rstd[r].
 * The backward takes the forward's rstd (as in training), not a recomputed one.
 *
 * Written as plain loops in the style of ref/layernorm.c so that ACSL contracts (real model) can be
 * added next to these prototypes; the order of operations is the one specs/error-analysis-rmsnorm.md
 * analyses (any order of the sum of squares is admitted there).
 * Exact reference: ref/rmsnorm_mpfr.h.  A-priori error bound: ref/rmsnorm_bound.h.
 */
#ifndef RESNORM_RMSNORM_H
#define RESNORM_RMSNORM_H

#include <limits.h>

/* One row.  y, x, gamma: [n]; n >= 1; eps >= 0; offset 0 or 1 (any non-zero value means 1). */
void rmsnorm_row_forward_f32(float *y, float *rstd, const float *x, const float *gamma, int n,
                             float eps, int offset);
void rmsnorm_row_forward_f64(double *y, double *rstd, const double *x, const double *gamma, int n,
                             double eps, int offset);

/* One row.  dx, dy, x, gamma, dgamma: [n]; rstd: the forward's value for this row. */
void rmsnorm_row_backward_f32(float *dx, float *dgamma, const float *dy, const float *x,
                              const float *gamma, float rstd, int n, int offset);
void rmsnorm_row_backward_f64(double *dx, double *dgamma, const double *dy, const double *x,
                              const double *gamma, double rstd, int n, int offset);

/* rows x n drivers. y, x, dx, dy: [rows*n]; rstd: [rows]; gamma, dgamma: [n]; rows*n <= INT_MAX. */
void rmsnorm_forward_f32(float *y, float *rstd, const float *x, const float *gamma, int rows,
                         int n, float eps, int offset);
void rmsnorm_forward_f64(double *y, double *rstd, const double *x, const double *gamma, int rows,
                         int n, double eps, int offset);
void rmsnorm_backward_f32(float *dx, float *dgamma, const float *dy, const float *x,
                          const float *gamma, const float *rstd, int rows, int n, int offset);
void rmsnorm_backward_f64(double *dx, double *dgamma, const double *dy, const double *x,
                          const double *gamma, const double *rstd, int rows, int n, int offset);

#endif
