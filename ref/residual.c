/* Residual add kernels, float and double: the code that specs/residual.h specifies.
 * One IEEE addition per element, in the order written (compile with -ffp-contract=off).
 * Its MPFR twin, ref/residual_mpfr.c, computes the exact sum and rounds once; for an IEEE addition
 * the two agree bit for bit (an IEEE sum is correctly rounded), which tests/test_residual.c checks.
 * Each addition is the helper res_add_f32/f64 (static inline: the same one operation), whose
 * rounding Gappa proves in WP's float model (proofs/rmsnorm_float.sh, res_float_run). */
#include "residual.h"

/* Float model: a finite float/double is its own rounding (what Gappa needs to know of an operand).
   Read by the float-model run only. */
#ifdef RESNORM_WP_FLOAT
/*@ lemma res_f32_is_f32: \forall float v; \is_finite(v) ==> is_f32(v);
    lemma res_f64_is_f64: \forall double v; \is_finite(v) ==> is_f64(v);
*/
#endif

/* a + b, rounded once.  Float model (Gappa): for finite |a|, |b| <= 0x1p126 the result is finite and
   |fl(a + b) - (a + b)| <= u |a + b| (no absolute term: in the subnormal range the sum is exact). */
/*@ requires add_pre: LN_FLOAT(\is_finite(a) && \is_finite(b) && is_f32(a) && is_f32(b));
    requires add_range: LN_FLOAT(\abs(a) <= 0x1p126 && \abs(b) <= 0x1p126);
    assigns \nothing;
    ensures add: LN_EXACT(\result == a + b);
    ensures add_fin: LN_FLOAT(\is_finite(\result));
    ensures add_rnd: LN_FLOAT(\result == rnd32(a + b));
    ensures add_err: LN_FLOAT(\abs(fp_err(rnd32(a + b), a + b)) <= u32 * \abs(a + b)); */
static inline float res_add_f32(float a, float b)
{
    //@ assert add_nov: LN_FLOAT(no_ovf32(a + b));
    return a + b;
}

/* a + b, rounded once.  Float model (Gappa): for finite |a|, |b| <= 0x1p1022 the result is finite and
   |fl(a + b) - (a + b)| <= u |a + b| (no absolute term: in the subnormal range the sum is exact). */
/*@ requires add_pre: LN_FLOAT(\is_finite(a) && \is_finite(b) && is_f64(a) && is_f64(b));
    requires add_range: LN_FLOAT(\abs(a) <= 0x1p1022 && \abs(b) <= 0x1p1022);
    assigns \nothing;
    ensures add: LN_EXACT(\result == a + b);
    ensures add_fin: LN_FLOAT(\is_finite(\result));
    ensures add_rnd: LN_FLOAT(\result == rnd64(a + b));
    ensures add_err: LN_FLOAT(\abs(fp_err(rnd64(a + b), a + b)) <= u64 * \abs(a + b)); */
static inline double res_add_f64(double a, double b)
{
    //@ assert add_nov: LN_FLOAT(no_ovf64(a + b));
    return a + b;
}

/* y_i = x_i + f_i; y may be x or f (in place). */
void residual_forward_f32(float *y, const float *x, const float *f, int n)
{
    /* Float model: x[k], f[k] for k >= i still hold their values at entry (y may be x or f), finite;
       y[k] for k < i is the rounded sum (|error| <= u |x_k + f_k|). */
    /*@ loop invariant i_range: 0 <= i <= n;
        loop invariant y_done: LN_EXACT(\forall integer k; 0 <= k < i ==> y[k] == \at(x[k], Pre) + \at(f[k], Pre));
        loop invariant y_todo: WP_ONLY(\forall integer k; i <= k < n ==> (real)y[k] == (real)\at(y[k], Pre));
        loop invariant in_todo: LN_FLOAT(\forall integer k; i <= k < n ==>
          \is_finite(x[k]) && \is_finite(f[k]) && (real)x[k] == (real)\at(x[k], Pre) && (real)f[k] == (real)\at(f[k], Pre));
        loop invariant y_fl: LN_FLOAT(\forall integer k; 0 <= k < i ==> \is_finite(y[k]) &&
          \abs(y[k] - (\at(x[k], Pre) + \at(f[k], Pre))) <= res_err32(\at(x[k], Pre) + \at(f[k], Pre)));
        loop assigns i, y[0 .. n - 1];
        loop variant n - i; */
    for (int i = 0; i < n; i++) {
        //@ assert in_i: LN_FLOAT(\is_finite(x[i]) && \is_finite(f[i]) && is_f32(x[i]) && is_f32(f[i]));
        //@ assert in_r: LN_FLOAT(\abs(x[i]) <= 0x1p126 && \abs(f[i]) <= 0x1p126);
        //@ assert in_pre: LN_FLOAT(\forall integer k; k == i ==> (real)x[k] == (real)\at(x[k], Pre) && (real)f[k] == (real)\at(f[k], Pre));
        y[i] = res_add_f32(x[i], f[i]);
        /*@ assert y_i: LN_FLOAT(\forall integer k; k == i ==> \is_finite(y[k]) &&
              \abs(y[k] - (\at(x[k], Pre) + \at(f[k], Pre))) <= res_err32(\at(x[k], Pre) + \at(f[k], Pre))); */
    }
}

