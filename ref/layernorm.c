/* LayerNorm kernels, float and double: the code that specs/layernorm.h specifies and proofs/ proves.
 * Written for reading and proving, not for speed: every operation rounds once, in the order written
 * (compile with -ffp-contract=off), which is the order specs/error-analysis.md analyses.
 * Its MPFR twin, ref/layernorm_mpfr.c, computes the same op exactly and rounds once. */
#include <math.h>

#include "layernorm.h"
#ifdef RESNORM_WP_ROWS
#include "layernorm_rows.h" /* the rows run: the backward drivers' dgb_sum (dgamma, dbeta over the rows) */
#endif

/* Ghost lemma functions (proof only, erased by the compiler): non-linear facts the provers need at
   one point, proved once here with no other context, and called where they are used. */
/*@ ghost
  /@ assigns \nothing;
     ensures sq_nonneg: WP_ONLY(a * a >= 0); @/
  static void lemma_sq_nonneg_f32(float a) {}

  /@ assigns \nothing;
     ensures sq_nonneg: LN_EXACT(a * a >= 0); @/
  static void lemma_sq_nonneg_f64(double a) {}

  /@ requires r_range: 0 <= r < rows;
     requires n_pos: n >= 1;
     assigns \nothing;
     ensures row_start: 0 <= r * n;
     ensures row_end: r * n + n <= rows * n; @/
  static void lemma_row_offset(int r, int rows, int n) {
    /@ assert row_mono: (r + 1) * n <= rows * n; @/
  }

  // Every row q before row r ends at or before row r starts: q*n + n <= r*n ((r - q - 1) * n >= 0).
  /@ requires r_nonneg: 0 <= r;
     requires n_pos: n >= 1;
     assigns \nothing;
     ensures rows_before: \forall integer q; 0 <= q < r ==>
       0 <= ln_row_start(q, n) && ln_row_start(q, n) + n <= ln_row_start(r, n); @/
  static void lemma_rows_before(int r, int n) {}
*/

/* Float model: a finite float/double is its own rounding (what Gappa needs to know of an operand).
   Read by the float-model run only (in the real run it would be \true, and a global lemma in every
   goal's context). */
#ifdef RESNORM_WP_FLOAT
/*@ lemma f32_is_f32: \forall float f; \is_finite(f) ==> is_f32(f);
    lemma f64_is_f64: \forall double f; \is_finite(f) ==> is_f64(f);
*/
#endif

/* The arithmetic steps of the float error bounds, as lemmas (each a WP goal, proved alone).  In an
   axiomatic block of their own, so that WP gives them only to the goals that use its symbol
   (ln_err_sum32/64, the bound of the sum after i terms; ln_per, a division by a count): other
   goals stay small. */
/*@ axiomatic LnErrSteps {
    // Error of the recursive sum after i terms whose magnitudes sum to a: c * i * u * a, c = 1.001
    // (the induction needs 1 + c * i * u <= c, true for i <= 4096; c = 1.001 instead of 1/(1 - n*u)).
    logic real ln_err_sum32(integer i, real a) = 1.001 * i * 0x1p-24 * a;
    logic real ln_err_sum64(integer i, real a) = 1.001 * i * 0x1p-53 * a;
    // The error after one more addition, from the error e so far (a1: the magnitudes with the new term).
    logic real ln_step32(real a1, real e) = 0x1p-24 * a1 + (1 + 0x1p-24) * e;
    logic real ln_step64(real a1, real e) = 0x1p-53 * a1 + (1 + 0x1p-53) * e;
    // The sum's error stays small (for the range of the partial sums): c * i * u * a <= 2^-10 * a.
    lemma err_sum32_small: \forall integer i, real a; 0 <= i <= 4096 ==> 0 <= a ==>
                                      ln_err_sum32(i, a) <= 0x1p-10 * a;
    lemma err_sum64_small: \forall integer i, real a; 0 <= i <= 4096 ==> 0 <= a ==>
                                      ln_err_sum64(i, a) <= 0x1p-10 * a;
    // One step of the sum's induction: with the error e <= c*i*u*a so far and the new error
    // d <= u*a1 + (1 + u)*e (a1 >= a: the magnitudes with the new term), d <= c*(i+1)*u*a1.
    lemma err_sum32_step: \forall integer i, j, real a, a1, e; 0 <= i < 4096 ==> j == i + 1 ==> 0 <= a <= a1 ==>
      0 <= e <= ln_err_sum32(i, a) ==> ln_step32(a1, e) <= ln_err_sum32(j, a1);
    lemma err_sum64_step: \forall integer i, j, real a, a1, e; 0 <= i < 4096 ==> j == i + 1 ==> 0 <= a <= a1 ==>
      0 <= e <= ln_err_sum64(i, a) ==> ln_step64(a1, e) <= ln_err_sum64(j, a1);
  } */

/*@ axiomatic LnErrMean {
    // x / n for a count n >= 1, named so that these lemmas reach only the goals that divide by n.
    logic real ln_per(real x, integer n) = x / n;
    logic real ln_times(integer n, real y) = n * y; // n * y, named for the same reason
    // The mean's error: q = fl(sum)/n, t = the exact mean, abar = (1/n) sum |x_i|; with
    // |q - t| <= c*u*n*abar (the sum's error over n) and |m - q| <= u*|q| + eta (the division):
    // |m - t| <= u*abar + u*c*u*n*abar + eta + c*u*n*abar <= c*u*(n + 1)*abar + eta (1 + c*u*n <= c).
    lemma err_mean32_cn: \forall integer n, real a; 1 <= n <= 4096 ==> 0 <= ln_per(a, n) ==>
      0x1p-24 * ln_per(a, n) + 0x1p-24 * (1.001 * 0x1p-24 * (n * ln_per(a, n))) + 0x1p-150 + 1.001 * 0x1p-24 * (n * ln_per(a, n))
        <= 1.001 * 0x1p-24 * (n + 1) * ln_per(a, n) + 0x1p-150;
    // (f64: eta = 2^-1075 as 0x1p-1000 * 0x1p-75; the hex literal of 2^-1075 reads as 0 in Frama-C 25,
    //  which converts a hex literal to a double: proofs/README.md "Literals".)
    lemma err_mean64_cn: \forall integer n, real a; 1 <= n <= 4096 ==> 0 <= ln_per(a, n) ==>
      0x1p-53 * ln_per(a, n) + 0x1p-53 * (1.001 * 0x1p-53 * (n * ln_per(a, n))) + 0x1p-1000 * 0x1p-75 + 1.001 * 0x1p-53 * (n * ln_per(a, n))
        <= 1.001 * 0x1p-53 * (n + 1) * ln_per(a, n) + 0x1p-1000 * 0x1p-75;
    lemma per_nn: \forall integer n, real a; 1 <= n ==> 0 <= a ==> 0 <= ln_per(a, n);

    lemma err_mean32_tri: \forall integer n, real q, t, abar, m; 1 <= n <= 4096 ==> 0 <= abar ==>
      \abs(q - t) <= 1.001 * 0x1p-24 * (n * abar) ==> \abs(q) <= abar + 1.001 * 0x1p-24 * (n * abar) ==>
      \abs(m - q) <= 0x1p-24 * \abs(q) + 0x1p-150 ==>
      \abs(m - t) <= 0x1p-24 * abar + 0x1p-24 * (1.001 * 0x1p-24 * (n * abar)) + 0x1p-150 + 1.001 * 0x1p-24 * (n * abar);
    lemma err_mean64_tri: \forall integer n, real q, t, abar, m; 1 <= n <= 4096 ==> 0 <= abar ==>
      \abs(q - t) <= 1.001 * 0x1p-53 * (n * abar) ==> \abs(q) <= abar + 1.001 * 0x1p-53 * (n * abar) ==>
      \abs(m - q) <= 0x1p-53 * \abs(q) + 0x1p-1000 * 0x1p-75 ==>
      \abs(m - t) <= 0x1p-53 * abar + 0x1p-53 * (1.001 * 0x1p-53 * (n * abar)) + 0x1p-1000 * 0x1p-75 + 1.001 * 0x1p-53 * (n * abar);
    // Division by a count: the steps from the sum's error to the mean's.
    lemma per_le: \forall integer n, real x, y; 1 <= n ==> \abs(x) <= ln_times(n, y) ==> \abs(ln_per(x, n)) <= y;
    lemma per_sub: \forall integer n, real s, t; 1 <= n ==> ln_per(s - t, n) == ln_per(s, n) - ln_per(t, n);
    lemma per_mono: \forall integer n, real t, a; 1 <= n ==> \abs(t) <= a ==> \abs(ln_per(t, n)) <= ln_per(a, n);
    lemma per_mul: \forall integer n, real a; 1 <= n ==> n * ln_per(a, n) == a;
  } */

/* ---- float ---- */

/* Per-element helpers: each is one line of the kernel, moved out so that its formula is a contract
   and the loop proofs are about framing only.  Same operations, same order (static inline: the
   compiled code is the same). */
/*@ assigns \nothing;
    ensures affine: LN_EXACT(\result == ln_affine(xi, m, r, g, b)); */
