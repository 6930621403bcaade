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
