/* The feed-forward sublayer (ref/ffn.c, ref/ffn_mpfr.c, ref/ffn_bound.c, cli/op_ffn.c):
 *  - the float and double kernels against every golden case of ffn / ffn_backward, within the
 *    a-priori bound of specs/error-analysis-ffn.md (the worst error/bound ratio is printed);
 *  - kernel mutants (gelu <-> gelu_tanh, bias dropped, dropout not scaled, mask not applied in the
 *    backward, parameter gradients from one row) exceed the bound on the golden cases that target them;
 *  - the twin against an independent MPFR evaluation at 1024 bits (mpfr_erf, mpfr_tanh), bit for bit,
 *    every output dtype and activation;
 *  - the twin's backward (Arb level) against high-precision central finite differences of its
 *    forward, for x and every parameter, every activation, with a dropout mask;
 *  - the CLI: eval writes y, bad shapes and a bad mask exit 2 naming the file.
 * Expected values never come from the code under test. */
#include <criterion/criterion.h>
#include <jansson.h>
#include <math.h>
#include <mpfr.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CLI_HARNESS_PREFIX "/tmp/resnorm_test_ffn."
#include "cli_harness.h"
#include "block_bound.h"
#include "ffn.h"
#include "block_bound.h"
#include "ffn_bound.h"
#include "ffn_mpfr.h"
#include "golden_harness.h"

#define MANIFEST "golden/manifest.json"

/* ================================================================ kernels vs golden */

static const char *const GRAD_NAMES[5] = {"dx", "d.linear1.weight", "d.linear1.bias",
                                          "d.linear2.weight", "d.linear2.bias"};

/* A case's inputs (parameters absent: NULL). */
typedef struct {
    rn_array a[7]; /* x, w1, b1, w2, b2, mask, dy */
    int have[7];
    ffn_args F;
    size_t rows, d, ff;
    rn_dtype in;
} fcase_in;

static const char *const IN_NAMES[7] = {"x", "linear1.weight", "linear1.bias", "linear2.weight",
                                        "linear2.bias", "dropout.mask", "dy"};

static void load_case(json_t *c, fcase_in *C)
{
    json_t *in = json_object_get(c, "inputs");
    memset(C, 0, sizeof *C);
    for (int k = 0; k < 7; k++)
        if ((C->have[k] = get_path(in, IN_NAMES[k]) != NULL))
            C->a[k] = load(get_path(in, IN_NAMES[k]));
    C->d = C->a[0].shape[C->a[0].ndim - 1];
    C->rows = C->a[0].count / C->d;
    C->ff = C->a[1].shape[0];
    json_t *attrs = json_object_get(c, "attrs");
    const char *act = json_string_value(json_object_get(attrs, "activation"));
    const char *in_dt = json_string_value(json_object_get(c, "input_dtype"));
    C->in = !strcmp(in_dt, "f64") ? RN_F64 : !strcmp(in_dt, "f32") ? RN_F32
          : !strcmp(in_dt, "f16") ? RN_F16 : RN_BF16;
    double p;
    cr_assert_eq(rn_parse_eps(json_string_value(json_object_get(attrs, "p")), C->in, &p), 0);
    C->F = (ffn_args){C->a[1].data, C->have[2] ? C->a[2].data : NULL, C->a[3].data,
                      C->have[4] ? C->a[4].data : NULL, C->have[5] ? C->a[5].data : NULL, p,
                      !strcmp(act, "relu") ? RN_ACT_RELU : !strcmp(act, "gelu") ? RN_ACT_GELU
                                                                              : RN_ACT_GELU_TANH,
                      C->rows, C->d, C->ff};
}

static void free_case(fcase_in *C)
{
    for (int k = 0; k < 7; k++)
        if (C->have[k])
            rn_array_free(&C->a[k]);
}

/* Kernel variants: the bugs of the issue, written into the kernel's call. */
typedef enum { K_OK, K_ACT_SWAP, K_BIAS_DROPPED, K_NOT_SCALED, K_MASK_NOT_IN_BWD, K_ONE_ROW } kbug;

