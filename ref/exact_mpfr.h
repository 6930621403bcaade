/* Exact dyadic arithmetic and certified rounding, shared by the MPFR twins (ref/xxx_mpfr.c files).
 *
 * Every input of a twin is a binary float, i.e. a dyadic rational; sums, differences and products of
 * dyadic numbers are computed EXACTLY here, at a precision chosen from the operands' exponent span.
 * The one inexact operation of a normalization, a square root, is enclosed with directed rounding
 * (sqrt_cache), quotients and sums of enclosures are rounded outward (enclose_quot), and a value is
 * emitted only when both ends of its enclosure round to the same value of the output format
 * (certify): rounding is monotone, so that value is the correctly rounded exact result. Otherwise
 * the precision is doubled, P0 = 64 .. 65536 bits (ziv_quot, Ziv's strategy); past that the twin
 * returns RN_TWIN_UNCERTIFIED rather than guess. The ext* functions give the IEEE class (NaN, +-Inf,
 * finite) of a quantity when some input is non-finite; each twin documents how it uses them.
 *
 * Header-only (static inline) so that each twin reads on its own with its helpers in view. */
#ifndef RESNORM_EXACT_MPFR_H
#define RESNORM_EXACT_MPFR_H

#include <math.h>
#include <string.h>

#include <mpfr.h>

#include "dtype.h"
#include "layernorm_mpfr.h" /* RN_TWIN_* */

#define P0 64      /* first working precision (bits) */
#define NLEV 11    /* P0 << 10 = 65536: the last precision tried */

/* ------------------------------------------------------------------------------------------------
 * Exact arithmetic on dyadic numbers: the result precision is chosen so that no rounding occurs.
 */

/* Bits sufficient to hold sum_j t_j exactly: from the top of the largest term (plus carries) down to
   the last bit of the smallest one. */
static inline mpfr_prec_t exact_prec(mpfr_srcptr const *t, size_t k)
{
    int any = 0;
    mpfr_exp_t hi = 0, lo = 0;
    for (size_t j = 0; j < k; j++) {
        if (!mpfr_regular_p(t[j])) /* 0, NaN, Inf: no bits to hold (mpfr_sum decides them) */
            continue;
        mpfr_exp_t e = mpfr_get_exp(t[j]), l = e - (mpfr_exp_t)mpfr_get_prec(t[j]);
        if (!any || e > hi)
            hi = e;
        if (!any || l < lo)
            lo = l;
        any = 1;
    }
    if (!any)
        return MPFR_PREC_MIN;
    mpfr_prec_t carries = 1;
    for (size_t m = k; m > 1; m = (m + 1) / 2)
        carries++;
    return (mpfr_prec_t)(hi - lo) + carries;
}

/* r = sum_j t[j], exactly.  r must not be one of the t[j]. */
static inline void sum_exact(mpfr_t r, mpfr_ptr *t, size_t k)
{
    mpfr_set_prec(r, exact_prec((mpfr_srcptr const *)t, k));
    if (k == 0) {
        mpfr_set_zero(r, 1);
        return;
    }
    int inex = mpfr_sum(r, (const mpfr_ptr *)t, k, MPFR_RNDN);
    (void)inex; /* 0 by construction */
    if (mpfr_zero_p(r))
        mpfr_set_zero(r, 1);
}

/* r = a * b, exactly (r distinct from a and b). */
static inline void mul_exact(mpfr_t r, mpfr_srcptr a, mpfr_srcptr b)
{
    mpfr_set_prec(r, mpfr_get_prec(a) + mpfr_get_prec(b));
    mpfr_mul(r, a, b, MPFR_RNDN);
}

static inline void mul_ui_exact(mpfr_t r, mpfr_srcptr a, unsigned long m)
{
    mpfr_set_prec(r, mpfr_get_prec(a) + 64);
    mpfr_mul_ui(r, a, m, MPFR_RNDN);
}

/* r = a - b, exactly (r distinct from a and b). */
static inline void sub_exact(mpfr_t r, mpfr_srcptr a, mpfr_srcptr b)
{
    mpfr_srcptr t[2] = {a, b};
    mpfr_set_prec(r, exact_prec(t, 2));
    mpfr_sub(r, a, b, MPFR_RNDN);
    if (mpfr_zero_p(r))
        mpfr_set_zero(r, 1);
}

