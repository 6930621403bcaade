/* The block's forward, composed (issue 9): what the block rows run proves (-DRESNORM_WP_ROWS,
 * proofs/block.sh, session proofs/session_block/rows; proofs/README-block.md "The
 * forward composed").  Included by ref/block.c in that run only; with it specs/ffn_rows.h (the
 * FFN's rows contract: z_rows, h_def, y_rows, proved by prove-ffn's rows run) and specs/layernorm.h's
 * rows clauses (y_rows, stats_rows: proved by prove-layernorm's rows run), which the block is proved
 * against; Frama-C merges the clauses below into block_forward_*'s contract there.  Every statement
 * is over the reals (-wp-model real) and over the block's output and its caches (acts, in
 * specs/block.h's layout) on return; x, params and the masks are read only (assigns), so their
 * values on return are the inputs.  n = B·T·d, rows = B·T, rows of width d (x, the norms, a, s1,
 * f, s2, y) or ff (z, hh):
 *
 *   both norms:
 *     s1_pre, s1_post  s1 = x + a, the first residual add (a: the attention's output after
 *              dropout1), one clause per branch
 *   pre-LN (post == 0), norm_first=True:
 *     ln2_pre  every row of ln2 is LayerNorm (norm2: its weight and bias) of s1's row, with the
 *              row's cached mean2, rstd2: ln2[r·d + i] == (s1[r·d + i] − mean2[r])·rstd2[r]·g2[i] + b2n[i]
 *     y_pre    y = s1 + f
 *   post-LN (post != 0), norm_first=False:
 *     ln1_post every row of ln1 is LayerNorm (norm1) of s1's row, with the row's cached mean1, rstd1
 *     s2_post  s2 = ln1 + f
 *     y_post   every row of y is LayerNorm (norm2) of s2's row, with mean2, rstd2
 *   both:
 *     z_rows   every row of z is u's row times linear1.weightᵀ plus linear1.bias, u = ln2 (pre) or
 *              ln1 (post), the FFN's input: z[r·ff + k] == b1[k] + sum_c u[r·d + c]·w1[k·d + c]
 *     h_def    hh[i] == act(z[i]), times dmask[i]/(1 − p) with dropout.mask (ffn_h32 / ffn_h64)
 *     f_def    every f[r·d + j] is b2[j] + sum_k hh[r·ff + k]·w2[j·ff + k] (linear2), times
 *              d2mask[r·d + j]/(1 − p) with dropout2.mask
 * So
 *   pre-LN:  y = s1 + drop2(ffn(norm2(s1))),  s1 = x + a
 *   post-LN: y = norm2(h + drop2(ffn(h))),    h = norm1(s1), s1 = x + a
 * the wiring of specs/block.h: which norm (its weight and bias) reads which tensor, where the
 * residual adds take their operands, dropout2 before the add.  NOT stated: a as a formula of the attention's input (attention_forward_* has no
 * composed contract: specs/attention_rows.h states one query row of one head), so neither which
 * tensor the attention read (pre-LN's ln1 = norm1(x)) nor dropout1; the norms' mean and rstd as
 * formulas of their input rows; of the backward, all but post-LN's d.norm2, pre-LN's d.norm1 and
 * pre-LN's FFN parameter gradients (below, "The backward").
 *
 * The proof: the driver is block_head_* then one tail of small static helpers, each with its own
 * contract over its buffers as parameters (specs/block.h), so that each fact crosses at most one or
 * two small calls.  (Stated at once over the driver, with its eight calls and attention's contract in
 * every goal, 64 of 528 goals failed: proofs/attempts/issue9-block-rows.md.)
 */
#ifndef RESNORM_BLOCK_ROWS_H
#define RESNORM_BLOCK_ROWS_H

#include "block.h"
#include "ffn_rows.h"
#include "layernorm_rows.h"
#if defined(RESNORM_WP_BWD_FFN)
/* the FFN wrapper's pass and the post-LN FFN pass only (block_ffn_backward_*, block_backward_*'s
   db2_ffnp, dw1_ffnp, db1_ffnp; proofs/block.sh): the FFN backward's rows clauses (dw2_sum, db2_sum,
   dw1_sum, db1_sum, ..., with the rows-only precondition sep_mask_db), from which the wrapper's
   ffn_db2, ffn_dw2, ffn_dw1, ffn_db1 are proved.  Not in the driver's
   backward rows pass: there the clauses would sit in the context of post-LN's direct call of
   ffn_backward_*, and its frame step dg2_k3 (cvc5 4 s without them) timed out at 90 s. */
