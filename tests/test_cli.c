/* Tests of the `resnorm` command (cli/): runs $RESNORM (default build/resnorm) as a subprocess on
 * .npy files written here with npy_write, in a fresh temporary directory per test.
 *
 * Expected values are derived by hand, in the comments, from the LayerNorm formulas
 * (specs/layernorm.h): mean = (1/n) sum x, var = (1/n) sum (x - mean)^2, rstd = 1/sqrt(var + eps),
 * y = (x - mean) rstd gamma + beta; backward with xhat = (x - mean) rstd:
 *   dx = rstd (g - mean(g) - xhat mean(g xhat)), g = dy gamma; dgamma = sum_rows dy xhat;
 *   dbeta = sum_rows dy.
 * Most cases use eps=0 and rows whose variance is a perfect square, so every expected value is a
 * small dyadic rational, exact in every dtype. */
#include <criterion/criterion.h>
#include <jansson.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "npy.h"

#define CLI_HARNESS_PREFIX "/tmp/resnorm_test_cli."
#include "cli_harness.h"

TestSuite(cli, .init = setup, .fini = teardown);

/* The first occurrence of s in buf[0..n) (binary data: not strstr). */
static char *find(char *buf, size_t n, const char *s)
{
    size_t k = strlen(s);
    for (size_t i = 0; i + k <= n; i++)
        if (!memcmp(buf + i, s, k))
            return buf + i;
    return NULL;
}

static void put(const char *name, rn_dtype d, int ndim, const size_t *shape, const double *v)
{
    put_npy(name, d, ndim, shape, v);
}

static void put_raw(const char *name, const char *bytes, size_t n)
{
    FILE *f = fopen(P(name), "wb");
    cr_assert_not_null(f);
    cr_assert_eq(fwrite(bytes, 1, n, f), n);
    fclose(f);
}

static void get(const char *name, rn_array *a, rn_dtype d, int ndim, const size_t *shape)
{
    char err[512];
    cr_assert_eq(npy_read(P(name), a, err, sizeof err), 0, "%s", err);
    cr_assert_eq(a->dtype, d, "%s: dtype %s, expected %s", name, rn_dtype_name(a->dtype),
                 rn_dtype_name(d));
    cr_assert_eq(a->ndim, ndim, "%s: ndim %d, expected %d", name, a->ndim, ndim);
    for (int i = 0; i < ndim; i++)
        cr_assert_eq(a->shape[i], shape[i], "%s: dim %d is %zu, expected %zu", name, i,
                     a->shape[i], shape[i]);
}

static void expect_values(const char *name, rn_dtype d, int ndim, const size_t *shape,
                          const double *want)
{
    rn_array a;
    get(name, &a, d, ndim, shape);
    for (size_t i = 0; i < a.count; i++)
        cr_assert_eq(a.data[i], want[i], "%s[%zu] = %.17g, expected %.17g", name, i, a.data[i],
                     want[i]);
    rn_array_free(&a);
}

/* The number of entries in directory dir (0 if it does not exist). */
static int entries(const char *dir)
{
    char cmd[600];
    snprintf(cmd, sizeof cmd, "test ! -e '%s' || test -z \"$(ls -A '%s')\"", dir, dir);
    return system(cmd) == 0 ? 0 : 1;
}

/* ---- forward: x = [[1, 3], [2, 6]], gamma = [2, 3], beta = [0.5, -1], eps = 0 ----
 * row 0: mean 2, var ((1-2)^2 + (3-2)^2)/2 = 1, rstd 1, xhat = [-1, 1]
 * row 1: mean 4, var ((2-4)^2 + (6-4)^2)/2 = 4, rstd 1/2, xhat = [-1, 1]
 * y = xhat * gamma + beta = [-2 + 0.5, 3 - 1] = [-1.5, 2] on both rows. */
static const size_t S22[] = {2, 2}, S21[] = {2, 1}, S2[] = {2};
static const double X22[] = {1, 3, 2, 6}, G2[] = {2, 3}, B2[] = {0.5, -1};
static const double Y22[] = {-1.5, 2, -1.5, 2}, M21[] = {2, 4}, R21[] = {1, 0.5};

static void put_forward_inputs(rn_dtype d)
{
    put("x.npy", d, 2, S22, X22);
    put("g.npy", d, 1, S2, G2);
    put("b.npy", d, 1, S2, B2);
}

#define FWD_FMT "--in x=%s --in gamma=%s --in beta=%s"
#define FWD_ARGS P("x.npy"), P("g.npy"), P("b.npy")

Test(cli, eval_forward_closed_form_every_dtype)
{
    for (int d = 0; d < RN_NDTYPES; d++) {
        put_forward_inputs((rn_dtype)d);
        char out[300];
        snprintf(out, sizeof out, "out_%s", rn_dtype_name((rn_dtype)d));
        int rc = run("eval layernorm --in x=%s --in gamma=%s --in beta=%s --attr eps=0 --out %s",
                     P("x.npy"), P("g.npy"), P("b.npy"), P(out));
        cr_assert_eq(rc, 0, "%s: exit %d: %s", rn_dtype_name((rn_dtype)d), rc, err_text);
        char f[400];
        snprintf(f, sizeof f, "%s/y.npy", out);
        expect_values(f, (rn_dtype)d, 2, S22, Y22);
        snprintf(f, sizeof f, "%s/mean.npy", out);
        expect_values(f, (rn_dtype)d, 2, S21, M21);
        snprintf(f, sizeof f, "%s/rstd.npy", out);
        expect_values(f, (rn_dtype)d, 2, S21, R21);
    }
}

Test(cli, eval_dtype_option_sets_output_dtype)
{
    put_forward_inputs(RN_F64);
    for (int d = 0; d < RN_NDTYPES; d++) {
        int rc = run("eval layernorm --in x=%s --in gamma=%s --in beta=%s --attr eps=0 "
                     "--dtype %s --out %s", P("x.npy"), P("g.npy"), P("b.npy"),
                     rn_dtype_name((rn_dtype)d), P("o"));
        cr_assert_eq(rc, 0, "%s", err_text);
        expect_values("o/y.npy", (rn_dtype)d, 2, S22, Y22);
        expect_values("o/rstd.npy", (rn_dtype)d, 2, S21, R21);
    }
}

