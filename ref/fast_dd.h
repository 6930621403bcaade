/* Double-double arithmetic with a rigorous error bound, and the certified rounding of an enclosure
 * to f64 / f32 / f16 / bf16: the primitives of the fast paths (ref/<family>_fast.c) that run before
 * the MPFR twins.  Derivations: specs/fast-path.md (section numbers in brackets); the primitives'
 * exactness conditions and relative errors are checked by Gappa (`make prove-fast`,
 * proofs/fast_dd/ files).
 *
 * The pattern is CRlibm's / CORE-MATH's: a quantity is carried as an unevaluated sum hi + lo of two
 * doubles together with err >= |exact - (hi + lo)|, an upper bound evaluated along the computation.
 * fd_certify() emits the rounded value only when EVERY real number of [hi + lo - err, hi + lo + err]
 * rounds to the same value of the output format (rounding is monotone: comparing the two ends is
 * enough); otherwise the caller hands the element to the MPFR twin, which decides.
 *
 * Requirements: IEEE binary64, round-to-nearest-even, gradual underflow (no FTZ/DAZ), fma() a
 * single rounding (C99 7.12.13.1), and the project's -ffp-contract=off (no other fused operation).
 * Header-only (static inline): the inner loops must inline these. */
#ifndef RESNORM_FAST_DD_H
#define RESNORM_FAST_DD_H

#include <float.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "dtype.h"

/* The row functions are compiled twice (GCC target_clones, chosen once at load time by the CPU):
   with the FMA instruction set, where fma() is one inline instruction, and for any x86-64, where it
   is glibc's (a call, correctly rounded too).  Both compute the same bits: fma is one rounding
   either way, and -ffp-contract=off forbids any other fusion. */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && !defined(__SANITIZE_ADDRESS__)
#define FD_CLONES __attribute__((target_clones("fma", "default")))
#else
#define FD_CLONES
#endif

/* Every per-element helper below is forced inline (the per-row ones, fd_rsqrt, fd_rstd and the
   statistics' certifications, may stay out of line).  Left to GCC, fd_format and fd_round_unbounded
   stayed out of line, compiled once for the baseline in legacy SSE encoding, and were called per
   element from the "fma" clones, whose vector loops leave the upper halves of the ymm registers
   dirty: on the AVX-512 Xeons measured here each SSE instruction then pays a state-merge penalty
   (LayerNorm forward 4096 x 4096 f32: 5.1 s instead of 0.20; specs/fast-path.md §9, "Helpers out
   of line"). */
#define FD_INLINE static inline __attribute__((always_inline))

#define FD_U 0x1p-53     /* unit roundoff of binary64 */
/* The charge for one underflow: every error term written eta in specs/fast-path.md (eta = 2^-1074,
   twice the largest absolute error of a rounding into the subnormals) is charged as FD_ETA =
   2^-1020 >= eta, a larger upper bound, so still an upper bound [§3.1].  It is a normal number on
   purpose: an arithmetic operation with a subnormal operand costs a microcode assist on the x86-64
   CPUs measured here, and the per-element error terms add it ~4 times an element (LayerNorm
   forward: 57 -> 27 ns per element with the normal charge).  0.5 * FD_ETA is normal too. */
#define FD_ETA 0x1p-1020

/* ---- error-free transformations [§2] ---- */

/* s + e == a + b exactly, s = RN(a + b) (Knuth's TwoSum: no condition but no overflow). */
FD_INLINE void fd_two_sum(double a, double b, double *s, double *e)
{
    double t = a + b;
    double bp = t - a;
    double ap = t - bp;
    *e = (a - ap) + (b - bp);
    *s = t;
}

/* s + e == a + b exactly when |a| >= |b| or a == 0 (Dekker's Fast2Sum). */
FD_INLINE void fd_fast_two_sum(double a, double b, double *s, double *e)
{
    double t = a + b;
    *e = b - (t - a);
    *s = t;
}

/* p + e == a * b exactly, p = RN(a b), when e does not underflow (exponent of a b >= -969);
   otherwise |p + e - a b| <= FD_ETA / 2 [§2]. */