#include "ffn_bwd_rows.h"
#endif

/*@
  // f before dropout2: row r, column j of the FFN's linear2, b2[j] + hh[r, :]·w2[j, :].
  logic real blk_ffn_y{L}(float *hh, float *w2, float *b2, integer r, integer j, integer ff) =
    lin_bias(b2, j) + lin_dot(hh + lin_row_start(r, ff), w2 + lin_row_start(j, ff), ff);
  logic real blk_ffn_y{L}(double *hh, double *w2, double *b2, integer r, integer j, integer ff) =
    lin_bias(b2, j) + lin_dot(hh + lin_row_start(r, ff), w2 + lin_row_start(j, ff), ff);
  // v after a dropout with the 0/1 mask m at index i (m == NULL: eval mode, v itself), scale 1/(1 − p).
  logic real blk_drop{L}(real v, float *m, real p, integer i) =
    m == \null ? v : dropout_val(v, m[i], 1.0 / (1.0 - p));
  logic real blk_drop{L}(real v, double *m, real p, integer i) =
    m == \null ? v : dropout_val(v, m[i], 1.0 / (1.0 - p));
*/

/* Sizes and the caches' and parameters' offsets (elements), as ref/block.c lays them out. */
#define BLK_N (B * T * d)
#define BLK_ROWS (B * T)
#define BLK_NF (B * T * ff)
#define BLK_LN1 (acts)
#define BLK_MEAN1 (acts + BLK_N)
#define BLK_RSTD1 (acts + (BLK_N + BLK_ROWS))
#define BLK_A (acts + (5 * BLK_N + 2 * BLK_ROWS + 2 * T))
#define BLK_S1 (acts + (6 * BLK_N + 2 * BLK_ROWS + 2 * T))
#define BLK_LN2 (acts + (7 * BLK_N + 2 * BLK_ROWS + 2 * T))
#define BLK_MEAN2 (acts + (8 * BLK_N + 2 * BLK_ROWS + 2 * T))
#define BLK_RSTD2 (acts + (8 * BLK_N + 3 * BLK_ROWS + 2 * T))
#define BLK_Z (acts + (8 * BLK_N + 4 * BLK_ROWS + 2 * T))
#define BLK_HH (acts + (8 * BLK_N + 4 * BLK_ROWS + 2 * T + BLK_NF))
#define BLK_F (acts + (8 * BLK_N + 4 * BLK_ROWS + 2 * T + 2 * BLK_NF))
#define BLK_S2 (acts + (9 * BLK_N + 4 * BLK_ROWS + 2 * T + 2 * BLK_NF))
#define BLK_W1 (params + (4 * (d * d) + 4 * d))
#define BLK_B1 (params + (4 * (d * d) + 4 * d + d * ff))
#define BLK_W2 (params + (4 * (d * d) + 4 * d + d * ff + ff))
#define BLK_B2 (params + (4 * (d * d) + 4 * d + 2 * (d * ff) + ff))
#define BLK_G1 (params + (4 * (d * d) + 5 * d + 2 * (d * ff) + ff))
#define BLK_B1N (params + (4 * (d * d) + 6 * d + 2 * (d * ff) + ff))
#define BLK_G2 (params + (4 * (d * d) + 7 * d + 2 * (d * ff) + ff))
#define BLK_B2N (params + (4 * (d * d) + 8 * d + 2 * (d * ff) + ff))

/* The driver's local pointers are the offsets above (the driver's assertion ptrs). */
#define BLK_ROWS_PTRS                                                                              \
    ptrs: n == BLK_N && rows == BLK_ROWS && ln1 == BLK_LN1 && mean1 == BLK_MEAN1 &&                \
          rstd1 == BLK_RSTD1 && a == BLK_A && s1 == BLK_S1 && ln2 == BLK_LN2 &&                     \
          mean2 == BLK_MEAN2 && rstd2 == BLK_RSTD2 && z == BLK_Z && hh == BLK_HH && f == BLK_F &&  \
          s2 == BLK_S2 && w1 == BLK_W1 && b1 == BLK_B1 && w2 == BLK_W2 && b2 == BLK_B2 &&          \
          g1 == BLK_G1 && b1n == BLK_B1N && g2 == BLK_G2 && b2n == BLK_B2N

