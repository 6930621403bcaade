/* Machine-checked float error bound of RMSNorm's sum of squares (Gappa + SMT), as proofs/sum_error.c
 * does for the LayerNorm mean's sum.
 *
 * sumsq_f32 / sumsq_f64 below are the kernels' first loop (ref/rmsnorm.c, rmsnorm_row_forward_*:
 * `ss = 0; for (i = 0; i < n; i++) ss += x[i] * x[i];`), copied here because this proof runs in WP's
 * IEEE float model (the kernels are proved in the real model): the code is identical except that the
 * two float operations are written `ss = rms_add_f32(ss, rms_sq_f32(x[i]))`, helpers whose bodies are
 * `return a * a;` and `return a + b;` (same operations, same order).  Proved:
 *   rms_sq_f32:   \result == rnd32(a * a)                                        (z3, ieee_float)
 *                 |rnd32(a*a) - a*a| <= u * a*a        if |a| >= 2^-62            (Gappa)
 *                 |rnd32(a*a) - a*a| <= 2^-149         if |a| <= 2^-62 (underflow) (Gappa)
 *                 no overflow for |a| <= 2^50                                       (Gappa)
 *   rms_add_f32:  \result == rnd32(a + b), |rnd32(a+b) - (a+b)| <= u |a+b|, no overflow for
 *                 |a|, |b| <= 2^120                                                 (Gappa, z3)
 *   sumsq_f32:    |ss - sum_i x_i^2| <= 2.001 * n * u * sum_i x_i^2 + n * 2^-148
 *                 for 1 <= n <= 4096, |x_i| <= 2^50   (the loop invariant, by induction, from the
 *                 helpers' contracts and the steps asserted in the loop body)
 * and the same for double with u = 2^-53, the threshold 2^-510 and the underflow term n * 2^-1073.
 * (The sum of squares of specs/error-analysis-rmsnorm.md R§2: gamma_{n-1} + u per term, i.e. about
 * n*u relative; the factor 2.001 covers the first step, where the square's rounding and the
 * addition's are both charged to one term.)  Run by `make prove-rmsnorm` (proofs/rmsnorm.sh).
 */
#include "rmsnorm_model.h"

/* Symbols defined in proofs/fperr.mlw (Why3 definitions, no axioms), linked by proofs/fperr.driver:
 *   fp_err(c, e) = c - e,  u32 = 2^-24,  u64 = 2^-53,  rnd32/rnd64 = round to nearest even,
 *   is_f32(x) <=> rnd32(x) == x,  no_ovf32(x) <=> rnd32(x) is finite (ieee_float's no_overflow). */
/*@ axiomatic FpErr {
      logic real fp_err(real computed, real exact);
      logic real u32;
      logic real u64;
      logic real rnd32(real x);
      logic real rnd64(real x);
      predicate is_f32(real x);
      predicate is_f64(real x);
      predicate no_ovf32(real x);
      predicate no_ovf64(real x);
    } */

/*@ // A finite float or double is its own rounding.
    lemma rq_f32_is_f32: \forall float f; \is_finite(f) ==> is_f32(f);
    lemma rq_f64_is_f64: \forall double f; \is_finite(f) ==> is_f64(f);

    // The error bound after i terms whose exact sum of squares is s.
    logic real errq32(integer i, real s) = 2.001 * i * 0x1p-24 * s + i * 0x1p-148;
    logic real errq64(integer i, real s) = 2.001 * i * 0x1p-53 * s + i * 0x1p-1073;
*/

/* ---- float ---- */

/*@ requires fin: \is_finite(a);
    requires flt: is_f32(a);
    requires a_range: \abs(a) <= 0x1p50;
    assigns \nothing;
    ensures res_fin: \is_finite(\result);
    ensures rnd: \result == rnd32(a * a);
    behavior normal:
      assumes \abs(a) >= 0x1p-62;
      ensures sq_err: \abs(fp_err(rnd32(a * a), a * a)) <= u32 * \abs(a * a);
    behavior tiny:
      assumes \abs(a) <= 0x1p-62;
      ensures sq_err_tiny: \abs(fp_err(rnd32(a * a), a * a)) <= 0x1p-149;
*/
static float rms_sq_f32(float a)
{
    //@ assert nov: no_ovf32(a * a);
    return a * a;
}

