/* Real-number model of RMSNorm (ACSL only; nothing here is compiled): the functions that the
 * contracts in specs/rmsnorm.h and the loop invariants in ref/rmsnorm.c are stated with.
 *
 * Every function is a plain recursive (or explicit) definition over the reals, overloaded for
 * float* and double* rows; a float or double value read from memory is its exact real value.
 * No axioms.  Each recursive sum adds its terms left to right, index 0 first, exactly as the
 * kernels do, so that "the loop computed the model" is a one-step unfolding per iteration.
 *
 *   rms_sumsq(x, n)                    = x[0]^2 + ... + x[n-1]^2          (sum of squares)
 *   rms_ms(x, n)                       = rms_sumsq(x, n) / n              (mean square)
 *   rms_rstd(x, n, eps)                = 1 / sqrt(rms_ms(x, n) + eps)
 *   rms_w(g, offset, i)                = g[i] (offset 0) or 1 + g[i] (offset != 0)
 *   rms_y(x, g, n, eps, offset, i)     = (x[i] * rstd) * w_i
 *   rms_xhat(x, r, i)                  = x[i] * r                          (r: the cached rstd)
 *   rms_g(dy, g, offset, i)            = dy[i] * w_i
 *   rms_sum_gx(dy, g, x, r, offset, n) = sum_k rms_g(k) * rms_xhat(k)
 *   rms_dx(dy, g, x, r, offset, n, i)  = (rms_g(i) - rms_xhat(i) * rms_sum_gx / n) * r
 *   rms_acc_prod(acc, a, b)            = acc + a * b                      (dgamma[i] += dy[i] * xhat_i)
 *   rms_row_start(r, n)                = r * n                            (r >= 0; rows run)
 *   rms_row_y{L1,L2}(y, rstd, x, g, q, s, n, offset): y's row q (from s) is rms_y_v of x's row, rstd[q]
 */
#ifndef RESNORM_RMSNORM_MODEL_H
#define RESNORM_RMSNORM_MODEL_H

