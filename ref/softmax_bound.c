/* A-priori per-element error bounds of softmax and its backward, evaluating
 * specs/error-analysis-softmax.md (sections in brackets) on the data in binary64.  Quantities that
 * the bound needs from the exact result (y, g = Σ dy·y) are evaluated in binary64 with libm's exp
 * and enlarged by SLACK = 1 + 2^-30, far more than their evaluation error (relative < n·2^-50 for
 * n <= 2^16 and |z - m| <= 2^14) [§6]. */
#include "softmax_bound.h"

#include <math.h>
#include <stdlib.h>

#include "layernorm_mpfr.h" /* RN_TWIN_* */

#define SLACK (1.0 + 0x1p-30)
#define EVAL_SLACK (1.0 + 0x1p-40)

/* The per-row forward analysis: for every element the exact y (approximately, Yhi >= y), and the
   absolute bound E of a compute-format implementation (no output rounding) [§3-§4].  Returns 0,
   or 1 for a NaN row (E = 0, want NaN), or -1 where void (E = +Inf). */
typedef struct {
    double *z, *Y, *E;
    int *dead;
} row_ws;

static int forward_row(row_ws *W, const double *x, const double *mask, size_t n, rn_dtype compute)
{
    double u = rn_dtype_unit_roundoff(compute), eta = rn_dtype_underflow_eta(compute);
    double m = -INFINITY;
    size_t live = 0;
    for (size_t k = 0; k < n; k++) {
        double z = x[k] + (mask ? mask[k] : 0.0);
        if (isnan(z) || z == INFINITY)
            return 1;
        W->z[k] = z;
        W->dead[k] = z == -INFINITY;
        if (!W->dead[k]) {
            live++;
            m = fmax(m, z);
        }
    }
    if (live == 0)
        return 1;
    /* [§3] exponent perturbations zeta_k and the weights w_k >= y_k */
    double S = 0.0, D = 0.0;
    for (size_t k = 0; k < n; k++)
        if (!W->dead[k])
            S += exp(W->z[k] - m);
    S /= SLACK; /* <= sum exp(z_k - m), >= 1 */
    double gL = (double)(live - 1) * u / (1.0 - (double)(live - 1) * u);
    /* [§4] exp (1 ulp each, numerator and sum), the sum (gamma_{L-1}), the division or the
       reciprocal and the product (two roundings) */
    double relf = (1.0 + 2.0 * u) * (1.0 + u) * (1.0 + u) / ((1.0 - 2.0 * u) * (1.0 - gL)) - 1.0;
    for (size_t k = 0; k < n; k++) {
        if (W->dead[k]) {
            W->Y[k] = 0.0;
            continue;
        }
        double z = W->z[k], d = fabs(z - m);
        double zeta = ((mask ? u * fabs(z) : 0.0) + u * (d + u * (fabs(z) + fabs(m)))) * SLACK;
        W->E[k] = zeta; /* stash */
        W->Y[k] = fmin(1.0, exp(z - m) * SLACK / S);
        D += W->Y[k] * expm1(zeta);
    }
    D *= SLACK;
    if (!(D < 0.5) || gL >= 0.5)
        return -1;
    for (size_t k = 0; k < n; k++) {
        if (W->dead[k]) {
            W->E[k] = 0.0;
            continue;
        }
        double rel = exp(W->E[k]) / (1.0 - D) * (1.0 + relf) - 1.0;
        /* [§4] underflow: the exp results (1 ulp of a subnormal = 2 eta each) and the division */
        W->E[k] = (rel * W->Y[k] + 3.0 * eta + 2.0 * (double)n * eta * W->Y[k]) * EVAL_SLACK;
    }
    return 0;
}

/* [§5] output rounding and want's own rounding */
static double finish(double err, double V, rn_dtype compute, rn_dtype out)
{
    double outr = 0.0;
    if (out != compute) {
        if (V + err >= rn_dtype_max(out))
            return INFINITY;
        outr = rn_dtype_unit_roundoff(out) * (V + err) + rn_dtype_underflow_eta(out);
    }
    return (err + outr) * EVAL_SLACK + V * 0x1p-53 + 0x1p-1074;
}

