/* Certified twin of the Transformer block and stack (contract and method: ref/block_mpfr.h).
 *
 * Everything between the exact inputs and the rounded outputs is an Arb ball: LayerNorm forward and
 * backward on balls (below), the residual add (arb_add), dropout (a ball times mask·1/(1 - p), the
 * REAL scale), and the sublayers' ball-level entry points (attention_arb_trace /
 * attention_arb_backward_from, ffn_arb_forward_keep / ffn_arb_backward_from when a backward follows:
 * the backward starts from the forward's kept balls instead of evaluating each sublayer's forward a
 * second time; attention_arb_forward and ffn_arb_forward for a forward alone).  One pass computes
 * every output's ball at precision prec; the outputs are certified together and the whole pass is
 * repeated at twice the precision if any is not.
 *
 * Exact zeros (a ball around an exact 0 never rounds to one value, so these are decided here):
 *  - d.self_attn.in_proj_bias[d .. 2d) (the key bias) is exactly 0: adding a constant to every
 *    logit of a softmax row changes nothing, so every row of dS = P ⊙ (dP - Σ_j dP_j P_j) sums to
 *    Σ_j P_j dP_j - (Σ_j P_j)(Σ_k dP_k P_k) = 0, and d(key bias) = scale·Σ_i Σ_j dS_ij q_i = 0.
 *  - When every query has exactly one live key (seq = 1, or masks leaving one key), P = 1 exactly
 *    there and dS = 0: the query and key gradients, d.in_proj_weight[0 .. 2d) and
 *    d.in_proj_bias[0 .. d), are exactly 0.
 *  - Exact rationals: a bias gradient that is a masked column sum of an EXACT upstream gradient,
 *    d.linear2.bias = Σ_r mask·g/(1 - p) (pre-LN, g = dy: the last layer without a final norm) and
 *    likewise d.self_attn.out_proj.bias when dh is exact (the identity block), is S/(1 - p) with S
 *    an exact dyadic sum; it can be a tie of the output format, which no ball decides: S is
 *    summed exactly and the quotient certified by exact_mpfr.h's ziv_quot (as ref/dropout_mpfr.c).
 *  - Exact zeros that arise from exact-zero operands (zero weights, dropped elements, a zero dy)
 *    stay exact: Arb's product with an exact 0 is an exact 0, and the code below keeps it so (the
 *    pre-LN identity block, out_proj and linear2 zero, gives y = x and exact zero gradients). */
#include "block_mpfr.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <arb.h>

#include "attention_mpfr.h"
#include "arb_round.h"
#include "exact_mpfr.h"
#include "ffn_mpfr.h"

#define BLOCK_PREC0 128
#define BLOCK_PREC_MAX 8192

static __thread long last_prec;

long block_mpfr_last_prec(void) { return last_prec; }

/* ---------------------------------------------------------------- LayerNorm, dropout on balls */

/* (block_mpfr.h) Per row of n: mean = Σv/n, c = v - mean, var = Σc²/n, rstd = 1/sqrt(var + eps), xh = c·rstd,
   y = xh·γ + β.  y, xh: [rows·n]; rstd: [rows].  y may not alias v. */
void block_ln_arb_forward(arb_ptr y, arb_ptr xh, arb_ptr rstd, arb_srcptr v, const double *g,
                          const double *b, size_t rows, size_t n, const arb_t eps, slong prec)
{
    arb_t m, var, t;
    arb_init(m), arb_init(var), arb_init(t);
    for (size_t r = 0; r < rows; r++) {
        arb_srcptr vr = v + r * n;
        arb_ptr xr = xh + r * n, yr = y + r * n;
        arb_zero(m);
        for (size_t i = 0; i < n; i++)
            arb_add(m, m, vr + i, prec);
        arb_div_ui(m, m, (ulong)n, prec);
        for (size_t i = 0; i < n; i++)
            arb_sub(xr + i, vr + i, m, prec);
        arb_dot(var, NULL, 0, xr, 1, xr, 1, (slong)n, prec);
        arb_div_ui(var, var, (ulong)n, prec);
        arb_add(var, var, eps, prec);
        arb_rsqrt(rstd + r, var, prec);
        for (size_t i = 0; i < n; i++) {
            arb_mul(xr + i, xr + i, rstd + r, prec);
            arb_set_d(t, g[i]);
            arb_mul(yr + i, xr + i, t, prec);
            arb_set_d(t, b[i]);
            arb_add(yr + i, yr + i, t, prec);
        }
    }
    arb_clear(m), arb_clear(var), arb_clear(t);
}