/* r = a + b, exactly (r distinct from a and b). */
static inline void add_exact(mpfr_t r, mpfr_srcptr a, mpfr_srcptr b)
{
    mpfr_srcptr t[2] = {a, b};
    mpfr_set_prec(r, exact_prec(t, 2));
    mpfr_add(r, a, b, MPFR_RNDN);
    if (mpfr_zero_p(r))
        mpfr_set_zero(r, 1);
}

static inline void set_d(mpfr_t r, double v)
{
    mpfr_set_prec(r, 53);
    mpfr_set_d(r, v, MPFR_RNDN);
}

/* ------------------------------------------------------------------------------------------------
 * Enclosures and their certified rounding.
 */

/* sqrt(Q) enclosed at each precision level, computed on first use. */
typedef struct {
    mpfr_t Q;                     /* exact, >= 0 */
    mpfr_t lo[NLEV], hi[NLEV];    /* sqrt(Q) in [lo[k], hi[k]] at precision P0 << k */
    unsigned have;                /* bit k: level k computed */
} sqrt_cache;

static inline void sq_init(sqrt_cache *s)
{
    mpfr_init2(s->Q, MPFR_PREC_MIN);
    s->have = 0;
}

static inline void sq_reset(sqrt_cache *s)
{
    for (int k = 0; k < NLEV; k++)
        if (s->have & (1u << k)) {
            mpfr_clear(s->lo[k]);
            mpfr_clear(s->hi[k]);
        }
    s->have = 0;
}

static inline void sq_clear(sqrt_cache *s)
{
    sq_reset(s);
    mpfr_clear(s->Q);
}

static inline void sq_get(sqrt_cache *s, int k, mpfr_srcptr *lo, mpfr_srcptr *hi)
{
    if (!(s->have & (1u << k))) {
        mpfr_init2(s->lo[k], (mpfr_prec_t)P0 << k);
        mpfr_init2(s->hi[k], (mpfr_prec_t)P0 << k);
        mpfr_sqrt(s->lo[k], s->Q, MPFR_RNDD);
        mpfr_sqrt(s->hi[k], s->Q, MPFR_RNDU);
        s->have |= 1u << k;
    }
    *lo = s->lo[k];
    *hi = s->hi[k];
}

typedef struct {
    mpfr_t dl, dh;  /* denominator enclosure */
    mpfr_t lo, hi;  /* result enclosure */
} work;

static inline void work_init(work *w)
{
    mpfr_inits2(P0, w->dl, w->dh, w->lo, w->hi, (mpfr_ptr)0);
}

static inline void work_clear(work *w)
{
    mpfr_clears(w->dl, w->dh, w->lo, w->hi, (mpfr_ptr)0);
}

/* [lo, hi] := an enclosure of num / (c sqrt(Q)) + b at precision level k.
   sq == NULL: the denominator is c alone (exact).  c == NULL: 1.  b == NULL: 0.
   num, c, b, Q exact; c > 0, Q > 0. */
static inline void enclose_quot(mpfr_t lo, mpfr_t hi, work *w, mpfr_srcptr num, sqrt_cache *sq,
                         mpfr_srcptr c, mpfr_srcptr b, int k)
{
    mpfr_prec_t p = (mpfr_prec_t)P0 << k;
    mpfr_set_prec(lo, p);
    mpfr_set_prec(hi, p);
    mpfr_srcptr dl, dh;
    if (sq) {
        sq_get(sq, k, &dl, &dh);
        if (c) {
            mpfr_set_prec(w->dl, p);
            mpfr_set_prec(w->dh, p);
            mpfr_mul(w->dl, c, dl, MPFR_RNDD);
            mpfr_mul(w->dh, c, dh, MPFR_RNDU);
            dl = w->dl;
            dh = w->dh;
        }
    } else {
        dl = dh = c;
    }
    if (mpfr_sgn(num) >= 0) { /* num / d decreasing in d */
        mpfr_div(lo, num, dh, MPFR_RNDD);
        mpfr_div(hi, num, dl, MPFR_RNDU);
    } else {
        mpfr_div(lo, num, dl, MPFR_RNDD);
        mpfr_div(hi, num, dh, MPFR_RNDU);
    }
    if (b) {
        mpfr_add(lo, lo, b, MPFR_RNDD);
        mpfr_add(hi, hi, b, MPFR_RNDU);
    }
}

