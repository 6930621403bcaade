/* RMSNorm kernels, float and double: the code that specs/rmsnorm.h specifies and proofs/rmsnorm.mk
 * proves.  Written for reading and proving, not for speed: every operation rounds once, in the order
 * written (compile with -ffp-contract=off), which is an order specs/error-analysis-rmsnorm.md admits.
 * Its MPFR twin, ref/rmsnorm_mpfr.c, computes the same op exactly and rounds once. */
#include <math.h>

#include "rmsnorm.h"
#ifdef RESNORM_WP_ROWS
#include "rmsnorm_rows.h" /* the rows run: the backward drivers' dgamma_sum (dgamma over the rows) */
#endif

/* Ghost lemma functions (proof only, erased by the compiler): non-linear facts the provers need at
   one point, proved once here with no other context, and called where they are used. */
/*@ ghost
  /@ assigns \nothing;
     ensures sq_nonneg: WP_ONLY(a * a >= 0); @/
  static void lemma_sq_nonneg_f32(float a) {}

  /@ assigns \nothing;
     ensures sq_nonneg: WP_ONLY(a * a >= 0); @/
  static void lemma_sq_nonneg_f64(double a) {}

  /@ requires r_range: 0 <= r < rows;
     requires n_pos: n >= 1;
     assigns \nothing;
     ensures row_start: 0 <= r * n;
     ensures row_end: r * n + n <= rows * n; @/
  static void rms_lemma_row_offset(int r, int rows, int n) {}

  // Every row q before row r ends at or before row r starts: q*n + n <= r*n ((r - q - 1) * n >= 0).
  /@ requires r_nonneg: 0 <= r;
     requires n_pos: n >= 1;
     assigns \nothing;
     ensures rows_before: \forall integer q; 0 <= q < r ==>
       0 <= rms_row_start(q, n) && rms_row_start(q, n) + n <= rms_row_start(r, n); @/
  static void rms_lemma_rows_before(int r, int n) {}
*/

/* Float model: a finite float/double is its own rounding (what Gappa needs to know of an operand).
   Read by the float-model run only (proofs/rmsnorm_float.sh). */
#ifdef RESNORM_WP_FLOAT
/*@ lemma rms_f32_is_f32: \forall float f; \is_finite(f) ==> is_f32(f);
    lemma rms_f64_is_f64: \forall double f; \is_finite(f) ==> is_f64(f);
*/
#endif

/* Per-element helpers: each is one line of the kernel, moved out so that its formula is a contract
   and the loop proofs are about framing only.  Same operations, same order (static inline: the
   compiled code is the same). */

/* ---- float ---- */

/*@ assigns \nothing;
    ensures w: LN_EXACT(\result == rms_w_v(g, offset)); */
static inline float rms_w_f32(float g, int offset)
{
    return offset ? 1.0f + g : g;
}

/*@ assigns \nothing;
    ensures y: LN_EXACT(\result == rms_y_v(xi, r, w)); */
static inline float rms_y_f32(float xi, float r, float w)
{
    return xi * r * w; /* (x_i * rstd) * w_i */
}

/*@ assigns \nothing;
    ensures acc_prod: LN_EXACT(\result == rms_acc_prod(acc, a, b)); */
static inline float rms_acc_prod_f32(float acc, float a, float b)
{
    return acc + a * b; /* dgamma[i] += dy[i] * xhat */
}

/*@ assigns \nothing;
    ensures dx: LN_EXACT(\result == rms_dx_v(g, xhat, mean_gx, r)); */
static inline float rms_dx_f32(float g, float xhat, float mean_gx, float r)
{
    return (g - xhat * mean_gx) * r;
}

/* a * a, the term of the sum of squares.  Float model: |a| <= 2^50, so a * a <= 2^100 does not
   overflow; the error is u * a^2 relative, or 2^-149 absolute when the square is (nearly) subnormal
   (Gappa needs the two cases apart: the behaviors). */
/*@ requires sq_pre: LN_FLOAT(\is_finite(a) && is_f32(a) && \abs(a) <= 0x1p50);
    assigns \nothing;
    ensures sq: LN_EXACT(\result == a * a);
    ensures sq_nn: \result >= 0;
    ensures sq_fin: LN_FLOAT(\is_finite(\result) && \result <= 0x1p100);
    ensures sq_rnd: LN_FLOAT(\result == rnd32(a * a));
    behavior normal:
      assumes sq_big: LN_FLOAT(\abs(a) >= 0x1p-62);
      ensures sq_err: LN_FLOAT(\abs(fp_err(rnd32(a * a), a * a)) <= u32 * \abs(a * a));
    behavior tiny:
      assumes sq_small: LN_FLOAT(\abs(a) <= 0x1p-62);
      ensures sq_err_tiny: LN_FLOAT(\abs(fp_err(rnd32(a * a), a * a)) <= 0x1p-149); */
static inline float rms_sq_f32(float a)
{
    //@ ghost lemma_sq_nonneg_f32(a);
    //@ assert sq_nov: LN_FLOAT(no_ovf32(a * a));
    float sq = a * a;
    //@ assert sq_rnd0: LN_FLOAT(sq == rnd32(a * a));
    //@ assert sq_range: LN_FLOAT(0 <= rnd32(a * a) <= 0x1p100);
    return sq;
}

/* a + b (the running sum of squares, and ms + eps). */
/*@ requires add_pre: LN_FLOAT(\is_finite(a) && \is_finite(b) && is_f32(a) && is_f32(b));
    requires add_range: LN_FLOAT(\abs(a) <= 0x1p120 && \abs(b) <= 0x1p120);
    assigns \nothing;
    ensures add: LN_EXACT(\result == a + b);
    ensures add_fin: LN_FLOAT(\is_finite(\result));
    ensures add_rnd: LN_FLOAT(\result == rnd32(a + b));
    ensures add_err: LN_FLOAT(\abs(fp_err(rnd32(a + b), a + b)) <= u32 * \abs(a + b));
    ensures add_nn: LN_FLOAT(a >= 0 && b >= 0 ==> rnd32(a + b) >= 0); */
static inline float rms_add_f32(float a, float b)
{
    //@ assert add_nov: LN_FLOAT(no_ovf32(a + b));
    return a + b;
}

/* a / b, b = n >= 1 (the mean of the squares). */
/*@ requires div_pre: LN_FLOAT(\is_finite(a) && \is_finite(b) && is_f32(a) && is_f32(b));
    requires div_range: LN_FLOAT(\abs(a) <= 0x1p120 && 1 <= b <= 0x1p100);
    assigns \nothing;
    ensures div: LN_EXACT(\result == rms_div(a, b));
    ensures div_fin: LN_FLOAT(\is_finite(\result));
    ensures div_rnd: LN_FLOAT(\result == rnd32(a / b));
    ensures div_err: LN_FLOAT(\abs(fp_err(rnd32(a / b), a / b)) <= u32 * \abs(a / b) + 0x1p-150);
    ensures div_nn: LN_FLOAT(a >= 0 ==> rnd32(a / b) >= 0);
    ensures div_le: LN_FLOAT(rnd32(a / b) <= 0x1p120); */
static inline float rms_div_f32(float a, float b)
{
    //@ assert div_nov: LN_FLOAT(no_ovf32(a / b));
    return a / b;
}

/* The sum of the squares of a row, x_0^2 + ... + x_{n-1}^2, left to right.  All terms are >= 0, so
   nothing cancels: the error is relative to the sum itself (specs/error-analysis-rmsnorm.md R§2).
   Float model: |ss - sum_i x_i^2| <= 2.001 * n * u * sum_i x_i^2 + n * 2^-148 (rms_err_sumsq32). */
/*@ requires n_pos: n >= 1;
    requires valid_x: \valid_read(x + (0 .. n - 1));
    requires fl_range: LN_FLOAT(rms_in_range32(x, n));
    assigns \nothing;
    ensures sumsq: LN_EXACT(\result == rms_sumsq(x, n));
    ensures sumsq_nn: \result >= 0;
    ensures sumsq_fin: LN_FLOAT(\is_finite(\result) && \result <= 0x1p113);
    ensures sumsq_err: LN_FLOAT(\abs(\result - rms_sumsq(x, n)) <= rms_err_sumsq32(n, rms_sumsq(x, n))); */
