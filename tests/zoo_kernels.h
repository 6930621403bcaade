/* The bug zoo's kernels, shared by tests/test_bug_zoo.c (over the golden suite) and
 * tests/test_zoo_widths.c (at production widths): copies of ref/layernorm.c and ref/rmsnorm.c
 * (two-pass mean and variance, y = (x - mean) rstd gamma + beta, dx = (g - mean(g) - xhat
 * mean(g xhat)) rstd; RMSNorm y = x rstd w), written once over doubles with every operation
 * rounded to the compute dtype by R() -- an exact emulation of float arithmetic for + - * / sqrt
 * (binary64 has more than 2p + 2 bits: double rounding is innocuous).  A mutant is the same kernel
 * with one bug switched on.  Static functions: include once per test program, after dtype.h. */
#ifndef RESNORM_ZOO_KERNELS_H
#define RESNORM_ZOO_KERNELS_H

#include <math.h>
#include <stdlib.h>

#include "dtype.h"

typedef enum {
    M_NONE,
    M_UNBIASED,      /* var / (n - 1) */
    M_EPS_OUT,       /* 1 / (sqrt(var) + eps) */
    M_WRONG_EPS,     /* eps 1e-12 whatever the attribute says (BERT-TF's eps) */
    M_ONE_PASS,      /* var = E[x^2] - E[x]^2 */
    M_LOWP_SUMSQ,    /* squares and their sum in f16 */
    M_LAST_AXIS,     /* statistics over the last dimension only */
    M_BATCH_AXIS,    /* statistics over the rows (the batch), per column */
    M_NO_GAMMA,
    M_NO_BETA,
    M_SWAP_GB,       /* gamma and beta swapped */
    M_GAMMA_BCAST,   /* gamma broadcast along the last dimension only: gamma[i % last] */
    M_OUT_BF16,      /* outputs rounded to bf16 first */
    M_W_AFTER_CAST,  /* RMSNorm: round(x rstd) to the output dtype, then * w (HF Llama order) */
    M_NO_OFFSET,     /* Gemma's 1 + gamma applied as gamma */
    M_NO_MEAN_G,     /* backward without - mean(g) */
    M_NO_MEAN_GX,    /* backward without - xhat mean(g xhat) */
    M_DG_FIRST_ROW,  /* dgamma, dbeta of row 0 only */
    M_DG_BATCH_ONLY, /* dgamma, dbeta summed over the first dimension only (rows b * T) */
    M_SKIP_NORM_X,   /* fused skip + norm normalizes x, not x + skip + bias */
    M_SKIP_SUM_NOBIAS, /* fused skip + norm returns x + skip as the sum */
    M_COUNT,         /* the mutants run over the golden suite (tests/test_bug_zoo.c) */
    /* run at production widths only (tests/test_zoo_widths.c; issue 7) */
    M_EPS_DROPPED = M_COUNT, /* 1 / sqrt(var): eps left out */
    M_VAR_N_MINUS_1, /* the variance (sum of squares) loop stops at n - 1, still divided by n */
    M_RSQRT12,       /* rstd from a 12-bit rsqrt approximation (RN to 12 significant bits) */
    M_RSTD_BF16,     /* rstd stored in bf16 and used from there */
    M_MEAN_GX_BF16,  /* backward: mean(g xhat) rounded to bf16 */
    M_ALL_COUNT
} mutant;

typedef struct {
    rn_dtype cd, out;
    mutant m;
} cfg;

static const cfg *C; /* the kernel configuration being run */

/* One operation's rounding in the compute dtype. */
static double R(double v) { return C->cd == RN_F64 ? v : (double)(float)v; }
static double RH(double v) { return rn_round(v, RN_F16); } /* the lowp mutant's f16 */

/* ---------------------------------------------------------------- the row view */

typedef struct {
    size_t rows, n, last, batch; /* rows x n; last: size of the last dim; batch: shape[0] */
    double eps;
    int offset;
} view;

/* Statistics group of element (r, i) for the axis mutants: returns the elements of its group. */
static size_t group_of(const view *v, size_t r, size_t i, size_t *idx, size_t cap)
{
    size_t k = 0;
    if (C->m == M_LAST_AXIS) {
        size_t start = r * v->n + (i / v->last) * v->last;
        for (size_t j = 0; j < v->last && k < cap; j++)
            idx[k++] = start + j;
    } else if (C->m == M_BATCH_AXIS) {
        for (size_t q = 0; q < v->rows && k < cap; q++)
            idx[k++] = q * v->n + i;
    } else {
        for (size_t j = 0; j < v->n && k < cap; j++)
            idx[k++] = r * v->n + j;
    }
    return k;
}