static inline float ln_affine_f32(float xi, float m, float r, float g, float b)
{
    return (xi - m) * r * g + b;
}

/* a / b.  Float model: b >= 1 (a count n, or the backward's n), so no overflow; the result may be
   subnormal, hence the absolute term eta = 2^-150 beside the relative u. */
/*@ requires div_pre: LN_FLOAT(\is_finite(a) && \is_finite(b) && is_f32(a) && is_f32(b));
    requires div_range: LN_FLOAT(\abs(a) <= 0x1p100 && 1 <= b <= 0x1p100);
    assigns \nothing;
    ensures div: LN_EXACT(\result == ln_div(a, b));
    ensures div_fin: LN_FLOAT(\is_finite(\result));
    ensures div_rnd: LN_FLOAT(\result == rnd32(a / b));
    ensures div_err: LN_FLOAT(\abs(fp_err(rnd32(a / b), a / b)) <= u32 * \abs(a / b) + 0x1p-150);
    ensures div_nn: LN_FLOAT(a >= 0 ==> rnd32(a / b) >= 0); */
static inline float ln_div_f32(float a, float b)
{
    //@ assert div_nov: LN_FLOAT(no_ovf32(a / b));
    return a / b;
}

/* a + b (the running sums of the forward pass). */
/*@ requires add_pre: LN_FLOAT(\is_finite(a) && \is_finite(b) && is_f32(a) && is_f32(b));
    requires add_range: LN_FLOAT(\abs(a) <= 0x1p100 && \abs(b) <= 0x1p100);
    assigns \nothing;
    ensures add: LN_EXACT(\result == a + b);
    ensures add_fin: LN_FLOAT(\is_finite(\result));
    ensures add_rnd: LN_FLOAT(\result == rnd32(a + b));
    ensures add_err: LN_FLOAT(\abs(fp_err(rnd32(a + b), a + b)) <= u32 * \abs(a + b)); */
static inline float ln_add_f32(float a, float b)
{
    //@ assert add_nov: LN_FLOAT(no_ovf32(a + b));
    return a + b;
}

/* (xi - m)^2, the term of the two-pass sum of squared deviations: d = xi - m, then d * d. */
/*@ requires sqdev_pre: LN_FLOAT(\is_finite(xi) && \is_finite(m) && is_f32(xi) && is_f32(m));
    requires sqdev_in: LN_FLOAT(\abs(xi) <= 0x1p40 && \abs(m) <= 0x1p41);
    assigns \nothing;
    ensures sqdev: LN_EXACT(\result == (xi - m) * (xi - m));
    ensures sqdev_nn: \result >= 0;
    ensures sqdev_fin: LN_FLOAT(\is_finite(\result) && \result <= 0x1p84); */
static inline float ln_sqdev_f32(float xi, float m)
{
    //@ assert sub_nov: LN_FLOAT(no_ovf32(xi - m));
    float d = xi - m;
    //@ assert d_fin: LN_FLOAT(\is_finite(d));
    //@ assert d_rnd: LN_FLOAT(d == rnd32(xi - m));
    //@ assert d_range: LN_FLOAT(\abs(d) <= 0x1p42 && is_f32(d));
    //@ ghost lemma_sq_nonneg_f32(d);
    //@ assert sq_nov: LN_FLOAT(no_ovf32(d * d));
    float sq = d * d;
    //@ assert sq_fin: LN_FLOAT(\is_finite(sq));
    //@ assert sq_rnd: LN_FLOAT(sq == rnd32(d * d));
    //@ assert sq_range: LN_FLOAT(0 <= rnd32(d * d) <= 0x1p84);
    return sq;
}

/*@ assigns \nothing;
    ensures mul: LN_EXACT(\result == ln_mul(a, b)); */
static inline float ln_mul_f32(float a, float b)
{
    return a * b;
}

/*@ assigns \nothing;
    ensures xhat: LN_EXACT(\result == ln_xhat_v(xi, m, r)); */
static inline float ln_xhat_f32(float xi, float m, float r)
{
    return (xi - m) * r;
}

/*@ assigns \nothing;
    ensures acc_prod: LN_EXACT(\result == ln_acc_prod(acc, a, b)); */
static inline float ln_acc_prod_f32(float acc, float a, float b)
{
    return acc + a * b; /* dgamma[i] += dy[i] * xhat */
}

/*@ assigns \nothing;
    ensures dx: LN_EXACT(\result == ln_dx_v(g, mean_g, xhat, mean_gx, r)); */
static inline float ln_dx_f32(float g, float mean_g, float xhat, float mean_gx, float r)
{
    return (g - mean_g - xhat * mean_gx) * r;
}


/* The mean of a row, (1/n) sum_i x_i: the recursive sum, then one division by n. */
/*@ requires n_pos: n >= 1;
    requires valid_x: \valid_read(x + (0 .. n - 1));
    requires fl_range: LN_FLOAT(ln_in_range32(x, n) && n <= 4096);
    assigns \nothing;
    ensures mean: LN_EXACT(\result == ln_mean(x, n));
    ensures mean_err: LN_FLOAT(\abs(\result - ln_mean(x, n)) <= ln_err_mean32(x, n));
    ensures mean_range: LN_FLOAT(\is_finite(\result) && \abs(\result) <= 0x1p41); */
static float ln_row_mean_f32(const float *x, int n)
{
    float sum = 0.0f;
    /* Float model: after i terms the error is at most 1.001 * i * u * sum_k<i |x_k|
       (specs/error-analysis.md §2; lemma err_sum32_step). */
    /*@ loop invariant i_range: 0 <= i <= n;
        loop invariant sum_def: LN_EXACT(sum == ln_sum(x, i));
        loop invariant sum_fin: LN_FLOAT(\is_finite(sum));
        loop invariant abs_bound: LN_FLOAT(0 <= ln_sumabs(x, i) <= i * 0x1p40 <= 0x1p52);
        loop invariant sum_le: LN_FLOAT(\abs(ln_sum(x, i)) <= ln_sumabs(x, i));
        loop invariant sum_err: LN_FLOAT(\abs(sum - ln_sum(x, i)) <= ln_err_sum32(i, ln_sumabs(x, i)));
        loop assigns i, sum;
        loop variant n - i; */
    for (int i = 0; i < n; i++) {
        //@ assert x_fin: LN_FLOAT(\is_finite(x[i]) && \abs(x[i]) <= 0x1p40);
        //@ assert x_flt: LN_FLOAT(is_f32(x[i]) && is_f32(sum));
        //@ assert e_small: LN_FLOAT(\abs(sum - ln_sum(x, i)) <= 0x1p-10 * ln_sumabs(x, i));
        sum = ln_add_f32(sum, x[i]);
        /*@ assert tri: LN_FLOAT(\abs(sum - ln_sum(x, i + 1))
                 <= 0x1p-24 * \abs(\at(sum, LoopCurrent) + x[i]) + \abs(\at(sum, LoopCurrent) - ln_sum(x, i))); */
        /*@ assert tri2: LN_FLOAT(\abs(\at(sum, LoopCurrent) + x[i])
                 <= ln_sumabs(x, i + 1) + \abs(\at(sum, LoopCurrent) - ln_sum(x, i))); */
        //@ assert a_mono: LN_FLOAT(0 <= ln_sumabs(x, i) <= ln_sumabs(x, i + 1));
        /*@ assert step: LN_FLOAT(\abs(sum - ln_sum(x, i + 1))
                 <= ln_step32(ln_sumabs(x, i + 1), \abs(\at(sum, LoopCurrent) - ln_sum(x, i)))); */
        //@ assert i_lt: LN_FLOAT(0 <= i < 4096 && 0 <= ln_sumabs(x, i) <= ln_sumabs(x, i + 1));
        /*@ assert e_le: LN_FLOAT(0 <= \abs(\at(sum, LoopCurrent) - ln_sum(x, i))
                                   <= ln_err_sum32(i, ln_sumabs(x, i))); */
        /*@ assert next: LN_FLOAT(\abs(sum - ln_sum(x, i + 1)) <= ln_err_sum32(i + 1, ln_sumabs(x, i + 1))); */
    }
    //@ assert n_rnd: LN_FLOAT((float)n == rnd32(n));
    //@ assert n_exact: LN_FLOAT(rnd32(n) == n && is_f32(sum));
    //@ assert s_err: LN_FLOAT(\abs(sum - ln_sum(x, n)) <= 0x1p-10 * ln_sumabs(x, n));
    //@ assert s_range: LN_FLOAT(\abs(sum) <= 0x1p60);
    float m = ln_div_f32(sum, (float)n);
    /* Float model: |m - mean| <= u * |sum / n| + eta + |sum - sum_i x_i| / n, A = sum_i |x_i|
       (specs/error-analysis.md §2; lemmas div_le, err_mean32_fin). */
    //@ assert m_div: LN_FLOAT(\abs(m - ln_per(sum, n)) <= 0x1p-24 * \abs(ln_per(sum, n)) + 0x1p-150);
    //@ assert d1: LN_FLOAT(\abs(sum - ln_sum(x, n)) <= ln_times(n, 1.001 * 0x1p-24 * ln_sumabs(x, n)));
    //@ assert d2: LN_FLOAT(\abs(ln_per(sum - ln_sum(x, n), n)) <= 1.001 * 0x1p-24 * ln_sumabs(x, n));
    //@ assert d3: LN_FLOAT(ln_per(sum - ln_sum(x, n), n) == ln_per(sum, n) - ln_per(ln_sum(x, n), n));
    //@ assert d4: LN_FLOAT(\abs(ln_per(ln_sum(x, n), n)) <= ln_per(ln_sumabs(x, n), n));
    //@ assert d5: LN_FLOAT(n * ln_per(ln_sumabs(x, n), n) == ln_sumabs(x, n));
    //@ assert d6a: LN_FLOAT(\abs(ln_sumabs(x, n)) <= ln_times(n, 0x1p40));
    //@ assert d6: LN_FLOAT(0 <= ln_per(ln_sumabs(x, n), n) <= 0x1p40);
    //@ assert d7: LN_FLOAT(\abs(ln_per(sum, n) - ln_per(ln_sum(x, n), n)) <= 1.001 * 0x1p-24 * (n * ln_per(ln_sumabs(x, n), n)));
    /*@ assert d8: LN_FLOAT(\abs(ln_per(sum, n))
                            <= ln_per(ln_sumabs(x, n), n) + 1.001 * 0x1p-24 * (n * ln_per(ln_sumabs(x, n), n))); */
    /*@ assert m_tri: LN_FLOAT(\abs(m - ln_per(ln_sum(x, n), n))
          <= 0x1p-24 * ln_per(ln_sumabs(x, n), n) + 0x1p-24 * (1.001 * 0x1p-24 * (n * ln_per(ln_sumabs(x, n), n)))
             + 0x1p-150 + 1.001 * 0x1p-24 * (n * ln_per(ln_sumabs(x, n), n))); */
    /*@ assert m_err0: LN_FLOAT(\abs(m - ln_per(ln_sum(x, n), n))
          <= 1.001 * 0x1p-24 * (n + 1) * ln_per(ln_sumabs(x, n), n) + 0x1p-150); */
    //@ assert m_err: LN_FLOAT(\abs(m - ln_mean(x, n)) <= ln_err_mean32(x, n));
    return m;
}