FD_INLINE void fd_two_prod(double a, double b, double *p, double *e)
{
    double t = a * b;
    *e = fma(a, b, -t);
    *p = t;
}

/* ---- bounds computed in round-to-nearest that are still upper bounds [§3] ---- */

/* An err value computed in round-to-nearest as a sum/product of at most 16 non-negative terms is
   below the exact one by a factor (1 - 2^-53)^16 at most, plus underflow errors (2^-1075 each)
   times multipliers <= 2^30: fd_up covers both (its floor, 2^-1000 >= 2^34 * 2^-1074, only
   matters far below every normal output, where the fast path falls back anyway; it is normal for
   the reason given at FD_ETA). */
FD_INLINE double fd_up(double e)
{
    return e * (1.0 + 0x1p-46) + 0x1p-1000;
}

/* ---- the formats ---- */

typedef struct {
    int p;            /* precision */
    int emin;         /* IEEE exponent of the smallest normal */
    double maxv;      /* largest finite */
} fd_fmt;

FD_INLINE fd_fmt fd_format(rn_dtype d)
{
    switch (d) {
    case RN_F32: return (fd_fmt){24, -126, 0x1.fffffep127};
    case RN_F16: return (fd_fmt){11, -14, 65504.0};
    case RN_BF16: return (fd_fmt){8, -126, 0x1.fep127};
    default: return (fd_fmt){53, -1022, 0x1.fffffffffffffp1023};
    }
}

FD_INLINE uint64_t fd_bits(double x)
{
    uint64_t b;
    memcpy(&b, &x, sizeof b);
    return b;
}

FD_INLINE double fd_from_bits(uint64_t b)
{
    double x;
    memcpy(&x, &b, sizeof x);
    return x;
}

/* 2^k for -1022 <= k <= 1023, exactly. */
FD_INLINE double fd_pow2(int k)
{
    return fd_from_bits((uint64_t)(k + 1023) << 52);
}

/* IEEE exponent of x != 0 (subnormal doubles: -1023, below every emin used here). */
FD_INLINE int fd_ilogb(double x)
{
    return (int)((fd_bits(x) >> 52) & 0x7ff) - 1023;
}

/* The neighbours of a finite double: largest double < x, smallest double > x (exact). */
FD_INLINE double fd_pred(double x)
{
    if (x == 0.0)
        return -0x1p-1074;
    uint64_t b = fd_bits(x);
    return fd_from_bits(x > 0 ? b - 1 : b + 1);
}

FD_INLINE double fd_succ(double x)
{
    if (x == 0.0)
        return 0x1p-1074;
    uint64_t b = fd_bits(x);
    return fd_from_bits(x > 0 ? b + 1 : b - 1);
}

/* Round-to-nearest-even of a finite double h to precision f.p with f.emin's subnormals and an
   UNBOUNDED exponent above (the overflow decision is the caller's) [§4].  f.p < 53.  The quantum
   q = 2^(max(e, emin) - p + 1); h / q has at most p + 1 integer bits, and adding then subtracting
   1.5 * 2^52 rounds it to an integer, ties to even, in binary64's own rounding. */
FD_INLINE double fd_round_unbounded(double h, fd_fmt f, double *quantum)
{
    int e = fd_ilogb(h);
    int k = (e > f.emin ? e : f.emin) - f.p + 1;
    double q = fd_pow2(k), iq = fd_pow2(-k);
    double t = h * iq; /* exact: a power-of-two scaling, no underflow (|t| >= 2^-1074 * 2^149) */
    const double C = 0x1.8p52;
    double r = ((t + C) - C) * q; /* exact product: an integer of <= p + 1 bits times q */
    *quantum = q;
    return r;
}

/* The rounding to format d of the exact value h + l, where (h, l) is normalised: h == RN(h + l)
   (the output of fd_two_sum).  Returns the value of d (+-Inf on overflow; an exact zero is +0, a
   non-zero value that rounds to zero keeps its sign) [§4]. */
