/* MPFR twin of ref/residual.c (contract: ref/residual_mpfr.h).
 *
 * Why the sum is exact.  Every input is a binary64 value (f32, f16 and bf16 values are binary64
 * values).  A finite binary64 value is an integer multiple of 2^-1074 (the smallest subnormal) of
 * magnitude below 2^1024, so x + f is an integer multiple N * 2^-1074 with |N| < 2^1025 * 2^1074 =
 * 2^2099: it has at most 2099 significant bits.  mpfr_add at EXACT_PREC >= 2099 bits therefore
 * returns x + f exactly (ternary value 0), and MPFR's default exponent range is far wider than
 * binary64's, so nothing over- or underflows there.  The only rounding is rn_round_mpfr's, once, to
 * the output format (with its subnormals and its overflow to +-Inf): the value is certified by
 * construction.
 *
 * Special values are MPFR's, which are IEEE 754's for addition: NaN + a = NaN, Inf + finite = Inf,
 * Inf + Inf = Inf, Inf + -Inf = NaN; an exact zero is +0 in round-to-nearest unless both addends
 * are -0 (then -0), and rn_round_mpfr keeps the sign of a zero.
 */
#include "residual_mpfr.h"

#include <stdlib.h>

#include <mpfr.h>

#include "norm_fast.h"

#define EXACT_PREC 2112 /* >= 2099, see above */

void residual_exact_init(mpfr_t s)
{
    mpfr_init2(s, EXACT_PREC);
}

int residual_exact_sum(mpfr_t s, double x, double f)
{
    /* No temporaries (two mpfr_inits per element were most of the skip bounds' MPFR time): x set
       into s is exact at EXACT_PREC (NaN, +-Inf, -0 kept), and mpfr_add_d adds f as
       mpfr_add would (IEEE's specials and sign of an exact zero), exactly (ternary 0), see above. */
    int t = mpfr_set_d(s, x, MPFR_RNDN);
    return t | mpfr_add_d(s, s, f, MPFR_RNDN);
}

int residual_forward_mpfr(double *y, const double *x, const double *f, size_t n, rn_dtype out)
{
    /* The fast path (ref/residual_fast.c) first: ok[i] marks the elements it wrote. */
    unsigned char *ok = NULL;
    if (n && rn_fast_enabled() && (ok = malloc(n)) != NULL &&
        residual_forward_fast(y, x, f, n, out, ok) == 0) {
        free(ok);
        return RN_TWIN_OK;
    }
    mpfr_t s;
    residual_exact_init(s);
    for (size_t i = 0; i < n; i++) {
        if (ok && ok[i])
            continue;
        if (residual_exact_sum(s, x[i], f[i]) != 0) { /* cannot happen; never guess */
            mpfr_clear(s);
            free(ok);
            return RN_TWIN_UNCERTIFIED;
        }
        y[i] = rn_round_mpfr(s, out);
    }
    mpfr_clear(s);
    free(ok);
    return RN_TWIN_OK;
}

int residual_backward_mpfr(double *dx, double *df, const double *dy, size_t n, rn_dtype out)
{
    unsigned char *ok = NULL;
    if (n && rn_fast_enabled() && (ok = malloc(n)) != NULL &&
        residual_backward_fast(dx, df, dy, n, out, ok) == 0) {
        free(ok);
        return RN_TWIN_OK;
    }
    for (size_t i = 0; i < n; i++) {
        if (ok && ok[i])
            continue;
        double d = rn_round(dy[i], out); /* one rounding of the exact dy_i */
        dx[i] = d;
        df[i] = d;
    }
    free(ok);
    return RN_TWIN_OK;
}