/* x = [1, 2, 3, 4] (f64), gamma = 1, beta = 0, default eps (1e-5 rounded to binary64):
 * mean = 2.5 exactly, var = (2.25 + 0.25 + 0.25 + 2.25)/4 = 1.25,
 * rstd = 1/sqrt(1.25 + eps) (irrational: compare with a double evaluation, within 2 ulps),
 * y = (x - 2.5) rstd = [-1.5, -0.5, 0.5, 1.5] rstd (within 3 ulps). */
Test(cli, eval_default_eps)
{
    size_t s4[] = {4};
    double x[] = {1, 2, 3, 4}, one[] = {1, 1, 1, 1}, zero[] = {0, 0, 0, 0};
    put("x.npy", RN_F64, 1, s4, x);
    put("g.npy", RN_F64, 1, s4, one);
    put("b.npy", RN_F64, 1, s4, zero);
    cr_assert_eq(run("eval layernorm " FWD_FMT " --out %s", FWD_ARGS, P("o")), 0, "%s", err_text);
    rn_array m, r, y;
    size_t s1[] = {1};
    get("o/mean.npy", &m, RN_F64, 1, s1);
    get("o/rstd.npy", &r, RN_F64, 1, s1);
    get("o/y.npy", &y, RN_F64, 1, s4);
    cr_assert_eq(m.data[0], 2.5);
    double rstd = 1.0 / sqrt(1.25 + 1e-5);
    cr_assert(fabs(r.data[0] - rstd) <= 2 * 0x1p-52 * rstd, "rstd %.17g vs %.17g", r.data[0],
              rstd);
    cr_assert(r.data[0] != 1.0 / sqrt(1.25), "eps was not applied");
    for (int i = 0; i < 4; i++) {
        double want = (x[i] - 2.5) * rstd;
        cr_assert(fabs(y.data[i] - want) <= 3 * 0x1p-53 * fabs(want), "y[%d] %.17g vs %.17g", i,
                  y.data[i], want);
    }
    rn_array_free(&m);
    rn_array_free(&r);
    rn_array_free(&y);
}

/* A constant row: x - mean = 0 exactly, so y = beta exactly whatever rstd is; mean = 7;
 * rstd = 1/sqrt(eps), eps = 1e-5 rounded to binary32 (x is f32): compare within 1 ulp of f32. */
Test(cli, eval_constant_row_gives_beta)
{
    size_t s13[] = {1, 3}, s3[] = {3}, s11[] = {1, 1};
    double x[] = {7, 7, 7}, g[] = {1, 2, 3}, b[] = {0.25, -0.5, 4};
    put("x.npy", RN_F32, 2, s13, x);
    put("g.npy", RN_F32, 1, s3, g);
    put("b.npy", RN_F32, 1, s3, b);
    cr_assert_eq(run("eval layernorm " FWD_FMT " --out %s", FWD_ARGS, P("o")), 0, "%s", err_text);
    expect_values("o/y.npy", RN_F32, 2, s13, b);
    double m7[] = {7};
    expect_values("o/mean.npy", RN_F32, 2, s11, m7);
    rn_array r;
    get("o/rstd.npy", &r, RN_F32, 2, s11);
    double want = 1.0 / sqrt((double)1e-5f);
    cr_assert(fabs(r.data[0] - want) <= 0x1p-23 * want, "rstd %.9g vs %.9g", r.data[0], want);
    rn_array_free(&r);
}

/* axis = 1 on x of shape (2, 3, 2): rows are x[i] (6 elements each), here [1,3,1,3,1,3] and
 * [0,4,0,4,0,4]: means 2 and 2, variances 1 and 4, rstd 1 and 1/2 (eps = 0), xhat = [-1,1,...].
 * gamma of shape (3, 2) = [1..6], beta = 0: y = xhat * gamma. mean/rstd shape (2, 1, 1).
 * The same with gamma given 1-D (6,), and axis = -2 (the same axis). */
Test(cli, eval_axis_and_shapes)
{
    size_t s322[] = {2, 3, 2}, s32[] = {3, 2}, s6[] = {6}, s211[] = {2, 1, 1};
    double x[] = {1, 3, 1, 3, 1, 3, 0, 4, 0, 4, 0, 4};
    double g[] = {1, 2, 3, 4, 5, 6}, b[] = {0, 0, 0, 0, 0, 0};
    double y[] = {-1, 2, -3, 4, -5, 6, -1, 2, -3, 4, -5, 6};
    double m[] = {2, 2}, r[] = {1, 0.5};
    put("x.npy", RN_F64, 3, s322, x);
    put("g.npy", RN_F64, 2, s32, g);
    put("b.npy", RN_F64, 2, s32, b);
    cr_assert_eq(run("eval layernorm " FWD_FMT " --attr axis=1 --attr eps=0 --out %s", FWD_ARGS,
                     P("o")),
                 0, "%s", err_text);
    expect_values("o/y.npy", RN_F64, 3, s322, y);
    expect_values("o/mean.npy", RN_F64, 3, s211, m);
    expect_values("o/rstd.npy", RN_F64, 3, s211, r);
    put("g.npy", RN_F64, 1, s6, g);
    put("b.npy", RN_F64, 1, s6, b);
    cr_assert_eq(run("eval layernorm " FWD_FMT " --attr axis=-2 --attr eps=0 --out %s", FWD_ARGS,
                     P("o2")),
                 0, "%s", err_text);
    expect_values("o2/y.npy", RN_F64, 3, s322, y);
    expect_values("o2/mean.npy", RN_F64, 3, s211, m);
    /* gamma of the wrong shape for axis = -1 (x.shape[-1:] = (2,)) */
    cr_assert_eq(run("eval layernorm " FWD_FMT " --out %s", FWD_ARGS, P("o3")), 2);
    cr_assert_not_null(strstr(err_text, P("g.npy")), "%s", err_text);
    cr_assert_eq(entries(P("o3")), 0);
}

