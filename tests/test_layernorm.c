/* The float and double LayerNorm kernels (ref/layernorm.c) against the golden vectors, within the
 * a-priori bound of specs/error-analysis.md (ref/layernorm_bound.c), plus the seed's exercise 2.
 * Golden values come from the MPFR twin, never from these kernels. */
#include <criterion/criterion.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "layernorm.h"
#include "bound_profile.h"
#include "layernorm_bound.h"
#include "layernorm_mpfr.h"
#include "npy.h"
#include "golden_harness.h"

#define MANIFEST "golden/manifest.json"

/* Run one precision's kernel on the case and compare with the f64 golden values. */
typedef struct {
    double worst[2]; /* by input dtype: 0 = f64, 1 = f32 */
    int cases[2];
} tally;

static void forward_case(json_t *c, tally *t)
{
    const char *id = json_string_value(json_object_get(c, "id"));
    json_t *in = json_object_get(c, "inputs"), *attrs = json_object_get(c, "attrs");
    json_t *exp = json_object_get(json_object_get(c, "expected"), "f64");
    rn_array x = load(json_string_value(json_object_get(in, "x")));
    rn_array g = load(json_string_value(json_object_get(in, "gamma")));
    rn_array b = load(json_string_value(json_object_get(in, "beta")));
    rn_array y = load(json_string_value(json_object_get(exp, "y")));
    rn_array mean = load(json_string_value(json_object_get(exp, "mean")));
    rn_array rstd = load(json_string_value(json_object_get(exp, "rstd")));
    size_t rows, n;
    rows_n(&x, (long)json_integer_value(json_object_get(attrs, "axis")), &rows, &n);
    int f32 = x.dtype == RN_F32;
    double eps;
    eps = case_eps(c);

    double *by = malloc(x.count * sizeof *by), *bm = malloc(rows * sizeof *bm),
           *br = malloc(rows * sizeof *br);
    rn_dtype dt = f32 ? RN_F32 : RN_F64;
    cr_assert_eq(layernorm_forward_bound(by, bm, br, x.data, g.data, b.data, rows, n, eps, dt, dt),
                 0);
    double *gy = malloc(x.count * sizeof *gy), *gm = malloc(rows * sizeof *gm),
           *gr = malloc(rows * sizeof *gr);
    if (f32) {
        float *fx = malloc(x.count * sizeof *fx), *fy = malloc(x.count * sizeof *fy);
        float *fg = malloc(n * sizeof *fg), *fb = malloc(n * sizeof *fb);
        float *fm = malloc(rows * sizeof *fm), *fr = malloc(rows * sizeof *fr);
        for (size_t i = 0; i < x.count; i++)
            fx[i] = (float)x.data[i];
        for (size_t i = 0; i < n; i++)
            fg[i] = (float)g.data[i], fb[i] = (float)b.data[i];
        layernorm_forward_f32(fy, fm, fr, fx, fg, fb, (int)rows, (int)n, (float)eps);
        for (size_t i = 0; i < x.count; i++)
            gy[i] = fy[i];
        for (size_t r = 0; r < rows; r++)
            gm[r] = fm[r], gr[r] = fr[r];
        free(fx), free(fy), free(fg), free(fb), free(fm), free(fr);
    } else {
        layernorm_forward_f64(gy, gm, gr, x.data, g.data, b.data, (int)rows, (int)n, eps);
    }
    double w = golden_compare(id, "y", gy, y.data, by, x.count);
    w = fmax(w, golden_compare(id, "mean", gm, mean.data, bm, rows));
    w = fmax(w, golden_compare(id, "rstd", gr, rstd.data, br, rows));
    t->worst[f32] = fmax(t->worst[f32], w);
    t->cases[f32]++;
    free(by), free(bm), free(br), free(gy), free(gm), free(gr);
    rn_array_free(&x), rn_array_free(&g), rn_array_free(&b);
    rn_array_free(&y), rn_array_free(&mean), rn_array_free(&rstd);
}

