/* Certified twin of ref/attention.c (Arb balls + MPFR's final rounding): multi-head self-attention,
 * torch.nn.MultiheadAttention(batch_first=True) on (x, x, x), need_weights=False, forward and
 * backward, the real model of specs/attention.h computed exactly and rounded once.
 *
 * Two levels (the interface fixed with the block helper, INTERFACES.md):
 *  - Ball level: attention_arb_forward / attention_arb_backward take x (and dy) as Arb balls (the
 *    output of a LayerNorm in the block is not a float) and the parameters as exact doubles
 *    (attn_args), and return balls at working precision prec: an enclosure of the exact value,
 *    nothing rounded.  The block composes them inside its own Ziv loop.
 *  - Rounded level: attention_forward_mpfr / attention_backward_mpfr take doubles holding values of
 *    the input format and round every output ONCE to format `out` (RN-even, subnormals, +-Inf as
 *    IEEE): the whole op is evaluated in balls at prec = 64, 128, ... 65536 bits (Ziv over the whole
 *    computation, never per step) until every output's ball rounds to one value of `out` (both ends
 *    of the ball, outward); past that RN_TWIN_UNCERTIFIED, never a guess.
 *
 * Masking: key j is dead for query i of batch b when (causal && j > i) || kpm[b, j] != 0 (its
 * logit is -Inf: P = 0 exactly).  Exact structure that a ball alone would not reach, set exactly:
 * dead keys (P = 0, dS = 0); a query with ONE live key (P = 1 exactly, and its softmax backward
 * dS = P·(dP - dP·P) = 0 exactly: the one-token and first-causal-row cases, where the q and k
 * gradients are exact zeros); a query whose live raw scores q·k are exact and all equal (P = 1/L).
 * With those, every remaining exact dyadic output becomes an exact ball once prec covers its bits.
 * A query with NO live key (every key masked: 0/0) gives an indeterminate ball (arb_indeterminate),
 * as PyTorch gives NaN; it propagates (through out_proj, and in the backward through k, v and the
 * parameter gradients) as NaN does in PyTorch, and the rounded twin maps a non-finite ball to NaN.
 * Returns 0 / RN_TWIN_OK, -1 / RN_TWIN_NOMEM on allocation failure, RN_TWIN_UNCERTIFIED. */
#ifndef RESNORM_ATTENTION_MPFR_H
#define RESNORM_ATTENTION_MPFR_H

#include <stddef.h>

#include <arb.h>

#include "dtype.h"
#include "layernorm_mpfr.h" /* RN_TWIN_* */

typedef struct {
    const double *in_w, *in_b;   /* in_proj_weight [3d, d], in_proj_bias [3d] or NULL */
    const double *out_w, *out_b; /* out_proj.weight [d, d], out_proj.bias [d] or NULL */
    const double *kpm;           /* key_padding_mask [batch, seq] (nonzero = ignore that key) or NULL */
    const double *amask;         /* attn_dropout.mask [batch, heads, seq, seq] (0/1) or NULL */
    double p;                    /* dropout probability of amask; real scale 1/(1 - p) */
    size_t batch, seq, d, heads; /* dh = d / heads; head h = columns h·dh .. (h+1)·dh - 1 */
    int causal;                  /* 1: key j > query i is masked (-Inf) */
} attn_args;

/* y [batch, seq, d] = MultiheadAttention(x, x, x) (batch_first, need_weights=False), balls at prec. */
int attention_arb_forward(arb_ptr y, arb_srcptr x, const attn_args *A, slong prec);
/* Gradients (overwritten) of sum(dy ⊙ y): dx [batch, seq, d], din_w [3d, d], din_b [3d], dout_w [d, d],
   dout_b [d]; parameter gradients may be NULL.  Recomputes the forward (see also
   attention_arb_backward_from below). */
int attention_arb_backward(arb_ptr dx, arb_ptr din_w, arb_ptr din_b, arb_ptr dout_w, arb_ptr dout_b,
                           arb_srcptr x, arb_srcptr dy, const attn_args *A, slong prec);

/* Rounded twin: y [batch·seq·d] of format out. */
int attention_forward_mpfr(double *y, const double *x, const attn_args *A, rn_dtype out);
/* Rounded twin of the backward: dx [batch·seq·d], din_w [3d·d], din_b [3d], dout_w [d·d], dout_b [d]
   (any of the parameter gradients may be NULL). */
int attention_backward_mpfr(double *dx, double *din_w, double *din_b, double *dout_w,
                            double *dout_b, const double *x, const double *dy, const attn_args *A,
                            rn_dtype out);

/* The same, for several output formats at once (outs[t] for format outs_d[t], t < nd): one ball
   evaluation serves every format that certifies at its precision (the golden writer's use). */
int attention_forward_mpfr_multi(double *const *y, const rn_dtype *out, int nd, const double *x,
                                 const attn_args *A);
int attention_backward_mpfr_multi(double *const *g[5], const rn_dtype *out, int nd,
                                  const double *x, const double *dy, const attn_args *A);

/* The forward's intermediate balls (for the written bound, ref/attention_bound.c, which takes its
   magnitudes from them): qkv [rows, 3d] with q columns holding qs = q/sqrt(dh), P and A
   [batch, heads, seq, seq] (A = P without a dropout mask), S [batch, heads, seq, seq] the scaled
   scores qs·k (dead keys included, unmasked), ctx [rows, d], y [rows, d]; live [batch, seq]: the
   number of live keys of each query. */
typedef struct {
    arb_ptr qkv, P, A, S, ctx, y;
    size_t *live;
} attn_trace;
int attn_trace_init(attn_trace *t, const attn_args *A);
void attn_trace_clear(attn_trace *t, const attn_args *A);
int attention_arb_trace(attn_trace *t, arb_srcptr x, const attn_args *A, slong prec);

/* attention_arb_backward from a trace that attention_arb_trace filled with the same x, A and prec
   (instead of recomputing the forward): a caller that runs the forward and the backward at one
   precision (the block twin) evaluates the forward once. */
int attention_arb_backward_from(const attn_trace *t, arb_ptr dx, arb_ptr din_w, arb_ptr din_b,
                                arb_ptr dout_w, arb_ptr dout_b, arb_srcptr x, arb_srcptr dy,
                                const attn_args *A, slong prec);

#endif
