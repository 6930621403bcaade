/* The residual op family in the `resnorm` registry: `residual` (y = x + f) and `residual_backward`
 * (dx = dy, df = dy).  Adaptors to the twin (ref/residual_mpfr.c) and the bound
 * (ref/residual_bound.c), and the family's golden cases (golden/residual/<case>/,
 * specs/golden-format.md).  Reference: specs/cli.md. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "golden.h"
#include "residual_bound.h"
#include "residual_mpfr.h"

/* ---------------------------------------------------------------- CLI adaptors */

/* residual: f has the shape of x (no broadcasting: a residual stream adds like to like).
   residual_backward: dy alone, any shape.  Every array is viewed as one row of count elements. */
static int res_prepare(cli_job *job)
{
    const rn_array *x = &job->in[0];
    for (int k = 1; k < job->op->ninputs; k++) {
        const rn_array *a = &job->in[k];
        if (!cli_same_shape(a->ndim, a->shape, x->ndim, x->shape)) {
            char s1[160], s2[160];
            cli_shape_str(s1, sizeof s1, a->ndim, a->shape);
            cli_shape_str(s2, sizeof s2, x->ndim, x->shape);
            cli_error(job->verb, "input %s (%s): shape %s does not match %s.shape %s",
                      job->op->inputs[k], job->in_path[k], s1, job->op->inputs[0], s2);
            return RN_EXIT_USAGE;
        }
    }
    job->ax = 0;
    job->rows = 1;
    job->n = x->count;
    return 0;
}

/* Every output has the shape of the first input (x, or dy). */
static void res_output_shape(const cli_job *job, int k, int *ndim, size_t *shape)
{
    (void)k;
    const rn_array *x = &job->in[0];
    *ndim = x->ndim;
    memcpy(shape, x->shape, sizeof(size_t) * (size_t)x->ndim);
}

static int res_twin(const cli_job *job, rn_dtype out, double *const *o)
{
    return residual_forward_mpfr(o[0], job->in[0].data, job->in[1].data, job->in[0].count, out);
}

static int res_bwd_twin(const cli_job *job, rn_dtype out, double *const *o)
{
    return residual_backward_mpfr(o[0], o[1], job->in[0].data, job->in[0].count, out);
}

static int res_bound(const cli_job *job, rn_dtype compute, rn_dtype out, double *const *o)
{
    return residual_forward_bound(o[0], job->in[0].data, job->in[1].data, job->in[0].count,
                                  compute, out);
}

static int res_bwd_bound(const cli_job *job, rn_dtype compute, rn_dtype out, double *const *o)
{
    return residual_backward_bound(o[0], o[1], job->in[0].data, job->in[0].count, compute, out);
}

/* ---------------------------------------------------------------- golden cases */

typedef enum {
    R_RANDN,      /* x = xscale randn, f = fscale randn, dy = randn */
    R_CANCEL,     /* f = -x (1 + 2^-12 randn): |x + f| << |x|; some f = -x exactly */
    R_OVERFLOW,   /* sums beyond the input format's largest value, ties at the threshold */
    R_SUBNORMAL,  /* sums in the subnormal range of the input (and of f16) */
    R_SIGNED_ZERO,/* +0 + -0, -0 + -0, x + -x, tiny values that round to -0 in f16 */
    R_NONFINITE   /* NaN and +-Inf addends */
} rkind;

typedef struct {
    const char *name;    /* directory name and id suffix */
    const char *comment;
    const char *flags;   /* space-separated */
    rn_dtype in;
    int ndim;
    size_t shape[4];
    rkind k;
    double xscale, fscale;
} rcase;

