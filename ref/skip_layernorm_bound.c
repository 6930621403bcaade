/* Per-element bounds for skip + LayerNorm: the composition of specs/error-analysis-residual.md §7.
 *
 * An admitted implementation (ref/skip_layernorm_bound.h) computes LayerNorm, with its own rounding
 * errors, on a rounded sum t instead of the exact sum s.  For an IEEE adder t is not just "within
 * u|s|": it is determined, t = fl(fl(x + skip) + bias) for the order (x + skip) + bias (and likewise
 * for the other orders; one rounding of s for a fused exact sum).  So for each admitted order c, with
 * t_c computed exactly here (MPFR + rn_round_mpfr: the correctly rounded IEEE sums),
 *   |got - want| <= |got - RN64(LN(t_c))| + |RN64(LN(t_c)) - RN64(LN(s))|
 *               <= B_LN(t_c)              + |w_c - w|,
 * B_LN the LayerNorm bound of ref/layernorm_bound.c on the data t_c (its want is w_c), and the second
 * term -- the propagation of the sum's rounding through LayerNorm -- evaluated exactly by the twins
 * (w_c = RN64(LN(t_c)), w = RN64(LN(s))) instead of through a condition number.  The difference of
 * two doubles is rounded once: the factor 1 + 2^-52 covers it.  The bound is the maximum over c.
 * sum: the a-priori bound of the additions themselves (standard model, exact in the subnormal
 * range): |t - s| <= u |s| without a bias, and <= u (1 + u) max(|x + skip|, |x + bias|, |skip + bias|)
 * + u |s| with one (any of the three orders; one rounding of s is within it), plus the output
 * rounding u_out (|s| + E) + eta_out and want's own rounding, as in ref/residual_bound.c.
 * Void (+Inf): t_c overflows (the exact sum is finite), or LN(t_c) is not finite while LN(s) is
 * (e.g. a row that rounding made constant with eps = 0), or B_LN is +Inf. */
#include "skip_layernorm_bound.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <mpfr.h>

#include "fast_dd.h"
#include "layernorm_bound.h"
#include "layernorm_mpfr.h"
#include "norm_fast.h"
#include "residual_mpfr.h"
#include "skip_layernorm_mpfr.h"

#define DIFF_SLACK (1.0 + 0x1p-52)
#define EVAL_SLACK (1.0 + 0x1p-40)

/* fl_c(a + b): the IEEE sum in format c (exact sum, rounded once).  For finite a, b that binary64
   addition is itself (correctly rounded, as rn_round_mpfr's RN-even, overflow and signed zeros);
   for binary32 values a, b the binary64 sum converted to binary32 is (double rounding is innocuous
   when 53 >= 2·24 + 2 bits: Figueroa 1995; the conversion as in rn_round).  Else MPFR. */
static double add_in(mpfr_t s, double a, double b, rn_dtype c)
{
    if (isfinite(a) && isfinite(b)) {
        if (c == RN_F64)
            return a + b;
        if (c == RN_F32 && (double)(float)a == a && (double)(float)b == b)
            return (double)(float)(a + b);
    }
    residual_exact_sum(s, a, b);
    return rn_round_mpfr(s, c);
}

/* s = a + b + c exactly: fewer than 2100 bits (residual_mpfr.c). */
static void exact_sum3(mpfr_t s, double a, double b, double c)
{
    residual_exact_sum(s, a, b);
    mpfr_add_d(s, s, c, MPFR_RNDN);
}

/* The sum t an admitted implementation forms for order `order` (0: (x+k)+b, 1: (x+b)+k,
   2: x+(k+b), 3: x+k+b rounded once); without a bias, x + k. */
double skip_sum_in(mpfr_t s, double x, double k, const double *b, int order, rn_dtype c)
{
    if (!b)
        return add_in(s, x, k, c);
    switch (order) {
    case 0: return add_in(s, add_in(s, x, k, c), *b, c);
    case 1: return add_in(s, add_in(s, x, *b, c), k, c);
    case 2: return add_in(s, x, add_in(s, k, *b, c), c);
    default: {
        /* the exact sum rounded once: the fast path's certified rounding (ref/fast_dd.h), which
           is the correctly rounded value whenever it answers; else MPFR */
        double hs, ht, he, r;
        if (fd_skip_sum(x, k, b, &hs, &ht, &he, c, &r))
            return r;
        exact_sum3(s, x, k, *b);
        return rn_round_mpfr(s, c);
    }
    }
}


/* |h + l| rounded up to binary64, for h = RN(h + l) (|l| <= ulp(h)/2, as TwoSum leaves them):
   |h| when l = 0 or l has the sign opposite to h's, succ(|h|) when l has h's sign (h = 0 only
   for an exact 0). */
