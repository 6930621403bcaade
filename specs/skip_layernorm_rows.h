/* Rows composed for Skip + LayerNorm's backward (issue 13 item 2): what the skip rows run proves
 * (-DRESNORM_WP_ROWS, proofs/skip.sh, session proofs/session_skip_rows).  Included by
 * ref/skip_layernorm.c in that run only, after specs/layernorm_rows.h, whose driver contracts
 * (dx_rows, dgb_sum: proved by prove-layernorm's rows run) the kernel is proved against; Frama-C merges
 * the clauses below into skip_layernorm_backward_*'s contract there.
 *
 *   dx_rows:   every row q of dx (= dskip) is LayerNorm's backward of its own rows of dy and of the
 *              saved sum, with gamma and the saved mean[q], rstd[q], over the inputs at entry:
 *                dx[q·n + i] == ln_dx{Pre}(dy + q·n, gamma, sum + q·n, mean[q], rstd[q], n, i)
 *   dgb_sum:   dgamma and dbeta have accumulated every row, as the driver's (specs/layernorm_rows.h)
 *   dbias_sum: dbias_j is column j of that dx, summed from zero in row order:
 *                dbias[j] == sum_{q < rows} dx[q·n + j]     (skip_col_sum, specs/skip_rows.h)
 * With dx_rows, dbias is thereby the column sum of LayerNorm's backward rows: the relation
 * dbias = sum_rows dx that the twin's dbias and the statistical tier's dbias test (ref/stat_tier.c,
 * backward_dbias) are built on.
 */
#ifndef RESNORM_SKIP_LAYERNORM_ROWS_H
#define RESNORM_SKIP_LAYERNORM_ROWS_H

#include "layernorm_rows.h"
#include "skip_layernorm.h"
#include "skip_rows.h"

/* A row's statistics over two memory states, from its sums (ln_sum_shift, ln_ssd_shift at each
   state): the skip kernel's forward carries the driver's stats_rows from the call's state to Post
   with them, after ln_sum_at_frame and ln_ssd_at_frame.  Small steps on purpose: the whole chain in
   the kernel's assertions, under the rows' quantifier, ran near the solvers' 20 s limit, and so did
   ln_rstd from ln_var in one lemma (z3 proved it in 0.1 s with its default options and timed out
   with the seeds of proofs/why3.conf); through \sqrt first, each step takes ~0.1 s. */
/*@ axiomatic SkipLnStats {
  lemma skip_ln_mean_frame_f32{A, B}: \forall float *x, integer s, n; 0 <= n ==>
    ln_sum_at{A}(x, s, n) == ln_sum_at{B}(x, s, n) ==> ln_mean{A}(x + s, n) == ln_mean{B}(x + s, n);
  lemma skip_ln_mean_frame_f64{A, B}: \forall double *x, integer s, n; 0 <= n ==>
    ln_sum_at{A}(x, s, n) == ln_sum_at{B}(x, s, n) ==> ln_mean{A}(x + s, n) == ln_mean{B}(x + s, n);
  lemma skip_ln_var_frame_f32{A, B}: \forall float *x, integer s, n; 0 <= n ==>
    ln_mean{A}(x + s, n) == ln_mean{B}(x + s, n) ==>
    ln_ssd_at{A}(x, s, ln_mean{A}(x + s, n), n) == ln_ssd_at{B}(x, s, ln_mean{A}(x + s, n), n) ==>
    ln_var{A}(x + s, n) == ln_var{B}(x + s, n);
  lemma skip_ln_var_frame_f64{A, B}: \forall double *x, integer s, n; 0 <= n ==>
    ln_mean{A}(x + s, n) == ln_mean{B}(x + s, n) ==>
    ln_ssd_at{A}(x, s, ln_mean{A}(x + s, n), n) == ln_ssd_at{B}(x, s, ln_mean{A}(x + s, n), n) ==>
    ln_var{A}(x + s, n) == ln_var{B}(x + s, n);
  lemma skip_ln_sqrt_frame_f32{A, B}: \forall float *x, integer s, n, real eps;
    ln_var{A}(x + s, n) == ln_var{B}(x + s, n) ==>
    \sqrt(ln_var{A}(x + s, n) + eps) == \sqrt(ln_var{B}(x + s, n) + eps);
  lemma skip_ln_sqrt_frame_f64{A, B}: \forall double *x, integer s, n, real eps;
    ln_var{A}(x + s, n) == ln_var{B}(x + s, n) ==>
    \sqrt(ln_var{A}(x + s, n) + eps) == \sqrt(ln_var{B}(x + s, n) + eps);
  lemma skip_ln_rstd_frame_f32{A, B}: \forall float *x, integer s, n, real eps;
    \sqrt(ln_var{A}(x + s, n) + eps) == \sqrt(ln_var{B}(x + s, n) + eps) ==>
    ln_rstd{A}(x + s, n, eps) == ln_rstd{B}(x + s, n, eps);
  lemma skip_ln_rstd_frame_f64{A, B}: \forall double *x, integer s, n, real eps;
    \sqrt(ln_var{A}(x + s, n) + eps) == \sqrt(ln_var{B}(x + s, n) + eps) ==>
    ln_rstd{A}(x + s, n, eps) == ln_rstd{B}(x + s, n, eps);
  } */

