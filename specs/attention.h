/* Multi-head self-attention, torch.nn.MultiheadAttention(batch_first=True) on (x, x, x) with
 * need_weights=False, forward and backward: contracts of the kernels in ref/attention.c (llm.c's
 * attention_forward / attention_backward, composed from the proved linear, softmax and dropout
 * kernels of specs/linear.h, specs/softmax.h, specs/dropout.h).
 *
 * Shapes (row-major; B batch, T seq, d model width, H heads, dh = d/H, rows = B·T):
 *   x [B, T, d]; in_w [3d, d], in_b [3d] (or NULL); out_w [d, d], out_b [d] (or NULL);
 *   kpm [B, T] (key_padding_mask, nonzero = ignore that key) or NULL;
 *   amask [B, H, T, T] (attn_dropout.mask, 0/1) or NULL (eval mode: no attention dropout, p unused).
 * The real model (what the twin ref/attention_mpfr.c computes exactly, and what the written bound
 * specs/error-analysis-attention.md compares with), torch 1.13's F.multi_head_attention_forward:
 *   qkv    = x·in_wᵀ + in_b                           [rows, 3d]: q = cols 0..d-1, k = d..2d-1, v = 2d..3d-1
 *   head h = columns h·dh .. (h+1)·dh - 1 of q, k, v  (contiguous split)
 *   qs     = q / sqrt(dh)                             (torch scales q BEFORE the matmul)
 *   s[b,h,i,j] = qs[b,i,h]·k[b,j,h] + M[b,i,j]        M = -Inf where (causal && j > i) || kpm[b,j] != 0, else 0
 *   P[b,h,i,:] = softmax(s[b,h,i,:])                  (max subtracted; a fully masked row is NaN, as torch)
 *   A      = P·amask/(1 - p)                          (dropout with the given mask; A = P without amask)
 *   ctx[b,i,h] = sum_j A[b,h,i,j]·v[b,j,h]            [rows, d], heads concatenated
 *   y      = ctx·out_wᵀ + out_b                       [rows, d]
 * Backward of sum(dy ⊙ y) (dy [rows, d]):
 *   dctx = dy·out_w;  d.out_proj.weight += dyᵀ·ctx;  d.out_proj.bias += sum_rows dy
 *   dA[i,j] = dctx[i,h]·v[j,h];  dP = dA·amask/(1 - p);  dS = P ⊙ (dP - sum_j dP·P)   (softmax backward)
 *   dqs[i,h] = sum_j dS[i,j]·k[j,h];  dq = dqs / sqrt(dh)
 *   dk[j,h] = sum_i dS[i,j]·qs[i,h];  dv[j,h] = sum_i A[i,j]·dctx[i,h]
 *   dx += dqkv·in_w;  d.in_proj_weight += dqkvᵀ·x;  d.in_proj_bias += sum_rows dqkv
 *
 * Floating-point order (the kernels; the written bound holds for any order): in_proj and out_proj
 * by linear_forward_* (left-to-right dots from the bias); qs = q / fl(sqrt(dh)), one rounding per
 * element, stored over q in the qkv cache; each score a left-to-right dot of dh products
 * (linear_dot_*); the mask row (0 or -Inf) added and the softmax taken by softmax_row_forward_*;
 * dropout by dropout_forward_* with scale = dropout_scale_*(p); ctx by left-to-right strided dots
 * over j (linear_sdot_*).  The backward mirrors it with linear_backward_*, linear_dot_*,
 * dropout_backward_*, softmax_row_backward_*, linear_sdot_*.  Compile with -ffp-contract=off.
 *
 * Caches and scratch (llm.c style; the caller allocates):
 *   forward:  qkv [rows, 3d] (q columns hold qs on return), att [B, H, T, T] (P, before dropout),
 *             ctx [rows, d], row [2T] (scratch: the mask row and the scores / dropped probabilities).
 *   backward: reads x, in_w, out_w, the forward's qkv, att, ctx and amask; scratch dqkv [rows, 3d],
 *             dctx [rows, d] and row [2T] (overwritten);
 *             dx, din_w, din_b, dout_w, dout_b ACCUMULATED (+=, as specs/linear.h's linear_backward:
 *             zero them first for the gradient alone); din_b, dout_b may be NULL (skipped).
 *
 * Contracts (ACSL, checked by `make prove-attention`, proofs/attention.sh): RTE (index arithmetic
 * included), assigns and termination of every function; the functional statements are those of
 * the composed kernels (each call's postcondition: one dot product, one softmax row, one dropout
 * row in the real model) and, in a rows run of its own (specs/attention_rows.h), the formula above
 * for one query row of one head: P = softmax(q_i·Kᵀ) over qkv as at entry when nothing is masked
 * (att_row), and ctx = A·V with A = P or its dropout (ctx_row).  The drivers' loops over (b, h, i)
 * are not composed: attention_forward has no postcondition over att and ctx (each row's statement
 * would need a frame of the recursive models across the other rows' writes), nor the backward.
 * Every goal is proved (proofs/results/attention.json; `make prove-attention`, one of `make prove`'s
 * targets).  Not stated:
 * attn_zero_* (a[k] = 0) has no functional postcondition, and the mask test kpm[j] != 0 is a helper
 * without one (Frama-C 25's real model turns `== 0.0` into an integer literal that Why3 rejects; no
 * proved statement depends on either).
 * EVA (proofs/eva_attention.c, -warn-special-float non-finite, `make prove-attention`): 0 alarms, float
 * and double, forward then backward on its caches, without and with the attention-dropout mask
 * (0/1, p in [0, 0.9]), for every shape 1 <= B <= 2, 1 <= T <= 4, 1 <= H <= 2, 1 <= dh <= 4 (one EVA
 * state per shape: EVA unrolls every loop), |x|, |in_w|, |in_b|, |out_w|, |out_b|, |dy| <= 1.0e4,
 * the gradients from 0, with the bodies of the linear, softmax and dropout kernels and Frama-C's
 * model of expf/exp.  It relies on softmax's two WP-proved facts (d_nonpos, s_ge_half) and nothing
 * else it did not decide.  Masked rows, a second run (-DEVA_MASKED, -warn-special-float nan: the
 * mask row's -Inf is by design, as torch's, so only NaN is an alarm there): 0 alarms, and every
 * output and cache (y, qkv, att, ctx, dx and the parameter gradients) proved finite element by
 * element, for 1 <= B <= 2, 1 <= T <= 3, 1 <= H <= 2, dh = 1, causal 0 and 1, every key padding
 * mask that leaves key 0 unpadded (so that every query row keeps a key: a fully masked row is NaN,
 * as torch's), eval mode and the dropout mask, the same value ranges.  Not covered: fully masked
 * rows; wider shapes (the softmax rows and the dot products at widths to 4096 have their own runs
 * in prove-softmax and prove-linear).
 */
