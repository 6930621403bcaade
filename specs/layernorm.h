/* LayerNorm over the last dimension of row-major data: contracts of the kernels in ref/layernorm.c.
 *
 * For one row x[0..n) with parameters gamma, beta[0..n):
 *   mean = (1/n) sum_i x_i                 (two-pass: the mean first ...)
 *   var  = (1/n) sum_i (x_i - mean)^2      (... then the biased variance about it)
 *   rstd = 1 / sqrt(var + eps)
 *   y_i  = (x_i - mean) * rstd * gamma_i + beta_i
 * Backward, with xhat_i = (x_i - mean) * rstd and g_i = dy_i * gamma_i:
 *   dx_i      = rstd * (g_i - mean_j(g_j) - xhat_i * mean_j(g_j * xhat_j))   (overwritten)
 *   dgamma_i += dy_i * xhat_i                                                  (accumulated)
 *   dbeta_i  += dy_i                                                           (accumulated)
 * The rows x n drivers apply the row kernel to each row r (x + r*n, ...), mean[r], rstd[r].
 */
#ifndef RESNORM_LAYERNORM_H
#define RESNORM_LAYERNORM_H

#include <limits.h>

#include "layernorm_model.h" /* the real-number model (ACSL logic functions) */

/* Contracts (ACSL, proved by `make prove`; see proofs/README.md).  In the proofs, float and double
 * values are the real numbers they denote (WP's real model): the functional postconditions state
 * what each kernel computes up to rounding, i.e. that the code implements the formulas above in the
 * stated order; the rounding itself is bounded by EVA (no NaN/Inf/overflow over the ranges below)
 * and by Gappa (error of the mean's sum, proofs/sum_error.c) and by the analysis in specs/.
 *
 * EVA-checked input ranges (proofs/eva_layernorm.c, -warn-special-float non-finite: 0 alarms),
 * for float and for double, forward then backward on the same row:
 *   1 <= n <= 4096, |x[i]|, |gamma[i]|, |beta[i]|, |dy[i]| <= 1.0e4, eps in [1.0e-12, 1],
 *   backward: mean and rstd as produced by the forward kernel on the same x and eps (rstd <= 1e6),
 *             dgamma[i], dbeta[i] accumulated from 0 over one row.
 * (n is analysed per power-of-two bucket with every loop unrolled; see proofs/README.md.)
 * No NaN, no infinity, no overflow anywhere in the four kernels for these inputs.  Outside these
 * ranges (e.g. |x| near FLT_MAX, or eps -> 0 on a constant row) intermediate values may overflow.
 *
 * Two WP runs read these contracts (specs/fperr.h, proofs/README.md "Two runs"): LN_EXACT(p) is
 * proved in the real model, LN_FLOAT(p) in the IEEE float model (requires fl_range: 1 <= n <= 4096,
 * finite |x[i]| <= 2^40, finite eps <= 1).  layernorm_row_forward_f32's float postconditions:
 *   mean_err:     |*mean - mean(x)| <= E_m = 1.001 (n + 1) u (1/n) sum_i |x_i| + 2^-150, u = 2^-24
 *   rstd_not_nan: the two-pass variance is >= 0, so rstd is never NaN.
 * The rows x n forward drivers (rows run, -DRESNORM_WP_ROWS: LN_ROWS in specs/fperr.h):
 *   y_rows: every row r of y is ln_affine of row r of x with the stored mean[r], rstd[r]
 *   (ln_row_affine, specs/layernorm_model.h); from the row kernel's pointwise postcondition y_stats.
 *   stats_rows: every stored mean[r], rstd[r] is ln_mean, ln_rstd of row r of x as at entry (from
 *   the row kernel's mean_def, rstd_def and the induction lemmas of specs/layernorm_model.h); with
 *   y_rows, every row of y is the LayerNorm of its own row of x.
 * For double, the float error of the mean's sum is proved on a proof copy of the first loop only
 * (proofs/sum_error.c): |fl(sum) - sum_i x_i| <= 1.001 * n * 2^-53 * sum_i |x_i|, 1 <= n <= 4096.
 */

