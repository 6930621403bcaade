/* Residual add kernels, float and double: the code that specs/residual.h specifies.
 * One IEEE addition per element, in the order written (compile with -ffp-contract=off).
 * Its MPFR twin, ref/residual_mpfr.c, computes the exact sum and rounds once; for an IEEE addition
 * the two agree bit for bit (an IEEE sum is correctly rounded), which tests/test_residual.c checks. */
#include "residual.h"

/* y_i = x_i + f_i; y may be x or f (in place). */
void residual_forward_f32(float *y, const float *x, const float *f, int n)
{
    /*@ loop invariant i_range: 0 <= i <= n;
        loop invariant y_done: \forall integer k; 0 <= k < i ==> y[k] == \at(x[k], Pre) + \at(f[k], Pre);
        loop invariant y_todo: \forall integer k; i <= k < n ==> y[k] == \at(y[k], Pre);
        loop assigns i, y[0 .. n - 1];
        loop variant n - i; */
    for (int i = 0; i < n; i++)
        y[i] = x[i] + f[i];
}

void residual_forward_f64(double *y, const double *x, const double *f, int n)
{
    /*@ loop invariant i_range: 0 <= i <= n;
        loop invariant y_done: \forall integer k; 0 <= k < i ==> y[k] == \at(x[k], Pre) + \at(f[k], Pre);
        loop invariant y_todo: \forall integer k; i <= k < n ==> y[k] == \at(y[k], Pre);
        loop assigns i, y[0 .. n - 1];
        loop variant n - i; */
    for (int i = 0; i < n; i++)
        y[i] = x[i] + f[i];
}

/* dx_i += dy_i, df_i += dy_i: both branches of the residual receive the upstream gradient,
   accumulated into whatever dx and df already hold (llm.c's residual_backward). */
void residual_backward_f32(float *dx, float *df, const float *dy, int n)
{
    /*@ loop invariant i_range: 0 <= i <= n;
        loop invariant dx_done: \forall integer k; 0 <= k < i ==> dx[k] == \at(dx[k], Pre) + \at(dy[k], Pre);
        loop invariant df_done: \forall integer k; 0 <= k < i ==> df[k] == \at(df[k], Pre) + \at(dy[k], Pre);
        loop invariant dx_todo: \forall integer k; i <= k < n ==> dx[k] == \at(dx[k], Pre);
        loop invariant df_todo: \forall integer k; i <= k < n ==> df[k] == \at(df[k], Pre);
        loop assigns i, dx[0 .. n - 1], df[0 .. n - 1];
        loop variant n - i; */
    for (int i = 0; i < n; i++) {
        dx[i] += dy[i];
        df[i] += dy[i];
    }
}

void residual_backward_f64(double *dx, double *df, const double *dy, int n)
{
    /*@ loop invariant i_range: 0 <= i <= n;
        loop invariant dx_done: \forall integer k; 0 <= k < i ==> dx[k] == \at(dx[k], Pre) + \at(dy[k], Pre);
        loop invariant df_done: \forall integer k; 0 <= k < i ==> df[k] == \at(df[k], Pre) + \at(dy[k], Pre);
        loop invariant dx_todo: \forall integer k; i <= k < n ==> dx[k] == \at(dx[k], Pre);
        loop invariant df_todo: \forall integer k; i <= k < n ==> df[k] == \at(df[k], Pre);
        loop assigns i, dx[0 .. n - 1], df[0 .. n - 1];
        loop variant n - i; */
    for (int i = 0; i < n; i++) {
        dx[i] += dy[i];
        df[i] += dy[i];
    }
}