/* backward: x = [[1,1,3,3],[1,1,3,3]]: mean 2, var 1, rstd 1 (eps 0), xhat = [-1,-1,1,1];
 * gamma = 1, so g = dy.
 * row 0, dy = [1,0,0,0]: mean(g) = 1/4, mean(g xhat) = -1/4,
 *   dx = dy - 1/4 + xhat/4 = [1/2, -1/2, 0, 0]
 * row 1, dy = [0,0,0,2]: mean(g) = 1/2, mean(g xhat) = 1/2,
 *   dx = dy - 1/2 - xhat/2 = [0, 0, -1, 1]
 * dgamma = sum dy xhat = [-1,0,0,0] + [0,0,0,2] = [-1, 0, 0, 2]; dbeta = sum dy = [1, 0, 0, 2]. */
Test(cli, eval_backward_closed_form)
{
    size_t s24[] = {2, 4}, s4[] = {4};
    double x[] = {1, 1, 3, 3, 1, 1, 3, 3}, g[] = {1, 1, 1, 1};
    double dy[] = {1, 0, 0, 0, 0, 0, 0, 2};
    double dx[] = {0.5, -0.5, 0, 0, 0, 0, -1, 1}, dg[] = {-1, 0, 0, 2}, db[] = {1, 0, 0, 2};
    for (int d = 0; d < RN_NDTYPES; d++) {
        put("x.npy", (rn_dtype)d, 2, s24, x);
        put("g.npy", (rn_dtype)d, 1, s4, g);
        put("dy.npy", (rn_dtype)d, 2, s24, dy);
        int rc = run("eval layernorm_backward --in x=%s --in gamma=%s --in dy=%s --attr eps=0 "
                     "--out %s", P("x.npy"), P("g.npy"), P("dy.npy"), P("o"));
        cr_assert_eq(rc, 0, "%s", err_text);
        expect_values("o/dx.npy", (rn_dtype)d, 2, s24, dx);
        expect_values("o/dgamma.npy", (rn_dtype)d, 1, s4, dg);
        expect_values("o/dbeta.npy", (rn_dtype)d, 1, s4, db);
    }
}

/* ---- check ---- */

static void perturb(const char *src, const char *dst, size_t i, double ulps)
{
    rn_array a;
    char err[512];
    cr_assert_eq(npy_read(P(src), &a, err, sizeof err), 0, "%s", err);
    double v = a.data[i];
    a.data[i] = (double)(float)(v + ulps * rn_ulp(v, RN_F32));
    cr_assert_eq(npy_write(P(dst), &a, err, sizeof err), 0, "%s", err);
    rn_array_free(&a);
}

/* A generic f32 case (default eps, irrational results) so the tolerance matters. */
static void put_generic_f32(void)
{
    size_t s34[] = {3, 4}, s4[] = {4};
    double x[] = {0.5, -1.25, 3.0, 2.0, 100.0, 100.015625, 99.984375, 100.0078125,
                  -7.0, 0.1875, 5.5, 1.0};
    double g[] = {1.5, -0.75, 2.0, 1.0}, b[] = {0.125, 0.0, -1.0, 3.0};
    put("x.npy", RN_F32, 2, s34, x);
    put("g.npy", RN_F32, 1, s4, g);
    put("b.npy", RN_F32, 1, s4, b);
}

Test(cli, check_accepts_twin_outputs_and_catches_a_perturbation)
{
    put_generic_f32();
    cr_assert_eq(run("eval layernorm " FWD_FMT " --out %s", FWD_ARGS, P("o")), 0, "%s", err_text);
    int rc = run("check layernorm " FWD_FMT " --actual y=%s --actual mean=%s --actual rstd=%s",
                 FWD_ARGS,
                 P("o/y.npy"), P("o/mean.npy"), P("o/rstd.npy"));
    cr_assert_eq(rc, 0, "exit %d: %s%s", rc, out_text, err_text);
    cr_assert_not_null(strstr(out_text, "tolerance: specs/error-analysis.md"), "%s", out_text);
    cr_assert_not_null(strstr(out_text, "0 mismatches"), "%s", out_text);

    /* y[2, 1] off by 4096 ulps of f32: far outside the bound of that well-conditioned row.
       (Row 1 has mean 100 and spread 0.03: its bound is rightly ~10x larger, see
       specs/error-analysis.md, so the same error there would pass.) */
    perturb("o/y.npy", "bad_y.npy", 2 * 4 + 1, 4096);
    rc = run("check layernorm " FWD_FMT " --actual y=%s --actual rstd=%s", FWD_ARGS, P("bad_y.npy"),
             P("o/rstd.npy"));
    cr_assert_eq(rc, 1, "exit %d: %s%s", rc, out_text, err_text);
    cr_assert_not_null(strstr(out_text, "1 mismatches"), "%s", out_text);
    cr_assert_not_null(strstr(out_text, "y[2, 1]"), "index not reported: %s", out_text);
    cr_assert_not_null(strstr(out_text, "ulp"), "%s", out_text);
    /* the MISMATCH line gives the absolute error and the bound beside the ratios */
    cr_assert_not_null(strstr(out_text, "ulp), bound "), "%s", out_text);

    /* the same as JSON */
    rc = run("check layernorm " FWD_FMT " --actual y=%s --json", FWD_ARGS, P("bad_y.npy"));
    cr_assert_eq(rc, 1, "%s", err_text);
    json_error_t je;
    json_t *root = json_loads(out_text, 0, &je);
    cr_assert_not_null(root, "not JSON: %s: %s", je.text, out_text);
    cr_assert_str_eq(json_string_value(json_object_get(root, "op")), "layernorm");
    cr_assert_str_eq(json_string_value(json_object_get(root, "dtype")), "f32");
    cr_assert_str_eq(json_string_value(json_object_get(root, "compute_dtype")), "f32");
    cr_assert(json_is_false(json_object_get(root, "pass")));
    json_t *y = json_object_get(json_object_get(root, "outputs"), "y");
    cr_assert_not_null(y);
    cr_assert_eq(json_integer_value(json_object_get(y, "count")), 12);
    cr_assert_eq(json_integer_value(json_object_get(y, "mismatches")), 1);
    cr_assert(json_number_value(json_object_get(y, "max_ratio")) > 1);
    json_t *w0 = json_array_get(json_object_get(y, "worst"), 0);
    json_t *idx = json_object_get(w0, "index");
    cr_assert_eq(json_array_size(idx), 2);
    cr_assert_eq(json_integer_value(json_array_get(idx, 0)), 2);
    cr_assert_eq(json_integer_value(json_array_get(idx, 1)), 1);
    double e = json_number_value(json_object_get(w0, "err_ulps"));
    cr_assert(e > 4000 && e < 4200, "err_ulps %g", e);
    cr_assert(json_number_value(json_object_get(w0, "err_bound_ratio")) > 1);
    json_decref(root);

    /* every profile accepts the exact values and rejects the 4096-ulp error (the bound of the
       well-conditioned row stays far below it in each, specs/error-analysis.md §0) */
    static const char *const profiles[] = {"runtimes", "moments", "two-pass"};
    for (int k = 0; k < 3; k++) {
        rc = run("check layernorm " FWD_FMT " --actual y=%s --actual rstd=%s --profile %s",
                 FWD_ARGS, P("o/y.npy"), P("o/rstd.npy"), profiles[k]);
        cr_assert_eq(rc, 0, "profile %s: exit %d: %s%s", profiles[k], rc, out_text, err_text);
        rc = run("check layernorm " FWD_FMT " --actual y=%s --profile=%s", FWD_ARGS,
                 P("bad_y.npy"), profiles[k]);
        cr_assert_eq(rc, 1, "profile %s: exit %d: %s%s", profiles[k], rc, out_text, err_text);
    }

    /* passing JSON */
    rc = run("check layernorm " FWD_FMT " --actual mean=%s --json", FWD_ARGS, P("o/mean.npy"));
    cr_assert_eq(rc, 0, "%s", err_text);
    root = json_loads(out_text, 0, &je);
    cr_assert_not_null(root, "%s", out_text);
    cr_assert(json_is_true(json_object_get(root, "pass")));
    json_decref(root);
}