/* clang-format off */
static const rcase RCASES[] = {
    {"random_f32", "GPT-2 width: 4 rows of 768, x = randn, f = 0.5 randn", "gpt2",
     RN_F32, 2, {4, 768}, R_RANDN, 1.0, 0.5},
    {"random_f64", "GPT-2 width: 4 rows of 768, x = randn, f = 0.5 randn", "gpt2",
     RN_F64, 2, {4, 768}, R_RANDN, 1.0, 0.5},
    {"random_f16", "GPT-2 width, f16 inputs", "gpt2 half_input",
     RN_F16, 2, {4, 768}, R_RANDN, 1.0, 0.5},
    {"random_bf16", "GPT-2 width, bf16 inputs", "gpt2 half_input",
     RN_BF16, 2, {4, 768}, R_RANDN, 1.0, 0.5},
    {"random_2345_f32", "ONNX-like shape (2,3,4,5), x = 100 randn, f = 1e-3 randn: f mostly below "
     "half an ulp of x in f16", "", RN_F32, 4, {2, 3, 4, 5}, R_RANDN, 100.0, 1e-3},
    {"cancellation_f32", "f = -x (1 + 2^-12 randn), every 8th f = -x exactly: exact sums 2^12 times "
     "smaller than the addends (Sterbenz: the f32 sum is exact), and +0", "cancellation signed_zero",
     RN_F32, 2, {4, 64}, R_CANCEL, 1.0, 0.0},
    {"cancellation_f64", "f = -x (1 + 2^-12 randn), every 8th f = -x exactly", "cancellation signed_zero",
     RN_F64, 2, {4, 64}, R_CANCEL, 1.0, 0.0},
    {"overflow_f32", "sums beyond the f32 range (max + max, max + half an ulp: the tie rounds to Inf), "
     "just below it, their negatives, and sums that overflow f16 (70000) or bf16 (3.39e38) only",
     "overflow", RN_F32, 1, {16}, R_OVERFLOW, 0, 0},
    {"overflow_f64", "sums beyond the f64 range and below it; sums that overflow f32, f16, bf16 only",
     "overflow", RN_F64, 1, {16}, R_OVERFLOW, 0, 0},
    {"overflow_f16", "sums beyond the f16 range (65504 + 65504, 65504 + 16: the tie rounds to Inf)",
     "overflow half_input", RN_F16, 1, {16}, R_OVERFLOW, 0, 0},
    {"overflow_bf16", "sums beyond the bf16 range (max + max, max + half an ulp)",
     "overflow half_input", RN_BF16, 1, {16}, R_OVERFLOW, 0, 0},
    {"subnormal_f32", "differences of f32 values near 2^-126 (subnormal, exact), and values near "
     "2^-20 and 2^-30 (f16-subnormal and f16-underflowing sums)", "subnormal",
     RN_F32, 2, {3, 32}, R_SUBNORMAL, 0, 0},
    {"subnormal_f64", "differences of f64 values near 2^-1022 (subnormal, exact), and values near "
     "2^-130 (f32-subnormal sums)", "subnormal", RN_F64, 2, {3, 32}, R_SUBNORMAL, 0, 0},
    {"subnormal_f16", "differences of f16 values near 2^-14 (f16 subnormals)", "subnormal half_input",
     RN_F16, 2, {3, 32}, R_SUBNORMAL, 0, 0},
    {"signed_zeros_f32", "+0 + -0 = +0, -0 + +0 = +0, -0 + -0 = -0, x + -x = +0, -2^-30 + 0 "
     "(-0 in f16); dy = +-0", "signed_zero", RN_F32, 1, {12}, R_SIGNED_ZERO, 0, 0},
    {"signed_zeros_f64", "signed zeros as signed_zeros_f32, in f64", "signed_zero",
     RN_F64, 1, {12}, R_SIGNED_ZERO, 0, 0},
    {"nonfinite_f32", "NaN + 1, 1 + NaN, Inf + 1, -Inf + 1, Inf + Inf, -Inf + -Inf, Inf + -Inf, "
     "-Inf + Inf, NaN + Inf, Inf + max; dy NaN, +-Inf", "nonfinite",
     RN_F32, 1, {12}, R_NONFINITE, 0, 0},
    {"nonfinite_f64", "NaN and +-Inf addends as nonfinite_f32, in f64", "nonfinite",
     RN_F64, 1, {12}, R_NONFINITE, 0, 0},
    {"nonfinite_bf16", "NaN and +-Inf addends as nonfinite_f32, bf16 inputs", "nonfinite half_input",
     RN_BF16, 1, {12}, R_NONFINITE, 0, 0},
};
/* clang-format on */
#define NRCASES (sizeof RCASES / sizeof RCASES[0])

/* New flags of this family (those of LayerNorm it reuses are described there). */
static const char *const RES_FLAGS[][2] = {
    {"cancellation", "f close to -x: the exact sum is much smaller than the addends (and exact in "
                     "the input format); catches sums formed in a narrower format or via x - (-f) "
                     "with a rounded negation"},
    {"overflow", "exact sums beyond the largest finite value of the input or of an output format "
                 "(and exactly at the rounding threshold, a tie that rounds to Inf): catches "
                 "saturating or clamping adds and a wrong overflow threshold"},
    {"signed_zero", "exact zero sums: +0 + -0 = +0 and x + -x = +0 in round-to-nearest, -0 + -0 = -0, "
                    "and tiny negative values that round to -0; compare zeros by value unless "
                    "testing IEEE sign rules"},
    {NULL, NULL},
};

/* Smallest normal value of d. */
static double min_normal(rn_dtype d)
{
    switch (d) {
    case RN_F64: return 0x1p-1022;
    case RN_F16: return 0x1p-14;
    default:     return 0x1p-126; /* f32, bf16 */
    }
}

