/* Skip + LayerNorm kernels, float and double (contracts: specs/skip_layernorm.h): the residual add
 * (ref/residual.c), then the bias per column, then LayerNorm (ref/layernorm.c) of the rounded sum.
 * Every operation rounds once, in the order written (-ffp-contract=off); the MPFR twin,
 * ref/skip_layernorm_mpfr.c, normalizes the exact sum instead. */
#include "skip_layernorm.h"

#include "layernorm.h"
#include "residual.h"

void skip_layernorm_forward_f32(float *y, float *mean, float *rstd, float *sum, const float *x,
                                const float *skip, const float *gamma, const float *beta,
                                const float *bias, int rows, int n, float eps)
{
    residual_forward_f32(sum, x, skip, rows * n); /* s = x + skip */
    if (bias)
        for (int r = 0; r < rows; r++)
            residual_forward_f32(sum + r * n, sum + r * n, bias, n); /* s += bias, in place */
    layernorm_forward_f32(y, mean, rstd, sum, gamma, beta, rows, n, eps);
}

void skip_layernorm_forward_f64(double *y, double *mean, double *rstd, double *sum,
                                const double *x, const double *skip, const double *gamma,
                                const double *beta, const double *bias, int rows, int n,
                                double eps)
{
    residual_forward_f64(sum, x, skip, rows * n);
    if (bias)
        for (int r = 0; r < rows; r++)
            residual_forward_f64(sum + r * n, sum + r * n, bias, n);
    layernorm_forward_f64(y, mean, rstd, sum, gamma, beta, rows, n, eps);
}