/* x = [1, 2, 3], gamma = 1, beta = 0: y = [-sqrt(1.5), 0, sqrt(1.5)] (mean 2, variance 2/3, eps
   = 0), so y[0, 1] is an exact 0.  An actual y[0, 1] = 1e-9 is within the bound (the mean's
   rounding alone allows ~1e-7 there) but is ~1e36 ulps of the exact 0 (ulp(0) is the smallest
   subnormal): the report must say that the count is against an exact 0 and give the error in
   ulps of the largest |exact| value, sqrt(1.5) (ulp 2^-23): the largest of 1e-9 * 2^23 = 0.0084
   and the error of the other two elements, the twin's f32 roundings of -+sqrt(1.5) (text and
   JSON; the exact value a check compares with is the real one, not its f32 rounding). */
Test(cli, check_explains_ulps_against_an_exact_zero)
{
    size_t s13[] = {1, 3}, s3[] = {3};
    double x[] = {1, 2, 3}, g[] = {1, 1, 1}, b[] = {0, 0, 0};
    put("x.npy", RN_F32, 2, s13, x);
    put("g.npy", RN_F32, 1, s3, g);
    put("b.npy", RN_F32, 1, s3, b);
    cr_assert_eq(run("eval layernorm " FWD_FMT " --attr eps=0 --out %s", FWD_ARGS, P("o")), 0, "%s",
                 err_text);
    rn_array y;
    get("o/y.npy", &y, RN_F32, 2, s13);
    cr_assert_eq(y.data[1], 0);
    y.data[1] = (double)1e-9f;
    put("a.npy", RN_F32, 2, s13, y.data);
    rn_array_free(&y);
    int rc = run("check layernorm " FWD_FMT " --attr eps=0 --actual y=%s", FWD_ARGS, P("a.npy"));
    cr_assert_eq(rc, 0, "exit %d: %s%s", rc, out_text, err_text);
    cr_assert_not_null(strstr(out_text, "(against an exact 0, at [0, 1]; 0."), "%s", out_text);
    cr_assert_not_null(strstr(out_text, " ulp of the largest |exact| value, 1.22)"), "%s", out_text);
    rc = run("check layernorm " FWD_FMT " --attr eps=0 --actual y=%s --json", FWD_ARGS, P("a.npy"));
    cr_assert_eq(rc, 0, "%s", err_text);
    json_error_t je;
    json_t *root = json_loads(out_text, 0, &je);
    cr_assert_not_null(root, "not JSON: %s: %s", je.text, out_text);
    json_t *o = json_object_get(json_object_get(root, "outputs"), "y");
    cr_assert(json_number_value(json_object_get(o, "max_ulps")) > 1e30);
    cr_assert_eq(json_number_value(json_object_get(o, "max_ulps_want")), 0);
    json_t *idx = json_object_get(o, "max_ulps_index");
    cr_assert_eq(json_integer_value(json_array_get(idx, 1)), 1);
    cr_assert_float_eq(json_number_value(json_object_get(o, "max_abs_want")), (double)sqrtf(1.5f),
                       1e-7);
    double e0 = fabs((double)sqrtf(1.5f) - sqrt(1.5)); /* y[0, 0] and y[0, 2]: f32 vs exact */
    cr_assert_float_eq(json_number_value(json_object_get(o, "max_err_ulps_of_max_abs_want")),
                       fmax(e0, (double)1e-9f) * 0x1p23, 1e-9);
    json_decref(root);
}

/* A NaN where a finite value is expected is a mismatch; mean and rstd are accepted with or without
   their size-1 trailing dimension. */