static float *f32_of(const double *v, size_t n)
{
    if (!v)
        return NULL;
    float *f = malloc((n ? n : 1) * sizeof *f);
    for (size_t i = 0; i < n; i++)
        f[i] = (float)v[i]; /* exact: the inputs are f32 (or f16/bf16) values */
    return f;
}

/* Run the kernel in f64 (p = 0) or f32 (p = 1) with bug b; out[0] = y, out[1..5] the gradients. */
static void run_kernel(const fcase_in *C, int f32, kbug b, double **out)
{
    size_t R = C->rows, D = C->d, FF = C->ff, n[6] = {R * D, R * D, FF * D, FF, D * FF, D};
    ffn_act act = (ffn_act)C->F.act;
    if (b == K_ACT_SWAP)
        act = act == FFN_GELU ? FFN_GELU_TANH : act == FFN_GELU_TANH ? FFN_GELU : FFN_RELU;
    const double *b1 = b == K_BIAS_DROPPED ? NULL : C->F.b1, *b2 = b == K_BIAS_DROPPED ? NULL : C->F.b2;
    const double *mask = C->F.mask;
    double p = b == K_NOT_SCALED ? 0.0 : C->F.p;
    int Rb = b == K_ONE_ROW ? 1 : (int)R; /* gradients of the first row only */
    for (int k = 0; k < 6; k++)
        out[k] = calloc(n[k], sizeof(double));
    if (!f32) {
        double *z = calloc(R * FF, sizeof *z), *h = calloc(R * FF, sizeof *h), *dh = calloc(R * FF, sizeof *dh);
        ffn_forward_f64(out[0], z, h, C->a[0].data, C->F.w1, b1, C->F.w2, b2, mask, p, act, (int)R, (int)D, (int)FF);
        if (C->have[6]) {
            double *dx1 = calloc(R * D, sizeof *dx1);
            ffn_backward_f64(dx1, out[2], out[3], out[4], out[5], dh, C->a[6].data, C->a[0].data, z, h,
                             C->F.w1, C->F.w2, b == K_MASK_NOT_IN_BWD ? NULL : mask, p, act, Rb, (int)D, (int)FF);
            memcpy(out[1], dx1, R * D * sizeof *dx1);
            free(dx1);
        }
        free(z), free(h), free(dh);
        return;
    }
    float *x = f32_of(C->a[0].data, R * D), *w1 = f32_of(C->F.w1, FF * D), *fb1 = f32_of(b1, FF),
          *w2 = f32_of(C->F.w2, D * FF), *fb2 = f32_of(b2, D), *m = f32_of(mask, R * FF),
          *dy = C->have[6] ? f32_of(C->a[6].data, R * D) : NULL;
    float *z = calloc(R * FF, sizeof *z), *h = calloc(R * FF, sizeof *h), *dh = calloc(R * FF, sizeof *dh),
          *y = calloc(R * D, sizeof *y);
    float *g[5];
    for (int k = 0; k < 5; k++)
        g[k] = calloc(n[k + 1], sizeof(float));
    ffn_forward_f32(y, z, h, x, w1, fb1, w2, fb2, m, (float)p, act, (int)R, (int)D, (int)FF);
    if (dy)
        ffn_backward_f32(g[0], g[1], g[2], g[3], g[4], dh, dy, x, z, h, w1, w2,
                         b == K_MASK_NOT_IN_BWD ? NULL : m, (float)p, act, Rb, (int)D, (int)FF);
    for (size_t i = 0; i < R * D; i++)
        out[0][i] = y[i];
    for (int k = 0; k < 5; k++) {
        for (size_t i = 0; i < n[k + 1]; i++)
            out[k + 1][i] = g[k][i];
        free(g[k]);
    }
    free(x), free(w1), free(fb1), free(w2), free(fb2), free(m), free(dy), free(z), free(h), free(dh), free(y);
}

/* max |got - want|/bound over one output; +Inf if a non-finite class differs or a bound is 0 and
   the values differ. */
