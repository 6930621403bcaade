/* MPFR twin of ref/skip_rmsnorm.c (contract: ref/skip_rmsnorm_mpfr.h).
 *
 * The exact sum is ref/skip_layernorm_mpfr.c's (skip_exact_sum: exact, narrowed to the bits it
 * spans; skip_sum_class for non-finite addends); the RMSNorm part is ref/rmsnorm_mpfr.c's exact-input
 * entry point, unchanged, one row at a time so that memory stays O(n).
 */
#include "skip_rmsnorm_mpfr.h"

#include <math.h>
#include <stdlib.h>

#include <mpfr.h>

#include "norm_fast.h"

#include "rmsnorm_mpfr.h"
#include "skip_layernorm_mpfr.h"

int skip_rmsnorm_forward_mpfr(double *y, double *rstd, double *sum, const double *x,
                              const double *skip, const double *gamma, const double *bias,
                              size_t rows, size_t n, double eps, int offset, rn_dtype out)
{
    /* The fast path first (ref/layernorm_fast.c, ref/rmsnorm_fast.c): ok[r] marks the rows it
       certified; the twin computes the others. */
    unsigned char *ok = NULL;
    if (rows && n && rn_fast_enabled() && (ok = malloc(rows)) != NULL &&
        skip_rmsnorm_forward_fast(y, rstd, sum, x, skip, gamma, bias, rows, n, eps, offset, out,
                                  ok) == 0) {
        free(ok);
        return RN_TWIN_OK;
    }
    size_t m = n ? n : 1;
    mpfr_t *s = malloc(m * sizeof *s);
    mpfr_srcptr *sp = malloc(m * sizeof *sp);
    double *cls = malloc(m * sizeof *cls);
    if (!s || !sp || !cls) {
        free(s), free(sp), free(cls);
        free(ok);
        return RN_TWIN_NOMEM;
    }
    for (size_t j = 0; j < n; j++) {
        mpfr_init2(s[j], 53);
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
                mpfr_set_zero(s[j], 1); /* not read: the element's class rules */
                sum[i] = cls[j];
            }
        }
        rc = rmsnorm_forward_mpfr_exact(y + r * n, rstd + r, cls, sp, gamma, 1, n, eps, offset,
                                        out);
    }
    for (size_t j = 0; j < n; j++)
        mpfr_clear(s[j]);
    free(s), free(sp), free(cls);
    free(ok);
    return rc;
}

/* Backward: the fast path (all or nothing); else the exact sums of every row at once (dgamma and
   dbias are sums over rows), then the RMSNorm backward twin on them; dskip is dx (d s / d skip =
   1), dbias its column sums. */
int skip_rmsnorm_backward_mpfr(double *dx, double *dskip, double *dbias, double *dgamma,
                               const double *dy, const double *x, const double *skip,
                               const double *gamma, const double *bias, size_t rows, size_t n,
                               double eps, int offset, rn_dtype out)
{
    size_t N = rows * n, m = N ? N : 1;
    /* The fast path first (ref/rmsnorm_fast.c, specs/fast-path.md §6.6): every output certified,
       or the twin computes all of them. */
    if (rn_fast_enabled() && skip_rmsnorm_backward_fast(dx, dbias, dgamma, dy, x, skip, gamma,
                                                        bias, rows, n, eps, offset, out)) {
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
    int rc = rmsnorm_backward_mpfr_exact(dx, dgamma, dbias, dy, cls, sp, gamma, rows, n, eps,
                                         offset, out);
    for (size_t i = 0; i < N; i++)
        dskip[i] = dx[i];
    for (size_t i = 0; i < N; i++)
        mpfr_clear(s[i]);
    free(s), free(sp), free(cls);
    return rc;
}