static double abs_dd_up(double h, double l)
{
    return (l > 0) == (h > 0) && l != 0 ? fd_succ(fabs(h)) : fabs(h);
}

/* |a + b| rounded up to binary64: abs_dd_up of TwoSum(a, b) for a finite RN sum; else (overflow,
   specials) the exact sum in MPFR, rounded away from zero. */
static double abs_sum_up(mpfr_t s, double a, double b)
{
    double h, l;
    fd_two_sum(a, b, &h, &l);
    if (isfinite(h) && isfinite(l))
        return abs_dd_up(h, l);
    residual_exact_sum(s, a, b);
    return fabs(mpfr_get_d(s, MPFR_RNDA));
}

/* |a + b + c| rounded up to binary64.  TwoSum(a, b) = s1 + e1, TwoSum(s1, c) = s2 + e2,
   TwoSum(e1, e2) = t + te, TwoSum(s2, t) = h + l, all exact: when te = 0 the sum is h + l with
   |l| <= ulp(h)/2, and abs_dd_up applies.  Else (te != 0, an overflow, specials) MPFR. */
static double abs_sum3_up(mpfr_t s, double a, double b, double c)
{
    double s1, e1, s2, e2, t, te, h, l;
    fd_two_sum(a, b, &s1, &e1);
    fd_two_sum(s1, c, &s2, &e2);
    fd_two_sum(e1, e2, &t, &te);
    fd_two_sum(s2, t, &h, &l);
    if (te == 0 && isfinite(s1) && isfinite(e1) && isfinite(s2) && isfinite(e2) && isfinite(h) &&
        isfinite(l))
        return abs_dd_up(h, l);
    exact_sum3(s, a, b, c);
    return fabs(mpfr_get_d(s, MPFR_RNDA));
}

/* The a-priori bound on |got - RN64(s)| for the sum output (see the top of this file). */
double skip_sum_bound(mpfr_t s, double x, double k, const double *b, rn_dtype compute,
                        rn_dtype out)
{
    double u = rn_dtype_unit_roundoff(compute), S, E;
    if (b) {
        S = abs_sum3_up(s, x, k, *b);
        double M2 = fmax(abs_sum_up(s, x, k), fmax(abs_sum_up(s, x, *b), abs_sum_up(s, k, *b)));
        E = u * (1 + u) * M2 + u * S;
    } else {
        S = abs_sum_up(s, x, k);
        E = u * S;
    }
    double o = out == compute ? 0.0 : rn_dtype_unit_roundoff(out) * (S + E) + rn_dtype_underflow_eta(out);
    return (E + o) * EVAL_SLACK + S * 0x1p-53 + 0x1p-1074;
}

/* skip_sum_bound of every element [rows x n] whose exact sum ws[i] is finite, 0 elsewhere (the
   class is demanded); a malloc'ed array, NULL when out of memory. */
double *skip_sum_bounds(mpfr_t s, const double *ws, const double *x, const double *skip,
                        const double *bias, size_t rows, size_t n, rn_dtype compute, rn_dtype out)
{
    size_t N = rows * n;
    double *es = malloc((N + 1) * sizeof *es);
    if (!es)
        return NULL;
    for (size_t i = 0; i < N; i++)
        es[i] = isfinite(ws[i])
              ? skip_sum_bound(s, x[i], skip[i], bias ? &bias[i % n] : NULL, compute, out) : 0.0;
    return es;
}

/* Combine LayerNorm's bound b on data t (want w_c) with the exact propagation |w_c - w|. */
double skip_compose(double b, double wc, double w)
{
    if (!isfinite(w))
        return 0.0; /* the checker demands the class */
    if (!isfinite(wc) || !isfinite(b))
        return INFINITY;
    return b + fabs(wc - w) * DIFF_SLACK;
}

