/* One query row of one head, composed (issue 8): what the attention rows run proves
 * (-DRESNORM_WP_ROWS, proofs/attention.sh, session proofs/session_attention_rows;
 * proofs/README-sublayers.md "Attention: one query row").  Included by ref/attention.c in that run
 * only, so the contracts the drivers and the block are proved against are unchanged; Frama-C merges
 * the clauses below into the static helpers' contracts there.
 *
 * For query row i of head h of one batch element (qb: that element's rows of the qkv cache [T, d3],
 * q columns already divided by sqrt(dh); qo = i·d3 + h·dh, ko = d + h·dh, vo = 2d + h·dh), over the
 * reals, with the exponential of the real model (specs/libm.h's assumption libm_exp):
 *   score_j  = sum_{k<dh} qb[qo + k]·qb[j·d3 + ko + k]                 (attn_score: q_i · k_j)
 *   P[j]     = exp(score_j − max_j score) / sum_j exp(score_j − max)    (attn_p: the softmax row)
 *   A[j]     = P[j] without attention dropout, P[j]·am[j]·scale with it (attn_a: scale = 1/(1 − p))
 *   c[cc]    = sum_{j<T} A[j]·qb[j·d3 + vo + cc]                        (attn_ctx: A · v)
 * Stated:
 *   att_row (no mask: causal == 0 and no key padding mask): every P[j] == attn_p over the scores of
 *            qb as at entry.  With a mask the kernel adds −Inf to the masked scores, which the real
 *            model has no value for: not stated (the drivers' golden cases and both tiers cover it).
 *   ctx_row (every case, masked or not): every c[cc] == attn_ctx of the P the kernel returns, the
 *            mask am and v as on return (qb and am are read only: assigns).
 * So in eval mode without masks the row helper computes exactly
 *   c = softmax(q_i·Kᵀ) · V   for its head (q already scaled),
 * the attention formula of specs/attention.h for one (b, h, i).  Not composed: the drivers' loops
 * over (b, h, i) (att and ctx for every row), the backward.
 */
#ifndef RESNORM_ATTENTION_ROWS_H
#define RESNORM_ATTENTION_ROWS_H

#include "attention.h"

