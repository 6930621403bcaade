/* The a-priori error bound of the Transformer block and stack (specs/error-analysis-block.md):
 * per output element, a bound on |computed - exact| for a correct implementation that computes in
 * `compute` and rounds its outputs to `out` (want: the exact value rounded to f64).  Shapes and
 * arguments as ref/block_mpfr.h; returns RN_TWIN_*. */
#ifndef RESNORM_BLOCK_BOUND_H
#define RESNORM_BLOCK_BOUND_H

#include "block_mpfr.h"

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

#endif
