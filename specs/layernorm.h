/* LayerNorm over the last dimension of row-major data: contracts of the kernels in ref/layernorm.c.
 *
 * For one row x[0..n) with parameters gamma, beta[0..n):
 *   mean = (1/n) sum_i x_i                 (two-pass: the mean first ...)
 *   var  = (1/n) sum_i (x_i - mean)^2      (... then the biased variance about it)
 *   rstd = 1 / sqrt(var + eps)
 *   y_i  = (x_i - mean) * rstd * gamma_i + beta_i
 * Backward, with xhat_i = (x_i - mean) * rstd and g_i = dy_i * gamma_i:
 *   dx_i      = rstd * (g_i - mean_j(g_j) - xhat_i * mean_j(g_j * xhat_j))   (overwritten)
 *   dgamma_i += dy_i * xhat_i                                                  (accumulated)
 *   dbeta_i  += dy_i                                                           (accumulated)
 * The rows x n drivers apply the row kernel to each row r (x + r*n, ...), mean[r], rstd[r].
 */
#ifndef RESNORM_LAYERNORM_H
#define RESNORM_LAYERNORM_H

void layernorm_row_forward_f32(float *y, float *mean, float *rstd, const float *x,
                               const float *gamma, const float *beta, int n, float eps);
void layernorm_row_forward_f64(double *y, double *mean, double *rstd, const double *x,
                               const double *gamma, const double *beta, int n, double eps);

void layernorm_row_backward_f32(float *dx, float *dgamma, float *dbeta, const float *dy,
                                const float *x, const float *gamma, float mean, float rstd, int n);
void layernorm_row_backward_f64(double *dx, double *dgamma, double *dbeta, const double *dy,
                                const double *x, const double *gamma, double mean, double rstd,
                                int n);

/* rows x n drivers. y, x, dx, dy: [rows*n]; mean, rstd: [rows]; gamma, beta, dgamma, dbeta: [n]. */
void layernorm_forward_f32(float *y, float *mean, float *rstd, const float *x, const float *gamma,
                           const float *beta, int rows, int n, float eps);
void layernorm_forward_f64(double *y, double *mean, double *rstd, const double *x,
                           const double *gamma, const double *beta, int rows, int n, double eps);
void layernorm_backward_f32(float *dx, float *dgamma, float *dbeta, const float *dy, const float *x,
                            const float *gamma, const float *mean, const float *rstd, int rows,
                            int n);
void layernorm_backward_f64(double *dx, double *dgamma, double *dbeta, const double *dy,
                            const double *x, const double *gamma, const double *mean,
                            const double *rstd, int rows, int n);

#endif
