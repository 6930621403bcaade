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
#ifdef RESNORM_WP_ROWS
#include "block_rows.h" /* the rows run: the forward composed (specs/block_rows.h) */
#endif

#ifdef RESNORM_WP_ROWS
#include "rows_fit.h"

/* The rows run: every row of a [rows, n] array fits in it, with lin_row_start and ln_row_start as
   the triggers (specs/rows_fit.h). */
/*@ ghost ROWS_FIT_LEMMA(blk_lemma_rows_fit, ensures rows_fit: ROWS_FIT(lin_row_start);
                                             ensures ln_rows_fit: ROWS_FIT(ln_row_start);) */
#endif

/* The parameters' and the caches' layout (specs/block.h lists the fields in order), in one place
   for the head, the forward and the backward.  Each macro declares the pointers into one block from
   the locals rows = B·T, n = B·T·d, B, T, d and ff (a function leaves some unused).  Every offset is
   one small int product (3 * (d * d), 3 * n, B * T * ff rather than 3 * d * d, B * T * 3 * d), and
   att [B, H, T, T] is the last cache, so that no offset needs B·H·T·T: the int-overflow goals then
   need no nonlinear step, which the solvers do not take.
   BLOCK_PARAMS(Q, P, base): Q *P##in_w .. *P##b2n from base (P empty: the parameters; P = d: their
   gradients, din_w .. db2n, the same layout).  BLOCK_CACHES(Q, base): Q *ln1 .. *att from base. */
#define BLOCK_PARAMS(Q, P, base)                                                                   \
    __attribute__((unused)) Q *P##in_w = (base), *P##in_b = P##in_w + 3 * (d * d),                 \
        *P##out_w = P##in_b + 3 * d, *P##out_b = P##out_w + d * d, *P##w1 = P##out_b + d,          \
        *P##b1 = P##w1 + d * ff, *P##w2 = P##b1 + ff, *P##b2 = P##w2 + d * ff, *P##g1 = P##b2 + d, \
        *P##b1n = P##g1 + d, *P##g2 = P##b1n + d, *P##b2n = P##g2 + d
#define BLOCK_CACHES(Q, base)                                                                      \
    __attribute__((unused)) Q *ln1 = (base), *mean1 = ln1 + n, *rstd1 = mean1 + rows,              \
        *qkv = rstd1 + rows, *ctx = qkv + 3 * n, *row = ctx + n, *a = row + 2 * T, *s1 = a + n,    \
        *ln2 = s1 + n, *mean2 = ln2 + n, *rstd2 = mean2 + rows, *z = rstd2 + rows,                 \
        *hh = z + B * T * ff, *f = hh + B * T * ff, *s2 = f + n, *att = s2 + n

/* ---- float ---- */

/* v[i] = c for i < n (c = 0: the scratch that an accumulating callee adds into).  The value is
   proved in the loop invariant and not exported; c is a parameter, as in ref/ffn.c's ffn_fill: a
   float literal in these goals trips Why3 1.5.1's real/int typing ("Type mismatch between real and
   int"), and the callers' goals (RTE, assigns) do not need the value. */
/*@ requires n_nonneg: n >= 0;
    requires valid_v: \valid(v + (0 .. n - 1));
    assigns v[0 .. n - 1]; */
static void block_fill_f32(float *v, float c, int n)
{
    /*@ loop invariant i_range: 0 <= i <= n;
        loop invariant done: \forall integer k; 0 <= k < i ==> v[k] == c;
        loop assigns i, v[0 .. n - 1];
        loop variant n - i; */
    for (int i = 0; i < n; i++)
        v[i] = c;
}

/* The dropout's backward of g into out (zeroed first: dropout_backward accumulates), returned; or
   g itself without a mask. */
/*@ requires n_nonneg: n >= 0;
    requires valid: \valid_read(g + (0 .. n - 1)) && \valid(out + (0 .. n - 1));
    requires valid_mask: mask == \null || \valid_read(mask + (0 .. n - 1));
    requires sep: \separated(out + (0 .. n - 1), g + (0 .. n - 1));
    requires sep_mask: mask == \null || \separated(out + (0 .. n - 1), g + (0 .. n - 1), mask + (0 .. n - 1));
    assigns out[0 .. n - 1];
    ensures no_mask: mask == \null ==> \result == g;
    ensures mask: mask != \null ==> \result == out; */
static const float *block_dropout_grad_f32(float *out, const float *g, const float *mask, float scale, int n)
{
    if (!mask)
        return g;
    block_fill_f32(out, 0.0f, n);
    dropout_backward_f32(out, g, mask, scale, n);
    return out;
}

/* yv = LayerNorm(xv) with gv, bv (mv, rv: its statistics), xv [rows, d]: the norm's call, and in
   the rows run its rows restated over the buffers at return (LayerNorm's own clause reads xv, gv,
   bv at entry). */
/*@ BLK_LN_CONTRACT(float) */
static void block_layernorm_f32(float *yv, float *mv, float *rv, const float *xv, const float *gv,
                                const float *bv, int rows, int d, float eps)
{
    layernorm_forward_f32(yv, mv, rv, xv, gv, bv, rows, d, eps);
#ifdef RESNORM_WP_ROWS
    //@ ghost blk_lemma_rows_fit(rows, d);
    /*@ assert x_same: BLK_SAME(xv, rows * d, Pre); */
    /*@ assert g_same: BLK_SAME(gv, d, Pre); */
    /*@ assert b_same: BLK_SAME(bv, d, Pre); */
#endif
}

/* dxv, dgv, dbv += LayerNorm's backward of dyv at xv (gv; mv, rv its statistics), xv [rows, d]:
   the norm's call behind a contract without its rows clauses (BLK_LN_BWD_CONTRACT says why). */
/*@ BLK_LN_BWD_CONTRACT */
static void block_layernorm_backward_f32(float *dxv, float *dgv, float *dbv, const float *dyv,
                                         const float *xv, const float *gv, const float *mv,
                                         const float *rv, int rows, int d)
    /*@ ghost (float *gr, int o) */
{
    layernorm_backward_f32(dxv, dgv, dbv, dyv, xv, gv, mv, rv, rows, d);
}

/* The attention's backward (its contract) with, in the rows run, the frame of gr[o .. o + 2d - 1]
   (BLK_ATT_BWD_CONTRACT says why). */
/*@ BLK_ATT_BWD_CONTRACT */
static void block_attention_backward_f32(float *dx, float *din_w, float *din_b, float *dout_w,
                                         float *dout_b, float *dqkv, float *dctx, float *row,
                                         const float *dy, const float *x, const float *in_w,
                                         const float *out_w, const float *qkv, const float *att,
                                         const float *ctx, const float *amask, float p, int B,
                                         int T, int d, int H)
    /*@ ghost (float *gr, int o) */
{
    attention_backward_f32(dx, din_w, din_b, dout_w, dout_b, dqkv, dctx, row, dy, x, in_w, out_w, qkv, att,
                           ctx, amask, p, B, T, d, H);
}

/* The FFN's backward (its contract) with, in the rows run, the frame of gr[o .. o + 2d - 1]
   (BLK_FFN_BWD_CONTRACT says why). */
/*@ BLK_FFN_BWD_CONTRACT */
static void block_ffn_backward_f32(float *dx, float *dw1, float *db1, float *dw2, float *db2, float *dh,
                                   const float *dy, const float *x, const float *z, const float *h,
                                   const float *w1, const float *w2, const float *mask, float p,
                                   ffn_act act, int rows, int d, int ff)
    /*@ ghost (float *gr, int o) */
{
    ffn_backward_f32(dx, dw1, db1, dw2, db2, dh, dy, x, z, h, w1, w2, mask, p, act, rows, d, ff);
}

/* ga = LayerNorm's backward of gb at xv (gv; mv, rv its statistics), dgv, dbv += its parameter
   gradients, then dx += ga; all [rows, d] but gv, dgv, dbv [d] and mv, rv [rows]: pre-LN's last two
   steps behind one contract, whose rows clause reads the norm's sums at return
   (BLK_LN1_BWD_ADD_CONTRACT says why). */
/*@ BLK_LN1_BWD_ADD_CONTRACT BLK_LN1_KEPT(float) */
static void block_ln1_backward_add_f32(float *dx, float *ga, float *dgv, float *dbv, const float *gb,
                                       const float *xv, const float *gv, const float *mv, const float *rv,
                                       int rows, int d)
{
    layernorm_backward_f32(ga, dgv, dbv, gb, xv, gv, mv, rv, rows, d);
#ifdef RESNORM_WP_ROWS
    ln_done:;
    /*@ assert dgb_call: ln_dgb_rows{Pre, Here}(dgv, dbv, gb, xv, mv, rv, rows, d); */
#endif
    residual_forward_f32(dx, dx, ga, rows * d);
#ifdef RESNORM_WP_ROWS
    /*@ assert dg_kept: \forall integer k; 0 <= k < d ==>
          dgv[k] == \at(dgv[k], ln_done) && dbv[k] == \at(dbv[k], ln_done); */
    /*@ assert in_same: \forall integer k; 0 <= k < rows * d ==>
          \at(gb[k], Pre) == gb[k] && \at(xv[k], Pre) == xv[k]; */
    /*@ assert stats_same: \forall integer q; 0 <= q < rows ==>
          \at(mv[q], Pre) == mv[q] && \at(rv[q], Pre) == rv[q]; */
    /*@ assert col_rng: \forall integer i, q; 0 <= i < d ==> 0 <= q < rows ==>
          0 <= ln_col_idx(q, d, i) < rows * d; */
    /*@ assert in_cols: \forall integer i, q; 0 <= i < d ==> 0 <= q < rows ==>
          \at(gb[ln_col_idx(q, d, i)], Pre) == gb[ln_col_idx(q, d, i)] &&
          \at(xv[ln_col_idx(q, d, i)], Pre) == xv[ln_col_idx(q, d, i)]; */
#endif
}

/* f = drop2(ffn(u)): u [rows, d] -> f [rows, d], the FFN's caches z, hh [rows, ff]. */
/*@ BLK_FFN_SUB_CONTRACT(ffn_h32, float) */
static void block_ffn_sublayer_f32(float *f, float *z, float *hh, const float *u, const float *w1,
                                   const float *b1, const float *w2, const float *b2, const float *dmask,
                                   const float *d2mask, float p, ffn_act act, int rows, int d, int ff)
{
    ffn_forward_f32(f, z, hh, u, w1, b1, w2, b2, dmask, p, act, rows, d, ff);
#ifdef RESNORM_WP_ROWS
ffn_done:;
#endif
    if (d2mask)
        dropout_forward_f32(f, f, d2mask, dropout_scale_f32(p), rows * d);
#ifdef RESNORM_WP_ROWS
    /* The rows run: the FFN's rows, stated over u, w1 at entry and hh, w2 at ffn_done, are over
       them at return (the dropout wrote f only): frame facts, then each dot over two memory states
       by lin_dot_shift and lin_dot_at_frame (specs/linear_rows.h), as in ref/ffn.c. */
    //@ ghost blk_lemma_rows_fit(rows, d);
    //@ ghost blk_lemma_rows_fit(rows, ff);
    //@ ghost blk_lemma_rows_fit(ff, d);
    //@ ghost blk_lemma_rows_fit(d, ff);
    /*@ assert z_same: BLK_SAME(z, rows * ff, ffn_done); */
    /*@ assert hh_same: BLK_SAME(hh, rows * ff, ffn_done); */
    /*@ assert u_same: BLK_SAME(u, rows * d, Pre); */
    /*@ assert w1_same: BLK_SAME(w1, d * ff, Pre); */
    /*@ assert b1_same: BLK_SAME(b1, ff, Pre); */
    /*@ assert w2_same: BLK_SAME(w2, d * ff, ffn_done); */
    /*@ assert b2_same: BLK_SAME(b2, d, ffn_done); */
    /*@ assert dmask_same: dmask == \null || BLK_SAME(dmask, rows * ff, ffn_done); */
    /*@ assert h_model_same: \forall integer i; 0 <= i < rows * ff ==>
          \at(ffn_h32(act, z, dmask, p, i), ffn_done) == ffn_h32(act, z, dmask, p, i); */
    /*@ assert dot1_at: BLK_DOT_AT_SAME(u, w1, d, rows, ff, Pre); */
    /*@ assert dot1: BLK_DOT_SAME(u, w1, d, rows, ff, Pre); */
    /*@ assert bias1: BLK_BIAS_SAME(b1, ff, Pre); */
    /*@ assert dot2_at: BLK_DOT_AT_SAME(hh, w2, ff, rows, d, ffn_done); */
    /*@ assert dot2: BLK_DOT_SAME(hh, w2, ff, rows, d, ffn_done); */
    /*@ assert bias2: BLK_BIAS_SAME(b2, d, ffn_done); */
    /*@ assert f_at_ffn: \forall integer r, j; 0 <= r < rows && 0 <= j < d ==>
          \at(f[lin_row_start(r, d) + j], ffn_done) == \at(blk_ffn_y(hh, w2, b2, r, j, ff), ffn_done); */
    /*@ assert f_ffn: \forall integer r, j; 0 <= r < rows && 0 <= j < d ==>
          \at(f[lin_row_start(r, d) + j], ffn_done) == blk_ffn_y(hh, w2, b2, r, j, ff); */
#endif
}

/* pre-LN's FFN and add: f = drop2(ffn(u)); y = s1 + f. */
/*@ BLK_FFN_ADD_CONTRACT(ffn_h32) */
static void block_ffn_add_f32(float *y, float *f, float *z, float *hh, const float *u, const float *s1,
                              const float *w1, const float *b1, const float *w2, const float *b2,
                              const float *dmask, const float *d2mask, float p, ffn_act act, int rows, int d,
                              int ff)
{
    block_ffn_sublayer_f32(f, z, hh, u, w1, b1, w2, b2, dmask, d2mask, p, act, rows, d, ff);
#ifdef RESNORM_WP_ROWS
ffn_done:;
#endif
    residual_forward_f32(y, s1, f, rows * d);
#ifdef RESNORM_WP_ROWS
    /* The rows run: the FFN's rows (ffn_done) at return (the add wrote y only): frame facts, then
       the FFN's dots over two memory states. */
    //@ ghost blk_lemma_rows_fit(rows, d);
    //@ ghost blk_lemma_rows_fit(rows, ff);
    //@ ghost blk_lemma_rows_fit(ff, d);
    //@ ghost blk_lemma_rows_fit(d, ff);
    /*@ assert z_same: BLK_SAME(z, rows * ff, ffn_done); */
    /*@ assert hh_same: BLK_SAME(hh, rows * ff, ffn_done); */
    /*@ assert f_same: BLK_SAME(f, rows * d, ffn_done); */
    /*@ assert u_same: BLK_SAME(u, rows * d, ffn_done); */
    /*@ assert w1_same: BLK_SAME(w1, d * ff, ffn_done); */
    /*@ assert b1_same: BLK_SAME(b1, ff, ffn_done); */
    /*@ assert w2_same: BLK_SAME(w2, d * ff, ffn_done); */
    /*@ assert b2_same: BLK_SAME(b2, d, ffn_done); */
    /*@ assert dmask_same: dmask == \null || BLK_SAME(dmask, rows * ff, ffn_done); */
    /*@ assert d2mask_same: d2mask == \null || BLK_SAME(d2mask, rows * d, ffn_done); */
    /*@ assert dot1_at: BLK_DOT_AT_SAME(u, w1, d, rows, ff, ffn_done); */
    /*@ assert dot1: BLK_DOT_SAME(u, w1, d, rows, ff, ffn_done); */
    /*@ assert bias1: BLK_BIAS_SAME(b1, ff, ffn_done); */
    /*@ assert dot2_at: BLK_DOT_AT_SAME(hh, w2, ff, rows, d, ffn_done); */
    /*@ assert dot2: BLK_DOT_SAME(hh, w2, ff, rows, d, ffn_done); */
    /*@ assert bias2: BLK_BIAS_SAME(b2, d, ffn_done); */
    /*@ assert h_model_same: \forall integer i; 0 <= i < rows * ff ==>
          \at(ffn_h32(act, z, dmask, p, i), ffn_done) == ffn_h32(act, z, dmask, p, i); */
    /*@ assert f_model_same: \forall integer r, j; 0 <= r < rows && 0 <= j < d ==>
          \at(BLK_F_MODEL, ffn_done) == BLK_F_MODEL; */
#endif
}