Test(cli, check_nan_is_a_mismatch_and_shapes_squeeze)
{
    put_generic_f32();
    cr_assert_eq(run("eval layernorm " FWD_FMT " --out %s", FWD_ARGS, P("o")), 0, "%s", err_text);
    rn_array a;
    char err[512];
    cr_assert_eq(npy_read(P("o/y.npy"), &a, err, sizeof err), 0);
    a.data[0] = NAN;
    cr_assert_eq(npy_write(P("nan_y.npy"), &a, err, sizeof err), 0);
    rn_array_free(&a);
    cr_assert_eq(run("check layernorm " FWD_FMT " --actual y=%s", FWD_ARGS, P("nan_y.npy")), 1,
                 "%s",
                 out_text);
    cr_assert_not_null(strstr(out_text, "y[0, 0]"), "%s", out_text);

    cr_assert_eq(npy_read(P("o/mean.npy"), &a, err, sizeof err), 0);
    a.ndim = 1; /* (3, 1) -> (3,) */
    cr_assert_eq(npy_write(P("mean3.npy"), &a, err, sizeof err), 0);
    rn_array_free(&a);
    cr_assert_eq(run("check layernorm " FWD_FMT " --actual mean=%s", FWD_ARGS, P("mean3.npy")), 0,
                 "%s%s",
                 out_text, err_text);
}

Test(cli, check_backward_passes_on_twin_outputs)
{
    put_generic_f32();
    size_t s34[] = {3, 4};
    double dy[] = {1, -2, 0.5, 0.25, 3, 0, -1, 2, 0.125, 1, 1, -4};
    put("dy.npy", RN_F32, 2, s34, dy);
    cr_assert_eq(run("eval layernorm_backward --in x=%s --in gamma=%s --in dy=%s --out %s",
                     P("x.npy"), P("g.npy"), P("dy.npy"), P("o")), 0, "%s", err_text);
    int rc = run("check layernorm_backward --in x=%s --in gamma=%s --in dy=%s --actual dx=%s "
                 "--actual dgamma=%s --actual dbeta=%s --dtype f32", P("x.npy"), P("g.npy"),
                 P("dy.npy"), P("o/dx.npy"), P("o/dgamma.npy"), P("o/dbeta.npy"));
    cr_assert_eq(rc, 0, "%s%s", out_text, err_text);
}

/* ---- bad input: exit 2, a message naming the problem (and the file), no output left ---- */

