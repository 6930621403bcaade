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

#include <mpfr.h>

#include "dtype.h"

int skip_layernorm_forward_bound(double *by, double *bmean, double *brstd, double *bsum,
                                 const double *x, const double *skip, const double *gamma,
                                 const double *beta, const double *bias, size_t rows, size_t n,
                                 double eps, rn_dtype compute, rn_dtype out);

/* Backward (specs/error-analysis-residual.md §9): bounds for dx (= dskip), dbias, dgamma, dbeta of
 * an implementation that forms t as above, runs any LayerNorm backward of specs/error-analysis.md
 * on t, and sums its compute-format dx over rows, in any order, for dbias.  Shapes: bdx [rows*n];
 * bdbias, bdgamma, bdbeta [n]. */
int skip_layernorm_backward_bound(double *bdx, double *bdbias, double *bdgamma, double *bdbeta,
                                  const double *dy, const double *x, const double *skip,
                                  const double *gamma, const double *bias, size_t rows, size_t n,
                                  double eps, rn_dtype compute, rn_dtype out);

/* The pieces of the composition, shared with ref/skip_rmsnorm_bound.c (s: scratch from
   residual_exact_init).
   skip_sum_in: the sum t an admitted implementation forms in format c for order `order` (0:
     (x+k)+b, 1: (x+b)+k, 2: x+(k+b), 3: x+k+b rounded once); without a bias (b NULL), x + k.
   skip_sum_bound: the a-priori bound on |got - RN64(s)| of the sum output.
   skip_compose: the norm's bound b on data t (its want wc) plus the exact propagation |wc - w|;
     0 where w is not finite (the class is demanded), +Inf where wc or b is not finite. */
double skip_sum_in(mpfr_t s, double x, double k, const double *b, int order, rn_dtype c);
double skip_sum_bound(mpfr_t s, double x, double k, const double *b, rn_dtype compute,
                      rn_dtype out);
double skip_compose(double b, double wc, double w);
/* skip_sum_bound of every element [rows x n] with a finite exact sum ws[i] (0 elsewhere), in a
   malloc'ed array (NULL: out of memory); the same for every admitted order. */
double *skip_sum_bounds(mpfr_t s, const double *ws, const double *x, const double *skip,
                        const double *bias, size_t rows, size_t n, rn_dtype compute, rn_dtype out);
/* The bound on column j of dbias = sum_r dx_rj (specs/error-analysis-residual.md §9) from two
   column sums over the rows, sb_j = sum_r (bc_rj + 2^-53 |wc_rj|) and sa_j = sum_r (|wc_rj| +
   bc_rj), where bc, wc [rows*n] are the norm's backward bound for (compute, compute) and its want
   RN64(dx(t)) on the rounded sum t; wcb = RN64(sum_r dx_rj(t)), wb = RN64(sum_r dx_rj(s)) (the
   want).  skip_dbias_terms adds the terms of `rows` rows (bc, wc: those rows) into sb, sa [n] in
   row order; skip_dbias_sums forms sb, sa over every row as the check by blocks of rows does
   (cli/check.c, ref/skip_backward_bound.h): each block of the partition rn_bound_block_rows(rows)
   (ref/norm_fast.h) summed in row order, the blocks added in block order (0, or -1 out of
   memory), so that both give the same bits. */
void skip_dbias_terms(double *sb, double *sa, const double *bc, const double *wc, size_t rows,
                      size_t n);
int skip_dbias_sums(double *sb, double *sa, const double *bc, const double *wc, size_t rows,
                    size_t n);
double skip_dbias_bound(double sb, double sa, size_t rows, double wcb, double wb,
                        rn_dtype compute, rn_dtype out);

#endif