static double worst_ratio(const double *got, const double *want, const double *bound, size_t n)
{
    double worst = 0.0;
    for (size_t i = 0; i < n; i++) {
        if (!isfinite(want[i])) {
            if (!(isnan(want[i]) ? isnan(got[i]) : got[i] == want[i]))
                return INFINITY;
            continue;
        }
        if (isinf(bound[i]))
            continue;
        double e = fabs(got[i] - want[i]);
        double r = bound[i] > 0 ? e / bound[i] : (e > 0 ? INFINITY : 0.0);
        if (!(r <= worst))
            worst = r;
    }
    return worst;
}

/* The worst ratio of kernel variant b on case c (forward: y; backward: every gradient). */
static double case_ratio(json_t *c, int f32, kbug b)
{
    int bwd = !strcmp(json_string_value(json_object_get(c, "op")), "ffn_backward");
    fcase_in C;
    load_case(c, &C);
    double *out[6];
    run_kernel(&C, f32, b, out);
    rn_dtype cd = f32 ? RN_F32 : RN_F64;
    json_t *ex = json_object_get(json_object_get(c, "expected"), "f64");
    double worst = 0.0;
    size_t R = C.rows, D = C.d, FF = C.ff, n[5] = {R * D, FF * D, FF, D * FF, D};
    if (!bwd) {
        rn_array want = load(get_path(ex, "y"));
        double *by = calloc(R * D, sizeof *by);
        cr_assert_eq(ffn_forward_bound(by, C.a[0].data, &C.F, cd, cd), 0);
        worst = worst_ratio(out[0], want.data, by, R * D);
        free(by);
        rn_array_free(&want);
    } else {
        double *bo[5];
        for (int k = 0; k < 5; k++)
            bo[k] = calloc(n[k], sizeof(double));
        cr_assert_eq(ffn_backward_bound(bo[0], bo[1], bo[2], bo[3], bo[4], C.a[0].data, C.a[6].data,
                                        &C.F, cd, cd), 0);
        for (int k = 0; k < 5; k++) {
            rn_array want = load(get_path(ex, GRAD_NAMES[k]));
            double r = worst_ratio(out[k + 1], want.data, bo[k], n[k]);
            if (!(r <= worst))
                worst = r;
            rn_array_free(&want);
            free(bo[k]);
        }
    }
    for (int k = 0; k < 6; k++)
        free(out[k]);
    free_case(&C);
    return worst;
}

static int is_ffn(json_t *c)
{
    const char *op = json_string_value(json_object_get(c, "op"));
    return !strcmp(op, "ffn") || !strcmp(op, "ffn_backward");
}

Test(ffn, kernels_within_bound_on_golden, .timeout = 120)
{
    json_error_t e;
    json_t *m = json_load_file(MANIFEST, 0, &e);
    cr_assert_not_null(m, "%s", e.text);
    size_t i, ncases = 0;
    json_t *c;
    double w64 = 0, w32 = 0;
    json_array_foreach(json_object_get(m, "cases"), i, c)
    {
        if (!is_ffn(c))
            continue;
        const char *id = json_string_value(json_object_get(c, "id"));
        int f32ok = strcmp(json_string_value(json_object_get(c, "input_dtype")), "f64") != 0;
        double r = case_ratio(c, 0, K_OK);
        if (getenv("FFN_VERBOSE"))
            printf("%s f64 %.3g f32 %.3g\n", id, r, f32ok ? case_ratio(c, 1, K_OK) : 0.0);
        cr_assert(r <= 1.0, "%s: f64 kernel err/bound %.3g", id, r);
        w64 = fmax(w64, r);
        if (f32ok) {
            r = case_ratio(c, 1, K_OK);
            cr_assert(r <= 1.0, "%s: f32 kernel err/bound %.3g", id, r);
            w32 = fmax(w32, r);
        }
        ncases++;
    }
    cr_assert_geq(ncases, 20, "ffn cases in the manifest: %zu", ncases);
    printf("ffn: %zu golden entries; worst err/bound f64 kernel %.3g, f32 kernel %.3g\n", ncases, w64, w32);
    json_decref(m);
}