int skip_layernorm_forward_bound(double *by, double *bmean, double *brstd, double *bsum,
                                 const double *x, const double *skip, const double *gamma,
                                 const double *beta, const double *bias, size_t rows, size_t n,
                                 double eps, rn_dtype compute, rn_dtype out)
{
    size_t N = rows * n;
    double *w = malloc((N + 1) * sizeof *w), *wm = malloc((rows + 1) * sizeof *wm),
           *wr = malloc((rows + 1) * sizeof *wr), *ws = malloc((N + 1) * sizeof *ws),
           *t = malloc((N + 1) * sizeof *t), *wc = malloc((N + 1) * sizeof *wc),
           *wcm = malloc((rows + 1) * sizeof *wcm), *wcr = malloc((rows + 1) * sizeof *wcr),
           *b = malloc((N + 1) * sizeof *b), *bm = malloc((rows + 1) * sizeof *bm),
           *br = malloc((rows + 1) * sizeof *br);
    int rc = RN_TWIN_NOMEM;
    double *es = NULL;
    mpfr_t s;
    residual_exact_init(s);
    if (!w || !wm || !wr || !ws || !t || !wc || !wcm || !wcr || !b || !bm || !br)
        goto out;
    rc = skip_layernorm_forward_mpfr(w, wm, wr, ws, x, skip, gamma, beta, bias, rows, n, eps,
                                     RN_F64);
    if (rc)
        goto out;
    for (size_t i = 0; i < N; i++)
        by[i] = bsum[i] = 0.0;
    for (size_t r = 0; r < rows; r++)
        bmean[r] = brstd[r] = 0.0;
    /* the sum's a-priori bound does not depend on the order: formed once per element */
    es = skip_sum_bounds(s, ws, x, skip, bias, rows, n, compute, out);
    if (!es) {
        rc = RN_TWIN_NOMEM;
        goto out;
    }
    for (int order = 0; order < (bias ? 4 : 1); order++) {
        for (size_t i = 0; i < N; i++)
            t[i] = skip_sum_in(s, x[i], skip[i], bias ? &bias[i % n] : NULL, order, compute);
        rc = layernorm_forward_bound(b, bm, br, t, gamma, beta, rows, n, eps, compute, out);
        if (!rc)
            rc = layernorm_forward_mpfr(wc, wcm, wcr, t, gamma, beta, rows, n, eps, RN_F64);
        if (rc)
            goto out;
        for (size_t i = 0; i < N; i++) {
            by[i] = fmax(by[i], skip_compose(b[i], wc[i], w[i]));
            /* sum: the a-priori bound; void if this order's t or its rounding overflows */
            double e;
            if (!isfinite(ws[i]))
                e = 0.0;
            else if (!isfinite(t[i]) || isinf(rn_round(t[i], out)))
                e = INFINITY;
            else
                e = es[i];
            bsum[i] = fmax(bsum[i], e);
        }
        for (size_t r = 0; r < rows; r++) {
            bmean[r] = fmax(bmean[r], skip_compose(bm[r], wcm[r], wm[r]));
            brstd[r] = fmax(brstd[r], skip_compose(br[r], wcr[r], wr[r]));
        }
    }
    rc = 0;
out:
    mpfr_clear(s);
    free(es);
    free(w), free(wm), free(wr), free(ws), free(t), free(wc), free(wcm), free(wcr);
    free(b), free(bm), free(br);
    return rc;
}

/* gamma_k = k u / (1 - k u) (times a little slack for its evaluation): the error factor of a sum of
   k + 1 terms in any order. */
static double gamma_k(size_t k, double u)
{
    double ku = (double)k * u;
    return ku < 0.5 ? ku / (1.0 - ku) * (1.0 + 0x1p-50) : INFINITY;
}

void skip_dbias_terms(double *sb, double *sa, const double *bc, const double *wc, size_t rows,
                      size_t n)
{
    for (size_t r = 0; r < rows; r++)
        for (size_t j = 0; j < n; j++) {
            double br = bc[r * n + j], a = fabs(wc[r * n + j]);
            sb[j] += br + a * 0x1p-53;
            sa[j] += a + br;
        }
}

int skip_dbias_sums(double *sb, double *sa, const double *bc, const double *wc, size_t rows,
                    size_t n)
{
    size_t B = rn_bound_block_rows(rows);
    double *bs = malloc((2 * n + 1) * sizeof *bs), *ba = bs + n;
    if (!bs)
        return -1;
    for (size_t j = 0; j < n; j++)
        sb[j] = sa[j] = 0.0;
    for (size_t r0 = 0; r0 < rows; r0 += B) {
        for (size_t j = 0; j < n; j++)
            bs[j] = ba[j] = 0.0;
        skip_dbias_terms(bs, ba, bc + r0 * n, wc + r0 * n, rows - r0 < B ? rows - r0 : B, n);
        for (size_t j = 0; j < n; j++)
            sb[j] += bs[j], sa[j] += ba[j];
    }
    free(bs);
    return 0;
}

/* sum_r (B_r + 2^-53 |w_r|) + gamma_{R-1} sum_r (|w_r| + B_r) + 2^-53 |wcb| + |wcb - wb|
   + output rounding + want's own rounding (specs/error-analysis-residual.md §9).  sb, sa:
   skip_dbias_sums' binary64 sums of non-negative terms, by blocks of rows (no chain of additions
   longer than the row-order sum's, whose place they took on 5 December 2026). */
