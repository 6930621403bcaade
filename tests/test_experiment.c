/* Tests of `resnorm experiment` (cli/experiment.c, cli/experiment_ln.c) and of the depth
 * experiment's kernels (ref/tanh_stack.c, the Arb twin ref/tanh_stack_arb.c).
 *
 * The twin is checked on stacks small enough to differentiate by hand (d = 1):
 *   plain, depth 1:     L = tanh(w x + b),            dL/dx = w (1 - tanh^2(w x + b))
 *   residual, depth 2:  h1 = x + tanh(w1 x + b1),     dL/dx = (1 + w2 s2)(1 + w1 s1),
 *                       L = h1 + tanh(w2 h1 + b2)     s_l = 1 - tanh^2(z_l)
 * evaluated in double (a few ulps from the exact value).  The CLI tests assert the seeds' claims
 * (residual gradient > 1, plain < 1e-5 at depth 30, within 10x of the seed's figures, the gap
 * widening with depth), the float errors against the certified value, the trace's exact residual
 * add, the LayerNorm statistics' closed form std = sqrt(v / (v + eps)), and the JSON schema. */
#include <criterion/criterion.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#define CLI_HARNESS_PREFIX "/tmp/resnorm_test_experiment."
#include "cli_harness.h"
#include "tanh_stack.h"

/* A d = 1 stack with the given parameters (floats, as the experiment uses). */
static tanh_stack tiny(int depth, int residual, const float *w, const float *b, float x)
{
    tanh_stack s;
    cr_assert_eq(tanh_stack_init(&s, depth, 1, residual, 1), 0);
    for (int l = 0; l < depth; l++)
        s.w[l] = w[l], s.b[l] = b[l];
    s.x[0] = x;
    return s;
}

/* mid within 4 ulps of the hand formula, the ball certified to 2^-53 relative. */
static void assert_ball(const tanh_stack *s, double want)
{
    double mid, rad;
    long prec;
    cr_assert_eq(tanh_stack_grad_arb(s, &mid, &rad, &prec), 0);
    cr_assert(rad <= 0x1p-53 * fabs(mid), "radius %g of %g", rad, mid);
    cr_assert(fabs(mid - want) <= 4 * 0x1p-52 * fabs(want), "twin %.17g, hand %.17g", mid, want);
    double f64 = tanh_stack_grad_f64(s);
    cr_assert(fabs(f64 - mid) <= 8 * 0x1p-52 * fabs(mid), "f64 %.17g, twin %.17g", f64, mid);
}

Test(tanh_stack, twin_plain_depth1_matches_hand_derivative)
{
    const float w[] = {-0.7f}, b[] = {0.3f};
    tanh_stack s = tiny(1, 0, w, b, 1.25f);
    double t = tanh((double)w[0] * 1.25 + (double)b[0]);
    assert_ball(&s, fabs((double)w[0] * (1 - t * t)));
    tanh_stack_free(&s);
}

Test(tanh_stack, twin_residual_depth2_matches_hand_derivative)
{
    const float w[] = {0.6f, -0.9f}, b[] = {-0.2f, 0.1f};
    float x = -0.75f;
    tanh_stack s = tiny(2, 1, w, b, x);
    double t1 = tanh((double)w[0] * x + b[0]), h1 = x + t1;
    double t2 = tanh((double)w[1] * h1 + b[1]);
    double want = (1 + w[1] * (1 - t2 * t2)) * (1 + w[0] * (1 - t1 * t1));
    assert_ball(&s, fabs(want));
    tanh_stack_free(&s);
}

Test(tanh_stack, parameters_are_deterministic_and_in_range)
{
    tanh_stack a, b;
    cr_assert_eq(tanh_stack_init(&a, 3, 16, 0, 7), 0);
    cr_assert_eq(tanh_stack_init(&b, 3, 16, 1, 7), 0);
    for (int k = 0; k < 3 * 16 * 16; k++) {
        cr_assert(fabsf(a.w[k]) <= 0.25f, "w[%d] = %g beyond 1/sqrt(16)", k, a.w[k]);
        cr_assert_eq(a.w[k], b.w[k]); /* residual and plain share their parameters */
    }
    cr_assert_eq(memcmp(a.x, b.x, 16 * sizeof(float)), 0);
    tanh_stack_free(&a), tanh_stack_free(&b);
}

