/* RMSNorm against the golden vectors and through the CLI (cli/op_rmsnorm.c):
 *  - the float and double kernels (ref/rmsnorm.c, specs/rmsnorm.h) on every f32/f64-input golden
 *    rmsnorm / rmsnorm_backward case, within the a-priori bound of specs/error-analysis-rmsnorm.md
 *    (ref/rmsnorm_bound.c); the worst error/bound ratio is printed;
 *  - the low-precision trap: an RMSNorm whose sum of squares is formed in f16 leaves the bound on
 *    the lowp_sumsq_* cases;
 *  - `resnorm eval` / `check` for rmsnorm and rmsnorm_backward on hand-derived values (offset 0
 *    and 1), and bad input (offset=2: exit 2, nothing written).
 * Expected values never come from the code under test: golden files (certified by the twin, itself
 * tested in tests/test_rmsnorm.c) or closed forms worked out in the comments. */
#include <criterion/criterion.h>
#include <jansson.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "npy.h"
#include "golden_harness.h"
#include "rmsnorm.h"
#include "rmsnorm_bound.h"

#define MANIFEST "golden/manifest.json"

/* ================================================================ kernels vs golden */

/* One golden case's inputs and attributes. */
typedef struct {
    const char *id;
    rn_array x, g, dy;
    size_t rows, n;
    double eps;
    int offset, f32;
} gcase;

static void case_load(json_t *c, gcase *k)
{
    json_t *in = json_object_get(c, "inputs"), *attrs = json_object_get(c, "attrs");
    memset(k, 0, sizeof *k);
    k->id = json_string_value(json_object_get(c, "id"));
    k->x = load(get_path(in, "x"));
    k->g = load(get_path(in, "gamma"));
    if (get_path(in, "dy"))
        k->dy = load(get_path(in, "dy"));
    rows_n(&k->x, (long)json_integer_value(json_object_get(attrs, "axis")), &k->rows, &k->n);
    k->eps = case_eps(c);
    k->offset = (int)json_integer_value(json_object_get(attrs, "offset"));
    k->f32 = k->x.dtype == RN_F32;
}

static void case_free(gcase *k)
{
    rn_array_free(&k->x), rn_array_free(&k->g), rn_array_free(&k->dy);
}

/* The kernels of the case's dtype: y, rstd (forward) and, if dx, dx and dgamma (backward, from the
   forward's rstd, dgamma accumulated from 0), widened to double. */
static void run_kernels(const gcase *k, double *y, double *rstd, double *dx, double *dg)
{
    size_t N = k->rows * k->n, n = k->n, rows = k->rows;
    int R = (int)rows, n_ = (int)n;
    if (k->f32) {
        float *fx = malloc(N * 4), *fy = malloc(N * 4), *fdy = malloc(N * 4), *fdx = malloc(N * 4);
        float *fg = calloc(n, 4), *fdg = calloc(n, 4), *fr = malloc(rows * 4);
        for (size_t i = 0; i < N; i++)
            fx[i] = (float)k->x.data[i], fdy[i] = dx ? (float)k->dy.data[i] : 0.0f;
        for (size_t j = 0; j < n; j++)
            fg[j] = (float)k->g.data[j];
        rmsnorm_forward_f32(fy, fr, fx, fg, R, n_, (float)k->eps, k->offset);
        if (dx)
            rmsnorm_backward_f32(fdx, fdg, fdy, fx, fg, fr, R, n_, k->offset);
        for (size_t i = 0; i < N; i++) {
            y[i] = fy[i];
            if (dx)
                dx[i] = fdx[i];
        }
        for (size_t r = 0; r < rows; r++)
            rstd[r] = fr[r];
        for (size_t j = 0; dx && j < n; j++)
            dg[j] = fdg[j];
        free(fx), free(fy), free(fdy), free(fdx), free(fg), free(fdg), free(fr);
    } else {
        rmsnorm_forward_f64(y, rstd, k->x.data, k->g.data, R, n_, k->eps, k->offset);
        if (dx) {
            for (size_t j = 0; j < n; j++)
                dg[j] = 0.0;
            rmsnorm_backward_f64(dx, dg, k->dy.data, k->x.data, k->g.data, rstd, R, n_,
                                 k->offset);
        }
    }
}

