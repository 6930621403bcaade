/* MPFR twin of ref/skip_layernorm.c (contract: ref/skip_layernorm_mpfr.h).
 *
 * Why the sum is exact.  Each addend is a binary64 value: an integer multiple of 2^-1074 below
 * 2^1024 in magnitude.  The sum of three is a multiple of 2^-1074 below 3 * 2^1024 < 2^1026, so it
 * has at most 2100 significant bits: two mpfr_add at SUM_PREC >= 2100 bits are exact.  The result
 * is then narrowed (mpfr_prec_round, exact) to the bits it actually spans -- from its leading bit
 * down to the lowest bit any addend can have -- so that the LayerNorm twin's exact arithmetic works
 * on short numbers.  An exact zero sum is +0 unless every addend is -0 (IEEE round-to-nearest; MPFR's
 * mpfr_add follows the same rule).
 *
 * The LayerNorm part is ref/layernorm_mpfr.c's, unchanged: it already computes with exact dyadic
 * inputs of any precision and one certified rounding (layernorm_forward_mpfr_exact), one row at a
 * time here so that memory stays O(n).
 */
#include "skip_layernorm_mpfr.h"

#include <math.h>
#include <stdlib.h>

#include <mpfr.h>

#include "norm_fast.h"

#define SUM_PREC 2112 /* >= 2100, see above */

/* The lowest bit an addend v != 0 can have: v = m 2^(e - 53) with 53-bit m, MPFR exponent e. */
static mpfr_exp_t low_bit(mpfr_srcptr v)
{
    return mpfr_get_exp(v) - (mpfr_exp_t)mpfr_get_prec(v);
}

/* s = a + b (+ c), exactly, narrowed to the bits it spans; c may be NULL. */
void skip_exact_sum(mpfr_t s, double a, double b, const double *c)
{
    mpfr_t t[3];
    int k = c ? 3 : 2;
    double v[3] = {a, b, c ? *c : 0.0};
    mpfr_exp_t lo = 0;
    int any = 0;
    for (int j = 0; j < k; j++) {
        mpfr_init2(t[j], 53);
        mpfr_set_d(t[j], v[j], MPFR_RNDN); /* exact */
        if (!mpfr_zero_p(t[j]) && (!any || low_bit(t[j]) < lo)) {
            lo = low_bit(t[j]);
            any = 1;
        }
    }
    mpfr_set_prec(s, SUM_PREC);
    mpfr_add(s, t[0], t[1], MPFR_RNDN); /* exact */
    if (c)
        mpfr_add(s, s, t[2], MPFR_RNDN); /* exact */
    for (int j = 0; j < k; j++)
        mpfr_clear(t[j]);
    if (any && !mpfr_zero_p(s)) {
        /* s is a multiple of 2^lo: bits from its exponent down to lo suffice */
        mpfr_prec_t p = (mpfr_prec_t)(mpfr_get_exp(s) - lo);
        if (p < MPFR_PREC_MIN)
            p = MPFR_PREC_MIN;
        if (p < SUM_PREC)
            mpfr_prec_round(s, p, MPFR_RNDN); /* exact */
    }
}

/* The IEEE class of a + b (+ c) when some addend is not finite; 0.0 when all are finite. */
double skip_sum_class(double a, double b, const double *c)
{
    double v[3] = {a, b, c ? *c : 0.0}, cls = 0.0;
    for (int j = 0; j < 3; j++)
        if (!isfinite(v[j]))
            cls = cls + v[j]; /* Inf + Inf = Inf, Inf + -Inf = NaN, NaN propagates */
    return cls;
}