/* pre-LN's tail: ln2 = norm2(s1); f = drop2(ffn(ln2)); y = s1 + f. */
/*@ BLK_TAIL_PRE_CONTRACT(ffn_h32, float) */
static void block_tail_pre_f32(float *y, float *ln2, float *mean2, float *rstd2, float *f, float *z,
                               float *hh, const float *s1, const float *w1, const float *b1,
                               const float *w2, const float *b2, const float *g2, const float *b2n,
                               const float *dmask, const float *d2mask, float p, float eps, ffn_act act,
                               int rows, int d, int ff)
{
    block_layernorm_f32(ln2, mean2, rstd2, s1, g2, b2n, rows, d, eps);
#ifdef RESNORM_WP_ROWS
ln_done:;
#endif
    block_ffn_add_f32(y, f, z, hh, ln2, s1, w1, b1, w2, b2, dmask, d2mask, p, act, rows, d, ff);
#ifdef RESNORM_WP_ROWS
    /* The rows run: ln2's rows (ln_done) at return (the FFN and add wrote y, f, z, hh only) */
    //@ ghost blk_lemma_rows_fit(rows, d);
    /*@ assert ln_same: BLK_SAME(ln2, rows * d, ln_done); */
    /*@ assert mean_same: BLK_SAME(mean2, rows, ln_done); */
    /*@ assert rstd_same: BLK_SAME(rstd2, rows, ln_done); */
    /*@ assert x_same: BLK_SAME(s1, rows * d, ln_done); */
    /*@ assert g_same: BLK_SAME(g2, d, ln_done); */
    /*@ assert b_same: BLK_SAME(b2n, d, ln_done); */
    /*@ assert ln_pt: BLK_LN_PT(ln2, mean2, rstd2, s1, g2, b2n); */
    /*@ assert ln_rows: BLK_LN_ROWS_AT(Here, rows, ln2, mean2, rstd2, s1, g2, b2n); */
#endif
}

/* post-LN's output: s2 = h + f; y = norm2(s2). */
/*@ BLK_OUT_POST_CONTRACT(float) */
static void block_out_post_f32(float *y, float *s2, float *mean2, float *rstd2, const float *h,
                               const float *f, const float *g2, const float *b2n, float eps, int rows, int d)
{
    residual_forward_f32(s2, h, f, rows * d);
#ifdef RESNORM_WP_ROWS
res_done:;
#endif
    block_layernorm_f32(y, mean2, rstd2, s2, g2, b2n, rows, d, eps);
#ifdef RESNORM_WP_ROWS
    /* The rows run: s2 as the add left it */
    /*@ assert s2_same: BLK_SAME(s2, rows * d, res_done); */
    /*@ assert h_same: BLK_SAME(h, rows * d, res_done); */
    /*@ assert f_same: BLK_SAME(f, rows * d, res_done); */
#endif
}

/* post-LN's tail: h = norm1(s1); f = drop2(ffn(h)); s2 = h + f; y = norm2(s2). */
/*@ BLK_TAIL_POST_CONTRACT(ffn_h32, float) */
static void block_tail_post_f32(float *y, float *s2, float *mean2, float *rstd2, float *f, float *z, float *hh,
                                float *h, float *mean1, float *rstd1, const float *s1, const float *g1,
                                const float *b1n, const float *w1, const float *b1, const float *w2,
                                const float *b2, const float *g2, const float *b2n, const float *dmask,
                                const float *d2mask, float p, float eps, ffn_act act, int rows, int d, int ff)
    /*@ ghost (const float *x, const float *a) */
{
    block_layernorm_f32(h, mean1, rstd1, s1, g1, b1n, rows, d, eps);
#ifdef RESNORM_WP_ROWS
ln_done:;
    /* norm1's input, parameters and statistics, and the driver's x and a (ghost), lie outside
       what the FFN and the output write, pointwise: the callees' assigns then carry them (a
       quantified kept clause on those callees made the LayerNorm step below time out) */
    /*@ assert sep_x: \forall integer k; 0 <= k < rows * d ==>
          \separated(s1 + k, BLK_FFN_OUT) && \separated(s1 + k, BLK_OUT_POST_OUT); */
    /*@ assert sep_xa: \forall integer k; 0 <= k < rows * d ==>
          \separated(x + k, BLK_FFN_OUT) && \separated(x + k, BLK_OUT_POST_OUT) &&
          \separated(a + k, BLK_FFN_OUT) && \separated(a + k, BLK_OUT_POST_OUT) &&
          \separated(x + k, BLK_R(h, rows * d), BLK_R(mean1, rows), BLK_R(rstd1, rows)) &&
          \separated(a + k, BLK_R(h, rows * d), BLK_R(mean1, rows), BLK_R(rstd1, rows)); */
    /*@ assert sep_stats: \forall integer r; 0 <= r < rows ==>
          \separated(mean1 + r, BLK_FFN_OUT) && \separated(rstd1 + r, BLK_FFN_OUT) &&
          \separated(mean1 + r, BLK_OUT_POST_OUT) && \separated(rstd1 + r, BLK_OUT_POST_OUT); */
    /*@ assert sep_par: \forall integer i; 0 <= i < d ==>
          \separated(g1 + i, BLK_FFN_OUT) && \separated(b1n + i, BLK_FFN_OUT) &&
          \separated(g1 + i, BLK_OUT_POST_OUT) && \separated(b1n + i, BLK_OUT_POST_OUT); */
#endif
    block_ffn_sublayer_f32(f, z, hh, h, w1, b1, w2, b2, dmask, d2mask, p, act, rows, d, ff);
#ifdef RESNORM_WP_ROWS
ffn_done:;
    /* the rows run: h = norm1(s1) (ln_done) across the FFN (its assigns and the separations) */
    //@ ghost blk_lemma_rows_fit(rows, d);
    /*@ assert ln_same1: BLK_SAME(h, rows * d, ln_done); */
    /*@ assert mean_same1: BLK_SAME(mean1, rows, ln_done); */
    /*@ assert rstd_same1: BLK_SAME(rstd1, rows, ln_done); */
    /*@ assert x_same1: BLK_SAME(s1, rows * d, ln_done); */
    /*@ assert g_same1: BLK_SAME(g1, d, ln_done); */
    /*@ assert b_same1: BLK_SAME(b1n, d, ln_done); */
    /*@ assert ln_pt1: BLK_LN_PT(h, mean1, rstd1, s1, g1, b1n); */
    /* what the FFN wrote and read lies outside what the output writes, pointwise */
    /*@ assert sep_ff: \forall integer k; 0 <= k < rows * ff ==>
          \separated(z + k, BLK_OUT_POST_OUT) && \separated(hh + k, BLK_OUT_POST_OUT) &&
          (dmask == \null || \separated(dmask + k, BLK_OUT_POST_OUT)); */
    /*@ assert sep_d: \forall integer k; 0 <= k < rows * d ==>
          \separated(f + k, BLK_OUT_POST_OUT) && \separated(h + k, BLK_OUT_POST_OUT) &&
          (d2mask == \null || \separated(d2mask + k, BLK_OUT_POST_OUT)); */
    /*@ assert sep_w: \forall integer k; 0 <= k < d * ff ==>
          \separated(w1 + k, BLK_OUT_POST_OUT) && \separated(w2 + k, BLK_OUT_POST_OUT); */
    /*@ assert sep_b: (\forall integer k; 0 <= k < ff ==> \separated(b1 + k, BLK_OUT_POST_OUT)) &&
          (\forall integer k; 0 <= k < d ==> \separated(b2 + k, BLK_OUT_POST_OUT)); */
#endif
    block_out_post_f32(y, s2, mean2, rstd2, h, f, g2, b2n, eps, rows, d);
#ifdef RESNORM_WP_ROWS
    /* The rows run: the FFN's rows (ffn_done) at return (the output wrote y, s2, mean2 and rstd2
       only): frame facts, then the FFN's dots over two memory states. */
    //@ ghost blk_lemma_rows_fit(rows, d);
    //@ ghost blk_lemma_rows_fit(rows, ff);
    //@ ghost blk_lemma_rows_fit(ff, d);
    //@ ghost blk_lemma_rows_fit(d, ff);
    /*@ assert z_same: BLK_SAME(z, rows * ff, ffn_done); */
    /*@ assert hh_same: BLK_SAME(hh, rows * ff, ffn_done); */
    /*@ assert f_same: BLK_SAME(f, rows * d, ffn_done); */
    /*@ assert u_same: BLK_SAME(h, rows * d, ffn_done); */
    /*@ assert w1_same: BLK_SAME(w1, d * ff, ffn_done); */
    /*@ assert b1_same: BLK_SAME(b1, ff, ffn_done); */
    /*@ assert w2_same: BLK_SAME(w2, d * ff, ffn_done); */
    /*@ assert b2_same: BLK_SAME(b2, d, ffn_done); */
    /*@ assert dmask_same: dmask == \null || BLK_SAME(dmask, rows * ff, ffn_done); */
    /*@ assert d2mask_same: d2mask == \null || BLK_SAME(d2mask, rows * d, ffn_done); */
    /*@ assert dot1_at: BLK_DOT_AT_SAME(h, w1, d, rows, ff, ffn_done); */
    /*@ assert dot1: BLK_DOT_SAME(h, w1, d, rows, ff, ffn_done); */
    /*@ assert bias1: BLK_BIAS_SAME(b1, ff, ffn_done); */
    /*@ assert dot2_at: BLK_DOT_AT_SAME(hh, w2, ff, rows, d, ffn_done); */
    /*@ assert dot2: BLK_DOT_SAME(hh, w2, ff, rows, d, ffn_done); */
    /*@ assert bias2: BLK_BIAS_SAME(b2, d, ffn_done); */
    /*@ assert h_model_same: \forall integer i; 0 <= i < rows * ff ==>
          \at(ffn_h32(act, z, dmask, p, i), ffn_done) == ffn_h32(act, z, dmask, p, i); */
    /*@ assert f_model_same: \forall integer r, j; 0 <= r < rows && 0 <= j < d ==>
          \at(BLK_F_MODEL, ffn_done) == BLK_F_MODEL; */
    /* h = norm1(s1) (ffn_done) across the output (its assigns and the separations) */
    /*@ assert mean_same: BLK_SAME(mean1, rows, ffn_done); */
    /*@ assert rstd_same: BLK_SAME(rstd1, rows, ffn_done); */
    /*@ assert x_same: BLK_SAME(s1, rows * d, ffn_done); */
    /*@ assert g_same: BLK_SAME(g1, d, ffn_done); */
    /*@ assert b_same: BLK_SAME(b1n, d, ffn_done); */
    /*@ assert ln_pt: BLK_LN_PT(h, mean1, rstd1, s1, g1, b1n); */
    /*@ assert ln_rows: BLK_LN_ROWS_AT(Here, rows, h, mean1, rstd1, s1, g1, b1n); */
    /* x and a (the driver's, ghost) and s1 as on entry: norm1's kept, the assigns of the rest */
    /*@ assert xa_ln: \forall integer k; 0 <= k < rows * d ==>
          \at(x[k], ln_done) == \at(x[k], Pre) && \at(a[k], ln_done) == \at(a[k], Pre) &&
          \at(s1[k], ln_done) == \at(s1[k], Pre); */
    /*@ assert xa_ffn: \forall integer k; 0 <= k < rows * d ==>
          \at(x[k], ffn_done) == \at(x[k], ln_done) && \at(a[k], ffn_done) == \at(a[k], ln_done); */
    /*@ assert xa_out: \forall integer k; 0 <= k < rows * d ==>
          x[k] == \at(x[k], ffn_done) && a[k] == \at(a[k], ffn_done); */
#endif
}

/* The first sublayer: a = drop1(attn(v)), v = norm1(x) (pre) or x (post); s1 = x + a, in the caches
   of specs/block.h. */
/*@ BLK_HEAD_CONTRACT */
static void block_head_f32(float *acts, const float *x, const float *params, const float *kpm,
                           const float *amask, const float *d1mask, float p, float eps, int post, int causal,
                           int B, int T, int d, int H, int ff)
{
    int rows = B * T, n = B * T * d;
    BLOCK_PARAMS(const float, , params);
    BLOCK_CACHES(float, acts);
    const float *v = x;
    if (!post) {
        layernorm_forward_f32(ln1, mean1, rstd1, x, g1, b1n, rows, d, eps);
        v = ln1;
    }
    attention_forward_f32(a, qkv, att, ctx, row, v, in_w, in_b, out_w, out_b, kpm, amask, p, B, T, d, H, causal);
    if (d1mask)
        dropout_forward_f32(a, a, d1mask, dropout_scale_f32(p), n);
    residual_forward_f32(s1, x, a, n);
}