/*@ requires fin: \is_finite(a) && \is_finite(b);
    requires flt: is_f32(a) && is_f32(b);
    requires a_range: \abs(a) <= 0x1p120 && \abs(b) <= 0x1p120;
    assigns \nothing;
    ensures res_fin: \is_finite(\result);
    ensures rnd: \result == rnd32(a + b);
    ensures add_err: \abs(fp_err(rnd32(a + b), a + b)) <= u32 * \abs(a + b);
*/
static float rms_add_f32(float a, float b)
{
    //@ assert nov: no_ovf32(a + b);
    return a + b;
}

/*@ requires n_range: 1 <= n <= 4096;
    requires valid_x: \valid_read(x + (0 .. n - 1));
    requires x_fin: \forall integer k; 0 <= k < n ==> \is_finite(x[k]);
    requires x_range: \forall integer k; 0 <= k < n ==> \abs(x[k]) <= 0x1p50;
    assigns \nothing;
    ensures fin: \is_finite(\result);
    ensures sumsq_err: \abs(\result - rms_sumsq(x, n)) <= 2.001 * n * 0x1p-24 * rms_sumsq(x, n) + n * 0x1p-148; // errq32(n, ...)
*/
float sumsq_f32(const float *x, int n)
{
    float ss = 0;
    /*@ loop invariant i_range: 0 <= i <= n;
        loop invariant fin: \is_finite(ss);
        loop invariant s_bound: 0 <= rms_sumsq(x, i) <= i * 0x1p100 <= 0x1p112;
        loop invariant err: \abs(ss - rms_sumsq(x, i)) <= errq32(i, rms_sumsq(x, i));
        loop assigns i, ss;
        loop variant n - i; */
    for (int i = 0; i < n; i++) {
        //@ assert x_fin: \is_finite(x[i]);
        //@ assert x_flt: is_f32(x[i]);
        //@ assert s_flt: is_f32(ss);
        //@ assert x_abs: \abs(x[i]) <= 0x1p50;
        //@ assert x2: 0 <= x[i] * x[i] <= 0x1p100;
        //@ assert m0a: 0 <= i * rms_sumsq(x, i);
        //@ assert m0b: 0 <= (4096 - i) * rms_sumsq(x, i);
        //@ assert e_small: \abs(ss - rms_sumsq(x, i)) <= 0x1p-10 * rms_sumsq(x, i) + 1;
        //@ assert s_range: \abs(ss) <= 0x1p120;
        float q = rms_sq_f32(x[i]);
        //@ assert d_err: \abs(q - x[i] * x[i]) <= u32 * (x[i] * x[i]) + 0x1p-149;
        //@ assert q_range: \abs(q) <= 0x1p120;
        ss = rms_add_f32(ss, q); /* the kernel's ss += x[i] * x[i] */
        /*@ assert f_err: \abs(ss - (\at(ss, LoopCurrent) + q)) <= u32 * \abs(\at(ss, LoopCurrent) + q); */
        /*@ assert tri: \abs(ss - rms_sumsq(x, i + 1))
                 <= \abs(ss - (\at(ss, LoopCurrent) + q)) + \abs(\at(ss, LoopCurrent) - rms_sumsq(x, i))
                    + \abs(q - x[i] * x[i]); */
        /*@ assert tri2: \abs(\at(ss, LoopCurrent) + q)
                 <= rms_sumsq(x, i) + \abs(\at(ss, LoopCurrent) - rms_sumsq(x, i)) + x[i] * x[i]
                    + \abs(q - x[i] * x[i]); */
        /*@ assert step1: \abs(ss - rms_sumsq(x, i + 1))
                 <= u32 * rms_sumsq(x, i) + u32 * (x[i] * x[i])
                    + (1 + u32) * \abs(\at(ss, LoopCurrent) - rms_sumsq(x, i)) + (1 + u32) * \abs(q - x[i] * x[i]); */
        //@ assert m2: 0 <= i * (x[i] * x[i]);
        /*@ assert step: \abs(ss - rms_sumsq(x, i + 1))
                 <= errq32(i + 1, rms_sumsq(x, i + 1)); */
    }
    return ss;
}

/* ---- double ---- */

/*@ requires fin: \is_finite(a);
    requires flt: is_f64(a);
    requires a_range: \abs(a) <= 0x1p50;
    assigns \nothing;
    ensures res_fin: \is_finite(\result);
    ensures rnd: \result == rnd64(a * a);
    behavior normal:
      assumes \abs(a) >= 0x1p-510;
      ensures sq_err: \abs(fp_err(rnd64(a * a), a * a)) <= u64 * \abs(a * a);
    behavior tiny:
      assumes \abs(a) <= 0x1p-510;
      ensures sq_err_tiny: \abs(fp_err(rnd64(a * a), a * a)) <= 0x1p-1074;
*/
static double rms_sq_f64(double a)
{
    //@ assert nov: no_ovf64(a * a);
    return a * a;
}

