/* MPFR twin of ref/skip_layernorm.c: the exact LayerNorm of the exact sum s = x + skip (+ bias),
 * rounded once, and the exact sum rounded once.
 *
 * Inputs are doubles holding values of the input format; bias may be NULL.  Every output element is
 * the exact real result rounded once (RN-even, subnormals and overflow as IEEE) to `out`:
 *   sum_i = s_i;  mean, rstd, y = LayerNorm(s) as in ref/layernorm_mpfr.h (same eps convention).
 * The sum is exact (ref/skip_layernorm_mpfr.c says why) and need not be a binary64 value: it is
 * handed to the LayerNorm twin as an exact MPFR number (layernorm_forward_mpfr_exact).
 * NaN/Inf: an element's class is the IEEE sum of its non-finite addends (NaN if any is NaN or both
 * infinities occur, else that infinity); finite addends are added exactly.  sum_i carries that class;
 * LayerNorm treats the element as an x_i of that class (ref/layernorm_mpfr.c).
 * Shapes: x, skip, y, sum: [rows*n]; gamma, beta, bias: [n]; mean, rstd: [rows].
 * Returns RN_TWIN_OK, RN_TWIN_UNCERTIFIED or RN_TWIN_NOMEM (ref/layernorm_mpfr.h). */
#ifndef RESNORM_SKIP_LAYERNORM_MPFR_H
#define RESNORM_SKIP_LAYERNORM_MPFR_H

#include <stddef.h>

#include "dtype.h"
#include "layernorm_mpfr.h"

int skip_layernorm_forward_mpfr(double *y, double *mean, double *rstd, double *sum,
                                const double *x, const double *skip, const double *gamma,
                                const double *beta, const double *bias, size_t rows, size_t n,
                                double eps, rn_dtype out);

/* Backward, from zero: with s the exact sum and LayerNorm's backward at s (ref/layernorm_mpfr.h),
   dx = dskip = the input gradient at s, [rows*n]; dbias_j = sum_r dx_rj, [n] (given whether or
   not a bias was passed: the gradient a bias would receive); dgamma_j = sum_r dy_rj shat_rj and
   dbeta_j = sum_r dy_rj, [n].  Each rounded once to `out`. */
int skip_layernorm_backward_mpfr(double *dx, double *dskip, double *dbias, double *dgamma,
                                 double *dbeta, const double *dy, const double *x,
                                 const double *skip, const double *gamma, const double *bias,
                                 size_t rows, size_t n, double eps, rn_dtype out);

/* Shared with the skip_rmsnorm twin (ref/skip_rmsnorm_mpfr.c).
   skip_exact_sum: s = a + b (+ *c), exactly (s is re-precisioned; c may be NULL), for finite
   addends.  skip_sum_class: the IEEE class of that sum when some addend is NaN or +-Inf (NaN if any
   is NaN or both infinities occur, else that infinity), 0.0 when all are finite. */
void skip_exact_sum(mpfr_t s, double a, double b, const double *c);
double skip_sum_class(double a, double b, const double *c);

#endif
