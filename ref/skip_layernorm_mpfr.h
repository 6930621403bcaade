/* MPFR twin of ref/skip_layernorm.c: the exact LayerNorm of the exact sum s = x + skip (+ bias),
 * rounded once, and the exact sum rounded once.
 *
 * Inputs are doubles holding values of the input format; bias may be NULL.  Every output element is
 * the exact real result rounded once (RN-even, subnormals and overflow as IEEE) to `out`:
 *   sum_i = s_i;  mean, rstd, y = LayerNorm(s) as in ref/layernorm_mpfr.h (same eps convention).
 * The sum is exact (ref/skip_layernorm_mpfr.c says why) and need not be a binary64 value: it is
 * handed to the LayerNorm twin as an exact MPFR number (layernorm_forward_mpfr_exact).
 * NaN/Inf: an element's class is the IEEE sum of its non-finite addends (NaN if any is NaN or both
 * infinities occur, else that infinity); finite addends are added exactly.  sum_i carries that class;
 * LayerNorm treats the element as an x_i of that class (ref/layernorm_mpfr.c).
 * Shapes: x, skip, y, sum: [rows*n]; gamma, beta, bias: [n]; mean, rstd: [rows].
 * Returns RN_TWIN_OK, RN_TWIN_UNCERTIFIED or RN_TWIN_NOMEM (ref/layernorm_mpfr.h). */
#ifndef RESNORM_SKIP_LAYERNORM_MPFR_H
#define RESNORM_SKIP_LAYERNORM_MPFR_H

#include <stddef.h>

#include "dtype.h"
#include "layernorm_mpfr.h"

int skip_layernorm_forward_mpfr(double *y, double *mean, double *rstd, double *sum,
                                const double *x, const double *skip, const double *gamma,
                                const double *beta, const double *bias, size_t rows, size_t n,
                                double eps, rn_dtype out);

#endif
