/* Dropout with its mask given (training-mode dropout made checkable): contracts of the kernels in
 * ref/dropout.c.  The 0/1 mask is an input, so that any implementation (its own random draw
 * replaced by the given mask) can be checked against the reference.
 *
 * For n elements (any shape, flattened row-major), 0 <= p < 1, mask[i] in {0, 1}:
 *   scale     = 1/(1 - p)                          (dropout_scale_*)
 *   forward:  y[i]   = (x[i]·mask[i])·scale        (y may be x: in place is allowed)
 *   backward: dx[i] += (dy[i]·mask[i])·scale       (ACCUMULATED, as llm.c's backward passes do)
 * Over the reals this is x·mask/(1 - p); in floating point x·mask is exact (mask is 0 or 1), and
 * 1 - p, the division and the product round once each.  Error analysis:
 * specs/error-analysis-dropout.md.
 *
 * The mask's values are not a precondition: the formulas hold for any mask (the predicate
 * dropout_mask01 below documents the intended inputs; the CLI refuses other masks with exit 2).
 * Contracts (ACSL, proved by `make prove-dropout`, proofs/dropout.sh; see proofs/README-sublayers.md).
 * With -wp-model real every value and operation is the exact real one: the postconditions say that
 * the kernels compute exactly these formulas (no RTE: the division by 1 - p > 0 included).
 * EVA (proofs/eva_dropout.c, -warn-special-float non-finite): 0 alarms for 0 <= n <= 1024,
 * |x|, |dy|, |dx| <= 1.0e4, mask in {0, 1}, p in [0, 0.999] (so scale <= 1000).
 */
#ifndef RESNORM_DROPOUT_H
#define RESNORM_DROPOUT_H

/* WP_ONLY(p): a real-model statement or frame fact, \true for EVA (proofs/dropout.sh fails if EVA
   leaves any property unknown) */
#include "wp_only.h"

/*@ logic real dropout_val(real a, real m, real s) = a * m * s;
*/
/*@ predicate dropout_mask01{L}(float *m, integer n) = \forall integer i; 0 <= i < n ==> m[i] == 0.0 || m[i] == 1.0;
    predicate dropout_mask01{L}(double *m, integer n) = \forall integer i; 0 <= i < n ==> m[i] == 0.0 || m[i] == 1.0;
*/

/*@ requires p_range: 0.0 <= p < 1.0;
    assigns \nothing;
    ensures scale_def: WP_ONLY(\result == 1.0 / (1.0 - p));
*/
float dropout_scale_f32(float p);
/*@ requires p_range: 0.0 <= p < 1.0;
    assigns \nothing;
    ensures scale_def: WP_ONLY(\result == 1.0 / (1.0 - p));
*/
double dropout_scale_f64(double p);

/*@ requires n_nonneg: n >= 0;
    requires valid_x: \valid_read(x + (0 .. n - 1));
    requires valid_mask: \valid_read(mask + (0 .. n - 1));
    requires valid_y: \valid(y + (0 .. n - 1));
    requires alias_x: y == x || \separated(y + (0 .. n - 1), x + (0 .. n - 1));
    requires sep_mask: \separated(y + (0 .. n - 1), mask + (0 .. n - 1));
    assigns y[0 .. n - 1];
    ensures y_def: WP_ONLY(\forall integer i; 0 <= i < n ==> y[i] == dropout_val(\old(x[i]), \old(mask[i]), scale));
*/
void dropout_forward_f32(float *y, const float *x, const float *mask, float scale, int n);
/*@ requires n_nonneg: n >= 0;
    requires valid_x: \valid_read(x + (0 .. n - 1));
    requires valid_mask: \valid_read(mask + (0 .. n - 1));
    requires valid_y: \valid(y + (0 .. n - 1));
    requires alias_x: y == x || \separated(y + (0 .. n - 1), x + (0 .. n - 1));
    requires sep_mask: \separated(y + (0 .. n - 1), mask + (0 .. n - 1));
    assigns y[0 .. n - 1];
    ensures y_def: WP_ONLY(\forall integer i; 0 <= i < n ==> y[i] == dropout_val(\old(x[i]), \old(mask[i]), scale));
*/
void dropout_forward_f64(double *y, const double *x, const double *mask, double scale, int n);

/*@ requires n_nonneg: n >= 0;
    requires valid_dy: \valid_read(dy + (0 .. n - 1));
    requires valid_mask: \valid_read(mask + (0 .. n - 1));
    requires valid_dx: \valid(dx + (0 .. n - 1));
    requires sep: \separated(dx + (0 .. n - 1), dy + (0 .. n - 1), mask + (0 .. n - 1));
    assigns dx[0 .. n - 1];
    ensures dx_acc: WP_ONLY(\forall integer i; 0 <= i < n ==> dx[i] == \old(dx[i]) + dropout_val(\old(dy[i]), \old(mask[i]), scale));
*/
void dropout_backward_f32(float *dx, const float *dy, const float *mask, float scale, int n);
/*@ requires n_nonneg: n >= 0;
    requires valid_dy: \valid_read(dy + (0 .. n - 1));
    requires valid_mask: \valid_read(mask + (0 .. n - 1));
    requires valid_dx: \valid(dx + (0 .. n - 1));
    requires sep: \separated(dx + (0 .. n - 1), dy + (0 .. n - 1), mask + (0 .. n - 1));
    assigns dx[0 .. n - 1];
    ensures dx_acc: WP_ONLY(\forall integer i; 0 <= i < n ==> dx[i] == \old(dx[i]) + dropout_val(\old(dy[i]), \old(mask[i]), scale));
*/
void dropout_backward_f64(double *dx, const double *dy, const double *mask, double scale, int n);

#endif