/* rstd = 1 / sqrt(v + eps), v = (1/n) sum_i (x_i - m)^2: the two-pass variance about the computed
   mean m, never E[x^2] - E[x]^2, which cancels catastrophically when |mean| >> std.  Float model:
   every term and partial sum is >= 0 and finite, so v >= 0 and sqrtf never sees a negative argument
   (for any eps > 0): rstd is never NaN. */
/*@ requires n_pos: n >= 1;
    requires eps_pos: eps > 0;
    requires valid_x: \valid_read(x + (0 .. n - 1));
    requires fl_range: LN_FLOAT(ln_in_range32(x, n) && \is_finite(m) && \abs(m) <= 0x1p41 &&
                                \is_finite(eps) && eps <= 1);
    assigns \nothing;
    ensures rstd: LN_EXACT(\result == 1.0 / \sqrt(ln_ssd(x, m, n) / n + eps));
    ensures rstd_not_nan: LN_FLOAT(!\is_NaN(\result)); */
static float ln_row_rstd_f32(const float *x, float m, int n, float eps)
{
    float ssd = 0.0f;
    /*@ loop invariant i_range: 0 <= i <= n;
        loop invariant ssd_def: LN_EXACT(ssd == ln_ssd(x, m, i));
        loop invariant ssd_nonneg: ssd >= 0;
        loop invariant ssd_fin: LN_FLOAT(\is_finite(ssd) && ssd <= i * 0x1p85);
        loop assigns i, ssd;
        loop variant n - i; */
    for (int i = 0; i < n; i++) {
        //@ assert x_fin: LN_FLOAT(\is_finite(x[i]) && \abs(x[i]) <= 0x1p40);
        //@ assert x_flt: LN_FLOAT(is_f32(x[i]) && is_f32(ssd) && is_f32(m));
        ssd = ln_add_f32(ssd, ln_sqdev_f32(x[i], m));
    }
    //@ assert n_rnd: LN_FLOAT((float)n == rnd32(n));
    //@ assert n_exact: LN_FLOAT(rnd32(n) == n && is_f32(ssd));
    float var = ln_div_f32(ssd, (float)n);
    //@ assert v_nn: LN_FLOAT(var >= 0 && \is_finite(var) && is_f32(var) && is_f32(eps));
    //@ assert v_t: LN_FLOAT(\abs(ssd) <= ln_times(n, 0x1p85));
    //@ assert v_p: LN_FLOAT(\abs(ln_per(ssd, n)) <= 0x1p85);
    //@ assert v_div: LN_FLOAT(\abs(var - ln_per(ssd, n)) <= 0x1p-24 * \abs(ln_per(ssd, n)) + 0x1p-150);
    //@ assert v_le: LN_FLOAT(var <= 0x1p98);
    return 1.0f / sqrtf(ln_add_f32(var, eps));
}

void layernorm_row_forward_f32(float *y, float *mean, float *rstd, const float *x,
                               const float *gamma, const float *beta, int n, float eps)
{
    float m = ln_row_mean_f32(x, n);
    float r = ln_row_rstd_f32(x, m, n, eps);
    //@ assert m_def: LN_EXACT(m == ln_mean{Pre}(x, n));
    //@ assert r_def: LN_EXACT(r == ln_rstd{Pre}(x, n, eps));

    /*@ loop invariant i_range: 0 <= i <= n;
        loop invariant y_def: LN_EXACT(\forall integer k; 0 <= k < i ==>
          y[k] == ln_affine(\at(x[k], Pre), m, r, \at(gamma[k], Pre), \at(beta[k], Pre)));
        loop assigns i, y[0 .. n - 1];
        loop variant n - i; */
    for (int i = 0; i < n; i++) {
        /* (real model only: in the float model == is IEEE equality, and gamma, beta may hold NaN) */
        //@ assert frame_in: LN_EXACT(\forall integer k; k == i ==> x[k] == \at(x[k], Pre) && gamma[k] == \at(gamma[k], Pre) && beta[k] == \at(beta[k], Pre));
        y[i] = ln_affine_f32(x[i], m, r, gamma[i], beta[i]);
    }
    *mean = m;
    *rstd = r;
}

/* The second pass of layernorm_row_backward_f32, with mean(g) and mean(g * xhat) as parameters. */
/*@ requires n_pos: n >= 1;
    requires valid_dy: \valid_read(dy + (0 .. n - 1));
    requires valid_x: \valid_read(x + (0 .. n - 1));
    requires valid_gamma: \valid_read(gamma + (0 .. n - 1));
    requires valid_dx: \valid(dx + (0 .. n - 1));
    requires valid_dgamma: \valid(dgamma + (0 .. n - 1));
    requires valid_dbeta: \valid(dbeta + (0 .. n - 1));
    requires sep_dy: \separated(dx + (0 .. n - 1), dgamma + (0 .. n - 1), dbeta + (0 .. n - 1), dy + (0 .. n - 1));
    requires sep_x: \separated(dx + (0 .. n - 1), dgamma + (0 .. n - 1), dbeta + (0 .. n - 1), x + (0 .. n - 1));
    requires sep_gamma: \separated(dx + (0 .. n - 1), dgamma + (0 .. n - 1), dbeta + (0 .. n - 1), gamma + (0 .. n - 1));
    assigns dx[0 .. n - 1], dgamma[0 .. n - 1], dbeta[0 .. n - 1];
    ensures dx_def: LN_EXACT(\forall integer k; 0 <= k < n ==>
      dx[k] == ln_dx_v(ln_mul(\old(dy[k]), \old(gamma[k])), mean_g, ln_xhat_v(\old(x[k]), mean, rstd), mean_gx, rstd));
    ensures dgamma_acc: LN_EXACT(\forall integer k; 0 <= k < n ==>
      dgamma[k] == ln_acc_prod(\old(dgamma[k]), \old(dy[k]), ln_xhat_v(\old(x[k]), mean, rstd)));
    ensures dbeta_acc: LN_EXACT(\forall integer k; 0 <= k < n ==> dbeta[k] == \old(dbeta[k]) + \old(dy[k]));
*/
static void ln_backward_apply_f32(float *dx, float *dgamma, float *dbeta, const float *dy, const float *x,
                                 const float *gamma, float mean, float rstd, float mean_g, float mean_gx, int n)
{
    /*@ loop invariant i_range: 0 <= i <= n;
        loop invariant dbeta_done: LN_EXACT(\forall integer k; 0 <= k < i ==> dbeta[k] == \at(dbeta[k], Pre) + \at(dy[k], Pre));
        loop invariant dbeta_todo: LN_EXACT(\forall integer k; i <= k < n ==> dbeta[k] == \at(dbeta[k], Pre));
        loop invariant dgamma_done: LN_EXACT(\forall integer k; 0 <= k < i ==>
          dgamma[k] == ln_acc_prod(\at(dgamma[k], Pre), \at(dy[k], Pre), ln_xhat_v(\at(x[k], Pre), mean, rstd)));
        loop invariant dgamma_todo: LN_EXACT(\forall integer k; i <= k < n ==> dgamma[k] == \at(dgamma[k], Pre));
        loop invariant dx_done: LN_EXACT(\forall integer k; 0 <= k < i ==>
          dx[k] == ln_dx_v(ln_mul(\at(dy[k], Pre), \at(gamma[k], Pre)), mean_g, ln_xhat_v(\at(x[k], Pre), mean, rstd), mean_gx, rstd));
        loop assigns i, dx[0 .. n - 1], dgamma[0 .. n - 1], dbeta[0 .. n - 1];
        loop variant n - i; */
    for (int i = 0; i < n; i++) {
        //@ assert frame_in: LN_EXACT(\forall integer k; k == i ==> x[k] == \at(x[k], Pre) && gamma[k] == \at(gamma[k], Pre) && dy[k] == \at(dy[k], Pre));
        //@ assert frame_acc: LN_EXACT(\forall integer k; k == i ==> dgamma[k] == \at(dgamma[k], Pre) && dbeta[k] == \at(dbeta[k], Pre));
        float xhat = ln_xhat_f32(x[i], mean, rstd);
        float g = ln_mul_f32(dy[i], gamma[i]);
        dbeta[i] += dy[i];
        dgamma[i] = ln_acc_prod_f32(dgamma[i], dy[i], xhat);
        dx[i] = ln_dx_f32(g, mean_g, xhat, mean_gx, rstd);
    }
}