/* Whether element i of a row starts a new statistics group (the stats are computed once each). */
static int new_group(const view *v, size_t i)
{
    return i == 0 || C->m == M_BATCH_AXIS || (C->m == M_LAST_AXIS && i % v->last == 0);
}

/* ---------------------------------------------------------------- LayerNorm (ref/layernorm.c) */

/* rsqrt approximated to 12 significant bits (round to nearest): relative error <= 2^-12. */
static double rsqrt12(double r)
{
    int e;
    double f = frexp(r, &e);
    return ldexp(nearbyint(f * 4096) / 4096, e);
}

/* rstd = 1/sqrt(var + eps) in the compute dtype, with the mutants of eps and of rsqrt. */
static double zoo_rstd(double var, double eps)
{
    if (C->m == M_WRONG_EPS)
        eps = R(1e-12);
    if (C->m == M_EPS_DROPPED)
        eps = 0;
    double r = C->m == M_EPS_OUT ? R(1.0 / R(R(sqrt(var)) + eps)) : R(1.0 / R(sqrt(R(var + eps))));
    if (C->m == M_RSQRT12)
        r = R(rsqrt12(r));
    if (C->m == M_RSTD_BF16)
        r = rn_round(r, RN_BF16);
    return r;
}

static void ln_stats(const view *v, const double *x, const size_t *idx, size_t k, double *mean,
                     double *rstd)
{
    double sum = 0;
    for (size_t j = 0; j < k; j++)
        sum = R(sum + x[idx[j]]);
    double m = R(sum / (double)k), var;
    if (C->m == M_ONE_PASS) {
        double sq = 0;
        for (size_t j = 0; j < k; j++)
            sq = R(sq + R(x[idx[j]] * x[idx[j]]));
        var = R(R(sq / (double)k) - R(m * m));
        if (var < 0)
            var = 0;
    } else {
        double ssd = 0;
        size_t stop = C->m == M_VAR_N_MINUS_1 && k > 1 ? k - 1 : k;
        for (size_t j = 0; j < stop; j++) {
            double d = R(x[idx[j]] - m);
            ssd = R(ssd + R(d * d));
        }
        var = R(ssd / (double)(C->m == M_UNBIASED && k > 1 ? k - 1 : k));
    }
    *rstd = zoo_rstd(var, v->eps);
    *mean = m;
}

/* The output rounding of every kernel (and the bf16 mutant's extra rounding). */
static double OUT(double v)
{
    if (C->m == M_OUT_BF16)
        v = rn_round(v, RN_BF16);
    return rn_round(v, C->out);
}

static void ln_forward(const view *v, const double *x, const double *g, const double *b,
                       double *y, double *mean, double *rstd)
{
    size_t *idx = malloc(sizeof(size_t) * (v->rows > v->n ? v->rows : v->n));
    double m = 0, rs = 0;
    for (size_t r = 0; r < v->rows; r++)
        for (size_t i = 0; i < v->n; i++) {
            if (new_group(v, i)) {
                size_t k = group_of(v, r, i, idx, v->rows > v->n ? v->rows : v->n);
                ln_stats(v, x, idx, k, &m, &rs);
            }
            double gi = g[i], bi = b[i];
            if (C->m == M_NO_GAMMA)
                gi = 1;
            if (C->m == M_NO_BETA)
                bi = 0;
            if (C->m == M_SWAP_GB)
                gi = b[i], bi = g[i];
            if (C->m == M_GAMMA_BCAST)
                gi = g[i % v->last];
            y[r * v->n + i] = OUT(R(R(R(R(x[r * v->n + i] - m) * rs) * gi) + bi));
            if (i == 0) {
                mean[r] = OUT(m);
                rstd[r] = OUT(rs);
            }
        }
    free(idx);
}

/* Backward at given (compute-dtype) mean and rstd; dgamma, dbeta accumulated over the rows the
   mutant sums. */
