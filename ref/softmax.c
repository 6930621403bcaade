/* Softmax kernels (last axis, optional additive mask), float and double: the code that
 * specs/softmax.h specifies.  The max is subtracted before exp (no overflow for any finite
 * logits); the sum is left to right; exp is evaluated twice per element (in the sum, then for y)
 * so that no output is written while the sum is formed.  Compile with -ffp-contract=off.  Its twin,
 * ref/softmax_mpfr.c, encloses the exact softmax with Arb balls; the tolerance is
 * specs/error-analysis-softmax.md.  Shapes: x, mask, y, dy, dx [rows, n]. */
#include "softmax.h"

/* Row r of a row-major [rows, n] array ends within it (z3 proves the lemma; the ghost function
   instantiates it at the call). */
/*@ lemma sm_row_mono: \forall integer a, b, n; 0 <= a < b && 0 <= n ==> a * n + n <= b * n;
*/
/*@ ghost
  /@ requires r_range: 0 <= r < rows;
     requires n_pos: n >= 1;
     assigns \nothing;
     ensures row_start: 0 <= r * n;
     ensures row_end: r * n + n <= rows * n; @/
  static void lemma_sm_row(int r, int rows, int n) {}
*/

/* ---- float ---- */

/* z[i] = x[i] + mask[i] (x[i] without a mask): exact in the real model, one rounding in floats. */
/*@ requires valid_x: \valid_read(x + i);
    requires valid_mask: mask == \null || \valid_read(mask + i);
    assigns \nothing;
    ensures z_def: WP_ONLY(\result == sm_z(x, mask, i)); */
static inline float softmax_z_f32(const float *x, const float *mask, int i)
{
    return mask ? x[i] + mask[i] : x[i];
}

float softmax_row_max_f32(const float *x, const float *mask, int n)
{
    float m = softmax_z_f32(x, mask, 0);
    /*@ loop invariant i_range: 1 <= i <= n;
        loop invariant m_def: WP_ONLY(m == sm_max(x, mask, i));
        loop invariant m_ge: WP_ONLY(\forall integer k; 0 <= k < i ==> sm_z(x, mask, k) <= m);
        loop invariant m_at: WP_ONLY(\exists integer k; 0 <= k < i && sm_z(x, mask, k) == m);
        loop assigns i, m;
        loop variant n - i; */
    for (int i = 1; i < n; i++) {
        float z = softmax_z_f32(x, mask, i);
        if (!(z <= m))
            m = z;
    }
    return m;
}

float softmax_row_sum_f32(const float *x, const float *mask, float m, int n)
{
    float s = 0.0f;
    /*@ loop invariant i_range: 0 <= i <= n;
        loop invariant s_def: WP_ONLY(s == sm_sum(x, mask, m, i));
        loop invariant s_nonneg: WP_ONLY(s >= 0);
        loop invariant s_ge_1_seen: WP_ONLY((\exists integer k; 0 <= k < i && sm_z(x, mask, k) == m) ==> s >= 1);
        loop assigns i, s;
        loop variant n - i; */
    for (int i = 0; i < n; i++) {
        float d = softmax_z_f32(x, mask, i) - m;
        /* EVA narrows d by this (it cannot relate z and m); WP proves it, and it holds in IEEE
           arithmetic: proofs/README-sublayers.md, "Softmax: the two facts EVA is given". */
        //@ assert d_nonpos: d <= 0;
        s += rn_expf(d);
    }
    return s;
}

/* y = exp(z - m)/s, z <= m (m: the row's max). */
/*@ requires z_le_m: WP_ONLY(z <= m);
    assigns \nothing;
    ensures y_def: WP_ONLY(\result == sm_yv(z, m, s)); */
static inline float softmax_y_f32(float z, float m, float s)
{
    float d = z - m;
    //@ assert d_nonpos: d <= 0;
    return rn_expf(d) / s;
}

void softmax_row_forward_f32(float *y, const float *x, const float *mask, int n)
{
    float m = softmax_row_max_f32(x, mask, n);
    float s = softmax_row_sum_f32(x, mask, m, n);
    /* The term of the max is exp(0) = 1 and no term is negative: s >= 1 (sum_ge_1, real model).
       EVA (which cannot tell which term is the max) narrows s by the weaker s >= 1/2, which WP
       proves from it and which holds in IEEE arithmetic for any expf/exp with expf(0) >= 1/2:
       proofs/README-sublayers.md, "Softmax: the two facts EVA is given". */
    //@ assert s_ge_half: s >= 0.5;
    /*@ loop invariant i_range: 0 <= i <= n;
        loop invariant y_def: WP_ONLY(\forall integer k; 0 <= k < i ==>
          y[k] == sm_yv(sm_z{Pre}(x, mask, k), m, s));
        loop assigns i, y[0 .. n - 1];
        loop variant n - i; */
    for (int i = 0; i < n; i++) {
        //@ assert frame_in: WP_ONLY(\forall integer k; k == i ==> sm_z(x, mask, k) == sm_z{Pre}(x, mask, k));
        y[i] = softmax_y_f32(softmax_z_f32(x, mask, i), m, s);
    }
}

