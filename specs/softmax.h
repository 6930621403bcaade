/* Softmax over the last axis with an optional additive mask (torch.softmax(x + mask, -1)) and its
 * backward: contracts of the kernels in ref/softmax.c.
 *
 * For one row of n elements, z = x + mask (mask == NULL: z = x):
 *   m    = max_k z[k]                                   (the max is subtracted: no overflow)
 *   s    = sum_k exp(z[k] - m)                           (left to right)
 *   y[i] = exp(z[i] - m) / s
 *   backward (y: the forward's output, dy: the upstream gradient):
 *   g     = sum_k dy[k]·y[k]                             (left to right)
 *   dx[i] += y[i]·(dy[i] - g)                            (ACCUMULATED, as llm.c does)
 * exp is the libm call rn_expf / rn_exp (specs/libm.h: its ONE assumption, exp(x) == \exp(x) in the
 * real model).  The kernel evaluates exp(z[i] - m) twice (in the sum, then for y[i]) rather than
 * storing it in y: the same value both times, and no output written while the sum is formed.
 * Error analysis: specs/error-analysis-softmax.md (Blanchard, Higham & Mary 2021).
 *
 * Contracts (ACSL, proved by `make prove-softmax`, proofs/softmax.sh; see proofs/README-sublayers.md).
 * -wp-model real: every value and operation is the exact real one and exp is \exp (assumption).
 * EVA (proofs/eva_softmax.c, -warn-special-float non-finite): 0 alarms for the row forward (without a
 * mask and with one) and the row backward on its output, 1 <= n <= EVA_NMAX (1024 in `make prove`),
 * float |x| <= 88 and mask in [-3.0e38, 0], double |x| <= 1.0e300 and mask in [-1.0e300, 0],
 * |dy| <= 1.0e4, given the two facts d_nonpos and s_ge_half (below, WP_ONLY).
 */
#ifndef RESNORM_SOFTMAX_H
#define RESNORM_SOFTMAX_H

#include <limits.h>

#include "libm.h"

/* WP_ONLY(p) (specs/wp_only.h, via libm.h): a statement of the real model (every float operation
   exact), proved by WP with -wp-model real, \true for EVA (proofs/softmax.sh).  The only annotations
   EVA is given undecided are the assertions d_nonpos (z - m <= 0) and s_ge_half (s >= 1/2) of
   ref/softmax.c, which WP proves and which hold in IEEE arithmetic (the argument:
   proofs/README-sublayers.md, "Softmax: the two facts EVA is given"); proofs/softmax.sh fails if EVA
   leaves any other property unknown. */

/*@
  logic real sm_max2(real a, real b) = a >= b ? a : b;
  logic real sm_z{L}(float *x, float *mask, integer k) = mask == \null ? (real)x[k] : x[k] + mask[k];
  logic real sm_z{L}(double *x, double *mask, integer k) = mask == \null ? (real)x[k] : x[k] + mask[k];
  logic real sm_max{L}(float *x, float *mask, integer n) =
    n <= 1 ? sm_z(x, mask, 0) : sm_max2(sm_max(x, mask, n - 1), sm_z(x, mask, n - 1));
  logic real sm_max{L}(double *x, double *mask, integer n) =
    n <= 1 ? sm_z(x, mask, 0) : sm_max2(sm_max(x, mask, n - 1), sm_z(x, mask, n - 1));
  logic real sm_sum{L}(float *x, float *mask, real m, integer n) =
    n <= 0 ? 0.0 : sm_sum(x, mask, m, n - 1) + \exp(sm_z(x, mask, n - 1) - m);
  logic real sm_sum{L}(double *x, double *mask, real m, integer n) =
    n <= 0 ? 0.0 : sm_sum(x, mask, m, n - 1) + \exp(sm_z(x, mask, n - 1) - m);
  logic real sm_gdot{L}(float *dy, float *y, integer n) =
    n <= 0 ? 0.0 : sm_gdot(dy, y, n - 1) + dy[n - 1] * y[n - 1];
  logic real sm_gdot{L}(double *dy, double *y, integer n) =
    n <= 0 ? 0.0 : sm_gdot(dy, y, n - 1) + dy[n - 1] * y[n - 1];
  logic real sm_dx(real y, real dy, real g) = y * (dy - g);
  logic real sm_yv(real z, real m, real s) = \exp(z - m) / s;
*/