void layernorm_row_backward_f32(float *dx, float *dgamma, float *dbeta, const float *dy,
                                const float *x, const float *gamma, float mean, float rstd, int n)
{
    /* First pass: the two row reductions, mean(g) and mean(g * xhat). */
    float sum_g = 0.0f, sum_gx = 0.0f;
    /*@ loop invariant i_range: 0 <= i <= n;
        loop invariant sum_g_def: LN_EXACT(sum_g == ln_sum_g(dy, gamma, i));
        loop invariant sum_gx_def: LN_EXACT(sum_gx == ln_sum_gx(dy, gamma, x, mean, rstd, i));
        loop assigns i, sum_g, sum_gx;
        loop variant n - i; */
    for (int i = 0; i < n; i++) {
        float xhat = ln_xhat_f32(x[i], mean, rstd);
        float g = dy[i] * gamma[i];
        sum_g += g;
        sum_gx += g * xhat;
    }
    float mean_g = ln_div_f32(sum_g, (float)n); /* sum_g / n */
    float mean_gx = ln_div_f32(sum_gx, (float)n); /* sum_gx / n */

    /* Second pass: the per-element gradients (a helper, so that its proof does not see the sums). */
    ln_backward_apply_f32(dx, dgamma, dbeta, dy, x, gamma, mean, rstd, mean_g, mean_gx, n);
}

void layernorm_forward_f32(float *y, float *mean, float *rstd, const float *x, const float *gamma,
                           const float *beta, int rows, int n, float eps)
{
    /* Rows 0 .. r-1 are done (rows run only, LN_ROWS): y of row q is the affine map of x's row q
       (as at entry) with that row's own statistics mean[q], rstd[q]. */
    /*@ loop invariant r_range: 0 <= r <= rows;
        loop invariant x_same: LN_ROWS(\forall integer k; 0 <= k < rows * n ==> x[k] == \at(x[k], Pre));
        loop invariant g_same: LN_ROWS(\forall integer k; 0 <= k < n ==> gamma[k] == \at(gamma[k], Pre));
        LN_ROWS_CLAUSE(loop invariant b_same: \forall integer k; 0 <= k < n ==> beta[k] == \at(beta[k], Pre);)
        loop invariant y_done: LN_ROWS(\forall integer q; 0 <= q < r ==>
          ln_row_affine{Pre, Here}(y, mean, rstd, x, gamma, beta, q, ln_row_start(q, n), n));
        LN_ROWS_CLAUSE(loop invariant stats_done: \forall integer q; 0 <= q < r ==>
          mean[q] == ln_mean{Pre}(x + ln_row_start(q, n), n) &&
          rstd[q] == ln_rstd{Pre}(x + ln_row_start(q, n), n, eps);)
        loop assigns r, y[0 .. rows * n - 1], mean[0 .. rows - 1], rstd[0 .. rows - 1];
        loop variant rows - r; */
    for (int r = 0; r < rows; r++) {
        //@ ghost lemma_row_offset(r, rows, n);
        //@ ghost lemma_rows_before(r, n);
        //@ assert row_at: LN_ROWS(r * n == ln_row_start(r, n));
        layernorm_row_forward_f32(y + r * n, mean + r, rstd + r, x + r * n, gamma, beta, n, eps);
#ifdef RESNORM_WP_ROWS
        /* The call wrote y, mean and rstd only: x, gamma and beta are as before it. */
        /*@ assert frame_x: \forall integer k; 0 <= k < rows * n ==> x[k] == \at(x[k], LoopCurrent); */
        /*@ assert frame_gb: \forall integer k; 0 <= k < n ==>
              gamma[k] == \at(gamma[k], LoopCurrent) && beta[k] == \at(beta[k], LoopCurrent); */
#endif
        /* The call wrote row r only: the rows before it, and their statistics, are unchanged. */
        /*@ assert frame_stats: LN_ROWS(\forall integer q; 0 <= q < r ==>
              mean[q] == \at(mean[q], LoopCurrent) && rstd[q] == \at(rstd[q], LoopCurrent)); */
        /*@ assert frame_y: LN_ROWS(\forall integer k; 0 <= k < ln_row_start(r, n) ==>
              y[k] == \at(y[k], LoopCurrent)); */
        /* Row r is done (the call's y_stats, with x_same; q is bound since r, a C local, cannot
           appear under \at(..., Pre)), in the shape of y_done. */
        /*@ assert row_r: LN_ROWS(\forall integer q, i; q == r && 0 <= i < n ==>
              y[ln_row_start(q, n) + i] == ln_affine(\at(x[ln_row_start(q, n) + i], Pre), mean[q], rstd[q],
                                                     \at(gamma[i], Pre), \at(beta[i], Pre))); */
        /*@ assert idx_old: LN_ROWS(\forall integer q, i; 0 <= q < r && 0 <= i < n ==>
              0 <= ln_row_start(q, n) + i < ln_row_start(r, n)); */
        /*@ assert y_old: LN_ROWS(\forall integer q, i; 0 <= q < r && 0 <= i < n ==>
              y[ln_row_start(q, n) + i] == \at(y[ln_row_start(q, n) + i], LoopCurrent)); */
        /*@ assert rows_old: LN_ROWS(\forall integer q; 0 <= q < r ==>
              ln_row_affine{Pre, LoopCurrent}(y, mean, rstd, x, gamma, beta, q, ln_row_start(q, n), n) &&
              ln_row_affine{Pre, Here}(y, mean, rstd, x, gamma, beta, q, ln_row_start(q, n), n)); */
        //@ assert row_new: LN_ROWS(ln_row_affine{Pre, Here}(y, mean, rstd, x, gamma, beta, r, r * n, n));
#ifdef RESNORM_WP_ROWS
        /* mean[r], rstd[r]: the call's mean_def, rstd_def are over the memory of the call
           (LoopCurrent); carried to the entry's by the lemmas of specs/layernorm_model.h (x's row r
           unchanged: x_same), the sum first, then the squared deviations from that mean. */
        /*@ assert row_same: \forall integer q, k; q == r && ln_row_start(q, n) <= k < ln_row_start(q, n) + n ==>
              \at(x[k], LoopCurrent) == \at(x[k], Pre); */
        /*@ assert sum_call: \forall integer q; q == r ==>
              \at(ln_sum(x + ln_row_start(q, n), n), LoopCurrent) ==
              \at(ln_sum_at(x, ln_row_start(q, n), n), LoopCurrent); */
        /*@ assert sum_frame: \forall integer q; q == r ==>
              \at(ln_sum_at(x, ln_row_start(q, n), n), LoopCurrent) ==
              \at(ln_sum_at(x, ln_row_start(q, n), n), Pre); */
        /*@ assert sum_pre: \forall integer q; q == r ==>
              \at(ln_sum(x + ln_row_start(q, n), n), Pre) ==
              \at(ln_sum_at(x, ln_row_start(q, n), n), Pre); */
        /*@ assert mean_same: \forall integer q; q == r ==>
              \at(ln_mean(x + ln_row_start(q, n), n), LoopCurrent) ==
              ln_mean{Pre}(x + ln_row_start(q, n), n); */
        /*@ assert mean_r: \forall integer q; q == r ==>
              mean[q] == ln_mean{Pre}(x + ln_row_start(q, n), n); */
        /*@ assert ssd_call: \forall integer q; q == r ==>
              \at(ln_ssd(x + ln_row_start(q, n), ln_mean{Pre}(x + ln_row_start(q, n), n), n), LoopCurrent) ==
              \at(ln_ssd_at(x, ln_row_start(q, n), ln_mean{Pre}(x + ln_row_start(q, n), n), n), LoopCurrent); */
        /*@ assert ssd_frame: \forall integer q; q == r ==>
              \at(ln_ssd_at(x, ln_row_start(q, n), ln_mean{Pre}(x + ln_row_start(q, n), n), n), LoopCurrent) ==
              \at(ln_ssd_at(x, ln_row_start(q, n), ln_mean{Pre}(x + ln_row_start(q, n), n), n), Pre); */
        /*@ assert ssd_pre: \forall integer q; q == r ==>
              \at(ln_ssd(x + ln_row_start(q, n), ln_mean{Pre}(x + ln_row_start(q, n), n), n), Pre) ==
              \at(ln_ssd_at(x, ln_row_start(q, n), ln_mean{Pre}(x + ln_row_start(q, n), n), n), Pre); */
        /*@ assert var_same: \forall integer q; q == r ==>
              \at(ln_var(x + ln_row_start(q, n), n), LoopCurrent) == ln_var{Pre}(x + ln_row_start(q, n), n); */
        /*@ assert rstd_r: \forall integer q; q == r ==>
              rstd[q] == ln_rstd{Pre}(x + ln_row_start(q, n), n, eps); */
#endif
    }
}

