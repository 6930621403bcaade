/* Tests of the rounding primitives (ref/dtype.c) and of the MPFR twin (ref/layernorm_mpfr.c).
 *
 * No expected value is taken from the code under test:
 *  - rounding edge cases are hand-derived bit patterns (derivation next to each) or C's own IEEE
 *    conversions ((float) casts, strtof/strtod, nextafter);
 *  - the twin's outputs are checked by the defining property of correct rounding (the exact value
 *    lies between the two midpoints around the returned value), decided with exact MPFR arithmetic
 *    on closed forms, or against a naive 1000-bit evaluation of the formula of specs/layernorm.h
 *    rounded with MPFR's own mpfr_get_d / mpfr_get_flt;
 *  - the twin's backward against finite differences of the twin's forward.
 */
#include <criterion/criterion.h>
#include <float.h>
#include <math.h>
#include <mpfr.h>
#include <stdlib.h>
#include <string.h>

#include "dtype.h"
#include "layernorm_mpfr.h"

static int same_bits(double a, double b) { return memcmp(&a, &b, sizeof a) == 0; }

/* ------------------------------------------------------------------------------------------------
 * rn_round: f16
 * f16: p = 11 (10 stored bits), exponent bias 15, normal exponents -14..15.
 */
Test(dtype, f16_edges)
{
    /* Largest finite: (1 + 1023/1024) * 2^15 = 65504; bits: exponent 15+15 = 30 -> 0x7800,
       mantissa 0x3FF -> 0x7BFF. */
    cr_assert(same_bits(rn_round(65504.0, RN_F16), 65504.0));
    cr_assert_eq(rn_f16_bits(65504.0), 0x7BFF);
    cr_assert(same_bits(rn_f16_value(0x7BFF), 65504.0));
    /* The spacing at 65504 is 2^(15-10) = 32; 65520 = 65504 + 16 is the midpoint to 65536 = 2^16
       (not finite in f16).  Ties-to-even: 65504's last bit is odd, so the tie goes up: +Inf.
       Just below the midpoint stays finite. */
    cr_assert(isinf(rn_round(65520.0, RN_F16)) && rn_round(65520.0, RN_F16) > 0);
    cr_assert(same_bits(rn_round(65519.99, RN_F16), 65504.0));
    cr_assert(isinf(rn_round(-70000.0, RN_F16)) && rn_round(-70000.0, RN_F16) < 0);
    cr_assert_eq(rn_f16_bits(INFINITY), 0x7C00);
    /* Smallest subnormal 2^-14 * 2^-10 = 2^-24: bits 0x0001.  Smallest normal 2^-14: 0x0400. */
    cr_assert(same_bits(rn_round(0x1p-24, RN_F16), 0x1p-24));
    cr_assert_eq(rn_f16_bits(0x1p-24), 0x0001);
    cr_assert_eq(rn_f16_bits(0x1p-14), 0x0400);
    cr_assert(same_bits(rn_f16_value(0x0001), 0x1p-24));
    /* 2^-25 is the midpoint between 0 and 2^-24: ties to even -> +0 (and -0 for the negative). */
    cr_assert(same_bits(rn_round(0x1p-25, RN_F16), 0.0));
    cr_assert(same_bits(rn_round(-0x1p-25, RN_F16), -0.0));
    /* Just above the midpoint rounds up (gradual underflow, one rounding). */
    cr_assert(same_bits(rn_round(0x1.00001p-25, RN_F16), 0x1p-24));
    /* 3 * 2^-25 is the midpoint of 2^-24 (mantissa 1, odd) and 2^-23 (mantissa 2): -> 2^-23. */
    cr_assert(same_bits(rn_round(0x3p-25, RN_F16), 0x1p-23));
    /* 5 * 2^-26 = 1.25 * 2^-24: nearer 2^-24. */
    cr_assert(same_bits(rn_round(0x5p-26, RN_F16), 0x1p-24));
    /* Normal ties: 1 + 2^-11 is the midpoint of 1 (0x3C00, even) and 1 + 2^-10 (0x3C01): -> 1.
       1 + 3*2^-11: midpoint of 0x3C01 (odd) and 0x3C02 = 1 + 2^-9: -> 1 + 2^-9. */
    cr_assert(same_bits(rn_round(1.0 + 0x1p-11, RN_F16), 1.0));
    cr_assert(same_bits(rn_round(1.0 + 0x3p-11, RN_F16), 1.0 + 0x1p-9));
    cr_assert_eq(rn_f16_bits(1.0 + 0x1p-9), 0x3C02);
    cr_assert_eq(rn_f16_bits(-2.0), 0xC000); /* sign, exponent 1+15 = 16 -> 0x4000 */
    cr_assert(same_bits(rn_f16_value(0xC000), -2.0));
    cr_assert(isnan(rn_round(NAN, RN_F16)));
    cr_assert(same_bits(rn_round(-0.0, RN_F16), -0.0));
    /* Every finite f16 pattern decodes to a value that rounds to itself and encodes back. */
    for (unsigned b = 0; b < 0x10000; b++) {
        if ((b & 0x7C00) == 0x7C00)
            continue;
        double v = rn_f16_value((uint16_t)b);
        cr_assert(same_bits(rn_round(v, RN_F16), v), "pattern %04x", b);
        cr_assert_eq(rn_f16_bits(v), b, "pattern %04x", b);
    }
}

