/*
 * EVA harness for the fused skip + norm kernels (ref/skip_layernorm.c, ref/skip_rmsnorm.c), forward
 * then backward on the forward's sum, mean and rstd, through the rows x n drivers they call.
 * Run by `make prove-skip` (proofs/skip.sh; once with -DEVA_ONLY_F32 and once with -DEVA_ONLY_F64,
 * EVA_NMAX = 64, -eva-precision 3: at the default precision EVA loses the range of sum[1 ..] inside the
 * first residual add, and every alarm then follows from that; proofs/README-skip.md) with
 * -warn-special-float non-finite: every float operation of the kernels and of their callees
 * (residual add, bias add, LayerNorm / RMSNorm rows, the dbias column sums) must be free of
 * NaN/Inf/overflow for all inputs in these ranges (stated in proofs/README-skip.md and the README's
 * proof table; change them together):
 *   1 <= rows <= 2, 1 <= n <= EVA_NMAX (n per power-of-two bucket, as in proofs/eva_layernorm.c; the
 *   row kernels alone are checked to n = 4096 by proofs/eva_layernorm.c and proofs/eva_rmsnorm.c),
 *   |x|, |skip|, |bias| <= 3.0e3 (so |x + skip + bias| <= 9.0e3 <= 1.0e4, the norms' checked range),
 *   |gamma|, |beta|, |dy| <= 1.0e4, eps in [1.0e-12, 1], RMSNorm offset 0 or 1, with and without bias
 *   (chosen anew before each forward call: EVA then splits its state by the behaviors no_bias /
 *   with_bias; one choice for both calls left with_bias's valid_bias unknown at the second);
 *   dgamma, dbeta from 0 (the backward accumulates into them).
 */
#include "__fc_builtin.h"
#include "skip_layernorm.h"
#include "skip_rmsnorm.h"

#ifndef EVA_NMAX
#define EVA_NMAX 4096
#endif
#define RMAX 2
#define SMAX 3.0e3
#define XMAX 1.0e4

static float x32[RMAX * EVA_NMAX], s32[RMAX * EVA_NMAX], sum32[RMAX * EVA_NMAX], y32[RMAX * EVA_NMAX];
static float dy32[RMAX * EVA_NMAX], dx32[RMAX * EVA_NMAX];
static float g32[EVA_NMAX], b32[EVA_NMAX], bias32[EVA_NMAX], dg32[EVA_NMAX], db32[EVA_NMAX], dbias32[EVA_NMAX];
static float mean32[RMAX], rstd32[RMAX];
static double x64[RMAX * EVA_NMAX], s64[RMAX * EVA_NMAX], sum64[RMAX * EVA_NMAX], y64[RMAX * EVA_NMAX];
static double dy64[RMAX * EVA_NMAX], dx64[RMAX * EVA_NMAX];
static double g64[EVA_NMAX], b64[EVA_NMAX], bias64[EVA_NMAX], dg64[EVA_NMAX], db64[EVA_NMAX], dbias64[EVA_NMAX];
static double mean64[RMAX], rstd64[RMAX];

static void eva_f32(int rows, int n)
{
    for (int k = 0; k < rows * n; k++) {
        x32[k] = Frama_C_float_interval(-SMAX, SMAX);
        s32[k] = Frama_C_float_interval(-SMAX, SMAX);
        dy32[k] = Frama_C_float_interval(-XMAX, XMAX);
    }
    for (int i = 0; i < n; i++) {
        g32[i] = Frama_C_float_interval(-XMAX, XMAX);
        b32[i] = Frama_C_float_interval(-XMAX, XMAX);
        bias32[i] = Frama_C_float_interval(-SMAX, SMAX);
        dg32[i] = 0.0f;
        db32[i] = 0.0f;
    }
    float eps = Frama_C_float_interval(1.0e-12f, 1.0f);
    const float *bias = Frama_C_nondet(0, 1) ? bias32 : (const float *)0;
    skip_layernorm_forward_f32(y32, mean32, rstd32, sum32, x32, s32, g32, b32, bias, rows, n, eps);
    skip_layernorm_backward_f32(dx32, dbias32, dg32, db32, dy32, sum32, g32, mean32, rstd32, rows, n);
    for (int i = 0; i < n; i++)
        dg32[i] = 0.0f;
    int offset = Frama_C_interval(0, 1);
    bias = Frama_C_nondet(0, 1) ? bias32 : (const float *)0;
    skip_rmsnorm_forward_f32(y32, rstd32, sum32, x32, s32, g32, bias, rows, n, eps, offset);
    skip_rmsnorm_backward_f32(dx32, dbias32, dg32, dy32, sum32, g32, rstd32, rows, n, offset);
}

static void eva_f64(int rows, int n)
{
    for (int k = 0; k < rows * n; k++) {
        x64[k] = Frama_C_double_interval(-SMAX, SMAX);
        s64[k] = Frama_C_double_interval(-SMAX, SMAX);
        dy64[k] = Frama_C_double_interval(-XMAX, XMAX);
    }
    for (int i = 0; i < n; i++) {
        g64[i] = Frama_C_double_interval(-XMAX, XMAX);
        b64[i] = Frama_C_double_interval(-XMAX, XMAX);
        bias64[i] = Frama_C_double_interval(-SMAX, SMAX);
        dg64[i] = 0.0;
        db64[i] = 0.0;
    }
    double eps = Frama_C_double_interval(1.0e-12, 1.0);
    const double *bias = Frama_C_nondet(0, 1) ? bias64 : (const double *)0;
    skip_layernorm_forward_f64(y64, mean64, rstd64, sum64, x64, s64, g64, b64, bias, rows, n, eps);
    skip_layernorm_backward_f64(dx64, dbias64, dg64, db64, dy64, sum64, g64, mean64, rstd64, rows, n);
    for (int i = 0; i < n; i++)
        dg64[i] = 0.0;
    int offset = Frama_C_interval(0, 1);
    bias = Frama_C_nondet(0, 1) ? bias64 : (const double *)0;
    skip_rmsnorm_forward_f64(y64, rstd64, sum64, x64, s64, g64, bias, rows, n, eps, offset);
    skip_rmsnorm_backward_f64(dx64, dbias64, dg64, dy64, sum64, g64, rstd64, rows, n, offset);
}

/* n per power-of-two bucket (EVA is non-relational: see proofs/eva_layernorm.c); rows 1 and 2 apart. */
static void bucket(int lo, int hi)
{
    if (hi > EVA_NMAX)
        hi = EVA_NMAX;
    if (lo > hi)
        return;
    int n = Frama_C_interval(lo, hi);
    for (int rows = 1; rows <= RMAX; rows++) {
#ifndef EVA_ONLY_F64
        eva_f32(rows, n);
#endif
#ifndef EVA_ONLY_F32
        eva_f64(rows, n);
#endif
    }
}

int main(void)
{
    for (int k = 1; k <= EVA_NMAX; k *= 2)
        bucket(k, 2 * k - 1);
    return 0;
}
