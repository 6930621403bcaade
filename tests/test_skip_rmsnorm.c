/* skip + RMSNorm (ref/skip_rmsnorm.c, ref/skip_rmsnorm_mpfr.c, ref/skip_rmsnorm_bound.c,
 * cli/op_skip_rmsnorm.c):
 *  - the float and double kernels against the golden vectors within the composed bound of
 *    specs/error-analysis-residual.md §8 (worst error/bound ratio printed);
 *  - the twin against the RMSNorm twin's independent double-input path where x + skip + bias is a
 *    binary64 value (checked with TwoSum), and against an independent 4096-bit evaluation where it
 *    is not (x = 1, skip = 2^-40 a + 2^-90 b);
 *  - the backward (skip_rmsnorm_backward): kernels against the golden vectors within the bound of
 *    §9, the twin's dx/dgamma against the RMSNorm twin on exact double sums and its dbias against
 *    an independent 4096-bit evaluation;
 *  - `resnorm eval` / `check` on hand-derived values, and bad input.
 * Expected values never come from the code under test. */
#include <criterion/criterion.h>
#include <jansson.h>
#include <math.h>
#include <mpfr.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "npy.h"
#include "golden_harness.h"
#include "rmsnorm_mpfr.h"
#include "skip_rmsnorm.h"
#include "skip_rmsnorm_bound.h"
#include "skip_rmsnorm_mpfr.h"

#define MANIFEST "golden/manifest.json"

static int same(double a, double b)
{
    if (isnan(a) || isnan(b))
        return isnan(a) && isnan(b);
    return a == b;
}

/* ================================================================ kernels vs golden */

static void run_case(json_t *c, double worst[2][2], int cases[2])
{
    const char *id = json_string_value(json_object_get(c, "id"));
    json_t *in = json_object_get(c, "inputs"), *attrs = json_object_get(c, "attrs");
    json_t *exp = json_object_get(json_object_get(c, "expected"), "f64");
    rn_array x = load(get_path(in, "x")), k = load(get_path(in, "skip")), g = load(get_path(in, "gamma"));
    int has_bias = get_path(in, "bias") != NULL, offset;
    rn_array bias = {0};
    if (has_bias)
        bias = load(get_path(in, "bias"));
    size_t rows, n;
    rows_n(&x, (long)json_integer_value(json_object_get(attrs, "axis")), &rows, &n);
    offset = (int)json_integer_value(json_object_get(attrs, "offset"));
    double eps;
    eps = case_eps(c);
    int f32 = x.dtype == RN_F32;
    rn_dtype cd = f32 ? RN_F32 : RN_F64;
    size_t N = rows * n;
    double *gy = malloc(N * 8), *gs = malloc(N * 8), *gr = malloc(rows * 8), *by = malloc(N * 8),
           *bs = malloc(N * 8), *br = malloc(rows * 8);
    if (f32) {
        float *fx = malloc(N * 4), *fk = malloc(N * 4), *fy = malloc(N * 4), *fs = malloc(N * 4);
        float *fg = calloc(n, 4), *fbias = calloc(n, 4), *fr = malloc(rows * 4);
        for (size_t i = 0; i < N; i++)
            fx[i] = (float)x.data[i], fk[i] = (float)k.data[i];
        for (size_t j = 0; j < n; j++) {
            fg[j] = (float)g.data[j];
            fbias[j] = has_bias ? (float)bias.data[j] : 0.0f;
        }
        skip_rmsnorm_forward_f32(fy, fr, fs, fx, fk, fg, has_bias ? fbias : NULL, (int)rows,
                                 (int)n, (float)eps, offset);
        for (size_t i = 0; i < N; i++)
            gy[i] = fy[i], gs[i] = fs[i];
        for (size_t r = 0; r < rows; r++)
            gr[r] = fr[r];
        free(fx), free(fk), free(fy), free(fs), free(fg), free(fbias), free(fr);
    } else {
        skip_rmsnorm_forward_f64(gy, gr, gs, x.data, k.data, g.data, has_bias ? bias.data : NULL,
                                 (int)rows, (int)n, eps, offset);
    }
    cr_assert_eq(skip_rmsnorm_forward_bound(by, br, bs, x.data, k.data, g.data,
                                            has_bias ? bias.data : NULL, rows, n, eps, offset, cd,
                                            cd), 0);
    rn_array wy = load(get_path(exp, "y")), wr = load(get_path(exp, "rstd")),
             ws = load(get_path(exp, "sum"));
    double w = fmax(golden_compare(id, "y", gy, wy.data, by, N), golden_compare(id, "rstd", gr, wr.data, br, rows));
    double wsum = golden_compare(id, "sum", gs, ws.data, bs, N);
    worst[f32][0] = fmax(worst[f32][0], w);
    worst[f32][1] = fmax(worst[f32][1], wsum);
    cases[f32]++;
    free(gy), free(gs), free(gr), free(by), free(bs), free(br);
    rn_array_free(&x), rn_array_free(&k), rn_array_free(&g), rn_array_free(&bias);
    rn_array_free(&wy), rn_array_free(&wr), rn_array_free(&ws);
}

