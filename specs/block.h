/* One Transformer encoder block, torch.nn.TransformerEncoderLayer(batch_first=True), forward and
 * backward, in float and double: contracts of the kernels in ref/block.c, composed from the proved
 * kernels of specs/layernorm.h, specs/attention.h, specs/ffn.h, specs/residual.h, specs/dropout.h.
 *
 *   pre-LN  (post == 0, norm_first=True):   h = x + drop1(attn(norm1(x)))    y = h + drop2(ffn(norm2(h)))
 *   post-LN (post == 1, norm_first=False):  h = norm1(x + drop1(attn(x)))    y = norm2(h + drop2(ffn(h)))
 *
 * attn: specs/attention.h (MultiheadAttention on (v, v, v), key_padding_mask kpm (nonzero = key
 * ignored), causal, its own dropout attn_dropout.mask on the weights); ffn: specs/ffn.h
 * (linear2(dropout(act(linear1(v)))), dropout.mask); drop1 / drop2: dropout1.mask / dropout2.mask,
 * v·mask/(1 - p) (specs/dropout.h); norm: LayerNorm, biased variance, eps inside the sqrt
 * (specs/layernorm.h).  A NULL mask is eval mode (no dropout there).  The real model and the
 * certified twin: ref/block_mpfr.h; the tolerance: specs/error-analysis-block.md, ref/block_bound.c.
 *
 * Memory, llm.c style: one block of parameters, one of activation caches, one of gradients (the
 * parameters' layout), one of scratch; the caller allocates them (block_*_size below).
 * Shapes (row-major; B batch, T seq, d width, H heads (d % H == 0), ff hidden, rows = B·T):
 *   x, y, dy, dx [rows, d]; kpm [B, T] or NULL; masks (0/1, or NULL): amask [B, H, T, T]
 *   (attn_dropout.mask), dmask [rows, ff] (dropout.mask), d1mask, d2mask [rows, d] (dropout1.mask,
 *   dropout2.mask).
 *   params, in this order (PyTorch's state_dict names):
 *     in_w [3d, d] self_attn.in_proj_weight   in_b [3d] self_attn.in_proj_bias
 *     out_w [d, d] self_attn.out_proj.weight  out_b [d] self_attn.out_proj.bias
 *     w1 [ff, d] linear1.weight  b1 [ff] linear1.bias  w2 [d, ff] linear2.weight  b2 [d] linear2.bias
 *     g1, b1n, g2, b2n [d] norm1.weight, norm1.bias, norm2.weight, norm2.bias
 *   grads: the same layout (d.<name>).
 *   acts (the forward fills them, the backward reads them), in this order:
 *     ln1 [rows, d]   norm1's output (pre: norm1(x), the attention's input; post: norm1(s1) = h)
 *     mean1, rstd1 [rows]   norm1's statistics
 *     qkv [rows, 3d], ctx [rows, d]   the attention's caches (specs/attention.h; att is last)
 *     row [2T]        the attention's scratch
 *     a [rows, d]     the attention's output after dropout1
 *     s1 [rows, d]    x + a (pre: this is h)
 *     ln2 [rows, d]   pre: norm2(h), the FFN's input (unused by post-LN: there norm2's output is y)
 *     mean2, rstd2 [rows]   norm2's statistics
 *     z, hh [rows, ff]   the FFN's caches (pre-activation; hidden after its dropout)
 *     f [rows, d]     the FFN's output after dropout2
 *     s2 [rows, d]    post: h + f, norm2's input (unused by pre-LN: there y = h + f)
 *     att [B, H, T, T]   the attention's softmax cache
 *   scratch (backward, overwritten): ga, gb [rows, d], dqkv [rows, 3d], dctx [rows, d],
 *     dh [rows, ff], row [2T].
 *
 * Gradients of sum(dy ⊙ y): dx is OVERWRITTEN (a stack passes it on as the previous block's dy);
 * the parameter gradients are ACCUMULATED (+=), as specs/linear.h, specs/ffn.h,
 * specs/attention.h and specs/layernorm.h's dgamma / dbeta do (llm.c's convention: zero them before
 * the first call).  The backward:
 *   pre-LN:  gf = drop2ᵀ(dy); d(ln2) = ffnᵀ(gf); dh = norm2ᵀ(d(ln2)) + dy        (identity path)
 *            ga = drop1ᵀ(dh); d(ln1) = attnᵀ(ga); dx = norm1ᵀ(d(ln1)) + dh      (identity path)
 *   post-LN: ds2 = norm2ᵀ(dy) at s2; dh = ffnᵀ(drop2ᵀ(ds2)) + ds2
 *            ds1 = norm1ᵀ(dh) at s1; dx = attnᵀ(drop1ᵀ(ds1)) + ds1
 *
 * Floating-point order: each part's (its spec header); the residual adds and dropouts one rounding
 * per element.  Compile with -ffp-contract=off.
 *
 * Contracts (ACSL, `make prove-block`, proofs/block.sh), with -wp-rte -wp-model real, using the
 * callees' contracts (each proved by its own target: specs/attention.h, specs/ffn.h, ...): no
 * runtime error (index arithmetic included), every callee's precondition (validity, the
 * separation of the buffers it writes from those it reads, eps > 0, 0 <= p < 1, the int sizes),
 * `assigns` (only y / dx, the caches, the gradients and the scratch), termination.
 * The forward's wiring over the reals (ln2 = norm2(s1), y = s1 + f pre-LN; s2 = ln1 + f,
 * y = norm2(s2) post-LN; f = drop2(ffn(u)); in the head s1 = x + a) is proved in a rows run
 * (specs/block_rows.h; the helpers' contracts below).  NOT stated: a as a formula of the attention's
 * input, s1 = x + a and post-LN's ln1 = norm1(s1) at the block's return (proved in the helpers
 * only), nor any backward value.
 */
#ifndef RESNORM_BLOCK_H
#define RESNORM_BLOCK_H

#include <limits.h>

#include "attention.h"
#include "dropout.h"
#include "ffn.h"
#include "layernorm.h"
#include "residual.h"