static double forward_case(json_t *c)
{
    gcase k;
    case_load(c, &k);
    size_t N = k.rows * k.n;
    rn_dtype cd = k.f32 ? RN_F32 : RN_F64;
    double *y = malloc(N * 8), *r = malloc(k.rows * 8), *by = malloc(N * 8), *br = malloc(k.rows * 8);
    run_kernels(&k, y, r, NULL, NULL);
    cr_assert_eq(rmsnorm_forward_bound(by, br, k.x.data, k.g.data, k.rows, k.n, k.eps, k.offset,
                                       cd, cd), 0);
    json_t *exp = json_object_get(json_object_get(c, "expected"), "f64");
    rn_array wy = load(get_path(exp, "y")), wr = load(get_path(exp, "rstd"));
    double w = fmax(golden_compare(k.id, "y", y, wy.data, by, N),
                    golden_compare(k.id, "rstd", r, wr.data, br, k.rows));
    free(y), free(r), free(by), free(br);
    rn_array_free(&wy), rn_array_free(&wr);
    case_free(&k);
    return w;
}

static double backward_case(json_t *c)
{
    gcase k;
    case_load(c, &k);
    size_t N = k.rows * k.n;
    rn_dtype cd = k.f32 ? RN_F32 : RN_F64;
    double *y = malloc(N * 8), *r = malloc(k.rows * 8), *dx = malloc(N * 8), *dg = malloc(k.n * 8);
    double *bdx = malloc(N * 8), *bdg = malloc(k.n * 8);
    run_kernels(&k, y, r, dx, dg);
    cr_assert_eq(rmsnorm_backward_bound(bdx, bdg, k.dy.data, k.x.data, k.g.data, k.rows, k.n,
                                        k.eps, k.offset, cd, cd), 0);
    json_t *exp = json_object_get(json_object_get(c, "expected"), "f64");
    rn_array wdx = load(get_path(exp, "dx")), wdg = load(get_path(exp, "dgamma"));
    double w = fmax(golden_compare(k.id, "dx", dx, wdx.data, bdx, N),
                    golden_compare(k.id, "dgamma", dg, wdg.data, bdg, k.n));
    free(y), free(r), free(dx), free(dg), free(bdx), free(bdg);
    rn_array_free(&wdx), rn_array_free(&wdg);
    case_free(&k);
    return w;
}

static void run_golden(const char *op, double (*run)(json_t *))
{
    json_error_t jerr;
    json_t *man = json_load_file(MANIFEST, 0, &jerr);
    cr_assert_not_null(man, "%s: %s", MANIFEST, jerr.text);
    double worst[2] = {0, 0}; /* [f32?] */
    int cases[2] = {0, 0};
    size_t i;
    json_t *c;
    json_array_foreach(json_object_get(man, "cases"), i, c)
    {
        const char *dt = json_string_value(json_object_get(c, "input_dtype"));
        int f32 = !strcmp(dt, "f32");
        if (strcmp(json_string_value(json_object_get(c, "op")), op) != 0 ||
            (!f32 && strcmp(dt, "f64") != 0))
            continue;
        worst[f32] = fmax(worst[f32], run(c));
        cases[f32]++;
    }
    json_decref(man);
    cr_assert(cases[0] > 0 && cases[1] > 0, "no golden %s cases", op);
    printf("%s kernels vs golden, worst error/bound: f64 %d cases %.4g, f32 %d cases %.4g\n", op,
           cases[0], worst[0], cases[1], worst[1]);
}

Test(rmsnorm_golden, forward_kernels_within_bound) { run_golden("rmsnorm", forward_case); }
Test(rmsnorm_golden, backward_kernels_within_bound)
{
    run_golden("rmsnorm_backward", backward_case);
}

/* ---------------------------------------------------------------- the low-precision trap */

static float to_f16(float v) { return (float)rn_round((double)v, RN_F16); }

/* The bug: squares and their sum rounded to f16 after every operation (a half-precision
   accumulator), the rest in f32. */
static void f16_sumsq_forward(double *y, const gcase *k)
{
    for (size_t r = 0; r < k->rows; r++) {
        const double *x = k->x.data + r * k->n;
        float s = 0.0f;
        for (size_t i = 0; i < k->n; i++)
            s = to_f16(s + to_f16((float)x[i] * (float)x[i]));
        float rstd = 1.0f / sqrtf(s / (float)k->n + (float)k->eps);
        for (size_t i = 0; i < k->n; i++) {
            float w = k->offset ? 1.0f + (float)k->g.data[i] : (float)k->g.data[i];
            y[r * k->n + i] = ((float)x[i] * rstd) * w;
        }
    }
}

/* On every lowp_sumsq_* case with f32 inputs, the f16-accumulating RMSNorm leaves the bound (or
   produces a non-finite value where the exact one is finite) somewhere, while the f32 kernel
   passes (forward_kernels_within_bound). */
