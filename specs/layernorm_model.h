/* Real-number model of LayerNorm (ACSL only; nothing here is compiled): the functions that the
 * contracts in specs/layernorm.h and the loop invariants in ref/layernorm.c are stated with.
 *
 * Every function is a plain recursive (or explicit) definition over the reals, overloaded for
 * float* and double* rows; a float or double value read from memory is its exact real value.
 * No axioms.  Each recursive sum adds its terms left to right, index 0 first, exactly as the
 * kernels do, so that "the loop computed the model" is a one-step unfolding per iteration.
 *
 *   ln_sum(x, n)                  = x[0] + ... + x[n-1]
 *   ln_mean(x, n)                 = ln_sum(x, n) / n
 *   ln_ssd(x, m, n)               = sum_k (x[k] - m)^2            (sum of squared deviations)
 *   ln_var(x, n)                  = ln_ssd(x, ln_mean(x, n), n) / n  (biased variance)
 *   ln_rstd(x, n, eps)            = 1 / sqrt(ln_var(x, n) + eps)
 *   ln_y(x, g, b, n, eps, i)      = (x[i] - mean) * rstd * g[i] + b[i]   (ln_affine)
 *   ln_xhat(x, mean, rstd, i)     = (x[i] - mean) * rstd
 *   ln_sum_g(dy, g, n)            = sum_k dy[k] * g[k]
 *   ln_sum_gx(dy, g, x, m, r, n)  = sum_k (dy[k] * g[k]) * ln_xhat(x, m, r, k)
 *   ln_dx(dy, g, x, m, r, n, i)   = (dy[i]*g[i] - ln_sum_g/n - xhat_i * ln_sum_gx/n) * r
 *   ln_sumabs(x, n)               = |x[0]| + ... + |x[n-1]|          (for the error bound)
 * The per-element formulas are named (ln_affine, ln_xhat_v, ln_mul, ln_div, ln_dx_v, ln_acc_prod:
 * one per helper function in ref/layernorm.c) so that the provers match them as terms instead of
 * re-deriving products; each is a one-line explicit definition:
 *   ln_affine(x, m, r, g, b) = (x - m) * r * g + b      ln_xhat_v(x, m, r) = (x - m) * r
 *   ln_mul(a, b) = a * b    ln_div(a, b) = a / b         ln_acc_prod(acc, a, b) = acc + a * b
 *   ln_dx_v(g, mean_g, xhat, mean_gx, r) = (g - mean_g - xhat * mean_gx) * r
 */
#ifndef RESNORM_LAYERNORM_MODEL_H
#define RESNORM_LAYERNORM_MODEL_H

#include "fperr.h" /* rnd32/rnd64, u32/u64, LN_EXACT/LN_FLOAT: the float-model vocabulary */

