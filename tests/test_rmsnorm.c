/* RMSNorm: the MPFR twin (ref/rmsnorm_mpfr.c), the float and double kernels (ref/rmsnorm.c) and the
 * a-priori bound (ref/rmsnorm_bound.c, specs/error-analysis-rmsnorm.md).
 *
 * No expected value is taken from the code under test:
 *  (a) the twin's f64 and f32 outputs are compared bit for bit with an independent oracle written
 *      here: the plain formula at 4096 bits, converted once by mpfr_get_d / mpfr_get_flt;
 *  (b) closed forms, decided with exact MPFR comparisons or by hand;
 *  (c) the twin's backward against finite differences of the twin's forward;
 *  (d) the kernels within the bound on deterministic rows (worst error/bound ratio printed);
 *  (e) the bound has teeth: three plausible bugs exceed it on rows built to show them.
 * Data: splitmix64, no libm in the data path, so the rows never vary.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <mpfr.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dtype.h"
#include "rmsnorm.h"
#include "rmsnorm_bound.h"
#include "rmsnorm_mpfr.h"

static int same_bits(double a, double b) { return memcmp(&a, &b, sizeof a) == 0; }

/* Deterministic uniform in [-1, 1) (splitmix64). */
static double uniform(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    z ^= z >> 31;
    return (double)(z >> 11) * 0x1p-52 - 1.0;
}

/* x = shift + scale * uniform, gamma = g0 + gs * uniform, dy = uniform; all rounded to f32 (the
   inputs a float model has, also exact doubles for the f64 kernel). */
static void fill(double *x, double *g, double *dy, size_t rows, size_t n, double shift,
                 double scale, double g0, double gs, uint64_t seed)
{
    for (size_t i = 0; i < rows * n; i++) {
        x[i] = (double)(float)(shift + scale * uniform(&seed));
        if (dy)
            dy[i] = (double)(float)uniform(&seed);
    }
    for (size_t i = 0; i < n; i++)
        g[i] = (double)(float)(g0 + gs * uniform(&seed));
}

/* ================================================================================================
 * (a) Rounded once: the twin against a 4096-bit oracle.
 */
#define P 4096

static void oracle_row(double *y, double *rstd, const double *x, const double *g, size_t n,
                       double eps, int offset, int f32)
{
    mpfr_t s, t, r, w;
    mpfr_inits2(P, s, t, r, w, (mpfr_ptr)0);
    mpfr_set_zero(s, 1);
    for (size_t i = 0; i < n; i++) {
        mpfr_set_d(t, x[i], MPFR_RNDN);
        mpfr_sqr(t, t, MPFR_RNDN);
        mpfr_add(s, s, t, MPFR_RNDN); /* exact at P bits for these magnitudes */
    }
    mpfr_div_ui(s, s, n, MPFR_RNDN);
    mpfr_add_d(s, s, eps, MPFR_RNDN);
    mpfr_rec_sqrt(r, s, MPFR_RNDN);
#define OUT(z) (f32 ? (double)mpfr_get_flt(z, MPFR_RNDN) : mpfr_get_d(z, MPFR_RNDN))
    *rstd = OUT(r);
    for (size_t i = 0; i < n; i++) {
        mpfr_set_d(w, g[i], MPFR_RNDN);
        if (offset)
            mpfr_add_ui(w, w, 1, MPFR_RNDN); /* exact at P bits */
        mpfr_mul_d(t, r, x[i], MPFR_RNDN);
        mpfr_mul(t, t, w, MPFR_RNDN);
        y[i] = OUT(t);
    }
#undef OUT
    mpfr_clears(s, t, r, w, (mpfr_ptr)0);
}

static void rounded_once(const char *what, size_t n, const double *x, const double *g, double eps,
                         int offset)
{
    for (int f32 = 0; f32 <= 1; f32++) {
        double *y = malloc(n * sizeof *y), *yo = malloc(n * sizeof *yo), r, ro;
        cr_assert_eq(rmsnorm_forward_mpfr(y, &r, x, g, 1, n, eps, offset, f32 ? RN_F32 : RN_F64),
                     RN_TWIN_OK, "%s", what);
        oracle_row(yo, &ro, x, g, n, eps, offset, f32);
        cr_assert(same_bits(r, ro), "%s f%d rstd %a vs oracle %a", what, f32 ? 32 : 64, r, ro);
        for (size_t i = 0; i < n; i++)
            cr_assert(y[i] == yo[i], "%s f%d y[%zu] %a vs oracle %a", what, f32 ? 32 : 64, i, y[i],
                      yo[i]);
        free(y), free(yo);
    }
}

Test(rmsnorm_rounded_once, model_rows)
{
    enum { N = 4096 };
    static double x[N], g[N];
    double e5 = (double)1e-5f, e6 = (double)1e-6f;
    fill(x, g, NULL, 1, N, 0.0, 1.0, 1.0, 0.1, 1);
    rounded_once("llama row n=4096", N, x, g, e6, 0);
    fill(x, g, NULL, 1, 2048, 0.0, 3.0, 0.0, 0.2, 2);
    rounded_once("gemma row n=2048 offset 1", 2048, x, g, e6, 1);
    fill(x, g, NULL, 1, 768, 0.0, 1.0, 1.0, 0.1, 3);
    rounded_once("gpt2 row n=768", 768, x, g, e5, 0);
    fill(x, g, NULL, 1, 768, 100.0, 0.01, 1.0, 0.1, 4);
    rounded_once("100 + 0.01 u (large mean)", 768, x, g, e5, 0);
    fill(x, g, NULL, 1, 768, 0.0, 1e15, 1.0, 0.1, 5);
    rounded_once("huge scale 1e15", 768, x, g, e5, 1);
}

Test(rmsnorm_rounded_once, small_and_degenerate_rows)
{
    double x[16], g[16];
    fill(x, g, NULL, 1, 16, 0.0, 1e-20, 1.0, 0.1, 6);
    rounded_once("tiny scale 1e-20, eps 1e-6", 16, x, g, (double)1e-6f, 0);
    rounded_once("tiny scale 1e-20, eps 0", 16, x, g, 0.0, 1);
    fill(x, g, NULL, 1, 5, 0.5, 2.0, 0.5, 0.5, 7);
    rounded_once("n=5 eps=0.1", 5, x, g, (double)0.1f, 0);
    rounded_once("n=1", 1, x, g, (double)1e-5f, 0);
    rounded_once("n=1 offset 1", 1, x, g, (double)1e-5f, 1);
    rounded_once("n=1 eps 0", 1, x, g, 0.0, 1);
    for (int i = 0; i < 16; i++)
        x[i] = 0.0;
    rounded_once("zero row, eps 1e-5", 16, x, g, (double)1e-5f, 0);
    rounded_once("zero row, eps 1e-5, offset 1", 16, x, g, (double)1e-5f, 1);
}