static json_t *run_json(const char *args)
{
    cr_assert_eq(run("%s", args), 0, "resnorm %s: %s", args, err_text);
    json_error_t e;
    json_t *j = json_loads(out_text, 0, &e);
    cr_assert_not_null(j, "resnorm %s: not JSON: %s", args, e.text);
    return j;
}

static double num(json_t *o, const char *key)
{
    json_t *v = json_object_get(o, key);
    cr_assert(json_is_number(v), "key '%s' missing or not a number", key);
    return json_number_value(v);
}

/* The row of `depth --json` with this depth and residual flag. */
static json_t *depth_row(json_t *doc, int depth, int residual)
{
    size_t i;
    json_t *r;
    json_array_foreach(json_object_get(doc, "rows"), i, r) {
        if (json_integer_value(json_object_get(r, "depth")) == depth &&
            json_is_true(json_object_get(r, "residual")) == residual)
            return r;
    }
    cr_assert_fail("no row depth %d residual %d", depth, residual);
    return NULL;
}

TestSuite(experiment, .init = setup, .fini = teardown);

Test(experiment, depth30_reproduces_the_seed_and_the_schema)
{
    json_t *doc = run_json("experiment depth --depths 30 --json");
    cr_assert_eq(json_array_size(json_object_get(doc, "rows")), 2);
    json_t *plain = depth_row(doc, 30, 0), *res = depth_row(doc, 30, 1);
    for (int k = 0; k < 2; k++) {
        json_t *r = k ? res : plain;
        cr_assert(json_is_integer(json_object_get(r, "depth")));
        cr_assert(json_is_boolean(json_object_get(r, "residual")));
        cr_assert_eq(json_integer_value(json_object_get(r, "seeds")), 20);
        cr_assert(num(r, "min") <= num(r, "median") && num(r, "median") <= num(r, "max"));
        /* float64 agrees with the exact gradient to ~1e-15, float32 to ~1e-6 but not exactly */
        cr_assert_lt(num(r, "f64_relerr_max"), 1e-13);
        cr_assert_lt(num(r, "f32_relerr_max"), 1e-4);
        cr_assert_gt(num(r, "f32_relerr_max"), 1e-9);
        cr_assert_leq(num(r, "certified_rel_radius_max"), 0x1p-53);
        cr_assert_eq(num(r, "uncertified"), 0);
    }
    cr_assert_gt(num(res, "median"), 1.0);
    cr_assert_lt(num(plain, "median"), 1e-5);
    /* within an order of magnitude of the seed's 4.73 and 1.84e-08 */
    cr_assert(num(res, "median") > 0.473 && num(res, "median") < 47.3, "%g", num(res, "median"));
    cr_assert(num(plain, "median") > 1.84e-9 && num(plain, "median") < 1.84e-7, "%g",
              num(plain, "median"));
    json_decref(doc);
}

Test(experiment, depth_gap_widens_with_depth)
{
    json_t *doc = run_json("experiment depth --depths 5,15,30 --seeds 8 --json");
    double prev = 0;
    int depths[] = {5, 15, 30};
    for (int k = 0; k < 3; k++) {
        double gap = num(depth_row(doc, depths[k], 1), "median") /
                     num(depth_row(doc, depths[k], 0), "median");
        cr_assert_gt(gap, 10 * prev, "depth %d: gap %g after %g", depths[k], gap, prev);
        prev = gap;
    }
    json_decref(doc);
}

/* The exact chain: x' = x + F is the exact sum of the float inputs; LN1's output has mean 0 and
   mean square v / (v + eps); the float32 chain rounds x' once. */