void residual_forward_f64(double *y, const double *x, const double *f, int n)
{
    /* Float model: x[k], f[k] for k >= i still hold their values at entry (y may be x or f), finite;
       y[k] for k < i is the rounded sum (|error| <= u |x_k + f_k|). */
    /*@ loop invariant i_range: 0 <= i <= n;
        loop invariant y_done: LN_EXACT(\forall integer k; 0 <= k < i ==> y[k] == \at(x[k], Pre) + \at(f[k], Pre));
        loop invariant y_todo: WP_ONLY(\forall integer k; i <= k < n ==> (real)y[k] == (real)\at(y[k], Pre));
        loop invariant in_todo: LN_FLOAT(\forall integer k; i <= k < n ==>
          \is_finite(x[k]) && \is_finite(f[k]) && (real)x[k] == (real)\at(x[k], Pre) && (real)f[k] == (real)\at(f[k], Pre));
        loop invariant y_fl: LN_FLOAT(\forall integer k; 0 <= k < i ==> \is_finite(y[k]) &&
          \abs(y[k] - (\at(x[k], Pre) + \at(f[k], Pre))) <= res_err64(\at(x[k], Pre) + \at(f[k], Pre)));
        loop assigns i, y[0 .. n - 1];
        loop variant n - i; */
    for (int i = 0; i < n; i++) {
        //@ assert in_i: LN_FLOAT(\is_finite(x[i]) && \is_finite(f[i]) && is_f64(x[i]) && is_f64(f[i]));
        //@ assert in_r: LN_FLOAT(\abs(x[i]) <= 0x1p1022 && \abs(f[i]) <= 0x1p1022);
        //@ assert in_pre: LN_FLOAT(\forall integer k; k == i ==> (real)x[k] == (real)\at(x[k], Pre) && (real)f[k] == (real)\at(f[k], Pre));
        y[i] = res_add_f64(x[i], f[i]);
        /*@ assert y_i: LN_FLOAT(\forall integer k; k == i ==> \is_finite(y[k]) &&
              \abs(y[k] - (\at(x[k], Pre) + \at(f[k], Pre))) <= res_err64(\at(x[k], Pre) + \at(f[k], Pre))); */
    }
}

/* dx_i += dy_i, df_i += dy_i: both branches of the residual receive the upstream gradient,
   accumulated into whatever dx and df already hold (llm.c's residual_backward). */
void residual_backward_f32(float *dx, float *df, const float *dy, int n)
{
    /*@ loop invariant i_range: 0 <= i <= n;
        loop invariant dx_done: LN_EXACT(\forall integer k; 0 <= k < i ==> dx[k] == \at(dx[k], Pre) + \at(dy[k], Pre));
        loop invariant df_done: LN_EXACT(\forall integer k; 0 <= k < i ==> df[k] == \at(df[k], Pre) + \at(dy[k], Pre));
        loop invariant dx_todo: WP_ONLY(\forall integer k; i <= k < n ==> (real)dx[k] == (real)\at(dx[k], Pre));
        loop invariant df_todo: WP_ONLY(\forall integer k; i <= k < n ==> (real)df[k] == (real)\at(df[k], Pre));
        loop invariant in_todo: LN_FLOAT(\forall integer k; i <= k < n ==> \is_finite(dx[k]) && \is_finite(df[k]));
        loop invariant dx_fl: LN_FLOAT(\forall integer k; 0 <= k < i ==> \is_finite(dx[k]) &&
          \abs(dx[k] - (\at(dx[k], Pre) + \at(dy[k], Pre))) <= res_err32(\at(dx[k], Pre) + \at(dy[k], Pre)));
        loop invariant df_fl: LN_FLOAT(\forall integer k; 0 <= k < i ==> \is_finite(df[k]) &&
          \abs(df[k] - (\at(df[k], Pre) + \at(dy[k], Pre))) <= res_err32(\at(df[k], Pre) + \at(dy[k], Pre)));
        loop assigns i, dx[0 .. n - 1], df[0 .. n - 1];
        loop variant n - i; */
    for (int i = 0; i < n; i++) {
        //@ assert in_i: LN_FLOAT(\is_finite(dx[i]) && \is_finite(df[i]) && \is_finite(dy[i]));
        //@ assert in_f: LN_FLOAT(is_f32(dx[i]) && is_f32(df[i]) && is_f32(dy[i]));
        //@ assert in_r: LN_FLOAT(\abs(dx[i]) <= 0x1p126 && \abs(df[i]) <= 0x1p126 && \abs(dy[i]) <= 0x1p126);
        //@ assert dx_pre: LN_FLOAT(\forall integer k; k == i ==> (real)dx[k] == (real)\at(dx[k], Pre) && (real)dy[k] == (real)\at(dy[k], Pre));
        dx[i] = res_add_f32(dx[i], dy[i]); /* dx[i] += dy[i] */
        /*@ assert dx_i: LN_FLOAT(\forall integer k; k == i ==> \is_finite(dx[k]) &&
              \abs(dx[k] - (\at(dx[k], Pre) + \at(dy[k], Pre))) <= res_err32(\at(dx[k], Pre) + \at(dy[k], Pre))); */
        //@ assert df_pre: LN_FLOAT(\forall integer k; k == i ==> (real)df[k] == (real)\at(df[k], Pre) && (real)dy[k] == (real)\at(dy[k], Pre));
        df[i] = res_add_f32(df[i], dy[i]); /* df[i] += dy[i] */
        /*@ assert df_i: LN_FLOAT(\forall integer k; k == i ==> \is_finite(df[k]) &&
              \abs(df[k] - (\at(df[k], Pre) + \at(dy[k], Pre))) <= res_err32(\at(df[k], Pre) + \at(dy[k], Pre))); */
    }
}