/* The helpers' and the driver's assertions (ref/block.c, after each one's last call). */
/* buffer v[0 .. m-1] unchanged since label L */
#define BLK_SAME(v, m, L) \forall integer k; 0 <= k < (m) ==> v[k] == \at(v[k], L)
/* The dots of x's rows q < R with w's rows j < J (both of width m), and the biases b[j], as at
   label L: first over lin_dot_at (lin_dot_at_frame), then over lin_dot (lin_dot_shift). */
#define BLK_DOT_AT_SAME(x, w, m, R, J, L)                                                          \
    \forall integer q, j; 0 <= q < (R) && 0 <= j < (J) ==>                                          \
      \at(lin_dot_at(x, lin_row_start(q, m), w, lin_row_start(j, m), m), L) ==                      \
        lin_dot_at(x, lin_row_start(q, m), w, lin_row_start(j, m), m)
#define BLK_DOT_SAME(x, w, m, R, J, L)                                                             \
    \forall integer q, j; 0 <= q < (R) && 0 <= j < (J) ==>                                          \
      \at(lin_dot(x + lin_row_start(q, m), w + lin_row_start(j, m), m), L) ==                       \
        lin_dot(x + lin_row_start(q, m), w + lin_row_start(j, m), m)
/* f's model (the FFN sublayer's f_def) at row r, column j */
#define BLK_F_MODEL blk_drop(blk_ffn_y(hh, w2, b2, r, j, ff), d2mask, p, lin_row_start(r, d) + j)
#define BLK_BIAS_SAME(b, J, L) \forall integer j; 0 <= j < (J) ==> \at(lin_bias(b, j), L) == lin_bias(b, j)

/* s1 = x + a over the caches (block_head_*'s s1_def) */
#define BLK_S1_DEF \forall integer i; 0 <= i < BLK_N ==> BLK_S1[i] == x[i] + BLK_A[i]

/* HF: ffn_h32 or ffn_h64 (specs/ffn_rows.h).  s1 = x + a is stated once per branch (s1_pre,
   s1_post), as the other clauses: one clause over both branches timed out at their join. */
#define BLK_ROWS_CONTRACT(HF)                                                                      \
    ensures s1_pre: post == 0 ==> BLK_S1_DEF;                                                      \
    ensures s1_post: post != 0 ==> BLK_S1_DEF;                                                     \
    ensures ln2_pre: post == 0 ==>                                                                 \
      BLK_LN_ROWS(BLK_ROWS, BLK_LN2, BLK_MEAN2, BLK_RSTD2, BLK_S1, BLK_G2, BLK_B2N);                \
    ensures y_pre: post == 0 ==> \forall integer i; 0 <= i < BLK_N ==> y[i] == BLK_S1[i] + BLK_F[i]; \
    ensures ln1_post: post != 0 ==>                                                                \
      BLK_LN_ROWS(BLK_ROWS, BLK_LN1, BLK_MEAN1, BLK_RSTD1, BLK_S1, BLK_G1, BLK_B1N);                \
    ensures s2_post: post != 0 ==> \forall integer i; 0 <= i < BLK_N ==> BLK_S2[i] == BLK_LN1[i] + BLK_F[i]; \
    ensures y_post: post != 0 ==> BLK_LN_ROWS(BLK_ROWS, y, BLK_MEAN2, BLK_RSTD2, BLK_S2, BLK_G2, BLK_B2N); \
    ensures z_rows: \forall integer r; 0 <= r < BLK_ROWS ==>                                       \
      lin_row_y{Post, Post}(BLK_Z, post == 0 ? BLK_LN2 : BLK_LN1, BLK_W1, BLK_B1, r, d, ff);       \
    ensures h_def: \forall integer i; 0 <= i < BLK_NF ==> BLK_HH[i] == HF(act, BLK_Z, dmask, p, i); \
    ensures f_def: \forall integer r, j; 0 <= r < BLK_ROWS && 0 <= j < d ==>                       \
      BLK_F[lin_row_start(r, d) + j] ==                                                            \
        blk_drop(blk_ffn_y(BLK_HH, BLK_W2, BLK_B2, r, j, ff), d2mask, p, lin_row_start(r, d) + j);

