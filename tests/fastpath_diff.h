/* Differential test of the fast paths (ref/<family>_fast.c) against the MPFR twins alone, shared by
 * tests/test_fastpath.c (make unit, ~3e5 elements) and tests/soak_fastpath.c (make fastpath-soak,
 * >= 1e7 elements).
 *
 * Each batch draws a family, a scenario (random, large means, subnormal and huge scales, constant
 * rows, ties of the mean, near-ties of y by a tuned beta, signed zeros, tiny rows), input and
 * output dtypes and eps (including 0); runs the twin's public entry points (forward, then backward
 * for every family but the residual's add, where dy is the f of the batch or, for the skip ops,
 * an array of its own) with the fast path on
 * and with it off (RESNORM_FASTPATH semantics, rn_fast_set_enabled), and demands bit-identical
 * outputs.  The twin alone is the reference: certified by MPFR (ref/exact_mpfr.h), it never reads
 * the fast path.  The fast path's fallback counters (rn_fast_stats) say how much it certified. */
#ifndef RESNORM_FASTPATH_DIFF_H
#define RESNORM_FASTPATH_DIFF_H

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bound_profile.h"
#include "dtype.h"
#include "layernorm_bound.h"
#include "layernorm_mpfr.h"
#include "norm_fast.h"
#include "residual_mpfr.h"
#include "rmsnorm_bound.h"
#include "rmsnorm_mpfr.h"
#include "skip_layernorm_mpfr.h"
#include "skip_rmsnorm_mpfr.h"

enum { FD_FAM_LAYERNORM, FD_FAM_RMSNORM, FD_FAM_RESIDUAL, FD_FAM_SKIP_LN, FD_FAM_SKIP_RMS, FD_NFAM };
static const char *const fd_fam_name[FD_NFAM] = {"layernorm", "rmsnorm", "residual",
                                                 "skip_layernorm", "skip_rmsnorm"};

typedef struct {
    unsigned long long elems, mismatches, twin_errors;
    rn_fast_stats fast;
    rn_fast_stats scen[16]; /* the same per scenario */
    rn_fast_stats bwd;      /* the backward calls alone (LayerNorm, RMSNorm, skip ops) */
    rn_fast_stats bwd_scen[16];
} fd_diff_stats;

/* Output arrays per batch: skip_layernorm's forward (4) and backward (5) at most. */
enum { FD_NOUT = 9 };

/* ---- deterministic random numbers ---- */
typedef struct {
    uint64_t s;
} fd_rng;