Test(skip_rmsnorm_golden, kernels_within_composed_bound)
{
    json_error_t jerr;
    json_t *man = json_load_file(MANIFEST, 0, &jerr);
    cr_assert_not_null(man, "%s: %s", MANIFEST, jerr.text);
    double worst[2][2] = {{0, 0}, {0, 0}}; /* [f32?][y rstd | sum] */
    int cases[2] = {0, 0};
    size_t k;
    json_t *c;
    json_array_foreach(json_object_get(man, "cases"), k, c)
    {
        const char *dt = json_string_value(json_object_get(c, "input_dtype"));
        if (strcmp(json_string_value(json_object_get(c, "op")), "skip_rmsnorm") != 0 ||
            (strcmp(dt, "f32") != 0 && strcmp(dt, "f64") != 0))
            continue;
        run_case(c, worst, cases);
    }
    json_decref(man);
    cr_assert(cases[0] > 0 && cases[1] > 0);
    printf("skip_rmsnorm kernels vs golden, worst error/bound: f64 %d cases: y/rstd %.6g, sum %.6g; "
           "f32 %d cases: y/rstd %.6g, sum %.6g\n", cases[0], worst[0][0], worst[0][1], cases[1],
           worst[1][0], worst[1][1]);
}

/* Backward: the forward kernel (for the rounded sum and rstd, as training keeps them), then the
   backward kernel; dskip is dx. */
