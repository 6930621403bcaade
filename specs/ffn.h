/* The feed-forward sublayer of a Transformer block (torch: linear2(dropout(act(linear1(x))))):
 * contracts of the kernels in ref/ffn.c, composed from the proved linear (specs/linear.h) and dropout
 * (specs/dropout.h) kernels and the activation helpers below.
 *
 * Shapes (row-major): x [rows, d], linear1.weight w1 [ff, d], linear1.bias b1 [ff] (may be NULL),
 * linear2.weight w2 [d, ff], linear2.bias b2 [d] (may be NULL), dropout.mask [rows, ff] (0/1, may be
 * NULL: no dropout, eval mode), p the dropout probability (0 <= p < 1, ignored without a mask).
 *   forward:   z = x·w1ᵀ + b1                 [rows, ff]  (cache: the pre-activation)
 *              h = act(z)·mask·1/(1 - p)       [rows, ff]  (cache: the hidden, after dropout)
 *              y = h·w2ᵀ + b2                  [rows, d]
 *   backward (dy [rows, d]; dh [rows, ff] is scratch, overwritten):
 *              dh = dy·w2;  dw2 += dyᵀ·h;  db2 += Σ_rows dy         (linear_backward_*)
 *              dz = act'(z)·(dh·mask·1/(1 - p))                    (dropout map, then act')
 *              dx += dz·w1; dw1 += dzᵀ·x;  db1 += Σ_rows dz         (linear_backward_*)
 *   dx and the parameter gradients are ACCUMULATED, as linear_backward_* does (llm.c's
 *   convention: zero them before the first call).  db1 / db2 may be NULL (not wanted).
 * Activations (as PyTorch's CPU kernels compute them, in the compute type; ffn_act):
 *   relu       max(a, 0);                     relu'(a) = 1 if a > 0 else 0 (threshold_backward)
 *   gelu       a/2·(1 + erf(a·C1))            gelu'(a) = (1 + erf(a·C1))/2 + a·exp(-a²/2)·C3
 *   gelu_tanh  a/2·(1 + tanh(C2·(a + K·a³)))  its exact derivative, as PyTorch's GeluBackward:
 *              (1 + t)/2 + a/2·(1 - t²)·C2·(1 + 3K·a²), t = tanh(C2·(a + K·a³))
 * with C1 = 1/sqrt(2), C2 = sqrt(2/pi), C3 = 1/sqrt(2·pi), K = 0.044715 rounded to the compute type
 * (the hex literals below).  The error analysis: specs/error-analysis-ffn.md.
 *
 * Contracts (ACSL, `make prove-ffn`, proofs/ffn.sh).  With -wp-model real every value and
 * operation is the exact real one, so the activation helpers' postconditions say: relu and its
 * gradient compute exactly their formula (no assumption); gelu, gelu_tanh and their derivatives
 * compute exactly the formulas above with the stated constants, given the libm assumptions of
 * specs/libm.h (rn_erff / rn_tanhf / rn_expf return the real erf, tanh, exp: libm_erf, libm_tanh,
 * libm_exp, proofs/libm-assumptions.md).  The row activation loops are proved functionally (every
 * element is its helper's value); the drivers are proved free of runtime errors, assigning only their
 * outputs, and terminating.  The forward driver's composition is proved in a rows run of its own
 * (specs/ffn_rows.h): z = x·w1ᵀ + b1, h = act(z)·mask/(1 − p) and y = h·w2ᵀ + b2, row by row, over
 * the reals; the backward driver's in a rows run too (specs/ffn_bwd_rows.h, read by ref/ffn.c only):
 * dz = act'(z)·((dy·w2)·mask/(1 − p)), dx += dz·w1, dw1 += dzᵀ·x, db1 += Σ dz, dw2 += dyᵀ·h,
 * db2 += Σ dy, row by row.
 * EVA (proofs/eva_ffn.c, -warn-special-float non-finite): 0 alarms, f32 and f64, for the activation
 * kernels ffn_act_forward_* / ffn_act_backward_* with 0 <= n <= 64, |z|, |g| <= 1.0e4, every
 * activation (erf and tanh given a range stub there: proofs/libm-assumptions.md).
 */