static float rms_row_sumsq_f32(const float *x, int n)
{
    float ss = 0.0f;
    /*@ loop invariant i_range: 0 <= i <= n;
        loop invariant ss_def: LN_EXACT(ss == rms_sumsq(x, i));
        loop invariant ss_nonneg: ss >= 0;
        loop invariant ss_fin: LN_FLOAT(\is_finite(ss));
        loop invariant s_bound: LN_FLOAT(0 <= rms_sumsq(x, i) <= i * 0x1p100 <= 0x1p112);
        loop invariant ss_err: LN_FLOAT(\abs(ss - rms_sumsq(x, i)) <= rms_err_sumsq32(i, rms_sumsq(x, i)));
        loop assigns i, ss;
        loop variant n - i; */
    for (int i = 0; i < n; i++) {
        //@ assert x_fin: LN_FLOAT(\is_finite(x[i]) && \abs(x[i]) <= 0x1p50);
        //@ assert x_flt: LN_FLOAT(is_f32(x[i]) && is_f32(ss));
        //@ assert x2: LN_FLOAT(0 <= x[i] * x[i] <= 0x1p100);
        //@ assert m0a: LN_FLOAT(0 <= i * rms_sumsq(x, i));
        //@ assert m0b: LN_FLOAT(0 <= (4096 - i) * rms_sumsq(x, i));
        //@ assert e_small: LN_FLOAT(\abs(ss - rms_sumsq(x, i)) <= 0x1p-10 * rms_sumsq(x, i) + 1);
        //@ assert s_range: LN_FLOAT(\abs(ss) <= 0x1p120);
        float q = rms_sq_f32(x[i]);
        //@ assert d_err: LN_FLOAT(\abs(q - x[i] * x[i]) <= u32 * (x[i] * x[i]) + 0x1p-149);
        //@ assert q_range: LN_FLOAT(\abs(q) <= 0x1p120 && is_f32(q));
        ss = rms_add_f32(ss, q); /* ss += x[i] * x[i] */
        /*@ assert f_err: LN_FLOAT(\abs(ss - (\at(ss, LoopCurrent) + q)) <= u32 * \abs(\at(ss, LoopCurrent) + q)); */
        /*@ assert tri: LN_FLOAT(\abs(ss - rms_sumsq(x, i + 1))
                 <= \abs(ss - (\at(ss, LoopCurrent) + q)) + \abs(\at(ss, LoopCurrent) - rms_sumsq(x, i))
                    + \abs(q - x[i] * x[i])); */
        /*@ assert tri2: LN_FLOAT(\abs(\at(ss, LoopCurrent) + q)
                 <= rms_sumsq(x, i) + \abs(\at(ss, LoopCurrent) - rms_sumsq(x, i)) + x[i] * x[i]
                    + \abs(q - x[i] * x[i])); */
        /*@ assert step1: LN_FLOAT(\abs(ss - rms_sumsq(x, i + 1))
                 <= u32 * rms_sumsq(x, i) + u32 * (x[i] * x[i])
                    + (1 + u32) * \abs(\at(ss, LoopCurrent) - rms_sumsq(x, i)) + (1 + u32) * \abs(q - x[i] * x[i])); */
        //@ assert m2: LN_FLOAT(0 <= i * (x[i] * x[i]));
        //@ assert u_val: LN_FLOAT(u32 == 0x1p-24);
        /*@ assert e_def: LN_FLOAT(rms_err_sumsq32(i, rms_sumsq(x, i))
                                   == 2.001 * 0x1p-24 * (i * rms_sumsq(x, i)) + i * 0x1p-148); */
        /*@ assert step_a: LN_FLOAT(\abs(ss - rms_sumsq(x, i + 1))
                 <= 0x1p-24 * rms_sumsq(x, i) + 0x1p-24 * (x[i] * x[i])
                    + (1 + 0x1p-24) * (2.001 * 0x1p-24 * (i * rms_sumsq(x, i)) + i * 0x1p-148)
                    + (1 + 0x1p-24) * (0x1p-24 * (x[i] * x[i]) + 0x1p-149)); */
        //@ assert s_next: LN_FLOAT(rms_sumsq(x, i + 1) == rms_sumsq(x, i) + x[i] * x[i]);
        /*@ assert dist: LN_FLOAT(rms_err_sumsq32(i + 1, rms_sumsq(x, i + 1))
                 == 2.001 * 0x1p-24 * (i * rms_sumsq(x, i) + i * (x[i] * x[i]) + rms_sumsq(x, i) + x[i] * x[i])
                    + (i + 1) * 0x1p-148); */
        /*@ assert step: LN_FLOAT(\abs(ss - rms_sumsq(x, i + 1)) <= rms_err_sumsq32(i + 1, rms_sumsq(x, i + 1))); */
    }
    //@ assert m_n: LN_FLOAT(0 <= n * rms_sumsq(x, n) && 0 <= (4096 - n) * rms_sumsq(x, n));
    //@ assert e_n: LN_FLOAT(\abs(ss - rms_sumsq(x, n)) <= 0x1p-10 * rms_sumsq(x, n) + 1);
    return ss;
}

/* rstd = 1 / sqrt(ms + eps), ms = (1/n) sum_i x_i^2 (specs/error-analysis-rmsnorm.md R§2, R§3).
   Float model: ms >= 0 and finite, so sqrtf never sees a negative argument: rstd is never NaN. */
/*@ requires n_pos: n >= 1;
    requires eps_pos: eps > 0;
    requires valid_x: \valid_read(x + (0 .. n - 1));
    requires fl_range: LN_FLOAT(rms_in_range32(x, n) && \is_finite(eps) && eps <= 1);
    assigns \nothing;
    ensures rstd: LN_EXACT(\result == rms_rstd(x, n, eps));
    ensures rstd_not_nan: LN_FLOAT(!\is_NaN(\result)); */
static float rms_row_rstd_f32(const float *x, int n, float eps)
{
    float ss = rms_row_sumsq_f32(x, n);
    //@ assert n_rnd: LN_FLOAT((float)n == rnd32(n));
    //@ assert n_exact: LN_FLOAT(rnd32(n) == n && is_f32(ss));
    float ms = rms_div_f32(ss, (float)n);
    //@ assert ms_nn: LN_FLOAT(ms >= 0 && \is_finite(ms) && is_f32(ms) && is_f32(eps));
    //@ assert ms_p: LN_FLOAT(ms <= 0x1p120);
    return 1.0f / sqrtf(rms_add_f32(ms, eps));
}

void rmsnorm_row_forward_f32(float *y, float *rstd, const float *x, const float *gamma, int n,
                             float eps, int offset)
{
    /* Sum of squares: all terms >= 0, so no cancellation: |ms_hat - ms| <= gamma_{n+2} ms (+ underflow),
       specs/error-analysis-rmsnorm.md R§2 (float model: rms_row_sumsq_f32's sumsq_err); rstd within
       R r, R§3; y, R§4. */
    float r = rms_row_rstd_f32(x, n, eps);

    /*@ loop invariant i_range: 0 <= i <= n;
        loop invariant y_def: LN_EXACT(\forall integer k; 0 <= k < i ==>
          y[k] == rms_y_v(\at(x[k], Pre), r, rms_w_v(\at(gamma[k], Pre), offset)));
        loop assigns i, y[0 .. n - 1];
        loop variant n - i; */
    for (int i = 0; i < n; i++) {
        /* (real model only: in the float model == is IEEE equality, and gamma may hold NaN) */
        //@ assert frame_in: LN_EXACT(\forall integer k; k == i ==> x[k] == \at(x[k], Pre) && gamma[k] == \at(gamma[k], Pre));
        y[i] = rms_y_f32(x[i], r, rms_w_f32(gamma[i], offset));
    }
    *rstd = r;
}

/* The second pass of rmsnorm_row_backward_f32, with mean(g * xhat) as a parameter (a helper, so
   that its proof does not see the sum). */
