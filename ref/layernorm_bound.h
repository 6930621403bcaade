/* A-priori, per-element error bounds for LayerNorm (derivation: specs/error-analysis.md).
 *
 * A correct implementation that computes in format `compute` (unit roundoff u) and rounds its
 * outputs to format `out` returns values `got` with
 *     |got - exact| <= bound - |want - exact|   i.e.   |got - want| <= bound,
 * where `want` is the twin's exact result rounded to f64; the bound includes want's own half-ulp.
 * The bound is computed from the data (mean, variance, |x - mean|, |gamma|, ...), so a large-mean row
 * gets the large tolerance the analysis gives it and a well-conditioned row a tight one.
 * Where the analysis says nothing (the bound is not finite) the bound is +Inf; where the exact value
 * is NaN or +-Inf the bound is 0 and the checker demands the same class.
 * Shapes as in ref/layernorm_mpfr.h. Returns 0, or RN_TWIN_* from the twin it calls. */
#ifndef RESNORM_LAYERNORM_BOUND_H
#define RESNORM_LAYERNORM_BOUND_H

#include <stddef.h>

#include "dtype.h"

/* The precision a validated implementation computes in for a given output dtype: f64 -> f64,
   f32 -> f32, and f16/bf16 -> f32 (accumulate in f32, round the output, as PyTorch, ONNX Runtime
   and llm.c do). */
rn_dtype rn_compute_dtype(rn_dtype out);

int layernorm_forward_bound(double *by, double *bmean, double *brstd, const double *x,
                            const double *gamma, const double *beta, size_t rows, size_t n,
                            double eps, rn_dtype compute, rn_dtype out);

int layernorm_backward_bound(double *bdx, double *bdgamma, double *bdbeta, const double *dy,
                             const double *x, const double *gamma, size_t rows, size_t n,
                             double eps, rn_dtype compute, rn_dtype out);

#endif
