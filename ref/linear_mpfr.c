/* MPFR twin of ref/linear.c (contract: ref/linear_mpfr.h).
 *
 * Why the result is exact.  Every input is a binary64 value (53-bit significand), so a product of
 * two inputs has at most 106 significant bits and mpfr_mul into 106 bits is exact; binary64's
 * exponent range keeps it within MPFR's default one.  sum_exact (ref/exact_mpfr.h) sums the
 * products (and the bias) at a precision covering their whole exponent span plus carries: exact.
 * The only rounding is rn_round_mpfr's, once, to the output format.  No Ziv loop: certified by
 * construction (tests/test_linear.c also compares with an independent 4096-bit evaluation).
 */
#include "linear_mpfr.h"

#include <math.h>
#include <stdlib.h>

#include "exact_mpfr.h"

int lin_ws_init(lin_dot_ws *ws, size_t cap)
{
    ws->cap = cap + 1; /* + the addend */
    ws->t = malloc(ws->cap * sizeof *ws->t);
    ws->p = malloc(ws->cap * sizeof *ws->p);
    if (!ws->t || !ws->p) {
        free(ws->t), free(ws->p);
        return RN_TWIN_NOMEM;
    }
    for (size_t i = 0; i < ws->cap; i++)
        mpfr_init2(ws->p[i], 106);
    mpfr_init2(ws->v, 53);
    return RN_TWIN_OK;
}

void lin_ws_clear(lin_dot_ws *ws)
{
    for (size_t i = 0; i < ws->cap; i++)
        mpfr_clear(ws->p[i]);
    mpfr_clear(ws->v);
    free(ws->t), free(ws->p);
}

void lin_exact_dot(lin_dot_ws *ws, const double *a, size_t sa, const double *b, size_t sb, size_t n,
                   const double *c, double *S)
{
    size_t k = 0;
    int singular = 0;
    double s = 0.0;
    for (size_t i = 0; i < n; i++, k++) {
        double ai = a[i * sa], bi = b ? b[i * sb] : 1.0;
        mpfr_set_d(ws->p[k], ai, MPFR_RNDN);       /* exact */
        mpfr_mul_d(ws->p[k], ws->p[k], bi, MPFR_RNDN); /* exact: 106 bits (0·Inf: NaN) */
        singular |= !mpfr_number_p(ws->p[k]);
        ws->t[k] = ws->p[k];
        s += fabs(ai * bi);
    }
    if (c) {
        mpfr_set_d(ws->p[k], *c, MPFR_RNDN);
        singular |= !mpfr_number_p(ws->p[k]);
        ws->t[k] = ws->p[k];
        s += fabs(*c);
        k++;
    }
    if (singular) { /* NaN, or the Infs' sign (mpfr_sum: Inf - Inf = NaN), as IEEE */
        mpfr_set_prec(ws->v, 53);
        mpfr_sum(ws->v, ws->t, k, MPFR_RNDN);
    } else {
        sum_exact(ws->v, ws->t, k);
    }
    /* s: n + 1 roundings of relative size <= 2^-53 each, and n products that may underflow
       (absolute error <= 2^-1075 each): enlarge to an upper bound. */
    if (S)
        *S = s * (1.0 + (double)(k + 2) * 0x1p-53) + (double)k * 0x1p-1074;
}

int linear_forward_mpfr(double *y, const double *x, const double *w, const double *b, size_t rows,
                        size_t in, size_t out, rn_dtype d)
{
    lin_dot_ws ws;
    if (lin_ws_init(&ws, in) != RN_TWIN_OK)
        return RN_TWIN_NOMEM;
    for (size_t r = 0; r < rows; r++)
        for (size_t j = 0; j < out; j++) {
            lin_exact_dot(&ws, x + r * in, 1, w + j * in, 1, in, b ? b + j : NULL, NULL);
            y[r * out + j] = round_exact(ws.v, d);
        }
    lin_ws_clear(&ws);
    return RN_TWIN_OK;
}

int linear_backward_mpfr(double *dx, double *dw, double *db, const double *dy, const double *x,
                         const double *w, size_t rows, size_t in, size_t out, rn_dtype d)
{
    lin_dot_ws ws;
    if (lin_ws_init(&ws, rows > out ? rows : out) != RN_TWIN_OK)
        return RN_TWIN_NOMEM;
    for (size_t r = 0; r < rows; r++) /* dx[r, :] = dy[r, :]·W: column k of W */
        for (size_t k = 0; k < in; k++) {
            lin_exact_dot(&ws, dy + r * out, 1, w + k, in, out, NULL, NULL);
            dx[r * in + k] = round_exact(ws.v, d);
        }
    for (size_t j = 0; j < out; j++) /* dW[j, k] = column j of dy against column k of x */
        for (size_t k = 0; k < in; k++) {
            lin_exact_dot(&ws, dy + j, out, x + k, in, rows, NULL, NULL);
            dw[j * in + k] = round_exact(ws.v, d);
        }
    if (db)
        for (size_t j = 0; j < out; j++) {
            lin_exact_dot(&ws, dy + j, out, NULL, 0, rows, NULL, NULL);
            db[j] = round_exact(ws.v, d);
        }
    lin_ws_clear(&ws);
    return RN_TWIN_OK;
}