/*@ logic integer block_params_size(integer d, integer ff) = 4 * (d * d) + 2 * (d * ff) + 9 * d + ff;
    logic integer block_acts_size(integer B, integer T, integer d, integer H, integer ff) =
      7 * (B * T * d) + 4 * (B * T) + B * T * 3 * d + B * H * T * T + 2 * (B * T * ff) + 2 * T;
    logic integer block_scratch_size(integer B, integer T, integer d, integer ff) =
      3 * (B * T * d) + B * T * 3 * d + B * T * ff + 2 * T;
*/
/* The same sizes in elements, for the caller's allocation. */
static inline long block_params_size(long d, long ff) { return 4 * d * d + 2 * d * ff + 9 * d + ff; }
static inline long block_acts_size(long B, long T, long d, long H, long ff)
{
    return 7 * B * T * d + 4 * B * T + 3 * B * T * d + B * H * T * T + 2 * B * T * ff + 2 * T;
}
static inline long block_scratch_size(long B, long T, long d, long ff)
{
    return 6 * B * T * d + B * T * ff + 2 * T;
}

/* ---- the contracts, written once for float and double (macros expanded inside the ACSL by
   Frama-C's annotation preprocessing, as specs/fperr.h's LN_EXACT) ---- */

/* Sizes: the attention's (attn_dims), the FFN's products, the kernel's intermediate products and
   the blocks fit an int; the products are >= 1.  Most of this is implied by attn_dims and B, T,
   d, H, ff >= 1, and restated for the solvers (attn_dims is opaque to Qed, and the products are
   nonlinear atoms to the SMT solvers). */
#define BLK_DIMS                                                                                   \
    attn_dims(B, T, d, H) && B >= 1 && T >= 1 && d >= 1 && H >= 1 && ff >= 1 &&                  \
    B * T * ff <= INT_MAX && d * ff <= INT_MAX && d * d <= INT_MAX && 3 * d <= INT_MAX &&          \
    3 * d * d <= INT_MAX && B * T * 3 <= INT_MAX && B * T * 3 * d <= INT_MAX && 2 * T <= INT_MAX && \
    B * H <= INT_MAX && B * H * T <= INT_MAX && B * H * T * T <= INT_MAX && B * T * d <= INT_MAX && \
    B * T >= 1 && B * T * d >= 1 && B * T * 3 * d >= 1 && B * H * T * T >= 1 && B * T * ff >= 1 && \
    B * H >= 1 && B * H * T >= 1 &&                                                                \
    d * d >= 1 && d * ff >= 1 &&                                                                   \
    block_params_size(d, ff) <= INT_MAX && block_acts_size(B, T, d, H, ff) <= INT_MAX &&          \
    block_scratch_size(B, T, d, ff) <= INT_MAX
#define BLK_RD(v) (v + (0 .. B * T * d - 1))
#define BLK_PAR(v) (v + (0 .. block_params_size(d, ff) - 1))
#define BLK_ACT(v) (v + (0 .. block_acts_size(B, T, d, H, ff) - 1))
#define BLK_WS(v) (v + (0 .. block_scratch_size(B, T, d, ff) - 1))
#define BLK_ATT(v) (v + (0 .. B * H * T * T - 1))
#define BLK_RF(v) (v + (0 .. B * T * ff - 1))
#define BLK_KPM(v) (v + (0 .. B * T - 1))
/* The dropout masks: readable, or NULL; each separated from the ranges written. */
#define BLK_MASKS_READ                                                                             \
    (amask == \null || \valid_read(BLK_ATT(amask))) && (dmask == \null || \valid_read(BLK_RF(dmask))) && \
    (d1mask == \null || \valid_read(BLK_RD(d1mask))) && (d2mask == \null || \valid_read(BLK_RD(d2mask)))
#define BLK_MASKS_SEP(...)                                                                         \
    (amask == \null || \separated(BLK_ATT(amask), __VA_ARGS__)) &&                               \
    (dmask == \null || \separated(BLK_RF(dmask), __VA_ARGS__)) &&                                \
    (d1mask == \null || \separated(BLK_RD(d1mask), __VA_ARGS__)) &&                              \
    (d2mask == \null || \separated(BLK_RD(d2mask), __VA_ARGS__))

#define BLK_FWD_CONTRACT                                                                           \
    requires dims: BLK_DIMS;                                                                       \
    requires p_range: 0.0 <= p < 1.0;                                                              \
    requires eps_pos: eps > 0;                                                                     \
    requires act_ok: ffn_act_ok(act);                                                              \
    requires valid_in: \valid_read(BLK_RD(x)) && \valid_read(BLK_PAR(params));                     \
    requires valid_masks: BLK_MASKS_READ && (kpm == \null || \valid_read(BLK_KPM(kpm)));           \
    requires valid_out: \valid(BLK_RD(y)) && \valid(BLK_ACT(acts));                                \
    requires sep: \separated(BLK_RD(y), BLK_ACT(acts), BLK_RD(x), BLK_PAR(params));               \
    requires sep_masks: BLK_MASKS_SEP(BLK_RD(y), BLK_ACT(acts)) &&                                 \
                        (kpm == \null || \separated(BLK_KPM(kpm), BLK_RD(y), BLK_ACT(acts)));      \
    assigns *BLK_RD(y), *BLK_ACT(acts);

#define BLK_BWD_CONTRACT                                                                           \
    requires dims: BLK_DIMS;                                                                       \
    requires p_range: 0.0 <= p < 1.0;                                                              \
    requires act_ok: ffn_act_ok(act);                                                              \
    requires valid_in: \valid_read(BLK_RD(dy)) && \valid_read(BLK_RD(x)) &&                        \
                       \valid_read(BLK_PAR(params)) && \valid_read(BLK_ACT(acts));                 \
    requires valid_masks: BLK_MASKS_READ;                                                          \
    requires valid_out: \valid(BLK_RD(dx)) && \valid(BLK_PAR(grads)) && \valid(BLK_WS(ws));        \
    requires sep: \separated(BLK_RD(dx), BLK_PAR(grads), BLK_WS(ws), BLK_RD(dy), BLK_RD(x),        \
                             BLK_PAR(params), BLK_ACT(acts));                                      \
    requires sep_masks: BLK_MASKS_SEP(BLK_RD(dx), BLK_PAR(grads), BLK_WS(ws)) &&                   \
                        (d2mask == \null || \separated(BLK_RD(d2mask), BLK_RD(dy)));             \
    assigns *BLK_RD(dx), *BLK_PAR(grads), *BLK_WS(ws);

/* The forward's first sublayer (a static helper of ref/block.c): a = drop1(attn(v)), v = norm1(x)
   (pre) or x (post), s1 = x + a, into the caches (acts, the layout above); in the rows run s1_def
   (BLK_S1, BLK_A: specs/block_rows.h). */
