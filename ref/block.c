/* The Transformer encoder block's float and double kernels: the code that specs/block.h specifies
 * (torch.nn.TransformerEncoderLayer(batch_first=True), pre-LN and post-LN, forward and backward).
 * Composed from the proved kernels: LayerNorm (ref/layernorm.c), attention (ref/attention.c), the
 * FFN (ref/ffn.c), the residual add (ref/residual.c), dropout (ref/dropout.c); the caches are
 * caller-provided, llm.c style (specs/block.h lists them).  The twin is ref/block_mpfr.c, the
 * tolerance specs/error-analysis-block.md.  The double half is the float half with double. */
#include "block.h"

#include "attention.h"
#include "dropout.h"
#include "ffn.h"
#include "layernorm.h"
#include "residual.h"

/* ---- float ---- */

/* v[i] = 0 for i < n (the scratch that an accumulating callee adds into).  The value is proved in
   the loop invariant and not exported (ref/ffn.c's ffn_fill: a float literal in the callers' goals
   trips Why3 1.5.1's real/int typing; the callers' goals, RTE and assigns, do not need it). */
/*@ requires n_nonneg: n >= 0;
    requires valid_v: \valid(v + (0 .. n - 1));
    assigns v[0 .. n - 1]; */
static void block_zero_f32(float *v, int n)
{
    /*@ loop invariant i_range: 0 <= i <= n;
        loop invariant done: \forall integer k; 0 <= k < i ==> v[k] == 0.0;
        loop assigns i, v[0 .. n - 1];
        loop variant n - i; */
    for (int i = 0; i < n; i++)
        v[i] = 0.0f;
}

void block_forward_f32(float *y, const block_cache_f32 *C, const float *x, const block_params_f32 *P,
                       const float *kpm, float p, float eps, int post, ffn_act act, int causal, int B,
                       int T, int d, int H, int ff)
{
    int rows = B * T, n = B * T * d;
    float scale = dropout_scale_f32(p);
    /* the first sublayer: a = drop1(attn(v)), v = norm1(x) (pre) or x (post); s1 = x + a */
    const float *v = x;
    if (!post) {
        layernorm_forward_f32(C->ln1, C->mean1, C->rstd1, x, P->g1, P->b1n, rows, d, eps);
        v = C->ln1;
    }
    attention_forward_f32(C->a, C->qkv, C->att, C->ctx, C->row, v, P->in_w, P->in_b, P->out_w, P->out_b,
                          kpm, P->amask, p, B, T, d, H, causal);
    if (P->d1mask)
        dropout_forward_f32(C->a, C->a, P->d1mask, scale, n);
    residual_forward_f32(C->s1, x, C->a, n);
    /* h = s1 (pre) or norm1(s1) (post); the second sublayer: f = drop2(ffn(u)), u = norm2(h) (pre)
       or h (post) */
    const float *h = C->s1;
    if (post) {
        layernorm_forward_f32(C->ln1, C->mean1, C->rstd1, C->s1, P->g1, P->b1n, rows, d, eps);
        h = C->ln1;
    }
    const float *u = h;
    if (!post) {
        layernorm_forward_f32(C->ln2, C->mean2, C->rstd2, h, P->g2, P->b2n, rows, d, eps);
        u = C->ln2;
    }
    ffn_forward_f32(C->f, C->z, C->hh, u, P->w1, P->b1, P->w2, P->b2, P->dmask, p, act, rows, d, ff);
    if (P->d2mask)
        dropout_forward_f32(C->f, C->f, P->d2mask, scale, n);
    /* y = h + f (pre) or norm2(h + f) (post) */
    if (!post) {
        residual_forward_f32(y, h, C->f, n);
    } else {
        residual_forward_f32(C->s2, h, C->f, n);
        layernorm_forward_f32(y, C->mean2, C->rstd2, C->s2, P->g2, P->b2n, rows, d, eps);
    }
}