/* ================================================================================================
 * (b) Closed forms.
 */

/* Asserts that r (binary64, or binary32 if f32) is the RN value of t = sign * a / sqrt(V), a > 0,
   V > 0 exact, t irrational: the midpoints m- < |t| < m+ around |r|, i.e. m-^2 V < a^2 < m+^2 V. */
static void assert_rn_quot_sqrt(double r, int sign, double a, mpfr_srcptr V, int f32)
{
    cr_assert(sign * r > 0, "sign of %a", r);
    double ar = fabs(r);
    double lo = f32 ? (double)nextafterf((float)ar, 0.0f) : nextafter(ar, 0.0);
    double hi = f32 ? (double)nextafterf((float)ar, INFINITY) : nextafter(ar, INFINITY);
    mpfr_t m, t, a2;
    mpfr_inits2(4096, m, t, a2, (mpfr_ptr)0);
    mpfr_set_d(a2, a, MPFR_RNDN);
    mpfr_sqr(a2, a2, MPFR_RNDN);
    for (int side = 0; side < 2; side++) {
        mpfr_set_d(m, ar, MPFR_RNDN);
        mpfr_add_d(m, m, side ? hi : lo, MPFR_RNDN);
        mpfr_div_2ui(m, m, 1, MPFR_RNDN);
        mpfr_sqr(t, m, MPFR_RNDN);
        mpfr_mul(t, t, V, MPFR_RNDN);
        int c = mpfr_cmp(t, a2);
        cr_assert(side ? c > 0 : c < 0, "%a is not the nearest (side %d)", r, side);
    }
    mpfr_clears(m, t, a2, (mpfr_ptr)0);
}

Test(rmsnorm_twin, closed_form_3_4)
{
    /* x = [3, 4]: ms = (9 + 16)/2 = 12.5, eps = 0: rstd = 1/sqrt(12.5), y_i = x_i / sqrt(12.5). */
    const double x[2] = {3, 4}, g[2] = {1, 1};
    mpfr_t V;
    mpfr_init2(V, 64);
    mpfr_set_d(V, 12.5, MPFR_RNDN);
    for (int f32 = 0; f32 < 2; f32++) {
        double y[2], rstd;
        cr_assert_eq(rmsnorm_forward_mpfr(y, &rstd, x, g, 1, 2, 0.0, 0, f32 ? RN_F32 : RN_F64), 0);
        assert_rn_quot_sqrt(rstd, 1, 1.0, V, f32);
        assert_rn_quot_sqrt(y[0], 1, 3.0, V, f32);
        assert_rn_quot_sqrt(y[1], 1, 4.0, V, f32);
    }
    /* Independently: 1/sqrt(12.5) = sqrt(2)/5 = 0.28284271247461900976... */
    double rstd, y[2];
    cr_assert_eq(rmsnorm_forward_mpfr(y, &rstd, x, g, 1, 2, 0.0, 0, RN_F64), 0);
    cr_assert(fabs(rstd - 0.28284271247461900976) < 1e-16);
    /* x = [3, 4, 0, 0]: ms = 25/4, rstd = 2/5 exactly: RN(0.4), a dyadic enclosure terminates. */
    const double x4[4] = {3, 4, 0, 0}, g4[4] = {1, -2, 1, 1};
    double y4[4];
    cr_assert_eq(rmsnorm_forward_mpfr(y4, &rstd, x4, g4, 1, 4, 0.0, 0, RN_F64), 0);
    cr_assert(same_bits(rstd, 0.4) && same_bits(y4[0], 1.2) && same_bits(y4[1], -3.2));
    cr_assert(same_bits(y4[2], 0.0) && same_bits(y4[3], 0.0)); /* exact zero: +0 */
    cr_assert_eq(rmsnorm_forward_mpfr(y4, &rstd, x4, g4, 1, 4, 0.0, 0, RN_F32), 0);
    cr_assert(same_bits(rstd, (double)0.4f) && same_bits(y4[1], (double)-3.2f));
    mpfr_clear(V);
}

Test(rmsnorm_twin, constant_row_is_sign_times_weight)
{
    /* x = c (constant), eps = 0: ms = c^2, rstd = 1/|c|, y_i = sign(c) w_i EXACTLY (no rounding in
       f64 for w = gamma; for w = 1 + gamma, the exact sum rounded once). */
    const double cs[] = {(double)0.1f, -3.5, (double)-7e-12f, 1e30};
    const double g[7] = {0.7, -1.25, (double)0.3f, 1e-30, -0.0, 3, (double)1e-8f};
    for (size_t k = 0; k < sizeof cs / sizeof cs[0]; k++)
        for (size_t n = 1; n <= 7; n += 6) {
            double x[7], y[7], rstd;
            for (size_t i = 0; i < n; i++)
                x[i] = cs[k];
            for (int offset = 0; offset <= 1; offset++)
                for (int d = 0; d < RN_NDTYPES; d++) {
                    cr_assert_eq(rmsnorm_forward_mpfr(y, &rstd, x, g, 1, n, 0.0, offset,
                                                      (rn_dtype)d), 0);
                    for (size_t i = 0; i < n; i++) {
                        mpfr_t w;
                        mpfr_init2(w, 200);
                        mpfr_set_d(w, g[i], MPFR_RNDN);
                        if (offset)
                            mpfr_add_ui(w, w, 1, MPFR_RNDN); /* exact in 200 bits */
                        if (cs[k] < 0)
                            mpfr_neg(w, w, MPFR_RNDN);
                        double want = rn_round_mpfr(w, (rn_dtype)d);
                        mpfr_clear(w);
                        cr_assert(want == y[i], "c=%g n=%zu offset %d %s: y[%zu] %a, want %a",
                                  cs[k], n, offset, rn_dtype_name((rn_dtype)d), i, y[i], want);
                    }
                    if (d == RN_F64 && cs[k] == -3.5)
                        cr_assert(same_bits(rstd, 1.0 / 3.5));
                }
        }
}