/*@
  // ---- per-element formulas (one per helper function in ref/layernorm.c) ----
  logic real ln_affine(real xi, real m, real r, real g, real b) = (xi - m) * r * g + b;
  logic real ln_xhat_v(real xi, real m, real r) = (xi - m) * r;
  logic real ln_dx_v(real g, real mean_g, real xhat, real mean_gx, real r) =
    (g - mean_g - xhat * mean_gx) * r;
  logic real ln_acc_prod(real acc, real a, real b) = acc + a * b;
  logic real ln_mul(real a, real b) = a * b;
  logic real ln_div(real a, real b) = a / b;

  // First index of row r in row-major [rows x n] data.  A named function rather than r * n in the
  // drivers' quantified statements, so that the provers' instantiation sees one term shape (WP's
  // simplifier orders the factors of q * n differently in different goals).  The guard 0 <= r (rows
  // are never negative) keeps the body from being "trivial": Why3 inlines a trivial definition such
  // as r * n, and the quantified lemmas then have no trigger the solvers can match.
  logic integer ln_row_start(integer r, integer n) = 0 <= r ? r * n : 0;

  // Row q of the drivers' output, starting at index s (= ln_row_start(q, n)), is done: y's row (at L2)
  // is the affine map of x's row (at L1) with the row's own statistics mean[q], rstd[q] (at L2).  A
  // predicate, so that the drivers' loop step "rows < r done and row r done ==> rows <= r done" is one
  // case split on q; the start s is a parameter so that WP's simplifier sees r * n and
  // ln_row_start(r, n) (equal, assertion row_at) as one term.
  predicate ln_row_affine{L1, L2}(float *y, float *mean, float *rstd, float *x, float *gamma,
                                  float *beta, integer q, integer s, integer n) =
    \forall integer i; 0 <= i < n ==>
      \at(y[s + i], L2) == ln_affine(\at(x[s + i], L1), \at(mean[q], L2), \at(rstd[q], L2),
                                     \at(gamma[i], L1), \at(beta[i], L1));
  predicate ln_row_affine{L1, L2}(double *y, double *mean, double *rstd, double *x, double *gamma,
                                  double *beta, integer q, integer s, integer n) =
    \forall integer i; 0 <= i < n ==>
      \at(y[s + i], L2) == ln_affine(\at(x[s + i], L1), \at(mean[q], L2), \at(rstd[q], L2),
                                     \at(gamma[i], L1), \at(beta[i], L1));

  // ---- forward ----
  logic real ln_sum{L}(float *x, integer n) =
    n <= 0 ? 0.0 : ln_sum(x, n - 1) + x[n - 1];
  logic real ln_sum{L}(double *x, integer n) =
    n <= 0 ? 0.0 : ln_sum(x, n - 1) + x[n - 1];

  logic real ln_sumabs{L}(float *x, integer n) =
    n <= 0 ? 0.0 : ln_sumabs(x, n - 1) + \abs((real)x[n - 1]);
  logic real ln_sumabs{L}(double *x, integer n) =
    n <= 0 ? 0.0 : ln_sumabs(x, n - 1) + \abs((real)x[n - 1]);

  logic real ln_mean{L}(float *x, integer n) = ln_sum(x, n) / n;
  logic real ln_mean{L}(double *x, integer n) = ln_sum(x, n) / n;

  logic real ln_ssd{L}(float *x, real m, integer n) =
    n <= 0 ? 0.0 : ln_ssd(x, m, n - 1) + (x[n - 1] - m) * (x[n - 1] - m);
  logic real ln_ssd{L}(double *x, real m, integer n) =
    n <= 0 ? 0.0 : ln_ssd(x, m, n - 1) + (x[n - 1] - m) * (x[n - 1] - m);

  logic real ln_var{L}(float *x, integer n) = ln_ssd(x, ln_mean(x, n), n) / n;
  logic real ln_var{L}(double *x, integer n) = ln_ssd(x, ln_mean(x, n), n) / n;

  logic real ln_rstd{L}(float *x, integer n, real eps) = 1.0 / \sqrt(ln_var(x, n) + eps);
  logic real ln_rstd{L}(double *x, integer n, real eps) = 1.0 / \sqrt(ln_var(x, n) + eps);

  logic real ln_y{L}(float *x, float *g, float *b, integer n, real eps, integer i) =
    ln_affine(x[i], ln_mean(x, n), ln_rstd(x, n, eps), g[i], b[i]);
  logic real ln_y{L}(double *x, double *g, double *b, integer n, real eps, integer i) =
    ln_affine(x[i], ln_mean(x, n), ln_rstd(x, n, eps), g[i], b[i]);

  // ---- float error bounds (specs/error-analysis.md §2), for the float-model postconditions ----
  // Inputs the float-model contracts cover: 1 <= n <= 4096, every x[k] finite with |x[k]| <= 2^40
  // (so no partial sum, square or sum of squares overflows).
  predicate ln_in_range32{L}(float *x, integer n) =
    1 <= n <= 4096 && \forall integer k; 0 <= k < n ==> \is_finite(x[k]) && \abs(x[k]) <= 0x1p40;
  predicate ln_in_range64{L}(double *x, integer n) =
    1 <= n <= 4096 && \forall integer k; 0 <= k < n ==> \is_finite(x[k]) && \abs(x[k]) <= 0x1p40;
  // (The sum's error after i terms, ln_err_sum32/64(i, a) = 1.001 * i * u * a, is defined with the
  //  lemmas of its induction in ref/layernorm.c.)
  // E_m: |fl(fl(sum)/n) - mean| <= 1.001 * (n + 1) * u * A + eta, A = (1/n) sum |x_i|, eta = half the
  // smallest subnormal (the division may underflow); §2's E_sum = gamma_{n+1} A + 2 eta up to c = 1.001.
  logic real ln_err_mean32{L}(float *x, integer n) =
    1.001 * 0x1p-24 * (n + 1) * (ln_sumabs(x, n) / n) + 0x1p-150;
  // (2^-1075 written as 0x1p-1000 * 0x1p-75: Frama-C 25 reads a hex literal through a double, and
  //  2^-1075 is below the smallest subnormal 2^-1074 and reads as 0; proofs/README.md "Literals".)
  logic real ln_err_mean64{L}(double *x, integer n) =
    1.001 * 0x1p-53 * (n + 1) * (ln_sumabs(x, n) / n) + 0x1p-1000 * 0x1p-75;

  // ---- backward (mean and rstd are the cached values passed in) ----
  logic real ln_xhat{L}(float *x, real m, real r, integer i) = ln_xhat_v(x[i], m, r);
  logic real ln_xhat{L}(double *x, real m, real r, integer i) = ln_xhat_v(x[i], m, r);

  logic real ln_sum_g{L}(float *dy, float *g, integer n) =
    n <= 0 ? 0.0 : ln_sum_g(dy, g, n - 1) + dy[n - 1] * g[n - 1];
  logic real ln_sum_g{L}(double *dy, double *g, integer n) =
    n <= 0 ? 0.0 : ln_sum_g(dy, g, n - 1) + dy[n - 1] * g[n - 1];

  logic real ln_sum_gx{L}(float *dy, float *g, float *x, real m, real r, integer n) =
    n <= 0 ? 0.0
           : ln_sum_gx(dy, g, x, m, r, n - 1) + (dy[n - 1] * g[n - 1]) * ln_xhat(x, m, r, n - 1);
  logic real ln_sum_gx{L}(double *dy, double *g, double *x, real m, real r, integer n) =
    n <= 0 ? 0.0
           : ln_sum_gx(dy, g, x, m, r, n - 1) + (dy[n - 1] * g[n - 1]) * ln_xhat(x, m, r, n - 1);

  logic real ln_dx{L}(float *dy, float *g, float *x, real m, real r, integer n, integer i) =
    ln_dx_v(ln_mul(dy[i], g[i]), ln_div(ln_sum_g(dy, g, n), n), ln_xhat(x, m, r, i), ln_div(ln_sum_gx(dy, g, x, m, r, n), n), r);
  logic real ln_dx{L}(double *dy, double *g, double *x, real m, real r, integer n, integer i) =
    ln_dx_v(ln_mul(dy[i], g[i]), ln_div(ln_sum_g(dy, g, n), n), ln_xhat(x, m, r, i), ln_div(ln_sum_gx(dy, g, x, m, r, n), n), r);
*/