/* (block_mpfr.h) LayerNorm's backward at the cached xh, rstd: with g = dy·γ,
   dx = rstd·(g - mean(g) - xh·mean(g·xh)) [rows·n] (overwritten), dγ += Σ_rows dy·xh,
   dβ += Σ_rows dy.  gv: scratch [n].  An exactly zero dy row gives an exactly zero dx row. */
void block_ln_arb_backward(arb_ptr dx, arb_ptr dg, arb_ptr db, arb_srcptr dy, arb_srcptr xh,
                           arb_srcptr rstd, const double *g, size_t rows, size_t n, arb_ptr gv,
                           slong prec)
{
    arb_t mg, mgx, t;
    arb_init(mg), arb_init(mgx), arb_init(t);
    for (size_t r = 0; r < rows; r++) {
        arb_srcptr dyr = dy + r * n, xr = xh + r * n;
        arb_ptr dxr = dx + r * n;
        for (size_t i = 0; i < n; i++) {
            arb_set_d(t, g[i]);
            arb_mul(gv + i, dyr + i, t, prec);
        }
        arb_zero(mg);
        for (size_t i = 0; i < n; i++)
            arb_add(mg, mg, gv + i, prec);
        arb_div_ui(mg, mg, (ulong)n, prec);
        arb_dot(mgx, NULL, 0, gv, 1, xr, 1, (slong)n, prec);
        arb_div_ui(mgx, mgx, (ulong)n, prec);
        for (size_t i = 0; i < n; i++) {
            arb_mul(t, xr + i, mgx, prec);
            arb_sub(dxr + i, gv + i, mg, prec);
            arb_sub(dxr + i, dxr + i, t, prec);
            arb_mul(dxr + i, dxr + i, rstd + r, prec);
            arb_addmul(dg + i, dyr + i, xr + i, prec);
            arb_add(db + i, db + i, dyr + i, prec);
        }
    }
    arb_clear(mg), arb_clear(mgx), arb_clear(t);
}

/* y = v·mask·scale (scale = 1/(1 - p), a ball); an exact 0 where mask is 0; a copy without mask.
   y may alias v. */
static void drop(arb_ptr y, arb_srcptr v, const double *mask, const arb_t scale, size_t count,
                 slong prec)
{
    for (size_t i = 0; i < count; i++) {
        if (!mask)
            arb_set(y + i, v + i);
        else if (mask[i] == 0.0)
            arb_zero(y + i);
        else
            arb_mul(y + i, v + i, scale, prec);
    }
}

static void vec_add(arb_ptr y, arb_srcptr a, arb_srcptr b, size_t count, slong prec)
{
    for (size_t i = 0; i < count; i++)
        arb_add(y + i, a + i, b + i, prec);
}

/* ---------------------------------------------------------------- one pass at precision prec */

/* What one layer's forward keeps for its backward.  pre-LN: n1 = norm1(in) (attention's input),
   fin = norm2(h) (the FFN's input).  post-LN: the attention's input is `in` itself, fin = h =
   norm1(s1).  xh1, r1 / xh2, r2: the norms' normalized rows and rstd at their own inputs (pre: in
   and h; post: the sums s1 and s2 -- the wrong input here is bug class "LN backward at the wrong
   input").  at, ff: the sublayers' forward state, kept only when a backward follows (it then
   starts from them instead of recomputing each sublayer's forward). */
typedef struct {
    arb_ptr in, n1, fin, xh1, r1, xh2, r2;
    attn_trace at;
    int have_at;
    ffn_fwd *ff;
} layer_cache;

/* The ball versions of every gradient of one pass; b2num / obnum: the exact numerators S when
   b2 / out_b are the exact rationals S/(1 - p) (file comment), else rat_* = 0. */
