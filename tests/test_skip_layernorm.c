/* skip + LayerNorm (ref/skip_layernorm.c, ref/skip_layernorm_mpfr.c, ref/skip_layernorm_bound.c,
 * cli/op_skip_layernorm.c):
 *  - the float and double kernels against the golden vectors within the composed bound of
 *    specs/error-analysis-residual.md §7 (worst error/bound ratio printed);
 *  - the twin against the LayerNorm twin's independent double-input path: where x + skip + bias is
 *    a binary64 value (checked with TwoSum), on that double; where it is not (x = 1, skip = 2^-80 k),
 *    through LayerNorm's invariance under s -> a s + c (eps = 0): LN(1 + 2^-80 k) = LN(k);
 *  - the backward (skip_layernorm_backward): kernels against the golden vectors within the bound of
 *    §9; the twin's dx/dgamma/dbeta against the LayerNorm twin on exact double sums, its dbias
 *    against an independent 4096-bit evaluation;
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

#include "layernorm_mpfr.h"
#include "npy.h"
#include "golden_harness.h"
#include "skip_layernorm.h"
#include "skip_layernorm_bound.h"
#include "skip_layernorm_mpfr.h"

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
    rn_array x = load(get_path(in, "x")), k = load(get_path(in, "skip"));
    rn_array g = load(get_path(in, "gamma")), b = load(get_path(in, "beta"));
    int has_bias = get_path(in, "bias") != NULL;
    rn_array bias = {0};
    if (has_bias)
        bias = load(get_path(in, "bias"));
    size_t rows, n;
    rows_n(&x, (long)json_integer_value(json_object_get(attrs, "axis")), &rows, &n);
    double eps;
    eps = case_eps(c);
    int f32 = x.dtype == RN_F32;
    rn_dtype cd = f32 ? RN_F32 : RN_F64;
    size_t N = rows * n;
    double *gy = malloc(N * sizeof *gy), *gs = malloc(N * sizeof *gs), *gm = malloc(rows * 8),
           *gr = malloc(rows * 8), *by = malloc(N * 8), *bs = malloc(N * 8), *bm = malloc(rows * 8),
           *br = malloc(rows * 8);
    if (f32) {
        float *fx = malloc(N * 4), *fk = malloc(N * 4), *fy = malloc(N * 4), *fs = malloc(N * 4);
        float *fg = malloc(n * 4), *fb = malloc(n * 4), *fbias = malloc(n * 4);
        float *fm = malloc(rows * 4), *fr = malloc(rows * 4);
        for (size_t i = 0; i < N; i++)
            fx[i] = (float)x.data[i], fk[i] = (float)k.data[i];
        for (size_t j = 0; j < n; j++) {
            fg[j] = (float)g.data[j], fb[j] = (float)b.data[j];
            fbias[j] = has_bias ? (float)bias.data[j] : 0.0f;
        }
        skip_layernorm_forward_f32(fy, fm, fr, fs, fx, fk, fg, fb, has_bias ? fbias : NULL,
                                   (int)rows, (int)n, (float)eps);
        for (size_t i = 0; i < N; i++)
            gy[i] = fy[i], gs[i] = fs[i];
        for (size_t r = 0; r < rows; r++)
            gm[r] = fm[r], gr[r] = fr[r];
        free(fx), free(fk), free(fy), free(fs), free(fg), free(fb), free(fbias), free(fm), free(fr);
    } else {
        skip_layernorm_forward_f64(gy, gm, gr, gs, x.data, k.data, g.data, b.data,
                                   has_bias ? bias.data : NULL, (int)rows, (int)n, eps);
    }
    cr_assert_eq(skip_layernorm_forward_bound(by, bm, br, bs, x.data, k.data, g.data, b.data,
                                              has_bias ? bias.data : NULL, rows, n, eps, cd, cd),
                 0);
    rn_array wy = load(get_path(exp, "y")), wm = load(get_path(exp, "mean")),
             wr = load(get_path(exp, "rstd")), ws = load(get_path(exp, "sum"));
    double w = golden_compare(id, "y", gy, wy.data, by, N);
    w = fmax(w, golden_compare(id, "mean", gm, wm.data, bm, rows));
    w = fmax(w, golden_compare(id, "rstd", gr, wr.data, br, rows));
    double wsum = golden_compare(id, "sum", gs, ws.data, bs, N);
    worst[f32][0] = fmax(worst[f32][0], w);
    worst[f32][1] = fmax(worst[f32][1], wsum);
    cases[f32]++;
    free(gy), free(gs), free(gm), free(gr), free(by), free(bs), free(bm), free(br);
    rn_array_free(&x), rn_array_free(&k), rn_array_free(&g), rn_array_free(&b);
    rn_array_free(&bias), rn_array_free(&wy), rn_array_free(&wm), rn_array_free(&wr);
    rn_array_free(&ws);
}

Test(skip_layernorm_golden, kernels_within_composed_bound)
{
    json_error_t jerr;
    json_t *man = json_load_file(MANIFEST, 0, &jerr);
    cr_assert_not_null(man, "%s: %s", MANIFEST, jerr.text);
    double worst[2][2] = {{0, 0}, {0, 0}}; /* [f32?][y mean rstd | sum] */
    int cases[2] = {0, 0};
    size_t k;
    json_t *c;
    json_array_foreach(json_object_get(man, "cases"), k, c)
    {
        const char *dt = json_string_value(json_object_get(c, "input_dtype"));
        if (strcmp(json_string_value(json_object_get(c, "op")), "skip_layernorm") != 0 ||
            (strcmp(dt, "f32") != 0 && strcmp(dt, "f64") != 0))
            continue;
        run_case(c, worst, cases);
    }
    json_decref(man);
    cr_assert(cases[0] > 0 && cases[1] > 0);
    /* The sum's bound is the standard model, nearly attained by one rounding (ratio ~ 1 - u);
       y/mean/rstd contain the sum's rounding propagated exactly, |w_c - w|. */
    printf("skip_layernorm kernels vs golden, worst error/bound: f64 %d cases: y/mean/rstd %.6g, "
           "sum %.6g; f32 %d cases: y/mean/rstd %.6g, sum %.6g\n", cases[0], worst[0][0],
           worst[0][1], cases[1], worst[1][0], worst[1][1]);
}

