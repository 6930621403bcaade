/* Per-element error bounds for skip + RMSNorm (derivation: specs/error-analysis-residual.md §8;
 * conventions of ref/rmsnorm_bound.h: bound on |got - want| with want the exact result rounded to
 * f64; +Inf where the analysis is void; 0 where the exact value is NaN or +-Inf).
 *
 * The implementations admitted: in format `compute`, form the sum by IEEE additions in any of the
 * orders (x + skip) + bias, (x + bias) + skip, x + (skip + bias), or round the exact sum once; then
 * any RMSNorm of specs/error-analysis-rmsnorm.md R§0 on that sum; round the outputs to `out`.
 * Shapes as in ref/skip_rmsnorm_mpfr.h; bias may be NULL.  Returns 0 or RN_TWIN_*. */
#ifndef RESNORM_SKIP_RMSNORM_BOUND_H
#define RESNORM_SKIP_RMSNORM_BOUND_H

#include <stddef.h>

#include "dtype.h"

int skip_rmsnorm_forward_bound(double *by, double *brstd, double *bsum, const double *x,
                               const double *skip, const double *gamma, const double *bias,
                               size_t rows, size_t n, double eps, int offset, rn_dtype compute,
                               rn_dtype out);

/* Backward (specs/error-analysis-residual.md §9): bounds for dx (= dskip), dbias and dgamma of an
 * implementation that forms t as above, runs any RMSNorm backward of R§0 on t, and sums its
 * compute-format dx over rows, in any order, for dbias.  Shapes: bdx [rows*n]; bdbias, bdgamma [n]. */
int skip_rmsnorm_backward_bound(double *bdx, double *bdbias, double *bdgamma, const double *dy,
                                const double *x, const double *skip, const double *gamma,
                                const double *bias, size_t rows, size_t n, double eps, int offset,
                                rn_dtype compute, rn_dtype out);

#endif
