/* EVA harness for the LayerNorm row kernels (float and double, forward and backward).
 * Run by `make prove` (proofs/prove.sh; once with -DEVA_ONLY_F32 and once with -DEVA_ONLY_F64, in
 * parallel) with -warn-special-float non-finite: every float operation
 * of the kernels must be free of NaN/Inf/overflow for all inputs in the ranges below.  These are
 * the "EVA-checked input ranges" stated in specs/layernorm.h; change both together.
 *   1 <= n <= EVA_NMAX (4096), |x[i]|, |gamma[i]|, |beta[i]|, |dy[i]| <= 1.0e4, eps in [1.0e-12, 1],
 *   (n drawn per power-of-two bucket, see main),
 *   backward: mean and rstd from the forward kernel on the same x and eps; dgamma, dbeta from 0.
 */
#include "__fc_builtin.h"
#include "layernorm.h"

#ifndef EVA_NMAX
#define EVA_NMAX 4096
#endif
#define XMAX 1.0e4

static float x32[EVA_NMAX], g32[EVA_NMAX], b32[EVA_NMAX], y32[EVA_NMAX];
static float dy32[EVA_NMAX], dx32[EVA_NMAX], dg32[EVA_NMAX], db32[EVA_NMAX];
static double x64[EVA_NMAX], g64[EVA_NMAX], b64[EVA_NMAX], y64[EVA_NMAX];
static double dy64[EVA_NMAX], dx64[EVA_NMAX], dg64[EVA_NMAX], db64[EVA_NMAX];

void eva_f32(int n)
{
    for (int i = 0; i < n; i++) {
        x32[i] = Frama_C_float_interval(-XMAX, XMAX);
        g32[i] = Frama_C_float_interval(-XMAX, XMAX);
        b32[i] = Frama_C_float_interval(-XMAX, XMAX);
        dy32[i] = Frama_C_float_interval(-XMAX, XMAX);
    }
    float eps = Frama_C_float_interval(1.0e-12f, 1.0f);
    float mean, rstd;
    layernorm_row_forward_f32(y32, &mean, &rstd, x32, g32, b32, n, eps);
    layernorm_row_backward_f32(dx32, dg32, db32, dy32, x32, g32, mean, rstd, n);
}

void eva_f64(int n)
{
    for (int i = 0; i < n; i++) {
        x64[i] = Frama_C_double_interval(-XMAX, XMAX);
        g64[i] = Frama_C_double_interval(-XMAX, XMAX);
        b64[i] = Frama_C_double_interval(-XMAX, XMAX);
        dy64[i] = Frama_C_double_interval(-XMAX, XMAX);
    }
    double eps = Frama_C_double_interval(1.0e-12, 1.0);
    double mean, rstd;
    layernorm_row_forward_f64(y64, &mean, &rstd, x64, g64, b64, n, eps);
    layernorm_row_backward_f64(dx64, dg64, db64, dy64, x64, g64, mean, rstd, n);
}

/* Every n in [lo, hi] at once, the loops unrolled; the buckets (13, every n in [1, EVA_NMAX]) and
 * why: proofs/eva_buckets.h. */
static void bucket(int lo, int hi)
{
    if (hi > EVA_NMAX)
        hi = EVA_NMAX;
    if (lo > hi)
        return;
    int n = Frama_C_interval(lo, hi);
#ifndef EVA_ONLY_F64
    eva_f32(n);
#endif
#ifndef EVA_ONLY_F32
    eva_f64(n);
#endif
}

#include "eva_buckets.h"

int main(void)
{
    eva_every_bucket();
    return 0;
}
