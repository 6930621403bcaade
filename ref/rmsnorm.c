/* RMSNorm kernels, float and double: the code that specs/rmsnorm.h specifies.
 * Written for reading and proving, not for speed: every operation rounds once, in the order written
 * (compile with -ffp-contract=off), which is an order specs/error-analysis-rmsnorm.md admits.
 * Its MPFR twin, ref/rmsnorm_mpfr.c, computes the same op exactly and rounds once. */
#include <math.h>

#include "rmsnorm.h"

/* ---- float ---- */

/* Per-element helpers: each is one line of the kernel, moved out so that its formula can be a
   contract and the loop proofs are about framing only (static inline: same compiled code). */

/* w_i = gamma_i (offset 0) or 1 + gamma_i (offset 1), the latter rounded once in float. */
static inline float rms_w_f32(float g, int offset)
{
    return offset ? 1.0f + g : g;
}

static inline float rms_y_f32(float xi, float r, float w)
{
    return xi * r * w; /* (x_i * rstd) * w_i */
}

static inline float rms_dx_f32(float g, float xhat, float mean_gx, float r)
{
    return (g - xhat * mean_gx) * r;
}

void rmsnorm_row_forward_f32(float *y, float *rstd, const float *x, const float *gamma, int n,
                             float eps, int offset)
{
    /* Sum of squares: all terms >= 0, so no cancellation: |ms_hat - ms| <= gamma_{n+2} ms (+ underflow),
       specs/error-analysis-rmsnorm.md R§2; rstd within R r, R§3; y, R§4. */
    float ss = 0.0f;
    for (int i = 0; i < n; i++)
        ss += x[i] * x[i];
    float ms = ss / (float)n;
    float r = 1.0f / sqrtf(ms + eps);

    for (int i = 0; i < n; i++)
        y[i] = rms_y_f32(x[i], r, rms_w_f32(gamma[i], offset));
    *rstd = r;
}

void rmsnorm_row_backward_f32(float *dx, float *dgamma, const float *dy, const float *x,
                              const float *gamma, float rstd, int n, int offset)
{
    /* First pass: the one row reduction, mean(g * xhat) (error: R§5.1; dx: R§5.2; dgamma: R§5.3). */
    float sum_gx = 0.0f;
    for (int i = 0; i < n; i++) {
        float xhat = x[i] * rstd;
        float g = dy[i] * rms_w_f32(gamma[i], offset);
        sum_gx += g * xhat;
    }
    float mean_gx = sum_gx / (float)n;

    for (int i = 0; i < n; i++) {
        float xhat = x[i] * rstd;
        float g = dy[i] * rms_w_f32(gamma[i], offset);
        dgamma[i] += dy[i] * xhat;
        dx[i] = rms_dx_f32(g, xhat, mean_gx, rstd);
    }
}

void rmsnorm_forward_f32(float *y, float *rstd, const float *x, const float *gamma, int rows,
                         int n, float eps, int offset)
{
    for (int r = 0; r < rows; r++)
        rmsnorm_row_forward_f32(y + r * n, rstd + r, x + r * n, gamma, n, eps, offset);
}

void rmsnorm_backward_f32(float *dx, float *dgamma, const float *dy, const float *x,
                          const float *gamma, const float *rstd, int rows, int n, int offset)
{
    for (int r = 0; r < rows; r++)
        rmsnorm_row_backward_f32(dx + r * n, dgamma, dy + r * n, x + r * n, gamma, rstd[r], n,
                                 offset);
}

/* ---- double: the same code with double ---- */

static inline double rms_w_f64(double g, int offset)
{
    return offset ? 1.0 + g : g;
}

static inline double rms_y_f64(double xi, double r, double w)
{
    return xi * r * w;
}

static inline double rms_dx_f64(double g, double xhat, double mean_gx, double r)
{
    return (g - xhat * mean_gx) * r;
}

void rmsnorm_row_forward_f64(double *y, double *rstd, const double *x, const double *gamma, int n,
                             double eps, int offset)
{
    double ss = 0.0;
    for (int i = 0; i < n; i++)
        ss += x[i] * x[i];
    double ms = ss / (double)n;
    double r = 1.0 / sqrt(ms + eps);

    for (int i = 0; i < n; i++)
        y[i] = rms_y_f64(x[i], r, rms_w_f64(gamma[i], offset));
    *rstd = r;
}

void rmsnorm_row_backward_f64(double *dx, double *dgamma, const double *dy, const double *x,
                              const double *gamma, double rstd, int n, int offset)
{
    double sum_gx = 0.0;
    for (int i = 0; i < n; i++) {
        double xhat = x[i] * rstd;
        double g = dy[i] * rms_w_f64(gamma[i], offset);
        sum_gx += g * xhat;
    }
    double mean_gx = sum_gx / (double)n;

    for (int i = 0; i < n; i++) {
        double xhat = x[i] * rstd;
        double g = dy[i] * rms_w_f64(gamma[i], offset);
        dgamma[i] += dy[i] * xhat;
        dx[i] = rms_dx_f64(g, xhat, mean_gx, rstd);
    }
}

void rmsnorm_forward_f64(double *y, double *rstd, const double *x, const double *gamma, int rows,
                         int n, double eps, int offset)
{
    for (int r = 0; r < rows; r++)
        rmsnorm_row_forward_f64(y + r * n, rstd + r, x + r * n, gamma, n, eps, offset);
}

void rmsnorm_backward_f64(double *dx, double *dgamma, const double *dy, const double *x,
                          const double *gamma, const double *rstd, int rows, int n, int offset)
{
    for (int r = 0; r < rows; r++)
        rmsnorm_row_backward_f64(dx + r * n, dgamma, dy + r * n, x + r * n, gamma, rstd[r], n,
                                 offset);
}