#ifndef RESNORM_FFN_H
#define RESNORM_FFN_H

#include <limits.h>
#include <stddef.h>

#include "libm.h"

/* WP_ONLY(p): a real-model statement (erf, tanh, exp as specs/libm.h assumes) or frame fact, \true
   for EVA (proofs/ffn.sh fails if EVA leaves any property unknown) */
#include "wp_only.h"

/* The activation (values shared with ref/ffn_mpfr.h's rn_activation). */
typedef enum { FFN_RELU = 0, FFN_GELU = 1 /* erf */, FFN_GELU_TANH = 2 } ffn_act;

/* The constants, rounded to f32 / f64 (exact values of the literals used by ref/ffn.c):
   C1 = 1/sqrt(2), C2 = sqrt(2/pi), C3 = 1/sqrt(2 pi), K = 0.044715. */
#define FFN_C1_F32 0x1.6a09e6p-1f
#define FFN_C2_F32 0x1.988454p-1f
#define FFN_C3_F32 0x1.988454p-2f
#define FFN_K_F32 0x1.6e4e26p-5f
#define FFN_C1_F64 0x1.6a09e667f3bcdp-1
#define FFN_C2_F64 0x1.9884533d43651p-1
#define FFN_C3_F64 0x1.9884533d43651p-2
#define FFN_K_F64 0x1.6e4e26d4801f7p-5

/*@
  logic real ffn_relu(real a) = a > 0.0 ? a : 0.0;
  logic real ffn_relu_grad(real a, real g) = a > 0.0 ? g : 0.0;
  logic real ffn_gelu(real a, real c1) = 0.5 * a * (1.0 + rn_real_erf(a * c1));
  logic real ffn_gelu_grad(real a, real g, real c1, real c3) =
    g * (0.5 * (1.0 + rn_real_erf(a * c1)) + a * \exp(-0.5 * a * a) * c3);
  logic real ffn_tanh_arg(real a, real c2, real k) = c2 * (a + k * a * a * a);
  logic real ffn_gelu_tanh(real a, real c2, real k) = 0.5 * a * (1.0 + \tanh(ffn_tanh_arg(a, c2, k)));
  logic real ffn_gelu_tanh_grad(real a, real g, real c2, real k) =
    g * (0.5 * (1.0 + \tanh(ffn_tanh_arg(a, c2, k)))
         + 0.5 * a * (1.0 - \tanh(ffn_tanh_arg(a, c2, k)) * \tanh(ffn_tanh_arg(a, c2, k)))
           * c2 * (1.0 + 3.0 * k * a * a));
*/

/* ---- the activation helpers: one element ---- */

/*@ assigns \nothing;
    ensures relu: WP_ONLY(\result == ffn_relu(a)); */
float ffn_relu_f32(float a);
/*@ assigns \nothing;
    ensures relu: WP_ONLY(\result == ffn_relu(a)); */
double ffn_relu_f64(double a);
/* g·relu'(a) */
/*@ assigns \nothing;
    ensures relu_grad: WP_ONLY(\result == ffn_relu_grad(a, g)); */
float ffn_relu_grad_f32(float a, float g);
/*@ assigns \nothing;
    ensures relu_grad: WP_ONLY(\result == ffn_relu_grad(a, g)); */
double ffn_relu_grad_f64(double a, double g);

/*@ assigns \nothing;
    ensures gelu: WP_ONLY(\result == ffn_gelu(a, 0x1.6a09e6p-1)); */
float ffn_gelu_f32(float a);
/*@ assigns \nothing;
    ensures gelu: WP_ONLY(\result == ffn_gelu(a, 0x1.6a09e667f3bcdp-1)); */
double ffn_gelu_f64(double a);
/*@ assigns \nothing;
    ensures gelu_grad: WP_ONLY(\result == ffn_gelu_grad(a, g, 0x1.6a09e6p-1, 0x1.988454p-2)); */