double skip_dbias_bound(double sb, double sa, size_t rows, double wcb, double wb,
                        rn_dtype compute, rn_dtype out)
{
    if (!isfinite(wb))
        return 0.0; /* the class is demanded */
    double u = rn_dtype_unit_roundoff(compute);
    if (!isfinite(sb) || !isfinite(sa) || !isfinite(wcb))
        return INFINITY;
    double E = (sb + gamma_k(rows ? rows - 1 : 0, u) * sa + fabs(wcb) * 0x1p-53) * EVAL_SLACK +
               fabs(wcb - wb) * DIFF_SLACK;
    if (out != compute)
        E += rn_dtype_unit_roundoff(out) * (fabs(wb) + E) + rn_dtype_underflow_eta(out);
    return (E + fabs(wb) * 0x1p-53 + 0x1p-1074) * EVAL_SLACK;
}

/* Backward (§9): as the forward, for each admitted order c, the LayerNorm backward bound on t_c
   composed with the exact propagation |w_c - w| for dx, dgamma and dbeta (dbeta = sum dy does not
   depend on the sum: its bound is LayerNorm's), and skip_dbias_bound for dbias. */
int skip_layernorm_backward_bound(double *bdx, double *bdbias, double *bdgamma, double *bdbeta,
                                  const double *dy, const double *x, const double *skip,
                                  const double *gamma, const double *bias, size_t rows, size_t n,
                                  double eps, rn_dtype compute, rn_dtype out)
{
    size_t N = rows * n;
    double *w = malloc((N + 1) * 8), *wsk = malloc((N + 1) * 8), *wb = malloc((n + 1) * 8),
           *wg = malloc((n + 1) * 8), *wbe = malloc((n + 1) * 8), *t = malloc((N + 1) * 8),
           *wc = malloc((N + 1) * 8), *wcb = malloc((n + 1) * 8), *wcg = malloc((n + 1) * 8),
           *wcbe = malloc((n + 1) * 8), *b = malloc((N + 1) * 8), *bg = malloc((n + 1) * 8),
           *bbe = malloc((n + 1) * 8), *bc = malloc((N + 1) * 8), *bcg = malloc((n + 1) * 8),
           *bcbe = malloc((n + 1) * 8), *dummy = malloc((N + 1) * 8), *zeros = calloc(N + 1, 8),
           *sb = malloc((2 * n + 1) * 8), *sa = sb ? sb + n : NULL;
    int rc = RN_TWIN_NOMEM;
    mpfr_t s;
    residual_exact_init(s);
    if (!w || !wsk || !wb || !wg || !wbe || !t || !wc || !wcb || !wcg || !wcbe || !b || !bg ||
        !bbe || !bc || !bcg || !bcbe || !dummy || !zeros || !sb)
        goto out;
    rc = skip_layernorm_backward_mpfr(w, wsk, wb, wg, wbe, dy, x, skip, gamma, bias, rows, n, eps,
                                      RN_F64);
    if (rc)
        goto out;
    for (size_t i = 0; i < N; i++)
        bdx[i] = 0.0;
    for (size_t j = 0; j < n; j++)
        bdbias[j] = bdgamma[j] = bdbeta[j] = 0.0;
    for (int order = 0; order < (bias ? 4 : 1); order++) {
        for (size_t i = 0; i < N; i++)
            t[i] = skip_sum_in(s, x[i], skip[i], bias ? &bias[i % n] : NULL, order, compute);
        /* (compute, out) for the outputs; (compute, compute) for the dx summed into dbias */
        rc = layernorm_backward_bound(b, bg, bbe, dy, t, gamma, rows, n, eps, compute, out);
        if (!rc)
            rc = layernorm_backward_bound(bc, bcg, bcbe, dy, t, gamma, rows, n, eps, compute,
                                          compute);
        if (!rc) /* the twin on t (skip 0, no bias: t itself) */
            rc = skip_layernorm_backward_mpfr(wc, dummy, wcb, wcg, wcbe, dy, t, zeros, gamma,
                                              NULL, rows, n, eps, RN_F64);
        if (!rc && skip_dbias_sums(sb, sa, bc, wc, rows, n))
            rc = RN_TWIN_NOMEM;
        if (rc)
            goto out;
        for (size_t i = 0; i < N; i++)
            bdx[i] = fmax(bdx[i], skip_compose(b[i], wc[i], w[i]));
        for (size_t j = 0; j < n; j++) {
            bdgamma[j] = fmax(bdgamma[j], skip_compose(bg[j], wcg[j], wg[j]));
            bdbeta[j] = fmax(bdbeta[j], skip_compose(bbe[j], wcbe[j], wbe[j]));
            bdbias[j] = fmax(bdbias[j], skip_dbias_bound(sb[j], sa[j], rows, wcb[j], wb[j],
                                                         compute, out));
        }
    }
    rc = 0;
out:
    mpfr_clear(s);
    free(w), free(wsk), free(wb), free(wg), free(wbe), free(t), free(wc), free(wcb), free(wcg);
    free(wcbe), free(b), free(bg), free(bbe), free(bc), free(bcg), free(bcbe), free(dummy);
    free(zeros), free(sb);
    return rc;
}
