/* Per-element error bounds for skip + LayerNorm (derivation: specs/error-analysis-residual.md §7;
 * conventions of ref/layernorm_bound.h: bound on |got - want| with want the exact result rounded
 * to f64; +Inf where the analysis is void; 0 where the exact value is NaN or +-Inf).
 *
 * The implementations admitted: in format `compute`, form the sum by IEEE additions in any of the
 * orders (x + skip) + bias, (x + bias) + skip, x + (skip + bias), or round the exact sum once; then
 * any LayerNorm of specs/error-analysis.md §0 on that sum; round the outputs to `out`.
 * Shapes as in ref/skip_layernorm_mpfr.h; bias may be NULL.  Returns 0 or RN_TWIN_*. */
#ifndef RESNORM_SKIP_LAYERNORM_BOUND_H
#define RESNORM_SKIP_LAYERNORM_BOUND_H

#include <stddef.h>

#include "dtype.h"

int skip_layernorm_forward_bound(double *by, double *bmean, double *brstd, double *bsum,
                                 const double *x, const double *skip, const double *gamma,
                                 const double *beta, const double *bias, size_t rows, size_t n,
                                 double eps, rn_dtype compute, rn_dtype out);

#endif