/* The backward (issue 9), post-LN: norm2's backward is the first step, at s2 (with mean2, rstd2)
   from dy, so d.norm2.weight and d.norm2.bias at return are dy's column sums against s2's
   normalized rows, added to the gradients as given (ln_dgb_rows, specs/layernorm_rows.h): the
   proof rejects norm2's backward at the wrong input (post-LN must use the sum s2) or with norm1's
   statistics.  Pre-LN: d.norm1 at return (dgb1_pre, below), and the FFN's parameter gradients at
   return, stated as assertions at the end of pre-LN's branch of block_backward_* (ref/block.c; the
   sums are over buffers at labels inside the driver, which a postcondition cannot name):
     db2_pre  d.linear2.bias   = its value at entry + sum_r gf[r·d + j]             (gf at the call)
     dw2_pre  d.linear2.weight = its value at entry + sum_r gf[r·d + j]·hh[r·ff + k]
     dw1_pre  d.linear1.weight = its value at entry + sum_r dh[r·ff + j]·ln2[r·d + k] (dh at the FFN's return)
     db1_pre  d.linear1.bias   = its value at entry + sum_r dh[r·ff + j]
   gf: dy after dropout2's backward (dy itself without a mask), the FFN's output gradient, at the
   FFN's call (label ffn_in); dh: the FFN's gradient of z (its dz_rows) at its return (ffn_done).
   From the FFN wrapper's ffn_db2, ffn_dw2, ffn_dw1, ffn_db1 (specs/block.h: ffn_backward's rows
   clauses, specs/ffn_bwd_rows.h, restated over the wrapper's parameters) and the frame of grads'
   FFN range [BLK_W1_OFF, BLK_G1_OFF) across every other step.  NOT stated: these as postconditions
   (gf is dropout2's backward of dy, in the scratch that later steps overwrite: a postcondition needs
   it as a formula of dy and the mask at entry; dh survives to return, but carrying its sums to Post
   needs the frame lemmas of lin_csum and lin_dw_sum, which sit in ffn_bwd_rows.h, kept out of this
   pass), dh as a formula (the FFN's dz_rows), post-LN's FFN gradients as postconditions (its FFN
   reads norm2's backward of dy, overwritten by norm1's), the attention's and the other norm's
   gradients, dx.  Post-LN: d.linear2.bias, d.linear1.weight, d.linear1.bias at return, assertions
   db2_post, dw1_post, db1_post at the end of its branch (the same macros; gf its FFN's output
   gradient at the call, label pffn_in; dh at its return, pffn_done; the input ln1), from
   ffn_backward_*'s rows clauses at its direct call, read in the post-LN FFN pass
   (-DRESNORM_WP_BWD_FFN, proofs/block.sh).  Not d.linear2.weight: proofs/README-block.md. */
#define BLK_DG2 (grads + (4 * (d * d) + 7 * d + 2 * (d * ff) + ff))
#define BLK_DB2N (grads + (4 * (d * d) + 8 * d + 2 * (d * ff) + ff))
/* One norm's two gradients, grads[O .. O + 2d - 1] (weight then bias), as at label L, indexed from
   grads itself (an index variable, not an offset folded into a sum) */
#define BLK_GRADS_NORM_SAME(O, L) \forall integer k; O <= k < O + 2 * d ==> grads[k] == \at(grads[k], L)
/* grads' last 2·d elements (d.norm2.weight, d.norm2.bias: the layout's last two) as at label L */
#define BLK_G2_OFF (4 * (d * d) + 7 * d + 2 * (d * ff) + ff)
#define BLK_GRADS_TAIL_SAME(L) BLK_GRADS_NORM_SAME(BLK_G2_OFF, L)
/* ln_dgb_rows{Pre, L} for norm2's gradients, spelled out over the driver's locals */
#define BLK_DGB2_AT(L)                                                                             \
    \forall integer i; 0 <= i < d ==>                                                              \
      \at(BLK_DG2[i], L) == \at(BLK_DG2[i], Pre) +                                                 \
        ln_dg_sum{Pre}(dy, BLK_S2, BLK_MEAN2, BLK_RSTD2, i, d, BLK_ROWS) &&                        \
      \at(BLK_DB2N[i], L) == \at(BLK_DB2N[i], Pre) + ln_db_sum{Pre}(dy, i, d, BLK_ROWS)