Test(rmsnorm_twin, zero_rows_and_nonfinite_conventions)
{
    const double z[4] = {0, 0, 0, 0}, g[4] = {1, -2, 0.5, 3}, dy[4] = {1, -1, 0.5, 2};
    double y[4], rstd, dx[4], dg[4];
    /* Zero row, eps > 0: rstd = RN(1/sqrt(eps)), y = +0 exactly; dx_i = rstd g_i. */
    cr_assert_eq(rmsnorm_forward_mpfr(y, &rstd, z, g, 1, 4, 0.25, 0, RN_F64), 0);
    cr_assert(same_bits(rstd, 2.0));
    for (int i = 0; i < 4; i++)
        cr_assert(same_bits(y[i], 0.0), "y[%d] = %a", i, y[i]);
    cr_assert_eq(rmsnorm_backward_mpfr(dx, dg, dy, z, g, 1, 4, 0.25, 0, RN_F64), 0);
    for (int i = 0; i < 4; i++) {
        cr_assert(same_bits(dx[i], 2.0 * dy[i] * g[i]), "dx[%d] = %a", i, dx[i]);
        cr_assert(same_bits(dg[i], 0.0));
    }
    /* Zero row, eps = 0: the 0/0, rstd = +Inf, y = NaN, dx = NaN, dgamma = NaN. */
    cr_assert_eq(rmsnorm_forward_mpfr(y, &rstd, z, g, 1, 4, 0.0, 1, RN_F32), 0);
    cr_assert(isinf(rstd) && rstd > 0);
    for (int i = 0; i < 4; i++)
        cr_assert(isnan(y[i]));
    cr_assert_eq(rmsnorm_backward_mpfr(dx, dg, dy, z, g, 1, 4, 0.0, 1, RN_F32), 0);
    for (int i = 0; i < 4; i++)
        cr_assert(isnan(dx[i]) && isnan(dg[i]));
    /* +Inf in the row: sum x^2 = +Inf, rstd = 0, y = 0 for the finite x, NaN for the Inf. */
    const double xi[4] = {1, INFINITY, -2, 0};
    cr_assert_eq(rmsnorm_forward_mpfr(y, &rstd, xi, g, 1, 4, 1e-5, 0, RN_F64), 0);
    cr_assert(same_bits(rstd, 0.0));
    cr_assert(same_bits(y[0], 0.0) && isnan(y[1]) && same_bits(y[2], 0.0) && same_bits(y[3], 0.0));
    cr_assert_eq(rmsnorm_backward_mpfr(dx, dg, dy, xi, g, 1, 4, 1e-5, 0, RN_F64), 0);
    for (int i = 0; i < 4; i++)
        cr_assert(isnan(dx[i]));
    cr_assert(same_bits(dg[0], 0.0) && isnan(dg[1]) && same_bits(dg[2], 0.0));
    /* NaN in the row: everything NaN. */
    const double xn[4] = {1, NAN, -2, 0};
    cr_assert_eq(rmsnorm_forward_mpfr(y, &rstd, xn, g, 1, 4, 1e-5, 0, RN_F64), 0);
    cr_assert(isnan(rstd) && isnan(y[0]) && isnan(y[3]));
    /* gamma_j = +Inf poisons column j: x > 0 -> +Inf, x < 0 -> -Inf, x = 0 -> NaN. */
    const double x3[4] = {1, -2, 0, 3}, gi[4] = {INFINITY, INFINITY, INFINITY, 1};
    cr_assert_eq(rmsnorm_forward_mpfr(y, &rstd, x3, gi, 1, 4, 1e-5, 1, RN_F64), 0);
    cr_assert(isinf(y[0]) && y[0] > 0 && isinf(y[1]) && y[1] < 0 && isnan(y[2]) && isfinite(y[3]));
    cr_assert(isfinite(rstd));
    /* The kernels agree with the conventions where IEEE arithmetic decides them. */
    float fz[4] = {0, 0, 0, 0}, fg[4] = {1, 1, 1, 1}, fy[4], fr;
    rmsnorm_row_forward_f32(fy, &fr, fz, fg, 4, 0.0f, 0);
    cr_assert(isinf(fr) && isnan(fy[0]));
    float fxi[4] = {1, INFINITY, -2, 0};
    rmsnorm_row_forward_f32(fy, &fr, fxi, fg, 4, 1e-5f, 0);
    cr_assert(fr == 0 && fy[0] == 0 && isnan(fy[1]) && fy[2] == 0);
}

/* The twin against a naive 1000-bit evaluation of specs/rmsnorm.h, forward and backward, in all four
   output formats (f64/f32 converted by mpfr_get_d / mpfr_get_flt; f16/bf16 by rn_round_mpfr, whose
   edge cases are checked by hand in tests/test_twin.c).  The naive value is within ~2^-990 relative
   of the exact one, so it rounds the same unless the exact value is that close to a midpoint. */
#define NP 1000

static double round_to(mpfr_srcptr v, rn_dtype d)
{
    if (d == RN_F64)
        return mpfr_get_d(v, MPFR_RNDN);
    if (d == RN_F32)
        return (double)mpfr_get_flt(v, MPFR_RNDN);
    return rn_round_mpfr(v, d);
}

static void naive(size_t rows, size_t n, const double *x, const double *gm, const double *dy,
                  double eps, int offset, rn_dtype d, double *y, double *rstd, double *dx,
                  double *dg)
{
    mpfr_t s, r, t, u, w, c, *dgs;
    mpfr_inits2(NP, s, r, t, u, w, c, (mpfr_ptr)0);
    dgs = malloc(n * sizeof *dgs);
    for (size_t j = 0; j < n; j++) {
        mpfr_init2(dgs[j], NP);
        mpfr_set_zero(dgs[j], 1);
    }
    for (size_t k = 0; k < rows; k++) {
        const double *xr = x + k * n, *dyr = dy + k * n;
        mpfr_set_zero(s, 1);
        for (size_t i = 0; i < n; i++) {
            mpfr_set_d(t, xr[i], MPFR_RNDN);
            mpfr_sqr(t, t, MPFR_RNDN);
            mpfr_add(s, s, t, MPFR_RNDN);
        }
        mpfr_div_ui(s, s, n, MPFR_RNDN);
        mpfr_add_d(s, s, eps, MPFR_RNDN);
        mpfr_rec_sqrt(r, s, MPFR_RNDN);              /* rstd */
        rstd[k] = round_to(r, d);
        mpfr_set_zero(c, 1);                         /* mean(g xhat) */
        for (size_t i = 0; i < n; i++) {
            mpfr_set_d(w, gm[i], MPFR_RNDN);
            if (offset)
                mpfr_add_ui(w, w, 1, MPFR_RNDN);
            mpfr_mul_d(t, r, xr[i], MPFR_RNDN);      /* xhat */
            mpfr_mul(u, t, w, MPFR_RNDN);
            y[k * n + i] = round_to(u, d);
            mpfr_mul_d(u, t, dyr[i], MPFR_RNDN);
            mpfr_add(dgs[i], dgs[i], u, MPFR_RNDN);  /* dgamma += dy xhat */
            mpfr_mul_d(u, w, dyr[i], MPFR_RNDN);     /* g */
            mpfr_mul(u, u, t, MPFR_RNDN);
            mpfr_add(c, c, u, MPFR_RNDN);
        }
        mpfr_div_ui(c, c, n, MPFR_RNDN);
        for (size_t i = 0; i < n; i++) {
            mpfr_set_d(w, gm[i], MPFR_RNDN);
            if (offset)
                mpfr_add_ui(w, w, 1, MPFR_RNDN);
            mpfr_mul_d(u, w, dyr[i], MPFR_RNDN);     /* g */
            mpfr_mul_d(t, r, xr[i], MPFR_RNDN);
            mpfr_mul(t, t, c, MPFR_RNDN);            /* xhat mean(g xhat) */
            mpfr_sub(u, u, t, MPFR_RNDN);
            mpfr_mul(u, u, r, MPFR_RNDN);
            dx[k * n + i] = round_to(u, d);
        }
    }
    for (size_t j = 0; j < n; j++) {
        dg[j] = round_to(dgs[j], d);
        mpfr_clear(dgs[j]);
    }
    free(dgs);
    mpfr_clears(s, r, t, u, w, c, (mpfr_ptr)0);
}