FD_INLINE double fd_round_dd(double h, double l, rn_dtype d)
{
    if (h == 0.0)
        return 0.0; /* then l == 0: an exact zero is +0 */
    if (d == RN_F64)
        return h; /* h == RN(h + l): binary64 rounding of the exact value, overflow included */
    fd_fmt f = fd_format(d);
    double q;
    double r = fd_round_unbounded(h, f, &q);
    double dlt = h - r; /* exact [§4]: |dlt| <= q/2, h and r multiples of ulp(h) or of q */
    /* h is a midpoint of d iff |dlt| == q/2 (q is the spacing of d in h's binade, where every
       midpoint near h lies); then the sign of l decides, l == 0 being the tie already broken to
       even by fd_round_unbounded.  Otherwise h + l is on h's side of every midpoint [§4]. */
    if (l != 0.0 && fabs(dlt) == 0.5 * q && (l > 0) == (dlt > 0))
        r = r + 2.0 * dlt; /* past the midpoint, away from r: the other neighbour (exact) */
    if (fabs(r) > f.maxv)
        return r > 0 ? INFINITY : -INFINITY;
    if (r == 0.0)
        return h > 0 ? 0.0 : -0.0;
    return r;
}

/* The common case of fd_certify, cheaply [§4.3]: (h, l) = hi + lo normalised, r the rounding of h
   (q: the spacing of d in h's binade), and the whole enclosure within the open interval of reals
   that round to r: |h - r| + |l| + err < q/2 (q/4 when r is a power of two, below which the
   spacing halves), with a relative margin 2^-40 for the two roundings of the left side.  Returns 0
   when unsure (the caller then compares the two ends exactly). */
FD_INLINE int fd_quick_accept(double hi, double lo, double err,
                                                                 rn_dtype d, double *res)
{
    double h, l;
    fd_two_sum(hi, lo, &h, &l);
    if (h == 0.0 || !isfinite(h) || !isfinite(l))
        return 0;
    fd_fmt f = fd_format(d);
    int e = fd_ilogb(h);
    if (e <= -1022 + 53 || e >= 1022)
        return 0; /* near binary64's own subnormals or overflow: the exact comparison */
    double r, q;
    if (d == RN_F64) {
        r = h;
        q = fd_pow2(e - 52);
    } else {
        r = fd_round_unbounded(h, f, &q);
        if (r == 0.0 || fabs(r) > f.maxv)
            return 0;
    }
    double hg = (fd_bits(r) & 0xfffffffffffffull) == 0 ? 0.25 * q : 0.5 * q;
    if (fabs(h - r) + fabs(l) + err < hg * (1.0 - 0x1p-40)) {
        *res = r;
        return 1;
    }
    return 0;
}

/* fd_certify(hi, lo, err, RN_F64, res)'s err < Inf guard and cheap test (fd_quick_accept's
   binary64 case, the same operations), without a branch or an integer exponent, so that a loop
   over it vectorizes: 1.0 when it accepts (then *res = RN(hi + lo), the certified value), else
   0.0 (*res unchanged: the caller runs fd_certify, which decides).  With (h, l) = TwoSum(hi, lo):
   fd_ilogb(h) in (-1022 + 53, 1022) is 2^-968 <= |h| < 2^1022 (false for 0, subnormals, Inf,
   NaN); p = 2^ilogb(h) is h's exponent bits alone, q = p 2^-52 (exact); the half-gap hg is q/4
   when h's significand field is zero (|h| == p), else q/2 (|h| > p), and "t < hg (1 - 2^-40)" is
   written as "t below the q/4 threshold, or |h| > p and t below the q/2 one" (the same products;
   the first implies the second): a select between the two halves kept GCC from vectorizing. */
FD_INLINE double fd_quick_accept_f64(double hi, double lo,
                                                                        double err, double *res)
{
    double h, l;
    fd_two_sum(hi, lo, &h, &l);
    double p = fd_from_bits(fd_bits(h) & 0x7ff0000000000000ull), q = p * 0x1p-52;
    double t = fabs(h - h) + fabs(l) + err;
    int ok = (err < INFINITY) & (fabs(h) >= 0x1p-968) & (fabs(h) < 0x1p1022) &
             (fabs(l) <= DBL_MAX) &
             ((t < 0.25 * q * (1.0 - 0x1p-40)) | ((fabs(h) > p) & (t < 0.5 * q * (1.0 - 0x1p-40))));
    *res = ok ? h : *res;
    return ok ? 1.0 : 0.0;
}