/* Backward: the forward kernel (for the rounded sum, mean and rstd, as training keeps them), then
   the backward kernel; dskip is dx. */
static double run_bwd_case(json_t *c, int *f32out)
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
    double eps;
    eps = case_eps(c);
    int f32 = x.dtype == RN_F32;
    rn_dtype cd = f32 ? RN_F32 : RN_F64;
    size_t N = rows * n;
    double *gdx = malloc(N * 8), *gdb = malloc(n * 8), *gdg = calloc(n, 8), *gdbe = calloc(n, 8),
           *bdx = malloc(N * 8), *bdb = malloc(n * 8), *bdg = malloc(n * 8), *bdbe = malloc(n * 8);
    const double *bp = has_bias ? bias.data : NULL;
    double *zb = calloc(n, 8); /* beta: irrelevant to the backward */
    if (f32) {
        float *fx = malloc(N * 4), *fk = malloc(N * 4), *fy = malloc(N * 4), *fs = malloc(N * 4),
              *fdy = malloc(N * 4), *fdx = malloc(N * 4);
        float *fg = calloc(n, 4), *fbias = calloc(n, 4), *fzb = calloc(n, 4), *fdb = calloc(n, 4),
              *fdg = calloc(n, 4), *fdbe = calloc(n, 4), *fm = malloc(rows * 4),
              *fr = malloc(rows * 4);
        for (size_t i = 0; i < N; i++)
            fx[i] = (float)x.data[i], fk[i] = (float)k.data[i], fdy[i] = (float)dy.data[i];
        for (size_t j = 0; j < n; j++)
            fg[j] = (float)g.data[j], fbias[j] = has_bias ? (float)bias.data[j] : 0.0f;
        skip_layernorm_forward_f32(fy, fm, fr, fs, fx, fk, fg, fzb, has_bias ? fbias : NULL,
                                   (int)rows, (int)n, (float)eps);
        skip_layernorm_backward_f32(fdx, fdb, fdg, fdbe, fdy, fs, fg, fm, fr, (int)rows, (int)n);
        for (size_t i = 0; i < N; i++)
            gdx[i] = fdx[i];
        for (size_t j = 0; j < n; j++)
            gdb[j] = fdb[j], gdg[j] = fdg[j], gdbe[j] = fdbe[j];
        free(fx), free(fk), free(fy), free(fs), free(fdy), free(fdx), free(fg), free(fbias);
        free(fzb), free(fdb), free(fdg), free(fdbe), free(fm), free(fr);
    } else {
        double *y = malloc(N * 8), *sm = malloc(N * 8), *m = malloc(rows * 8), *r = malloc(rows * 8);
        skip_layernorm_forward_f64(y, m, r, sm, x.data, k.data, g.data, zb, bp, (int)rows, (int)n,
                                   eps);
        skip_layernorm_backward_f64(gdx, gdb, gdg, gdbe, dy.data, sm, g.data, m, r, (int)rows,
                                    (int)n);
        free(y), free(sm), free(m), free(r);
    }
    cr_assert_eq(skip_layernorm_backward_bound(bdx, bdb, bdg, bdbe, dy.data, x.data, k.data,
                                               g.data, bp, rows, n, eps, cd, cd), 0);
    rn_array wdx = load(get_path(exp, "dx")), wds = load(get_path(exp, "dskip")),
             wdb = load(get_path(exp, "dbias")), wdg = load(get_path(exp, "dgamma")),
             wdbe = load(get_path(exp, "dbeta"));
    double w = golden_compare(id, "dx", gdx, wdx.data, bdx, N);
    w = fmax(w, golden_compare(id, "dskip", gdx, wds.data, bdx, N));
    w = fmax(w, golden_compare(id, "dbias", gdb, wdb.data, bdb, n));
    w = fmax(w, golden_compare(id, "dgamma", gdg, wdg.data, bdg, n));
    w = fmax(w, golden_compare(id, "dbeta", gdbe, wdbe.data, bdbe, n));
    *f32out = f32;
    free(gdx), free(gdb), free(gdg), free(gdbe), free(bdx), free(bdb), free(bdg), free(bdbe);
    free(zb);
    rn_array_free(&x), rn_array_free(&k), rn_array_free(&g), rn_array_free(&dy);
    rn_array_free(&bias), rn_array_free(&wdx), rn_array_free(&wds), rn_array_free(&wdb);
    rn_array_free(&wdg), rn_array_free(&wdbe);
    return w;
}