Test(rmsnorm_twin, matches_naive_high_precision_all_formats)
{
    enum { R = 3, N = 13 };
    const double shifts[] = {0.0, 100.0, 0.0, 0.0, 0.0};
    const double scales[] = {1.0, 0.01, 1e-3, 1e-20, 3e4};
    for (size_t cse = 0; cse < sizeof shifts / sizeof shifts[0]; cse++)
        for (int offset = 0; offset <= 1; offset++) {
            double x[R * N], dy[R * N], g[N];
            fill(x, g, dy, R, N, shifts[cse], scales[cse], offset ? 0.0 : 1.0, 0.2,
                 40 + cse * 2 + (size_t)offset);
            double eps = (double)1e-5f;
            for (int d = 0; d < RN_NDTYPES; d++) {
                double y1[R * N], r1[R], dx1[R * N], dg1[N], y2[R * N], r2[R], dx2[R * N], dg2[N];
                cr_assert_eq(rmsnorm_forward_mpfr(y1, r1, x, g, R, N, eps, offset, (rn_dtype)d), 0);
                cr_assert_eq(rmsnorm_backward_mpfr(dx1, dg1, dy, x, g, R, N, eps, offset,
                                                   (rn_dtype)d), 0);
                naive(R, N, x, g, dy, eps, offset, (rn_dtype)d, y2, r2, dx2, dg2);
                for (int i = 0; i < R * N; i++) {
                    cr_assert(y1[i] == y2[i], "case %zu offset %d %s y[%d]: twin %a naive %a", cse,
                              offset, rn_dtype_name((rn_dtype)d), i, y1[i], y2[i]);
                    cr_assert(dx1[i] == dx2[i], "case %zu offset %d %s dx[%d]: twin %a naive %a",
                              cse, offset, rn_dtype_name((rn_dtype)d), i, dx1[i], dx2[i]);
                }
                for (int i = 0; i < R; i++)
                    cr_assert(same_bits(r1[i], r2[i]), "case %zu %s rstd[%d]", cse,
                              rn_dtype_name((rn_dtype)d), i);
                for (int j = 0; j < N; j++)
                    cr_assert(dg1[j] == dg2[j], "case %zu offset %d %s dgamma[%d]: twin %a naive %a",
                              cse, offset, rn_dtype_name((rn_dtype)d), j, dg1[j], dg2[j]);
            }
        }
}

/* ================================================================================================
 * (c) The twin's backward against finite differences of the twin's forward.
 *
 * L(x, gamma) = sum_{r,i} dy_ri y_ri, evaluated from the twin's forward (each y correctly rounded to
 * binary64) with an exact sum of the products, differentiated with the 5-point stencil
 *     L'(v) ~ (-L(v+2h) + 8 L(v+h) - 8 L(v-h) + L(v-2h)) / (12 h),  h = 2^-12.
 * Inputs are multiples of 2^-10 of modulus < 4, so v +- h, v +- 2h are exact.  Truncation
 * h^4/30 |L^(5)| ~ 1e-13 for these rows (ms = O(1), eps = 0.01); rounding: each L carries at most
 * sum |dy y| 2^-53 ~ 3e-15, amplified by 18/(12 h) = 6144: ~2e-11.  Tolerance 1e-9 (1 + |grad|);
 * a wrong term (missing mean(g xhat), n - 1, rstd^2 for rstd, w for 1 + gamma) is O(0.1).
 */
enum { FR = 2, FN = 5 };

static double loss(const double *x, const double *g, const double *dy, double eps, int offset)
{
    double y[FR * FN], r[FR];
    cr_assert_eq(rmsnorm_forward_mpfr(y, r, x, g, FR, FN, eps, offset, RN_F64), 0);
    mpfr_t acc, t;
    mpfr_init2(acc, 3000);
    mpfr_init2(t, 200);
    mpfr_set_zero(acc, 1);
    for (int i = 0; i < FR * FN; i++) {
        mpfr_set_d(t, y[i], MPFR_RNDN);
        mpfr_mul_d(t, t, dy[i], MPFR_RNDN);
        mpfr_add(acc, acc, t, MPFR_RNDN);
    }
    double L = mpfr_get_d(acc, MPFR_RNDN);
    mpfr_clears(acc, t, (mpfr_ptr)0);
    return L;
}

static double fd(double *v, const double *x, const double *g, const double *dy, double eps,
                 int offset)
{
    const double h = 0x1p-12;
    double v0 = *v, L[4];
    const double off[4] = {2 * h, h, -h, -2 * h};
    for (int k = 0; k < 4; k++) {
        *v = v0 + off[k];
        L[k] = loss(x, g, dy, eps, offset);
    }
    *v = v0;
    return (-L[0] + 8 * L[1] - 8 * L[2] + L[3]) / (12 * h);
}

