/* MPFR twin of ref/skip_rmsnorm.c: the exact RMSNorm of the exact sum s = x + skip (+ bias),
 * rounded once, and the exact sum rounded once.
 *
 * Inputs are doubles holding values of the input format; bias may be NULL.  Every output element is
 * the exact real result rounded once (RN-even, subnormals and overflow as IEEE) to `out`:
 *   sum_i = s_i;  rstd, y = RMSNorm(s) as in ref/rmsnorm_mpfr.h (same eps and offset conventions).
 * The sum is exact (ref/skip_layernorm_mpfr.c says why) and need not be a binary64 value: it is
 * handed to the RMSNorm twin as an exact MPFR number (rmsnorm_forward_mpfr_exact).
 * NaN/Inf: an element's class is the IEEE sum of its non-finite addends (as skip_layernorm's);
 * sum_i carries that class; RMSNorm treats the element as an x_i of that class (ref/rmsnorm_mpfr.c).
 * Shapes: x, skip, y, sum: [rows*n]; gamma, bias: [n]; rstd: [rows].
 * Returns RN_TWIN_OK, RN_TWIN_UNCERTIFIED or RN_TWIN_NOMEM (ref/layernorm_mpfr.h). */
#ifndef RESNORM_SKIP_RMSNORM_MPFR_H
#define RESNORM_SKIP_RMSNORM_MPFR_H

#include <stddef.h>

#include "dtype.h"
#include "layernorm_mpfr.h"

int skip_rmsnorm_forward_mpfr(double *y, double *rstd, double *sum, const double *x,
                              const double *skip, const double *gamma, const double *bias,
                              size_t rows, size_t n, double eps, int offset, rn_dtype out);

/* Backward, from zero: with s the exact sum and RMSNorm's backward at s (ref/rmsnorm_mpfr.h),
   dx = dskip = the input gradient at s, [rows*n]; dbias_j = sum_r dx_rj, [n] (given whether or
   not a bias was passed: the gradient a bias would receive); dgamma_j = sum_r dy_rj shat_rj, [n].
   Each rounded once to `out`. */
int skip_rmsnorm_backward_mpfr(double *dx, double *dskip, double *dbias, double *dgamma,
                               const double *dy, const double *x, const double *skip,
                               const double *gamma, const double *bias, size_t rows, size_t n,
                               double eps, int offset, rn_dtype out);

#endif