static inline uint64_t fd_next(fd_rng *r)
{
    uint64_t z = (r->s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static inline double fd_unif(fd_rng *r) { return (double)(fd_next(r) >> 11) * 0x1p-53; }
static inline int fd_pick(fd_rng *r, int k) { return (int)(fd_next(r) % (uint64_t)k); }

static inline double fd_randn(fd_rng *r)
{
    double s = 0;
    for (int i = 0; i < 12; i++)
        s += fd_unif(r);
    return s - 6.0;
}

static inline int fd_same(const double *a, const double *b, size_t n)
{
    return memcmp(a, b, n * sizeof *a) == 0;
}

/* A midpoint of format d near v (between two consecutive values of d), as a double. */
static inline double fd_midpoint_near(double v, rn_dtype d)
{
    double r = rn_round(v, d);
    if (!isfinite(r))
        r = v > 0 ? rn_dtype_max(d) : -rn_dtype_max(d);
    return r + 0.5 * rn_ulp(r, d) * (r >= 0 ? 1 : -1);
}

typedef struct {
    rn_dtype in, out;
    double eps;
    size_t rows, n;
    int scenario, offset, with_bias;
    double *x, *g, *b, *f, *bias; /* f: residual's f, skip ops' skip, backward's dy */
    double *dy;                   /* the skip ops' backward dy */
} fd_batch;

enum {
    SC_RANDN, SC_LARGE_MEAN, SC_TINY, SC_HUGE, SC_CONST, SC_MEAN_TIE, SC_NEAR_TIE_Y, SC_ZEROS,
    SC_SMALL_N, SC_NSCEN
};
static const char *const fd_scen_name[SC_NSCEN] = {
    "randn", "large_mean", "tiny", "huge", "const_rows", "mean_tie", "near_tie_y", "signed_zeros",
    "small_n"};

/* Draws one batch's shape, dtypes, eps and inputs (x, gamma, beta, f rounded to the input dtype). */
static void fd_draw(fd_rng *r, fd_batch *B, int fam, size_t max_elems)
{
    static const rn_dtype dts[4] = {RN_F64, RN_F32, RN_F16, RN_BF16};
    static const size_t ns[] = {1, 2, 3, 5, 8, 17, 64, 127, 768, 1024};
    B->in = dts[fd_pick(r, 4)];
    B->out = dts[fd_pick(r, 4)];
    B->scenario = fd_pick(r, SC_NSCEN);
    B->offset = fd_pick(r, 2);
    B->with_bias = fd_pick(r, 2);
    B->n = B->scenario == SC_SMALL_N ? ns[fd_pick(r, 4)] : ns[fd_pick(r, 10)];
    if (B->scenario == SC_MEAN_TIE && B->n < 2)
        B->n = 2;
    B->rows = 1 + (size_t)fd_pick(r, 8);
    while (B->rows > 1 && B->rows * B->n > max_elems)
        B->rows /= 2;
    static const char *const eps_text[] = {"1e-5", "0", "0.1", "1e-12", "1e-5"};
    if (rn_parse_eps(eps_text[fd_pick(r, 5)], B->in, &B->eps) != 0)
        B->eps = 0;
    if (fam == FD_FAM_RMSNORM && B->scenario == SC_CONST && fd_pick(r, 2))
        B->eps = 0; /* constant rows with eps = 0: y = sign(c) w exactly */
    size_t N = B->rows * B->n, n = B->n;
    double shift = 0, scale = 1;
    switch (B->scenario) {
    case SC_LARGE_MEAN: {
        static const double sh[] = {100.0, 4e4, 1e6, 1e12};
        shift = sh[fd_pick(r, B->in == RN_F64 ? 4 : 3)];
        scale = 0.01;
        break;
    }
    case SC_TINY: {
        static const double sc[4] = {1e-300, 1e-40, 1e-6, 1e-40};
        scale = sc[B->in];
        if (B->in == RN_F64 && fd_pick(r, 2))
            scale = 1e-160;
        break;
    }
    case SC_HUGE: {
        static const double sc[4] = {1e200, 1e30, 3e3, 1e30};
        scale = sc[B->in];
        break;
    }
    default:
        break;
    }
    for (size_t i = 0; i < N; i++) {
        B->x[i] = rn_round(shift + scale * fd_randn(r), B->in);
        B->f[i] = rn_round(scale * fd_randn(r), B->in);
    }
    int rms = fam == FD_FAM_RMSNORM || fam == FD_FAM_SKIP_RMS;
    for (size_t j = 0; j < n; j++) {
        B->g[j] = rn_round((rms ? 0.0 : 1.0) + 0.1 * fd_randn(r), B->in);
        B->b[j] = rn_round(0.1 * fd_randn(r), B->in);
        B->bias[j] = rn_round(scale * 0.1 * fd_randn(r), B->in);
    }
    switch (B->scenario) {
    case SC_CONST: /* zero variance; beta (and f) at midpoints of the output dtype: exact ties */
        for (size_t k = 0; k < B->rows; k++) {
            double c = rn_round(fd_randn(r), B->in);
            for (size_t j = 0; j < n; j++)
                B->x[k * n + j] = c;
        }
        for (size_t j = 0; j < n; j++)
            B->b[j] = rn_round(fd_midpoint_near(B->b[j], B->out), B->in);
        for (size_t i = 0; i < N; i++)
            B->f[i] = rn_round(fd_midpoint_near(B->x[i], B->out) - B->x[i], B->in);
        break;
    case SC_MEAN_TIE: /* half the row at v, half at v + ulp_out(v): the mean is a midpoint */
        for (size_t k = 0; k < B->rows; k++) {
            double v = rn_round(rn_round(fd_randn(r), B->out), B->in);
            double w = rn_round(v + rn_ulp(v, B->out), B->in);
            for (size_t j = 0; j < n; j++)
                B->x[k * n + j] = (j < n / 2 || (n % 2 && j == n - 1)) ? v : w;
            if (n % 2)
                B->x[k * n + n - 1] = 0.5 * (v + w) == rn_round(0.5 * (v + w), B->in)
                                          ? rn_round(0.5 * (v + w), B->in)
                                          : v;
        }
        break;
    case SC_NEAR_TIE_Y: /* beta tuned so that y (forward of the norm) lands near a midpoint */
        for (size_t j = 0; j < n; j++)
            B->b[j] = rn_round(fd_midpoint_near(0.7 + B->b[j], B->out) - 0.7, B->in);
        if (rms) { /* gamma tuned so that row 0's y_j = x_j w_j rstd is near a midpoint */
            double ss = 0;
            for (size_t j = 0; j < n; j++)
                ss += B->x[j] * B->x[j];
            double rs = 1.0 / sqrt(ss / (double)n + B->eps);
            for (size_t j = 0; j < n; j++) {
                double t = B->x[j] * rs;
                if (t == 0 || !isfinite(t))
                    continue;
                double w = fd_midpoint_near(t * (1.0 + B->g[j]), B->out) / t;
                B->g[j] = rn_round(B->offset ? w - 1.0 : w, B->in);
            }
        }
        for (size_t i = 0; i < N; i++) /* residual: x + f near a midpoint */
            B->f[i] = rn_round(fd_midpoint_near(B->x[i] + B->f[i], B->out) - B->x[i], B->in);
        break;
    case SC_ZEROS: /* exact zeros of y and signed zeros: symmetric rows, -0 parameters */
        for (size_t k = 0; k < B->rows; k++)
            for (size_t j = 0; j < n; j++)
                B->x[k * n + j] = rn_round((double)j - (double)(n - 1) / 2.0, B->in);
        for (size_t j = 0; j < n; j++) {
            B->b[j] = (j % 2) ? -0.0 : 0.0;
            if (j % 3 == 0)
                B->g[j] = -0.0;
        }
        for (size_t i = 0; i < N; i++)
            B->f[i] = (i % 2) ? -B->x[i] : (B->x[i] == 0 ? -0.0 : B->f[i]);
        break;
    default:
        break;
    }
    if (fam != FD_FAM_SKIP_LN && fam != FD_FAM_SKIP_RMS)
        return;
    /* the skip ops' backward dy, drawn last (the forward's inputs are those of the other
       families): at the scale of x; at midpoints of the output dtype in the near-tie scenario
       (with one row, dbeta_j = dy_j is a tie); in the zeros scenario with an even number of rows,
       signed zeros in whole columns (the column sums are then exact zeros: the call falls back) */
    for (size_t i = 0; i < N; i++) {
        double v = scale * fd_randn(r);
        if (B->scenario == SC_NEAR_TIE_Y)
            v = fd_midpoint_near(v, B->out);
        B->dy[i] = rn_round(v, B->in);
        if (B->scenario == SC_ZEROS && B->rows % 2 == 0 && (i % n) % 4 == 1)
            B->dy[i] = (i / n) % 2 ? -0.0 : 0.0;
    }
}

/* Runs family fam on batch B with the fast path on, then off; adds to st. */
static void fd_run(int fam, const fd_batch *B, double *o1[FD_NOUT], double *o2[FD_NOUT],
                   fd_diff_stats *st, int verbose)
{
    size_t N = B->rows * B->n;
    size_t sz[FD_NOUT] = {N, B->rows, B->rows, N, B->n, B->n};
    int nout = 6, rc1 = 0, rc2 = 0;
    rn_fast_stats a, c, m; /* m: before the backward call (c when there was none) */
    const double *bias = B->with_bias ? B->bias : NULL;
    for (int pass = 0; pass < 2; pass++) {
        double **o = pass ? o2 : o1;
        rn_fast_set_enabled(pass == 0);
        rn_fast_stats_get(&a);
        int rc, bwd = 0;
        switch (fam) {
        case FD_FAM_LAYERNORM: /* forward, and backward with dy = f */
            rc = layernorm_forward_mpfr(o[0], o[1], o[2], B->x, B->g, B->b, B->rows, B->n, B->eps,
                                        B->out);
            if (!rc && (bwd = 1, rn_fast_stats_get(&m), 1))
                rc = layernorm_backward_mpfr(o[3], o[4], o[5], B->f, B->x, B->g, B->rows, B->n,
                                             B->eps, B->out);
            break;
        case FD_FAM_RMSNORM:
            nout = 4; /* y, rstd; backward with dy = f: dx, dgamma */
            sz[2] = N;
            sz[3] = B->n;
            rc = rmsnorm_forward_mpfr(o[0], o[1], B->x, B->g, B->rows, B->n, B->eps,
                                      B->offset, B->out);
            if (!rc && (bwd = 1, rn_fast_stats_get(&m), 1))
                rc = rmsnorm_backward_mpfr(o[2], o[3], B->f, B->x, B->g, B->rows, B->n, B->eps,
                                           B->offset, B->out);
            break;
        case FD_FAM_SKIP_LN: /* y, mean, rstd, sum of LayerNorm(x + skip (+ bias)), skip = f;
                                backward with dy: dx, dskip, dbias, dgamma, dbeta */
            nout = 9;
            sz[3] = sz[4] = sz[5] = N;
            sz[6] = sz[7] = sz[8] = B->n;
            rc = skip_layernorm_forward_mpfr(o[0], o[1], o[2], o[3], B->x, B->f, B->g, B->b, bias,
                                             B->rows, B->n, B->eps, B->out);
            if (!rc && (bwd = 1, rn_fast_stats_get(&m), 1))
                rc = skip_layernorm_backward_mpfr(o[4], o[5], o[6], o[7], o[8], B->dy, B->x, B->f,
                                                  B->g, bias, B->rows, B->n, B->eps, B->out);
            break;
        case FD_FAM_SKIP_RMS: /* y, rstd, sum; backward: dx, dskip, dbias, dgamma */
            nout = 7;
            sz[2] = sz[3] = sz[4] = N;
            sz[5] = sz[6] = B->n;
            rc = skip_rmsnorm_forward_mpfr(o[0], o[1], o[2], B->x, B->f, B->g, bias, B->rows,
                                           B->n, B->eps, B->offset, B->out);
            if (!rc && (bwd = 1, rn_fast_stats_get(&m), 1))
                rc = skip_rmsnorm_backward_mpfr(o[3], o[4], o[5], o[6], B->dy, B->x, B->f, B->g,
                                                bias, B->rows, B->n, B->eps, B->offset, B->out);
            break;
        default: /* forward y = x + f, and backward with dy = f (dx, df) */
            nout = 3;
            sz[1] = sz[2] = N;
            rc = residual_forward_mpfr(o[0], B->x, B->f, N, B->out);
            if (!rc)
                rc = residual_backward_mpfr(o[1], o[2], B->f, N, B->out);
            break;
        }
        rn_fast_stats_get(&c);
        if (!bwd)
            m = c;
        if (pass == 0) {
            rc1 = rc;
            st->fast.rows += c.rows - a.rows;
            st->fast.fallback_rows += c.fallback_rows - a.fallback_rows;
            st->fast.elems += c.elems - a.elems;
            st->fast.fallback_elems += c.fallback_elems - a.fallback_elems;
            rn_fast_stats *sc = &st->scen[B->scenario];
            sc->rows += c.rows - a.rows;
            sc->fallback_rows += c.fallback_rows - a.fallback_rows;
            sc->elems += c.elems - a.elems;
            sc->fallback_elems += c.fallback_elems - a.fallback_elems;
            rn_fast_stats *bw[2] = {&st->bwd, &st->bwd_scen[B->scenario]};
            for (int q = 0; q < 2; q++) {
                bw[q]->rows += c.rows - m.rows;
                bw[q]->fallback_rows += c.fallback_rows - m.fallback_rows;
                bw[q]->elems += c.elems - m.elems;
                bw[q]->fallback_elems += c.fallback_elems - m.fallback_elems;
            }
        } else {
            rc2 = rc;
        }
    }
    rn_fast_set_enabled(1);
    size_t elems = 0;
    int bad = rc1 != rc2;
    for (int k = 0; k < nout; k++) {
        elems += sz[k];
        if (!fd_same(o1[k], o2[k], sz[k]))
            bad = 1;
    }
    if (rc2) { /* the twin alone could not certify (or ran out of memory): not a fast-path error as
                  long as the fast path gave the same status (then it fell back to the twin) */
        st->twin_errors++;
        if (verbose)
            fprintf(stderr, "twin alone returned %d: %s scenario %s in %s out %s rows %zu n %zu "
                    "eps %a\n", rc2, fd_fam_name[fam], fd_scen_name[B->scenario],
                    rn_dtype_name(B->in), rn_dtype_name(B->out), B->rows, B->n, B->eps);
    }
    st->elems += elems;
    if (bad) {
        st->mismatches++;
        if (verbose)
            fprintf(stderr, "MISMATCH %s scenario %s in %s out %s rows %zu n %zu eps %a\n",
                    fd_fam_name[fam], fd_scen_name[B->scenario], rn_dtype_name(B->in),
                    rn_dtype_name(B->out), B->rows, B->n, B->eps);
    }
}

/* Draws and checks batches of family fam until `target` output elements were compared. */
static void fd_diff_family(int fam, unsigned long long target, uint64_t seed, fd_diff_stats *st,
                           int verbose)
{
    enum { MAXE = 8 * 1024 };
    fd_rng r = {seed * 7919 + (uint64_t)fam};
    fd_batch B;
    B.x = malloc(MAXE * sizeof(double));
    B.f = malloc(MAXE * sizeof(double));
    B.g = malloc(1024 * sizeof(double));
    B.b = malloc(1024 * sizeof(double));
    B.bias = malloc(1024 * sizeof(double));
    B.dy = malloc(MAXE * sizeof(double));
    double *o1[FD_NOUT], *o2[FD_NOUT];
    for (int k = 0; k < FD_NOUT; k++) {
        o1[k] = malloc(MAXE * sizeof(double));
        o2[k] = malloc(MAXE * sizeof(double));
    }
    memset(st, 0, sizeof *st);
    while (st->elems < target) {
        fd_draw(&r, &B, fam, MAXE);
        fd_run(fam, &B, o1, o2, st, verbose);
    }
    free(B.x), free(B.f), free(B.g), free(B.b), free(B.bias), free(B.dy);
    for (int k = 0; k < FD_NOUT; k++)
        free(o1[k]), free(o2[k]);
}

/* ---- the a-priori bounds' statistics in double-double (specs/fast-path.md §10) ----
 * The bounds of LayerNorm and RMSNorm (forward and backward; the skip ops' bounds call LayerNorm's
 * and RMSNorm's) computed with the fast statistics and with MPFR alone (rn_fast_set_enabled(0)):
 * the statistics are certified to be the MPFR path's doubles, so every bound must be bit-identical
 * (and in particular never below the MPFR one).  Also counts the rows whose statistics the fast
 * path certified (the others run the MPFR path). */
typedef struct {
    unsigned long long elems, below, differ, errors, rows, rows_fast;
} fd_bound_stats;

static void fd_bound_cmp(const double *fast, const double *mp, size_t n, fd_bound_stats *s,
                         const char *what, int verbose)
{
    for (size_t i = 0; i < n; i++) {
        s->elems++;
        if (!(fast[i] >= mp[i])) { /* (bounds are never NaN: finish() maps NaN to +Inf) */
            if (verbose && s->below < 3)
                fprintf(stderr, "BOUND BELOW MPFR %s [%zu]: %a < %a\n", what, i, fast[i], mp[i]);
            s->below++;
        }
        s->differ += memcmp(&fast[i], &mp[i], sizeof *fast) != 0;
    }
}

/* The bounds of family fam (FD_FAM_LAYERNORM or FD_FAM_RMSNORM) on batch B (dy = B->f) for output
   dtype `out` under LayerNorm profile prof, fast statistics on and off; adds to s. */
static void fd_bound_run(int fam, const fd_batch *B, rn_dtype out, rn_profile prof, double *o1[6],
                         double *o2[6], fd_bound_stats *s, int verbose)
{
    size_t N = B->rows * B->n;
    rn_dtype cd = rn_compute_dtype(out);
    rn_profile saved = rn_bound_profile();
    rn_bound_set_profile(prof);
    int rc[2];
    for (int pass = 0; pass < 2; pass++) {
        double **o = pass ? o2 : o1;
        rn_fast_set_enabled(pass == 0);
        if (fam == FD_FAM_LAYERNORM) {
            rc[pass] = layernorm_forward_bound(o[0], o[1], o[2], B->x, B->g, B->b, B->rows, B->n,
                                               B->eps, cd, out);
            rc[pass] |= layernorm_backward_bound(o[3], o[4], o[5], B->f, B->x, B->g, B->rows, B->n,
                                                 B->eps, cd, out);
        } else {
            rc[pass] = rmsnorm_forward_bound(o[0], o[1], B->x, B->g, B->rows, B->n, B->eps,
                                             B->offset, cd, out);
            rc[pass] |= rmsnorm_backward_bound(o[2], o[3], B->f, B->x, B->g, B->rows, B->n, B->eps,
                                               B->offset, cd, out);
        }
    }
    rn_fast_set_enabled(1);
    rn_bound_set_profile(saved);
    double *dev = malloc((B->n + 1) * sizeof *dev);
    size_t *und = malloc((B->n + 1) * sizeof *und), k;
    for (size_t r = 0; dev && und && r < B->rows; r++) { /* rows the fast statistics certify whole */
        const double *x = B->x + r * B->n;
        double a, b, c, d;
        s->rows++;
        if (fam == FD_FAM_LAYERNORM)
            s->rows_fast += (unsigned long long)(layernorm_row_bound_stats_fast(
                                                     &a, &b, &c, &d, dev, und, &k, x, B->n) &&
                                                 k == 0);
        else
            s->rows_fast += (unsigned long long)rmsnorm_row_bound_stats_fast(&a, &b, x, B->n,
                                                                             B->eps);
    }
    free(dev), free(und);
    if (rc[0] || rc[1]) {
        s->errors++;
        return;
    }
    unsigned long long below0 = s->below;
    if (fam == FD_FAM_LAYERNORM) {
        const size_t sz[6] = {N, B->rows, B->rows, N, B->n, B->n};
        static const char *const nm[6] = {"y", "mean", "rstd", "dx", "dgamma", "dbeta"};
        for (int k = 0; k < 6; k++)
            fd_bound_cmp(o1[k], o2[k], sz[k], s, nm[k], verbose);
    } else {
        const size_t sz[4] = {N, B->rows, N, B->n};
        static const char *const nm[4] = {"y", "rstd", "dx", "dgamma"};
        for (int k = 0; k < 4; k++)
            fd_bound_cmp(o1[k], o2[k], sz[k], s, nm[k], verbose);
    }
    if (verbose && s->below > below0)
        fprintf(stderr, "  in %s: scenario %s, in %s, out %s, rows %zu, n %zu, eps %a, profile %s\n",
                fd_fam_name[fam], fd_scen_name[B->scenario], rn_dtype_name(B->in),
                rn_dtype_name(out), B->rows, B->n, B->eps, rn_profile_name(prof));
}

/* Random and adversarial batches (fd_draw) of LayerNorm and RMSNorm until `target` bound
   elements were compared; every output dtype and profile in turn. */
static void fd_bound_diff(unsigned long long target, uint64_t seed, fd_bound_stats *s, int verbose)
{
    enum { MAXE = 8 * 1024 };
    fd_rng r = {seed * 104729 + 5};
    fd_batch B;
    B.x = malloc(MAXE * sizeof(double));
    B.f = malloc(MAXE * sizeof(double));
    B.g = malloc(1024 * sizeof(double));
    B.b = malloc(1024 * sizeof(double));
    B.bias = malloc(1024 * sizeof(double));
    double *o1[6], *o2[6];
    for (int k = 0; k < 6; k++) {
        o1[k] = malloc(MAXE * sizeof(double));
        o2[k] = malloc(MAXE * sizeof(double));
    }
    memset(s, 0, sizeof *s);
    for (unsigned long long it = 0; s->elems < target; it++) {
        int fam = it % 2 ? FD_FAM_RMSNORM : FD_FAM_LAYERNORM;
        fd_draw(&r, &B, fam, MAXE);
        fd_bound_run(fam, &B, B.out, (rn_profile)(it / 2 % 3), o1, o2, s, verbose);
    }
    free(B.x), free(B.f), free(B.g), free(B.b), free(B.bias);
    for (int k = 0; k < 6; k++)
        free(o1[k]), free(o2[k]);
}

static void fd_print_bound_stats(const char *what, const fd_bound_stats *s)
{
    printf("bound statistics %s: %llu bound elements compared (fast vs MPFR alone), %llu below "
           "MPFR's, %llu differ in their bits, %llu calls failed; %llu of %llu rows' statistics "
           "certified by the fast path (%.3g%% ran MPFR)\n",
           what, s->elems, s->below, s->differ, s->errors, s->rows_fast, s->rows,
           s->rows ? 100.0 * (double)(s->rows - s->rows_fast) / (double)s->rows : 0.0);
}

static void fd_print_stats(const char *fam, const fd_diff_stats *st)
{
    const rn_fast_stats *f = &st->fast;
    printf("fastpath %-10s %llu elements compared, %llu mismatches (%llu batches the twin alone could "
           "not certify either); fast path: "
           "%llu rows, %llu fell back (%.3g%%), %llu of %llu elements (%.3g%%)\n",
           fam, st->elems, st->mismatches, st->twin_errors, f->rows, f->fallback_rows,
           f->rows ? 100.0 * (double)f->fallback_rows / (double)f->rows : 0.0, f->fallback_elems,
           f->elems, f->elems ? 100.0 * (double)f->fallback_elems / (double)f->elems : 0.0);
    const rn_fast_stats *bw = &st->bwd;
    if (bw->rows)
        printf("    backward alone: %llu calls, %llu fell back to the twin (%.3g%%), %llu of %llu "
               "elements (%.3g%%)\n", bw->rows, bw->fallback_rows,
               100.0 * (double)bw->fallback_rows / (double)bw->rows, bw->fallback_elems,
               bw->elems, bw->elems ? 100.0 * (double)bw->fallback_elems / (double)bw->elems : 0.0);
    for (int k = 0; k < SC_NSCEN; k++) {
        f = &st->scen[k];
        bw = &st->bwd_scen[k];
        if (!f->rows)
            continue;
        printf("    %-13s %8llu rows, %6.2f%% fell back", fd_scen_name[k], f->rows,
               100.0 * (double)f->fallback_rows / (double)f->rows);
        if (bw->rows)
            printf("; of which backward calls %6llu, %6.2f%% fell back", bw->rows,
                   100.0 * (double)bw->fallback_rows / (double)bw->rows);
        printf("\n");
    }
}

#endif
