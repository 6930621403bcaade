/* Float-model vocabulary of RMSNorm and the residual add (ACSL only; nothing here is compiled): the
 * input ranges and the error bounds that the float-model WP runs (proofs/rmsnorm_float.sh) prove on
 * ref/rmsnorm.c and ref/residual.c.  The rounding symbols (rnd32, u32, fp_err, is_f32, no_ovf32, ...)
 * and the LN_EXACT / LN_FLOAT switch are those of specs/fperr.h (proofs/README.md, "Two runs").
 *
 *   rms_in_range32/64(x, n): 1 <= n <= 4096, every x[k] finite with |x[k]| <= 2^50, so no square
 *                            (<= 2^100) and no partial sum of squares (<= 4096 * 2^100 (1 + ...)) overflows.
 *   rms_err_sumsq32(i, s)  : the float sum of i squares whose exact sum is s is within
 *                            2.001 * i * u * s + i * 2^-148 of s (f64: u = 2^-53, i * 2^-1073):
 *                            specs/error-analysis-rmsnorm.md R§2 (gamma_{n-1} for the additions, u per
 *                            square; the 2.001 charges the square's and the addition's u to every term,
 *                            the i * 2^-148 the underflow of the squares).
 *   rms_err_ms32(s, n)     : the mean square fl(fl(s)/n) is within 2.001 * (n + 1) * u * (s/n) + 2^-147
 *                            of s/n (f64: 2^-1072): the sum's bound divided by n, plus the division's
 *                            rounding (u relative, 2^-150 absolute when the quotient is subnormal).
 *   res_in_range32/64(a, n): every a[k], 0 <= k < n, finite with |a[k]| <= 2^126 (2^1022): the sum of two
 *                            such values is below the overflow threshold (specs/residual.h).
 *   res_err32/64(s)        : u * |s|, the error of the one rounding of an exact sum s of two floats
 *                            (no absolute term: a sum of two floats in the subnormal range is exact).
 */
#ifndef RESNORM_FPERR_RMS_H
#define RESNORM_FPERR_RMS_H

#include "fperr.h"

/*@
  predicate rms_in_range32{L}(float *x, integer n) =
    1 <= n <= 4096 && \forall integer k; 0 <= k < n ==> \is_finite(x[k]) && \abs(x[k]) <= 0x1p50;
  predicate rms_in_range64{L}(double *x, integer n) =
    1 <= n <= 4096 && \forall integer k; 0 <= k < n ==> \is_finite(x[k]) && \abs(x[k]) <= 0x1p50;

  logic real rms_err_sumsq32(integer i, real s) = 2.001 * i * 0x1p-24 * s + i * 0x1p-148;
  logic real rms_err_sumsq64(integer i, real s) = 2.001 * i * 0x1p-53 * s + i * 0x1p-1073;

  predicate res_in_range32{L}(float *a, integer n) =
    \forall integer k; 0 <= k < n ==> \is_finite(a[k]) && \abs(a[k]) <= 0x1p126;
  predicate res_in_range64{L}(double *a, integer n) =
    \forall integer k; 0 <= k < n ==> \is_finite(a[k]) && \abs(a[k]) <= 0x1p1022;
  logic real res_err32(real s) = 0x1p-24 * \abs(s);
  logic real res_err64(real s) = 0x1p-53 * \abs(s);
*/

#endif