/*@ ensures y_rows: \forall integer q; 0 <= q < rows ==>
      ln_row_affine{Post, Post}(y, mean, rstd, sum, gamma, beta, q, ln_row_start(q, n), n);
    ensures stats_rows: \forall integer q; 0 <= q < rows ==>
      mean[q] == ln_mean(sum + ln_row_start(q, n), n) &&
      rstd[q] == ln_rstd(sum + ln_row_start(q, n), n, eps); */
void skip_layernorm_forward_f32(float *y, float *mean, float *rstd, float *sum, const float *x,
                                const float *skip, const float *gamma, const float *beta,
                                const float *bias, int rows, int n, float eps);
/*@ ensures y_rows: \forall integer q; 0 <= q < rows ==>
      ln_row_affine{Post, Post}(y, mean, rstd, sum, gamma, beta, q, ln_row_start(q, n), n);
    ensures stats_rows: \forall integer q; 0 <= q < rows ==>
      mean[q] == ln_mean(sum + ln_row_start(q, n), n) &&
      rstd[q] == ln_rstd(sum + ln_row_start(q, n), n, eps); */
void skip_layernorm_forward_f64(double *y, double *mean, double *rstd, double *sum,
                                const double *x, const double *skip, const double *gamma,
                                const double *beta, const double *bias, int rows, int n,
                                double eps);
/*@ ensures dx_rows: \forall integer q; 0 <= q < rows ==>
      ln_row_dx{Pre, Post}(dx, dy, sum, gamma, mean, rstd, q, ln_row_start(q, n), n);
    ensures dgb_sum: ln_dgb_rows{Pre, Post}(dgamma, dbeta, dy, sum, mean, rstd, rows, n);
    ensures dbias_sum: \forall integer j; 0 <= j < n ==> dbias[j] == skip_col_sum(dx, j, n, rows); */
void skip_layernorm_backward_f32(float *dx, float *dbias, float *dgamma, float *dbeta,
                                 const float *dy, const float *sum, const float *gamma,
                                 const float *mean, const float *rstd, int rows, int n);
/*@ ensures dx_rows: \forall integer q; 0 <= q < rows ==>
      ln_row_dx{Pre, Post}(dx, dy, sum, gamma, mean, rstd, q, ln_row_start(q, n), n);
    ensures dgb_sum: ln_dgb_rows{Pre, Post}(dgamma, dbeta, dy, sum, mean, rstd, rows, n);
    ensures dbias_sum: \forall integer j; 0 <= j < n ==> dbias[j] == skip_col_sum(dx, j, n, rows); */
void skip_layernorm_backward_f64(double *dx, double *dbias, double *dgamma, double *dbeta,
                                 const double *dy, const double *sum, const double *gamma,
                                 const double *mean, const double *rstd, int rows, int n);

#endif