/* bf16: p = 8 (7 stored bits), the exponent range of f32: the top 16 bits of a binary32. */
Test(dtype, bf16_edges)
{
    /* 1 + 2^-8: midpoint of 1 (0x3F80) and 1 + 2^-7 (0x3F81): ties to even -> 1.
       1 + 3*2^-8: midpoint of 0x3F81 (odd) and 1 + 2^-6 (0x3F82) -> 0x3F82. */
    cr_assert(same_bits(rn_round(1.0 + 0x1p-8, RN_BF16), 1.0));
    cr_assert(same_bits(rn_round(1.0 + 0x3p-8, RN_BF16), 1.0 + 0x1p-6));
    cr_assert_eq(rn_bf16_bits(1.0 + 0x1p-6), 0x3F82);
    cr_assert_eq(rn_bf16_bits(1.0), 0x3F80);
    /* Largest finite: exponent 254 (0x7F00) with mantissa 0x7F: (1 + 127/128) * 2^127
       = (2 - 2^-7) * 2^127 = 0x1.fep127, bits 0x7F7F. */
    double bmax = 0x1.fep127;
    cr_assert(same_bits(rn_dtype_max(RN_BF16), bmax));
    cr_assert_eq(rn_bf16_bits(bmax), 0x7F7F);
    /* Its midpoint to 2^128 is (2 - 2^-8) * 2^127 = 0x1.ffp127: odd last bit, tie -> +Inf. */
    cr_assert(isinf(rn_round(0x1.ffp127, RN_BF16)));
    cr_assert(same_bits(rn_round(0x1.fefffp127, RN_BF16), bmax));
    /* Smallest subnormal 2^-126 * 2^-7 = 2^-133 (0x0001); 2^-134 is the tie with 0 -> 0. */
    cr_assert(same_bits(rn_round(0x1p-133, RN_BF16), 0x1p-133));
    cr_assert_eq(rn_bf16_bits(0x1p-133), 0x0001);
    cr_assert(same_bits(rn_round(0x1p-134, RN_BF16), 0.0));
    cr_assert(same_bits(rn_round(0x3p-134, RN_BF16), 0x1p-132));
    cr_assert(same_bits(rn_bf16_value(0x7F7F), bmax));
    cr_assert(same_bits(rn_bf16_value(0xBF80), -1.0));
}

/* f32 from double: C's (float) conversion is IEEE RN-even (C Annex F; SSE cvtsd2ss on x86-64). */
Test(dtype, f32_matches_cast)
{
    const double v[] = {1.0 + 0x1p-24, 1.0 + 0x3p-24, 1.0 + 0x1.000001p-24, FLT_MAX,
                        (double)FLT_MAX + 0x1p103, (double)FLT_MAX + 0x1p103 - 0x1p60, 0x1p-149,
                        0x1p-150, 0x3p-150, 0x1.0000001p-150, 1e-45, 0.1, 1e-5, -3.3e38, 1e39};
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) {
        cr_assert(same_bits(rn_round(v[i], RN_F32), (double)(float)v[i]), "v = %a", v[i]);
        cr_assert(same_bits(rn_round(-v[i], RN_F32), (double)(float)-v[i]), "v = %a", -v[i]);
    }
    uint64_t s = 0x1234567;
    for (int i = 0; i < 200000; i++) { /* random bit patterns, all exponents */
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        uint64_t b = s;
        double d;
        memcpy(&d, &b, sizeof d);
        if (isnan(d))
            continue;
        cr_assert(same_bits(rn_round(d, RN_F32), (double)(float)d), "v = %a", d);
    }
}

/* One rounding from an MPFR value: no double rounding through binary64. */
Test(dtype, round_mpfr_single_rounding)
{
    mpfr_exp_t emin = mpfr_get_emin(), emax = mpfr_get_emax();
    mpfr_t t;
    mpfr_init2(t, 200);
    /* 1 + 2^-11 + 2^-60: just above the f16 midpoint between 1 and 1 + 2^-10 -> 1 + 2^-10.
       Through binary64 it would first become 1 + 2^-11 (the midpoint), then 1 (wrong). */
    mpfr_set_ui(t, 1, MPFR_RNDN);
    mpfr_add_d(t, t, 0x1p-11, MPFR_RNDN);
    mpfr_add_d(t, t, 0x1p-60, MPFR_RNDN);
    cr_assert(same_bits(rn_round_mpfr(t, RN_F16), 1.0 + 0x1p-10));
    cr_assert(same_bits(rn_round_mpfr(t, RN_F64), 1.0 + 0x1p-11)); /* binary64 itself: down */
    /* f64 subnormals: 2^-1075 is the tie between 0 and 2^-1074 -> 0; slightly above -> 2^-1074;
       3 * 2^-1075 is the tie between 2^-1074 (odd) and 2^-1073 -> 2^-1073. */
    mpfr_set_ui_2exp(t, 1, -1075, MPFR_RNDN);
    cr_assert(same_bits(rn_round_mpfr(t, RN_F64), 0.0));
    mpfr_set_ui_2exp(t, 3, -1075, MPFR_RNDN);
    cr_assert(same_bits(rn_round_mpfr(t, RN_F64), 0x1p-1073));
    mpfr_set_ui_2exp(t, (1ul << 40) + 1, -1075 - 40, MPFR_RNDN);
    cr_assert(same_bits(rn_round_mpfr(t, RN_F64), 0x1p-1074));
    /* f64 overflow: DBL_MAX + half its spacing (2^970) is the tie with 2^1024 -> +Inf. */
    mpfr_set_d(t, DBL_MAX, MPFR_RNDN);
    mpfr_add_d(t, t, 0x1p970, MPFR_RNDN);
    cr_assert(isinf(rn_round_mpfr(t, RN_F64)));
    mpfr_set_d(t, DBL_MAX, MPFR_RNDN);
    mpfr_add_d(t, t, 0x1p969, MPFR_RNDN);
    cr_assert(same_bits(rn_round_mpfr(t, RN_F64), DBL_MAX));
    /* f32 subnormal via MPFR agrees with MPFR's own mpfr_get_flt (correctly rounded). */
    mpfr_set_ui_2exp(t, 3, -150, MPFR_RNDN);
    cr_assert(same_bits(rn_round_mpfr(t, RN_F32), (double)mpfr_get_flt(t, MPFR_RNDN)));
    /* MPFR's exponent range is restored. */
    cr_assert_eq(mpfr_get_emin(), emin);
    cr_assert_eq(mpfr_get_emax(), emax);
    mpfr_clear(t);
}

