/* EVA harness for the dropout kernels (float and double; forward out of place and in place, the
 * accumulating backward).  Run by `make prove-dropout` (proofs/dropout.sh) with
 * -warn-special-float non-finite: no NaN/Inf/overflow for the ranges stated in specs/dropout.h
 * (change both together): 0 <= n <= EVA_NMAX (1024 in make prove-dropout); |x|, |dy|, |dx| <= 1.0e4; mask[i] in {0, 1};
 * p in [0, 0.999], scale = dropout_scale_*(p) (so 1 <= scale <= 1000, up to rounding). */
#include "__fc_builtin.h"
#include "dropout.h"

#ifndef EVA_NMAX
#define EVA_NMAX 4096
#endif

static float x32[EVA_NMAX], m32[EVA_NMAX], y32[EVA_NMAX], dy32[EVA_NMAX], dx32[EVA_NMAX];
static double x64[EVA_NMAX], m64[EVA_NMAX], y64[EVA_NMAX], dy64[EVA_NMAX], dx64[EVA_NMAX];

void eva_f32(int n)
{
    for (int i = 0; i < n; i++) {
        x32[i] = Frama_C_float_interval(-1.0e4f, 1.0e4f);
        dy32[i] = Frama_C_float_interval(-1.0e4f, 1.0e4f);
        dx32[i] = Frama_C_float_interval(-1.0e4f, 1.0e4f);
        m32[i] = Frama_C_nondet(0, 1) ? 1.0f : 0.0f;
    }
    float s = dropout_scale_f32(Frama_C_float_interval(0.0f, 0.999f));
    dropout_forward_f32(y32, x32, m32, s, n);
    dropout_forward_f32(x32, x32, m32, s, n); /* in place */
    dropout_backward_f32(dx32, dy32, m32, s, n);
}

void eva_f64(int n)
{
    for (int i = 0; i < n; i++) {
        x64[i] = Frama_C_double_interval(-1.0e4, 1.0e4);
        dy64[i] = Frama_C_double_interval(-1.0e4, 1.0e4);
        dx64[i] = Frama_C_double_interval(-1.0e4, 1.0e4);
        m64[i] = Frama_C_nondet(0, 1) ? 1.0 : 0.0;
    }
    double s = dropout_scale_f64(Frama_C_double_interval(0.0, 0.999));
    dropout_forward_f64(y64, x64, m64, s, n);
    dropout_forward_f64(x64, x64, m64, s, n);
    dropout_backward_f64(dx64, dy64, m64, s, n);
}

int main(void)
{
    int n = Frama_C_interval(0, EVA_NMAX);
#ifndef EVA_ONLY_F64
    eva_f32(n);
#endif
#ifndef EVA_ONLY_F32
    eva_f64(n);
#endif
    return 0;
}