/*@
  // q_i · k_j of one head: the query slice qb[qo .. qo + dh) against key row j's slice at column ko.
  logic real attn_score{L}(float *qb, integer qo, integer ko, integer d3, integer dh, integer j) =
    lin_dot(qb + qo, qb + j * d3 + ko, dh);
  logic real attn_score{L}(double *qb, integer qo, integer ko, integer d3, integer dh, integer j) =
    lin_dot(qb + qo, qb + j * d3 + ko, dh);
  // max_{j<n} score_j, as softmax.h's sm_max over a row of scores.
  logic real attn_smax{L}(float *qb, integer qo, integer ko, integer d3, integer dh, integer n) =
    n <= 1 ? attn_score(qb, qo, ko, d3, dh, 0) :
             sm_max2(attn_smax(qb, qo, ko, d3, dh, n - 1), attn_score(qb, qo, ko, d3, dh, n - 1));
  logic real attn_smax{L}(double *qb, integer qo, integer ko, integer d3, integer dh, integer n) =
    n <= 1 ? attn_score(qb, qo, ko, d3, dh, 0) :
             sm_max2(attn_smax(qb, qo, ko, d3, dh, n - 1), attn_score(qb, qo, ko, d3, dh, n - 1));
  // sum_{j<n} exp(score_j − m), left to right, as softmax.h's sm_sum.
  logic real attn_ssum{L}(float *qb, integer qo, integer ko, integer d3, integer dh, real m, integer n) =
    n <= 0 ? 0.0 : attn_ssum(qb, qo, ko, d3, dh, m, n - 1) + \exp(attn_score(qb, qo, ko, d3, dh, n - 1) - m);
  logic real attn_ssum{L}(double *qb, integer qo, integer ko, integer d3, integer dh, real m, integer n) =
    n <= 0 ? 0.0 : attn_ssum(qb, qo, ko, d3, dh, m, n - 1) + \exp(attn_score(qb, qo, ko, d3, dh, n - 1) - m);
  // P[j]: the softmax of the T scores (max subtracted).
  logic real attn_p{L}(float *qb, integer qo, integer ko, integer d3, integer dh, integer T, integer j) =
    sm_yv(attn_score(qb, qo, ko, d3, dh, j), attn_smax(qb, qo, ko, d3, dh, T),
          attn_ssum(qb, qo, ko, d3, dh, attn_smax(qb, qo, ko, d3, dh, T), T));
  logic real attn_p{L}(double *qb, integer qo, integer ko, integer d3, integer dh, integer T, integer j) =
    sm_yv(attn_score(qb, qo, ko, d3, dh, j), attn_smax(qb, qo, ko, d3, dh, T),
          attn_ssum(qb, qo, ko, d3, dh, attn_smax(qb, qo, ko, d3, dh, T), T));
  // A[j]: P[j], or with attention dropout P[j]·am[j]·scale (specs/dropout.h's dropout_val).
  logic real attn_a{L}(float *P, float *am, real scale, integer j) =
    am == \null ? (real)P[j] : dropout_val(P[j], am[j], scale);
  logic real attn_a{L}(double *P, double *am, real scale, integer j) =
    am == \null ? (real)P[j] : dropout_val(P[j], am[j], scale);
  // c[cc] = sum_{j<n} A[j]·v_j[cc], left to right (v_j[cc] = qb[j·d3 + vc], vc = vo + cc).
  logic real attn_ctx{L}(float *P, float *am, real scale, float *qb, integer vc, integer d3, integer n) =
    n <= 0 ? 0.0 : attn_ctx(P, am, scale, qb, vc, d3, n - 1) + attn_a(P, am, scale, n - 1) * qb[(n - 1) * d3 + vc];
  logic real attn_ctx{L}(double *P, double *am, real scale, double *qb, integer vc, integer d3, integer n) =
    n <= 0 ? 0.0 : attn_ctx(P, am, scale, qb, vc, d3, n - 1) + attn_a(P, am, scale, n - 1) * qb[(n - 1) * d3 + vc];
  // ---- one head composed (attn_head_forward_f32/f64): the row models across other rows' writes ----
  // Each family of lemmas is an axiomatic of its own, with a predicate that states its conclusion:
  // a goal gets the lemmas only when it uses that predicate (the row helpers' goals as before; the
  // head's goals each only the family it needs: with every family and every recursive model in one
  // goal the solvers fail even its trivial steps).  The inductions (attn_smax_frame_*,
  // attn_ssum_frame_*, attn_ctx_at_eq_*, attn_ctx_at_frame_*) are proved by the committed WP scripts
  // of proofs/session_attention_rows/script/ (Wp.induction on n, as proofs/session_linear_rows'; each
  // child closed by the solvers from the unfolded definitions), the others by the solvers.

  // The first index of row i of a row-major [., n] array, a symbol of its own (as rms_row_start in
  // specs/rmsnorm_model.h), and row j's index of column vc of a [., d3] array (attn_ctx_at; as
  // lin_col_idx in specs/linear_rows.h): quantified facts over them have a trigger, which a bare
  // product i·n does not give the solvers.
  axiomatic AttnRowsBefore {
    logic integer attn_rs(integer i, integer n) = 0 <= i ? i * n : 0;
    logic integer attn_vidx(integer j, integer d3, integer vc) = 0 <= j ? j * d3 + vc : vc;
    // the rows before row i end before it starts
    predicate attn_rows_before(integer i, integer n) =
      \forall integer i2; 0 <= i2 < i ==> 0 <= attn_rs(i2, n) && attn_rs(i2, n) + n <= attn_rs(i, n);
    lemma attn_rows_before_ok: \forall integer i, n; 0 <= i && 0 <= n ==> attn_rows_before(i, n);
    // every column index of rows 0 .. T - 1 is within the T·d3 entries
    predicate attn_vidx_in(integer T, integer d3) =
      \forall integer j, vc; 0 <= j < T && 0 <= vc < d3 ==> 0 <= attn_vidx(j, d3, vc) < T * d3;
    lemma attn_vidx_in_ok: \forall integer T, d3; 0 <= T && 0 <= d3 ==> attn_vidx_in(T, d3);
  }
  // ---- the drivers (attention_forward_f32/f64): every head composed ----
  // The first index of the [T, T] block of head row r = b·H + h of att [B·H·T, T] (r·T·T, through
  // row starts: the drivers form it as (r·T)·T), and the blocks before it end before it starts.
  logic integer attn_blk(integer r, integer T) = attn_rs(attn_rs(r, T), T);
  axiomatic AttnBlocksBefore {
    predicate attn_blks_before(integer r, integer T) =
      \forall integer r2; 0 <= r2 < r ==> 0 <= attn_blk(r2, T) && attn_blk(r2, T) + T * T <= attn_blk(r, T);
    // (the steps, each proved by the solvers: products are monotone, a block follows the one before)
    lemma attn_mul_mono: \forall integer a, b, m; 0 <= m && a <= b ==> a * m <= b * m;
    lemma attn_blk_next: \forall integer r2, T; 0 <= r2 && 0 <= T ==> attn_blk(r2, T) + T * T == attn_blk(r2 + 1, T);
    lemma attn_rs_nonneg: \forall integer i, n; 0 <= n ==> 0 <= attn_rs(i, n);
    lemma attn_rs_mono: \forall integer a, b, n; 0 <= a <= b && 0 <= n ==> attn_rs(a, n) <= attn_rs(b, n);
    lemma attn_blk_mono: \forall integer r2, r, T; 0 <= r2 <= r && 0 <= T ==> attn_blk(r2, T) <= attn_blk(r, T);
    lemma attn_blks_before_ok: \forall integer r, T; 0 <= r && 0 <= T ==> attn_blks_before(r, T);
  }
  // n entries from p the same in states A and B.
  predicate attn_row_same{A, B}(float *p, integer n) = \forall integer j; 0 <= j < n ==> \at(p[j], A) == \at(p[j], B);
  predicate attn_row_same{A, B}(double *p, integer n) = \forall integer j; 0 <= j < n ==> \at(p[j], A) == \at(p[j], B);
  // The attention-dropout mask's row of a head's [T, T] block that starts at rP, or none.
  logic float *attn_am_row(float *am, integer rP) = am == \null ? am : am + rP;
  logic double *attn_am_row(double *am, integer rP) = am == \null ? am : am + rP;

  // Every score of one query row the same in states A and B (attn_head_forward: a ghost
  // induction over each dot, as attn_row_forward's).
  predicate attn_scores_same{A, B}(float *qb, integer qo, integer ko, integer d3, integer dh, integer T) =
    \forall integer j; 0 <= j < T ==> attn_score{A}(qb, qo, ko, d3, dh, j) == attn_score{B}(qb, qo, ko, d3, dh, j);
  // The context sum with its v index through attn_vidx, a symbol of its own (as lin_col_idx in
  // specs/linear_rows.h: the solvers normalize a bare (n - 1)·d3 + vc apart from j·d3 + vc).
  logic real attn_ctx_at{L}(float *P, float *am, real scale, float *qb, integer vc, integer d3, integer n) =
    n <= 0 ? 0.0 : attn_ctx_at(P, am, scale, qb, vc, d3, n - 1) + attn_a(P, am, scale, n - 1) * qb[attn_vidx(n - 1, d3, vc)];
  // So the softmax row of those scores (its max and its sum are the same).
  axiomatic AttnPSameF32 {
    predicate attn_p_same{A, B}(float *qb, integer qo, integer ko, integer d3, integer dh, integer T) =
      \forall integer j; 0 <= j < T ==> attn_p{A}(qb, qo, ko, d3, dh, T, j) == attn_p{B}(qb, qo, ko, d3, dh, T, j);
    lemma attn_smax_frame_f32{A, B}: \forall float *qb, integer qo, ko, d3, dh, n; 1 <= n ==>
      (\forall integer j; 0 <= j < n ==> attn_score{A}(qb, qo, ko, d3, dh, j) == attn_score{B}(qb, qo, ko, d3, dh, j)) ==>
      attn_smax{A}(qb, qo, ko, d3, dh, n) == attn_smax{B}(qb, qo, ko, d3, dh, n);
    lemma attn_ssum_frame_f32{A, B}: \forall float *qb, integer qo, ko, d3, dh, real m, integer n; 0 <= n ==>
      (\forall integer j; 0 <= j < n ==> attn_score{A}(qb, qo, ko, d3, dh, j) == attn_score{B}(qb, qo, ko, d3, dh, j)) ==>
      attn_ssum{A}(qb, qo, ko, d3, dh, m, n) == attn_ssum{B}(qb, qo, ko, d3, dh, m, n);
    lemma attn_p_frame_f32{A, B}: \forall float *qb, integer qo, ko, d3, dh, T;
      1 <= T ==> attn_scores_same{A, B}(qb, qo, ko, d3, dh, T) ==> attn_p_same{A, B}(qb, qo, ko, d3, dh, T);
  }
  // A context entry, when its weights, its mask row and its v column are the same.
  // It is attn_ctx (one state; induction).
  axiomatic AttnCtxEqF32 {
    predicate attn_ctx_is_at{L}(float *P, float *am, real scale, float *qb, integer vc, integer d3, integer n) =
      attn_ctx(P, am, scale, qb, vc, d3, n) == attn_ctx_at(P, am, scale, qb, vc, d3, n);
    lemma attn_ctx_at_eq_f32{L}: \forall float *P, float *am, real scale, float *qb, integer vc, d3, n; 0 <= n ==>
      attn_ctx(P, am, scale, qb, vc, d3, n) == attn_ctx_at(P, am, scale, qb, vc, d3, n);
  }
  // A context entry, when its weights (with their mask) and its v column are the same.
  axiomatic AttnCtxSameF32 {
    predicate attn_ctx_same{A, B}(float *P, float *am, real scale, float *qb, integer vc, integer d3, integer n) =
      attn_ctx_at{A}(P, am, scale, qb, vc, d3, n) == attn_ctx_at{B}(P, am, scale, qb, vc, d3, n);
    // the weights of a row (with their mask) and the v column of its sum, the same in A and B
    predicate attn_a_same{A, B}(float *P, float *am, real scale, integer N) =
      \forall integer j; 0 <= j < N ==> attn_a{A}(P, am, scale, j) == attn_a{B}(P, am, scale, j);
    predicate attn_v_same{A, B}(float *qb, integer vc, integer d3, integer N) =
      \forall integer j; 0 <= j < N ==> \at(qb[attn_vidx(j, d3, vc)], A) == \at(qb[attn_vidx(j, d3, vc)], B);
    // (n <= N: the hypotheses are over the whole row, so the induction on n keeps them as they are)
    lemma attn_ctx_at_frame_f32{A, B}: \forall float *P, float *am, real scale, float *qb, integer vc, d3, N, n;
      0 <= n <= N ==> attn_a_same{A, B}(P, am, scale, N) ==> attn_v_same{A, B}(qb, vc, d3, N) ==>
      attn_ctx_same{A, B}(P, am, scale, qb, vc, d3, n);
  }
  // One row of one head's weights (Pb [T, T] at L2, the row starting at rP) is the softmax of the
  // scores of its query (q slice at rQ + hd of qb [T, d3], at L1): rP = i·T, rQ = i·d3 for row i.
  predicate attn_head_p{L1, L2}(float *Pb, float *qb, integer rP, integer rQ, integer hd, integer d, integer d3,
                                integer dh, integer T) =
    \forall integer j; 0 <= j < T ==> \at(Pb[rP + j], L2) == attn_p{L1}(qb, rQ + hd, d + hd, d3, dh, T, j);
  // That row of the head's context columns (cb [T, d], the row starting at rC, columns hd ..) is its
  // weights times V (attn_ctx_at: attn_ctx, attn_ctx_at_eq): rC = i·d for row i.  (Every quantified
  // variable here and in the head's assertions is a bare argument of some term, which the solvers
  // need to instantiate the fact: a column cc only in hd + cc gives them no trigger.)
  predicate attn_head_c{L}(float *cb, float *Pb, float *am, real scale, float *qb, integer rC, integer rP, integer hd,
                           integer d, integer d3, integer dh, integer T) =
    \forall integer k; rC + hd <= k < rC + hd + dh ==>
      cb[k] == attn_ctx_at(Pb + rP, attn_am_row(am, rP), scale, qb, 2 * d + k - rC, d3, T);
  // ---- the drivers' score frames (fifth round): one dot, then the T scores of one query row ----
  // The hypotheses are written in the shape the unfolding of lin_dot(x, y, n) reads (x[k] over the
  // pointer argument itself: no shift of a shift to match), so the induction's step closes from the
  // definitions; a goal meets these lemmas only by stating attn_dot_same or attn_scores_fr.
  // (each product through attn_mul: the solvers do not carry equal reads into a bare product of
  // them, as linear_rows.h's lin_mul_v; the guard keeps the symbol from being inlined)
  axiomatic AttnMul {
    logic real attn_mul(real a, real b) = a == 0.0 ? 0.0 : a * b;
  }
  axiomatic AttnScoreFrameF32 {
    // n entries from x the same in A and B: over x itself, the reads the unfolding of lin_dot(x, ., n)
    // makes (Qed normalizes (p + a)[k] to p[a + k] in a statement, not inside a predicate's body)
    predicate attn_mem_same{A, B}(float *x, integer n) = \forall integer k; 0 <= k < n ==> \at(x[k], A) == \at(x[k], B);
    predicate attn_dot_same{A, B}(float *x, float *y, integer n) = lin_dot{A}(x, y, n) == lin_dot{B}(x, y, n);
    lemma attn_dot_unfold_f32{L}: \forall float *x, float *y, integer n; 0 < n ==>
      lin_dot(x, y, n) == lin_dot(x, y, n - 1) + attn_mul(x[n - 1], y[n - 1]);
    lemma attn_dot_frame_f32{A, B}: \forall float *x, float *y, integer n; 0 <= n ==>
      (\forall integer k; 0 <= k < n ==> \at(x[k], A) == \at(x[k], B)) ==>
      (\forall integer k; 0 <= k < n ==> \at(y[k], A) == \at(y[k], B)) ==>
      attn_dot_same{A, B}(x, y, n);
    // (the same with its hypotheses as atoms: a goal that has them as ground facts needs no
    // quantified reasoning to apply it)
    lemma attn_dot_frame_m_f32{A, B}: \forall float *x, float *y, integer n; 0 <= n ==>
      attn_mem_same{A, B}(x, n) ==> attn_mem_same{A, B}(y, n) ==> attn_dot_same{A, B}(x, y, n);
    predicate attn_score_same{A, B}(float *qb, integer qo, integer ko, integer d3, integer dh, integer j) =
      attn_score{A}(qb, qo, ko, d3, dh, j) == attn_score{B}(qb, qo, ko, d3, dh, j);
    // (qb = p + o: the dot's slices written from p, as the drivers' frames state them)
    lemma attn_score_of_dot_f32{A, B}: \forall float *p, integer o, qo, ko, d3, dh, j; 0 <= j ==>
      attn_dot_same{A, B}(p + (o + qo), p + (o + (attn_rs(j, d3) + ko)), dh) ==>
      attn_score_same{A, B}(p + o, qo, ko, d3, dh, j);
  }
  // Head h of batch element b (the drivers): every query row i of its [T, T] block of att (at L2)
  // is the softmax of the scores of its query over the element's rows of qkv (at L1), as attn_head_p:
  //   att[b, h, i, j] = softmax_j(q[b, i, h]·k[b, j, h]),  q already divided by sqrt(dh).
  // (The block starts at attn_blk(b·H + h, T), the element's rows of qkv at b·Td3, Td3 = T·d3, the
  // head's columns at h·dh: each through attn_rs.)
  predicate attn_bh_att{L1, L2}(float *att, float *qkv, integer b, integer h, integer H, integer T, integer d,
                                integer d3, integer Td3, integer dh) =
    \forall integer i; 0 <= i < T ==>
      attn_head_p{L1, L2}(att + attn_blk(attn_rs(b, H) + h, T), qkv + attn_rs(b, Td3), attn_rs(i, T), attn_rs(i, d3),
                          attn_rs(h, dh), d, d3, dh, T);
  // One row of a head's weights, over qkv as at L1 rather than L0 (its softmax row the same there).
  // (Keyed by attn_p_same_at, which has attn_p_same's body: attn_p_same's family, which the head
  // helper's goals use, is left as it is.)
  axiomatic AttnHeadRelabelF32 {
    predicate attn_p_same_at{A, B}(float *qb, integer qo, integer ko, integer d3, integer dh, integer T) =
      \forall integer j; 0 <= j < T ==> attn_p{A}(qb, qo, ko, d3, dh, T, j) == attn_p{B}(qb, qo, ko, d3, dh, T, j);
    lemma attn_head_p_relabel_f32{L0, L1, L2}: \forall float *Pb, float *qb, integer rP, rQ, hd, d, d3, dh, T;
      attn_p_same_at{L0, L1}(qb, rQ + hd, d + hd, d3, dh, T) ==>
      attn_head_p{L0, L2}(Pb, qb, rP, rQ, hd, d, d3, dh, T) ==> attn_head_p{L1, L2}(Pb, qb, rP, rQ, hd, d, d3, dh, T);
  }
  // A head's statement across writes elsewhere (the later heads, the out-projection): its block of
  // att the same in A and B (keyed by attn_blk_same: the other goals do not meet the lemma).
  axiomatic AttnBhFrameF32 {
    // (over a bare index k: a quantified j only in rs + j gives the solvers no trigger)
    predicate attn_blk_same{A, B}(float *p, integer T) =
      \forall integer k; 0 <= k < T * T ==> \at(p[k], A) == \at(p[k], B);
    lemma attn_bh_frame_f32{L1, A, B}: \forall float *att, float *qkv, integer b, h, H, T, d, d3, Td3, dh;
      attn_rows_before(T, T) ==> attn_rs(T, T) == T * T ==>
      attn_blk_same{A, B}(att + attn_blk(attn_rs(b, H) + h, T), T) ==>
      attn_bh_att{L1, A}(att, qkv, b, h, H, T, d, d3, Td3, dh) ==> attn_bh_att{L1, B}(att, qkv, b, h, H, T, d, d3, Td3, dh);
  }

  // Every score of one query row the same in states A and B (attn_head_forward: a ghost
  // induction over each dot, as attn_row_forward's).
  predicate attn_scores_same{A, B}(double *qb, integer qo, integer ko, integer d3, integer dh, integer T) =
    \forall integer j; 0 <= j < T ==> attn_score{A}(qb, qo, ko, d3, dh, j) == attn_score{B}(qb, qo, ko, d3, dh, j);
  // The context sum with its v index through attn_vidx, a symbol of its own (as lin_col_idx in
  // specs/linear_rows.h: the solvers normalize a bare (n - 1)·d3 + vc apart from j·d3 + vc).
  logic real attn_ctx_at{L}(double *P, double *am, real scale, double *qb, integer vc, integer d3, integer n) =
    n <= 0 ? 0.0 : attn_ctx_at(P, am, scale, qb, vc, d3, n - 1) + attn_a(P, am, scale, n - 1) * qb[attn_vidx(n - 1, d3, vc)];
  // So the softmax row of those scores (its max and its sum are the same).
  axiomatic AttnPSameF64 {
    predicate attn_p_same{A, B}(double *qb, integer qo, integer ko, integer d3, integer dh, integer T) =
      \forall integer j; 0 <= j < T ==> attn_p{A}(qb, qo, ko, d3, dh, T, j) == attn_p{B}(qb, qo, ko, d3, dh, T, j);
    lemma attn_smax_frame_f64{A, B}: \forall double *qb, integer qo, ko, d3, dh, n; 1 <= n ==>
      (\forall integer j; 0 <= j < n ==> attn_score{A}(qb, qo, ko, d3, dh, j) == attn_score{B}(qb, qo, ko, d3, dh, j)) ==>
      attn_smax{A}(qb, qo, ko, d3, dh, n) == attn_smax{B}(qb, qo, ko, d3, dh, n);
    lemma attn_ssum_frame_f64{A, B}: \forall double *qb, integer qo, ko, d3, dh, real m, integer n; 0 <= n ==>
      (\forall integer j; 0 <= j < n ==> attn_score{A}(qb, qo, ko, d3, dh, j) == attn_score{B}(qb, qo, ko, d3, dh, j)) ==>
      attn_ssum{A}(qb, qo, ko, d3, dh, m, n) == attn_ssum{B}(qb, qo, ko, d3, dh, m, n);
    lemma attn_p_frame_f64{A, B}: \forall double *qb, integer qo, ko, d3, dh, T;
      1 <= T ==> attn_scores_same{A, B}(qb, qo, ko, d3, dh, T) ==> attn_p_same{A, B}(qb, qo, ko, d3, dh, T);
  }
  // A context entry, when its weights, its mask row and its v column are the same.
  // It is attn_ctx (one state; induction).
  axiomatic AttnCtxEqF64 {
    predicate attn_ctx_is_at{L}(double *P, double *am, real scale, double *qb, integer vc, integer d3, integer n) =
      attn_ctx(P, am, scale, qb, vc, d3, n) == attn_ctx_at(P, am, scale, qb, vc, d3, n);
    lemma attn_ctx_at_eq_f64{L}: \forall double *P, double *am, real scale, double *qb, integer vc, d3, n; 0 <= n ==>
      attn_ctx(P, am, scale, qb, vc, d3, n) == attn_ctx_at(P, am, scale, qb, vc, d3, n);
  }
  // A context entry, when its weights (with their mask) and its v column are the same.
  axiomatic AttnCtxSameF64 {
    predicate attn_ctx_same{A, B}(double *P, double *am, real scale, double *qb, integer vc, integer d3, integer n) =
      attn_ctx_at{A}(P, am, scale, qb, vc, d3, n) == attn_ctx_at{B}(P, am, scale, qb, vc, d3, n);
    // the weights of a row (with their mask) and the v column of its sum, the same in A and B
    predicate attn_a_same{A, B}(double *P, double *am, real scale, integer N) =
      \forall integer j; 0 <= j < N ==> attn_a{A}(P, am, scale, j) == attn_a{B}(P, am, scale, j);
    predicate attn_v_same{A, B}(double *qb, integer vc, integer d3, integer N) =
      \forall integer j; 0 <= j < N ==> \at(qb[attn_vidx(j, d3, vc)], A) == \at(qb[attn_vidx(j, d3, vc)], B);
    // (n <= N: the hypotheses are over the whole row, so the induction on n keeps them as they are)
    lemma attn_ctx_at_frame_f64{A, B}: \forall double *P, double *am, real scale, double *qb, integer vc, d3, N, n;
      0 <= n <= N ==> attn_a_same{A, B}(P, am, scale, N) ==> attn_v_same{A, B}(qb, vc, d3, N) ==>
      attn_ctx_same{A, B}(P, am, scale, qb, vc, d3, n);
  }
  // One row of one head's weights (Pb [T, T] at L2, the row starting at rP) is the softmax of the
  // scores of its query (q slice at rQ + hd of qb [T, d3], at L1): rP = i·T, rQ = i·d3 for row i.
  predicate attn_head_p{L1, L2}(double *Pb, double *qb, integer rP, integer rQ, integer hd, integer d, integer d3,
                                integer dh, integer T) =
    \forall integer j; 0 <= j < T ==> \at(Pb[rP + j], L2) == attn_p{L1}(qb, rQ + hd, d + hd, d3, dh, T, j);
  // That row of the head's context columns (cb [T, d], the row starting at rC, columns hd ..) is its
  // weights times V (attn_ctx_at: attn_ctx, attn_ctx_at_eq): rC = i·d for row i.  (Every quantified
  // variable here and in the head's assertions is a bare argument of some term, which the solvers
  // need to instantiate the fact: a column cc only in hd + cc gives them no trigger.)
  predicate attn_head_c{L}(double *cb, double *Pb, double *am, real scale, double *qb, integer rC, integer rP, integer hd,
                           integer d, integer d3, integer dh, integer T) =
    \forall integer k; rC + hd <= k < rC + hd + dh ==>
      cb[k] == attn_ctx_at(Pb + rP, attn_am_row(am, rP), scale, qb, 2 * d + k - rC, d3, T);
  axiomatic AttnScoreFrameF64 {
    // n entries from x the same in A and B: over x itself, the reads the unfolding of lin_dot(x, ., n)
    // makes (Qed normalizes (p + a)[k] to p[a + k] in a statement, not inside a predicate's body)
    predicate attn_mem_same{A, B}(double *x, integer n) = \forall integer k; 0 <= k < n ==> \at(x[k], A) == \at(x[k], B);
    predicate attn_dot_same{A, B}(double *x, double *y, integer n) = lin_dot{A}(x, y, n) == lin_dot{B}(x, y, n);
    lemma attn_dot_unfold_f64{L}: \forall double *x, double *y, integer n; 0 < n ==>
      lin_dot(x, y, n) == lin_dot(x, y, n - 1) + attn_mul(x[n - 1], y[n - 1]);
    lemma attn_dot_frame_f64{A, B}: \forall double *x, double *y, integer n; 0 <= n ==>
      (\forall integer k; 0 <= k < n ==> \at(x[k], A) == \at(x[k], B)) ==>
      (\forall integer k; 0 <= k < n ==> \at(y[k], A) == \at(y[k], B)) ==>
      attn_dot_same{A, B}(x, y, n);
    // (the same with its hypotheses as atoms: a goal that has them as ground facts needs no
    // quantified reasoning to apply it)
    lemma attn_dot_frame_m_f64{A, B}: \forall double *x, double *y, integer n; 0 <= n ==>
      attn_mem_same{A, B}(x, n) ==> attn_mem_same{A, B}(y, n) ==> attn_dot_same{A, B}(x, y, n);
    predicate attn_score_same{A, B}(double *qb, integer qo, integer ko, integer d3, integer dh, integer j) =
      attn_score{A}(qb, qo, ko, d3, dh, j) == attn_score{B}(qb, qo, ko, d3, dh, j);
    // (qb = p + o: the dot's slices written from p, as the drivers' frames state them)
    lemma attn_score_of_dot_f64{A, B}: \forall double *p, integer o, qo, ko, d3, dh, j; 0 <= j ==>
      attn_dot_same{A, B}(p + (o + qo), p + (o + (attn_rs(j, d3) + ko)), dh) ==>
      attn_score_same{A, B}(p + o, qo, ko, d3, dh, j);
  }
  // Head h of batch element b (the drivers): every query row i of its [T, T] block of att (at L2)
  // is the softmax of the scores of its query over the element's rows of qkv (at L1), as attn_head_p:
  //   att[b, h, i, j] = softmax_j(q[b, i, h]·k[b, j, h]),  q already divided by sqrt(dh).
  // (The block starts at attn_blk(b·H + h, T), the element's rows of qkv at b·Td3, Td3 = T·d3, the
  // head's columns at h·dh: each through attn_rs.)
  predicate attn_bh_att{L1, L2}(double *att, double *qkv, integer b, integer h, integer H, integer T, integer d,
                                integer d3, integer Td3, integer dh) =
    \forall integer i; 0 <= i < T ==>
      attn_head_p{L1, L2}(att + attn_blk(attn_rs(b, H) + h, T), qkv + attn_rs(b, Td3), attn_rs(i, T), attn_rs(i, d3),
                          attn_rs(h, dh), d, d3, dh, T);
  // One row of a head's weights, over qkv as at L1 rather than L0 (its softmax row the same there).
  // (Keyed by attn_p_same_at, which has attn_p_same's body: attn_p_same's family, which the head
  // helper's goals use, is left as it is.)
  axiomatic AttnHeadRelabelF64 {
    predicate attn_p_same_at{A, B}(double *qb, integer qo, integer ko, integer d3, integer dh, integer T) =
      \forall integer j; 0 <= j < T ==> attn_p{A}(qb, qo, ko, d3, dh, T, j) == attn_p{B}(qb, qo, ko, d3, dh, T, j);
    lemma attn_head_p_relabel_f64{L0, L1, L2}: \forall double *Pb, double *qb, integer rP, rQ, hd, d, d3, dh, T;
      attn_p_same_at{L0, L1}(qb, rQ + hd, d + hd, d3, dh, T) ==>
      attn_head_p{L0, L2}(Pb, qb, rP, rQ, hd, d, d3, dh, T) ==> attn_head_p{L1, L2}(Pb, qb, rP, rQ, hd, d, d3, dh, T);
  }
  // A head's statement across writes elsewhere (the later heads, the out-projection): its block of
  // att the same in A and B (keyed by attn_blk_same: the other goals do not meet the lemma).
  axiomatic AttnBhFrameF64 {
    // (over a bare index k: a quantified j only in rs + j gives the solvers no trigger)
    predicate attn_blk_same{A, B}(double *p, integer T) =
      \forall integer k; 0 <= k < T * T ==> \at(p[k], A) == \at(p[k], B);
    lemma attn_bh_frame_f64{L1, A, B}: \forall double *att, double *qkv, integer b, h, H, T, d, d3, Td3, dh;
      attn_rows_before(T, T) ==> attn_rs(T, T) == T * T ==>
      attn_blk_same{A, B}(att + attn_blk(attn_rs(b, H) + h, T), T) ==>
      attn_bh_att{L1, A}(att, qkv, b, h, H, T, d, d3, Td3, dh) ==> attn_bh_att{L1, B}(att, qkv, b, h, H, T, d, d3, Td3, dh);
  }
*/

