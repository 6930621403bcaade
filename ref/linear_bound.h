/* A-priori, per-element error bounds for the linear layer, forward and backward (derivation:
 * specs/error-analysis-linear.md; the conventions are those of ref/layernorm_bound.h).
 *
 * A correct implementation that forms each dot product in format `compute` (unit roundoff u), in
 * any summation order, with or without FMA, and rounds its outputs to format `out`, returns `got`
 * with |got - want| <= bound, where want is the twin's exact result rounded to f64 (the bound
 * includes want's own rounding).  Where the exact value is NaN or +-Inf the bound is 0 and the
 * checker demands the same class; where a partial sum may overflow the compute format or the result
 * overflows the output format the analysis says nothing and the bound is +Inf (unconstrained).
 * Shapes as ref/linear_mpfr.h.  Returns RN_TWIN_OK or RN_TWIN_NOMEM. */
#ifndef RESNORM_LINEAR_BOUND_H
#define RESNORM_LINEAR_BOUND_H

#include <stddef.h>

#include "dtype.h"

int linear_forward_bound(double *by, const double *x, const double *w, const double *b,
                         size_t rows, size_t in, size_t out, rn_dtype compute, rn_dtype d);
int linear_backward_bound(double *bdx, double *bdw, double *bdb, const double *dy, const double *x,
                          const double *w, size_t rows, size_t in, size_t out, rn_dtype compute,
                          rn_dtype d);

/* The bound of one dot product y of m terms (m - n_products of them exact, e.g. a bias), given
   Y >= |y| and S >= sum of |terms| (binary64 upper bounds, [§5]); nonfinite: y is NaN or +-Inf
   (some input is) [§2-§4]. */
double lin_dot_bound(double Y, int nonfinite, double S, size_t m, size_t n_products,
                     rn_dtype compute, rn_dtype d);

#endif