/* x, f, dy for case c (N elements), each rounded to c->in. */
static void res_gen_inputs(const rcase *c, size_t N, double *x, double *f, double *dy)
{
    golden_prng g;
    golden_prng_seed(&g, c->name);
    for (size_t i = 0; i < N; i++) {
        x[i] = c->xscale * golden_randn(&g);
        f[i] = c->fscale * golden_randn(&g);
        dy[i] = golden_randn(&g);
    }
    double M = rn_dtype_max(c->in), h = rn_ulp(M, c->in) / 2, t = min_normal(c->in);
    switch (c->k) {
    case R_RANDN:
        break;
    case R_CANCEL:
        for (size_t i = 0; i < N; i++) {
            x[i] = rn_round(x[i], c->in);
            f[i] = i % 8 == 0 ? -x[i] : -x[i] * (1.0 + 0x1p-12 * golden_randn(&g));
        }
        break;
    case R_OVERFLOW: {
        /* pairs (x, f): the first eight about the input format's own range */
        const double p[][2] = {{M, M},        {M, h},          {M, h / 2},      {-M, -h},
                               {M, -M},       {-M, -M},        {M / 2, M / 2},  {0.75 * M, 0.5 * M},
                               /* overflow of narrower output formats only (f32/f64 inputs) */
                               {40000, 30000}, {-40000, -30000}, {65504, 16},  {65504, 8},
                               {0x1.fep127, 0x1p119}, {1.7e38, 1.7e38}, {0x1.fffffep127, 0x1p103},
                               {1.0, 1.0}};
        for (size_t i = 0; i < N && i < sizeof p / sizeof p[0]; i++) {
            x[i] = p[i][0];
            f[i] = p[i][1];
            dy[i] = p[i][0]; /* large gradients: overflow of a narrower output */
        }
        break;
    }
    case R_SUBNORMAL:
        /* row 0: differences of values in [t, 2t): subnormal (or tiny normal), exact;
           row 1: values near 2^-20 (f16 subnormal) ; row 2: near 2^-30 (below f16's range) */
        for (size_t i = 0; i < N; i++) {
            size_t r = i / (N / 3);
            double a = 1.0 + golden_uniform(&g), b = 1.0 + golden_uniform(&g);
            if (r == 0) {
                x[i] = a * t;
                f[i] = -b * t;
            } else {
                double s = c->in == RN_F64 ? 0x1p-130 : r == 1 ? 0x1p-20 : 0x1p-30;
                x[i] = s * x[i];
                f[i] = s * f[i] * (r == 2 ? 0.5 : 1.0);
            }
            dy[i] = x[i];
        }
        break;
    case R_SIGNED_ZERO: {
        const double p[][2] = {{0.0, -0.0}, {-0.0, 0.0}, {-0.0, -0.0}, {0.0, 0.0},
                               {1.0, -1.0}, {-1.0, 1.0}, {-0x1p-30, 0.0}, {0x1p-30, -0.0},
                               {-0x1p-30, -0.0}, {3.0, -3.0}, {-0.5, 0.5}, {0.0, -0.0}};
        for (size_t i = 0; i < N && i < sizeof p / sizeof p[0]; i++) {
            x[i] = p[i][0];
            f[i] = p[i][1];
            dy[i] = i % 2 ? -0.0 : 0.0;
        }
        dy[6] = -0x1p-30; /* -0 in f16 */
        break;
    }
    case R_NONFINITE: {
        const double p[][2] = {{NAN, 1.0},           {1.0, NAN},      {INFINITY, 1.0},
                               {-INFINITY, 1.0},     {INFINITY, INFINITY}, {-INFINITY, -INFINITY},
                               {INFINITY, -INFINITY}, {-INFINITY, INFINITY}, {NAN, INFINITY},
                               {INFINITY, M},        {0.5, -0.25},     {-2.0, 1.0}};
        for (size_t i = 0; i < N && i < sizeof p / sizeof p[0]; i++) {
            x[i] = p[i][0];
            f[i] = p[i][1];
        }
        dy[0] = NAN;
        dy[1] = INFINITY;
        dy[2] = -INFINITY;
        break;
    }
    }
    for (size_t i = 0; i < N; i++) {
        double x0 = x[i], f0 = f[i];
        x[i] = rn_round(x[i], c->in);
        f[i] = rn_round(f[i], c->in);
        dy[i] = rn_round(dy[i], c->in);
        /* an overflow pair meant for a wider input format: an ordinary element instead */
        if ((isfinite(x0) && isinf(x[i])) || (isfinite(f0) && isinf(f[i])))
            x[i] = f[i] = dy[i] = 1.0;
    }
}