Test(rmsnorm_twin, backward_matches_finite_differences)
{
    double x[FR * FN] = {0.5, -1.25, 2.0, 0.75, -0.375, 1.5, 1.625, -0.875, 0.25, 3.0};
    double g[FN] = {1.0, 0.875, -1.5, 1.25, 0.5};
    double dy[FR * FN] = {1.0, -0.5, 0.25, 2.0, -1.5, 0.75, 0.125, -1.0, 1.5, -0.25};
    double eps = 0.01, worst = 0;
    for (int offset = 0; offset <= 1; offset++) {
        double dx[FR * FN], dg[FN];
        cr_assert_eq(rmsnorm_backward_mpfr(dx, dg, dy, x, g, FR, FN, eps, offset, RN_F64), 0);
        for (int i = 0; i < FR * FN; i++) {
            double f = fd(&x[i], x, g, dy, eps, offset);
            cr_assert(fabs(f - dx[i]) <= 1e-9 * (1 + fabs(dx[i])),
                      "offset %d dx[%d]: twin %.17g, fd %.17g", offset, i, dx[i], f);
            worst = fmax(worst, fabs(f - dx[i]) / (1 + fabs(dx[i])));
        }
        for (int j = 0; j < FN; j++) {
            double f = fd(&g[j], x, g, dy, eps, offset);
            cr_assert(fabs(f - dg[j]) <= 1e-9 * (1 + fabs(dg[j])),
                      "offset %d dgamma[%d]: twin %.17g, fd %.17g", offset, j, dg[j], f);
            worst = fmax(worst, fabs(f - dg[j]) / (1 + fabs(dg[j])));
        }
    }
    printf("rmsnorm twin backward vs finite differences: worst relative gap %.3g (tol 1e-9)\n",
           worst);
}

/* ================================================================================================
 * (d) The kernels within the bound.
 */

typedef struct {
    const char *name;
    size_t rows, n;
    double shift, scale, g0, gs, eps;
    int offset;
} rcase;

static const rcase CASES[] = {
    {"llama n=4096", 2, 4096, 0.0, 1.0, 1.0, 0.1, 1e-6, 0},
    {"gemma n=2048 offset 1", 2, 2048, 0.0, 3.0, 0.0, 0.2, 1e-6, 1},
    {"gpt2 n=768", 3, 768, 0.0, 1.0, 1.0, 0.1, 1e-5, 0},
    {"large mean 100 + 0.01u", 3, 768, 100.0, 0.01, 1.0, 0.1, 1e-5, 0},
    {"huge 1e17", 2, 768, 0.0, 1e17, 1.0, 0.1, 1e-5, 1},
    {"tiny 1e-20, eps 1e-6", 2, 768, 0.0, 1e-20, 1.0, 0.1, 1e-6, 0},
    {"tiny 1e-18, eps 0", 2, 64, 0.0, 1e-18, 1.0, 0.1, 0.0, 1},
    {"small spread 1e-3, eps 1e-5", 4, 64, 0.0, 1e-3, 1.0, 0.5, 1e-5, 0},
    {"n=1", 5, 1, 0.0, 2.0, 1.0, 0.5, 1e-5, 1},
    {"n=2 eps 0.1", 4, 2, 0.5, 1.0, -1.0, 0.5, 0.1, 0},
    {"spike: one element 1e4", 2, 512, 0.0, 1.0, 1.0, 0.1, 1e-5, 1},
};

typedef struct {
    double worst[2];   /* by kernel: 0 = f64, 1 = f32 */
    double worst_lp;   /* f32 kernel, outputs rounded to f16 / bf16 */
    double worst_alt;  /* the alternative f32 implementation (alt_f32) */
} tally;

static double ratio(const char *id, const char *what, const double *got, const double *want,
                    const double *bound, size_t count)
{
    double worst = 0.0;
    for (size_t i = 0; i < count; i++) {
        if (!isfinite(want[i]) || bound[i] == 0) {
            cr_assert(isnan(want[i]) ? isnan(got[i]) : got[i] == want[i],
                      "%s %s[%zu]: got %a, want %a", id, what, i, got[i], want[i]);
            continue;
        }
        double err = fabs(got[i] - want[i]);
        cr_assert(err <= bound[i], "%s %s[%zu]: got %.17g want %.17g err %.3g > bound %.3g", id,
                  what, i, got[i], want[i], err, bound[i]);
        if (isfinite(bound[i]) && err / bound[i] > worst)
            worst = err / bound[i];
    }
    return worst;
}

/* The f32 kernel forward and backward on double arrays holding f32 values. */
static void kernels_f32(double *y, double *rstd, double *dx, double *dg, const double *x,
                        const double *g, const double *dy, size_t rows, size_t n, double eps,
                        int offset)
{
    size_t N = rows * n;
    float *fx = malloc(N * sizeof *fx), *fy = malloc(N * sizeof *fy), *fdy = malloc(N * sizeof *fdy);
    float *fdx = malloc(N * sizeof *fdx), *fg = calloc(n, sizeof *fg), *fdg = calloc(n, sizeof *fdg);
    float *fr = malloc(rows * sizeof *fr);
    for (size_t i = 0; i < N; i++)
        fx[i] = (float)x[i], fdy[i] = (float)dy[i];
    for (size_t i = 0; i < n; i++)
        fg[i] = (float)g[i];
    rmsnorm_forward_f32(fy, fr, fx, fg, (int)rows, (int)n, (float)eps, offset);
    rmsnorm_backward_f32(fdx, fdg, fdy, fx, fg, fr, (int)rows, (int)n, offset);
    for (size_t i = 0; i < N; i++)
        y[i] = fy[i], dx[i] = fdx[i];
    for (size_t i = 0; i < n; i++)
        dg[i] = fdg[i];
    for (size_t r = 0; r < rows; r++)
        rstd[r] = fr[r];
    free(fx), free(fy), free(fdy), free(fdx), free(fg), free(fdg), free(fr);
}

/* Another correct f32 implementation, in the class of specs/error-analysis-rmsnorm.md §0 but
   different from ref/rmsnorm.c at every step: pairwise sum of squares, times fl(1/n), an rsqrt one
   ulp off the rounded 1/sqrt, y = x (r w); backward in the two-term form autograd gives for the
   composite x * rsqrt(mean(x^2) + eps) * w: dx = r g - x r^3 c, c = mean(g x), dgamma += dy (x r),
   with r^3 c evaluated as r (r (r c)).  (Forming r^3 first underflows in f32 when |x| ~ 1e17 and
   loses the second term: a real accuracy failure, which the bound reports.) */
static float pairwise_sq(const float *x, size_t n)
{
    if (n == 1)
        return x[0] * x[0];
    return pairwise_sq(x, n / 2) + pairwise_sq(x + n / 2, n - n / 2);
}

