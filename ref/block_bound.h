/* The a-priori error bound of the Transformer block and stack (specs/error-analysis-block.md):
 * per output element, a bound on |computed - exact| for a correct implementation that computes in
 * `compute` and rounds its outputs to `out` (want: the exact value rounded to f64).  Shapes and
 * arguments as ref/block_mpfr.h (a weight matrix's gradient output may be NULL: not evaluated);
 * returns RN_TWIN_*. */
#ifndef RESNORM_BLOCK_BOUND_H
#define RESNORM_BLOCK_BOUND_H

#include "attention_mpfr.h"
#include "block_mpfr.h"
#include "ffn_mpfr.h"

int block_forward_bound(double *y, const block_args *B, rn_dtype compute, rn_dtype out);
int block_backward_bound(const block_grads *g, const double *dy, const block_args *B,
                         rn_dtype compute, rn_dtype out);

/* The statistical tier (§5): the same graph with the upstream errors of every sum combined as
   independent mean-zero errors (root-sum-square) and the sums' own errors sqrt(k)·u·Σ|terms|
   (Higham & Mary), times BLOCK_STAT_LAMBDA.  Not a worst-case bound: a correct implementation
   exceeds it only with a tiny probability under that model. */
#define BLOCK_STAT_LAMBDA 8.0
int block_forward_bound_stat(double *y, const block_args *B, rn_dtype compute, rn_dtype out);
int block_backward_bound_stat(const block_grads *g, const double *dy, const block_args *B,
                              rn_dtype compute, rn_dtype out);

/* The same statistical tier for the sublayer ops alone, by the same evaluator (the block's
   attention and FFN stages; specs/error-analysis-attention.md and specs/error-analysis-ffn.md,
   "The statistical tier"): per-element bounds for `attention`, `attention_backward`, `ffn`,
   `ffn_backward` (shapes and arguments as ref/attention_bound.h and ref/ffn_bound.h; the parameter
   gradients' bounds may be NULL).  Returns RN_TWIN_OK or RN_TWIN_NOMEM. */
int attention_forward_bound_stat(double *by, const double *x, const attn_args *A, rn_dtype compute,
                                 rn_dtype out);
int attention_backward_bound_stat(double *bdx, double *bdin_w, double *bdin_b, double *bdout_w,
                                  double *bdout_b, const double *x, const double *dy,
                                  const attn_args *A, rn_dtype compute, rn_dtype out);
int ffn_forward_bound_stat(double *by, const double *x, const ffn_args *F, rn_dtype compute,
                           rn_dtype out);
int ffn_backward_bound_stat(double *bdx, double *bdw1, double *bdb1, double *bdw2, double *bdb2,
                            const double *x, const double *dy, const ffn_args *F, rn_dtype compute,
                            rn_dtype out);

/* The FFN forward's directional test "act" (specs/error-analysis-ffn.md, "The statistical tier"):
   per row r of x, D[r·d .. r·d + d - 1] the direction of y's error if the other GELU were used
   (gelu <-> gelu_tanh; F->act must be one of them), pi[r] the scale of D_r·(got_r - want_r) for a
   correct implementation under the tier's model, phi[r] its possibly systematic part.  Returns
   RN_TWIN_OK or RN_TWIN_NOMEM. */
int ffn_act_direction_stat(double *D, double *pi, double *phi, const double *x, const ffn_args *F,
                           rn_dtype compute, rn_dtype out);

/* The "act" test itself on got and want (y [rows, d]): pooled over the rows, z against λ =
   BLOCK_STAT_LAMBDA (flag: z > λ), the slope of the errors along D (1: the other GELU exactly) and
   its floor. */
typedef struct {
    double z, slope, floor;
    size_t used; /* rows tested (finite) */
} ffn_act_result;
int ffn_act_test(ffn_act_result *res, const double *got, const double *want, const double *x,
                 const ffn_args *F, rn_dtype compute, rn_dtype out);

#endif