typedef struct {
    arb_ptr in_w, in_b, out_w, out_b, w1, b1, w2, b2, g1, b1n, g2, b2n;
    arb_ptr b2num, obnum;
    int rat_b2, rat_ob;
} layer_gball;

typedef struct {
    const block_args *B;
    size_t R, d, ff;          /* rows = batch·seq */
    arb_t eps, scale;         /* exact eps; 1/(1 - p) at the pass's precision */
    layer_cache *c;           /* [nlayers] */
    arb_ptr xhf, rf;          /* the final norm's cache */
    arb_ptr t1, t2, t3, gv;   /* scratch [R·d] ×3, [d] */
    layer_gball *gb;          /* [nlayers] (backward) */
    arb_ptr dfg, dfb;         /* [d] */
} pass;

static void attn_of(attn_args *A, const pass *P, const block_layer *L)
{
    const block_args *B = P->B;
    *A = (attn_args){L->in_w, L->in_b, L->out_w, L->out_b, B->kpm, L->amask, B->p,
                     B->batch, B->seq, B->d, B->heads, B->causal};
}

static void ffn_of(ffn_args *F, const pass *P, const block_layer *L)
{
    const block_args *B = P->B;
    *F = (ffn_args){L->w1, L->b1, L->w2, L->b2, L->dmask, B->p, B->act, P->R, B->d, B->ff};
}

/* out [R·d] = attn(in); before a backward, through the layer's kept trace. */
static int attn_forward(const pass *P, layer_cache *c, arb_ptr out, arb_srcptr in,
                        const attn_args *A, slong prec)
{
    if (!P->gb)
        return attention_arb_forward(out, in, A, prec);
    attention_arb_trace(&c->at, in, A, prec);
    _arb_vec_set(out, c->at.y, (slong)(P->R * P->d));
    return 0;
}

/* out [R·d] = ffn(in); before a backward, the FFN's forward state is kept (this pass's). */
static int ffn_forward(const pass *P, layer_cache *c, arb_ptr out, arb_srcptr in,
                       const ffn_args *F, slong prec)
{
    if (!P->gb)
        return ffn_arb_forward(out, in, F, prec);
    ffn_fwd_free(c->ff);
    c->ff = ffn_arb_forward_keep(out, in, F, prec);
    return c->ff ? 0 : -1;
}

/* out [R·d] = layer(in); fills the cache (c->in is a copy of in).  out may alias nothing else. */
static int layer_forward(pass *P, size_t l, arb_ptr out, arb_srcptr in, slong prec)
{
    const block_layer *L = &P->B->layers[l];
    layer_cache *c = &P->c[l];
    size_t N = P->R * P->d;
    attn_args A;
    ffn_args F;
    attn_of(&A, P, L), ffn_of(&F, P, L);
    _arb_vec_set(c->in, in, (slong)N);
    if (!P->B->post) {
        block_ln_arb_forward(c->n1, c->xh1, c->r1, in, L->g1, L->b1n, P->R, P->d, P->eps, prec);
        if (attn_forward(P, c, P->t1, c->n1, &A, prec) != 0)
            return -1;
        drop(P->t1, P->t1, L->d1mask, P->scale, N, prec);
        vec_add(P->t2, in, P->t1, N, prec);                       /* h */
        block_ln_arb_forward(c->fin, c->xh2, c->r2, P->t2, L->g2, L->b2n, P->R, P->d, P->eps, prec);
        if (ffn_forward(P, c, P->t1, c->fin, &F, prec) != 0)
            return -1;
        drop(P->t1, P->t1, L->d2mask, P->scale, N, prec);
        vec_add(out, P->t2, P->t1, N, prec);                      /* h + drop2(ffn(norm2(h))) */
    } else {
        if (attn_forward(P, c, P->t1, in, &A, prec) != 0)
            return -1;
        drop(P->t1, P->t1, L->d1mask, P->scale, N, prec);
        vec_add(P->t2, in, P->t1, N, prec);                       /* s1 */
        block_ln_arb_forward(c->fin, c->xh1, c->r1, P->t2, L->g1, L->b1n, P->R, P->d, P->eps, prec); /* h */
        if (ffn_forward(P, c, P->t1, c->fin, &F, prec) != 0)
            return -1;
        drop(P->t1, P->t1, L->d2mask, P->scale, N, prec);
        vec_add(P->t2, c->fin, P->t1, N, prec);                   /* s2 */
        block_ln_arb_forward(out, c->xh2, c->r2, P->t2, L->g2, L->b2n, P->R, P->d, P->eps, prec);
    }
    return 0;
}