/* Each bug must exceed the bound (ratio > 1) in f32 on some case whose flags target it. */
static void expect_killed(kbug b, const char *op, const char *flag, const char *what)
{
    json_error_t e;
    json_t *m = json_load_file(MANIFEST, 0, &e);
    cr_assert_not_null(m, "%s", e.text);
    size_t i, tried = 0, killed = 0;
    json_t *c;
    json_array_foreach(json_object_get(m, "cases"), i, c)
    {
        if (!is_ffn(c) || strcmp(json_string_value(json_object_get(c, "op")), op))
            continue;
        if (!strcmp(json_string_value(json_object_get(c, "input_dtype")), "f64"))
            continue;
        if (!has_flag(c, flag))
            continue;
        tried++;
        killed += case_ratio(c, 1, b) > 1.0;
    }
    printf("ffn mutant %-34s killed on %zu/%zu %s cases (flag %s)\n", what, killed, tried, op, flag);
    cr_assert_gt(killed, 0, "%s not caught on any %s case with flag %s (%zu tried)", what, op, flag, tried);
    json_decref(m);
}

Test(ffn, mutant_gelu_tanh_swapped_fails_on_the_sensitive_cases, .timeout = 60)
{
    expect_killed(K_ACT_SWAP, "ffn", "gelu_sensitive", "gelu <-> gelu_tanh");
}

Test(ffn, mutant_bias_dropped_fails_at_gpt2_width, .timeout = 60)
{
    expect_killed(K_BIAS_DROPPED, "ffn", "gpt2", "bias dropped");
}

Test(ffn, mutant_dropout_not_scaled_fails, .timeout = 60)
{
    expect_killed(K_NOT_SCALED, "ffn", "dropout_mask", "dropout not scaled");
}

Test(ffn, mutant_mask_not_applied_in_backward_fails_at_gpt2_width, .timeout = 60)
{
    expect_killed(K_MASK_NOT_IN_BWD, "ffn_backward", "gpt2", "mask not applied in backward");
}

Test(ffn, mutant_gradients_from_one_row_fail_at_gpt2_width, .timeout = 60)
{
    expect_killed(K_ONE_ROW, "ffn_backward", "gpt2", "dW/db not summed over the batch");
}

/* The statistical tier's "act" test (specs/error-analysis-ffn.md §10) on every f32 ffn forward case
   with a GELU: the project's f32 kernel must give z <= λ on every one (no false alarm) and the same
   kernel with the other GELU z > λ on some (the golden gpt2 cases are slices of GPT-2 width:
   tests/pytorch_sublayers.py measures the full width). */
Test(ffn, act_test_no_false_alarm_and_gelu_swap_flagged, .timeout = 120)
{
    json_error_t e;
    json_t *m = json_load_file(MANIFEST, 0, &e);
    cr_assert_not_null(m, "%s", e.text);
    size_t i, tried = 0, flagged = 0;
    double zmax_ok = 0.0;
    json_t *c;
    json_array_foreach(json_object_get(m, "cases"), i, c)
    {
        if (!is_ffn(c) || strcmp(json_string_value(json_object_get(c, "op")), "ffn") ||
            !strcmp(json_string_value(json_object_get(c, "input_dtype")), "f64"))
            continue;
        fcase_in C;
        load_case(c, &C);
        if (C.F.act == RN_ACT_RELU) {
            free_case(&C);
            continue;
        }
        rn_array want = load(get_path(json_object_get(json_object_get(c, "expected"), "f64"), "y"));
        double *ok[6], *bug[6];
        run_kernel(&C, 1, K_OK, ok);
        run_kernel(&C, 1, K_ACT_SWAP, bug);
        ffn_act_result a, b;
        cr_assert_eq(ffn_act_test(&a, ok[0], want.data, C.a[0].data, &C.F, RN_F32, RN_F32), 0);
        cr_assert_eq(ffn_act_test(&b, bug[0], want.data, C.a[0].data, &C.F, RN_F32, RN_F32), 0);
        const char *id = json_string_value(json_object_get(c, "id"));
        cr_assert_leq(a.z, BLOCK_STAT_LAMBDA, "%s: the f32 kernel flagged by the act test (z %g)", id, a.z);
        printf("ffn act test %-36s f32 kernel z %.3g (slope %+.2g), gelu swapped z %.3g (slope %+.3g)\n",
               id, a.z, a.slope, b.z, b.slope);
        zmax_ok = a.z > zmax_ok ? a.z : zmax_ok;
        tried++;
        flagged += b.z > BLOCK_STAT_LAMBDA;
        for (int k = 0; k < 6; k++)
            free(ok[k]), free(bug[k]);
        rn_array_free(&want);
        free_case(&C);
    }
    cr_assert_gt(tried, 3, "GELU ffn cases: %zu", tried);
    cr_assert_gt(flagged, 0, "the GELU swap flagged on none of %zu cases", tried);
    json_decref(m);
}