/*@ requires n_pos: n >= 1;
    requires valid_dy: \valid_read(dy + (0 .. n - 1));
    requires valid_x: \valid_read(x + (0 .. n - 1));
    requires valid_gamma: \valid_read(gamma + (0 .. n - 1));
    requires valid_dx: \valid(dx + (0 .. n - 1));
    requires valid_dgamma: \valid(dgamma + (0 .. n - 1));
    requires sep_out: \separated(dx + (0 .. n - 1), dgamma + (0 .. n - 1));
    requires sep_dy: \separated(dx + (0 .. n - 1), dgamma + (0 .. n - 1), dy + (0 .. n - 1));
    requires sep_x: \separated(dx + (0 .. n - 1), dgamma + (0 .. n - 1), x + (0 .. n - 1));
    requires sep_gamma: \separated(dx + (0 .. n - 1), dgamma + (0 .. n - 1), gamma + (0 .. n - 1));
    assigns dx[0 .. n - 1], dgamma[0 .. n - 1];
    ensures dx_def: LN_EXACT(\forall integer k; 0 <= k < n ==>
      dx[k] == rms_dx_v(rms_mul(\old(dy[k]), rms_w_v(\old(gamma[k]), offset)), rms_mul(\old(x[k]), rstd), mean_gx, rstd));
    ensures dgamma_acc: LN_EXACT(\forall integer k; 0 <= k < n ==>
      dgamma[k] == rms_acc_prod(\old(dgamma[k]), \old(dy[k]), rms_mul(\old(x[k]), rstd)));
*/
static void rms_backward_apply_f32(float *dx, float *dgamma, const float *dy, const float *x,
                                  const float *gamma, float rstd, float mean_gx, int n, int offset)
{
    /*@ loop invariant i_range: 0 <= i <= n;
        loop invariant dgamma_done: LN_EXACT(\forall integer k; 0 <= k < i ==>
          dgamma[k] == rms_acc_prod(\at(dgamma[k], Pre), \at(dy[k], Pre), rms_mul(\at(x[k], Pre), rstd)));
        loop invariant dgamma_todo: \forall integer k; i <= k < n ==> dgamma[k] == \at(dgamma[k], Pre);
        loop invariant dx_done: LN_EXACT(\forall integer k; 0 <= k < i ==>
          dx[k] == rms_dx_v(rms_mul(\at(dy[k], Pre), rms_w_v(\at(gamma[k], Pre), offset)), rms_mul(\at(x[k], Pre), rstd), mean_gx, rstd));
        loop assigns i, dx[0 .. n - 1], dgamma[0 .. n - 1];
        loop variant n - i; */
    for (int i = 0; i < n; i++) {
        //@ assert frame_in: LN_EXACT(\forall integer k; k == i ==> x[k] == \at(x[k], Pre) && gamma[k] == \at(gamma[k], Pre) && dy[k] == \at(dy[k], Pre));
        //@ assert frame_acc: \forall integer k; k == i ==> dgamma[k] == \at(dgamma[k], Pre);
        float xhat = x[i] * rstd;
        float g = dy[i] * rms_w_f32(gamma[i], offset);
        dgamma[i] = rms_acc_prod_f32(dgamma[i], dy[i], xhat); /* dgamma[i] += dy[i] * xhat */
        dx[i] = rms_dx_f32(g, xhat, mean_gx, rstd);
    }
}

void rmsnorm_row_backward_f32(float *dx, float *dgamma, const float *dy, const float *x,
                              const float *gamma, float rstd, int n, int offset)
{
    /* First pass: the one row reduction, mean(g * xhat) (error: R§5.1; dx: R§5.2; dgamma: R§5.3). */
    float sum_gx = 0.0f;
    /*@ loop invariant i_range: 0 <= i <= n;
        loop invariant sum_gx_def: LN_EXACT(sum_gx == rms_sum_gx(dy, gamma, x, rstd, offset, i));
        loop assigns i, sum_gx;
        loop variant n - i; */
    for (int i = 0; i < n; i++) {
        float xhat = x[i] * rstd;
        float g = dy[i] * rms_w_f32(gamma[i], offset);
        sum_gx += g * xhat;
    }
    float mean_gx = sum_gx / (float)n;

    /* Second pass: the per-element gradients. */
    rms_backward_apply_f32(dx, dgamma, dy, x, gamma, rstd, mean_gx, n, offset);
}

void rmsnorm_forward_f32(float *y, float *rstd, const float *x, const float *gamma, int rows,
                         int n, float eps, int offset)
{
    /* Rows 0 .. r-1 are done (rows run only: LN_ROWS_CLAUSE and #ifdef RESNORM_WP_ROWS): y of row q is (x * rstd[q]) * w of x's row q
       (as at entry) with that row's own stored rstd[q]. */
    /*@ loop invariant r_range: 0 <= r <= rows;
        LN_ROWS_CLAUSE(loop invariant x_same: \forall integer k; 0 <= k < rows * n ==> x[k] == \at(x[k], Pre);)
        LN_ROWS_CLAUSE(loop invariant g_same: \forall integer k; 0 <= k < n ==> gamma[k] == \at(gamma[k], Pre);)
        LN_ROWS_CLAUSE(loop invariant y_done: \forall integer q; 0 <= q < r ==>
          rms_row_y{Pre, Here}(y, rstd, x, gamma, q, rms_row_start(q, n), n, offset);)
        LN_ROWS_CLAUSE(loop invariant rstd_done: \forall integer q; 0 <= q < r ==>
          rstd[q] == rms_rstd{Pre}(x + rms_row_start(q, n), n, eps);)
        loop assigns r, y[0 .. rows * n - 1], rstd[0 .. rows - 1];
        loop variant rows - r; */
    for (int r = 0; r < rows; r++) {
        //@ ghost rms_lemma_row_offset(r, rows, n);
#ifdef RESNORM_WP_ROWS
        //@ ghost rms_lemma_rows_before(r, n);
        //@ assert row_at: r * n == rms_row_start(r, n);
#endif
        rmsnorm_row_forward_f32(y + r * n, rstd + r, x + r * n, gamma, n, eps, offset);
#ifdef RESNORM_WP_ROWS
        /* The call wrote row r only: the rows before it, and their rstd, are unchanged; x too. */
        /*@ assert frame_x: \forall integer k; 0 <= k < rows * n ==> x[k] == \at(x[k], LoopCurrent); */
        /*@ assert frame_stats: \forall integer q; 0 <= q < r ==> rstd[q] == \at(rstd[q], LoopCurrent); */
        /*@ assert frame_y: \forall integer k; 0 <= k < rms_row_start(r, n) ==>
              y[k] == \at(y[k], LoopCurrent); */
        /* Row r is done (the call's y_stats, with x_same; q is bound since r, a C local, cannot
           appear under \at(..., Pre)), in the shape of y_done. */
        /*@ assert row_r: \forall integer q, i; q == r && 0 <= i < n ==>
              y[rms_row_start(q, n) + i] == rms_y_v(\at(x[rms_row_start(q, n) + i], Pre), rstd[q],
                                                    rms_w_v(\at(gamma[i], Pre), offset)); */
        /*@ assert idx_old: \forall integer q, i; 0 <= q < r && 0 <= i < n ==>
              0 <= rms_row_start(q, n) + i < rms_row_start(r, n); */
        /*@ assert y_old: \forall integer q, i; 0 <= q < r && 0 <= i < n ==>
              y[rms_row_start(q, n) + i] == \at(y[rms_row_start(q, n) + i], LoopCurrent); */
        /*@ assert rows_old: \forall integer q; 0 <= q < r ==>
              rms_row_y{Pre, LoopCurrent}(y, rstd, x, gamma, q, rms_row_start(q, n), n, offset) &&
              rms_row_y{Pre, Here}(y, rstd, x, gamma, q, rms_row_start(q, n), n, offset); */
        //@ assert row_new: rms_row_y{Pre, Here}(y, rstd, x, gamma, r, r * n, n, offset);
        /* rstd[r]: the call's rstd_def is over the memory of the call (LoopCurrent); carried to
           the entry's by the lemmas of specs/rmsnorm_model.h (x's row r unchanged: x_same). */
        /*@ assert sumsq_call: \forall integer q; q == r ==>
              \at(rms_sumsq(x + rms_row_start(q, n), n), LoopCurrent) ==
              \at(rms_sumsq_at(x, rms_row_start(q, n), n), LoopCurrent); */
        /*@ assert row_same: \forall integer q, k; q == r && rms_row_start(q, n) <= k < rms_row_start(q, n) + n ==>
              \at(x[k], LoopCurrent) == \at(x[k], Pre); */
        /*@ assert sumsq_frame: \forall integer q; q == r ==>
              \at(rms_sumsq_at(x, rms_row_start(q, n), n), LoopCurrent) ==
              \at(rms_sumsq_at(x, rms_row_start(q, n), n), Pre); */
        /*@ assert sumsq_pre: \forall integer q; q == r ==>
              \at(rms_sumsq(x + rms_row_start(q, n), n), Pre) ==
              \at(rms_sumsq_at(x, rms_row_start(q, n), n), Pre); */
        /*@ assert rstd_r: \forall integer q; q == r ==>
              rstd[q] == rms_rstd{Pre}(x + rms_row_start(q, n), n, eps); */
#endif
    }
}

