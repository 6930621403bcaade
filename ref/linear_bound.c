/* A-priori per-element error bounds for the linear layer, forward and backward.
 * Every formula is derived in specs/error-analysis-linear.md (section numbers in brackets); this
 * file only evaluates them on the data, with the conventions of ref/layernorm_bound.c: the bound is
 * on |got - want| with want the exact value rounded to f64, evaluated in binary64 and multiplied by
 * EVAL_SLACK, which covers the few roundings of the evaluation itself [§5]. */
#include "linear_bound.h"

#include <math.h>

#include <mpfr.h>

#include "linear_mpfr.h"

#define EVAL_SLACK (1.0 + 0x1p-40)

/* Half the smallest subnormal of d: the largest error of one rounding into d's subnormal range. */
static double underflow_eta(rn_dtype d)
{
    switch (d) {
    case RN_F64: return 0x1p-1074; /* (2^-1075 is not a double: round up) */
    case RN_F32: return 0x1p-150;
    case RN_F16: return 0x1p-25;
    default:     return 0x1p-134; /* bf16 */
    }
}

double lin_dot_bound(mpfr_srcptr v, double S, size_t m, size_t n_products,
                     rn_dtype compute, rn_dtype d)
{
    if (!mpfr_number_p(v)) /* NaN or +-Inf: the checker demands the same class */
        return 0.0;
    double u = rn_dtype_unit_roundoff(compute);
    double Y = fabs(mpfr_get_d(v, MPFR_RNDA)); /* >= |exact| */
    if (isinf(Y) || isinf(S))
        return INFINITY;
    /* [§2] gamma_m·sum|t| for m terms, any order, with or without FMA (void past m·u = 1/2);
       [§3] each product may underflow: <= 2·eta per product */
    double mu = (double)m * u;
    if (mu > 0.5)
        return INFINITY;
    double err = mu / (1.0 - mu) * S + 2.0 * (double)n_products * underflow_eta(compute);
    /* [§4] no partial sum may overflow the compute format (then the analysis is void) */
    if (S + err >= rn_dtype_max(compute))
        return INFINITY;
    /* output rounding when out != compute; the result must not overflow the output format */
    double outr = 0.0;
    if (d != compute) {
        if (Y + err >= rn_dtype_max(d))
            return INFINITY;
        outr = rn_dtype_unit_roundoff(d) * (Y + err) + underflow_eta(d);
    }
    /* [§5] want = exact rounded to binary64 */
    return (err + outr) * EVAL_SLACK + Y * 0x1p-53 + 0x1p-1074;
}

int linear_forward_bound(double *by, const double *x, const double *w, const double *b,
                         size_t rows, size_t in, size_t out, rn_dtype compute, rn_dtype d)
{
    lin_dot_ws ws;
    if (lin_ws_init(&ws, in) != 0)
        return 2;
    for (size_t r = 0; r < rows; r++)
        for (size_t j = 0; j < out; j++) {
            double S;
            lin_exact_dot(&ws, x + r * in, 1, w + j * in, 1, in, b ? b + j : NULL, &S);
            by[r * out + j] = lin_dot_bound(ws.v, S, in + (b != NULL), in, compute, d);
        }
    lin_ws_clear(&ws);
    return 0;
}

int linear_backward_bound(double *bdx, double *bdw, double *bdb, const double *dy, const double *x,
                          const double *w, size_t rows, size_t in, size_t out, rn_dtype compute,
                          rn_dtype d)
{
    lin_dot_ws ws;
    if (lin_ws_init(&ws, rows > out ? rows : out) != 0)
        return 2;
    double S;
    for (size_t r = 0; r < rows; r++)
        for (size_t k = 0; k < in; k++) {
            lin_exact_dot(&ws, dy + r * out, 1, w + k, in, out, NULL, &S);
            bdx[r * in + k] = lin_dot_bound(ws.v, S, out, out, compute, d);
        }
    for (size_t j = 0; j < out; j++)
        for (size_t k = 0; k < in; k++) {
            lin_exact_dot(&ws, dy + j, out, x + k, in, rows, NULL, &S);
            bdw[j * in + k] = lin_dot_bound(ws.v, S, rows, rows, compute, d);
        }
    if (bdb)
        for (size_t j = 0; j < out; j++) { /* a plain sum: no product rounds [§6] */
            lin_exact_dot(&ws, dy + j, out, NULL, 0, rows, NULL, &S);
            bdb[j] = lin_dot_bound(ws.v, S, rows > 1 ? rows - 1 : 0, 0, compute, d);
        }
    lin_ws_clear(&ws);
    return 0;
}