/*@
  // ---- per-element formulas (one per helper function in ref/rmsnorm.c) ----
  logic real rms_w_v(real g, integer offset) = offset != 0 ? 1.0 + g : g;
  logic real rms_y_v(real xi, real r, real w) = xi * r * w;
  logic real rms_dx_v(real g, real xhat, real mean_gx, real r) = (g - xhat * mean_gx) * r;
  logic real rms_mul(real a, real b) = a * b;
  logic real rms_acc_prod(real acc, real a, real b) = acc + a * b;
  logic real rms_div(real a, real b) = a / b;

  // ---- rows x n drivers (the rows run, -DRESNORM_WP_ROWS; as ln_row_start / ln_row_affine in
  // specs/layernorm_model.h) ----
  // The start of row r, r * n.  The guard (row indices are never negative) keeps the body from being
  // "trivial": Why3 inlines a trivial definition such as r * n, and the quantified lemmas then have no
  // trigger the solvers can match.
  logic integer rms_row_start(integer r, integer n) = 0 <= r ? r * n : 0;

  // Row q of the drivers' output, starting at index s (= rms_row_start(q, n)), is done: y's row (at
  // L2) is (x * rstd) * w of x's row (at L1) with the row's own stored rstd[q] (at L2).  A predicate,
  // so that the loop step "rows < r done and row r done ==> rows <= r done" is one case split on q.
  predicate rms_row_y{L1, L2}(float *y, float *rstd, float *x, float *g, integer q, integer s,
                              integer n, integer offset) =
    \forall integer i; 0 <= i < n ==>
      \at(y[s + i], L2) == rms_y_v(\at(x[s + i], L1), \at(rstd[q], L2), rms_w_v(\at(g[i], L1), offset));
  predicate rms_row_y{L1, L2}(double *y, double *rstd, double *x, double *g, integer q, integer s,
                              integer n, integer offset) =
    \forall integer i; 0 <= i < n ==>
      \at(y[s + i], L2) == rms_y_v(\at(x[s + i], L1), \at(rstd[q], L2), rms_w_v(\at(g[i], L1), offset));

  // ---- forward ----
  logic real rms_sumsq{L}(float *x, integer n) =
    n <= 0 ? 0.0 : rms_sumsq(x, n - 1) + x[n - 1] * x[n - 1];
  logic real rms_sumsq{L}(double *x, integer n) =
    n <= 0 ? 0.0 : rms_sumsq(x, n - 1) + x[n - 1] * x[n - 1];

  logic real rms_ms{L}(float *x, integer n) = rms_sumsq(x, n) / n;
  logic real rms_ms{L}(double *x, integer n) = rms_sumsq(x, n) / n;

  logic real rms_rstd{L}(float *x, integer n, real eps) = 1.0 / \sqrt(rms_ms(x, n) + eps);
  logic real rms_rstd{L}(double *x, integer n, real eps) = 1.0 / \sqrt(rms_ms(x, n) + eps);

  logic real rms_w{L}(float *g, integer offset, integer i) = rms_w_v(g[i], offset);
  logic real rms_w{L}(double *g, integer offset, integer i) = rms_w_v(g[i], offset);

  logic real rms_y{L}(float *x, float *g, integer n, real eps, integer offset, integer i) =
    rms_y_v(x[i], rms_rstd(x, n, eps), rms_w(g, offset, i));
  logic real rms_y{L}(double *x, double *g, integer n, real eps, integer offset, integer i) =
    rms_y_v(x[i], rms_rstd(x, n, eps), rms_w(g, offset, i));

  // ---- backward (rstd is the cached value passed in) ----
  logic real rms_xhat{L}(float *x, real r, integer i) = rms_mul(x[i], r);
  logic real rms_xhat{L}(double *x, real r, integer i) = rms_mul(x[i], r);

  logic real rms_g{L}(float *dy, float *g, integer offset, integer i) =
    rms_mul(dy[i], rms_w(g, offset, i));
  logic real rms_g{L}(double *dy, double *g, integer offset, integer i) =
    rms_mul(dy[i], rms_w(g, offset, i));

  logic real rms_sum_gx{L}(float *dy, float *g, float *x, real r, integer offset, integer n) =
    n <= 0 ? 0.0
           : rms_sum_gx(dy, g, x, r, offset, n - 1) + rms_g(dy, g, offset, n - 1) * rms_xhat(x, r, n - 1);
  logic real rms_sum_gx{L}(double *dy, double *g, double *x, real r, integer offset, integer n) =
    n <= 0 ? 0.0
           : rms_sum_gx(dy, g, x, r, offset, n - 1) + rms_g(dy, g, offset, n - 1) * rms_xhat(x, r, n - 1);

  logic real rms_dx{L}(float *dy, float *g, float *x, real r, integer offset, integer n, integer i) =
    rms_dx_v(rms_g(dy, g, offset, i), rms_xhat(x, r, i), rms_div(rms_sum_gx(dy, g, x, r, offset, n), n), r);
  logic real rms_dx{L}(double *dy, double *g, double *x, real r, integer offset, integer n, integer i) =
    rms_dx_v(rms_g(dy, g, offset, i), rms_xhat(x, r, i), rms_div(rms_sum_gx(dy, g, x, r, offset, n), n), r);
*/

/* ---- rows composed: rstd (the rows run only, -DRESNORM_WP_ROWS) ----
 * The row kernel states *rstd == rms_rstd(x_r, n, eps) over the memory of its call, where x_r is
 * the driver's x + r*n; the driver states it over the memory at its entry.  Equating the recursive
 * rms_sumsq over two memory states is an induction: the lemmas below are proved by WP's induction
 * tactic (Wp.induction on n, base 0), from scripts committed in proofs/session_rmsnorm_rows/script/
 * (replayed by `make prove`; proofs/README.md "Rows composed: induction by script").
 *   rms_sumsq_at(x, s, n) = x[s]^2 + ... + x[s+n-1]^2: rms_sumsq(x + s, n) with the row's offset
 *   in the index, so that a frame hypothesis over x's own indices applies (the solvers do not
 *   match (x + s)[i] with x[s + i] under a quantifier).
 *   rms_sumsq_unfold: one term of rms_sumsq, its square as rms_sq_v                     (SMT)
 *   rms_sumsq_shift_step: one term of each                                              (SMT)
 *   rms_sumsq_shift: rms_sumsq(x + s, n) == rms_sumsq_at(x, s, n)                       (induction)
 *   rms_sumsq_at_step: one more equal term keeps the sums equal                        (SMT)
 *   rms_sumsq_at_frame: x[s .. s+n-1] the same at A and B ==> the sums are equal       (induction)
 */