void rmsnorm_backward_f32(float *dx, float *dgamma, const float *dy, const float *x,
                          const float *gamma, const float *rstd, int rows, int n, int offset)
{
    /* Rows run (specs/rmsnorm_rows.h): dgamma has accumulated rows 0 .. r-1, over the inputs at
       entry, which the calls do not write (dx's rows are not stated here). */
    /*@ loop invariant r_range: 0 <= r <= rows;
        LN_ROWS_CLAUSE(loop invariant in_same: \forall integer k; 0 <= k < rows * n ==>
          dy[k] == \at(dy[k], Pre) && x[k] == \at(x[k], Pre);)
        LN_ROWS_CLAUSE(loop invariant rstd_same: \forall integer q; 0 <= q < rows ==> rstd[q] == \at(rstd[q], Pre);)
        LN_ROWS_CLAUSE(loop invariant dg_done: rms_dg_rows{Pre, Here}(dgamma, dy, x, rstd, r, n);)
        LN_ROWS_CLAUSE(loop invariant g_same: \forall integer k; 0 <= k < n ==> gamma[k] == \at(gamma[k], Pre);)
        LN_ROWS_CLAUSE(loop invariant dx_done: \forall integer q; 0 <= q < r ==>
          rms_row_dx{Pre, Here}(dx, dy, x, gamma, rstd, offset, q, rms_row_start(q, n), n);)
        loop assigns r, dx[0 .. rows * n - 1], dgamma[0 .. n - 1];
        loop variant rows - r; */
    for (int r = 0; r < rows; r++) {
        //@ ghost rms_lemma_row_offset(r, rows, n);
#ifdef RESNORM_WP_ROWS
        //@ ghost rms_lemma_rows_before(r, n);
        //@ assert row_at: r * n == rms_row_start(r, n);
#endif
        rmsnorm_row_backward_f32(dx + r * n, dgamma, dy + r * n, x + r * n, gamma, rstd[r], n,
                                 offset);
#ifdef RESNORM_WP_ROWS
        /* The call wrote dx's row r and dgamma only: the inputs are as at entry (first, so that the
           invariants' goals are closed before the recursive sums below enter the context). */
        /*@ assert in_here: \forall integer k; 0 <= k < rows * n ==>
              dy[k] == \at(dy[k], Pre) && x[k] == \at(x[k], Pre); */
        /*@ assert rstd_here: \forall integer q; 0 <= q < rows ==> rstd[q] == \at(rstd[q], Pre); */
        /*@ assert g_here: \forall integer k; 0 <= k < n ==> gamma[k] == \at(gamma[k], Pre); */
        /* The call's dgamma_acc (over the call's memory, where dy's and x's row r and rstd are as at
           entry) is the step of rms_dg_sum from r to r + 1; q is bound (r, a C local, cannot appear
           under \at(..., Pre)). */
        /*@ assert dg_call: \forall integer i; 0 <= i < n ==>
              dgamma[i] == \at(dgamma[i], LoopCurrent) +
                rms_mul_v(\at((dy + r * n)[i], LoopCurrent), \at(rms_xhat(x + r * n, rstd[r], i), LoopCurrent)); */
        /*@ assert dg_reads: \forall integer q, i; q == r && 0 <= i < n ==>
              \at((dy + q * n)[i], LoopCurrent) == \at(dy[rms_col_idx(q, n, i)], Pre) &&
              \at((x + q * n)[i], LoopCurrent) == \at(x[rms_col_idx(q, n, i)], Pre) &&
              \at(rstd[q], LoopCurrent) == \at(rstd[q], Pre); */
        /*@ assert dg_xhat: \forall integer q, i; q == r && 0 <= i < n ==>
              \at(rms_xhat(x + q * n, rstd[q], i), LoopCurrent) ==
                rms_mul(\at(x[rms_col_idx(q, n, i)], Pre), \at(rstd[q], Pre)); */
        /*@ assert dg_step: \forall integer q, i; q == r && 0 <= i < n ==>
              dgamma[i] == \at(dgamma[i], LoopCurrent) +
                rms_mul_v(\at(dy[rms_col_idx(q, n, i)], Pre), rms_mul(\at(x[rms_col_idx(q, n, i)], Pre), \at(rstd[q], Pre))); */
        /*@ assert dg_unfold: \forall integer q, i; q == r && 0 <= i < n ==>
              rms_dg_sum{Pre}(dy, x, rstd, i, n, q + 1) == rms_dg_sum{Pre}(dy, x, rstd, i, n, q) +
                rms_mul_v(\at(dy[rms_col_idx(q, n, i)], Pre), rms_mul(\at(x[rms_col_idx(q, n, i)], Pre), \at(rstd[q], Pre))); */
        /*@ assert dg_next: \forall integer q, i; q == r && 0 <= i < n ==>
              dgamma[i] == \at(dgamma[i], Pre) + rms_dg_sum{Pre}(dy, x, rstd, i, n, q + 1); */
        /* dx: the call wrote row r only, so the rows before it are still done. */
        /*@ assert idx_old: \forall integer q, i; 0 <= q < r && 0 <= i < n ==>
              0 <= rms_row_start(q, n) + i < rms_row_start(r, n); */
        /*@ assert dx_old: \forall integer q, i; 0 <= q < r && 0 <= i < n ==>
              dx[rms_row_start(q, n) + i] == \at(dx[rms_row_start(q, n) + i], LoopCurrent); */
        /*@ assert rows_old: \forall integer q; 0 <= q < r ==>
              rms_row_dx{Pre, LoopCurrent}(dx, dy, x, gamma, rstd, offset, q, rms_row_start(q, n), n) &&
              rms_row_dx{Pre, Here}(dx, dy, x, gamma, rstd, offset, q, rms_row_start(q, n), n); */
        /* What row r's dx reads, as at entry (for rms_dx_frame below). */
        /*@ assert dx_reads: \forall integer q; q == r ==>
              (\forall integer i; 0 <= i < n ==> \at(gamma[i], LoopCurrent) == \at(gamma[i], Pre) &&
                 \at(dy[rms_row_start(q, n) + i], LoopCurrent) == \at(dy[rms_row_start(q, n) + i], Pre) &&
                 \at(x[rms_row_start(q, n) + i], LoopCurrent) == \at(x[rms_row_start(q, n) + i], Pre)); */
        /*@ assert dx_same: \forall integer q; q == r ==>
              rms_same_row{LoopCurrent, Pre}(dy + rms_row_start(q, n), gamma, x + rms_row_start(q, n), n); */
        /*@ assert dx_stats: \forall integer q; q == r ==> \at(rstd[q], LoopCurrent) == \at(rstd[q], Pre); */
        /* dx: the call's dx_def (over the call's memory) is row r of rms_row_dx at entry. */
        /*@ assert dx_call: \forall integer q, i; q == r && 0 <= i < n ==>
              dx[rms_row_start(q, n) + i] ==
                \at(rms_dx(dy + rms_row_start(q, n), gamma, x + rms_row_start(q, n), rstd[q], offset, n, i), LoopCurrent); */
        /*@ assert dx_stats_in: \forall integer q, i; q == r && 0 <= i < n ==>
              \at(rms_dx(dy + rms_row_start(q, n), gamma, x + rms_row_start(q, n), rstd[q], offset, n, i), LoopCurrent) ==
                rms_dx{LoopCurrent}(dy + rms_row_start(q, n), gamma, x + rms_row_start(q, n), \at(rstd[q], Pre), offset, n, i); */
        /*@ assert dx_frame: \forall integer q, i; q == r && 0 <= i < n ==>
              \at(rms_dx(dy + rms_row_start(q, n), gamma, x + rms_row_start(q, n), rstd[q], offset, n, i), LoopCurrent) ==
                rms_dx{Pre}(dy + rms_row_start(q, n), gamma, x + rms_row_start(q, n), \at(rstd[q], Pre), offset, n, i); */
        /*@ assert row_new: \forall integer q; q == r ==>
              rms_row_dx{Pre, Here}(dx, dy, x, gamma, rstd, offset, q, rms_row_start(q, n), n); */
#endif
    }
}

