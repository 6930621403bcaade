/* RMSNorm over the last dimension of row-major data: prototypes of the kernels in ref/rmsnorm.c.
 *
 * For one row x[0..n) with parameters gamma[0..n) and offset in {0, 1}:
 *   ms   = (1/n) sum_i x_i^2                 (mean of the squares: no mean is subtracted)
 *   rstd = 1 / sqrt(ms + eps)
 *   w_i  = gamma_i            (offset 0, Llama / T5 form)
 *        = 1 + gamma_i        (offset 1, Gemma form; the kernels compute 1 + gamma_i in the
 *                              compute precision: one rounding, covered by the error analysis)
 *   y_i  = x_i * rstd * w_i   (evaluated as (x_i * rstd) * w_i)
 * Backward, with xhat_i = x_i * rstd and g_i = dy_i * w_i:
 *   dx_i      = rstd * (g_i - xhat_i * mean_j(g_j * xhat_j))   (overwritten)
 *   dgamma_i += dy_i * xhat_i                                   (accumulated; for both offsets,
 *                                                                since d(1 + gamma)/dgamma = 1)
 * The rows x n drivers apply the row kernel to each row r (x + r*n, ...) and rstd[r].
 * The backward takes the forward's rstd (as in training), not a recomputed one.
 *
 * Written as plain loops in the style of ref/layernorm.c; the ACSL contracts (real model) are next to
 * the prototypes below; the order of operations is the one specs/error-analysis-rmsnorm.md
 * analyses (any order of the sum of squares is admitted there).
 * Exact reference: ref/rmsnorm_mpfr.h.  A-priori error bound: ref/rmsnorm_bound.h.
 */
#ifndef RESNORM_RMSNORM_H
#define RESNORM_RMSNORM_H

#include <limits.h>

#include "rmsnorm_model.h" /* the real-number model (ACSL logic functions) */
#include "fperr_rms.h"     /* the float-model ranges and error bounds (LN_EXACT / LN_FLOAT) */

/* Contracts (ACSL, proved by `make prove-rmsnorm`, proofs/rmsnorm.mk; see proofs/README-rmsnorm-residual.md).
 * In the proofs, float and double values are the real numbers they denote (WP's real model): the
 * functional postconditions state that the code implements the formulas above, in the stated order,
 * up to rounding (LN_EXACT: the real-model run); the rounding itself is bounded by EVA (no
 * NaN/Inf/overflow over the ranges below), by the float-model WP run on ref/rmsnorm.c (LN_FLOAT,
 * specs/fperr.h, specs/fperr_rms.h; proofs/rmsnorm_float.sh): for 1 <= n <= 4096, finite |x_i| <= 2^50,
 * finite eps in (0, 1] (requires fl_range), f32 and f64 forward,
 *   rms_row_sumsq_*: sumsq_err  |fl(sum x_i^2) - sum x_i^2| <= 2.001 n u sum x_i^2 + n eta'
 *                               (u = 2^-24, eta' = 2^-148; f64: 2^-53, 2^-1073)
 *   rmsnorm_row_forward_*: rstd_not_nan (ms >= 0 and finite: sqrt never sees a negative argument)
 * and by the analysis in specs/error-analysis-rmsnorm.md (the rstd interval R§3, y R§4, backward R§5).
 *
 * EVA-checked input ranges (proofs/eva_rmsnorm.c, -warn-special-float non-finite: 0 alarms),
 * for float and for double, forward and backward, offset 0 and 1:
 *   1 <= n <= 4096, |x[i]|, |gamma[i]|, |dy[i]| <= 1.0e4, eps in [1.0e-12, 1],
 *   backward: rstd as produced by the forward kernel on the same x and eps,
 *             dgamma[i] accumulated from 0 over one row.
 * Outside these ranges (e.g. |x| ~ 1.0e20 in float, whose square overflows) the sum may overflow.
 */