/* g·maskᵀ: the dropout's backward of g into out (zeroed first, as dropout_backward accumulates), or
   g itself without a mask. */
/*@ requires n_nonneg: n >= 0;
    requires valid: \valid_read(g + (0 .. n - 1)) && \valid(out + (0 .. n - 1));
    requires valid_mask: mask == \null || \valid_read(mask + (0 .. n - 1));
    requires sep: \separated(out + (0 .. n - 1), g + (0 .. n - 1));
    requires sep_mask: mask == \null || \separated(out + (0 .. n - 1), mask + (0 .. n - 1));
    assigns out[0 .. n - 1];
    ensures mask == \null ==> \result == g;
    ensures mask != \null ==> \result == out; */
static const float *block_dropout_grad_f32(float *out, const float *g, const float *mask, float scale, int n)
{
    if (!mask)
        return g;
    block_zero_f32(out, n);
    dropout_backward_f32(out, g, mask, scale, n);
    return out;
}

void block_backward_f32(float *dx, const block_grads_f32 *G, const block_scratch_f32 *S,
                        const float *dy, const block_cache_f32 *C, const float *x,
                        const block_params_f32 *P, float p, int post, ffn_act act, int B, int T,
                        int d, int H, int ff)
{
    int rows = B * T, n = B * T * d;
    float scale = dropout_scale_f32(p);
    if (!post) {
        /* dh = norm2ᵀ(ffnᵀ(drop2ᵀ(dy))) + dy, into dx */
        const float *gf = block_dropout_grad_f32(S->ga, dy, P->d2mask, scale, n);
        block_zero_f32(S->gb, n);
        ffn_backward_f32(S->gb, G->w1, G->b1, G->w2, G->b2, S->dh, gf, C->ln2, C->z, C->hh, P->w1, P->w2,
                         P->dmask, p, act, rows, d, ff);
        layernorm_backward_f32(dx, G->g2, G->b2n, S->gb, C->s1, P->g2, C->mean2, C->rstd2, rows, d);
        residual_forward_f32(dx, dx, dy, n);
        /* dx = norm1ᵀ(attnᵀ(drop1ᵀ(dh))) + dh */
        const float *ga = block_dropout_grad_f32(S->ga, dx, P->d1mask, scale, n);
        block_zero_f32(S->gb, n);
        attention_backward_f32(S->gb, G->in_w, G->in_b, G->out_w, G->out_b, S->dqkv, S->dctx, S->row, ga,
                               C->ln1, P->in_w, P->out_w, C->qkv, C->att, C->ctx, P->amask, p, B, T, d, H);
        layernorm_backward_f32(S->ga, G->g1, G->b1n, S->gb, x, P->g1, C->mean1, C->rstd1, rows, d);
        residual_forward_f32(dx, dx, S->ga, n);
    } else {
        /* ds2 = norm2ᵀ(dy) at s2; dh = ffnᵀ(drop2ᵀ(ds2)) + ds2, into dx */
        layernorm_backward_f32(S->ga, G->g2, G->b2n, dy, C->s2, P->g2, C->mean2, C->rstd2, rows, d);
        const float *gf = block_dropout_grad_f32(S->gb, S->ga, P->d2mask, scale, n);
        block_zero_f32(dx, n);
        ffn_backward_f32(dx, G->w1, G->b1, G->w2, G->b2, S->dh, gf, C->ln1, C->z, C->hh, P->w1, P->w2,
                         P->dmask, p, act, rows, d, ff);
        residual_forward_f32(dx, dx, S->ga, n);
        /* ds1 = norm1ᵀ(dh) at s1; dx = attnᵀ(drop1ᵀ(ds1)) + ds1 */
        layernorm_backward_f32(S->ga, G->g1, G->b1n, dx, C->s1, P->g1, C->mean1, C->rstd1, rows, d);
        const float *ga = block_dropout_grad_f32(S->gb, S->ga, P->d1mask, scale, n);
        block_zero_f32(dx, n);
        attention_backward_f32(dx, G->in_w, G->in_b, G->out_w, G->out_b, S->dqkv, S->dctx, S->row, ga, x,
                               P->in_w, P->out_w, C->qkv, C->att, C->ctx, P->amask, p, B, T, d, H);
        residual_forward_f32(dx, dx, S->ga, n);
    }
}

