/* The skip ops' backward bound a block of rows at a time (`check skip_layernorm_backward` and
 * `check skip_rmsnorm_backward` by blocks of rows, cli/check.c): skip_layernorm_backward_bound and
 * skip_rmsnorm_backward_bound (ref/skip_layernorm_bound.h, ref/skip_rmsnorm_bound.h;
 * specs/error-analysis-residual.md §9), the same bits, with memory for a few rows per thread
 * rather than the tensor.
 *
 * Those bounds take, for each sum t_c an admitted implementation may form (order c: one without a
 * bias, four with one), the norm's backward bound on t_c composed with the exact propagation
 * |RN64(dx(t_c)) - RN64(dx(s))|, the maximum over c.  Per row that is local: t_c, the norm's
 * bound (layernorm_ / rmsnorm_backward_bound_rows) and the twin's dx on t_c.  The columns (dgamma,
 * dbeta, dbias) sum over every row, so three things are kept across the blocks for each c: the
 * norm bound's column terms, each block of the partition rn_bound_block_rows(rows)
 * (ref/norm_fast.h) summed in row order and the blocks added in block order, as the whole-tensor
 * bound sums them; dbias's two column sums (skip_dbias_terms), likewise; and the twin on t_c's
 * column sums (dgamma(t_c), dbias(t_c)), in the fast path's certified accumulators (norm_cols),
 * certified after the last block.  The blocks may run in any order on any thread: a block's
 * terms wait in a slot of its own until the blocks before it are in.
 *
 * What the blocks cannot give, the whole-tensor bound decides (SKIP_BWD_WHOLE): a block the fast
 * path declines on some t_c (a rounded sum that overflows, a NaN, an Inf), or a column of the twin
 * on t_c left uncertified.  A row whose dx(t_c) alone is not certified gets it from the twin on
 * that row (skip_*_backward_mpfr on t_c with skip 0: the whole bound's own call, on fewer rows). */
#ifndef RESNORM_SKIP_BACKWARD_BOUND_H
#define RESNORM_SKIP_BACKWARD_BOUND_H

#include <stddef.h>

#include "dtype.h"

/* Returned by skip_bwd_bound_rows / _cols: the whole-tensor bound must decide (see above). */
#define SKIP_BWD_WHOLE 100

typedef struct skip_bwd_bound skip_bwd_bound;

/* The state of one problem: rms (RMSNorm, else LayerNorm), a bias given or not, rows x n (blocks
   of rn_bound_block_rows(rows) rows), `threads` threads (0 .. threads - 1, one caller per thread
   at a time), the output dtypes need[d] != 0 whose bounds are wanted (each d a value of rn_dtype,
   RN_NDTYPES flags), eps, offset (RMSNorm), compute: the implementation's compute dtype.  NULL:
   out of memory, or n beyond the accumulators' reach (norm_cols_new). */
skip_bwd_bound *skip_bwd_bound_new(int rms, int has_bias, size_t rows, size_t n, int threads,
                                   const int *need, double eps, int offset, rn_dtype compute);
void skip_bwd_bound_free(skip_bwd_bound *S);

/* Block b of the partition (rows b*B .. b*B + nr, B = rn_bound_block_rows(rows)) on thread t:
   dy, x, skip [nr*n] its rows, gamma, bias [n] (bias NULL without one), w [nr*n] the twin's dx
   on the exact sums rounded to f64; bdx[d] [nr*n] dx's bound for each needed dtype d (dskip's is
   the same).  0, RN_TWIN_NOMEM, or SKIP_BWD_WHOLE. */
int skip_bwd_bound_rows(skip_bwd_bound *S, int t, size_t b, double *const *bdx, const double *w,
                        const double *dy, const double *x, const double *skip,
                        const double *gamma, const double *bias, size_t nr);

/* After every block: the column bounds for output dtype `out` (needed): bdbias, bdgamma [n], and
   bdbeta [n] (LayerNorm; NULL for RMSNorm), given the twin's exact sums on s rounded to f64: wb
   (dbias), wg (dgamma), wbe (dbeta; NULL for RMSNorm).  Once per dtype.  0, RN_TWIN_NOMEM, or
   SKIP_BWD_WHOLE. */
int skip_bwd_bound_cols(skip_bwd_bound *S, rn_dtype out, double *bdbias, double *bdgamma,
                        double *bdbeta, const double *wb, const double *wg, const double *wbe);

#endif
