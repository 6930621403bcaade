/* A-priori per-element error bounds for the linear layer, forward and backward.
 * Every formula is derived in specs/error-analysis-linear.md (section numbers in brackets); this
 * file only evaluates them on the data, with the conventions of ref/layernorm_bound.c: the bound is
 * on |got - want| with want the exact value rounded to f64, evaluated in binary64 and multiplied by
 * EVAL_SLACK, which covers the few roundings of the evaluation itself [§5]. */
#include "linear_bound.h"

#include <math.h>

#define EVAL_SLACK (1.0 + 0x1p-40)

/* Y >= |y| and S >= sum |t_i| for one dot product y = c + sum_i a_i·b_i (c optional, k terms), in
   binary64 without MPFR [§5]: s = the binary64 sum of the |t_i| and y^ = the binary64 dot product,
   in the order written; S = s·(1 + (k + 2)·2^-53) + k·2^-1074, Y = (|y^| + 1.01·k·2^-53·S)·(1 +
   2^-50) + k·2^-1074 (y^ is within gamma_k·S + k·2^-1074 of y by §2-§3 with u = 2^-53, and gamma_k
   <= 1.01·k·u while k·u <= 1/200).  Returns 1 when an input is NaN or +-Inf: then y is NaN or +-Inf
   (IEEE: 0·Inf = NaN, Inf - Inf = NaN), 0 otherwise. */
static int dot_enclosure(const double *a, size_t sa, const double *b, size_t sb, size_t n,
                         const double *c, double *Y, double *S)
{
    double s = 0.0, yhat = 0.0;
    int nonfinite = 0;
    size_t k = n + (c != NULL);
    for (size_t i = 0; i < n; i++) {
        double ai = a[i * sa], bi = b ? b[i * sb] : 1.0;
        nonfinite |= !isfinite(ai) || !isfinite(bi);
        double t = ai * bi;
        yhat += t;
        s += fabs(t);
    }
    if (c) {
        nonfinite |= !isfinite(*c);
        yhat += *c;
        s += fabs(*c);
    }
    /* |y^| <= s by induction (rounding is monotone): y^ is finite where s is */
    *S = s * (1.0 + (double)(k + 2) * 0x1p-53) + (double)k * 0x1p-1074;
    *Y = (double)k * 0x1p-53 > 1.0 / 200.0 ? INFINITY
       : (fabs(yhat) + 1.01 * (double)k * 0x1p-53 * *S) * (1.0 + 0x1p-50) + (double)k * 0x1p-1074;
    return nonfinite;
}

double lin_dot_bound(double Y, int nonfinite, double S, size_t m, size_t n_products,
                     rn_dtype compute, rn_dtype d)
{
    if (nonfinite) /* the exact value is NaN or +-Inf: the checker demands the same class */
        return 0.0;
    double u = rn_dtype_unit_roundoff(compute);
    if (isinf(Y) || isinf(S))
        return INFINITY;
    /* [§2] gamma_m·sum|t| for m terms, any order, with or without FMA (void past m·u = 1/2);
       [§3] each product may underflow: <= 2·eta per product */
    double mu = (double)m * u;
    if (mu > 0.5)
        return INFINITY;
    double err = mu / (1.0 - mu) * S + 2.0 * (double)n_products * rn_dtype_underflow_eta(compute);
    /* [§4] no partial sum may overflow the compute format (then the analysis is void) */
    if (S + err >= rn_dtype_max(compute))
        return INFINITY;
    /* output rounding when out != compute; the result must not overflow the output format */
    double outr = 0.0;
    if (d != compute) {
        if (Y + err >= rn_dtype_max(d))
            return INFINITY;
        outr = rn_dtype_unit_roundoff(d) * (Y + err) + rn_dtype_underflow_eta(d);
    }
    /* [§5] want = exact rounded to binary64 */
    return (err + outr) * EVAL_SLACK + Y * 0x1p-53 + 0x1p-1074;
}

int linear_forward_bound(double *by, const double *x, const double *w, const double *b,
                         size_t rows, size_t in, size_t out, rn_dtype compute, rn_dtype d)
{
    for (size_t r = 0; r < rows; r++)
        for (size_t j = 0; j < out; j++) {
            double Y, S;
            int nf = dot_enclosure(x + r * in, 1, w + j * in, 1, in, b ? b + j : NULL, &Y, &S);
            by[r * out + j] = lin_dot_bound(Y, nf, S, in + (b != NULL), in, compute, d);
        }
    return 0;
}

int linear_backward_bound(double *bdx, double *bdw, double *bdb, const double *dy, const double *x,
                          const double *w, size_t rows, size_t in, size_t out, rn_dtype compute,
                          rn_dtype d)
{
    double Y, S;
    int nf;
    for (size_t r = 0; r < rows; r++)
        for (size_t k = 0; k < in; k++) {
            nf = dot_enclosure(dy + r * out, 1, w + k, in, out, NULL, &Y, &S);
            bdx[r * in + k] = lin_dot_bound(Y, nf, S, out, out, compute, d);
        }
    for (size_t j = 0; j < out; j++)
        for (size_t k = 0; k < in; k++) {
            nf = dot_enclosure(dy + j, out, x + k, in, rows, NULL, &Y, &S);
            bdw[j * in + k] = lin_dot_bound(Y, nf, S, rows, rows, compute, d);
        }
    if (bdb)
        for (size_t j = 0; j < out; j++) { /* a plain sum: no product rounds [§6] */
            nf = dot_enclosure(dy + j, out, NULL, 0, rows, NULL, &Y, &S);
            bdb[j] = lin_dot_bound(Y, nf, S, rows > 1 ? rows - 1 : 0, 0, compute, d);
        }
    return 0;
}