void block_forward_f32(float *y, float *acts, const float *x, const float *params, const float *kpm,
                       const float *amask, const float *dmask, const float *d1mask,
                       const float *d2mask, float p, float eps, int post, ffn_act act, int causal,
                       int B, int T, int d, int H, int ff)
{
    int rows = B * T, n = B * T * d;
    BLOCK_PARAMS(const float, , params);
    BLOCK_CACHES(float, acts);
#ifdef RESNORM_WP_ROWS
    /*@ assert BLK_ROWS_PTRS; */
#endif
    /* the first sublayer: s1 = x + drop1(attn(v)) */
    block_head_f32(acts, x, params, kpm, amask, d1mask, p, eps, post, causal, B, T, d, H, ff);
#ifdef RESNORM_WP_ROWS
    /*@ assert s1_head: \forall integer i; 0 <= i < n ==> s1[i] == x[i] + a[i]; */
head_done:;
#endif
    /* the second sublayer and the output: pre-LN y = s1 + drop2(ffn(norm2(s1))); post-LN
       h = norm1(s1), y = norm2(h + drop2(ffn(h))) */
    if (!post) {
        block_tail_pre_f32(y, ln2, mean2, rstd2, f, z, hh, s1, w1, b1, w2, b2, g2, b2n, dmask, d2mask, p,
                           eps, act, rows, d, ff);
#ifdef RESNORM_WP_ROWS
        /* the rows run: s1 = x + a (the head's) at return: the tail kept them (its kept clause) */
        //@ ghost blk_lemma_rows_fit(rows, d);
        /*@ assert s1_same: BLK_SAME(s1, n, head_done); */
        /*@ assert a_same: BLK_SAME(a, n, head_done); */
        /*@ assert x_same: BLK_SAME(x, n, head_done); */
        /*@ assert s1_ret: \forall integer i; 0 <= i < n ==> s1[i] == x[i] + a[i]; */
#endif
    } else {
#ifdef RESNORM_WP_ROWS
        /*@ assert x_sep: \forall integer k; 0 <= k < n ==>
              \separated(x + k, BLK_OUT_POST_OUT, BLK_FFN_OUT, BLK_R(ln1, n), BLK_R(mean1, rows),
                         BLK_R(rstd1, rows)); */
#endif
        block_tail_post_f32(y, s2, mean2, rstd2, f, z, hh, ln1, mean1, rstd1, s1, g1, b1n, w1, b1, w2, b2,
                            g2, b2n, dmask, d2mask, p, eps, act, rows, d, ff) /*@ ghost (x, a) */;
#ifdef RESNORM_WP_ROWS
        /* the rows run: s1 = x + a (the head's) at return: the tail keeps s1, and x and a, its
           ghost parameters (its s1_kept clause) */
        //@ ghost blk_lemma_rows_fit(rows, d);
        /*@ assert s1_same: BLK_SAME(s1, n, head_done); */
        /*@ assert a_same: BLK_SAME(a, n, head_done); */
        /*@ assert x_same: BLK_SAME(x, n, head_done); */
        /*@ assert s1_ret: \forall integer i; 0 <= i < n ==> s1[i] == x[i] + a[i]; */
#endif
    }
}

void block_backward_f32(float *dx, float *grads, float *ws, const float *dy, const float *acts,
                        const float *x, const float *params, const float *amask, const float *dmask,
                        const float *d1mask, const float *d2mask, float p, int post, ffn_act act,
                        int B, int T, int d, int H, int ff)
{
    int rows = B * T, n = B * T * d;
    /* the parameters, their gradients (the same layout), the caches and the scratch */
    BLOCK_PARAMS(const float, , params);
    BLOCK_PARAMS(float, d, grads);
    BLOCK_CACHES(const float, acts);
    float *ga = ws, *gb = ga + n, *dqkv = gb + n, *dctx = dqkv + 3 * n, *dh = dctx + n,
          *ws_row = dh + B * T * ff;
    float scale = dropout_scale_f32(p);
    if (!post) {
        /* dh = norm2ᵀ(ffnᵀ(drop2ᵀ(dy))) + dy, into dx */
        const float *gf = block_dropout_grad_f32(ga, dy, d2mask, scale, n);
#ifdef RESNORM_WP_ROWS
        /*@ assert dg1_k1: BLK_GRADS_N1_SAME(Pre); */
#endif
#if defined(RESNORM_WP_BWD)
        /*@ assert dl_k1: BLK_GRADS_FFN_SAME(Pre); */
#endif
        block_fill_f32(gb, 0.0f, n);
#ifdef RESNORM_WP_ROWS
        /*@ assert dg1_k2: BLK_GRADS_N1_SAME(Pre); */
        /*@ assert sep_ffn1: \forall integer k; BLK_G1_OFF <= k < BLK_G1_OFF + 2 * d ==>
              \separated(grads + k, gb + (0 .. rows * d - 1), dw1 + (0 .. d * ff - 1), db1 + (0 .. ff - 1),
              dw2 + (0 .. d * ff - 1), db2 + (0 .. d - 1), dh + (0 .. rows * ff - 1)); */
#endif
#if defined(RESNORM_WP_BWD)
        /*@ assert dl_k2: BLK_GRADS_FFN_SAME(Pre); */
#endif
        //@ ghost int g1off = (int)(dg1 - grads);
#if defined(RESNORM_WP_BWD)
        /* the rows of dw2 [d, ff] and dw1 [ff, d] fit in them (rows_fit), for the weights' frames */
        //@ ghost blk_lemma_rows_fit(d, ff);
        //@ ghost blk_lemma_rows_fit(ff, d);
        /*@ assert dw2_rs: \forall integer j, k; 0 <= j < d ==> 0 <= k < ff ==> 0 <= lin_row_start(j, ff) + k < d * ff; */
        /*@ assert dw1_rs: \forall integer j, k; 0 <= j < ff ==> 0 <= k < d ==> 0 <= lin_row_start(j, d) + k < d * ff; */
        /*@ assert col_rs: \forall integer j, s, k; 0 <= j ==> lin_col_idx(j, s, k) == lin_row_start(j, s) + k; */
        /*@ assert dw2_rng: \forall integer j, k; 0 <= j < d ==> 0 <= k < ff ==> 0 <= lin_col_idx(j, ff, k) < d * ff; */
        /*@ assert dw1_rng: \forall integer j, k; 0 <= j < ff ==> 0 <= k < d ==> 0 <= lin_col_idx(j, d, k) < d * ff; */
        /*@ assert dw2_in: \forall integer j, k; 0 <= j < d && 0 <= k < ff ==>
              BLK_DW2[lin_col_idx(j, ff, k)] == \at(BLK_DW2[lin_col_idx(j, ff, k)], Pre); */
        ffn_in:;
#endif
        block_ffn_backward_f32(gb, dw1, db1, dw2, db2, dh, gf, ln2, z, hh, w1, w2, dmask, p, act, rows, d, ff)
            /*@ ghost (grads, g1off) */;
#ifdef RESNORM_WP_ROWS
        /*@ assert dg1_k3: BLK_GRADS_N1_SAME(Pre); */
        /*@ assert sep_ln2: \forall integer k; BLK_G1_OFF <= k < BLK_G1_OFF + 2 * d ==>
              \separated(grads + k, dx + (0 .. rows * d - 1), dg2 + (0 .. d - 1), db2n + (0 .. d - 1)); */
#endif
#if defined(RESNORM_WP_BWD)
        ffn_done:;
        /* the backward rows pass: d.linear2.bias after the FFN's backward (its db2_sum, over gf at
           the call), then the frame of the FFN's parameter gradients across the later steps */
        /*@ assert db2_ffn: BLK_DB2_AT(Here, gf, ffn_in); */
        /*@ assert dw2_call: \forall integer j, k; 0 <= j < d && 0 <= k < ff ==>
              dw2[lin_col_idx(j, ff, k)] ==
                \at(dw2[lin_col_idx(j, ff, k)], ffn_in) + lin_dw_sum{ffn_in}(gf, hh, j, k, ff, d, rows); */
        /*@ assert dw2_ffn: BLK_DW2_AT(Here, gf, hh, ffn_in); */
        /*@ assert dw1_ffn: BLK_DW1_AT(Here, dh, ln2, Here); */
        /*@ assert db1_ffn: BLK_DB1_AT(Here, dh, Here); */
        /*@ assert sep_ln2f: \forall integer k; 4 * (d * d) + 4 * d <= k < g1off ==>
              \separated(grads + k, dx + (0 .. rows * d - 1), dg2 + (0 .. d - 1), db2n + (0 .. d - 1)); */
#endif
        block_layernorm_backward_f32(dx, dg2, db2n, gb, s1, g2, mean2, rstd2, rows, d) /*@ ghost (grads, g1off) */;
#ifdef RESNORM_WP_ROWS
        /*@ assert dg1_k4: BLK_GRADS_N1_SAME(Pre); */
#endif
#if defined(RESNORM_WP_BWD)
        /*@ assert dl_k3: BLK_GRADS_FFN_SAME(ffn_done); */
#endif
        residual_forward_f32(dx, dx, dy, n);
#ifdef RESNORM_WP_ROWS
        /*@ assert dg1_k5: BLK_GRADS_N1_SAME(Pre); */
#endif
#if defined(RESNORM_WP_BWD)
        /*@ assert dl_k4: BLK_GRADS_FFN_SAME(ffn_done); */
#endif
        /* dx = norm1ᵀ(attnᵀ(drop1ᵀ(dh))) + dh */
        const float *gd = block_dropout_grad_f32(ga, dx, d1mask, scale, n);
#ifdef RESNORM_WP_ROWS
        /*@ assert dg1_k6: BLK_GRADS_N1_SAME(Pre); */
#endif
#if defined(RESNORM_WP_BWD)
        /*@ assert dl_k5: BLK_GRADS_FFN_SAME(ffn_done); */
#endif
        block_fill_f32(gb, 0.0f, n);
#ifdef RESNORM_WP_ROWS
        /*@ assert dg1_k7: BLK_GRADS_N1_SAME(Pre); */
        /*@ assert sep_att1: \forall integer k; BLK_G1_OFF <= k < BLK_G1_OFF + 2 * d ==>
              \separated(grads + k, gb + (0 .. B * T * d - 1), din_w + (0 .. 3 * d * d - 1),
              din_b + (0 .. 3 * d - 1), dout_w + (0 .. d * d - 1), dout_b + (0 .. d - 1),
              dqkv + (0 .. B * T * 3 * d - 1), dctx + (0 .. B * T * d - 1), ws_row + (0 .. 2 * T - 1)); */
#endif
#if defined(RESNORM_WP_BWD)
        /*@ assert dl_k6: BLK_GRADS_FFN_SAME(ffn_done); */
        /*@ assert sep_attf: \forall integer k; 4 * (d * d) + 4 * d <= k < g1off ==>
              \separated(grads + k, gb + (0 .. B * T * d - 1), din_w + (0 .. 3 * d * d - 1),
              din_b + (0 .. 3 * d - 1), dout_w + (0 .. d * d - 1), dout_b + (0 .. d - 1),
              dqkv + (0 .. B * T * 3 * d - 1), dctx + (0 .. B * T * d - 1), ws_row + (0 .. 2 * T - 1)); */
#endif
        block_attention_backward_f32(gb, din_w, din_b, dout_w, dout_b, dqkv, dctx, ws_row, gd, ln1, in_w,
                                     out_w, qkv, att, ctx, amask, p, B, T, d, H) /*@ ghost (grads, g1off) */;
#ifdef RESNORM_WP_ROWS
        /*@ assert dg1_k8: BLK_GRADS_N1_SAME(Pre); */
#endif
#if defined(RESNORM_WP_BWD)
        /*@ assert dl_k7: BLK_GRADS_FFN_SAME(ffn_done); */
        /*@ assert sep_ln1f: \forall integer k; BLK_W1_OFF <= k < BLK_G1_OFF ==>
              \separated(grads + k, dx + (0 .. rows * d - 1), ga + (0 .. rows * d - 1), dg1 + (0 .. d - 1),
              db1n + (0 .. d - 1)); */
#endif
        block_ln1_backward_add_f32(dx, ga, dg1, db1n, gb, x, g1, mean1, rstd1, rows, d);
#ifdef RESNORM_WP_ROWS
        /* the rows run: norm1's parameter gradients at return (dgb1_pre) are those at entry
           (dg1_k1 ... dg1_k8: every earlier step writes dx, the scratch or the other parameters'
           gradients only) plus the last step's sums, which it reads at return (dgb_ret) */
        /*@ assert dgb1_end: BLK_DGB1_AT(Here, Here); */
#endif
#if defined(RESNORM_WP_BWD)
        /*@ assert dl_k8: BLK_GRADS_FFN_SAME(ffn_done); */
        /* d.linear2.bias at return: its value at entry plus the column sums of the FFN's output
           gradient gf (dy after dropout2's backward) at the FFN's call */
        /*@ assert db2_pre: BLK_DB2_AT(Here, gf, ffn_in); */
        /* d.linear2.weight: dyᵀ·h (gf, the cache hh); d.linear1.*: dzᵀ·ln2 and dz's column sums, dz in
           dh at the FFN's return */
        /*@ assert dw2_pre: BLK_DW2_AT(Here, gf, hh, ffn_in); */
        /*@ assert dw1_pre: BLK_DW1_AT(Here, dh, ln2, ffn_done); */
        /*@ assert db1_pre: BLK_DB1_AT(Here, dh, ffn_done); */
#endif
    } else {
        /* ds2 = norm2ᵀ(dy) at s2; dh = ffnᵀ(drop2ᵀ(ds2)) + ds2, into dx */
        layernorm_backward_f32(ga, dg2, db2n, dy, s2, g2, mean2, rstd2, rows, d);
#ifdef RESNORM_WP_ROWS
        ln2_done:;
        /*@ assert dgb2_here: BLK_DGB2_AT(Here); */
#endif
#if defined(RESNORM_WP_BWD)
        /*@ assert dlp_k1: BLK_GRADS_FFN_SAME(Pre); */
#endif
        const float *gf = block_dropout_grad_f32(gb, ga, d2mask, scale, n);
#ifdef RESNORM_WP_ROWS
        /*@ assert dg2_k1: BLK_GRADS_TAIL_SAME(ln2_done); */
#endif
#if defined(RESNORM_WP_BWD)
        /*@ assert dlp_k2: BLK_GRADS_FFN_SAME(Pre); */
#endif
        block_fill_f32(dx, 0.0f, n);
#ifdef RESNORM_WP_ROWS
        /*@ assert dg2_k2: BLK_GRADS_TAIL_SAME(ln2_done); */
        /*@ assert sep_ffn: \forall integer k; BLK_G2_OFF <= k < BLK_G2_OFF + 2 * d ==>
              \separated(grads + k, dx + (0 .. rows * d - 1), dw1 + (0 .. d * ff - 1), db1 + (0 .. ff - 1),
              dw2 + (0 .. d * ff - 1), db2 + (0 .. d - 1), dh + (0 .. rows * ff - 1)); */
#endif
#if defined(RESNORM_WP_BWD)
        /*@ assert dlp_k3: BLK_GRADS_FFN_SAME(Pre); */
        /* the rows of dw1 [ff, d] fit in it (rows_fit), as in pre-LN's branch */
        //@ ghost blk_lemma_rows_fit(ff, d);
        /*@ assert dw1_rsp: \forall integer j, k; 0 <= j < ff ==> 0 <= k < d ==> 0 <= lin_row_start(j, d) + k < d * ff; */
        /*@ assert col_rsp: \forall integer j, s, k; 0 <= j ==> lin_col_idx(j, s, k) == lin_row_start(j, s) + k; */
        /*@ assert dw1_rngp: \forall integer j, k; 0 <= j < ff ==> 0 <= k < d ==> 0 <= lin_col_idx(j, d, k) < d * ff; */
        pffn_in:;
#endif
        ffn_backward_f32(dx, dw1, db1, dw2, db2, dh, gf, ln1, z, hh, w1, w2, dmask, p, act, rows, d, ff);
#ifdef RESNORM_WP_ROWS
        /*@ assert dg2_k3: BLK_GRADS_TAIL_SAME(ln2_done); */
#endif
#if defined(RESNORM_WP_BWD)
        pffn_done:;
        /* the post-LN FFN pass (-DRESNORM_WP_BWD_FFN): d.linear2.bias, d.linear1.* after the FFN's
           backward (ffn_backward_*'s rows clauses, specs/ffn_bwd_rows.h: its output gradient gf,
           norm2's backward after dropout2's, at the call; its input ln1, norm1's output); the
           backward rows pass carries them to return.  d.linear2.weight is not carried: its dw2_sum is
           the predicate lin_dw_rows, which cvc5 and z3 did not unfold in this context (60 s). */
        /*@ assert db2_ffnp: BLK_DB2_AT(Here, gf, pffn_in); */
        /*@ assert dw1_ffnp: BLK_DW1_AT(Here, dh, ln1, Here); */
        /*@ assert db1_ffnp: BLK_DB1_AT(Here, dh, Here); */
        /*@ assert sep_ln1p: \forall integer k; BLK_W1_OFF <= k < BLK_G1_OFF ==>
              \separated(grads + k, dx + (0 .. rows * d - 1), ga + (0 .. rows * d - 1), dg1 + (0 .. d - 1),
              db1n + (0 .. d - 1)); */
#endif
        residual_forward_f32(dx, dx, ga, n);
#ifdef RESNORM_WP_ROWS
        /*@ assert dg2_k4: BLK_GRADS_TAIL_SAME(ln2_done); */
#endif
#if defined(RESNORM_WP_BWD)
        /*@ assert dlp_k4: BLK_GRADS_FFN_SAME(pffn_done); */
        /* the FFN's parameter gradients as the add leaves them; each later frame is from ln1_in (a
           frame from pffn_done across the add and norm1's backward: cvc5 unknown, z3 timeout at 60 s) */
        /*@ assert db2_at1: BLK_DB2_AT(Here, gf, pffn_in); */
        /*@ assert dw1_at1: BLK_DW1_AT(Here, dh, ln1, pffn_done); */
        /*@ assert db1_at1: BLK_DB1_AT(Here, dh, pffn_done); */
#endif
        /* ds1 = norm1ᵀ(dh) at s1; dx = attnᵀ(drop1ᵀ(ds1)) + ds1 */
#ifdef RESNORM_WP_ROWS
        /*@ assert sep_ln1: \forall integer k; BLK_G2_OFF <= k < BLK_G2_OFF + 2 * d ==>
              \separated(grads + k, ga + (0 .. rows * d - 1), dg1 + (0 .. d - 1), db1n + (0 .. d - 1)); */
#endif
        //@ ghost int g2off = (int)(dg2 - grads);
#if defined(RESNORM_WP_BWD)
        /*@ assert g2off_eq: g2off == BLK_G2_OFF; */
#endif
#if defined(RESNORM_WP_BWD)
        ln1_in:;
#endif
        block_layernorm_backward_f32(ga, dg1, db1n, dx, s1, g1, mean1, rstd1, rows, d) /*@ ghost (grads, g2off) */;
#ifdef RESNORM_WP_ROWS
        /*@ assert dg2_k5: BLK_GRADS_TAIL_SAME(ln2_done); */
#endif
#if defined(RESNORM_WP_BWD)
        /*@ assert dlp_k5: BLK_GRADS_FFN_SAME(ln1_in); */
#endif
        const float *gd = block_dropout_grad_f32(gb, ga, d1mask, scale, n);
#ifdef RESNORM_WP_ROWS
        /*@ assert dg2_k6: BLK_GRADS_TAIL_SAME(ln2_done); */
#endif
#if defined(RESNORM_WP_BWD)
        /*@ assert dlp_k6: BLK_GRADS_FFN_SAME(ln1_in); */
#endif
        block_fill_f32(dx, 0.0f, n);
#ifdef RESNORM_WP_ROWS
        /*@ assert dg2_k7: BLK_GRADS_TAIL_SAME(ln2_done); */
        /*@ assert sep_att: \forall integer k; BLK_G2_OFF <= k < BLK_G2_OFF + 2 * d ==>
              \separated(grads + k, dx + (0 .. B * T * d - 1), din_w + (0 .. 3 * d * d - 1),
              din_b + (0 .. 3 * d - 1), dout_w + (0 .. d * d - 1), dout_b + (0 .. d - 1),
              dqkv + (0 .. B * T * 3 * d - 1), dctx + (0 .. B * T * d - 1), ws_row + (0 .. 2 * T - 1)); */
#endif
#if defined(RESNORM_WP_BWD)
        /*@ assert dlp_k7: BLK_GRADS_FFN_SAME(ln1_in); */
        /*@ assert sep_attp: \forall integer k; BLK_W1_OFF <= k < BLK_G1_OFF ==>
              \separated(grads + k, dx + (0 .. B * T * d - 1), din_w + (0 .. 3 * d * d - 1),
              din_b + (0 .. 3 * d - 1), dout_w + (0 .. d * d - 1), dout_b + (0 .. d - 1),
              dqkv + (0 .. B * T * 3 * d - 1), dctx + (0 .. B * T * d - 1), ws_row + (0 .. 2 * T - 1)); */
#endif
        block_attention_backward_f32(dx, din_w, din_b, dout_w, dout_b, dqkv, dctx, ws_row, gd, x, in_w, out_w,
                                     qkv, att, ctx, amask, p, B, T, d, H) /*@ ghost (grads, g2off) */;
#ifdef RESNORM_WP_ROWS
        /*@ assert dg2_k8: BLK_GRADS_TAIL_SAME(ln2_done); */
#endif
#if defined(RESNORM_WP_BWD)
        /*@ assert dlp_k8: BLK_GRADS_FFN_SAME(ln1_in); */
        /*@ assert sep_resp: \forall integer k; BLK_W1_OFF <= k < BLK_G1_OFF ==>
              \separated(grads + k, dx + (0 .. rows * d - 1), ga + (0 .. rows * d - 1)); */
        /* restated before the last add, whose frame is then one step (from ln1_in, across the
           attention's backward too, dlp_k9 took 11 s idle and was unknown at load 9) */
        /*@ assert db2_at2: BLK_DB2_AT(Here, gf, pffn_in); */
        /*@ assert dw1_at2: BLK_DW1_AT(Here, dh, ln1, pffn_done); */
        /*@ assert db1_at2: BLK_DB1_AT(Here, dh, pffn_done); */
        res2_in:;
#endif
        residual_forward_f32(dx, dx, ga, n);
#if defined(RESNORM_WP_BWD)
        /*@ assert dlp_k9: BLK_GRADS_FFN_SAME(res2_in); */
#endif
#ifdef RESNORM_WP_ROWS
        /*@ assert dg2_k9: BLK_GRADS_TAIL_SAME(ln2_done); */
        /* the rows run: norm2's parameter gradients (ln2_done) at return: every later step writes
           dx, the scratch or the other parameters' gradients only (their assigns) */
        /*@ assert dg2_same: BLK_SAME(dg2, d, ln2_done); */
        /*@ assert db2n_same: BLK_SAME(db2n, d, ln2_done); */
        /*@ assert dgb2_end: BLK_DGB2_AT(Here); */
#endif
#if defined(RESNORM_WP_BWD)
        /* the FFN's parameter gradients at return: their values at entry plus the FFN's sums, over
           its output gradient gf at its call (pffn_in: norm2's backward of dy after dropout2's); over
           dz (dh at the FFN's return, pffn_done) and its input ln1 (norm1's output) */
        /*@ assert db2_post: BLK_DB2_AT(Here, gf, pffn_in); */
        /*@ assert dw1_post: BLK_DW1_AT(Here, dh, ln1, pffn_done); */
        /*@ assert db1_post: BLK_DB1_AT(Here, dh, pffn_done); */
#endif
    }
}

