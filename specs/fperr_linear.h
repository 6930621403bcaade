/* Float-model vocabulary of the linear layer's dot products (ACSL only; nothing here is compiled): the
 * input ranges and the error bound that the float-model WP run (proofs/linear.sh, lin_float_run in
 * proofs/linear_float.sh) proves on linear_dot_f32/f64 and linear_sdot_f32/f64 of ref/linear.c itself.
 * The rounding symbols (rnd32, u32, fp_err, is_f32, ...) and the LN_EXACT / LN_FLOAT switch are those
 * of specs/fperr.h (proofs/README.md, "Two runs").
 *
 *   lin_adot(x, w, n)            : sum_{k<n} |x[k]·w[k]|, the S of specs/error-analysis-linear.md §2
 *                                  (without the accumulator's |acc|); lin_sadot: the same along a column.
 *   lin_in_range32/64(acc, x, w, n): 1 <= n <= 4096, acc finite with |acc| <= 2^100, every x[k], w[k]
 *                                  finite with |x[k]|, |w[k]| <= 2^50: no product (<= 2^100) and no
 *                                  partial sum (<= 4097 * 2^100 (1 + 2^-10) + 1 < 2^114) overflows, in
 *                                  float or double.  lin_sin_range32/64: the same for a[j], w[j·s + c].
 *   lin_err32(n, a) = (1 + 2^-11)·(n + 1)·u·a + n·2^-149, u = 2^-24 (lin_err64: u = 2^-53, n·2^-1074):
 *                                  the bound proved for a dot product of n terms started from acc, with
 *                                  a = |acc| + sum_k |x_k w_k|: m = n + 1 terms (acc is a term whose
 *                                  product is exact) at (1 + 2^-11)·u each, i.e. at most 1.0005·m·u·a,
 *                                  the m·u·S of error-analysis-linear.md §2 (Jeannerod-Rump) times
 *                                  1 + 2^-11 (which makes the induction close for m <= 4097), and 2·eta
 *                                  per product for the underflow (§3; eta = 2^-150, f64 2^-1075).
 * Every one is an explicit definition (no axiom).
 */
#ifndef RESNORM_FPERR_LINEAR_H
#define RESNORM_FPERR_LINEAR_H

#include "fperr.h"

/*@
  logic real lin_adot{L}(float *x, float *w, integer n) =
    n <= 0 ? 0.0 : lin_adot(x, w, n - 1) + \abs(x[n - 1] * w[n - 1]);
  logic real lin_adot{L}(double *x, double *w, integer n) =
    n <= 0 ? 0.0 : lin_adot(x, w, n - 1) + \abs(x[n - 1] * w[n - 1]);
  logic real lin_sadot{L}(float *a, float *w, integer c, integer s, integer n) =
    n <= 0 ? 0.0 : lin_sadot(a, w, c, s, n - 1) + \abs(a[n - 1] * w[(n - 1) * s + c]);
  logic real lin_sadot{L}(double *a, double *w, integer c, integer s, integer n) =
    n <= 0 ? 0.0 : lin_sadot(a, w, c, s, n - 1) + \abs(a[n - 1] * w[(n - 1) * s + c]);

  predicate lin_in_range32{L}(float acc, float *x, float *w, integer n) =
    1 <= n <= 4096 && \is_finite(acc) && \abs(acc) <= 0x1p100 &&
    \forall integer k; 0 <= k < n ==>
      \is_finite(x[k]) && \abs(x[k]) <= 0x1p50 && \is_finite(w[k]) && \abs(w[k]) <= 0x1p50;
  predicate lin_in_range64{L}(double acc, double *x, double *w, integer n) =
    1 <= n <= 4096 && \is_finite(acc) && \abs(acc) <= 0x1p100 &&
    \forall integer k; 0 <= k < n ==>
      \is_finite(x[k]) && \abs(x[k]) <= 0x1p50 && \is_finite(w[k]) && \abs(w[k]) <= 0x1p50;
  predicate lin_sin_range32{L}(float acc, float *a, float *w, integer c, integer s, integer n) =
    1 <= n <= 4096 && \is_finite(acc) && \abs(acc) <= 0x1p100 &&
    \forall integer j; 0 <= j < n ==>
      \is_finite(a[j]) && \abs(a[j]) <= 0x1p50 && \is_finite(w[j * s + c]) && \abs(w[j * s + c]) <= 0x1p50;
  predicate lin_sin_range64{L}(double acc, double *a, double *w, integer c, integer s, integer n) =
    1 <= n <= 4096 && \is_finite(acc) && \abs(acc) <= 0x1p100 &&
    \forall integer j; 0 <= j < n ==>
      \is_finite(a[j]) && \abs(a[j]) <= 0x1p50 && \is_finite(w[j * s + c]) && \abs(w[j * s + c]) <= 0x1p50;

  logic real lin_err32(integer n, real a) = (1 + 0x1p-11) * (n + 1) * 0x1p-24 * a + n * 0x1p-149;
  logic real lin_err64(integer n, real a) = (1 + 0x1p-11) * (n + 1) * 0x1p-53 * a + n * 0x1p-1074;
*/

#endif
