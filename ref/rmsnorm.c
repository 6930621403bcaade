/* RMSNorm kernels, float and double: the code that specs/rmsnorm.h specifies and proofs/rmsnorm.mk
 * proves.  Written for reading and proving, not for speed: every operation rounds once, in the order
 * written (compile with -ffp-contract=off), which is an order specs/error-analysis-rmsnorm.md admits.
 * Its MPFR twin, ref/rmsnorm_mpfr.c, computes the same op exactly and rounds once. */
#include <math.h>

#include "rmsnorm.h"

/* Ghost lemma functions (proof only, erased by the compiler): non-linear facts the provers need at
   one point, proved once here with no other context, and called where they are used. */
/*@ ghost
  /@ assigns \nothing;
     ensures sq_nonneg: a * a >= 0; @/
  static void lemma_sq_nonneg_f32(float a) {}

  /@ assigns \nothing;
     ensures sq_nonneg: a * a >= 0; @/
  static void lemma_sq_nonneg_f64(double a) {}

  /@ requires r_range: 0 <= r < rows;
     requires n_pos: n >= 1;
     assigns \nothing;
     ensures row_start: 0 <= r * n;
     ensures row_end: r * n + n <= rows * n; @/
  static void rms_lemma_row_offset(int r, int rows, int n) {}
*/

/* Per-element helpers: each is one line of the kernel, moved out so that its formula is a contract
   and the loop proofs are about framing only.  Same operations, same order (static inline: the
   compiled code is the same). */

/* ---- float ---- */

/*@ assigns \nothing;
    ensures w: \result == rms_w_v(g, offset); */
static inline float rms_w_f32(float g, int offset)
{
    return offset ? 1.0f + g : g;
}

/*@ assigns \nothing;
    ensures y: \result == rms_y_v(xi, r, w); */
static inline float rms_y_f32(float xi, float r, float w)
{
    return xi * r * w; /* (x_i * rstd) * w_i */
}

/*@ assigns \nothing;
    ensures acc_prod: \result == rms_acc_prod(acc, a, b); */
static inline float rms_acc_prod_f32(float acc, float a, float b)
{
    return acc + a * b; /* dgamma[i] += dy[i] * xhat */
}

/*@ assigns \nothing;
    ensures dx: \result == rms_dx_v(g, xhat, mean_gx, r); */
static inline float rms_dx_f32(float g, float xhat, float mean_gx, float r)
{
    return (g - xhat * mean_gx) * r;
}

