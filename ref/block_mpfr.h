/* Certified twin of the Transformer encoder block and stack (issue 9), as
 * torch.nn.TransformerEncoderLayer / nn.TransformerEncoder (batch_first=True) compute them:
 *
 *   pre-LN  (norm_first=True):   h = x + drop1(attn(norm1(x)))        y = h + drop2(ffn(norm2(h)))
 *   post-LN (norm_first=False):  h = norm1(x + drop1(attn(x)))        y = norm2(h + drop2(ffn(h)))
 *   ffn(v)  = linear2(dropout(act(linear1(v))))      attn = MultiheadAttention(v, v, v) (attn_dropout
 *   on its weights), drop·(v) = v·mask/(1 - p), norm = LayerNorm (biased variance, eps inside the
 *   sqrt).  A stack is L blocks in sequence (layer i's parameters are layers.<i>.*), then optionally
 *   the final LayerNorm `norm`.
 *
 * ONE certified computation through the whole graph: the inputs (exact doubles) enter Arb balls,
 * the balls flow through every LayerNorm, attention (ref/attention_mpfr.h), dropout, residual add and
 * FFN (ref/ffn_mpfr.h) of every layer, forward and backward, and only the final outputs are
 * rounded, once, to `out` (never a rounded intermediate).  When some output's ball does not round
 * to one value of `out`, the working precision doubles for the whole computation (Ziv, 128 .. 8192
 * bits; past that RN_TWIN_UNCERTIFIED, never a guess).  Exact zeros a ball never shrinks to are
 * decided structurally (block_mpfr.c, "Exact zeros").
 *
 * Shapes (row-major; rows = batch·seq): x, y, dy, dx [batch, seq, d]; per layer (block_layer):
 * in_w [3d, d], in_b [3d], out_w [d, d], out_b [d], w1 [ff, d], b1 [ff], w2 [d, ff], b2 [d],
 * g1, b1n, g2, b2n [d]; masks (0/1, NULL = none, i.e. eval mode): amask [batch, heads, seq, seq]
 * (attn_dropout), dmask [rows, ff] (the FFN's activation dropout, `dropout`), d1mask, d2mask
 * [rows, d] (dropout1, dropout2); kpm [batch, seq] (nonzero = key ignored) shared by the layers.
 * eps: the exact value used (its text rounded by the caller to eps_dtype); p: exact, 0 <= p < 1.
 * Preconditions (the CLI checks them): every input finite; every query has a live key; heads
 * divides d. */
#ifndef RESNORM_BLOCK_MPFR_H
#define RESNORM_BLOCK_MPFR_H

#include <stddef.h>

#include "dtype.h"
#include "ffn_mpfr.h" /* rn_activation */
#include "layernorm_mpfr.h" /* RN_TWIN_* */

/* The stack's largest layer count (GPT-2 small and BERT-base have 12): the CLI's registry lists
   every layer's inputs by name. */
#define BLOCK_MAX_LAYERS 12

typedef struct {
    const double *in_w, *in_b, *out_w, *out_b; /* self_attn.in_proj_*, self_attn.out_proj.* */
    const double *w1, *b1, *w2, *b2;           /* linear1.*, linear2.* */
    const double *g1, *b1n, *g2, *b2n;         /* norm1.weight, norm1.bias, norm2.weight, norm2.bias */
    const double *amask, *dmask, *d1mask, *d2mask; /* attn_dropout, dropout, dropout1, dropout2 */
} block_layer;

/* The gradients of one layer's parameters (same shapes as block_layer's).  The weight matrices'
   in_w, out_w, w1, w2 may be NULL: that gradient is then not rounded or written (a golden case
   that leaves them out; they are 7 M values per layer at GPT-2 width). */
typedef struct {
    double *in_w, *in_b, *out_w, *out_b, *w1, *b1, *w2, *b2, *g1, *b1n, *g2, *b2n;
} block_layer_grad;

typedef struct {
    const double *x;        /* [batch, seq, d] */
    size_t nlayers;
    const block_layer *layers;
    const double *fg, *fb;  /* final norm.weight, norm.bias [d], or NULL (no final norm) */
    const double *kpm;      /* key_padding_mask [batch, seq] or NULL */
    int post;               /* 0: pre-LN (norm_first=True), 1: post-LN */
    int causal;
    rn_activation act;
    size_t batch, seq, d, heads, ff;
    double eps, p;
} block_args;

/* The backward's outputs at one dtype: dx [batch, seq, d], layers[l] (l < nlayers), and with a
   final norm dfg, dfb [d] (else unused). */
typedef struct {
    double *dx;
    const block_layer_grad *layers;
    double *dfg, *dfb;
} block_grads;

/* y[k] [batch, seq, d] = the exact output rounded once to dts[k], k < ndt: one certified
   computation serves every dtype (the precision rises until all of them are certified). */
int block_forward_mpfr(double *const *y, const rn_dtype *dts, int ndt, const block_args *B);

/* The gradients of sum(dy ⊙ y), each the exact value rounded once to dts[k], into g[k]. */
int block_backward_mpfr(const block_grads *g, const rn_dtype *dts, int ndt, const double *dy,
                        const block_args *B);

/* LayerNorm on Arb balls (the block's norms; also used by ref/block_bound.c), rows of n:
   forward  mean = Σv/n, c = v - mean, var = Σc²/n, rstd = 1/sqrt(var + eps), xh = c·rstd,
            y = xh·γ + β   (y, xh [rows·n], rstd [rows]; y may not alias v);
   backward with g = dy·γ: dx = rstd·(g - mean(g) - xh·mean(g·xh)) (overwritten),
            dγ += Σ_rows dy·xh, dβ += Σ_rows dy   (gv: scratch [n]).
   An exactly zero dy row gives an exactly zero dx row (exact zeros stay exact). */
#include <arb.h>
void block_ln_arb_forward(arb_ptr y, arb_ptr xh, arb_ptr rstd, arb_srcptr v, const double *g,
                          const double *b, size_t rows, size_t n, const arb_t eps, slong prec);
void block_ln_arb_backward(arb_ptr dx, arb_ptr dg, arb_ptr db, arb_srcptr dy, arb_srcptr xh,
                           arb_srcptr rstd, const double *g, size_t rows, size_t n, arb_ptr gv,
                           slong prec);

/* The last Ziv precision used by this thread's last call (bits): for reports and tests. */
long block_mpfr_last_prec(void);

#endif
