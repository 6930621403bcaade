/* EVA harness for the linear kernels (float and double, forward then backward, and the two dot
 * helpers alone).  Run by `make prove-linear` (proofs/linear.sh) with -warn-special-float
 * non-finite: no NaN/Inf/overflow for all inputs in the ranges below, the ranges stated in
 * specs/linear.h (change both together):
 *   |x|, |W|, |b|, |dy| <= 1.0e4, and dx, dW, db accumulated from 0;
 *   drivers: 1 <= in <= EVA_NMAX (64: make prove-linear's setting), 1 <= out <= 4, 1 <= rows <= 2
 *   (every loop is unrolled: EVA is non-relational, so the sizes are kept small where they multiply);
 *   dot helpers alone: 1 <= n <= EVA_DOT_NMAX (4096) (a row of x against a row of W, and the strided column
 *   dot of the backward's dx at stride 1), so every dot product of a realistic width is covered:
 *   each partial sum is at most n·1.0e8 + 1.0e4 <= 4.1e11, far below FLT_MAX.
 */
#include "__fc_builtin.h"
#include "linear.h"

#ifndef EVA_NMAX
#define EVA_NMAX 64
#endif
#ifndef EVA_DOT_NMAX
#define EVA_DOT_NMAX 4096
#endif
#define EVA_OUT 4
#define EVA_ROWS 2

static float x32[EVA_ROWS * EVA_NMAX], w32[EVA_OUT * EVA_NMAX], b32[EVA_OUT], y32[EVA_ROWS * EVA_OUT],
    dy32[EVA_ROWS * EVA_OUT], dx32[EVA_ROWS * EVA_NMAX], dw32[EVA_OUT * EVA_NMAX], db32[EVA_OUT],
    a32[EVA_DOT_NMAX], v32[EVA_DOT_NMAX];
static double x64[EVA_ROWS * EVA_NMAX], w64[EVA_OUT * EVA_NMAX], b64[EVA_OUT], y64[EVA_ROWS * EVA_OUT],
    dy64[EVA_ROWS * EVA_OUT], dx64[EVA_ROWS * EVA_NMAX], dw64[EVA_OUT * EVA_NMAX], db64[EVA_OUT],
    a64[EVA_DOT_NMAX], v64[EVA_DOT_NMAX];

void eva_f32(int rows, int in, int out, int n, float m)
{
    /* The inputs fill the whole arrays, with constant loop bounds: a fill loop bounded by the
       interval size would leave one EVA state per possible size (trace partitioning of the
       unrolled loop) and every kernel would then be analysed once per size. */
    for (int i = 0; i < EVA_ROWS * EVA_NMAX; i++) {
        x32[i] = Frama_C_float_interval(-m, m);
        dx32[i] = 0.0f;
    }
    for (int i = 0; i < EVA_OUT * EVA_NMAX; i++) {
        w32[i] = Frama_C_float_interval(-m, m);
        dw32[i] = 0.0f;
    }
    for (int i = 0; i < EVA_OUT; i++) {
        b32[i] = Frama_C_float_interval(-m, m);
        db32[i] = 0.0f;
    }
    for (int i = 0; i < EVA_ROWS * EVA_OUT; i++)
        dy32[i] = Frama_C_float_interval(-m, m);
    linear_forward_f32(y32, x32, w32, b32, rows, in, out);
    linear_backward_f32(dx32, dw32, db32, dy32, x32, w32, rows, in, out);
    for (int i = 0; i < EVA_DOT_NMAX; i++) {
        a32[i] = Frama_C_float_interval(-m, m);
        v32[i] = Frama_C_float_interval(-m, m);
    }
    float acc = Frama_C_float_interval(-m, m);
    float s1 = linear_dot_f32(acc, a32, v32, n);
    float s2 = linear_sdot_f32(acc, a32, v32, 0, 1, n);
    (void)s1, (void)s2;
}

void eva_f64(int rows, int in, int out, int n, double m)
{
    /* The inputs fill the whole arrays, with constant loop bounds: a fill loop bounded by the
       interval size would leave one EVA state per possible size (trace partitioning of the
       unrolled loop) and every kernel would then be analysed once per size. */
    for (int i = 0; i < EVA_ROWS * EVA_NMAX; i++) {
        x64[i] = Frama_C_double_interval(-m, m);
        dx64[i] = 0.0;
    }
    for (int i = 0; i < EVA_OUT * EVA_NMAX; i++) {
        w64[i] = Frama_C_double_interval(-m, m);
        dw64[i] = 0.0;
    }
    for (int i = 0; i < EVA_OUT; i++) {
        b64[i] = Frama_C_double_interval(-m, m);
        db64[i] = 0.0;
    }
    for (int i = 0; i < EVA_ROWS * EVA_OUT; i++)
        dy64[i] = Frama_C_double_interval(-m, m);
    linear_forward_f64(y64, x64, w64, b64, rows, in, out);
    linear_backward_f64(dx64, dw64, db64, dy64, x64, w64, rows, in, out);
    for (int i = 0; i < EVA_DOT_NMAX; i++) {
        a64[i] = Frama_C_double_interval(-m, m);
        v64[i] = Frama_C_double_interval(-m, m);
    }
    double acc = Frama_C_double_interval(-m, m);
    double s1 = linear_dot_f64(acc, a64, v64, n);
    double s2 = linear_sdot_f64(acc, a64, v64, 0, 1, n);
    (void)s1, (void)s2;
}

int main(void)
{
    int rows = Frama_C_interval(1, EVA_ROWS), in = Frama_C_interval(1, EVA_NMAX),
        out = Frama_C_interval(1, EVA_OUT), n = Frama_C_interval(1, EVA_DOT_NMAX);
#ifndef EVA_ONLY_F64
    eva_f32(rows, in, out, n, 1.0e4f);
#endif
#ifndef EVA_ONLY_F32
    eva_f64(rows, in, out, n, 1.0e4);
#endif
    return 0;
}
