/* A-priori per-element error bounds for RMSNorm forward and backward.
 * Every formula below is derived in specs/error-analysis-rmsnorm.md (section numbers in brackets,
 * [R§k]); this file only evaluates them on the data.
 *
 * The exact quantities the bounds need (ms = mean of squares, rstd r, c = mean(g x), ...) are
 * computed with MPFR at 256 bits and rounded to binary64; each bound is a sum of products of
 * non-negative terms evaluated in binary64 and multiplied by EVAL_SLACK, which covers the relative
 * error of those roundings and of the evaluation (fewer than 64 operations, each within 2^-53)
 * [R§7].  Differences such as rho - 1 are never formed by subtraction: they are written as sums of
 * non-negative terms first, so that their evaluation error stays relative. */
#include <math.h>
#include <stdlib.h>

#include <mpfr.h>

#include "fast_dd.h"
#include "norm_fast.h"
#include "rmsnorm_bound.h"
#include "rmsnorm_mpfr.h"

#define EXACT_PREC 256
#define EVAL_SLACK (1.0 + 0x1p-40)

/* gamma_k = k u / (1 - k u); +Inf once k u >= 1/2 [R§1]. */
static double gamma_k(double k, double u)
{
    double ku = k * u;
    return ku < 0.5 ? ku / (1.0 - ku) : INFINITY;
}

/* |want - exact| for the twin's f64 value [R§7]. */
static double want_slack(double mag)
{
    return mag * 0x1p-53 + 0x1p-1074;
}

/* The rounding of the result to `out` when it differs from `compute` [R§8]. */
static double output_rounding(double mag, double err, rn_dtype compute, rn_dtype out)
{
    if (out == compute)
        return 0.0;
    return rn_dtype_unit_roundoff(out) * (mag + err) + rn_dtype_underflow_eta(out);
}

/* The bound on |got - want| from err >= |computed - exact| and m >= |exact| [R§7, R§8]. */
static double finish(double err, double m, rn_dtype compute, rn_dtype out)
{
    double b = (err + output_rounding(m, err, compute, out)) * EVAL_SLACK + want_slack(m);
    return isnan(b) ? INFINITY : b;
}

/* Row classes, as in ref/rmsnorm_mpfr.c. */
typedef enum { ROW_OK, ROW_NAN, ROW_INF, ROW_ZERO } row_kind;

/* Exact statistics of one row, rounded to binary64. */
typedef struct {
    row_kind kind;
    double ms;      /* (1/n) sum x_i^2 */
    double maxsq;   /* max x_i^2 (rounded up) */
    double r;       /* 1 / sqrt(ms + eps) */
} row_stats;

static int alloc_scratch(size_t n, mpfr_t **t, mpfr_ptr **p);

/* The row's statistics; *t, *p: MPFR scratch of n + 1 numbers, allocated here on the first row
   the fast path leaves when NULL.  0: out of memory. */