Test(skip_layernorm_golden, backward_kernels_within_bound)
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
        if (strcmp(json_string_value(json_object_get(c, "op")), "skip_layernorm_backward") != 0 ||
            (strcmp(dt, "f32") != 0 && strcmp(dt, "f64") != 0))
            continue;
        int f32;
        double w = run_bwd_case(c, &f32);
        worst[f32] = fmax(worst[f32], w);
        cases[f32]++;
    }
    json_decref(man);
    cr_assert(cases[0] > 0 && cases[1] > 0);
    printf("skip_layernorm_backward kernels vs golden, worst error/bound (dx, dskip, dbias, "
           "dgamma, dbeta): f64 %d cases %.6g; f32 %d cases %.6g\n", cases[0], worst[0], cases[1],
           worst[1]);
}

/* ================================================================ twin vs LayerNorm twin */

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

Test(skip_layernorm_twin, equals_layernorm_twin_on_exact_double_sums)
{
    enum { ROWS = 6, N = 40 };
    static double x[ROWS * N], k[ROWS * N], s[ROWS * N], g[N], b[N], bias[N];
    static double y1[ROWS * N], y2[ROWS * N], sum1[ROWS * N], m1[ROWS], m2[ROWS], r1[ROWS], r2[ROWS];
    uint64_t z = 7;
    for (int t = 0; t < 20; t++) {
        for (int j = 0; j < N; j++)
            g[j] = rnd_f32(&z, 1), b[j] = rnd_f32(&z, 0), bias[j] = rnd_f32(&z, t % 3 - 1);
        for (int i = 0; i < ROWS * N; i++) {
            int row = i / N;
            x[i] = rnd_f32(&z, row * 3 - 6 + t % 5);
            k[i] = rnd_f32(&z, row * 2 - 3);
            double xk;
            int ok = exact_add(x[i], k[i], &xk) && exact_add(xk, bias[i % N], &s[i]);
            cr_assert(ok, "test data: the sum is not a double (pick closer exponents)");
        }
        rn_dtype out = t % 2 ? RN_F32 : RN_F64;
        double eps = t % 4 ? 1e-5 : 0.0;
        cr_assert_eq(skip_layernorm_forward_mpfr(y1, m1, r1, sum1, x, k, g, b, bias, ROWS, N, eps,
                                                 out), RN_TWIN_OK);
        cr_assert_eq(layernorm_forward_mpfr(y2, m2, r2, s, g, b, ROWS, N, eps, out), RN_TWIN_OK);
        for (int i = 0; i < ROWS * N; i++) {
            cr_assert(same(y1[i], y2[i]), "y[%d]: %a vs %a", i, y1[i], y2[i]);
            double ws = out == RN_F32 ? (float)s[i] : s[i]; /* one rounding of the exact sum */
            cr_assert(same(sum1[i], ws), "sum[%d]: %a vs %a", i, sum1[i], ws);
        }
        for (int r = 0; r < ROWS; r++)
            cr_assert(same(m1[r], m2[r]) && same(r1[r], r2[r]), "row %d", r);
    }
}

