/* One Transformer encoder block, torch.nn.TransformerEncoderLayer(batch_first=True), forward and
 * backward, in float and double: contracts of the kernels in ref/block.c, composed from the proved
 * kernels of specs/layernorm.h, specs/attention.h, specs/ffn.h, specs/residual.h, specs/dropout.h.
 *
 *   pre-LN  (post == 0, norm_first=True):   h = x + drop1(attn(norm1(x)))    y = h + drop2(ffn(norm2(h)))
 *   post-LN (post == 1, norm_first=False):  h = norm1(x + drop1(attn(x)))    y = norm2(h + drop2(ffn(h)))
 *
 * attn: specs/attention.h (MultiheadAttention on (v, v, v), key_padding_mask kpm, causal, its own
 * dropout attn_dropout.mask on the weights); ffn: specs/ffn.h (linear2(dropout(act(linear1(v)))),
 * dropout.mask); drop1 / drop2: dropout1.mask / dropout2.mask, v·mask/(1 - p) (specs/dropout.h);
 * norm: LayerNorm, biased variance, eps inside the sqrt (specs/layernorm.h).  A NULL mask is eval
 * mode (no dropout there).  The real model and the certified twin: ref/block_mpfr.h; the tolerance:
 * specs/error-analysis-block.md, ref/block_bound.c.
 *
 * Shapes (row-major; B batch, T seq, d width, H heads (d % H == 0), ff hidden, rows = B·T):
 *   x, y, dy, dx [rows, d]; kpm [B, T] or NULL;
 *   block_params_*: in_w [3d, d], in_b [3d], out_w [d, d], out_b [d] (self_attn.in_proj_*,
 *     self_attn.out_proj.*); w1 [ff, d], b1 [ff], w2 [d, ff], b2 [d] (linear1.*, linear2.*);
 *     g1, b1n, g2, b2n [d] (norm1.weight, norm1.bias, norm2.weight, norm2.bias), none NULL;
 *     amask [B, H, T, T] (attn_dropout.mask), dmask [rows, ff] (dropout.mask), d1mask, d2mask
 *     [rows, d] (dropout1.mask, dropout2.mask), each 0/1 or NULL.
 *
 * Activation caches (llm.c style: the caller allocates them, the forward fills them, the backward
 * reads them), block_cache_*:
 *   ln1 [rows, d]   norm1's output (pre: norm1(x), the attention's input; post: norm1(s1) = h)
 *   mean1, rstd1 [rows]   norm1's statistics
 *   qkv [rows, 3d], att [B, H, T, T], ctx [rows, d]   the attention's caches (specs/attention.h)
 *   row [2T]        the attention's scratch
 *   a [rows, d]     the attention's output after dropout1
 *   s1 [rows, d]    x + a (pre: this is h)
 *   ln2 [rows, d]   pre: norm2(h), the FFN's input (unused by post-LN: there norm2's output is y)
 *   mean2, rstd2 [rows]   norm2's statistics
 *   z, hh [rows, ff]   the FFN's caches (pre-activation; hidden after its dropout)
 *   f [rows, d]     the FFN's output after dropout2
 *   s2 [rows, d]    post: h + f, norm2's input (unused by pre-LN: there y = h + f)
 * Backward scratch, block_scratch_*: ga, gb [rows, d], dqkv [rows, 3d], dctx [rows, d],
 *   dh [rows, ff], row [2T] (overwritten).
 *
 * Gradients of sum(dy ⊙ y): dx is OVERWRITTEN (a stack passes it on as the previous block's dy);
 * the parameter gradients (block_grads_*, same shapes and names as the parameters) are
 * ACCUMULATED (+=), as specs/linear.h, specs/ffn.h, specs/attention.h and specs/layernorm.h's
 * dgamma / dbeta do (llm.c's convention: zero them before the first call).  The backward:
 *   pre-LN:  gf = drop2ᵀ(dy); d(ln2) = ffnᵀ(gf); dh = norm2ᵀ(d(ln2)) + dy        (identity path)
 *            ga = drop1ᵀ(dh); d(ln1) = attnᵀ(ga); dx = norm1ᵀ(d(ln1)) + dh      (identity path)
 *   post-LN: ds2 = norm2ᵀ(dy) at s2; dh = ffnᵀ(drop2ᵀ(ds2)) + ds2
 *            ds1 = norm1ᵀ(dh) at s1; dx = attnᵀ(drop1ᵀ(ds1)) + ds1
 *
 * Floating-point order: each part's (its spec header); the residual adds and dropouts one rounding
 * per element.  Compile with -ffp-contract=off.
 *
 * Contracts (ACSL, `make prove-block`, proofs/block.sh).  Proved with -wp-rte -wp-model real, using
 * the callees' contracts (proved by their own targets; attention's is NOT yet fully proved, see
 * specs/attention.h): no runtime error (index arithmetic included), every callee's precondition
 * (validity, the separation of the buffers it writes from those it reads, eps > 0, 0 <= p < 1,
 * the sizes), `assigns` (only the outputs, the caches and the scratch), termination.
 * Functional, in the real model, as far as the parts state it: the forward's two residual adds,
 *   s1[i] == x[i] + a[i] (both norms), y[i] == s1[i] + f[i] (pre), s2[i] == ln1[i] + f[i] (post),
 * for every i < rows·d, with a, f, ln1 the values the caches hold on return.  NOT stated: a, f,
 * ln1, ln2 and (post) y as formulas of x, because layernorm_forward_*, attention_forward_* and
 * ffn_forward_* (the rows × n drivers) have no functional postcondition; nor any backward value.
 */