/* pre-LN: norm1's backward is the last but one step, at x (with mean1, rstd1) from the attention's
   input gradient, which the scratch holds at return (ws + n, BLK_GB): d.norm1.weight and d.norm1.bias
   at return are that gradient's column sums against x's normalized rows, added to the gradients as
   given.  The sums are read at label S, the gradients at L. */
#define BLK_G1_OFF (4 * (d * d) + 5 * d + 2 * (d * ff) + ff)
#define BLK_DG1 (grads + BLK_G1_OFF)
#define BLK_DB1N (grads + (BLK_G1_OFF + d))
#define BLK_GB (ws + BLK_N)
#define BLK_GRADS_N1_SAME(L) BLK_GRADS_NORM_SAME(BLK_G1_OFF, L)
#define BLK_DGB1_AT(L, S)                                                                          \
    \forall integer i; 0 <= i < d ==>                                                              \
      \at(BLK_DG1[i], L) == \at(BLK_DG1[i], Pre) +                                                 \
        ln_dg_sum{S}(BLK_GB, x, BLK_MEAN1, BLK_RSTD1, i, d, BLK_ROWS) &&                            \
      \at(BLK_DB1N[i], L) == \at(BLK_DB1N[i], Pre) + ln_db_sum{S}(BLK_GB, i, d, BLK_ROWS)
/* The FFN's parameter gradients in grads (pre-LN, the backward rows pass): d.linear1.weight, d.linear1.bias,
   d.linear2.weight, d.linear2.bias are grads[BLK_W1_OFF .. BLK_G1_OFF - 1]. */
#define BLK_W1_OFF (4 * (d * d) + 4 * d)
#define BLK_W2_OFF (4 * (d * d) + 4 * d + d * ff + ff)
#define BLK_B2_OFF (4 * (d * d) + 4 * d + 2 * (d * ff) + ff)
#define BLK_B1_OFF (4 * (d * d) + 4 * d + d * ff)
#define BLK_DW1 (grads + BLK_W1_OFF)
#define BLK_DB1 (grads + BLK_B1_OFF)
#define BLK_DW2 (grads + BLK_W2_OFF)
#define BLK_DB2 (grads + BLK_B2_OFF)
#define BLK_GRADS_FFN_SAME(L)                                                                      \
    \forall integer k; BLK_W1_OFF <= k < BLK_G1_OFF ==> grads[k] == \at(grads[k], L)
/* d.linear2.bias (L) is its value at entry plus the column sums of the FFN's output gradient g at
   label S (the FFN's call) */
#define BLK_DB2_AT(L, g, S)                                                                        \
    \forall integer j; 0 <= j < d ==>                                                              \
      \at(BLK_DB2[j], L) == \at(BLK_DB2[j], Pre) + lin_csum{S}(g, j, d, BLK_ROWS)
/* d.linear2.weight (L): its value at entry plus the FFN's dyᵀ·h, dy the gradient g and h the FFN's
   cache hh at label S */
#define BLK_DW2_AT(L, g, h, S)                                                                     \
    \forall integer j, k; 0 <= j < d && 0 <= k < ff ==>                                            \
      \at(BLK_DW2[lin_col_idx(j, ff, k)], L) == \at(BLK_DW2[lin_col_idx(j, ff, k)], Pre) +         \
        lin_dw_sum{S}(g, h, j, k, ff, d, BLK_ROWS)
/* d.linear1.weight, d.linear1.bias (L): their values at entry plus dzᵀ·u and the column sums of dz,
   dz the FFN's gradient of z (dh, [rows, ff]) and u its input ([rows, d]) at label S (the FFN's
   return) */
#define BLK_DW1_AT(L, dz, u, S)                                                                    \
    \forall integer j, k; 0 <= j < ff && 0 <= k < d ==>                                            \
      \at(BLK_DW1[lin_col_idx(j, d, k)], L) == \at(BLK_DW1[lin_col_idx(j, d, k)], Pre) +           \
        lin_dw_sum{S}(dz, u, j, k, d, ff, BLK_ROWS)