/* ---- rows composed: mean and rstd (the rows run only, -DRESNORM_WP_ROWS) ----
 * The row kernel states *mean == ln_mean(x_r, n) and *rstd == ln_rstd(x_r, n, eps) over the memory
 * of its call (x_r = the driver's x + r*n); the driver states them over the memory at its entry.
 * Equating the recursive ln_sum and ln_ssd over two memory states is an induction: the *_shift and
 * *_frame lemmas are proved by WP's induction tactic (Wp.induction on n, base 0) from scripts
 * committed in proofs/session_rows/script/, the *_step lemmas by SMT (proofs/README.md "Rows
 * composed: induction by script", where RMSNorm's rstd went first).
 *   ln_sum_at(x, s, n)    = x[s] + ... + x[s+n-1]            = ln_sum(x + s, n)     (ln_sum_shift)
 *   ln_ssd_at(x, s, m, n) = sum_k (x[s+k] - m)^2              = ln_ssd(x + s, m, n) (ln_ssd_shift)
 * with the row's offset in the index, so that a frame hypothesis over x's own indices applies (the
 * solvers do not match (x + s)[i] with x[s + i] under a quantifier), and each square through
 * ln_sq_v (the solvers do not carry equal reads into a bare product of them).
 *   ln_*_at_frame{A,B}: x[s .. s+n-1] the same at A and B ==> the sums are the same.
 *   ln_ssd_unfold: one term of ln_ssd with its square as ln_sq_v (SMT; the shift step is then quick).
 */
