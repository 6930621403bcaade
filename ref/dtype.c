/* The four floating-point formats, and rounding to them exactly as an IEEE conversion does.
 *
 * Rounding uses MPFR's emulation of a format (MPFR manual, "Exceptions", mpfr_subnormalize):
 *   1. round the value once to the format's precision p with an unbounded exponent (ternary t);
 *   2. narrow MPFR's exponent range to the format's, mpfr_check_range(t): overflow to +-Inf,
 *      underflow below half the smallest subnormal to +-0;
 *   3. mpfr_subnormalize(t): in the subnormal range, round to the fewer bits available there; the
 *      ternary value of step 1 makes this a single rounding (no double-rounding error);
 *   4. restore MPFR's exponent range.
 * MPFR's exponent convention is x = 0.1b...b * 2^e, one more than IEEE's 1.b...b * 2^E, so a format
 * with IEEE exponents [emin, emax] and precision p has MPFR range [emin - p + 2, emax + 1] (the low
 * end is the exponent of the smallest subnormal, 2^(emin - p + 1) = 0.1 * 2^(emin - p + 2)).
 */
#include "dtype.h"
#include "fast_dd.h"

#include <float.h>
#include <math.h>
#include <string.h>

typedef struct {
    const char *name;
    int p;      /* significand bits, including the implicit one */
    int emin;   /* IEEE exponent of the smallest normal number */
    int emax;   /* IEEE exponent of the largest finite number */
} fmt;

static const fmt FMT[RN_NDTYPES] = {
    [RN_F64] = {"f64", 53, -1022, 1023},
    [RN_F32] = {"f32", 24, -126, 127},
    [RN_F16] = {"f16", 11, -14, 15},
    [RN_BF16] = {"bf16", 8, -126, 127},
};

static const fmt *F(rn_dtype d)
{
    return &FMT[(unsigned)d < RN_NDTYPES ? d : RN_F64];
}

const char *rn_dtype_name(rn_dtype d)
{
    return (unsigned)d < RN_NDTYPES ? FMT[d].name : "?";
}

int rn_dtype_from_name(const char *s, rn_dtype *d)
{
    for (int i = 0; i < RN_NDTYPES; i++)
        if (s && strcmp(s, FMT[i].name) == 0) {
            *d = (rn_dtype)i;
            return 0;
        }
    return -1;
}

int rn_dtype_precision(rn_dtype d) { return F(d)->p; }

double rn_dtype_unit_roundoff(rn_dtype d) { return ldexp(1.0, -F(d)->p); }

double rn_dtype_max(rn_dtype d)
{
    const fmt *f = F(d);
    /* (2 - 2^(1-p)) * 2^emax */
    return ldexp(2.0 - ldexp(1.0, 1 - f->p), f->emax);
}

/* Steps 2-4 above: t is v rounded to nearest at precision p (unbounded exponent), inex its
   ternary value.  Returns the value of the format, exactly, as a double. */
static double finish(mpfr_t t, int inex, const fmt *f)
{
    mpfr_exp_t old_emin = mpfr_get_emin(), old_emax = mpfr_get_emax();
    mpfr_set_emin(f->emin - f->p + 2);
    mpfr_set_emax(f->emax + 1);
    inex = mpfr_check_range(t, inex, MPFR_RNDN);
    mpfr_subnormalize(t, inex, MPFR_RNDN);
    mpfr_set_emin(old_emin);
    mpfr_set_emax(old_emax);
    return mpfr_get_d(t, MPFR_RNDN); /* exact: t is a value of the format, hence of binary64 */
}

double rn_round_mpfr(mpfr_srcptr v, rn_dtype d)
{
    if (mpfr_nan_p(v))
        return NAN;
    if (mpfr_inf_p(v))
        return mpfr_sgn(v) > 0 ? INFINITY : -INFINITY;
    if (mpfr_zero_p(v))
        return mpfr_signbit(v) ? -0.0 : 0.0;
    const fmt *f = F(d);
    mpfr_t t;
    mpfr_init2(t, f->p);
    int inex = mpfr_set(t, v, MPFR_RNDN);
    double r = finish(t, inex, f);
    mpfr_clear(t);
    return r;
}

/* A binary64 value rounded once: fd_round_dd (ref/fast_dd.h, specs/fast-path.md §4) with a zero
   low part is that rounding computed in binary64 itself (the same RN-even, subnormals and overflow
   as steps 1-4 above; tests/test_fastpath.c compares it with rn_round_mpfr), without MPFR's cost on
   every element read or written; to f32, the hardware conversion (IEEE 754 §5.4.2, in the default
   rounding mode; no flush-to-zero) does the same.  Zeros keep their sign. */