Test(dtype, misc)
{
    cr_assert_eq(rn_dtype_precision(RN_F16), 11);
    cr_assert_eq(rn_dtype_precision(RN_BF16), 8);
    cr_assert(same_bits(rn_dtype_max(RN_F16), 65504.0));
    cr_assert(same_bits(rn_dtype_max(RN_F32), (double)FLT_MAX));
    cr_assert(same_bits(rn_dtype_max(RN_F64), DBL_MAX));
    cr_assert(same_bits(rn_ulp(1.0, RN_F16), 0x1p-10));
    cr_assert(same_bits(rn_ulp(65504.0, RN_F16), 32.0));
    cr_assert(same_bits(rn_ulp(0.0, RN_F16), 0x1p-24));
    cr_assert(same_bits(rn_ulp(1e-6, RN_F16), 0x1p-24));
    cr_assert(same_bits(rn_ulp(-1.5, RN_F32), 0x1p-23));
    cr_assert(same_bits(rn_ulp(1.0, RN_F64), DBL_EPSILON));
    cr_assert(rn_representable(0.5, RN_BF16) && !rn_representable(0.1, RN_BF16));
    cr_assert(rn_representable(INFINITY, RN_F16) && rn_representable(NAN, RN_F16));
    rn_dtype d;
    cr_assert(rn_dtype_from_name("bf16", &d) == 0 && d == RN_BF16);
    cr_assert(rn_dtype_from_name("f8", &d) == -1);
    cr_assert_str_eq(rn_dtype_name(RN_F16), "f16");
}

/* rn_ulp_pow2, the comparison's vectorized spacing: it must be rn_ulp's spacing to the bit, and
   where that spacing is a normal double (the only case check's chunks use it), e * (1/ulp) must
   be e / ulp to the bit (check's ulps count relies on it).  The references are rn_ulp and the
   division itself, by C's IEEE arithmetic; the operands span every dtype's subnormal, normal and
   overflow ranges, and e from subnormal to huge. */
Test(dtype, ulp_pow2_matches_rn_ulp_and_division)
{
    const rn_dtype ds[] = {RN_F64, RN_F32, RN_F16, RN_BF16};
    const double ws[] = {0.0, -0.0, 0x1p-1074, 0x1p-1060, 0x1p-1023, 0x1p-1022, 0x1p-149, 0x1p-126,
                         1e-30, 6e-8, 0.1, 1.0, -1.5, 3.0, 65504.0, 1e30, 0x1p127, 0x1p1000,
                         DBL_MAX};
    const double es[] = {0.0, 0x1p-1074, 3e-300, 1e-20, 0.37, 1.0, 12345.678, 1e200, DBL_MAX};
    int checked = 0;
    for (size_t a = 0; a < sizeof ds / sizeof *ds; a++) {
        int P = rn_dtype_precision(ds[a]), E = rn_dtype_emin(ds[a]);
        for (size_t b = 0; b < sizeof ws / sizeof *ws; b++) {
            double iu, u = rn_ulp_pow2(fabs(ws[b]), ldexp(1.0, E), ldexp(1.0, 1 - P), &iu);
            cr_assert(same_bits(u, rn_ulp(ws[b], ds[a])), "ulp(%a): %a", ws[b], u);
            cr_assert(same_bits(u, rn_ulp_finite(ws[b], P, E)));
            if (u < 0x1p-1022)
                continue; /* the chunks leave these to the division */
            cr_assert(same_bits(iu * u, 1.0), "1/ulp(%a) = %a", u, iu);
            for (size_t c = 0; c < sizeof es / sizeof *es; c++, checked++)
                cr_assert(same_bits(es[c] * iu, es[c] / u), "%a / %a", es[c], u);
        }
    }
    cr_assert_gt(checked, 200);
}

