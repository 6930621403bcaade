/* Float and double kernels of the depth experiment (ref/tanh_stack.h), and its parameters.
 * Plain C, IEEE evaluation in the order written: each dot product is summed j = 0 .. d-1 starting
 * from the bias, as a naive nn.Linear would; tanh is libm's tanhf / tanh. */
#include "tanh_stack.h"

#include <math.h>
#include <stdlib.h>

uint64_t rn_splitmix64(uint64_t *state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

double rn_uniform01(uint64_t *state)
{
    return (double)(rn_splitmix64(state) >> 11) * 0x1p-53;
}

/* sqrt(-2 ln u1) cos(2 pi u2) with u1 in (0, 1]: never log(0). */
double rn_normal(uint64_t *state)
{
    double u1 = 1.0 - rn_uniform01(state);
    double u2 = rn_uniform01(state);
    return sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
}

/* Draw order, as torch builds the stack: layer by layer W (row-major) then b; then x.
   Each value is computed in double and rounded once to float. */
int tanh_stack_init(tanh_stack *s, int depth, int d, int residual, uint64_t seed)
{
    uint64_t st = (seed << 32) | (uint64_t)(uint32_t)depth;
    double bound = 1.0 / sqrt((double)d);
    s->depth = depth, s->d = d, s->residual = residual;
    s->w = malloc(sizeof(float) * (size_t)depth * d * d);
    s->b = malloc(sizeof(float) * (size_t)depth * d);
    s->x = malloc(sizeof(float) * (size_t)d);
    if (!s->w || !s->b || !s->x) {
        tanh_stack_free(s);
        return -1;
    }
    for (int l = 0; l < depth; l++) {
        for (int k = 0; k < d * d; k++)
            s->w[(size_t)l * d * d + k] = (float)((2.0 * rn_uniform01(&st) - 1.0) * bound);
        for (int i = 0; i < d; i++)
            s->b[(size_t)l * d + i] = (float)((2.0 * rn_uniform01(&st) - 1.0) * bound);
    }
    for (int j = 0; j < d; j++)
        s->x[j] = (float)rn_normal(&st);
    return 0;
}

void tanh_stack_free(tanh_stack *s)
{
    free(s->w), free(s->b), free(s->x);
    s->w = s->b = s->x = NULL;
}

/* One generic body per precision: T is float or double, TANH its tanh.  The activations a_l are
   kept ([depth][d]) for the backward; h is the running stream. */
#define TANH_STACK_GRAD(NAME, T, TANH, FABS)                                                       \
    T NAME(const tanh_stack *s)                                                                    \
    {                                                                                              \
        int L = s->depth, d = s->d;                                                                \
        T *a = malloc(sizeof(T) * (size_t)L * d), *h = malloc(sizeof(T) * d);                      \
        T *g = malloc(sizeof(T) * d), *gz = malloc(sizeof(T) * d);                                 \
        T res = (T)NAN;                                                                            \
        if (!a || !h || !g || !gz)                                                                 \
            goto out;                                                                              \
        for (int j = 0; j < d; j++)                                                                \
            h[j] = (T)s->x[j];                                                                     \
        for (int l = 0; l < L; l++) { /* z_i = b_i + sum_j W_ij h_j;  a = tanh(z) */               \
            const float *w = s->w + (size_t)l * d * d, *b = s->b + (size_t)l * d;                  \
            T *al = a + (size_t)l * d;                                                             \
            for (int i = 0; i < d; i++) {                                                          \
                T z = (T)b[i];                                                                     \
                for (int j = 0; j < d; j++)                                                        \
                    z += (T)w[i * d + j] * h[j];                                                   \
                al[i] = TANH(z);                                                                   \
            }                                                                                      \
            for (int i = 0; i < d; i++)                                                            \
                h[i] = s->residual ? h[i] + al[i] : al[i];                                         \
        }                                                                                          \
        for (int j = 0; j < d; j++)                                                                \
            g[j] = 1;                                                                              \
        for (int l = L - 1; l >= 0; l--) { /* gz = g (1 - a^2);  g = W^T gz (+ g) */               \
            const float *w = s->w + (size_t)l * d * d;                                             \
            const T *al = a + (size_t)l * d;                                                       \
            for (int i = 0; i < d; i++)                                                            \
                gz[i] = g[i] * (1 - al[i] * al[i]);                                                \
            for (int j = 0; j < d; j++) {                                                          \
                T acc = s->residual ? g[j] : 0;                                                    \
                for (int i = 0; i < d; i++)                                                        \
                    acc += (T)w[i * d + j] * gz[i];                                                \
                h[j] = acc; /* h reused as the new g */                                            \
            }                                                                                      \
            for (int j = 0; j < d; j++)                                                            \
                g[j] = h[j];                                                                       \
        }                                                                                          \
        res = 0;                                                                                   \
        for (int j = 0; j < d; j++)                                                                \
            res += FABS(g[j]);                                                                     \
        res /= (T)d;                                                                               \
    out:                                                                                           \
        free(a), free(h), free(g), free(gz);                                                       \
        return res;                                                                                \
    }

TANH_STACK_GRAD(tanh_stack_grad_f32, float, tanhf, fabsf)
TANH_STACK_GRAD(tanh_stack_grad_f64, double, tanh, fabs)
