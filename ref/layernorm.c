/* LayerNorm kernels, float and double: the code that specs/layernorm.h specifies and proofs/ proves.
 * Written for reading and proving, not for speed: every operation rounds once, in the order written
 * (compile with -ffp-contract=off), which is the order specs/error-analysis.md analyses.
 * Its MPFR twin, ref/layernorm_mpfr.c, computes the same op exactly and rounds once. */
#include <math.h>

#include "layernorm.h"

/* ---- float ---- */

void layernorm_row_forward_f32(float *y, float *mean, float *rstd, const float *x,
                               const float *gamma, const float *beta, int n, float eps)
{
    float sum = 0.0f;
    for (int i = 0; i < n; i++)
        sum += x[i];
    float m = sum / (float)n;

    /* Two-pass variance: deviations from the computed mean, never E[x^2] - E[x]^2, which
       cancels catastrophically when |mean| >> std. */
    float ssd = 0.0f;
    for (int i = 0; i < n; i++) {
        float d = x[i] - m;
        ssd += d * d;
    }
    float var = ssd / (float)n;
    float r = 1.0f / sqrtf(var + eps);

    for (int i = 0; i < n; i++)
        y[i] = (x[i] - m) * r * gamma[i] + beta[i];
    *mean = m;
    *rstd = r;
}

void layernorm_row_backward_f32(float *dx, float *dgamma, float *dbeta, const float *dy,
                                const float *x, const float *gamma, float mean, float rstd, int n)
{
    /* First pass: the two row reductions, mean(g) and mean(g * xhat). */
    float sum_g = 0.0f, sum_gx = 0.0f;
    for (int i = 0; i < n; i++) {
        float xhat = (x[i] - mean) * rstd;
        float g = dy[i] * gamma[i];
        sum_g += g;
        sum_gx += g * xhat;
    }
    float mean_g = sum_g / (float)n;
    float mean_gx = sum_gx / (float)n;

    for (int i = 0; i < n; i++) {
        float xhat = (x[i] - mean) * rstd;
        float g = dy[i] * gamma[i];
        dbeta[i] += dy[i];
        dgamma[i] += dy[i] * xhat;
        dx[i] = (g - mean_g - xhat * mean_gx) * rstd;
    }
}

void layernorm_forward_f32(float *y, float *mean, float *rstd, const float *x, const float *gamma,
                           const float *beta, int rows, int n, float eps)
{
    for (int r = 0; r < rows; r++)
        layernorm_row_forward_f32(y + r * n, mean + r, rstd + r, x + r * n, gamma, beta, n, eps);
}

void layernorm_backward_f32(float *dx, float *dgamma, float *dbeta, const float *dy, const float *x,
                            const float *gamma, const float *mean, const float *rstd, int rows,
                            int n)
{
    for (int r = 0; r < rows; r++)
        layernorm_row_backward_f32(dx + r * n, dgamma, dbeta, dy + r * n, x + r * n, gamma,
                                   mean[r], rstd[r], n);
}

/* ---- double: the same code with double ---- */

void layernorm_row_forward_f64(double *y, double *mean, double *rstd, const double *x,
                               const double *gamma, const double *beta, int n, double eps)
{
    double sum = 0.0;
    for (int i = 0; i < n; i++)
        sum += x[i];
    double m = sum / (double)n;

    double ssd = 0.0;
    for (int i = 0; i < n; i++) {
        double d = x[i] - m;
        ssd += d * d;
    }
    double var = ssd / (double)n;
    double r = 1.0 / sqrt(var + eps);

    for (int i = 0; i < n; i++)
        y[i] = (x[i] - m) * r * gamma[i] + beta[i];
    *mean = m;
    *rstd = r;
}

void layernorm_row_backward_f64(double *dx, double *dgamma, double *dbeta, const double *dy,
                                const double *x, const double *gamma, double mean, double rstd,
                                int n)
{
    double sum_g = 0.0, sum_gx = 0.0;
    for (int i = 0; i < n; i++) {
        double xhat = (x[i] - mean) * rstd;
        double g = dy[i] * gamma[i];
        sum_g += g;
        sum_gx += g * xhat;
    }
    double mean_g = sum_g / (double)n;
    double mean_gx = sum_gx / (double)n;

    for (int i = 0; i < n; i++) {
        double xhat = (x[i] - mean) * rstd;
        double g = dy[i] * gamma[i];
        dbeta[i] += dy[i];
        dgamma[i] += dy[i] * xhat;
        dx[i] = (g - mean_g - xhat * mean_gx) * rstd;
    }
}

void layernorm_forward_f64(double *y, double *mean, double *rstd, const double *x,
                           const double *gamma, const double *beta, int rows, int n, double eps)
{
    for (int r = 0; r < rows; r++)
        layernorm_row_forward_f64(y + r * n, mean + r, rstd + r, x + r * n, gamma, beta, n, eps);
}

void layernorm_backward_f64(double *dx, double *dgamma, double *dbeta, const double *dy,
                            const double *x, const double *gamma, const double *mean,
                            const double *rstd, int rows, int n)
{
    for (int r = 0; r < rows; r++)
        layernorm_row_backward_f64(dx + r * n, dgamma, dbeta, dy + r * n, x + r * n, gamma,
                                   mean[r], rstd[r], n);
}