static int vec_exact(arb_srcptr v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!arb_is_exact(v + i))
            return 0;
    return 1;
}

/* num[j] = Σ_r mask[r, j]·g[r, j] exactly (g exact: dyadic sums). */
static void masked_colsum_exact(arb_ptr num, arb_srcptr g, const double *mask, size_t R, size_t d)
{
    for (size_t j = 0; j < d; j++) {
        arb_zero(num + j);
        for (size_t r = 0; r < R; r++)
            if (mask[r * d + j] != 0.0)
                arb_add(num + j, num + j, g + r * d + j, ARF_PREC_EXACT);
    }
}

/* din [R·d] = the gradient at the layer's input of sum(g ⊙ layer output); the layer's parameter
   gradients into P->gb[l] (overwritten).  g is consumed (used as scratch).  din may not alias g. */
static int layer_backward(pass *P, size_t l, arb_ptr din, arb_ptr g, slong prec)
{
    const block_layer *L = &P->B->layers[l];
    const layer_cache *c = &P->c[l];
    layer_gball *G = &P->gb[l];
    size_t N = P->R * P->d, d = P->d;
    attn_args A;
    ffn_args F;
    attn_of(&A, P, L), ffn_of(&F, P, L);
    _arb_vec_zero(G->g1, (slong)d), _arb_vec_zero(G->b1n, (slong)d);
    _arb_vec_zero(G->g2, (slong)d), _arb_vec_zero(G->b2n, (slong)d);
    G->rat_b2 = G->rat_ob = 0;
    if (!P->B->post) {
        /* y = h + drop2(ffn(norm2(h))):  dh = g + norm2'(ffn'(drop2(g))) */
        if ((G->rat_b2 = L->d2mask && P->B->p != 0.0 && vec_exact(g, N)))
            masked_colsum_exact(G->b2num, g, L->d2mask, P->R, d);
        drop(P->t1, g, L->d2mask, P->scale, N, prec);
        if (ffn_arb_backward_from(c->ff, P->t2, G->w1, G->b1, G->w2, G->b2, c->fin, P->t1, &F,
                                  prec) != 0)
            return -1;
        block_ln_arb_backward(P->t3, G->g2, G->b2n, P->t2, c->xh2, c->r2, L->g2, P->R, d, P->gv, prec);
        vec_add(g, g, P->t3, N, prec);                            /* dh */
        /* h = x + drop1(attn(norm1(x))):  dx = dh + norm1'(attn'(drop1(dh))) */
        if ((G->rat_ob = L->d1mask && P->B->p != 0.0 && vec_exact(g, N)))
            masked_colsum_exact(G->obnum, g, L->d1mask, P->R, d);
        drop(P->t1, g, L->d1mask, P->scale, N, prec);
        if (attention_arb_backward_from(&c->at, P->t2, G->in_w, G->in_b, G->out_w, G->out_b, c->n1,
                                        P->t1, &A, prec) != 0)
            return -1;
        block_ln_arb_backward(P->t3, G->g1, G->b1n, P->t2, c->xh1, c->r1, L->g1, P->R, d, P->gv, prec);
        vec_add(din, g, P->t3, N, prec);
    } else {
        /* y = norm2(s2), s2 = h + drop2(ffn(h)):  ds2 = norm2'(g) at s2;
           dh = ds2 + ffn'(drop2(ds2)) */
        block_ln_arb_backward(P->t3, G->g2, G->b2n, g, c->xh2, c->r2, L->g2, P->R, d, P->gv, prec); /* ds2 */
        drop(P->t1, P->t3, L->d2mask, P->scale, N, prec);
        if (ffn_arb_backward_from(c->ff, P->t2, G->w1, G->b1, G->w2, G->b2, c->fin, P->t1, &F,
                                  prec) != 0)
            return -1;
        vec_add(g, P->t3, P->t2, N, prec);                        /* dh */
        /* h = norm1(s1), s1 = x + drop1(attn(x)):  ds1 = norm1'(dh) at s1;
           dx = ds1 + attn'(drop1(ds1)) */
        block_ln_arb_backward(P->t3, G->g1, G->b1n, g, c->xh1, c->r1, L->g1, P->R, d, P->gv, prec); /* ds1 */
        drop(P->t1, P->t3, L->d1mask, P->scale, N, prec);
        if (attention_arb_backward_from(&c->at, P->t2, G->in_w, G->in_b, G->out_w, G->out_b, c->in,
                                        P->t1, &A, prec) != 0)
            return -1;
        vec_add(din, P->t3, P->t2, N, prec);
    }
    return 0;
}