/*@ requires n_pos: n >= 1;
    requires eps_pos: eps > 0;
    requires valid_x: \valid_read(x + (0 .. n - 1));
    requires valid_gamma: \valid_read(gamma + (0 .. n - 1));
    requires valid_beta: \valid_read(beta + (0 .. n - 1));
    requires valid_y: \valid(y + (0 .. n - 1));
    requires valid_mean: \valid(mean);
    requires valid_rstd: \valid(rstd);
    requires sep_out: \separated(y + (0 .. n - 1), mean, rstd);
    requires sep_x: \separated(y + (0 .. n - 1), mean, rstd, x + (0 .. n - 1));
    requires sep_gamma: \separated(y + (0 .. n - 1), mean, rstd, gamma + (0 .. n - 1));
    requires sep_beta: \separated(y + (0 .. n - 1), mean, rstd, beta + (0 .. n - 1));
    requires fl_range: LN_FLOAT(ln_in_range32(x, n) && \is_finite(eps) && eps <= 1);
    assigns y[0 .. n - 1], *mean, *rstd;
    ensures mean_def: LN_EXACT(*mean == ln_mean{Pre}(x, n));
    ensures rstd_def: LN_EXACT(*rstd == ln_rstd{Pre}(x, n, eps));
    ensures y_def: LN_ROWMODEL(\forall integer i; 0 <= i < n ==> y[i] == ln_y{Pre}(x, gamma, beta, n, eps, i));
    ensures y_stats: LN_EXACT(\forall integer i; 0 <= i < n ==>
      y[i] == ln_affine(\old(x[i]), *mean, *rstd, \old(gamma[i]), \old(beta[i])));
    ensures mean_err: LN_FLOAT(\abs(*mean - ln_mean{Pre}(x, n)) <= ln_err_mean32{Pre}(x, n));
    ensures rstd_not_nan: LN_FLOAT(!\is_NaN(*rstd));
*/
void layernorm_row_forward_f32(float *y, float *mean, float *rstd, const float *x,
                               const float *gamma, const float *beta, int n, float eps);
/*@ requires n_pos: n >= 1;
    requires eps_pos: eps > 0;
    requires valid_x: \valid_read(x + (0 .. n - 1));
    requires valid_gamma: \valid_read(gamma + (0 .. n - 1));
    requires valid_beta: \valid_read(beta + (0 .. n - 1));
    requires valid_y: \valid(y + (0 .. n - 1));
    requires valid_mean: \valid(mean);
    requires valid_rstd: \valid(rstd);
    requires sep_out: \separated(y + (0 .. n - 1), mean, rstd);
    requires sep_x: \separated(y + (0 .. n - 1), mean, rstd, x + (0 .. n - 1));
    requires sep_gamma: \separated(y + (0 .. n - 1), mean, rstd, gamma + (0 .. n - 1));
    requires sep_beta: \separated(y + (0 .. n - 1), mean, rstd, beta + (0 .. n - 1));
    assigns y[0 .. n - 1], *mean, *rstd;
    ensures mean_def: LN_EXACT(*mean == ln_mean{Pre}(x, n));
    ensures rstd_def: LN_EXACT(*rstd == ln_rstd{Pre}(x, n, eps));
    ensures y_def: LN_ROWMODEL(\forall integer i; 0 <= i < n ==> y[i] == ln_y{Pre}(x, gamma, beta, n, eps, i));
    ensures y_stats: LN_EXACT(\forall integer i; 0 <= i < n ==>
      y[i] == ln_affine(\old(x[i]), *mean, *rstd, \old(gamma[i]), \old(beta[i])));
*/
void layernorm_row_forward_f64(double *y, double *mean, double *rstd, const double *x,
                               const double *gamma, const double *beta, int n, double eps);

