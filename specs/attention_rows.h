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

#endif
