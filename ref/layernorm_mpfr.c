/* MPFR twin of ref/layernorm.c: LayerNorm forward and backward, each output the exact real value
 * of the formula in specs/layernorm.h, rounded once to the requested format, certified.
 *
 * ---- How the exact value is reached ----
 * For one row (n elements, all values dyadic rationals), everything except one square root is
 * computed EXACTLY in MPFR (precision chosen from the operands' exponent span, see exact_prec):
 *   S    = sum_i x_i                          mean  = S / n
 *   D_i  = n x_i - S                          x_i - mean = D_i / n
 *   Q    = n sum_i x_i^2 - S^2 + n^2 eps      var + eps = Q / n^2   (Q >= 0: Cauchy-Schwarz)
 *   rstd = n / sqrt(Q)                        xhat_i = D_i / sqrt(Q)
 *   y_i  = (D_i gamma_i) / sqrt(Q) + beta_i
 * Backward, with g_i = dy_i gamma_i, G = sum_i g_i, H = sum_i g_i D_i (exact):
 *   mean(g) = G / n,  mean(g xhat) = H / (n sqrt(Q)),
 *   dx_i = rstd (g_i - mean(g) - xhat_i mean(g xhat)) = N_i / (Q sqrt(Q)),
 *          N_i = n Q g_i - Q G - D_i H                                      (exact)
 *   dgamma_j = sum_r dy_rj D_rj / sqrt(Q_r),    dbeta_j = sum_r dy_rj        (over all rows)
 * (Algebra: multiply dx_i's bracket by n Q / (n Q); each identity is a rewriting of
 * specs/layernorm.h with x_i - mean = D_i / n and var + eps = Q / n^2.)
 * So every output is  num / (c sqrt(Q)) + b  (or num / n, or a sum of such terms, or an exact sum)
 * with num, c, b, Q exact.
 *
 * ---- Certification (Ziv) ----
 * At working precision p = 64, 128, ..., 65536 bits the one inexact quantity is enclosed with
 * directed rounding: sqrt(Q) in [RNDD, RNDU], then num / den and + b with outward rounding (interval
 * arithmetic; sums of enclosures with mpfr_sum RNDD / RNDU).  If both ends of the enclosure round
 * (rn_round_mpfr: RN-even, subnormals, overflow) to the same value of the format, that value is the
 * correctly rounded exact result, since rounding is monotone.  Otherwise p is doubled.  Exact cases
 * terminate: when sqrt(Q) and the quotient are dyadic they are exact at some p (MPFR's RNDD and RNDU
 * then agree), the enclosure has width 0, and it rounds to one value (this is how y_i == beta_i, a
 * zero-variance row, or n = 1 are recognised).  A value that is not dyadic is not a midpoint of any
 * format, so a narrow enough enclosure certifies it.  Only a sum over rows of several irrational
 * terms that happens to be a midpoint could fail: then RN_TWIN_UNCERTIFIED, never a guess.
 *
 * ---- Signed zeros ----
 * An exact zero result is emitted as +0 (the reals have one zero).  A non-zero result that rounds
 * to zero keeps its sign (-0 for a tiny negative value), as IEEE rounding does.
 *
 * ---- NaN and Inf (what an IEEE kernel computing the two-pass formula gives) ----
 * The twin follows IEEE special-value arithmetic applied to the exact (finite) intermediates:
 *  - A row of x containing a NaN, or both +Inf and -Inf: mean = NaN.  Containing +Inf (resp. -Inf)
 *    and no NaN: mean = +Inf (resp. -Inf).  In both cases rstd = NaN (x_i - mean is NaN for the
 *    infinite element, so the variance is NaN) and every y of the row is NaN.  Backward: every dx of
 *    the row is NaN, and every dgamma_j is NaN (dy_rj * xhat_rj with xhat = NaN); dbeta unaffected.
 *  - eps = 0 and a constant row (var + eps = 0): rstd = +Inf, xhat = 0 * Inf = NaN, so y, dx and
 *    dgamma are NaN as above; mean is exact.
 *  - gamma_j or beta_j non-finite (finite row): y_rj = t * gamma_j + beta_j in IEEE special
 *    arithmetic with t = (x_rj - mean) rstd exact: t = 0 times +-Inf is NaN, t != 0 times +-Inf is
 *    +-Inf with the product's sign, Inf + (-Inf) is NaN, NaN propagates.  Column j is poisoned; the
 *    other columns are exact.
 *  - Backward, finite row: if some g_j = dy_j gamma_j is non-finite (Inf * 0 is NaN), mean(g) is
 *    non-finite and the whole row's dx is evaluated in IEEE special arithmetic
 *    dx_i = ((g_i - mean(g)) - xhat_i mean(g xhat)) rstd, giving +-Inf or NaN per element.
 *    dgamma_j = sum_r dy_rj xhat_rj and dbeta_j = sum_r dy_rj with a non-finite term are evaluated
 *    likewise (+Inf + -Inf = NaN, in any order).
 *  - eps must be finite and >= 0 (rn_parse_eps guarantees it); otherwise every output that depends on
 *    eps (rstd, y, dx, dgamma) is NaN.
 * Exact arithmetic never overflows: finite inputs give the exact real result, which rounds to +-Inf
 * only if it exceeds the output format's range (an IEEE kernel may overflow earlier; that is its
 * error, not the reference's).
 */