float ffn_gelu_grad_f32(float a, float g);
/*@ assigns \nothing;
    ensures gelu_grad: WP_ONLY(\result == ffn_gelu_grad(a, g, 0x1.6a09e667f3bcdp-1, 0x1.9884533d43651p-2)); */
double ffn_gelu_grad_f64(double a, double g);

/*@ assigns \nothing;
    ensures gelu_tanh: WP_ONLY(\result == ffn_gelu_tanh(a, 0x1.988454p-1, 0x1.6e4e26p-5)); */
float ffn_gelu_tanh_f32(float a);
/*@ assigns \nothing;
    ensures gelu_tanh: WP_ONLY(\result == ffn_gelu_tanh(a, 0x1.9884533d43651p-1, 0x1.6e4e26d4801f7p-5)); */
double ffn_gelu_tanh_f64(double a);
/*@ assigns \nothing;
    ensures gelu_tanh_grad: WP_ONLY(\result == ffn_gelu_tanh_grad(a, g, 0x1.988454p-1, 0x1.6e4e26p-5)); */
float ffn_gelu_tanh_grad_f32(float a, float g);
/*@ assigns \nothing;
    ensures gelu_tanh_grad: WP_ONLY(\result == ffn_gelu_tanh_grad(a, g, 0x1.9884533d43651p-1, 0x1.6e4e26d4801f7p-5)); */
double ffn_gelu_tanh_grad_f64(double a, double g);

/* ---- n elements: a[i] = act(z[i]) (forward), g[i] = g[i]·act'(z[i]) (backward, in place) ---- */

/*@ predicate ffn_act_ok(ffn_act act) = act == FFN_RELU || act == FFN_GELU || act == FFN_GELU_TANH; */

/*@ requires n_nonneg: n >= 0;
    requires act_ok: ffn_act_ok(act);
    requires valid_z: \valid_read(z + (0 .. n - 1));
    requires valid_a: \valid(a + (0 .. n - 1));
    requires sep: \separated(a + (0 .. n - 1), z + (0 .. n - 1));
    assigns a[0 .. n - 1];
    ensures relu: WP_ONLY(act == FFN_RELU ==> \forall integer i; 0 <= i < n ==> a[i] == ffn_relu(z[i]));
    ensures gelu: WP_ONLY(act == FFN_GELU ==> \forall integer i; 0 <= i < n ==> a[i] == ffn_gelu(z[i], 0x1.6a09e6p-1));
    ensures gelu_tanh: WP_ONLY(act == FFN_GELU_TANH ==>
      \forall integer i; 0 <= i < n ==> a[i] == ffn_gelu_tanh(z[i], 0x1.988454p-1, 0x1.6e4e26p-5));
*/
void ffn_act_forward_f32(float *a, const float *z, ffn_act act, int n);
/*@ requires n_nonneg: n >= 0;
    requires act_ok: ffn_act_ok(act);
    requires valid_z: \valid_read(z + (0 .. n - 1));
    requires valid_a: \valid(a + (0 .. n - 1));
    requires sep: \separated(a + (0 .. n - 1), z + (0 .. n - 1));
    assigns a[0 .. n - 1];
    ensures relu: WP_ONLY(act == FFN_RELU ==> \forall integer i; 0 <= i < n ==> a[i] == ffn_relu(z[i]));
    ensures gelu: WP_ONLY(act == FFN_GELU ==> \forall integer i; 0 <= i < n ==> a[i] == ffn_gelu(z[i], 0x1.6a09e667f3bcdp-1));
    ensures gelu_tanh: WP_ONLY(act == FFN_GELU_TANH ==>
      \forall integer i; 0 <= i < n ==> a[i] == ffn_gelu_tanh(z[i], 0x1.9884533d43651p-1, 0x1.6e4e26d4801f7p-5));
*/
void ffn_act_forward_f64(double *a, const double *z, ffn_act act, int n);

