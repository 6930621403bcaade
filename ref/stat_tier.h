/* The statistical tier of the checker: tests for errors that are systematic rather than rounding
 * noise (a scale of 1 - 1/(2n) on every row, eps outside the sqrt, a bias of one sign across a
 * tensor, a 12-bit rsqrt, an intermediate rounded to bf16), which no worst-case bound can separate
 * from rounding at large n.  Model, assumptions, false-alarm probability and limits:
 * specs/statistical-tier.md (cited below by section, [§3]).
 *
 * Shape of the computation.  For one output, the elements are grouped (a row of y or dx; one
 * element of the per-row mean or rstd; the whole dgamma vector).  In each group a test direction z
 * is projected on the signed errors e = got - want:  t = <z, e>,  Q = <z, z>.  Under the model of a
 * correct implementation [§2] t is a systematic part bounded by a floor phi plus a sub-Gaussian
 * part of proxy pi (both derived from the data, [§3]).  Three statistics per (output, direction),
 * each at false-alarm probability alpha [§4]:
 *   pooled  the inverse-variance weighted mean of the per-group slopes t/Q (one sign, every row);
 *   row     the largest per-group z-score (one row far off), Bonferroni over the groups;
 *   energy  the sum of squared per-group z-scores (every row off by a random sign), Chernoff.
 * Pure C, no dependency: the caller gives the inputs and the exact values rounded to f64. */
#ifndef RESNORM_STAT_TIER_H
#define RESNORM_STAT_TIER_H

#include <stddef.h>

/* The false-alarm probability of each statistic [§4]. */
#define ST_ALPHA 1e-10

/* One (output, direction) test. */
typedef struct {
    const char *direction;   /* "scale" (z = the output), "hbar" (z = rstd*xhat), "bias" (z = 1) */
    size_t groups;           /* groups that carried information (Q > 0, finite) */
    double slope;            /* pooled estimate of the systematic relative error (absolute for bias) */
    double slope_u;          /* the same in units of the compute unit roundoff u */
    double floor;            /* the systematic part a correct implementation may have (same units as slope) */
    double floor_u;          /* the same in units of u */
    double z_pooled, lambda_pooled; /* (|pooled| - floor) / its noise proxy, and the threshold */
    double z_row, lambda_row;       /* the largest per-group z-score and its threshold */
    size_t worst_group;             /* where (group index: the row, or the element) */
    double energy, energy_limit;    /* sum of squared per-group z-scores, and its threshold */
    int flag;                /* 1: some statistic beyond its threshold */
} st_test;

/* The per-row hashes and statistics of one problem, computed once and shared by the tests of
   all its outputs (st_rows_new(rows); NULL in st_problem.cache: computed on demand, as before).
   Valid for one problem only: the same x, n, rows, eps, u, eta, sum_rounded and xmag.  A
   problem given block by block indexes it by the problem's rows (st_problem.row0 + r): one cache
   for every block, the statistics the per-row tests computed kept for the column tests' pass. */
typedef struct st_rows st_rows;
st_rows *st_rows_new(size_t rows);
void st_rows_free(st_rows *c);

/* One op instance as the statistical tier sees it.  Arrays are rows x n row-major (the row view of
   the op, cli/cli.h), gamma/beta/bias of length n; values exactly as the implementation received
   them (skip ops: x is the exact sum x + skip (+ bias) rounded to f64, and sum_rounded = 1: the
   implementation normalizes that sum rounded to its compute dtype). */
typedef struct {
    size_t rows, n;
    const double *x, *gamma, *beta, *dy; /* NULL when the op has none */
    double eps;
    int offset;              /* RMSNorm: 1 = Gemma's 1 + gamma */
    int sum_rounded;
    const double *xmag;      /* sum_rounded: |x| + |skip| + |bias| per element (bounds the sum's rounding) */
    double u;                /* unit roundoff of the compute dtype */
    double u_out;            /* unit roundoff of the output dtype if it differs from the compute dtype, else 0 */
    double eta_out;          /* half the smallest subnormal of the output dtype */
    double eta;              /* half the smallest subnormal of the compute dtype */
    st_rows *cache;          /* optional (see st_rows_new); the per-row work runs on rn_threads() */
    size_t rows_total;       /* a block of rows of a larger problem (st_fwd_rows): its rows; 0: rows */
    size_t row0;             /* and the block's first row: row r is row row0 + r of the cache */
    const double *want_dx;   /* the skip ops' dbias test (st_cols): dx's exact values of the rows */
} st_problem;

/* The outputs the tier knows how to test.  got/want: the implementation's values and the exact
   ones rounded to f64, of the output's size (NULL: output not given).  Each function fills up to
   ST_MAX_TESTS tests per output and returns how many (0: nothing testable). */
#define ST_MAX_TESTS 2

/* LayerNorm forward: y (rows x n), mean, rstd (rows). */
int st_layernorm_y(const st_problem *p, const double *got, const double *want, st_test *t);
int st_layernorm_mean(const st_problem *p, const double *got, const double *want, st_test *t);
int st_layernorm_rstd(const st_problem *p, const double *got, const double *want, st_test *t);
/* LayerNorm backward: dx (rows x n), dgamma, dbeta (n). */
int st_layernorm_dx(const st_problem *p, const double *got, const double *want, st_test *t);
int st_layernorm_dgamma(const st_problem *p, const double *got, const double *want, st_test *t);
int st_colsum_dy(const st_problem *p, const double *got, const double *want, st_test *t); /* dbeta */
/* The skip ops' dbias = sum_rows dx; want_dx: dx's exact values (rows x n). */
int st_layernorm_dbias(const st_problem *p, const double *want_dx, const double *got,
                       const double *want, st_test *t);