/* ================================================================ twin vs independent MPFR */

static double lcg(unsigned long long *s)
{
    *s = *s * 6364136223846793005ull + 1442695040888963407ull;
    return (double)(long long)(*s >> 11) * 0x1p-53 * 2.0 - 1.0; /* in [-1, 1) */
}

static void rand_f32(double *v, size_t n, unsigned long long *s, double scale)
{
    for (size_t i = 0; i < n; i++)
        v[i] = (double)(float)(scale * lcg(s));
}

enum { TR = 3, TD = 5, TF = 7 };

/* y[r, i] by the definition, in MPFR at 1024 bits (no Arb): z, act with mpfr_erf / mpfr_tanh,
   the mask and 1/(1 - p), the second layer. */
static void mpfr_forward(mpfr_t *y, const double *x, const ffn_args *F)
{
    mpfr_t z, t, a, c, one;
    mpfr_inits2(1024, z, t, a, c, one, (mpfr_ptr)0);
    mpfr_set_ui(one, 1, MPFR_RNDN);
    mpfr_t *h = malloc(F->rows * F->ff * sizeof *h);
    for (size_t r = 0; r < F->rows; r++)
        for (size_t j = 0; j < F->ff; j++) {
            mpfr_set_d(z, F->b1 ? F->b1[j] : 0.0, MPFR_RNDN);
            for (size_t k = 0; k < F->d; k++) {
                mpfr_set_d(t, x[r * F->d + k], MPFR_RNDN);
                mpfr_mul_d(t, t, F->w1[j * F->d + k], MPFR_RNDN);
                mpfr_add(z, z, t, MPFR_RNDN);
            }
            if (F->act == RN_ACT_RELU) {
                mpfr_set_zero(t, 1);
                mpfr_max(a, z, t, MPFR_RNDN);
            } else if (F->act == RN_ACT_GELU) {
                mpfr_sqrt_ui(c, 2, MPFR_RNDN);
                mpfr_div(t, z, c, MPFR_RNDN);
                mpfr_erf(t, t, MPFR_RNDN);
                mpfr_add(t, t, one, MPFR_RNDN);
                mpfr_mul(a, t, z, MPFR_RNDN);
                mpfr_div_ui(a, a, 2, MPFR_RNDN);
            } else {
                mpfr_const_pi(c, MPFR_RNDN);
                mpfr_ui_div(c, 2, c, MPFR_RNDN);
                mpfr_sqrt(c, c, MPFR_RNDN);                    /* √(2/π) */
                mpfr_pow_ui(t, z, 3, MPFR_RNDN);
                mpfr_mul_ui(t, t, 44715, MPFR_RNDN);
                mpfr_div_ui(t, t, 1000000, MPFR_RNDN);
                mpfr_add(t, t, z, MPFR_RNDN);
                mpfr_mul(t, t, c, MPFR_RNDN);
                mpfr_tanh(t, t, MPFR_RNDN);
                mpfr_add(t, t, one, MPFR_RNDN);
                mpfr_mul(a, t, z, MPFR_RNDN);
                mpfr_div_ui(a, a, 2, MPFR_RNDN);
            }
            mpfr_init2(h[r * F->ff + j], 1024);
            if (F->mask) {
                mpfr_set_d(t, 1.0 - F->p, MPFR_RNDN); /* exact: p is an f32 value in [0, 1) */
                mpfr_div(a, a, t, MPFR_RNDN);
                mpfr_mul_d(a, a, F->mask[r * F->ff + j], MPFR_RNDN);
            }
            mpfr_set(h[r * F->ff + j], a, MPFR_RNDN);
        }
    for (size_t r = 0; r < F->rows; r++)
        for (size_t i = 0; i < F->d; i++) {
            mpfr_set_d(y[r * F->d + i], F->b2 ? F->b2[i] : 0.0, MPFR_RNDN);
            for (size_t j = 0; j < F->ff; j++) {
                mpfr_mul_d(t, h[r * F->ff + j], F->w2[i * F->ff + j], MPFR_RNDN);
                mpfr_add(y[r * F->d + i], y[r * F->d + i], t, MPFR_RNDN);
            }
        }
    for (size_t k = 0; k < F->rows * F->ff; k++)
        mpfr_clear(h[k]);
    free(h);
    mpfr_clears(z, t, a, c, one, (mpfr_ptr)0);
}

