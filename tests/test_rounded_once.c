/* "Golden values are the real numbers, rounded once": the twin's f64 and f32 outputs are compared
 * bit for bit with an independent oracle written here — the plain formula evaluated with MPFR at
 * 4096 bits and converted once by mpfr_get_d / mpfr_get_flt (correctly rounded). With 4096 bits the
 * oracle's own error is below 2^-4000 relative, so it can only disagree with a correct rounding when
 * the exact value lies within that distance of a rounding boundary; none of these inputs does (the
 * test would then report which element). Inputs: the shapes of the golden suite that matter most. */
#include <criterion/criterion.h>
#include <math.h>
#include <mpfr.h>
#include <stdint.h>
#include <stdlib.h>

#include "layernorm_mpfr.h"

#define P 4096

static double uniform(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    z ^= z >> 31;
    return (double)(z >> 11) * 0x1p-52 - 1.0;
}

/* Oracle: y, mean, rstd of one row at P bits; f32 picks mpfr_get_flt, else mpfr_get_d. */
static void oracle_row(double *y, double *mean, double *rstd, const double *x, const double *g,
                       const double *b, size_t n, double eps, int f32)
{
    mpfr_t m, v, t, r;
    mpfr_inits2(P, m, v, t, r, (mpfr_ptr)0);
    mpfr_set_zero(m, 1);
    for (size_t i = 0; i < n; i++)
        mpfr_add_d(m, m, x[i], MPFR_RNDN); /* exact at P bits for these magnitudes */
    mpfr_div_ui(m, m, n, MPFR_RNDN);
    mpfr_set_zero(v, 1);
    for (size_t i = 0; i < n; i++) {
        mpfr_d_sub(t, x[i], m, MPFR_RNDN);
        mpfr_sqr(t, t, MPFR_RNDN);
        mpfr_add(v, v, t, MPFR_RNDN);
    }
    mpfr_div_ui(v, v, n, MPFR_RNDN);
    mpfr_add_d(v, v, eps, MPFR_RNDN);
    mpfr_rec_sqrt(r, v, MPFR_RNDN);
#define OUT(z) (f32 ? (double)mpfr_get_flt(z, MPFR_RNDN) : mpfr_get_d(z, MPFR_RNDN))
    *mean = OUT(m);
    *rstd = OUT(r);
    for (size_t i = 0; i < n; i++) {
        mpfr_d_sub(t, x[i], m, MPFR_RNDN);
        mpfr_mul(t, t, r, MPFR_RNDN);
        mpfr_mul_d(t, t, g[i], MPFR_RNDN);
        mpfr_add_d(t, t, b[i], MPFR_RNDN);
        y[i] = OUT(t);
    }
#undef OUT
    mpfr_clears(m, v, t, r, (mpfr_ptr)0);
}

static void same_bits(const char *what, size_t n, const double *x, const double *g,
                      const double *b, double eps)
{
    for (int f32 = 0; f32 <= 1; f32++) {
        double *y = malloc(n * sizeof *y), *yo = malloc(n * sizeof *yo), m, r, mo, ro;
        cr_assert_eq(layernorm_forward_mpfr(y, &m, &r, x, g, b, 1, n, eps,
                                            f32 ? RN_F32 : RN_F64), RN_TWIN_OK);
        oracle_row(yo, &mo, &ro, x, g, b, n, eps, f32);
        cr_assert(m == mo, "%s f%d mean %a vs oracle %a", what, f32 ? 32 : 64, m, mo);
        cr_assert(r == ro, "%s f%d rstd %a vs oracle %a", what, f32 ? 32 : 64, r, ro);
        for (size_t i = 0; i < n; i++)
            cr_assert(y[i] == yo[i] || (y[i] == 0 && yo[i] == 0 && signbit(y[i]) == signbit(yo[i])),
                      "%s f%d y[%zu] %a vs oracle %a", what, f32 ? 32 : 64, i, y[i], yo[i]);
        free(y), free(yo);
    }
}

/* x = shift + scale * uniform, rounded to f32 (the inputs a float model has). */
static void row(double *x, double *g, double *b, size_t n, double shift, double scale,
                uint64_t seed)
{
    for (size_t i = 0; i < n; i++) {
        x[i] = (double)(float)(shift + scale * uniform(&seed));
        g[i] = (double)(float)(1.0 + 0.1 * uniform(&seed));
        b[i] = (double)(float)(0.1 * uniform(&seed));
    }
}

Test(rounded_once, gpt2_row_large_mean_and_zero_variance)
{
    enum { N = 768 };
    static double x[N], g[N], b[N];
    double eps = (double)1e-5f;
    row(x, g, b, N, 0.0, 1.0, 1);
    same_bits("gpt2 row", N, x, g, b, eps);
    row(x, g, b, N, 100.0, 0.01, 2);
    same_bits("randn*0.01+100", N, x, g, b, eps);
    row(x, g, b, N, 40000.0, 0.5, 3);
    same_bits("40000+small spread", N, x, g, b, eps);
    row(x, g, b, N, 0.0, 1.0, 4);
    for (size_t i = 0; i < N; i++)
        x[i] = 0.1f;
    same_bits("constant 0.1f row", N, x, g, b, eps);
}

Test(rounded_once, small_rows_and_large_eps)
{
    double x[5], g[5], b[5];
    row(x, g, b, 5, 0.5, 2.0, 5);
    same_bits("n=5 eps=0.1", 5, x, g, b, (double)0.1f);
    same_bits("n=1", 1, x, g, b, (double)1e-5f);
    row(x, g, b, 4, 0.0, 1e-20, 6);
    same_bits("tiny scale", 4, x, g, b, (double)1e-5f);
}
