/* Skip + LayerNorm kernels, float and double (contracts: specs/skip_layernorm.h): the residual add
 * (ref/residual.c), then the bias per column, then LayerNorm (ref/layernorm.c) of the rounded sum.
 * Every operation rounds once, in the order written (-ffp-contract=off); the MPFR twin,
 * ref/skip_layernorm_mpfr.c, normalizes the exact sum instead. */
#include "skip_layernorm.h"

#include "layernorm.h"
#include "residual.h"

/* Index facts of the rows x n layout (proof only: ACSL lemmas, each proved as a WP goal). */
/*@ lemma skip_ln_row_offset: \forall integer r, rows, n; 0 <= r < rows && n >= 1 ==>
      0 <= r * n && r * n + n <= rows * n;
    lemma skip_ln_index: \forall integer q, j, rows, n; 0 <= q < rows && 0 <= j < n ==>
      0 <= q * n + j < rows * n;
*/

void skip_layernorm_forward_f32(float *y, float *mean, float *rstd, float *sum, const float *x,
                                const float *skip, const float *gamma, const float *beta,
                                const float *bias, int rows, int n, float eps)
{
    residual_forward_f32(sum, x, skip, rows * n); /* s = x + skip */
    if (bias)
        /*@ loop invariant r_range: 0 <= r <= rows;
            loop assigns r, sum[0 .. rows * n - 1];
            loop variant rows - r; */
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
        /*@ loop invariant r_range: 0 <= r <= rows;
            loop assigns r, sum[0 .. rows * n - 1];
            loop variant rows - r; */
        for (int r = 0; r < rows; r++)
            residual_forward_f64(sum + r * n, sum + r * n, bias, n);
    layernorm_forward_f64(y, mean, rstd, sum, gamma, beta, rows, n, eps);
}

/* Backward from the forward's saved sum, mean and rstd: dx (= dskip) = LayerNorm's input gradient
   at the rounded sum, dgamma and dbeta as ref/layernorm.c gives them, dbias_j = sum over rows of
   dx_rj, from zero, in row order. */
void skip_layernorm_backward_f32(float *dx, float *dbias, float *dgamma, float *dbeta,
                                 const float *dy, const float *sum, const float *gamma,
                                 const float *mean, const float *rstd, int rows, int n)
{
    layernorm_backward_f32(dx, dgamma, dbeta, dy, sum, gamma, mean, rstd, rows, n);
    /*@ loop invariant j_range: 0 <= j <= n;
        loop assigns j, dbias[0 .. n - 1];
        loop variant n - j; */
    for (int j = 0; j < n; j++)
        dbias[j] = 0.0f;
    /*@ loop invariant r_range: 0 <= r <= rows;
        loop assigns r, dbias[0 .. n - 1];
        loop variant rows - r; */
    for (int r = 0; r < rows; r++)
        /*@ loop invariant j_range: 0 <= j <= n;
            loop invariant row_in: 0 <= r * n && r * n + n <= rows * n;
            loop assigns j, dbias[0 .. n - 1];
            loop variant n - j; */
        for (int j = 0; j < n; j++)
            dbias[j] = dbias[j] + dx[r * n + j];
}

void skip_layernorm_backward_f64(double *dx, double *dbias, double *dgamma, double *dbeta,
                                 const double *dy, const double *sum, const double *gamma,
                                 const double *mean, const double *rstd, int rows, int n)
{
    layernorm_backward_f64(dx, dgamma, dbeta, dy, sum, gamma, mean, rstd, rows, n);
    /*@ loop invariant j_range: 0 <= j <= n;
        loop assigns j, dbias[0 .. n - 1];
        loop variant n - j; */
    for (int j = 0; j < n; j++)
        dbias[j] = 0.0;
    /*@ loop invariant r_range: 0 <= r <= rows;
        loop assigns r, dbias[0 .. n - 1];
        loop variant rows - r; */
    for (int r = 0; r < rows; r++)
        /*@ loop invariant j_range: 0 <= j <= n;
            loop invariant row_in: 0 <= r * n && r * n + n <= rows * n;
            loop assigns j, dbias[0 .. n - 1];
            loop variant n - j; */
        for (int j = 0; j < n; j++)
            dbias[j] = dbias[j] + dx[r * n + j];
}