#include "layernorm_mpfr.h"
#include "exact_mpfr.h"
#include "norm_fast.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------------------------------------
 * Per-row state shared by forward and backward.
 */
typedef struct {
    size_t n;
    mpfr_t *xv;          /* [n] the row's x, exact (53 bits) */
    mpfr_t *t;           /* [n] scratch terms */
    mpfr_ptr *tp;        /* [n] pointers into xv or t for mpfr_sum */
    mpfr_t *D;           /* [n] D_i = n x_i - S */
    mpfr_t S, nmp, tmp, tmp2, tmp3;
    work w;
    mpfr_srcptr const *xs; /* NULL, or the row's exact inputs (layernorm_forward_mpfr_exact) */
} rowws;

static int rowws_init(rowws *r, size_t n)
{
    r->n = n;
    r->xv = malloc(n * sizeof *r->xv);
    r->t = malloc(n * sizeof *r->t);
    r->D = malloc(n * sizeof *r->D);
    r->tp = malloc((n < 3 ? 3 : n) * sizeof *r->tp);
    if (!r->xv || !r->t || !r->D || !r->tp) {
        free(r->xv), free(r->t), free(r->D), free(r->tp);
        return -1;
    }
    for (size_t i = 0; i < n; i++) {
        mpfr_init2(r->xv[i], 53);
        mpfr_init2(r->t[i], 53);
        mpfr_init2(r->D[i], 53);
    }
    mpfr_inits2(64, r->S, r->nmp, r->tmp, r->tmp2, r->tmp3, (mpfr_ptr)0);
    mpfr_set_ui(r->nmp, (unsigned long)n, MPFR_RNDN);
    work_init(&r->w);
    r->xs = NULL;
    return 0;
}

static void rowws_clear(rowws *r)
{
    for (size_t i = 0; i < r->n; i++) {
        mpfr_clear(r->xv[i]);
        mpfr_clear(r->t[i]);
        mpfr_clear(r->D[i]);
    }
    free(r->xv), free(r->t), free(r->D), free(r->tp);
    mpfr_clears(r->S, r->nmp, r->tmp, r->tmp2, r->tmp3, (mpfr_ptr)0);
    work_clear(&r->w);
}

/* Class of the row sum of x: E_FIN if every x_i is finite. */
static ext row_class(const double *x, size_t n)
{
    ext s = ext_fin(0);
    for (size_t i = 0; i < n; i++)
        if (!isfinite(x[i]))
            s = ext_add(s, ext_d(x[i]));
    return s;
}