/* ---- double: the same code with double ---- */
/* v[i] = c for i < n (c = 0: the scratch that an accumulating callee adds into).  The value is
   proved in the loop invariant and not exported; c is a parameter, as in ref/ffn.c's ffn_fill: a
   double literal in these goals trips Why3 1.5.1's real/int typing ("Type mismatch between real and
   int"), and the callers' goals (RTE, assigns) do not need the value. */
/*@ requires n_nonneg: n >= 0;
    requires valid_v: \valid(v + (0 .. n - 1));
    assigns v[0 .. n - 1]; */
static void block_fill_f64(double *v, double c, int n)
{
    /*@ loop invariant i_range: 0 <= i <= n;
        loop invariant done: \forall integer k; 0 <= k < i ==> v[k] == c;
        loop assigns i, v[0 .. n - 1];
        loop variant n - i; */
    for (int i = 0; i < n; i++)
        v[i] = c;
}

/* The dropout's backward of g into out (zeroed first: dropout_backward accumulates), returned; or
   g itself without a mask. */
/*@ requires n_nonneg: n >= 0;
    requires valid: \valid_read(g + (0 .. n - 1)) && \valid(out + (0 .. n - 1));
    requires valid_mask: mask == \null || \valid_read(mask + (0 .. n - 1));
    requires sep: \separated(out + (0 .. n - 1), g + (0 .. n - 1));
    requires sep_mask: mask == \null || \separated(out + (0 .. n - 1), g + (0 .. n - 1), mask + (0 .. n - 1));
    assigns out[0 .. n - 1];
    ensures no_mask: mask == \null ==> \result == g;
    ensures mask: mask != \null ==> \result == out; */
static const double *block_dropout_grad_f64(double *out, const double *g, const double *mask, double scale, int n)
{
    if (!mask)
        return g;
    block_fill_f64(out, 0.0, n);
    dropout_backward_f64(out, g, mask, scale, n);
    return out;
}

/* yv = LayerNorm(xv) with gv, bv (mv, rv: its statistics), xv [rows, d]: the norm's call, and in
   the rows run its rows restated over the buffers at return (LayerNorm's own clause reads xv, gv,
   bv at entry). */
/*@ BLK_LN_CONTRACT(double) */
static void block_layernorm_f64(double *yv, double *mv, double *rv, const double *xv, const double *gv,
                                const double *bv, int rows, int d, double eps)
{
    layernorm_forward_f64(yv, mv, rv, xv, gv, bv, rows, d, eps);
#ifdef RESNORM_WP_ROWS
    //@ ghost blk_lemma_rows_fit(rows, d);
    /*@ assert x_same: BLK_SAME(xv, rows * d, Pre); */
    /*@ assert g_same: BLK_SAME(gv, d, Pre); */
    /*@ assert b_same: BLK_SAME(bv, d, Pre); */
#endif
}

/* dxv, dgv, dbv += LayerNorm's backward of dyv at xv (gv; mv, rv its statistics), xv [rows, d]:
   the norm's call behind a contract without its rows clauses (BLK_LN_BWD_CONTRACT says why). */
/*@ BLK_LN_BWD_CONTRACT */
static void block_layernorm_backward_f64(double *dxv, double *dgv, double *dbv, const double *dyv,
                                         const double *xv, const double *gv, const double *mv,
                                         const double *rv, int rows, int d)
    /*@ ghost (double *gr, int o) */
{
    layernorm_backward_f64(dxv, dgv, dbv, dyv, xv, gv, mv, rv, rows, d);
}

/* The attention's backward (its contract) with, in the rows run, the frame of gr[o .. o + 2d - 1]
   (BLK_ATT_BWD_CONTRACT says why). */
/*@ BLK_ATT_BWD_CONTRACT */
static void block_attention_backward_f64(double *dx, double *din_w, double *din_b, double *dout_w,
                                         double *dout_b, double *dqkv, double *dctx, double *row,
                                         const double *dy, const double *x, const double *in_w,
                                         const double *out_w, const double *qkv, const double *att,
                                         const double *ctx, const double *amask, double p, int B,
                                         int T, int d, int H)
    /*@ ghost (double *gr, int o) */
{
    attention_backward_f64(dx, din_w, din_b, dout_w, dout_b, dqkv, dctx, row, dy, x, in_w, out_w, qkv, att,
                           ctx, amask, p, B, T, d, H);
}

/* The FFN's backward (its contract) with, in the rows run, the frame of gr[o .. o + 2d - 1]
   (BLK_FFN_BWD_CONTRACT says why). */
/*@ BLK_FFN_BWD_CONTRACT */
static void block_ffn_backward_f64(double *dx, double *dw1, double *db1, double *dw2, double *db2, double *dh,
                                   const double *dy, const double *x, const double *z, const double *h,
                                   const double *w1, const double *w2, const double *mask, double p,
                                   ffn_act act, int rows, int d, int ff)
    /*@ ghost (double *gr, int o) */
{
    ffn_backward_f64(dx, dw1, db1, dw2, db2, dh, dy, x, z, h, w1, w2, mask, p, act, rows, d, ff);
}

/* ga = LayerNorm's backward of gb at xv (gv; mv, rv its statistics), dgv, dbv += its parameter
   gradients, then dx += ga; all [rows, d] but gv, dgv, dbv [d] and mv, rv [rows]: pre-LN's last two
   steps behind one contract, whose rows clause reads the norm's sums at return
   (BLK_LN1_BWD_ADD_CONTRACT says why). */
/*@ BLK_LN1_BWD_ADD_CONTRACT BLK_LN1_KEPT(double) */
static void block_ln1_backward_add_f64(double *dx, double *ga, double *dgv, double *dbv, const double *gb,
                                       const double *xv, const double *gv, const double *mv, const double *rv,
                                       int rows, int d)
{
    layernorm_backward_f64(ga, dgv, dbv, gb, xv, gv, mv, rv, rows, d);
#ifdef RESNORM_WP_ROWS
    ln_done:;
    /*@ assert dgb_call: ln_dgb_rows{Pre, Here}(dgv, dbv, gb, xv, mv, rv, rows, d); */
#endif
    residual_forward_f64(dx, dx, ga, rows * d);
#ifdef RESNORM_WP_ROWS
    /*@ assert dg_kept: \forall integer k; 0 <= k < d ==>
          dgv[k] == \at(dgv[k], ln_done) && dbv[k] == \at(dbv[k], ln_done); */
    /*@ assert in_same: \forall integer k; 0 <= k < rows * d ==>
          \at(gb[k], Pre) == gb[k] && \at(xv[k], Pre) == xv[k]; */
    /*@ assert stats_same: \forall integer q; 0 <= q < rows ==>
          \at(mv[q], Pre) == mv[q] && \at(rv[q], Pre) == rv[q]; */
    /*@ assert col_rng: \forall integer i, q; 0 <= i < d ==> 0 <= q < rows ==>
          0 <= ln_col_idx(q, d, i) < rows * d; */
    /*@ assert in_cols: \forall integer i, q; 0 <= i < d ==> 0 <= q < rows ==>
          \at(gb[ln_col_idx(q, d, i)], Pre) == gb[ln_col_idx(q, d, i)] &&
          \at(xv[ln_col_idx(q, d, i)], Pre) == xv[ln_col_idx(q, d, i)]; */
#endif
}

