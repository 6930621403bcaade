/* Rows composed for RMSNorm's backward drivers (issue 13 item 2): what the rows run proves
 * (-DRESNORM_WP_ROWS, proofs/rmsnorm_float.sh rms_rows_run, session proofs/session_rmsnorm_rows).
 * Included by ref/rmsnorm.c in that run only, so the contracts that the skip ops are proved against
 * (specs/rmsnorm.h) are unchanged; Frama-C merges the clause below into rmsnorm_backward_*'s contract
 * there.
 *
 *   dgamma_sum: dgamma has accumulated every row, over the inputs at entry:
 *     dgamma[i] == \old(dgamma[i]) + sum_r dy[r·n + i]·(x[r·n + i]·rstd[r])
 *   (left to right over the rows, each term as the row kernel's dgamma_acc adds it).
 *
 * As LayerNorm's dgamma (specs/layernorm_rows.h): no induction (the model reads the inputs at entry
 * only: the driver's in_same, rstd_same), each product through rms_mul_v and each element index
 * through rms_col_idx(r, n, i) = r·n + i (proofs/README.md "Triggers").
 */
#ifndef RESNORM_RMSNORM_ROWS_H
#define RESNORM_RMSNORM_ROWS_H

#include "rmsnorm.h"

/*@
  // a·b as a function of its own (Why3 would inline a bare a * b: the guard keeps the symbol)
  logic real rms_mul_v(real a, real b) = a == 0.0 ? 0.0 : a * b;

  // element i of row r of a rows x n array (r >= 0).  No lemma r·n + i for it: a global lemma sits in
  // every goal's context, and this one slowed the forward drivers' rstd_r from 3 to 10 s (z3); the
  // solvers unfold the definition where a goal needs it.
  logic integer rms_col_idx(integer r, integer n, integer i) = 0 <= r ? r * n + i : i;

  // dgamma[i] over rows 0 .. r-1: sum_q dy[q·n + i]·(x[q·n + i]·rstd[q])
  logic real rms_dg_sum{L}(float *dy, float *x, float *rstd, integer i, integer n, integer r) =
    r <= 0 ? 0.0 : rms_dg_sum(dy, x, rstd, i, n, r - 1) +
                   rms_mul_v(dy[rms_col_idx(r - 1, n, i)], rms_mul(x[rms_col_idx(r - 1, n, i)], rstd[r - 1]));
  logic real rms_dg_sum{L}(double *dy, double *x, double *rstd, integer i, integer n, integer r) =
    r <= 0 ? 0.0 : rms_dg_sum(dy, x, rstd, i, n, r - 1) +
                   rms_mul_v(dy[rms_col_idx(r - 1, n, i)], rms_mul(x[rms_col_idx(r - 1, n, i)], rstd[r - 1]));

  // dgamma (at L2) has accumulated rows 0 .. r-1 (dy, x, rstd and the old dgamma at L1)
  predicate rms_dg_rows{L1, L2}(float *dgamma, float *dy, float *x, float *rstd, integer r, integer n) =
    \forall integer i; 0 <= i < n ==>
      \at(dgamma[i], L2) == \at(dgamma[i], L1) + rms_dg_sum{L1}(dy, x, rstd, i, n, r);
  predicate rms_dg_rows{L1, L2}(double *dgamma, double *dy, double *x, double *rstd, integer r, integer n) =
    \forall integer i; 0 <= i < n ==>
      \at(dgamma[i], L2) == \at(dgamma[i], L1) + rms_dg_sum{L1}(dy, x, rstd, i, n, r);
*/

/*@ ensures dgamma_sum: rms_dg_rows{Pre, Post}(dgamma, dy, x, rstd, rows, n);
    ensures dx_rows: \forall integer q; 0 <= q < rows ==>
      rms_row_dx{Pre, Post}(dx, dy, x, gamma, rstd, offset, q, rms_row_start(q, n), n); */
void rmsnorm_backward_f32(float *dx, float *dgamma, const float *dy, const float *x,
                          const float *gamma, const float *rstd, int rows, int n, int offset);
/*@ ensures dgamma_sum: rms_dg_rows{Pre, Post}(dgamma, dy, x, rstd, rows, n);
    ensures dx_rows: \forall integer q; 0 <= q < rows ==>
      rms_row_dx{Pre, Post}(dx, dy, x, gamma, rstd, offset, q, rms_row_start(q, n), n); */
void rmsnorm_backward_f64(double *dx, double *dgamma, const double *dy, const double *x,
                          const double *gamma, const double *rstd, int rows, int n, int offset);

#endif
