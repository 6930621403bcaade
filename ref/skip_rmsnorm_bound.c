/* Per-element bounds for skip + RMSNorm: the composition of specs/error-analysis-residual.md §7-§8,
 * exactly as ref/skip_layernorm_bound.c does it for LayerNorm.
 *
 * An admitted implementation computes RMSNorm, with its own rounding errors, on a rounded sum t_c
 * (order c, ref/skip_rmsnorm_bound.h) instead of the exact sum s; t_c is determined (IEEE adds), so
 *   |got - want| <= B_RMS(t_c) + |RN64(RMS(t_c)) - RN64(RMS(s))|   (times 1 + 2^-52 for the difference),
 * B_RMS the bound of ref/rmsnorm_bound.c on the data t_c, and the propagation evaluated exactly by
 * the twins; the maximum over the admitted orders.  sum: the a-priori bound of the additions
 * (skip_sum_bound).  Void (+Inf): t_c overflows in the row (RMSNorm of a row with an infinity
 * is finite -- rstd = 0 -- so this is checked explicitly, unlike LayerNorm's NaN), RMS(t_c) is
 * not finite while RMS(s) is (a row that rounding made zero, eps = 0), or B_RMS is +Inf.
 * Backward (§9): the same composition for dx (= dskip) and dgamma, and skip_dbias_bound for dbias. */
#include "skip_rmsnorm_bound.h"

#include <math.h>
#include <stdlib.h>

#include <mpfr.h>

#include "residual_mpfr.h"
#include "rmsnorm_bound.h"
#include "rmsnorm_mpfr.h"
#include "skip_layernorm_bound.h"
#include "skip_layernorm_mpfr.h"
#include "skip_rmsnorm_mpfr.h"

int skip_rmsnorm_forward_bound(double *by, double *brstd, double *bsum, const double *x,
                               const double *skip, const double *gamma, const double *bias,
                               size_t rows, size_t n, double eps, int offset, rn_dtype compute,
                               rn_dtype out)
{
    size_t N = rows * n;
    double *w = malloc((N + 1) * sizeof *w), *wr = malloc((rows + 1) * sizeof *wr),
           *ws = malloc((N + 1) * sizeof *ws), *t = malloc((N + 1) * sizeof *t),
           *wc = malloc((N + 1) * sizeof *wc), *wcr = malloc((rows + 1) * sizeof *wcr),
           *b = malloc((N + 1) * sizeof *b), *br = malloc((rows + 1) * sizeof *br);
    int rc = RN_TWIN_NOMEM;
    double *es = NULL;
    mpfr_t s;
    residual_exact_init(s);
    if (!w || !wr || !ws || !t || !wc || !wcr || !b || !br)
        goto out;
    rc = skip_rmsnorm_forward_mpfr(w, wr, ws, x, skip, gamma, bias, rows, n, eps, offset, RN_F64);
    if (rc)
        goto out;
    for (size_t i = 0; i < N; i++)
        by[i] = bsum[i] = 0.0;
    for (size_t r = 0; r < rows; r++)
        brstd[r] = 0.0;
    /* the sum's a-priori bound does not depend on the order: formed once per element */
    es = skip_sum_bounds(s, ws, x, skip, bias, rows, n, compute, out);
    if (!es) {
        rc = RN_TWIN_NOMEM;
        goto out;
    }
    for (int order = 0; order < (bias ? 4 : 1); order++) {
        for (size_t i = 0; i < N; i++)
            t[i] = skip_sum_in(s, x[i], skip[i], bias ? &bias[i % n] : NULL, order, compute);
        rc = rmsnorm_forward_bound(b, br, t, gamma, rows, n, eps, offset, compute, out);
        if (!rc)
            rc = rmsnorm_forward_mpfr(wc, wcr, t, gamma, rows, n, eps, offset, RN_F64);
        if (rc)
            goto out;
        /* A row whose rounded sum overflows while the exact one is finite is void: RMSNorm of a
           row with an infinity is still finite (rstd = 0, y = 0 off the infinite elements), so
           skip_compose alone would give the vacuous |0 - w|; the analysis says nothing there. */
        for (size_t r = 0; r < rows; r++) {
            int ovf = 0;
            for (size_t j = 0; j < n; j++)
                ovf |= isinf(t[r * n + j]) && isfinite(ws[r * n + j]);
            if (ovf) {
                for (size_t j = 0; j < n; j++)
                    if (isfinite(w[r * n + j]))
                        b[r * n + j] = INFINITY;
                if (isfinite(wr[r]))
                    br[r] = INFINITY;
            }
        }
        for (size_t i = 0; i < N; i++) {
            by[i] = fmax(by[i], skip_compose(b[i], wc[i], w[i]));
            double e; /* sum: the a-priori bound; void if this order's t or its rounding overflows */
            if (!isfinite(ws[i]))
                e = 0.0;
            else if (!isfinite(t[i]) || isinf(rn_round(t[i], out)))
                e = INFINITY;
            else
                e = es[i];
            bsum[i] = fmax(bsum[i], e);
        }
        for (size_t r = 0; r < rows; r++)
            brstd[r] = fmax(brstd[r], skip_compose(br[r], wcr[r], wr[r]));
    }
    rc = 0;
out:
    mpfr_clear(s);
    free(es);
    free(w), free(wr), free(ws), free(t), free(wc), free(wcr), free(b), free(br);
    return rc;
}