static void tiny_inputs(unsigned long long seed, double *x, double *w1, double *b1, double *w2,
                        double *b2, double *mask, double *dy)
{
    unsigned long long s = seed;
    rand_f32(x, TR * TD, &s, 2.0);
    rand_f32(w1, TF * TD, &s, 0.8);
    rand_f32(b1, TF, &s, 1.0);
    rand_f32(w2, TD * TF, &s, 0.6);
    rand_f32(b2, TD, &s, 1.0);
    rand_f32(dy, TR * TD, &s, 1.0);
    for (int i = 0; i < TR * TF; i++)
        mask[i] = lcg(&s) < 0.6 ? 1.0 : 0.0;
}

Test(ffn, twin_rounded_once_matches_independent_mpfr_evaluation)
{
    double x[TR * TD], w1[TF * TD], b1[TF], w2[TD * TF], b2[TD], mask[TR * TF], dy[TR * TD], y[TR * TD];
    tiny_inputs(2026, x, w1, b1, w2, b2, mask, dy);
    mpfr_t ref[TR * TD];
    for (int i = 0; i < TR * TD; i++)
        mpfr_init2(ref[i], 1024);
    for (int act = 0; act < 3; act++)
        for (int withmask = 0; withmask < 2; withmask++) {
            ffn_args F = {w1, b1, w2, b2, withmask ? mask : NULL, (double)0.1f, (rn_activation)act, TR, TD, TF};
            mpfr_forward(ref, x, &F);
            for (int d = 0; d < RN_NDTYPES; d++) {
                cr_assert_eq(ffn_forward_mpfr(y, x, &F, (rn_dtype)d), RN_TWIN_OK);
                for (int i = 0; i < TR * TD; i++) {
                    double want = rn_round_mpfr(ref[i], (rn_dtype)d);
                    cr_assert(y[i] == want, "act %d mask %d dtype %d y[%d]: twin %a, MPFR %a", act,
                              withmask, d, i, y[i], want);
                }
            }
        }
    for (int i = 0; i < TR * TD; i++)
        mpfr_clear(ref[i]);
}

Test(ffn, twin_exact_relu_zero_and_zero_weights)
{
    /* z = x·w1ᵀ + b1 = 0 exactly for unit 0 (relu(0) = 0, relu'(0) = 0), w2 = 0 for output 1:
       y[1] = b2[1] exactly, d.linear1.* of unit 0 exactly 0. */
    double x[2] = {1.0, 2.0}, w1[4] = {2.0, -1.0, 1.0, 1.0}, b1[2] = {0.0, -0.5};
    double w2[4] = {1.0, 0.5, 0.0, 0.0}, b2[2] = {0.25, 0x1.000002p0}, dy[2] = {1.0, 3.0};
    ffn_args F = {w1, b1, w2, b2, NULL, 0.0, RN_ACT_RELU, 1, 2, 2};
    double y[2], dx[2], dw1[4], db1[2], dw2[4], db2[2];
    cr_assert_eq(ffn_forward_mpfr(y, x, &F, RN_BF16), RN_TWIN_OK);
    /* z = (0, 2.5); h = (0, 2.5); y0 = 0.25 + 1.25 = 1.5; y1 = b2[1] = 1 + 2^-23 rounded to bf16: 1 */
    cr_assert(y[0] == 1.5 && y[1] == 1.0, "y = %a %a", y[0], y[1]);
    cr_assert_eq(ffn_backward_mpfr(dx, dw1, db1, dw2, db2, x, dy, &F, RN_F64), RN_TWIN_OK);
    cr_assert(dw1[0] == 0.0 && dw1[1] == 0.0 && db1[0] == 0.0, "unit 0 (z = 0) has gradient");
    cr_assert(db1[1] == 0.5 && dw1[2] == 0.5 && dw1[3] == 1.0, "unit 1: %a %a %a", db1[1], dw1[2], dw1[3]);
    cr_assert(dx[0] == 0.5 && dx[1] == 0.5, "dx = %a %a", dx[0], dx[1]);
    cr_assert(dw2[1] == 2.5 && dw2[3] == 7.5 && dw2[0] == 0.0 && db2[1] == 3.0, "dw2/db2");
}

