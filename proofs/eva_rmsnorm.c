/* EVA harness for the RMSNorm row kernels (float and double, forward and backward, offset 0 and 1).
 * Run by `make prove-rmsnorm` (proofs/rmsnorm.mk) with -warn-special-float non-finite: every float
 * operation of the kernels must be free of NaN/Inf/overflow for all inputs in the ranges below.
 * These are the "EVA-checked input ranges" stated in specs/rmsnorm.h; change both together.
 *   1 <= n <= EVA_NMAX (4096), |x[i]|, |gamma[i]|, |dy[i]| <= 1.0e4, eps in [1.0e-12, 1],
 *   offset in {0, 1} (n drawn per power-of-two bucket, see main),
 *   backward: rstd from the forward kernel on the same x and eps; dgamma from 0.
 */
#include "__fc_builtin.h"
#include "rmsnorm.h"

#ifndef EVA_NMAX
#define EVA_NMAX 4096
#endif
#define XMAX 1.0e4

static float x32[EVA_NMAX], g32[EVA_NMAX], y32[EVA_NMAX];
static float dy32[EVA_NMAX], dx32[EVA_NMAX], dg32[EVA_NMAX];
static double x64[EVA_NMAX], g64[EVA_NMAX], y64[EVA_NMAX];
static double dy64[EVA_NMAX], dx64[EVA_NMAX], dg64[EVA_NMAX];

void eva_f32(int n, int offset)
{
    for (int i = 0; i < n; i++) {
        x32[i] = Frama_C_float_interval(-XMAX, XMAX);
        g32[i] = Frama_C_float_interval(-XMAX, XMAX);
        dy32[i] = Frama_C_float_interval(-XMAX, XMAX);
        dg32[i] = 0.0f;
    }
    float eps = Frama_C_float_interval(1.0e-12f, 1.0f);
    float rstd;
    rmsnorm_row_forward_f32(y32, &rstd, x32, g32, n, eps, offset);
    rmsnorm_row_backward_f32(dx32, dg32, dy32, x32, g32, rstd, n, offset);
}

void eva_f64(int n, int offset)
{
    for (int i = 0; i < n; i++) {
        x64[i] = Frama_C_double_interval(-XMAX, XMAX);
        g64[i] = Frama_C_double_interval(-XMAX, XMAX);
        dy64[i] = Frama_C_double_interval(-XMAX, XMAX);
        dg64[i] = 0.0;
    }
    double eps = Frama_C_double_interval(1.0e-12, 1.0);
    double rstd;
    rmsnorm_row_forward_f64(y64, &rstd, x64, g64, n, eps, offset);
    rmsnorm_row_backward_f64(dx64, dg64, dy64, x64, g64, rstd, n, offset);
}

/* Every n in [lo, hi] at once, the loops unrolled (the buckets, 13, every n in [1, EVA_NMAX], and
 * why: proofs/eva_buckets.h; the mean square ss/n is bounded by 2 * max x^2 within one); offset is
 * 0 or 1 (any int: the kernels only test offset != 0). */
static void bucket(int lo, int hi)
{
    if (hi > EVA_NMAX)
        hi = EVA_NMAX;
    if (lo > hi)
        return;
    int n = Frama_C_interval(lo, hi);
    int offset = Frama_C_interval(0, 1);
#ifndef EVA_ONLY_F64
    eva_f32(n, offset);
#endif
#ifndef EVA_ONLY_F32
    eva_f64(n, offset);
#endif
}

#include "eva_buckets.h"

int main(void)
{
    eva_every_bucket();
    return 0;
}