static void run_bwd_case(json_t *c, double worst[2], int cases[2])
{
    const char *id = json_string_value(json_object_get(c, "id"));
    json_t *in = json_object_get(c, "inputs"), *attrs = json_object_get(c, "attrs");
    json_t *exp = json_object_get(json_object_get(c, "expected"), "f64");
    rn_array x = load(get_path(in, "x")), k = load(get_path(in, "skip")),
             g = load(get_path(in, "gamma")), dy = load(get_path(in, "dy"));
    int has_bias = get_path(in, "bias") != NULL;
    rn_array bias = {0};
    if (has_bias)
        bias = load(get_path(in, "bias"));
    size_t rows, n;
    rows_n(&x, (long)json_integer_value(json_object_get(attrs, "axis")), &rows, &n);
    int offset = (int)json_integer_value(json_object_get(attrs, "offset"));
    double eps;
    eps = case_eps(c);
    int f32 = x.dtype == RN_F32;
    rn_dtype cd = f32 ? RN_F32 : RN_F64;
    size_t N = rows * n;
    double *gdx = malloc(N * 8), *gdb = malloc(n * 8), *gdg = calloc(n, 8), *bdx = malloc(N * 8),
           *bdb = malloc(n * 8), *bdg = malloc(n * 8);
    const double *bp = has_bias ? bias.data : NULL;
    if (f32) {
        float *fx = malloc(N * 4), *fk = malloc(N * 4), *fy = malloc(N * 4), *fs = malloc(N * 4),
              *fdy = malloc(N * 4), *fdx = malloc(N * 4);
        float *fg = calloc(n, 4), *fbias = calloc(n, 4), *fdb = calloc(n, 4), *fdg = calloc(n, 4),
              *fr = malloc(rows * 4);
        for (size_t i = 0; i < N; i++)
            fx[i] = (float)x.data[i], fk[i] = (float)k.data[i], fdy[i] = (float)dy.data[i];
        for (size_t j = 0; j < n; j++)
            fg[j] = (float)g.data[j], fbias[j] = has_bias ? (float)bias.data[j] : 0.0f;
        skip_rmsnorm_forward_f32(fy, fr, fs, fx, fk, fg, has_bias ? fbias : NULL, (int)rows,
                                 (int)n, (float)eps, offset);
        skip_rmsnorm_backward_f32(fdx, fdb, fdg, fdy, fs, fg, fr, (int)rows, (int)n, offset);
        for (size_t i = 0; i < N; i++)
            gdx[i] = fdx[i];
        for (size_t j = 0; j < n; j++)
            gdb[j] = fdb[j], gdg[j] = fdg[j];
        free(fx), free(fk), free(fy), free(fs), free(fdy), free(fdx);
        free(fg), free(fbias), free(fdb), free(fdg), free(fr);
    } else {
        double *y = malloc(N * 8), *sm = malloc(N * 8), *r = malloc(rows * 8);
        skip_rmsnorm_forward_f64(y, r, sm, x.data, k.data, g.data, bp, (int)rows, (int)n, eps,
                                 offset);
        skip_rmsnorm_backward_f64(gdx, gdb, gdg, dy.data, sm, g.data, r, (int)rows, (int)n, offset);
        free(y), free(sm), free(r);
    }
    cr_assert_eq(skip_rmsnorm_backward_bound(bdx, bdb, bdg, dy.data, x.data, k.data, g.data, bp,
                                             rows, n, eps, offset, cd, cd), 0);
    rn_array wdx = load(get_path(exp, "dx")), wds = load(get_path(exp, "dskip")),
             wdb = load(get_path(exp, "dbias")), wdg = load(get_path(exp, "dgamma"));
    double w = golden_compare(id, "dx", gdx, wdx.data, bdx, N);
    w = fmax(w, golden_compare(id, "dskip", gdx, wds.data, bdx, N));
    w = fmax(w, golden_compare(id, "dgamma", gdg, wdg.data, bdg, n));
    double wb = golden_compare(id, "dbias", gdb, wdb.data, bdb, n);
    worst[f32] = fmax(worst[f32], fmax(w, wb));
    cases[f32]++;
    free(gdx), free(gdb), free(gdg), free(bdx), free(bdb), free(bdg);
    rn_array_free(&x), rn_array_free(&k), rn_array_free(&g), rn_array_free(&dy);
    rn_array_free(&bias), rn_array_free(&wdx), rn_array_free(&wds), rn_array_free(&wdb);
    rn_array_free(&wdg);
}

Test(skip_rmsnorm_golden, backward_kernels_within_bound)
{
    json_error_t jerr;
    json_t *man = json_load_file(MANIFEST, 0, &jerr);
    cr_assert_not_null(man, "%s: %s", MANIFEST, jerr.text);
    double worst[2] = {0, 0};
    int cases[2] = {0, 0};
    size_t k;
    json_t *c;
    json_array_foreach(json_object_get(man, "cases"), k, c)
    {
        const char *dt = json_string_value(json_object_get(c, "input_dtype"));
        if (strcmp(json_string_value(json_object_get(c, "op")), "skip_rmsnorm_backward") != 0 ||
            (strcmp(dt, "f32") != 0 && strcmp(dt, "f64") != 0))
            continue;
        run_bwd_case(c, worst, cases);
    }
    json_decref(man);
    cr_assert(cases[0] > 0 && cases[1] > 0);
    printf("skip_rmsnorm_backward kernels vs golden, worst error/bound (dx, dskip, dbias, dgamma): "
           "f64 %d cases %.6g; f32 %d cases %.6g\n", cases[0], worst[0], cases[1], worst[1]);
}