void rmsnorm_row_forward_f32(float *y, float *rstd, const float *x, const float *gamma, int n,
                             float eps, int offset)
{
    /* Sum of squares: all terms >= 0, so no cancellation: |ms_hat - ms| <= gamma_{n+2} ms (+ underflow),
       specs/error-analysis-rmsnorm.md R§2 (the float sum: proofs/gappa_rmsnorm_sumsq.c); rstd within
       R r, R§3; y, R§4. */
    float ss = 0.0f;
    /*@ loop invariant i_range: 0 <= i <= n;
        loop invariant ss_def: ss == rms_sumsq(x, i);
        loop invariant ss_nonneg: ss >= 0;
        loop assigns i, ss;
        loop variant n - i; */
    for (int i = 0; i < n; i++) {
        //@ ghost lemma_sq_nonneg_f32(x[i]);
        ss += x[i] * x[i];
    }
    float ms = ss / (float)n;
    float r = 1.0f / sqrtf(ms + eps);

    /*@ loop invariant i_range: 0 <= i <= n;
        loop invariant y_def: \forall integer k; 0 <= k < i ==>
          y[k] == rms_y_v(\at(x[k], Pre), r, rms_w_v(\at(gamma[k], Pre), offset));
        loop assigns i, y[0 .. n - 1];
        loop variant n - i; */
    for (int i = 0; i < n; i++) {
        //@ assert frame_in: \forall integer k; k == i ==> x[k] == \at(x[k], Pre) && gamma[k] == \at(gamma[k], Pre);
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
    ensures dx_def: \forall integer k; 0 <= k < n ==>
      dx[k] == rms_dx_v(rms_mul(\old(dy[k]), rms_w_v(\old(gamma[k]), offset)), rms_mul(\old(x[k]), rstd), mean_gx, rstd);
    ensures dgamma_acc: \forall integer k; 0 <= k < n ==>
      dgamma[k] == rms_acc_prod(\old(dgamma[k]), \old(dy[k]), rms_mul(\old(x[k]), rstd));
*/
static void rms_backward_apply_f32(float *dx, float *dgamma, const float *dy, const float *x,
                                  const float *gamma, float rstd, float mean_gx, int n, int offset)
{
    /*@ loop invariant i_range: 0 <= i <= n;
        loop invariant dgamma_done: \forall integer k; 0 <= k < i ==>
          dgamma[k] == rms_acc_prod(\at(dgamma[k], Pre), \at(dy[k], Pre), rms_mul(\at(x[k], Pre), rstd));
        loop invariant dgamma_todo: \forall integer k; i <= k < n ==> dgamma[k] == \at(dgamma[k], Pre);
        loop invariant dx_done: \forall integer k; 0 <= k < i ==>
          dx[k] == rms_dx_v(rms_mul(\at(dy[k], Pre), rms_w_v(\at(gamma[k], Pre), offset)), rms_mul(\at(x[k], Pre), rstd), mean_gx, rstd);
        loop assigns i, dx[0 .. n - 1], dgamma[0 .. n - 1];
        loop variant n - i; */
    for (int i = 0; i < n; i++) {
        //@ assert frame_in: \forall integer k; k == i ==> x[k] == \at(x[k], Pre) && gamma[k] == \at(gamma[k], Pre) && dy[k] == \at(dy[k], Pre);
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
        loop invariant sum_gx_def: sum_gx == rms_sum_gx(dy, gamma, x, rstd, offset, i);
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
    /*@ loop invariant r_range: 0 <= r <= rows;
        loop assigns r, y[0 .. rows * n - 1], rstd[0 .. rows - 1];
        loop variant rows - r; */
    for (int r = 0; r < rows; r++) {
        //@ ghost rms_lemma_row_offset(r, rows, n);
        rmsnorm_row_forward_f32(y + r * n, rstd + r, x + r * n, gamma, n, eps, offset);
    }
}

void rmsnorm_backward_f32(float *dx, float *dgamma, const float *dy, const float *x,
                          const float *gamma, const float *rstd, int rows, int n, int offset)
{
    /*@ loop invariant r_range: 0 <= r <= rows;
        loop assigns r, dx[0 .. rows * n - 1], dgamma[0 .. n - 1];
        loop variant rows - r; */
    for (int r = 0; r < rows; r++) {
        //@ ghost rms_lemma_row_offset(r, rows, n);
        rmsnorm_row_backward_f32(dx + r * n, dgamma, dy + r * n, x + r * n, gamma, rstd[r], n,
                                 offset);
    }
}

/* ---- double: the same code with double ---- */

/*@ assigns \nothing;
    ensures w: \result == rms_w_v(g, offset); */
static inline double rms_w_f64(double g, int offset)
{
    return offset ? 1.0 + g : g;
}

/*@ assigns \nothing;
    ensures y: \result == rms_y_v(xi, r, w); */
static inline double rms_y_f64(double xi, double r, double w)
{
    return xi * r * w; /* (x_i * rstd) * w_i */
}

/*@ assigns \nothing;
    ensures acc_prod: \result == rms_acc_prod(acc, a, b); */
static inline double rms_acc_prod_f64(double acc, double a, double b)
{
    return acc + a * b; /* dgamma[i] += dy[i] * xhat */
}

/*@ assigns \nothing;
    ensures dx: \result == rms_dx_v(g, xhat, mean_gx, r); */
static inline double rms_dx_f64(double g, double xhat, double mean_gx, double r)
{
    return (g - xhat * mean_gx) * r;
}

void rmsnorm_row_forward_f64(double *y, double *rstd, const double *x, const double *gamma, int n,
                             double eps, int offset)
{
    /* Sum of squares: all terms >= 0, so no cancellation: |ms_hat - ms| <= gamma_{n+2} ms (+ underflow),
       specs/error-analysis-rmsnorm.md R§2 (the float sum: proofs/gappa_rmsnorm_sumsq.c); rstd within
       R r, R§3; y, R§4. */
    double ss = 0.0;
    /*@ loop invariant i_range: 0 <= i <= n;
        loop invariant ss_def: ss == rms_sumsq(x, i);
        loop invariant ss_nonneg: ss >= 0;
        loop assigns i, ss;
        loop variant n - i; */
    for (int i = 0; i < n; i++) {
        //@ ghost lemma_sq_nonneg_f64(x[i]);
        ss += x[i] * x[i];
    }
    double ms = ss / (double)n;
    double r = 1.0 / sqrt(ms + eps);

    /*@ loop invariant i_range: 0 <= i <= n;
        loop invariant y_def: \forall integer k; 0 <= k < i ==>
          y[k] == rms_y_v(\at(x[k], Pre), r, rms_w_v(\at(gamma[k], Pre), offset));
        loop assigns i, y[0 .. n - 1];
        loop variant n - i; */
    for (int i = 0; i < n; i++) {
        //@ assert frame_in: \forall integer k; k == i ==> x[k] == \at(x[k], Pre) && gamma[k] == \at(gamma[k], Pre);
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
    ensures dx_def: \forall integer k; 0 <= k < n ==>
      dx[k] == rms_dx_v(rms_mul(\old(dy[k]), rms_w_v(\old(gamma[k]), offset)), rms_mul(\old(x[k]), rstd), mean_gx, rstd);
    ensures dgamma_acc: \forall integer k; 0 <= k < n ==>
      dgamma[k] == rms_acc_prod(\old(dgamma[k]), \old(dy[k]), rms_mul(\old(x[k]), rstd));
*/
static void rms_backward_apply_f64(double *dx, double *dgamma, const double *dy, const double *x,
                                  const double *gamma, double rstd, double mean_gx, int n, int offset)
{
    /*@ loop invariant i_range: 0 <= i <= n;
        loop invariant dgamma_done: \forall integer k; 0 <= k < i ==>
          dgamma[k] == rms_acc_prod(\at(dgamma[k], Pre), \at(dy[k], Pre), rms_mul(\at(x[k], Pre), rstd));
        loop invariant dgamma_todo: \forall integer k; i <= k < n ==> dgamma[k] == \at(dgamma[k], Pre);
        loop invariant dx_done: \forall integer k; 0 <= k < i ==>
          dx[k] == rms_dx_v(rms_mul(\at(dy[k], Pre), rms_w_v(\at(gamma[k], Pre), offset)), rms_mul(\at(x[k], Pre), rstd), mean_gx, rstd);
        loop assigns i, dx[0 .. n - 1], dgamma[0 .. n - 1];
        loop variant n - i; */
    for (int i = 0; i < n; i++) {
        //@ assert frame_in: \forall integer k; k == i ==> x[k] == \at(x[k], Pre) && gamma[k] == \at(gamma[k], Pre) && dy[k] == \at(dy[k], Pre);
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
        loop invariant sum_gx_def: sum_gx == rms_sum_gx(dy, gamma, x, rstd, offset, i);
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
    /*@ loop invariant r_range: 0 <= r <= rows;
        loop assigns r, y[0 .. rows * n - 1], rstd[0 .. rows - 1];
        loop variant rows - r; */
    for (int r = 0; r < rows; r++) {
        //@ ghost rms_lemma_row_offset(r, rows, n);
        rmsnorm_row_forward_f64(y + r * n, rstd + r, x + r * n, gamma, n, eps, offset);
    }
}

void rmsnorm_backward_f64(double *dx, double *dgamma, const double *dy, const double *x,
                          const double *gamma, const double *rstd, int rows, int n, int offset)
{
    /*@ loop invariant r_range: 0 <= r <= rows;
        loop assigns r, dx[0 .. rows * n - 1], dgamma[0 .. n - 1];
        loop variant rows - r; */
    for (int r = 0; r < rows; r++) {
        //@ ghost rms_lemma_row_offset(r, rows, n);
        rmsnorm_row_backward_f64(dx + r * n, dgamma, dy + r * n, x + r * n, gamma, rstd[r], n,
                                 offset);
    }
}