#define BLK_HEAD_CONTRACT                                                                          \
    requires dims: BLK_DIMS;                                                                       \
    requires p_range: 0.0 <= p < 1.0;                                                              \
    requires eps_pos: eps > 0;                                                                     \
    requires valid_in: \valid_read(BLK_RD(x)) && \valid_read(BLK_PAR(params));                     \
    requires valid_masks: (amask == \null || \valid_read(BLK_ATT(amask))) &&                       \
                          (d1mask == \null || \valid_read(BLK_RD(d1mask))) &&                      \
                          (kpm == \null || \valid_read(BLK_KPM(kpm)));                             \
    requires valid_out: \valid(BLK_ACT(acts));                                                     \
    requires sep: \separated(BLK_ACT(acts), BLK_RD(x), BLK_PAR(params));                           \
    requires sep_masks: (amask == \null || \separated(BLK_ATT(amask), BLK_ACT(acts))) &&           \
                        (d1mask == \null || \separated(BLK_RD(d1mask), BLK_ACT(acts))) &&          \
                        (kpm == \null || \separated(BLK_KPM(kpm), BLK_ACT(acts)));                 \
    assigns *BLK_ACT(acts);                                                                        \
    LN_ROWS_CLAUSE(ensures s1_def: \forall integer i; 0 <= i < BLK_N ==> BLK_S1[i] == x[i] + BLK_A[i];)

/* The forward's tails (static helpers of ref/block.c; the driver calls one of them after
   s1 = x + drop1(attn(v))): everything after behind small contracts, so
   that the rows run (specs/block_rows.h) carries each fact across one small call at a time
   (proofs/README-block.md, "The forward composed").  Every buffer [rows, d] but the FFN's caches
   z, hh [rows, ff] and the norms' mean, rstd [rows].  The functional clauses (LN_ROWS_CLAUSE: the
   rows run only, over the reals, every buffer at return):
     layernorm     yv = LayerNorm(xv) with gv, bv and the statistics mv, rv: y_rows, y_pt
     ffn sublayer  f = drop2(ffn(u)):   z_rows, h_def (HF: ffn_h32 / ffn_h64, specs/ffn_rows.h), f_def
     ffn and add   f = drop2(ffn(u)), y = s1 + f (y_def)
     pre tail      ln2 = norm2(s1) (ln2_rows), then the FFN and the add with u = ln2
     post output   s2 = h + f (s2_def), y = norm2(s2) (y_rows)
     post tail     h = norm1(s1) (h_rows), f = drop2(ffn(h)), s2 = h + f, y = norm2(s2); s1 and the
                   driver's x and a (ghost parameters) as on entry (s1_kept)
   and, in block_layernorm_* and the pre tail, the kept clause (BLK_KEPT, below).  The FFN sublayer
   and the post output have none: in the post tail, whose LayerNorm step (h_rows) is proved after
   both calls, their quantified kept clauses made that step time out (53 s and 2 min, 5 December
   2026); their assigns and pointwise separation assertions carry the frames there. */
#define BLK_R(v, m) (v + (0 .. (m) - 1))
#define BLK_SUB_DIMS                                                                               \
    rows >= 1 && d >= 1 && ff >= 1 && rows * d <= INT_MAX && rows * ff <= INT_MAX && d * ff <= INT_MAX
/* what every helper that runs the FFN requires first (sizes, activation, dropout probability) */
#define BLK_SUB_REQUIRES                                                                           \
    requires dims: BLK_SUB_DIMS;                                                                   \
    requires act_ok: ffn_act_ok(act);                                                              \
    requires p_range: 0.0 <= p < 1.0;
/* the FFN's parameters w1, b1, w2, b2 and the two masks' validity */
#define BLK_FFN_READ                                                                               \
    \valid_read(BLK_R(w1, d * ff)) && \valid_read(BLK_R(b1, ff)) && \valid_read(BLK_R(w2, d * ff)) && \
    \valid_read(BLK_R(b2, d)) && (dmask == \null || \valid_read(BLK_R(dmask, rows * ff))) &&        \
    (d2mask == \null || \valid_read(BLK_R(d2mask, rows * d)))
#define BLK_FFN_IN BLK_R(w1, d * ff), BLK_R(b1, ff), BLK_R(w2, d * ff), BLK_R(b2, d)
#define BLK_FFN_OUT BLK_R(f, rows * d), BLK_R(z, rows * ff), BLK_R(hh, rows * ff)
/* outputs (a list of ranges) separated from the masks */
#define BLK_SUB_MASKS_SEP(...)                                                                     \
    (dmask == \null || \separated(BLK_R(dmask, rows * ff), __VA_ARGS__)) &&                        \
    (d2mask == \null || \separated(BLK_R(d2mask, rows * d), __VA_ARGS__))
/* the rows run's FFN clauses, over u (HF: ffn_h32 / ffn_h64) */
#define BLK_FFN_ENSURES(HF, u)                                                                     \
    LN_ROWS_CLAUSE(                                                                                \
    ensures z_rows: \forall integer r; 0 <= r < rows ==> lin_row_y{Post, Post}(z, u, w1, b1, r, d, ff); \
    ensures h_def: \forall integer i; 0 <= i < rows * ff ==> hh[i] == HF(act, z, dmask, p, i);     \
    ensures f_def: \forall integer r, j; 0 <= r < rows && 0 <= j < d ==>                           \
      f[lin_row_start(r, d) + j] ==                                                                 \
        blk_drop(blk_ffn_y(hh, w2, b2, r, j, ff), d2mask, p, lin_row_start(r, d) + j);)
/* the R rows of yv are LayerNorm of xv's rows with gamma gv, beta bv, the statistics mv, rv (all at
   label L; BLK_LN_ROWS: at return) */
#define BLK_LN_ROWS_AT(L, R, yv, mv, rv, xv, gv, bv)                                               \
    \forall integer r; 0 <= r < (R) ==> ln_row_affine{L, L}(yv, mv, rv, xv, gv, bv, r, ln_row_start(r, d), d)
#define BLK_LN_ROWS(R, yv, mv, rv, xv, gv, bv) BLK_LN_ROWS_AT(Post, R, yv, mv, rv, xv, gv, bv)
/* the same, element by element (the form a frame carries: ln_row_affine's body) */
#define BLK_LN_PT(yv, mv, rv, xv, gv, bv)                                                          \
    \forall integer r, i; 0 <= r < rows && 0 <= i < d ==>                                           \
      yv[ln_row_start(r, d) + i] == ln_affine(xv[ln_row_start(r, d) + i], mv[r], rv[r], gv[i], bv[i])

/* kept (the rows run): every location of type FT (float or double) outside the ranges given is as on
   entry -- the assigns clause's frame, restated as a postcondition that the caller instantiates at
   each buffer it carries across the call (the driver: s1, a, x across the pre tail, for s1_pre).
   Through WP's frame of the assigns clause alone, the driver's solvers time out.  The post tail
   states its frame for s1, x and a directly instead (s1_kept): with a kept clause over its ten
   output ranges, the driver's s1 = x + a step took 42 s. */