static void alt_f32(double *y, double *rstd, double *dx, double *dg, const double *x,
                    const double *g, const double *dy, size_t rows, size_t n, double eps,
                    int offset)
{
    float *fx = malloc(n * sizeof *fx), *w = malloc(n * sizeof *w), *gg = malloc(n * sizeof *gg);
    float *fdg = calloc(n, sizeof *fdg);
    for (size_t i = 0; i < n; i++)
        w[i] = offset ? 1.0f + (float)g[i] : (float)g[i];
    for (size_t k = 0; k < rows; k++) {
        for (size_t i = 0; i < n; i++)
            fx[i] = (float)x[k * n + i];
        float ms = pairwise_sq(fx, n) * (1.0f / (float)n);
        float r = nextafterf(1.0f / sqrtf(ms + (float)eps), INFINITY);
        rstd[k] = r;
        float c = 0.0f;
        for (size_t i = 0; i < n; i++) {
            y[k * n + i] = fx[i] * (r * w[i]);
            gg[i] = (float)dy[k * n + i] * w[i];
            c += gg[i] * fx[i];
        }
        c = c / (float)n;
        float rrrc = r * (r * (r * c)); /* not (r*r*r)*c: r^3 underflows in f32 for |x| ~ 1e17 */
        for (size_t i = 0; i < n; i++) {
            dx[k * n + i] = r * gg[i] - fx[i] * rrrc;
            fdg[i] += (float)dy[k * n + i] * (fx[i] * r);
        }
    }
    for (size_t i = 0; i < n; i++)
        dg[i] = fdg[i];
    free(fx), free(w), free(gg), free(fdg);
}

static void run_case(const rcase *c, uint64_t seed, tally *t)
{
    size_t N = c->rows * c->n, n = c->n, rows = c->rows;
    double *x = malloc(N * sizeof *x), *dy = malloc(N * sizeof *dy), *g = malloc(n * sizeof *g);
    fill(x, g, dy, rows, n, c->shift, c->scale, c->g0, c->gs, seed);
    if (strncmp(c->name, "spike", 5) == 0) /* one dominant element per row: ms ~ 1e8 / n */
        for (size_t k = 0; k < rows; k++)
            x[k * n + 7 + k] = 1e4;
    double eps = (double)(float)c->eps; /* eps as the f32 model uses it; exact for both kernels */
    double *wy = malloc(N * sizeof *wy), *wr = malloc(rows * sizeof *wr);
    double *wdx = malloc(N * sizeof *wdx), *wdg = malloc(n * sizeof *wdg);
    cr_assert_eq(rmsnorm_forward_mpfr(wy, wr, x, g, rows, n, eps, c->offset, RN_F64), 0);
    cr_assert_eq(rmsnorm_backward_mpfr(wdx, wdg, dy, x, g, rows, n, eps, c->offset, RN_F64), 0);
    double *by = malloc(N * sizeof *by), *br = malloc(rows * sizeof *br);
    double *bdx = malloc(N * sizeof *bdx), *bdg = malloc(n * sizeof *bdg);
    double *y = malloc(N * sizeof *y), *r = malloc(rows * sizeof *r);
    double *dx = malloc(N * sizeof *dx), *dg = calloc(n, sizeof *dg);
    for (int f32 = 0; f32 <= 1; f32++) {
        rn_dtype dt = f32 ? RN_F32 : RN_F64;
        cr_assert_eq(rmsnorm_forward_bound(by, br, x, g, rows, n, eps, c->offset, dt, dt), 0);
        cr_assert_eq(rmsnorm_backward_bound(bdx, bdg, dy, x, g, rows, n, eps, c->offset, dt, dt),
                     0);
        if (f32) {
            kernels_f32(y, r, dx, dg, x, g, dy, rows, n, eps, c->offset);
        } else {
            memset(dg, 0, n * sizeof *dg);
            rmsnorm_forward_f64(y, r, x, g, (int)rows, (int)n, eps, c->offset);
            rmsnorm_backward_f64(dx, dg, dy, x, g, r, (int)rows, (int)n, c->offset);
        }
        double w = ratio(c->name, "y", y, wy, by, N);
        w = fmax(w, ratio(c->name, "rstd", r, wr, br, rows));
        w = fmax(w, ratio(c->name, "dx", dx, wdx, bdx, N));
        w = fmax(w, ratio(c->name, "dgamma", dg, wdg, bdg, n));
        t->worst[f32] = fmax(t->worst[f32], w);
        printf("  %-28s f%d kernel: worst error/bound %.3g\n", c->name, f32 ? 32 : 64, w);
        for (size_t i = 0; i < rows; i++)
            cr_assert(isfinite(br[i]), "%s: rstd bound vacuous (f%d)", c->name, f32 ? 32 : 64);
        if (f32) { /* the alternative f32 implementation, same bound */
            alt_f32(y, r, dx, dg, x, g, dy, rows, n, eps, c->offset);
            double wa = ratio(c->name, "alt y", y, wy, by, N);
            wa = fmax(wa, ratio(c->name, "alt rstd", r, wr, br, rows));
            wa = fmax(wa, ratio(c->name, "alt dx", dx, wdx, bdx, N));
            wa = fmax(wa, ratio(c->name, "alt dgamma", dg, wdg, bdg, n));
            t->worst_alt = fmax(t->worst_alt, wa);
            kernels_f32(y, r, dx, dg, x, g, dy, rows, n, eps, c->offset);
        }
        if (f32) /* f16 / bf16 outputs: the f32 kernel's y rounded once, bound with u_out */
            for (int d = RN_F16; d <= RN_BF16; d++) {
                double *yl = malloc(N * sizeof *yl);
                cr_assert_eq(rmsnorm_forward_bound(by, br, x, g, rows, n, eps, c->offset,
                                                   rn_compute_dtype((rn_dtype)d), (rn_dtype)d), 0);
                for (size_t i = 0; i < N; i++)
                    yl[i] = rn_round(y[i], (rn_dtype)d);
                t->worst_lp = fmax(t->worst_lp, ratio(c->name, "y (16-bit)", yl, wy, by, N));
                free(yl);
            }
    }
    free(x), free(dy), free(g), free(wy), free(wr), free(wdx), free(wdg), free(by), free(br);
    free(bdx), free(bdg), free(y), free(r), free(dx), free(dg);
}

Test(rmsnorm_kernels, within_bound, .timeout = 600)
{
    tally t = {{0, 0}, 0, 0};
    for (size_t k = 0; k < sizeof CASES / sizeof CASES[0]; k++)
        run_case(&CASES[k], 100 + k, &t);
    printf("rmsnorm kernels within the a-priori bound (%zu row sets, forward + backward): worst "
           "error/bound f64 %.3g, f32 %.3g, f32 rounded to f16/bf16 %.3g; alternative f32 "
           "implementation %.3g\n",
           sizeof CASES / sizeof CASES[0], t.worst[0], t.worst[1], t.worst_lp, t.worst_alt);
    cr_assert(t.worst[0] > 0 && t.worst[1] > 0, "the comparison must have measured something");
}