/* For a row of finite x: S, D_i and Q (into sq->Q), all exact. */
static void row_exact(rowws *r, sqrt_cache *sq, const double *x, double eps)
{
    size_t n = r->n;
    for (size_t i = 0; i < n; i++) {
        if (r->xs) { /* an exact input of any precision: every step below stays exact */
            mpfr_set_prec(r->xv[i], mpfr_get_prec(r->xs[i]));
            mpfr_set(r->xv[i], r->xs[i], MPFR_RNDN);
        } else {
            set_d(r->xv[i], x[i]);
        }
        r->tp[i] = r->xv[i];
    }
    sum_exact(r->S, r->tp, n);                        /* S = sum x_i */
    for (size_t i = 0; i < n; i++) {
        mul_ui_exact(r->tmp, r->xv[i], (unsigned long)n);
        sub_exact(r->D[i], r->tmp, r->S);             /* D_i = n x_i - S */
        mul_exact(r->t[i], r->xv[i], r->xv[i]);       /* x_i^2 */
        r->tp[i] = r->t[i];
    }
    sum_exact(r->tmp, r->tp, n);                      /* sum x_i^2 */
    mul_ui_exact(r->tmp2, r->tmp, (unsigned long)n);  /* n sum x_i^2 */
    mul_exact(r->tmp, r->S, r->S);
    mpfr_neg(r->tmp, r->tmp, MPFR_RNDN);              /* -S^2 */
    set_d(r->tmp3, eps);
    mul_ui_exact(r->t[0], r->tmp3, (unsigned long)n);
    mul_ui_exact(r->tmp3, r->t[0], (unsigned long)n); /* n^2 eps */
    mpfr_ptr q[3] = {r->tmp2, r->tmp, r->tmp3};
    sq_reset(sq);
    sum_exact(sq->Q, q, 3);                           /* Q = n sum x^2 - S^2 + n^2 eps */
}

/* ------------------------------------------------------------------------------------------------
 * Forward.
 */

static int layernorm_row_forward_mpfr(double *y, double *mean, double *rstd, const double *x,
                                      const double *gamma, const double *beta, double eps,
                                      rn_dtype out, rowws *r, sqrt_cache *sq)
{
    size_t n = r->n;
    ext xs = row_class(x, n);
    if (xs.c != E_FIN) { /* non-finite x: mean is the class of the sum; rstd, y are NaN */
        *mean = ext_value(xs);
        *rstd = NAN;
        for (size_t i = 0; i < n; i++)
            y[i] = NAN;
        return RN_TWIN_OK;
    }
    row_exact(r, sq, x, eps);
    int rc = ziv_quot(mean, &r->w, r->S, NULL, r->nmp, NULL, out); /* mean = S / n */
    if (rc)
        return rc;

    int qs = mpfr_sgn(sq->Q);
    if (!(isfinite(eps) && eps >= 0) || qs <= 0) {
        /* bad eps: NaN; var + eps == 0: rstd = 1/sqrt(0) = +Inf and xhat = 0 * Inf = NaN */
        *rstd = (isfinite(eps) && eps >= 0) ? INFINITY : NAN;
        for (size_t i = 0; i < n; i++)
            y[i] = NAN;
        return RN_TWIN_OK;
    }
    rc = ziv_quot(rstd, &r->w, r->nmp, sq, NULL, NULL, out); /* rstd = n / sqrt(Q) */
    if (rc)
        return rc;

    for (size_t i = 0; i < n; i++) {
        if (!isfinite(gamma[i]) || !isfinite(beta[i])) { /* y = t gamma + beta, t exact finite */
            ext t = ext_fin(mpfr_sgn(r->D[i]));
            y[i] = ext_value(ext_add(ext_mul(t, ext_d(gamma[i])), ext_d(beta[i])));
            continue;
        }
        set_d(r->tmp3, gamma[i]);
        mul_exact(r->tmp, r->D[i], r->tmp3); /* B_i = D_i gamma_i */
        set_d(r->tmp2, beta[i]);
        rc = ziv_quot(&y[i], &r->w, r->tmp, sq, NULL, r->tmp2, out); /* y = B_i/sqrt(Q) + beta */
        if (rc)
            return rc;
    }
    return RN_TWIN_OK;
}

/* xs == NULL: the inputs are the doubles x; otherwise x gives only each element's class (finite,
   or its NaN / +-Inf) and xs the exact finite values (layernorm_forward_mpfr_exact). */