/* The exact comparison of the two ends of [hi + lo - err, hi + lo + err] (err finite >= 0) [§4.2]:
   each end an exact double-double (a directed step, fd_pred / fd_succ, after the round-to-nearest
   subtraction moves it outward, never inward), rounded exactly by fd_round_dd. */
static __attribute__((noinline, unused)) int fd_certify_ends(double hi, double lo, double err,
                                                             rn_dtype d, double *res)
{
    double cl = fd_pred(lo - err), ch = fd_succ(lo + err);
    if (err == 0.0)
        cl = ch = lo; /* the value is hi + lo exactly */
    double lh, ll, hh, hl;
    fd_two_sum(hi, cl, &lh, &ll);
    fd_two_sum(hi, ch, &hh, &hl);
    if (!isfinite(lh) || !isfinite(hh) || !isfinite(ll) || !isfinite(hl))
        return 0;
    double a = fd_round_dd(lh, ll, d), b = fd_round_dd(hh, hl, d);
    if (fd_bits(a) != fd_bits(b))
        return 0;
    *res = a;
    return 1;
}


/* If every real of [hi + lo - err, hi + lo + err] rounds to one value of d, store it and return 1;
   else return 0.  hi, lo finite; (hi, lo) need not be normalised [§4].  The cheap test inline,
   the exact comparison of the ends out of line. */
FD_INLINE int fd_certify(double hi, double lo, double err,
                                                            rn_dtype d, double *res)
{
    if (!(err < INFINITY)) /* +Inf or NaN */
        return 0;
    if (fd_quick_accept(hi, lo, err, d, res))
        return 1;
    return fd_certify_ends(hi, lo, err, d, res);
}

/* ---- double-double numbers with an error bound [§3] ---- */

/* A real number known to lie within e of h + l. */
typedef struct {
    double h, l, e;
} fd_num;

/* (h + l) / d for a double d > 0: q1 = RN(h / d), its remainder h - q1 d is exact (fma, no
   underflow; else within FD_ETA/2), the remainder plus l divided once more.  Error [§3.2]:
   e / d + (2u|r2| + eta) / d + 2u|q2| + eta.  The result is normalised (h = RN(h + l)). */
FD_INLINE fd_num fd_div_d(fd_num a, double d)
{
    double q1 = a.h / d;
    double r = fma(-q1, d, a.h);
    double r2 = r + a.l;
    double q2 = r2 / d;
    fd_num q;
    fd_two_sum(q1, q2, &q.h, &q.l);
    q.e = fd_up(a.e / d + (2.0 * FD_U * fabs(r2) + FD_ETA) / d + 2.0 * FD_U * fabs(q2) + FD_ETA);
    return q;
}

/* 1 / sqrt(y) for y normalised (|y.l| <= u y.h) with 2^-900 <= y.h <= 2^900 and y.e <= y.h / 4;
   returns 0 (no result) outside those conditions.  One Newton step from r0 = RN(1 / RN(sqrt(y.h)))
   in double-double: r = r0 + r0 (1 - y r0^2) / 2.  Error [§3.3]: the step's own error
   <= 32 u^2 r (derivation: 1.5 eps^2 with |eps| <= 2.6u, plus the roundings of the correction),
   plus the propagated error of y, 0.78 r e / y.h <= r e / y.h, plus underflow terms. */
