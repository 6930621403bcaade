/* MPFR twin of ref/rmsnorm.c: RMSNorm forward and backward, each output the exact real value of the
 * formula in specs/rmsnorm.h, rounded once to the requested format, certified.
 *
 * ---- How the exact value is reached ----
 * For one row (n elements, all values dyadic rationals), everything except one square root is
 * computed EXACTLY in MPFR (precision chosen from the operands' exponent span, see exact_prec):
 *   P    = sum_i x_i^2                       w_i = gamma_i  or  1 + gamma_i   (exact)
 *   Q    = n P + n^2 eps                      ms + eps = Q / n^2   (Q >= 0)
 *   rstd = n / sqrt(Q)                        xhat_i = n x_i / sqrt(Q)
 *   y_i  = (n x_i w_i) / sqrt(Q)
 * Backward, with g_i = dy_i w_i and H = sum_j g_j x_j (exact):
 *   mean(g xhat) = H / sqrt(Q),
 *   dx_i = rstd (g_i - xhat_i mean(g xhat)) = N_i / (Q sqrt(Q)),   N_i = n Q g_i - n^2 x_i H
 *   dgamma_j = sum_r n dy_rj x_rj / sqrt(Q_r)                        (over all rows)
 * (Each identity is a rewriting of specs/rmsnorm.h with sqrt(ms + eps) = sqrt(Q) / n.)
 * So every output is  num / (c sqrt(Q))  (or a sum over rows of such terms) with num, c, Q exact.
 *
 * ---- Certification (Ziv), as in ref/layernorm_mpfr.c ----
 * At working precision p = 64, 128, ..., 65536 bits, sqrt(Q) is enclosed in [RNDD, RNDU], then the
 * quotient with outward rounding (sums over rows of enclosures with mpfr_sum RNDD / RNDU).  If both
 * ends round (rn_round_mpfr: RN-even, subnormals, overflow) to the same value of the format, that is
 * the correctly rounded exact result (rounding is monotone); otherwise p is doubled.  Exact cases
 * terminate: when sqrt(Q) and the quotient are dyadic they are exact at some p, the enclosure has
 * width 0 and rounds to one value.  This is how a constant row with eps = 0 (Q = n^2 c^2,
 * y_i = sign(c) w_i exactly), n = 1 with eps = 0 (y = sign(x) w), a zero row with eps > 0 (y = 0
 * exactly) or a perfect-square Q (x = [3, 4, 0, 0], eps = 0: rstd = 2/5) are recognised.  A
 * non-dyadic value is not a midpoint of any format, so a narrow enough enclosure certifies it; only
 * a sum over rows of irrational terms that happens to be a midpoint could fail: then
 * RN_TWIN_UNCERTIFIED, never a guess.
 *
 * ---- Signed zeros ----
 * An exact zero result is emitted as +0 (the reals have one zero).  A non-zero result that rounds
 * to zero keeps its sign (-0 for a tiny negative value), as IEEE rounding does.
 *
 * ---- NaN, Inf and 0/0 (what an IEEE kernel computing the formula gives) ----
 * IEEE special-value arithmetic applied to the exact (finite) intermediates, in the order of
 * specs/rmsnorm.h (sum of squares, rstd = 1/sqrt(ms + eps), xhat = x rstd, y = xhat w):
 *  - A row of x containing a NaN: sum x^2 is NaN, rstd = NaN, every y and dx of the row is NaN,
 *    and xhat = NaN poisons every dgamma_j (dy_rj xhat_rj = NaN).
 *  - A row containing +-Inf and no NaN: sum x^2 = +Inf (squares are >= 0: no Inf - Inf), so
 *    rstd = 1/sqrt(+Inf) = +0 (emitted +0).  xhat_i = x_i * 0 = 0 for finite x_i, NaN for the
 *    infinite ones; y_i = xhat_i w_i = 0 (emitted +0) for finite x_i and finite w_i, NaN otherwise.
 *    Backward: mean(g xhat) is NaN (the infinite element), so every dx of the row is NaN; the row's
 *    term of dgamma_j is dy_rj * 0 = 0 for finite x_rj and dy_rj (exactly nothing added), NaN
 *    otherwise.
 *  - The 0/0: an all-zero row with eps = 0 (ms + eps = 0): rstd = 1/sqrt(0) = +Inf and
 *    xhat = 0 * Inf = NaN, so y, dx and the row's dgamma terms are NaN.  (There is no limit to take:
 *    y = x/|x| depends on the direction of approach.)  With eps > 0 a zero row is ordinary:
 *    rstd = 1/sqrt(eps), y = 0 exactly (+0), dx_i = rstd g_i.
 *  - gamma_j non-finite (finite row): w_j = gamma_j or 1 + gamma_j is non-finite of the same class;
 *    y_rj = xhat_rj w_j with xhat exact finite: 0 * Inf = NaN, t != 0 times +-Inf is +-Inf with the
 *    product's sign, NaN propagates.  Column j is poisoned; the other columns are exact.
 *  - Backward, finite row: if some g_j = dy_j w_j is non-finite (Inf * 0 is NaN), mean(g xhat) is
 *    non-finite and the whole row's dx is evaluated in IEEE special arithmetic
 *    dx_i = (g_i - xhat_i mean(g xhat)) rstd (rstd finite > 0 keeps the class).  dgamma_j with a
 *    non-finite term is evaluated likewise (+Inf + -Inf = NaN, in any order).
 *  - eps must be finite and >= 0 (rn_parse_eps guarantees it); otherwise rstd, y, dx and dgamma
 *    are NaN.
 * Exact arithmetic never overflows: finite inputs give the exact real result, which rounds to +-Inf
 * only if it exceeds the output format's range (an IEEE kernel whose sum of squares overflows gets
 * rstd = 0 instead; that is its error, not the reference's, and the bound says so: +Inf).
 *
 * The exact-arithmetic and enclosure helpers are shared with ref/layernorm_mpfr.c: ref/exact_mpfr.h.
 */