static int forward_driver(double *y, double *mean, double *rstd, const double *x,
                          mpfr_srcptr const *xs, const double *gamma, const double *beta,
                          size_t rows, size_t n, double eps, rn_dtype out)
{
    if (n == 0)
        return RN_TWIN_OK;
    /* The fast path (ref/layernorm_fast.c) first, on binary64 inputs: ok[k] marks the rows it
       certified; the twin computes the others. */
    unsigned char *ok = NULL;
    if (!xs && rows && rn_fast_enabled() && (ok = malloc(rows)) != NULL &&
        layernorm_forward_fast(y, mean, rstd, x, gamma, beta, rows, n, eps, out, ok) == 0) {
        free(ok);
        return RN_TWIN_OK;
    }
    rowws r;
    sqrt_cache sq;
    if (rowws_init(&r, n)) {
        free(ok);
        return RN_TWIN_NOMEM;
    }
    sq_init(&sq);
    int rc = RN_TWIN_OK;
    for (size_t k = 0; k < rows && rc == RN_TWIN_OK; k++) {
        if (ok && ok[k])
            continue;
        r.xs = xs ? xs + k * n : NULL;
        rc = layernorm_row_forward_mpfr(y + k * n, mean + k, rstd + k, x + k * n, gamma, beta, eps,
                                        out, &r, &sq);
    }
    sq_clear(&sq);
    rowws_clear(&r);
    free(ok);
    return rc;
}

int layernorm_forward_mpfr(double *y, double *mean, double *rstd, const double *x,
                           const double *gamma, const double *beta, size_t rows, size_t n,
                           double eps, rn_dtype out)
{
    return forward_driver(y, mean, rstd, x, NULL, gamma, beta, rows, n, eps, out);
}

int layernorm_forward_mpfr_exact(double *y, double *mean, double *rstd, const double *xcls,
                                 mpfr_srcptr const *xs, const double *gamma, const double *beta,
                                 size_t rows, size_t n, double eps, rn_dtype out)
{
    return forward_driver(y, mean, rstd, xcls, xs, gamma, beta, rows, n, eps, out);
}

/* ------------------------------------------------------------------------------------------------
 * Backward.
 */

/* Per row, what the column sums (dgamma) need afterwards. */
typedef struct {
    int bad;          /* xhat is NaN for the whole row (non-finite x, or var + eps == 0, or bad eps) */
    int special;      /* dx came from the IEEE special arithmetic (its values are classes) */
    mpfr_t S;         /* exact */
    mpfr_t G, H;      /* exact, when !special: sum g_i and sum g_i D_i (the column sums of dx) */
    sqrt_cache sq;    /* Q and sqrt(Q) */
} rowsave;

