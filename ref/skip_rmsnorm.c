/* Skip + RMSNorm kernels, float and double (contracts: specs/skip_rmsnorm.h): the residual add
 * (ref/residual.c), then the bias per column, then RMSNorm (ref/rmsnorm.c) of the rounded sum.
 * Every operation rounds once, in the order written (-ffp-contract=off); the MPFR twin,
 * ref/skip_rmsnorm_mpfr.c, normalizes the exact sum instead. */
#include "skip_rmsnorm.h"

#include "residual.h"
#include "rmsnorm.h"

/* Index facts of the rows x n layout (proof only: ACSL lemmas, each proved as a WP goal). */
/*@ lemma skip_rms_row_offset: \forall integer r, rows, n; 0 <= r < rows && n >= 1 ==>
      0 <= r * n && r * n + n <= rows * n;
    lemma skip_rms_index: \forall integer q, j, rows, n; 0 <= q < rows && 0 <= j < n ==>
      0 <= q * n + j < rows * n;
*/

void skip_rmsnorm_forward_f32(float *y, float *rstd, float *sum, const float *x, const float *skip,
                              const float *gamma, const float *bias, int rows, int n, float eps,
                              int offset)
{
    residual_forward_f32(sum, x, skip, rows * n); /* s = x + skip */
    if (bias)
        /*@ loop invariant r_range: 0 <= r <= rows;
            loop assigns r, sum[0 .. rows * n - 1];
            loop variant rows - r; */
        for (int r = 0; r < rows; r++)
            residual_forward_f32(sum + r * n, sum + r * n, bias, n); /* s += bias, in place */
    rmsnorm_forward_f32(y, rstd, sum, gamma, rows, n, eps, offset);
}

void skip_rmsnorm_forward_f64(double *y, double *rstd, double *sum, const double *x,
                              const double *skip, const double *gamma, const double *bias,
                              int rows, int n, double eps, int offset)
{
    residual_forward_f64(sum, x, skip, rows * n);
    if (bias)
        /*@ loop invariant r_range: 0 <= r <= rows;
            loop assigns r, sum[0 .. rows * n - 1];
            loop variant rows - r; */
        for (int r = 0; r < rows; r++)
            residual_forward_f64(sum + r * n, sum + r * n, bias, n);
    rmsnorm_forward_f64(y, rstd, sum, gamma, rows, n, eps, offset);
}

/* Backward from the forward's saved sum and rstd: dx (= dskip) = RMSNorm's input gradient at the
   rounded sum, dgamma accumulated (ref/rmsnorm.c), dbias_j = sum over rows of dx_rj, from zero, in
   row order. */
void skip_rmsnorm_backward_f32(float *dx, float *dbias, float *dgamma, const float *dy,
                               const float *sum, const float *gamma, const float *rstd, int rows,
                               int n, int offset)
{
    rmsnorm_backward_f32(dx, dgamma, dy, sum, gamma, rstd, rows, n, offset);
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

void skip_rmsnorm_backward_f64(double *dx, double *dbias, double *dgamma, const double *dy,
                               const double *sum, const double *gamma, const double *rstd,
                               int rows, int n, int offset)
{
    rmsnorm_backward_f64(dx, dgamma, dy, sum, gamma, rstd, rows, n, offset);
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