static void ln_backward(const view *v, const double *x, const double *g, const double *dy,
                        double *dx, double *dxraw, double *dgamma, double *dbeta)
{
    size_t *idx = malloc(sizeof(size_t) * v->n);
    double *dga = calloc(v->n, sizeof(double)), *dba = calloc(v->n, sizeof(double));
    for (size_t r = 0; r < v->rows; r++) {
        double m, rs;
        size_t k = group_of(v, r, 0, idx, v->n);
        ln_stats(v, x, idx, k, &m, &rs);
        const double *xr = x + r * v->n, *dyr = dy + r * v->n;
        double sg = 0, sgx = 0;
        for (size_t i = 0; i < v->n; i++) {
            double xh = R(R(xr[i] - m) * rs), gi = R(dyr[i] * g[i]);
            sg = R(sg + gi);
            sgx = R(sgx + R(gi * xh));
        }
        double mg = R(sg / (double)v->n), mgx = R(sgx / (double)v->n);
        if (C->m == M_NO_MEAN_G)
            mg = 0;
        if (C->m == M_NO_MEAN_GX)
            mgx = 0;
        if (C->m == M_MEAN_GX_BF16)
            mgx = rn_round(mgx, RN_BF16);
        int sum_row = !(C->m == M_DG_FIRST_ROW && r > 0) &&
                      !(C->m == M_DG_BATCH_ONLY && r % (v->rows / v->batch) != 0);
        for (size_t i = 0; i < v->n; i++) {
            double xh = R(R(xr[i] - m) * rs), gi = R(dyr[i] * g[i]);
            if (sum_row) {
                dba[i] = R(dba[i] + dyr[i]);
                dga[i] = R(dga[i] + R(dyr[i] * xh));
            }
            dxraw[r * v->n + i] = R(R(R(gi - mg) - R(xh * mgx)) * rs);
            dx[r * v->n + i] = OUT(dxraw[r * v->n + i]);
        }
    }
    for (size_t i = 0; i < v->n; i++) {
        dgamma[i] = OUT(dga[i]);
        if (dbeta)
            dbeta[i] = OUT(dba[i]);
    }
    free(idx), free(dga), free(dba);
}

/* ---------------------------------------------------------------- RMSNorm (ref/rmsnorm.c) */

static double rms_rstd(const view *v, const double *x, const size_t *idx, size_t k)
{
    double ss = 0;
    size_t stop = C->m == M_VAR_N_MINUS_1 && k > 1 ? k - 1 : k;
    for (size_t j = 0; j < stop; j++)
        ss = C->m == M_LOWP_SUMSQ ? RH(ss + RH(x[idx[j]] * x[idx[j]]))
                                  : R(ss + R(x[idx[j]] * x[idx[j]]));
    double ms = R(ss / (double)k);
    return zoo_rstd(ms, v->eps);
}

static double rms_w(const view *v, double g)
{
    return v->offset && C->m != M_NO_OFFSET ? R(1.0 + g) : g;
}

static void rms_forward(const view *v, const double *x, const double *g, double *y, double *rstd)
{
    size_t cap = v->rows > v->n ? v->rows : v->n;
    size_t *idx = malloc(sizeof(size_t) * cap);
    double rs = 0;
    for (size_t r = 0; r < v->rows; r++)
        for (size_t i = 0; i < v->n; i++) {
            if (new_group(v, i))
                rs = rms_rstd(v, x, idx, group_of(v, r, i, idx, cap));
            double gi = C->m == M_NO_GAMMA ? 1 : C->m == M_GAMMA_BCAST ? g[i % v->last] : g[i];
            double xh = R(x[r * v->n + i] * rs);
            if (C->m == M_W_AFTER_CAST) /* weight * x.to(dtype): two roundings */
                y[r * v->n + i] = OUT(rn_round(xh, C->out) * rms_w(v, gi));
            else
                y[r * v->n + i] = OUT(R(xh * rms_w(v, gi)));
            if (i == 0)
                rstd[r] = OUT(rs);
        }
    free(idx);
}

static void rms_backward(const view *v, const double *x, const double *g, const double *dy,
                         double *dx, double *dxraw, double *dgamma)
{
    size_t *idx = malloc(sizeof(size_t) * v->n);
    double *dga = calloc(v->n, sizeof(double));
    for (size_t r = 0; r < v->rows; r++) {
        size_t k = group_of(v, r, 0, idx, v->n);
        double rs = rms_rstd(v, x, idx, k);
        const double *xr = x + r * v->n, *dyr = dy + r * v->n;
        double sgx = 0;
        for (size_t i = 0; i < v->n; i++)
            sgx = R(sgx + R(R(dyr[i] * rms_w(v, g[i])) * R(xr[i] * rs)));
        double mgx = C->m == M_NO_MEAN_GX ? 0 : R(sgx / (double)v->n);
        if (C->m == M_MEAN_GX_BF16)
            mgx = rn_round(mgx, RN_BF16);
        int sum_row = !(C->m == M_DG_FIRST_ROW && r > 0) &&
                      !(C->m == M_DG_BATCH_ONLY && r % (v->rows / v->batch) != 0);
        for (size_t i = 0; i < v->n; i++) {
            double xh = R(xr[i] * rs), gi = R(dyr[i] * rms_w(v, g[i]));
            if (sum_row)
                dga[i] = R(dga[i] + R(dyr[i] * xh));
            dxraw[r * v->n + i] = R(R(gi - R(xh * mgx)) * rs);
            dx[r * v->n + i] = OUT(dxraw[r * v->n + i]);
        }
    }
    for (size_t i = 0; i < v->n; i++)
        dgamma[i] = OUT(dga[i]);
    free(idx), free(dga);
}

#endif