#define BLK_KEPT(FT, ...)                                                                          \
    LN_ROWS_CLAUSE(ensures kept: \forall FT *q; \separated(q, __VA_ARGS__) ==> *q == \old(*q);)
/* yv = LayerNorm(xv) (gv, bv), its statistics in mv, rv: LayerNorm's contract, its rows at return */
#define BLK_LN_CONTRACT(FT)                                                                        \
    requires dims: rows >= 1 && d >= 1 && rows * d <= INT_MAX;                                     \
    requires eps_pos: eps > 0;                                                                     \
    requires valid_in: \valid_read(BLK_R(xv, rows * d)) && \valid_read(BLK_R(gv, d)) &&            \
                       \valid_read(BLK_R(bv, d));                                                  \
    requires valid_out: \valid(BLK_R(yv, rows * d)) && \valid(BLK_R(mv, rows)) && \valid(BLK_R(rv, rows)); \
    requires sep: \separated(BLK_R(yv, rows * d), BLK_R(mv, rows), BLK_R(rv, rows),                 \
                             BLK_R(xv, rows * d), BLK_R(gv, d), BLK_R(bv, d));                     \
    assigns *BLK_R(yv, rows * d), *BLK_R(mv, rows), *BLK_R(rv, rows);                              \
    LN_ROWS_CLAUSE(ensures y_rows: BLK_LN_ROWS(rows, yv, mv, rv, xv, gv, bv);)                    \
    LN_ROWS_CLAUSE(ensures y_pt: BLK_LN_PT(yv, mv, rv, xv, gv, bv);)                            \
    BLK_KEPT(FT, BLK_R(yv, rows * d), BLK_R(mv, rows), BLK_R(rv, rows))

/* The backward rows pass only (-DRESNORM_WP_ROWS -DRESNORM_WP_BWD=32/64, specs/block_rows.h): the
   clauses through which the block's backward carries the FFN's parameter gradients (issue 9). */
#if defined(RESNORM_WP_ROWS) && defined(RESNORM_WP_BWD)
#define BLK_BWD_CLAUSE(...) __VA_ARGS__
#else
#define BLK_BWD_CLAUSE(...)
#endif
/* ffn_kept (the backward rows pass): each gr[k], k in [4d² + 4d, o), separated from the outputs
   OUT is unchanged.  The FFN's parameter gradients (d.linear1.*, d.linear2.*) are
   gr[4d² + 4d .. o - 1] with o the offset of d.norm1 (pre-LN) and gr[4d² + 4d .. o - 2d - 1] with
   o the offset of d.norm2 (post-LN, whose norm1 backward writes d.norm1 in between): the caller
   carries them across the call (pointwise, so that the clause holds for the part of the range the
   call does not write). */
#define BLK_FFN_KEPT(...)                                                                          \
    BLK_BWD_CLAUSE(ensures ffn_kept: \forall integer k; 4 * (d * d) + 4 * d <= k < o ==>            \
      \separated(gr + k, __VA_ARGS__) ==> gr[k] == \old(gr[k]);)

/* A LayerNorm backward with the norm's contract but none of its rows clauses (ref/block.c's
   block_layernorm_backward_*) and, in the rows run, the ghost frame of gr[o .. o + 2d - 1] (the
   driver's grads and the offset of the other norm's gradients): post-LN's backward calls norm1's
   through it, pre-LN's norm2's, so that the clauses (quantified over both memory states) do not sit
   in the context of the driver's later frame steps (with them, a one-call frame of d.norm2 timed out
   at 90 s; proofs/README-block.md "The backward"). */
#define BLK_LN_BWD_CONTRACT                                                                        \
    requires dims: rows >= 1 && d >= 1 && rows * d <= INT_MAX;                                     \
    requires valid_in: \valid_read(BLK_R(dyv, rows * d)) && \valid_read(BLK_R(xv, rows * d)) &&    \
                       \valid_read(BLK_R(gv, d)) && \valid_read(BLK_R(mv, rows)) &&               \
                       \valid_read(BLK_R(rv, rows));                                              \
    requires valid_out: \valid(BLK_R(dxv, rows * d)) && \valid(BLK_R(dgv, d)) && \valid(BLK_R(dbv, d)); \
    requires sep_dy: \separated(BLK_R(dxv, rows * d), BLK_R(dgv, d), BLK_R(dbv, d), BLK_R(dyv, rows * d)); \
    requires sep_x: \separated(BLK_R(dxv, rows * d), BLK_R(dgv, d), BLK_R(dbv, d), BLK_R(xv, rows * d)); \
    requires sep_g: \separated(BLK_R(dxv, rows * d), BLK_R(dgv, d), BLK_R(dbv, d), BLK_R(gv, d));  \
    requires sep_stats: \separated(BLK_R(dxv, rows * d), BLK_R(dgv, d), BLK_R(dbv, d),              \
                                    BLK_R(mv, rows), BLK_R(rv, rows));                             \
    LN_ROWS_CLAUSE(requires sep_tail: \forall integer k; o <= k < o + 2 * d ==>                   \
      \separated(gr + k, BLK_R(dxv, rows * d), BLK_R(dgv, d), BLK_R(dbv, d));)                     \
    assigns *BLK_R(dxv, rows * d), *BLK_R(dgv, d), *BLK_R(dbv, d);                                \
    LN_ROWS_CLAUSE(ensures tail_kept: \forall integer k; o <= k < o + 2 * d ==> gr[k] == \old(gr[k]);) \
    BLK_FFN_KEPT(BLK_R(dxv, rows * d), BLK_R(dgv, d), BLK_R(dbv, d))

/* The FFN's backward behind its own contract (FFN_BWD_CONTRACT, specs/ffn.h) plus, in the rows run,
   the frame of gr[o .. o + 2d - 1], as the attention's below. */
#define BLK_FFN_BWD_OUT                                                                            \
    dx + (0 .. rows * d - 1), dw1 + (0 .. d * ff - 1), db1 + (0 .. ff - 1), dw2 + (0 .. d * ff - 1), \
    db2 + (0 .. d - 1), dh + (0 .. rows * ff - 1)
