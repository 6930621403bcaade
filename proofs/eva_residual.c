/* EVA harness for the residual kernels (float and double, forward in place and out of place, and
 * the accumulating backward).  Run by `make prove-residual` (proofs/residual.mk) with
 * -warn-special-float non-finite: no NaN/Inf/overflow for all inputs in the ranges below, the
 * ranges stated in specs/residual.h (change both together):
 *   0 <= n <= EVA_NMAX (4096);
 *   (a) |x[i]|, |f[i]|, |dy[i]| <= 1.0e4, dx, df accumulated from values in the same range;
 *   (b) float: |x[i]|, |f[i]|, |dy[i]|, |dx[i]|, |df[i]| <= 0x1p126; double: <= 0x1p1022
 *       (the float-model range of specs/residual.h, fl_range: |a + b| <= 2^127 / 2^1023, no overflow).
 */
#include "__fc_builtin.h"
#include "residual.h"

#ifndef EVA_NMAX
#define EVA_NMAX 4096
#endif

static float x32[EVA_NMAX], f32[EVA_NMAX], y32[EVA_NMAX], dy32[EVA_NMAX], dx32[EVA_NMAX], df32[EVA_NMAX];
static double x64[EVA_NMAX], f64[EVA_NMAX], y64[EVA_NMAX], dy64[EVA_NMAX], dx64[EVA_NMAX], df64[EVA_NMAX];

void eva_f32(int n, float m)
{
    for (int i = 0; i < n; i++) {
        x32[i] = Frama_C_float_interval(-m, m);
        f32[i] = Frama_C_float_interval(-m, m);
        dy32[i] = Frama_C_float_interval(-m, m);
        dx32[i] = Frama_C_float_interval(-m, m);
        df32[i] = Frama_C_float_interval(-m, m);
    }
    residual_forward_f32(y32, x32, f32, n);   /* out of place */
    residual_forward_f32(x32, x32, f32, n);   /* in place, y == x */
    residual_backward_f32(dx32, df32, dy32, n);
}

void eva_f64(int n, double m)
{
    for (int i = 0; i < n; i++) {
        x64[i] = Frama_C_double_interval(-m, m);
        f64[i] = Frama_C_double_interval(-m, m);
        dy64[i] = Frama_C_double_interval(-m, m);
        dx64[i] = Frama_C_double_interval(-m, m);
        df64[i] = Frama_C_double_interval(-m, m);
    }
    residual_forward_f64(y64, x64, f64, n);
    residual_forward_f64(f64, x64, f64, n);   /* in place, y == f */
    residual_backward_f64(dx64, df64, dy64, n);
}

int main(void)
{
    int n = Frama_C_interval(0, EVA_NMAX);
#ifndef EVA_ONLY_F64
    eva_f32(n, 1.0e4f);
    eva_f32(n, 0x1p126f);
#endif
#ifndef EVA_ONLY_F32
    eva_f64(n, 1.0e4);
    eva_f64(n, 0x1p1022);
#endif
    return 0;
}