/* The stack's forward: y [R·d] (balls). */
static int stack_forward(pass *P, arb_ptr y, slong prec)
{
    const block_args *B = P->B;
    size_t N = P->R * P->d;
    for (size_t i = 0; i < N; i++)
        arb_set_d(y + i, B->x[i]);
    for (size_t l = 0; l < B->nlayers; l++) {
        if (layer_forward(P, l, P->t3, y, prec) != 0)
            return -1;
        _arb_vec_swap(y, P->t3, (slong)N);
    }
    if (B->fg) {
        _arb_vec_set(P->t3, y, (slong)N);
        block_ln_arb_forward(y, P->xhf, P->rf, P->t3, B->fg, B->fb, P->R, P->d, P->eps, prec);
    }
    return 0;
}

/* The stack's backward: g [R·d] holds dy on entry, dx on return; gradients into P->gb, dfg, dfb.
   din: scratch [R·d]. */
static int stack_backward(pass *P, arb_ptr g, arb_ptr din, const double *dy, slong prec)
{
    const block_args *B = P->B;
    size_t N = P->R * P->d;
    for (size_t i = 0; i < N; i++)
        arb_set_d(g + i, dy[i]);
    if (B->fg) {
        _arb_vec_zero(P->dfg, (slong)P->d), _arb_vec_zero(P->dfb, (slong)P->d);
        block_ln_arb_backward(din, P->dfg, P->dfb, g, P->xhf, P->rf, B->fg, P->R, P->d, P->gv, prec);
        _arb_vec_swap(g, din, (slong)N);
    }
    for (size_t l = B->nlayers; l-- > 0;) {
        if (layer_backward(P, l, din, g, prec) != 0)
            return -1;
        _arb_vec_swap(g, din, (slong)N);
    }
    return 0;
}

/* ---------------------------------------------------------------- allocation */

static void pass_clear(pass *P)
{
    const block_args *B = P->B;
    size_t N = P->R * P->d, d = P->d, ff = P->ff;
    if (P->c)
        for (size_t l = 0; l < B->nlayers; l++) {
            layer_cache *c = &P->c[l];
            _arb_vec_clear(c->in, (slong)N), _arb_vec_clear(c->n1, (slong)N);
            _arb_vec_clear(c->fin, (slong)N), _arb_vec_clear(c->xh1, (slong)N);
            _arb_vec_clear(c->xh2, (slong)N);
            _arb_vec_clear(c->r1, (slong)P->R), _arb_vec_clear(c->r2, (slong)P->R);
            if (c->have_at) {
                attn_args A;
                attn_of(&A, P, &B->layers[l]);
                attn_trace_clear(&c->at, &A);
            }
            ffn_fwd_free(c->ff);
        }
    if (P->gb)
        for (size_t l = 0; l < B->nlayers; l++) {
            layer_gball *G = &P->gb[l];
            _arb_vec_clear(G->in_w, (slong)(3 * d * d)), _arb_vec_clear(G->in_b, (slong)(3 * d));
            _arb_vec_clear(G->out_w, (slong)(d * d)), _arb_vec_clear(G->out_b, (slong)d);
            _arb_vec_clear(G->w1, (slong)(ff * d)), _arb_vec_clear(G->b1, (slong)ff);
            _arb_vec_clear(G->w2, (slong)(d * ff)), _arb_vec_clear(G->b2, (slong)d);
            _arb_vec_clear(G->g1, (slong)d), _arb_vec_clear(G->b1n, (slong)d);
            _arb_vec_clear(G->g2, (slong)d), _arb_vec_clear(G->b2n, (slong)d);
            _arb_vec_clear(G->b2num, (slong)d), _arb_vec_clear(G->obnum, (slong)d);
        }
    free(P->c), free(P->gb);
    _arb_vec_clear(P->xhf, (slong)N), _arb_vec_clear(P->rf, (slong)P->R);
    _arb_vec_clear(P->t1, (slong)N), _arb_vec_clear(P->t2, (slong)N);
    _arb_vec_clear(P->t3, (slong)N), _arb_vec_clear(P->gv, (slong)d);
    _arb_vec_clear(P->dfg, (slong)d), _arb_vec_clear(P->dfb, (slong)d);
    arb_clear(P->eps), arb_clear(P->scale);
}