#include "rmsnorm_mpfr.h"
#include "exact_mpfr.h"
#include "norm_fast.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* w = gamma (offset 0) or 1 + gamma (offset 1), exactly; tmp is scratch. */
static void weight_exact(mpfr_t w, double gamma, int offset, mpfr_t tmp)
{
    if (!offset) {
        set_d(w, gamma);
        return;
    }
    set_d(tmp, gamma);
    mpfr_t one;
    mpfr_init2(one, 2);
    mpfr_set_ui(one, 1, MPFR_RNDN);
    add_exact(w, one, tmp);
    mpfr_clear(one);
}

/* w = gamma or 1 + gamma, as a class (1 + Inf = Inf, 1 + NaN = NaN). */
static ext ext_w(double gamma, int offset)
{
    ext g = ext_d(gamma);
    return offset ? ext_add(ext_fin(1), g) : g;
}

/* ------------------------------------------------------------------------------------------------
 * Per-row state.
 */

/* What a row is, for the special-value rules above. */
typedef enum {
    ROW_OK,     /* finite x, valid eps, Q > 0: the exact path */
    ROW_NAN,    /* NaN in x, or invalid eps: rstd = NaN, xhat = NaN everywhere */
    ROW_INF,    /* +-Inf in x, no NaN: rstd = +0, xhat = 0 (finite x_i) or NaN (infinite x_i) */
    ROW_ZERO    /* all-zero x, eps = 0: rstd = +Inf, xhat = NaN everywhere */
} row_kind;

/* The class of xhat_i in a row of kind k (k != ROW_OK). */
static ext xhat_class(row_kind k, double xi)
{
    if (k == ROW_INF && isfinite(xi))
        return ext_fin(0);
    return ext_nan();
}

