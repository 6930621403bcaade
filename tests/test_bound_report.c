/* How tight the rigorous LayerNorm bound is at production widths, and what it catches there.
 *
 * For an N(0,1) f32 row (gamma = 1, beta = 0, eps = 1e-5) at n = 768 and 4096 it prints, under
 * each implementation profile (ref/bound_profile.h), the rstd bound in units of u relative to rstd,
 * the median over the row of the y bound relative to |y| in u, and the median dx bound relative to
 * |dx| (dy ~ N(0,1)); then whether the rstd of three classic bugs -- unbiased variance (v n/(n-1)),
 * eps outside the sqrt (1/(sqrt(v) + eps)), eps dropped (1/sqrt(v)) -- leaves the bound.
 * The README's tolerance section quotes this output.  It asserts what specs/error-analysis.md
 * promises: the two-pass profile's rstd bound is within (n/2 + 16) u of the (n/2) u of §3, and the
 * default profile stays within 16x of it (Welford / Chan merges, §3.1).
 *
 * N(0,1) samples: the sum of 12 splitmix64 uniforms minus 6 (Irwin-Hall), no libm. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "bound_profile.h"
#include "layernorm_bound.h"
#include "layernorm_mpfr.h"

static double uniform01(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    z ^= z >> 31;
    return (double)(z >> 11) * 0x1p-53;
}

static double normal(uint64_t *s)
{
    double a = 0.0;
    for (int k = 0; k < 12; k++)
        a += uniform01(s);
    return a - 6.0;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, size_t n)
{
    qsort(v, n, sizeof *v, cmp_double);
    return v[n / 2];
}

Test(bound_report, layernorm_n768_n4096, .timeout = 120)
{
    const size_t widths[2] = {768, 4096};
    const rn_profile profs[3] = {RN_PROFILE_TWO_PASS, RN_PROFILE_MOMENTS, RN_PROFILE_RUNTIMES};
    const double u = 0x1p-24, eps = (double)1e-5f;
    printf("LayerNorm f32 bound on an N(0,1) row (gamma 1, beta 0, eps 1e-5), in u = 2^-24:\n");
    printf("%-6s %-10s %12s %12s %12s   %s\n", "n", "profile", "rstd", "y (median)",
           "dx (median)", "rstd of the bug leaves the bound: unbiased / eps outside / eps dropped");
    for (int w = 0; w < 2; w++) {
        size_t n = widths[w];
        double *x = malloc(n * sizeof *x), *g = malloc(n * sizeof *g), *b = calloc(n, sizeof *b);
        double *dy = malloc(n * sizeof *dy), *y = malloc(n * sizeof *y);
        double *by = malloc(n * sizeof *by), *rel = malloc(n * sizeof *rel);
        double *dx = malloc(n * sizeof *dx), *bdx = malloc(n * sizeof *bdx);
        double dg[4096], db[4096], bdg[4096], bdb[4096];
        uint64_t seed = 768 + n;
        for (size_t i = 0; i < n; i++) {
            x[i] = (double)(float)normal(&seed);
            dy[i] = (double)(float)normal(&seed);
            g[i] = 1.0;
        }
        double mean, rstd, bm, br;
        cr_assert_eq(layernorm_forward_mpfr(y, &mean, &rstd, x, g, b, 1, n, eps, RN_F64), 0);
        cr_assert_eq(layernorm_backward_mpfr(dx, dg, db, dy, x, g, 1, n, eps, RN_F64), 0);
        double v = 1.0 / (rstd * rstd) - eps; /* to ~1e-15: enough to place the bugs */
        double r_bug[3] = {1.0 / sqrt(v * (double)n / (double)(n - 1) + eps),
                           1.0 / (sqrt(v) + eps), 1.0 / sqrt(v)};
        double two_pass_R = 0.0;
        for (int p = 0; p < 3; p++) {
            rn_bound_set_profile(profs[p]);
            cr_assert_eq(layernorm_forward_bound(by, &bm, &br, x, g, b, 1, n, eps, RN_F32, RN_F32),
                         0);
            cr_assert_eq(layernorm_backward_bound(bdx, bdg, bdb, dy, x, g, 1, n, eps, RN_F32,
                                                  RN_F32), 0);
            double R = br / rstd / u;
            for (size_t i = 0; i < n; i++)
                rel[i] = by[i] / fabs(y[i]) / u;
            double ymed = median(rel, n);
            for (size_t i = 0; i < n; i++)
                rel[i] = bdx[i] / fabs(dx[i]) / u;
            double dxmed = median(rel, n);
            printf("%-6zu %-10s %12.0f %12.0f %12.0f   %s / %s / %s\n", n, rn_profile_name(profs[p]),
                   R, ymed, dxmed, fabs(r_bug[0] - rstd) > br ? "caught" : "missed",
                   fabs(r_bug[1] - rstd) > br ? "caught" : "missed",
                   fabs(r_bug[2] - rstd) > br ? "caught" : "missed");
            if (profs[p] == RN_PROFILE_TWO_PASS) {
                two_pass_R = R;
                cr_expect(R <= (double)n / 2.0 + 16.0, "two-pass rstd bound %g u > n/2 + 16", R);
            } else {
                cr_expect(R <= 16.0 * two_pass_R, "%s rstd bound %g u > 16 x two-pass",
                          rn_profile_name(profs[p]), R);
            }
        }
        rn_bound_set_profile(RN_PROFILE_MOMENTS); /* the default */
        free(x), free(g), free(b), free(dy), free(y), free(by), free(rel), free(dx), free(bdx);
    }
}
