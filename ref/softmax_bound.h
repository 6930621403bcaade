/* A-priori, per-element error bounds for softmax (last axis, optional additive mask) and its
 * backward (derivation: specs/error-analysis-softmax.md; conventions of ref/layernorm_bound.h).
 * A correct implementation computing in `compute` (max subtracted, libm exp within 1 ulp: the
 * stated assumption, §2), any summation order, rounding its outputs to `out`, is within the bound
 * of want (the exact value rounded to f64).  NaN rows and masked (-Inf) elements: bound 0; where the
 * analysis is void (overflow, a perturbation too large for §3's expansion): +Inf.
 * Shapes: [rows, n].  Returns 0 or RN_TWIN_NOMEM. */
#ifndef RESNORM_SOFTMAX_BOUND_H
#define RESNORM_SOFTMAX_BOUND_H

#include <stddef.h>

#include "dtype.h"

int softmax_forward_bound(double *b, const double *x, const double *mask, size_t rows, size_t n,
                          rn_dtype compute, rn_dtype out);
int softmax_backward_bound(double *b, const double *x, const double *mask, const double *dy,
                           size_t rows, size_t n, rn_dtype compute, rn_dtype out);

#endif
