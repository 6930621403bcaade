/* Fast paths of the MPFR twins: double-double with a rigorous error bound (ref/fast_dd.h), each
 * output emitted only when its whole enclosure rounds to one value of the output format; a row
 * where some output is not certified is left to the twin, which decides.  The twins' entry points
 * (layernorm_forward_mpfr, rmsnorm_forward_mpfr, residual_forward_mpfr, ...) call these first, so
 * every caller (eval, check, golden) gets them; their results are bit-identical to the twins' by
 * construction (both are the correctly rounded exact value).  Derivation: specs/fast-path.md.
 *
 * Row functions return 1 when every output of the row was certified (and written), 0 otherwise
 * (the row's outputs are then unspecified and the caller runs the twin on it). */
#ifndef RESNORM_NORM_FAST_H
#define RESNORM_NORM_FAST_H

#include <stddef.h>

#include "dtype.h"

/* Whether the twins try the fast path first: on by default; RESNORM_FASTPATH=0 in the environment
   or rn_fast_set_enabled(0) turns it off (the twins alone then compute everything). */
int rn_fast_enabled(void);
void rn_fast_set_enabled(int on);

/* Counters since the start (or the last reset), summed over threads: rows tried by a fast path,
   rows handed to the twin, and the same in elements (outputs of those rows). */
typedef struct {
    unsigned long long rows, fallback_rows, elems, fallback_elems;
} rn_fast_stats;
void rn_fast_stats_get(rn_fast_stats *s);
void rn_fast_stats_reset(void);
void rn_fast_stats_add(size_t rows, size_t fallback_rows, size_t elems_per_row);

/* Threads the fast paths may use (OpenMP); 0: OpenMP's default.  RESNORM_THREADS sets it too. */
void rn_set_threads(int n);
int rn_threads(void);
/* The threads for a parallel loop over `work` elements: 1 below RN_PAR_MIN_WORK (a team costs more
   than it saves on small problems, and idle OpenMP threads spin-wait between regions, which
   doubled the CPU time of `golden run-check` on a loaded machine), else rn_threads().  Every
   parallel loop's result is independent of the thread count. */
#define RN_PAR_MIN_WORK ((size_t)1 << 16)
int rn_threads_for(size_t work);

/* Between these two calls this thread remembers the LayerNorm moments of the rows within
   x[0..count) that it sums, so that the bound's statistics (layernorm_row_bound_stats_fast) of a
   row the twin just computed reuse them: `check` brackets a block's twin and bound with them
   (x: the block's input x; NULL: nothing remembered).  The caller must not change x[0..count) in
   between.  The results are the same bits with or without. */
void rn_fast_memo_begin(const double *x, size_t count);
void rn_fast_memo_end(void);

/* LayerNorm forward, one row of n: y [n], *mean, *rstd. */
int layernorm_row_forward_fast(double *y, double *mean, double *rstd, const double *x,
                               const double *gamma, const double *beta, size_t n, double eps,
                               rn_dtype out);

/* All rows in parallel; ok[k] = 1 where row k was certified.  Returns the number of rows left. */
size_t layernorm_forward_fast(double *y, double *mean, double *rstd, const double *x,
                              const double *gamma, const double *beta, size_t rows, size_t n,
                              double eps, rn_dtype out, unsigned char *ok);

/* LayerNorm backward, all rows (dx [rows*n], dgamma and dbeta [n], summed over the rows): 1 when
   every output was certified and written; 0: nothing to rely on, the caller runs the twin;
   2 (only when row_ok is not NULL): dgamma, dbeta and every row r with row_ok[r] = 1 certified
   and written, the dx of the rows with row_ok[r] = 0 left to the caller (a value of one such row
   could not be certified, but every row's terms of the sums were formed: the caller runs the twin
   on those rows alone).  The counters count one "row" per call here (fell back or not), elements
   rows*n + 2n. */
int layernorm_backward_fast(double *dx, double *dgamma, double *dbeta, const double *dy,
                            const double *x, const double *gamma, size_t rows, size_t n,
                            double eps, rn_dtype out, unsigned char *row_ok);

