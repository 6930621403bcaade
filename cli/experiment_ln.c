/* The LayerNorm experiments of `resnorm experiment` (specs/cli.md, "experiment"):
 *   layernorm-stats  seed module 13, exercise 2: the output row's mean and std after LayerNorm,
 *                    certified (the MPFR twin) vs float32 two-pass (the project's kernel) vs
 *                    float32 one-pass E[x^2] - E[x]^2, over shifts and scales;
 *   trace            the seed's one-token pre-LN block (d_model = 4), every intermediate exact
 *                    (the twins, rounded once to f64) and as float32 (the project's kernels). */
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "experiment.h"
#include "layernorm.h"
#include "layernorm_mpfr.h"
#include "residual.h"
#include "residual_mpfr.h"
#include "tanh_stack.h" /* rn_splitmix64, rn_normal */

enum { STATS_N = 64 };
#define LN_EPS 1e-5f /* PyTorch's default, a float32 value as PyTorch passes it for f32 inputs */

/* mean and population std of v[0..n-1], two-pass in double: a display of an output row whose
   values are O(1), where double's rounding is ~1e-16 of the result. */
static void row_moments(const double *v, int n, double *mean, double *std)
{
    double s = 0, q = 0;
    for (int i = 0; i < n; i++)
        s += v[i];
    *mean = s / n;
    for (int i = 0; i < n; i++)
        q += (v[i] - *mean) * (v[i] - *mean);
    *std = sqrt(q / n);
}

/* The one-pass float32 LayerNorm (ONNX Runtime's CPU form): var = E[x^2] - E[x]^2 in float32,
   summed left to right; y = (x - mean) * rstd.  Not clamped: var < -eps gives NaN, as it does. */
static void layernorm_onepass_f32(float *y, const float *x, int n, float eps)
{
    float s = 0.0f, q = 0.0f;
    for (int i = 0; i < n; i++)
        s += x[i], q += x[i] * x[i];
    float mean = s / (float)n;
    float var = q / (float)n - mean * mean;
    float rstd = 1.0f / sqrtf(var + eps);
    for (int i = 0; i < n; i++)
        y[i] = (x[i] - mean) * rstd;
}

typedef struct {
    double shift, scale;
    double in_mean, in_std;                 /* of the float32 input row (double, two-pass) */
    double exact_mean, exact_std;           /* of the certified output (rounded once to f64) */
    double two_mean, two_std, one_mean, one_std;
} stats_row;

/* The rows: scale 1 at growing shifts (the plot), then the seed's (10, 5) and small-std rows. */
static const double stats_spec[][2] = {
    {0, 1},    {1, 1},    {10, 1},   {30, 1},    {100, 1},  {300, 1},    {1e3, 1},  {3e3, 1},
    {1e4, 1},  {3e4, 1},  {1e5, 1},  {10, 5},    {0, 1e-3}, {1e4, 1e-3}, {1e4, 1e-1}, {1e2, 1e-3},
};
enum { STATS_ROWS = sizeof stats_spec / sizeof stats_spec[0], STATS_SCALE1_ROWS = 11 };

/* One row: x = float32(shift + scale * z), z ~ N(0,1) from splitmix64 state 13 (the same z for every
   row, so rows differ only by shift and scale).  Returns 0, or -1 when the twin cannot certify. */
static int stats_one(stats_row *r, double shift, double scale)
{
    float x[STATS_N], y2[STATS_N], y1[STATS_N], g[STATS_N], b[STATS_N], m, rs;
    double xd[STATS_N], gd[STATS_N], bd[STATS_N], ye[STATS_N], me, re, v[STATS_N];
    uint64_t st = 13;
    for (int i = 0; i < STATS_N; i++) {
        x[i] = (float)(shift + scale * rn_normal(&st));
        xd[i] = x[i], g[i] = 1.0f, b[i] = 0.0f, gd[i] = 1.0, bd[i] = 0.0;
    }
    r->shift = shift, r->scale = scale;
    row_moments(xd, STATS_N, &r->in_mean, &r->in_std);
    if (layernorm_forward_mpfr(ye, &me, &re, xd, gd, bd, 1, STATS_N, (double)LN_EPS, RN_F64))
        return -1;
    row_moments(ye, STATS_N, &r->exact_mean, &r->exact_std);
    layernorm_row_forward_f32(y2, &m, &rs, x, g, b, STATS_N, LN_EPS);
    for (int i = 0; i < STATS_N; i++)
        v[i] = y2[i];
    row_moments(v, STATS_N, &r->two_mean, &r->two_std);
    layernorm_onepass_f32(y1, x, STATS_N, LN_EPS);
    for (int i = 0; i < STATS_N; i++)
        v[i] = y1[i];
    row_moments(v, STATS_N, &r->one_mean, &r->one_std);
    return 0;
}

