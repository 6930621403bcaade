/* A-priori, per-element error bounds for the feed-forward sublayer, forward and backward
 * (derivation: specs/error-analysis-ffn.md; conventions as ref/linear_bound.h).
 *
 * A correct implementation that computes in format `compute` (unit roundoff u: each linear as a dot
 * product in any order, with or without FMA; the activation with libm's erf/tanh/exp within the
 * accuracy stated in §3; dropout as specs/error-analysis-dropout.md; its intermediates z, a, h, dh,
 * dz possibly stored in format d when d is coarser than compute) and rounds its outputs to format d
 * returns `got` with |got - want| <= bound, want the twin's exact result rounded to f64.  A
 * non-finite input: every bound is 0 (the twin's outputs are NaN; the checker demands the class).
 * Where a partial sum may overflow the compute format or a result the output format, the bound is
 * +Inf (unconstrained).  Shapes and arguments as ref/ffn_mpfr.h.  Returns RN_TWIN_OK or
 * RN_TWIN_NOMEM. */
#ifndef RESNORM_FFN_BOUND_H
#define RESNORM_FFN_BOUND_H

#include "dtype.h"
#include "ffn_mpfr.h"

int ffn_forward_bound(double *by, const double *x, const ffn_args *F, rn_dtype compute, rn_dtype d);
/* bdb1, bdb2 may be NULL. */
int ffn_backward_bound(double *bdx, double *bdw1, double *bdb1, double *bdw2, double *bdb2,
                       const double *x, const double *dy, const ffn_args *F, rn_dtype compute,
                       rn_dtype d);

#endif
