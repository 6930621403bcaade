/* Rows composed for LayerNorm's backward drivers (issue 13 item 2): what the rows run proves
 * (-DRESNORM_WP_ROWS, proofs/layernorm_float.sh ln_rows_run, session proofs/session_rows;
 * proofs/README.md "Rows composed").  Included by ref/layernorm.c in that run only, so the contracts
 * that the skip ops, the block and the stack are proved against (specs/layernorm.h) are unchanged;
 * Frama-C merges the clause below into layernorm_backward_*'s contract there.
 *
 *   dgb_sum: dgamma and dbeta have accumulated every row, over the inputs at entry:
 *     dgamma[i] == \old(dgamma[i]) + sum_r dy[r·n + i]·(x[r·n + i] − mean[r])·rstd[r]
 *     dbeta[i]  == \old(dbeta[i])  + sum_r dy[r·n + i]
 *   (left to right over the rows, each term as the row kernel's dgamma_acc / dbeta_acc adds it).
 *   dx_rows: every row of dx is LayerNorm's backward of its own rows of dy and x (with gamma and
 *   its stored mean[r], rstd[r]), over the inputs at entry:
 *     dx[r·n + i] == ln_dx{Pre}(dy + r·n, gamma, x + r·n, mean[r], rstd[r], n, i)
 *   (ln_row_dx in specs/layernorm_model.h).  From the row kernel's dx_def over its call's memory:
 *   ln_dx reads the row through its sums ln_sum_g, ln_sum_gx, which are the same at entry by the
 *   frame lemmas there (induction by scripts, proofs/README.md "Rows composed: the backward
 *   drivers").
 *
 * For dgb_sum, unlike the forward statistics (stats_rows) and dx_rows, no induction is needed: the
 * row kernel's terms read one element of each input, and the model reads the inputs at entry only
 * (the driver's dy_same, x_same, stats_same), so each row is one unfolding.  As for the linear
 * layer's dW (specs/linear_rows.h), each product goes through ln_mul_v (the solvers do not carry
 * equal reads into a bare product) and the element index through ln_col_idx(r, n, i) = r·n + i, a
 * symbol whose arguments are the bound variables (an SMT trigger may not contain arithmetic;
 * proofs/README.md "Triggers").
 */
#ifndef RESNORM_LAYERNORM_ROWS_H
#define RESNORM_LAYERNORM_ROWS_H

#include "layernorm.h"

/*@
  // a·b as a function of its own (Why3 would inline a bare a * b: the guard keeps the symbol)
  logic real ln_mul_v(real a, real b) = a == 0.0 ? 0.0 : a * b;

  // element i of row r of a rows x n array (r >= 0).  No lemma r·n + i for it: a global lemma sits in
  // every goal's context, and this one slowed the forward drivers' rstd_r from 3 to 10 s (z3); the
  // solvers unfold the definition where a goal needs it.
  logic integer ln_col_idx(integer r, integer n, integer i) = 0 <= r ? r * n + i : i;

  // dgamma[i] over rows 0 .. r-1: sum_q dy[q·n + i]·xhat of row q at i
  logic real ln_dg_sum{L}(float *dy, float *x, float *mean, float *rstd, integer i, integer n, integer r) =
    r <= 0 ? 0.0 : ln_dg_sum(dy, x, mean, rstd, i, n, r - 1) +
                   ln_mul_v(dy[ln_col_idx(r - 1, n, i)], ln_xhat_v(x[ln_col_idx(r - 1, n, i)], mean[r - 1], rstd[r - 1]));
  logic real ln_dg_sum{L}(double *dy, double *x, double *mean, double *rstd, integer i, integer n, integer r) =
    r <= 0 ? 0.0 : ln_dg_sum(dy, x, mean, rstd, i, n, r - 1) +
                   ln_mul_v(dy[ln_col_idx(r - 1, n, i)], ln_xhat_v(x[ln_col_idx(r - 1, n, i)], mean[r - 1], rstd[r - 1]));

  // dbeta[i] over rows 0 .. r-1: sum_q dy[q·n + i]
  logic real ln_db_sum{L}(float *dy, integer i, integer n, integer r) =
    r <= 0 ? 0.0 : ln_db_sum(dy, i, n, r - 1) + dy[ln_col_idx(r - 1, n, i)];
  logic real ln_db_sum{L}(double *dy, integer i, integer n, integer r) =
    r <= 0 ? 0.0 : ln_db_sum(dy, i, n, r - 1) + dy[ln_col_idx(r - 1, n, i)];

  // dgamma, dbeta (at L2) have accumulated rows 0 .. r-1 (dy, x, mean, rstd and the old sums at L1)
  predicate ln_dgb_rows{L1, L2}(float *dgamma, float *dbeta, float *dy, float *x, float *mean, float *rstd,
                                integer r, integer n) =
    \forall integer i; 0 <= i < n ==>
      \at(dgamma[i], L2) == \at(dgamma[i], L1) + ln_dg_sum{L1}(dy, x, mean, rstd, i, n, r) &&
      \at(dbeta[i], L2) == \at(dbeta[i], L1) + ln_db_sum{L1}(dy, i, n, r);
  predicate ln_dgb_rows{L1, L2}(double *dgamma, double *dbeta, double *dy, double *x, double *mean,
                                double *rstd, integer r, integer n) =
    \forall integer i; 0 <= i < n ==>
      \at(dgamma[i], L2) == \at(dgamma[i], L1) + ln_dg_sum{L1}(dy, x, mean, rstd, i, n, r) &&
      \at(dbeta[i], L2) == \at(dbeta[i], L1) + ln_db_sum{L1}(dy, i, n, r);
*/

/*@ ensures dgb_sum: ln_dgb_rows{Pre, Post}(dgamma, dbeta, dy, x, mean, rstd, rows, n);
    ensures dx_rows: \forall integer q; 0 <= q < rows ==>
      ln_row_dx{Pre, Post}(dx, dy, x, gamma, mean, rstd, q, ln_row_start(q, n), n); */
void layernorm_backward_f32(float *dx, float *dgamma, float *dbeta, const float *dy, const float *x,
                            const float *gamma, const float *mean, const float *rstd, int rows,
                            int n);
/*@ ensures dgb_sum: ln_dgb_rows{Pre, Post}(dgamma, dbeta, dy, x, mean, rstd, rows, n);
    ensures dx_rows: \forall integer q; 0 <= q < rows ==>
      ln_row_dx{Pre, Post}(dx, dy, x, gamma, mean, rstd, q, ln_row_start(q, n), n); */
void layernorm_backward_f64(double *dx, double *dgamma, double *dbeta, const double *dy,
                            const double *x, const double *gamma, const double *mean,
                            const double *rstd, int rows, int n);

#endif