/*@ ensures unmasked: causal == 0 && kpm == \null ==> \result == \null; */
static const float *attn_mask_row_f32(float *m, const float *kpm, int i, int T, int causal);
/*@ ensures unmasked: causal == 0 && kpm == \null ==> \result == \null; */
static const double *attn_mask_row_f64(double *m, const double *kpm, int i, int T, int causal);

/*@ ensures att_row: causal == 0 && kpm == \null ==>
      \forall integer j; 0 <= j < T ==> P[j] == attn_p{Pre}(qb, qo, ko, d3, dh, T, j);
    ensures ctx_row: \forall integer cc; 0 <= cc < dh ==> c[cc] == attn_ctx(P, am, scale, qb, vo + cc, d3, T); */
static void attn_row_forward_f32(float *c, float *P, float *row, const float *qb, int qo, int ko,
                                 int vo, const float *kpm, const float *am, float scale, int i,
                                 int T, int dh, int d3, int causal);
/*@ ensures att_row: causal == 0 && kpm == \null ==>
      \forall integer j; 0 <= j < T ==> P[j] == attn_p{Pre}(qb, qo, ko, d3, dh, T, j);
    ensures ctx_row: \forall integer cc; 0 <= cc < dh ==> c[cc] == attn_ctx(P, am, scale, qb, vo + cc, d3, T); */