static void print_stats_table(const stats_row *rows, int nrows)
{
    printf("layernorm-stats: n = %d, gamma = 1, beta = 0, eps = 1e-5 (f32); x = f32(shift + scale z),\n"
           "z ~ N(0,1) (one draw, every row); output row mean and population std\n\n", STATS_N);
    printf("%8s %7s | %-23s | %-23s | %-23s\n", "shift", "scale", "certified mean     std",
           "f32 two-pass mean  std", "f32 one-pass mean  std");
    for (int i = 0; i < nrows; i++) {
        const stats_row *r = &rows[i];
        printf("%8g %7g | %10.3g %12.9f | %10.3g %12.9f | %10.3g %12.9g\n", r->shift, r->scale,
               r->exact_mean, r->exact_std, r->two_mean, r->two_std, r->one_mean, r->one_std);
    }
    printf("\nseed (module 13): rows of mean 7.6..11.8, std 2.8..6.8 -> mean ~0.0, std 1.0.\n"
           "The exact std is sqrt(v / (v + eps)) (v: the row's variance): < 1 when v ~ eps.\n");
}

/* JSON has no NaN (jansson refuses it): a NaN statistic (one-pass var < -eps) is null. */
static json_t *jnum(double v)
{
    return isnan(v) ? json_null() : json_real(v);
}

static json_t *stats_row_json(const stats_row *r)
{
    return json_pack("{s:f, s:f, s:f, s:f, s:{s:o, s:o}, s:{s:o, s:o}, s:{s:o, s:o}}", "shift",
                     r->shift, "scale", r->scale, "input_mean", r->in_mean, "input_std", r->in_std,
                     "certified", "mean", jnum(r->exact_mean), "std", jnum(r->exact_std),
                     "f32_two_pass", "mean", jnum(r->two_mean), "std", jnum(r->two_std),
                     "f32_one_pass", "mean", jnum(r->one_mean), "std", jnum(r->one_std));
}

int experiment_layernorm_stats(int argc, char **argv)
{
    int json = 0, rc = experiment_flags_only("layernorm-stats", argc, argv, &json);
    if (rc)
        return rc == 1 ? RN_EXIT_OK : rc;
    stats_row rows[STATS_ROWS];
    for (int i = 0; i < STATS_ROWS; i++) {
        if (stats_one(&rows[i], stats_spec[i][0], stats_spec[i][1]) < 0) {
            cli_error("experiment", "layernorm-stats: the twin could not certify row %d", i);
            return RN_EXIT_INTERNAL;
        }
    }
    if (!json) {
        print_stats_table(rows, STATS_ROWS);
        return RN_EXIT_OK;
    }
    json_t *arr = json_array();
    for (int i = 0; i < STATS_ROWS; i++)
        json_array_append_new(arr, stats_row_json(&rows[i]));
    json_t *doc = json_pack("{s:s, s:i, s:f, s:o}", "experiment", "layernorm-stats", "n", STATS_N,
                            "eps", (double)LN_EPS, "rows", arr);
    json_dumpf(doc, stdout, JSON_INDENT(1) | JSON_REAL_PRECISION(17));
    putchar('\n');
    json_decref(doc);
    return RN_EXIT_OK;
}

/* ---- trace ---- */

/* The seed's text omits x; it states F = [0.10, -0.05, 0.20, 0.00] and mean(x') ~ 1.0125, so
   mean(x) = 1.0125 - mean(F) = 0.95.  Assumed (documented in specs/cli.md): x = [1.0, 0.5, 1.5,
   0.8], sum 3.8.  Both as float32 values (0.8, 0.1, -0.05, 0.2 are not binary: their float32
   roundings are the inputs, exactly). */
enum { TRACE_D = 4 };
static const float trace_x[TRACE_D] = {1.0f, 0.5f, 1.5f, 0.8f};
static const float trace_f[TRACE_D] = {0.10f, -0.05f, 0.20f, 0.00f};

/* One intermediate: its exact value (twin, rounded once to f64) and the float32 kernels'. */
typedef struct {
    const char *name, *formula;
    double exact[TRACE_D], mean_exact, rstd_exact; /* mean/rstd: LayerNorm steps only (else NaN) */
    float f32[TRACE_D], mean_f32, rstd_f32;
} trace_step;

/* LayerNorm (gamma 1, beta 0, eps 1e-5 f32) of the exact row xe and of its float32 copy xf. */
static int trace_layernorm(trace_step *t, const double *xe, const float *xf)
{
    const double one[TRACE_D] = {1, 1, 1, 1}, zero[TRACE_D] = {0};
    const float onef[TRACE_D] = {1, 1, 1, 1}, zerof[TRACE_D] = {0};
    if (layernorm_forward_mpfr(t->exact, &t->mean_exact, &t->rstd_exact, xe, one, zero, 1, TRACE_D,
                               (double)LN_EPS, RN_F64))
        return -1;
    layernorm_row_forward_f32(t->f32, &t->mean_f32, &t->rstd_f32, xf, onef, zerof, TRACE_D, LN_EPS);
    return 0;
}

static void trace_vector(trace_step *t, const float *v)
{
    for (int i = 0; i < TRACE_D; i++)
        t->exact[i] = v[i], t->f32[i] = v[i];
    t->mean_exact = t->rstd_exact = NAN, t->mean_f32 = t->rstd_f32 = NAN;
}