#define BLK_FFN_BWD_CONTRACT                                                                       \
    LN_ROWS_CLAUSE(requires sep_tail: \forall integer k; o <= k < o + 2 * d ==>                   \
      \separated(gr + k, BLK_FFN_BWD_OUT);)                                                       \
    BLK_BWD_CLAUSE(requires sep_mask_db: mask == \null ||                                         \
      ((db1 == \null || \separated(mask + (0 .. rows * ff - 1), db1 + (0 .. ff - 1))) &&            \
       (db2 == \null || \separated(mask + (0 .. rows * ff - 1), db2 + (0 .. d - 1))));)             \
    FFN_BWD_CONTRACT                                                                               \
    LN_ROWS_CLAUSE(ensures tail_kept: \forall integer k; o <= k < o + 2 * d ==> gr[k] == \old(gr[k]);) \
    BLK_BWD_CLAUSE(ensures ffn_db2: db2 != \null ==> \forall integer j; 0 <= j < d ==>              \
      db2[j] == \old(db2[j]) + lin_csum{Pre}(dy, j, d, rows);)                                     \
    BLK_BWD_CLAUSE(ensures ffn_dw2: \forall integer j, k; 0 <= j < d && 0 <= k < ff ==>             \
      dw2[lin_col_idx(j, ff, k)] == \old(dw2[lin_col_idx(j, ff, k)]) + lin_dw_sum{Pre}(dy, h, j, k, ff, d, rows);) \
    BLK_BWD_CLAUSE(ensures ffn_dw1: \forall integer j, k; 0 <= j < ff && 0 <= k < d ==>            \
      dw1[lin_col_idx(j, d, k)] == \old(dw1[lin_col_idx(j, d, k)]) + lin_dw_sum(dh, x, j, k, d, ff, rows);) \
    BLK_BWD_CLAUSE(ensures ffn_db1: db1 != \null ==> \forall integer j; 0 <= j < ff ==>             \
      db1[j] == \old(db1[j]) + lin_csum(dh, j, ff, rows);)

/* LayerNorm's backward then the residual add dx += its dx (ref/block.c's block_ln1_backward_add_*):
   pre-LN's last two steps.  The rows clause (dgb_ret) states the norm's parameter gradients with its
   sums read at return, where the driver's clause needs them; inside, one call after the norm's, the
   frame of its inputs is small (blk_dg_sum_frame, blk_db_sum_frame: specs/block_rows.h). */
#define BLK_LN1_BWD_ADD_CONTRACT                                                                   \
    requires dims: rows >= 1 && d >= 1 && rows * d <= INT_MAX;                                     \
    requires valid_in: \valid_read(BLK_R(gb, rows * d)) && \valid_read(BLK_R(xv, rows * d)) &&    \
                       \valid_read(BLK_R(gv, d)) && \valid_read(BLK_R(mv, rows)) &&               \
                       \valid_read(BLK_R(rv, rows));                                              \
    requires valid_out: \valid(BLK_R(dx, rows * d)) && \valid(BLK_R(ga, rows * d)) &&              \
                        \valid(BLK_R(dgv, d)) && \valid(BLK_R(dbv, d));                            \
    requires sep_out: \separated(BLK_R(dx, rows * d), BLK_R(ga, rows * d), BLK_R(dgv, d), BLK_R(dbv, d)); \
    requires sep_dy: \separated(BLK_R(dx, rows * d), BLK_R(ga, rows * d), BLK_R(dgv, d), BLK_R(dbv, d), \
                                BLK_R(gb, rows * d));                                              \
    requires sep_x: \separated(BLK_R(dx, rows * d), BLK_R(ga, rows * d), BLK_R(dgv, d), BLK_R(dbv, d), \
                               BLK_R(xv, rows * d));                                               \
    requires sep_g: \separated(BLK_R(dx, rows * d), BLK_R(ga, rows * d), BLK_R(dgv, d), BLK_R(dbv, d), \
                               BLK_R(gv, d));                                                      \
    requires sep_stats: \separated(BLK_R(dx, rows * d), BLK_R(ga, rows * d), BLK_R(dgv, d), BLK_R(dbv, d), \
                                   BLK_R(mv, rows), BLK_R(rv, rows));                              \
    assigns *BLK_R(dx, rows * d), *BLK_R(ga, rows * d), *BLK_R(dgv, d), *BLK_R(dbv, d);             \
    LN_ROWS_CLAUSE(ensures dgb_ret: \forall integer i; 0 <= i < d ==>                              \
      dgv[i] == \old(dgv[i]) + ln_dg_sum{Post}(gb, xv, mv, rv, i, d, rows) &&                       \
      dbv[i] == \old(dbv[i]) + ln_db_sum{Post}(gb, i, d, rows);)
/* bwd_kept (the backward rows pass): every location of type FT outside its outputs is as on entry
   (BLK_KEPT's form): the driver carries the FFN's parameter gradients across pre-LN's last step. */
#define BLK_LN1_KEPT(FT)                                                                           \
    BLK_BWD_CLAUSE(ensures bwd_kept: \forall FT *q; \separated(q, BLK_R(dx, rows * d),              \
      BLK_R(ga, rows * d), BLK_R(dgv, d), BLK_R(dbv, d)) ==> *q == \old(*q);)

/* The attention's backward behind its own contract plus, in the rows run, the frame of
   gr[o .. o + 2d - 1] (ghost parameters: the driver's grads and the offset of one norm's
   gradients), so that the driver's frame step through it is one instantiation (ref/block.c, block_attention_backward_*). */
#define BLK_ATT_BWD_OUT                                                                            \
    dx + (0 .. B * T * d - 1), din_w + (0 .. 3 * d * d - 1), din_b + (0 .. 3 * d - 1),             \
    dout_w + (0 .. d * d - 1), dout_b + (0 .. d - 1), dqkv + (0 .. B * T * 3 * d - 1),             \
    dctx + (0 .. B * T * d - 1), row + (0 .. 2 * T - 1)
#define BLK_ATT_BWD_CONTRACT                                                                       \
    LN_ROWS_CLAUSE(requires sep_tail: \forall integer k; o <= k < o + 2 * d ==>                   \
      \separated(gr + k, BLK_ATT_BWD_OUT);)                                                       \
    ATTN_BWD_CONTRACT                                                                              \
    LN_ROWS_CLAUSE(ensures tail_kept: \forall integer k; o <= k < o + 2 * d ==> gr[k] == \old(gr[k]);) \
    BLK_FFN_KEPT(BLK_ATT_BWD_OUT)

