/* Machine-checked float error bound of the sum that forms the LayerNorm mean (Gappa + SMT).
 *
 * sum_f32 / sum_f64 below are the kernels' first loop (ref/layernorm.c, layernorm_row_forward_*:
 * `sum = 0; for (i = 0; i < n; i++) sum += x[i];`), copied here because this proof runs in WP's
 * IEEE float model (the kernels are proved in the real model): the code is identical except that
 * the one float addition `sum += x[i]` is written `sum = add_f32(sum, x[i])`, a helper whose body is
 * `return a + b;` (same operation, same order).  Proved:
 *   add_f32:  \result == rnd32(a + b)                               (z3, ieee_float add_finite)
 *             |rnd32(a + b) - (a + b)| <= u * |a + b|, u = 2^-24     (Gappa; also in the subnormal
 *                                                                      range: a + b is then exact)
 *             no overflow for |a|, |b| <= 2^100                      (Gappa)
 *   sum_f32:  |sum - sum_i x_i| <= 1.001 * n * u * sum_i |x_i|   for 1 <= n <= 4096, |x_i| <= 2^80
 *             (the loop invariant `err`, by induction, from the helper's contract; the assertions in
 *             the loop body are the steps of the argument: triangle inequality, then
 *             d <= u*a1 + (1+u)*e <= c*(i+1)*u*a1 since 1 + c*i*u <= c for i < 4096)
 * and the same for double with u = 2^-53.  Run by `make prove` (proofs/prove.mk).
 */
#include "layernorm_model.h"

/* fp_err, u32/u64, rnd32/rnd64, is_f32/is_f64, no_ovf32/no_ovf64: specs/fperr.h (through
 * layernorm_model.h), defined in proofs/fperr.mlw and linked by proofs/fperr.driver. */

/* One step of the induction, over the reals: if the error so far is e <= c*i*u*a (a = sum of |x_k|
   so far, a1 = the same with the new term) and the new error d <= u*a1 + (1+u)*e, then
   d <= c*(i+1)*u*a1, as long as 1 + c*i*u <= c (c = 1.001, i < 4096, u <= 2^-24). */
/*@ // The error bound after i terms with sum of magnitudes a: c * i * u * a, c = 1.001, u = 2^-24.
    logic real errb32(integer i, real a) = 1.001 * i * 0x1p-24 * a;
    logic real errb64(integer i, real a) = 1.001 * i * 0x1p-53 * a;

    // For the range of the partial sums: errb(i, a) <= 2^-10 * a for i <= 4096.
    lemma errb32_small: \forall integer i, real a; 0 <= i <= 4096 ==> 0 <= a ==> errb32(i, a) <= 0x1p-10 * a;
    lemma errb64_small: \forall integer i, real a; 0 <= i <= 4096 ==> 0 <= a ==> errb64(i, a) <= 0x1p-10 * a;

    // A finite float or double is its own rounding.
    lemma f32_is_f32: \forall float f; \is_finite(f) ==> is_f32(f);
    lemma f64_is_f64: \forall double f; \is_finite(f) ==> is_f64(f);
*/

/*@ requires fin: \is_finite(a) && \is_finite(b);
    requires flt: is_f32(a) && is_f32(b);
    requires a_range: \abs(a) <= 0x1p100 && \abs(b) <= 0x1p100;
    assigns \nothing;
    ensures res_fin: \is_finite(\result);
    ensures rnd: \result == rnd32(a + b);
    ensures add_err: \abs(fp_err(rnd32(a + b), a + b)) <= u32 * \abs(a + b);
*/
static float add_f32(float a, float b)
{
    //@ assert nov: no_ovf32(a + b);
    return a + b;
}