void layernorm_backward_f32(float *dx, float *dgamma, float *dbeta, const float *dy, const float *x,
                            const float *gamma, const float *mean, const float *rstd, int rows,
                            int n)
{
    /* Rows run (specs/layernorm_rows.h): dgamma and dbeta have accumulated rows 0 .. r-1, over the
       inputs at entry, which the calls do not write (dx's rows are not stated here). */
    /*@ loop invariant r_range: 0 <= r <= rows;
        LN_ROWS_CLAUSE(loop invariant in_same: \forall integer k; 0 <= k < rows * n ==>
          dy[k] == \at(dy[k], Pre) && x[k] == \at(x[k], Pre);)
        LN_ROWS_CLAUSE(loop invariant stats_same: \forall integer q; 0 <= q < rows ==>
          mean[q] == \at(mean[q], Pre) && rstd[q] == \at(rstd[q], Pre);)
        LN_ROWS_CLAUSE(loop invariant dgb_done: ln_dgb_rows{Pre, Here}(dgamma, dbeta, dy, x, mean, rstd, r, n);)
        LN_ROWS_CLAUSE(loop invariant g_same: \forall integer k; 0 <= k < n ==> gamma[k] == \at(gamma[k], Pre);)
        LN_ROWS_CLAUSE(loop invariant dx_done: \forall integer q; 0 <= q < r ==>
          ln_row_dx{Pre, Here}(dx, dy, x, gamma, mean, rstd, q, ln_row_start(q, n), n);)
        loop assigns r, dx[0 .. rows * n - 1], dgamma[0 .. n - 1], dbeta[0 .. n - 1];
        loop variant rows - r; */
    for (int r = 0; r < rows; r++) {
        //@ ghost lemma_row_offset(r, rows, n);
#ifdef RESNORM_WP_ROWS
        //@ ghost lemma_rows_before(r, n);
        //@ assert row_at: r * n == ln_row_start(r, n);
#endif
        layernorm_row_backward_f32(dx + r * n, dgamma, dbeta, dy + r * n, x + r * n, gamma,
                                   mean[r], rstd[r], n);
#ifdef RESNORM_WP_ROWS
        /* The call wrote dx's row r, dgamma and dbeta only: the inputs are as at entry (the loop
           invariants' statements, first, so that their goals are closed here, before the
           recursive sums below enter the context). */
        /*@ assert in_here: \forall integer k; 0 <= k < rows * n ==>
              dy[k] == \at(dy[k], Pre) && x[k] == \at(x[k], Pre); */
        /*@ assert stats_here: \forall integer q; 0 <= q < rows ==>
              mean[q] == \at(mean[q], Pre) && rstd[q] == \at(rstd[q], Pre); */
        /*@ assert g_here: \forall integer k; 0 <= k < n ==> gamma[k] == \at(gamma[k], Pre); */
        /* The call's dgamma_acc, dbeta_acc (over the call's memory, where dy's and x's row r and the
           statistics are as at entry) are the step of ln_dg_sum / ln_db_sum from r to r + 1; q is
           bound (r, a C local, cannot appear under \at(..., Pre)). */
        /*@ assert dg_call: \forall integer i; 0 <= i < n ==>
              dgamma[i] == \at(dgamma[i], LoopCurrent) +
                ln_mul_v(\at((dy + r * n)[i], LoopCurrent), \at(ln_xhat(x + r * n, mean[r], rstd[r], i), LoopCurrent)) &&
              dbeta[i] == \at(dbeta[i], LoopCurrent) + \at((dy + r * n)[i], LoopCurrent); */
        /*@ assert dg_reads: \forall integer q, i; q == r && 0 <= i < n ==>
              \at((dy + q * n)[i], LoopCurrent) == \at(dy[ln_col_idx(q, n, i)], Pre) &&
              \at((x + q * n)[i], LoopCurrent) == \at(x[ln_col_idx(q, n, i)], Pre) &&
              \at(mean[q], LoopCurrent) == \at(mean[q], Pre) && \at(rstd[q], LoopCurrent) == \at(rstd[q], Pre); */
        /*@ assert dg_xhat: \forall integer q, i; q == r && 0 <= i < n ==>
              \at(ln_xhat(x + q * n, mean[q], rstd[q], i), LoopCurrent) ==
                ln_xhat_v(\at(x[ln_col_idx(q, n, i)], Pre), \at(mean[q], Pre), \at(rstd[q], Pre)); */
        /*@ assert dg_step: \forall integer q, i; q == r && 0 <= i < n ==>
              dgamma[i] == \at(dgamma[i], LoopCurrent) +
                ln_mul_v(\at(dy[ln_col_idx(q, n, i)], Pre),
                         ln_xhat_v(\at(x[ln_col_idx(q, n, i)], Pre), \at(mean[q], Pre), \at(rstd[q], Pre))) &&
              dbeta[i] == \at(dbeta[i], LoopCurrent) + \at(dy[ln_col_idx(q, n, i)], Pre); */
        /*@ assert dg_unfold: \forall integer q, i; q == r && 0 <= i < n ==>
              ln_dg_sum{Pre}(dy, x, mean, rstd, i, n, q + 1) == ln_dg_sum{Pre}(dy, x, mean, rstd, i, n, q) +
                ln_mul_v(\at(dy[ln_col_idx(q, n, i)], Pre),
                         ln_xhat_v(\at(x[ln_col_idx(q, n, i)], Pre), \at(mean[q], Pre), \at(rstd[q], Pre))) &&
              ln_db_sum{Pre}(dy, i, n, q + 1) == ln_db_sum{Pre}(dy, i, n, q) + \at(dy[ln_col_idx(q, n, i)], Pre); */
        /*@ assert dg_next: \forall integer q, i; q == r && 0 <= i < n ==>
              dgamma[i] == \at(dgamma[i], Pre) + ln_dg_sum{Pre}(dy, x, mean, rstd, i, n, q + 1) &&
              dbeta[i] == \at(dbeta[i], Pre) + ln_db_sum{Pre}(dy, i, n, q + 1); */
        /* dx: the call wrote row r only, so the rows before it are still done. */
        /*@ assert idx_old: \forall integer q, i; 0 <= q < r && 0 <= i < n ==>
              0 <= ln_row_start(q, n) + i < ln_row_start(r, n); */
        /*@ assert dx_old: \forall integer q, i; 0 <= q < r && 0 <= i < n ==>
              dx[ln_row_start(q, n) + i] == \at(dx[ln_row_start(q, n) + i], LoopCurrent); */
        /*@ assert rows_old: \forall integer q; 0 <= q < r ==>
              ln_row_dx{Pre, LoopCurrent}(dx, dy, x, gamma, mean, rstd, q, ln_row_start(q, n), n) &&
              ln_row_dx{Pre, Here}(dx, dy, x, gamma, mean, rstd, q, ln_row_start(q, n), n); */
        /* What row r's dx reads, as at entry (for ln_dx_frame below). */
        /*@ assert dx_reads: \forall integer q; q == r ==>
              (\forall integer i; 0 <= i < n ==> \at(gamma[i], LoopCurrent) == \at(gamma[i], Pre) &&
                 \at(dy[ln_row_start(q, n) + i], LoopCurrent) == \at(dy[ln_row_start(q, n) + i], Pre) &&
                 \at(x[ln_row_start(q, n) + i], LoopCurrent) == \at(x[ln_row_start(q, n) + i], Pre)); */
        /*@ assert dx_same: \forall integer q; q == r ==>
              ln_same_row{LoopCurrent, Pre}(dy + ln_row_start(q, n), gamma, x + ln_row_start(q, n), n); */
        /*@ assert dx_stats: \forall integer q; q == r ==>
              \at(mean[q], LoopCurrent) == \at(mean[q], Pre) && \at(rstd[q], LoopCurrent) == \at(rstd[q], Pre); */
        /* dx: the call's dx_def (over the call's memory) is row r of ln_row_dx at entry: what ln_dx
           reads (dy's and x's row r, gamma) and the statistics are as at entry (ln_dx_frame). */
        /*@ assert dx_call: \forall integer q, i; q == r && 0 <= i < n ==>
              dx[ln_row_start(q, n) + i] ==
                \at(ln_dx(dy + ln_row_start(q, n), gamma, x + ln_row_start(q, n), mean[q], rstd[q], n, i), LoopCurrent); */
        /*@ assert dx_stats_in: \forall integer q, i; q == r && 0 <= i < n ==>
              \at(ln_dx(dy + ln_row_start(q, n), gamma, x + ln_row_start(q, n), mean[q], rstd[q], n, i), LoopCurrent) ==
                ln_dx{LoopCurrent}(dy + ln_row_start(q, n), gamma, x + ln_row_start(q, n), \at(mean[q], Pre), \at(rstd[q], Pre), n, i); */
        /*@ assert dx_frame: \forall integer q, i; q == r && 0 <= i < n ==>
              \at(ln_dx(dy + ln_row_start(q, n), gamma, x + ln_row_start(q, n), mean[q], rstd[q], n, i), LoopCurrent) ==
                ln_dx{Pre}(dy + ln_row_start(q, n), gamma, x + ln_row_start(q, n), \at(mean[q], Pre), \at(rstd[q], Pre), n, i); */
        /*@ assert row_new: \forall integer q; q == r ==>
              ln_row_dx{Pre, Here}(dx, dy, x, gamma, mean, rstd, q, ln_row_start(q, n), n); */
#endif
    }
}