typedef struct {
    size_t n;
    mpfr_t *xv;          /* [n] the row's x, exact (53 bits) */
    mpfr_t *t;           /* [n] scratch terms */
    mpfr_ptr *tp;        /* [n] pointers into t for mpfr_sum */
    mpfr_t nmp, tmp, tmp2, tmp3, wv;
    work w;
} rowws;

static int rowws_init(rowws *r, size_t n)
{
    r->n = n;
    r->xv = malloc(n * sizeof *r->xv);
    r->t = malloc(n * sizeof *r->t);
    r->tp = malloc((n < 3 ? 3 : n) * sizeof *r->tp);
    if (!r->xv || !r->t || !r->tp) {
        free(r->xv), free(r->t), free(r->tp);
        return -1;
    }
    for (size_t i = 0; i < n; i++) {
        mpfr_init2(r->xv[i], 53);
        mpfr_init2(r->t[i], 53);
    }
    mpfr_inits2(64, r->nmp, r->tmp, r->tmp2, r->tmp3, r->wv, (mpfr_ptr)0);
    mpfr_set_ui(r->nmp, (unsigned long)n, MPFR_RNDN);
    work_init(&r->w);
    return 0;
}

static void rowws_clear(rowws *r)
{
    for (size_t i = 0; i < r->n; i++) {
        mpfr_clear(r->xv[i]);
        mpfr_clear(r->t[i]);
    }
    free(r->xv), free(r->t), free(r->tp);
    mpfr_clears(r->nmp, r->tmp, r->tmp2, r->tmp3, r->wv, (mpfr_ptr)0);
    work_clear(&r->w);
}

/* Classify the row and, for a row of finite x with valid eps, compute x (exact) and
   Q = n sum x_i^2 + n^2 eps (into sq->Q, exact).  xs == NULL: x holds the values; otherwise xs[i]
   is the exact value of element i (any precision) and x[i] a proxy of its class and sign
   (exact_proxy). */
static row_kind row_exact(rowws *r, sqrt_cache *sq, const double *x, mpfr_srcptr const *xs,
                          double eps)
{
    size_t n = r->n;
    int has_nan = 0, has_inf = 0;
    for (size_t i = 0; i < n; i++) {
        has_nan |= isnan(x[i]);
        has_inf |= isinf(x[i]);
    }
    if (has_nan || !(isfinite(eps) && eps >= 0))
        return ROW_NAN;
    if (has_inf)
        return ROW_INF;
    for (size_t i = 0; i < n; i++) {
        if (xs) {
            mpfr_set_prec(r->xv[i], mpfr_get_prec(xs[i]));
            mpfr_set(r->xv[i], xs[i], MPFR_RNDN);    /* exact: same precision */
        } else {
            set_d(r->xv[i], x[i]);
        }
        mul_exact(r->t[i], r->xv[i], r->xv[i]);      /* x_i^2 */
        r->tp[i] = r->t[i];
    }
    sum_exact(r->tmp, r->tp, n);                     /* P = sum x_i^2 */
    mul_ui_exact(r->tmp2, r->tmp, (unsigned long)n); /* n P */
    set_d(r->tmp3, eps);
    mul_ui_exact(r->tmp, r->tmp3, (unsigned long)n);
    mul_ui_exact(r->tmp3, r->tmp, (unsigned long)n); /* n^2 eps */
    mpfr_ptr q[2] = {r->tmp2, r->tmp3};
    sq_reset(sq);
    sum_exact(sq->Q, q, 2);                          /* Q */
    return mpfr_sgn(sq->Q) > 0 ? ROW_OK : ROW_ZERO;
}

/* ------------------------------------------------------------------------------------------------
 * Forward.
 */