static int exact_row_stats(row_stats *st, const double *x, size_t n, double eps, mpfr_t **tp,
                           mpfr_ptr **pp)
{
    int has_nan = 0, has_inf = 0;
    double amax = 0.0;
    for (size_t i = 0; i < n; i++) {
        has_nan |= isnan(x[i]);
        has_inf |= isinf(x[i]);
        if (fabs(x[i]) > amax)
            amax = fabs(x[i]);
    }
    st->ms = st->r = NAN;
    st->maxsq = amax * amax * (1.0 + 0x1p-52);
    if (has_nan || !(isfinite(eps) && eps >= 0)) {
        st->kind = ROW_NAN;
        return 1;
    }
    if (has_inf) {
        st->kind = ROW_INF;
        return 1;
    }
    /* The double-double fast path (specs/fast-path.md §10.4) certifies the MPFR path's doubles;
       MPFR computes what it does not certify (and everything under RESNORM_FASTPATH=0). */
    if (rn_fast_enabled() && rmsnorm_row_bound_stats_fast(&st->ms, &st->r, x, n, eps)) {
        st->kind = ROW_OK;
        return 1;
    }
    if (!*tp && alloc_scratch(n, tp, pp))
        return 0;
    mpfr_t *t = *tp, s;
    mpfr_ptr *p = *pp;
    mpfr_init2(s, EXACT_PREC);
    for (size_t i = 0; i < n; i++) {
        mpfr_set_d(t[i], x[i], MPFR_RNDN);
        mpfr_sqr(t[i], t[i], MPFR_RNDN);
        p[i] = t[i];
    }
    mpfr_sum(s, p, n, MPFR_RNDN);
    mpfr_div_ui(s, s, n, MPFR_RNDN);
    st->ms = mpfr_get_d(s, MPFR_RNDN);
    mpfr_add_d(s, s, eps, MPFR_RNDN);
    st->kind = mpfr_zero_p(s) ? ROW_ZERO : ROW_OK;
    if (st->kind == ROW_OK) {
        mpfr_rec_sqrt(s, s, MPFR_RNDN);
        st->r = mpfr_get_d(s, MPFR_RNDN);
    }
    mpfr_clear(s);
    return 1;
}

/* Forward error terms of one row [R§2, R§3]: |r_hat - r| <= R r. */
static double rel_rstd(const row_stats *st, size_t n, double eps, rn_dtype compute)
{
    double u = rn_dtype_unit_roundoff(compute), eta = rn_dtype_underflow_eta(compute);
    /* [R§2] ms_hat in [ms - E, ms + E]: a sum of the n rounded squares in any order, then / n or
       * fl(1/n): gamma_{n+2} ms; a running mean of the squares: + 4u(1+u) max x^2; underflow of the
       squares and of the scaling: (n + 2) eta. */
    double E = gamma_k((double)n + 2, u) * st->ms + 4.0 * u * (1.0 + u) * st->maxsq
               + ((double)n + 2.0) * eta;
    /* [R§6] overflow of the compute format voids the analysis. */
    if ((double)n * st->maxsq > rn_dtype_max(compute) / 2)
        return INFINITY;
    double S = st->ms + eps;
    double d_lo = fmin(st->ms, E);          /* ms - v_lo, v_lo = max(0, ms - E) */
    double s_lo_base = S - d_lo;            /* v_lo + eps (>= 0) */
    if (!(s_lo_base > 0.0))
        return INFINITY;                    /* ms_hat + eps may be 0: r_hat may be +Inf */
    /* [R§3] rho_hi - 1 <= (4u + a/2 + a u) / (1 - 2u),  a = (d_lo + u (v_lo + eps)) / s_lo,
             1 - rho_lo <= 4u + b/2,                   b = E/S + u + u E/S. */
    double s_lo = s_lo_base * (1.0 - u);
    double a = (d_lo + u * s_lo_base) / s_lo;
    /* s_lo_base = S - d_lo is a binary64 difference: relative error <= 2^-52 (1 + a), within
       EVAL_SLACK while a < 2^10; beyond that R > 2^8 and the analysis says nothing useful. */
    if (!(a < 0x1p10))
        return INFINITY;
    double up = (4.0 * u + a / 2.0 + a * u) / (1.0 - 2.0 * u);
    double b = E / S + u + u * E / S;
    double down = fmin(4.0 * u + b / 2.0, 1.0);
    return fmax(up, down);
}

static int alloc_scratch(size_t n, mpfr_t **t, mpfr_ptr **p)
{
    *t = malloc((n + 1) * sizeof **t);
    *p = malloc((n + 1) * sizeof **p);
    if (!*t || !*p) {
        free(*t), free(*p);
        *t = NULL, *p = NULL;
        return RN_TWIN_NOMEM;
    }
    for (size_t i = 0; i <= n; i++)
        mpfr_init2((*t)[i], EXACT_PREC);
    return RN_TWIN_OK;
}

static void free_scratch(size_t n, mpfr_t *t, mpfr_ptr *p)
{
    for (size_t i = 0; t && i <= n; i++)
        mpfr_clear(t[i]);
    free(t), free(p);
}