#ifndef RESNORM_BLOCK_H
#define RESNORM_BLOCK_H

#include <limits.h>

#include "attention.h"
#include "dropout.h"
#include "ffn.h"
#include "layernorm.h"
#include "residual.h"

typedef struct {
    const float *in_w, *in_b, *out_w, *out_b, *w1, *b1, *w2, *b2, *g1, *b1n, *g2, *b2n;
    const float *amask, *dmask, *d1mask, *d2mask;
} block_params_f32;
typedef struct {
    const double *in_w, *in_b, *out_w, *out_b, *w1, *b1, *w2, *b2, *g1, *b1n, *g2, *b2n;
    const double *amask, *dmask, *d1mask, *d2mask;
} block_params_f64;

typedef struct {
    float *ln1, *mean1, *rstd1, *qkv, *att, *ctx, *row, *a, *s1, *ln2, *mean2, *rstd2, *z, *hh, *f, *s2;
} block_cache_f32;
typedef struct {
    double *ln1, *mean1, *rstd1, *qkv, *att, *ctx, *row, *a, *s1, *ln2, *mean2, *rstd2, *z, *hh, *f, *s2;
} block_cache_f64;

typedef struct {
    float *ga, *gb, *dqkv, *dctx, *dh, *row;
} block_scratch_f32;
typedef struct {
    double *ga, *gb, *dqkv, *dctx, *dh, *row;
} block_scratch_f64;

typedef struct {
    float *in_w, *in_b, *out_w, *out_b, *w1, *b1, *w2, *b2, *g1, *b1n, *g2, *b2n;
} block_grads_f32;
typedef struct {
    double *in_w, *in_b, *out_w, *out_b, *w1, *b1, *w2, *b2, *g1, *b1n, *g2, *b2n;
} block_grads_f64;

/* ---- the contracts' pieces, written once for float and double (macros expanded inside the ACSL
   by Frama-C's annotation preprocessing, as specs/fperr.h's LN_EXACT) ---- */

/* Sizes: the attention's (attn_dims) and the FFN's products fit an int. */
#define BLK_DIMS attn_dims(B, T, d, H) && ff >= 1 && B * T * ff <= INT_MAX && d * ff <= INT_MAX

/* The ranges, by shape. */
#define BLK_RD(v) (v + (0 .. B * T * d - 1))
#define BLK_R(v) (v + (0 .. B * T - 1))
#define BLK_R3(v) (v + (0 .. B * T * 3 * d - 1))
#define BLK_ATT(v) (v + (0 .. B * H * T * T - 1))
#define BLK_RF(v) (v + (0 .. B * T * ff - 1))
#define BLK_ROW(v) (v + (0 .. 2 * T - 1))
#define BLK_W3(v) (v + (0 .. 3 * d * d - 1))
#define BLK_B3(v) (v + (0 .. 3 * d - 1))
#define BLK_WD(v) (v + (0 .. d * d - 1))
#define BLK_WF(v) (v + (0 .. d * ff - 1))
#define BLK_BF(v) (v + (0 .. ff - 1))
#define BLK_D(v) (v + (0 .. d - 1))