static void backward_case(json_t *c, tally *t)
{
    const char *id = json_string_value(json_object_get(c, "id"));
    json_t *in = json_object_get(c, "inputs"), *attrs = json_object_get(c, "attrs");
    json_t *exp = json_object_get(json_object_get(c, "expected"), "f64");
    rn_array x = load(json_string_value(json_object_get(in, "x")));
    rn_array g = load(json_string_value(json_object_get(in, "gamma")));
    rn_array dy = load(json_string_value(json_object_get(in, "dy")));
    rn_array dx = load(json_string_value(json_object_get(exp, "dx")));
    rn_array dg = load(json_string_value(json_object_get(exp, "dgamma")));
    rn_array db = load(json_string_value(json_object_get(exp, "dbeta")));
    size_t rows, n;
    rows_n(&x, (long)json_integer_value(json_object_get(attrs, "axis")), &rows, &n);
    int f32 = x.dtype == RN_F32;
    double eps;
    eps = case_eps(c);
    rn_dtype dt = f32 ? RN_F32 : RN_F64;

    double *bdx = malloc(x.count * sizeof *bdx), *bdg = malloc(n * sizeof *bdg),
           *bdb = malloc(n * sizeof *bdb);
    cr_assert_eq(layernorm_backward_bound(bdx, bdg, bdb, dy.data, x.data, g.data, rows, n, eps, dt,
                                          dt), 0);
    double *gdx = malloc(x.count * sizeof *gdx), *gdg = calloc(n, sizeof *gdg),
           *gdb = calloc(n, sizeof *gdb);
    /* The kernel's backward runs on its own forward's mean and rstd, as in training. */
    double *zero = calloc(n, sizeof *zero), *y = malloc(x.count * sizeof *y);
    double *m = malloc(rows * sizeof *m), *r = malloc(rows * sizeof *r);
    if (f32) {
        float *fx = malloc(x.count * sizeof *fx), *fy = malloc(x.count * sizeof *fy);
        float *fdy = malloc(x.count * sizeof *fdy), *fdx = malloc(x.count * sizeof *fdx);
        float *fg = malloc(n * sizeof *fg), *fz = calloc(n, sizeof *fz);
        float *fdg = calloc(n, sizeof *fdg), *fdb = calloc(n, sizeof *fdb);
        float *fm = malloc(rows * sizeof *fm), *fr = malloc(rows * sizeof *fr);
        for (size_t i = 0; i < x.count; i++)
            fx[i] = (float)x.data[i], fdy[i] = (float)dy.data[i];
        for (size_t i = 0; i < n; i++)
            fg[i] = (float)g.data[i];
        layernorm_forward_f32(fy, fm, fr, fx, fg, fz, (int)rows, (int)n, (float)eps);
        layernorm_backward_f32(fdx, fdg, fdb, fdy, fx, fg, fm, fr, (int)rows, (int)n);
        for (size_t i = 0; i < x.count; i++)
            gdx[i] = fdx[i];
        for (size_t i = 0; i < n; i++)
            gdg[i] = fdg[i], gdb[i] = fdb[i];
        free(fx), free(fy), free(fdy), free(fdx), free(fg), free(fz), free(fdg), free(fdb);
        free(fm), free(fr);
    } else {
        layernorm_forward_f64(y, m, r, x.data, g.data, zero, (int)rows, (int)n, eps);
        layernorm_backward_f64(gdx, gdg, gdb, dy.data, x.data, g.data, m, r, (int)rows, (int)n);
    }
    double w = golden_compare(id, "dx", gdx, dx.data, bdx, x.count);
    w = fmax(w, golden_compare(id, "dgamma", gdg, dg.data, bdg, n));
    w = fmax(w, golden_compare(id, "dbeta", gdb, db.data, bdb, n));
    t->worst[f32] = fmax(t->worst[f32], w);
    t->cases[f32]++;
    free(bdx), free(bdg), free(bdb), free(gdx), free(gdg), free(gdb);
    free(zero), free(y), free(m), free(r);
    rn_array_free(&x), rn_array_free(&g), rn_array_free(&dy);
    rn_array_free(&dx), rn_array_free(&dg), rn_array_free(&db);
}

/* Every golden case whose inputs are f32 or f64 runs the kernel of that precision. */
static void run_golden(const char *op, void (*run)(json_t *, tally *))
{
    json_error_t jerr;
    json_t *man = json_load_file(MANIFEST, 0, &jerr);
    cr_assert_not_null(man, "%s: %s", MANIFEST, jerr.text);
    tally t = {{0, 0}, {0, 0}};
    size_t k;
    json_t *c;
    json_array_foreach(json_object_get(man, "cases"), k, c)
    {
        const char *dt = json_string_value(json_object_get(c, "input_dtype"));
        if (strcmp(json_string_value(json_object_get(c, "op")), op) != 0 || !dt
            || (strcmp(dt, "f32") != 0 && strcmp(dt, "f64") != 0))
            continue;
        run(c, &t);
    }
    json_decref(man);
    cr_assert(t.cases[0] > 0 && t.cases[1] > 0, "%s: no f64 or no f32 golden case", op);
    printf("%s kernels vs golden: f64 %d cases, worst error/bound %.3g; f32 %d cases, worst "
           "error/bound %.3g\n", op, t.cases[0], t.worst[0], t.cases[1], t.worst[1]);
}

Test(layernorm_golden, forward_kernels_within_bound) { run_golden("layernorm", forward_case); }
Test(layernorm_golden, backward_kernels_within_bound)
{
    run_golden("layernorm_backward", backward_case);
}