int rmsnorm_forward_bound(double *by, double *brstd, const double *x, const double *gamma,
                          size_t rows, size_t n, double eps, int offset, rn_dtype compute,
                          rn_dtype out)
{
    double u = rn_dtype_unit_roundoff(compute), eta = rn_dtype_underflow_eta(compute);
    double uw = offset ? u : 0.0; /* the rounding of 1 + gamma [R§4] */
    mpfr_t *t = NULL; /* allocated on the first row the fast path leaves */
    mpfr_ptr *p = NULL;
    for (size_t r = 0; r < rows; r++) {
        const double *xr = x + r * n;
        row_stats st;
        if (!exact_row_stats(&st, xr, n, eps, &t, &p)) {
            free_scratch(n, t, p);
            return RN_TWIN_NOMEM;
        }
        if (st.kind == ROW_INF) {
            /* [R§6] exact rstd 0 and y_i 0 (x_i finite) or NaN: a plain sum of squares gets
               them, but a compensated or pairwise-merged sum meets Inf - Inf and returns NaN.
               Void (unconstrained) except where the exact value is NaN already. */
            brstd[r] = INFINITY;
            for (size_t i = 0; i < n; i++) {
                double w = offset ? 1.0 + gamma[i] : gamma[i];
                by[r * n + i] = isfinite(xr[i]) && isfinite(w) ? INFINITY : 0.0;
            }
            continue;
        }
        if (st.kind != ROW_OK) { /* exact outputs NaN/Inf, or exact zeros [R§6] */
            brstd[r] = 0.0;
            for (size_t i = 0; i < n; i++)
                by[r * n + i] = 0.0;
            continue;
        }
        double R = rel_rstd(&st, n, eps, compute);
        brstd[r] = finish(st.r * R, st.r * (1.0 + 0x1p-50), compute, out);
        for (size_t i = 0; i < n; i++) {
            double w = offset ? 1.0 + gamma[i] : gamma[i];
            if (!isfinite(w)) {
                by[r * n + i] = 0.0;
                continue;
            }
            double aw = fabs(w) * (1.0 + 0x1p-52); /* |w| rounded up (1 + gamma in binary64) */
            /* [R§4] y_hat = fl(fl(x r_hat) w_hat) (or (x w_hat) r_hat, or x (r_hat w_hat)):
               |y_hat - y| <= |y| ((1 + R)(1 + gamma_{2+offset}) - 1)
                              + eta (1 + max(|w|, r, |x|)(1 + ..)) */
            double ym = fabs(xr[i]) * st.r * aw * (1.0 + 0x1p-50);
            double g2 = gamma_k(2.0 + (offset ? 1.0 : 0.0), u);
            double e = ym * (R + g2 + R * g2)
                       + eta * (1.0 + fmax(fmax(aw * (1.0 + u) * (1.0 + uw),
                                                st.r * (1.0 + R) * (1.0 + u)),
                                           fabs(xr[i]) * (1.0 + u)));
            by[r * n + i] = finish(e, ym, compute, out);
        }
    }
    free_scratch(n, t, p);
    return RN_TWIN_OK;
}

/* The upper statistics as the fast path defines them (ref/fast_dd.h, specs/fast-path.md §10.2):
   v inflated by 2^-45, rounded up to FD_STAT_BITS = 40 bits; >= v. */
static double stat_up(mpfr_srcptr v)
{
    mpfr_t w;
    mpfr_init2(w, EXACT_PREC);
    mpfr_mul_d(w, v, FD_STAT_INFLATE, MPFR_RNDN);
    mpfr_prec_round(w, FD_STAT_BITS, MPFR_RNDU);
    double r = mpfr_get_d(w, MPFR_RNDU);
    mpfr_clear(w);
    return r;
}

/* [R§5.1] with MPFR: c_rn = RN(c), C_up, G_up the upper statistics of C and Gm; t, p: n + 1
   scratch numbers, c, C, G: EXACT_PREC temporaries. */
