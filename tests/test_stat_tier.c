/* The statistical tier through the command line (specs/statistical-tier.md §6, specs/cli.md):
 * a correctly rounded output is not flagged; an output scaled by sqrt((n-1)/n) on every row (an
 * unbiased variance) passes the rigorous tier at n = 2048 and is flagged, exit 4; --stat warn
 * reports without the exit code, --stat off does not run; the JSON key "statistical"; and
 * `golden run-check` on the golden GPT-2 rows.  The buggy outputs are made from the twin's f64
 * values (`resnorm eval`), never from the tier under test. */
#define CLI_HARNESS_PREFIX "/tmp/resnorm_test_stat."
#include "cli_harness.h"

#include <jansson.h>
#include <math.h>

TestSuite(stat_tier, .init = setup, .fini = teardown, .timeout = 300);

enum { ROWS = 16, N = 2048 };

static uint64_t rng = 88172645463325252ull;
static double randn(void)
{
    double u[2];
    for (int k = 0; k < 2; k++) {
        rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
        u[k] = ((double)(rng >> 11) + 0.5) * 0x1p-53;
    }
    return sqrt(-2 * log(u[0])) * cos(6.283185307179586 * u[1]);
}

/* x (ROWS x N, N(0,1)), gamma, beta (f32) into tmpdir; the exact outputs in f64 and f32. */
static void make_case(void)
{
    static double x[ROWS * N], g[N], b[N];
    for (size_t i = 0; i < ROWS * N; i++)
        x[i] = (float)randn();
    for (size_t i = 0; i < N; i++)
        g[i] = (float)(1 + 0.1 * randn()), b[i] = (float)(0.1 * randn());
    size_t shape[2] = {ROWS, N};
    put_npy("x.npy", RN_F32, 2, shape, x);
    put_npy("g.npy", RN_F32, 1, shape + 1, g);
    put_npy("b.npy", RN_F32, 1, shape + 1, b);
    cr_assert_eq(run("eval layernorm --in x=%s --in gamma=%s --in beta=%s --dtype f64 --out %s",
                     P("x.npy"), P("g.npy"), P("b.npy"), P("e64")), 0, "%s", err_text);
    cr_assert_eq(run("eval layernorm --in x=%s --in gamma=%s --in beta=%s --dtype f32 --out %s",
                     P("x.npy"), P("g.npy"), P("b.npy"), P("e32")), 0, "%s", err_text);
}

/* y of an unbiased variance: beta + (y - beta)*sqrt((n-1)/n), rounded once to f32. */
static void write_unbiased_y(const char *name)
{
    rn_array y, b;
    char err[512];
    cr_assert_eq(npy_read(P("e64/y.npy"), &y, err, sizeof err), 0, "%s", err);
    cr_assert_eq(npy_read(P("b.npy"), &b, err, sizeof err), 0, "%s", err);
    double s = sqrt((double)(N - 1) / N);
    for (size_t i = 0; i < y.count; i++)
        y.data[i] = (float)(b.data[i % N] + (y.data[i] - b.data[i % N]) * s);
    put_npy(name, RN_F32, y.ndim, y.shape, y.data);
    rn_array_free(&y), rn_array_free(&b);
}

#define CHECK_ARGS "check layernorm --in x=%s --in gamma=%s --in beta=%s --actual y=%s"

Test(stat_tier, correct_outputs_not_flagged)
{
    make_case();
    cr_assert_eq(run(CHECK_ARGS " --actual rstd=%s", P("x.npy"), P("g.npy"), P("b.npy"),
                     P("e32/y.npy"), P("e32/rstd.npy")), 0, "%s", out_text);
    cr_assert_not_null(strstr(out_text, "statistical: no systematic error detected"), "%s",
                       out_text);
    cr_assert_eq(run(CHECK_ARGS " --json", P("x.npy"), P("g.npy"), P("b.npy"), P("e32/y.npy")), 0);
    json_error_t e;
    json_t *j = json_loads(out_text, 0, &e);
    cr_assert_not_null(j, "%s", e.text);
    json_t *st = json_object_get(j, "statistical");
    cr_assert(json_is_false(json_object_get(st, "flag")));
    cr_assert_str_eq(json_string_value(json_object_get(st, "mode")), "fail");
    json_t *t = json_array_get(json_object_get(json_object_get(st, "outputs"), "y"), 0);
    cr_assert_eq(json_integer_value(json_object_get(t, "groups")), ROWS);
    json_decref(j);
}