Test(experiment, trace_is_exact)
{
    json_t *doc = run_json("experiment trace --json");
    json_t *steps = json_object_get(doc, "steps");
    cr_assert_eq(json_array_size(steps), 5);
    const char *names[] = {"x", "normed1", "F", "x1", "normed2"};
    double v[5][4], f[5][4];
    for (int k = 0; k < 5; k++) {
        json_t *s = json_array_get(steps, (size_t)k);
        cr_assert_str_eq(json_string_value(json_object_get(s, "name")), names[k]);
        for (int i = 0; i < 4; i++) {
            v[k][i] = json_number_value(json_array_get(json_object_get(s, "exact"), (size_t)i));
            f[k][i] = json_number_value(json_array_get(json_object_get(s, "f32"), (size_t)i));
        }
    }
    cr_assert_eq(v[2][0], (double)0.10f); /* the seed's F, as float32 values */
    cr_assert_eq(v[2][1], (double)-0.05f);
    double mean = 0, var = 0, msq = 0, m1 = 0;
    for (int i = 0; i < 4; i++) {
        cr_assert_eq(v[3][i], v[0][i] + v[2][i], "x'[%d] is not x + F exactly", i);
        cr_assert_eq(f[3][i], (double)(float)(v[0][i] + v[2][i]), "f32 x'[%d]", i);
        mean += v[0][i] / 4, m1 += v[1][i] / 4, msq += v[1][i] * v[1][i] / 4;
    }
    for (int i = 0; i < 4; i++)
        var += (v[0][i] - mean) * (v[0][i] - mean) / 4;
    double eps = (double)1e-5f;
    cr_assert_lt(fabs(m1), 1e-15);
    cr_assert_lt(fabs(msq - var / (var + eps)), 1e-14);
    cr_assert_lt(fabs((v[3][0] + v[3][1] + v[3][2] + v[3][3]) / 4 - 1.0125), 1e-6); /* the seed's */
    json_decref(doc);
}

/* The row of layernorm-stats --json with this shift and scale. */
static json_t *stats_row(json_t *doc, double shift, double scale)
{
    size_t i;
    json_t *r;
    json_array_foreach(json_object_get(doc, "rows"), i, r) {
        if (num(r, "shift") == shift && num(r, "scale") == scale)
            return r;
    }
    cr_assert_fail("no row shift %g scale %g", shift, scale);
    return NULL;
}

static double stat(json_t *row, const char *variant, const char *key)
{
    return num(json_object_get(row, variant), key);
}

Test(experiment, layernorm_stats_one_pass_breaks_at_large_shift)
{
    json_t *doc = run_json("experiment layernorm-stats --json");
    double eps = (double)1e-5f;
    size_t i;
    json_t *r;
    json_array_foreach(json_object_get(doc, "rows"), i, r) { /* exact: mean 0, std sqrt(v/(v+eps)) */
        double v = num(r, "input_std") * num(r, "input_std");
        cr_assert_lt(fabs(stat(r, "certified", "mean")), 1e-15);
        cr_assert_lt(fabs(stat(r, "certified", "std") - sqrt(v / (v + eps))), 1e-12);
    }
    json_t *r0 = stats_row(doc, 0, 1), *r4 = stats_row(doc, 1e4, 1);
    cr_assert_lt(fabs(stat(r0, "f32_one_pass", "std") - stat(r0, "certified", "std")), 1e-5);
    cr_assert_lt(fabs(stat(r4, "f32_two_pass", "std") - stat(r4, "certified", "std")), 1e-4);
    cr_assert_gt(fabs(stat(r4, "f32_one_pass", "std") - stat(r4, "certified", "std")), 0.1);
    json_t *tiny = json_object_get(stats_row(doc, 1e4, 1e-3), "f32_one_pass");
    cr_assert(json_is_null(json_object_get(tiny, "std")) ||
              fabs(json_number_value(json_object_get(tiny, "std")) - 0.338) > 0.1);
    json_decref(doc);
}

Test(experiment, usage_errors_and_help)
{
    (void)put_npy; /* the harness's .npy writer: these tests need no input files */
    cr_assert_eq(run("experiment prepost --depths 6,x"), 2);
    cr_assert(strstr(err_text, "--depths"), "%s", err_text);
    cr_assert_eq(run("experiment prepost --depths 0"), 2);
    cr_assert_eq(run("experiment prepost --heads 5"), 2); /* 5 does not divide d = 64 */
    cr_assert(strstr(err_text, "divide"), "%s", err_text);
    cr_assert_eq(run("experiment prepost --seq"), 2);
    cr_assert_eq(run("experiment prepost --bogus"), 2);
    cr_assert_eq(run("experiment prepost --depths 256 --ff 8192"), 2); /* over the size limit */
    cr_assert_eq(out_text[0], 0); /* nothing on stdout */
    cr_assert_eq(run("experiment nosuch"), 2);
    cr_assert_eq(run("experiment depth --depths 5,x"), 2);
    cr_assert(strstr(err_text, "--depths"), "%s", err_text);
    cr_assert_eq(run("experiment depth --seeds"), 2);
    cr_assert_eq(run("experiment trace --bogus"), 2);
    cr_assert_eq(run("experiment"), 2);
    cr_assert_eq(out_text[0] != 0, 1); /* the usage was printed */
    cr_assert_eq(run("help experiment"), 0);
    cr_assert(strstr(out_text, "layernorm-stats"));
    cr_assert_eq(run("experiment depth --help"), 0);
    cr_assert(strstr(out_text, "--depths"));
    cr_assert_eq(run("experiment prepost --help"), 0);
    cr_assert(strstr(out_text, "--seq") && strstr(out_text, "--ff"));
}