/* ---------------------------------------------------------------- backward (§9) */

int skip_rmsnorm_backward_bound(double *bdx, double *bdbias, double *bdgamma, const double *dy,
                                const double *x, const double *skip, const double *gamma,
                                const double *bias, size_t rows, size_t n, double eps, int offset,
                                rn_dtype compute, rn_dtype out)
{
    size_t N = rows * n;
    double *w = malloc((N + 1) * 8), *wsk = malloc((N + 1) * 8), *wb = malloc((n + 1) * 8),
           *wg = malloc((n + 1) * 8), *t = malloc((N + 1) * 8), *wc = malloc((N + 1) * 8),
           *wcb = malloc((n + 1) * 8), *wcg = malloc((n + 1) * 8), *b = malloc((N + 1) * 8),
           *bg = malloc((n + 1) * 8), *bc = malloc((N + 1) * 8), *bcg = malloc((n + 1) * 8),
           *dummy = malloc((N + 1) * 8), *zeros = calloc(N + 1, 8), *sb = malloc((2 * n + 1) * 8),
           *sa = sb ? sb + n : NULL;
    int rc = RN_TWIN_NOMEM;
    mpfr_t s;
    residual_exact_init(s);
    if (!w || !wsk || !wb || !wg || !t || !wc || !wcb || !wcg || !b || !bg || !bc || !bcg ||
        !dummy || !zeros || !sb)
        goto out;
    rc = skip_rmsnorm_backward_mpfr(w, wsk, wb, wg, dy, x, skip, gamma, bias, rows, n, eps, offset,
                                    RN_F64);
    if (rc)
        goto out;
    for (size_t i = 0; i < N; i++)
        bdx[i] = 0.0;
    for (size_t j = 0; j < n; j++)
        bdbias[j] = bdgamma[j] = 0.0;
    for (int order = 0; order < (bias ? 4 : 1); order++) {
        int ovf = 0;
        for (size_t i = 0; i < N; i++) {
            t[i] = skip_sum_in(s, x[i], skip[i], bias ? &bias[i % n] : NULL, order, compute);
            /* the exact sum is finite (all addends finite) but the rounded one is not */
            ovf |= isinf(t[i]) && isfinite(skip_sum_class(x[i], skip[i], bias ? &bias[i % n] : NULL));
        }
        /* B on t for (compute, out): dx, dgamma; for (compute, compute): the dx terms that the
           implementation sums into dbias before any output rounding */
        rc = rmsnorm_backward_bound(b, bg, dy, t, gamma, rows, n, eps, offset, compute, out);
        if (!rc)
            rc = rmsnorm_backward_bound(bc, bcg, dy, t, gamma, rows, n, eps, offset, compute,
                                        compute);
        if (!rc) /* the twin on t: dx, dbias (its column sums), dgamma */
            rc = skip_rmsnorm_backward_mpfr(wc, dummy, wcb, wcg, dy, t, zeros, gamma, NULL, rows,
                                            n, eps, offset, RN_F64);
        if (!rc && skip_dbias_sums(sb, sa, bc, wc, rows, n))
            rc = RN_TWIN_NOMEM;
        if (rc)
            goto out;
        for (size_t i = 0; i < N; i++)
            bdx[i] = fmax(bdx[i], skip_compose(b[i], wc[i], w[i]));
        for (size_t j = 0; j < n; j++) {
            /* dgamma: void when a rounded sum overflowed (that row's terms are lost, not bounded) */
            double e = skip_compose(bg[j], wcg[j], wg[j]);
            if (ovf && isfinite(wg[j]))
                e = INFINITY;
            bdgamma[j] = fmax(bdgamma[j], e);
            /* dbias: §9 */
            bdbias[j] = fmax(bdbias[j], skip_dbias_bound(sb[j], sa[j], rows, wcb[j], wb[j],
                                                         compute, out));
        }
    }
    rc = 0;
out:
    mpfr_clear(s);
    free(w), free(wsk), free(wb), free(wg), free(t), free(wc), free(wcb), free(wcg);
    free(b), free(bg), free(bc), free(bcg), free(dummy), free(zeros), free(sb);
    return rc;
}