/* ================================================================ twin vs RMSNorm twin */

static uint64_t sm_next(uint64_t *z)
{
    uint64_t r = (*z += 0x9E3779B97F4A7C15ull);
    r = (r ^ (r >> 30)) * 0xBF58476D1CE4E5B9ull;
    r = (r ^ (r >> 27)) * 0x94D049BB133111EBull;
    return r ^ (r >> 31);
}

/* Uniform in (-2^e, 2^e), a float. */
static double rnd_f32(uint64_t *z, int e)
{
    double u = (double)(sm_next(z) >> 11) * 0x1p-53 * 2.0 - 1.0;
    return (float)ldexp(u, e);
}

/* a + b exactly in double?  (TwoSum: the rounding error is zero) */
static int exact_add(double a, double b, double *s)
{
    *s = a + b;
    double z = *s - a;
    return (a - (*s - z)) + (b - z) == 0.0;
}

Test(skip_rmsnorm_twin, equals_rmsnorm_twin_on_exact_double_sums)
{
    enum { ROWS = 6, N = 40 };
    static double x[ROWS * N], k[ROWS * N], s[ROWS * N], g[N], bias[N];
    static double y1[ROWS * N], y2[ROWS * N], sum1[ROWS * N], r1[ROWS], r2[ROWS];
    uint64_t z = 11;
    for (int t = 0; t < 20; t++) {
        for (int j = 0; j < N; j++)
            g[j] = rnd_f32(&z, 1), bias[j] = rnd_f32(&z, t % 3 - 1);
        for (int i = 0; i < ROWS * N; i++) {
            int row = i / N;
            x[i] = rnd_f32(&z, row * 3 - 6 + t % 5);
            k[i] = rnd_f32(&z, row * 2 - 3);
            double xk;
            int ok = exact_add(x[i], k[i], &xk) && exact_add(xk, bias[i % N], &s[i]);
            cr_assert(ok, "test data: the sum is not a double (pick closer exponents)");
        }
        rn_dtype out = (rn_dtype)(t % RN_NDTYPES);
        double eps = t % 4 ? 1e-5 : 0.0;
        int offset = t % 3 == 2;
        cr_assert_eq(skip_rmsnorm_forward_mpfr(y1, r1, sum1, x, k, g, bias, ROWS, N, eps, offset,
                                               out), RN_TWIN_OK);
        cr_assert_eq(rmsnorm_forward_mpfr(y2, r2, s, g, ROWS, N, eps, offset, out), RN_TWIN_OK);
        for (int i = 0; i < ROWS * N; i++) {
            cr_assert(same(y1[i], y2[i]), "y[%d]: %a vs %a", i, y1[i], y2[i]);
            if (out == RN_F64 || out == RN_F32) { /* one rounding of the exact sum */
                double ws = out == RN_F32 ? (float)s[i] : s[i];
                cr_assert(same(sum1[i], ws), "sum[%d]: %a vs %a", i, sum1[i], ws);
            }
        }
        for (int r = 0; r < ROWS; r++)
            cr_assert(same(r1[r], r2[r]), "row %d", r);
    }
}

/* Backward on exact double sums: dx, dskip, dgamma equal the RMSNorm twin's on the double sum; dbias
   equals an independent 4096-bit evaluation of sum_r dx_rj from the formula of specs/rmsnorm.h,
   dx = rstd (g - shat mean(g shat)), rounded to double by MPFR. */