int skip_layernorm_forward_mpfr(double *y, double *mean, double *rstd, double *sum,
                                const double *x, const double *skip, const double *gamma,
                                const double *beta, const double *bias, size_t rows, size_t n,
                                double eps, rn_dtype out)
{
    /* The fast path first (ref/layernorm_fast.c, ref/rmsnorm_fast.c): ok[r] marks the rows it
       certified; the twin computes the others. */
    unsigned char *ok = NULL;
    if (rows && n && rn_fast_enabled() && (ok = malloc(rows)) != NULL &&
        skip_layernorm_forward_fast(y, mean, rstd, sum, x, skip, gamma, beta, bias, rows, n, eps,
                                    out, ok) == 0) {
        free(ok);
        return RN_TWIN_OK;
    }
    mpfr_t *s = malloc((n ? n : 1) * sizeof *s);
    mpfr_srcptr *sp = malloc((n ? n : 1) * sizeof *sp);
    double *cls = malloc((n ? n : 1) * sizeof *cls);
    if (!s || !sp || !cls) {
        free(s), free(sp), free(cls);
        free(ok);
        return RN_TWIN_NOMEM;
    }
    for (size_t j = 0; j < n; j++) {
        mpfr_init2(s[j], SUM_PREC);
        sp[j] = s[j];
    }
    int rc = RN_TWIN_OK;
    for (size_t r = 0; r < rows && rc == RN_TWIN_OK; r++) {
        if (ok && ok[r])
            continue;
        for (size_t j = 0; j < n; j++) {
            size_t i = r * n + j;
            const double *b = bias ? &bias[j] : NULL;
            cls[j] = skip_sum_class(x[i], skip[i], b);
            if (isfinite(cls[j])) {
                skip_exact_sum(s[j], x[i], skip[i], b);
                sum[i] = rn_round_mpfr(s[j], out);
            } else {
                mpfr_set_zero(s[j], 1); /* not read: the row is non-finite */
                sum[i] = cls[j];
            }
        }
        rc = layernorm_forward_mpfr_exact(y + r * n, mean + r, rstd + r, cls, sp, gamma, beta, 1,
                                          n, eps, out);
    }
    for (size_t j = 0; j < n; j++)
        mpfr_clear(s[j]);
    free(s), free(sp), free(cls);
    free(ok);
    return rc;
}

/* Backward: the fast path (all or nothing); else the exact sums of every row at once (dgamma,
   dbeta and dbias are sums over rows), then the LayerNorm backward twin on them; dskip is dx
   (d s / d skip = 1), dbias its column sums. */
int skip_layernorm_backward_mpfr(double *dx, double *dskip, double *dbias, double *dgamma,
                                 double *dbeta, const double *dy, const double *x,
                                 const double *skip, const double *gamma, const double *bias,
                                 size_t rows, size_t n, double eps, rn_dtype out)
{
    size_t N = rows * n, m = N ? N : 1;
    /* The fast path first (ref/layernorm_fast.c, specs/fast-path.md §5.9): every output
       certified, or the twin computes all of them. */
    if (rn_fast_enabled() && skip_layernorm_backward_fast(dx, dbias, dgamma, dbeta, dy, x, skip,
                                                          gamma, bias, rows, n, eps, out)) {
        for (size_t i = 0; i < N; i++)
            dskip[i] = dx[i];
        return RN_TWIN_OK;
    }
    mpfr_t *s = malloc(m * sizeof *s);
    mpfr_srcptr *sp = calloc(m, sizeof *sp);
    double *cls = calloc(m, sizeof *cls);
    if (!s || !sp || !cls) {
        free(s), free(sp), free(cls);
        return RN_TWIN_NOMEM;
    }
    for (size_t i = 0; i < N; i++) {
        const double *b = bias ? &bias[i % n] : NULL;
        mpfr_init2(s[i], 53);
        sp[i] = s[i];
        cls[i] = skip_sum_class(x[i], skip[i], b);
        if (isfinite(cls[i]))
            skip_exact_sum(s[i], x[i], skip[i], b);
        else
            mpfr_set_zero(s[i], 1); /* not read */
    }
    int rc = layernorm_backward_mpfr_exact(dx, dgamma, dbeta, dbias, dy, cls, sp, gamma, rows, n,
                                           eps, out);
    for (size_t i = 0; i < N; i++)
        dskip[i] = dx[i];
    for (size_t i = 0; i < N; i++)
        mpfr_clear(s[i]);
    free(s), free(sp), free(cls);
    return rc;
}