#ifdef RESNORM_WP_ROWS
/*@
  logic real ln_sq_v(real a) = a * a;
  logic real ln_sum_at{L}(float *x, integer s, integer n) =
    n <= 0 ? 0.0 : ln_sum_at(x, s, n - 1) + x[s + n - 1];
  logic real ln_sum_at{L}(double *x, integer s, integer n) =
    n <= 0 ? 0.0 : ln_sum_at(x, s, n - 1) + x[s + n - 1];
  logic real ln_ssd_at{L}(float *x, integer s, real m, integer n) =
    n <= 0 ? 0.0 : ln_ssd_at(x, s, m, n - 1) + ln_sq_v(x[s + n - 1] - m);
  logic real ln_ssd_at{L}(double *x, integer s, real m, integer n) =
    n <= 0 ? 0.0 : ln_ssd_at(x, s, m, n - 1) + ln_sq_v(x[s + n - 1] - m);

  lemma ln_sum_shift_step_f32{L}: \forall float *x, integer s, n; 0 < n ==>
    ln_sum(x + s, n - 1) == ln_sum_at(x, s, n - 1) ==> ln_sum(x + s, n) == ln_sum_at(x, s, n);
  lemma ln_sum_shift_step_f64{L}: \forall double *x, integer s, n; 0 < n ==>
    ln_sum(x + s, n - 1) == ln_sum_at(x, s, n - 1) ==> ln_sum(x + s, n) == ln_sum_at(x, s, n);
  lemma ln_sum_shift_f32{L}: \forall float *x, integer s, n; 0 <= n ==>
    ln_sum(x + s, n) == ln_sum_at(x, s, n);
  lemma ln_sum_shift_f64{L}: \forall double *x, integer s, n; 0 <= n ==>
    ln_sum(x + s, n) == ln_sum_at(x, s, n);
  lemma ln_sum_at_step_f32{A, B}: \forall float *x, integer s, n; 0 < n ==>
    \at(x[s + n - 1], A) == \at(x[s + n - 1], B) ==>
    ln_sum_at{A}(x, s, n - 1) == ln_sum_at{B}(x, s, n - 1) ==>
    ln_sum_at{A}(x, s, n) == ln_sum_at{B}(x, s, n);
  lemma ln_sum_at_step_f64{A, B}: \forall double *x, integer s, n; 0 < n ==>
    \at(x[s + n - 1], A) == \at(x[s + n - 1], B) ==>
    ln_sum_at{A}(x, s, n - 1) == ln_sum_at{B}(x, s, n - 1) ==>
    ln_sum_at{A}(x, s, n) == ln_sum_at{B}(x, s, n);
  lemma ln_sum_at_frame_f32{A, B}: \forall float *x, integer s, n; 0 <= n ==>
    (\forall integer i; s <= i < s + n ==> \at(x[i], A) == \at(x[i], B)) ==>
    ln_sum_at{A}(x, s, n) == ln_sum_at{B}(x, s, n);
  lemma ln_sum_at_frame_f64{A, B}: \forall double *x, integer s, n; 0 <= n ==>
    (\forall integer i; s <= i < s + n ==> \at(x[i], A) == \at(x[i], B)) ==>
    ln_sum_at{A}(x, s, n) == ln_sum_at{B}(x, s, n);

  lemma ln_ssd_unfold_f32{L}: \forall float *x, real m, integer n; 0 < n ==>
    ln_ssd(x, m, n) == ln_ssd(x, m, n - 1) + ln_sq_v(x[n - 1] - m);
  lemma ln_ssd_unfold_f64{L}: \forall double *x, real m, integer n; 0 < n ==>
    ln_ssd(x, m, n) == ln_ssd(x, m, n - 1) + ln_sq_v(x[n - 1] - m);
  lemma ln_ssd_shift_step_f32{L}: \forall float *x, integer s, real m, integer n; 0 < n ==>
    ln_ssd(x + s, m, n - 1) == ln_ssd_at(x, s, m, n - 1) ==>
    ln_ssd(x + s, m, n) == ln_ssd_at(x, s, m, n);
  lemma ln_ssd_shift_step_f64{L}: \forall double *x, integer s, real m, integer n; 0 < n ==>
    ln_ssd(x + s, m, n - 1) == ln_ssd_at(x, s, m, n - 1) ==>
    ln_ssd(x + s, m, n) == ln_ssd_at(x, s, m, n);
  lemma ln_ssd_shift_f32{L}: \forall float *x, integer s, real m, integer n; 0 <= n ==>
    ln_ssd(x + s, m, n) == ln_ssd_at(x, s, m, n);
  lemma ln_ssd_shift_f64{L}: \forall double *x, integer s, real m, integer n; 0 <= n ==>
    ln_ssd(x + s, m, n) == ln_ssd_at(x, s, m, n);
  lemma ln_ssd_at_step_f32{A, B}: \forall float *x, integer s, real m, integer n; 0 < n ==>
    \at(x[s + n - 1], A) == \at(x[s + n - 1], B) ==>
    ln_ssd_at{A}(x, s, m, n - 1) == ln_ssd_at{B}(x, s, m, n - 1) ==>
    ln_ssd_at{A}(x, s, m, n) == ln_ssd_at{B}(x, s, m, n);
  lemma ln_ssd_at_step_f64{A, B}: \forall double *x, integer s, real m, integer n; 0 < n ==>
    \at(x[s + n - 1], A) == \at(x[s + n - 1], B) ==>
    ln_ssd_at{A}(x, s, m, n - 1) == ln_ssd_at{B}(x, s, m, n - 1) ==>
    ln_ssd_at{A}(x, s, m, n) == ln_ssd_at{B}(x, s, m, n);
  lemma ln_ssd_at_frame_f32{A, B}: \forall float *x, integer s, real m, integer n; 0 <= n ==>
    (\forall integer i; s <= i < s + n ==> \at(x[i], A) == \at(x[i], B)) ==>
    ln_ssd_at{A}(x, s, m, n) == ln_ssd_at{B}(x, s, m, n);
  lemma ln_ssd_at_frame_f64{A, B}: \forall double *x, integer s, real m, integer n; 0 <= n ==>
    (\forall integer i; s <= i < s + n ==> \at(x[i], A) == \at(x[i], B)) ==>
    ln_ssd_at{A}(x, s, m, n) == ln_ssd_at{B}(x, s, m, n);
*/
#endif