#define BLK_FFN_SUB_CONTRACT(HF, FT)                                                               \
    BLK_SUB_REQUIRES                                                                               \
    requires valid_in: \valid_read(BLK_R(u, rows * d)) && BLK_FFN_READ;                            \
    requires valid_out: \valid(BLK_R(f, rows * d)) && \valid(BLK_R(z, rows * ff)) &&               \
                        \valid(BLK_R(hh, rows * ff));                                              \
    requires sep: \separated(BLK_FFN_OUT, BLK_R(u, rows * d), BLK_FFN_IN);                          \
    requires sep_masks: BLK_SUB_MASKS_SEP(BLK_FFN_OUT);                                            \
    assigns *BLK_R(f, rows * d), *BLK_R(z, rows * ff), *BLK_R(hh, rows * ff);                      \
    BLK_FFN_ENSURES(HF, u)

#define BLK_FFN_ADD_OUT BLK_R(y, rows * d), BLK_FFN_OUT
#define BLK_FFN_ADD_CONTRACT(HF)                                                                   \
    BLK_SUB_REQUIRES                                                                               \
    requires valid_in: \valid_read(BLK_R(u, rows * d)) && \valid_read(BLK_R(s1, rows * d)) &&      \
                       BLK_FFN_READ;                                                               \
    requires valid_out: \valid(BLK_R(y, rows * d)) && \valid(BLK_R(f, rows * d)) &&                \
                        \valid(BLK_R(z, rows * ff)) && \valid(BLK_R(hh, rows * ff));              \
    requires sep: \separated(BLK_FFN_ADD_OUT, BLK_R(u, rows * d), BLK_R(s1, rows * d), BLK_FFN_IN); \
    requires sep_masks: BLK_SUB_MASKS_SEP(BLK_FFN_ADD_OUT);                                        \
    assigns *BLK_R(y, rows * d), *BLK_R(f, rows * d), *BLK_R(z, rows * ff), *BLK_R(hh, rows * ff); \
    BLK_FFN_ENSURES(HF, u)                                                                         \
    LN_ROWS_CLAUSE(ensures y_def: \forall integer i; 0 <= i < rows * d ==> y[i] == s1[i] + f[i];)

#define BLK_TAIL_PRE_OUT                                                                           \
    BLK_R(y, rows * d), BLK_R(ln2, rows * d), BLK_R(mean2, rows), BLK_R(rstd2, rows), BLK_FFN_OUT
#define BLK_TAIL_PRE_CONTRACT(HF, FT)                                                              \
    BLK_SUB_REQUIRES                                                                               \
    requires eps_pos: eps > 0;                                                                     \
    requires valid_in: \valid_read(BLK_R(s1, rows * d)) && \valid_read(BLK_R(g2, d)) &&            \
                       \valid_read(BLK_R(b2n, d)) && BLK_FFN_READ;                                 \
    requires valid_out: \valid(BLK_R(y, rows * d)) && \valid(BLK_R(ln2, rows * d)) &&              \
                        \valid(BLK_R(mean2, rows)) && \valid(BLK_R(rstd2, rows)) &&                \
                        \valid(BLK_R(f, rows * d)) && \valid(BLK_R(z, rows * ff)) &&               \
                        \valid(BLK_R(hh, rows * ff));                                              \
    requires sep: \separated(BLK_TAIL_PRE_OUT, BLK_R(s1, rows * d), BLK_R(g2, d), BLK_R(b2n, d),    \
                             BLK_FFN_IN);                                                          \
    requires sep_masks: BLK_SUB_MASKS_SEP(BLK_TAIL_PRE_OUT);                                       \
    assigns *BLK_R(y, rows * d), *BLK_R(ln2, rows * d), *BLK_R(mean2, rows), *BLK_R(rstd2, rows),  \
            *BLK_R(f, rows * d), *BLK_R(z, rows * ff), *BLK_R(hh, rows * ff);                      \
    LN_ROWS_CLAUSE(ensures ln2_rows: BLK_LN_ROWS(rows, ln2, mean2, rstd2, s1, g2, b2n);)                 \
    BLK_FFN_ENSURES(HF, ln2)                                                                       \
    LN_ROWS_CLAUSE(ensures y_def: \forall integer i; 0 <= i < rows * d ==> y[i] == s1[i] + f[i];)  \
    BLK_KEPT(FT, BLK_TAIL_PRE_OUT)

#define BLK_OUT_POST_OUT BLK_R(y, rows * d), BLK_R(s2, rows * d), BLK_R(mean2, rows), BLK_R(rstd2, rows)
#define BLK_OUT_POST_CONTRACT(FT)                                                                  \
    requires dims: rows >= 1 && d >= 1 && rows * d <= INT_MAX;                                     \
    requires eps_pos: eps > 0;                                                                     \
    requires valid_in: \valid_read(BLK_R(h, rows * d)) && \valid_read(BLK_R(f, rows * d)) &&       \
                       \valid_read(BLK_R(g2, d)) && \valid_read(BLK_R(b2n, d));                    \
    requires valid_out: \valid(BLK_R(y, rows * d)) && \valid(BLK_R(s2, rows * d)) &&               \
                        \valid(BLK_R(mean2, rows)) && \valid(BLK_R(rstd2, rows));                  \
    requires sep: \separated(BLK_OUT_POST_OUT, BLK_R(h, rows * d), BLK_R(f, rows * d), BLK_R(g2, d), \
                             BLK_R(b2n, d));                                                       \
    assigns *BLK_R(y, rows * d), *BLK_R(s2, rows * d), *BLK_R(mean2, rows), *BLK_R(rstd2, rows);   \
    LN_ROWS_CLAUSE(ensures s2_def: \forall integer i; 0 <= i < rows * d ==> s2[i] == h[i] + f[i];)  \
    LN_ROWS_CLAUSE(ensures y_rows: BLK_LN_ROWS(rows, y, mean2, rstd2, s2, g2, b2n);)

#define BLK_TAIL_POST_OUT                                                                          \
    BLK_OUT_POST_OUT, BLK_FFN_OUT, BLK_R(h, rows * d), BLK_R(mean1, rows), BLK_R(rstd1, rows)