/* The parameters (read) and the masks (read, or NULL). */
#define BLK_PARAMS_READ                                                                              \
    \valid_read(P) && \valid_read(BLK_W3(P->in_w)) && \valid_read(BLK_B3(P->in_b)) &&                 \
    \valid_read(BLK_WD(P->out_w)) && \valid_read(BLK_D(P->out_b)) && \valid_read(BLK_WF(P->w1)) &&  \
    \valid_read(BLK_BF(P->b1)) && \valid_read(BLK_WF(P->w2)) && \valid_read(BLK_D(P->b2)) &&        \
    \valid_read(BLK_D(P->g1)) && \valid_read(BLK_D(P->b1n)) && \valid_read(BLK_D(P->g2)) &&         \
    \valid_read(BLK_D(P->b2n)) &&                                                                   \
    (P->amask == \null || \valid_read(BLK_ATT(P->amask))) &&                                        \
    (P->dmask == \null || \valid_read(BLK_RF(P->dmask))) &&                                         \
    (P->d1mask == \null || \valid_read(BLK_RD(P->d1mask))) &&                                       \
    (P->d2mask == \null || \valid_read(BLK_RD(P->d2mask)))

/* The parameters' ranges (for the separations; the masks separately, as they may be NULL). */
#define BLK_PARAM_RANGES(M)                                                                              \
    M BLK_W3(P->in_w), M BLK_B3(P->in_b), M BLK_WD(P->out_w), M BLK_D(P->out_b), M BLK_WF(P->w1),               \
    M BLK_BF(P->b1), M BLK_WF(P->w2), M BLK_D(P->b2), M BLK_D(P->g1), M BLK_D(P->b1n), M BLK_D(P->g2),          \
    M BLK_D(P->b2n)

/* The forward's caches (written). */
#define BLK_CACHE_RANGES(M)                                                                              \
    M BLK_RD(C->ln1), M BLK_R(C->mean1), M BLK_R(C->rstd1), M BLK_R3(C->qkv), M BLK_ATT(C->att),                \
    M BLK_RD(C->ctx), M BLK_ROW(C->row), M BLK_RD(C->a), M BLK_RD(C->s1), M BLK_RD(C->ln2), M BLK_R(C->mean2),  \
    M BLK_R(C->rstd2), M BLK_RF(C->z), M BLK_RF(C->hh), M BLK_RD(C->f), M BLK_RD(C->s2)
#define BLK_CACHE_VALID                                                                               \
    \valid_read(C) && \valid(BLK_RD(C->ln1)) && \valid(BLK_R(C->mean1)) && \valid(BLK_R(C->rstd1)) && \
    \valid(BLK_R3(C->qkv)) && \valid(BLK_ATT(C->att)) && \valid(BLK_RD(C->ctx)) &&                   \
    \valid(BLK_ROW(C->row)) && \valid(BLK_RD(C->a)) && \valid(BLK_RD(C->s1)) &&                      \
    \valid(BLK_RD(C->ln2)) && \valid(BLK_R(C->mean2)) && \valid(BLK_R(C->rstd2)) &&                  \
    \valid(BLK_RF(C->z)) && \valid(BLK_RF(C->hh)) && \valid(BLK_RD(C->f)) && \valid(BLK_RD(C->s2))
/* The caches as the backward reads them (row: not read). */
#define BLK_CACHE_READ                                                                                \
    \valid_read(C) && \valid_read(BLK_RD(C->ln1)) && \valid_read(BLK_R(C->mean1)) &&                  \
    \valid_read(BLK_R(C->rstd1)) && \valid_read(BLK_R3(C->qkv)) && \valid_read(BLK_ATT(C->att)) &&  \
    \valid_read(BLK_RD(C->ctx)) && \valid_read(BLK_RD(C->s1)) && \valid_read(BLK_RD(C->ln2)) &&     \
    \valid_read(BLK_R(C->mean2)) && \valid_read(BLK_R(C->rstd2)) && \valid_read(BLK_RF(C->z)) &&    \
    \valid_read(BLK_RF(C->hh)) && \valid_read(BLK_RD(C->s2))