/* Backward on exact double sums: dx, dskip, dgamma, dbeta equal the LayerNorm twin's on the double
   sum; dbias equals an independent 4096-bit evaluation of sum_r dx_rj from the formula of
   specs/layernorm.h, dx = rstd (g - mean(g) - xhat mean(g xhat)), rounded to double by MPFR. */
Test(skip_layernorm_twin, backward_on_exact_double_sums)
{
    enum { ROWS = 3, N = 8 };
    static double x[ROWS * N], k[ROWS * N], s[ROWS * N], g[N], bias[N], dy[ROWS * N];
    static double dx[ROWS * N], dsk[ROWS * N], db[N], dg[N], dbe[N], dx2[ROWS * N], dg2[N], dbe2[N];
    uint64_t z = 29;
    mpfr_t m, v, t, rs, mg, mgx, col[N];
    mpfr_inits2(4096, m, v, t, rs, mg, mgx, (mpfr_ptr)0);
    for (int tr = 0; tr < 8; tr++) {
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
        cr_assert_eq(skip_layernorm_backward_mpfr(dx, dsk, db, dg, dbe, dy, x, k, g, bias, ROWS, N,
                                                  eps, RN_F64), RN_TWIN_OK);
        cr_assert_eq(layernorm_backward_mpfr(dx2, dg2, dbe2, dy, s, g, ROWS, N, eps, RN_F64),
                     RN_TWIN_OK);
        for (int i = 0; i < ROWS * N; i++)
            cr_assert(same(dx[i], dx2[i]) && same(dsk[i], dx2[i]), "dx[%d]", i);
        for (int j = 0; j < N; j++) {
            cr_assert(same(dg[j], dg2[j]) && same(dbe[j], dbe2[j]), "dgamma/dbeta[%d]", j);
            mpfr_init2(col[j], 4096);
            mpfr_set_zero(col[j], 1);
        }
        for (int r = 0; r < ROWS; r++) {
            const double *sr = s + r * N, *dr = dy + r * N;
            mpfr_set_zero(m, 1);
            for (int j = 0; j < N; j++)
                mpfr_add_d(m, m, sr[j], MPFR_RNDN);
            mpfr_div_ui(m, m, N, MPFR_RNDN);                 /* mean */
            mpfr_set_zero(v, 1);
            for (int j = 0; j < N; j++) {
                mpfr_set_d(t, sr[j], MPFR_RNDN);
                mpfr_sub(t, t, m, MPFR_RNDN);
                mpfr_sqr(t, t, MPFR_RNDN);
                mpfr_add(v, v, t, MPFR_RNDN);
            }
            mpfr_div_ui(v, v, N, MPFR_RNDN);
            mpfr_add_d(v, v, eps, MPFR_RNDN);
            mpfr_rec_sqrt(rs, v, MPFR_RNDN);                 /* rstd */
            mpfr_set_zero(mg, 1);
            mpfr_set_zero(mgx, 1);
            for (int j = 0; j < N; j++) {
                mpfr_set_d(t, dr[j], MPFR_RNDN);
                mpfr_mul_d(t, t, g[j], MPFR_RNDN);           /* g_j */
                mpfr_add(mg, mg, t, MPFR_RNDN);
                mpfr_set_d(v, sr[j], MPFR_RNDN);
                mpfr_sub(v, v, m, MPFR_RNDN);
                mpfr_mul(v, v, rs, MPFR_RNDN);               /* xhat_j */
                mpfr_mul(t, t, v, MPFR_RNDN);
                mpfr_add(mgx, mgx, t, MPFR_RNDN);
            }
            mpfr_div_ui(mg, mg, N, MPFR_RNDN);
            mpfr_div_ui(mgx, mgx, N, MPFR_RNDN);
            for (int j = 0; j < N; j++) {
                mpfr_set_d(v, sr[j], MPFR_RNDN);
                mpfr_sub(v, v, m, MPFR_RNDN);
                mpfr_mul(v, v, rs, MPFR_RNDN);
                mpfr_mul(v, v, mgx, MPFR_RNDN);              /* xhat mean(g xhat) */
                mpfr_set_d(t, dr[j], MPFR_RNDN);
                mpfr_mul_d(t, t, g[j], MPFR_RNDN);
                mpfr_sub(t, t, mg, MPFR_RNDN);
                mpfr_sub(t, t, v, MPFR_RNDN);
                mpfr_mul(t, t, rs, MPFR_RNDN);               /* dx_rj */
                mpfr_add(col[j], col[j], t, MPFR_RNDN);
            }
        }
        for (int j = 0; j < N; j++) {
            double want = mpfr_get_d(col[j], MPFR_RNDN);
            cr_assert(same(db[j], want), "trial %d dbias[%d]: %a vs %a", tr, j, db[j], want);
            mpfr_clear(col[j]);
        }
    }
    mpfr_clears(m, v, t, rs, mg, mgx, (mpfr_ptr)0);
}