/* f = drop2(ffn(u)): u [rows, d] -> f [rows, d], the FFN's caches z, hh [rows, ff]. */
/*@ BLK_FFN_SUB_CONTRACT(ffn_h64, double) */
static void block_ffn_sublayer_f64(double *f, double *z, double *hh, const double *u, const double *w1,
                                   const double *b1, const double *w2, const double *b2, const double *dmask,
                                   const double *d2mask, double p, ffn_act act, int rows, int d, int ff)
{
    ffn_forward_f64(f, z, hh, u, w1, b1, w2, b2, dmask, p, act, rows, d, ff);
#ifdef RESNORM_WP_ROWS
ffn_done:;
#endif
    if (d2mask)
        dropout_forward_f64(f, f, d2mask, dropout_scale_f64(p), rows * d);
#ifdef RESNORM_WP_ROWS
    /* The rows run: the FFN's rows, stated over u, w1 at entry and hh, w2 at ffn_done, are over
       them at return (the dropout wrote f only): frame facts, then each dot over two memory states
       by lin_dot_shift and lin_dot_at_frame (specs/linear_rows.h), as in ref/ffn.c. */
    //@ ghost blk_lemma_rows_fit(rows, d);
    //@ ghost blk_lemma_rows_fit(rows, ff);
    //@ ghost blk_lemma_rows_fit(ff, d);
    //@ ghost blk_lemma_rows_fit(d, ff);
    /*@ assert z_same: BLK_SAME(z, rows * ff, ffn_done); */
    /*@ assert hh_same: BLK_SAME(hh, rows * ff, ffn_done); */
    /*@ assert u_same: BLK_SAME(u, rows * d, Pre); */
    /*@ assert w1_same: BLK_SAME(w1, d * ff, Pre); */
    /*@ assert b1_same: BLK_SAME(b1, ff, Pre); */
    /*@ assert w2_same: BLK_SAME(w2, d * ff, ffn_done); */
    /*@ assert b2_same: BLK_SAME(b2, d, ffn_done); */
    /*@ assert dmask_same: dmask == \null || BLK_SAME(dmask, rows * ff, ffn_done); */
    /*@ assert h_model_same: \forall integer i; 0 <= i < rows * ff ==>
          \at(ffn_h64(act, z, dmask, p, i), ffn_done) == ffn_h64(act, z, dmask, p, i); */
    /*@ assert dot1_at: BLK_DOT_AT_SAME(u, w1, d, rows, ff, Pre); */
    /*@ assert dot1: BLK_DOT_SAME(u, w1, d, rows, ff, Pre); */
    /*@ assert bias1: BLK_BIAS_SAME(b1, ff, Pre); */
    /*@ assert dot2_at: BLK_DOT_AT_SAME(hh, w2, ff, rows, d, ffn_done); */
    /*@ assert dot2: BLK_DOT_SAME(hh, w2, ff, rows, d, ffn_done); */
    /*@ assert bias2: BLK_BIAS_SAME(b2, d, ffn_done); */
    /*@ assert f_at_ffn: \forall integer r, j; 0 <= r < rows && 0 <= j < d ==>
          \at(f[lin_row_start(r, d) + j], ffn_done) == \at(blk_ffn_y(hh, w2, b2, r, j, ff), ffn_done); */
    /*@ assert f_ffn: \forall integer r, j; 0 <= r < rows && 0 <= j < d ==>
          \at(f[lin_row_start(r, d) + j], ffn_done) == blk_ffn_y(hh, w2, b2, r, j, ff); */
#endif
}

/* pre-LN's FFN and add: f = drop2(ffn(u)); y = s1 + f. */
/*@ BLK_FFN_ADD_CONTRACT(ffn_h64) */
static void block_ffn_add_f64(double *y, double *f, double *z, double *hh, const double *u, const double *s1,
                              const double *w1, const double *b1, const double *w2, const double *b2,
                              const double *dmask, const double *d2mask, double p, ffn_act act, int rows, int d,
                              int ff)
{
    block_ffn_sublayer_f64(f, z, hh, u, w1, b1, w2, b2, dmask, d2mask, p, act, rows, d, ff);
#ifdef RESNORM_WP_ROWS
ffn_done:;
#endif
    residual_forward_f64(y, s1, f, rows * d);
#ifdef RESNORM_WP_ROWS
    /* The rows run: the FFN's rows (ffn_done) at return (the add wrote y only): frame facts, then
       the FFN's dots over two memory states. */
    //@ ghost blk_lemma_rows_fit(rows, d);
    //@ ghost blk_lemma_rows_fit(rows, ff);
    //@ ghost blk_lemma_rows_fit(ff, d);
    //@ ghost blk_lemma_rows_fit(d, ff);
    /*@ assert z_same: BLK_SAME(z, rows * ff, ffn_done); */
    /*@ assert hh_same: BLK_SAME(hh, rows * ff, ffn_done); */
    /*@ assert f_same: BLK_SAME(f, rows * d, ffn_done); */
    /*@ assert u_same: BLK_SAME(u, rows * d, ffn_done); */
    /*@ assert w1_same: BLK_SAME(w1, d * ff, ffn_done); */
    /*@ assert b1_same: BLK_SAME(b1, ff, ffn_done); */
    /*@ assert w2_same: BLK_SAME(w2, d * ff, ffn_done); */
    /*@ assert b2_same: BLK_SAME(b2, d, ffn_done); */
    /*@ assert dmask_same: dmask == \null || BLK_SAME(dmask, rows * ff, ffn_done); */
    /*@ assert d2mask_same: d2mask == \null || BLK_SAME(d2mask, rows * d, ffn_done); */
    /*@ assert dot1_at: BLK_DOT_AT_SAME(u, w1, d, rows, ff, ffn_done); */
    /*@ assert dot1: BLK_DOT_SAME(u, w1, d, rows, ff, ffn_done); */
    /*@ assert bias1: BLK_BIAS_SAME(b1, ff, ffn_done); */
    /*@ assert dot2_at: BLK_DOT_AT_SAME(hh, w2, ff, rows, d, ffn_done); */
    /*@ assert dot2: BLK_DOT_SAME(hh, w2, ff, rows, d, ffn_done); */
    /*@ assert bias2: BLK_BIAS_SAME(b2, d, ffn_done); */
    /*@ assert h_model_same: \forall integer i; 0 <= i < rows * ff ==>
          \at(ffn_h64(act, z, dmask, p, i), ffn_done) == ffn_h64(act, z, dmask, p, i); */
    /*@ assert f_model_same: \forall integer r, j; 0 <= r < rows && 0 <= j < d ==>
          \at(BLK_F_MODEL, ffn_done) == BLK_F_MODEL; */
#endif
}

/* pre-LN's tail: ln2 = norm2(s1); f = drop2(ffn(ln2)); y = s1 + f. */
/*@ BLK_TAIL_PRE_CONTRACT(ffn_h64, double) */
static void block_tail_pre_f64(double *y, double *ln2, double *mean2, double *rstd2, double *f, double *z,
                               double *hh, const double *s1, const double *w1, const double *b1,
                               const double *w2, const double *b2, const double *g2, const double *b2n,
                               const double *dmask, const double *d2mask, double p, double eps, ffn_act act,
                               int rows, int d, int ff)
{
    block_layernorm_f64(ln2, mean2, rstd2, s1, g2, b2n, rows, d, eps);
#ifdef RESNORM_WP_ROWS
ln_done:;
#endif
    block_ffn_add_f64(y, f, z, hh, ln2, s1, w1, b1, w2, b2, dmask, d2mask, p, act, rows, d, ff);
#ifdef RESNORM_WP_ROWS
    /* The rows run: ln2's rows (ln_done) at return (the FFN and add wrote y, f, z, hh only) */
    //@ ghost blk_lemma_rows_fit(rows, d);
    /*@ assert ln_same: BLK_SAME(ln2, rows * d, ln_done); */
    /*@ assert mean_same: BLK_SAME(mean2, rows, ln_done); */
    /*@ assert rstd_same: BLK_SAME(rstd2, rows, ln_done); */
    /*@ assert x_same: BLK_SAME(s1, rows * d, ln_done); */
    /*@ assert g_same: BLK_SAME(g2, d, ln_done); */
    /*@ assert b_same: BLK_SAME(b2n, d, ln_done); */
    /*@ assert ln_pt: BLK_LN_PT(ln2, mean2, rstd2, s1, g2, b2n); */
    /*@ assert ln_rows: BLK_LN_ROWS_AT(Here, rows, ln2, mean2, rstd2, s1, g2, b2n); */
#endif
}

/* post-LN's output: s2 = h + f; y = norm2(s2). */
/*@ BLK_OUT_POST_CONTRACT(double) */
static void block_out_post_f64(double *y, double *s2, double *mean2, double *rstd2, const double *h,
                               const double *f, const double *g2, const double *b2n, double eps, int rows, int d)
{
    residual_forward_f64(s2, h, f, rows * d);
#ifdef RESNORM_WP_ROWS
res_done:;
#endif
    block_layernorm_f64(y, mean2, rstd2, s2, g2, b2n, rows, d, eps);
#ifdef RESNORM_WP_ROWS
    /* The rows run: s2 as the add left it */
    /*@ assert s2_same: BLK_SAME(s2, rows * d, res_done); */
    /*@ assert h_same: BLK_SAME(h, rows * d, res_done); */
    /*@ assert f_same: BLK_SAME(f, rows * d, res_done); */
#endif
}

/* post-LN's tail: h = norm1(s1); f = drop2(ffn(h)); s2 = h + f; y = norm2(s2). */
/*@ BLK_TAIL_POST_CONTRACT(ffn_h64, double) */
static void block_tail_post_f64(double *y, double *s2, double *mean2, double *rstd2, double *f, double *z, double *hh,
                                double *h, double *mean1, double *rstd1, const double *s1, const double *g1,
                                const double *b1n, const double *w1, const double *b1, const double *w2,
                                const double *b2, const double *g2, const double *b2n, const double *dmask,
                                const double *d2mask, double p, double eps, ffn_act act, int rows, int d, int ff)
    /*@ ghost (const double *x, const double *a) */
{
    block_layernorm_f64(h, mean1, rstd1, s1, g1, b1n, rows, d, eps);
#ifdef RESNORM_WP_ROWS
ln_done:;
    /* norm1's input, parameters and statistics, and the driver's x and a (ghost), lie outside
       what the FFN and the output write, pointwise: the callees' assigns then carry them (a
       quantified kept clause on those callees made the LayerNorm step below time out) */
    /*@ assert sep_x: \forall integer k; 0 <= k < rows * d ==>
          \separated(s1 + k, BLK_FFN_OUT) && \separated(s1 + k, BLK_OUT_POST_OUT); */
    /*@ assert sep_xa: \forall integer k; 0 <= k < rows * d ==>
          \separated(x + k, BLK_FFN_OUT) && \separated(x + k, BLK_OUT_POST_OUT) &&
          \separated(a + k, BLK_FFN_OUT) && \separated(a + k, BLK_OUT_POST_OUT) &&
          \separated(x + k, BLK_R(h, rows * d), BLK_R(mean1, rows), BLK_R(rstd1, rows)) &&
          \separated(a + k, BLK_R(h, rows * d), BLK_R(mean1, rows), BLK_R(rstd1, rows)); */
    /*@ assert sep_stats: \forall integer r; 0 <= r < rows ==>
          \separated(mean1 + r, BLK_FFN_OUT) && \separated(rstd1 + r, BLK_FFN_OUT) &&
          \separated(mean1 + r, BLK_OUT_POST_OUT) && \separated(rstd1 + r, BLK_OUT_POST_OUT); */
    /*@ assert sep_par: \forall integer i; 0 <= i < d ==>
          \separated(g1 + i, BLK_FFN_OUT) && \separated(b1n + i, BLK_FFN_OUT) &&
          \separated(g1 + i, BLK_OUT_POST_OUT) && \separated(b1n + i, BLK_OUT_POST_OUT); */
#endif
    block_ffn_sublayer_f64(f, z, hh, h, w1, b1, w2, b2, dmask, d2mask, p, act, rows, d, ff);
#ifdef RESNORM_WP_ROWS
ffn_done:;
    /* the rows run: h = norm1(s1) (ln_done) across the FFN (its assigns and the separations) */
    //@ ghost blk_lemma_rows_fit(rows, d);
    /*@ assert ln_same1: BLK_SAME(h, rows * d, ln_done); */
    /*@ assert mean_same1: BLK_SAME(mean1, rows, ln_done); */
    /*@ assert rstd_same1: BLK_SAME(rstd1, rows, ln_done); */
    /*@ assert x_same1: BLK_SAME(s1, rows * d, ln_done); */
    /*@ assert g_same1: BLK_SAME(g1, d, ln_done); */
    /*@ assert b_same1: BLK_SAME(b1n, d, ln_done); */
    /*@ assert ln_pt1: BLK_LN_PT(h, mean1, rstd1, s1, g1, b1n); */
    /* what the FFN wrote and read lies outside what the output writes, pointwise */
    /*@ assert sep_ff: \forall integer k; 0 <= k < rows * ff ==>
          \separated(z + k, BLK_OUT_POST_OUT) && \separated(hh + k, BLK_OUT_POST_OUT) &&
          (dmask == \null || \separated(dmask + k, BLK_OUT_POST_OUT)); */
    /*@ assert sep_d: \forall integer k; 0 <= k < rows * d ==>
          \separated(f + k, BLK_OUT_POST_OUT) && \separated(h + k, BLK_OUT_POST_OUT) &&
          (d2mask == \null || \separated(d2mask + k, BLK_OUT_POST_OUT)); */
    /*@ assert sep_w: \forall integer k; 0 <= k < d * ff ==>
          \separated(w1 + k, BLK_OUT_POST_OUT) && \separated(w2 + k, BLK_OUT_POST_OUT); */
    /*@ assert sep_b: (\forall integer k; 0 <= k < ff ==> \separated(b1 + k, BLK_OUT_POST_OUT)) &&
          (\forall integer k; 0 <= k < d ==> \separated(b2 + k, BLK_OUT_POST_OUT)); */
#endif
    block_out_post_f64(y, s2, mean2, rstd2, h, f, g2, b2n, eps, rows, d);
#ifdef RESNORM_WP_ROWS
    /* The rows run: the FFN's rows (ffn_done) at return (the output wrote y, s2, mean2 and rstd2
       only): frame facts, then the FFN's dots over two memory states. */
    //@ ghost blk_lemma_rows_fit(rows, d);
    //@ ghost blk_lemma_rows_fit(rows, ff);
    //@ ghost blk_lemma_rows_fit(ff, d);
    //@ ghost blk_lemma_rows_fit(d, ff);
    /*@ assert z_same: BLK_SAME(z, rows * ff, ffn_done); */
    /*@ assert hh_same: BLK_SAME(hh, rows * ff, ffn_done); */
    /*@ assert f_same: BLK_SAME(f, rows * d, ffn_done); */
    /*@ assert u_same: BLK_SAME(h, rows * d, ffn_done); */
    /*@ assert w1_same: BLK_SAME(w1, d * ff, ffn_done); */
    /*@ assert b1_same: BLK_SAME(b1, ff, ffn_done); */
    /*@ assert w2_same: BLK_SAME(w2, d * ff, ffn_done); */
    /*@ assert b2_same: BLK_SAME(b2, d, ffn_done); */
    /*@ assert dmask_same: dmask == \null || BLK_SAME(dmask, rows * ff, ffn_done); */
    /*@ assert d2mask_same: d2mask == \null || BLK_SAME(d2mask, rows * d, ffn_done); */
    /*@ assert dot1_at: BLK_DOT_AT_SAME(h, w1, d, rows, ff, ffn_done); */
    /*@ assert dot1: BLK_DOT_SAME(h, w1, d, rows, ff, ffn_done); */
    /*@ assert bias1: BLK_BIAS_SAME(b1, ff, ffn_done); */
    /*@ assert dot2_at: BLK_DOT_AT_SAME(hh, w2, ff, rows, d, ffn_done); */
    /*@ assert dot2: BLK_DOT_SAME(hh, w2, ff, rows, d, ffn_done); */
    /*@ assert bias2: BLK_BIAS_SAME(b2, d, ffn_done); */
    /*@ assert h_model_same: \forall integer i; 0 <= i < rows * ff ==>
          \at(ffn_h64(act, z, dmask, p, i), ffn_done) == ffn_h64(act, z, dmask, p, i); */
    /*@ assert f_model_same: \forall integer r, j; 0 <= r < rows && 0 <= j < d ==>
          \at(BLK_F_MODEL, ffn_done) == BLK_F_MODEL; */
    /* h = norm1(s1) (ffn_done) across the output (its assigns and the separations) */
    /*@ assert mean_same: BLK_SAME(mean1, rows, ffn_done); */
    /*@ assert rstd_same: BLK_SAME(rstd1, rows, ffn_done); */
    /*@ assert x_same: BLK_SAME(s1, rows * d, ffn_done); */
    /*@ assert g_same: BLK_SAME(g1, d, ffn_done); */
    /*@ assert b_same: BLK_SAME(b1n, d, ffn_done); */
    /*@ assert ln_pt: BLK_LN_PT(h, mean1, rstd1, s1, g1, b1n); */
    /*@ assert ln_rows: BLK_LN_ROWS_AT(Here, rows, h, mean1, rstd1, s1, g1, b1n); */
    /* x and a (the driver's, ghost) and s1 as on entry: norm1's kept, the assigns of the rest */
    /*@ assert xa_ln: \forall integer k; 0 <= k < rows * d ==>
          \at(x[k], ln_done) == \at(x[k], Pre) && \at(a[k], ln_done) == \at(a[k], Pre) &&
          \at(s1[k], ln_done) == \at(s1[k], Pre); */
    /*@ assert xa_ffn: \forall integer k; 0 <= k < rows * d ==>
          \at(x[k], ffn_done) == \at(x[k], ln_done) && \at(a[k], ffn_done) == \at(a[k], ln_done); */
    /*@ assert xa_out: \forall integer k; 0 <= k < rows * d ==>
          x[k] == \at(x[k], ffn_done) && a[k] == \at(a[k], ffn_done); */
#endif
}