#define BLK_CACHE_READ_RANGES(M)                                                                         \
    M BLK_RD(C->ln1), M BLK_R(C->mean1), M BLK_R(C->rstd1), M BLK_R3(C->qkv), M BLK_ATT(C->att),                \
    M BLK_RD(C->ctx), M BLK_RD(C->s1), M BLK_RD(C->ln2), M BLK_R(C->mean2), M BLK_R(C->rstd2), M BLK_RF(C->z),   \
    M BLK_RF(C->hh), M BLK_RD(C->s2)

/* The backward's outputs: dx, the gradients, the scratch (written). */
#define BLK_GRAD_RANGES(M)                                                                               \
    M BLK_W3(G->in_w), M BLK_B3(G->in_b), M BLK_WD(G->out_w), M BLK_D(G->out_b), M BLK_WF(G->w1),               \
    M BLK_BF(G->b1), M BLK_WF(G->w2), M BLK_D(G->b2), M BLK_D(G->g1), M BLK_D(G->b1n), M BLK_D(G->g2),          \
    M BLK_D(G->b2n)
#define BLK_SCRATCH_RANGES(M)                                                                            \
    M BLK_RD(S->ga), M BLK_RD(S->gb), M BLK_R3(S->dqkv), M BLK_RD(S->dctx), M BLK_RF(S->dh), M BLK_ROW(S->row)
#define BLK_BWD_VALID                                                                                 \
    \valid_read(G) && \valid(BLK_W3(G->in_w)) && \valid(BLK_B3(G->in_b)) && \valid(BLK_WD(G->out_w)) && \
    \valid(BLK_D(G->out_b)) && \valid(BLK_WF(G->w1)) && \valid(BLK_BF(G->b1)) &&                     \
    \valid(BLK_WF(G->w2)) && \valid(BLK_D(G->b2)) && \valid(BLK_D(G->g1)) && \valid(BLK_D(G->b1n)) && \
    \valid(BLK_D(G->g2)) && \valid(BLK_D(G->b2n)) &&                                                 \
    \valid_read(S) && \valid(BLK_RD(S->ga)) && \valid(BLK_RD(S->gb)) && \valid(BLK_R3(S->dqkv)) &&   \
    \valid(BLK_RD(S->dctx)) && \valid(BLK_RF(S->dh)) && \valid(BLK_ROW(S->row))

/* Every written range is separated from every other range the function touches (the read-only
   inputs may alias each other). */
#define BLK_FWD_SEP                                                                                   \
    \separated(BLK_RD(y), BLK_CACHE_RANGES(), BLK_RD(x), BLK_PARAM_RANGES()) &&                           \
    (kpm == \null || \separated(BLK_R(kpm), BLK_RD(y), BLK_CACHE_RANGES())) &&                        \
    (P->amask == \null || \separated(BLK_ATT(P->amask), BLK_RD(y), BLK_CACHE_RANGES())) &&             \
    (P->dmask == \null || \separated(BLK_RF(P->dmask), BLK_RD(y), BLK_CACHE_RANGES())) &&              \
    (P->d1mask == \null || \separated(BLK_RD(P->d1mask), BLK_RD(y), BLK_CACHE_RANGES())) &&            \
    (P->d2mask == \null || \separated(BLK_RD(P->d2mask), BLK_RD(y), BLK_CACHE_RANGES()))
