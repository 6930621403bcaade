/* The four floating-point formats resnorm reads, writes and rounds to.
 * In memory every value is held in a double: f32, f16 and bf16 values are exactly representable
 * in binary64, so a double array "of dtype d" is one whose every element is a value of format d. */
#ifndef RESNORM_DTYPE_H
#define RESNORM_DTYPE_H

#include <stdint.h>
#include <string.h>
#include <mpfr.h>

typedef enum { RN_F64 = 0, RN_F32 = 1, RN_F16 = 2, RN_BF16 = 3, RN_NDTYPES = 4 } rn_dtype;

const char *rn_dtype_name(rn_dtype d);              /* "f64", "f32", "f16", "bf16" */
int rn_dtype_from_name(const char *s, rn_dtype *d); /* 0 on success, -1 if unknown */
int rn_dtype_precision(rn_dtype d);                 /* significand bits: 53, 24, 11, 8 */
double rn_dtype_unit_roundoff(rn_dtype d);          /* u = 2^-p */
double rn_dtype_max(rn_dtype d);                    /* largest finite value */

/* Round-to-nearest-even of v to format d, with gradual underflow and overflow to +-Inf, exactly as
   an IEEE conversion does; NaN stays NaN. The result is a value of format d, held in a double. */
double rn_round(double v, rn_dtype d);
/* The same, for an exact value held in an MPFR number of any precision (one rounding). */
double rn_round_mpfr(mpfr_srcptr v, rn_dtype d);
/* Spacing of format d at |v| (for |v| in the subnormal range, the subnormal spacing). */
double rn_ulp(double v, rn_dtype d);
/* The smallest normal exponent of d (-1022, -126, -14, -126). */
int rn_dtype_emin(rn_dtype d);
/* Half the smallest subnormal of d (2^-1075 rounded up to 2^-1074 for f64; 2^-150, 2^-25,
   2^-134): the largest absolute error of one rounding into d's subnormal range, the eta of
   fl(a op b) = (a op b)(1 + delta) + eta (specs/error-analysis.md §1). */
double rn_dtype_underflow_eta(rn_dtype d);
/* rn_ulp for a finite v, with d's precision p and emin given (inline, for the loops over every
   compared element).  The IEEE exponent of v from its bits (a subnormal double reads -1023, below
   every emin), at least emin (the subnormal spacing for |v| < 2^emin and v == 0); the spacing
   2^k, k = e - p + 1 >= -1074, built from its bits. */
static inline double rn_ulp_finite(double v, int p, int emin)
{
    uint64_t b;
    memcpy(&b, &v, sizeof b);
    int e = (int)((b >> 52) & 0x7ff) - 1023;
    if (v == 0.0 || e < emin)
        e = emin;
    int k = e - p + 1;
    uint64_t r = k >= -1022 ? (uint64_t)(k + 1023) << 52 : (uint64_t)1 << (k + 1074);
    double q;
    memcpy(&q, &r, sizeof q);
    return q;
}
/* rn_ulp_finite(v, p, emin) for a = |v| finite, from double operations and bit masks alone, so
   that a loop over it vectorizes (min_p = 2^emin, step = 2^(1-p)): 2^max(ilogb a, emin) * step,
   exact.  *inv: its reciprocal, from the bits (the exponent field of 1/2^k is 2046 minus 2^k's),
   valid when the spacing is a normal double (>= 2^-1022); e * *inv is then e / spacing to the
   bit (both are the one rounding of the same real). */
static inline double rn_ulp_pow2(double a, double min_p, double step, double *inv)
{
    uint64_t ab, pb, ub, ib;
    memcpy(&ab, &a, sizeof ab);
    pb = ab & 0x7ff0000000000000ull; /* 2^ilogb(a) for a normal a, 0 below */
    double pw;
    memcpy(&pw, &pb, sizeof pw);
    double ulp = (pw > min_p ? pw : min_p) * step;
    memcpy(&ub, &ulp, sizeof ub);
    ib = 0x7fe0000000000000ull - ub;
    memcpy(inv, &ib, sizeof ib);
    return ulp;
}
/* True if v is a value of format d (NaN and +-Inf included). */
int rn_representable(double v, rn_dtype d);
/* True if every value of format d is a value of format c (c == d, c == f64, f16 or bf16 in f32):
   data read from a file of dtype d need no rn_representable check against c. */
int rn_dtype_within(rn_dtype d, rn_dtype c);
/* rn_representable(v, RN_F32), inline for the loops over whole tensors: v equals its conversion
   to float and back (IEEE conversions: a NaN or +-Inf passes, a finite value beyond FLT_MAX
   becomes Inf and fails; the sign-of-zero clause cannot fail, (float)-0.0 is -0.0f). */
static inline int rn_is_f32_value(double v)
{
    return (double)(float)v == v || v != v;
}

/* Bit patterns of the 16-bit formats (v must be representable; NaN maps to the quiet NaN). */
uint16_t rn_f16_bits(double v);
double rn_f16_value(uint16_t bits);
uint16_t rn_bf16_bits(double v);
double rn_bf16_value(uint16_t bits);

/* eps as PyTorch and ONNX use it: its decimal text, rounded once (RN) to format d.
   Returns 0, or -1 if text is not a finite, non-negative decimal number. */
int rn_parse_eps(const char *text, rn_dtype d, double *eps);

#endif
