/* A-priori, per-element error bounds for multi-head self-attention, forward and backward
 * (derivation: specs/error-analysis-attention.md, whose sections are cited in brackets in
 * ref/attention_bound.c; conventions of ref/layernorm_bound.h).  A correct implementation computing
 * in `compute` (any summation order, with or without FMA; exp within the libm assumption of
 * specs/error-analysis-softmax.md §2), rounding its outputs to `out`, is within the bound of want
 * (the exact value rounded to f64).  Outputs that are NaN (a fully masked query): bound 0; where the
 * analysis is void (a softmax row whose perturbation is too large for the expansion, overflow):
 * +Inf.  Shapes as ref/attention_mpfr.h; any of the parameter-gradient bounds may be NULL.
 * Returns 0, or RN_TWIN_NOMEM. */
#ifndef RESNORM_ATTENTION_BOUND_H
#define RESNORM_ATTENTION_BOUND_H

#include "attention_mpfr.h"
#include "dtype.h"

int attention_forward_bound(double *by, const double *x, const attn_args *A, rn_dtype compute,
                            rn_dtype out);
int attention_backward_bound(double *bdx, double *bdin_w, double *bdin_b, double *bdout_w,
                             double *bdout_b, const double *x, const double *dy,
                             const attn_args *A, rn_dtype compute, rn_dtype out);

#endif