/* ---- rows composed: dx (the rows run only, -DRESNORM_WP_ROWS) ----
 * The row kernel states dx[i] == ln_dx(dy_r, gamma, x_r, mean, rstd, n, i) over the memory of its
 * call (dy_r = the driver's dy + r*n, x_r likewise); the driver states it over the memory at its
 * entry (ln_row_dx).  ln_dx reads dy_r, gamma and x_r at 0 .. n-1, directly and through the row sums
 * ln_sum_g and ln_sum_gx:
 *   ln_same_row{A,B}: those reads the same at A and B, recursive (one element a step); from the
 *     driver's facts over the whole arrays by ln_same_row_intro, back to the elements by
 *     ln_same_row_elem (both by induction scripts in proofs/session_rows/script/);
 *   ln_sum_*_frame{A,B}: ln_same_row ==> the sums are the same (induction; one step, ln_sum_*_step,
 *     by SMT);
 *   ln_dx_frame{A,B}: ln_same_row ==> ln_dx is the same (SMT, through ln_dx_split).
 * No "unfold" lemma (ln_sum_g(n) == ln_sum_g(n - 1) + ...): as a global lemma it is a matching loop
 * (each instance makes a new ln_sum_g(n - 1) term to match), and with it in the context the solvers
 * timed out on ln_dx_frame, whose proof needs none.  proofs/README.md, "Rows composed: the backward
 * drivers' dx", says why each piece has its shape.
 */
