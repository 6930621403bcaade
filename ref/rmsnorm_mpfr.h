/* MPFR twin of ref/rmsnorm.c: the exact real RMSNorm of the given inputs, rounded once.
 *
 * Same contract as ref/layernorm_mpfr.h.  Inputs are doubles holding values of the input format;
 * eps is the exact value used (see rn_parse_eps); offset 0: w = gamma, offset 1: w = 1 + gamma,
 * EXACTLY (the real formula; a kernel's rounding of 1 + gamma is its error, covered by the bound).
 * Every output element is the exact real result of the formula in specs/rmsnorm.h, rounded once
 * (RN-even, with subnormals and overflow as IEEE) to format `out` and stored in a double.
 * Certified: emitted only when the working-precision enclosure of the exact value rounds to a single
 * value of `out`; otherwise the precision is raised (Ziv).  Non-finite inputs and the 0/0 of an
 * all-zero row with eps = 0 propagate as documented at the top of ref/rmsnorm_mpfr.c.
 *
 * Shapes: x, y, dy, dx: [rows*n] row-major; gamma, dgamma: [n]; rstd: [rows].
 * dgamma is the sum over all rows (starting from zero), rounded once.
 * Return: RN_TWIN_OK, RN_TWIN_UNCERTIFIED (nothing guessed: the caller must fail), RN_TWIN_NOMEM. */
#ifndef RESNORM_RMSNORM_MPFR_H
#define RESNORM_RMSNORM_MPFR_H

#include <stddef.h>

#include "dtype.h"
#include "layernorm_mpfr.h" /* RN_TWIN_OK, RN_TWIN_UNCERTIFIED, RN_TWIN_NOMEM */

int rmsnorm_forward_mpfr(double *y, double *rstd, const double *x, const double *gamma,
                         size_t rows, size_t n, double eps, int offset, rn_dtype out);

int rmsnorm_backward_mpfr(double *dx, double *dgamma, const double *dy, const double *x,
                          const double *gamma, size_t rows, size_t n, double eps, int offset,
                          rn_dtype out);

/* The same on inputs that are not binary64 values (the exact sum of the skip_rmsnorm twin): xs[i]
   is the exact value of element i (an MPFR number of any precision), read where xcls[i] is finite;
   xcls[i] is any finite double there, and the element's NaN or +-Inf otherwise (the NaN/Inf rules
   above then apply to it).  Shapes as above, xs and xcls [rows*n].  The double entry points are
   these with xs[i] = x[i].  The backward's dxsum (may be NULL): the column sums of dx over all
   rows, sum_r dx_rj, [n], rounded once (the bias gradient of skip_rmsnorm_backward). */
int rmsnorm_forward_mpfr_exact(double *y, double *rstd, const double *xcls, mpfr_srcptr const *xs,
                               const double *gamma, size_t rows, size_t n, double eps, int offset,
                               rn_dtype out);

int rmsnorm_backward_mpfr_exact(double *dx, double *dgamma, double *dxsum, const double *dy,
                                const double *xcls, mpfr_srcptr const *xs, const double *gamma,
                                size_t rows, size_t n, double eps, int offset, rn_dtype out);

#endif