static void mpfr_row_sums(double *c_rn, double *C_up, double *G_up, const double *dyr,
                          const double *w, const double *xr, size_t n, mpfr_t *t, mpfr_ptr *p,
                          mpfr_ptr c, mpfr_ptr C, mpfr_ptr G)
{
    for (size_t i = 0; i < n; i++) {
        mpfr_set_d(t[i], dyr[i], MPFR_RNDN);
        mpfr_mul_d(t[i], t[i], w[i], MPFR_RNDN);
        p[i] = t[i];
    }
    for (size_t i = 0; i < n; i++)
        mpfr_abs(t[i], t[i], MPFR_RNDN);
    mpfr_sum(G, p, n, MPFR_RNDN);
    mpfr_div_ui(G, G, n, MPFR_RNDN);
    for (size_t i = 0; i < n; i++) {
        mpfr_set_d(t[i], dyr[i], MPFR_RNDN);
        mpfr_mul_d(t[i], t[i], w[i], MPFR_RNDN);
        mpfr_mul_d(t[i], t[i], xr[i], MPFR_RNDN);
    }
    mpfr_sum(c, p, n, MPFR_RNDN);
    mpfr_div_ui(c, c, n, MPFR_RNDN);
    for (size_t i = 0; i < n; i++)
        mpfr_abs(t[i], t[i], MPFR_RNDN);
    mpfr_sum(C, p, n, MPFR_RNDN);
    mpfr_div_ui(C, C, n, MPFR_RNDN);
    *c_rn = mpfr_get_d(c, MPFR_RNDN);
    *C_up = stat_up(C);
    *G_up = stat_up(G);
}

/* One thread's scratch for the backward bound's rows: the MPFR numbers of exact_row_stats and
   mpfr_row_sums. */
typedef struct {
    mpfr_t *t;
    mpfr_ptr *p;
    mpfr_t c, C, G;
} bwd_scratch;

/* Row r of the backward bound [R§5]: bdx's row, and the row's terms added to dgamma's column sums
   (cg_err, cg_mag) and non-finite flags (dg_bad).  w: the weights (gamma or 1 + gamma).
   0: out of memory. */