static inline int fd_rsqrt(fd_num y, fd_num *r)
{
    if (!(y.h >= 0x1p-900 && y.h <= 0x1p900 && y.e <= 0.25 * y.h))
        return 0;
    double r0 = 1.0 / sqrt(y.h);
    double s1, s2, m1, m2;
    fd_two_prod(r0, r0, &s1, &s2);     /* r0^2 = s1 + s2 exactly */
    fd_two_prod(y.h, s1, &m1, &m2);    /* y.h s1 = m1 + m2 exactly */
    double t1 = (1.0 - m1) - m2;       /* 1 - m1 exact (Sterbenz: m1 in [1 - 8u, 1 + 8u]) */
    double t3 = fma(y.h, s2, y.l * s1);
    double h = t1 - t3;                /* 1 - y r0^2, y.l s2 (<= 1.1 u^2) dropped */
    double c = (r0 * h) * 0.5;
    fd_fast_two_sum(r0, c, &r->h, &r->l); /* |c| <= 3u r0: exact */
    r->e = fd_up(r->h * (y.e / y.h) + 32.0 * FD_U * FD_U * r->h + 4.0 * FD_ETA * (1.0 + r->h));
    return 1;
}

/* rstd = 1 / sqrt(V / n + eps) for V >= 0 known as a double-double (n var for LayerNorm, the sum of
   squares for RMSNorm), n >= 1 and eps >= 0 doubles [§3.4]: Z = V + n eps (n eps exact by TwoProd),
   Y = Z / n (fd_div_d), then fd_rsqrt.  Returns 0 where fd_rsqrt does (Y near 0 or out of range). */
static inline int fd_rstd(fd_num V, double n, double eps, fd_num *R)
{
    double ne, nel, z1, z2;
    fd_two_prod(n, eps, &ne, &nel);
    fd_two_sum(V.h, ne, &z1, &z2);
    double w = V.l + nel;
    double z2b = z2 + w;
    fd_num Z;
    fd_two_sum(z1, z2b, &Z.h, &Z.l);
    Z.e = fd_up(V.e + 2.0 * FD_U * fabs(w) + 2.0 * FD_U * fabs(z2b) + 2.0 * FD_ETA);
    return fd_rsqrt(fd_div_d(Z, n), R);
}

/* ---- generic double-double operations with error (the backward paths) [§3.5] ---- */

FD_INLINE fd_num fd_exact(double h, double l) { return (fd_num){h, l, 0.0}; }

FD_INLINE fd_num fd_neg(fd_num a) { return (fd_num){-a.h, -a.l, a.e}; }

/* a + b: TwoSum of the heads, the tails added in two roundings. */
FD_INLINE fd_num fd_add(fd_num a, fd_num b)
{
    double s, e;
    fd_two_sum(a.h, b.h, &s, &e);
    double t = a.l + b.l;
    double l = e + t;
    return (fd_num){s, l, fd_up(a.e + b.e + 2.0 * FD_U * (fabs(t) + fabs(l)))};
}

/* a b: TwoProd of the heads, the cross terms by two fmas, a.l b.l dropped;
   |ab - a^b^| <= a.e (|b^| + b.e) + |a^| b.e. */
FD_INLINE fd_num fd_mul(fd_num a, fd_num b)
{
    double p1, p2;
    fd_two_prod(a.h, b.h, &p1, &p2);
    double f1 = fma(a.l, b.h, p2);
    double f2 = fma(a.h, b.l, f1);
    double ka = fabs(a.h) + fabs(a.l), kb = fabs(b.h) + fabs(b.l);
    return (fd_num){p1, f2,
                    fd_up(a.e * (kb + b.e) + ka * b.e + 2.0 * FD_U * (fabs(f1) + fabs(f2)) +
                          fabs(a.l) * fabs(b.l) + 1.5 * FD_ETA)};
}

/* A running sum of fd_num terms (Sum2 on the heads; tails and chain errors in c; A the RN-sum of
   their magnitudes; E the RN-sum of the terms' errors; m the number of additions into c). */
typedef struct {
    double s, c, A, E, m;
} fd_acc;

FD_INLINE void fd_acc_add(fd_acc *q, fd_num t)
{
    double e;
    fd_two_sum(q->s, t.h, &q->s, &e);
    q->c += e;
    q->c += t.l;
    q->A += fabs(e) + fabs(t.l);
    q->E += t.e;
    q->m += 2.0;
}