/* eps: decimal text rounded once to the input dtype.  glibc's strtof/strtod are correctly rounded
   (exact multi-precision conversion, RN-even in the default mode), so they are the reference for
   f32/f64; the f16 values are derived by hand. */
Test(dtype, parse_eps)
{
    const char *texts[] = {"1e-5", "1e-6", "1e-12", "0.1", "1E-05", "+0.001", "3", "1e-45", "0"};
    for (size_t i = 0; i < sizeof texts / sizeof texts[0]; i++) {
        double e;
        cr_assert(rn_parse_eps(texts[i], RN_F32, &e) == 0, "%s", texts[i]);
        cr_assert(same_bits(e, (double)strtof(texts[i], NULL)), "%s", texts[i]);
        cr_assert(rn_parse_eps(texts[i], RN_F64, &e) == 0, "%s", texts[i]);
        cr_assert(same_bits(e, strtod(texts[i], NULL)), "%s", texts[i]);
    }
    double e;
    /* f16: 1e-5 = 167.77216 * 2^-24 (subnormal range), nearest multiple of 2^-24: 168 (0x00A8). */
    cr_assert(rn_parse_eps("1e-5", RN_F16, &e) == 0);
    cr_assert(same_bits(e, 168 * 0x1p-24));
    cr_assert_eq(rn_f16_bits(e), 0x00A8);
    /* f16: 0.1 = 1.6 * 2^-4; 0.6 * 1024 = 614.4 -> 614: (1024 + 614) * 2^-14 (bits 0x2E66). */
    cr_assert(rn_parse_eps("0.1", RN_F16, &e) == 0);
    cr_assert(same_bits(e, 1638 * 0x1p-14));
    cr_assert_eq(rn_f16_bits(e), 0x2E66);
    /* bf16: 1e-5 = 1.31072 * 2^-17; 0.31072 * 128 = 39.77 -> 40: (128 + 40) * 2^-24. */
    cr_assert(rn_parse_eps("1e-5", RN_BF16, &e) == 0);
    cr_assert(same_bits(e, 168 * 0x1p-24));
    /* One rounding of the decimal: 1 + 2^-11 + 2^-60 written exactly in decimal.  Via binary64 it
       would become the midpoint 1 + 2^-11 and then 1; directly it is 1 + 2^-10. */
    cr_assert(rn_parse_eps("1.000488281250000000867361737988403547205962240695953369140625",
                           RN_F16, &e) == 0);
    cr_assert(same_bits(e, 1.0 + 0x1p-10));
    /* Refused: not a finite non-negative decimal, or beyond the format's range. */
    const char *bad[] = {"", "abc", "-1e-5", "1e-5x", " 1e-5", "inf", "nan", "0x1p-3", "1e", ".", "1e5"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        cr_assert(rn_parse_eps(bad[i], RN_F16, &e) == -1, "'%s'", bad[i]);
    cr_assert(rn_parse_eps("1e5", RN_F32, &e) == 0 && e == 100000.0);
}

/* ------------------------------------------------------------------------------------------------
 * The twin on closed forms.
 */

/* Asserts that r (a value of binary64, or binary32 if f32) is the RN value of t = sign * a / sqrt(V)
   with a > 0, V > 0 exact: the midpoints m- < |t| < m+ around |r|, i.e. m-^2 V < a^2 < m+^2 V
   (t is irrational here, so no tie).  All comparisons exact in MPFR. */
static void assert_rn_quot_sqrt(double r, int sign, double a, mpfr_srcptr V, int f32)
{
    cr_assert(sign * r > 0, "sign of %a", r);
    double ar = fabs(r);
    double lo = f32 ? (double)nextafterf((float)ar, 0.0f) : nextafter(ar, 0.0);
    double hi = f32 ? (double)nextafterf((float)ar, INFINITY) : nextafter(ar, INFINITY);
    mpfr_t m, t, a2;
    mpfr_inits2(4096, m, t, a2, (mpfr_ptr)0);
    mpfr_set_d(a2, a, MPFR_RNDN);
    mpfr_sqr(a2, a2, MPFR_RNDN);
    for (int side = 0; side < 2; side++) {
        mpfr_set_d(m, ar, MPFR_RNDN);
        mpfr_add_d(m, m, side ? hi : lo, MPFR_RNDN);
        mpfr_div_2ui(m, m, 1, MPFR_RNDN); /* midpoint, exact */
        mpfr_sqr(t, m, MPFR_RNDN);
        mpfr_mul(t, t, V, MPFR_RNDN);     /* m^2 V, exact at 4096 bits */
        int c = mpfr_cmp(t, a2);
        cr_assert(side ? c > 0 : c < 0, "%a is not the nearest (side %d)", r, side);
    }
    mpfr_clears(m, t, a2, (mpfr_ptr)0);
}

Test(twin, closed_form_1234)
{
    /* x = [1,2,3,4]: mean 2.5, var = (2.25 + 0.25 + 0.25 + 2.25)/4 = 1.25, rstd = 1/sqrt(1.25+eps),
       y_i = (x_i - 2.5) rstd for gamma = 1, beta = 0. */
    const double x[4] = {1, 2, 3, 4}, g[4] = {1, 1, 1, 1}, b[4] = {0, 0, 0, 0};
    for (int f32 = 0; f32 < 2; f32++) {
        double eps = f32 ? (double)1e-5f : 1e-5, y[4], mean, rstd;
        cr_assert_eq(layernorm_forward_mpfr(y, &mean, &rstd, x, g, b, 1, 4, eps,
                                            f32 ? RN_F32 : RN_F64), RN_TWIN_OK);
        cr_assert(same_bits(mean, 2.5));
        mpfr_t V;
        mpfr_init2(V, 4096);
        mpfr_set_d(V, 1.25, MPFR_RNDN);
        mpfr_add_d(V, V, eps, MPFR_RNDN); /* exact */
        assert_rn_quot_sqrt(rstd, 1, 1.0, V, f32);
        const double d[4] = {-1.5, -0.5, 0.5, 1.5};
        for (int i = 0; i < 4; i++)
            assert_rn_quot_sqrt(y[i], d[i] > 0 ? 1 : -1, fabs(d[i]), V, f32);
        mpfr_clear(V);
    }
}

Test(twin, y_equals_beta_and_zero_variance)
{
    /* Middle element equals the mean (2): y_1 == beta_1 exactly, whatever gamma and rstd. */
    const double x[3] = {1, 2, 3}, g[3] = {0.7, 0.9, 1.1}, b[3] = {0.25, 0.3, -0.1};
    double y[3], mean, rstd;
    cr_assert_eq(layernorm_forward_mpfr(y, &mean, &rstd, x, g, b, 1, 3, 1e-5, RN_F64), 0);
    cr_assert(same_bits(y[1], 0.3) && same_bits(mean, 2.0));
    cr_assert_eq(layernorm_forward_mpfr(y, &mean, &rstd, x, g, b, 1, 3, 1e-5, RN_F32), 0);
    cr_assert(same_bits(y[1], (double)0.3f));
    cr_assert_eq(layernorm_forward_mpfr(y, &mean, &rstd, x, g, b, 1, 3, 1e-5, RN_BF16), 0);
    cr_assert_eq(rn_bf16_bits(y[1]), 0x3E9A); /* 0.3 = 1.2 * 2^-2: 0.2*128 = 25.6 -> 26 = 0x1A;
                                                  exponent 125 -> 0x3E80 */

    /* Constant rows of 0.1 (not dyadic; the exact mean is the double 0.1): y == beta, var = 0,
       rstd = RN(1/sqrt(eps)).  n = 1 likewise. */
    double xc[5] = {0.1, 0.1, 0.1, 0.1, 0.1}, gc[5] = {1, 2, 3, 4, 5},
           bc[5] = {-0.5, 0.25, 0.1, -0.0, 7}, yc[5];
    for (size_t n = 1; n <= 5; n += 4) {
        cr_assert_eq(layernorm_forward_mpfr(yc, &mean, &rstd, xc, gc, bc, 1, n, 1e-5, RN_F64), 0);
        cr_assert(same_bits(mean, 0.1));
        for (size_t i = 0; i < n; i++)
            cr_assert(yc[i] == bc[i], "y[%zu] = %a", i, yc[i]);
        cr_assert(!signbit(yc[3]) || n == 1); /* exact zero is +0 */
        mpfr_t V;
        mpfr_init2(V, 200);
        mpfr_set_d(V, 1e-5, MPFR_RNDN);
        assert_rn_quot_sqrt(rstd, 1, 1.0, V, 0);
        mpfr_clear(V);
    }
}

Test(twin, exact_midpoints_terminate_and_tie_to_even)
{
    /* x = [0, 1], eps = 0: mean 1/2, var 1/4, rstd = 2 exactly, xhat = [-1, 1].
       gamma = [-3*2^-11, 2^-11], beta = [1, 1]: y = [1 + 3*2^-11, 1 + 2^-11], exact dyadics that are
       f16 midpoints: ties to even give [1 + 2^-9 (0x3C02), 1 (0x3C00)]. */
    const double x[2] = {0, 1}, g[2] = {-0x3p-11, 0x1p-11}, b[2] = {1, 1};
    double y[2], mean, rstd;
    cr_assert_eq(layernorm_forward_mpfr(y, &mean, &rstd, x, g, b, 1, 2, 0.0, RN_F16), RN_TWIN_OK);
    cr_assert(same_bits(mean, 0.5) && same_bits(rstd, 2.0));
    cr_assert_eq(rn_f16_bits(y[0]), 0x3C02);
    cr_assert_eq(rn_f16_bits(y[1]), 0x3C00);
    cr_assert_eq(layernorm_forward_mpfr(y, &mean, &rstd, x, g, b, 1, 2, 0.0, RN_F64), RN_TWIN_OK);
    cr_assert(same_bits(y[0], 1 + 0x3p-11) && same_bits(y[1], 1 + 0x1p-11));
    /* y exactly zero: +0. */
    const double g1[2] = {1, 1}, b1[2] = {1, -1};
    cr_assert_eq(layernorm_forward_mpfr(y, &mean, &rstd, x, g1, b1, 1, 2, 0.0, RN_F32), 0);
    cr_assert(same_bits(y[0], 0.0) && same_bits(y[1], 0.0));
    /* Backward, exact: dy = [1, 0], gamma = 1: g = [1, 0], mean(g) = 1/2,
       mean(g xhat) = -1/2, dx_i = 2 (g_i - 1/2 + xhat_i / 2) = [2(1 - 1/2 - 1/2), 2(0 - 1/2 + 1/2)]
       = [0, 0]; dgamma = dy * xhat = [-1, 0]; dbeta = [1, 0]. */
    const double dy[2] = {1, 0};
    double dx[2], dg[2], db[2];
    cr_assert_eq(layernorm_backward_mpfr(dx, dg, db, dy, x, g1, 1, 2, 0.0, RN_F64), RN_TWIN_OK);
    cr_assert(same_bits(dx[0], 0.0) && same_bits(dx[1], 0.0));
    cr_assert(same_bits(dg[0], -1.0) && same_bits(dg[1], 0.0));
    cr_assert(same_bits(db[0], 1.0) && same_bits(db[1], 0.0));
}

Test(twin, nonfinite_conventions)
{
    /* specs/golden-format.md: row with NaN -> mean NaN; +Inf only -> mean +Inf; +Inf and -Inf ->
       NaN; rstd and y NaN.  eps = 0 and a constant row: rstd = +Inf, y = NaN. */
    const double x[12] = {1, NAN, 2, 3, INFINITY, 1, INFINITY, -INFINITY, 2, 0, 0, 3};
    const double g[3] = {1, 1, 1}, b[3] = {0, 0, 0};
    double y[12], mean[4], rstd[4];
    cr_assert_eq(layernorm_forward_mpfr(y, mean, rstd, x, g, b, 4, 3, 1e-5, RN_F32), 0);
    cr_assert(isnan(mean[0]) && isinf(mean[1]) && mean[1] > 0 && isnan(mean[2]));
    for (int r = 0; r < 3; r++) {
        cr_assert(isnan(rstd[r]));
        for (int i = 0; i < 3; i++)
            cr_assert(isnan(y[3 * r + i]));
    }
    cr_assert(isfinite(rstd[3]) && isfinite(mean[3]) && y[9] < 0 && y[11] > 0);
    const double xc[3] = {5, 5, 5};
    cr_assert_eq(layernorm_forward_mpfr(y, mean, rstd, xc, g, b, 1, 3, 0.0, RN_F64), 0);
    cr_assert(mean[0] == 5 && isinf(rstd[0]) && isnan(y[0]) && isnan(y[2]));
    /* gamma_j = +Inf poisons column j: t > 0 -> +Inf, t < 0 -> -Inf, t = 0 -> NaN. */
    const double x2[3] = {1, 2, 3}, g2[3] = {INFINITY, INFINITY, INFINITY};
    cr_assert_eq(layernorm_forward_mpfr(y, mean, rstd, x2, g2, b, 1, 3, 1e-5, RN_F64), 0);
    cr_assert(isinf(y[0]) && y[0] < 0 && isnan(y[1]) && isinf(y[2]) && y[2] > 0);
}

/* ------------------------------------------------------------------------------------------------
 * The twin against a naive 1000-bit evaluation of specs/layernorm.h on pseudo-random data.
 * The naive evaluation has relative error ~2^-990, so its rounding equals the correctly rounded
 * value unless the exact value lies within 2^-990 of a midpoint (not the case for these data).
 */

#define NP 1000

static double round_to(mpfr_srcptr v, rn_dtype d)
{
    if (d == RN_F64)
        return mpfr_get_d(v, MPFR_RNDN);
    if (d == RN_F32)
        return (double)mpfr_get_flt(v, MPFR_RNDN);
    return rn_round_mpfr(v, d); /* f16 / bf16: checked against hand-derived cases above */
}

static uint64_t lcg(uint64_t *s)
{
    *s = *s * 6364136223846793005ull + 1442695040888963407ull;
    return *s >> 11;
}

/* A value with at most 24 significant bits, in [-2, 2) * scale + shift, rounded to f32. */
static double sample(uint64_t *s, double scale, double shift)
{
    double u = (double)(lcg(s) >> 29) * 0x1p-24 * 4 - 2; /* 24-bit uniform */
    return (double)(float)(u * scale + shift);
}

static void naive(size_t rows, size_t n, const double *x, const double *gm, const double *bt,
                  const double *dy, double eps, rn_dtype d, double *y, double *mean, double *rstd,
                  double *dx, double *dg, double *db)
{
    mpfr_t s, m, v, r, t, u, sg, sgx, *dgs, *dbs;
    mpfr_inits2(NP, s, m, v, r, t, u, sg, sgx, (mpfr_ptr)0);
    dgs = malloc(n * sizeof *dgs);
    dbs = malloc(n * sizeof *dbs);
    for (size_t j = 0; j < n; j++) {
        mpfr_init2(dgs[j], NP);
        mpfr_init2(dbs[j], NP);
        mpfr_set_zero(dgs[j], 1);
        mpfr_set_zero(dbs[j], 1);
    }
    for (size_t k = 0; k < rows; k++) {
        const double *xr = x + k * n, *dyr = dy + k * n;
        mpfr_set_zero(s, 1);
        for (size_t i = 0; i < n; i++)
            mpfr_add_d(s, s, xr[i], MPFR_RNDN);
        mpfr_div_ui(m, s, n, MPFR_RNDN);                 /* mean */
        mpfr_set_zero(v, 1);
        for (size_t i = 0; i < n; i++) {
            mpfr_d_sub(t, xr[i], m, MPFR_RNDN);
            mpfr_sqr(t, t, MPFR_RNDN);
            mpfr_add(v, v, t, MPFR_RNDN);
        }
        mpfr_div_ui(v, v, n, MPFR_RNDN);                 /* var */
        mpfr_add_d(v, v, eps, MPFR_RNDN);
        mpfr_rec_sqrt(r, v, MPFR_RNDN);                  /* rstd */
        mean[k] = round_to(m, d);
        rstd[k] = round_to(r, d);
        mpfr_set_zero(sg, 1);
        mpfr_set_zero(sgx, 1);
        for (size_t i = 0; i < n; i++) {
            mpfr_d_sub(t, xr[i], m, MPFR_RNDN);
            mpfr_mul(t, t, r, MPFR_RNDN);                /* xhat */
            mpfr_mul_d(u, t, gm[i], MPFR_RNDN);
            mpfr_add_d(u, u, bt[i], MPFR_RNDN);
            y[k * n + i] = round_to(u, d);
            mpfr_mul_d(u, t, dyr[i], MPFR_RNDN);
            mpfr_add(dgs[i], dgs[i], u, MPFR_RNDN);      /* dgamma += dy xhat */
            mpfr_add_d(dbs[i], dbs[i], dyr[i], MPFR_RNDN);
            mpfr_set_d(u, dyr[i] * gm[i], MPFR_RNDN);    /* g: product of two f32, exact in f64 */
            mpfr_add(sg, sg, u, MPFR_RNDN);
            mpfr_mul(u, u, t, MPFR_RNDN);
            mpfr_add(sgx, sgx, u, MPFR_RNDN);
        }
        mpfr_div_ui(sg, sg, n, MPFR_RNDN);
        mpfr_div_ui(sgx, sgx, n, MPFR_RNDN);
        for (size_t i = 0; i < n; i++) {
            mpfr_d_sub(t, xr[i], m, MPFR_RNDN);
            mpfr_mul(t, t, r, MPFR_RNDN);                /* xhat */
            mpfr_mul(t, t, sgx, MPFR_RNDN);
            mpfr_set_d(u, dyr[i] * gm[i], MPFR_RNDN);
            mpfr_sub(u, u, sg, MPFR_RNDN);
            mpfr_sub(u, u, t, MPFR_RNDN);
            mpfr_mul(u, u, r, MPFR_RNDN);
            dx[k * n + i] = round_to(u, d);
        }
    }
    for (size_t j = 0; j < n; j++) {
        dg[j] = round_to(dgs[j], d);
        db[j] = round_to(dbs[j], d);
        mpfr_clears(dgs[j], dbs[j], (mpfr_ptr)0);
    }
    free(dgs);
    free(dbs);
    mpfr_clears(s, m, v, r, t, u, sg, sgx, (mpfr_ptr)0);
}

static void cmp_arrays(const char *what, const double *a, const double *b, size_t k, rn_dtype d,
                       double shift)
{
    for (size_t i = 0; i < k; i++)
        cr_assert(same_bits(a[i], b[i]) || (a[i] == 0 && b[i] == 0),
                  "%s[%zu] (%s, shift %g): twin %a, naive %a", what, i, rn_dtype_name(d), shift,
                  a[i], b[i]);
}

Test(twin, matches_naive_high_precision)
{
    enum { R = 3, N = 13 };
    const double shifts[] = {0.0, 100.0, 40000.0, -3e6};
    const double scales[] = {1.0, 0.01, 0.01, 1e-3};
    uint64_t s = 42;
    for (size_t c = 0; c < sizeof shifts / sizeof shifts[0]; c++) {
        double x[R * N], dy[R * N], gm[N], bt[N];
        for (int i = 0; i < R * N; i++) {
            x[i] = sample(&s, scales[c], shifts[c]);
            dy[i] = sample(&s, 1.0, 0.0);
        }
        for (int j = 0; j < N; j++) {
            gm[j] = sample(&s, 0.2, 1.0);
            bt[j] = sample(&s, 0.1, 0.0);
        }
        double eps = (double)1e-5f;
        for (int d = 0; d < RN_NDTYPES; d++) {
            double y1[R * N], m1[R], r1[R], dx1[R * N], dg1[N], db1[N];
            double y2[R * N], m2[R], r2[R], dx2[R * N], dg2[N], db2[N];
            cr_assert_eq(layernorm_forward_mpfr(y1, m1, r1, x, gm, bt, R, N, eps, (rn_dtype)d), 0);
            cr_assert_eq(layernorm_backward_mpfr(dx1, dg1, db1, dy, x, gm, R, N, eps, (rn_dtype)d),
                         0);
            naive(R, N, x, gm, bt, dy, eps, (rn_dtype)d, y2, m2, r2, dx2, dg2, db2);
            cmp_arrays("y", y1, y2, R * N, (rn_dtype)d, shifts[c]);
            cmp_arrays("mean", m1, m2, R, (rn_dtype)d, shifts[c]);
            cmp_arrays("rstd", r1, r2, R, (rn_dtype)d, shifts[c]);
            cmp_arrays("dx", dx1, dx2, R * N, (rn_dtype)d, shifts[c]);
            cmp_arrays("dgamma", dg1, dg2, N, (rn_dtype)d, shifts[c]);
            cmp_arrays("dbeta", db1, db2, N, (rn_dtype)d, shifts[c]);
        }
    }
}

/* ------------------------------------------------------------------------------------------------
 * Backward against finite differences of the forward.
 *
 * L(x, gamma, beta) = sum_{r,i} dy_ri y_ri.  Then dx = dL/dx, dgamma = dL/dgamma (summed over rows),
 * dbeta = dL/dbeta.  L is evaluated from the twin's forward (each y correctly rounded to binary64)
 * with an exact MPFR sum of the products dy * y, and differentiated with the 5-point stencil
 *     L'(v) ~ (-L(v+2h) + 8 L(v+h) - 8 L(v-h) + L(v-2h)) / (12 h).
 * Error budget, h = 2^-12 (a power of two, so v +- h, v +- 2h are exact in binary64 for the inputs
 * below, multiples of 2^-10 of modulus < 4):
 *   truncation: h^4/30 |L^(5)| ~ 1e-16 * |L^(5)|, with |L^(5)| = O(10^3) for these rows
 *     (derivatives of 1/sqrt(var + eps) with var = O(1)): ~1e-13;
 *   rounding: each L carries at most sum |dy y| 2^-53 ~ 20 * 1.1e-16 = 2.2e-15, and the stencil
 *     multiplies it by (1 + 8 + 8 + 1)/(12 h) = 6144: ~1.4e-11.
 * So |FD - exact| < 1e-10; the twin's backward is the exact gradient within half an ulp.  Tolerance
 * 1e-9 (1 + |grad|): a wrong term (missing mean(g), wrong sign, n-1, rstd^2 for rstd) is O(0.1).
 */

enum { FR = 2, FN = 5 };

static double loss(const double *x, const double *g, const double *b, const double *dy, double eps)
{
    double y[FR * FN], m[FR], r[FR];
    cr_assert_eq(layernorm_forward_mpfr(y, m, r, x, g, b, FR, FN, eps, RN_F64), 0);
    mpfr_t acc, t;
    mpfr_init2(acc, 3000);
    mpfr_init2(t, 200);
    mpfr_set_zero(acc, 1);
    for (int i = 0; i < FR * FN; i++) {
        mpfr_set_d(t, y[i], MPFR_RNDN);
        mpfr_mul_d(t, t, dy[i], MPFR_RNDN); /* exact in 200 bits */
        mpfr_add(acc, acc, t, MPFR_RNDN);   /* exact in 3000 bits */
    }
    double L = mpfr_get_d(acc, MPFR_RNDN);
    mpfr_clears(acc, t, (mpfr_ptr)0);
    return L;
}

static double fd(double *v, const double *x, const double *g, const double *b, const double *dy,
                 double eps)
{
    const double h = 0x1p-12;
    double v0 = *v, L[4];
    const double off[4] = {2 * h, h, -h, -2 * h};
    for (int k = 0; k < 4; k++) {
        *v = v0 + off[k];
        L[k] = loss(x, g, b, dy, eps);
    }
    *v = v0;
    return (-L[0] + 8 * L[1] - 8 * L[2] + L[3]) / (12 * h);
}

Test(twin, backward_matches_finite_differences)
{
    double x[FR * FN] = {0.5, -1.25, 2.0, 0.75, -0.375, 1.5, 1.625, -0.875, 0.25, 3.0};
    double g[FN] = {1.0, 0.875, -1.5, 1.25, 0.5}, b[FN] = {0.125, -0.25, 0.0, 0.5, 1.0};
    double dy[FR * FN] = {1.0, -0.5, 0.25, 2.0, -1.5, 0.75, 0.125, -1.0, 1.5, -0.25};
    double eps = 0.01;
    double dx[FR * FN], dg[FN], db[FN];
    cr_assert_eq(layernorm_backward_mpfr(dx, dg, db, dy, x, g, FR, FN, eps, RN_F64), 0);
    double worst = 0;
    for (int i = 0; i < FR * FN; i++) {
        double f = fd(&x[i], x, g, b, dy, eps);
        cr_assert(fabs(f - dx[i]) <= 1e-9 * (1 + fabs(dx[i])), "dx[%d]: twin %.17g, fd %.17g", i,
                  dx[i], f);
        worst = fmax(worst, fabs(f - dx[i]) / (1 + fabs(dx[i])));
    }
    for (int j = 0; j < FN; j++) {
        double f = fd(&g[j], x, g, b, dy, eps);
        cr_assert(fabs(f - dg[j]) <= 1e-9 * (1 + fabs(dg[j])), "dgamma[%d]: twin %.17g, fd %.17g",
                  j, dg[j], f);
        worst = fmax(worst, fabs(f - dg[j]) / (1 + fabs(dg[j])));
        f = fd(&b[j], x, g, b, dy, eps);
        cr_assert(fabs(f - db[j]) <= 1e-9 * (1 + fabs(db[j])), "dbeta[%d]: twin %.17g, fd %.17g",
                  j, db[j], f);
    }
    cr_log_info("twin backward vs finite differences: worst relative gap %.3g (tolerance 1e-9)",
                worst);
}