#define BLK_TAIL_POST_CONTRACT(HF, FT)                                                             \
    BLK_SUB_REQUIRES                                                                               \
    requires eps_pos: eps > 0;                                                                     \
    requires valid_in: \valid_read(BLK_R(s1, rows * d)) && \valid_read(BLK_R(g1, d)) &&            \
                       \valid_read(BLK_R(b1n, d)) && \valid_read(BLK_R(g2, d)) &&                  \
                       \valid_read(BLK_R(b2n, d)) && BLK_FFN_READ;                                 \
    requires valid_out: \valid(BLK_R(y, rows * d)) && \valid(BLK_R(s2, rows * d)) &&               \
                        \valid(BLK_R(mean2, rows)) && \valid(BLK_R(rstd2, rows)) &&                \
                        \valid(BLK_R(f, rows * d)) && \valid(BLK_R(z, rows * ff)) &&               \
                        \valid(BLK_R(hh, rows * ff)) && \valid(BLK_R(h, rows * d)) &&              \
                        \valid(BLK_R(mean1, rows)) && \valid(BLK_R(rstd1, rows));                  \
    requires sep: \separated(BLK_TAIL_POST_OUT, BLK_R(s1, rows * d), BLK_R(g1, d), BLK_R(b1n, d),   \
                             BLK_R(g2, d), BLK_R(b2n, d), BLK_FFN_IN);                             \
    requires sep_masks: BLK_SUB_MASKS_SEP(BLK_TAIL_POST_OUT);                                      \
    LN_ROWS_CLAUSE(requires sep_xa: \valid_read(BLK_R(x, rows * d)) && \valid_read(BLK_R(a, rows * d)) && \
      \separated(BLK_R(x, rows * d), BLK_TAIL_POST_OUT) &&                                          \
      \separated(BLK_R(a, rows * d), BLK_TAIL_POST_OUT);)                                           \
    assigns *BLK_R(y, rows * d), *BLK_R(s2, rows * d), *BLK_R(mean2, rows), *BLK_R(rstd2, rows),   \
            *BLK_R(f, rows * d), *BLK_R(z, rows * ff), *BLK_R(hh, rows * ff),                      \
            *BLK_R(h, rows * d), *BLK_R(mean1, rows), *BLK_R(rstd1, rows);                         \
    LN_ROWS_CLAUSE(ensures h_rows: BLK_LN_ROWS(rows, h, mean1, rstd1, s1, g1, b1n);)               \
    BLK_FFN_ENSURES(HF, h)                                                                         \
    LN_ROWS_CLAUSE(ensures s2_def: \forall integer i; 0 <= i < rows * d ==> s2[i] == h[i] + f[i];)  \
    LN_ROWS_CLAUSE(ensures y_rows: BLK_LN_ROWS(rows, y, mean2, rstd2, s2, g2, b2n);)               \
    LN_ROWS_CLAUSE(ensures s1_kept: \forall integer k; 0 <= k < rows * d ==>                      \
      s1[k] == \old(s1[k]) && x[k] == \old(x[k]) && a[k] == \old(a[k]);)

/*@ BLK_FWD_CONTRACT */
void block_forward_f32(float *y, float *acts, const float *x, const float *params, const float *kpm,
                       const float *amask, const float *dmask, const float *d1mask,
                       const float *d2mask, float p, float eps, int post, ffn_act act, int causal,
                       int B, int T, int d, int H, int ff);
/*@ BLK_FWD_CONTRACT */
void block_forward_f64(double *y, double *acts, const double *x, const double *params,
                       const double *kpm, const double *amask, const double *dmask,
                       const double *d1mask, const double *d2mask, double p, double eps, int post,
                       ffn_act act, int causal, int B, int T, int d, int H, int ff);

/* acts: the forward's caches for the same inputs (kpm and causal are in them: att holds the
   masked softmax). */
/*@ BLK_BWD_CONTRACT */
void block_backward_f32(float *dx, float *grads, float *ws, const float *dy, const float *acts,
                        const float *x, const float *params, const float *amask,
                        const float *dmask, const float *d1mask, const float *d2mask, float p,
                        int post, ffn_act act, int B, int T, int d, int H, int ff);
/*@ BLK_BWD_CONTRACT */
void block_backward_f64(double *dx, double *grads, double *ws, const double *dy,
                        const double *acts, const double *x, const double *params,
                        const double *amask, const double *dmask, const double *d1mask,
                        const double *d2mask, double p, int post, ffn_act act,
                        int B, int T, int d, int H, int ff);


/* ---- the stack: nn.TransformerEncoder (batch_first=True), L blocks, then the optional final norm ----
 *
 *   out_{-1} = x;  out_i = block_i(out_{i-1}) (i = 0 .. L-1, the block above with layer i's
 *   parameters, masks and the shared kpm);  y = norm(out_{L-1}) (final_norm != 0) or out_{L-1}.
 *
 * norm: LayerNorm with norm.weight, norm.bias and the blocks' eps.  The same memory convention,
 * the layers laid out one after another (stack_*_size below):
 *   params: layer 0's block (the layout above: layers.0.self_attn.in_proj_weight ...
 *     layers.0.norm2.bias), layer 1's, ..., layer L-1's, then (final_norm only) fg [d]
 *     norm.weight, fb [d] norm.bias; grads: the same layout (d.layers.<i>.<name>, d.norm.*).
 *   acts, per layer i: the block's caches (block_acts_size), then out_i [rows, d] (layer i+1's
 *     input, the final norm's for i = L-1; the last layer's slot is unused without a final norm:
 *     that layer writes y); after the L layers the final norm's mean, rstd [rows] (unused
 *     without it).
 *   masks: each kind for every layer, contiguous (layer i's at i·(its size)), or NULL (no
 *     dropout of that kind in any layer): amask [L, B, H, T, T], dmask [L, rows, ff],
 *     d1mask, d2mask [L, rows, d].  kpm [B, T]: shared by the layers, as nn.TransformerEncoder
 *     passes src_key_padding_mask to each.
 *   scratch (backward, overwritten): the block's (block_scratch_size), then g0, g1 [rows, d] (the
 *     residual stream's gradient between layers).
 * The backward: g = normᵀ(dy) at out_{L-1} (or dy), then layer i = L-1 .. 0: g = block_iᵀ(g) at
 * out_{i-1}; dx = the last g, OVERWRITTEN; every parameter gradient ACCUMULATED (+=), as the
 * block's.  acts: the forward's caches for the same inputs (and final_norm).
 *
 * Contracts as the block's (RTE, callee preconditions, assigns, termination; no output formula),
 * proved by `make prove-stack` (proofs/stack.sh, proofs/README-stack.md; `make prove-block` skips
 * the stack's functions): the layers' offsets i·P, i·(A + n), i·size through the ghost lemmas of
 * ref/block.c (0 <= i·s, i·s + s <= L·s, (i-1)·s + s == i·s), the blocks and the final LayerNorm
 * through their contracts (the blocks' own proof: prove-block; LayerNorm's: prove); there is no
 * output formula because the block's contract has none to compose.
 */