/*@ requires n_pos: n >= 1;
    requires valid_dy: \valid_read(dy + (0 .. n - 1));
    requires valid_x: \valid_read(x + (0 .. n - 1));
    requires valid_gamma: \valid_read(gamma + (0 .. n - 1));
    requires valid_dx: \valid(dx + (0 .. n - 1));
    requires valid_dgamma: \valid(dgamma + (0 .. n - 1));
    requires valid_dbeta: \valid(dbeta + (0 .. n - 1));
    requires sep_dy: \separated(dx + (0 .. n - 1), dgamma + (0 .. n - 1), dbeta + (0 .. n - 1), dy + (0 .. n - 1));
    requires sep_x: \separated(dx + (0 .. n - 1), dgamma + (0 .. n - 1), dbeta + (0 .. n - 1), x + (0 .. n - 1));
    requires sep_gamma: \separated(dx + (0 .. n - 1), dgamma + (0 .. n - 1), dbeta + (0 .. n - 1), gamma + (0 .. n - 1));
    assigns dx[0 .. n - 1], dgamma[0 .. n - 1], dbeta[0 .. n - 1];
    ensures dx_def: LN_EXACT(\forall integer i; 0 <= i < n ==>
      dx[i] == ln_dx{Pre}(dy, gamma, x, mean, rstd, n, i));
    ensures dgamma_acc: LN_EXACT(\forall integer i; 0 <= i < n ==>
      dgamma[i] == ln_acc_prod(\old(dgamma[i]), \old(dy[i]), ln_xhat{Pre}(x, mean, rstd, i)));
    ensures dbeta_acc: LN_EXACT(\forall integer i; 0 <= i < n ==> dbeta[i] == \old(dbeta[i]) + \old(dy[i]));
*/
void layernorm_row_backward_f32(float *dx, float *dgamma, float *dbeta, const float *dy,
                                const float *x, const float *gamma, float mean, float rstd, int n);
/*@ requires n_pos: n >= 1;
    requires valid_dy: \valid_read(dy + (0 .. n - 1));
    requires valid_x: \valid_read(x + (0 .. n - 1));
    requires valid_gamma: \valid_read(gamma + (0 .. n - 1));
    requires valid_dx: \valid(dx + (0 .. n - 1));
    requires valid_dgamma: \valid(dgamma + (0 .. n - 1));
    requires valid_dbeta: \valid(dbeta + (0 .. n - 1));
    requires sep_dy: \separated(dx + (0 .. n - 1), dgamma + (0 .. n - 1), dbeta + (0 .. n - 1), dy + (0 .. n - 1));
    requires sep_x: \separated(dx + (0 .. n - 1), dgamma + (0 .. n - 1), dbeta + (0 .. n - 1), x + (0 .. n - 1));
    requires sep_gamma: \separated(dx + (0 .. n - 1), dgamma + (0 .. n - 1), dbeta + (0 .. n - 1), gamma + (0 .. n - 1));
    assigns dx[0 .. n - 1], dgamma[0 .. n - 1], dbeta[0 .. n - 1];
    ensures dx_def: LN_EXACT(\forall integer i; 0 <= i < n ==>
      dx[i] == ln_dx{Pre}(dy, gamma, x, mean, rstd, n, i));
    ensures dgamma_acc: LN_EXACT(\forall integer i; 0 <= i < n ==>
      dgamma[i] == ln_acc_prod(\old(dgamma[i]), \old(dy[i]), ln_xhat{Pre}(x, mean, rstd, i)));
    ensures dbeta_acc: LN_EXACT(\forall integer i; 0 <= i < n ==> dbeta[i] == \old(dbeta[i]) + \old(dy[i]));
*/
void layernorm_row_backward_f64(double *dx, double *dgamma, double *dbeta, const double *dy,
                                const double *x, const double *gamma, double mean, double rstd,
                                int n);