void residual_backward_f64(double *dx, double *df, const double *dy, int n)
{
    /*@ loop invariant i_range: 0 <= i <= n;
        loop invariant dx_done: LN_EXACT(\forall integer k; 0 <= k < i ==> dx[k] == \at(dx[k], Pre) + \at(dy[k], Pre));
        loop invariant df_done: LN_EXACT(\forall integer k; 0 <= k < i ==> df[k] == \at(df[k], Pre) + \at(dy[k], Pre));
        loop invariant dx_todo: WP_ONLY(\forall integer k; i <= k < n ==> (real)dx[k] == (real)\at(dx[k], Pre));
        loop invariant df_todo: WP_ONLY(\forall integer k; i <= k < n ==> (real)df[k] == (real)\at(df[k], Pre));
        loop invariant in_todo: LN_FLOAT(\forall integer k; i <= k < n ==> \is_finite(dx[k]) && \is_finite(df[k]));
        loop invariant dx_fl: LN_FLOAT(\forall integer k; 0 <= k < i ==> \is_finite(dx[k]) &&
          \abs(dx[k] - (\at(dx[k], Pre) + \at(dy[k], Pre))) <= res_err64(\at(dx[k], Pre) + \at(dy[k], Pre)));
        loop invariant df_fl: LN_FLOAT(\forall integer k; 0 <= k < i ==> \is_finite(df[k]) &&
          \abs(df[k] - (\at(df[k], Pre) + \at(dy[k], Pre))) <= res_err64(\at(df[k], Pre) + \at(dy[k], Pre)));
        loop assigns i, dx[0 .. n - 1], df[0 .. n - 1];
        loop variant n - i; */
    for (int i = 0; i < n; i++) {
        //@ assert in_i: LN_FLOAT(\is_finite(dx[i]) && \is_finite(df[i]) && \is_finite(dy[i]));
        //@ assert in_f: LN_FLOAT(is_f64(dx[i]) && is_f64(df[i]) && is_f64(dy[i]));
        //@ assert in_r: LN_FLOAT(\abs(dx[i]) <= 0x1p1022 && \abs(df[i]) <= 0x1p1022 && \abs(dy[i]) <= 0x1p1022);
        //@ assert dx_pre: LN_FLOAT(\forall integer k; k == i ==> (real)dx[k] == (real)\at(dx[k], Pre) && (real)dy[k] == (real)\at(dy[k], Pre));
        dx[i] = res_add_f64(dx[i], dy[i]); /* dx[i] += dy[i] */
        /*@ assert dx_i: LN_FLOAT(\forall integer k; k == i ==> \is_finite(dx[k]) &&
              \abs(dx[k] - (\at(dx[k], Pre) + \at(dy[k], Pre))) <= res_err64(\at(dx[k], Pre) + \at(dy[k], Pre))); */
        //@ assert df_pre: LN_FLOAT(\forall integer k; k == i ==> (real)df[k] == (real)\at(df[k], Pre) && (real)dy[k] == (real)\at(dy[k], Pre));
        df[i] = res_add_f64(df[i], dy[i]); /* df[i] += dy[i] */
        /*@ assert df_i: LN_FLOAT(\forall integer k; k == i ==> \is_finite(df[k]) &&
              \abs(df[k] - (\at(df[k], Pre) + \at(dy[k], Pre))) <= res_err64(\at(df[k], Pre) + \at(dy[k], Pre))); */
    }
}