/* ---- double: the same code with double ---- */

/* Per-element helpers: each is one line of the kernel, moved out so that its formula is a contract
   and the loop proofs are about framing only.  Same operations, same order (static inline: the
   compiled code is the same). */
/*@ assigns \nothing;
    ensures affine: LN_EXACT(\result == ln_affine(xi, m, r, g, b)); */
static inline double ln_affine_f64(double xi, double m, double r, double g, double b)
{
    return (xi - m) * r * g + b;
}

/*@ assigns \nothing;
    ensures div: LN_EXACT(\result == ln_div(a, b)); */
static inline double ln_div_f64(double a, double b)
{
    return a / b;
}

/*@ assigns \nothing;
    ensures mul: LN_EXACT(\result == ln_mul(a, b)); */
static inline double ln_mul_f64(double a, double b)
{
    return a * b;
}

/*@ assigns \nothing;
    ensures xhat: LN_EXACT(\result == ln_xhat_v(xi, m, r)); */
static inline double ln_xhat_f64(double xi, double m, double r)
{
    return (xi - m) * r;
}

/*@ assigns \nothing;
    ensures acc_prod: LN_EXACT(\result == ln_acc_prod(acc, a, b)); */
static inline double ln_acc_prod_f64(double acc, double a, double b)
{
    return acc + a * b; /* dgamma[i] += dy[i] * xhat */
}

/*@ assigns \nothing;
    ensures dx: LN_EXACT(\result == ln_dx_v(g, mean_g, xhat, mean_gx, r)); */
static inline double ln_dx_f64(double g, double mean_g, double xhat, double mean_gx, double r)
{
    return (g - mean_g - xhat * mean_gx) * r;
}


void layernorm_row_forward_f64(double *y, double *mean, double *rstd, const double *x,
                               const double *gamma, const double *beta, int n, double eps)
{
    double sum = 0.0;
    /*@ loop invariant i_range: 0 <= i <= n;
        loop invariant sum_def: LN_EXACT(sum == ln_sum(x, i));
        loop assigns i, sum;
        loop variant n - i; */
    for (int i = 0; i < n; i++)
        sum += x[i];
    double m = sum / (double)n;

    double ssd = 0.0;
    /*@ loop invariant i_range: 0 <= i <= n;
        loop invariant ssd_def: LN_EXACT(ssd == ln_ssd(x, m, i));
        loop invariant ssd_nonneg: LN_EXACT(ssd >= 0);
        loop assigns i, ssd;
        loop variant n - i; */
    for (int i = 0; i < n; i++) {
        double d = x[i] - m;
        //@ ghost lemma_sq_nonneg_f64(d);
        ssd += d * d;
    }
    double var = ssd / (double)n;
    double r = 1.0 / sqrt(var + eps);

    /*@ loop invariant i_range: 0 <= i <= n;
        loop invariant y_def: LN_EXACT(\forall integer k; 0 <= k < i ==>
          y[k] == ln_affine(\at(x[k], Pre), m, r, \at(gamma[k], Pre), \at(beta[k], Pre)));
        loop assigns i, y[0 .. n - 1];
        loop variant n - i; */
    for (int i = 0; i < n; i++) {
        //@ assert frame_in: LN_EXACT(\forall integer k; k == i ==> x[k] == \at(x[k], Pre) && gamma[k] == \at(gamma[k], Pre) && beta[k] == \at(beta[k], Pre));
        y[i] = ln_affine_f64(x[i], m, r, gamma[i], beta[i]);
    }
    *mean = m;
    *rstd = r;
}

/* The second pass of layernorm_row_backward_f64, with mean(g) and mean(g * xhat) as parameters. */
/*@ requires n_pos: n >= 1;
    requires valid_dy: \valid_read(dy + (0 .. n - 1));
    requires valid_x: \valid_read(x + (0 .. n - 1));
    requires valid_gamma: \valid_read(gamma + (0 .. n - 1));
    requires valid_dx: \valid(dx + (0 .. n - 1));
    requires valid_dgamma: \valid(dgamma + (0 .. n - 1));
    requires valid_dbeta: \valid(dbeta + (0 .. n - 1));
    requires sep_dy: \separated(dx + (0 .. n - 1), dgamma + (0 .. n - 1), dbeta + (0 .. n - 1), dy + (0 .. n - 1));
    requires sep_x: \separated(dx + (0 .. n - 1), dgamma + (0 .. n - 1), dbeta + (0 .. n - 1), x + (0 .. n - 1));
    requires sep_gamma: \separated(dx + (0 .. n - 1), dgamma + (0 .. n - 1), dbeta + (0 .. n - 1), gamma + (0 .. n - 1));
    assigns dx[0 .. n - 1], dgamma[0 .. n - 1], dbeta[0 .. n - 1];
    ensures dx_def: LN_EXACT(\forall integer k; 0 <= k < n ==>
      dx[k] == ln_dx_v(ln_mul(\old(dy[k]), \old(gamma[k])), mean_g, ln_xhat_v(\old(x[k]), mean, rstd), mean_gx, rstd));
    ensures dgamma_acc: LN_EXACT(\forall integer k; 0 <= k < n ==>
      dgamma[k] == ln_acc_prod(\old(dgamma[k]), \old(dy[k]), ln_xhat_v(\old(x[k]), mean, rstd)));
    ensures dbeta_acc: LN_EXACT(\forall integer k; 0 <= k < n ==> dbeta[k] == \old(dbeta[k]) + \old(dy[k]));
*/
static void ln_backward_apply_f64(double *dx, double *dgamma, double *dbeta, const double *dy, const double *x,
                                 const double *gamma, double mean, double rstd, double mean_g, double mean_gx, int n)
{
    /*@ loop invariant i_range: 0 <= i <= n;
        loop invariant dbeta_done: LN_EXACT(\forall integer k; 0 <= k < i ==> dbeta[k] == \at(dbeta[k], Pre) + \at(dy[k], Pre));
        loop invariant dbeta_todo: LN_EXACT(\forall integer k; i <= k < n ==> dbeta[k] == \at(dbeta[k], Pre));
        loop invariant dgamma_done: LN_EXACT(\forall integer k; 0 <= k < i ==>
          dgamma[k] == ln_acc_prod(\at(dgamma[k], Pre), \at(dy[k], Pre), ln_xhat_v(\at(x[k], Pre), mean, rstd)));
        loop invariant dgamma_todo: LN_EXACT(\forall integer k; i <= k < n ==> dgamma[k] == \at(dgamma[k], Pre));
        loop invariant dx_done: LN_EXACT(\forall integer k; 0 <= k < i ==>
          dx[k] == ln_dx_v(ln_mul(\at(dy[k], Pre), \at(gamma[k], Pre)), mean_g, ln_xhat_v(\at(x[k], Pre), mean, rstd), mean_gx, rstd));
        loop assigns i, dx[0 .. n - 1], dgamma[0 .. n - 1], dbeta[0 .. n - 1];
        loop variant n - i; */
    for (int i = 0; i < n; i++) {
        //@ assert frame_in: LN_EXACT(\forall integer k; k == i ==> x[k] == \at(x[k], Pre) && gamma[k] == \at(gamma[k], Pre) && dy[k] == \at(dy[k], Pre));
        //@ assert frame_acc: LN_EXACT(\forall integer k; k == i ==> dgamma[k] == \at(dgamma[k], Pre) && dbeta[k] == \at(dbeta[k], Pre));
        double xhat = ln_xhat_f64(x[i], mean, rstd);
        double g = ln_mul_f64(dy[i], gamma[i]);
        dbeta[i] += dy[i];
        dgamma[i] = ln_acc_prod_f64(dgamma[i], dy[i], xhat);
        dx[i] = ln_dx_f64(g, mean_g, xhat, mean_gx, rstd);
    }
}