/* One row.  y, x, gamma: [n]; n >= 1; eps > 0; offset 0 or 1 (any non-zero value means 1). */
/*@ requires n_pos: n >= 1;
    requires eps_pos: eps > 0;
    requires valid_x: \valid_read(x + (0 .. n - 1));
    requires valid_gamma: \valid_read(gamma + (0 .. n - 1));
    requires valid_y: \valid(y + (0 .. n - 1));
    requires valid_rstd: \valid(rstd);
    requires sep_out: \separated(y + (0 .. n - 1), rstd);
    requires sep_x: \separated(y + (0 .. n - 1), rstd, x + (0 .. n - 1));
    requires sep_gamma: \separated(y + (0 .. n - 1), rstd, gamma + (0 .. n - 1));
    requires fl_range: LN_FLOAT(rms_in_range32(x, n) && \is_finite(eps) && eps <= 1);
    assigns y[0 .. n - 1], *rstd;
    ensures rstd_def: LN_EXACT(*rstd == rms_rstd{Pre}(x, n, eps));
    ensures y_def: LN_ROWMODEL(\forall integer i; 0 <= i < n ==>
      y[i] == rms_y{Pre}(x, gamma, n, eps, offset, i));
    ensures y_stats: LN_EXACT(\forall integer i; 0 <= i < n ==>
      y[i] == rms_y_v(\old(x[i]), *rstd, rms_w_v(\old(gamma[i]), offset)));
    ensures rstd_not_nan: LN_FLOAT(!\is_NaN(*rstd));
*/
void rmsnorm_row_forward_f32(float *y, float *rstd, const float *x, const float *gamma, int n,
                             float eps, int offset);
/*@ requires n_pos: n >= 1;
    requires eps_pos: eps > 0;
    requires valid_x: \valid_read(x + (0 .. n - 1));
    requires valid_gamma: \valid_read(gamma + (0 .. n - 1));
    requires valid_y: \valid(y + (0 .. n - 1));
    requires valid_rstd: \valid(rstd);
    requires sep_out: \separated(y + (0 .. n - 1), rstd);
    requires sep_x: \separated(y + (0 .. n - 1), rstd, x + (0 .. n - 1));
    requires sep_gamma: \separated(y + (0 .. n - 1), rstd, gamma + (0 .. n - 1));
    requires fl_range: LN_FLOAT(rms_in_range64(x, n) && \is_finite(eps) && eps <= 1);
    assigns y[0 .. n - 1], *rstd;
    ensures rstd_def: LN_EXACT(*rstd == rms_rstd{Pre}(x, n, eps));
    ensures y_def: LN_ROWMODEL(\forall integer i; 0 <= i < n ==>
      y[i] == rms_y{Pre}(x, gamma, n, eps, offset, i));
    ensures y_stats: LN_EXACT(\forall integer i; 0 <= i < n ==>
      y[i] == rms_y_v(\old(x[i]), *rstd, rms_w_v(\old(gamma[i]), offset)));
    ensures rstd_not_nan: LN_FLOAT(!\is_NaN(*rstd));
*/
void rmsnorm_row_forward_f64(double *y, double *rstd, const double *x, const double *gamma, int n,
                             double eps, int offset);

/* One row.  dx, dy, x, gamma, dgamma: [n]; rstd: the forward's value for this row. */
/*@ requires n_pos: n >= 1;
    requires valid_dy: \valid_read(dy + (0 .. n - 1));
    requires valid_x: \valid_read(x + (0 .. n - 1));
    requires valid_gamma: \valid_read(gamma + (0 .. n - 1));
    requires valid_dx: \valid(dx + (0 .. n - 1));
    requires valid_dgamma: \valid(dgamma + (0 .. n - 1));
    requires sep_out: \separated(dx + (0 .. n - 1), dgamma + (0 .. n - 1));
    requires sep_dy: \separated(dx + (0 .. n - 1), dgamma + (0 .. n - 1), dy + (0 .. n - 1));
    requires sep_x: \separated(dx + (0 .. n - 1), dgamma + (0 .. n - 1), x + (0 .. n - 1));
    requires sep_gamma: \separated(dx + (0 .. n - 1), dgamma + (0 .. n - 1), gamma + (0 .. n - 1));
    assigns dx[0 .. n - 1], dgamma[0 .. n - 1];
    ensures dx_def: LN_EXACT(\forall integer i; 0 <= i < n ==>
      dx[i] == rms_dx{Pre}(dy, gamma, x, rstd, offset, n, i));
    ensures dgamma_acc: LN_EXACT(\forall integer i; 0 <= i < n ==>
      dgamma[i] == rms_acc_prod(\old(dgamma[i]), \old(dy[i]), rms_xhat{Pre}(x, rstd, i)));
*/
void rmsnorm_row_backward_f32(float *dx, float *dgamma, const float *dy, const float *x,
                              const float *gamma, float rstd, int n, int offset);
