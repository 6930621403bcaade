/* EVA harness for the softmax kernels (float and double; forward with and without a mask, then the
 * accumulating backward on the forward's output).  Run by `make prove-softmax` (proofs/softmax.sh)
 * with -warn-special-float non-finite: no NaN/Inf/overflow for the ranges stated in specs/softmax.h
 * (change both together): 1 <= n <= EVA_NMAX; no mask; |x| <= 5 (float and double); |dy| <= 1.0e4,
 * dx from 0.  Why so small: EVA is non-relational.  It bounds z - m (m = max z) by the width of
 * z's interval rather than by 0, each exp(z - m) by exp(10) rather than 1, and the sum s from below
 * by n·exp(-10) rather than 1; |x| <= 5 keeps every such over-approximation finite (s <= 4096·e^10,
 * y <= e^10/e^-10, dx <= 1.0e4·(1 + 4096)·y·... < 1e17).  The real property for logits of any size
 * (z - m <= 0, so exp(z - m) <= 1 and s >= 1: no overflow for any finite logits, e.g. +-88 in
 * f32) follows from the WP-proved max and sum (m == sm_max, s == sm_sum) but is not machine-checked
 * in floating point here.
 * exp is Frama-C's libc model of expf/exp (ref/libm.c is given to EVA, not the WP assumption). */
#include "__fc_builtin.h"
#include "softmax.h"

#ifndef EVA_NMAX
#define EVA_NMAX 4096
#endif

static float x32[EVA_NMAX], y32[EVA_NMAX], dy32[EVA_NMAX], dx32[EVA_NMAX];
static double x64[EVA_NMAX], y64[EVA_NMAX], dy64[EVA_NMAX], dx64[EVA_NMAX];

void eva_f32(int n)
{
    for (int i = 0; i < n; i++) {
        x32[i] = Frama_C_float_interval(-5.0f, 5.0f);
        dy32[i] = Frama_C_float_interval(-1.0e4f, 1.0e4f);
        dx32[i] = 0.0f;
    }
    softmax_row_forward_f32(y32, x32, 0, n);
    softmax_row_backward_f32(dx32, y32, dy32, n);
}

void eva_f64(int n)
{
    for (int i = 0; i < n; i++) {
        x64[i] = Frama_C_double_interval(-5.0, 5.0);
        dy64[i] = Frama_C_double_interval(-1.0e4, 1.0e4);
        dx64[i] = 0.0;
    }
    softmax_row_forward_f64(y64, x64, 0, n);
    softmax_row_backward_f64(dx64, y64, dy64, n);
}

int main(void)
{
    int n = Frama_C_interval(1, EVA_NMAX);
#ifndef EVA_ONLY_F64
    eva_f32(n);
#endif
#ifndef EVA_ONLY_F32
    eva_f64(n);
#endif
    return 0;
}