/* ================================================================================================
 * (e) The bound has teeth.
 */

/* Fraction of elements outside the bound, and whether the correct f32 kernel is inside on the same
   row (the separation must come from the bug, not from a loose or vacuous row). */
static int outside(const double *got, const double *want, const double *bound, size_t count)
{
    int k = 0;
    for (size_t i = 0; i < count; i++)
        k += !(fabs(got[i] - want[i]) <= bound[i]);
    return k;
}

static void check_teeth(const char *bug, const double *got, const double *kernel,
                        const double *want, const double *bound, size_t count)
{
    for (size_t i = 0; i < count; i++)
        cr_assert(isfinite(bound[i]) && bound[i] > 0, "%s: bound at %zu is %g", bug, i, bound[i]);
    cr_assert_eq(outside(kernel, want, bound, count), 0, "%s: the correct kernel must pass", bug);
    int k = outside(got, want, bound, count);
    cr_assert(k > 0, "%s: must exceed the bound somewhere", bug);
    printf("rmsnorm bound catches %-44s: %d of %zu elements outside\n", bug, k, count);
}

/* Sum of squares in half precision: every operation rounded to f16 (rn_round), the rest in f32, the
   output rounded to f16 (the precision the checker is told: compute f32, out f16). */
static void f16_sumsq_row(double *y, const double *x, const double *g, size_t n, double eps)
{
    double s = 0.0;
    for (size_t i = 0; i < n; i++)
        s = rn_round(s + rn_round(x[i] * x[i], RN_F16), RN_F16);
    double ms = rn_round(s / (double)n, RN_F16);
    float r = 1.0f / sqrtf((float)ms + (float)eps);
    for (size_t i = 0; i < n; i++)
        y[i] = rn_round((double)((float)x[i] * r * (float)g[i]), RN_F16);
}

Test(rmsnorm_bound, teeth_f16_sum_of_squares)
{
    /* Overflow: |x| ~ 300, n = 1024: one square is 9e4 > 65504, so the f16 sum is +Inf, rstd 0,
       y 0, where the exact y is O(1). */
    enum { N = 1024 };
    static double x[N], g[N], want[N], by[N], yb[N], yk[N];
    double r, br, eps = (double)1e-5f;
    fill(x, g, NULL, 1, N, 300.0, 30.0, 1.0, 0.1, 21);
    cr_assert_eq(rmsnorm_forward_mpfr(want, &r, x, g, 1, N, eps, 0, RN_F64), 0);
    cr_assert_eq(rmsnorm_forward_bound(by, &br, x, g, 1, N, eps, 0, RN_F32, RN_F16), 0);
    f16_sumsq_row(yb, x, g, N, eps);
    double yk32[N], rk, dxk[N], dgk[N], dyz[N];
    memset(dyz, 0, sizeof dyz);
    kernels_f32(yk32, &rk, dxk, dgk, x, g, dyz, 1, N, eps, 0);
    for (int i = 0; i < N; i++)
        yk[i] = rn_round(yk32[i], RN_F16);
    check_teeth("f16 sum of squares (overflow, |x|~300)", yb, yk, want, by, N);

    /* Underflow: |x| ~ 2e-4, squares ~ 4e-8 < 2^-24 (the smallest f16 subnormal, 6e-8) round to
       0 or 2^-24 (relative error up to ~50%), eps = 1e-8: rstd off by tens of percent. */
    fill(x, g, NULL, 1, N, 0.0, 2e-4, 1.0, 0.1, 22);
    eps = (double)1e-8f;
    cr_assert_eq(rmsnorm_forward_mpfr(want, &r, x, g, 1, N, eps, 0, RN_F64), 0);
    cr_assert_eq(rmsnorm_forward_bound(by, &br, x, g, 1, N, eps, 0, RN_F32, RN_F16), 0);
    f16_sumsq_row(yb, x, g, N, eps);
    kernels_f32(yk32, &rk, dxk, dgk, x, g, dyz, 1, N, eps, 0);
    for (int i = 0; i < N; i++)
        yk[i] = rn_round(yk32[i], RN_F16);
    check_teeth("f16 sum of squares (underflow, |x|~2e-4)", yb, yk, want, by, N);
}

Test(rmsnorm_bound, teeth_eps_outside_sqrt_and_missing_offset)
{
    enum { N = 4096 };
    static double x[N], g[N], want[N], by[N], yb[N], yk[N], dyz[N], dxk[N], dgk[N];
    double r, br, rk;
    /* eps outside the sqrt, r = 1/(sqrt(ms) + eps): with |x| ~ 0.01 (ms ~ 3e-5) and eps = 1e-5,
       sqrt(ms + eps) and sqrt(ms) + eps differ by ~ 14 %, the bound is ~ n u / 2 ~ 1e-4. */
    double eps = (double)1e-5f;
    fill(x, g, NULL, 1, N, 0.0, 0.01, 1.0, 0.1, 23);
    cr_assert_eq(rmsnorm_forward_mpfr(want, &r, x, g, 1, N, eps, 0, RN_F64), 0);
    cr_assert_eq(rmsnorm_forward_bound(by, &br, x, g, 1, N, eps, 0, RN_F32, RN_F32), 0);
    {
        float s = 0.0f;
        for (int i = 0; i < N; i++)
            s += (float)x[i] * (float)x[i];
        float rr = 1.0f / (sqrtf(s / N) + (float)eps);
        for (int i = 0; i < N; i++)
            yb[i] = (float)x[i] * rr * (float)g[i];
    }
    kernels_f32(yk, &rk, dxk, dgk, x, g, dyz, 1, N, eps, 0);
    check_teeth("eps outside the sqrt (|x|~0.01, eps 1e-5)", yb, yk, want, by, N);

    /* Missing offset: the Gemma form y = xhat (1 + gamma) computed as xhat gamma, gamma ~ 0.1 u. */
    eps = (double)1e-6f;
    fill(x, g, NULL, 1, N, 0.0, 1.0, 0.0, 0.1, 24);
    cr_assert_eq(rmsnorm_forward_mpfr(want, &r, x, g, 1, N, eps, 1, RN_F64), 0);
    cr_assert_eq(rmsnorm_forward_bound(by, &br, x, g, 1, N, eps, 1, RN_F32, RN_F32), 0);
    {
        float fx[N], fg[N], fy[N], fr;
        for (int i = 0; i < N; i++)
            fx[i] = (float)x[i], fg[i] = (float)g[i];
        rmsnorm_row_forward_f32(fy, &fr, fx, fg, N, (float)eps, 0); /* offset forgotten */
        for (int i = 0; i < N; i++)
            yb[i] = fy[i];
    }
    kernels_f32(yk, &rk, dxk, dgk, x, g, dyz, 1, N, eps, 1);
    check_teeth("missing offset (gamma for 1 + gamma)", yb, yk, want, by, N);
}