/*@ requires n_nonneg: n >= 0;
    requires act_ok: ffn_act_ok(act);
    requires valid_z: \valid_read(z + (0 .. n - 1));
    requires valid_g: \valid(g + (0 .. n - 1));
    requires sep: \separated(g + (0 .. n - 1), z + (0 .. n - 1));
    assigns g[0 .. n - 1];
    ensures relu: WP_ONLY(act == FFN_RELU ==>
      \forall integer i; 0 <= i < n ==> g[i] == ffn_relu_grad(z[i], \old(g[i])));
    ensures gelu: WP_ONLY(act == FFN_GELU ==>
      \forall integer i; 0 <= i < n ==> g[i] == ffn_gelu_grad(z[i], \old(g[i]), 0x1.6a09e6p-1, 0x1.988454p-2));
    ensures gelu_tanh: WP_ONLY(act == FFN_GELU_TANH ==>
      \forall integer i; 0 <= i < n ==> g[i] == ffn_gelu_tanh_grad(z[i], \old(g[i]), 0x1.988454p-1, 0x1.6e4e26p-5));
*/
void ffn_act_backward_f32(float *g, const float *z, ffn_act act, int n);
/*@ requires n_nonneg: n >= 0;
    requires act_ok: ffn_act_ok(act);
    requires valid_z: \valid_read(z + (0 .. n - 1));
    requires valid_g: \valid(g + (0 .. n - 1));
    requires sep: \separated(g + (0 .. n - 1), z + (0 .. n - 1));
    assigns g[0 .. n - 1];
    ensures relu: WP_ONLY(act == FFN_RELU ==>
      \forall integer i; 0 <= i < n ==> g[i] == ffn_relu_grad(z[i], \old(g[i])));
    ensures gelu: WP_ONLY(act == FFN_GELU ==>
      \forall integer i; 0 <= i < n ==> g[i] == ffn_gelu_grad(z[i], \old(g[i]), 0x1.6a09e667f3bcdp-1, 0x1.9884533d43651p-2));
    ensures gelu_tanh: WP_ONLY(act == FFN_GELU_TANH ==>
      \forall integer i; 0 <= i < n ==> g[i] == ffn_gelu_tanh_grad(z[i], \old(g[i]), 0x1.9884533d43651p-1, 0x1.6e4e26d4801f7p-5));
*/
void ffn_act_backward_f64(double *g, const double *z, ffn_act act, int n);

/* ---- the sublayer: rows × d -> rows × d ---- */

/*@ requires rows_nonneg: rows >= 0;
    requires d_pos: d >= 1;
    requires ff_pos: ff >= 1;
    requires size: rows * d <= INT_MAX && rows * ff <= INT_MAX && d * ff <= INT_MAX;
    requires act_ok: ffn_act_ok(act);
    requires p_range: 0.0 <= p < 1.0;
    requires valid_x: \valid_read(x + (0 .. rows * d - 1));
    requires valid_w1: \valid_read(w1 + (0 .. d * ff - 1));
    requires valid_b1: b1 == \null || \valid_read(b1 + (0 .. ff - 1));
    requires valid_w2: \valid_read(w2 + (0 .. d * ff - 1));
    requires valid_b2: b2 == \null || \valid_read(b2 + (0 .. d - 1));
    requires valid_mask: mask == \null || \valid_read(mask + (0 .. rows * ff - 1));
    requires valid_out: \valid(y + (0 .. rows * d - 1)) && \valid(z + (0 .. rows * ff - 1))
                        && \valid(h + (0 .. rows * ff - 1));
    requires sep_out: \separated(y + (0 .. rows * d - 1), z + (0 .. rows * ff - 1), h + (0 .. rows * ff - 1));
    requires sep_in: \separated(y + (0 .. rows * d - 1), z + (0 .. rows * ff - 1), h + (0 .. rows * ff - 1),
                                x + (0 .. rows * d - 1), w1 + (0 .. d * ff - 1), w2 + (0 .. d * ff - 1));
    requires sep_b1: b1 == \null || \separated(b1 + (0 .. ff - 1), y + (0 .. rows * d - 1),
                                               z + (0 .. rows * ff - 1), h + (0 .. rows * ff - 1));
    requires sep_b2: b2 == \null || \separated(b2 + (0 .. d - 1), y + (0 .. rows * d - 1),
                                               z + (0 .. rows * ff - 1), h + (0 .. rows * ff - 1));
    requires sep_mask: mask == \null || \separated(mask + (0 .. rows * ff - 1), y + (0 .. rows * d - 1),
                                                   z + (0 .. rows * ff - 1), h + (0 .. rows * ff - 1));
    assigns y[0 .. rows * d - 1], z[0 .. rows * ff - 1], h[0 .. rows * ff - 1];
*/
void ffn_forward_f32(float *y, float *z, float *h, const float *x, const float *w1, const float *b1,
                     const float *w2, const float *b2, const float *mask, float p, ffn_act act,
                     int rows, int d, int ff);