Test(skip_rmsnorm_twin, backward_on_exact_double_sums)
{
    enum { ROWS = 3, N = 8 };
    static double x[ROWS * N], k[ROWS * N], s[ROWS * N], g[N], bias[N], dy[ROWS * N];
    static double dx[ROWS * N], dsk[ROWS * N], db[N], dg[N], dx2[ROWS * N], dg2[N];
    uint64_t z = 23;
    mpfr_t acc, t, rs, mg, col[N];
    mpfr_inits2(4096, acc, t, rs, mg, (mpfr_ptr)0);
    for (int tr = 0; tr < 8; tr++) {
        int offset = tr % 2;
        double eps = tr % 3 ? 1e-5 : 0.0;
        for (int j = 0; j < N; j++)
            g[j] = rnd_f32(&z, 0), bias[j] = rnd_f32(&z, -1);
        for (int i = 0; i < ROWS * N; i++) {
            x[i] = rnd_f32(&z, 1);
            k[i] = rnd_f32(&z, 0);
            dy[i] = rnd_f32(&z, 0);
            double xk;
            cr_assert(exact_add(x[i], k[i], &xk) && exact_add(xk, bias[i % N], &s[i]));
        }
        cr_assert_eq(skip_rmsnorm_backward_mpfr(dx, dsk, db, dg, dy, x, k, g, bias, ROWS, N, eps,
                                                offset, RN_F64), RN_TWIN_OK);
        cr_assert_eq(rmsnorm_backward_mpfr(dx2, dg2, dy, s, g, ROWS, N, eps, offset, RN_F64),
                     RN_TWIN_OK);
        for (int i = 0; i < ROWS * N; i++)
            cr_assert(same(dx[i], dx2[i]) && same(dsk[i], dx2[i]), "dx[%d]", i);
        for (int j = 0; j < N; j++) {
            cr_assert(same(dg[j], dg2[j]), "dgamma[%d]", j);
            mpfr_init2(col[j], 4096);
            mpfr_set_zero(col[j], 1);
        }
        for (int r = 0; r < ROWS; r++) {
            const double *sr = s + r * N, *dr = dy + r * N;
            mpfr_set_zero(acc, 1);
            for (int j = 0; j < N; j++) {
                mpfr_set_d(t, sr[j], MPFR_RNDN);
                mpfr_sqr(t, t, MPFR_RNDN);
                mpfr_add(acc, acc, t, MPFR_RNDN);
            }
            mpfr_div_ui(acc, acc, N, MPFR_RNDN);
            mpfr_add_d(acc, acc, eps, MPFR_RNDN);
            mpfr_rec_sqrt(rs, acc, MPFR_RNDN);           /* rstd */
            mpfr_set_zero(mg, 1);                        /* mean(g shat) */
            for (int j = 0; j < N; j++) {
                mpfr_set_d(t, g[j], MPFR_RNDN);
                if (offset)
                    mpfr_add_ui(t, t, 1, MPFR_RNDN);
                mpfr_mul_d(t, t, dr[j], MPFR_RNDN);      /* g_j */
                mpfr_mul_d(t, t, sr[j], MPFR_RNDN);
                mpfr_mul(t, t, rs, MPFR_RNDN);           /* g_j shat_j */
                mpfr_add(mg, mg, t, MPFR_RNDN);
            }
            mpfr_div_ui(mg, mg, N, MPFR_RNDN);
            for (int j = 0; j < N; j++) {
                mpfr_set_d(acc, sr[j], MPFR_RNDN);
                mpfr_mul(acc, acc, rs, MPFR_RNDN);
                mpfr_mul(acc, acc, mg, MPFR_RNDN);       /* shat_j mean(g shat) */
                mpfr_set_d(t, g[j], MPFR_RNDN);
                if (offset)
                    mpfr_add_ui(t, t, 1, MPFR_RNDN);
                mpfr_mul_d(t, t, dr[j], MPFR_RNDN);
                mpfr_sub(t, t, acc, MPFR_RNDN);
                mpfr_mul(t, t, rs, MPFR_RNDN);           /* dx_rj */
                mpfr_add(col[j], col[j], t, MPFR_RNDN);
            }
        }
        for (int j = 0; j < N; j++) {
            double want = mpfr_get_d(col[j], MPFR_RNDN);
            cr_assert(same(db[j], want), "trial %d dbias[%d]: %a vs %a", tr, j, db[j], want);
            mpfr_clear(col[j]);
        }
    }
    mpfr_clears(acc, t, rs, mg, (mpfr_ptr)0);
}