/* Where the analysis is void the bound says so (+Inf), and where the exact value is non-finite, or
   an exact zero forced by an infinite input, it is 0 (specs/error-analysis-rmsnorm.md R§6). */
Test(rmsnorm_bound, void_and_nonfinite)
{
    enum { N = 4096 };
    static double x[N], g[N], dy[N], by[N], bdx[N], bdg[N];
    double br;
    /* |x| ~ 1e18 at n = 4096: n max x^2 ~ 4e39 > FLT_MAX / 2.  The f32 kernel's sum of squares does
       overflow (rstd = 0); the f64 analysis is fine. */
    fill(x, g, dy, 1, N, 0.0, 1e18, 1.0, 0.1, 31);
    cr_assert_eq(rmsnorm_forward_bound(by, &br, x, g, 1, N, 1e-5, 0, RN_F32, RN_F32), 0);
    cr_assert(isinf(br) && isinf(by[0]));
    cr_assert_eq(rmsnorm_backward_bound(bdx, bdg, dy, x, g, 1, N, 1e-5, 0, RN_F32, RN_F32), 0);
    cr_assert(isinf(bdx[0]) && isinf(bdg[0]));
    double y[N], r, dx[N], dg[N];
    kernels_f32(y, &r, dx, dg, x, g, dy, 1, N, 1e-5, 0);
    cr_assert(r == 0.0, "the f32 sum of squares overflows: rstd %g", r);
    cr_assert_eq(rmsnorm_forward_bound(by, &br, x, g, 1, N, 1e-5, 0, RN_F64, RN_F64), 0);
    cr_assert(isfinite(br) && isfinite(by[0]));
    /* Non-finite inputs: bound 0 (same class demanded); a non-finite gamma_j leaves the other
       columns' bounds and every dgamma bound finite. */
    const double xs[8] = {1, INFINITY, -2, 0, 1, 2, 3, 4}, gs[4] = {1, 1, NAN, 1};
    const double dys[8] = {1, 1, 1, 1, 1, 1, 1, 1};
    double bys[8], brs[2], bdxs[8], bdgs[4];
    cr_assert_eq(rmsnorm_forward_bound(bys, brs, xs, gs, 2, 4, 1e-5, 1, RN_F32, RN_F32), 0);
    /* row 0 holds +Inf: rstd and the finite x_i's y are void (a Kahan sum of squares gives NaN
       there, specs/error-analysis-rmsnorm.md R§6); the Inf element's y (exact NaN) and the NaN
       gamma's column keep bound 0. */
    cr_assert(isinf(brs[0]) && isinf(bys[0]) && bys[1] == 0 && bys[2] == 0 && bys[6] == 0);
    cr_assert(isfinite(brs[1]) && brs[1] > 0 && bys[4] > 0 && isfinite(bys[7]));
    cr_assert_eq(rmsnorm_backward_bound(bdxs, bdgs, dys, xs, gs, 2, 4, 1e-5, 1, RN_F32, RN_F32), 0);
    for (int i = 0; i < 8; i++)
        cr_assert(bdxs[i] == 0, "dx bound %d", i); /* row 0: Inf in x; row 1: NaN gamma_2 */
    cr_assert(bdgs[1] == 0 && bdgs[0] > 0 && isfinite(bdgs[0]) && bdgs[2] > 0 && isfinite(bdgs[2]));
    /* ... and the twin gives what the kernel gives there (exact zeros where the Inf row forces them). */
    double ys[8], rs[2];
    cr_assert_eq(rmsnorm_forward_mpfr(ys, rs, xs, gs, 2, 4, 1e-5, 1, RN_F32), 0);
    float fx[8], fg[4], fy[8], fr[2];
    for (int i = 0; i < 8; i++)
        fx[i] = (float)xs[i];
    for (int i = 0; i < 4; i++)
        fg[i] = (float)gs[i];
    rmsnorm_forward_f32(fy, fr, fx, fg, 2, 4, 1e-5f, 1);
    for (int i = 0; i < 8; i++)
        if (bys[i] == 0)
            cr_assert(isnan(ys[i]) ? isnan(fy[i]) : fy[i] == ys[i], "y[%d]: kernel %a twin %a", i,
                      (double)fy[i], ys[i]);
    cr_assert(fr[0] == rs[0]);
}

/* Subnormal gamma in f32 with |x| up to 1e4: y by (x r) w, (x w) r and x (r w) (where r w
   underflows and |x| scales the underflow, R§4) stays within the bound. */
Test(rmsnorm_bound, subnormal_gamma_every_association)
{
    enum { N = 16 };
    const double scales[] = {1e4, 1.0, 1e-3}, gammas[] = {1e-40, 3e-42, 1.4e-45};
    double worst = 0.0;
    for (int si = 0; si < 3; si++)
        for (int gi = 0; gi < 3; gi++) {
            double xd[N], gd[N], want[N], by[N], wr, br;
            float x[N], g = (float)gammas[gi];
            for (int i = 0; i < N; i++) {
                x[i] = (float)(scales[si] * ((double)((i * 7919) % 61) / 30.0 - 1.0));
                xd[i] = x[i], gd[i] = g;
            }
            cr_assert_eq(rmsnorm_forward_mpfr(want, &wr, xd, gd, 1, N, 1e-5, 0, RN_F64), 0);
            cr_assert_eq(rmsnorm_forward_bound(by, &br, xd, gd, 1, N, 1e-5, 0, RN_F32, RN_F32), 0);
            float ss = 0.0f;
            for (int i = 0; i < N; i++)
                ss = ss + x[i] * x[i];
            float r = 1.0f / sqrtf(ss / (float)N + (float)1e-5);
            for (int i = 0; i < N; i++) {
                float ys[3] = {(x[i] * r) * g, (x[i] * g) * r, x[i] * (r * g)};
                for (int k = 0; k < 3; k++) {
                    double e = fabs((double)ys[k] - want[i]);
                    cr_assert(e <= by[i], "scale %g gamma %g association %d i %d: err %g > %g",
                              scales[si], gammas[gi], k, i, e, by[i]);
                    worst = fmax(worst, e / by[i]);
                }
            }
        }
    printf("rmsnorm subnormal gamma, 3 associations: worst error/bound %.3g\n", worst);
}
