/* A-priori, per-element error bounds for dropout with a given mask (derivation:
 * specs/error-analysis-dropout.md; conventions of ref/layernorm_bound.h).  A correct implementation
 * computing in `compute` (scale = 1/(1 - p) formed in compute from p given in compute or any wider
 * format, then one product per element), rounding its outputs to `out`, is within the bound of
 * want (the exact value rounded to f64).  NaN/Inf wants: bound 0 (same class demanded); overflow of
 * the compute or output format: +Inf (unconstrained).  Shapes [n].  Returns 0. */
#ifndef RESNORM_DROPOUT_BOUND_H
#define RESNORM_DROPOUT_BOUND_H

#include <stddef.h>

#include "dtype.h"

int dropout_bound(double *b, const double *a, const double *mask, double p, size_t n,
                  rn_dtype compute, rn_dtype out);

#endif