/* ---- double: the same code with double ---- */

/*@ assigns \nothing;
    ensures w: LN_EXACT(\result == rms_w_v(g, offset)); */
static inline double rms_w_f64(double g, int offset)
{
    return offset ? 1.0 + g : g;
}

/*@ assigns \nothing;
    ensures y: LN_EXACT(\result == rms_y_v(xi, r, w)); */
static inline double rms_y_f64(double xi, double r, double w)
{
    return xi * r * w; /* (x_i * rstd) * w_i */
}

/*@ assigns \nothing;
    ensures acc_prod: LN_EXACT(\result == rms_acc_prod(acc, a, b)); */
static inline double rms_acc_prod_f64(double acc, double a, double b)
{
    return acc + a * b; /* dgamma[i] += dy[i] * xhat */
}

/*@ assigns \nothing;
    ensures dx: LN_EXACT(\result == rms_dx_v(g, xhat, mean_gx, r)); */
static inline double rms_dx_f64(double g, double xhat, double mean_gx, double r)
{
    return (g - xhat * mean_gx) * r;
}

/* a * a, the term of the sum of squares.  Float model: |a| <= 2^50, so a * a <= 2^100 does not
   overflow; the error is u * a^2 relative, or 2^-149 absolute when the square is (nearly) subnormal
   (Gappa needs the two cases apart: the behaviors). */
/*@ requires sq_pre: LN_FLOAT(\is_finite(a) && is_f64(a) && \abs(a) <= 0x1p50);
    assigns \nothing;
    ensures sq: LN_EXACT(\result == a * a);
    ensures sq_nn: \result >= 0;
    ensures sq_fin: LN_FLOAT(\is_finite(\result) && \result <= 0x1p100);
    ensures sq_rnd: LN_FLOAT(\result == rnd64(a * a));
    behavior normal:
      assumes sq_big: LN_FLOAT(\abs(a) >= 0x1p-510);
      ensures sq_err: LN_FLOAT(\abs(fp_err(rnd64(a * a), a * a)) <= u64 * \abs(a * a));
    behavior tiny:
      assumes sq_small: LN_FLOAT(\abs(a) <= 0x1p-510);
      ensures sq_err_tiny: LN_FLOAT(\abs(fp_err(rnd64(a * a), a * a)) <= 0x1p-1074); */
static inline double rms_sq_f64(double a)
{
    //@ ghost lemma_sq_nonneg_f64(a);
    //@ assert sq_nov: LN_FLOAT(no_ovf64(a * a));
    double sq = a * a;
    //@ assert sq_rnd0: LN_FLOAT(sq == rnd64(a * a));
    //@ assert sq_range: LN_FLOAT(0 <= rnd64(a * a) <= 0x1p100);
    return sq;
}

/* a + b (the running sum of squares, and ms + eps). */
/*@ requires add_pre: LN_FLOAT(\is_finite(a) && \is_finite(b) && is_f64(a) && is_f64(b));
    requires add_range: LN_FLOAT(\abs(a) <= 0x1p120 && \abs(b) <= 0x1p120);
    assigns \nothing;
    ensures add: LN_EXACT(\result == a + b);
    ensures add_fin: LN_FLOAT(\is_finite(\result));
    ensures add_rnd: LN_FLOAT(\result == rnd64(a + b));
    ensures add_err: LN_FLOAT(\abs(fp_err(rnd64(a + b), a + b)) <= u64 * \abs(a + b));
    ensures add_nn: LN_FLOAT(a >= 0 && b >= 0 ==> rnd64(a + b) >= 0); */
static inline double rms_add_f64(double a, double b)
{
    //@ assert add_nov: LN_FLOAT(no_ovf64(a + b));
    return a + b;
}

/* a / b, b = n >= 1 (the mean of the squares). */
/*@ requires div_pre: LN_FLOAT(\is_finite(a) && \is_finite(b) && is_f64(a) && is_f64(b));
    requires div_range: LN_FLOAT(\abs(a) <= 0x1p120 && 1 <= b <= 0x1p100);
    assigns \nothing;
    ensures div: LN_EXACT(\result == rms_div(a, b));
    ensures div_fin: LN_FLOAT(\is_finite(\result));
    ensures div_rnd: LN_FLOAT(\result == rnd64(a / b));
    ensures div_err: LN_FLOAT(\abs(fp_err(rnd64(a / b), a / b)) <= u64 * \abs(a / b) + 0x1p-1074);
    ensures div_nn: LN_FLOAT(a >= 0 ==> rnd64(a / b) >= 0);
    ensures div_le: LN_FLOAT(rnd64(a / b) <= 0x1p120); */
static inline double rms_div_f64(double a, double b)
{
    //@ assert div_nov: LN_FLOAT(no_ovf64(a / b));
    return a / b;
}

/* The sum of the squares of a row, x_0^2 + ... + x_{n-1}^2, left to right.  All terms are >= 0, so
   nothing cancels: the error is relative to the sum itself (specs/error-analysis-rmsnorm.md R§2).
   Float model: |ss - sum_i x_i^2| <= 2.001 * n * u * sum_i x_i^2 + n * 2^-148 (rms_err_sumsq64). */
/*@ requires n_pos: n >= 1;
    requires valid_x: \valid_read(x + (0 .. n - 1));
    requires fl_range: LN_FLOAT(rms_in_range64(x, n));
    assigns \nothing;
    ensures sumsq: LN_EXACT(\result == rms_sumsq(x, n));
    ensures sumsq_nn: \result >= 0;
    ensures sumsq_fin: LN_FLOAT(\is_finite(\result) && \result <= 0x1p113);
    ensures sumsq_err: LN_FLOAT(\abs(\result - rms_sumsq(x, n)) <= rms_err_sumsq64(n, rms_sumsq(x, n))); */
