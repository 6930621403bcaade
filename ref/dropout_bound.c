/* A-priori per-element error bound of dropout (forward and backward are the same map), evaluating
 * specs/error-analysis-dropout.md (sections in brackets) on the data, in binary64, with EVAL_SLACK
 * covering the evaluation's own roundings [§4]. */
#include "dropout_bound.h"

#include <math.h>

#define EVAL_SLACK (1.0 + 0x1p-40)

int dropout_bound(double *b, const double *a, const double *mask, double p, size_t n,
                  rn_dtype compute, rn_dtype out)
{
    double u = rn_dtype_unit_roundoff(compute);
    /* [§2] rel = gamma_3 + 2u·p/(1 - p)·(1 + gamma_3): 1 - p, the division, the product, and p
       itself held in compute rather than as the input-dtype value (or the reverse) */
    double g3 = 3.0 * u / (1.0 - 3.0 * u);
    double rel = g3 + 2.0 * u * p / (1.0 - p) * (1.0 + g3);
    double inv = 1.0 / (1.0 - p) * (1.0 + 0x1p-50); /* >= 1/(1 - p) */
    for (size_t i = 0; i < n; i++) {
        if (mask[i] == 0.0 || !isfinite(a[i])) { /* exact zero, or NaN/Inf: exact class */
            b[i] = 0.0;
            continue;
        }
        double Y = fabs(a[i]) * inv; /* >= |y| */
        /* [§3] the product may underflow: eta of compute; the result must not overflow */
        double err = rel * Y + rn_dtype_underflow_eta(compute);
        if (Y + err >= rn_dtype_max(compute)) {
            b[i] = INFINITY;
            continue;
        }
        double outr = 0.0;
        if (out != compute) {
            if (Y + err >= rn_dtype_max(out)) {
                b[i] = INFINITY;
                continue;
            }
            outr = rn_dtype_unit_roundoff(out) * (Y + err) + rn_dtype_underflow_eta(out);
        }
        /* [§4] want = exact rounded to binary64 */
        b[i] = (err + outr) * EVAL_SLACK + Y * 0x1p-53 + 0x1p-1074;
    }
    return 0;
}