void layernorm_row_backward_f64(double *dx, double *dgamma, double *dbeta, const double *dy,
                                const double *x, const double *gamma, double mean, double rstd,
                                int n)
{
    double sum_g = 0.0, sum_gx = 0.0;
    /*@ loop invariant i_range: 0 <= i <= n;
        loop invariant sum_g_def: LN_EXACT(sum_g == ln_sum_g(dy, gamma, i));
        loop invariant sum_gx_def: LN_EXACT(sum_gx == ln_sum_gx(dy, gamma, x, mean, rstd, i));
        loop assigns i, sum_g, sum_gx;
        loop variant n - i; */
    for (int i = 0; i < n; i++) {
        double xhat = ln_xhat_f64(x[i], mean, rstd);
        double g = dy[i] * gamma[i];
        sum_g += g;
        sum_gx += g * xhat;
    }
    double mean_g = ln_div_f64(sum_g, (double)n); /* sum_g / n */
    double mean_gx = ln_div_f64(sum_gx, (double)n); /* sum_gx / n */

    /* Second pass: the per-element gradients (a helper, so that its proof does not see the sums). */
    ln_backward_apply_f64(dx, dgamma, dbeta, dy, x, gamma, mean, rstd, mean_g, mean_gx, n);
}

void layernorm_forward_f64(double *y, double *mean, double *rstd, const double *x,
                           const double *gamma, const double *beta, int rows, int n, double eps)
{
    /* Rows 0 .. r-1 are done (rows run only, LN_ROWS): y of row q is the affine map of x's row q
       (as at entry) with that row's own statistics mean[q], rstd[q]. */
    /*@ loop invariant r_range: 0 <= r <= rows;
        loop invariant x_same: LN_ROWS(\forall integer k; 0 <= k < rows * n ==> x[k] == \at(x[k], Pre));
        loop invariant g_same: LN_ROWS(\forall integer k; 0 <= k < n ==> gamma[k] == \at(gamma[k], Pre));
        LN_ROWS_CLAUSE(loop invariant b_same: \forall integer k; 0 <= k < n ==> beta[k] == \at(beta[k], Pre);)
        loop invariant y_done: LN_ROWS(\forall integer q; 0 <= q < r ==>
          ln_row_affine{Pre, Here}(y, mean, rstd, x, gamma, beta, q, ln_row_start(q, n), n));
        LN_ROWS_CLAUSE(loop invariant stats_done: \forall integer q; 0 <= q < r ==>
          mean[q] == ln_mean{Pre}(x + ln_row_start(q, n), n) &&
          rstd[q] == ln_rstd{Pre}(x + ln_row_start(q, n), n, eps);)
        loop assigns r, y[0 .. rows * n - 1], mean[0 .. rows - 1], rstd[0 .. rows - 1];
        loop variant rows - r; */
    for (int r = 0; r < rows; r++) {
        //@ ghost lemma_row_offset(r, rows, n);
        //@ ghost lemma_rows_before(r, n);
        //@ assert row_at: LN_ROWS(r * n == ln_row_start(r, n));
        layernorm_row_forward_f64(y + r * n, mean + r, rstd + r, x + r * n, gamma, beta, n, eps);
#ifdef RESNORM_WP_ROWS
        /* The call wrote y, mean and rstd only: x, gamma and beta are as before it. */
        /*@ assert frame_x: \forall integer k; 0 <= k < rows * n ==> x[k] == \at(x[k], LoopCurrent); */
        /*@ assert frame_gb: \forall integer k; 0 <= k < n ==>
              gamma[k] == \at(gamma[k], LoopCurrent) && beta[k] == \at(beta[k], LoopCurrent); */
#endif
        /* The call wrote row r only: the rows before it, and their statistics, are unchanged. */
        /*@ assert frame_stats: LN_ROWS(\forall integer q; 0 <= q < r ==>
              mean[q] == \at(mean[q], LoopCurrent) && rstd[q] == \at(rstd[q], LoopCurrent)); */
        /*@ assert frame_y: LN_ROWS(\forall integer k; 0 <= k < ln_row_start(r, n) ==>
              y[k] == \at(y[k], LoopCurrent)); */
        /* Row r is done (the call's y_stats, with x_same; q is bound since r, a C local, cannot
           appear under \at(..., Pre)), in the shape of y_done. */
        /*@ assert row_r: LN_ROWS(\forall integer q, i; q == r && 0 <= i < n ==>
              y[ln_row_start(q, n) + i] == ln_affine(\at(x[ln_row_start(q, n) + i], Pre), mean[q], rstd[q],
                                                     \at(gamma[i], Pre), \at(beta[i], Pre))); */
        /*@ assert idx_old: LN_ROWS(\forall integer q, i; 0 <= q < r && 0 <= i < n ==>
              0 <= ln_row_start(q, n) + i < ln_row_start(r, n)); */
        /*@ assert y_old: LN_ROWS(\forall integer q, i; 0 <= q < r && 0 <= i < n ==>
              y[ln_row_start(q, n) + i] == \at(y[ln_row_start(q, n) + i], LoopCurrent)); */
        /*@ assert rows_old: LN_ROWS(\forall integer q; 0 <= q < r ==>
              ln_row_affine{Pre, LoopCurrent}(y, mean, rstd, x, gamma, beta, q, ln_row_start(q, n), n) &&
              ln_row_affine{Pre, Here}(y, mean, rstd, x, gamma, beta, q, ln_row_start(q, n), n)); */
        //@ assert row_new: LN_ROWS(ln_row_affine{Pre, Here}(y, mean, rstd, x, gamma, beta, r, r * n, n));
#ifdef RESNORM_WP_ROWS
        /* mean[r], rstd[r]: the call's mean_def, rstd_def are over the memory of the call
           (LoopCurrent); carried to the entry's by the lemmas of specs/layernorm_model.h (x's row r
           unchanged: x_same), the sum first, then the squared deviations from that mean. */
        /*@ assert row_same: \forall integer q, k; q == r && ln_row_start(q, n) <= k < ln_row_start(q, n) + n ==>
              \at(x[k], LoopCurrent) == \at(x[k], Pre); */
        /*@ assert sum_call: \forall integer q; q == r ==>
              \at(ln_sum(x + ln_row_start(q, n), n), LoopCurrent) ==
              \at(ln_sum_at(x, ln_row_start(q, n), n), LoopCurrent); */
        /*@ assert sum_frame: \forall integer q; q == r ==>
              \at(ln_sum_at(x, ln_row_start(q, n), n), LoopCurrent) ==
              \at(ln_sum_at(x, ln_row_start(q, n), n), Pre); */
        /*@ assert sum_pre: \forall integer q; q == r ==>
              \at(ln_sum(x + ln_row_start(q, n), n), Pre) ==
              \at(ln_sum_at(x, ln_row_start(q, n), n), Pre); */
        /*@ assert mean_same: \forall integer q; q == r ==>
              \at(ln_mean(x + ln_row_start(q, n), n), LoopCurrent) ==
              ln_mean{Pre}(x + ln_row_start(q, n), n); */
        /*@ assert mean_r: \forall integer q; q == r ==>
              mean[q] == ln_mean{Pre}(x + ln_row_start(q, n), n); */
        /*@ assert ssd_call: \forall integer q; q == r ==>
              \at(ln_ssd(x + ln_row_start(q, n), ln_mean{Pre}(x + ln_row_start(q, n), n), n), LoopCurrent) ==
              \at(ln_ssd_at(x, ln_row_start(q, n), ln_mean{Pre}(x + ln_row_start(q, n), n), n), LoopCurrent); */
        /*@ assert ssd_frame: \forall integer q; q == r ==>
              \at(ln_ssd_at(x, ln_row_start(q, n), ln_mean{Pre}(x + ln_row_start(q, n), n), n), LoopCurrent) ==
              \at(ln_ssd_at(x, ln_row_start(q, n), ln_mean{Pre}(x + ln_row_start(q, n), n), n), Pre); */
        /*@ assert ssd_pre: \forall integer q; q == r ==>
              \at(ln_ssd(x + ln_row_start(q, n), ln_mean{Pre}(x + ln_row_start(q, n), n), n), Pre) ==
              \at(ln_ssd_at(x, ln_row_start(q, n), ln_mean{Pre}(x + ln_row_start(q, n), n), n), Pre); */
        /*@ assert var_same: \forall integer q; q == r ==>
              \at(ln_var(x + ln_row_start(q, n), n), LoopCurrent) == ln_var{Pre}(x + ln_row_start(q, n), n); */
        /*@ assert rstd_r: \forall integer q; q == r ==>
              rstd[q] == ln_rstd{Pre}(x + ln_row_start(q, n), n, eps); */
#endif
    }
}