/*@ logic integer stack_params_size(integer L, integer d, integer ff, integer final_norm) =
      L * block_params_size(d, ff) + (final_norm != 0 ? 2 * d : 0);
    logic integer stack_acts_size(integer L, integer B, integer T, integer d, integer H, integer ff) =
      L * (block_acts_size(B, T, d, H, ff) + B * T * d) + 2 * (B * T);
    logic integer stack_scratch_size(integer B, integer T, integer d, integer ff) =
      block_scratch_size(B, T, d, ff) + 2 * (B * T * d);
*/
/* The same sizes in elements, for the caller's allocation. */
static inline long stack_params_size(long L, long d, long ff, int final_norm)
{
    return L * block_params_size(d, ff) + (final_norm ? 2 * d : 0);
}
static inline long stack_acts_size(long L, long B, long T, long d, long H, long ff)
{
    return L * (block_acts_size(B, T, d, H, ff) + B * T * d) + 2 * B * T;
}
static inline long stack_scratch_size(long B, long T, long d, long ff)
{
    return block_scratch_size(B, T, d, ff) + 2 * B * T * d;
}

/* Sizes: the block's, L >= 1, and the stack's blocks and its layers' offsets fit an int (the
   masks' L·size included). */
#define STK_DIMS                                                                                   \
    BLK_DIMS && L >= 1 && L * block_params_size(d, ff) + 2 * d <= INT_MAX &&                       \
    stack_acts_size(L, B, T, d, H, ff) <= INT_MAX && stack_scratch_size(B, T, d, ff) <= INT_MAX && \
    L * (B * H * T * T) <= INT_MAX && L * (B * T * ff) <= INT_MAX && L * (B * T * d) <= INT_MAX
#define STK_PAR(v) (v + (0 .. stack_params_size(L, d, ff, final_norm) - 1))
#define STK_ACT(v) (v + (0 .. stack_acts_size(L, B, T, d, H, ff) - 1))
#define STK_WS(v) (v + (0 .. stack_scratch_size(B, T, d, ff) - 1))
#define STK_ATT(v) (v + (0 .. L * (B * H * T * T) - 1))
#define STK_RF(v) (v + (0 .. L * (B * T * ff) - 1))
#define STK_RDL(v) (v + (0 .. L * (B * T * d) - 1))
#define STK_MASKS_READ                                                                             \
    (amask == \null || \valid_read(STK_ATT(amask))) && (dmask == \null || \valid_read(STK_RF(dmask))) && \
    (d1mask == \null || \valid_read(STK_RDL(d1mask))) && (d2mask == \null || \valid_read(STK_RDL(d2mask)))
#define STK_MASKS_SEP(...)                                                                         \
    (amask == \null || \separated(STK_ATT(amask), __VA_ARGS__)) &&                               \
    (dmask == \null || \separated(STK_RF(dmask), __VA_ARGS__)) &&                                \
    (d1mask == \null || \separated(STK_RDL(d1mask), __VA_ARGS__)) &&                             \
    (d2mask == \null || \separated(STK_RDL(d2mask), __VA_ARGS__))

#define STK_FWD_CONTRACT                                                                           \
    requires dims: STK_DIMS;                                                                       \
    requires p_range: 0.0 <= p < 1.0;                                                              \
    requires eps_pos: eps > 0;                                                                     \
    requires act_ok: ffn_act_ok(act);                                                              \
    requires valid_in: \valid_read(BLK_RD(x)) && \valid_read(STK_PAR(params));                     \
    requires valid_masks: STK_MASKS_READ && (kpm == \null || \valid_read(BLK_KPM(kpm)));           \
    requires valid_out: \valid(BLK_RD(y)) && \valid(STK_ACT(acts));                                \
    requires sep: \separated(BLK_RD(y), STK_ACT(acts), BLK_RD(x), STK_PAR(params));               \
    requires sep_masks: STK_MASKS_SEP(BLK_RD(y), STK_ACT(acts)) &&                                 \
                        (kpm == \null || \separated(BLK_KPM(kpm), BLK_RD(y), STK_ACT(acts)));      \
    assigns *BLK_RD(y), *STK_ACT(acts);

#define STK_BWD_CONTRACT                                                                           \
    requires dims: STK_DIMS;                                                                       \
    requires p_range: 0.0 <= p < 1.0;                                                              \
    requires act_ok: ffn_act_ok(act);                                                              \
    requires valid_in: \valid_read(BLK_RD(dy)) && \valid_read(BLK_RD(x)) &&                        \
                       \valid_read(STK_PAR(params)) && \valid_read(STK_ACT(acts));                 \
    requires valid_masks: STK_MASKS_READ;                                                          \
    requires valid_out: \valid(BLK_RD(dx)) && \valid(STK_PAR(grads)) && \valid(STK_WS(ws));        \
    requires sep: \separated(BLK_RD(dx), STK_PAR(grads), STK_WS(ws), BLK_RD(dy), BLK_RD(x),        \
                             STK_PAR(params), STK_ACT(acts));                                      \
    requires sep_masks: STK_MASKS_SEP(BLK_RD(dx), STK_PAR(grads), STK_WS(ws)) &&                   \
                        (d2mask == \null || \separated(STK_RDL(d2mask), BLK_RD(dy)));            \
    assigns *BLK_RD(dx), *STK_PAR(grads), *STK_WS(ws);

/*@ STK_FWD_CONTRACT */
void stack_forward_f32(float *y, float *acts, const float *x, const float *params, const float *kpm,
                       const float *amask, const float *dmask, const float *d1mask,
                       const float *d2mask, float p, float eps, int post, ffn_act act, int causal,
                       int final_norm, int L, int B, int T, int d, int H, int ff);
/*@ STK_FWD_CONTRACT */
void stack_forward_f64(double *y, double *acts, const double *x, const double *params,
                       const double *kpm, const double *amask, const double *dmask,
                       const double *d1mask, const double *d2mask, double p, double eps, int post,
                       ffn_act act, int causal, int final_norm, int L, int B, int T, int d, int H,
                       int ff);

/*@ STK_BWD_CONTRACT */
void stack_backward_f32(float *dx, float *grads, float *ws, const float *dy, const float *acts,
                        const float *x, const float *params, const float *amask,
                        const float *dmask, const float *d1mask, const float *d2mask, float p,
                        int post, ffn_act act, int final_norm, int L, int B, int T, int d, int H,
                        int ff);
/*@ STK_BWD_CONTRACT */
void stack_backward_f64(double *dx, double *grads, double *ws, const double *dy,
                        const double *acts, const double *x, const double *params,
                        const double *amask, const double *dmask, const double *d1mask,
                        const double *d2mask, double p, int post, ffn_act act, int final_norm,
                        int L, int B, int T, int d, int H, int ff);

#endif