/* The first sublayer: a = drop1(attn(v)), v = norm1(x) (pre) or x (post); s1 = x + a, in the caches
   of specs/block.h. */
/*@ BLK_HEAD_CONTRACT */
static void block_head_f64(double *acts, const double *x, const double *params, const double *kpm,
                           const double *amask, const double *d1mask, double p, double eps, int post, int causal,
                           int B, int T, int d, int H, int ff)
{
    int rows = B * T, n = B * T * d;
    BLOCK_PARAMS(const double, , params);
    BLOCK_CACHES(double, acts);
    const double *v = x;
    if (!post) {
        layernorm_forward_f64(ln1, mean1, rstd1, x, g1, b1n, rows, d, eps);
        v = ln1;
    }
    attention_forward_f64(a, qkv, att, ctx, row, v, in_w, in_b, out_w, out_b, kpm, amask, p, B, T, d, H, causal);
    if (d1mask)
        dropout_forward_f64(a, a, d1mask, dropout_scale_f64(p), n);
    residual_forward_f64(s1, x, a, n);
}

void block_forward_f64(double *y, double *acts, const double *x, const double *params, const double *kpm,
                       const double *amask, const double *dmask, const double *d1mask,
                       const double *d2mask, double p, double eps, int post, ffn_act act, int causal,
                       int B, int T, int d, int H, int ff)
{
    int rows = B * T, n = B * T * d;
    BLOCK_PARAMS(const double, , params);
    BLOCK_CACHES(double, acts);
#ifdef RESNORM_WP_ROWS
    /*@ assert BLK_ROWS_PTRS; */
#endif
    /* the first sublayer: s1 = x + drop1(attn(v)) */
    block_head_f64(acts, x, params, kpm, amask, d1mask, p, eps, post, causal, B, T, d, H, ff);
#ifdef RESNORM_WP_ROWS
    /*@ assert s1_head: \forall integer i; 0 <= i < n ==> s1[i] == x[i] + a[i]; */
head_done:;
#endif
    /* the second sublayer and the output: pre-LN y = s1 + drop2(ffn(norm2(s1))); post-LN
       h = norm1(s1), y = norm2(h + drop2(ffn(h))) */
    if (!post) {
        block_tail_pre_f64(y, ln2, mean2, rstd2, f, z, hh, s1, w1, b1, w2, b2, g2, b2n, dmask, d2mask, p,
                           eps, act, rows, d, ff);
#ifdef RESNORM_WP_ROWS
        /* the rows run: s1 = x + a (the head's) at return: the tail kept them (its kept clause) */
        //@ ghost blk_lemma_rows_fit(rows, d);
        /*@ assert s1_same: BLK_SAME(s1, n, head_done); */
        /*@ assert a_same: BLK_SAME(a, n, head_done); */
        /*@ assert x_same: BLK_SAME(x, n, head_done); */
        /*@ assert s1_ret: \forall integer i; 0 <= i < n ==> s1[i] == x[i] + a[i]; */
#endif
    } else {
#ifdef RESNORM_WP_ROWS
        /*@ assert x_sep: \forall integer k; 0 <= k < n ==>
              \separated(x + k, BLK_OUT_POST_OUT, BLK_FFN_OUT, BLK_R(ln1, n), BLK_R(mean1, rows),
                         BLK_R(rstd1, rows)); */
#endif
        block_tail_post_f64(y, s2, mean2, rstd2, f, z, hh, ln1, mean1, rstd1, s1, g1, b1n, w1, b1, w2, b2,
                            g2, b2n, dmask, d2mask, p, eps, act, rows, d, ff) /*@ ghost (x, a) */;
#ifdef RESNORM_WP_ROWS
        /* the rows run: s1 = x + a (the head's) at return: the tail keeps s1, and x and a, its
           ghost parameters (its s1_kept clause) */
        //@ ghost blk_lemma_rows_fit(rows, d);
        /*@ assert s1_same: BLK_SAME(s1, n, head_done); */
        /*@ assert a_same: BLK_SAME(a, n, head_done); */
        /*@ assert x_same: BLK_SAME(x, n, head_done); */
        /*@ assert s1_ret: \forall integer i; 0 <= i < n ==> s1[i] == x[i] + a[i]; */
#endif
    }
}