#ifndef RESNORM_ATTENTION_H
#define RESNORM_ATTENTION_H

#include <limits.h>

#include "dropout.h"
#include "linear.h"
#include "softmax.h"

/* The sizes the kernels index with int: every product below must fit (each listed, as the solvers do
   not derive a product's bound from a larger product's). */
/*@ predicate attn_dims(integer B, integer T, integer d, integer H) =
      B >= 1 && T >= 1 && d >= 1 && H >= 1 && d % H == 0 &&
      B * T * 3 * d <= INT_MAX && 3 * d * d <= INT_MAX && B * H * T * T <= INT_MAX && 2 * T <= INT_MAX &&
      3 * d <= INT_MAX && B * T <= INT_MAX && B * H <= INT_MAX && B * H * T <= INT_MAX &&
      B * T * d <= INT_MAX && T * (3 * d) <= INT_MAX && B * (T * (3 * d)) <= INT_MAX;
*/

/*@ requires dims: attn_dims(B, T, d, H);
    requires p_range: 0.0 <= p < 1.0;
    requires valid_x: \valid_read(x + (0 .. B * T * d - 1));
    requires valid_in_w: \valid_read(in_w + (0 .. 3 * d * d - 1));
    requires valid_in_b: in_b == \null || \valid_read(in_b + (0 .. 3 * d - 1));
    requires valid_out_w: \valid_read(out_w + (0 .. d * d - 1));
    requires valid_out_b: out_b == \null || \valid_read(out_b + (0 .. d - 1));
    requires valid_kpm: kpm == \null || \valid_read(kpm + (0 .. B * T - 1));
    requires valid_amask: amask == \null || \valid_read(amask + (0 .. B * H * T * T - 1));
    requires valid_y: \valid(y + (0 .. B * T * d - 1));
    requires valid_qkv: \valid(qkv + (0 .. B * T * 3 * d - 1));
    requires valid_att: \valid(att + (0 .. B * H * T * T - 1));
    requires valid_ctx: \valid(ctx + (0 .. B * T * d - 1));
    requires valid_row: \valid(row + (0 .. 2 * T - 1));
    requires sep_out: \separated(y + (0 .. B * T * d - 1), qkv + (0 .. B * T * 3 * d - 1),
                                 att + (0 .. B * H * T * T - 1), ctx + (0 .. B * T * d - 1),
                                 row + (0 .. 2 * T - 1));
    requires sep_in: \separated(y + (0 .. B * T * d - 1), qkv + (0 .. B * T * 3 * d - 1),
                                att + (0 .. B * H * T * T - 1), ctx + (0 .. B * T * d - 1),
                                row + (0 .. 2 * T - 1), x + (0 .. B * T * d - 1),
                                in_w + (0 .. 3 * d * d - 1), out_w + (0 .. d * d - 1));
    requires sep_opt: (in_b == \null || \separated(in_b + (0 .. 3 * d - 1), y + (0 .. B * T * d - 1),
                         qkv + (0 .. B * T * 3 * d - 1), att + (0 .. B * H * T * T - 1),
                         ctx + (0 .. B * T * d - 1), row + (0 .. 2 * T - 1))) &&
                      (out_b == \null || \separated(out_b + (0 .. d - 1), y + (0 .. B * T * d - 1),
                         qkv + (0 .. B * T * 3 * d - 1), att + (0 .. B * H * T * T - 1),
                         ctx + (0 .. B * T * d - 1), row + (0 .. 2 * T - 1))) &&
                      (kpm == \null || \separated(kpm + (0 .. B * T - 1), row + (0 .. 2 * T - 1),
                         att + (0 .. B * H * T * T - 1), ctx + (0 .. B * T * d - 1))) &&
                      (amask == \null || \separated(amask + (0 .. B * H * T * T - 1),
                         row + (0 .. 2 * T - 1), att + (0 .. B * H * T * T - 1),
                         ctx + (0 .. B * T * d - 1)));
    assigns y[0 .. B * T * d - 1], qkv[0 .. B * T * 3 * d - 1], att[0 .. B * H * T * T - 1],
            ctx[0 .. B * T * d - 1], row[0 .. 2 * T - 1];
*/
void attention_forward_f32(float *y, float *qkv, float *att, float *ctx, float *row, const float *x,
                           const float *in_w, const float *in_b, const float *out_w,
                           const float *out_b, const float *kpm, const float *amask, float p, int B,
                           int T, int d, int H, int causal);