/* The block's first half and the normalized copy of the second: x, LN1(x), F, x' = x + F, LN2(x').
   The exact chain feeds the exact x' (a sum of two floats, exact in f64) to LN2; the float32 chain
   its float32 x'. */
static int trace_run(trace_step st[5])
{
    double xe[TRACE_D], fe[TRACE_D];
    for (int i = 0; i < TRACE_D; i++)
        xe[i] = trace_x[i], fe[i] = trace_f[i];
    st[0] = (trace_step){.name = "x", .formula = "the token's residual stream (assumed, see specs/cli.md)"};
    trace_vector(&st[0], trace_x);
    st[1] = (trace_step){.name = "normed1", .formula = "LayerNorm(x), gamma = 1, beta = 0, eps = 1e-5"};
    if (trace_layernorm(&st[1], xe, trace_x))
        return -1;
    st[2] = (trace_step){.name = "F", .formula = "the attention sublayer's update (the seed's)"};
    trace_vector(&st[2], trace_f);
    st[3] = (trace_step){.name = "x1", .formula = "x' = x + F (the residual add, onto x, not normed1)"};
    st[3].mean_exact = st[3].rstd_exact = NAN, st[3].mean_f32 = st[3].rstd_f32 = NAN;
    if (residual_forward_mpfr(st[3].exact, xe, fe, TRACE_D, RN_F64))
        return -1;
    residual_forward_f32(st[3].f32, trace_x, trace_f, TRACE_D);
    st[4] = (trace_step){.name = "normed2", .formula = "LayerNorm(x'), the second sublayer's normalized input"};
    return trace_layernorm(&st[4], st[3].exact, st[3].f32);
}

static void print_trace_table(const trace_step *st, int n)
{
    printf("trace: one pre-LN block, one token, d_model = 4 (the seed's example)\n"
           "exact: the real value on the float32 inputs, certified, rounded once to f64;\n"
           "f32: the project's float32 kernels (layernorm_row_forward_f32, residual_forward_f32)\n\n");
    for (int k = 0; k < n; k++) {
        const trace_step *t = &st[k];
        printf("%-8s %s\n", t->name, t->formula);
        for (int i = 0; i < TRACE_D; i++)
            printf("  [%d] exact %+.17g   f32 %+.9g   f32 - exact %+.3g\n", i, t->exact[i],
                   (double)t->f32[i], (double)t->f32[i] - t->exact[i]);
        if (!isnan(t->mean_exact))
            printf("  mean exact %.17g f32 %.9g;  rstd exact %.17g f32 %.9g\n", t->mean_exact,
                   (double)t->mean_f32, t->rstd_exact, (double)t->rstd_f32);
    }
    double m = 0;
    for (int i = 0; i < TRACE_D; i++)
        m += st[3].exact[i];
    printf("\nmean of x' = %.17g (seed: ~1.0125)\n", m / TRACE_D);
}

static json_t *jvec_d(const double *v)
{
    json_t *a = json_array();
    for (int i = 0; i < TRACE_D; i++)
        json_array_append_new(a, json_real(v[i]));
    return a;
}

static json_t *jvec_f(const float *v)
{
    json_t *a = json_array();
    for (int i = 0; i < TRACE_D; i++)
        json_array_append_new(a, json_real((double)v[i]));
    return a;
}

static json_t *trace_step_json(const trace_step *t)
{
    json_t *j = json_pack("{s:s, s:s, s:o, s:o}", "name", t->name, "formula", t->formula, "exact",
                          jvec_d(t->exact), "f32", jvec_f(t->f32));
    if (!isnan(t->mean_exact)) {
        json_object_set_new(j, "mean_exact", json_real(t->mean_exact));
        json_object_set_new(j, "rstd_exact", json_real(t->rstd_exact));
        json_object_set_new(j, "mean_f32", json_real((double)t->mean_f32));
        json_object_set_new(j, "rstd_f32", json_real((double)t->rstd_f32));
    }
    return j;
}

int experiment_trace(int argc, char **argv)
{
    int json = 0, rc = experiment_flags_only("trace", argc, argv, &json);
    if (rc)
        return rc == 1 ? RN_EXIT_OK : rc;
    trace_step st[5];
    if (trace_run(st) < 0) {
        cli_error("experiment", "trace: the twin could not certify a value");
        return RN_EXIT_INTERNAL;
    }
    if (!json) {
        print_trace_table(st, 5);
        return RN_EXIT_OK;
    }
    json_t *steps = json_array();
    for (int k = 0; k < 5; k++)
        json_array_append_new(steps, trace_step_json(&st[k]));
    json_t *doc = json_pack("{s:s, s:i, s:f, s:o}", "experiment", "trace", "d_model", TRACE_D, "eps",
                            (double)LN_EPS, "steps", steps);
    json_dumpf(doc, stdout, JSON_INDENT(1) | JSON_REAL_PRECISION(17));
    putchar('\n');
    json_decref(doc);
    return RN_EXIT_OK;
}