void block_backward_f64(double *dx, double *grads, double *ws, const double *dy, const double *acts,
                        const double *x, const double *params, const double *amask, const double *dmask,
                        const double *d1mask, const double *d2mask, double p, int post, ffn_act act,
                        int B, int T, int d, int H, int ff)
{
    int rows = B * T, n = B * T * d;
    /* the parameters, their gradients (the same layout), the caches and the scratch */
    BLOCK_PARAMS(const double, , params);
    BLOCK_PARAMS(double, d, grads);
    BLOCK_CACHES(const double, acts);
    double *ga = ws, *gb = ga + n, *dqkv = gb + n, *dctx = dqkv + 3 * n, *dh = dctx + n,
          *ws_row = dh + B * T * ff;
    double scale = dropout_scale_f64(p);
    if (!post) {
        /* dh = norm2ᵀ(ffnᵀ(drop2ᵀ(dy))) + dy, into dx */
        const double *gf = block_dropout_grad_f64(ga, dy, d2mask, scale, n);
#ifdef RESNORM_WP_ROWS
        /*@ assert dg1_k1: BLK_GRADS_N1_SAME(Pre); */
#endif
#if defined(RESNORM_WP_BWD)
        /*@ assert dl_k1: BLK_GRADS_FFN_SAME(Pre); */
#endif
        block_fill_f64(gb, 0.0, n);
#ifdef RESNORM_WP_ROWS
        /*@ assert dg1_k2: BLK_GRADS_N1_SAME(Pre); */
        /*@ assert sep_ffn1: \forall integer k; BLK_G1_OFF <= k < BLK_G1_OFF + 2 * d ==>
              \separated(grads + k, gb + (0 .. rows * d - 1), dw1 + (0 .. d * ff - 1), db1 + (0 .. ff - 1),
              dw2 + (0 .. d * ff - 1), db2 + (0 .. d - 1), dh + (0 .. rows * ff - 1)); */
#endif
#if defined(RESNORM_WP_BWD)
        /*@ assert dl_k2: BLK_GRADS_FFN_SAME(Pre); */
#endif
        //@ ghost int g1off = (int)(dg1 - grads);
#if defined(RESNORM_WP_BWD)
        /* the rows of dw2 [d, ff] and dw1 [ff, d] fit in them (rows_fit), for the weights' frames */
        //@ ghost blk_lemma_rows_fit(d, ff);
        //@ ghost blk_lemma_rows_fit(ff, d);
        /*@ assert dw2_rs: \forall integer j, k; 0 <= j < d ==> 0 <= k < ff ==> 0 <= lin_row_start(j, ff) + k < d * ff; */
        /*@ assert dw1_rs: \forall integer j, k; 0 <= j < ff ==> 0 <= k < d ==> 0 <= lin_row_start(j, d) + k < d * ff; */
        /*@ assert col_rs: \forall integer j, s, k; 0 <= j ==> lin_col_idx(j, s, k) == lin_row_start(j, s) + k; */
        /*@ assert dw2_rng: \forall integer j, k; 0 <= j < d ==> 0 <= k < ff ==> 0 <= lin_col_idx(j, ff, k) < d * ff; */
        /*@ assert dw1_rng: \forall integer j, k; 0 <= j < ff ==> 0 <= k < d ==> 0 <= lin_col_idx(j, d, k) < d * ff; */
        /*@ assert dw2_in: \forall integer j, k; 0 <= j < d && 0 <= k < ff ==>
              BLK_DW2[lin_col_idx(j, ff, k)] == \at(BLK_DW2[lin_col_idx(j, ff, k)], Pre); */
        ffn_in:;
#endif
        block_ffn_backward_f64(gb, dw1, db1, dw2, db2, dh, gf, ln2, z, hh, w1, w2, dmask, p, act, rows, d, ff)
            /*@ ghost (grads, g1off) */;
#ifdef RESNORM_WP_ROWS
        /*@ assert dg1_k3: BLK_GRADS_N1_SAME(Pre); */
        /*@ assert sep_ln2: \forall integer k; BLK_G1_OFF <= k < BLK_G1_OFF + 2 * d ==>
              \separated(grads + k, dx + (0 .. rows * d - 1), dg2 + (0 .. d - 1), db2n + (0 .. d - 1)); */
#endif
#if defined(RESNORM_WP_BWD)
        ffn_done:;
        /* the backward rows pass: d.linear2.bias after the FFN's backward (its db2_sum, over gf at
           the call), then the frame of the FFN's parameter gradients across the later steps */
        /*@ assert db2_ffn: BLK_DB2_AT(Here, gf, ffn_in); */
        /*@ assert dw2_call: \forall integer j, k; 0 <= j < d && 0 <= k < ff ==>
              dw2[lin_col_idx(j, ff, k)] ==
                \at(dw2[lin_col_idx(j, ff, k)], ffn_in) + lin_dw_sum{ffn_in}(gf, hh, j, k, ff, d, rows); */
        /*@ assert dw2_ffn: BLK_DW2_AT(Here, gf, hh, ffn_in); */
        /*@ assert dw1_ffn: BLK_DW1_AT(Here, dh, ln2, Here); */
        /*@ assert db1_ffn: BLK_DB1_AT(Here, dh, Here); */
        /*@ assert sep_ln2f: \forall integer k; 4 * (d * d) + 4 * d <= k < g1off ==>
              \separated(grads + k, dx + (0 .. rows * d - 1), dg2 + (0 .. d - 1), db2n + (0 .. d - 1)); */
#endif
        block_layernorm_backward_f64(dx, dg2, db2n, gb, s1, g2, mean2, rstd2, rows, d) /*@ ghost (grads, g1off) */;
#ifdef RESNORM_WP_ROWS
        /*@ assert dg1_k4: BLK_GRADS_N1_SAME(Pre); */
#endif
#if defined(RESNORM_WP_BWD)
        /*@ assert dl_k3: BLK_GRADS_FFN_SAME(ffn_done); */
#endif
        residual_forward_f64(dx, dx, dy, n);
#ifdef RESNORM_WP_ROWS
        /*@ assert dg1_k5: BLK_GRADS_N1_SAME(Pre); */
#endif
#if defined(RESNORM_WP_BWD)
        /*@ assert dl_k4: BLK_GRADS_FFN_SAME(ffn_done); */
#endif
        /* dx = norm1ᵀ(attnᵀ(drop1ᵀ(dh))) + dh */
        const double *gd = block_dropout_grad_f64(ga, dx, d1mask, scale, n);
#ifdef RESNORM_WP_ROWS
        /*@ assert dg1_k6: BLK_GRADS_N1_SAME(Pre); */
#endif
#if defined(RESNORM_WP_BWD)
        /*@ assert dl_k5: BLK_GRADS_FFN_SAME(ffn_done); */
#endif
        block_fill_f64(gb, 0.0, n);
#ifdef RESNORM_WP_ROWS
        /*@ assert dg1_k7: BLK_GRADS_N1_SAME(Pre); */
        /*@ assert sep_att1: \forall integer k; BLK_G1_OFF <= k < BLK_G1_OFF + 2 * d ==>
              \separated(grads + k, gb + (0 .. B * T * d - 1), din_w + (0 .. 3 * d * d - 1),
              din_b + (0 .. 3 * d - 1), dout_w + (0 .. d * d - 1), dout_b + (0 .. d - 1),
              dqkv + (0 .. B * T * 3 * d - 1), dctx + (0 .. B * T * d - 1), ws_row + (0 .. 2 * T - 1)); */
#endif
#if defined(RESNORM_WP_BWD)
        /*@ assert dl_k6: BLK_GRADS_FFN_SAME(ffn_done); */
        /*@ assert sep_attf: \forall integer k; 4 * (d * d) + 4 * d <= k < g1off ==>
              \separated(grads + k, gb + (0 .. B * T * d - 1), din_w + (0 .. 3 * d * d - 1),
              din_b + (0 .. 3 * d - 1), dout_w + (0 .. d * d - 1), dout_b + (0 .. d - 1),
              dqkv + (0 .. B * T * 3 * d - 1), dctx + (0 .. B * T * d - 1), ws_row + (0 .. 2 * T - 1)); */
#endif
        block_attention_backward_f64(gb, din_w, din_b, dout_w, dout_b, dqkv, dctx, ws_row, gd, ln1, in_w,
                                     out_w, qkv, att, ctx, amask, p, B, T, d, H) /*@ ghost (grads, g1off) */;
#ifdef RESNORM_WP_ROWS
        /*@ assert dg1_k8: BLK_GRADS_N1_SAME(Pre); */
#endif
#if defined(RESNORM_WP_BWD)
        /*@ assert dl_k7: BLK_GRADS_FFN_SAME(ffn_done); */
        /*@ assert sep_ln1f: \forall integer k; BLK_W1_OFF <= k < BLK_G1_OFF ==>
              \separated(grads + k, dx + (0 .. rows * d - 1), ga + (0 .. rows * d - 1), dg1 + (0 .. d - 1),
              db1n + (0 .. d - 1)); */
#endif
        block_ln1_backward_add_f64(dx, ga, dg1, db1n, gb, x, g1, mean1, rstd1, rows, d);
#ifdef RESNORM_WP_ROWS
        /* the rows run: norm1's parameter gradients at return (dgb1_pre) are those at entry
           (dg1_k1 ... dg1_k8: every earlier step writes dx, the scratch or the other parameters'
           gradients only) plus the last step's sums, which it reads at return (dgb_ret) */
        /*@ assert dgb1_end: BLK_DGB1_AT(Here, Here); */
#endif
#if defined(RESNORM_WP_BWD)
        /*@ assert dl_k8: BLK_GRADS_FFN_SAME(ffn_done); */
        /* d.linear2.bias at return: its value at entry plus the column sums of the FFN's output
           gradient gf (dy after dropout2's backward) at the FFN's call */
        /*@ assert db2_pre: BLK_DB2_AT(Here, gf, ffn_in); */
        /* d.linear2.weight: dyᵀ·h (gf, the cache hh); d.linear1.*: dzᵀ·ln2 and dz's column sums, dz in
           dh at the FFN's return */
        /*@ assert dw2_pre: BLK_DW2_AT(Here, gf, hh, ffn_in); */
        /*@ assert dw1_pre: BLK_DW1_AT(Here, dh, ln2, ffn_done); */
        /*@ assert db1_pre: BLK_DB1_AT(Here, dh, ffn_done); */
#endif
    } else {
        /* ds2 = norm2ᵀ(dy) at s2; dh = ffnᵀ(drop2ᵀ(ds2)) + ds2, into dx */
        layernorm_backward_f64(ga, dg2, db2n, dy, s2, g2, mean2, rstd2, rows, d);
#ifdef RESNORM_WP_ROWS
        ln2_done:;
        /*@ assert dgb2_here: BLK_DGB2_AT(Here); */
#endif
#if defined(RESNORM_WP_BWD)
        /*@ assert dlp_k1: BLK_GRADS_FFN_SAME(Pre); */
#endif
        const double *gf = block_dropout_grad_f64(gb, ga, d2mask, scale, n);
#ifdef RESNORM_WP_ROWS
        /*@ assert dg2_k1: BLK_GRADS_TAIL_SAME(ln2_done); */
#endif
#if defined(RESNORM_WP_BWD)
        /*@ assert dlp_k2: BLK_GRADS_FFN_SAME(Pre); */
#endif
        block_fill_f64(dx, 0.0, n);
#ifdef RESNORM_WP_ROWS
        /*@ assert dg2_k2: BLK_GRADS_TAIL_SAME(ln2_done); */
        /*@ assert sep_ffn: \forall integer k; BLK_G2_OFF <= k < BLK_G2_OFF + 2 * d ==>
              \separated(grads + k, dx + (0 .. rows * d - 1), dw1 + (0 .. d * ff - 1), db1 + (0 .. ff - 1),
              dw2 + (0 .. d * ff - 1), db2 + (0 .. d - 1), dh + (0 .. rows * ff - 1)); */
#endif
#if defined(RESNORM_WP_BWD)
        /*@ assert dlp_k3: BLK_GRADS_FFN_SAME(Pre); */
        /* the rows of dw1 [ff, d] fit in it (rows_fit), as in pre-LN's branch */
        //@ ghost blk_lemma_rows_fit(ff, d);
        /*@ assert dw1_rsp: \forall integer j, k; 0 <= j < ff ==> 0 <= k < d ==> 0 <= lin_row_start(j, d) + k < d * ff; */
        /*@ assert col_rsp: \forall integer j, s, k; 0 <= j ==> lin_col_idx(j, s, k) == lin_row_start(j, s) + k; */
        /*@ assert dw1_rngp: \forall integer j, k; 0 <= j < ff ==> 0 <= k < d ==> 0 <= lin_col_idx(j, d, k) < d * ff; */
        pffn_in:;
#endif
        ffn_backward_f64(dx, dw1, db1, dw2, db2, dh, gf, ln1, z, hh, w1, w2, dmask, p, act, rows, d, ff);
#ifdef RESNORM_WP_ROWS
        /*@ assert dg2_k3: BLK_GRADS_TAIL_SAME(ln2_done); */
#endif
#if defined(RESNORM_WP_BWD)
        pffn_done:;
        /* the post-LN FFN pass (-DRESNORM_WP_BWD_FFN): d.linear2.bias, d.linear1.* after the FFN's
           backward (ffn_backward_*'s rows clauses, specs/ffn_bwd_rows.h: its output gradient gf,
           norm2's backward after dropout2's, at the call; its input ln1, norm1's output); the
           backward rows pass carries them to return.  d.linear2.weight is not carried: its dw2_sum is
           the predicate lin_dw_rows, which cvc5 and z3 did not unfold in this context (60 s). */
        /*@ assert db2_ffnp: BLK_DB2_AT(Here, gf, pffn_in); */
        /*@ assert dw1_ffnp: BLK_DW1_AT(Here, dh, ln1, Here); */
        /*@ assert db1_ffnp: BLK_DB1_AT(Here, dh, Here); */
        /*@ assert sep_ln1p: \forall integer k; BLK_W1_OFF <= k < BLK_G1_OFF ==>
              \separated(grads + k, dx + (0 .. rows * d - 1), ga + (0 .. rows * d - 1), dg1 + (0 .. d - 1),
              db1n + (0 .. d - 1)); */
#endif
        residual_forward_f64(dx, dx, ga, n);
#ifdef RESNORM_WP_ROWS
        /*@ assert dg2_k4: BLK_GRADS_TAIL_SAME(ln2_done); */
#endif
#if defined(RESNORM_WP_BWD)
        /*@ assert dlp_k4: BLK_GRADS_FFN_SAME(pffn_done); */
        /* the FFN's parameter gradients as the add leaves them; each later frame is from ln1_in (a
           frame from pffn_done across the add and norm1's backward: cvc5 unknown, z3 timeout at 60 s) */
        /*@ assert db2_at1: BLK_DB2_AT(Here, gf, pffn_in); */
        /*@ assert dw1_at1: BLK_DW1_AT(Here, dh, ln1, pffn_done); */
        /*@ assert db1_at1: BLK_DB1_AT(Here, dh, pffn_done); */
#endif
        /* ds1 = norm1ᵀ(dh) at s1; dx = attnᵀ(drop1ᵀ(ds1)) + ds1 */
#ifdef RESNORM_WP_ROWS
        /*@ assert sep_ln1: \forall integer k; BLK_G2_OFF <= k < BLK_G2_OFF + 2 * d ==>
              \separated(grads + k, ga + (0 .. rows * d - 1), dg1 + (0 .. d - 1), db1n + (0 .. d - 1)); */
#endif
        //@ ghost int g2off = (int)(dg2 - grads);
#if defined(RESNORM_WP_BWD)
        /*@ assert g2off_eq: g2off == BLK_G2_OFF; */
#endif
#if defined(RESNORM_WP_BWD)
        ln1_in:;
#endif
        block_layernorm_backward_f64(ga, dg1, db1n, dx, s1, g1, mean1, rstd1, rows, d) /*@ ghost (grads, g2off) */;
#ifdef RESNORM_WP_ROWS
        /*@ assert dg2_k5: BLK_GRADS_TAIL_SAME(ln2_done); */
#endif
#if defined(RESNORM_WP_BWD)
        /*@ assert dlp_k5: BLK_GRADS_FFN_SAME(ln1_in); */
#endif
        const double *gd = block_dropout_grad_f64(gb, ga, d1mask, scale, n);
#ifdef RESNORM_WP_ROWS
        /*@ assert dg2_k6: BLK_GRADS_TAIL_SAME(ln2_done); */
#endif
#if defined(RESNORM_WP_BWD)
        /*@ assert dlp_k6: BLK_GRADS_FFN_SAME(ln1_in); */
#endif
        block_fill_f64(dx, 0.0, n);
#ifdef RESNORM_WP_ROWS
        /*@ assert dg2_k7: BLK_GRADS_TAIL_SAME(ln2_done); */
        /*@ assert sep_att: \forall integer k; BLK_G2_OFF <= k < BLK_G2_OFF + 2 * d ==>
              \separated(grads + k, dx + (0 .. B * T * d - 1), din_w + (0 .. 3 * d * d - 1),
              din_b + (0 .. 3 * d - 1), dout_w + (0 .. d * d - 1), dout_b + (0 .. d - 1),
              dqkv + (0 .. B * T * 3 * d - 1), dctx + (0 .. B * T * d - 1), ws_row + (0 .. 2 * T - 1)); */
#endif
#if defined(RESNORM_WP_BWD)
        /*@ assert dlp_k7: BLK_GRADS_FFN_SAME(ln1_in); */
        /*@ assert sep_attp: \forall integer k; BLK_W1_OFF <= k < BLK_G1_OFF ==>
              \separated(grads + k, dx + (0 .. B * T * d - 1), din_w + (0 .. 3 * d * d - 1),
              din_b + (0 .. 3 * d - 1), dout_w + (0 .. d * d - 1), dout_b + (0 .. d - 1),
              dqkv + (0 .. B * T * 3 * d - 1), dctx + (0 .. B * T * d - 1), ws_row + (0 .. 2 * T - 1)); */
#endif
        block_attention_backward_f64(dx, din_w, din_b, dout_w, dout_b, dqkv, dctx, ws_row, gd, x, in_w, out_w,
                                     qkv, att, ctx, amask, p, B, T, d, H) /*@ ghost (grads, g2off) */;
#ifdef RESNORM_WP_ROWS
        /*@ assert dg2_k8: BLK_GRADS_TAIL_SAME(ln2_done); */
#endif
#if defined(RESNORM_WP_BWD)
        /*@ assert dlp_k8: BLK_GRADS_FFN_SAME(ln1_in); */
        /*@ assert sep_resp: \forall integer k; BLK_W1_OFF <= k < BLK_G1_OFF ==>
              \separated(grads + k, dx + (0 .. rows * d - 1), ga + (0 .. rows * d - 1)); */
        /* restated before the last add, whose frame is then one step (from ln1_in, across the
           attention's backward too, dlp_k9 took 11 s idle and was unknown at load 9) */
        /*@ assert db2_at2: BLK_DB2_AT(Here, gf, pffn_in); */
        /*@ assert dw1_at2: BLK_DW1_AT(Here, dh, ln1, pffn_done); */
        /*@ assert db1_at2: BLK_DB1_AT(Here, dh, pffn_done); */
        res2_in:;
#endif
        residual_forward_f64(dx, dx, ga, n);
#if defined(RESNORM_WP_BWD)
        /*@ assert dlp_k9: BLK_GRADS_FFN_SAME(res2_in); */
#endif
#ifdef RESNORM_WP_ROWS
        /*@ assert dg2_k9: BLK_GRADS_TAIL_SAME(ln2_done); */
        /* the rows run: norm2's parameter gradients (ln2_done) at return: every later step writes
           dx, the scratch or the other parameters' gradients only (their assigns) */
        /*@ assert dg2_same: BLK_SAME(dg2, d, ln2_done); */
        /*@ assert db2n_same: BLK_SAME(db2n, d, ln2_done); */
        /*@ assert dgb2_end: BLK_DGB2_AT(Here); */
#endif
#if defined(RESNORM_WP_BWD)
        /* the FFN's parameter gradients at return: their values at entry plus the FFN's sums, over
           its output gradient gf at its call (pffn_in: norm2's backward of dy after dropout2's); over
           dz (dh at the FFN's return, pffn_done) and its input ln1 (norm1's output) */
        /*@ assert db2_post: BLK_DB2_AT(Here, gf, pffn_in); */
        /*@ assert dw1_post: BLK_DW1_AT(Here, dh, ln1, pffn_done); */
        /*@ assert db1_post: BLK_DB1_AT(Here, dh, pffn_done); */
#endif
    }
}

/* ---- the stack (nn.TransformerEncoder): L blocks in order, then the optional final LayerNorm ----
 * Layouts (specs/block.h, "The stack"): layer i's parameters at params + i·P (P =
 * block_params_size), then the final norm's weight and bias; layer i's caches at acts + i·An
 * (An = A + n, A = block_acts_size, n = B·T·d): its block caches, then its output; after the L
 * layers the final norm's mean and rstd.  The offsets in int (the contract bounds the products).
 * Every offset i·s (s = An, P or a mask's size) is a product of two variables, which the solvers
 * do not bound by themselves: the loops call the ghost lemmas below, which state the bounds
 * 0 <= i·s and i·s + s <= L·s (layer i's range within the L layers') and (i-1)·s + s = i·s (layer
 * i-1's output ends where layer i's caches begin) for the loop's own i. */
