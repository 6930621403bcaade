/* Rows composed for the skip kernels' backward (issue 13 item 2): the column sums that dbias is, and
 * their frame lemmas.  Read in the skip rows run only (-DRESNORM_WP_ROWS, proofs/skip.sh), through
 * specs/skip_layernorm_rows.h and specs/skip_rmsnorm_rows.h.
 *
 *   skip_col_sum{L}(dx, j, w, n) = sum_{q < n} dx[q·w + j]     (column j of a rows x w array, rows
 *                                                              0 .. n-1, left to right)
 *   dbias_j = skip_col_sum(dx, j, n, rows): what the kernels' dbias loop adds, in that order.
 *
 * The kernels write dbias after dx, in the same float (double) memory, so a statement about dx's
 * sums at one label is carried to another by skip_col_sum_frame: the sums agree wherever the column's
 * elements do.  The frame lemma needs an induction on the row count (named n, so that the committed
 * script's Wp.induction selects it: proofs/session_skip_rows/script/), its step is one unfolding on
 * each side (skip_col_sum_step, by SMT).  The element index goes through skip_col_idx(q, w, j), a
 * symbol whose arguments are the bound variables (an SMT trigger may not contain arithmetic:
 * proofs/README.md "Triggers").  In an axiomatic block, so that only goals that use these symbols
 * see the lemmas (proofs/README.md: global lemmas slow unrelated goals).
 */
#ifndef RESNORM_SKIP_ROWS_H
#define RESNORM_SKIP_ROWS_H

/*@ axiomatic SkipColSum {
  // element j of row q of a rows x w array (q >= 0)
  logic integer skip_col_idx(integer q, integer w, integer j) = 0 <= q ? q * w + j : j;

  // column j of rows 0 .. n-1 of dx, summed from row 0
  logic real skip_col_sum{L}(float *dx, integer j, integer w, integer n) =
    n <= 0 ? 0.0 : skip_col_sum(dx, j, w, n - 1) + dx[skip_col_idx(n - 1, w, j)];
  logic real skip_col_sum{L}(double *dx, integer j, integer w, integer n) =
    n <= 0 ? 0.0 : skip_col_sum(dx, j, w, n - 1) + dx[skip_col_idx(n - 1, w, j)];

  lemma skip_col_sum_step_f32{A, B}: \forall float *dx, integer j, w, n; 0 < n ==>
    \at(dx[skip_col_idx(n - 1, w, j)], A) == \at(dx[skip_col_idx(n - 1, w, j)], B) ==>
    skip_col_sum{A}(dx, j, w, n - 1) == skip_col_sum{B}(dx, j, w, n - 1) ==>
    skip_col_sum{A}(dx, j, w, n) == skip_col_sum{B}(dx, j, w, n);
  lemma skip_col_sum_step_f64{A, B}: \forall double *dx, integer j, w, n; 0 < n ==>
    \at(dx[skip_col_idx(n - 1, w, j)], A) == \at(dx[skip_col_idx(n - 1, w, j)], B) ==>
    skip_col_sum{A}(dx, j, w, n - 1) == skip_col_sum{B}(dx, j, w, n - 1) ==>
    skip_col_sum{A}(dx, j, w, n) == skip_col_sum{B}(dx, j, w, n);

  lemma skip_col_sum_frame_f32{A, B}: \forall float *dx, integer j, w, n; 0 <= n ==>
    (\forall integer q; 0 <= q < n ==>
       \at(dx[skip_col_idx(q, w, j)], A) == \at(dx[skip_col_idx(q, w, j)], B)) ==>
    skip_col_sum{A}(dx, j, w, n) == skip_col_sum{B}(dx, j, w, n);
  lemma skip_col_sum_frame_f64{A, B}: \forall double *dx, integer j, w, n; 0 <= n ==>
    (\forall integer q; 0 <= q < n ==>
       \at(dx[skip_col_idx(q, w, j)], A) == \at(dx[skip_col_idx(q, w, j)], B)) ==>
    skip_col_sum{A}(dx, j, w, n) == skip_col_sum{B}(dx, j, w, n);
  } */

#endif