/* ---- prepost ---- */

/* The row of `prepost --json` with this norm ("pre"/"post"), final norm flag and depth. */
static json_t *pp_row(json_t *doc, const char *norm, int final_norm, int depth)
{
    size_t i;
    json_t *r;
    json_array_foreach(json_object_get(doc, "rows"), i, r) {
        if (!strcmp(json_string_value(json_object_get(r, "norm")), norm) &&
            json_is_true(json_object_get(r, "final_norm")) == final_norm &&
            json_integer_value(json_object_get(r, "depth")) == depth)
            return r;
    }
    cr_assert_fail("no row %s final_norm %d depth %d", norm, final_norm, depth);
    return NULL;
}

static double pp_median(json_t *o) { return num(o, "median"); }

/* layer_grad_norms[l].median (l 0-based) */
static double pp_layer(json_t *row, const char *key, int l)
{
    json_t *a = json_object_get(row, key);
    cr_assert(json_is_array(a), "%s missing", key);
    return pp_median(json_array_get(a, (size_t)l));
}

/* d = 64, 4 heads, ff = 256, seq 4, one seed, depths 6 and 12 (~10 s).  What the stacks show at
   PyTorch's default init (tests/pytorch_prepost.py measures the same numbers in float64, seeds
   1..8: pre-LN's last/first ratio 0.60 .. 0.80 at depth 12, post-LN's 0.86 .. 1.19):
   - pre-LN's per-layer gradients are level within a factor 2 and decrease toward the last layer
     (LayerNorm divides by the growing residual stream), the more so the deeper;
   - post-LN's last layers get larger gradients than pre-LN's (with its final LayerNorm: both
     outputs normalized), increasingly with depth (Xiong et al. 2020: O(1) vs O(1/sqrt(L)));
   - pre-LN's output RMS grows with depth without the final LayerNorm; with it and after post-LN's
     last LayerNorm (gamma 1, beta 0) it is sqrt(v/(v + eps)) <= 1, 1 - 1e-5 at unit variance. */
/* .timeout: a guard against a hang, not a speed test: with its sibling prepost test ~58 s alone under ASan,
   over 120 s under ASan beside the proof lane of `make check` (a fresh-clone run, 2 December). */
/* ZOO_QUICK (the ASan pass, `make asan`): depth 6 alone, the trends with depth not compared.  The
   same code paths run (one stack per norm and final-norm setting); depth 12 cost ~2/3 of this test's
   ~100 s of CPU under the sanitizers, and make check was at CI's time limit. */