/*@ requires rows_nonneg: rows >= 0;
    requires d_pos: d >= 1;
    requires ff_pos: ff >= 1;
    requires size: rows * d <= INT_MAX && rows * ff <= INT_MAX && d * ff <= INT_MAX;
    requires act_ok: ffn_act_ok(act);
    requires p_range: 0.0 <= p < 1.0;
    requires valid_x: \valid_read(x + (0 .. rows * d - 1));
    requires valid_w1: \valid_read(w1 + (0 .. d * ff - 1));
    requires valid_b1: b1 == \null || \valid_read(b1 + (0 .. ff - 1));
    requires valid_w2: \valid_read(w2 + (0 .. d * ff - 1));
    requires valid_b2: b2 == \null || \valid_read(b2 + (0 .. d - 1));
    requires valid_mask: mask == \null || \valid_read(mask + (0 .. rows * ff - 1));
    requires valid_out: \valid(y + (0 .. rows * d - 1)) && \valid(z + (0 .. rows * ff - 1))
                        && \valid(h + (0 .. rows * ff - 1));
    requires sep_out: \separated(y + (0 .. rows * d - 1), z + (0 .. rows * ff - 1), h + (0 .. rows * ff - 1));
    requires sep_in: \separated(y + (0 .. rows * d - 1), z + (0 .. rows * ff - 1), h + (0 .. rows * ff - 1),
                                x + (0 .. rows * d - 1), w1 + (0 .. d * ff - 1), w2 + (0 .. d * ff - 1));
    requires sep_b1: b1 == \null || \separated(b1 + (0 .. ff - 1), y + (0 .. rows * d - 1),
                                               z + (0 .. rows * ff - 1), h + (0 .. rows * ff - 1));
    requires sep_b2: b2 == \null || \separated(b2 + (0 .. d - 1), y + (0 .. rows * d - 1),
                                               z + (0 .. rows * ff - 1), h + (0 .. rows * ff - 1));
    requires sep_mask: mask == \null || \separated(mask + (0 .. rows * ff - 1), y + (0 .. rows * d - 1),
                                                   z + (0 .. rows * ff - 1), h + (0 .. rows * ff - 1));
    assigns y[0 .. rows * d - 1], z[0 .. rows * ff - 1], h[0 .. rows * ff - 1];
*/
void ffn_forward_f64(double *y, double *z, double *h, const double *x, const double *w1,
                     const double *b1, const double *w2, const double *b2, const double *mask,
                     double p, ffn_act act, int rows, int d, int ff);

/* z, h: the forward's caches for the same inputs; dh: scratch [rows, ff].  ffn_backward_*'s contract
   (also the block's wrapper's, ref/block.c). */