/* rows x n drivers. y, x, dx, dy: [rows*n]; mean, rstd: [rows]; gamma, beta, dgamma, dbeta: [n]. */
/*@ requires rows_nonneg: rows >= 0;
    requires n_pos: n >= 1;
    requires size_fits: rows * n <= INT_MAX;
    requires eps_pos: eps > 0;
    requires valid_x: \valid_read(x + (0 .. rows * n - 1));
    requires valid_gamma: \valid_read(gamma + (0 .. n - 1));
    requires valid_beta: \valid_read(beta + (0 .. n - 1));
    requires valid_y: \valid(y + (0 .. rows * n - 1));
    requires valid_mean: \valid(mean + (0 .. rows - 1));
    requires valid_rstd: \valid(rstd + (0 .. rows - 1));
    requires sep_out: \separated(y + (0 .. rows * n - 1), mean + (0 .. rows - 1), rstd + (0 .. rows - 1));
    requires sep_x: \separated(y + (0 .. rows * n - 1), mean + (0 .. rows - 1), rstd + (0 .. rows - 1),
                                x + (0 .. rows * n - 1));
    requires sep_gamma: \separated(y + (0 .. rows * n - 1), mean + (0 .. rows - 1), rstd + (0 .. rows - 1),
                                    gamma + (0 .. n - 1));
    requires sep_beta: \separated(y + (0 .. rows * n - 1), mean + (0 .. rows - 1), rstd + (0 .. rows - 1),
                                   beta + (0 .. n - 1));
    assigns y[0 .. rows * n - 1], mean[0 .. rows - 1], rstd[0 .. rows - 1];
    ensures y_rows: LN_ROWS(\forall integer r; 0 <= r < rows ==>
      ln_row_affine{Pre, Post}(y, mean, rstd, x, gamma, beta, r, ln_row_start(r, n), n));
    LN_ROWS_CLAUSE(ensures stats_rows: \forall integer r; 0 <= r < rows ==>
      mean[r] == ln_mean{Pre}(x + ln_row_start(r, n), n) &&
      rstd[r] == ln_rstd{Pre}(x + ln_row_start(r, n), n, eps);)
*/
void layernorm_forward_f32(float *y, float *mean, float *rstd, const float *x, const float *gamma,
                           const float *beta, int rows, int n, float eps);
/*@ requires rows_nonneg: rows >= 0;
    requires n_pos: n >= 1;
    requires size_fits: rows * n <= INT_MAX;
    requires eps_pos: eps > 0;
    requires valid_x: \valid_read(x + (0 .. rows * n - 1));
    requires valid_gamma: \valid_read(gamma + (0 .. n - 1));
    requires valid_beta: \valid_read(beta + (0 .. n - 1));
    requires valid_y: \valid(y + (0 .. rows * n - 1));
    requires valid_mean: \valid(mean + (0 .. rows - 1));
    requires valid_rstd: \valid(rstd + (0 .. rows - 1));
    requires sep_out: \separated(y + (0 .. rows * n - 1), mean + (0 .. rows - 1), rstd + (0 .. rows - 1));
    requires sep_x: \separated(y + (0 .. rows * n - 1), mean + (0 .. rows - 1), rstd + (0 .. rows - 1),
                                x + (0 .. rows * n - 1));
    requires sep_gamma: \separated(y + (0 .. rows * n - 1), mean + (0 .. rows - 1), rstd + (0 .. rows - 1),
                                    gamma + (0 .. n - 1));
    requires sep_beta: \separated(y + (0 .. rows * n - 1), mean + (0 .. rows - 1), rstd + (0 .. rows - 1),
                                   beta + (0 .. n - 1));
    assigns y[0 .. rows * n - 1], mean[0 .. rows - 1], rstd[0 .. rows - 1];
    ensures y_rows: LN_ROWS(\forall integer r; 0 <= r < rows ==>
      ln_row_affine{Pre, Post}(y, mean, rstd, x, gamma, beta, r, ln_row_start(r, n), n));
    LN_ROWS_CLAUSE(ensures stats_rows: \forall integer r; 0 <= r < rows ==>
      mean[r] == ln_mean{Pre}(x + ln_row_start(r, n), n) &&
      rstd[r] == ln_rstd{Pre}(x + ln_row_start(r, n), n, eps);)
*/
void layernorm_forward_f64(double *y, double *mean, double *rstd, const double *x,
                           const double *gamma, const double *beta, int rows, int n, double eps);
