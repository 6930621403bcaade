/* The residual add of a Transformer block, y = x + Sublayer(x): contracts of the kernels in
 * ref/residual.c (llm.c's residual_forward / residual_backward, in this project's naming).
 *
 * For n elements (any shape, flattened row-major):
 *   forward:   y_i   = x_i + f_i                       (y may be x or f: in place is allowed)
 *   backward:  dx_i += dy_i,   df_i += dy_i            (ACCUMULATED, as llm.c does: the gradient of
 *                                                       a residual stream adds into dx; callers
 *                                                       that want dx = dy start from zero)
 * Over the reals both are exact; in floating point the forward rounds once per element,
 *   fl(x_i + f_i) = (x_i + f_i)(1 + delta_i),  |delta_i| <= u   (exact in the subnormal range),
 * and the backward rounds once per accumulation (exact when dx, df start at zero: 0 + dy = dy,
 * except that +0 + -0 = +0).  Error analysis: specs/error-analysis-residual.md.
 *
 * Contracts (ACSL, proved by `make prove-residual`, proofs/residual.mk; see proofs/README-rmsnorm-residual.md).
 * In the WP proofs (-wp-model real) float and double values are the reals they denote: the
 * postconditions below say that each output is the exact sum / accumulation of the inputs (the
 * formulas above), for in-place calls too (LN_EXACT: the real-model run).  A second WP run reads the
 * same contracts in the IEEE float model (LN_FLOAT, specs/fperr.h; proofs/rmsnorm_float.sh): for
 *   float:  |x_i|, |f_i| <= 0x1p126  (so |x_i + f_i| <= 2^127 < FLT_MAX),
 *   double: |x_i|, |f_i| <= 0x1p1022 (so |x_i + f_i| <= 2^1023 < DBL_MAX),
 * all finite (requires fl_range), every y_i is finite and |y_i - (x_i + f_i)| <= u |x_i + f_i|,
 * u = 2^-24 (float), 2^-53 (double) (ensures y_err, in place too); the same for each accumulation
 * dx_i + dy_i, df_i + dy_i of the backward (dx_err, df_err).  Proved on ref/residual.c itself: the
 * addition's rounding by Gappa (helper res_add_f32/f64), the loops by SMT.
 * EVA (proofs/eva_residual.c, -warn-special-float non-finite): 0 alarms for 0 <= n <= 4096 and all
 * inputs in [-1.0e4, 1.0e4] (backward: dx, df accumulated from values in the same range), and for
 * |x_i|, |f_i| <= 0x1p126 (float) / 0x1p1022 (double).
 *
 * Shapes: y, x, f, dx, df, dy: [n], n >= 0.  Aliasing: y == x or y == f is allowed (each y_i depends
 * only on x_i and f_i); partial overlap is not.  dx and df must not overlap dy or each other.
 */
#ifndef RESNORM_RESIDUAL_H
#define RESNORM_RESIDUAL_H

#include "fperr_rms.h" /* res_in_range32/64, res_err32/64; LN_EXACT / LN_FLOAT (specs/fperr.h) */