/*@ requires n_pos: n >= 1;
    requires valid_x: \valid_read(x + (0 .. n - 1));
    requires valid_mask: mask == \null || \valid_read(mask + (0 .. n - 1));
    assigns \nothing;
    ensures max_def: WP_ONLY(\result == sm_max(x, mask, n));
    ensures max_ge: WP_ONLY(\forall integer k; 0 <= k < n ==> sm_z(x, mask, k) <= \result);
    ensures max_at: WP_ONLY(\exists integer k; 0 <= k < n && sm_z(x, mask, k) == \result);
*/
float softmax_row_max_f32(const float *x, const float *mask, int n);
/*@ requires n_pos: n >= 1;
    requires valid_x: \valid_read(x + (0 .. n - 1));
    requires valid_mask: mask == \null || \valid_read(mask + (0 .. n - 1));
    assigns \nothing;
    ensures max_def: WP_ONLY(\result == sm_max(x, mask, n));
    ensures max_ge: WP_ONLY(\forall integer k; 0 <= k < n ==> sm_z(x, mask, k) <= \result);
    ensures max_at: WP_ONLY(\exists integer k; 0 <= k < n && sm_z(x, mask, k) == \result);
*/
double softmax_row_max_f64(const double *x, const double *mask, int n);

/*@ requires n_pos: n >= 0;
    requires valid_x: \valid_read(x + (0 .. n - 1));
    requires valid_mask: mask == \null || \valid_read(mask + (0 .. n - 1));
    requires m_ge: WP_ONLY(\forall integer k; 0 <= k < n ==> sm_z(x, mask, k) <= m);
    assigns \nothing;
    ensures sum_def: WP_ONLY(\result == sm_sum(x, mask, m, n));
    ensures sum_ge_1: WP_ONLY((\exists integer k; 0 <= k < n && sm_z(x, mask, k) == m) ==> \result >= 1);
*/
float softmax_row_sum_f32(const float *x, const float *mask, float m, int n);
/*@ requires n_pos: n >= 0;
    requires valid_x: \valid_read(x + (0 .. n - 1));
    requires valid_mask: mask == \null || \valid_read(mask + (0 .. n - 1));
    requires m_ge: WP_ONLY(\forall integer k; 0 <= k < n ==> sm_z(x, mask, k) <= m);
    assigns \nothing;
    ensures sum_def: WP_ONLY(\result == sm_sum(x, mask, m, n));
    ensures sum_ge_1: WP_ONLY((\exists integer k; 0 <= k < n && sm_z(x, mask, k) == m) ==> \result >= 1);
*/
double softmax_row_sum_f64(const double *x, const double *mask, double m, int n);

/* One row: y[i] = exp(z[i] - m)/s with m, s from the two helpers (s >= 1: the term at the max is
   exp(0) = 1 and every term is positive; EVA checks the float division). */
/*@ requires n_pos: n >= 1;
    requires valid_x: \valid_read(x + (0 .. n - 1));
    requires valid_mask: mask == \null || \valid_read(mask + (0 .. n - 1));
    requires valid_y: \valid(y + (0 .. n - 1));
    requires sep_x: \separated(y + (0 .. n - 1), x + (0 .. n - 1));
    requires sep_mask: mask == \null || \separated(y + (0 .. n - 1), mask + (0 .. n - 1));
    assigns y[0 .. n - 1];
    ensures y_def: WP_ONLY(\forall integer i; 0 <= i < n ==>
      y[i] == sm_yv(sm_z{Pre}(x, mask, i), sm_max{Pre}(x, mask, n), sm_sum{Pre}(x, mask, sm_max{Pre}(x, mask, n), n)));
*/
void softmax_row_forward_f32(float *y, const float *x, const float *mask, int n);
/*@ requires n_pos: n >= 1;
    requires valid_x: \valid_read(x + (0 .. n - 1));
    requires valid_mask: mask == \null || \valid_read(mask + (0 .. n - 1));
    requires valid_y: \valid(y + (0 .. n - 1));
    requires sep_x: \separated(y + (0 .. n - 1), x + (0 .. n - 1));
    requires sep_mask: mask == \null || \separated(y + (0 .. n - 1), mask + (0 .. n - 1));
    assigns y[0 .. n - 1];
    ensures y_def: WP_ONLY(\forall integer i; 0 <= i < n ==>
      y[i] == sm_yv(sm_z{Pre}(x, mask, i), sm_max{Pre}(x, mask, n), sm_sum{Pre}(x, mask, sm_max{Pre}(x, mask, n), n)));
*/
void softmax_row_forward_f64(double *y, const double *x, const double *mask, int n);