/*@ requires n_pos: n >= 1;
    requires valid_dy: \valid_read(dy + (0 .. n - 1));
    requires valid_x: \valid_read(x + (0 .. n - 1));
    requires valid_gamma: \valid_read(gamma + (0 .. n - 1));
    requires valid_dx: \valid(dx + (0 .. n - 1));
    requires valid_dgamma: \valid(dgamma + (0 .. n - 1));
    requires sep_out: \separated(dx + (0 .. n - 1), dgamma + (0 .. n - 1));
    requires sep_dy: \separated(dx + (0 .. n - 1), dgamma + (0 .. n - 1), dy + (0 .. n - 1));
    requires sep_x: \separated(dx + (0 .. n - 1), dgamma + (0 .. n - 1), x + (0 .. n - 1));
    requires sep_gamma: \separated(dx + (0 .. n - 1), dgamma + (0 .. n - 1), gamma + (0 .. n - 1));
    assigns dx[0 .. n - 1], dgamma[0 .. n - 1];
    ensures dx_def: LN_EXACT(\forall integer i; 0 <= i < n ==>
      dx[i] == rms_dx{Pre}(dy, gamma, x, rstd, offset, n, i));
    ensures dgamma_acc: LN_EXACT(\forall integer i; 0 <= i < n ==>
      dgamma[i] == rms_acc_prod(\old(dgamma[i]), \old(dy[i]), rms_xhat{Pre}(x, rstd, i)));
*/
void rmsnorm_row_backward_f64(double *dx, double *dgamma, const double *dy, const double *x,
                              const double *gamma, double rstd, int n, int offset);

/* rows x n drivers. y, x, dx, dy: [rows*n]; rstd: [rows]; gamma, dgamma: [n]; rows*n <= INT_MAX.
 * Proved: memory safety, index arithmetic, assigns, termination (each row by the row contract).
 * The forward drivers (rows run, -DRESNORM_WP_ROWS: LN_ROWS_CLAUSE in specs/fperr.h; proofs/rmsnorm_float.sh):
 *   y_rows: every row r of y is (x * rstd[r]) * w of row r of x, with the stored rstd[r]
 *   (rms_row_y, specs/rmsnorm_model.h); from the row kernel's pointwise postcondition y_stats.
 *   rstd_rows: every stored rstd[r] is 1/sqrt(ms + eps) of row r of x as at entry (rms_rstd of
 *   x + r*n), from the row kernel's rstd_def and the induction lemmas of specs/rmsnorm_model.h
 *   (proofs/README.md "Rows composed: induction by script"). */
/*@ requires rows_nonneg: rows >= 0;
    requires n_pos: n >= 1;
    requires size_fits: rows * n <= INT_MAX;
    requires eps_pos: eps > 0;
    requires valid_x: \valid_read(x + (0 .. rows * n - 1));
    requires valid_gamma: \valid_read(gamma + (0 .. n - 1));
    requires valid_y: \valid(y + (0 .. rows * n - 1));
    requires valid_rstd: \valid(rstd + (0 .. rows - 1));
    requires sep_out: \separated(y + (0 .. rows * n - 1), rstd + (0 .. rows - 1));
    requires sep_x: \separated(y + (0 .. rows * n - 1), rstd + (0 .. rows - 1), x + (0 .. rows * n - 1));
    requires sep_gamma: \separated(y + (0 .. rows * n - 1), rstd + (0 .. rows - 1), gamma + (0 .. n - 1));
    assigns y[0 .. rows * n - 1], rstd[0 .. rows - 1];
    LN_ROWS_CLAUSE(ensures y_rows: \forall integer r; 0 <= r < rows ==>
      rms_row_y{Pre, Post}(y, rstd, x, gamma, r, rms_row_start(r, n), n, offset);)
    LN_ROWS_CLAUSE(ensures rstd_rows: \forall integer r; 0 <= r < rows ==>
      rstd[r] == rms_rstd{Pre}(x + rms_row_start(r, n), n, eps);)
*/
void rmsnorm_forward_f32(float *y, float *rstd, const float *x, const float *gamma, int rows,
                         int n, float eps, int offset);