/* Arb aborts when out of memory (flint's allocator); only the small tables can fail here. */
static int pass_init(pass *P, const block_args *B, int backward)
{
    memset(P, 0, sizeof *P);
    P->B = B;
    P->R = B->batch * B->seq, P->d = B->d, P->ff = B->ff;
    size_t N = P->R * P->d, d = P->d, ff = P->ff;
    arb_init(P->eps), arb_init(P->scale);
    arb_set_d(P->eps, B->eps);
    P->c = calloc(B->nlayers ? B->nlayers : 1, sizeof *P->c);
    P->gb = backward ? calloc(B->nlayers ? B->nlayers : 1, sizeof *P->gb) : NULL;
    if (!P->c || (backward && !P->gb)) {
        free(P->c), free(P->gb);
        P->c = NULL, P->gb = NULL;
        arb_clear(P->eps), arb_clear(P->scale);
        return -1;
    }
    for (size_t l = 0; l < B->nlayers; l++) {
        layer_cache *c = &P->c[l];
        c->in = _arb_vec_init((slong)N), c->n1 = _arb_vec_init((slong)N);
        c->fin = _arb_vec_init((slong)N), c->xh1 = _arb_vec_init((slong)N);
        c->xh2 = _arb_vec_init((slong)N);
        c->r1 = _arb_vec_init((slong)P->R), c->r2 = _arb_vec_init((slong)P->R);
    }
    int bad = 0; /* a trace's small table; the trace stays clearable either way */
    for (size_t l = 0; backward && l < B->nlayers; l++) {
        layer_cache *c = &P->c[l];
        attn_args A;
        attn_of(&A, P, &B->layers[l]);
        c->have_at = 1;
        bad |= attn_trace_init(&c->at, &A) != 0;
    }
    if (backward)
        for (size_t l = 0; l < B->nlayers; l++) {
            layer_gball *G = &P->gb[l];
            G->in_w = _arb_vec_init((slong)(3 * d * d)), G->in_b = _arb_vec_init((slong)(3 * d));
            G->out_w = _arb_vec_init((slong)(d * d)), G->out_b = _arb_vec_init((slong)d);
            G->w1 = _arb_vec_init((slong)(ff * d)), G->b1 = _arb_vec_init((slong)ff);
            G->w2 = _arb_vec_init((slong)(d * ff)), G->b2 = _arb_vec_init((slong)d);
            G->g1 = _arb_vec_init((slong)d), G->b1n = _arb_vec_init((slong)d);
            G->g2 = _arb_vec_init((slong)d), G->b2n = _arb_vec_init((slong)d);
            G->b2num = _arb_vec_init((slong)d), G->obnum = _arb_vec_init((slong)d);
        }
    else
        P->gb = NULL;
    P->xhf = _arb_vec_init((slong)N), P->rf = _arb_vec_init((slong)P->R);
    P->t1 = _arb_vec_init((slong)N), P->t2 = _arb_vec_init((slong)N);
    P->t3 = _arb_vec_init((slong)N), P->gv = _arb_vec_init((slong)d);
    P->dfg = _arb_vec_init((slong)d), P->dfb = _arb_vec_init((slong)d);
    return bad ? -1 : 0;
}

