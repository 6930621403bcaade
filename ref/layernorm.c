/* LayerNorm kernels, float and double: the code that specs/layernorm.h specifies and proofs/ proves.
 * Written for reading and proving, not for speed: every operation rounds once, in the order written
 * (compile with -ffp-contract=off), which is the order specs/error-analysis.md analyses.
 * Its MPFR twin, ref/layernorm_mpfr.c, computes the same op exactly and rounds once. */
#include <math.h>

#include "layernorm.h"

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
  static void lemma_row_offset(int r, int rows, int n) {}
*/

/* ---- float ---- */

/* Per-element helpers: each is one line of the kernel, moved out so that its formula is a contract
   and the loop proofs are about framing only.  Same operations, same order (static inline: the
   compiled code is the same). */
/*@ assigns \nothing;
    ensures affine: \result == ln_affine(xi, m, r, g, b); */
static inline float ln_affine_f32(float xi, float m, float r, float g, float b)
{
    return (xi - m) * r * g + b;
}

/*@ assigns \nothing;
    ensures div: \result == ln_div(a, b); */
static inline float ln_div_f32(float a, float b)
{
    return a / b;
}

/*@ assigns \nothing;
    ensures mul: \result == ln_mul(a, b); */
static inline float ln_mul_f32(float a, float b)
{
    return a * b;
}

/*@ assigns \nothing;
    ensures xhat: \result == ln_xhat_v(xi, m, r); */
static inline float ln_xhat_f32(float xi, float m, float r)
{
    return (xi - m) * r;
}

/*@ assigns \nothing;
    ensures acc_prod: \result == ln_acc_prod(acc, a, b); */
static inline float ln_acc_prod_f32(float acc, float a, float b)
{
    return acc + a * b; /* dgamma[i] += dy[i] * xhat */
}

/*@ assigns \nothing;
    ensures dx: \result == ln_dx_v(g, mean_g, xhat, mean_gx, r); */
static inline float ln_dx_f32(float g, float mean_g, float xhat, float mean_gx, float r)
{
    return (g - mean_g - xhat * mean_gx) * r;
}


