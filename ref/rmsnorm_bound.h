/* A-priori, per-element error bounds for RMSNorm (derivation: specs/error-analysis-rmsnorm.md).
 *
 * Same contract as ref/layernorm_bound.h: a correct implementation that computes in format
 * `compute` (unit roundoff u) and rounds its outputs to format `out` returns values `got` with
 *     |got - want| <= bound,
 * where `want` is the twin's exact result rounded to f64 (ref/rmsnorm_mpfr.h); the bound includes
 * want's own half-ulp.  Use rn_compute_dtype(out) (ref/layernorm_bound.h) for `compute`: f16/bf16
 * outputs are taken to come from an f32-accumulating implementation.
 * Where the analysis says nothing (the sum of squares may overflow in the compute format, or
 * ms + eps may round to 0) the bound is +Inf; where the exact value is non-finite (or an exact zero
 * forced by an infinite input, see ref/rmsnorm_mpfr.c) the bound is 0 and the checker demands the
 * same value / class.
 * Shapes as in ref/rmsnorm_mpfr.h. Returns 0, or RN_TWIN_NOMEM. */
#ifndef RESNORM_RMSNORM_BOUND_H
#define RESNORM_RMSNORM_BOUND_H

#include <stddef.h>

#include "dtype.h"
#include "layernorm_bound.h" /* rn_compute_dtype */

int rmsnorm_forward_bound(double *by, double *brstd, const double *x, const double *gamma,
                          size_t rows, size_t n, double eps, int offset, rn_dtype compute,
                          rn_dtype out);

int rmsnorm_backward_bound(double *bdx, double *bdgamma, const double *dy, const double *x,
                           const double *gamma, size_t rows, size_t n, double eps, int offset,
                           rn_dtype compute, rn_dtype out);

/* The backward bound a block of rows at a time, as layernorm_backward_bound_rows / _cols
   (ref/layernorm_bound.h): one slot is RMS_BWD_BOUND_SUMS x n sums and RMS_BWD_BOUND_FLAGS x n
   flags. */
enum { RMS_BWD_BOUND_SUMS = 2, RMS_BWD_BOUND_FLAGS = 1 };
int rmsnorm_backward_bound_rows(double *bdx, double *cs, unsigned char *cf, const double *dy,
                                const double *x, const double *gamma, size_t rows, size_t n,
                                double eps, int offset, rn_dtype compute, rn_dtype out);
void rmsnorm_backward_bound_cols(double *bdgamma, double *cs, unsigned char *cf, size_t nb,
                                 size_t rows, size_t n, rn_dtype compute, rn_dtype out);

#endif