/* ================================================================ backward vs finite differences */

/* L = Σ dy·y from the twin's forward at 256 bits (its ball midpoint). */
static void loss(arb_t L, arb_srcptr xb, const double *dy, const ffn_args *F)
{
    arb_ptr y = _arb_vec_init((slong)(F->rows * F->d));
    cr_assert_eq(ffn_arb_forward(y, xb, F, 256), 0);
    arb_zero(L);
    arb_t t;
    arb_init(t);
    for (size_t i = 0; i < F->rows * F->d; i++) {
        arb_set_d(t, dy[i]);
        arb_addmul(L, y + i, t, 256);
    }
    arb_clear(t);
    _arb_vec_clear(y, (slong)(F->rows * F->d));
}

/* (L(v + h) - L(v - h)) / 2h with h = 2^-20 (v ± h exact in binary64 for these f32 values). */
static double fd_param(double *v, arb_srcptr xb, const double *dy, const ffn_args *F)
{
    const double h = 0x1p-20, v0 = *v;
    arb_t lp, lm;
    arb_init(lp), arb_init(lm);
    *v = v0 + h;
    loss(lp, xb, dy, F);
    *v = v0 - h;
    loss(lm, xb, dy, F);
    *v = v0;
    arb_sub(lp, lp, lm, 256);
    arb_mul_2exp_si(lp, lp, 19); /* / 2h */
    double g = arf_get_d(arb_midref(lp), ARF_RND_NEAR);
    arb_clear(lp), arb_clear(lm);
    return g;
}

static void check_grad(const char *what, int i, double got, double fd)
{
    /* the central difference's error is O(h²·|L'''|) ~ 1e-12 here; a wrong gradient is O(1) off */
    cr_assert(fabs(got - fd) <= 1e-8 * (1.0 + fabs(fd)), "%s[%d]: backward %.17g, finite difference %.17g",
              what, i, got, fd);
}

Test(ffn, twin_backward_matches_finite_differences_for_every_parameter, .timeout = 60)
{
    double x[TR * TD], w1[TF * TD], b1[TF], w2[TD * TF], b2[TD], mask[TR * TF], dy[TR * TD];
    tiny_inputs(99, x, w1, b1, w2, b2, mask, dy);
    for (int act = 0; act < 3; act++) {
        ffn_args F = {w1, b1, w2, b2, mask, (double)0.1f, (rn_activation)act, TR, TD, TF};
        arb_ptr xb = _arb_vec_init(TR * TD), dyb = _arb_vec_init(TR * TD);
        for (int i = 0; i < TR * TD; i++)
            arb_set_d(xb + i, x[i]), arb_set_d(dyb + i, dy[i]);
        arb_ptr g[5];
        slong n[5] = {TR * TD, TF * TD, TF, TD * TF, TD};
        for (int k = 0; k < 5; k++)
            g[k] = _arb_vec_init(n[k]);
        cr_assert_eq(ffn_arb_backward(g[0], g[1], g[2], g[3], g[4], xb, dyb, &F, 256), 0);
        double *params[5] = {NULL, w1, b1, w2, b2};
        for (int k = 0; k < 5; k++)
            for (slong i = 0; i < n[k]; i++) {
                double fd;
                if (k == 0) { /* x: perturb the ball input */
                    double v = x[i];
                    arb_t lp, lm;
                    arb_init(lp), arb_init(lm);
                    arb_set_d(xb + i, v + 0x1p-20);
                    loss(lp, xb, dy, &F);
                    arb_set_d(xb + i, v - 0x1p-20);
                    loss(lm, xb, dy, &F);
                    arb_set_d(xb + i, v);
                    arb_sub(lp, lp, lm, 256);
                    arb_mul_2exp_si(lp, lp, 19);
                    fd = arf_get_d(arb_midref(lp), ARF_RND_NEAR);
                    arb_clear(lp), arb_clear(lm);
                } else {
                    fd = fd_param(&params[k][i], xb, dy, &F);
                }
                char what[64];
                snprintf(what, sizeof what, "act %d %s", act, GRAD_NAMES[k]);
                check_grad(what, (int)i, arf_get_d(arb_midref(g[k] + i), ARF_RND_NEAR), fd);
            }
        for (int k = 0; k < 5; k++)
            _arb_vec_clear(g[k], n[k]);
        _arb_vec_clear(xb, TR * TD), _arb_vec_clear(dyb, TR * TD);
    }
}