/* x = 1, skip = 2^-80 k: s = 1 + 2^-80 k is not a double.  With eps = 0, LN(a s + c) = LN(s) for
   a > 0, so y(s) = y(k) exactly, rstd(s) = 2^80 rstd(k) (a power of two: rounding commutes), and
   mean(s) = 1 + 2^-80 mean(k) rounds to 1 (|2^-80 mean(k)| < 2^-54), as does every sum. */
Test(skip_layernorm_twin, exact_beyond_binary64)
{
    enum { N = 16 };
    static const double kk[N] = {3, -1, 4, 1, -5, 9, 2, -6, 5, 3, -5, 8, 9, -7, 9, 3};
    double x[N], skip[N], g[N], b[N], y1[N], y2[N], sum[N], m1, m2, r1, r2;
    for (int i = 0; i < N; i++) {
        x[i] = 1.0;
        skip[i] = ldexp(kk[i], -80);
        g[i] = 1.0 + i / 16.0;
        b[i] = i / 32.0 - 0.25;
    }
    for (int d = 0; d < RN_NDTYPES; d++) {
        rn_dtype out = (rn_dtype)d;
        cr_assert_eq(skip_layernorm_forward_mpfr(y1, &m1, &r1, sum, x, skip, g, b, NULL, 1, N, 0.0,
                                                 out), RN_TWIN_OK);
        cr_assert_eq(layernorm_forward_mpfr(y2, &m2, &r2, kk, g, b, 1, N, 0.0, out), RN_TWIN_OK);
        for (int i = 0; i < N; i++) {
            cr_assert(same(y1[i], y2[i]), "%s y[%d]: %a vs %a", rn_dtype_name(out), i, y1[i], y2[i]);
            cr_assert_eq(sum[i], 1.0);
        }
        cr_assert_eq(m1, 1.0);
        if (out != RN_F16) /* 2^80 rstd(k) overflows f16 (to +Inf, as rstd(s) does) */
            cr_assert(same(r1, ldexp(r2, 80)), "%s rstd %a vs 2^80 %a", rn_dtype_name(out), r1, r2);
        else
            cr_assert(isinf(r1));
    }
}

/* ================================================================ the CLI */

#define CLI_HARNESS_PREFIX "/tmp/resnorm_test_skip."
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

TestSuite(skip_layernorm_cli, .init = setup, .fini = teardown);

/* x = [[1, 3]], skip = [[1, 1]], gamma = [2, 3], beta = [0.5, -1], eps = 0.
 * bias = [0, 2]: s = [2, 6], mean 4, var ((2-4)^2 + (6-4)^2)/2 = 4, rstd 1/2, xhat [-1, 1],
 *   y = [-2 + 0.5, 3 - 1] = [-1.5, 2].
 * no bias: s = [2, 4], mean 3, var 1, rstd 1, xhat [-1, 1], y = [-1.5, 2]. */
static const size_t S12[] = {1, 2}, S2[] = {2}, S3[] = {3};
static const double X[] = {1, 3}, K[] = {1, 1}, G[] = {2, 3}, B[] = {0.5, -1}, BIAS[] = {0, 2};