/*@ requires n_nonneg: n >= 0;
    requires valid_x: \valid_read(x + (0 .. n - 1));
    requires valid_f: \valid_read(f + (0 .. n - 1));
    requires valid_y: \valid(y + (0 .. n - 1));
    requires alias_x: y == x || \separated(y + (0 .. n - 1), x + (0 .. n - 1));
    requires alias_f: y == f || \separated(y + (0 .. n - 1), f + (0 .. n - 1));
    requires fl_range: LN_FLOAT(res_in_range32(x, n) && res_in_range32(f, n));
    assigns y[0 .. n - 1];
    ensures y_def: LN_EXACT(\forall integer i; 0 <= i < n ==> y[i] == \old(x[i]) + \old(f[i]));
    ensures y_err: LN_FLOAT(\forall integer i; 0 <= i < n ==> \is_finite(y[i]) &&
      \abs(y[i] - (\old(x[i]) + \old(f[i]))) <= res_err32(\old(x[i]) + \old(f[i])));
*/
void residual_forward_f32(float *y, const float *x, const float *f, int n);
/*@ requires n_nonneg: n >= 0;
    requires valid_x: \valid_read(x + (0 .. n - 1));
    requires valid_f: \valid_read(f + (0 .. n - 1));
    requires valid_y: \valid(y + (0 .. n - 1));
    requires alias_x: y == x || \separated(y + (0 .. n - 1), x + (0 .. n - 1));
    requires alias_f: y == f || \separated(y + (0 .. n - 1), f + (0 .. n - 1));
    requires fl_range: LN_FLOAT(res_in_range64(x, n) && res_in_range64(f, n));
    assigns y[0 .. n - 1];
    ensures y_def: LN_EXACT(\forall integer i; 0 <= i < n ==> y[i] == \old(x[i]) + \old(f[i]));
    ensures y_err: LN_FLOAT(\forall integer i; 0 <= i < n ==> \is_finite(y[i]) &&
      \abs(y[i] - (\old(x[i]) + \old(f[i]))) <= res_err64(\old(x[i]) + \old(f[i])));
*/
void residual_forward_f64(double *y, const double *x, const double *f, int n);

/*@ requires n_nonneg: n >= 0;
    requires valid_dy: \valid_read(dy + (0 .. n - 1));
    requires valid_dx: \valid(dx + (0 .. n - 1));
    requires valid_df: \valid(df + (0 .. n - 1));
    requires sep: \separated(dx + (0 .. n - 1), df + (0 .. n - 1), dy + (0 .. n - 1));
    requires fl_range: LN_FLOAT(res_in_range32(dx, n) && res_in_range32(df, n) && res_in_range32(dy, n));
    assigns dx[0 .. n - 1], df[0 .. n - 1];
    ensures dx_acc: LN_EXACT(\forall integer i; 0 <= i < n ==> dx[i] == \old(dx[i]) + \old(dy[i]));
    ensures df_acc: LN_EXACT(\forall integer i; 0 <= i < n ==> df[i] == \old(df[i]) + \old(dy[i]));
    ensures dx_err: LN_FLOAT(\forall integer i; 0 <= i < n ==> \is_finite(dx[i]) &&
      \abs(dx[i] - (\old(dx[i]) + \old(dy[i]))) <= res_err32(\old(dx[i]) + \old(dy[i])));
    ensures df_err: LN_FLOAT(\forall integer i; 0 <= i < n ==> \is_finite(df[i]) &&
      \abs(df[i] - (\old(df[i]) + \old(dy[i]))) <= res_err32(\old(df[i]) + \old(dy[i])));
*/
void residual_backward_f32(float *dx, float *df, const float *dy, int n);
/*@ requires n_nonneg: n >= 0;
    requires valid_dy: \valid_read(dy + (0 .. n - 1));
    requires valid_dx: \valid(dx + (0 .. n - 1));
    requires valid_df: \valid(df + (0 .. n - 1));
    requires sep: \separated(dx + (0 .. n - 1), df + (0 .. n - 1), dy + (0 .. n - 1));
    requires fl_range: LN_FLOAT(res_in_range64(dx, n) && res_in_range64(df, n) && res_in_range64(dy, n));
    assigns dx[0 .. n - 1], df[0 .. n - 1];
    ensures dx_acc: LN_EXACT(\forall integer i; 0 <= i < n ==> dx[i] == \old(dx[i]) + \old(dy[i]));
    ensures df_acc: LN_EXACT(\forall integer i; 0 <= i < n ==> df[i] == \old(df[i]) + \old(dy[i]));
    ensures dx_err: LN_FLOAT(\forall integer i; 0 <= i < n ==> \is_finite(dx[i]) &&
      \abs(dx[i] - (\old(dx[i]) + \old(dy[i]))) <= res_err64(\old(dx[i]) + \old(dy[i])));
    ensures df_err: LN_FLOAT(\forall integer i; 0 <= i < n ==> \is_finite(df[i]) &&
      \abs(df[i] - (\old(df[i]) + \old(dy[i]))) <= res_err64(\old(df[i]) + \old(dy[i])));
*/
void residual_backward_f64(double *dx, double *df, const double *dy, int n);

#endif