static void attn_row_forward_f64(double *c, double *P, double *row, const double *qb, int qo, int ko,
                                 int vo, const double *kpm, const double *am, double scale, int i,
                                 int T, int dh, int d3, int causal);

/* The drivers (rows run): every head's weights, no mask, over qkv as on return (the q columns
   divided by sqrt(dh); nothing writes qkv after that). */
/*@ ensures heads_att: causal == 0 && kpm == \null ==> \forall integer b, h; 0 <= b < B && 0 <= h < H ==>
      attn_bh_att{Here, Here}(att, qkv, b, h, H, T, d, 3 * d, T * (3 * d), d / H); */
void attention_forward_f32(float *y, float *qkv, float *att, float *ctx, float *row, const float *x,
                           const float *in_w, const float *in_b, const float *out_w,
                           const float *out_b, const float *kpm, const float *amask, float p, int B,
                           int T, int d, int H, int causal);
/*@ ensures heads_att: causal == 0 && kpm == \null ==> \forall integer b, h; 0 <= b < B && 0 <= h < H ==>
      attn_bh_att{Here, Here}(att, qkv, b, h, H, T, d, 3 * d, T * (3 * d), d / H); */
void attention_forward_f64(double *y, double *qkv, double *att, double *ctx, double *row, const double *x,
                           const double *in_w, const double *in_b, const double *out_w,
                           const double *out_b, const double *kpm, const double *amask, double p, int B,
                           int T, int d, int H, int causal);

#endif