/* The backward a block of rows at a time (issue 12: `eval` streams the backward ops; the all-rows
   calls above are the same code on one block per thread).  A norm_cols holds, for each of
   `threads` threads, the column accumulators of the sums over rows -- ncols arrays of n: LayerNorm
   dgamma, dbeta (, dbias with skip), RMSNorm dgamma (, dbias) -- and the row scratch.  Thread t
   (0 <= t < threads; one caller per t at a time) runs *_backward_rows_fast on its blocks: dx of
   each row certified and written, the row's terms added to its columns; 0 if some output of the
   block was not certified (its dx rows are then unspecified and the columns incomplete: the
   caller runs the twin); with row_ok (not NULL), 2 when only some rows' dx were not certified
   (row_ok[r] = 0; every row's terms are in the columns, dbias's from the enclosures of those dx:
   the caller runs the twin on those rows for dx alone).  norm_cols_merge then adds the threads' columns together (once; 0 if more
   than 2^30 rows were added, beyond the accumulators' error bound), and norm_cols_value certifies
   column k's element j: 1 and *v its correctly rounded value, or 0 (not certified: a tie, an
   exact zero, an enclosure too wide).  Each certified value is the exact sum rounded once, so it
   does not depend on the blocks, the threads or the order of the merge. */
typedef struct norm_cols norm_cols;
norm_cols *norm_cols_new(int ncols, int skip, size_t n, int threads);
void norm_cols_free(norm_cols *c);
int norm_cols_merge(norm_cols *c);
int norm_cols_value(norm_cols *c, int k, size_t j, rn_dtype out, double *v);
/* Exact sums of k columns of doubles (MPFR, 2200 bits: any sum of up to 2^100 doubles, whose bits
   span 2^-1074 .. 2^1024 plus carries), each rounded once, an exact zero as +0 (the twins' rule):
   LayerNorm's dbeta = sum_r dy_rj where the accumulators leave it undecided.  NULL: no memory. */
typedef struct exact_cols exact_cols;
exact_cols *exact_cols_new(size_t k);
void exact_cols_add(exact_cols *c, size_t t, double v);
double exact_cols_round(exact_cols *c, size_t t, rn_dtype out);
void exact_cols_free(exact_cols *c);
int layernorm_backward_rows_fast(norm_cols *c, int t, double *dx, const double *dy,
                                 const double *x, const double *skip, const double *bias,
                                 const double *gamma, size_t rows, size_t n, double eps,
                                 rn_dtype out, unsigned char *row_ok);
int rmsnorm_backward_rows_fast(norm_cols *c, int t, double *dx, const double *dy, const double *x,
                               const double *skip, const double *bias, const double *gamma,
                               size_t rows, size_t n, double eps, int offset, rn_dtype out,
                               unsigned char *row_ok);

/* The rows r with ok[r] = 0 of a rows x n array: copied one after the other into dst (gather), or
   from src back into their places (scatter) -- the rows a backward fast path left (row_ok), for
   its twin on those rows alone. */
static inline void rows_left_gather(double *dst, const double *src, const unsigned char *ok,
                                    size_t rows, size_t n)
{
    for (size_t r = 0; r < rows; r++)
        if (!ok[r])
            for (size_t i = 0; i < n; i++)
                *dst++ = src[r * n + i];
}

static inline void rows_left_scatter(double *dst, const double *src, const unsigned char *ok,
                                     size_t rows, size_t n)
{
    for (size_t r = 0; r < rows; r++)
        if (!ok[r])
            for (size_t i = 0; i < n; i++)
                dst[r * n + i] = *src++;
}

/* The backward bounds' partition of the rows (ref/layernorm_bound.c, ref/rmsnorm_bound.c): blocks
   of at least 16 rows, at most 64 blocks (their column slots are 64 x 3n doubles), a function of
   rows alone, so that the bounds do not depend on the threads. */
static inline size_t rn_bound_block_rows(size_t rows)
{
    size_t b = (rows + 63) / 64;
    return b > 16 ? b : 16;
}

/* Slots 1..nb of the blocks' column sums (ns doubles each) and non-finite flags (nf bytes each)
   added into slot 0, in block order. */
static inline void rn_bound_slots_add(double *cs, size_t ns, unsigned char *cf, size_t nf,
                                      size_t nb)
{
    for (size_t b = 1; b <= nb; b++) {
        for (size_t i = 0; i < ns; i++)
            cs[i] += cs[b * ns + i];
        for (size_t i = 0; i < nf; i++)
            cf[i] |= cf[b * nf + i];
    }
}

/* RMSNorm forward (offset 0: w = gamma, 1: w = 1 + gamma), one row: y [n], *rstd; and all rows. */
int rmsnorm_row_forward_fast(double *y, double *rstd, const double *x, const double *gamma,
                             size_t n, double eps, int offset, rn_dtype out);
size_t rmsnorm_forward_fast(double *y, double *rstd, const double *x, const double *gamma,
                            size_t rows, size_t n, double eps, int offset, rn_dtype out,
                            unsigned char *ok);