/* x = 1, skip = 2^-40 a + 2^-90 b (a double: 50 bits): s = 1 + skip spans 90 bits, not a double.
   Independent evaluation at 4096 bits: rstd = 1/sqrt(sum s^2 / n), y = s gamma rstd, each then
   rounded to double / float by MPFR (the 4096-bit error is far below any rounding boundary's
   distance for these data; eps = 0). */
Test(skip_rmsnorm_twin, exact_beyond_binary64)
{
    enum { N = 16 };
    static const double a[N] = {3, -1, 4, 1, -5, 9, 2, -6, 5, 3, -5, 8, 9, -7, 9, 3};
    double x[N], skip[N], g[N], y[N], sum[N], r;
    mpfr_t s[N], acc, t, rs;
    mpfr_inits2(4096, acc, t, rs, (mpfr_ptr)0);
    mpfr_set_zero(acc, 1);
    for (int i = 0; i < N; i++) {
        x[i] = 1.0;
        skip[i] = ldexp(a[i], -40) + ldexp(a[(i + 5) % N], -90);
        g[i] = 1.0 + i / 16.0;
        mpfr_init2(s[i], 4096);
        mpfr_set_d(s[i], x[i], MPFR_RNDN);
        mpfr_add_d(s[i], s[i], skip[i], MPFR_RNDN); /* exact */
        mpfr_sqr(t, s[i], MPFR_RNDN);
        mpfr_add(acc, acc, t, MPFR_RNDN);
    }
    mpfr_div_ui(acc, acc, N, MPFR_RNDN);
    mpfr_rec_sqrt(rs, acc, MPFR_RNDN);
    for (int d = 0; d < 2; d++) {
        rn_dtype out = d ? RN_F32 : RN_F64;
        cr_assert_eq(skip_rmsnorm_forward_mpfr(y, &r, sum, x, skip, g, NULL, 1, N, 0.0, 0, out),
                     RN_TWIN_OK);
        double wr = d ? (double)mpfr_get_flt(rs, MPFR_RNDN) : mpfr_get_d(rs, MPFR_RNDN);
        cr_assert(same(r, wr), "%s rstd %a vs %a", rn_dtype_name(out), r, wr);
        for (int i = 0; i < N; i++) {
            mpfr_mul(t, s[i], rs, MPFR_RNDN);
            mpfr_mul_d(t, t, g[i], MPFR_RNDN);
            double wy = d ? (double)mpfr_get_flt(t, MPFR_RNDN) : mpfr_get_d(t, MPFR_RNDN);
            double wsum = d ? (double)mpfr_get_flt(s[i], MPFR_RNDN) : mpfr_get_d(s[i], MPFR_RNDN);
            cr_assert(same(y[i], wy), "%s y[%d]: %a vs %a", rn_dtype_name(out), i, y[i], wy);
            cr_assert(same(sum[i], wsum), "%s sum[%d]: %a vs %a", rn_dtype_name(out), i, sum[i], wsum);
        }
    }
    for (int i = 0; i < N; i++)
        mpfr_clear(s[i]);
    mpfr_clears(acc, t, rs, (mpfr_ptr)0);
}

/* ================================================================ the CLI */

#define CLI_HARNESS_PREFIX "/tmp/resnorm_test_srms."
#include "cli_harness.h"

/* The CLI tests here write f32 inputs. */
static void put(const char *name, int ndim, const size_t *shape, const double *v)
{
    put_npy(name, RN_F32, ndim, shape, v);
}

static void expect_file(const char *name, size_t count, const double *want)
{
    rn_array a = load(P(name));
    cr_assert_eq(a.count, count);
    for (size_t i = 0; i < count; i++)
        cr_assert_eq(a.data[i], want[i], "%s[%zu] = %a, expected %a", name, i, a.data[i], want[i]);
    rn_array_free(&a);
}

TestSuite(skip_rmsnorm_cli, .init = setup, .fini = teardown);