#define FFN_BWD_CONTRACT                                                                                           \
    requires rows_nonneg: rows >= 0;                                                                               \
    requires d_pos: d >= 1;                                                                                        \
    requires ff_pos: ff >= 1;                                                                                      \
    requires size: rows * d <= INT_MAX && rows * ff <= INT_MAX && d * ff <= INT_MAX;                               \
    requires act_ok: ffn_act_ok(act);                                                                              \
    requires p_range: 0.0 <= p < 1.0;                                                                              \
    requires valid_in: \valid_read(dy + (0 .. rows * d - 1)) && \valid_read(x + (0 .. rows * d - 1))               \
        && \valid_read(z + (0 .. rows * ff - 1)) && \valid_read(h + (0 .. rows * ff - 1))                          \
        && \valid_read(w1 + (0 .. d * ff - 1)) && \valid_read(w2 + (0 .. d * ff - 1));                             \
    requires valid_mask: mask == \null || \valid_read(mask + (0 .. rows * ff - 1));                                \
    requires valid_out: \valid(dx + (0 .. rows * d - 1)) && \valid(dw1 + (0 .. d * ff - 1))                        \
        && \valid(dw2 + (0 .. d * ff - 1)) && \valid(dh + (0 .. rows * ff - 1));                                   \
    requires valid_db1: db1 == \null || \valid(db1 + (0 .. ff - 1));                                               \
    requires valid_db2: db2 == \null || \valid(db2 + (0 .. d - 1));                                                \
    requires sep_out: \separated(dx + (0 .. rows * d - 1), dw1 + (0 .. d * ff - 1), dw2 + (0 .. d * ff - 1),       \
        dh + (0 .. rows * ff - 1));                                                                                \
    requires sep_in: \separated(dx + (0 .. rows * d - 1), dw1 + (0 .. d * ff - 1), dw2 + (0 .. d * ff - 1),        \
        dh + (0 .. rows * ff - 1), dy + (0 .. rows * d - 1), x + (0 .. rows * d - 1),                              \
        z + (0 .. rows * ff - 1), h + (0 .. rows * ff - 1), w1 + (0 .. d * ff - 1),                                \
        w2 + (0 .. d * ff - 1));                                                                                   \
    requires sep_mask: mask == \null || \separated(mask + (0 .. rows * ff - 1), dh + (0 .. rows * ff - 1),         \
        dx + (0 .. rows * d - 1), dw1 + (0 .. d * ff - 1),                                                         \
        dw2 + (0 .. d * ff - 1));                                                                                  \
    requires sep_db1: db1 == \null || \separated(db1 + (0 .. ff - 1), dx + (0 .. rows * d - 1),                    \
        dw1 + (0 .. d * ff - 1), dw2 + (0 .. d * ff - 1),                                                          \
        dh + (0 .. rows * ff - 1), dy + (0 .. rows * d - 1),                                                       \
        x + (0 .. rows * d - 1), z + (0 .. rows * ff - 1),                                                         \
        h + (0 .. rows * ff - 1), w1 + (0 .. d * ff - 1),                                                          \
        w2 + (0 .. d * ff - 1));                                                                                   \
    requires sep_db2: db2 == \null || \separated(db2 + (0 .. d - 1), dx + (0 .. rows * d - 1),                     \
        dw1 + (0 .. d * ff - 1), dw2 + (0 .. d * ff - 1),                                                          \
        dh + (0 .. rows * ff - 1), dy + (0 .. rows * d - 1),                                                       \
        x + (0 .. rows * d - 1), z + (0 .. rows * ff - 1),                                                         \
        h + (0 .. rows * ff - 1), w1 + (0 .. d * ff - 1),                                                          \
        w2 + (0 .. d * ff - 1));                                                                                   \
    requires sep_b12: db1 == \null || db2 == \null || \separated(db1 + (0 .. ff - 1), db2 + (0 .. d - 1));         \
    assigns dx[0 .. rows * d - 1], dw1[0 .. d * ff - 1], db1[0 .. ff - 1], dw2[0 .. d * ff - 1],                   \
        db2[0 .. d - 1], dh[0 .. rows * ff - 1];

/*@ FFN_BWD_CONTRACT */
void ffn_backward_f32(float *dx, float *dw1, float *db1, float *dw2, float *db2, float *dh,
                      const float *dy, const float *x, const float *z, const float *h,
                      const float *w1, const float *w2, const float *mask, float p, ffn_act act,
                      int rows, int d, int ff);
/*@ FFN_BWD_CONTRACT */
void ffn_backward_f64(double *dx, double *dw1, double *db1, double *dw2, double *db2, double *dh,
                      const double *dy, const double *x, const double *z, const double *h,
                      const double *w1, const double *w2, const double *mask, double p, ffn_act act,
                      int rows, int d, int ff);

#endif