Test(experiment, prepost_pre_level_post_larger_at_the_top, .timeout = 900)
{
    int quick = getenv("ZOO_QUICK") != NULL;
    json_t *doc = run_json(quick ? "experiment prepost --depths 6 --seq 4 --seeds 1 --json"
                                 : "experiment prepost --depths 6,12 --seq 4 --seeds 1 --json");
    cr_assert_eq(json_array_size(json_object_get(doc, "rows")), quick ? 3 : 6);
    const char *keys[] = {"layer_grad_norms", "layer_grad_norms_attn", "layer_grad_norms_ffn",
                          "layer_grad_norms_ln"};
    size_t i;
    json_t *r;
    json_array_foreach(json_object_get(doc, "rows"), i, r) {
        int depth = (int)json_integer_value(json_object_get(r, "depth"));
        cr_assert_eq(json_integer_value(json_object_get(r, "seeds")), 1);
        json_t *gx = json_object_get(r, "grad_x");
        cr_assert(num(gx, "min") <= pp_median(gx) && pp_median(gx) <= num(gx, "max"));
        cr_assert_gt(pp_median(gx), 1.0);
        cr_assert(json_is_number(json_object_get(r, "output_rms")));
        for (int k = 0; k < 4; k++)
            cr_assert_eq(json_array_size(json_object_get(r, keys[k])), (size_t)depth, "%s", keys[k]);
        for (int l = 0; l < depth; l++) { /* the groups' norms make up the layer's */
            double a = pp_layer(r, keys[1], l), f = pp_layer(r, keys[2], l), n = pp_layer(r, keys[3], l);
            double all = pp_layer(r, keys[0], l);
            cr_assert(a > 0 && f > 0 && n > 0);
            cr_assert_lt(fabs(sqrt(a * a + f * f + n * n) - all), 1e-12 * all);
        }
    }
    double ratio_pre[2], top_gap[2];
    int depths[] = {6, 12};
    for (int k = 0; k < (quick ? 1 : 2); k++) {
        int L = depths[k];
        json_t *pre = pp_row(doc, "pre", 0, L), *pref = pp_row(doc, "pre", 1, L);
        json_t *post = pp_row(doc, "post", 0, L);
        double lo = INFINITY, hi = 0;
        for (int l = 0; l < L; l++)
            lo = fmin(lo, pp_layer(pre, keys[0], l)), hi = fmax(hi, pp_layer(pre, keys[0], l));
        cr_assert_lt(hi / lo, 2.0, "pre-LN depth %d: per-layer norms %g .. %g", L, lo, hi);
        ratio_pre[k] = pp_layer(pre, keys[0], L - 1) / pp_layer(pre, keys[0], 0);
        cr_assert_lt(ratio_pre[k], 1.0);
        cr_assert_lt(fabs(ratio_pre[k] - pp_median(json_object_get(pre, "last_over_first_layer"))),
                     1e-12);
        top_gap[k] = pp_layer(post, keys[0], L - 1) / pp_layer(pref, keys[0], L - 1);
        cr_assert_gt(top_gap[k], 1.0, "depth %d: post-LN's last layer %g, pre-LN's %g", L,
                     pp_layer(post, keys[0], L - 1), pp_layer(pref, keys[0], L - 1));
        double eps = (double)1e-5f;
        cr_assert(num(pref, "output_rms") <= 1.0 && num(pref, "output_rms") > 1.0 - 4 * eps);
        cr_assert(num(post, "output_rms") <= 1.0 && num(post, "output_rms") > 1.0 - 4 * eps);
        cr_assert_gt(num(pre, "output_rms"), 1.05);
    }
    if (!quick) { /* the trends with depth */
        cr_assert_lt(ratio_pre[1], ratio_pre[0]);
        cr_assert_gt(top_gap[1], top_gap[0]);
        cr_assert_gt(num(pp_row(doc, "pre", 0, 12), "output_rms"),
                     num(pp_row(doc, "pre", 0, 6), "output_rms"));
    }
    json_decref(doc);
}

/* Same options, same bytes, on 1 thread or 2 (the seeds run in parallel; the draws are seeded,
   the values certified); a row does not depend on which other depths are asked for (a layer's
   draws depend on the seed and its index only). */
Test(experiment, prepost_is_deterministic)
{
    const char *args = "experiment prepost --depths 1,3 --d 16 --heads 2 --ff 32 --seq 3 --seeds 3 --json";
    setenv("RESNORM_THREADS", "1", 1);
    cr_assert_eq(run("%s", args), 0, "%s", err_text);
    char *first = strdup(out_text);
    setenv("RESNORM_THREADS", "2", 1);
    cr_assert_eq(run("%s", args), 0, "%s", err_text);
    unsetenv("RESNORM_THREADS");
    cr_assert_str_eq(out_text, first);
    free(first);
    json_t *doc = run_json("experiment prepost --depths 1 --d 16 --heads 2 --ff 32 --seq 3 --seeds 3 --json");
    json_t *doc3 = run_json(args);
    cr_assert_eq(pp_layer(pp_row(doc, "post", 0, 1), "layer_grad_norms", 0),
                 pp_layer(pp_row(doc3, "post", 0, 1), "layer_grad_norms", 0));
    json_decref(doc), json_decref(doc3);
}