static int backward_bound_row(double *bdx, double *cg_err, double *cg_mag, unsigned char *dg_bad,
                              const double *dy, const double *x, const double *w, size_t r,
                              size_t n, double eps, rn_dtype compute, rn_dtype out,
                              bwd_scratch *sc)
{
    double u = rn_dtype_unit_roundoff(compute), eta = rn_dtype_underflow_eta(compute);
    double g6 = gamma_k(6.0, u), gn6 = gamma_k((double)n + 6, u), g2 = gamma_k(2.0, u);
    const double *xr = x + r * n, *dyr = dy + r * n;
    row_stats st;
    if (!exact_row_stats(&st, xr, n, eps, &sc->t, &sc->p))
        return 0;
    /* Which dgamma columns receive a non-finite term from this row (ref/rmsnorm_mpfr.c):
       NaN/zero rows poison every column; an Inf row the columns where x or dy is not finite;
       a finite row the columns where dy is not finite. */
    int row_bad = st.kind != ROW_OK;
    for (size_t i = 0; i < n; i++) {
        int col_bad = st.kind == ROW_NAN || st.kind == ROW_ZERO || !isfinite(dyr[i])
                      || (st.kind == ROW_INF && !isfinite(xr[i]));
        dg_bad[i] |= col_bad;
        if (!isfinite(dyr[i]) || !isfinite(w[i]))
            row_bad = 1;
    }
    if (row_bad) {
        for (size_t i = 0; i < n; i++)
            bdx[r * n + i] = 0.0;
        if (st.kind != ROW_OK)
            return 1; /* an Inf row adds exact zeros to the finite columns: no error */
    }
    double R = rel_rstd(&st, n, eps, compute);
    double rr = st.r;
    /* [R§5.1] c = (1/n) sum g_j x_j, C = (1/n) sum |g_j x_j|, Gm = (1/n) sum |g_j|, exact:
       the double-double fast path certifies the MPFR path's doubles (specs/fast-path.md
       §10.3), MPFR computes the rows it leaves. */
    double c_rn, C_up, G_up;
    if (!rn_fast_enabled() ||
        !rmsnorm_row_bwd_bound_sums_fast(&c_rn, &C_up, &G_up, dyr, w, xr, n)) {
        if (!sc->t && alloc_scratch(n, &sc->t, &sc->p))
            return 0;
        mpfr_row_sums(&c_rn, &C_up, &G_up, dyr, w, xr, n, sc->t, sc->p, sc->c, sc->C, sc->G);
    }
    /* c may cancel: its binary64 evaluation (w = 1 + gamma rounded) is off by <= 2^-52 C. */
    double Cm = C_up * (1.0 + 0x1p-50);
    double cm = fabs(c_rn) + 0x1p-50 * Cm;
    double Gm = G_up * (1.0 + 0x1p-50);
    double xhmax = sqrt((double)n) * (1.0 + R) * (1.0 + 2 * u) + eta; /* |x_hat_hat| [R§5.2] */
    double gmax = 0.0; /* over finite g only: a non-finite g makes dx bound 0 anyway */
    for (size_t i = 0; i < n; i++)
        if (isfinite(dyr[i] * w[i]))
            gmax = fmax(gmax, fabs(dyr[i] * w[i]) * (1.0 + 0x1p-50));
    double Rb = R;
    if ((double)n * gmax * xhmax > rn_dtype_max(compute) / 2) /* [R§6] */
        Rb = INFINITY;
    /* [R§6] autograd's association r (r (r sum(g x))): its intermediates reach
       r_hi^3 n C, which may overflow where dx is ordinary: void there. */
    double rhi = rr * (1.0 + R);
    if (rhi * rhi * rhi * (double)n * Cm > rn_dtype_max(compute) / 2)
        Rb = INFINITY;
    double R3 = 3.0 * Rb + 3.0 * Rb * Rb + Rb * Rb * Rb; /* (1 + R)^3 - 1 */
    double rp = rr * (1.0 + Rb);                         /* >= r_hat */
    for (size_t i = 0; i < n; i++) {
        double ax = fabs(xr[i]), ag = fabs(dyr[i] * w[i]) * (1.0 + 0x1p-50);
        double xh = ax * rr * (1.0 + 0x1p-50); /* |x_hat_i| */
        /* [R§5.2] dx = T1 - T2, T1 = r g_i, T2 = x_i r^3 c. */
        double T1 = rr * ag, T2 = xh * rr * rr * cm;
        double e1 = T1 * (Rb + g6 + Rb * g6);
        double e2 = xh * rr * rr * (cm * (R3 + (1.0 + R3) * g6) + Cm * gn6 * (1.0 + R3) * (1.0 + g6));
        double e_eta = eta * (3.0 + rp * (4.0 + xh * (3.0 + Gm + xhmax))) * (1.0 + g6);
        if (!row_bad)
            bdx[r * n + i] = finish(e1 + e2 + e_eta, T1 + T2, compute, out);
        /* [R§5.3] this row's term of dgamma_i = sum_r dy x_hat. */
        double ad = fabs(dyr[i]);
        cg_err[i] += ad * xh * (R + g2 + R * g2) + ad * eta + eta; /* needs no g: R, not Rb */
        cg_mag[i] += ad * xh;
    }
    return 1;
}