/*@ requires rows_nonneg: rows >= 0;
    requires n_pos: n >= 1;
    requires size_fits: rows * n <= INT_MAX;
    requires eps_pos: eps > 0;
    requires valid_x: \valid_read(x + (0 .. rows * n - 1));
    requires valid_gamma: \valid_read(gamma + (0 .. n - 1));
    requires valid_y: \valid(y + (0 .. rows * n - 1));
    requires valid_rstd: \valid(rstd + (0 .. rows - 1));
    requires sep_out: \separated(y + (0 .. rows * n - 1), rstd + (0 .. rows - 1));
    requires sep_x: \separated(y + (0 .. rows * n - 1), rstd + (0 .. rows - 1), x + (0 .. rows * n - 1));
    requires sep_gamma: \separated(y + (0 .. rows * n - 1), rstd + (0 .. rows - 1), gamma + (0 .. n - 1));
    assigns y[0 .. rows * n - 1], rstd[0 .. rows - 1];
    LN_ROWS_CLAUSE(ensures y_rows: \forall integer r; 0 <= r < rows ==>
      rms_row_y{Pre, Post}(y, rstd, x, gamma, r, rms_row_start(r, n), n, offset);)
    LN_ROWS_CLAUSE(ensures rstd_rows: \forall integer r; 0 <= r < rows ==>
      rstd[r] == rms_rstd{Pre}(x + rms_row_start(r, n), n, eps);)
*/
void rmsnorm_forward_f64(double *y, double *rstd, const double *x, const double *gamma, int rows,
                         int n, double eps, int offset);
/*@ requires rows_nonneg: rows >= 0;
    requires n_pos: n >= 1;
    requires size_fits: rows * n <= INT_MAX;
    requires valid_dy: \valid_read(dy + (0 .. rows * n - 1));
    requires valid_x: \valid_read(x + (0 .. rows * n - 1));
    requires valid_gamma: \valid_read(gamma + (0 .. n - 1));
    requires valid_rstd: \valid_read(rstd + (0 .. rows - 1));
    requires valid_dx: \valid(dx + (0 .. rows * n - 1));
    requires valid_dgamma: \valid(dgamma + (0 .. n - 1));
    requires sep_out: \separated(dx + (0 .. rows * n - 1), dgamma + (0 .. n - 1));
    requires sep_dy: \separated(dx + (0 .. rows * n - 1), dgamma + (0 .. n - 1), dy + (0 .. rows * n - 1));
    requires sep_x: \separated(dx + (0 .. rows * n - 1), dgamma + (0 .. n - 1), x + (0 .. rows * n - 1));
    requires sep_gamma: \separated(dx + (0 .. rows * n - 1), dgamma + (0 .. n - 1), gamma + (0 .. n - 1));
    requires sep_rstd: \separated(dx + (0 .. rows * n - 1), dgamma + (0 .. n - 1), rstd + (0 .. rows - 1));
    assigns dx[0 .. rows * n - 1], dgamma[0 .. n - 1];
*/
void rmsnorm_backward_f32(float *dx, float *dgamma, const float *dy, const float *x,
                          const float *gamma, const float *rstd, int rows, int n, int offset);
/*@ requires rows_nonneg: rows >= 0;
    requires n_pos: n >= 1;
    requires size_fits: rows * n <= INT_MAX;
    requires valid_dy: \valid_read(dy + (0 .. rows * n - 1));
    requires valid_x: \valid_read(x + (0 .. rows * n - 1));
    requires valid_gamma: \valid_read(gamma + (0 .. n - 1));
    requires valid_rstd: \valid_read(rstd + (0 .. rows - 1));
    requires valid_dx: \valid(dx + (0 .. rows * n - 1));
    requires valid_dgamma: \valid(dgamma + (0 .. n - 1));
    requires sep_out: \separated(dx + (0 .. rows * n - 1), dgamma + (0 .. n - 1));
    requires sep_dy: \separated(dx + (0 .. rows * n - 1), dgamma + (0 .. n - 1), dy + (0 .. rows * n - 1));
    requires sep_x: \separated(dx + (0 .. rows * n - 1), dgamma + (0 .. n - 1), x + (0 .. rows * n - 1));
    requires sep_gamma: \separated(dx + (0 .. rows * n - 1), dgamma + (0 .. n - 1), gamma + (0 .. n - 1));
    requires sep_rstd: \separated(dx + (0 .. rows * n - 1), dgamma + (0 .. n - 1), rstd + (0 .. rows - 1));
    assigns dx[0 .. rows * n - 1], dgamma[0 .. n - 1];
*/
void rmsnorm_backward_f64(double *dx, double *dgamma, const double *dy, const double *x,
                          const double *gamma, const double *rstd, int rows, int n, int offset);

#endif