static void expect_usage(const char *needle, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void expect_usage(const char *needle, const char *fmt, ...)
{
    char args[8192];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(args, sizeof args, fmt, ap);
    va_end(ap);
    int rc = run("%s", args);
    cr_assert_eq(rc, 2, "'%s': exit %d, expected 2: %s", args, rc, err_text);
    cr_assert_neq(err_text[0], '\0', "'%s': no message", args);
    if (needle)
        cr_assert_not_null(strstr(err_text, needle), "'%s': message lacks '%s': %s", args,
                           needle, err_text);
    cr_assert_eq(entries(P("out")), 0, "'%s': output left behind", args);
}

#define EVAL_TO_OUT "eval layernorm --in x=%s --in gamma=%s --in beta=%s --out %s"

Test(cli, bad_files_exit_2_naming_the_file)
{
    put_forward_inputs(RN_F32);
    static const char junk[] = "not a numpy file at all";
    put_raw("junk.npy", junk, sizeof junk);
    /* valid header, one byte of data missing / one too many */
    rn_array a;
    char err[512];
    cr_assert_eq(npy_read(P("g.npy"), &a, err, sizeof err), 0);
    rn_array_free(&a);
    FILE *f = fopen(P("g.npy"), "rb");
    char buf[512];
    size_t n = fread(buf, 1, sizeof buf, f);
    fclose(f);
    put_raw("short.npy", buf, n - 1);
    buf[n] = 0;
    put_raw("long.npy", buf, n + 1);
    char be[512];
    memcpy(be, buf, n);
    char *d = find(be, n, "'<f4'");
    cr_assert_not_null(d);
    d[1] = '>';
    put_raw("be.npy", be, n);
    memcpy(be, buf, n);
    d = find(be, n, "'<f4'");
    memcpy(d, "'<i4'", 5);
    put_raw("i4.npy", be, n);
    memcpy(be, buf, n);
    d = find(be, n, "False");
    memcpy(d, "True ", 5);
    put_raw("fortran.npy", be, n);

    const char *bad[] = {"junk.npy", "short.npy", "long.npy", "be.npy", "i4.npy", "fortran.npy",
                         "missing.npy"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        expect_usage(P(bad[i]), EVAL_TO_OUT, P(bad[i]), P("g.npy"), P("b.npy"), P("out"));
        expect_usage(P(bad[i]), EVAL_TO_OUT, P("x.npy"), P(bad[i]), P("b.npy"), P("out"));
        expect_usage(P(bad[i]), EVAL_TO_OUT, P("x.npy"), P("g.npy"), P(bad[i]), P("out"));
        expect_usage(P(bad[i]), "check layernorm " FWD_FMT " --actual y=%s", FWD_ARGS, P(bad[i]));
    }
    /* shapes: gamma (3,) against x.shape[-1:] = (2,); dy (2, 1) against x (2, 2); actual y (4,) */
    size_t s3[] = {3};
    double g3[] = {1, 2, 3};
    put("g3.npy", RN_F32, 1, s3, g3);
    expect_usage(P("g3.npy"), EVAL_TO_OUT, P("x.npy"), P("g3.npy"), P("b.npy"), P("out"));
    put("dy21.npy", RN_F32, 2, S21, M21);
    expect_usage(P("dy21.npy"), "eval layernorm_backward --in x=%s --in gamma=%s --in dy=%s "
                 "--out %s", P("x.npy"), P("g.npy"), P("dy21.npy"), P("out"));
    size_t s3y[] = {3};
    put("y3.npy", RN_F32, 1, s3y, Y22); /* 3 elements where 4 are expected */
    expect_usage(P("y3.npy"), "check layernorm " FWD_FMT " --actual y=%s", FWD_ARGS, P("y3.npy"));
    /* a scalar x */
    put("x0.npy", RN_F32, 0, NULL, G2);
    expect_usage(P("x0.npy"), EVAL_TO_OUT, P("x0.npy"), P("g.npy"), P("b.npy"), P("out"));
}

Test(cli, bad_usage_exit_2)
{
    put_forward_inputs(RN_F32);
    char x[512], g[512], b[512], o[512]; /* own copies: P's buffers rotate */
    strcpy(x, P("x.npy"));
    strcpy(g, P("g.npy"));
    strcpy(b, P("b.npy"));
    strcpy(o, P("out"));
    expect_usage("frobnicate", "frobnicate");
    expect_usage("--frobnicate", "--frobnicate");
    expect_usage("--frobnicate", EVAL_TO_OUT " --frobnicate", x, g, b, o);
    expect_usage("groupnorm", "eval groupnorm --in x=%s --out %s", x, o); /* not an op */
    expect_usage("OP", "eval --in x=%s --out %s", x, o);
    expect_usage("stash_type", EVAL_TO_OUT " --attr stash_type=1", x, g, b, o);
    expect_usage("NAME=VALUE", EVAL_TO_OUT " --attr eps", x, g, b, o);
    expect_usage("'bias'", "eval layernorm --in x=%s --in gamma=%s --in bias=%s --out %s", x, g,
                 b, o);
    expect_usage("beta", "eval layernorm --in x=%s --in gamma=%s --out %s", x, g, o);
    expect_usage("gamma", EVAL_TO_OUT " --in gamma=%s", x, g, b, o, g);
    expect_usage("f8", EVAL_TO_OUT " --dtype f8", x, g, b, o);
    expect_usage("abc", EVAL_TO_OUT " --attr eps=abc", x, g, b, o);
    expect_usage("-1e-5", EVAL_TO_OUT " --attr eps=-1e-5", x, g, b, o);
    expect_usage("nan", EVAL_TO_OUT " --attr eps=nan", x, g, b, o);
    expect_usage("inf", EVAL_TO_OUT " --attr eps=inf", x, g, b, o);
    expect_usage("eps", EVAL_TO_OUT " --attr eps=1e-5 --attr eps=1e-6", x, g, b, o);
    expect_usage("one", EVAL_TO_OUT " --attr axis=one", x, g, b, o);
    expect_usage("axis", EVAL_TO_OUT " --attr axis=2", x, g, b, o);
    expect_usage("axis", EVAL_TO_OUT " --attr axis=-3", x, g, b, o);
    expect_usage("--out", "eval layernorm --in x=%s --in gamma=%s --in beta=%s", x, g, b);
    expect_usage("--in", EVAL_TO_OUT " --in", x, g, b, o);
    expect_usage("--actual", "check layernorm " FWD_FMT, FWD_ARGS);
    expect_usage("'z'", "check layernorm " FWD_FMT " --actual z=%s", FWD_ARGS, x);
    expect_usage("twice", "check layernorm " FWD_FMT " --actual y=%s --actual y=%s", FWD_ARGS, x,
                 x);
    expect_usage("--json", EVAL_TO_OUT " --json", x, g, b, o);
    expect_usage("--out", "check layernorm " FWD_FMT " --actual y=%s --out %s", FWD_ARGS, x, o);
    expect_usage("profile 'welford'", "check layernorm " FWD_FMT " --actual y=%s --profile welford",
                 FWD_ARGS, x);
    expect_usage("--profile", EVAL_TO_OUT " --profile two-pass", x, g, b, o);
    expect_usage(NULL, "help frobnicate");
}

/* --out names a regular file; --out under a regular file */
Test(cli, unwritable_out_exit_2)
{
    put_forward_inputs(RN_F32);
    put_raw("file", "x", 1);
    cr_assert_eq(run(EVAL_TO_OUT, P("x.npy"), P("g.npy"), P("b.npy"), P("file")), 2);
    cr_assert_not_null(strstr(err_text, P("file")), "%s", err_text);
    cr_assert_eq(run(EVAL_TO_OUT, P("x.npy"), P("g.npy"), P("b.npy"), P("file/sub")), 2);
    cr_assert_eq(entries(P("out")), 0);
}

/* A write that fails after others succeeded: DIR/rstd.npy is a directory, so publishing rstd fails
   after y and mean are in place; they must be removed again, with no temporary file left. */
Test(cli, failed_write_leaves_no_partial_output)
{
    put_forward_inputs(RN_F32);
    cr_assert_eq(mkdir(P("out"), 0777), 0);
    cr_assert_eq(mkdir(P("out/rstd.npy"), 0777), 0);
    int rc = run(EVAL_TO_OUT, P("x.npy"), P("g.npy"), P("b.npy"), P("out"));
    cr_assert_eq(rc, 2, "exit %d: %s", rc, err_text);
    cr_assert_not_null(strstr(err_text, "rstd.npy"), "%s", err_text);
    char cmd[600];
    snprintf(cmd, sizeof cmd, "test \"$(ls -A '%s')\" = rstd.npy", P("out"));
    cr_assert_eq(system(cmd), 0, "leftover files in out/");
}

/* DIR is created when missing, including parents, and is removed again if nothing is written. */
Test(cli, out_dir_created)
{
    put_forward_inputs(RN_F32);
    cr_assert_eq(run(EVAL_TO_OUT, P("x.npy"), P("g.npy"), P("b.npy"), P("a/b/c")), 0, "%s",
                 err_text);
    cr_assert_eq(access(P("a/b/c/y.npy"), F_OK), 0);
}

Test(cli, help_and_version)
{
    cr_assert_eq(run("--help"), 0);
    cr_assert_not_null(strstr(out_text, "eval"));
    cr_assert_not_null(strstr(out_text, "exit codes"));
    cr_assert_eq(run("-h"), 0);
    cr_assert_eq(run("--version"), 0);
    cr_assert_str_eq(out_text, "resnorm 0.1.0\n");
    cr_assert_eq(run("help eval"), 0);
    cr_assert_not_null(strstr(out_text, "--out DIR"));
    cr_assert_eq(run("help check"), 0);
    cr_assert_not_null(strstr(out_text, "--actual"));
    cr_assert_eq(run("eval --help"), 0);
    cr_assert_eq(run("check layernorm --help"), 0);
    cr_assert_not_null(strstr(out_text, "error-analysis"));
    cr_assert_eq(run("--bogus"), 2);
    cr_assert_eq(run("%s", ""), 2);
}

/* check's bound assumes the implementation sees exactly the inputs: an f64 x that f32 cannot hold
   (0.1 is not a binary32 value) with --dtype f32 is refused, naming the file. */
Test(cli, check_refuses_inputs_the_compute_dtype_cannot_hold)
{
    size_t s2[] = {2};
    double x[] = {0.1, 0.7}, g[] = {1, 1}, b[] = {0, 0}, y[] = {-1, 1};
    put("x.npy", RN_F64, 1, s2, x);
    put("g.npy", RN_F64, 1, s2, g);
    put("b.npy", RN_F64, 1, s2, b);
    put("y.npy", RN_F32, 1, s2, y);
    int rc = run("check layernorm --in x=%s --in gamma=%s --in beta=%s --actual y=%s --dtype f32",
                 P("x.npy"), P("g.npy"), P("b.npy"), P("y.npy"));
    cr_assert_eq(rc, 2, "exit %d: %s", rc, err_text);
    cr_assert_not_null(strstr(err_text, P("x.npy")), "message lacks the file: %s", err_text);
    cr_assert_not_null(strstr(err_text, "not a f32 value"), "%s", err_text);
}

/* ---- shapes: the same C-order elements under another shape are compared, and noted ---- */
Test(cli, reshaped_output_compared_in_c_order)
{
    put_forward_inputs(RN_F32);
    size_t s4[] = {4};
    put("y4.npy", RN_F32, 1, s4, Y22); /* y of shape (2, 2) given as (4,) */
    int rc = run("check layernorm " FWD_FMT " --attr eps=0 --actual y=%s", FWD_ARGS, P("y4.npy"));
    cr_assert_eq(rc, 0, "%s%s", out_text, err_text);
    cr_assert_not_null(strstr(out_text, "note: shape (4,), expected (2, 2)"), "%s", out_text);
    double bad[] = {-1.5, 2, 2, -1.5}; /* the right values in the wrong order still fail */
    put("y4bad.npy", RN_F32, 1, s4, bad);
    rc = run("check layernorm " FWD_FMT " --attr eps=0 --actual y=%s --json", FWD_ARGS,
             P("y4bad.npy"));
    cr_assert_eq(rc, 1, "%s%s", out_text, err_text);
    cr_assert_not_null(strstr(out_text, "\"shape_note\""), "%s", out_text);
}

/* ---- eps: rounded once to eps_dtype, default f32 for half inputs (PyTorch's convention) ----
 * x = [[1, 1]] in f16: var = 0, rstd = 1/sqrt(eps).  Default: eps = (float)1e-5, rstd =
 * 316.2277...; eps_dtype=input: eps = the f16 subnormal 168 * 2^-24, rstd = 316.0133... (the two
 * differ by 2.5e-4 relative, 1700 f32 ulps). */
Test(cli, eps_dtype_default_is_f32_for_half_inputs)
{
    size_t s12[] = {1, 2};
    double x[] = {1, 1}, g[] = {1, 1}, b[] = {0, 0};
    put("xh.npy", RN_F16, 2, s12, x);
    put("gh.npy", RN_F16, 1, S2, g);
    put("bh.npy", RN_F16, 1, S2, b);
    const char *in = "--in x=%s --in gamma=%s --in beta=%s";
    char fmt[512];
    snprintf(fmt, sizeof fmt, "eval layernorm %s --dtype f32 --out %%s", in);
    cr_assert_eq(run(fmt, P("xh.npy"), P("gh.npy"), P("bh.npy"), P("o32")), 0, "%s", err_text);
    snprintf(fmt, sizeof fmt, "eval layernorm %s --attr eps_dtype=input --dtype f32 --out %%s", in);
    cr_assert_eq(run(fmt, P("xh.npy"), P("gh.npy"), P("bh.npy"), P("oin")), 0, "%s", err_text);
    rn_array r32, rin;
    size_t s11[] = {1, 1};
    get("o32/rstd.npy", &r32, RN_F32, 2, s11);
    get("oin/rstd.npy", &rin, RN_F32, 2, s11);
    /* independent references: 1/sqrt in double of the two eps values, then to f32 (1 ulp) */
    double want32 = 1.0 / sqrt((double)1e-5f), wantin = 1.0 / sqrt(168.0 * 0x1p-24);
    cr_assert_leq(fabs(r32.data[0] - want32), rn_ulp(want32, RN_F32), "%.9g vs %.9g",
                  r32.data[0], want32);
    cr_assert_leq(fabs(rin.data[0] - wantin), rn_ulp(wantin, RN_F32), "%.9g vs %.9g",
                  rin.data[0], wantin);
    rn_array_free(&r32);
    rn_array_free(&rin);
    /* the f32-eps result passes by default and fails under eps_dtype=input, and vice versa */
    snprintf(fmt, sizeof fmt, "check layernorm %s --actual rstd=%%s --dtype f32 %%s", in);
    cr_assert_eq(run(fmt, P("xh.npy"), P("gh.npy"), P("bh.npy"), P("o32/rstd.npy"), ""), 0,
                 "%s", out_text);
    cr_assert_not_null(strstr(out_text, "eps_dtype f32"), "%s", out_text);
    cr_assert_eq(run(fmt, P("xh.npy"), P("gh.npy"), P("bh.npy"), P("o32/rstd.npy"),
                     "--attr eps_dtype=input"), 1, "%s", out_text);
    cr_assert_eq(run(fmt, P("xh.npy"), P("gh.npy"), P("bh.npy"), P("oin/rstd.npy"), ""), 1,
                 "%s", out_text);
    cr_assert_eq(run(fmt, P("xh.npy"), P("gh.npy"), P("bh.npy"), P("o32/rstd.npy"),
                     "--attr eps_dtype=f16"), 2, "%s", out_text);
}

/* ---- --dtype is the compute dtype; each output is rounded to its file's dtype ----
 * An f64 implementation returning rstd in f32 (ONNX stash_type 1): x = [[1, 2], [3, 5]] in f64,
 * eps = 1e-5 (f64): the f32 rstd file is checked with the f64 bound plus an f32 rounding. */
Test(cli, per_output_rounding_f64_graph_with_f32_stats)
{
    double x[] = {1, 2, 3, 5};
    put("x64.npy", RN_F64, 2, S22, x);
    put("g64.npy", RN_F64, 1, S2, G2);
    put("b64.npy", RN_F64, 1, S2, B2);
    const char *in = "--in x=%s --in gamma=%s --in beta=%s";
    char fmt[512];
    snprintf(fmt, sizeof fmt, "eval layernorm %s --dtype %%s --out %%s", in);
    cr_assert_eq(run(fmt, P("x64.npy"), P("g64.npy"), P("b64.npy"), "f64", P("e64")), 0, "%s",
                 err_text);
    cr_assert_eq(run(fmt, P("x64.npy"), P("g64.npy"), P("b64.npy"), "f32", P("e32")), 0, "%s",
                 err_text);
    snprintf(fmt, sizeof fmt, "check layernorm %s --actual y=%%s --actual rstd=%%s %%s", in);
    cr_assert_eq(run(fmt, P("x64.npy"), P("g64.npy"), P("b64.npy"), P("e64/y.npy"),
                     P("e32/rstd.npy"), "--dtype f64 --json"), 0, "%s%s", out_text, err_text);
    json_error_t je;
    json_t *j = json_loads(out_text, 0, &je);
    cr_assert_not_null(j, "%s", out_text);
    json_t *o = json_object_get(json_object_get(j, "outputs"), "rstd");
    cr_assert_str_eq(json_string_value(json_object_get(o, "dtype")), "f32");
    cr_assert_str_eq(json_string_value(json_object_get(j, "compute_dtype")), "f64");
    json_decref(j);
    /* without --dtype the widest file (y, f64) sets the compute dtype */
    cr_assert_eq(run(fmt, P("x64.npy"), P("g64.npy"), P("b64.npy"), P("e64/y.npy"),
                     P("e32/rstd.npy"), ""), 0, "%s%s", out_text, err_text);
    cr_assert_not_null(strstr(out_text, "compute dtype f64"), "%s", out_text);
    cr_assert_not_null(strstr(out_text, "(rounded to f32)"), "%s", out_text);
    /* the f32 rounding admits one rounding, not more: rstd moved by 4 f32 ulps fails */
    rn_array r;
    size_t s21[] = {2, 1};
    get("e32/rstd.npy", &r, RN_F32, 2, s21);
    r.data[1] += 4 * rn_ulp(r.data[1], RN_F32);
    put("r32bad.npy", RN_F32, 2, s21, r.data);
    rn_array_free(&r);
    cr_assert_eq(run(fmt, P("x64.npy"), P("g64.npy"), P("b64.npy"), P("e64/y.npy"),
                     P("r32bad.npy"), "--dtype f64"), 1, "%s%s", out_text, err_text);
}

/* ---- flush-to-zero: a failure by default, accepted and reported under --allow ftz ----
 * residual y = x + f in f32 with x = 2^-140 (subnormal), f = 0: the exact y is 2^-140; a kernel
 * with DAZ/FTZ returns 0. */
Test(cli, flush_to_zero_only_when_allowed)
{
    size_t s1[] = {1};
    double x[] = {0x1p-140}, f[] = {0}, zero[] = {0}, wrong[] = {0x1p-120};
    put("xs.npy", RN_F32, 1, s1, x);
    put("fs.npy", RN_F32, 1, s1, f);
    put("y0.npy", RN_F32, 1, s1, zero);
    put("yw.npy", RN_F32, 1, s1, wrong);
    const char *fmt = "check residual --in x=%s --in f=%s --actual y=%s %s";
    cr_assert_eq(run(fmt, P("xs.npy"), P("fs.npy"), P("y0.npy"), ""), 1, "%s", out_text);
    cr_assert_eq(run(fmt, P("xs.npy"), P("fs.npy"), P("y0.npy"), "--allow ftz"), 0, "%s%s",
                 out_text, err_text);
    cr_assert_not_null(strstr(out_text, "accepted only under --allow ftz"), "%s", out_text);
    cr_assert_not_null(strstr(out_text, "allow ftz"), "%s", out_text);
    cr_assert_eq(run(fmt, P("xs.npy"), P("fs.npy"), P("yw.npy"), "--allow ftz"), 1, "%s",
                 out_text);
    cr_assert_eq(run(fmt, P("xs.npy"), P("fs.npy"), P("y0.npy"), "--allow nan"), 2, "%s",
                 out_text);

    /* DAZ: x = f = 2^-140, exact y = 2^-139; flushed inputs give y = 0 (json counts both) */
    put("fs2.npy", RN_F32, 1, s1, x);
    cr_assert_eq(run(fmt, P("xs.npy"), P("fs2.npy"), P("y0.npy"), "--json"), 1, "%s", out_text);
    cr_assert_eq(run(fmt, P("xs.npy"), P("fs2.npy"), P("y0.npy"), "--allow ftz --json"), 0,
                 "%s%s", out_text, err_text);
    cr_assert_not_null(strstr(out_text, "\"ftz_accepted\": 1"), "%s", out_text);
    cr_assert_not_null(strstr(out_text, "\"ftz_inputs_flushed\": 2"), "%s", out_text);
}