int st_rmsnorm_dbias(const st_problem *p, const double *want_dx, const double *got,
                     const double *want, st_test *t);
/* The per-row outputs' tests with the rows given block by block (streaming: memory for one block
   of the outputs, plus a few words per row).  st_fwd_new(kind, rows) for a problem of `rows` rows;
   st_fwd_rows for each block in any order: p describes the block (x, dy, xmag and rows of the
   block, rows_total = the problem's rows, row0 = r0, cache NULL or the problem's), r0 its first
   row, got/want the block's values of
   the output (rows x n for y and dx, rows for mean and rstd); st_fwd_finish pools the rows in row
   order into t[0] (dx: t[0] "scale" and t[1] "hbar") and returns how many tests it filled.  The
   tests are those of st_layernorm_y, _mean, _rstd, _dx, st_rmsnorm_y, _rstd, _dx, bit for bit,
   whatever the blocks (those functions are this, on one block); ST_SUM is st_skip_sum.  0 on
   failure (memory). */
typedef enum {
    ST_LN_Y, ST_LN_MEAN, ST_LN_RSTD, ST_RMS_Y, ST_RMS_RSTD, ST_SUM, ST_LN_DX, ST_RMS_DX
} st_fwd_kind;
typedef struct st_fwd st_fwd;
st_fwd *st_fwd_new(st_fwd_kind kind, size_t rows);
int st_fwd_rows(st_fwd *f, const st_problem *p, size_t r0, const double *got, const double *want);
int st_fwd_finish(const st_fwd *f, double u, st_test *t);
void st_fwd_free(st_fwd *f);

/* The column outputs' tests (sums over rows: dgamma, dbeta, the skip ops' dbias) with the rows
   given block by block.  Their groups need the whole column's exact values (want, n), known only
   after every row, so the rows come in a pass of their own: st_cols_new(kind, rows, got, want, n)
   once got and want (n values each; want is copied, got must outlive the test) are known;
   st_cols_rows for each block in row order (p as for st_fwd_rows, and for dbias p->want_dx the
   block's exact dx; the rows' sums are kept in row order, so the blocks must come in order);
   st_cols_finish into t[0].  st_layernorm_dgamma, st_rmsnorm_dgamma, st_colsum_dy,
   st_layernorm_dbias and st_rmsnorm_dbias are this on one block.  NULL / 0 on failure (memory). */
typedef enum { ST_LN_DGAMMA, ST_RMS_DGAMMA, ST_DBETA, ST_LN_DBIAS, ST_RMS_DBIAS } st_col_kind;
typedef struct st_cols st_cols;
st_cols *st_cols_new(st_col_kind kind, size_t rows, const double *got, const double *want,
                     size_t n);
int st_cols_rows(st_cols *c, const st_problem *p, size_t r0);
int st_cols_finish(st_cols *c, const st_problem *p, st_test *t);
void st_cols_free(st_cols *c);

/* RMSNorm forward: y, rstd; backward: dx, dgamma. */
int st_rmsnorm_y(const st_problem *p, const double *got, const double *want, st_test *t);
int st_rmsnorm_rstd(const st_problem *p, const double *got, const double *want, st_test *t);
int st_rmsnorm_dx(const st_problem *p, const double *got, const double *want, st_test *t);
int st_rmsnorm_dgamma(const st_problem *p, const double *got, const double *want, st_test *t);
/* An output computed element by element from its inputs (the residual add, the skip ops' sum):
   each element its own group, direction the output.  `ops` roundings per element (1 for x + f,
   2 for x + skip + bias, 0 for a copy), each at most u*mag[i] (mag NULL: |want|; the skip sum:
   |x| + |skip| + |bias|, which bounds every partial sum in any order). */
int st_elementwise(const st_problem *p, const double *got, const double *want, size_t count,
                   const double *mag, double ops, st_test *t);
/* The skip ops' sum (rows x n): st_elementwise's test with ops = 2 and mag = p->xmag, each row's
   elements pooled first and the rows then merged in row order, so that a problem given block by
   block (st_fwd, ST_SUM) gets the same bits. */
int st_skip_sum(const st_problem *p, const double *got, const double *want, st_test *t);

/* Per-element scales [§3.5]: the tier's model of a correct LayerNorm as a proxy-plus-floor per
   element, for an evaluator that propagates errors element by element (the block's statistical
   tier, ref/block_bound.c; specs/error-analysis-block.md §5) instead of regressing them.  Each
   element's scale is the sum over the row-shared errors of |direction|*(proxy + floor) (summed:
   they share their sources) plus its own-noise bound.  p as for the tests (rows, n, x, gamma,
   beta, dy, eps, u, u_out, eta, eta_out; cache NULL); want / want_dx: the exact y / dx (rows x n).
   sy, sdx: rows x n; sdg, sdb: n (dgamma's and dbeta's column sums over the rows).  An element of
   a row outside the model's range [§5] gets +Inf (the caller keeps its worst case there).
   0, or -1 when out of memory. */
int st_layernorm_y_scales(const st_problem *p, const double *want, double *sy);
int st_layernorm_bwd_scales(const st_problem *p, const double *want_dx, double *sdx, double *sdg,
                            double *sdb);

#endif