static int rmsnorm_row_forward_mpfr(double *y, double *rstd, const double *x,
                                    mpfr_srcptr const *xs, const double *gamma, double eps,
                                    int offset, rn_dtype out, rowws *r, sqrt_cache *sq)
{
    size_t n = r->n;
    row_kind k = row_exact(r, sq, x, xs, eps);
    if (k != ROW_OK) {
        *rstd = k == ROW_NAN ? NAN : k == ROW_INF ? 0.0 : INFINITY;
        for (size_t i = 0; i < n; i++)
            y[i] = ext_value(ext_mul(xhat_class(k, x[i]), ext_w(gamma[i], offset)));
        return RN_TWIN_OK;
    }
    int rc = ziv_quot(rstd, &r->w, r->nmp, sq, NULL, NULL, out); /* rstd = n / sqrt(Q) */
    if (rc)
        return rc;
    for (size_t i = 0; i < n; i++) {
        if (!isfinite(gamma[i])) { /* y = xhat w, xhat exact finite with the sign of x */
            y[i] = ext_value(ext_mul(ext_d(x[i]), ext_w(gamma[i], offset)));
            continue;
        }
        weight_exact(r->wv, gamma[i], offset, r->tmp3);
        mul_exact(r->tmp, r->xv[i], r->wv);                  /* x_i w_i */
        mul_ui_exact(r->tmp2, r->tmp, (unsigned long)n);     /* n x_i w_i */
        rc = ziv_quot(&y[i], &r->w, r->tmp2, sq, NULL, NULL, out); /* y = n x w / sqrt(Q) */
        if (rc)
            return rc;
    }
    return RN_TWIN_OK;
}

