/* MPFR twin of ref/linear.c: the exact linear layer of the given inputs, rounded once.
 *
 * Inputs are doubles holding values of the input format (f64, f32, f16 or bf16: all are binary64
 * values).  Shapes (row-major): x [rows, in], w [out, in], b [out] or NULL, dy [rows, out].
 *   linear_forward_mpfr:   y[r, j]  = b[j] + sum_k x[r, k]·w[j, k]
 *   linear_backward_mpfr:  dx[r, k] = sum_j dy[r, j]·w[j, k]
 *                          dw[j, k] = sum_r dy[r, j]·x[r, k]
 *                          db[j]    = sum_r dy[r, j]            (skipped when db == NULL)
 * (the gradients from zero: not accumulated).  Every output is the exact real value rounded once
 * (RN-even, subnormals and overflow to +-Inf as IEEE) to format `out`, stored in a double.  The
 * exact value is a dyadic number: each product of two binary64 values is exact in 106 bits, and the
 * sum of the products is formed exactly (exact_mpfr.h's sum_exact, at a precision covering the
 * terms' exponent span), so every value is certified by construction, without a Ziv loop.
 * Computed by the ball route (Arb's block matrix product, each ball rounded once when it decides;
 * the exact dot above for each output that does not decide or that a non-finite input reaches):
 * the same bits as an exact dot per output, ~15x less CPU at GPT-2 width (ref/linear_mpfr.c).
 * An exact zero is +0.  Non-finite inputs give IEEE's class of the exact computation: NaN when a
 * term is NaN, 0·Inf, or Infs of both signs meet; otherwise +-Inf.
 * Returns RN_TWIN_OK or RN_TWIN_NOMEM (ref/layernorm_mpfr.h). */
#ifndef RESNORM_LINEAR_MPFR_H
#define RESNORM_LINEAR_MPFR_H

#include <stddef.h>

#include <mpfr.h>

#include "dtype.h"
#include "layernorm_mpfr.h" /* RN_TWIN_* */

int linear_forward_mpfr(double *y, const double *x, const double *w, const double *b, size_t rows,
                        size_t in, size_t out, rn_dtype d);
int linear_backward_mpfr(double *dx, double *dw, double *db, const double *dy, const double *x,
                         const double *w, size_t rows, size_t in, size_t out, rn_dtype d);

/* The twin through a chosen route; the two routes give the same bits (tests/test_linear.c).
   LIN_ROUTE_EXACT: an exact dot per output.  LIN_ROUTE_BALLS (what the twin uses): ball matrix
   products, the exact dot only where a ball does not decide or an input is non-finite.
   *n_exact (when n_exact != NULL) = how many outputs of the products (y; dx and d.weight) took the
   exact dot; d.bias always does (rows · out terms: as cheap as reading dy into balls). */
typedef enum { LIN_ROUTE_BALLS, LIN_ROUTE_EXACT } lin_route;
int linear_forward_route(double *y, const double *x, const double *w, const double *b, size_t rows,
                         size_t in, size_t out, rn_dtype d, lin_route route, size_t *n_exact);
int linear_backward_route(double *dx, double *dw, double *db, const double *dy, const double *x,
                          const double *w, size_t rows, size_t in, size_t out, rn_dtype d,
                          lin_route route, size_t *n_exact);

/* The exact dot product of the twin's exact route: v = c + sum_{i<n} a[i·sa]·b[i·sb] (b == NULL:
   all ones; c == NULL: no addend), exactly.  (The bound, ref/linear_bound.c, needs no exact dot.) */
typedef struct {
    mpfr_ptr *t;  /* term pointers */
    mpfr_t *p;    /* the terms (products at 106 bits) */
    size_t cap;
    mpfr_t v;     /* the result */
} lin_dot_ws;
int lin_ws_init(lin_dot_ws *ws, size_t cap);
void lin_ws_clear(lin_dot_ws *ws);
void lin_exact_dot(lin_dot_ws *ws, const double *a, size_t sa, const double *b, size_t sb, size_t n,
                   const double *c);

#endif