/* dx for one row: exact path when every g_i is finite, IEEE special arithmetic otherwise. */
static int layernorm_row_backward_mpfr(double *dx, const double *dy, const double *x,
                                       const double *gamma, double eps, rn_dtype out, rowws *r,
                                       rowsave *sv)
{
    size_t n = r->n;
    sv->bad = 0;
    sv->special = 1;
    if (row_class(x, n).c != E_FIN) {
        sv->bad = 1;
    } else {
        row_exact(r, &sv->sq, x, eps);
        mpfr_set_prec(sv->S, mpfr_get_prec(r->S));
        mpfr_set(sv->S, r->S, MPFR_RNDN);
        if (!(isfinite(eps) && eps >= 0) || mpfr_sgn(sv->sq.Q) <= 0)
            sv->bad = 1;
    }
    if (sv->bad) { /* xhat = NaN: dx = (... - NaN * mean_gx) * rstd = NaN */
        for (size_t i = 0; i < n; i++)
            dx[i] = NAN;
        return RN_TWIN_OK;
    }

    int gfinite = 1;
    for (size_t i = 0; i < n; i++)
        if (!isfinite(dy[i]) || !isfinite(gamma[i]))
            gfinite = 0;
    if (!gfinite) {
        /* IEEE special arithmetic: g_i = dy_i gamma_i, mean_g = sum g / n, xhat_i finite with the
           sign of D_i, mean_gx = sum g xhat / n, dx_i = ((g_i - mean_g) - xhat_i mean_gx) rstd,
           rstd finite > 0 (division by n and multiplication by rstd keep the class). */
        ext sg = ext_fin(0), sgx = ext_fin(0);
        for (size_t i = 0; i < n; i++) {
            ext g = ext_mul(ext_d(dy[i]), ext_d(gamma[i]));
            sg = ext_add(sg, g);
            sgx = ext_add(sgx, ext_mul(g, ext_fin(mpfr_sgn(r->D[i]))));
        }
        for (size_t i = 0; i < n; i++) {
            ext g = ext_mul(ext_d(dy[i]), ext_d(gamma[i]));
            ext xh = ext_fin(mpfr_sgn(r->D[i]));
            ext v = ext_add(ext_add(g, ext_neg(sg)), ext_neg(ext_mul(xh, sgx)));
            dx[i] = ext_value(v);
        }
        return RN_TWIN_OK;
    }

    /* Exact path: g_i (in t), G, H = sum g_i D_i, then N_i = n Q g_i - Q G - D_i H. */
    mpfr_t G, H, nQ, QG, a, b;
    mpfr_inits2(64, G, H, nQ, QG, a, b, (mpfr_ptr)0);
    for (size_t i = 0; i < n; i++) {
        set_d(r->tmp, dy[i]);
        set_d(r->tmp2, gamma[i]);
        mul_exact(r->t[i], r->tmp, r->tmp2); /* g_i, exact in 106 bits */
        r->tp[i] = r->t[i];
    }
    sum_exact(G, r->tp, n);
    mpfr_t *gD = malloc(n * sizeof *gD);
    mpfr_ptr *gp = malloc(n * sizeof *gp);
    int rc = RN_TWIN_OK;
    if (!gD || !gp) {
        rc = RN_TWIN_NOMEM;
        goto done;
    }
    for (size_t i = 0; i < n; i++) {
        mpfr_init2(gD[i], 2);
        mul_exact(gD[i], r->t[i], r->D[i]);
        gp[i] = gD[i];
    }
    sum_exact(H, gp, n);
    for (size_t i = 0; i < n; i++)
        mpfr_clear(gD[i]);
    sv->special = 0;
    mpfr_set_prec(sv->G, mpfr_get_prec(G));
    mpfr_set(sv->G, G, MPFR_RNDN); /* exact */
    mpfr_set_prec(sv->H, mpfr_get_prec(H));
    mpfr_set(sv->H, H, MPFR_RNDN); /* exact */
    mul_ui_exact(nQ, sv->sq.Q, (unsigned long)n);
    mul_exact(QG, sv->sq.Q, G);
    mpfr_neg(QG, QG, MPFR_RNDN);
    for (size_t i = 0; i < n && rc == RN_TWIN_OK; i++) {
        mul_exact(a, nQ, r->t[i]);         /* n Q g_i */
        mul_exact(b, r->D[i], H);
        mpfr_neg(b, b, MPFR_RNDN);         /* -D_i H */
        mpfr_ptr terms[3] = {a, QG, b};
        sum_exact(r->tmp3, terms, 3);      /* N_i */
        rc = ziv_quot(&dx[i], &r->w, r->tmp3, &sv->sq, sv->sq.Q, NULL, out); /* N_i / (Q sqrt Q) */
    }
done:
    free(gD);
    free(gp);
    mpfr_clears(G, H, nQ, QG, a, b, (mpfr_ptr)0);
    return rc;
}

/* x_rj exactly: from xs when given (exact inputs), else the double. */
static void set_x(mpfr_t v, const double *x, mpfr_srcptr const *xs, size_t i)
{
    if (xs) {
        mpfr_set_prec(v, mpfr_get_prec(xs[i]));
        mpfr_set(v, xs[i], MPFR_RNDN); /* exact */
    } else {
        set_d(v, x[i]);
    }
}

static int dx_column_sums(double *dxsum, const double *dx, const double *dy, const double *x,
                          mpfr_srcptr const *xs, const double *gamma, size_t rows, size_t n,
                          rn_dtype out, rowws *r, rowsave *sv);

/* xs == NULL: the inputs are the doubles x; otherwise x gives each element's class and xs the
   exact finite values (layernorm_backward_mpfr_exact).  dxsum (may be NULL): the column sums of dx
   over all rows (the bias gradient of a fused skip + LayerNorm), certified as dgamma is. */