static void put_inputs(void)
{
    put("x.npy", 2, S12, X);
    put("k.npy", 2, S12, K);
    put("g.npy", 1, S2, G);
    put("b.npy", 1, S2, B);
    put("bias.npy", 1, S2, BIAS);
}

Test(skip_layernorm_cli, eval_with_and_without_bias)
{
    put_inputs();
    int rc = run("eval skip_layernorm --in x=%s --in skip=%s --in gamma=%s --in beta=%s "
                 "--in bias=%s --attr eps=0 --out %s", P("x.npy"), P("k.npy"), P("g.npy"),
                 P("b.npy"), P("bias.npy"), P("o1"));
    cr_assert_eq(rc, 0, "exit %d: %s", rc, err_text);
    static const double Y[] = {-1.5, 2}, S1[] = {2, 6}, M1[] = {4}, R1[] = {0.5};
    expect_file("o1/y.npy", 2, Y);
    expect_file("o1/sum.npy", 2, S1);
    expect_file("o1/mean.npy", 1, M1);
    expect_file("o1/rstd.npy", 1, R1);
    rc = run("eval skip_layernorm --in x=%s --in skip=%s --in gamma=%s --in beta=%s "
             "--attr eps=0 --out %s", P("x.npy"), P("k.npy"), P("g.npy"), P("b.npy"), P("o2"));
    cr_assert_eq(rc, 0, "exit %d: %s", rc, err_text);
    static const double S0[] = {2, 4}, M0[] = {3}, R0[] = {1};
    expect_file("o2/y.npy", 2, Y);
    expect_file("o2/sum.npy", 2, S0);
    expect_file("o2/mean.npy", 1, M0);
    expect_file("o2/rstd.npy", 1, R0);
    /* check: the exact values pass; y moved by 1e-3 fails */
    rc = run("check skip_layernorm --in x=%s --in skip=%s --in gamma=%s --in beta=%s --in bias=%s "
             "--attr eps=0 --actual y=%s --actual sum=%s --actual rstd=%s", P("x.npy"), P("k.npy"),
             P("g.npy"), P("b.npy"), P("bias.npy"), P("o1/y.npy"), P("o1/sum.npy"),
             P("o1/rstd.npy"));
    cr_assert_eq(rc, 0, "exit %d: %s%s", rc, out_text, err_text);
    static const double YBAD[] = {-1.5, 2.0009765625}; /* 2 + 2^-10 */
    put("ybad.npy", 2, S12, YBAD);
    rc = run("check skip_layernorm --in x=%s --in skip=%s --in gamma=%s --in beta=%s --in bias=%s "
             "--attr eps=0 --actual y=%s", P("x.npy"), P("k.npy"), P("g.npy"), P("b.npy"),
             P("bias.npy"), P("ybad.npy"));
    cr_assert_eq(rc, 1, "exit %d: %s%s", rc, out_text, err_text);
    /* the bias-less sum is not the biased one */
    rc = run("check skip_layernorm --in x=%s --in skip=%s --in gamma=%s --in beta=%s --in bias=%s "
             "--attr eps=0 --actual sum=%s", P("x.npy"), P("k.npy"), P("g.npy"), P("b.npy"),
             P("bias.npy"), P("o2/sum.npy"));
    cr_assert_eq(rc, 1, "exit %d: %s%s", rc, out_text, err_text);
}

/* Backward, two rows, skip = 1 everywhere: s = [[-1, -1, 1, 1], [1, 1, -1, -1]], gamma = 1, eps 0:
 * mean 0, var 1, rstd 1, xhat = s.  dy = [[1, 0, 0, 0], [0, 0, 1, 0]] (g = dy):
 * row 0: mean(g) = 1/4, mean(g xhat) = -1/4, dx = g - 1/4 + xhat/4 = [0.5, -0.5, 0, 0];
 * row 1: mean(g) = 1/4, mean(g xhat) = -1/4, dx = [0, 0, 0.5, -0.5].
 * dskip = dx; dbias = [0.5, -0.5, 0.5, -0.5]; dgamma = sum dy xhat = [-1, 0, -1, 0];
 * dbeta = sum dy = [1, 0, 1, 0]. */