int rmsnorm_backward_bound_rows(double *bdx, double *cs, unsigned char *cf, const double *dy,
                                const double *x, const double *gamma, size_t rows, size_t n,
                                double eps, int offset, rn_dtype compute, rn_dtype out)
{
    size_t N1 = n ? n : 1;
    double *w = malloc(N1 * sizeof *w);
    if (!w)
        return RN_TWIN_NOMEM;
    for (size_t i = 0; i < n; i++)
        w[i] = offset ? 1.0 + gamma[i] : gamma[i];
    bwd_scratch sc; /* the MPFR rows' scratch (t, p): allocated by the first such row */
    sc.t = NULL, sc.p = NULL;
    mpfr_inits2(EXACT_PREC, sc.c, sc.C, sc.G, (mpfr_ptr)0);
    int ok = 1;
    for (size_t r = 0; ok && r < rows; r++)
        ok = backward_bound_row(bdx, cs, cs + N1, cf, dy, x, w, r, n, eps, compute, out, &sc);
    mpfr_clears(sc.c, sc.C, sc.G, (mpfr_ptr)0);
    free_scratch(n, sc.t, sc.p);
    free(w);
    return ok ? RN_TWIN_OK : RN_TWIN_NOMEM;
}

void rmsnorm_backward_bound_cols(double *bdgamma, double *cs, unsigned char *cf, size_t nb,
                                 size_t rows, size_t n, rn_dtype compute, rn_dtype out)
{
    double u = rn_dtype_unit_roundoff(compute);
    size_t N1 = n ? n : 1;
    double *cg_err = cs, *cg_mag = cs + N1;
    unsigned char *dg_bad = cf;
    rn_bound_slots_add(cs, RMS_BWD_BOUND_SUMS * N1, cf, RMS_BWD_BOUND_FLAGS * N1, nb);
    /* binary64 sums of `rows` non-negative terms, in any order of additions: within
       gamma_rows(2^-53) relative, beyond EVAL_SLACK for rows in the thousands: round up [§6] */
    double upr = 1.0 + gamma_k((double)rows + 1, 0x1p-53);
    double g_rows = gamma_k(rows > 0 ? (double)rows - 1 : 0, u);
    for (size_t i = 0; i < n; i++) {
        double ge = cg_err[i] * upr, gm = cg_mag[i] * upr;
        double e_g = ge * (1.0 + g_rows) + g_rows * gm;
        bdgamma[i] = dg_bad[i] ? 0.0 : finish(e_g, gm * (1.0 + 0x1p-50), compute, out);
    }
}

/* The rows in blocks of 16 or more (at most 64 blocks: a partition that depends on rows only),
   shared out among the threads, each block summing its rows' column terms in row order into its
   own slot, the slots added in block order: the bounds do not depend on the threads. */
int rmsnorm_backward_bound(double *bdx, double *bdgamma, const double *dy, const double *x,
                           const double *gamma, size_t rows, size_t n, double eps, int offset,
                           rn_dtype compute, rn_dtype out)
{
    size_t N1 = n ? n : 1, B = rn_bound_block_rows(rows), nb = (rows + B - 1) / B;
    size_t ns = RMS_BWD_BOUND_SUMS * N1, nf = RMS_BWD_BOUND_FLAGS * N1;
    /* Slot b + 1: block b's column sums and non-finite flags (slot 0: their total). */
    double *cs = calloc((nb + 1) * ns, sizeof *cs);
    unsigned char *cf = calloc((nb + 1) * nf, 1);
    if (!cs || !cf) {
        free(cs), free(cf);
        return RN_TWIN_NOMEM;
    }
    int ok = 1;
    long NB = (long)nb;
#pragma omp parallel for schedule(dynamic, 1) num_threads(rn_threads_for(rows * n)) \
    reduction(&& : ok)
    for (long b = 0; b < NB; b++) {
        size_t r0 = (size_t)b * B, nr = rows - r0 < B ? rows - r0 : B;
        ok = rmsnorm_backward_bound_rows(bdx + r0 * n, cs + (size_t)(b + 1) * ns,
                                         cf + (size_t)(b + 1) * nf, dy + r0 * n, x + r0 * n,
                                         gamma, nr, n, eps, offset, compute, out) == RN_TWIN_OK;
    }
    if (ok)
        rmsnorm_backward_bound_cols(bdgamma, cs, cf, nb, rows, n, compute, out);
    free(cs), free(cf);
    return ok ? RN_TWIN_OK : RN_TWIN_NOMEM;
}