static int backward_driver(double *dx, double *dgamma, double *dbeta, double *dxsum,
                           const double *dy, const double *x, mpfr_srcptr const *xs,
                           const double *gamma, size_t rows, size_t n, double eps, rn_dtype out)
{
    if (n == 0)
        return RN_TWIN_OK;
    rowws r;
    if (rowws_init(&r, n))
        return RN_TWIN_NOMEM;
    rowsave *sv = calloc(rows ? rows : 1, sizeof *sv);
    mpfr_t *lo = malloc((rows ? rows : 1) * sizeof *lo), *hi = malloc((rows ? rows : 1) * sizeof *hi);
    mpfr_ptr *lp = malloc((rows ? rows : 1) * sizeof *lp), *hp = malloc((rows ? rows : 1) * sizeof *hp);
    if (!sv || !lo || !hi || !lp || !hp) {
        free(sv), free(lo), free(hi), free(lp), free(hp);
        rowws_clear(&r);
        return RN_TWIN_NOMEM;
    }
    for (size_t k = 0; k < rows; k++) {
        mpfr_inits2(2, sv[k].S, sv[k].G, sv[k].H, (mpfr_ptr)0);
        sq_init(&sv[k].sq);
        mpfr_inits2(P0, lo[k], hi[k], (mpfr_ptr)0);
        lp[k] = lo[k];
        hp[k] = hi[k];
    }
    int rc = RN_TWIN_OK;
    int anybad = 0;
    for (size_t k = 0; k < rows && rc == RN_TWIN_OK; k++) {
        r.xs = xs ? xs + k * n : NULL;
        rc = layernorm_row_backward_mpfr(dx + k * n, dy + k * n, x + k * n, gamma, eps, out, &r,
                                         &sv[k]);
        anybad |= sv[k].bad;
    }
    r.xs = NULL;
    if (dxsum && rc == RN_TWIN_OK)
        rc = dx_column_sums(dxsum, dx, dy, x, xs, gamma, rows, n, out, &r, sv);

    /* Column sums over all rows, from zero. */
    mpfr_t slo, shi;
    mpfr_inits2(P0, slo, shi, (mpfr_ptr)0);
    for (size_t j = 0; j < n && rc == RN_TWIN_OK; j++) {
        /* dbeta_j = sum_r dy_rj: exact, rounded once */
        ext cls = ext_fin(0);
        for (size_t k = 0; k < rows; k++)
            cls = ext_add(cls, ext_d(dy[k * n + j]));
        if (cls.c != E_FIN) {
            dbeta[j] = ext_value(cls);
        } else {
            for (size_t k = 0; k < rows; k++) {
                set_d(lo[k], dy[k * n + j]);
                lp[k] = lo[k];
            }
            sum_exact(slo, lp, rows);
            dbeta[j] = round_exact(slo, out);
        }

        /* dgamma_j = sum_r dy_rj xhat_rj = sum_r dy_rj D_rj / sqrt(Q_r) */
        if (anybad) {
            dgamma[j] = NAN;
            continue;
        }
        ext gc = ext_fin(0);
        for (size_t k = 0; k < rows; k++) {
            set_x(r.tmp, x, xs, k * n + j);
            mul_ui_exact(r.tmp2, r.tmp, (unsigned long)n);
            sub_exact(r.tmp3, r.tmp2, sv[k].S); /* D_rj */
            gc = ext_add(gc, ext_mul(ext_d(dy[k * n + j]), ext_fin(mpfr_sgn(r.tmp3))));
        }
        if (gc.c != E_FIN) {
            dgamma[j] = ext_value(gc);
            continue;
        }
        int done = 0;
        for (int lev = 0; lev < NLEV && !done; lev++) {
            for (size_t k = 0; k < rows; k++) {
                set_x(r.tmp, x, xs, k * n + j);
                mul_ui_exact(r.tmp2, r.tmp, (unsigned long)n);
                sub_exact(r.tmp3, r.tmp2, sv[k].S);   /* D_rj */
                set_d(r.tmp, dy[k * n + j]);
                mul_exact(r.tmp2, r.tmp, r.tmp3);     /* dy_rj D_rj */
                enclose_quot(lo[k], hi[k], &r.w, r.tmp2, &sv[k].sq, NULL, NULL, lev);
            }
            mpfr_set_prec(slo, (mpfr_prec_t)P0 << lev);
            mpfr_set_prec(shi, (mpfr_prec_t)P0 << lev);
            mpfr_sum(slo, (const mpfr_ptr *)lp, rows, MPFR_RNDD);
            mpfr_sum(shi, (const mpfr_ptr *)hp, rows, MPFR_RNDU);
            done = certify(&dgamma[j], slo, shi, out);
        }
        if (!done)
            rc = RN_TWIN_UNCERTIFIED;
    }
    mpfr_clears(slo, shi, (mpfr_ptr)0);

    for (size_t k = 0; k < rows; k++) {
        mpfr_clears(sv[k].S, sv[k].G, sv[k].H, (mpfr_ptr)0);
        sq_clear(&sv[k].sq);
        mpfr_clears(lo[k], hi[k], (mpfr_ptr)0);
    }
    free(sv), free(lo), free(hi), free(lp), free(hp);
    rowws_clear(&r);
    return rc;
}