static inline void fd_acc_merge(fd_acc *q, const fd_acc *r)
{
    double e;
    fd_two_sum(q->s, r->s, &q->s, &e);
    q->c += r->c;
    q->c += e;
    q->A += r->A + fabs(e) + fabs(r->c);
    q->E += r->E;
    q->m += r->m + 2.0;
}

/* The sum as an fd_num: error = the terms' errors (E, RN-summed: times 1 + m u) plus the RN sum of
   c, within gamma_m sum |.| <= 1.01 m u A (Higham Thm 4.3; m u <= 2^-20 assumed by the caller). */
static inline fd_num fd_acc_value(const fd_acc *q)
{
    fd_num v;
    fd_two_sum(q->s, q->c, &v.h, &v.l);
    v.e = fd_up(q->E + 3.0 * q->m * FD_U * (q->A + q->E));
    return v;
}

/* The exact sum v = x + k (+ b) of the skip ops as s + t within e [§5.8]: TwoSum(x, k) = s1 + e1
   exactly; with b, TwoSum(s1, b) = s + e2 and t = RN(e1 + e2) (error <= 2u|t|; additions do not
   underflow).  Returns 0 (fall back) on a non-finite addend or an overflow of s or t.  The
   backward ops (§5.9, §6.6) use v alone; the forward ops also round it (fd_skip_sum). */
FD_INLINE int fd_skip_split(double x, double k, const double *b, double *s, double *t,
                                double *e)
{
    double s1, e1;
    fd_two_sum(x, k, &s1, &e1);
    if (!b) {
        *s = s1, *t = e1, *e = 0.0;
    } else {
        double e2;
        fd_two_sum(s1, *b, s, &e2);
        *t = e1 + e2;
        *e = 2.0 * FD_U * fabs(*t);
    }
    return isfinite(*s) && isfinite(*t);
}

/* fd_skip_split and the rounding of v to `out` (the forward ops' `sum` output), certified; an
   exact zero takes IEEE's sign, (x + k) + b in binary64 (-0 only when every addend is -0), as the
   twin's exact sum.  Returns 0 (fall back) where fd_skip_split does, or on an uncertified
   rounding. */
FD_INLINE int fd_skip_sum(double x, double k, const double *b, double *s, double *t, double *e,
                              rn_dtype out, double *rounded)
{
    if (!fd_skip_split(x, k, b, s, t, e))
        return 0;
    if (*s == 0.0 && *t == 0.0) {
        *rounded = b ? (x + k) + *b : x + k; /* an exact zero: IEEE's sign rule */
        return 1;
    }
    return fd_certify(*s, *t, *e, out, rounded);
}

FD_INLINE int fd_certify_num(fd_num v, rn_dtype d, double *res)
{
    return fd_certify(v.h, v.l, v.e, d, res);
}

/* ---- the statistics of the a-priori bounds (ref/layernorm_bound.c, ref/rmsnorm_bound.c) [§10] ---- */

/* A bound on how far the bounds' MPFR path (256-bit intermediates, ref/layernorm_bound.c) may
   be from the exact value, relative to the magnitudes passed: 2^-240 >> 2^-253 [§10.1]. */
#define FD_MPFR_SLACK 0x1p-240

/* Round-to-nearest binary64 of the value v, certified with an error widened by
   FD_MPFR_SLACK * mag, so that the MPFR path's value rounds to the same double [§10.1]. */
static inline int fd_certify_f64_slack(fd_num v, double mag, double *res)
{
    return fd_certify(v.h, v.l, fd_up(v.e + FD_MPFR_SLACK * mag), RN_F64, res);
}

/* The bounds' upper statistics (mean|x|, mean|x - m|) are not the round-up of the exact value to
   binary64 (whether an exact value is itself a double, e.g. a sum of f32 values divided by n = 2^k,
   cannot be decided from an enclosure) but FD_STAT_UP(v) = RU_40(v (1 + 2^-45)): v inflated by
   2^-45, then rounded up to 40 bits.  An upper bound on v within 2^-38 relative; it lies on a
   40-bit boundary only for v of a very special form (never for a sum of binary64 values divided
   by n <= 2^20 unless it has a prime factor 18837001 of 2^45 + 1), so an enclosure certifies it
   almost always [§10.2].  Both the fast path and the MPFR path compute this same quantity. */
