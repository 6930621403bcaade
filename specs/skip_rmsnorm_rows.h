/* Rows composed for Skip + RMSNorm's backward (issue 13 item 2): what the skip rows run proves
 * (-DRESNORM_WP_ROWS, proofs/skip.sh, session proofs/session_skip_rows).  Included by
 * ref/skip_rmsnorm.c in that run only, after specs/rmsnorm_rows.h, whose driver contracts (dx_rows,
 * dgamma_sum: proved by prove-rmsnorm's rows run) the kernel is proved against; Frama-C merges the
 * clauses below into skip_rmsnorm_backward_*'s contract there.
 *
 *   dx_rows:    every row q of dx (= dskip) is RMSNorm's backward of its own rows of dy and of the
 *               saved sum, with gamma (+ offset) and the saved rstd[q], over the inputs at entry
 *               (rms_row_dx, specs/rmsnorm_model.h)
 *   dgamma_sum: dgamma has accumulated every row, as the driver's (specs/rmsnorm_rows.h)
 *   dbias_sum:  dbias_j is column j of that dx, summed from zero in row order:
 *                 dbias[j] == sum_{q < rows} dx[q·n + j]     (skip_col_sum, specs/skip_rows.h)
 */
#ifndef RESNORM_SKIP_RMSNORM_ROWS_H
#define RESNORM_SKIP_RMSNORM_ROWS_H

#include "rmsnorm_rows.h"
#include "skip_rmsnorm.h"
#include "skip_rows.h"

/* A row's rstd over two memory states, from its sums of squares (rms_sumsq_shift at each state):
   the skip kernel's forward carries the driver's rstd_rows from the call's state to Post with it (the
   solvers, given the equal sums under the row quantifier, did not carry them through 1/sqrt). */
/*@ axiomatic SkipRmsRstd {
  lemma skip_rms_rstd_frame_f32{A, B}: \forall float *x, integer s, n, real eps; 0 <= n ==>
    rms_sumsq_at{A}(x, s, n) == rms_sumsq_at{B}(x, s, n) ==>
    rms_rstd{A}(x + s, n, eps) == rms_rstd{B}(x + s, n, eps);
  lemma skip_rms_rstd_frame_f64{A, B}: \forall double *x, integer s, n, real eps; 0 <= n ==>
    rms_sumsq_at{A}(x, s, n) == rms_sumsq_at{B}(x, s, n) ==>
    rms_rstd{A}(x + s, n, eps) == rms_rstd{B}(x + s, n, eps);
  } */

/*@ ensures y_rows: \forall integer q; 0 <= q < rows ==>
      rms_row_y{Post, Post}(y, rstd, sum, gamma, q, rms_row_start(q, n), n, offset);
    ensures rstd_rows: \forall integer q; 0 <= q < rows ==>
      rstd[q] == rms_rstd(sum + rms_row_start(q, n), n, eps); */
void skip_rmsnorm_forward_f32(float *y, float *rstd, float *sum, const float *x, const float *skip,
                              const float *gamma, const float *bias, int rows, int n, float eps,
                              int offset);
/*@ ensures y_rows: \forall integer q; 0 <= q < rows ==>
      rms_row_y{Post, Post}(y, rstd, sum, gamma, q, rms_row_start(q, n), n, offset);
    ensures rstd_rows: \forall integer q; 0 <= q < rows ==>
      rstd[q] == rms_rstd(sum + rms_row_start(q, n), n, eps); */
void skip_rmsnorm_forward_f64(double *y, double *rstd, double *sum, const double *x,
                              const double *skip, const double *gamma, const double *bias,
                              int rows, int n, double eps, int offset);
/*@ ensures dx_rows: \forall integer q; 0 <= q < rows ==>
      rms_row_dx{Pre, Post}(dx, dy, sum, gamma, rstd, offset, q, rms_row_start(q, n), n);
    ensures dgamma_sum: rms_dg_rows{Pre, Post}(dgamma, dy, sum, rstd, rows, n);
    ensures dbias_sum: \forall integer j; 0 <= j < n ==> dbias[j] == skip_col_sum(dx, j, n, rows); */
void skip_rmsnorm_backward_f32(float *dx, float *dbias, float *dgamma, const float *dy,
                               const float *sum, const float *gamma, const float *rstd, int rows,
                               int n, int offset);
/*@ ensures dx_rows: \forall integer q; 0 <= q < rows ==>
      rms_row_dx{Pre, Post}(dx, dy, sum, gamma, rstd, offset, q, rms_row_start(q, n), n);
    ensures dgamma_sum: rms_dg_rows{Pre, Post}(dgamma, dy, sum, rstd, rows, n);
    ensures dbias_sum: \forall integer j; 0 <= j < n ==> dbias[j] == skip_col_sum(dx, j, n, rows); */
void skip_rmsnorm_backward_f64(double *dx, double *dbias, double *dgamma, const double *dy,
                               const double *sum, const double *gamma, const double *rstd,
                               int rows, int n, int offset);

#endif