static double rms_row_sumsq_f64(const double *x, int n)
{
    double ss = 0.0;
    /*@ loop invariant i_range: 0 <= i <= n;
        loop invariant ss_def: LN_EXACT(ss == rms_sumsq(x, i));
        loop invariant ss_nonneg: ss >= 0;
        loop invariant ss_fin: LN_FLOAT(\is_finite(ss));
        loop invariant s_bound: LN_FLOAT(0 <= rms_sumsq(x, i) <= i * 0x1p100 <= 0x1p112);
        loop invariant ss_err: LN_FLOAT(\abs(ss - rms_sumsq(x, i)) <= rms_err_sumsq64(i, rms_sumsq(x, i)));
        loop assigns i, ss;
        loop variant n - i; */
    for (int i = 0; i < n; i++) {
        //@ assert x_fin: LN_FLOAT(\is_finite(x[i]) && \abs(x[i]) <= 0x1p50);
        //@ assert x_flt: LN_FLOAT(is_f64(x[i]) && is_f64(ss));
        //@ assert x2: LN_FLOAT(0 <= x[i] * x[i] <= 0x1p100);
        //@ assert m0a: LN_FLOAT(0 <= i * rms_sumsq(x, i));
        //@ assert m0b: LN_FLOAT(0 <= (4096 - i) * rms_sumsq(x, i));
        //@ assert e_small: LN_FLOAT(\abs(ss - rms_sumsq(x, i)) <= 0x1p-10 * rms_sumsq(x, i) + 1);
        //@ assert s_range: LN_FLOAT(\abs(ss) <= 0x1p120);
        double q = rms_sq_f64(x[i]);
        //@ assert d_err: LN_FLOAT(\abs(q - x[i] * x[i]) <= u64 * (x[i] * x[i]) + 0x1p-1074);
        //@ assert q_range: LN_FLOAT(\abs(q) <= 0x1p120 && is_f64(q));
        ss = rms_add_f64(ss, q); /* ss += x[i] * x[i] */
        /*@ assert f_err: LN_FLOAT(\abs(ss - (\at(ss, LoopCurrent) + q)) <= u64 * \abs(\at(ss, LoopCurrent) + q)); */
        /*@ assert tri: LN_FLOAT(\abs(ss - rms_sumsq(x, i + 1))
                 <= \abs(ss - (\at(ss, LoopCurrent) + q)) + \abs(\at(ss, LoopCurrent) - rms_sumsq(x, i))
                    + \abs(q - x[i] * x[i])); */
        /*@ assert tri2: LN_FLOAT(\abs(\at(ss, LoopCurrent) + q)
                 <= rms_sumsq(x, i) + \abs(\at(ss, LoopCurrent) - rms_sumsq(x, i)) + x[i] * x[i]
                    + \abs(q - x[i] * x[i])); */
        /*@ assert step1: LN_FLOAT(\abs(ss - rms_sumsq(x, i + 1))
                 <= u64 * rms_sumsq(x, i) + u64 * (x[i] * x[i])
                    + (1 + u64) * \abs(\at(ss, LoopCurrent) - rms_sumsq(x, i)) + (1 + u64) * \abs(q - x[i] * x[i])); */
        //@ assert m2: LN_FLOAT(0 <= i * (x[i] * x[i]));
        //@ assert u_val: LN_FLOAT(u64 == 0x1p-53);
        /*@ assert e_def: LN_FLOAT(rms_err_sumsq64(i, rms_sumsq(x, i))
                                   == 2.001 * 0x1p-53 * (i * rms_sumsq(x, i)) + i * 0x1p-1073); */
        /*@ assert step_a: LN_FLOAT(\abs(ss - rms_sumsq(x, i + 1))
                 <= 0x1p-53 * rms_sumsq(x, i) + 0x1p-53 * (x[i] * x[i])
                    + (1 + 0x1p-53) * (2.001 * 0x1p-53 * (i * rms_sumsq(x, i)) + i * 0x1p-1073)
                    + (1 + 0x1p-53) * (0x1p-53 * (x[i] * x[i]) + 0x1p-1074)); */
        //@ assert s_next: LN_FLOAT(rms_sumsq(x, i + 1) == rms_sumsq(x, i) + x[i] * x[i]);
        /*@ assert dist: LN_FLOAT(rms_err_sumsq64(i + 1, rms_sumsq(x, i + 1))
                 == 2.001 * 0x1p-53 * (i * rms_sumsq(x, i) + i * (x[i] * x[i]) + rms_sumsq(x, i) + x[i] * x[i])
                    + (i + 1) * 0x1p-1073); */
        /*@ assert step: LN_FLOAT(\abs(ss - rms_sumsq(x, i + 1)) <= rms_err_sumsq64(i + 1, rms_sumsq(x, i + 1))); */
    }
    //@ assert m_n: LN_FLOAT(0 <= n * rms_sumsq(x, n) && 0 <= (4096 - n) * rms_sumsq(x, n));
    //@ assert e_n: LN_FLOAT(\abs(ss - rms_sumsq(x, n)) <= 0x1p-10 * rms_sumsq(x, n) + 1);
    return ss;
}

/* rstd = 1 / sqrt(ms + eps), ms = (1/n) sum_i x_i^2 (specs/error-analysis-rmsnorm.md R§2, R§3).
   Float model: ms >= 0 and finite, so sqrtf never sees a negative argument: rstd is never NaN. */
/*@ requires n_pos: n >= 1;
    requires eps_pos: eps > 0;
    requires valid_x: \valid_read(x + (0 .. n - 1));
    requires fl_range: LN_FLOAT(rms_in_range64(x, n) && \is_finite(eps) && eps <= 1);
    assigns \nothing;
    ensures rstd: LN_EXACT(\result == rms_rstd(x, n, eps));
    ensures rstd_not_nan: LN_FLOAT(!\is_NaN(\result)); */
static double rms_row_rstd_f64(const double *x, int n, double eps)
{
    double ss = rms_row_sumsq_f64(x, n);
    //@ assert n_rnd: LN_FLOAT((double)n == rnd64(n));
    //@ assert n_exact: LN_FLOAT(rnd64(n) == n && is_f64(ss));
    double ms = rms_div_f64(ss, (double)n);
    //@ assert ms_nn: LN_FLOAT(ms >= 0 && \is_finite(ms) && is_f64(ms) && is_f64(eps));
    //@ assert ms_p: LN_FLOAT(ms <= 0x1p120);
    return 1.0 / sqrt(rms_add_f64(ms, eps));
}

void rmsnorm_row_forward_f64(double *y, double *rstd, const double *x, const double *gamma, int n,
                             double eps, int offset)
{
    /* As rmsnorm_row_forward_f32 (specs/error-analysis-rmsnorm.md R§2-R§4). */
    double r = rms_row_rstd_f64(x, n, eps);

    /*@ loop invariant i_range: 0 <= i <= n;
        loop invariant y_def: LN_EXACT(\forall integer k; 0 <= k < i ==>
          y[k] == rms_y_v(\at(x[k], Pre), r, rms_w_v(\at(gamma[k], Pre), offset)));
        loop assigns i, y[0 .. n - 1];
        loop variant n - i; */
    for (int i = 0; i < n; i++) {
        /* (real model only: in the float model == is IEEE equality, and gamma may hold NaN) */
        //@ assert frame_in: LN_EXACT(\forall integer k; k == i ==> x[k] == \at(x[k], Pre) && gamma[k] == \at(gamma[k], Pre));
        y[i] = rms_y_f64(x[i], r, rms_w_f64(gamma[i], offset));
    }
    *rstd = r;
}

/* The second pass of rmsnorm_row_backward_f64, with mean(g * xhat) as a parameter (a helper, so
   that its proof does not see the sum). */
