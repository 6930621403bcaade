/* Dropout kernels (mask given), float and double: the code that specs/dropout.h specifies.
 * scale = 1/(1 - p) once (two roundings), then one product per element: x·mask is exact (mask is 0
 * or 1), so each output rounds once more (compile with -ffp-contract=off).  Its twin,
 * ref/dropout_mpfr.c, divides exactly and rounds once; the tolerance is
 * specs/error-analysis-dropout.md.  Shapes: every array [n]. */
#include "dropout.h"

/* ---- float ---- */

float dropout_scale_f32(float p)
{
    return 1.0f / (1.0f - p);
}

/* One element, (a·m)·s: a helper so that the loop goals see the formula as a term. */
/*@ assigns \nothing;
    ensures val: WP_ONLY(\result == dropout_val(a, m, s)); */
static inline float dropout_mul_f32(float a, float m, float s)
{
    return a * m * s;
}

/* y[i] = (x[i]·mask[i])·scale; y may be x. */
void dropout_forward_f32(float *y, const float *x, const float *mask, float scale, int n)
{
    /*@ loop invariant i_range: 0 <= i <= n;
        loop invariant y_done: WP_ONLY(\forall integer k; 0 <= k < i ==> y[k] == dropout_val(\at(x[k], Pre), \at(mask[k], Pre), scale));
        loop invariant y_todo: WP_ONLY(\forall integer k; i <= k < n ==> y[k] == \at(y[k], Pre));
        loop assigns i, y[0 .. n - 1];
        loop variant n - i; */
    for (int i = 0; i < n; i++) {
        //@ assert frame_in: WP_ONLY(\forall integer k; k == i ==> x[k] == \at(x[k], Pre) && mask[k] == \at(mask[k], Pre));
        y[i] = dropout_mul_f32(x[i], mask[i], scale);
    }
}

/* dx[i] += (dy[i]·mask[i])·scale: the gradient flows only through the kept elements, scaled as in
   the forward. */
void dropout_backward_f32(float *dx, const float *dy, const float *mask, float scale, int n)
{
    /*@ loop invariant i_range: 0 <= i <= n;
        loop invariant dx_done: WP_ONLY(\forall integer k; 0 <= k < i ==> dx[k] == \at(dx[k], Pre) + dropout_val(\at(dy[k], Pre), \at(mask[k], Pre), scale));
        loop invariant dx_todo: WP_ONLY(\forall integer k; i <= k < n ==> dx[k] == \at(dx[k], Pre));
        loop assigns i, dx[0 .. n - 1];
        loop variant n - i; */
    for (int i = 0; i < n; i++) {
        //@ assert frame_in: WP_ONLY(\forall integer k; k == i ==> dy[k] == \at(dy[k], Pre) && mask[k] == \at(mask[k], Pre));
        dx[i] += dropout_mul_f32(dy[i], mask[i], scale);
    }
}

/* ---- double: the same code with double ---- */

double dropout_scale_f64(double p)
{
    return 1.0 / (1.0 - p);
}

/* One element, (a·m)·s: a helper so that the loop goals see the formula as a term. */
/*@ assigns \nothing;
    ensures val: WP_ONLY(\result == dropout_val(a, m, s)); */
static inline double dropout_mul_f64(double a, double m, double s)
{
    return a * m * s;
}

/* y[i] = (x[i]·mask[i])·scale; y may be x. */
void dropout_forward_f64(double *y, const double *x, const double *mask, double scale, int n)
{
    /*@ loop invariant i_range: 0 <= i <= n;
        loop invariant y_done: WP_ONLY(\forall integer k; 0 <= k < i ==> y[k] == dropout_val(\at(x[k], Pre), \at(mask[k], Pre), scale));
        loop invariant y_todo: WP_ONLY(\forall integer k; i <= k < n ==> y[k] == \at(y[k], Pre));
        loop assigns i, y[0 .. n - 1];
        loop variant n - i; */
    for (int i = 0; i < n; i++) {
        //@ assert frame_in: WP_ONLY(\forall integer k; k == i ==> x[k] == \at(x[k], Pre) && mask[k] == \at(mask[k], Pre));
        y[i] = dropout_mul_f64(x[i], mask[i], scale);
    }
}

/* dx[i] += (dy[i]·mask[i])·scale: the gradient flows only through the kept elements, scaled as in
   the forward. */
void dropout_backward_f64(double *dx, const double *dy, const double *mask, double scale, int n)
{
    /*@ loop invariant i_range: 0 <= i <= n;
        loop invariant dx_done: WP_ONLY(\forall integer k; 0 <= k < i ==> dx[k] == \at(dx[k], Pre) + dropout_val(\at(dy[k], Pre), \at(mask[k], Pre), scale));
        loop invariant dx_todo: WP_ONLY(\forall integer k; i <= k < n ==> dx[k] == \at(dx[k], Pre));
        loop assigns i, dx[0 .. n - 1];
        loop variant n - i; */
    for (int i = 0; i < n; i++) {
        //@ assert frame_in: WP_ONLY(\forall integer k; k == i ==> dy[k] == \at(dy[k], Pre) && mask[k] == \at(mask[k], Pre));
        dx[i] += dropout_mul_f64(dy[i], mask[i], scale);
    }
}