/* The buffers of one case, and the twin that fills its outputs for golden_case_write. */
typedef struct {
    size_t N;
    double *x, *f, *dy, *y, *dx, *df;
} res_bufs;

static int res_case_twin(const golden_case *gc, rn_dtype dt)
{
    const res_bufs *b = gc->arg;
    int t = residual_forward_mpfr(b->y, b->x, b->f, b->N, dt);
    return t ? t : residual_backward_mpfr(b->dx, b->df, b->dy, b->N, dt);
}

/* One case: files, and its two manifest entries (residual/<case>, residual_backward/<case>). */
static int res_gen_case(golden_ctx *G, const rcase *c)
{
    res_bufs b = {0};
    int nd = c->ndim, rc = -1;
    b.N = 1;
    for (int i = 0; i < nd; i++)
        b.N *= c->shape[i];
    size_t N = b.N;
    b.x = malloc(N * sizeof *b.x), b.f = malloc(N * sizeof *b.f), b.dy = malloc(N * sizeof *b.dy);
    b.y = malloc(N * sizeof *b.y), b.dx = malloc(N * sizeof *b.dx), b.df = malloc(N * sizeof *b.df);
    json_t *attrs = json_object();
    if (!b.x || !b.f || !b.dy || !b.y || !b.dx || !b.df) {
        fprintf(stderr, "resnorm golden: out of memory\n");
        goto out;
    }
    res_gen_inputs(c, N, b.x, b.f, b.dy);
    const size_t *xs = c->shape;
    golden_case gc = {
        "residual", c->name, c->comment, c->flags, c->in, nd, c->shape, attrs,
        3, 3, 2,
        {golden_arr("x", nd, xs, b.x), golden_arr("f", nd, xs, b.f), golden_arr("dy", nd, xs, b.dy)},
        {golden_arr("y", nd, xs, b.y), golden_arr("dx", nd, xs, b.dx), golden_arr("df", nd, xs, b.df)},
        {{"residual", {"x", "f", NULL}, {"y", NULL}},
         {"residual_backward", {"dy", NULL}, {"dx", "df", NULL}}},
        res_case_twin, &b, 0, 0.0,
    };
    if (golden_case_write(G, &gc) != 0)
        goto out;
    fprintf(stderr, "golden: residual/%s  %zu elements, input %s: ok\n", c->name, N,
            rn_dtype_name(c->in));
    rc = 0;
out:
    json_decref(attrs);
    free(b.x), free(b.f), free(b.dy), free(b.y), free(b.dx), free(b.df);
    return rc;
}

static int res_golden(golden_ctx *G)
{
    for (size_t i = 0; i < NRCASES; i++)
        if (res_gen_case(G, &RCASES[i]) != 0)
            return -1;
    return 0;
}

/* ---------------------------------------------------------------- registry entries */

const cli_family cli_family_residual = {
    "residual",
    "residual, residual_backward: no attributes. f (and dx, df, y) have the shape of x (or dy);\n"
    "  y = x + f rounded once; residual_backward gives dx = df = dy (from zero).\n",
    res_golden,
    RES_FLAGS,
};

const cli_op cli_op_residual = {
    "residual", "residual add: y = x + f (same shapes)",
    &cli_family_residual,
    2, {"x", "f"}, {0, 0},
    0, {{0}},
    1, {"y"},
    "specs/error-analysis-residual.md", "ref/residual_bound.c",
    "overflow in the compute or output dtype, specs/error-analysis-residual.md §5",
    res_prepare, res_output_shape, res_twin, res_bound, NULL, NULL,
    /* rowwise, by element: residual_forward_mpfr (ref/residual_mpfr.c) is the exact TwoSum fast
       path per element (residual_forward_fast) then the exact MPFR sum of x[i] + f[i] on the
       elements left: y[i] depends on x[i] and f[i] only. */
    CLI_ROWWISE_ELEMENTS, NULL,
};

const cli_op cli_op_residual_backward = {
    "residual_backward", "residual add backward: dx = dy, df = dy (from zero)",
    &cli_family_residual,
    1, {"dy"}, {0},
    0, {{0}},
    2, {"dx", "df"},
    "specs/error-analysis-residual.md", "ref/residual_bound.c",
    "overflow in the output dtype, specs/error-analysis-residual.md §5",
    res_prepare, res_output_shape, res_bwd_twin, res_bwd_bound, NULL, NULL,
    /* rowwise, by element: residual_backward_mpfr (ref/residual_mpfr.c) rounds dy[i] once into
       dx[i] and df[i] (the fast path per element, then rn_round on the elements left): each
       depends on dy[i] only. */
    CLI_ROWWISE_ELEMENTS, NULL,
};