static int ws_alloc(row_ws *W, size_t n)
{
    W->z = malloc((n + 1) * sizeof(double));
    W->Y = malloc((n + 1) * sizeof(double));
    W->E = malloc((n + 1) * sizeof(double));
    W->dead = malloc((n + 1) * sizeof(int));
    return W->z && W->Y && W->E && W->dead ? 0 : -1;
}

static void ws_free(row_ws *W) { free(W->z), free(W->Y), free(W->E), free(W->dead); }

int softmax_forward_bound(double *b, const double *x, const double *mask, size_t rows, size_t n,
                          rn_dtype compute, rn_dtype out)
{
    row_ws W;
    if (ws_alloc(&W, n) != 0) {
        ws_free(&W);
        return RN_TWIN_NOMEM;
    }
    for (size_t r = 0; r < rows; r++) {
        int st = forward_row(&W, x + r * n, mask ? mask + r * n : NULL, n, compute);
        for (size_t k = 0; k < n; k++)
            b[r * n + k] = st == 1 ? 0.0 : st < 0 ? INFINITY
                         : W.dead[k] ? 0.0 : finish(W.E[k], W.Y[k], compute, out);
    }
    ws_free(&W);
    return 0;
}

int softmax_backward_bound(double *b, const double *x, const double *mask, const double *dy,
                           size_t rows, size_t n, rn_dtype compute, rn_dtype out)
{
    double u = rn_dtype_unit_roundoff(compute), eta = rn_dtype_underflow_eta(compute);
    row_ws W;
    if (ws_alloc(&W, n) != 0) {
        ws_free(&W);
        return RN_TWIN_NOMEM;
    }
    for (size_t r = 0; r < rows; r++) {
        const double *d = dy + r * n;
        double *br = b + r * n;
        int st = forward_row(&W, x + r * n, mask ? mask + r * n : NULL, n, compute);
        int bad = 0;
        for (size_t k = 0; k < n; k++)
            bad |= !isfinite(d[k]);
        if (st == 1 || bad) { /* NaN row: the checker demands NaN */
            for (size_t k = 0; k < n; k++)
                br[k] = 0.0;
            continue;
        }
        if (st < 0) {
            for (size_t k = 0; k < n; k++)
                br[k] = INFINITY;
            continue;
        }
        /* [§7] g = Σ dy·y and the error of the computed g: forward errors E_k carried by |dy_k|,
           and the dot's gamma_L */
        double g = 0.0, ga = 0.0, G = 0.0, Gd = 0.0;
        size_t live = 0;
        for (size_t k = 0; k < n; k++) {
            if (W.dead[k])
                continue;
            live++;
            g += d[k] * W.Y[k];
            ga += fabs(d[k]) * W.Y[k];
            G += fabs(d[k]) * W.E[k];
            Gd += fabs(d[k]) * (W.Y[k] + W.E[k]);
        }
        double gL = (double)live * u / (1.0 - (double)live * u);
        G = (G + gL * Gd) * SLACK;
        double gslack = ga * (1.0 - 1.0 / SLACK) * 4.0; /* |g - exact g| (Y is within SLACK) */
        for (size_t k = 0; k < n; k++) {
            if (W.dead[k]) {
                br[k] = 0.0;
                continue;
            }
            double T = fabs(d[k] - g) + gslack;            /* >= |dy_k - g| */
            double Tt = G + u * (T + G);                   /* |t_k - (dy_k - g)| */
            double Y = W.Y[k], E = W.E[k];
            double err = E * (T + Tt) + Y * Tt + u * (Y + E) * (T + Tt) + eta;
            err *= EVAL_SLACK;
            double V = Y * T; /* >= |dx_k| */
            if (V + err >= rn_dtype_max(compute)) {
                br[k] = INFINITY;
                continue;
            }
            br[k] = finish(err, V, compute, out);
        }
    }
    ws_free(&W);
    return 0;
}
