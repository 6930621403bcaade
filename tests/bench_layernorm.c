/* make bench: the time of the double LayerNorm kernel and of certified golden generation (the MPFR
 * twin, forward, f64 outputs) on 1024 x 768, and their ratio — the baseline later work speeds up.
 * Timing lives here, never in the tests. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "layernorm.h"
#include "layernorm_mpfr.h"

enum { ROWS = 1024, N = 768 };

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Deterministic data: float values (as a float model would see), mean ~0.5, spread ~1. */
static double sample(uint64_t *s)
{
    *s = *s * 6364136223846793005ULL + 1442695040888963407ULL;
    return (double)(float)((double)(*s >> 11) * 0x1p-53 * 2.0 - 0.5);
}

int main(void)
{
    double *x = malloc(sizeof(double) * ROWS * N), *y = malloc(sizeof(double) * ROWS * N);
    double *g = malloc(sizeof(double) * N), *b = malloc(sizeof(double) * N);
    double *m = malloc(sizeof(double) * ROWS), *r = malloc(sizeof(double) * ROWS);
    uint64_t s = 1;
    for (size_t i = 0; i < (size_t)ROWS * N; i++)
        x[i] = sample(&s);
    for (size_t i = 0; i < N; i++)
        g[i] = 1.0 + sample(&s) / 8, b[i] = sample(&s) / 8;

    /* Kernel: best of 20 runs (the minimum is the least noisy estimate of the cost). */
    double best = 1e30;
    for (int k = 0; k < 20; k++) {
        double t0 = now();
        layernorm_forward_f64(y, m, r, x, g, b, ROWS, N, 1e-5);
        double t = now() - t0;
        if (t < best)
            best = t;
    }
    fprintf(stderr, "golden generation (MPFR twin) of %d x %d ...\n", ROWS, N);
    double t0 = now();
    int rc = layernorm_forward_mpfr(y, m, r, x, g, b, ROWS, N, 1e-5, RN_F64);
    double tg = now() - t0;
    if (rc != 0) {
        fprintf(stderr, "twin failed: %d\n", rc);
        return 3;
    }
    printf("layernorm forward %dx%d\n", ROWS, N);
    printf("  double kernel      %10.6f s  (best of 20)\n", best);
    printf("  golden generation  %10.6f s  (certified MPFR twin, f64 outputs)\n", tg);
    printf("  ratio golden/kernel %9.0fx\n", tg / best);
    free(x), free(y), free(g), free(b), free(m), free(r);
    return 0;
}