#define FD_STAT_INFLATE (1.0 + 0x1p-45)
#define FD_STAT_BITS 40

/* RU to FD_STAT_BITS bits of the exact h + t (h > 0 normal, h = RN(h + t), 2^-900 <= h <= 2^900):
   c = ceil(h / q) q with q the 40-bit quantum of h's binade (exact scalings); h + t lies in
   (c - q, c] unless h = c and t > 0 (then c + q): |t| <= ulp(h) / 2 <= c - h when h < c. */
static inline double fd_ru_bits_dd(double h, double t)
{
    double q = fd_pow2(fd_ilogb(h) - (FD_STAT_BITS - 1));
    double c = ceil(h / q) * q;
    return (h == c && t > 0.0) ? c + q : c;
}

/* FD_STAT_UP of the real v within v.e of v.h + v.l, certified with an error widened by err (the
   FD_MPFR_SLACK term) [§10.2]: w = v (1 + 2^-45) by fd_mul; L = h + t_lo <= w - e and
   U = h + t_hi >= w + e (the sums l -+ e rounded, moved one step outwards when TwoSum says the
   rounding went inwards; (h, t) renormalised by TwoSum, exact).  RU is monotone, so
   RU(L) <= RU(w) <= RU(U): when they are equal that is the value for every v of the widened
   enclosure; returns 1 and stores it, else 0 (also for v.h outside [2^-900, 2^900]). */
static inline int fd_certify_stat_up(fd_num v, double err, double *res)
{
    fd_num w = fd_mul(v, fd_exact(FD_STAT_INFLATE, 0.0));
    if (!(w.h >= 0x1p-900 && w.h <= 0x1p900))
        return 0;
    double e = fd_up(w.e + err * FD_STAT_INFLATE), tl, tle, th, the, h1, t1, h2, t2;
    fd_two_sum(w.l, -e, &tl, &tle);
    if (tle < 0.0)
        tl = fd_pred(tl);
    fd_two_sum(w.l, e, &th, &the);
    if (the > 0.0)
        th = fd_succ(th);
    fd_two_sum(w.h, tl, &h1, &t1);
    fd_two_sum(w.h, th, &h2, &t2);
    if (!(h1 >= 0x1p-900 && h2 <= 0x1p900))
        return 0;
    double lo = fd_ru_bits_dd(h1, t1), hi = fd_ru_bits_dd(h2, t2);
    if (lo != hi)
        return 0;
    *res = hi;
    return 1;
}

/* The column sums of a norm's backward (dgamma, dbeta, dbias) kept across calls, one set per
   thread, with each thread's row scratch: what norm_fast.h's norm_cols is (the streaming eval of
   the backward ops, and the all-rows *_backward_fast calls).  Column k of thread t is
   acc[(t ncols + k) n ...]. */
struct norm_cols {
    int ncols, threads, merged;
    size_t n;
    size_t *rows;    /* rows added by each thread (the accumulators' m u <= 2^-20: rows <= 2^30) */
    fd_acc *acc;     /* threads x ncols x n */
    fd_num *xh;      /* threads x n: LayerNorm's xhat row */
    double *ws;      /* threads x 3n: the skip ops' split sums (NULL without skip) */
};

static inline fd_acc *norm_cols_acc(struct norm_cols *c, int t, int k)
{
    return c->acc + ((size_t)t * (size_t)c->ncols + (size_t)k) * c->n;
}

/* Row r's result k of a norm's backward row function (0 nothing, 1 all certified, 2 its dx alone
   left) into the block's: row_ok[r] and *all; 0 when the block stops (k = 0, or 2 without
   row_ok). */
static inline int norm_cols_row(int k, unsigned char *row_ok, size_t r, int *all)
{
    if (k == 0 || (k == 2 && !row_ok))
        return 0;
    if (row_ok)
        row_ok[r] = k == 1;
    *all &= k == 1;
    return 1;
}

#endif