/* ================================================================ CLI */

TestSuite(ffn_cli, .init = setup, .fini = teardown);

Test(ffn_cli, eval_writes_y_and_bad_inputs_exit_2_naming_the_file)
{
    double x[TR * TD], w1[TF * TD], b1[TF], w2[TD * TF], b2[TD], mask[TR * TF], dy[TR * TD];
    tiny_inputs(7, x, w1, b1, w2, b2, mask, dy);
    size_t sx[2] = {TR, TD}, sw1[2] = {TF, TD}, sb1[1] = {TF}, sw2[2] = {TD, TF}, sb2[1] = {TD},
           sm[2] = {TR, TF};
    put_npy("x.npy", RN_F32, 2, sx, x);
    put_npy("w1.npy", RN_F32, 2, sw1, w1);
    put_npy("b1.npy", RN_F32, 1, sb1, b1);
    put_npy("w2.npy", RN_F32, 2, sw2, w2);
    put_npy("b2.npy", RN_F32, 1, sb2, b2);
    put_npy("m.npy", RN_F32, 2, sm, mask);
    put_npy("w2bad.npy", RN_F32, 2, sw1, w1); /* [ff, d] where [d, ff] is expected */
    mask[0] = 0.5;
    put_npy("mbad.npy", RN_F32, 2, sm, mask);
    cr_assert_eq(run("eval ffn --in x=%s --in linear1.weight=%s --in linear1.bias=%s --in "
                     "linear2.weight=%s --in linear2.bias=%s --in dropout.mask=%s --attr "
                     "activation=gelu_tanh --attr p=0.1 --dtype f32 --out %s",
                     P("x.npy"), P("w1.npy"), P("b1.npy"), P("w2.npy"), P("b2.npy"), P("m.npy"),
                     P("o")), 0, "%s", err_text);
    char path[512];
    snprintf(path, sizeof path, "%s/y.npy", P("o"));
    rn_array y = load(path);
    cr_assert_eq(y.count, (size_t)(TR * TD));
    rn_array_free(&y);
    cr_assert_eq(run("eval ffn --in x=%s --in linear1.weight=%s --in linear2.weight=%s --out %s",
                     P("x.npy"), P("w1.npy"), P("w2bad.npy"), P("o2")), 2);
    cr_assert(strstr(err_text, "w2bad.npy"), "%s", err_text);
    cr_assert_eq(run("eval ffn --in x=%s --in linear1.weight=%s --in linear2.weight=%s --in "
                     "dropout.mask=%s --out %s", P("x.npy"), P("w1.npy"), P("w2.npy"), P("mbad.npy"),
                     P("o3")), 2);
    cr_assert(strstr(err_text, "mbad.npy"), "%s", err_text);
    cr_assert_eq(run("eval ffn --in x=%s --in linear1.weight=%s --in linear2.weight=%s --attr "
                     "activation=swish --out %s", P("x.npy"), P("w1.npy"), P("w2.npy"), P("o4")), 2);
}