/* One row of the backward: dx[i] += y[i]·(dy[i] - g), g = sum_k dy[k]·y[k]. */
/*@ requires n_pos: n >= 1;
    requires valid_y: \valid_read(y + (0 .. n - 1));
    requires valid_dy: \valid_read(dy + (0 .. n - 1));
    requires valid_dx: \valid(dx + (0 .. n - 1));
    requires sep: \separated(dx + (0 .. n - 1), y + (0 .. n - 1), dy + (0 .. n - 1));
    assigns dx[0 .. n - 1];
    ensures dx_acc: WP_ONLY(\forall integer i; 0 <= i < n ==>
      dx[i] == \old(dx[i]) + sm_dx(\old(y[i]), \old(dy[i]), sm_gdot{Pre}(dy, y, n)));
*/
void softmax_row_backward_f32(float *dx, const float *y, const float *dy, int n);
/*@ requires n_pos: n >= 1;
    requires valid_y: \valid_read(y + (0 .. n - 1));
    requires valid_dy: \valid_read(dy + (0 .. n - 1));
    requires valid_dx: \valid(dx + (0 .. n - 1));
    requires sep: \separated(dx + (0 .. n - 1), y + (0 .. n - 1), dy + (0 .. n - 1));
    assigns dx[0 .. n - 1];
    ensures dx_acc: WP_ONLY(\forall integer i; 0 <= i < n ==>
      dx[i] == \old(dx[i]) + sm_dx(\old(y[i]), \old(dy[i]), sm_gdot{Pre}(dy, y, n)));
*/
void softmax_row_backward_f64(double *dx, const double *y, const double *dy, int n);

/* rows × n drivers (mask: [rows, n] or NULL). */
/*@ requires rows_nonneg: rows >= 0;
    requires n_pos: n >= 1;
    requires size: rows * n <= INT_MAX;
    requires valid_x: \valid_read(x + (0 .. rows * n - 1));
    requires valid_mask: mask == \null || \valid_read(mask + (0 .. rows * n - 1));
    requires valid_y: \valid(y + (0 .. rows * n - 1));
    requires sep_x: \separated(y + (0 .. rows * n - 1), x + (0 .. rows * n - 1));
    requires sep_mask: mask == \null || \separated(y + (0 .. rows * n - 1), mask + (0 .. rows * n - 1));
    assigns y[0 .. rows * n - 1];
*/
void softmax_forward_f32(float *y, const float *x, const float *mask, int rows, int n);
/*@ requires rows_nonneg: rows >= 0;
    requires n_pos: n >= 1;
    requires size: rows * n <= INT_MAX;
    requires valid_x: \valid_read(x + (0 .. rows * n - 1));
    requires valid_mask: mask == \null || \valid_read(mask + (0 .. rows * n - 1));
    requires valid_y: \valid(y + (0 .. rows * n - 1));
    requires sep_x: \separated(y + (0 .. rows * n - 1), x + (0 .. rows * n - 1));
    requires sep_mask: mask == \null || \separated(y + (0 .. rows * n - 1), mask + (0 .. rows * n - 1));
    assigns y[0 .. rows * n - 1];
*/
void softmax_forward_f64(double *y, const double *x, const double *mask, int rows, int n);
/*@ requires rows_nonneg: rows >= 0;
    requires n_pos: n >= 1;
    requires size: rows * n <= INT_MAX;
    requires valid_y: \valid_read(y + (0 .. rows * n - 1));
    requires valid_dy: \valid_read(dy + (0 .. rows * n - 1));
    requires valid_dx: \valid(dx + (0 .. rows * n - 1));
    requires sep: \separated(dx + (0 .. rows * n - 1), y + (0 .. rows * n - 1), dy + (0 .. rows * n - 1));
    assigns dx[0 .. rows * n - 1];
*/
void softmax_backward_f32(float *dx, const float *y, const float *dy, int rows, int n);
/*@ requires rows_nonneg: rows >= 0;
    requires n_pos: n >= 1;
    requires size: rows * n <= INT_MAX;
    requires valid_y: \valid_read(y + (0 .. rows * n - 1));
    requires valid_dy: \valid_read(dy + (0 .. rows * n - 1));
    requires valid_dx: \valid(dx + (0 .. rows * n - 1));
    requires sep: \separated(dx + (0 .. rows * n - 1), y + (0 .. rows * n - 1), dy + (0 .. rows * n - 1));
    assigns dx[0 .. rows * n - 1];
*/
void softmax_backward_f64(double *dx, const double *y, const double *dy, int rows, int n);

#endif