Test(rmsnorm_golden, f16_sum_of_squares_fails_the_lowp_cases)
{
    json_error_t jerr;
    json_t *man = json_load_file(MANIFEST, 0, &jerr);
    cr_assert_not_null(man);
    size_t i;
    json_t *c;
    int seen = 0;
    json_array_foreach(json_object_get(man, "cases"), i, c)
    {
        json_t *flags = json_object_get(c, "flags");
        int lowp = 0;
        size_t j;
        json_t *f;
        json_array_foreach(flags, j, f) lowp |= !strncmp(json_string_value(f), "lowp_sumsq", 10);
        if (!lowp || strcmp(json_string_value(json_object_get(c, "op")), "rmsnorm") ||
            strcmp(json_string_value(json_object_get(c, "input_dtype")), "f32"))
            continue;
        gcase k;
        case_load(c, &k);
        size_t N = k.rows * k.n;
        double *y = malloc(N * 8), *by = malloc(N * 8), *br = malloc(k.rows * 8);
        f16_sumsq_forward(y, &k);
        cr_assert_eq(rmsnorm_forward_bound(by, br, k.x.data, k.g.data, k.rows, k.n, k.eps,
                                           k.offset, RN_F32, RN_F32), 0);
        rn_array wy = load(get_path(json_object_get(json_object_get(c, "expected"), "f64"), "y"));
        size_t out = 0;
        for (size_t e = 0; e < N; e++)
            out += isfinite(wy.data[e]) && !(fabs(y[e] - wy.data[e]) <= by[e]);
        cr_assert(out > 0, "%s: the f16 sum of squares was not caught", k.id);
        printf("%s: f16 sum of squares outside the bound at %zu of %zu elements\n", k.id, out, N);
        seen++;
        free(y), free(by), free(br);
        rn_array_free(&wy);
        case_free(&k);
    }
    json_decref(man);
    cr_assert_eq(seen, 2, "expected the overflow and the underflow case");
}

/* ================================================================ CLI */

#define CLI_HARNESS_PREFIX "/tmp/resnorm_test_rms."
#include "cli_harness.h"

/* The CLI tests here write f32 inputs. */
static void put(const char *name, int ndim, const size_t *shape, const double *v)
{
    put_npy(name, RN_F32, ndim, shape, v);
}

/* want: f32 values (decimal literals rounded once by the compiler) */
static void expect_file(const char *name, size_t count, const float *want)
{
    rn_array a = load(P(name));
    cr_assert_eq(a.count, count, "%s: %zu elements", name, a.count);
    for (size_t i = 0; i < count; i++)
        cr_assert_eq(a.data[i], (double)want[i], "%s[%zu] = %a, expected %a", name, i, a.data[i],
                     (double)want[i]);
    rn_array_free(&a);
}

TestSuite(rmsnorm_cli, .init = setup, .fini = teardown);

/* x = [[3, 4, 0, 0]], eps = 0: mean(x^2) = 25/4, rstd = 2/5, xhat = [1.2, 1.6, 0, 0].
 * gamma = [1, 0.5, 0, 0]: offset 0, y = [1.2, 0.8, 0, 0]; offset 1 (w = [2, 1.5, 1, 1]),
 *   y = [2.4, 2.4, 0, 0].
 * Backward, offset 0, gamma = 1, dy = [1, 0, 0, 0]: g = dy, mean(g xhat) = 1.2/4 = 0.3,
 *   dx = 0.4 (g - 0.3 xhat) = 0.4 [1 - 0.36, -0.48, 0, 0] = [0.256, -0.192, 0, 0];
 *   dgamma = dy xhat = [1.2, 0, 0, 0]. */
static const size_t S14[] = {1, 4}, S4[] = {4};
static const double X[] = {3, 4, 0, 0}, G[] = {1, 0.5, 0, 0}, ONES[] = {1, 1, 1, 1},
                    DY[] = {1, 0, 0, 0};

static void put_inputs(void)
{
    put("x.npy", 2, S14, X);
    put("g.npy", 1, S4, G);
    put("ones.npy", 1, S4, ONES);
    put("dy.npy", 2, S14, DY);
}