/* dx of the rows r with ok[r] = 0 alone: the twin on those rows gathered (each row's dx depends
   on that row only; the sums it also forms are dropped). */
static int dx_of_rows_left(double *dx, const unsigned char *ok, const double *dy, const double *x,
                           const double *gamma, size_t rows, size_t n, double eps, rn_dtype out)
{
    size_t k = 0;
    for (size_t r = 0; r < rows; r++)
        k += !ok[r];
    double *buf = calloc(3 * k * n + 2 * n + 1, sizeof *buf);
    if (!buf)
        return RN_TWIN_NOMEM;
    double *xs = buf, *dys = xs + k * n, *dxs = dys + k * n, *dg = dxs + k * n, *db = dg + n;
    rows_left_gather(xs, x, ok, rows, n);
    rows_left_gather(dys, dy, ok, rows, n);
    int rc = backward_driver(dxs, dg, db, NULL, dys, xs, NULL, gamma, k, n, eps, out);
    if (rc == RN_TWIN_OK)
        rows_left_scatter(dx, dxs, ok, rows, n);
    free(buf);
    return rc;
}

int layernorm_backward_mpfr(double *dx, double *dgamma, double *dbeta, const double *dy,
                            const double *x, const double *gamma, size_t rows, size_t n,
                            double eps, rn_dtype out)
{
    /* The fast path (ref/layernorm_fast.c) first: all outputs certified; or all but the dx of a
       few rows, which the twin computes alone; or the twin computes all. */
    if (rn_fast_enabled()) {
        unsigned char *ok = malloc(rows ? rows : 1);
        int f = ok ? layernorm_backward_fast(dx, dgamma, dbeta, dy, x, gamma, rows, n, eps, out,
                                             ok)
                   : 0;
        int rc = f == 2 ? dx_of_rows_left(dx, ok, dy, x, gamma, rows, n, eps, out) : RN_TWIN_OK;
        free(ok);
        if (f)
            return rc;
    }
    return backward_driver(dx, dgamma, dbeta, NULL, dy, x, NULL, gamma, rows, n, eps, out);
}

int layernorm_backward_mpfr_exact(double *dx, double *dgamma, double *dbeta, double *dxsum,
                                  const double *dy, const double *xcls, mpfr_srcptr const *xs,
                                  const double *gamma, size_t rows, size_t n, double eps,
                                  rn_dtype out)
{
    return backward_driver(dx, dgamma, dbeta, dxsum, dy, xcls, xs, gamma, rows, n, eps, out);
}

/* dxsum_j = sum_r dx_rj = sum_r N_rj / (Q_r sqrt(Q_r)),  N_rj = n Q_r g_rj - Q_r G_r - D_rj H_r
   with D_rj = n x_rj - S_r (the exact numerators of the row pass), summed with mpfr_sum on
   enclosures (RNDD / RNDU) and certified as dgamma is.  Rows whose dx came from the special
   arithmetic contribute their class (IEEE addition of classes). */