double rn_round(double v, rn_dtype d)
{
    if (d == RN_F64 || isnan(v) || isinf(v) || v == 0.0)
        return v;
    if (d == RN_F32) /* binary64 -> binary32 conversion: IEEE's own RN-even, subnormals, overflow */
        return (double)(float)v;
    return fd_round_dd(v, 0.0, d);
}

int rn_dtype_within(rn_dtype d, rn_dtype c)
{
    return c == d || c == RN_F64 || (c == RN_F32 && (d == RN_F16 || d == RN_BF16));
}

double rn_ulp(double v, rn_dtype d)
{
    if (isnan(v))
        return NAN;
    if (isinf(v))
        return INFINITY;
    return rn_ulp_finite(v, F(d)->p, F(d)->emin);
}

int rn_dtype_emin(rn_dtype d) { return F(d)->emin; }

double rn_dtype_underflow_eta(rn_dtype d)
{
    switch (d) {
    case RN_F64: return 0x1p-1074; /* 2^-1075 is not a double: rounded up */
    case RN_F32: return 0x1p-150;
    case RN_F16: return 0x1p-25;
    default:     return 0x1p-134; /* bf16 */
    }
}

int rn_representable(double v, rn_dtype d)
{
    if (isnan(v) || isinf(v))
        return 1;
    double r = rn_round(v, d);
    return r == v && signbit(r) == signbit(v);
}

/* ---- 16-bit patterns ---- */

uint16_t rn_f16_bits(double v)
{
    if (isnan(v))
        return 0x7E00;
    uint16_t s = signbit(v) ? 0x8000 : 0;
    double a = fabs(v);
    if (isinf(a))
        return s | 0x7C00;
    if (a == 0.0)
        return s;
    int ex;
    frexp(a, &ex);
    int E = ex - 1; /* a in [2^E, 2^(E+1)) */
    if (E < -14)    /* subnormal: a = m * 2^-24, m < 1024 */
        return s | (uint16_t)ldexp(a, 24);
    /* normal: a = (1 + m/1024) * 2^E */
    uint16_t m = (uint16_t)(ldexp(a, -E) * 1024.0 - 1024.0);
    return s | (uint16_t)((E + 15) << 10) | m;
}

double rn_f16_value(uint16_t bits)
{
    int s = bits >> 15, e = (bits >> 10) & 0x1F, m = bits & 0x3FF;
    double a;
    if (e == 0x1F)
        a = m ? NAN : INFINITY;
    else if (e == 0)
        a = ldexp((double)m, -24);
    else
        a = ldexp(1024.0 + m, e - 15 - 10);
    return s ? -a : a;
}

uint16_t rn_bf16_bits(double v)
{
    if (isnan(v))
        return signbit(v) ? 0xFFC0 : 0x7FC0;
    float f = (float)v; /* exact: v is a bf16 value, hence a binary32 value */
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return (uint16_t)(u >> 16);
}

double rn_bf16_value(uint16_t bits)
{
    uint32_t u = (uint32_t)bits << 16;
    float f;
    memcpy(&f, &u, sizeof f);
    return (double)f;
}

/* ---- eps ---- */

/* A finite, non-negative decimal: [+]digits[.digits][(e|E)[+|-]digits], at least one mantissa
   digit, nothing else (no spaces, no hex, no inf/nan). */
static int is_decimal(const char *s)
{
    int digits = 0;
    if (*s == '+')
        s++;
    while (*s >= '0' && *s <= '9')
        s++, digits++;
    if (*s == '.') {
        s++;
        while (*s >= '0' && *s <= '9')
            s++, digits++;
    }
    if (!digits)
        return 0;
    if (*s == 'e' || *s == 'E') {
        s++;
        if (*s == '+' || *s == '-')
            s++;
        if (!(*s >= '0' && *s <= '9'))
            return 0;
        while (*s >= '0' && *s <= '9')
            s++;
    }
    return *s == '\0';
}

int rn_parse_eps(const char *text, rn_dtype d, double *eps)
{
    if (!text || !is_decimal(text))
        return -1;
    const fmt *f = F(d);
    mpfr_t t;
    mpfr_init2(t, f->p);
    /* One rounding of the decimal value to p bits (mpfr_strtofr is correctly rounded), with the
       default (huge) exponent range; then the format's range and subnormals, as in finish(). */
    char *end;
    int inex = mpfr_strtofr(t, text, &end, 10, MPFR_RNDN);
    int ok = *end == '\0' && mpfr_number_p(t);
    double r = ok ? finish(t, inex, f) : NAN;
    mpfr_clear(t);
    if (!ok || !isfinite(r)) /* a decimal beyond the format's range is refused too */
        return -1;
    *eps = r;
    return 0;
}