Test(skip_layernorm_cli, eval_backward_closed_form)
{
    static const size_t S24[] = {2, 4}, S4[] = {4};
    put("x2.npy", 2, S24, (const double[]){-2, -2, 0, 0, 0, 0, -2, -2});
    put("k2.npy", 2, S24, (const double[]){1, 1, 1, 1, 1, 1, 1, 1});
    put("dy2.npy", 2, S24, (const double[]){1, 0, 0, 0, 0, 0, 1, 0});
    put("one.npy", 1, S4, (const double[]){1, 1, 1, 1});
    int rc = run("eval skip_layernorm_backward --in x=%s --in skip=%s --in gamma=%s --in dy=%s "
                 "--attr eps=0 --out %s", P("x2.npy"), P("k2.npy"), P("one.npy"), P("dy2.npy"),
                 P("b"));
    cr_assert_eq(rc, 0, "exit %d: %s", rc, err_text);
    static const double DX[] = {0.5, -0.5, 0, 0, 0, 0, 0.5, -0.5};
    expect_file("b/dx.npy", 8, DX);
    expect_file("b/dskip.npy", 8, DX);
    expect_file("b/dbias.npy", 4, (const double[]){0.5, -0.5, 0.5, -0.5});
    expect_file("b/dgamma.npy", 4, (const double[]){-1, 0, -1, 0});
    expect_file("b/dbeta.npy", 4, (const double[]){1, 0, 1, 0});
    rc = run("check skip_layernorm_backward --in x=%s --in skip=%s --in gamma=%s --in dy=%s "
             "--attr eps=0 --actual dx=%s --actual dbias=%s --actual dgamma=%s --actual dbeta=%s",
             P("x2.npy"), P("k2.npy"), P("one.npy"), P("dy2.npy"), P("b/dx.npy"),
             P("b/dbias.npy"), P("b/dgamma.npy"), P("b/dbeta.npy"));
    cr_assert_eq(rc, 0, "exit %d: %s%s", rc, out_text, err_text);
    /* dbias not summed over rows (row 0 only) fails */
    put("db0.npy", 1, S4, (const double[]){0.5, -0.5, 0, 0});
    rc = run("check skip_layernorm_backward --in x=%s --in skip=%s --in gamma=%s --in dy=%s "
             "--attr eps=0 --actual dbias=%s", P("x2.npy"), P("k2.npy"), P("one.npy"),
             P("dy2.npy"), P("db0.npy"));
    cr_assert_eq(rc, 1, "exit %d: %s%s", rc, out_text, err_text);
}

Test(skip_layernorm_cli, bad_shapes_exit_2_no_output)
{
    put_inputs();
    put("k3.npy", 1, S3, (const double[]){1, 1, 1});
    int rc = run("eval skip_layernorm --in x=%s --in skip=%s --in gamma=%s --in beta=%s --out %s",
                 P("x.npy"), P("k3.npy"), P("g.npy"), P("b.npy"), P("out"));
    cr_assert_eq(rc, 2, "exit %d", rc);
    cr_assert_not_null(strstr(err_text, "input skip"), "%s", err_text);
    cr_assert_not_null(strstr(err_text, "does not match x.shape"), "%s", err_text);
    rc = run("eval skip_layernorm --in x=%s --in skip=%s --in gamma=%s --in beta=%s --in bias=%s "
             "--out %s", P("x.npy"), P("k.npy"), P("g.npy"), P("b.npy"), P("k3.npy"), P("out"));
    cr_assert_eq(rc, 2, "exit %d", rc);
    cr_assert_not_null(strstr(err_text, "input bias"), "%s", err_text);
    rc = run("eval skip_layernorm --in x=%s --in gamma=%s --in beta=%s --out %s", P("x.npy"),
             P("g.npy"), P("b.npy"), P("out"));
    cr_assert_eq(rc, 2, "exit %d", rc);
    cr_assert_not_null(strstr(err_text, "missing required input 'skip'"), "%s", err_text);
    cr_assert_eq(access(P("out"), F_OK), -1, "output left behind");
}

/* The skip bounds' binary64 shortcuts (ref/skip_layernorm_bound.c: the once-rounded sum through
 * fd_skip_sum, |a + b| and |a + b + c| rounded up through TwoSum) against MPFR on 2·10^5 triples
 * built to hit their edges: exponents over the whole binary64 range, f32 values, cancellations
 * (k = -x + tiny), exact zeros of either sign, ties of the f32 and f16 roundings, sums near
 * DBL_MAX.  Expected values: the exact sums in MPFR at 2112 bits, rounded once (mpfr_get_d with
 * the RNDA rounding, rn_round_mpfr), and skip_sum_bound's formula evaluated on them. */