/*@ ghost
  /@ requires i_range: 0 <= i < L;
     requires s_nonneg: s >= 0;
     assigns \nothing;
     ensures start: 0 <= i * s;
     ensures end: i * s + s <= L * s; @/
  static void lemma_stack_layer(int i, int L, int s) {}
  /@ requires i_pos: i >= 1;
     requires s_nonneg: s >= 0;
     assigns \nothing;
     ensures prev_start: 0 <= (i - 1) * s;
     ensures prev_end: (i - 1) * s + s == i * s; @/
  static void lemma_stack_next(int i, int s) {}
  /@ requires L_pos: L >= 1;
     requires nonneg: a >= 0 && b >= 0;
     assigns \nothing;
     ensures one_layer: a + b <= L * (a + b); @/
  static void lemma_stack_sum(int L, int a, int b) {}
*/
/*@ requires dims: d >= 1 && ff >= 1 && d * d <= INT_MAX && d * ff <= INT_MAX &&
                    block_params_size(d, ff) <= INT_MAX;
    assigns \nothing;
    ensures size: \result == block_params_size(d, ff); */
static int stack_block_params(int d, int ff) { return 4 * (d * d) + 2 * (d * ff) + 9 * d + ff; }
/*@ requires dims: BLK_DIMS;
    assigns \nothing;
    ensures size: \result == block_acts_size(B, T, d, H, ff); */
static int stack_block_acts(int B, int T, int d, int H, int ff)
{
    /* each product and partial sum stored in an int: WP then knows it is in range (an unstored
       intermediate keeps a to_sint32 cast that the solvers do not see through) */
    int rows = B * T, n = rows * d, BH = B * H, BHT = BH * T, natt = BHT * T, nff = rows * ff;
    int n10 = 10 * n, r4 = 4 * rows, f2 = 2 * nff, T2 = 2 * T;
    int s1 = n10 + r4, s2 = s1 + natt, s3 = s2 + f2;
    return s3 + T2;
}

/*@ requires dims: BLK_DIMS;
    assigns \nothing;
    ensures size: \result == block_scratch_size(B, T, d, ff); */
static int stack_block_scratch(int B, int T, int d, int H, int ff)
{
    (void)H; /* (H: for the contract's BLK_DIMS only) */
    int rows = B * T, n = rows * d, nff = rows * ff, n6 = 6 * n, T2 = 2 * T, s1 = n6 + nff;
    return s1 + T2;
}

/* ---- float ---- */

/* Layer i's mask of `size` elements (the masks of the L layers are contiguous), or NULL. */
/*@ requires range: 0 <= i && size >= 0 && i * size <= INT_MAX;
    assigns \result \from m, i, size;
    ensures no_mask: m == \null ==> \result == \null;
    ensures mask: m != \null ==> \result == m + i * size; */
static const float *stack_mask_f32(const float *m, int i, int size) { return m ? m + i * size : NULL; }

void stack_forward_f32(float *y, float *acts, const float *x, const float *params, const float *kpm,
                       const float *amask, const float *dmask, const float *d1mask,
                       const float *d2mask, float p, float eps, int post, ffn_act act, int causal,
                       int final_norm, int L, int B, int T, int d, int H, int ff)
{
    int rows = B * T, n = B * T * d, P = stack_block_params(d, ff), A = stack_block_acts(B, T, d, H, ff);
    int BH = B * H, BHT = BH * T, natt = BHT * T, nff = B * T * ff;  /* (each product stored: an int) */
    //@ ghost lemma_stack_sum(L, A, n);
    int An = A + n;
    /* layer i: out_i = block_i(out_{i-1}), out_{-1} = x; the last layer writes y directly when
       there is no final norm (its output slot is then unused) */
    const float *in = x;
    /*@ loop invariant i_range: 0 <= i <= L;
        loop invariant in_x: i == 0 ==> in == x;
        loop invariant in_prev: 0 < i < L ==> in == acts + ((i - 1) * An + A);
        loop assigns i, in, y[0 .. B * T * d - 1], acts[0 .. stack_acts_size(L, B, T, d, H, ff) - 1];
        loop variant L - i; */
    for (int i = 0; i < L; i++) {
        //@ ghost lemma_stack_layer(i, L, An);
        //@ ghost lemma_stack_layer(i, L, P);
        //@ ghost lemma_stack_layer(i, L, natt);
        //@ ghost lemma_stack_layer(i, L, nff);
        //@ ghost lemma_stack_layer(i, L, n);
        //@ ghost if (i > 0) lemma_stack_next(i, An);
        float *ai = acts + i * An, *out = i == L - 1 && !final_norm ? y : ai + A;
        block_forward_f32(out, ai, in, params + i * P, kpm, stack_mask_f32(amask, i, natt),
                          stack_mask_f32(dmask, i, nff), stack_mask_f32(d1mask, i, n),
                          stack_mask_f32(d2mask, i, n), p, eps, post, act, causal, B, T, d, H, ff);
        in = out;
    }
    /* y = norm(out_{L-1}) */
    if (final_norm) {
        /* fin: the last layer's output out_{L-1} (the loop's last `in`), the n elements before fmean */
        //@ ghost lemma_stack_next(L, An);
        float *fmean = acts + L * An, *frstd = fmean + rows;
        const float *fin = fmean - n, *fg = params + L * P;
        layernorm_forward_f32(y, fmean, frstd, fin, fg, fg + d, rows, d, eps);
    }
}

void stack_backward_f32(float *dx, float *grads, float *ws, const float *dy, const float *acts,
                        const float *x, const float *params, const float *amask, const float *dmask,
                        const float *d1mask, const float *d2mask, float p, int post, ffn_act act,
                        int final_norm, int L, int B, int T, int d, int H, int ff)
{
    int rows = B * T, n = B * T * d, P = stack_block_params(d, ff), A = stack_block_acts(B, T, d, H, ff);
    int BH = B * H, BHT = BH * T, natt = BHT * T, nff = B * T * ff;  /* (each product stored: an int) */
    //@ ghost lemma_stack_sum(L, A, n);
    int An = A + n;
    /* the scratch: the block's, then two buffers g0, g1 [rows, d] that carry the gradient of the
       residual stream between layers (a block's dx may not alias its dy) */
    int S = stack_block_scratch(B, T, d, H, ff);
    float *bws = ws, *g0 = ws + S, *g1 = g0 + n;
    /* g = d(out_{L-1}) = normᵀ(dy) at out_{L-1} (the final norm's gradients accumulated), or dy */
    const float *g = dy;
    int gbuf = 0; /* where g is: 0 dy, 1 g0, 2 g1 (a flag, not g == g0: WP's model hides that comparison) */
    if (final_norm) {
        //@ ghost lemma_stack_next(L, An);
        const float *fmean = acts + L * An, *frstd = fmean + rows, *fin = fmean - n;  /* out_{L-1} */
        const float *fg = params + L * P;
        float *dfg = grads + L * P;
        layernorm_backward_f32(g0, dfg, dfg + d, dy, fin, fg, fmean, frstd, rows, d);
        g = g0;
        gbuf = 1;
    }
    /* layer i = L-1 .. 0: d(out_{i-1}) = block_iᵀ(g) at its input out_{i-1} (x for layer 0), into
       the other buffer, and into dx for layer 0 */
    /*@ loop invariant i_range: -1 <= i <= L - 1;
        loop invariant gbuf_range: 0 <= gbuf <= 2;
        loop invariant g_buf: i >= 0 ==> (gbuf == 0 && g == dy) || (gbuf == 1 && g == g0) || (gbuf == 2 && g == g1);
        loop assigns i, g, gbuf, dx[0 .. B * T * d - 1], grads[0 .. stack_params_size(L, d, ff, final_norm) - 1],
                     ws[0 .. stack_scratch_size(B, T, d, ff) - 1];
        loop variant i + 1; */
    for (int i = L - 1; i >= 0; i--) {
        //@ ghost lemma_stack_layer(i, L, An);
        //@ ghost lemma_stack_layer(i, L, P);
        //@ ghost lemma_stack_layer(i, L, natt);
        //@ ghost lemma_stack_layer(i, L, nff);
        //@ ghost lemma_stack_layer(i, L, n);
        //@ ghost if (i > 0) lemma_stack_next(i, An);
        /* layer i's input: x, or out_{i-1}, the n elements before layer i's caches */
        const float *ai = acts + i * An, *in = i == 0 ? x : ai - n;
        float *out = i == 0 ? dx : gbuf == 1 ? g1 : g0;
        block_backward_f32(out, grads + i * P, bws, g, ai, in, params + i * P, stack_mask_f32(amask, i, natt),
                           stack_mask_f32(dmask, i, nff), stack_mask_f32(d1mask, i, n),
                           stack_mask_f32(d2mask, i, n), p, post, act, B, T, d, H, ff);
        g = out;
        gbuf = gbuf == 1 ? 2 : 1;
    }
}

/* ---- double: the same code with double ---- */

/* Layer i's mask of `size` elements (the masks of the L layers are contiguous), or NULL. */
/*@ requires range: 0 <= i && size >= 0 && i * size <= INT_MAX;
    assigns \result \from m, i, size;
    ensures no_mask: m == \null ==> \result == \null;
    ensures mask: m != \null ==> \result == m + i * size; */
static const double *stack_mask_f64(const double *m, int i, int size) { return m ? m + i * size : NULL; }

void stack_forward_f64(double *y, double *acts, const double *x, const double *params, const double *kpm,
                       const double *amask, const double *dmask, const double *d1mask,
                       const double *d2mask, double p, double eps, int post, ffn_act act, int causal,
                       int final_norm, int L, int B, int T, int d, int H, int ff)
{
    int rows = B * T, n = B * T * d, P = stack_block_params(d, ff), A = stack_block_acts(B, T, d, H, ff);
    int BH = B * H, BHT = BH * T, natt = BHT * T, nff = B * T * ff;  /* (each product stored: an int) */
    //@ ghost lemma_stack_sum(L, A, n);
    int An = A + n;
    /* layer i: out_i = block_i(out_{i-1}), out_{-1} = x; the last layer writes y directly when
       there is no final norm (its output slot is then unused) */
    const double *in = x;
    /*@ loop invariant i_range: 0 <= i <= L;
        loop invariant in_x: i == 0 ==> in == x;
        loop invariant in_prev: 0 < i < L ==> in == acts + ((i - 1) * An + A);
        loop assigns i, in, y[0 .. B * T * d - 1], acts[0 .. stack_acts_size(L, B, T, d, H, ff) - 1];
        loop variant L - i; */
    for (int i = 0; i < L; i++) {
        //@ ghost lemma_stack_layer(i, L, An);
        //@ ghost lemma_stack_layer(i, L, P);
        //@ ghost lemma_stack_layer(i, L, natt);
        //@ ghost lemma_stack_layer(i, L, nff);
        //@ ghost lemma_stack_layer(i, L, n);
        //@ ghost if (i > 0) lemma_stack_next(i, An);
        double *ai = acts + i * An, *out = i == L - 1 && !final_norm ? y : ai + A;
        block_forward_f64(out, ai, in, params + i * P, kpm, stack_mask_f64(amask, i, natt),
                          stack_mask_f64(dmask, i, nff), stack_mask_f64(d1mask, i, n),
                          stack_mask_f64(d2mask, i, n), p, eps, post, act, causal, B, T, d, H, ff);
        in = out;
    }
    /* y = norm(out_{L-1}) */
    if (final_norm) {
        /* fin: the last layer's output out_{L-1} (the loop's last `in`), the n elements before fmean */
        //@ ghost lemma_stack_next(L, An);
        double *fmean = acts + L * An, *frstd = fmean + rows;
        const double *fin = fmean - n, *fg = params + L * P;
        layernorm_forward_f64(y, fmean, frstd, fin, fg, fg + d, rows, d, eps);
    }
}

void stack_backward_f64(double *dx, double *grads, double *ws, const double *dy, const double *acts,
                        const double *x, const double *params, const double *amask, const double *dmask,
                        const double *d1mask, const double *d2mask, double p, int post, ffn_act act,
                        int final_norm, int L, int B, int T, int d, int H, int ff)
{
    int rows = B * T, n = B * T * d, P = stack_block_params(d, ff), A = stack_block_acts(B, T, d, H, ff);
    int BH = B * H, BHT = BH * T, natt = BHT * T, nff = B * T * ff;  /* (each product stored: an int) */
    //@ ghost lemma_stack_sum(L, A, n);
    int An = A + n;
    /* the scratch: the block's, then two buffers g0, g1 [rows, d] that carry the gradient of the
       residual stream between layers (a block's dx may not alias its dy) */
    int S = stack_block_scratch(B, T, d, H, ff);
    double *bws = ws, *g0 = ws + S, *g1 = g0 + n;
    /* g = d(out_{L-1}) = normᵀ(dy) at out_{L-1} (the final norm's gradients accumulated), or dy */
    const double *g = dy;
    int gbuf = 0; /* where g is: 0 dy, 1 g0, 2 g1 (a flag, not g == g0: WP's model hides that comparison) */
    if (final_norm) {
        //@ ghost lemma_stack_next(L, An);
        const double *fmean = acts + L * An, *frstd = fmean + rows, *fin = fmean - n;  /* out_{L-1} */
        const double *fg = params + L * P;
        double *dfg = grads + L * P;
        layernorm_backward_f64(g0, dfg, dfg + d, dy, fin, fg, fmean, frstd, rows, d);
        g = g0;
        gbuf = 1;
    }
    /* layer i = L-1 .. 0: d(out_{i-1}) = block_iᵀ(g) at its input out_{i-1} (x for layer 0), into
       the other buffer, and into dx for layer 0 */
    /*@ loop invariant i_range: -1 <= i <= L - 1;
        loop invariant gbuf_range: 0 <= gbuf <= 2;
        loop invariant g_buf: i >= 0 ==> (gbuf == 0 && g == dy) || (gbuf == 1 && g == g0) || (gbuf == 2 && g == g1);
        loop assigns i, g, gbuf, dx[0 .. B * T * d - 1], grads[0 .. stack_params_size(L, d, ff, final_norm) - 1],
                     ws[0 .. stack_scratch_size(B, T, d, ff) - 1];
        loop variant i + 1; */
    for (int i = L - 1; i >= 0; i--) {
        //@ ghost lemma_stack_layer(i, L, An);
        //@ ghost lemma_stack_layer(i, L, P);
        //@ ghost lemma_stack_layer(i, L, natt);
        //@ ghost lemma_stack_layer(i, L, nff);
        //@ ghost lemma_stack_layer(i, L, n);
        //@ ghost if (i > 0) lemma_stack_next(i, An);
        /* layer i's input: x, or out_{i-1}, the n elements before layer i's caches */
        const double *ai = acts + i * An, *in = i == 0 ? x : ai - n;
        double *out = i == 0 ? dx : gbuf == 1 ? g1 : g0;
        block_backward_f64(out, grads + i * P, bws, g, ai, in, params + i * P, stack_mask_f64(amask, i, natt),
                           stack_mask_f64(dmask, i, nff), stack_mask_f64(d1mask, i, n),
                           stack_mask_f64(d2mask, i, n), p, post, act, B, T, d, H, ff);
        g = out;
        gbuf = gbuf == 1 ? 2 : 1;
    }
}