/* ---- double: the same code with double ---- */
/* v[i] = 0 for i < n (the scratch that an accumulating callee adds into).  The value is proved in
   the loop invariant and not exported (ref/ffn.c's ffn_fill: a double literal in the callers' goals
   trips Why3 1.5.1's real/int typing; the callers' goals, RTE and assigns, do not need it). */
/*@ requires n_nonneg: n >= 0;
    requires valid_v: \valid(v + (0 .. n - 1));
    assigns v[0 .. n - 1]; */
static void block_zero_f64(double *v, int n)
{
    /*@ loop invariant i_range: 0 <= i <= n;
        loop invariant done: \forall integer k; 0 <= k < i ==> v[k] == 0.0;
        loop assigns i, v[0 .. n - 1];
        loop variant n - i; */
    for (int i = 0; i < n; i++)
        v[i] = 0.0;
}

void block_forward_f64(double *y, const block_cache_f64 *C, const double *x, const block_params_f64 *P,
                       const double *kpm, double p, double eps, int post, ffn_act act, int causal, int B,
                       int T, int d, int H, int ff)
{
    int rows = B * T, n = B * T * d;
    double scale = dropout_scale_f64(p);
    /* the first sublayer: a = drop1(attn(v)), v = norm1(x) (pre) or x (post); s1 = x + a */
    const double *v = x;
    if (!post) {
        layernorm_forward_f64(C->ln1, C->mean1, C->rstd1, x, P->g1, P->b1n, rows, d, eps);
        v = C->ln1;
    }
    attention_forward_f64(C->a, C->qkv, C->att, C->ctx, C->row, v, P->in_w, P->in_b, P->out_w, P->out_b,
                          kpm, P->amask, p, B, T, d, H, causal);
    if (P->d1mask)
        dropout_forward_f64(C->a, C->a, P->d1mask, scale, n);
    residual_forward_f64(C->s1, x, C->a, n);
    /* h = s1 (pre) or norm1(s1) (post); the second sublayer: f = drop2(ffn(u)), u = norm2(h) (pre)
       or h (post) */
    const double *h = C->s1;
    if (post) {
        layernorm_forward_f64(C->ln1, C->mean1, C->rstd1, C->s1, P->g1, P->b1n, rows, d, eps);
        h = C->ln1;
    }
    const double *u = h;
    if (!post) {
        layernorm_forward_f64(C->ln2, C->mean2, C->rstd2, h, P->g2, P->b2n, rows, d, eps);
        u = C->ln2;
    }
    ffn_forward_f64(C->f, C->z, C->hh, u, P->w1, P->b1, P->w2, P->b2, P->dmask, p, act, rows, d, ff);
    if (P->d2mask)
        dropout_forward_f64(C->f, C->f, P->d2mask, scale, n);
    /* y = h + f (pre) or norm2(h + f) (post) */
    if (!post) {
        residual_forward_f64(y, h, C->f, n);
    } else {
        residual_forward_f64(C->s2, h, C->f, n);
        layernorm_forward_f64(y, C->mean2, C->rstd2, C->s2, P->g2, P->b2n, rows, d, eps);
    }
}

/* g·maskᵀ: the dropout's backward of g into out (zeroed first, as dropout_backward accumulates), or
   g itself without a mask. */