/* If both ends of [lo, hi] round to the same value of `out`, store it and return 1. */
static inline int certify(double *res, mpfr_t lo, mpfr_t hi, rn_dtype out)
{
    if (mpfr_zero_p(lo))
        mpfr_set_zero(lo, 1); /* an exact zero is +0 (RNDD may have produced -0) */
    if (mpfr_zero_p(hi))
        mpfr_set_zero(hi, 1);
    double a = rn_round_mpfr(lo, out), b = rn_round_mpfr(hi, out);
    if (memcmp(&a, &b, sizeof a) != 0)
        return 0;
    *res = a;
    return 1;
}

/* Certified rounding of num / (c sqrt(Q)) + b (see enclose_quot). */
static inline int ziv_quot(double *res, work *w, mpfr_srcptr num, sqrt_cache *sq, mpfr_srcptr c,
                    mpfr_srcptr b, rn_dtype out)
{
    for (int k = 0; k < NLEV; k++) {
        enclose_quot(w->lo, w->hi, w, num, sq, c, b, k);
        if (certify(res, w->lo, w->hi, out))
            return RN_TWIN_OK;
    }
    return RN_TWIN_UNCERTIFIED;
}

/* An exact value, rounded once. */
static inline double round_exact(mpfr_t v, rn_dtype out)
{
    if (mpfr_zero_p(v))
        mpfr_set_zero(v, 1);
    return rn_round_mpfr(v, out);
}

/* ------------------------------------------------------------------------------------------------
 * IEEE special values: the class of a quantity when some input is NaN or +-Inf.
 */
typedef enum { E_FIN, E_PINF, E_NINF, E_NAN } ecls;
typedef struct {
    ecls c;
    int s; /* for E_FIN: sign -1, 0, +1, or 2 when not known (never multiplied by an Inf) */
} ext;

static inline ext ext_d(double v)
{
    if (isnan(v))
        return (ext){E_NAN, 0};
    if (isinf(v))
        return (ext){v > 0 ? E_PINF : E_NINF, 0};
    return (ext){E_FIN, v > 0 ? 1 : v < 0 ? -1 : 0};
}

static inline ext ext_fin(int s) { return (ext){E_FIN, s}; }
static inline ext ext_nan(void) { return (ext){E_NAN, 0}; }

static inline ext ext_add(ext a, ext b)
{
    if (a.c == E_NAN || b.c == E_NAN)
        return (ext){E_NAN, 0};
    if (a.c != E_FIN && b.c != E_FIN)
        return a.c == b.c ? a : (ext){E_NAN, 0};
    if (a.c != E_FIN)
        return a;
    if (b.c != E_FIN)
        return b;
    return (ext){E_FIN, a.s == b.s ? a.s : (a.s == 0 ? b.s : (b.s == 0 ? a.s : 2))};
}

static inline ext ext_neg(ext a)
{
    if (a.c == E_PINF)
        return (ext){E_NINF, 0};
    if (a.c == E_NINF)
        return (ext){E_PINF, 0};
    if (a.c == E_FIN && a.s != 2)
        a.s = -a.s;
    return a;
}

static inline ext ext_mul(ext a, ext b)
{
    if (a.c == E_NAN || b.c == E_NAN)
        return (ext){E_NAN, 0};
    if (a.c == E_FIN && b.c == E_FIN)
        return (ext){E_FIN, (a.s == 2 || b.s == 2) ? 2 : a.s * b.s};
    int sa = a.c == E_PINF ? 1 : a.c == E_NINF ? -1 : a.s;
    int sb = b.c == E_PINF ? 1 : b.c == E_NINF ? -1 : b.s;
    if (sa == 0 || sb == 0 || sa == 2 || sb == 2) /* 0 * Inf (an unknown sign cannot occur) */
        return (ext){E_NAN, 0};
    return (ext){sa * sb > 0 ? E_PINF : E_NINF, 0};
}

static inline double ext_value(ext a)
{
    switch (a.c) {
    case E_PINF: return INFINITY;
    case E_NINF: return -INFINITY;
    case E_FIN:  return 0.0; /* only an exact zero reaches an output this way */
    default:     return NAN;
    }
}

#endif
