/* MPFR twin of ref/residual.c: the exact residual add of the given inputs, rounded once.
 *
 * Inputs are doubles holding values of the input format (f64, f32, f16 or bf16: all are binary64
 * values).  Every output element is the exact real result rounded once (RN-even, subnormals and
 * overflow to +-Inf as IEEE) to format `out`, stored in a double:
 *   residual_forward_mpfr:   y_i = x_i + f_i
 *   residual_backward_mpfr:  dx_i = dy_i, df_i = dy_i   (the gradient from zero: not accumulated)
 * NaN and Inf follow IEEE addition (NaN + a = NaN, Inf + finite = Inf, Inf + -Inf = NaN); an exact
 * zero sum is +0 unless both addends are -0 (IEEE, round-to-nearest).
 * The sum is formed exactly (ref/residual_mpfr.c says why the precision suffices), so every value
 * is certified by construction: no Ziv loop is needed.
 * Shapes: every array [n] (any shape, flattened).  Returns RN_TWIN_OK (ref/layernorm_mpfr.h's
 * status codes, shared by every twin). */
#ifndef RESNORM_RESIDUAL_MPFR_H
#define RESNORM_RESIDUAL_MPFR_H

#include <stddef.h>

#include "dtype.h"
#include "layernorm_mpfr.h" /* RN_TWIN_* */

int residual_forward_mpfr(double *y, const double *x, const double *f, size_t n, rn_dtype out);
int residual_backward_mpfr(double *dx, double *df, const double *dy, size_t n, rn_dtype out);

/* The exact sum x + f into s, initialised by residual_exact_init (the bound uses it too).
   Returns MPFR's ternary value: 0 (exact) for all binary64 x, f. */
void residual_exact_init(mpfr_t s);
int residual_exact_sum(mpfr_t s, double x, double f);

#endif