/*@ requires n_nonneg: n >= 0;
    requires valid: \valid_read(g + (0 .. n - 1)) && \valid(out + (0 .. n - 1));
    requires valid_mask: mask == \null || \valid_read(mask + (0 .. n - 1));
    requires sep: \separated(out + (0 .. n - 1), g + (0 .. n - 1));
    requires sep_mask: mask == \null || \separated(out + (0 .. n - 1), mask + (0 .. n - 1));
    assigns out[0 .. n - 1];
    ensures mask == \null ==> \result == g;
    ensures mask != \null ==> \result == out; */
static const double *block_dropout_grad_f64(double *out, const double *g, const double *mask, double scale, int n)
{
    if (!mask)
        return g;
    block_zero_f64(out, n);
    dropout_backward_f64(out, g, mask, scale, n);
    return out;
}

void block_backward_f64(double *dx, const block_grads_f64 *G, const block_scratch_f64 *S,
                        const double *dy, const block_cache_f64 *C, const double *x,
                        const block_params_f64 *P, double p, int post, ffn_act act, int B, int T,
                        int d, int H, int ff)
{
    int rows = B * T, n = B * T * d;
    double scale = dropout_scale_f64(p);
    if (!post) {
        /* dh = norm2ᵀ(ffnᵀ(drop2ᵀ(dy))) + dy, into dx */
        const double *gf = block_dropout_grad_f64(S->ga, dy, P->d2mask, scale, n);
        block_zero_f64(S->gb, n);
        ffn_backward_f64(S->gb, G->w1, G->b1, G->w2, G->b2, S->dh, gf, C->ln2, C->z, C->hh, P->w1, P->w2,
                         P->dmask, p, act, rows, d, ff);
        layernorm_backward_f64(dx, G->g2, G->b2n, S->gb, C->s1, P->g2, C->mean2, C->rstd2, rows, d);
        residual_forward_f64(dx, dx, dy, n);
        /* dx = norm1ᵀ(attnᵀ(drop1ᵀ(dh))) + dh */
        const double *ga = block_dropout_grad_f64(S->ga, dx, P->d1mask, scale, n);
        block_zero_f64(S->gb, n);
        attention_backward_f64(S->gb, G->in_w, G->in_b, G->out_w, G->out_b, S->dqkv, S->dctx, S->row, ga,
                               C->ln1, P->in_w, P->out_w, C->qkv, C->att, C->ctx, P->amask, p, B, T, d, H);
        layernorm_backward_f64(S->ga, G->g1, G->b1n, S->gb, x, P->g1, C->mean1, C->rstd1, rows, d);
        residual_forward_f64(dx, dx, S->ga, n);
    } else {
        /* ds2 = norm2ᵀ(dy) at s2; dh = ffnᵀ(drop2ᵀ(ds2)) + ds2, into dx */
        layernorm_backward_f64(S->ga, G->g2, G->b2n, dy, C->s2, P->g2, C->mean2, C->rstd2, rows, d);
        const double *gf = block_dropout_grad_f64(S->gb, S->ga, P->d2mask, scale, n);
        block_zero_f64(dx, n);
        ffn_backward_f64(dx, G->w1, G->b1, G->w2, G->b2, S->dh, gf, C->ln1, C->z, C->hh, P->w1, P->w2,
                         P->dmask, p, act, rows, d, ff);
        residual_forward_f64(dx, dx, S->ga, n);
        /* ds1 = norm1ᵀ(dh) at s1; dx = attnᵀ(drop1ᵀ(ds1)) + ds1 */
        layernorm_backward_f64(S->ga, G->g1, G->b1n, dx, C->s1, P->g1, C->mean1, C->rstd1, rows, d);
        const double *ga = block_dropout_grad_f64(S->gb, S->ga, P->d1mask, scale, n);
        block_zero_f64(dx, n);
        attention_backward_f64(dx, G->in_w, G->in_b, G->out_w, G->out_b, S->dqkv, S->dctx, S->row, ga, x,
                               P->in_w, P->out_w, C->qkv, C->att, C->ctx, P->amask, p, B, T, d, H);
        residual_forward_f64(dx, dx, S->ga, n);
    }
}