/* x (doubles) or xs (exact values, x then the class/sign proxies): see the two entry points. */
static int forward_rows(double *y, double *rstd, const double *x, mpfr_srcptr const *xs,
                        const double *gamma, size_t rows, size_t n, double eps, int offset,
                        rn_dtype out)
{
    if (n == 0)
        return RN_TWIN_OK;
    /* The fast path (ref/rmsnorm_fast.c) first, on binary64 inputs: ok[k] marks the rows it
       certified; the twin computes the others. */
    unsigned char *ok = NULL;
    if (!xs && rows && rn_fast_enabled() && (ok = malloc(rows)) != NULL &&
        rmsnorm_forward_fast(y, rstd, x, gamma, rows, n, eps, offset, out, ok) == 0) {
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
    for (size_t k = 0; k < rows && rc == RN_TWIN_OK; k++)
        if (!(ok && ok[k]))
            rc = rmsnorm_row_forward_mpfr(y + k * n, rstd + k, x + k * n, xs ? xs + k * n : NULL,
                                      gamma, eps, offset, out, &r, &sq);
    sq_clear(&sq);
    rowws_clear(&r);
    free(ok);
    return rc;
}

/* ------------------------------------------------------------------------------------------------
 * Backward.
 */

/* dx for one row: exact path when the row is ROW_OK and every g_i is finite; IEEE special
   arithmetic otherwise.  *kind receives the row's kind (the column sums need it); *special is 1
   when dx came from the special arithmetic (its values are then classes), else 0 and Hsave (if not
   NULL) receives the exact H = sum g_j x_j (the column sums of dx need it). */
static int rmsnorm_row_backward_mpfr(double *dx, const double *dy, const double *x,
                                     mpfr_srcptr const *xs, const double *gamma, double eps,
                                     int offset, rn_dtype out, rowws *r, sqrt_cache *sq,
                                     row_kind *kind, int *special, mpfr_ptr Hsave)
{
    size_t n = r->n;
    row_kind k = row_exact(r, sq, x, xs, eps);
    *kind = k;
    *special = 1;
    if (k != ROW_OK) { /* xhat is NaN somewhere in the row, so mean(g xhat) and every dx are NaN */
        for (size_t i = 0; i < n; i++)
            dx[i] = NAN;
        return RN_TWIN_OK;
    }

    int gfinite = 1;
    for (size_t i = 0; i < n; i++)
        if (!isfinite(dy[i]) || !isfinite(gamma[i]))
            gfinite = 0;
    if (!gfinite) {
        /* IEEE special arithmetic: g_i = dy_i w_i, xhat_i finite with the sign of x_i,
           mean_gx = sum g xhat / n, dx_i = (g_i - xhat_i mean_gx) rstd, rstd finite > 0. */
        ext sgx = ext_fin(0);
        for (size_t i = 0; i < n; i++)
            sgx = ext_add(sgx, ext_mul(ext_mul(ext_d(dy[i]), ext_w(gamma[i], offset)),
                                       ext_d(x[i])));
        for (size_t i = 0; i < n; i++) {
            ext g = ext_mul(ext_d(dy[i]), ext_w(gamma[i], offset));
            ext v = ext_add(g, ext_neg(ext_mul(ext_d(x[i]), sgx)));
            dx[i] = v.c == E_FIN ? NAN : ext_value(v); /* E_FIN cannot occur: sgx is non-finite */
        }
        return RN_TWIN_OK;
    }

    /* Exact path: g_i (in t), H = sum g_i x_i, then N_i = n Q g_i - n^2 x_i H. */
    mpfr_t H, nQ, nnH, a, b, gx;
    mpfr_inits2(64, H, nQ, nnH, a, b, gx, (mpfr_ptr)0);
    mpfr_t *gX = malloc(n * sizeof *gX);
    mpfr_ptr *gp = malloc(n * sizeof *gp);
    int rc = RN_TWIN_OK;
    if (!gX || !gp) {
        rc = RN_TWIN_NOMEM;
        goto done;
    }
    for (size_t i = 0; i < n; i++) {
        weight_exact(r->wv, gamma[i], offset, r->tmp3);
        set_d(r->tmp, dy[i]);
        mul_exact(r->t[i], r->tmp, r->wv); /* g_i */
        mpfr_init2(gX[i], 2);
        mul_exact(gX[i], r->t[i], r->xv[i]);
        gp[i] = gX[i];
    }
    sum_exact(H, gp, n);
    for (size_t i = 0; i < n; i++)
        mpfr_clear(gX[i]);
    *special = 0;
    if (Hsave) {
        mpfr_set_prec(Hsave, mpfr_get_prec(H));
        mpfr_set(Hsave, H, MPFR_RNDN); /* exact */
    }
    mul_ui_exact(nQ, sq->Q, (unsigned long)n);
    mul_ui_exact(a, H, (unsigned long)n);
    mul_ui_exact(nnH, a, (unsigned long)n);
    mpfr_neg(nnH, nnH, MPFR_RNDN);         /* -n^2 H */
    for (size_t i = 0; i < n && rc == RN_TWIN_OK; i++) {
        mul_exact(a, nQ, r->t[i]);         /* n Q g_i */
        mul_exact(b, r->xv[i], nnH);       /* -n^2 x_i H */
        mpfr_ptr terms[2] = {a, b};
        sum_exact(gx, terms, 2);           /* N_i */
        rc = ziv_quot(&dx[i], &r->w, gx, sq, sq->Q, NULL, out); /* N_i / (Q sqrt Q) */
    }
done:
    free(gX);
    free(gp);
    mpfr_clears(H, nQ, nnH, a, b, gx, (mpfr_ptr)0);
    return rc;
}

static int dx_column_sums(double *dxsum, const double *dx, const double *dy, const double *x,
                          mpfr_srcptr const *xs, const double *gamma, size_t rows, size_t n,
                          int offset, rn_dtype out, rowws *r, sqrt_cache *sq, const int *special,
                          mpfr_t *Hs);

/* dxsum (may be NULL): the column sums of dx over all rows, sum_r dx_rj (the bias gradient of
   skip_rmsnorm_backward), certified like dgamma. */
static int backward_rows(double *dx, double *dgamma, double *dxsum, const double *dy,
                         const double *x, mpfr_srcptr const *xs, const double *gamma, size_t rows,
                         size_t n, double eps, int offset, rn_dtype out)
{
    if (n == 0)
        return RN_TWIN_OK;
    rowws r;
    if (rowws_init(&r, n))
        return RN_TWIN_NOMEM;
    size_t R = rows ? rows : 1;
    sqrt_cache *sq = malloc(R * sizeof *sq);
    row_kind *kind = malloc(R * sizeof *kind);
    int *special = malloc(R * sizeof *special);
    mpfr_t *lo = malloc(R * sizeof *lo), *hi = malloc(R * sizeof *hi), *Hs = malloc(R * sizeof *Hs);
    mpfr_ptr *lp = malloc(R * sizeof *lp), *hp = malloc(R * sizeof *hp);
    if (!sq || !kind || !special || !lo || !hi || !Hs || !lp || !hp) {
        free(sq), free(kind), free(special), free(lo), free(hi), free(Hs), free(lp), free(hp);
        rowws_clear(&r);
        return RN_TWIN_NOMEM;
    }
    for (size_t k = 0; k < rows; k++) {
        sq_init(&sq[k]);
        mpfr_inits2(P0, lo[k], hi[k], Hs[k], (mpfr_ptr)0);
    }
    int rc = RN_TWIN_OK;
    for (size_t k = 0; k < rows && rc == RN_TWIN_OK; k++)
        rc = rmsnorm_row_backward_mpfr(dx + k * n, dy + k * n, x + k * n, xs ? xs + k * n : NULL,
                                       gamma, eps, offset, out, &r, &sq[k], &kind[k], &special[k],
                                       Hs[k]);
    if (dxsum && rc == RN_TWIN_OK)
        rc = dx_column_sums(dxsum, dx, dy, x, xs, gamma, rows, n, offset, out, &r, sq, special,
                            Hs);

    /* dgamma_j = sum_r dy_rj xhat_rj = sum_r n dy_rj x_rj / sqrt(Q_r), over all rows, from zero. */
    mpfr_t slo, shi;
    mpfr_inits2(P0, slo, shi, (mpfr_ptr)0);
    for (size_t j = 0; j < n && rc == RN_TWIN_OK; j++) {
        ext gc = ext_fin(0);
        size_t m = 0; /* rows with a non-zero exact term */
        for (size_t k = 0; k < rows; k++) {
            double xv = x[k * n + j], d = dy[k * n + j];
            ext xh = kind[k] == ROW_OK ? ext_d(xv) : xhat_class(kind[k], xv);
            ext term = ext_mul(ext_d(d), xh);
            gc = ext_add(gc, term);
            if (kind[k] == ROW_OK && term.c == E_FIN && term.s != 0)
                lp[m] = lo[k], hp[m] = hi[k], m++;
        }
        if (gc.c != E_FIN) {
            dgamma[j] = ext_value(gc);
            continue;
        }
        if (m == 0) {
            dgamma[j] = 0.0; /* an exact zero: +0 */
            continue;
        }
        int done = 0;
        for (int lev = 0; lev < NLEV && !done; lev++) {
            size_t q = 0;
            for (size_t k = 0; k < rows; k++) {
                double xv = x[k * n + j], d = dy[k * n + j];
                if (kind[k] != ROW_OK || xv == 0 || d == 0 || !isfinite(d))
                    continue;
                if (xs) {
                    mpfr_set_prec(r.tmp, mpfr_get_prec(xs[k * n + j]));
                    mpfr_set(r.tmp, xs[k * n + j], MPFR_RNDN); /* exact */
                } else {
                    set_d(r.tmp, xv);
                }
                set_d(r.tmp2, d);
                mul_exact(r.tmp3, r.tmp, r.tmp2);
                mul_ui_exact(r.tmp, r.tmp3, (unsigned long)n); /* n dy_rj x_rj */
                enclose_quot(lp[q], hp[q], &r.w, r.tmp, &sq[k], NULL, NULL, lev);
                q++;
            }
            mpfr_set_prec(slo, (mpfr_prec_t)P0 << lev);
            mpfr_set_prec(shi, (mpfr_prec_t)P0 << lev);
            mpfr_sum(slo, (const mpfr_ptr *)lp, m, MPFR_RNDD);
            mpfr_sum(shi, (const mpfr_ptr *)hp, m, MPFR_RNDU);
            done = certify(&dgamma[j], slo, shi, out);
        }
        if (!done)
            rc = RN_TWIN_UNCERTIFIED;
    }
    mpfr_clears(slo, shi, (mpfr_ptr)0);

    for (size_t k = 0; k < rows; k++) {
        sq_clear(&sq[k]);
        mpfr_clears(lo[k], hi[k], Hs[k], (mpfr_ptr)0);
    }
    free(sq), free(kind), free(special), free(lo), free(hi), free(Hs), free(lp), free(hp);
    rowws_clear(&r);
    return rc;
}

/* dxsum_j = sum_r dx_rj = sum_r N_rj / (Q_r sqrt(Q_r)),  N_rj = n Q_r g_rj - n^2 x_rj H_r
   (the exact numerators of the row pass), summed over the exact rows with mpfr_sum on enclosures
   (RNDD / RNDU) and certified as dgamma is.  Rows whose dx came from the special arithmetic
   contribute their class (IEEE addition of the classes: finite terms cannot change a NaN/Inf). */
static int dx_column_sums(double *dxsum, const double *dx, const double *dy, const double *x,
                          mpfr_srcptr const *xs, const double *gamma, size_t rows, size_t n,
                          int offset, rn_dtype out, rowws *r, sqrt_cache *sq, const int *special,
                          mpfr_t *Hs)
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
    mpfr_t a, b, slo, shi;
    mpfr_inits2(P0, a, b, slo, shi, (mpfr_ptr)0);
    int rc = RN_TWIN_OK;
    for (size_t j = 0; j < n && rc == RN_TWIN_OK; j++) {
        ext cls = ext_fin(0);
        size_t m = 0; /* exact rows with a non-zero numerator */
        for (size_t k = 0; k < rows; k++) {
            size_t i = k * n + j;
            if (special[k]) {
                cls = ext_add(cls, ext_d(dx[i]));
                continue;
            }
            if (xs) {
                mpfr_set_prec(r->tmp, mpfr_get_prec(xs[i]));
                mpfr_set(r->tmp, xs[i], MPFR_RNDN); /* exact */
            } else {
                set_d(r->tmp, x[i]);
            }
            mul_exact(a, r->tmp, Hs[k]);
            mul_ui_exact(r->tmp2, a, (unsigned long)n);
            mul_ui_exact(b, r->tmp2, (unsigned long)n);
            mpfr_neg(b, b, MPFR_RNDN);                    /* -n^2 x_rj H_r */
            weight_exact(r->wv, gamma[j], offset, r->tmp3);
            set_d(r->tmp, dy[i]);
            mul_exact(r->tmp2, r->tmp, r->wv);            /* g_rj */
            mul_exact(r->tmp, sq[k].Q, r->tmp2);
            mul_ui_exact(a, r->tmp, (unsigned long)n);    /* n Q_r g_rj */
            mpfr_ptr terms[2] = {a, b};
            sum_exact(Nv[k], terms, 2);                   /* N_rj */
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
                enclose_quot(lo[q], hi[q], &r->w, Nv[k], &sq[k], sq[k].Q, NULL, lev);
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
    mpfr_clears(a, b, slo, shi, (mpfr_ptr)0);
    for (size_t k = 0; k < rows; k++)
        mpfr_clears(Nv[k], lo[k], hi[k], (mpfr_ptr)0);
    free(Nv), free(lo), free(hi), free(lp), free(hp), free(which);
    return rc;
}

/* ------------------------------------------------------------------------------------------------
 * Entry points: binary64 inputs, or exact inputs of any precision (ref/rmsnorm_mpfr.h).
 */

int rmsnorm_forward_mpfr(double *y, double *rstd, const double *x, const double *gamma,
                         size_t rows, size_t n, double eps, int offset, rn_dtype out)
{
    return forward_rows(y, rstd, x, NULL, gamma, rows, n, eps, offset, out);
}

/* dx of the rows r with ok[r] = 0 alone: the twin on those rows gathered (each row's dx depends
   on that row only; the sum it also forms is dropped). */
static int dx_of_rows_left(double *dx, const unsigned char *ok, const double *dy, const double *x,
                           const double *gamma, size_t rows, size_t n, double eps, int offset,
                           rn_dtype out)
{
    size_t k = 0;
    for (size_t r = 0; r < rows; r++)
        k += !ok[r];
    double *buf = calloc(3 * k * n + n + 1, sizeof *buf);
    if (!buf)
        return RN_TWIN_NOMEM;
    double *xs = buf, *dys = xs + k * n, *dxs = dys + k * n, *dg = dxs + k * n;
    rows_left_gather(xs, x, ok, rows, n);
    rows_left_gather(dys, dy, ok, rows, n);
    int rc = backward_rows(dxs, dg, NULL, dys, xs, NULL, gamma, k, n, eps, offset, out);
    if (rc == RN_TWIN_OK)
        rows_left_scatter(dx, dxs, ok, rows, n);
    free(buf);
    return rc;
}

int rmsnorm_backward_mpfr(double *dx, double *dgamma, const double *dy, const double *x,
                          const double *gamma, size_t rows, size_t n, double eps, int offset,
                          rn_dtype out)
{
    /* The fast path (ref/rmsnorm_fast.c) first: all outputs certified; or all but the dx of a few
       rows, which the twin computes alone; or the twin computes all. */
    if (rn_fast_enabled()) {
        unsigned char *ok = malloc(rows ? rows : 1);
        int f = ok ? rmsnorm_backward_fast(dx, dgamma, dy, x, gamma, rows, n, eps, offset, out, ok)
                   : 0;
        int rc = f == 2 ? dx_of_rows_left(dx, ok, dy, x, gamma, rows, n, eps, offset, out)
                        : RN_TWIN_OK;
        free(ok);
        if (f)
            return rc;
    }
    return backward_rows(dx, dgamma, NULL, dy, x, NULL, gamma, rows, n, eps, offset, out);
}

/* The row code reads x[i] only for the element's class and sign (row_exact's NaN/Inf scan, ext_d,
   xhat_class, the zero test of the dgamma sum) once xs is given: the proxy is the class for a
   non-finite element and sign(xs[i]) (-1, +-0, +1) for a finite one.  (An exact sum need not be a
   binary64 value, and 2 DBL_MAX would even round to Inf: hence a proxy, not a rounding.) */
static double *exact_proxy(const double *xcls, mpfr_srcptr const *xs, size_t N)
{
    double *p = malloc((N ? N : 1) * sizeof *p);
    if (!p)
        return NULL;
    for (size_t i = 0; i < N; i++)
        p[i] = !isfinite(xcls[i]) ? xcls[i] : (double)mpfr_sgn(xs[i]);
    return p;
}

int rmsnorm_forward_mpfr_exact(double *y, double *rstd, const double *xcls, mpfr_srcptr const *xs,
                               const double *gamma, size_t rows, size_t n, double eps, int offset,
                               rn_dtype out)
{
    double *p = exact_proxy(xcls, xs, rows * n);
    if (!p)
        return RN_TWIN_NOMEM;
    int rc = forward_rows(y, rstd, p, xs, gamma, rows, n, eps, offset, out);
    free(p);
    return rc;
}

int rmsnorm_backward_mpfr_exact(double *dx, double *dgamma, double *dxsum, const double *dy,
                                const double *xcls, mpfr_srcptr const *xs, const double *gamma,
                                size_t rows, size_t n, double eps, int offset, rn_dtype out)
{
    double *p = exact_proxy(xcls, xs, rows * n);
    if (!p)
        return RN_TWIN_NOMEM;
    int rc = backward_rows(dx, dgamma, dxsum, dy, p, xs, gamma, rows, n, eps, offset, out);
    free(p);
    return rc;
}
