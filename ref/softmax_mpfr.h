/* Certified twin of ref/softmax.c (Arb balls + MPFR's final rounding): softmax over the last axis,
 * exact, rounded once.
 *
 * Inputs are doubles holding values of the input format; shapes x, mask (or NULL), dy: [rows, n].
 * For each row, z = x + mask (exact: a dyadic sum), and over the row's LIVE elements (z > -Inf):
 *   softmax_forward_mpfr:   y[i]  = exp(z[i]) / sum_k exp(z[k])       (0 where z[i] = -Inf)
 *   softmax_backward_mpfr:  dx[i] = y[i]·(dy[i] - sum_k dy[k]·y[k])   (0 where z[i] = -Inf)
 * each rounded once (RN-even, subnormals, +-Inf as IEEE) to format `out`.  A row with a NaN or +Inf
 * z, or with no live element (all -Inf: 0/0), is NaN; so is the backward of a row whose dy holds a
 * NaN or +-Inf (a convention: IEEE would give a mixture of NaN and +-Inf there).
 *
 * How it is certified (GUIDE.md, "Certified enclosures through deep compositions"): the whole row is
 * evaluated in Arb ball arithmetic (exp(z - m) with m = max z exact, the sum, the quotients, the dot
 * g and the products), every output's ball is converted to an MPFR interval (outward) and emitted
 * only when both ends round to the same value of `out`; otherwise the working precision doubles,
 * for the whole row (Ziv over the whole computation, 64 .. 65536 bits; past that
 * RN_TWIN_UNCERTIFIED, never a guess).  Exact cases that a ball never shrinks to: a row whose live z
 * are all equal (y = 1/L, dx = (L·dy[i] - Σdy)/L², rationals certified by exact division), dead
 * elements (exact 0), and, in the backward, an element whose dx is exactly 0 although its z differ
 * (detected exactly: Σ_{k: z[k] = t} (dy[k] - dy[i]) = 0 for every value t, by Lindemann–Weierstrass
 * the only way a real dx[i] vanishes) — tested only when a ball keeps straddling 0.
 * Returns RN_TWIN_OK, RN_TWIN_UNCERTIFIED or RN_TWIN_NOMEM. */
#ifndef RESNORM_SOFTMAX_MPFR_H
#define RESNORM_SOFTMAX_MPFR_H

#include <stddef.h>

#include "dtype.h"
#include "layernorm_mpfr.h" /* RN_TWIN_* */

int softmax_forward_mpfr(double *y, const double *x, const double *mask, size_t rows, size_t n,
                         rn_dtype out);
int softmax_backward_mpfr(double *dx, const double *x, const double *mask, const double *dy,
                          size_t rows, size_t n, rn_dtype out);

#endif