#ifdef RESNORM_WP_ROWS
/*@
  // a^2 as a function of its own: the solvers then equate the squares of equal reads by
  // congruence (a bare product of two reads is arithmetic to them, and they did not)
  logic real rms_sq_v(real a) = a * a;
  logic real rms_sumsq_at{L}(float *x, integer s, integer n) =
    n <= 0 ? 0.0 : rms_sumsq_at(x, s, n - 1) + rms_sq_v(x[s + n - 1]);
  logic real rms_sumsq_at{L}(double *x, integer s, integer n) =
    n <= 0 ? 0.0 : rms_sumsq_at(x, s, n - 1) + rms_sq_v(x[s + n - 1]);

  lemma rms_sumsq_unfold_f32{L}: \forall float *x, integer n; 0 < n ==>
    rms_sumsq(x, n) == rms_sumsq(x, n - 1) + rms_sq_v(x[n - 1]);
  lemma rms_sumsq_unfold_f64{L}: \forall double *x, integer n; 0 < n ==>
    rms_sumsq(x, n) == rms_sumsq(x, n - 1) + rms_sq_v(x[n - 1]);
  lemma rms_sumsq_shift_step_f32{L}: \forall float *x, integer s, n; 0 < n ==>
    rms_sumsq(x + s, n - 1) == rms_sumsq_at(x, s, n - 1) ==>
    rms_sumsq(x + s, n) == rms_sumsq_at(x, s, n);
  lemma rms_sumsq_shift_step_f64{L}: \forall double *x, integer s, n; 0 < n ==>
    rms_sumsq(x + s, n - 1) == rms_sumsq_at(x, s, n - 1) ==>
    rms_sumsq(x + s, n) == rms_sumsq_at(x, s, n);
  lemma rms_sumsq_shift_f32{L}: \forall float *x, integer s, n; 0 <= n ==>
    rms_sumsq(x + s, n) == rms_sumsq_at(x, s, n);
  lemma rms_sumsq_shift_f64{L}: \forall double *x, integer s, n; 0 <= n ==>
    rms_sumsq(x + s, n) == rms_sumsq_at(x, s, n);

  lemma rms_sumsq_at_step_f32{A, B}: \forall float *x, integer s, n; 0 < n ==>
    \at(x[s + n - 1], A) == \at(x[s + n - 1], B) ==>
    rms_sumsq_at{A}(x, s, n - 1) == rms_sumsq_at{B}(x, s, n - 1) ==>
    rms_sumsq_at{A}(x, s, n) == rms_sumsq_at{B}(x, s, n);
  lemma rms_sumsq_at_step_f64{A, B}: \forall double *x, integer s, n; 0 < n ==>
    \at(x[s + n - 1], A) == \at(x[s + n - 1], B) ==>
    rms_sumsq_at{A}(x, s, n - 1) == rms_sumsq_at{B}(x, s, n - 1) ==>
    rms_sumsq_at{A}(x, s, n) == rms_sumsq_at{B}(x, s, n);

  lemma rms_sumsq_at_frame_f32{A, B}: \forall float *x, integer s, n; 0 <= n ==>
    (\forall integer i; s <= i < s + n ==> \at(x[i], A) == \at(x[i], B)) ==>
    rms_sumsq_at{A}(x, s, n) == rms_sumsq_at{B}(x, s, n);
  lemma rms_sumsq_at_frame_f64{A, B}: \forall double *x, integer s, n; 0 <= n ==>
    (\forall integer i; s <= i < s + n ==> \at(x[i], A) == \at(x[i], B)) ==>
    rms_sumsq_at{A}(x, s, n) == rms_sumsq_at{B}(x, s, n);
*/
#endif

/* ---- rows composed: dx (the rows run only, -DRESNORM_WP_ROWS) ----
 * As LayerNorm's (specs/layernorm_model.h, "rows composed: dx"; proofs/README.md "Rows composed:
 * the backward drivers' dx"): the row kernel's dx_def is over its call's memory; rms_dx reads the
 * row (dy, g, x at 0 .. n-1) directly and through its one sum rms_sum_gx.  rms_same_row{A,B}: those
 * reads the same at A and B, recursive (one element a step: ground terms), introduced from the
 * driver's facts over the whole arrays (rms_same_row_intro, induction) and taken back to the
 * elements (rms_same_row_elem, induction); rms_sum_gx_frame (induction) and rms_dx_frame (SMT,
 * through rms_dx_split, whose products and quotient are guarded symbols: the solvers do not carry
 * equal operands through the interpreted * and /).  In an axiomatic block: WP gives its lemmas only
 * to the goals that use its symbols (the backward drivers'), as global lemmas they slowed the forward
 * drivers' rstd_r past the timeout.
 */