/*@ requires fin: \is_finite(a) && \is_finite(b);
    requires flt: is_f64(a) && is_f64(b);
    requires a_range: \abs(a) <= 0x1p120 && \abs(b) <= 0x1p120;
    assigns \nothing;
    ensures res_fin: \is_finite(\result);
    ensures rnd: \result == rnd64(a + b);
    ensures add_err: \abs(fp_err(rnd64(a + b), a + b)) <= u64 * \abs(a + b);
*/
static double rms_add_f64(double a, double b)
{
    //@ assert nov: no_ovf64(a + b);
    return a + b;
}

/*@ requires n_range: 1 <= n <= 4096;
    requires valid_x: \valid_read(x + (0 .. n - 1));
    requires x_fin: \forall integer k; 0 <= k < n ==> \is_finite(x[k]);
    requires x_range: \forall integer k; 0 <= k < n ==> \abs(x[k]) <= 0x1p50;
    assigns \nothing;
    ensures fin: \is_finite(\result);
    ensures sumsq_err: \abs(\result - rms_sumsq(x, n)) <= 2.001 * n * 0x1p-53 * rms_sumsq(x, n) + n * 0x1p-1073; // errq64(n, ...)
*/
double sumsq_f64(const double *x, int n)
{
    double ss = 0;
    /*@ loop invariant i_range: 0 <= i <= n;
        loop invariant fin: \is_finite(ss);
        loop invariant s_bound: 0 <= rms_sumsq(x, i) <= i * 0x1p100 <= 0x1p112;
        loop invariant err: \abs(ss - rms_sumsq(x, i)) <= errq64(i, rms_sumsq(x, i));
        loop assigns i, ss;
        loop variant n - i; */
    for (int i = 0; i < n; i++) {
        //@ assert x_fin: \is_finite(x[i]);
        //@ assert x_flt: is_f64(x[i]);
        //@ assert s_flt: is_f64(ss);
        //@ assert x_abs: \abs(x[i]) <= 0x1p50;
        //@ assert x2: 0 <= x[i] * x[i] <= 0x1p100;
        //@ assert m0a: 0 <= i * rms_sumsq(x, i);
        //@ assert m0b: 0 <= (4096 - i) * rms_sumsq(x, i);
        //@ assert e_small: \abs(ss - rms_sumsq(x, i)) <= 0x1p-10 * rms_sumsq(x, i) + 1;
        //@ assert s_range: \abs(ss) <= 0x1p120;
        double q = rms_sq_f64(x[i]);
        //@ assert d_err: \abs(q - x[i] * x[i]) <= u64 * (x[i] * x[i]) + 0x1p-1074;
        //@ assert q_range: \abs(q) <= 0x1p120;
        ss = rms_add_f64(ss, q); /* the kernel's ss += x[i] * x[i] */
        /*@ assert f_err: \abs(ss - (\at(ss, LoopCurrent) + q)) <= u64 * \abs(\at(ss, LoopCurrent) + q); */
        /*@ assert tri: \abs(ss - rms_sumsq(x, i + 1))
                 <= \abs(ss - (\at(ss, LoopCurrent) + q)) + \abs(\at(ss, LoopCurrent) - rms_sumsq(x, i))
                    + \abs(q - x[i] * x[i]); */
        /*@ assert tri2: \abs(\at(ss, LoopCurrent) + q)
                 <= rms_sumsq(x, i) + \abs(\at(ss, LoopCurrent) - rms_sumsq(x, i)) + x[i] * x[i]
                    + \abs(q - x[i] * x[i]); */
        /*@ assert step1: \abs(ss - rms_sumsq(x, i + 1))
                 <= u64 * rms_sumsq(x, i) + u64 * (x[i] * x[i])
                    + (1 + u64) * \abs(\at(ss, LoopCurrent) - rms_sumsq(x, i)) + (1 + u64) * \abs(q - x[i] * x[i]); */
        //@ assert m2: 0 <= i * (x[i] * x[i]);
        /*@ assert step: \abs(ss - rms_sumsq(x, i + 1))
                 <= errq64(i + 1, rms_sumsq(x, i + 1)); */
    }
    return ss;
}