static void pass_set_prec(pass *P, slong prec)
{
    if (P->B->p == 0.0) {
        arb_one(P->scale); /* exact: dropout with p = 0 keeps the identity exact */
    } else {
        arb_t t;
        arb_init(t);
        arb_set_d(t, P->B->p);
        arb_one(P->scale);
        arb_sub(P->scale, P->scale, t, prec);
        arb_inv(P->scale, P->scale, prec);
        arb_clear(t);
    }
}

/* ---------------------------------------------------------------- certification */

/* Both ends of the ball (outward to MPFR) round to the same value of out (as softmax_mpfr.c). */
static int certify_ball(double *res, const arb_t v, slong prec, rn_dtype out)
{
    if (arb_is_exact(v) && arf_is_zero(arb_midref(v))) {
        *res = 0.0;
        return 1;
    }
    return arb_round_once(res, v, prec, out);
}

/* Certify count balls into res; returns the number that failed.  The elements are independent
   (each rounding reads its ball alone; MPFR's state is per thread), so the big parameter gradients
   are shared among the OpenMP threads: the result does not depend on the thread count.
   res NULL: the caller does not want this output (a golden case that leaves the weight matrices'
   gradients out); its balls are still computed, since other outputs depend on them, but not
   rounded, and they do not hold up the Ziv loop. */
static size_t certify_vec(double *res, arb_srcptr v, size_t count, slong prec, rn_dtype out)
{
    size_t bad = 0;
    if (!res)
        return 0;
#pragma omp parallel for schedule(static) reduction(+ : bad) if (count >= 65536)
    for (size_t i = 0; i < count; i++)
        bad += !certify_ball(res + i, v + i, prec, out);
    return bad;
}

/* res[j] = num[j]/(1 - p) rounded once (num exact dyadic balls): exact division, never a tie
   left undecided.  Returns the number that failed. */
static size_t certify_rational(double *res, arb_srcptr num, size_t n, double p, rn_dtype out)
{
    mpfr_t c, one, pp, s;
    work w;
    size_t bad = 0;
    mpfr_inits2(64, one, pp, (mpfr_ptr)0);
    mpfr_init2(c, 2 * 1100); /* 1 - p exact (binary64 p) */
    work_init(&w);
    mpfr_set_ui(one, 1, MPFR_RNDN);
    set_d(pp, p);
    mpfr_sub(c, one, pp, MPFR_RNDN);
    for (size_t j = 0; j < n; j++) {
        const arf_struct *m = arb_midref(num + j);
        if (arf_is_zero(m)) {
            res[j] = 0.0;
            continue;
        }
        slong bits = arf_bits(m);
        mpfr_init2(s, bits < 2 ? 2 : (mpfr_prec_t)bits);
        arf_get_mpfr(s, m, MPFR_RNDN); /* exact */
        bad += ziv_quot(&res[j], &w, s, NULL, c, NULL, out) != RN_TWIN_OK;
        mpfr_clear(s);
    }
    work_clear(&w);
    mpfr_clears(c, one, pp, (mpfr_ptr)0);
    return bad;
}

/* Does every query of every batch see exactly one live key (then P = 1 and dS = 0 exactly)? */
static int one_live_key_each(const block_args *B)
{
    for (size_t b = 0; b < B->batch; b++)
        for (size_t i = 0; i < B->seq; i++) {
            size_t live = 0;
            for (size_t j = 0; j < B->seq; j++)
                live += !(B->kpm && B->kpm[b * B->seq + j] != 0.0) && !(B->causal && j > i);
            if (live != 1)
                return 0;
        }
    return 1;
}

/* The exact zeros of the attention's parameter gradients (file comment). */
static void exact_attention_zeros(const pass *P)
{
    size_t d = P->d;
    int qk_zero = one_live_key_each(P->B);
    for (size_t l = 0; l < P->B->nlayers; l++) {
        layer_gball *G = &P->gb[l];
        _arb_vec_zero(G->in_b + d, (slong)d);
        if (qk_zero) {
            _arb_vec_zero(G->in_w, (slong)(2 * d * d));
            _arb_vec_zero(G->in_b, (slong)d);
        }
    }
}

