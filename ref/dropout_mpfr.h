/* MPFR twin of ref/dropout.c: dropout with a given 0/1 mask, exact and rounded once.
 *
 * p is a value of the input format: the attribute's decimal text rounded once to the input dtype
 * (as eps is for the norms: rn_parse_eps), 0 <= p < 1.  Inputs are doubles holding values of the
 * input format; mask[i] is 0 or 1.  For every element (shapes [n]):
 *   dropout_forward_mpfr:   y[i]  = x[i]·mask[i]/(1 - p)
 *   dropout_backward_mpfr:  dx[i] = dy[i]·mask[i]/(1 - p)      (from zero: not accumulated)
 * rounded once (RN-even, subnormals and overflow to +-Inf as IEEE) to format `out`.  1 - p is
 * exact (both are dyadic); the quotient a/(1 - p) of two dyadic numbers is in general not dyadic:
 * it is enclosed by mpfr_div with directed roundings and emitted when both ends round to the same
 * value of `out` (Ziv, exact_mpfr.h's ziv_quot): a quotient that is exactly representable (p = 0.5,
 * 0.75, ...) gives a point enclosure and is certified at once.  A masked element is x·0: +0 (an exact
 * zero is +0), NaN when x is NaN or +-Inf (IEEE: Inf·0 = NaN); a kept +-Inf stays +-Inf.
 * Returns RN_TWIN_OK or RN_TWIN_UNCERTIFIED (never reached: see exact_mpfr.h). */
#ifndef RESNORM_DROPOUT_MPFR_H
#define RESNORM_DROPOUT_MPFR_H

#include <stddef.h>

#include "dtype.h"
#include "layernorm_mpfr.h" /* RN_TWIN_* */

int dropout_forward_mpfr(double *y, const double *x, const double *mask, double p, size_t n,
                         rn_dtype out);
/* The same map on dy (the backward of a linear map in x is the map itself). */
int dropout_backward_mpfr(double *dx, const double *dy, const double *mask, double p, size_t n,
                          rn_dtype out);

#endif