/*@ assigns \nothing;
    ensures dx_def: WP_ONLY(\result == acc + sm_dx(y, dy, g)); */
static inline float softmax_dx_f32(float acc, float y, float dy, float g)
{
    return acc + y * (dy - g);
}

void softmax_row_backward_f32(float *dx, const float *y, const float *dy, int n)
{
    float g = 0.0f;
    /*@ loop invariant i_range: 0 <= i <= n;
        loop invariant g_def: WP_ONLY(g == sm_gdot(dy, y, i));
        loop assigns i, g;
        loop variant n - i; */
    for (int i = 0; i < n; i++)
        g += dy[i] * y[i];
    /*@ loop invariant i_range: 0 <= i <= n;
        loop invariant dx_done: WP_ONLY(\forall integer k; 0 <= k < i ==>
          dx[k] == \at(dx[k], Pre) + sm_dx(\at(y[k], Pre), \at(dy[k], Pre), g));
        loop invariant dx_todo: WP_ONLY(\forall integer k; i <= k < n ==> dx[k] == \at(dx[k], Pre));
        loop assigns i, dx[0 .. n - 1];
        loop variant n - i; */
    for (int i = 0; i < n; i++) {
        //@ assert frame_in: WP_ONLY(\forall integer k; k == i ==> y[k] == \at(y[k], Pre) && dy[k] == \at(dy[k], Pre));
        dx[i] = softmax_dx_f32(dx[i], y[i], dy[i], g);
    }
}

void softmax_forward_f32(float *y, const float *x, const float *mask, int rows, int n)
{
    /*@ loop invariant r_range: 0 <= r <= rows;
        loop assigns r, y[0 .. rows * n - 1];
        loop variant rows - r; */
    for (int r = 0; r < rows; r++) {
        //@ ghost lemma_sm_row(r, rows, n);
        softmax_row_forward_f32(y + r * n, x + r * n, mask ? mask + r * n : mask, n);
    }
}

void softmax_backward_f32(float *dx, const float *y, const float *dy, int rows, int n)
{
    /*@ loop invariant r_range: 0 <= r <= rows;
        loop assigns r, dx[0 .. rows * n - 1];
        loop variant rows - r; */
    for (int r = 0; r < rows; r++) {
        //@ ghost lemma_sm_row(r, rows, n);
        softmax_row_backward_f32(dx + r * n, y + r * n, dy + r * n, n);
    }
}

/* ---- double: the same code with double ---- */

/* z[i] = x[i] + mask[i] (x[i] without a mask): exact in the real model, one rounding in doubles. */
/*@ requires valid_x: \valid_read(x + i);
    requires valid_mask: mask == \null || \valid_read(mask + i);
    assigns \nothing;
    ensures z_def: WP_ONLY(\result == sm_z(x, mask, i)); */
static inline double softmax_z_f64(const double *x, const double *mask, int i)
{
    return mask ? x[i] + mask[i] : x[i];
}

double softmax_row_max_f64(const double *x, const double *mask, int n)
{
    double m = softmax_z_f64(x, mask, 0);
    /*@ loop invariant i_range: 1 <= i <= n;
        loop invariant m_def: WP_ONLY(m == sm_max(x, mask, i));
        loop invariant m_ge: WP_ONLY(\forall integer k; 0 <= k < i ==> sm_z(x, mask, k) <= m);
        loop invariant m_at: WP_ONLY(\exists integer k; 0 <= k < i && sm_z(x, mask, k) == m);
        loop assigns i, m;
        loop variant n - i; */
    for (int i = 1; i < n; i++) {
        double z = softmax_z_f64(x, mask, i);
        if (!(z <= m))
            m = z;
    }
    return m;
}