/* ---- The seed's exercise 2: any scale and shift -> per-row mean 0 and std 1 ---- */

/* Deterministic uniform in [-1, 1) (splitmix64): no libm, so the test data never varies. */
static double uniform(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    z ^= z >> 31;
    return (double)(z >> 11) * 0x1p-52 - 1.0;
}

/* With gamma = 1, beta = 0 the exact y has mean 0 and (population) std sqrt(v / (v + eps)). The
   computed row is within the per-element bound E_i of y, so |mean(y_hat)| <= mean(E) and, by the
   triangle inequality for the centred 2-norm, |std(y_hat) - std(y)| <= rms(E). The statistics of
   y_hat are evaluated in binary64 from f32 values (error < 1e-12, added to the bound). */
Test(layernorm_seed, any_scale_and_shift_gives_mean0_std1)
{
    enum { N = 64 };
    const double scales[] = {1e-3, 0.1, 1.0, 7.5, 1e3}, shifts[] = {0.0, 7.59, -11.75, 1e3};
    uint64_t seed = 13;
    for (size_t si = 0; si < 5; si++)
        for (size_t hi = 0; hi < 4; hi++) {
            float x[N], y[N], g[N], b[N], m, r;
            double xd[N], gd[N], bd[N], by[N], bm, br;
            for (int i = 0; i < N; i++) {
                x[i] = (float)(shifts[hi] + scales[si] * uniform(&seed));
                xd[i] = x[i], g[i] = 1.0f, b[i] = 0.0f, gd[i] = 1.0, bd[i] = 0.0;
            }
            const float eps = 1e-5f;
            layernorm_row_forward_f32(y, &m, &r, x, g, b, N, eps);
            cr_assert_eq(layernorm_forward_bound(by, &bm, &br, xd, gd, bd, 1, N, eps, RN_F32,
                                                 RN_F32), 0);
            double ym = 0, ex[N], exact_v = 0, xm = 0;
            for (int i = 0; i < N; i++)
                ym += y[i], xm += xd[i];
            ym /= N, xm /= N;
            double ss = 0, mean_e = 0, rms_e = 0;
            for (int i = 0; i < N; i++) {
                ss += (y[i] - ym) * (y[i] - ym);
                exact_v += (xd[i] - xm) * (xd[i] - xm);
                ex[i] = by[i];
                mean_e += ex[i] / N;
                rms_e += ex[i] * ex[i] / N;
            }
            exact_v /= N;
            double std_hat = sqrt(ss / N), std_exact = sqrt(exact_v / (exact_v + eps));
            cr_assert(fabs(ym) <= mean_e + 1e-12, "scale %g shift %g: mean %g > %g", scales[si],
                      shifts[hi], ym, mean_e);
            cr_assert(fabs(std_hat - std_exact) <= sqrt(rms_e) + 1e-12,
                      "scale %g shift %g: std %.9g vs %.9g, bound %g", scales[si], shifts[hi],
                      std_hat, std_exact, sqrt(rms_e));
            /* And the point of the exercise: std 1 wherever eps is negligible (v >= 100 eps);
               below that eps visibly shrinks it (scale 1e-3: std ~ 0.18), exactly as computed. */
            if (exact_v >= 100 * eps)
                cr_assert(fabs(std_hat - 1.0) < 0.01, "scale %g: std %g", scales[si], std_hat);
        }
}

/* ---- The bound has teeth: a one-pass variance on a large-mean row exceeds it ---- */

static void one_pass_row_f32(float *y, const float *x, int n, float eps)
{
    float s = 0.0f, s2 = 0.0f;
    for (int i = 0; i < n; i++)
        s += x[i], s2 += x[i] * x[i];
    float m = s / n, var = s2 / n - m * m;
    float r = 1.0f / sqrtf(fmaxf(var, 0.0f) + eps);
    for (int i = 0; i < n; i++)
        y[i] = (x[i] - m) * r;
}

/* n = 8: the one-pass error (~ kappa^2 u v, kappa ~ 1e4) is orders of magnitude beyond the bound
   of the "moments" profile (two-pass and Welford / Chan merges, specs/error-analysis.md §0, §3.1),
   while that bound stays tight.  The default profile ("runtimes") admits the one-pass form at its
   own a-priori error (ONNX Runtime ships it, §3.2): there the same output must pass. */