#define BLK_BWD_SEP                                                                                   \
    \separated(BLK_RD(dx), BLK_GRAD_RANGES(), BLK_SCRATCH_RANGES(), BLK_RD(dy), BLK_RD(x),               \
               BLK_CACHE_READ_RANGES(), BLK_PARAM_RANGES()) &&                                             \
    (P->amask == \null || \separated(BLK_ATT(P->amask), BLK_RD(dx), BLK_GRAD_RANGES(), BLK_SCRATCH_RANGES())) && \
    (P->dmask == \null || \separated(BLK_RF(P->dmask), BLK_RD(dx), BLK_GRAD_RANGES(), BLK_SCRATCH_RANGES())) &&  \
    (P->d1mask == \null || \separated(BLK_RD(P->d1mask), BLK_RD(dx), BLK_GRAD_RANGES(), BLK_SCRATCH_RANGES())) && \
    (P->d2mask == \null || \separated(BLK_RD(P->d2mask), BLK_RD(dx), BLK_GRAD_RANGES(), BLK_SCRATCH_RANGES()))

#define BLK_FWD_CONTRACT                                                                              \
    requires dims: BLK_DIMS;                                                                          \
    requires p_range: 0.0 <= p < 1.0;                                                                 \
    requires eps_pos: eps > 0;                                                                        \
    requires act_ok: ffn_act_ok(act);                                                                 \
    requires valid_x: \valid_read(BLK_RD(x));                                                         \
    requires valid_y: \valid(BLK_RD(y));                                                              \
    requires valid_kpm: kpm == \null || \valid_read(BLK_R(kpm));                                      \
    requires valid_params: BLK_PARAMS_READ;                                                           \
    requires valid_cache: BLK_CACHE_VALID;                                                            \
    requires sep: BLK_FWD_SEP;                                                                        \
    assigns *BLK_RD(y), BLK_CACHE_RANGES(*);                                                            \
    ensures residual1: \forall integer i; 0 <= i < B * T * d ==> C->s1[i] == x[i] + C->a[i];         \
    ensures residual2_pre: post == 0 ==>                                                              \
      \forall integer i; 0 <= i < B * T * d ==> y[i] == C->s1[i] + C->f[i];                          \
    ensures residual2_post: post != 0 ==>                                                             \
      \forall integer i; 0 <= i < B * T * d ==> C->s2[i] == C->ln1[i] + C->f[i];

#define BLK_BWD_CONTRACT                                                                              \
    requires dims: BLK_DIMS;                                                                          \
    requires p_range: 0.0 <= p < 1.0;                                                                 \
    requires act_ok: ffn_act_ok(act);                                                                 \
    requires valid_in: \valid_read(BLK_RD(dy)) && \valid_read(BLK_RD(x));                             \
    requires valid_dx: \valid(BLK_RD(dx));                                                            \
    requires valid_params: BLK_PARAMS_READ;                                                           \
    requires valid_cache: BLK_CACHE_READ;                                                             \
    requires valid_out: BLK_BWD_VALID;                                                                \
    requires sep: BLK_BWD_SEP;                                                                        \
    assigns *BLK_RD(dx), BLK_GRAD_RANGES(*), BLK_SCRATCH_RANGES(*);

/*@ BLK_FWD_CONTRACT */
void block_forward_f32(float *y, const block_cache_f32 *C, const float *x, const block_params_f32 *P,
                       const float *kpm, float p, float eps, int post, ffn_act act, int causal, int B,
                       int T, int d, int H, int ff);
/*@ BLK_FWD_CONTRACT */
void block_forward_f64(double *y, const block_cache_f64 *C, const double *x,
                       const block_params_f64 *P, const double *kpm, double p, double eps, int post,
                       ffn_act act, int causal, int B, int T, int d, int H, int ff);

/* C: the forward's caches for the same x, P, kpm, p, eps, post, act, causal. */
/*@ BLK_BWD_CONTRACT */
void block_backward_f32(float *dx, const block_grads_f32 *G, const block_scratch_f32 *S,
                        const float *dy, const block_cache_f32 *C, const float *x,
                        const block_params_f32 *P, float p, int post, ffn_act act, int B, int T,
                        int d, int H, int ff);
/*@ BLK_BWD_CONTRACT */
void block_backward_f64(double *dx, const block_grads_f64 *G, const block_scratch_f64 *S,
                        const double *dy, const block_cache_f64 *C, const double *x,
                        const block_params_f64 *P, double p, int post, ffn_act act, int B, int T,
                        int d, int H, int ff);

#endif