double softmax_row_sum_f64(const double *x, const double *mask, double m, int n)
{
    double s = 0.0;
    /*@ loop invariant i_range: 0 <= i <= n;
        loop invariant s_def: WP_ONLY(s == sm_sum(x, mask, m, i));
        loop invariant s_nonneg: WP_ONLY(s >= 0);
        loop invariant s_ge_1_seen: WP_ONLY((\exists integer k; 0 <= k < i && sm_z(x, mask, k) == m) ==> s >= 1);
        loop assigns i, s;
        loop variant n - i; */
    for (int i = 0; i < n; i++) {
        double d = softmax_z_f64(x, mask, i) - m;
        /* EVA narrows d by this (it cannot relate z and m); WP proves it, and it holds in IEEE
           arithmetic: proofs/README-sublayers.md, "Softmax: the two facts EVA is given". */
        //@ assert d_nonpos: d <= 0;
        s += rn_exp(d);
    }
    return s;
}

/* y = exp(z - m)/s, z <= m (m: the row's max). */
/*@ requires z_le_m: WP_ONLY(z <= m);
    assigns \nothing;
    ensures y_def: WP_ONLY(\result == sm_yv(z, m, s)); */
static inline double softmax_y_f64(double z, double m, double s)
{
    double d = z - m;
    //@ assert d_nonpos: d <= 0;
    return rn_exp(d) / s;
}

void softmax_row_forward_f64(double *y, const double *x, const double *mask, int n)
{
    double m = softmax_row_max_f64(x, mask, n);
    double s = softmax_row_sum_f64(x, mask, m, n);
    /* The term of the max is exp(0) = 1 and no term is negative: s >= 1 (sum_ge_1, real model).
       EVA (which cannot tell which term is the max) narrows s by the weaker s >= 1/2, which WP
       proves from it and which holds in IEEE arithmetic for any expf/exp with expf(0) >= 1/2:
       proofs/README-sublayers.md, "Softmax: the two facts EVA is given". */
    //@ assert s_ge_half: s >= 0.5;
    /*@ loop invariant i_range: 0 <= i <= n;
        loop invariant y_def: WP_ONLY(\forall integer k; 0 <= k < i ==>
          y[k] == sm_yv(sm_z{Pre}(x, mask, k), m, s));
        loop assigns i, y[0 .. n - 1];
        loop variant n - i; */
    for (int i = 0; i < n; i++) {
        //@ assert frame_in: WP_ONLY(\forall integer k; k == i ==> sm_z(x, mask, k) == sm_z{Pre}(x, mask, k));
        y[i] = softmax_y_f64(softmax_z_f64(x, mask, i), m, s);
    }
}

/*@ assigns \nothing;
    ensures dx_def: WP_ONLY(\result == acc + sm_dx(y, dy, g)); */
static inline double softmax_dx_f64(double acc, double y, double dy, double g)
{
    return acc + y * (dy - g);
}

void softmax_row_backward_f64(double *dx, const double *y, const double *dy, int n)
{
    double g = 0.0;
    /*@ loop invariant i_range: 0 <= i <= n;
        loop invariant g_def: WP_ONLY(g == sm_gdot(dy, y, i));
        loop assigns i, g;
        loop variant n - i; */
    for (int i = 0; i < n; i++)
        g += dy[i] * y[i];
    /*@ loop invariant i_range: 0 <= i <= n;
        loop invariant dx_done: WP_ONLY(\forall integer k; 0 <= k < i ==>
          dx[k] == \at(dx[k], Pre) + sm_dx(\at(y[k], Pre), \at(dy[k], Pre), g));
        loop invariant dx_todo: WP_ONLY(\forall integer k; i <= k < n ==> dx[k] == \at(dx[k], Pre));
        loop assigns i, dx[0 .. n - 1];
        loop variant n - i; */
    for (int i = 0; i < n; i++) {
        //@ assert frame_in: WP_ONLY(\forall integer k; k == i ==> y[k] == \at(y[k], Pre) && dy[k] == \at(dy[k], Pre));
        dx[i] = softmax_dx_f64(dx[i], y[i], dy[i], g);
    }
}

void softmax_forward_f64(double *y, const double *x, const double *mask, int rows, int n)
{
    /*@ loop invariant r_range: 0 <= r <= rows;
        loop assigns r, y[0 .. rows * n - 1];
        loop variant rows - r; */
    for (int r = 0; r < rows; r++) {
        //@ ghost lemma_sm_row(r, rows, n);
        softmax_row_forward_f64(y + r * n, x + r * n, mask ? mask + r * n : mask, n);
    }
}

void softmax_backward_f64(double *dx, const double *y, const double *dy, int rows, int n)
{
    /*@ loop invariant r_range: 0 <= r <= rows;
        loop assigns r, dx[0 .. rows * n - 1];
        loop variant rows - r; */
    for (int r = 0; r < rows; r++) {
        //@ ghost lemma_sm_row(r, rows, n);
        softmax_row_backward_f64(dx + r * n, y + r * n, dy + r * n, n);
    }
}
