/* A-priori, per-element error bounds for the residual add (derivation:
 * specs/error-analysis-residual.md; the conventions are those of ref/layernorm_bound.h).
 *
 * A correct implementation that adds in format `compute` (unit roundoff u) and rounds its outputs
 * to format `out` returns `got` with |got - want| <= bound, where want is the twin's exact result
 * rounded to f64 (the bound includes want's own rounding).  Where the exact value is NaN or +-Inf
 * the bound is 0 and the checker demands the same class; where the result overflows the compute or
 * the output format (a correct implementation returns +-Inf while want is finite) the analysis says
 * nothing and the bound is +Inf (unconstrained, reported by `resnorm check`).
 * Shapes: every array [n].  Returns 0. */
#ifndef RESNORM_RESIDUAL_BOUND_H
#define RESNORM_RESIDUAL_BOUND_H

#include <stddef.h>

#include "dtype.h"

int residual_forward_bound(double *by, const double *x, const double *f, size_t n,
                           rn_dtype compute, rn_dtype out);
/* dx = df = dy (from zero): exact in the compute format, one output rounding. */
int residual_backward_bound(double *bdx, double *bdf, const double *dy, size_t n,
                            rn_dtype compute, rn_dtype out);

#endif