Test(rmsnorm_cli, eval_closed_form_offset_0_and_1)
{
    put_inputs();
    int rc = run("eval rmsnorm --in x=%s --in gamma=%s --attr eps=0 --out %s", P("x.npy"),
                 P("g.npy"), P("o0"));
    cr_assert_eq(rc, 0, "exit %d: %s", rc, err_text);
    expect_file("o0/y.npy", 4, (const float[]){1.2f, 0.8f, 0, 0});
    expect_file("o0/rstd.npy", 1, (const float[]){0.4f});
    rc = run("eval rmsnorm --in x=%s --in gamma=%s --attr eps=0 --attr offset=1 --out %s",
             P("x.npy"), P("g.npy"), P("o1"));
    cr_assert_eq(rc, 0, "exit %d: %s", rc, err_text);
    expect_file("o1/y.npy", 4, (const float[]){2.4f, 2.4f, 0, 0});
    expect_file("o1/rstd.npy", 1, (const float[]){0.4f});
    /* rstd has the shape x.shape[:axis] + [1]: (1, 1) */
    rn_array r = load(P("o1/rstd.npy"));
    cr_assert(r.ndim == 2 && r.shape[0] == 1 && r.shape[1] == 1);
    rn_array_free(&r);
}

Test(rmsnorm_cli, eval_backward_closed_form)
{
    put_inputs();
    int rc = run("eval rmsnorm_backward --in x=%s --in gamma=%s --in dy=%s --attr eps=0 --out %s",
                 P("x.npy"), P("ones.npy"), P("dy.npy"), P("b"));
    cr_assert_eq(rc, 0, "exit %d: %s", rc, err_text);
    expect_file("b/dx.npy", 4, (const float[]){0.256f, -0.192f, 0, 0});
    expect_file("b/dgamma.npy", 4, (const float[]){1.2f, 0, 0, 0});
    rc = run("check rmsnorm_backward --in x=%s --in gamma=%s --in dy=%s --attr eps=0 "
             "--actual dx=%s --actual dgamma=%s", P("x.npy"), P("ones.npy"), P("dy.npy"),
             P("b/dx.npy"), P("b/dgamma.npy"));
    cr_assert_eq(rc, 0, "exit %d: %s%s", rc, out_text, err_text);
}

Test(rmsnorm_cli, check_catches_a_missing_offset_and_a_perturbation)
{
    put_inputs();
    put("y1.npy", 2, S14, (const double[]){2.4f, 2.4f, 0, 0});
    put("y0.npy", 2, S14, (const double[]){1.2f, 0.8f, 0, 0});
    put("ybad.npy", 2, S14, (const double[]){2.4f, 2.4f + 0x1p-10, 0, 0});
    const char *fmt = "check rmsnorm --in x=%s --in gamma=%s --attr eps=0 --attr offset=1 "
                      "--actual y=%s";
    int rc = run(fmt, P("x.npy"), P("g.npy"), P("y1.npy"));
    cr_assert_eq(rc, 0, "exit %d: %s%s", rc, out_text, err_text);
    cr_assert_not_null(strstr(out_text, "offset 1"), "%s", out_text);
    rc = run(fmt, P("x.npy"), P("g.npy"), P("y0.npy")); /* offset forgotten */
    cr_assert_eq(rc, 1, "exit %d: %s%s", rc, out_text, err_text);
    rc = run(fmt, P("x.npy"), P("g.npy"), P("ybad.npy"));
    cr_assert_eq(rc, 1, "exit %d: %s%s", rc, out_text, err_text);
}

Test(rmsnorm_cli, bad_offset_and_shapes_exit_2_no_output)
{
    put_inputs();
    int rc = run("eval rmsnorm --in x=%s --in gamma=%s --attr offset=2 --out %s", P("x.npy"),
                 P("g.npy"), P("out"));
    cr_assert_eq(rc, 2, "exit %d", rc);
    cr_assert_not_null(strstr(err_text, "offset"), "%s", err_text);
    rc = run("eval rmsnorm --in x=%s --in gamma=%s --attr offset=-1 --out %s", P("x.npy"),
             P("g.npy"), P("out"));
    cr_assert_eq(rc, 2, "exit %d", rc);
    put("g3.npy", 1, (const size_t[]){3}, ONES);
    rc = run("eval rmsnorm --in x=%s --in gamma=%s --out %s", P("x.npy"), P("g3.npy"), P("out"));
    cr_assert_eq(rc, 2, "exit %d", rc);
    cr_assert_not_null(strstr(err_text, "input gamma"), "%s", err_text);
    rc = run("eval rmsnorm_backward --in x=%s --in gamma=%s --out %s", P("x.npy"), P("g.npy"),
             P("out"));
    cr_assert_eq(rc, 2, "exit %d", rc);
    cr_assert_not_null(strstr(err_text, "missing required input 'dy'"), "%s", err_text);
    cr_assert_eq(access(P("out"), F_OK), -1, "output left behind");
}