#ifdef RESNORM_WP_ROWS
/*@ axiomatic RmsRowsDx {
  predicate rms_same_row{A, B}(float *dy, float *g, float *x, integer n) =
    n <= 0 || (rms_same_row{A, B}(dy, g, x, n - 1) && \at(dy[n - 1], A) == \at(dy[n - 1], B) &&
               \at(g[n - 1], A) == \at(g[n - 1], B) && \at(x[n - 1], A) == \at(x[n - 1], B));
  predicate rms_same_row{A, B}(double *dy, double *g, double *x, integer n) =
    n <= 0 || (rms_same_row{A, B}(dy, g, x, n - 1) && \at(dy[n - 1], A) == \at(dy[n - 1], B) &&
               \at(g[n - 1], A) == \at(g[n - 1], B) && \at(x[n - 1], A) == \at(x[n - 1], B));
  predicate rms_same_elems{A, B}(float *dy, float *g, float *x, integer n) =
    \forall integer i; 0 <= i < n ==>
      \at(dy[i], A) == \at(dy[i], B) && \at(g[i], A) == \at(g[i], B) && \at(x[i], A) == \at(x[i], B);
  predicate rms_same_elems{A, B}(double *dy, double *g, double *x, integer n) =
    \forall integer i; 0 <= i < n ==>
      \at(dy[i], A) == \at(dy[i], B) && \at(g[i], A) == \at(g[i], B) && \at(x[i], A) == \at(x[i], B);

  lemma rms_same_row_step_f32{A, B}: \forall float *dy, *g, *x, integer s, n; 0 < n ==>
    rms_same_row{A, B}(dy + s, g, x + s, n - 1) ==>
    \at(dy[s + (n - 1)], A) == \at(dy[s + (n - 1)], B) ==> \at(g[n - 1], A) == \at(g[n - 1], B) ==>
    \at(x[s + (n - 1)], A) == \at(x[s + (n - 1)], B) ==>
    rms_same_row{A, B}(dy + s, g, x + s, n);
  lemma rms_same_row_step_f64{A, B}: \forall double *dy, *g, *x, integer s, n; 0 < n ==>
    rms_same_row{A, B}(dy + s, g, x + s, n - 1) ==>
    \at(dy[s + (n - 1)], A) == \at(dy[s + (n - 1)], B) ==> \at(g[n - 1], A) == \at(g[n - 1], B) ==>
    \at(x[s + (n - 1)], A) == \at(x[s + (n - 1)], B) ==>
    rms_same_row{A, B}(dy + s, g, x + s, n);
  lemma rms_same_row_intro_f32{A, B}: \forall float *dy, *g, *x, integer s, n; 0 <= n ==>
    (\forall integer i; 0 <= i < n ==> \at(g[i], A) == \at(g[i], B) &&
       \at(dy[s + i], A) == \at(dy[s + i], B) && \at(x[s + i], A) == \at(x[s + i], B)) ==>
    rms_same_row{A, B}(dy + s, g, x + s, n);
  lemma rms_same_row_intro_f64{A, B}: \forall double *dy, *g, *x, integer s, n; 0 <= n ==>
    (\forall integer i; 0 <= i < n ==> \at(g[i], A) == \at(g[i], B) &&
       \at(dy[s + i], A) == \at(dy[s + i], B) && \at(x[s + i], A) == \at(x[s + i], B)) ==>
    rms_same_row{A, B}(dy + s, g, x + s, n);
  lemma rms_same_row_elem_f32{A, B}: \forall float *dy, *g, *x, integer n; 0 <= n ==>
    rms_same_row{A, B}(dy, g, x, n) ==> rms_same_elems{A, B}(dy, g, x, n);
  lemma rms_same_row_elem_f64{A, B}: \forall double *dy, *g, *x, integer n; 0 <= n ==>
    rms_same_row{A, B}(dy, g, x, n) ==> rms_same_elems{A, B}(dy, g, x, n);

  lemma rms_sum_gx_step_f32{A, B}: \forall float *dy, *g, *x, real r, integer offset, n; 0 < n ==>
    \at(dy[n - 1], A) == \at(dy[n - 1], B) ==> \at(g[n - 1], A) == \at(g[n - 1], B) ==>
    \at(x[n - 1], A) == \at(x[n - 1], B) ==>
    rms_sum_gx{A}(dy, g, x, r, offset, n - 1) == rms_sum_gx{B}(dy, g, x, r, offset, n - 1) ==>
    rms_sum_gx{A}(dy, g, x, r, offset, n) == rms_sum_gx{B}(dy, g, x, r, offset, n);
  lemma rms_sum_gx_step_f64{A, B}: \forall double *dy, *g, *x, real r, integer offset, n; 0 < n ==>
    \at(dy[n - 1], A) == \at(dy[n - 1], B) ==> \at(g[n - 1], A) == \at(g[n - 1], B) ==>
    \at(x[n - 1], A) == \at(x[n - 1], B) ==>
    rms_sum_gx{A}(dy, g, x, r, offset, n - 1) == rms_sum_gx{B}(dy, g, x, r, offset, n - 1) ==>
    rms_sum_gx{A}(dy, g, x, r, offset, n) == rms_sum_gx{B}(dy, g, x, r, offset, n);
  lemma rms_sum_gx_frame_f32{A, B}: \forall float *dy, *g, *x, real r, integer offset, n; 0 <= n ==>
    rms_same_row{A, B}(dy, g, x, n) ==>
    rms_sum_gx{A}(dy, g, x, r, offset, n) == rms_sum_gx{B}(dy, g, x, r, offset, n);
  lemma rms_sum_gx_frame_f64{A, B}: \forall double *dy, *g, *x, real r, integer offset, n; 0 <= n ==>
    rms_same_row{A, B}(dy, g, x, n) ==>
    rms_sum_gx{A}(dy, g, x, r, offset, n) == rms_sum_gx{B}(dy, g, x, r, offset, n);

  logic real rms_gmul_v(real a, real b) = a == 0.0 ? 0.0 : a * b;
  logic real rms_gdiv_v(real a, integer n) = n == 0 ? 0.0 : a / n;
  lemma rms_g_split_f32{L}: \forall float *dy, *g, integer offset, i;
    rms_g(dy, g, offset, i) == rms_gmul_v(dy[i], rms_w_v(g[i], offset));
  lemma rms_g_split_f64{L}: \forall double *dy, *g, integer offset, i;
    rms_g(dy, g, offset, i) == rms_gmul_v(dy[i], rms_w_v(g[i], offset));
  lemma rms_xhat_split_f32{L}: \forall float *x, real r, integer i; rms_xhat(x, r, i) == rms_gmul_v(x[i], r);
  lemma rms_xhat_split_f64{L}: \forall double *x, real r, integer i; rms_xhat(x, r, i) == rms_gmul_v(x[i], r);
  lemma rms_dx_split_f32{L}: \forall float *dy, *g, *x, real r, integer offset, n, i; 0 <= i < n ==>
    rms_dx(dy, g, x, r, offset, n, i) ==
      rms_dx_v(rms_gmul_v(dy[i], rms_w_v(g[i], offset)), rms_gmul_v(x[i], r),
               rms_gdiv_v(rms_sum_gx(dy, g, x, r, offset, n), n), r);
  lemma rms_dx_split_f64{L}: \forall double *dy, *g, *x, real r, integer offset, n, i; 0 <= i < n ==>
    rms_dx(dy, g, x, r, offset, n, i) ==
      rms_dx_v(rms_gmul_v(dy[i], rms_w_v(g[i], offset)), rms_gmul_v(x[i], r),
               rms_gdiv_v(rms_sum_gx(dy, g, x, r, offset, n), n), r);
  lemma rms_dx_frame_f32{A, B}: \forall float *dy, *g, *x, real r, integer offset, n, i; 0 <= i < n ==>
    rms_same_row{A, B}(dy, g, x, n) ==>
    rms_dx{A}(dy, g, x, r, offset, n, i) == rms_dx{B}(dy, g, x, r, offset, n, i);
  lemma rms_dx_frame_f64{A, B}: \forall double *dy, *g, *x, real r, integer offset, n, i; 0 <= i < n ==>
    rms_same_row{A, B}(dy, g, x, n) ==>
    rms_dx{A}(dy, g, x, r, offset, n, i) == rms_dx{B}(dy, g, x, r, offset, n, i);

  // Row q of dx (at L2), starting at index s (= rms_row_start(q, n)), is RMSNorm's backward of row q
  // of dy and x with gamma and the stored rstd[q], all at L1.
  predicate rms_row_dx{L1, L2}(float *dx, float *dy, float *x, float *gamma, float *rstd,
                               integer offset, integer q, integer s, integer n) =
    \forall integer i; 0 <= i < n ==>
      \at(dx[s + i], L2) == rms_dx{L1}(dy + s, gamma, x + s, \at(rstd[q], L1), offset, n, i);
  predicate rms_row_dx{L1, L2}(double *dx, double *dy, double *x, double *gamma, double *rstd,
                               integer offset, integer q, integer s, integer n) =
    \forall integer i; 0 <= i < n ==>
      \at(dx[s + i], L2) == rms_dx{L1}(dy + s, gamma, x + s, \at(rstd[q], L1), offset, n, i);
  }
*/
#endif

#endif