/*@ requires n_range: 1 <= n <= 4096;
    requires valid_x: \valid_read(x + (0 .. n - 1));
    requires x_fin: \forall integer k; 0 <= k < n ==> \is_finite(x[k]);
    requires x_range: \forall integer k; 0 <= k < n ==> \abs(x[k]) <= 0x1p80;
    assigns \nothing;
    ensures fin: \is_finite(\result);
    ensures sum_err: \abs(\result - ln_sum(x, n)) <= 1.001 * n * 0x1p-24 * ln_sumabs(x, n); // errb32(n, ...)
*/
float sum_f32(const float *x, int n)
{
    float sum = 0.0f;
    /*@ loop invariant i_range: 0 <= i <= n;
        loop invariant fin: \is_finite(sum);
        loop invariant abs_bound: 0 <= ln_sumabs(x, i) <= i * 0x1p80 <= 0x1p92;
        loop invariant sum_le: \abs(ln_sum(x, i)) <= ln_sumabs(x, i);
        loop invariant err: \abs(sum - ln_sum(x, i)) <= errb32(i, ln_sumabs(x, i));
        loop assigns i, sum;
        loop variant n - i; */
    for (int i = 0; i < n; i++) {
        //@ assert x_fin: \is_finite(x[i]);
        //@ assert x_flt: is_f32(x[i]);
        //@ assert s_flt: is_f32(sum);
        //@ assert e_small: \abs(sum - ln_sum(x, i)) <= 0x1p-10 * ln_sumabs(x, i);
        //@ assert s_range: \abs(sum) <= 0x1p100;
        sum = add_f32(sum, x[i]); /* the kernel's sum += x[i] */
        /*@ assert tri: \abs(sum - ln_sum(x, i + 1))
                 <= 0x1p-24 * \abs(\at(sum, LoopCurrent) + x[i]) + \abs(\at(sum, LoopCurrent) - ln_sum(x, i)); */
        /*@ assert tri2: \abs(\at(sum, LoopCurrent) + x[i])
                 <= ln_sumabs(x, i + 1) + \abs(\at(sum, LoopCurrent) - ln_sum(x, i)); */
        //@ assert a_mono: 0 <= ln_sumabs(x, i) <= ln_sumabs(x, i + 1);
        //@ assert m1: i * ln_sumabs(x, i) <= i * ln_sumabs(x, i + 1);
        //@ assert m2a: 0 <= (4096 - i) * ln_sumabs(x, i + 1);
        //@ assert m2: i * ln_sumabs(x, i + 1) <= 4096 * ln_sumabs(x, i + 1);
        /*@ assert step: \abs(sum - ln_sum(x, i + 1))
                 <= 0x1p-24 * ln_sumabs(x, i + 1) + (1 + 0x1p-24) * \abs(\at(sum, LoopCurrent) - ln_sum(x, i)); */
    }
    return sum;
}

/* ---- double: the same with u = 2^-53 ---- */

/*@ requires fin: \is_finite(a) && \is_finite(b);
    requires flt: is_f64(a) && is_f64(b);
    requires a_range: \abs(a) <= 0x1p100 && \abs(b) <= 0x1p100;
    assigns \nothing;
    ensures res_fin: \is_finite(\result);
    ensures rnd: \result == rnd64(a + b);
    ensures add_err: \abs(fp_err(rnd64(a + b), a + b)) <= u64 * \abs(a + b);
*/
static double add_f64(double a, double b)
{
    //@ assert nov: no_ovf64(a + b);
    return a + b;
}

/*@ requires n_range: 1 <= n <= 4096;
    requires valid_x: \valid_read(x + (0 .. n - 1));
    requires x_fin: \forall integer k; 0 <= k < n ==> \is_finite(x[k]);
    requires x_range: \forall integer k; 0 <= k < n ==> \abs(x[k]) <= 0x1p80;
    assigns \nothing;
    ensures fin: \is_finite(\result);
    ensures sum_err: \abs(\result - ln_sum(x, n)) <= 1.001 * n * 0x1p-53 * ln_sumabs(x, n); // errb64(n, ...)
*/
double sum_f64(const double *x, int n)
{
    double sum = 0.0;
    /*@ loop invariant i_range: 0 <= i <= n;
        loop invariant fin: \is_finite(sum);
        loop invariant abs_bound: 0 <= ln_sumabs(x, i) <= i * 0x1p80 <= 0x1p92;
        loop invariant sum_le: \abs(ln_sum(x, i)) <= ln_sumabs(x, i);
        loop invariant err: \abs(sum - ln_sum(x, i)) <= errb64(i, ln_sumabs(x, i));
        loop assigns i, sum;
        loop variant n - i; */
    for (int i = 0; i < n; i++) {
        //@ assert x_fin: \is_finite(x[i]);
        //@ assert x_flt: is_f64(x[i]);
        //@ assert s_flt: is_f64(sum);
        //@ assert e_small: \abs(sum - ln_sum(x, i)) <= 0x1p-10 * ln_sumabs(x, i);
        //@ assert s_range: \abs(sum) <= 0x1p100;
        sum = add_f64(sum, x[i]); /* the kernel's sum += x[i] */
        /*@ assert tri: \abs(sum - ln_sum(x, i + 1))
                 <= 0x1p-53 * \abs(\at(sum, LoopCurrent) + x[i]) + \abs(\at(sum, LoopCurrent) - ln_sum(x, i)); */
        /*@ assert tri2: \abs(\at(sum, LoopCurrent) + x[i])
                 <= ln_sumabs(x, i + 1) + \abs(\at(sum, LoopCurrent) - ln_sum(x, i)); */
        //@ assert a_mono: 0 <= ln_sumabs(x, i) <= ln_sumabs(x, i + 1);
        //@ assert m1: i * ln_sumabs(x, i) <= i * ln_sumabs(x, i + 1);
        //@ assert m2a: 0 <= (4096 - i) * ln_sumabs(x, i + 1);
        //@ assert m2: i * ln_sumabs(x, i + 1) <= 4096 * ln_sumabs(x, i + 1);
        /*@ assert step: \abs(sum - ln_sum(x, i + 1))
                 <= 0x1p-53 * ln_sumabs(x, i + 1) + (1 + 0x1p-53) * \abs(\at(sum, LoopCurrent) - ln_sum(x, i)); */
    }
    return sum;
}