/*@ requires n_pos: n >= 1;
    requires valid_dy: \valid_read(dy + (0 .. n - 1));
    requires valid_x: \valid_read(x + (0 .. n - 1));
    requires valid_gamma: \valid_read(gamma + (0 .. n - 1));
    requires valid_dx: \valid(dx + (0 .. n - 1));
    requires valid_dgamma: \valid(dgamma + (0 .. n - 1));
    requires sep_out: \separated(dx + (0 .. n - 1), dgamma + (0 .. n - 1));
    requires sep_dy: \separated(dx + (0 .. n - 1), dgamma + (0 .. n - 1), dy + (0 .. n - 1));
    requires sep_x: \separated(dx + (0 .. n - 1), dgamma + (0 .. n - 1), x + (0 .. n - 1));
    requires sep_gamma: \separated(dx + (0 .. n - 1), dgamma + (0 .. n - 1), gamma + (0 .. n - 1));
    assigns dx[0 .. n - 1], dgamma[0 .. n - 1];
    ensures dx_def: LN_EXACT(\forall integer k; 0 <= k < n ==>
      dx[k] == rms_dx_v(rms_mul(\old(dy[k]), rms_w_v(\old(gamma[k]), offset)), rms_mul(\old(x[k]), rstd), mean_gx, rstd));
    ensures dgamma_acc: LN_EXACT(\forall integer k; 0 <= k < n ==>
      dgamma[k] == rms_acc_prod(\old(dgamma[k]), \old(dy[k]), rms_mul(\old(x[k]), rstd)));
*/
static void rms_backward_apply_f64(double *dx, double *dgamma, const double *dy, const double *x,
                                  const double *gamma, double rstd, double mean_gx, int n, int offset)
{
    /*@ loop invariant i_range: 0 <= i <= n;
        loop invariant dgamma_done: LN_EXACT(\forall integer k; 0 <= k < i ==>
          dgamma[k] == rms_acc_prod(\at(dgamma[k], Pre), \at(dy[k], Pre), rms_mul(\at(x[k], Pre), rstd)));
        loop invariant dgamma_todo: \forall integer k; i <= k < n ==> dgamma[k] == \at(dgamma[k], Pre);
        loop invariant dx_done: LN_EXACT(\forall integer k; 0 <= k < i ==>
          dx[k] == rms_dx_v(rms_mul(\at(dy[k], Pre), rms_w_v(\at(gamma[k], Pre), offset)), rms_mul(\at(x[k], Pre), rstd), mean_gx, rstd));
        loop assigns i, dx[0 .. n - 1], dgamma[0 .. n - 1];
        loop variant n - i; */
    for (int i = 0; i < n; i++) {
        //@ assert frame_in: LN_EXACT(\forall integer k; k == i ==> x[k] == \at(x[k], Pre) && gamma[k] == \at(gamma[k], Pre) && dy[k] == \at(dy[k], Pre));
        //@ assert frame_acc: \forall integer k; k == i ==> dgamma[k] == \at(dgamma[k], Pre);
        double xhat = x[i] * rstd;
        double g = dy[i] * rms_w_f64(gamma[i], offset);
        dgamma[i] = rms_acc_prod_f64(dgamma[i], dy[i], xhat); /* dgamma[i] += dy[i] * xhat */
        dx[i] = rms_dx_f64(g, xhat, mean_gx, rstd);
    }
}

void rmsnorm_row_backward_f64(double *dx, double *dgamma, const double *dy, const double *x,
                              const double *gamma, double rstd, int n, int offset)
{
    /* First pass: the one row reduction, mean(g * xhat) (error: R§5.1; dx: R§5.2; dgamma: R§5.3). */
    double sum_gx = 0.0;
    /*@ loop invariant i_range: 0 <= i <= n;
        loop invariant sum_gx_def: LN_EXACT(sum_gx == rms_sum_gx(dy, gamma, x, rstd, offset, i));
        loop assigns i, sum_gx;
        loop variant n - i; */
    for (int i = 0; i < n; i++) {
        double xhat = x[i] * rstd;
        double g = dy[i] * rms_w_f64(gamma[i], offset);
        sum_gx += g * xhat;
    }
    double mean_gx = sum_gx / (double)n;

    /* Second pass: the per-element gradients. */
    rms_backward_apply_f64(dx, dgamma, dy, x, gamma, rstd, mean_gx, n, offset);
}

void rmsnorm_forward_f64(double *y, double *rstd, const double *x, const double *gamma, int rows,
                         int n, double eps, int offset)
{
    /* Rows 0 .. r-1 are done (rows run only: LN_ROWS_CLAUSE and #ifdef RESNORM_WP_ROWS): y of row q is (x * rstd[q]) * w of x's row q
       (as at entry) with that row's own stored rstd[q]. */
    /*@ loop invariant r_range: 0 <= r <= rows;
        LN_ROWS_CLAUSE(loop invariant x_same: \forall integer k; 0 <= k < rows * n ==> x[k] == \at(x[k], Pre);)
        LN_ROWS_CLAUSE(loop invariant g_same: \forall integer k; 0 <= k < n ==> gamma[k] == \at(gamma[k], Pre);)
        LN_ROWS_CLAUSE(loop invariant y_done: \forall integer q; 0 <= q < r ==>
          rms_row_y{Pre, Here}(y, rstd, x, gamma, q, rms_row_start(q, n), n, offset);)
        LN_ROWS_CLAUSE(loop invariant rstd_done: \forall integer q; 0 <= q < r ==>
          rstd[q] == rms_rstd{Pre}(x + rms_row_start(q, n), n, eps);)
        loop assigns r, y[0 .. rows * n - 1], rstd[0 .. rows - 1];
        loop variant rows - r; */
    for (int r = 0; r < rows; r++) {
        //@ ghost rms_lemma_row_offset(r, rows, n);
#ifdef RESNORM_WP_ROWS
        //@ ghost rms_lemma_rows_before(r, n);
        //@ assert row_at: r * n == rms_row_start(r, n);
#endif
        rmsnorm_row_forward_f64(y + r * n, rstd + r, x + r * n, gamma, n, eps, offset);
#ifdef RESNORM_WP_ROWS
        /* The call wrote row r only: the rows before it, and their rstd, are unchanged; x too. */
        /*@ assert frame_x: \forall integer k; 0 <= k < rows * n ==> x[k] == \at(x[k], LoopCurrent); */
        /*@ assert frame_stats: \forall integer q; 0 <= q < r ==> rstd[q] == \at(rstd[q], LoopCurrent); */
        /*@ assert frame_y: \forall integer k; 0 <= k < rms_row_start(r, n) ==>
              y[k] == \at(y[k], LoopCurrent); */
        /* Row r is done (the call's y_stats, with x_same; q is bound since r, a C local, cannot
           appear under \at(..., Pre)), in the shape of y_done. */
        /*@ assert row_r: \forall integer q, i; q == r && 0 <= i < n ==>
              y[rms_row_start(q, n) + i] == rms_y_v(\at(x[rms_row_start(q, n) + i], Pre), rstd[q],
                                                    rms_w_v(\at(gamma[i], Pre), offset)); */
        /*@ assert idx_old: \forall integer q, i; 0 <= q < r && 0 <= i < n ==>
              0 <= rms_row_start(q, n) + i < rms_row_start(r, n); */
        /*@ assert y_old: \forall integer q, i; 0 <= q < r && 0 <= i < n ==>
              y[rms_row_start(q, n) + i] == \at(y[rms_row_start(q, n) + i], LoopCurrent); */
        /*@ assert rows_old: \forall integer q; 0 <= q < r ==>
              rms_row_y{Pre, LoopCurrent}(y, rstd, x, gamma, q, rms_row_start(q, n), n, offset) &&
              rms_row_y{Pre, Here}(y, rstd, x, gamma, q, rms_row_start(q, n), n, offset); */
        //@ assert row_new: rms_row_y{Pre, Here}(y, rstd, x, gamma, r, r * n, n, offset);
        /* rstd[r]: the call's rstd_def is over the memory of the call (LoopCurrent); carried to
           the entry's by the lemmas of specs/rmsnorm_model.h (x's row r unchanged: x_same). */
        /*@ assert sumsq_call: \forall integer q; q == r ==>
              \at(rms_sumsq(x + rms_row_start(q, n), n), LoopCurrent) ==
              \at(rms_sumsq_at(x, rms_row_start(q, n), n), LoopCurrent); */
        /*@ assert row_same: \forall integer q, k; q == r && rms_row_start(q, n) <= k < rms_row_start(q, n) + n ==>
              \at(x[k], LoopCurrent) == \at(x[k], Pre); */
        /*@ assert sumsq_frame: \forall integer q; q == r ==>
              \at(rms_sumsq_at(x, rms_row_start(q, n), n), LoopCurrent) ==
              \at(rms_sumsq_at(x, rms_row_start(q, n), n), Pre); */
        /*@ assert sumsq_pre: \forall integer q; q == r ==>
              \at(rms_sumsq(x + rms_row_start(q, n), n), Pre) ==
              \at(rms_sumsq_at(x, rms_row_start(q, n), n), Pre); */
        /*@ assert rstd_r: \forall integer q; q == r ==>
              rstd[q] == rms_rstd{Pre}(x + rms_row_start(q, n), n, eps); */
#endif
    }
}