#define BLK_DB1_AT(L, dz, S)                                                                       \
    \forall integer j; 0 <= j < ff ==>                                                             \
      \at(BLK_DB1[j], L) == \at(BLK_DB1[j], Pre) + lin_csum{S}(dz, j, ff, BLK_ROWS)
#define BLK_BWD_ROWS_CONTRACT                                                                      \
    ensures dgb2_post: post != 0 ==> BLK_DGB2_AT(Post);                                           \
    ensures dgb1_pre: post == 0 ==> BLK_DGB1_AT(Post, Post);

/* ln_dg_sum and ln_db_sum over two memory states (the frames): equal where column i of dy and x and
   the statistics mean[q], rstd[q] of the rows q < r are; each frame by induction on r (Wp.induction:
   committed scripts, proofs/session_block/rows_lemmas_f32/ and _f64/), its step by the SMT solvers.
   Only in the backward's rows pass of one dtype (-DRESNORM_WP_BWD=32 or 64): a global lemma sits in
   every goal's context, so the forward's rows goals (and their cached proofs) stay as they are, and
   each dtype's goals see their own lemmas only (with the f64 ones beside, cvc5 and z3 gave up on the
   f32 dgb_ret, which proves in 0.9 s without them). */
#if defined(RESNORM_WP_BWD) && RESNORM_WP_BWD == 32
/*@
  lemma blk_dg_sum_step_f32{A, B}: \forall float *dy, float *x, float *mean, float *rstd, integer i, n, r;
    0 < r ==> 0 <= i < n ==>
    \at(dy[ln_col_idx(r - 1, n, i)], A) == \at(dy[ln_col_idx(r - 1, n, i)], B) ==>
    \at(x[ln_col_idx(r - 1, n, i)], A) == \at(x[ln_col_idx(r - 1, n, i)], B) ==>
    \at(mean[r - 1], A) == \at(mean[r - 1], B) ==> \at(rstd[r - 1], A) == \at(rstd[r - 1], B) ==>
    ln_dg_sum{A}(dy, x, mean, rstd, i, n, r - 1) == ln_dg_sum{B}(dy, x, mean, rstd, i, n, r - 1) ==>
    ln_dg_sum{A}(dy, x, mean, rstd, i, n, r) == ln_dg_sum{B}(dy, x, mean, rstd, i, n, r);
  lemma blk_dg_sum_frame_f32{A, B}: \forall float *dy, float *x, float *mean, float *rstd, integer i, n, r;
    0 <= r ==> 0 <= i < n ==>
    (\forall integer q; 0 <= q < r ==>
       \at(dy[ln_col_idx(q, n, i)], A) == \at(dy[ln_col_idx(q, n, i)], B) &&
       \at(x[ln_col_idx(q, n, i)], A) == \at(x[ln_col_idx(q, n, i)], B) &&
       \at(mean[q], A) == \at(mean[q], B) && \at(rstd[q], A) == \at(rstd[q], B)) ==>
    ln_dg_sum{A}(dy, x, mean, rstd, i, n, r) == ln_dg_sum{B}(dy, x, mean, rstd, i, n, r);
  lemma blk_db_sum_step_f32{A, B}: \forall float *dy, integer i, n, r; 0 < r ==> 0 <= i < n ==>
    \at(dy[ln_col_idx(r - 1, n, i)], A) == \at(dy[ln_col_idx(r - 1, n, i)], B) ==>
    ln_db_sum{A}(dy, i, n, r - 1) == ln_db_sum{B}(dy, i, n, r - 1) ==>
    ln_db_sum{A}(dy, i, n, r) == ln_db_sum{B}(dy, i, n, r);
  lemma blk_db_sum_frame_f32{A, B}: \forall float *dy, integer i, n, r; 0 <= r ==> 0 <= i < n ==>
    (\forall integer q; 0 <= q < r ==> \at(dy[ln_col_idx(q, n, i)], A) == \at(dy[ln_col_idx(q, n, i)], B)) ==>
    ln_db_sum{A}(dy, i, n, r) == ln_db_sum{B}(dy, i, n, r);
*/
#endif
#if defined(RESNORM_WP_BWD) && RESNORM_WP_BWD == 64
/*@
  lemma blk_dg_sum_step_f64{A, B}: \forall double *dy, double *x, double *mean, double *rstd, integer i, n, r;
    0 < r ==> 0 <= i < n ==>
    \at(dy[ln_col_idx(r - 1, n, i)], A) == \at(dy[ln_col_idx(r - 1, n, i)], B) ==>
    \at(x[ln_col_idx(r - 1, n, i)], A) == \at(x[ln_col_idx(r - 1, n, i)], B) ==>
    \at(mean[r - 1], A) == \at(mean[r - 1], B) ==> \at(rstd[r - 1], A) == \at(rstd[r - 1], B) ==>
    ln_dg_sum{A}(dy, x, mean, rstd, i, n, r - 1) == ln_dg_sum{B}(dy, x, mean, rstd, i, n, r - 1) ==>
    ln_dg_sum{A}(dy, x, mean, rstd, i, n, r) == ln_dg_sum{B}(dy, x, mean, rstd, i, n, r);
  lemma blk_dg_sum_frame_f64{A, B}: \forall double *dy, double *x, double *mean, double *rstd, integer i, n, r;
    0 <= r ==> 0 <= i < n ==>
    (\forall integer q; 0 <= q < r ==>
       \at(dy[ln_col_idx(q, n, i)], A) == \at(dy[ln_col_idx(q, n, i)], B) &&
       \at(x[ln_col_idx(q, n, i)], A) == \at(x[ln_col_idx(q, n, i)], B) &&
       \at(mean[q], A) == \at(mean[q], B) && \at(rstd[q], A) == \at(rstd[q], B)) ==>
    ln_dg_sum{A}(dy, x, mean, rstd, i, n, r) == ln_dg_sum{B}(dy, x, mean, rstd, i, n, r);
  lemma blk_db_sum_step_f64{A, B}: \forall double *dy, integer i, n, r; 0 < r ==> 0 <= i < n ==>
    \at(dy[ln_col_idx(r - 1, n, i)], A) == \at(dy[ln_col_idx(r - 1, n, i)], B) ==>
    ln_db_sum{A}(dy, i, n, r - 1) == ln_db_sum{B}(dy, i, n, r - 1) ==>
    ln_db_sum{A}(dy, i, n, r) == ln_db_sum{B}(dy, i, n, r);
  lemma blk_db_sum_frame_f64{A, B}: \forall double *dy, integer i, n, r; 0 <= r ==> 0 <= i < n ==>
    (\forall integer q; 0 <= q < r ==> \at(dy[ln_col_idx(q, n, i)], A) == \at(dy[ln_col_idx(q, n, i)], B)) ==>
    ln_db_sum{A}(dy, i, n, r) == ln_db_sum{B}(dy, i, n, r);
*/
#endif