/*@ requires rows_nonneg: rows >= 0;
    requires n_pos: n >= 1;
    requires size_fits: rows * n <= INT_MAX;
    requires valid_dy: \valid_read(dy + (0 .. rows * n - 1));
    requires valid_x: \valid_read(x + (0 .. rows * n - 1));
    requires valid_gamma: \valid_read(gamma + (0 .. n - 1));
    requires valid_mean: \valid_read(mean + (0 .. rows - 1));
    requires valid_rstd: \valid_read(rstd + (0 .. rows - 1));
    requires valid_dx: \valid(dx + (0 .. rows * n - 1));
    requires valid_dgamma: \valid(dgamma + (0 .. n - 1));
    requires valid_dbeta: \valid(dbeta + (0 .. n - 1));
    requires sep_dy: \separated(dx + (0 .. rows * n - 1), dgamma + (0 .. n - 1), dbeta + (0 .. n - 1),
                                 dy + (0 .. rows * n - 1));
    requires sep_x: \separated(dx + (0 .. rows * n - 1), dgamma + (0 .. n - 1), dbeta + (0 .. n - 1),
                                x + (0 .. rows * n - 1));
    requires sep_gamma: \separated(dx + (0 .. rows * n - 1), dgamma + (0 .. n - 1), dbeta + (0 .. n - 1),
                                    gamma + (0 .. n - 1));
    requires sep_stats: \separated(dx + (0 .. rows * n - 1), dgamma + (0 .. n - 1), dbeta + (0 .. n - 1),
                                    mean + (0 .. rows - 1), rstd + (0 .. rows - 1));
    assigns dx[0 .. rows * n - 1], dgamma[0 .. n - 1], dbeta[0 .. n - 1];
*/
void layernorm_backward_f32(float *dx, float *dgamma, float *dbeta, const float *dy, const float *x,
                            const float *gamma, const float *mean, const float *rstd, int rows,
                            int n);
/*@ requires rows_nonneg: rows >= 0;
    requires n_pos: n >= 1;
    requires size_fits: rows * n <= INT_MAX;
    requires valid_dy: \valid_read(dy + (0 .. rows * n - 1));
    requires valid_x: \valid_read(x + (0 .. rows * n - 1));
    requires valid_gamma: \valid_read(gamma + (0 .. n - 1));
    requires valid_mean: \valid_read(mean + (0 .. rows - 1));
    requires valid_rstd: \valid_read(rstd + (0 .. rows - 1));
    requires valid_dx: \valid(dx + (0 .. rows * n - 1));
    requires valid_dgamma: \valid(dgamma + (0 .. n - 1));
    requires valid_dbeta: \valid(dbeta + (0 .. n - 1));
    requires sep_dy: \separated(dx + (0 .. rows * n - 1), dgamma + (0 .. n - 1), dbeta + (0 .. n - 1),
                                 dy + (0 .. rows * n - 1));
    requires sep_x: \separated(dx + (0 .. rows * n - 1), dgamma + (0 .. n - 1), dbeta + (0 .. n - 1),
                                x + (0 .. rows * n - 1));
    requires sep_gamma: \separated(dx + (0 .. rows * n - 1), dgamma + (0 .. n - 1), dbeta + (0 .. n - 1),
                                    gamma + (0 .. n - 1));
    requires sep_stats: \separated(dx + (0 .. rows * n - 1), dgamma + (0 .. n - 1), dbeta + (0 .. n - 1),
                                    mean + (0 .. rows - 1), rstd + (0 .. rows - 1));
    assigns dx[0 .. rows * n - 1], dgamma[0 .. n - 1], dbeta[0 .. n - 1];
*/
void layernorm_backward_f64(double *dx, double *dgamma, double *dbeta, const double *dy,
                            const double *x, const double *gamma, const double *mean,
                            const double *rstd, int rows, int n);

#endif