static uint64_t sk_state = 0x9e3779b97f4a7c15ull;
static uint64_t sk_next(void)
{
    sk_state ^= sk_state << 13, sk_state ^= sk_state >> 7, sk_state ^= sk_state << 17;
    return sk_state;
}

static double sk_value(int f32)
{
    uint64_t r = sk_next();
    double m = (double)(r >> 11) * 0x1p-53 + 0.5; /* [0.5, 1) */
    int e = f32 ? (int)(r % 200) - 100 : (int)(r % 2098) - 1074;
    double v = ldexp(r & 1 ? -m : m, e);
    if (f32)
        v = (double)(float)v;
    switch ((r >> 8) % 16) {
    case 0: return 0.0;
    case 1: return -0.0;
    case 2: return (r & 2 ? 1 : -1) * 0x1.fffffffffffffp1023 * (f32 ? 0 : 1);
    default: return v;
    }
}

static double ref_abs_up(mpfr_t s, double a, double b, const double *c)
{
    mpfr_set_d(s, a, MPFR_RNDN);
    mpfr_add_d(s, s, b, MPFR_RNDN);
    if (c)
        mpfr_add_d(s, s, *c, MPFR_RNDN);
    return fabs(mpfr_get_d(s, MPFR_RNDA));
}

Test(skip_layernorm_bound, binary64_shortcuts_equal_mpfr)
{
    mpfr_t s, r;
    mpfr_init2(s, 2112), mpfr_init2(r, 2112);
    long n_diff = 0;
    for (int it = 0; it < 200000; it++) {
        int f32 = it & 1;
        double x = sk_value(f32), k = sk_value(f32), b = sk_value(f32);
        switch (it % 5) {
        case 0: k = -x + ldexp(x, -(int)(sk_next() % 60)) * (f32 ? 0 : 1); break; /* cancel */
        case 1: b = -(x + k); break;
        case 2: k = ldexp(x, -24) * 1.5; break; /* near-ties of the f32 rounding of x + k */
        default: break;
        }
        if (f32) {
            x = (double)(float)x, k = (double)(float)k, b = (double)(float)b;
        }
        rn_dtype c = f32 ? RN_F32 : (it % 3 ? RN_F64 : RN_F16);
        /* order 3: the exact sum rounded once */
        mpfr_set_d(r, x, MPFR_RNDN);
        mpfr_add_d(r, r, k, MPFR_RNDN);
        mpfr_add_d(r, r, b, MPFR_RNDN);
        double want = rn_round_mpfr(r, c), got = skip_sum_in(s, x, k, &b, 3, c);
        if (!(memcmp(&want, &got, sizeof got) == 0 || (isnan(want) && isnan(got))))
            n_diff++;
        /* the sum's bound, formula of skip_sum_bound with MPFR's |.| rounded up */
        rn_dtype out = it % 4 ? c : RN_BF16;
        double u = rn_dtype_unit_roundoff(c);
        for (int wb = 0; wb < 2; wb++) {
            double S, E;
            if (wb) {
                S = ref_abs_up(r, x, k, &b);
                double M2 = fmax(ref_abs_up(r, x, k, NULL),
                                 fmax(ref_abs_up(r, x, b, NULL), ref_abs_up(r, k, b, NULL)));
                E = u * (1 + u) * M2 + u * S;
            } else {
                S = ref_abs_up(r, x, k, NULL);
                E = u * S;
            }
            double eta = out == RN_F64 ? 0x1p-1074 : out == RN_F32 ? 0x1p-150 :
                         out == RN_F16 ? 0x1p-25 : 0x1p-134;
            double o = out == c ? 0.0 : rn_dtype_unit_roundoff(out) * (S + E) + eta;
            double wbd = (E + o) * (1.0 + 0x1p-40) + S * 0x1p-53 + 0x1p-1074;
            double gbd = skip_sum_bound(s, x, k, wb ? &b : NULL, c, out);
            if (!(memcmp(&wbd, &gbd, sizeof gbd) == 0 || (isnan(wbd) && isnan(gbd))))
                n_diff++;
        }
    }
    mpfr_clear(s), mpfr_clear(r);
    cr_assert_eq(n_diff, 0, "%ld results differ from MPFR's", n_diff);
}