static size_t certify_grads(const pass *P, arb_srcptr g, const block_grads *o, slong prec,
                            rn_dtype out)
{
    size_t d = P->d, ff = P->ff, bad = certify_vec(o->dx, g, P->R * d, prec, out);
    for (size_t l = 0; l < P->B->nlayers; l++) {
        const layer_gball *G = &P->gb[l];
        const block_layer_grad *q = &o->layers[l];
        bad += certify_vec(q->in_w, G->in_w, 3 * d * d, prec, out);
        bad += certify_vec(q->in_b, G->in_b, 3 * d, prec, out);
        bad += certify_vec(q->out_w, G->out_w, d * d, prec, out);
        bad += G->rat_ob ? certify_rational(q->out_b, G->obnum, d, P->B->p, out)
                         : certify_vec(q->out_b, G->out_b, d, prec, out);
        bad += certify_vec(q->w1, G->w1, ff * d, prec, out);
        bad += certify_vec(q->b1, G->b1, ff, prec, out);
        bad += certify_vec(q->w2, G->w2, d * ff, prec, out);
        bad += G->rat_b2 ? certify_rational(q->b2, G->b2num, d, P->B->p, out)
                         : certify_vec(q->b2, G->b2, d, prec, out);
        bad += certify_vec(q->g1, G->g1, d, prec, out);
        bad += certify_vec(q->b1n, G->b1n, d, prec, out);
        bad += certify_vec(q->g2, G->g2, d, prec, out);
        bad += certify_vec(q->b2n, G->b2n, d, prec, out);
    }
    if (P->B->fg) {
        bad += certify_vec(o->dfg, P->dfg, d, prec, out);
        bad += certify_vec(o->dfb, P->dfb, d, prec, out);
    }
    return bad;
}

/* ---------------------------------------------------------------- entry points */

/* One certified computation for every dtype of dts: forward (y) or backward (g, given dy). */
static int run(double *const *y, const block_grads *g, const double *dy, const rn_dtype *dts,
               int ndt, const block_args *B)
{
    pass P;
    int backward = dy != NULL;
    if (pass_init(&P, B, backward) != 0) {
        if (P.c) /* past the first tables: everything is initialized */
            pass_clear(&P);
        return RN_TWIN_NOMEM;
    }
    size_t N = P.R * P.d;
    arb_ptr v = _arb_vec_init((slong)N), w = _arb_vec_init((slong)N);
    int rc = RN_TWIN_UNCERTIFIED;
    for (slong prec = BLOCK_PREC0; prec <= BLOCK_PREC_MAX; prec *= 2) {
        last_prec = (long)prec;
        pass_set_prec(&P, prec);
        if (stack_forward(&P, v, prec) != 0) {
            rc = RN_TWIN_NOMEM;
            break;
        }
        if (backward) {
            if (stack_backward(&P, v, w, dy, prec) != 0) {
                rc = RN_TWIN_NOMEM;
                break;
            }
            exact_attention_zeros(&P);
        }
        size_t bad = 0;
        for (int k = 0; k < ndt && bad == 0; k++)
            bad = backward ? certify_grads(&P, v, &g[k], prec, dts[k])
                           : certify_vec(y[k], v, N, prec, dts[k]);
        if (bad == 0) {
            rc = RN_TWIN_OK;
            break;
        }
    }
    _arb_vec_clear(v, (slong)N), _arb_vec_clear(w, (slong)N);
    pass_clear(&P);
    flint_cleanup();
    return rc;
}

int block_forward_mpfr(double *const *y, const rn_dtype *dts, int ndt, const block_args *B)
{
    return run(y, NULL, NULL, dts, ndt, B);
}

int block_backward_mpfr(const block_grads *g, const rn_dtype *dts, int ndt, const double *dy,
                        const block_args *B)
{
    return run(NULL, g, dy, dts, ndt, B);
}