Test(stat_tier, unbiased_variance_flagged_exit_4)
{
    make_case();
    write_unbiased_y("yb.npy");
    /* the rigorous tier passes it at this width (err/bound < 1) ... */
    int rc = run(CHECK_ARGS, P("x.npy"), P("g.npy"), P("b.npy"), P("yb.npy"));
    cr_assert_not_null(strstr(out_text, "PASS: every element within tolerance"), "%s", out_text);
    /* ... the statistical tier flags it: exit 4 */
    cr_assert_eq(rc, 4, "%s", out_text);
    cr_assert_not_null(strstr(out_text, "STATISTICAL FLAG"), "%s", out_text);
    cr_assert_eq(run(CHECK_ARGS " --stat warn", P("x.npy"), P("g.npy"), P("b.npy"), P("yb.npy")), 0);
    cr_assert_not_null(strstr(out_text, "STATISTICAL FLAG"), "%s", out_text);
    cr_assert_eq(run(CHECK_ARGS " --stat=off", P("x.npy"), P("g.npy"), P("b.npy"), P("yb.npy")), 0);
    cr_assert_not_null(strstr(out_text, "statistical tier: off"), "%s", out_text);
    cr_assert_eq(run(CHECK_ARGS " --json", P("x.npy"), P("g.npy"), P("b.npy"), P("yb.npy")), 4);
    json_error_t e;
    json_t *j = json_loads(out_text, 0, &e);
    cr_assert_not_null(j, "%s", e.text);
    cr_assert(json_is_true(json_object_get(j, "pass"))); /* the rigorous verdict keeps its key */
    json_t *st = json_object_get(j, "statistical");
    cr_assert(json_is_true(json_object_get(st, "flag")));
    json_t *t = json_array_get(json_object_get(json_object_get(st, "outputs"), "y"), 0);
    /* the pooled slope is the bug's -1/(2n) relative, in units of u = 2^-24 */
    double slope_u = json_real_value(json_object_get(t, "slope_u"));
    cr_assert(fabs(slope_u + 0x1p24 / (2.0 * N)) < 0.05 * 0x1p24 / (2.0 * N), "slope %g u", slope_u);
    json_decref(j);
    cr_assert_eq(run(CHECK_ARGS " --stat sometimes", P("x.npy"), P("g.npy"), P("b.npy"),
                     P("yb.npy")), 2);
    cr_assert_not_null(strstr(err_text, "--stat"), "%s", err_text);
}

/* run-check over the golden GPT-2 rows (4 x 768): a systematic scale of 1 - 2^-15 (512 u, below
   the rigorous bound there, which catches the unbiased variance's 1/(2n) since it was tightened)
   is flagged by the statistical tier alone. */
Test(stat_tier, run_check_flags_and_reports)
{
    const char *id = "layernorm/gpt2_row_f32";
    rn_array y, b;
    char err[512], dir[600];
    cr_assert_eq(npy_read("golden/layernorm/gpt2_row_f32/f64/y.npy", &y, err, sizeof err), 0,
                 "%s (run from the repository root)", err);
    cr_assert_eq(npy_read("golden/layernorm/gpt2_row_f32/beta.npy", &b, err, sizeof err), 0, "%s",
                 err);
    size_t n = b.count;
    double s = 1.0 - 0x1p-15;
    for (size_t i = 0; i < y.count; i++)
        y.data[i] = (float)(b.data[i % n] + (y.data[i] - b.data[i % n]) * s);
    snprintf(dir, sizeof dir, "mkdir -p %s/%s", tmpdir, id);
    cr_assert_eq(system(dir), 0);
    snprintf(dir, sizeof dir, "%s/y.npy", id);
    put_npy(dir, RN_F32, y.ndim, y.shape, y.data);
    rn_array_free(&y), rn_array_free(&b);
    cr_assert_eq(run("golden run-check %s --dtype f32 --op layernorm --root .", tmpdir), 4, "%s",
                 out_text);
    cr_assert_not_null(strstr(out_text, "1 passed, 0 failed"), "%s", out_text);
    cr_assert_not_null(strstr(out_text, "statistical tier: 1 cases flagged"), "%s", out_text);
    cr_assert_eq(run("golden run-check %s --dtype f32 --op layernorm --root . --stat warn", tmpdir),
                 0, "%s", out_text);
    cr_assert_eq(run("golden run-check %s --dtype f32 --op layernorm --root . --json", tmpdir), 4);
    json_error_t e;
    json_t *j = json_loads(out_text, 0, &e);
    cr_assert_not_null(j, "%s", e.text);
    cr_assert(json_is_true(json_object_get(j, "pass")));
    cr_assert_eq(json_integer_value(json_object_get(j, "statistical_flagged")), 1);
    json_t *c = json_array_get(json_object_get(j, "cases"), 0);
    cr_assert_str_eq(json_string_value(json_object_get(c, "statistical")), "FLAG");
    json_decref(j);
}
