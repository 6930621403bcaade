/* EVA harness for the softmax kernels (float and double): the row forward without a mask and with an
 * additive mask, each followed by the accumulating backward on that forward's output.  Run by
 * `make prove-softmax` (proofs/softmax.sh) with -DRESNORM_EVA and -warn-special-float non-finite: no
 * NaN/Inf/overflow for the ranges stated in specs/softmax.h (change both together):
 *   1 <= n <= EVA_NMAX;
 *   float:  |x| <= SM_X32, mask in [-SM_MASK32, 0]  (z = x + mask in [-SM_MASK32 - SM_X32, SM_X32]);
 *   double: |x| <= SM_X64, mask in [-SM_MASK64, 0];
 *   |dy| <= 1.0e4, dx from 0.
 * EVA is non-relational: it cannot see that d = z - m <= 0 (m = max z) nor that s = sum_k exp(d_k) >= 1.
 * It is given exactly these two facts (the second as s >= 1/2), as the assertions d_nonpos and
 * s_ge_half of ref/softmax.c (WP proves them; why they hold in IEEE arithmetic:
 * proofs/README-sublayers.md, "Softmax: the two facts EVA is given"); every other annotation EVA
 * reads is either decided by EVA or \true under -DRESNORM_EVA, and proofs/softmax.sh fails if any
 * property but these two is left unknown.
 * exp is Frama-C's libc model of expf/exp (ref/libm.c is given to EVA, not the WP assumption). */
#include "__fc_builtin.h"
#include "softmax.h"

#ifndef EVA_NMAX
#define EVA_NMAX 4096
#endif
/* Logits: +-88 in float is the range (expf overflows above 88.72 without the max subtracted);
   the mask reaches torch.finfo(float32).min / 1.13 (masks of -1.0e4, -1.0e9, -3.0e38 all inside). */
#define SM_X32 88.0f
#define SM_MASK32 3.0e38f
#define SM_X64 1.0e300
#define SM_MASK64 1.0e300

static float x32[EVA_NMAX], m32[EVA_NMAX], y32[EVA_NMAX], dy32[EVA_NMAX], dx32[EVA_NMAX];
static double x64[EVA_NMAX], m64[EVA_NMAX], y64[EVA_NMAX], dy64[EVA_NMAX], dx64[EVA_NMAX];

static void fill_f32(int n)
{
    for (int i = 0; i < n; i++) {
        x32[i] = Frama_C_float_interval(-SM_X32, SM_X32);
        m32[i] = Frama_C_float_interval(-SM_MASK32, 0.0f);
        dy32[i] = Frama_C_float_interval(-1.0e4f, 1.0e4f);
        dx32[i] = 0.0f;
    }
}

void eva_f32(int n)
{
    fill_f32(n);
    softmax_row_forward_f32(y32, x32, 0, n);
    softmax_row_backward_f32(dx32, y32, dy32, n);
    fill_f32(n);
    softmax_row_forward_f32(y32, x32, m32, n);
    softmax_row_backward_f32(dx32, y32, dy32, n);
}

static void fill_f64(int n)
{
    for (int i = 0; i < n; i++) {
        x64[i] = Frama_C_double_interval(-SM_X64, SM_X64);
        m64[i] = Frama_C_double_interval(-SM_MASK64, 0.0);
        dy64[i] = Frama_C_double_interval(-1.0e4, 1.0e4);
        dx64[i] = 0.0;
    }
}

void eva_f64(int n)
{
    fill_f64(n);
    softmax_row_forward_f64(y64, x64, 0, n);
    softmax_row_backward_f64(dx64, y64, dy64, n);
    fill_f64(n);
    softmax_row_forward_f64(y64, x64, m64, n);
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
