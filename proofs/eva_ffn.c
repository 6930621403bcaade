/* EVA harness for the feed-forward activation kernels (float and double): forward (act(z)) and
 * backward (g·act'(z)) for relu, gelu and gelu_tanh.  Run by `make prove-ffn` (proofs/ffn.sh) with
 * -warn-special-float non-finite: no NaN/Inf/overflow for |z| <= 1.0e4, |g| <= 1.0e4,
 * 0 <= n <= EVA_NMAX.  The linear and dropout kernels the drivers call have their own EVA runs
 * (prove-linear, prove-dropout).
 *
 * Frama-C's libc declares erff/erf and tanhf/tanh without a specification; this harness gives
 * them one (their range, a property of the real functions that libm keeps: |erf|, |tanh| <= 1 and
 * finite on finite arguments) — a stated assumption of this EVA run, listed in
 * proofs/libm-assumptions.md.  expf/exp keep Frama-C's own specification. */
#include "__fc_builtin.h"
#include "ffn.h"

/*@ requires finite_arg: \is_finite(x);
    assigns \result \from x;
    ensures range: \is_finite(\result) && -1.0 <= \result <= 1.0; */
float erff(float x);
/*@ requires finite_arg: \is_finite(x);
    assigns \result \from x;
    ensures range: \is_finite(\result) && -1.0 <= \result <= 1.0; */
double erf(double x);
/*@ requires finite_arg: \is_finite(x);
    assigns \result \from x;
    ensures range: \is_finite(\result) && -1.0 <= \result <= 1.0; */
float tanhf(float x);
/*@ requires finite_arg: \is_finite(x);
    assigns \result \from x;
    ensures range: \is_finite(\result) && -1.0 <= \result <= 1.0; */
double tanh(double x);

#ifndef EVA_NMAX
#define EVA_NMAX 16
#endif

static float z32[EVA_NMAX], a32[EVA_NMAX], g32[EVA_NMAX];
static double z64[EVA_NMAX], a64[EVA_NMAX], g64[EVA_NMAX];

void eva_f32(int n, ffn_act act)
{
    for (int i = 0; i < n; i++) {
        z32[i] = Frama_C_float_interval(-1.0e4f, 1.0e4f);
        g32[i] = Frama_C_float_interval(-1.0e4f, 1.0e4f);
    }
    ffn_act_forward_f32(a32, z32, act, n);
    ffn_act_backward_f32(g32, z32, act, n);
}

void eva_f64(int n, ffn_act act)
{
    for (int i = 0; i < n; i++) {
        z64[i] = Frama_C_double_interval(-1.0e4, 1.0e4);
        g64[i] = Frama_C_double_interval(-1.0e4, 1.0e4);
    }
    ffn_act_forward_f64(a64, z64, act, n);
    ffn_act_backward_f64(g64, z64, act, n);
}

int main(void)
{
    int n = Frama_C_interval(0, EVA_NMAX);
    ffn_act act = (ffn_act)Frama_C_interval(0, 2);
#ifndef EVA_ONLY_F64
    eva_f32(n, act);
#endif
#ifndef EVA_ONLY_F32
    eva_f64(n, act);
#endif
    return 0;
}