/*@ requires dims: attn_dims(B, T, d, H);
    requires p_range: 0.0 <= p < 1.0;
    requires valid_x: \valid_read(x + (0 .. B * T * d - 1));
    requires valid_in_w: \valid_read(in_w + (0 .. 3 * d * d - 1));
    requires valid_in_b: in_b == \null || \valid_read(in_b + (0 .. 3 * d - 1));
    requires valid_out_w: \valid_read(out_w + (0 .. d * d - 1));
    requires valid_out_b: out_b == \null || \valid_read(out_b + (0 .. d - 1));
    requires valid_kpm: kpm == \null || \valid_read(kpm + (0 .. B * T - 1));
    requires valid_amask: amask == \null || \valid_read(amask + (0 .. B * H * T * T - 1));
    requires valid_y: \valid(y + (0 .. B * T * d - 1));
    requires valid_qkv: \valid(qkv + (0 .. B * T * 3 * d - 1));
    requires valid_att: \valid(att + (0 .. B * H * T * T - 1));
    requires valid_ctx: \valid(ctx + (0 .. B * T * d - 1));
    requires valid_row: \valid(row + (0 .. 2 * T - 1));
    requires sep_out: \separated(y + (0 .. B * T * d - 1), qkv + (0 .. B * T * 3 * d - 1),
                                 att + (0 .. B * H * T * T - 1), ctx + (0 .. B * T * d - 1),
                                 row + (0 .. 2 * T - 1));
    requires sep_in: \separated(y + (0 .. B * T * d - 1), qkv + (0 .. B * T * 3 * d - 1),
                                att + (0 .. B * H * T * T - 1), ctx + (0 .. B * T * d - 1),
                                row + (0 .. 2 * T - 1), x + (0 .. B * T * d - 1),
                                in_w + (0 .. 3 * d * d - 1), out_w + (0 .. d * d - 1));
    requires sep_opt: (in_b == \null || \separated(in_b + (0 .. 3 * d - 1), y + (0 .. B * T * d - 1),
                         qkv + (0 .. B * T * 3 * d - 1), att + (0 .. B * H * T * T - 1),
                         ctx + (0 .. B * T * d - 1), row + (0 .. 2 * T - 1))) &&
                      (out_b == \null || \separated(out_b + (0 .. d - 1), y + (0 .. B * T * d - 1),
                         qkv + (0 .. B * T * 3 * d - 1), att + (0 .. B * H * T * T - 1),
                         ctx + (0 .. B * T * d - 1), row + (0 .. 2 * T - 1))) &&
                      (kpm == \null || \separated(kpm + (0 .. B * T - 1), row + (0 .. 2 * T - 1),
                         att + (0 .. B * H * T * T - 1), ctx + (0 .. B * T * d - 1))) &&
                      (amask == \null || \separated(amask + (0 .. B * H * T * T - 1),
                         row + (0 .. 2 * T - 1), att + (0 .. B * H * T * T - 1),
                         ctx + (0 .. B * T * d - 1)));
    assigns y[0 .. B * T * d - 1], qkv[0 .. B * T * 3 * d - 1], att[0 .. B * H * T * T - 1],
            ctx[0 .. B * T * d - 1], row[0 .. 2 * T - 1];
*/
void attention_forward_f64(double *y, double *qkv, double *att, double *ctx, double *row,
                           const double *x, const double *in_w, const double *in_b,
                           const double *out_w, const double *out_b, const double *kpm,
                           const double *amask, double p, int B, int T, int d, int H, int causal);

