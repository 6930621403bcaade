/* The seed's depth experiment (module 13, exercise 1): a stack of L layers tanh(Linear(d, d)),
 * with or without the residual, its input gradient, in float, double and certified (Arb balls).
 *
 *   plain:     h_{l+1} = tanh(W_l h_l + b_l)           l = 0 .. L-1,  h_0 = x
 *   residual:  h_{l+1} = h_l + tanh(W_l h_l + b_l)
 *   loss       L = sum_i h_L[i]
 *   backward   g_L = 1;  gz = g_{l+1} * (1 - a_l^2)  (a_l = tanh(z_l));
 *              g_l = W_l^T gz  (+ g_{l+1} with the residual)
 *   reported   mean_j |g_0[j]|
 *
 * Shapes: W: [L][d][d] row-major (W_l[i][j] multiplies h_l[j] into z_l[i]), b: [L][d], x: [d].
 * The parameters are float32 values (what the float network uses); the double kernel and the Arb
 * twin read the same values, so the twin gives the exact gradient of that float network. */
#ifndef RESNORM_TANH_STACK_H
#define RESNORM_TANH_STACK_H

#include <stdint.h>

typedef struct {
    int depth, d, residual;
    float *w; /* [depth * d * d] */
    float *b; /* [depth * d] */
    float *x; /* [d] */
} tanh_stack;

/* Deterministic parameters (nn.Linear's default init, uniform on [-1/sqrt(d), 1/sqrt(d)]) and
   x ~ N(0, 1), drawn from splitmix64 seeded with (seed << 32) | depth (see tanh_stack.c).
   The residual and plain stacks of one (seed, depth) share them: the comparison is paired.
   Returns 0, or -1 when out of memory. */
int tanh_stack_init(tanh_stack *s, int depth, int d, int residual, uint64_t seed);
void tanh_stack_free(tanh_stack *s);

/* splitmix64 (Steele, Lea, Flood 2014), and the two transforms the experiments use. */
uint64_t rn_splitmix64(uint64_t *state);
double rn_uniform01(uint64_t *state);  /* top 53 bits / 2^53: [0, 1) */
double rn_normal(uint64_t *state);     /* Box-Muller, cos branch, on two uniforms */

/* mean_j |dL/dx_j|, computed entirely in float32 / float64 (the double kernel on the same values). */
float tanh_stack_grad_f32(const tanh_stack *s);
double tanh_stack_grad_f64(const tanh_stack *s);

/* The same quantity certified: a ball [mid - rad, mid + rad] containing the exact real value
   (exact tanh, exact arithmetic on the float parameters). The working precision is doubled from
   128 bits until the ball's relative radius is below 2^-53 (Ziv), at most 8192 bits; *prec_used
   gets the final precision. Returns 0 when certified to 2^-53, 1 when the ball is wider (mid and
   rad still enclose the value), -1 when out of memory. */
int tanh_stack_grad_arb(const tanh_stack *s, double *mid, double *rad, long *prec_used);

#endif