/*@ BLK_ROWS_CONTRACT(ffn_h32) */
void block_forward_f32(float *y, float *acts, const float *x, const float *params, const float *kpm,
                       const float *amask, const float *dmask, const float *d1mask,
                       const float *d2mask, float p, float eps, int post, ffn_act act, int causal,
                       int B, int T, int d, int H, int ff);
/*@ BLK_ROWS_CONTRACT(ffn_h64) */
void block_forward_f64(double *y, double *acts, const double *x, const double *params,
                       const double *kpm, const double *amask, const double *dmask,
                       const double *d1mask, const double *d2mask, double p, double eps, int post,
                       ffn_act act, int causal, int B, int T, int d, int H, int ff);

/*@ BLK_BWD_ROWS_CONTRACT */
void block_backward_f32(float *dx, float *grads, float *ws, const float *dy, const float *acts,
                        const float *x, const float *params, const float *amask, const float *dmask,
                        const float *d1mask, const float *d2mask, float p, int post, ffn_act act,
                        int B, int T, int d, int H, int ff);
/*@ BLK_BWD_ROWS_CONTRACT */
void block_backward_f64(double *dx, double *grads, double *ws, const double *dy,
                        const double *acts, const double *x, const double *params,
                        const double *amask, const double *dmask, const double *d1mask,
                        const double *d2mask, double p, int post, ffn_act act,
                        int B, int T, int d, int H, int ff);

#endif