/* attention_backward_*'s contract (also the block's wrapper's, ref/block.c) */
#define ATTN_BWD_CONTRACT                                                                                    \
    requires dims: attn_dims(B, T, d, H);                                                                    \
    requires p_range: 0.0 <= p < 1.0;                                                                        \
    requires valid_dy: \valid_read(dy + (0 .. B * T * d - 1));                                               \
    requires valid_x: \valid_read(x + (0 .. B * T * d - 1));                                                 \
    requires valid_in_w: \valid_read(in_w + (0 .. 3 * d * d - 1));                                           \
    requires valid_out_w: \valid_read(out_w + (0 .. d * d - 1));                                             \
    requires valid_qkv: \valid_read(qkv + (0 .. B * T * 3 * d - 1));                                         \
    requires valid_att: \valid_read(att + (0 .. B * H * T * T - 1));                                         \
    requires valid_ctx: \valid_read(ctx + (0 .. B * T * d - 1));                                             \
    requires valid_amask: amask == \null || \valid_read(amask + (0 .. B * H * T * T - 1));                   \
    requires valid_dx: \valid(dx + (0 .. B * T * d - 1));                                                    \
    requires valid_din_w: \valid(din_w + (0 .. 3 * d * d - 1));                                              \
    requires valid_din_b: din_b == \null || \valid(din_b + (0 .. 3 * d - 1));                                \
    requires valid_dout_w: \valid(dout_w + (0 .. d * d - 1));                                                \
    requires valid_dout_b: dout_b == \null || \valid(dout_b + (0 .. d - 1));                                 \
    requires valid_dqkv: \valid(dqkv + (0 .. B * T * 3 * d - 1));                                            \
    requires valid_dctx: \valid(dctx + (0 .. B * T * d - 1));                                                \
    requires valid_row: \valid(row + (0 .. 2 * T - 1));                                                      \
    requires sep_out: \separated(dx + (0 .. B * T * d - 1), din_w + (0 .. 3 * d * d - 1),                    \
                                 dout_w + (0 .. d * d - 1), dqkv + (0 .. B * T * 3 * d - 1),                 \
                                 dctx + (0 .. B * T * d - 1), row + (0 .. 2 * T - 1));                       \
    requires sep_in: \separated(dx + (0 .. B * T * d - 1), din_w + (0 .. 3 * d * d - 1),                     \
                                dout_w + (0 .. d * d - 1), dqkv + (0 .. B * T * 3 * d - 1),                  \
                                dctx + (0 .. B * T * d - 1), row + (0 .. 2 * T - 1),                         \
                                dy + (0 .. B * T * d - 1), x + (0 .. B * T * d - 1),                         \
                                in_w + (0 .. 3 * d * d - 1), out_w + (0 .. d * d - 1),                       \
                                qkv + (0 .. B * T * 3 * d - 1), att + (0 .. B * H * T * T - 1),              \
                                ctx + (0 .. B * T * d - 1));                                                 \
    requires sep_opt: (din_b == \null || \separated(din_b + (0 .. 3 * d - 1), dx + (0 .. B * T * d - 1),     \
                         din_w + (0 .. 3 * d * d - 1), dout_w + (0 .. d * d - 1),                            \
                         dqkv + (0 .. B * T * 3 * d - 1), dctx + (0 .. B * T * d - 1),                       \
                         row + (0 .. 2 * T - 1), x + (0 .. B * T * d - 1), in_w + (0 .. 3 * d * d - 1))) &&  \
                      (dout_b == \null || \separated(dout_b + (0 .. d - 1), dx + (0 .. B * T * d - 1),       \
                         din_w + (0 .. 3 * d * d - 1), dout_w + (0 .. d * d - 1),                            \
                         dqkv + (0 .. B * T * 3 * d - 1), dctx + (0 .. B * T * d - 1),                       \
                         row + (0 .. 2 * T - 1), dy + (0 .. B * T * d - 1), ctx + (0 .. B * T * d - 1),      \
                         out_w + (0 .. d * d - 1))) &&                                                       \
                      (din_b == \null || dout_b == \null ||                                                  \
                         \separated(din_b + (0 .. 3 * d - 1), dout_b + (0 .. d - 1))) &&                     \
                      (amask == \null || \separated(amask + (0 .. B * H * T * T - 1),                        \
                         row + (0 .. 2 * T - 1), dqkv + (0 .. B * T * 3 * d - 1),                            \
                         dctx + (0 .. B * T * d - 1)));                                                      \
    assigns dx[0 .. B * T * d - 1], din_w[0 .. 3 * d * d - 1], din_b[0 .. 3 * d - 1],                        \
            dout_w[0 .. d * d - 1], dout_b[0 .. d - 1], dqkv[0 .. B * T * 3 * d - 1],                        \
            dctx[0 .. B * T * d - 1], row[0 .. 2 * T - 1];

/*@ ATTN_BWD_CONTRACT */
void attention_backward_f32(float *dx, float *din_w, float *din_b, float *dout_w, float *dout_b,
                            float *dqkv, float *dctx, float *row, const float *dy, const float *x,
                            const float *in_w, const float *out_w, const float *qkv,
                            const float *att, const float *ctx, const float *amask, float p, int B,
                            int T, int d, int H);
/*@ ATTN_BWD_CONTRACT */
void attention_backward_f64(double *dx, double *din_w, double *din_b, double *dout_w,
                            double *dout_b, double *dqkv, double *dctx, double *row,
                            const double *dy, const double *x, const double *in_w,
                            const double *out_w, const double *qkv, const double *att,
                            const double *ctx, const double *amask, double p, int B, int T, int d,
                            int H);

#endif