void layernorm_row_forward_f32(float *y, float *mean, float *rstd, const float *x,
                               const float *gamma, const float *beta, int n, float eps)
{
    float sum = 0.0f;
    /*@ loop invariant i_range: 0 <= i <= n;
        loop invariant sum_def: sum == ln_sum(x, i);
        loop assigns i, sum;
        loop variant n - i; */
    for (int i = 0; i < n; i++)
        sum += x[i];
    float m = sum / (float)n;

    /* Two-pass variance: deviations from the computed mean, never E[x^2] - E[x]^2, which
       cancels catastrophically when |mean| >> std. */
    float ssd = 0.0f;
    /*@ loop invariant i_range: 0 <= i <= n;
        loop invariant ssd_def: ssd == ln_ssd(x, m, i);
        loop invariant ssd_nonneg: ssd >= 0;
        loop assigns i, ssd;
        loop variant n - i; */
    for (int i = 0; i < n; i++) {
        float d = x[i] - m;
        //@ ghost lemma_sq_nonneg_f32(d);
        ssd += d * d;
    }
    float var = ssd / (float)n;
    float r = 1.0f / sqrtf(var + eps);

    /*@ loop invariant i_range: 0 <= i <= n;
        loop invariant y_def: \forall integer k; 0 <= k < i ==>
          y[k] == ln_affine(\at(x[k], Pre), m, r, \at(gamma[k], Pre), \at(beta[k], Pre));
        loop assigns i, y[0 .. n - 1];
        loop variant n - i; */
    for (int i = 0; i < n; i++) {
        //@ assert frame_in: \forall integer k; k == i ==> x[k] == \at(x[k], Pre) && gamma[k] == \at(gamma[k], Pre) && beta[k] == \at(beta[k], Pre);
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
    ensures dx_def: \forall integer k; 0 <= k < n ==>
      dx[k] == ln_dx_v(ln_mul(\old(dy[k]), \old(gamma[k])), mean_g, ln_xhat_v(\old(x[k]), mean, rstd), mean_gx, rstd);
    ensures dgamma_acc: \forall integer k; 0 <= k < n ==>
      dgamma[k] == ln_acc_prod(\old(dgamma[k]), \old(dy[k]), ln_xhat_v(\old(x[k]), mean, rstd));
    ensures dbeta_acc: \forall integer k; 0 <= k < n ==> dbeta[k] == \old(dbeta[k]) + \old(dy[k]);
*/
static void ln_backward_apply_f32(float *dx, float *dgamma, float *dbeta, const float *dy, const float *x,
                                 const float *gamma, float mean, float rstd, float mean_g, float mean_gx, int n)
{
    /*@ loop invariant i_range: 0 <= i <= n;
        loop invariant dbeta_done: \forall integer k; 0 <= k < i ==> dbeta[k] == \at(dbeta[k], Pre) + \at(dy[k], Pre);
        loop invariant dbeta_todo: \forall integer k; i <= k < n ==> dbeta[k] == \at(dbeta[k], Pre);
        loop invariant dgamma_done: \forall integer k; 0 <= k < i ==>
          dgamma[k] == ln_acc_prod(\at(dgamma[k], Pre), \at(dy[k], Pre), ln_xhat_v(\at(x[k], Pre), mean, rstd));
        loop invariant dgamma_todo: \forall integer k; i <= k < n ==> dgamma[k] == \at(dgamma[k], Pre);
        loop invariant dx_done: \forall integer k; 0 <= k < i ==>
          dx[k] == ln_dx_v(ln_mul(\at(dy[k], Pre), \at(gamma[k], Pre)), mean_g, ln_xhat_v(\at(x[k], Pre), mean, rstd), mean_gx, rstd);
        loop assigns i, dx[0 .. n - 1], dgamma[0 .. n - 1], dbeta[0 .. n - 1];
        loop variant n - i; */
    for (int i = 0; i < n; i++) {
        //@ assert frame_in: \forall integer k; k == i ==> x[k] == \at(x[k], Pre) && gamma[k] == \at(gamma[k], Pre) && dy[k] == \at(dy[k], Pre);
        //@ assert frame_acc: \forall integer k; k == i ==> dgamma[k] == \at(dgamma[k], Pre) && dbeta[k] == \at(dbeta[k], Pre);
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
        loop invariant sum_g_def: sum_g == ln_sum_g(dy, gamma, i);
        loop invariant sum_gx_def: sum_gx == ln_sum_gx(dy, gamma, x, mean, rstd, i);
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
    /*@ loop invariant r_range: 0 <= r <= rows;
        loop assigns r, y[0 .. rows * n - 1], mean[0 .. rows - 1], rstd[0 .. rows - 1];
        loop variant rows - r; */
    for (int r = 0; r < rows; r++) {
        //@ ghost lemma_row_offset(r, rows, n);
        layernorm_row_forward_f32(y + r * n, mean + r, rstd + r, x + r * n, gamma, beta, n, eps);
    }
}

void layernorm_backward_f32(float *dx, float *dgamma, float *dbeta, const float *dy, const float *x,
                            const float *gamma, const float *mean, const float *rstd, int rows,
                            int n)
{
    /*@ loop invariant r_range: 0 <= r <= rows;
        loop assigns r, dx[0 .. rows * n - 1], dgamma[0 .. n - 1], dbeta[0 .. n - 1];
        loop variant rows - r; */
    for (int r = 0; r < rows; r++) {
        //@ ghost lemma_row_offset(r, rows, n);
        layernorm_row_backward_f32(dx + r * n, dgamma, dbeta, dy + r * n, x + r * n, gamma,
                                   mean[r], rstd[r], n);
    }
}

/* ---- double: the same code with double ---- */

/* Per-element helpers: each is one line of the kernel, moved out so that its formula is a contract
   and the loop proofs are about framing only.  Same operations, same order (static inline: the
   compiled code is the same). */
/*@ assigns \nothing;
    ensures affine: \result == ln_affine(xi, m, r, g, b); */
static inline double ln_affine_f64(double xi, double m, double r, double g, double b)
{
    return (xi - m) * r * g + b;
}

/*@ assigns \nothing;
    ensures div: \result == ln_div(a, b); */
static inline double ln_div_f64(double a, double b)
{
    return a / b;
}

/*@ assigns \nothing;
    ensures mul: \result == ln_mul(a, b); */
static inline double ln_mul_f64(double a, double b)
{
    return a * b;
}

/*@ assigns \nothing;
    ensures xhat: \result == ln_xhat_v(xi, m, r); */
static inline double ln_xhat_f64(double xi, double m, double r)
{
    return (xi - m) * r;
}

/*@ assigns \nothing;
    ensures acc_prod: \result == ln_acc_prod(acc, a, b); */
static inline double ln_acc_prod_f64(double acc, double a, double b)
{
    return acc + a * b; /* dgamma[i] += dy[i] * xhat */
}

/*@ assigns \nothing;
    ensures dx: \result == ln_dx_v(g, mean_g, xhat, mean_gx, r); */
static inline double ln_dx_f64(double g, double mean_g, double xhat, double mean_gx, double r)
{
    return (g - mean_g - xhat * mean_gx) * r;
}


void layernorm_row_forward_f64(double *y, double *mean, double *rstd, const double *x,
                               const double *gamma, const double *beta, int n, double eps)
{
    double sum = 0.0;
    /*@ loop invariant i_range: 0 <= i <= n;
        loop invariant sum_def: sum == ln_sum(x, i);
        loop assigns i, sum;
        loop variant n - i; */
    for (int i = 0; i < n; i++)
        sum += x[i];
    double m = sum / (double)n;

    double ssd = 0.0;
    /*@ loop invariant i_range: 0 <= i <= n;
        loop invariant ssd_def: ssd == ln_ssd(x, m, i);
        loop invariant ssd_nonneg: ssd >= 0;
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
        loop invariant y_def: \forall integer k; 0 <= k < i ==>
          y[k] == ln_affine(\at(x[k], Pre), m, r, \at(gamma[k], Pre), \at(beta[k], Pre));
        loop assigns i, y[0 .. n - 1];
        loop variant n - i; */
    for (int i = 0; i < n; i++) {
        //@ assert frame_in: \forall integer k; k == i ==> x[k] == \at(x[k], Pre) && gamma[k] == \at(gamma[k], Pre) && beta[k] == \at(beta[k], Pre);
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
    ensures dx_def: \forall integer k; 0 <= k < n ==>
      dx[k] == ln_dx_v(ln_mul(\old(dy[k]), \old(gamma[k])), mean_g, ln_xhat_v(\old(x[k]), mean, rstd), mean_gx, rstd);
    ensures dgamma_acc: \forall integer k; 0 <= k < n ==>
      dgamma[k] == ln_acc_prod(\old(dgamma[k]), \old(dy[k]), ln_xhat_v(\old(x[k]), mean, rstd));
    ensures dbeta_acc: \forall integer k; 0 <= k < n ==> dbeta[k] == \old(dbeta[k]) + \old(dy[k]);
*/
static void ln_backward_apply_f64(double *dx, double *dgamma, double *dbeta, const double *dy, const double *x,
                                 const double *gamma, double mean, double rstd, double mean_g, double mean_gx, int n)
{
    /*@ loop invariant i_range: 0 <= i <= n;
        loop invariant dbeta_done: \forall integer k; 0 <= k < i ==> dbeta[k] == \at(dbeta[k], Pre) + \at(dy[k], Pre);
        loop invariant dbeta_todo: \forall integer k; i <= k < n ==> dbeta[k] == \at(dbeta[k], Pre);
        loop invariant dgamma_done: \forall integer k; 0 <= k < i ==>
          dgamma[k] == ln_acc_prod(\at(dgamma[k], Pre), \at(dy[k], Pre), ln_xhat_v(\at(x[k], Pre), mean, rstd));
        loop invariant dgamma_todo: \forall integer k; i <= k < n ==> dgamma[k] == \at(dgamma[k], Pre);
        loop invariant dx_done: \forall integer k; 0 <= k < i ==>
          dx[k] == ln_dx_v(ln_mul(\at(dy[k], Pre), \at(gamma[k], Pre)), mean_g, ln_xhat_v(\at(x[k], Pre), mean, rstd), mean_gx, rstd);
        loop assigns i, dx[0 .. n - 1], dgamma[0 .. n - 1], dbeta[0 .. n - 1];
        loop variant n - i; */
    for (int i = 0; i < n; i++) {
        //@ assert frame_in: \forall integer k; k == i ==> x[k] == \at(x[k], Pre) && gamma[k] == \at(gamma[k], Pre) && dy[k] == \at(dy[k], Pre);
        //@ assert frame_acc: \forall integer k; k == i ==> dgamma[k] == \at(dgamma[k], Pre) && dbeta[k] == \at(dbeta[k], Pre);
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
        loop invariant sum_g_def: sum_g == ln_sum_g(dy, gamma, i);
        loop invariant sum_gx_def: sum_gx == ln_sum_gx(dy, gamma, x, mean, rstd, i);
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
    /*@ loop invariant r_range: 0 <= r <= rows;
        loop assigns r, y[0 .. rows * n - 1], mean[0 .. rows - 1], rstd[0 .. rows - 1];
        loop variant rows - r; */
    for (int r = 0; r < rows; r++) {
        //@ ghost lemma_row_offset(r, rows, n);
        layernorm_row_forward_f64(y + r * n, mean + r, rstd + r, x + r * n, gamma, beta, n, eps);
    }
}

void layernorm_backward_f64(double *dx, double *dgamma, double *dbeta, const double *dy,
                            const double *x, const double *gamma, const double *mean,
                            const double *rstd, int rows, int n)
{
    /*@ loop invariant r_range: 0 <= r <= rows;
        loop assigns r, dx[0 .. rows * n - 1], dgamma[0 .. n - 1], dbeta[0 .. n - 1];
        loop variant rows - r; */
    for (int r = 0; r < rows; r++) {
        //@ ghost lemma_row_offset(r, rows, n);
        layernorm_row_backward_f64(dx + r * n, dgamma, dbeta, dy + r * n, x + r * n, gamma,
                                   mean[r], rstd[r], n);
    }
}