void layernorm_backward_f64(double *dx, double *dgamma, double *dbeta, const double *dy,
                            const double *x, const double *gamma, const double *mean,
                            const double *rstd, int rows, int n)
{
    /* Rows run (specs/layernorm_rows.h): dgamma and dbeta have accumulated rows 0 .. r-1, over the
       inputs at entry, which the calls do not write (dx's rows are not stated here). */
    /*@ loop invariant r_range: 0 <= r <= rows;
        LN_ROWS_CLAUSE(loop invariant in_same: \forall integer k; 0 <= k < rows * n ==>
          dy[k] == \at(dy[k], Pre) && x[k] == \at(x[k], Pre);)
        LN_ROWS_CLAUSE(loop invariant stats_same: \forall integer q; 0 <= q < rows ==>
          mean[q] == \at(mean[q], Pre) && rstd[q] == \at(rstd[q], Pre);)
        LN_ROWS_CLAUSE(loop invariant dgb_done: ln_dgb_rows{Pre, Here}(dgamma, dbeta, dy, x, mean, rstd, r, n);)
        LN_ROWS_CLAUSE(loop invariant g_same: \forall integer k; 0 <= k < n ==> gamma[k] == \at(gamma[k], Pre);)
        LN_ROWS_CLAUSE(loop invariant dx_done: \forall integer q; 0 <= q < r ==>
          ln_row_dx{Pre, Here}(dx, dy, x, gamma, mean, rstd, q, ln_row_start(q, n), n);)
        loop assigns r, dx[0 .. rows * n - 1], dgamma[0 .. n - 1], dbeta[0 .. n - 1];
        loop variant rows - r; */
    for (int r = 0; r < rows; r++) {
        //@ ghost lemma_row_offset(r, rows, n);
#ifdef RESNORM_WP_ROWS
        //@ ghost lemma_rows_before(r, n);
        //@ assert row_at: r * n == ln_row_start(r, n);
#endif
        layernorm_row_backward_f64(dx + r * n, dgamma, dbeta, dy + r * n, x + r * n, gamma,
                                   mean[r], rstd[r], n);
#ifdef RESNORM_WP_ROWS
        /* The call wrote dx's row r, dgamma and dbeta only: the inputs are as at entry (the loop
           invariants' statements, first, so that their goals are closed here, before the
           recursive sums below enter the context). */
        /*@ assert in_here: \forall integer k; 0 <= k < rows * n ==>
              dy[k] == \at(dy[k], Pre) && x[k] == \at(x[k], Pre); */
        /*@ assert stats_here: \forall integer q; 0 <= q < rows ==>
              mean[q] == \at(mean[q], Pre) && rstd[q] == \at(rstd[q], Pre); */
        /*@ assert g_here: \forall integer k; 0 <= k < n ==> gamma[k] == \at(gamma[k], Pre); */
        /* The call's dgamma_acc, dbeta_acc (over the call's memory, where dy's and x's row r and the
           statistics are as at entry) are the step of ln_dg_sum / ln_db_sum from r to r + 1; q is
           bound (r, a C local, cannot appear under \at(..., Pre)). */
        /*@ assert dg_call: \forall integer i; 0 <= i < n ==>
              dgamma[i] == \at(dgamma[i], LoopCurrent) +
                ln_mul_v(\at((dy + r * n)[i], LoopCurrent), \at(ln_xhat(x + r * n, mean[r], rstd[r], i), LoopCurrent)) &&
              dbeta[i] == \at(dbeta[i], LoopCurrent) + \at((dy + r * n)[i], LoopCurrent); */
        /*@ assert dg_reads: \forall integer q, i; q == r && 0 <= i < n ==>
              \at((dy + q * n)[i], LoopCurrent) == \at(dy[ln_col_idx(q, n, i)], Pre) &&
              \at((x + q * n)[i], LoopCurrent) == \at(x[ln_col_idx(q, n, i)], Pre) &&
              \at(mean[q], LoopCurrent) == \at(mean[q], Pre) && \at(rstd[q], LoopCurrent) == \at(rstd[q], Pre); */
        /*@ assert dg_xhat: \forall integer q, i; q == r && 0 <= i < n ==>
              \at(ln_xhat(x + q * n, mean[q], rstd[q], i), LoopCurrent) ==
                ln_xhat_v(\at(x[ln_col_idx(q, n, i)], Pre), \at(mean[q], Pre), \at(rstd[q], Pre)); */
        /*@ assert dg_step: \forall integer q, i; q == r && 0 <= i < n ==>
              dgamma[i] == \at(dgamma[i], LoopCurrent) +
                ln_mul_v(\at(dy[ln_col_idx(q, n, i)], Pre),
                         ln_xhat_v(\at(x[ln_col_idx(q, n, i)], Pre), \at(mean[q], Pre), \at(rstd[q], Pre))) &&
              dbeta[i] == \at(dbeta[i], LoopCurrent) + \at(dy[ln_col_idx(q, n, i)], Pre); */
        /*@ assert dg_unfold: \forall integer q, i; q == r && 0 <= i < n ==>
              ln_dg_sum{Pre}(dy, x, mean, rstd, i, n, q + 1) == ln_dg_sum{Pre}(dy, x, mean, rstd, i, n, q) +
                ln_mul_v(\at(dy[ln_col_idx(q, n, i)], Pre),
                         ln_xhat_v(\at(x[ln_col_idx(q, n, i)], Pre), \at(mean[q], Pre), \at(rstd[q], Pre))) &&
              ln_db_sum{Pre}(dy, i, n, q + 1) == ln_db_sum{Pre}(dy, i, n, q) + \at(dy[ln_col_idx(q, n, i)], Pre); */
        /*@ assert dg_next: \forall integer q, i; q == r && 0 <= i < n ==>
              dgamma[i] == \at(dgamma[i], Pre) + ln_dg_sum{Pre}(dy, x, mean, rstd, i, n, q + 1) &&
              dbeta[i] == \at(dbeta[i], Pre) + ln_db_sum{Pre}(dy, i, n, q + 1); */
        /* dx: the call wrote row r only, so the rows before it are still done. */
        /*@ assert idx_old: \forall integer q, i; 0 <= q < r && 0 <= i < n ==>
              0 <= ln_row_start(q, n) + i < ln_row_start(r, n); */
        /*@ assert dx_old: \forall integer q, i; 0 <= q < r && 0 <= i < n ==>
              dx[ln_row_start(q, n) + i] == \at(dx[ln_row_start(q, n) + i], LoopCurrent); */
        /*@ assert rows_old: \forall integer q; 0 <= q < r ==>
              ln_row_dx{Pre, LoopCurrent}(dx, dy, x, gamma, mean, rstd, q, ln_row_start(q, n), n) &&
              ln_row_dx{Pre, Here}(dx, dy, x, gamma, mean, rstd, q, ln_row_start(q, n), n); */
        /* What row r's dx reads, as at entry (for ln_dx_frame below). */
        /*@ assert dx_reads: \forall integer q; q == r ==>
              (\forall integer i; 0 <= i < n ==> \at(gamma[i], LoopCurrent) == \at(gamma[i], Pre) &&
                 \at(dy[ln_row_start(q, n) + i], LoopCurrent) == \at(dy[ln_row_start(q, n) + i], Pre) &&
                 \at(x[ln_row_start(q, n) + i], LoopCurrent) == \at(x[ln_row_start(q, n) + i], Pre)); */
        /*@ assert dx_same: \forall integer q; q == r ==>
              ln_same_row{LoopCurrent, Pre}(dy + ln_row_start(q, n), gamma, x + ln_row_start(q, n), n); */
        /*@ assert dx_stats: \forall integer q; q == r ==>
              \at(mean[q], LoopCurrent) == \at(mean[q], Pre) && \at(rstd[q], LoopCurrent) == \at(rstd[q], Pre); */
        /* dx: the call's dx_def (over the call's memory) is row r of ln_row_dx at entry: what ln_dx
           reads (dy's and x's row r, gamma) and the statistics are as at entry (ln_dx_frame). */
        /*@ assert dx_call: \forall integer q, i; q == r && 0 <= i < n ==>
              dx[ln_row_start(q, n) + i] ==
                \at(ln_dx(dy + ln_row_start(q, n), gamma, x + ln_row_start(q, n), mean[q], rstd[q], n, i), LoopCurrent); */
        /*@ assert dx_stats_in: \forall integer q, i; q == r && 0 <= i < n ==>
              \at(ln_dx(dy + ln_row_start(q, n), gamma, x + ln_row_start(q, n), mean[q], rstd[q], n, i), LoopCurrent) ==
                ln_dx{LoopCurrent}(dy + ln_row_start(q, n), gamma, x + ln_row_start(q, n), \at(mean[q], Pre), \at(rstd[q], Pre), n, i); */
        /*@ assert dx_frame: \forall integer q, i; q == r && 0 <= i < n ==>
              \at(ln_dx(dy + ln_row_start(q, n), gamma, x + ln_row_start(q, n), mean[q], rstd[q], n, i), LoopCurrent) ==
                ln_dx{Pre}(dy + ln_row_start(q, n), gamma, x + ln_row_start(q, n), \at(mean[q], Pre), \at(rstd[q], Pre), n, i); */
        /*@ assert row_new: \forall integer q; q == r ==>
              ln_row_dx{Pre, Here}(dx, dy, x, gamma, mean, rstd, q, ln_row_start(q, n), n); */
#endif
    }
}