/* RMSNorm backward, all rows, as layernorm_backward_fast (0, 1, or 2 with row_ok): dx, dgamma. */
int rmsnorm_backward_fast(double *dx, double *dgamma, const double *dy, const double *x,
                          const double *gamma, size_t rows, size_t n, double eps, int offset,
                          rn_dtype out, unsigned char *row_ok);

/* skip_layernorm / skip_rmsnorm forward, one row (bias may be NULL): the norm of the exact sum
   x + skip (+ bias), and `sum`, that sum rounded once; ws: scratch of 3n doubles. */
int skip_layernorm_row_forward_fast(double *y, double *mean, double *rstd, double *sum,
                                    const double *x, const double *skip, const double *gamma,
                                    const double *beta, const double *bias, size_t n, double eps,
                                    rn_dtype out, double *ws);
int skip_rmsnorm_row_forward_fast(double *y, double *rstd, double *sum, const double *x,
                                  const double *skip, const double *gamma, const double *bias,
                                  size_t n, double eps, int offset, rn_dtype out, double *ws);
/* skip_layernorm / skip_rmsnorm backward, all rows, all or nothing (as layernorm_backward_fast;
   specs/fast-path.md §5.9, §6.6): the norm's backward at the exact sums v = x + skip (+ bias;
   bias may be NULL): dx [rows*n] (dskip is the same values: the caller copies it), dbias [n] =
   sum_r dx_rj (written whether or not bias is given), dgamma [n], and dbeta [n] (LayerNorm).
   The counters count one "row" per call, elements rows*n + 3n (LayerNorm) or rows*n + 2n. */
int skip_layernorm_backward_fast(double *dx, double *dbias, double *dgamma, double *dbeta,
                                 const double *dy, const double *x, const double *skip,
                                 const double *gamma, const double *bias, size_t rows, size_t n,
                                 double eps, rn_dtype out);
int skip_rmsnorm_backward_fast(double *dx, double *dbias, double *dgamma, const double *dy,
                               const double *x, const double *skip, const double *gamma,
                               const double *bias, size_t rows, size_t n, double eps, int offset,
                               rn_dtype out);
/* All rows in parallel; ok[k] = 1 where row k was certified; returns the rows left. */
size_t skip_layernorm_forward_fast(double *y, double *mean, double *rstd, double *sum,
                                   const double *x, const double *skip, const double *gamma,
                                   const double *beta, const double *bias, size_t rows, size_t n,
                                   double eps, rn_dtype out, unsigned char *ok);
size_t skip_rmsnorm_forward_fast(double *y, double *rstd, double *sum, const double *x,
                                 const double *skip, const double *gamma, const double *bias,
                                 size_t rows, size_t n, double eps, int offset, rn_dtype out,
                                 unsigned char *ok);

/* The row statistics of the a-priori bounds, certified (specs/fast-path.md §10); 0: not
   certified, the bound runs its MPFR path on the row.  LayerNorm (ref/layernorm_bound.c): mean,
   var, d [n] = x - mean rounded to nearest, and upper bounds >= the round-up of mean|x| and of
   mean|x - mean|; the elements of d it cannot certify (x_i - mean exactly a midpoint of binary64,
   frequent when n is a power of two and the mean has a few bits more than x_i: §10.3) are listed
   in undecided[0..*nund) (room for n) and left to the caller, the rest is certified.  RMSNorm
   (ref/rmsnorm_bound.c): ms = mean(x^2) and 1 / sqrt(ms + eps). */
int layernorm_row_bound_stats_fast(double *mean, double *var, double *absmean_up,
                                   double *devmean_up, double *d, size_t *undecided, size_t *nund,
                                   const double *x, size_t n);
int rmsnorm_row_bound_stats_fast(double *ms, double *r, const double *x, size_t n, double eps);
/* RMSNorm's backward bound, per row, g = dy w: c = mean(g x) rounded to nearest, and the upper
   statistics (fast-path.md §10.2) of mean|g x| and mean|g|. */
int rmsnorm_row_bwd_bound_sums_fast(double *c, double *C_up, double *G_up, const double *dy,
                                    const double *w, const double *x, size_t n);

/* Residual add, element by element (exact: nothing but NaN/Inf and binary64 overflow falls back);
   ok[i] = 1 where element i was written. */
size_t residual_forward_fast(double *y, const double *x, const double *f, size_t n, rn_dtype out,
                             unsigned char *ok);
size_t residual_backward_fast(double *dx, double *df, const double *dy, size_t n, rn_dtype out,
                              unsigned char *ok);

#endif
