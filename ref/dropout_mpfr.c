/* MPFR twin of ref/dropout.c (contract: ref/dropout_mpfr.h). */
#include "dropout_mpfr.h"

#include <math.h>

#include "exact_mpfr.h"

/* out[i] = a[i]·mask[i]/(1 - p), certified. */
static int scale_masked(double *o, const double *a, const double *mask, double p, size_t n,
                        rn_dtype out)
{
    mpfr_t one, pp, c, num;
    work w;
    mpfr_inits2(64, one, pp, num, (mpfr_ptr)0);
    mpfr_init2(c, 2 * 1100); /* 1 - p exact: binary64 p >= 2^-1074, so 1 - p has < 1100 bits */
    work_init(&w);
    mpfr_set_ui(one, 1, MPFR_RNDN);
    set_d(pp, p);
    mpfr_sub(c, one, pp, MPFR_RNDN); /* exact */
    int rc = RN_TWIN_OK;
    for (size_t i = 0; i < n && rc == RN_TWIN_OK; i++) {
        double v = a[i];
        if (mask[i] == 0.0) { /* x·0: NaN for NaN or +-Inf, else an exact zero (+0) */
            o[i] = isfinite(v) ? 0.0 : NAN;
            continue;
        }
        if (!isfinite(v)) { /* NaN, or +-Inf / (1 - p) > 0 */
            o[i] = v;
            continue;
        }
        set_d(num, v);
        rc = ziv_quot(&o[i], &w, num, NULL, c, NULL, out);
    }
    work_clear(&w);
    mpfr_clears(one, pp, c, num, (mpfr_ptr)0);
    return rc;
}

int dropout_forward_mpfr(double *y, const double *x, const double *mask, double p, size_t n,
                         rn_dtype out)
{
    return scale_masked(y, x, mask, p, n, out);
}

int dropout_backward_mpfr(double *dx, const double *dy, const double *mask, double p, size_t n,
                          rn_dtype out)
{
    return scale_masked(dx, dy, mask, p, n, out);
}
