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

/* The backward bound a block of rows at a time (`check` by blocks of rows): the whole call above
   is these two, on the partition of rn_bound_block_rows (ref/norm_fast.h).
   _rows: the `rows` rows of one block (dy, x, bdx: the block's rows x n) in row order, their
   column terms added into one slot (cs: LN_BWD_BOUND_SUMS x n sums, cf: LN_BWD_BOUND_FLAGS x n
   non-finite flags, zeroed by the caller); 0 or RN_TWIN_NOMEM.
   _cols: the slots 1..nb (of a problem of `rows` rows, slot b + 1 = block b) added in block order
   into slot 0, and bdgamma, bdbeta (n) from the totals. */
enum { LN_BWD_BOUND_SUMS = 3, LN_BWD_BOUND_FLAGS = 2 };
int layernorm_backward_bound_rows(double *bdx, double *cs, unsigned char *cf, const double *dy,
                                  const double *x, const double *gamma, size_t rows, size_t n,
                                  double eps, rn_dtype compute, rn_dtype out);
void layernorm_backward_bound_cols(double *bdgamma, double *bdbeta, double *cs, unsigned char *cf,
                                   size_t nb, size_t rows, size_t n, rn_dtype compute,
                                   rn_dtype out);

#endif