Test(layernorm_bound, one_pass_variance_fails_on_large_mean_row)
{
    rn_bound_set_profile(RN_PROFILE_MOMENTS);
    enum { N = 8 };
    float x[N], y[N], yk[N], g[N], b[N], m, r;
    double xd[N], gd[N], bd[N], want[N], by[N], bm, br, wm, wr;
    uint64_t seed = 7;
    for (int i = 0; i < N; i++) {
        x[i] = (float)(100.0 + 0.01 * uniform(&seed));
        xd[i] = x[i], g[i] = 1.0f, b[i] = 0.0f, gd[i] = 1.0, bd[i] = 0.0;
    }
    double eps = (double)1e-5f;
    cr_assert_eq(layernorm_forward_mpfr(want, &wm, &wr, xd, gd, bd, 1, N, eps, RN_F64), 0);
    cr_assert_eq(layernorm_forward_bound(by, &bm, &br, xd, gd, bd, 1, N, eps, RN_F32, RN_F32), 0);
    layernorm_row_forward_f32(yk, &m, &r, x, g, b, N, (float)eps);
    one_pass_row_f32(y, x, N, (float)eps);
    int kernel_ok = 1, one_pass_caught = 0;
    for (int i = 0; i < N; i++) {
        cr_assert(isfinite(by[i]), "bound vacuous at %d", i);
        kernel_ok &= fabs(yk[i] - want[i]) <= by[i];
        one_pass_caught |= !(fabs(y[i] - want[i]) <= by[i]);
    }
    cr_assert(kernel_ok, "the two-pass kernel must pass");
    cr_assert(one_pass_caught, "the one-pass variance must exceed the bound somewhere");
    rn_bound_set_profile(RN_PROFILE_RUNTIMES);
    cr_assert_eq(layernorm_forward_bound(by, &bm, &br, xd, gd, bd, 1, N, eps, RN_F32, RN_F32), 0);
    for (int i = 0; i < N; i++)
        cr_assert(fabs(y[i] - want[i]) <= by[i], "runtimes profile rejects the one-pass form at %d",
                  i);
    rn_bound_set_profile(RN_PROFILE_MOMENTS); /* the default */
}

/* ---- Subnormal gamma: every admitted association stays within the bound (§4.2) ---- */

/* y by one association: 0 ((x-m) r) g + b, 1 (x-m)(r g) + b, 2 ((x-m) g) r + b, 3 folded
   x (r g) + (b - m (r g)), 4 PyTorch (x r + (-r m)) g + b. m, r: the two-pass f32 statistics. */
static float assoc_y(int k, float x, float m, float r, float g, float b)
{
    switch (k) {
    case 1: return (x - m) * (r * g) + b;
    case 2: return ((x - m) * g) * r + b;
    case 3: { float a = r * g; return x * a + (b - m * a); }
    case 4: return (x * r + -(r * m)) * g + b;
    default: return ((x - m) * r) * g + b;
    }
}

/* Rows with large deviations (|x - m| up to 1e4) or a tiny spread (r up to ~3e2), gamma subnormal
   in f32 (1e-40 ... 1e-45), beta 0: the product r g or (x - m) g underflows and the next factor
   scales that underflow (the err/bound 10 to 5e5 before H_i). */
Test(layernorm_bound, subnormal_gamma_every_association)
{
    enum { N = 16 };
    const double scales[] = {1e4, 1.0, 1e-2};
    const double gammas[] = {1e-40, 3e-42, 1.4e-45};
    uint64_t seed = 99;
    double worst = 0.0;
    for (int si = 0; si < 3; si++)
        for (int gi = 0; gi < 3; gi++) {
            float x[N], g[N], b[N], yk[N], m, r;
            double xd[N], gd[N], bd[N], want[N], by[N], wm, wr, bm, br;
            for (int i = 0; i < N; i++) {
                x[i] = (float)(scales[si] * uniform(&seed));
                g[i] = (float)gammas[gi], b[i] = 0.0f;
                xd[i] = x[i], gd[i] = g[i], bd[i] = 0.0;
            }
            const double eps = (double)1e-5f;
            layernorm_row_forward_f32(yk, &m, &r, x, g, b, N, (float)eps);
            cr_assert_eq(layernorm_forward_mpfr(want, &wm, &wr, xd, gd, bd, 1, N, eps, RN_F64), 0);
            for (int p = 0; p < 3; p++) {
                rn_bound_set_profile((rn_profile)p);
                cr_assert_eq(layernorm_forward_bound(by, &bm, &br, xd, gd, bd, 1, N, eps, RN_F32,
                                                     RN_F32), 0);
                for (int k = 0; k < 5; k++)
                    for (int i = 0; i < N; i++) {
                        double e = fabs((double)assoc_y(k, x[i], m, r, g[i], b[i]) - want[i]);
                        cr_assert(e <= by[i], "scale %g gamma %g profile %d association %d i %d: "
                                  "err %g > bound %g", scales[si], gammas[gi], p, k, i, e, by[i]);
                        worst = fmax(worst, e / by[i]);
                    }
            }
        }
    rn_bound_set_profile(RN_PROFILE_MOMENTS); /* the default */
    printf("subnormal gamma, 5 associations x 3 profiles: worst error/bound %.3g\n", worst);
}