/* x = [[1, 3, 0, 0]], skip = [[2, 1, 0, 0]], gamma = [1, 1, 2, 2], eps = 0.
 * no bias: s = [3, 4, 0, 0], mean(s^2) = 25/4, rstd = 2/5, y = [1.2, 1.6, 0, 0].
 * bias = [1, -1, 0, 0]: s = [4, 3, 0, 0], same rstd, y = [1.6, 1.2, 0, 0]; offset 1 (w = [2, 2, 3, 3]):
 *   y = [3.2, 2.4, 0, 0]. */
static const size_t S14[] = {1, 4}, S4[] = {4}, S3[] = {3};
static const double X[] = {1, 3, 0, 0}, K[] = {2, 1, 0, 0}, G[] = {1, 1, 2, 2}, BIAS[] = {1, -1, 0, 0};

static void put_inputs(void)
{
    put("x.npy", 2, S14, X);
    put("k.npy", 2, S14, K);
    put("g.npy", 1, S4, G);
    put("bias.npy", 1, S4, BIAS);
}

static void expect_f32(const char *name, size_t count, const float *want)
{
    double w[8];
    for (size_t i = 0; i < count; i++)
        w[i] = want[i];
    expect_file(name, count, w);
}

Test(skip_rmsnorm_cli, eval_with_and_without_bias_and_offset)
{
    put_inputs();
    int rc = run("eval skip_rmsnorm --in x=%s --in skip=%s --in gamma=%s --attr eps=0 --out %s",
                 P("x.npy"), P("k.npy"), P("g.npy"), P("o0"));
    cr_assert_eq(rc, 0, "exit %d: %s", rc, err_text);
    expect_f32("o0/y.npy", 4, (const float[]){1.2f, 1.6f, 0, 0});
    expect_f32("o0/sum.npy", 4, (const float[]){3, 4, 0, 0});
    expect_f32("o0/rstd.npy", 1, (const float[]){0.4f});
    rc = run("eval skip_rmsnorm --in x=%s --in skip=%s --in gamma=%s --in bias=%s --attr eps=0 "
             "--attr offset=1 --out %s", P("x.npy"), P("k.npy"), P("g.npy"), P("bias.npy"), P("o1"));
    cr_assert_eq(rc, 0, "exit %d: %s", rc, err_text);
    expect_f32("o1/y.npy", 4, (const float[]){3.2f, 2.4f, 0, 0});
    expect_f32("o1/sum.npy", 4, (const float[]){4, 3, 0, 0});
    expect_f32("o1/rstd.npy", 1, (const float[]){0.4f});
    /* check: the exact values pass; the bias-less sum is not the biased one */
    rc = run("check skip_rmsnorm --in x=%s --in skip=%s --in gamma=%s --in bias=%s --attr eps=0 "
             "--attr offset=1 --actual y=%s --actual sum=%s --actual rstd=%s", P("x.npy"),
             P("k.npy"), P("g.npy"), P("bias.npy"), P("o1/y.npy"), P("o1/sum.npy"),
             P("o1/rstd.npy"));
    cr_assert_eq(rc, 0, "exit %d: %s%s", rc, out_text, err_text);
    rc = run("check skip_rmsnorm --in x=%s --in skip=%s --in gamma=%s --in bias=%s --attr eps=0 "
             "--attr offset=1 --actual sum=%s", P("x.npy"), P("k.npy"), P("g.npy"), P("bias.npy"),
             P("o0/sum.npy"));
    cr_assert_eq(rc, 1, "exit %d: %s%s", rc, out_text, err_text);
}

/* Backward, two rows: s = [[3, 4, 0, 0], [0, 0, 3, 4]] (x + skip), gamma = 1, eps = 0, offset 0;
 * dy = [[1, 0, 0, 0], [0, 0, 1, 0]].  Row 0 (as in tests/test_rmsnorm_golden.c): rstd = 0.4,
 * shat = [1.2, 1.6, 0, 0], mean(g shat) = 0.3, dx = 0.4 ([1, 0, 0, 0] - 0.3 shat)
 * = [0.256, -0.192, 0, 0]; row 1 is row 0 with the columns moved by 2.  dskip = dx;
 * dbias = sum over rows = [0.256, -0.192, 0.256, -0.192]; dgamma = sum dy shat = [1.2, 0, 1.2, 0]. */
