/* A-priori per-element error bounds for the residual add, forward and backward.
 * Every formula is derived in specs/error-analysis-residual.md (section numbers in brackets); this
 * file only evaluates them on the data, with the conventions of ref/layernorm_bound.c: the bound is
 * on |got - want| with want the exact value rounded to f64, evaluated in binary64 and multiplied by
 * EVAL_SLACK, which covers the few roundings of the evaluation itself [§4]. */
#include "residual_bound.h"

#include <math.h>

#include <mpfr.h>

#include "residual_mpfr.h"

#define EVAL_SLACK (1.0 + 0x1p-40)

/* |want - exact| for want = exact rounded once to binary64, |exact| <= S [§4]. */
static double want_slack(double S)
{
    return S * 0x1p-53 + 0x1p-1074;
}

/* Rounding of a computed value of magnitude <= m to `out` when out != compute [§3]. */
static double output_rounding(double m, rn_dtype compute, rn_dtype out)
{
    if (out == compute)
        return 0.0;
    return rn_dtype_unit_roundoff(out) * m + rn_dtype_underflow_eta(out);
}

/* The bound for an exact value s (|s| <= S) computed with error <= err in `compute` [§2-§4]:
   +Inf where the computed value overflows compute or out (void [§5]). */
static double finish(mpfr_srcptr s, double S, double err, rn_dtype compute, rn_dtype out)
{
    double c = rn_round_mpfr(s, compute); /* the correctly rounded value: only tested for overflow */
    if (isinf(c) || isinf(rn_round(c, out)))
        return INFINITY;
    double b = (err + output_rounding(S + err, compute, out)) * EVAL_SLACK + want_slack(S);
    return isnan(b) ? INFINITY : b;
}

int residual_forward_bound(double *by, const double *x, const double *f, size_t n,
                           rn_dtype compute, rn_dtype out)
{
    double u = rn_dtype_unit_roundoff(compute);
    mpfr_t s;
    residual_exact_init(s);
    for (size_t i = 0; i < n; i++) {
        residual_exact_sum(s, x[i], f[i]);
        if (!mpfr_number_p(s)) { /* NaN or +-Inf: the checker demands the same class */
            by[i] = 0.0;
            continue;
        }
        double S = fabs(mpfr_get_d(s, MPFR_RNDA)); /* >= |s| (may be +Inf: then so is want) */
        if (isinf(S)) {
            by[i] = 0.0;
            continue;
        }
        /* fl(x + f) = (x + f)(1 + delta), |delta| <= u, exact in the subnormal range [§2] */
        by[i] = finish(s, S, u * S, compute, out);
    }
    mpfr_clear(s);
    return 0;
}

int residual_backward_bound(double *bdx, double *bdf, const double *dy, size_t n,
                            rn_dtype compute, rn_dtype out)
{
    mpfr_t s;
    mpfr_init2(s, 53);
    for (size_t i = 0; i < n; i++) {
        double b = 0.0;
        if (isfinite(dy[i])) {
            mpfr_set_d(s, dy[i], MPFR_RNDN);
            /* 0 + dy = dy exactly in any format holding dy [§6]: only the output rounding */
            b = finish(s, fabs(dy[i]), 0.0, compute, out);
        }
        bdx[i] = b;
        bdf[i] = b;
    }
    mpfr_clear(s);
    return 0;
}