#ifdef RESNORM_WP_ROWS
/*@
  // dy[0 .. n-1], g[0 .. n-1] and x[0 .. n-1] the same at A and B.  Recursive, so that every step
  // is about one element, a ground term: a \forall over a row pointer's elements ((dy + s)[i]) is
  // not matched with the driver's facts over the whole array's (dy[s + i]) by the solvers'
  // instantiation, whereas one element of each is the same term once the memory model's shift is
  // unfolded.
  predicate ln_same_row{A, B}(float *dy, float *g, float *x, integer n) =
    n <= 0 || (ln_same_row{A, B}(dy, g, x, n - 1) && \at(dy[n - 1], A) == \at(dy[n - 1], B) &&
               \at(g[n - 1], A) == \at(g[n - 1], B) && \at(x[n - 1], A) == \at(x[n - 1], B));
  predicate ln_same_row{A, B}(double *dy, double *g, double *x, integer n) =
    n <= 0 || (ln_same_row{A, B}(dy, g, x, n - 1) && \at(dy[n - 1], A) == \at(dy[n - 1], B) &&
               \at(g[n - 1], A) == \at(g[n - 1], B) && \at(x[n - 1], A) == \at(x[n - 1], B));

  // From the drivers' facts (the whole arrays' elements, a row at offset s; g's index, without
  // arithmetic, is what the solvers' instantiation matches) onto the row pointers.
  lemma ln_same_row_step_f32{A, B}: \forall float *dy, *g, *x, integer s, n; 0 < n ==>
    ln_same_row{A, B}(dy + s, g, x + s, n - 1) ==>
    \at(dy[s + (n - 1)], A) == \at(dy[s + (n - 1)], B) ==> \at(g[n - 1], A) == \at(g[n - 1], B) ==>
    \at(x[s + (n - 1)], A) == \at(x[s + (n - 1)], B) ==>
    ln_same_row{A, B}(dy + s, g, x + s, n);
  lemma ln_same_row_step_f64{A, B}: \forall double *dy, *g, *x, integer s, n; 0 < n ==>
    ln_same_row{A, B}(dy + s, g, x + s, n - 1) ==>
    \at(dy[s + (n - 1)], A) == \at(dy[s + (n - 1)], B) ==> \at(g[n - 1], A) == \at(g[n - 1], B) ==>
    \at(x[s + (n - 1)], A) == \at(x[s + (n - 1)], B) ==>
    ln_same_row{A, B}(dy + s, g, x + s, n);
  lemma ln_same_row_intro_f32{A, B}: \forall float *dy, *g, *x, integer s, n; 0 <= n ==>
    (\forall integer i; 0 <= i < n ==> \at(g[i], A) == \at(g[i], B) &&
       \at(dy[s + i], A) == \at(dy[s + i], B) && \at(x[s + i], A) == \at(x[s + i], B)) ==>
    ln_same_row{A, B}(dy + s, g, x + s, n);
  lemma ln_same_row_intro_f64{A, B}: \forall double *dy, *g, *x, integer s, n; 0 <= n ==>
    (\forall integer i; 0 <= i < n ==> \at(g[i], A) == \at(g[i], B) &&
       \at(dy[s + i], A) == \at(dy[s + i], B) && \at(x[s + i], A) == \at(x[s + i], B)) ==>
    ln_same_row{A, B}(dy + s, g, x + s, n);

  // ... and back to the elements of the row (for ln_dx_frame; a predicate, so that n is in the
  // conclusion, where the induction tactic looks for it).
  predicate ln_same_elems{A, B}(float *dy, float *g, float *x, integer n) =
    \forall integer i; 0 <= i < n ==>
      \at(dy[i], A) == \at(dy[i], B) && \at(g[i], A) == \at(g[i], B) && \at(x[i], A) == \at(x[i], B);
  predicate ln_same_elems{A, B}(double *dy, double *g, double *x, integer n) =
    \forall integer i; 0 <= i < n ==>
      \at(dy[i], A) == \at(dy[i], B) && \at(g[i], A) == \at(g[i], B) && \at(x[i], A) == \at(x[i], B);
  lemma ln_same_row_elem_f32{A, B}: \forall float *dy, *g, *x, integer n; 0 <= n ==>
    ln_same_row{A, B}(dy, g, x, n) ==> ln_same_elems{A, B}(dy, g, x, n);
  lemma ln_same_row_elem_f64{A, B}: \forall double *dy, *g, *x, integer n; 0 <= n ==>
    ln_same_row{A, B}(dy, g, x, n) ==> ln_same_elems{A, B}(dy, g, x, n);

  lemma ln_sum_g_step_f32{A, B}: \forall float *dy, *g, integer n; 0 < n ==>
    \at(dy[n - 1], A) == \at(dy[n - 1], B) ==> \at(g[n - 1], A) == \at(g[n - 1], B) ==>
    ln_sum_g{A}(dy, g, n - 1) == ln_sum_g{B}(dy, g, n - 1) ==>
    ln_sum_g{A}(dy, g, n) == ln_sum_g{B}(dy, g, n);
  lemma ln_sum_g_step_f64{A, B}: \forall double *dy, *g, integer n; 0 < n ==>
    \at(dy[n - 1], A) == \at(dy[n - 1], B) ==> \at(g[n - 1], A) == \at(g[n - 1], B) ==>
    ln_sum_g{A}(dy, g, n - 1) == ln_sum_g{B}(dy, g, n - 1) ==>
    ln_sum_g{A}(dy, g, n) == ln_sum_g{B}(dy, g, n);
  lemma ln_sum_g_frame_f32{A, B}: \forall float *dy, *g, *x, integer n; 0 <= n ==>
    ln_same_row{A, B}(dy, g, x, n) ==> ln_sum_g{A}(dy, g, n) == ln_sum_g{B}(dy, g, n);
  lemma ln_sum_g_frame_f64{A, B}: \forall double *dy, *g, *x, integer n; 0 <= n ==>
    ln_same_row{A, B}(dy, g, x, n) ==> ln_sum_g{A}(dy, g, n) == ln_sum_g{B}(dy, g, n);

  lemma ln_sum_gx_step_f32{A, B}: \forall float *dy, *g, *x, real m, r, integer n; 0 < n ==>
    \at(dy[n - 1], A) == \at(dy[n - 1], B) ==> \at(g[n - 1], A) == \at(g[n - 1], B) ==>
    \at(x[n - 1], A) == \at(x[n - 1], B) ==>
    ln_sum_gx{A}(dy, g, x, m, r, n - 1) == ln_sum_gx{B}(dy, g, x, m, r, n - 1) ==>
    ln_sum_gx{A}(dy, g, x, m, r, n) == ln_sum_gx{B}(dy, g, x, m, r, n);
  lemma ln_sum_gx_step_f64{A, B}: \forall double *dy, *g, *x, real m, r, integer n; 0 < n ==>
    \at(dy[n - 1], A) == \at(dy[n - 1], B) ==> \at(g[n - 1], A) == \at(g[n - 1], B) ==>
    \at(x[n - 1], A) == \at(x[n - 1], B) ==>
    ln_sum_gx{A}(dy, g, x, m, r, n - 1) == ln_sum_gx{B}(dy, g, x, m, r, n - 1) ==>
    ln_sum_gx{A}(dy, g, x, m, r, n) == ln_sum_gx{B}(dy, g, x, m, r, n);
  lemma ln_sum_gx_frame_f32{A, B}: \forall float *dy, *g, *x, real m, r, integer n; 0 <= n ==>
    ln_same_row{A, B}(dy, g, x, n) ==>
    ln_sum_gx{A}(dy, g, x, m, r, n) == ln_sum_gx{B}(dy, g, x, m, r, n);
  lemma ln_sum_gx_frame_f64{A, B}: \forall double *dy, *g, *x, real m, r, integer n; 0 <= n ==>
    ln_same_row{A, B}(dy, g, x, n) ==>
    ln_sum_gx{A}(dy, g, x, m, r, n) == ln_sum_gx{B}(dy, g, x, m, r, n);

  // a·b and a/n as symbols of their own: Why3 inlines ln_mul, ln_div to the interpreted * and /,
  // and the solvers do not carry equal operands through a nonlinear product or quotient (the
  // guards keep the definitions from being inlined).
  logic real ln_gmul_v(real a, real b) = a == 0.0 ? 0.0 : a * b;
  logic real ln_gdiv_v(real a, integer n) = n == 0 ? 0.0 : a / n;

  lemma ln_dx_split_f32{L}: \forall float *dy, *g, *x, real m, r, integer n, i; 0 <= i < n ==>
    ln_dx(dy, g, x, m, r, n, i) ==
      ln_dx_v(ln_gmul_v(dy[i], g[i]), ln_gdiv_v(ln_sum_g(dy, g, n), n), ln_xhat_v(x[i], m, r),
              ln_gdiv_v(ln_sum_gx(dy, g, x, m, r, n), n), r);
  lemma ln_dx_split_f64{L}: \forall double *dy, *g, *x, real m, r, integer n, i; 0 <= i < n ==>
    ln_dx(dy, g, x, m, r, n, i) ==
      ln_dx_v(ln_gmul_v(dy[i], g[i]), ln_gdiv_v(ln_sum_g(dy, g, n), n), ln_xhat_v(x[i], m, r),
              ln_gdiv_v(ln_sum_gx(dy, g, x, m, r, n), n), r);
  lemma ln_dx_frame_f32{A, B}: \forall float *dy, *g, *x, real m, r, integer n, i; 0 <= i < n ==>
    ln_same_row{A, B}(dy, g, x, n) ==>
    ln_dx{A}(dy, g, x, m, r, n, i) == ln_dx{B}(dy, g, x, m, r, n, i);
  lemma ln_dx_frame_f64{A, B}: \forall double *dy, *g, *x, real m, r, integer n, i; 0 <= i < n ==>
    ln_same_row{A, B}(dy, g, x, n) ==>
    ln_dx{A}(dy, g, x, m, r, n, i) == ln_dx{B}(dy, g, x, m, r, n, i);

  // Row q of dx (at L2), starting at index s (= ln_row_start(q, n)), is LayerNorm's backward of
  // row q of dy and x with gamma and the stored mean[q], rstd[q], all at L1 (a predicate, so that
  // the drivers' step "rows < r done and row r done ==> rows <= r done" is one case split on q).
  predicate ln_row_dx{L1, L2}(float *dx, float *dy, float *x, float *gamma, float *mean, float *rstd,
                              integer q, integer s, integer n) =
    \forall integer i; 0 <= i < n ==>
      \at(dx[s + i], L2) == ln_dx{L1}(dy + s, gamma, x + s, \at(mean[q], L1), \at(rstd[q], L1), n, i);
  predicate ln_row_dx{L1, L2}(double *dx, double *dy, double *x, double *gamma, double *mean,
                              double *rstd, integer q, integer s, integer n) =
    \forall integer i; 0 <= i < n ==>
      \at(dx[s + i], L2) == ln_dx{L1}(dy + s, gamma, x + s, \at(mean[q], L1), \at(rstd[q], L1), n, i);
*/
#endif

#endif