void rmsnorm_backward_f64(double *dx, double *dgamma, const double *dy, const double *x,
                          const double *gamma, const double *rstd, int rows, int n, int offset)
{
    /* Rows run (specs/rmsnorm_rows.h): dgamma has accumulated rows 0 .. r-1, over the inputs at
       entry, which the calls do not write (dx's rows are not stated here). */
    /*@ loop invariant r_range: 0 <= r <= rows;
        LN_ROWS_CLAUSE(loop invariant in_same: \forall integer k; 0 <= k < rows * n ==>
          dy[k] == \at(dy[k], Pre) && x[k] == \at(x[k], Pre);)
        LN_ROWS_CLAUSE(loop invariant rstd_same: \forall integer q; 0 <= q < rows ==> rstd[q] == \at(rstd[q], Pre);)
        LN_ROWS_CLAUSE(loop invariant dg_done: rms_dg_rows{Pre, Here}(dgamma, dy, x, rstd, r, n);)
        LN_ROWS_CLAUSE(loop invariant g_same: \forall integer k; 0 <= k < n ==> gamma[k] == \at(gamma[k], Pre);)
        LN_ROWS_CLAUSE(loop invariant dx_done: \forall integer q; 0 <= q < r ==>
          rms_row_dx{Pre, Here}(dx, dy, x, gamma, rstd, offset, q, rms_row_start(q, n), n);)
        loop assigns r, dx[0 .. rows * n - 1], dgamma[0 .. n - 1];
        loop variant rows - r; */
    for (int r = 0; r < rows; r++) {
        //@ ghost rms_lemma_row_offset(r, rows, n);
#ifdef RESNORM_WP_ROWS
        //@ ghost rms_lemma_rows_before(r, n);
        //@ assert row_at: r * n == rms_row_start(r, n);
#endif
        rmsnorm_row_backward_f64(dx + r * n, dgamma, dy + r * n, x + r * n, gamma, rstd[r], n,
                                 offset);
#ifdef RESNORM_WP_ROWS
        /* The call wrote dx's row r and dgamma only: the inputs are as at entry (first, so that the
           invariants' goals are closed before the recursive sums below enter the context). */
        /*@ assert in_here: \forall integer k; 0 <= k < rows * n ==>
              dy[k] == \at(dy[k], Pre) && x[k] == \at(x[k], Pre); */
        /*@ assert rstd_here: \forall integer q; 0 <= q < rows ==> rstd[q] == \at(rstd[q], Pre); */
        /*@ assert g_here: \forall integer k; 0 <= k < n ==> gamma[k] == \at(gamma[k], Pre); */
        /* The call's dgamma_acc (over the call's memory, where dy's and x's row r and rstd are as at
           entry) is the step of rms_dg_sum from r to r + 1; q is bound (r, a C local, cannot appear
           under \at(..., Pre)). */
        /*@ assert dg_call: \forall integer i; 0 <= i < n ==>
              dgamma[i] == \at(dgamma[i], LoopCurrent) +
                rms_mul_v(\at((dy + r * n)[i], LoopCurrent), \at(rms_xhat(x + r * n, rstd[r], i), LoopCurrent)); */
        /*@ assert dg_reads: \forall integer q, i; q == r && 0 <= i < n ==>
              \at((dy + q * n)[i], LoopCurrent) == \at(dy[rms_col_idx(q, n, i)], Pre) &&
              \at((x + q * n)[i], LoopCurrent) == \at(x[rms_col_idx(q, n, i)], Pre) &&
              \at(rstd[q], LoopCurrent) == \at(rstd[q], Pre); */
        /*@ assert dg_xhat: \forall integer q, i; q == r && 0 <= i < n ==>
              \at(rms_xhat(x + q * n, rstd[q], i), LoopCurrent) ==
                rms_mul(\at(x[rms_col_idx(q, n, i)], Pre), \at(rstd[q], Pre)); */
        /*@ assert dg_step: \forall integer q, i; q == r && 0 <= i < n ==>
              dgamma[i] == \at(dgamma[i], LoopCurrent) +
                rms_mul_v(\at(dy[rms_col_idx(q, n, i)], Pre), rms_mul(\at(x[rms_col_idx(q, n, i)], Pre), \at(rstd[q], Pre))); */
        /*@ assert dg_unfold: \forall integer q, i; q == r && 0 <= i < n ==>
              rms_dg_sum{Pre}(dy, x, rstd, i, n, q + 1) == rms_dg_sum{Pre}(dy, x, rstd, i, n, q) +
                rms_mul_v(\at(dy[rms_col_idx(q, n, i)], Pre), rms_mul(\at(x[rms_col_idx(q, n, i)], Pre), \at(rstd[q], Pre))); */
        /*@ assert dg_next: \forall integer q, i; q == r && 0 <= i < n ==>
              dgamma[i] == \at(dgamma[i], Pre) + rms_dg_sum{Pre}(dy, x, rstd, i, n, q + 1); */
        /* dx: the call wrote row r only, so the rows before it are still done. */
        /*@ assert idx_old: \forall integer q, i; 0 <= q < r && 0 <= i < n ==>
              0 <= rms_row_start(q, n) + i < rms_row_start(r, n); */
        /*@ assert dx_old: \forall integer q, i; 0 <= q < r && 0 <= i < n ==>
              dx[rms_row_start(q, n) + i] == \at(dx[rms_row_start(q, n) + i], LoopCurrent); */
        /*@ assert rows_old: \forall integer q; 0 <= q < r ==>
              rms_row_dx{Pre, LoopCurrent}(dx, dy, x, gamma, rstd, offset, q, rms_row_start(q, n), n) &&
              rms_row_dx{Pre, Here}(dx, dy, x, gamma, rstd, offset, q, rms_row_start(q, n), n); */
        /* What row r's dx reads, as at entry (for rms_dx_frame below). */
        /*@ assert dx_reads: \forall integer q; q == r ==>
              (\forall integer i; 0 <= i < n ==> \at(gamma[i], LoopCurrent) == \at(gamma[i], Pre) &&
                 \at(dy[rms_row_start(q, n) + i], LoopCurrent) == \at(dy[rms_row_start(q, n) + i], Pre) &&
                 \at(x[rms_row_start(q, n) + i], LoopCurrent) == \at(x[rms_row_start(q, n) + i], Pre)); */
        /*@ assert dx_same: \forall integer q; q == r ==>
              rms_same_row{LoopCurrent, Pre}(dy + rms_row_start(q, n), gamma, x + rms_row_start(q, n), n); */
        /*@ assert dx_stats: \forall integer q; q == r ==> \at(rstd[q], LoopCurrent) == \at(rstd[q], Pre); */
        /* dx: the call's dx_def (over the call's memory) is row r of rms_row_dx at entry. */
        /*@ assert dx_call: \forall integer q, i; q == r && 0 <= i < n ==>
              dx[rms_row_start(q, n) + i] ==
                \at(rms_dx(dy + rms_row_start(q, n), gamma, x + rms_row_start(q, n), rstd[q], offset, n, i), LoopCurrent); */
        /*@ assert dx_stats_in: \forall integer q, i; q == r && 0 <= i < n ==>
              \at(rms_dx(dy + rms_row_start(q, n), gamma, x + rms_row_start(q, n), rstd[q], offset, n, i), LoopCurrent) ==
                rms_dx{LoopCurrent}(dy + rms_row_start(q, n), gamma, x + rms_row_start(q, n), \at(rstd[q], Pre), offset, n, i); */
        /*@ assert dx_frame: \forall integer q, i; q == r && 0 <= i < n ==>
              \at(rms_dx(dy + rms_row_start(q, n), gamma, x + rms_row_start(q, n), rstd[q], offset, n, i), LoopCurrent) ==
                rms_dx{Pre}(dy + rms_row_start(q, n), gamma, x + rms_row_start(q, n), \at(rstd[q], Pre), offset, n, i); */
        /*@ assert row_new: \forall integer q; q == r ==>
              rms_row_dx{Pre, Here}(dx, dy, x, gamma, rstd, offset, q, rms_row_start(q, n), n); */
#endif
    }
}