Test(skip_rmsnorm_cli, eval_backward_closed_form)
{
    static const size_t S24[] = {2, 4};
    put("x2.npy", 2, S24, (const double[]){1, 3, 0, 0, 0, 0, 1, 3});
    put("k2.npy", 2, S24, (const double[]){2, 1, 0, 0, 0, 0, 2, 1});
    put("dy2.npy", 2, S24, (const double[]){1, 0, 0, 0, 0, 0, 1, 0});
    put("one.npy", 1, S4, (const double[]){1, 1, 1, 1});
    int rc = run("eval skip_rmsnorm_backward --in x=%s --in skip=%s --in gamma=%s --in dy=%s "
                 "--attr eps=0 --out %s", P("x2.npy"), P("k2.npy"), P("one.npy"), P("dy2.npy"),
                 P("b"));
    cr_assert_eq(rc, 0, "exit %d: %s", rc, err_text);
    static const float DX[] = {0.256f, -0.192f, 0, 0, 0, 0, 0.256f, -0.192f};
    expect_f32("b/dx.npy", 8, DX);
    expect_f32("b/dskip.npy", 8, DX);
    expect_f32("b/dbias.npy", 4, (const float[]){0.256f, -0.192f, 0.256f, -0.192f});
    expect_f32("b/dgamma.npy", 4, (const float[]){1.2f, 0, 1.2f, 0});
    rc = run("check skip_rmsnorm_backward --in x=%s --in skip=%s --in gamma=%s --in dy=%s "
             "--attr eps=0 --actual dx=%s --actual dbias=%s --actual dgamma=%s", P("x2.npy"),
             P("k2.npy"), P("one.npy"), P("dy2.npy"), P("b/dx.npy"), P("b/dbias.npy"),
             P("b/dgamma.npy"));
    cr_assert_eq(rc, 0, "exit %d: %s%s", rc, out_text, err_text);
    /* dbias not summed over rows (row 0's dx only) fails */
    put("db_row0.npy", 1, S4, (const double[]){0.256f, -0.192f, 0, 0});
    rc = run("check skip_rmsnorm_backward --in x=%s --in skip=%s --in gamma=%s --in dy=%s "
             "--attr eps=0 --actual dbias=%s", P("x2.npy"), P("k2.npy"), P("one.npy"),
             P("dy2.npy"), P("db_row0.npy"));
    cr_assert_eq(rc, 1, "exit %d: %s%s", rc, out_text, err_text);
}

Test(skip_rmsnorm_cli, bad_input_exit_2_no_output)
{
    put_inputs();
    put("k3.npy", 1, S3, (const double[]){1, 1, 1});
    int rc = run("eval skip_rmsnorm --in x=%s --in skip=%s --in gamma=%s --out %s", P("x.npy"),
                 P("k3.npy"), P("g.npy"), P("out"));
    cr_assert_eq(rc, 2, "exit %d", rc);
    cr_assert_not_null(strstr(err_text, "input skip"), "%s", err_text);
    rc = run("eval skip_rmsnorm --in x=%s --in skip=%s --in gamma=%s --attr offset=2 --out %s",
             P("x.npy"), P("k.npy"), P("g.npy"), P("out"));
    cr_assert_eq(rc, 2, "exit %d", rc);
    rc = run("eval skip_rmsnorm --in x=%s --in skip=%s --in gamma=%s --in beta=%s --out %s",
             P("x.npy"), P("k.npy"), P("g.npy"), P("g.npy"), P("out"));
    cr_assert_eq(rc, 2, "exit %d", rc);
    cr_assert_eq(access(P("out"), F_OK), -1, "output left behind");
}