static int dx_column_sums(double *dxsum, const double *dx, const double *dy, const double *x,
                          mpfr_srcptr const *xs, const double *gamma, size_t rows, size_t n,
                          rn_dtype out, rowws *r, rowsave *sv)
{
    size_t R = rows ? rows : 1;
    mpfr_t *Nv = malloc(R * sizeof *Nv), *lo = malloc(R * sizeof *lo), *hi = malloc(R * sizeof *hi);
    mpfr_ptr *lp = malloc(R * sizeof *lp), *hp = malloc(R * sizeof *hp);
    size_t *which = malloc(R * sizeof *which);
    if (!Nv || !lo || !hi || !lp || !hp || !which) {
        free(Nv), free(lo), free(hi), free(lp), free(hp), free(which);
        return RN_TWIN_NOMEM;
    }
    for (size_t k = 0; k < rows; k++)
        mpfr_inits2(P0, Nv[k], lo[k], hi[k], (mpfr_ptr)0);
    mpfr_t a, b, c, D, slo, shi;
    mpfr_inits2(P0, a, b, c, D, slo, shi, (mpfr_ptr)0);
    int rc = RN_TWIN_OK;
    for (size_t j = 0; j < n && rc == RN_TWIN_OK; j++) {
        ext cls = ext_fin(0);
        size_t m = 0; /* exact rows with a non-zero numerator */
        for (size_t k = 0; k < rows; k++) {
            size_t i = k * n + j;
            if (sv[k].special) {
                cls = ext_add(cls, ext_d(dx[i]));
                continue;
            }
            set_x(r->tmp, x, xs, i);
            mul_ui_exact(r->tmp2, r->tmp, (unsigned long)n);
            sub_exact(D, r->tmp2, sv[k].S);                /* D_rj */
            set_d(r->tmp, dy[i]);
            set_d(r->tmp2, gamma[j]);
            mul_exact(r->tmp3, r->tmp, r->tmp2);           /* g_rj */
            mul_exact(r->tmp, sv[k].sq.Q, r->tmp3);
            mul_ui_exact(a, r->tmp, (unsigned long)n);     /* n Q g_rj */
            mul_exact(b, sv[k].sq.Q, sv[k].G);
            mpfr_neg(b, b, MPFR_RNDN);                     /* -Q G */
            mul_exact(c, D, sv[k].H);
            mpfr_neg(c, c, MPFR_RNDN);                     /* -D_rj H */
            mpfr_ptr terms[3] = {a, b, c};
            sum_exact(Nv[k], terms, 3);                    /* N_rj */
            if (!mpfr_zero_p(Nv[k]))
                which[m++] = k;
        }
        if (cls.c != E_FIN) {
            dxsum[j] = ext_value(cls);
            continue;
        }
        if (m == 0) {
            dxsum[j] = 0.0; /* an exact zero: +0 */
            continue;
        }
        int done = 0;
        for (int lev = 0; lev < NLEV && !done; lev++) {
            for (size_t q = 0; q < m; q++) {
                size_t k = which[q];
                enclose_quot(lo[q], hi[q], &r->w, Nv[k], &sv[k].sq, sv[k].sq.Q, NULL, lev);
                lp[q] = lo[q], hp[q] = hi[q];
            }
            mpfr_set_prec(slo, (mpfr_prec_t)P0 << lev);
            mpfr_set_prec(shi, (mpfr_prec_t)P0 << lev);
            mpfr_sum(slo, (const mpfr_ptr *)lp, m, MPFR_RNDD);
            mpfr_sum(shi, (const mpfr_ptr *)hp, m, MPFR_RNDU);
            done = certify(&dxsum[j], slo, shi, out);
        }
        if (!done)
            rc = RN_TWIN_UNCERTIFIED;
    }
    mpfr_clears(a, b, c, D, slo, shi, (mpfr_ptr)0);
    for (size_t k = 0; k < rows; k++)
        mpfr_clears(Nv[k], lo[k], hi[k], (mpfr_ptr)0);
    free(Nv), free(lo), free(hi), free(lp), free(hp), free(which);
    return rc;
}
