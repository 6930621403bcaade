/* The skip + RMSNorm op family in the `resnorm` registry: `skip_rmsnorm` (onnxruntime's
 * SkipSimplifiedLayerNormalization: s = x + skip (+ bias), y = RMSNorm(s); outputs y, rstd, sum)
 * and `skip_rmsnorm_backward` (dx = dskip = RMSNorm's input gradient at s, dbias = its sum over
 * rows, dgamma).
 * Adaptors to the twin (ref/skip_rmsnorm_mpfr.c) and the bound (ref/skip_rmsnorm_bound.c); the
 * shapes and attributes are RMSNorm's (cli/op_rmsnorm.c: eps, axis, offset), skip like x, bias like
 * gamma.  Golden cases: golden/skip_rmsnorm/<case>/ (specs/golden-format.md).  Reference:
 * specs/cli.md. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "norm_fast.h"
#include "golden.h"
#include "skip_backward_bound.h"
#include "skip_rmsnorm_bound.h"
#include "skip_rmsnorm_mpfr.h"

/* inputs: x, skip, gamma, [bias] */
static const double *bias_of(const cli_job *job) { return cli_optional_in(job, 3); }

static int srms_twin(const cli_job *job, rn_dtype out, double *const *o)
{
    return skip_rmsnorm_forward_mpfr(o[0], o[1], o[2], job->in[0].data, job->in[1].data,
                                     job->in[2].data, bias_of(job), job->rows, job->n, job->eps,
                                     cli_rms_offset(job), out);
}

static int srms_bound(const cli_job *job, rn_dtype compute, rn_dtype out, double *const *o)
{
    return skip_rmsnorm_forward_bound(o[0], o[1], o[2], job->in[0].data, job->in[1].data,
                                      job->in[2].data, bias_of(job), job->rows, job->n, job->eps,
                                      cli_rms_offset(job), compute, out);
}

/* backward inputs: x, skip, gamma, dy, [bias]; outputs dx, dskip, dbias, dgamma */
static const double *bwd_bias_of(const cli_job *job) { return cli_optional_in(job, 4); }

static int srms_bwd_twin(const cli_job *job, rn_dtype out, double *const *o)
{
    return skip_rmsnorm_backward_mpfr(o[0], o[1], o[2], o[3], job->in[3].data, job->in[0].data,
                                      job->in[1].data, job->in[2].data, bwd_bias_of(job),
                                      job->rows, job->n, job->eps, cli_rms_offset(job), out);
}

/* Streaming (cli.h: cli_colsums): dx = dskip of a block of rows; dgamma, dbias in columns 0, 1. */
static int srms_bwd_rows(const cli_job *sub, rn_dtype out, double *const *o, norm_cols *c,
                         int t, unsigned char *row_ok)
{
    int k = rmsnorm_backward_rows_fast(c, t, o[0], sub->in[3].data, sub->in[0].data,
                                       sub->in[1].data, bwd_bias_of(sub), sub->in[2].data,
                                       sub->rows, sub->n, sub->eps, cli_rms_offset(sub), out,
                                       row_ok);
    if (k && o[1]) /* (2: the rows left get both from the caller's twin) */
        memcpy(o[1], o[0], sub->rows * sub->n * sizeof *o[1]);
    return k;
}

/* Check by blocks of rows (cli.h: cli_colsums, bstate_*): the bound's state across the blocks
   (ref/skip_backward_bound.h); dskip's bound is dx's. */
static void *srms_bstate_new(const cli_job *job, rn_dtype compute, const int *need, int threads)
{
    return skip_bwd_bound_new(1, bwd_bias_of(job) != NULL, job->rows, job->n, threads, need,
                              job->eps, cli_rms_offset(job), compute);
}

static int srms_bstate_cols(void *st, const cli_job *job, rn_dtype out, double *const *o,
                            const double *const *want)
{
    (void)job;
    int rc = skip_bwd_bound_cols(st, out, o[2], o[3], NULL, want[2], want[3], NULL);
    return rc == SKIP_BWD_WHOLE ? CLI_BOUND_WHOLE : rc;
}

static void srms_bstate_free(void *st) { skip_bwd_bound_free(st); }

static const cli_colsums srms_bwd_cols = {2, 1, {-1, -1, 1, 0}, -1, -1, srms_bwd_rows, 0, 0,
                                          NULL, NULL, srms_bstate_new, cli_skip_bwd_bstate_rows,
                                          srms_bstate_cols, srms_bstate_free};

/* dskip is dx, so its bound is dx's */
static int srms_bwd_bound(const cli_job *job, rn_dtype compute, rn_dtype out, double *const *o)
{
    int rc = skip_rmsnorm_backward_bound(o[0], o[2], o[3], job->in[3].data, job->in[0].data,
                                         job->in[1].data, job->in[2].data, bwd_bias_of(job),
                                         job->rows, job->n, job->eps, cli_rms_offset(job),
                                         compute, out);
    for (size_t i = 0; rc == 0 && i < job->rows * job->n; i++)
        o[1][i] = o[0][i];
    return rc;
}

/* dbias is shaped like gamma (x.shape[axis:]); the rest as LayerNorm's */
static void srms_bwd_output_shape(const cli_job *job, int k, int *ndim, size_t *shape)
{
    if (strcmp(job->op->outputs[k], "dbias") != 0) {
        cli_ln_output_shape(job, k, ndim, shape);
        return;
    }
    const rn_array *x = &job->in[0];
    *ndim = x->ndim - job->ax;
    for (int i = job->ax; i < x->ndim; i++)
        shape[i - job->ax] = x->shape[i];
}

/* ---------------------------------------------------------------- golden cases */

typedef enum {
    S_RANDN,     /* x = xscale randn, skip = kscale randn, gamma = gshift + 0.1 randn, bias 0.1 randn */
    S_ZERO,      /* skip = -x in rows 0 and 2 (a zero sum: y = 0, rstd = 1/sqrt(eps)), no bias */
    S_NONFINITE, /* row 0: x NaN; row 1: skip +Inf; row 2: x +Inf and skip -Inf; row 3 finite */
    S_OVERFLOW,  /* row 0: x + skip beyond the f32 range (the exact sum is ordinary) */
    S_BEYOND_F64 /* x = 1, skip = 2^-80 k (small integers k): s is not a binary64 value */
} skind;

typedef struct {
    const char *name, *comment, *flags;
    rn_dtype in;
    int ndim;
    size_t shape[4];
    int axis;
    const char *eps;
    int offset;
    skind k;
    int has_bias;
    double xscale, kscale, gshift;
} scase;

/* clang-format off */
static const scase SCASES[] = {
    {"gpt2_bias_f32", "GPT-2 width: 4 rows of 768, x, skip = randn, bias = 0.1 randn", "gpt2",
     RN_F32, 2, {4, 768}, -1, "1e-5", 0, S_RANDN, 1, 1.0, 1.0, 1.0},
    {"gpt2_f32", "GPT-2 width, no bias", "gpt2", RN_F32, 2, {4, 768}, -1, "1e-5", 0, S_RANDN, 0,
     1.0, 1.0, 1.0},
    {"gpt2_bias_f64", "GPT-2 width, f64", "gpt2", RN_F64, 2, {4, 768}, -1, "1e-5", 0, S_RANDN, 1,
     1.0, 1.0, 1.0},
    {"gpt2_bias_f16", "GPT-2 width, f16 inputs", "gpt2 half_input",
     RN_F16, 2, {4, 768}, -1, "1e-5", 0, S_RANDN, 1, 1.0, 1.0, 1.0},
    {"gpt2_bias_bf16", "GPT-2 width, bf16 inputs", "gpt2 half_input",
     RN_BF16, 2, {4, 768}, -1, "1e-5", 0, S_RANDN, 1, 1.0, 1.0, 1.0},
    {"llama_f32", "Llama-like width: 2 rows of 2048, no bias, eps 1e-6", "llama",
     RN_F32, 2, {2, 2048}, -1, "1e-6", 0, S_RANDN, 0, 1.0, 1.0, 1.0},
    {"llama_bf16", "Llama-like width: 2 rows of 2048, no bias, eps 1e-6, bf16 inputs",
     "llama half_input", RN_BF16, 2, {2, 2048}, -1, "1e-6", 0, S_RANDN, 0, 1.0, 1.0, 1.0},
    {"gemma_offset1_f32", "offset 1 (Gemma): y = shat (1 + gamma), gamma = 0.1 randn, bias",
     "offset", RN_F32, 2, {4, 256}, -1, "1e-6", 1, S_RANDN, 1, 1.0, 1.0, 0.0},
    {"onnx_2345_axis1_f32", "ONNX shape (2,3,4,5), axis 1: 2 rows of 60, bias of shape (3,4,5)",
     "axis", RN_F32, 4, {2, 3, 4, 5}, 1, "1e-5", 0, S_RANDN, 1, 1.0, 1.0, 1.0},
    {"zero_sum_f32", "skip = -x in rows 0 and 2: the sum is zero there (y = 0, rstd = 1/sqrt(eps))",
     "zero_rows", RN_F32, 2, {4, 16}, -1, "1e-5", 0, S_ZERO, 0, 1.0, 1.0, 1.0},
    {"n1_f32", "n = 1: y = s gamma / sqrt(s^2 + eps) ~ sign(s) gamma", "n1",
     RN_F32, 2, {5, 1}, -1, "1e-5", 0, S_RANDN, 1, 1.0, 1.0, 1.0},
    {"lowp_sumsq_overflow_f32", "x, skip = 200 randn, n = 1024: the squares of the sum exceed f16's "
     "65504", "lowp_sumsq_overflow", RN_F32, 2, {2, 1024}, -1, "1e-5", 0, S_RANDN, 1, 200.0, 200.0,
     1.0},
    {"nonfinite_f32", "row 0: x NaN; row 1: skip +Inf; row 2: x +Inf, skip -Inf (NaN sum); row 3 "
     "finite", "nonfinite", RN_F32, 2, {4, 8}, -1, "1e-5", 0, S_NONFINITE, 1, 1.0, 1.0, 1.0},
    {"overflow_f32", "row 0: x, skip ~ 2e38: the f32 sum overflows, the exact sum and its RMSNorm "
     "are ordinary (sum in f32 is +-Inf); row 1 ordinary", "overflow huge_scale",
     RN_F32, 2, {2, 8}, -1, "1e-5", 0, S_OVERFLOW, 0, 1.0, 1.0, 1.0},
    {"beyond_f64_f32", "x = 1, skip = 2^-80 k (k small integers), eps 0: x + skip is not a binary64 "
     "value; y = gamma (1 + 2^-80 k) / rms(1 + 2^-80 k), within 2^-78 of gamma", "exact_sum",
     RN_F32, 2, {2, 8}, -1, "0", 0, S_BEYOND_F64, 0, 1.0, 1.0, 1.0},
    /* Production widths (n = 768 .. 8192) in the regime of a bug class (flag long_row). */
    {"long_eps_ms_768_f32", "x, skip = 0.002 randn, no bias, 2 rows of 768: mean(s^2) ~ 8e-6 next "
     "to eps 1e-5", "eps_large long_row", RN_F32, 2, {2, 768}, -1, "1e-5", 0, S_RANDN, 0,
     0.002, 0.002, 1.0},
    {"long_gemma_2048_f32", "offset 1 (Gemma), bias, one row of 2048, eps 1e-6",
     "offset long_row", RN_F32, 2, {1, 2048}, -1, "1e-6", 1, S_RANDN, 1, 1.0, 1.0, 0.0},
    {"long_llama_eps_4096_bf16", "x, skip = 0.0007 randn, no bias, one row of 4096, bf16 inputs, "
     "eps 1e-6: mean(s^2) ~ 1e-6 = eps", "llama eps_large long_row half_input", RN_BF16, 2,
     {1, 4096}, -1, "1e-6", 0, S_RANDN, 0, 0.0007, 0.0007, 1.0},
    {"long_sumsq_overflow_8192_f32", "x, skip = 200 randn, bias, one row of 8192: the squares of "
     "the sum exceed f16's range", "lowp_sumsq_overflow long_row", RN_F32, 2, {1, 8192}, -1,
     "1e-5", 0, S_RANDN, 1, 200.0, 200.0, 1.0},
};
/* clang-format on */
#define NSCASES (sizeof SCASES / sizeof SCASES[0])

/* every flag used here is described by an earlier family */
static const char *const SRMS_FLAGS[][2] = {{NULL, NULL}};

static void srms_gen_inputs(const scase *c, size_t rows, size_t n, double *x, double *skip,
                            double *gamma, double *bias, double *dy)
{
    golden_prng g;
    golden_prng_seed(&g, c->name);
    size_t N = rows * n;
    for (size_t i = 0; i < N; i++)
        x[i] = c->xscale * golden_randn(&g);
    for (size_t i = 0; i < N; i++)
        skip[i] = c->kscale * golden_randn(&g);
    for (size_t j = 0; j < n; j++) {
        gamma[j] = c->gshift + 0.1 * golden_randn(&g);
        bias[j] = c->has_bias ? 0.1 * golden_randn(&g) : 0.0;
    }
    switch (c->k) {
    case S_RANDN:
        break;
    case S_ZERO:
        for (size_t r = 0; r < rows; r += 2)
            for (size_t j = 0; j < n; j++)
                skip[r * n + j] = -rn_round(x[r * n + j], c->in);
        break;
    case S_NONFINITE:
        x[0 * n + 2] = NAN;
        skip[1 * n + 5] = INFINITY;
        x[2 * n + 1] = INFINITY;
        skip[2 * n + 6] = -INFINITY;
        break;
    case S_OVERFLOW:
        for (size_t j = 0; j < n; j++) {
            x[j] = 2e38 + 1e37 * golden_randn(&g);
            skip[j] = 2e38 + 1e37 * golden_randn(&g);
        }
        break;
    case S_BEYOND_F64:
        for (size_t i = 0; i < N; i++) {
            x[i] = 1.0;
            skip[i] = ldexp((double)(long)(8.0 * golden_randn(&g)), -80);
        }
        break;
    }
    for (size_t i = 0; i < N; i++) /* drawn last: the forward inputs do not depend on it */
        dy[i] = golden_randn(&g);
    for (size_t i = 0; i < N; i++) {
        x[i] = rn_round(x[i], c->in);
        skip[i] = rn_round(skip[i], c->in);
        dy[i] = rn_round(dy[i], c->in);
    }
    for (size_t j = 0; j < n; j++) {
        gamma[j] = rn_round(gamma[j], c->in);
        bias[j] = rn_round(bias[j], c->in);
    }
}

/* The buffers of one case, and the twin that fills its outputs for golden_case_write. */
typedef struct {
    golden_rowview v;
    double eps;
    int offset;
    const double *bias; /* NULL without a bias */
    double *x, *skip, *gamma, *dy, *y, *rstd, *sum, *dx, *dskip, *dbias, *dg;
} srms_bufs;

static int srms_case_twin(const golden_case *gc, rn_dtype dt)
{
    const srms_bufs *b = gc->arg;
    int t1 = skip_rmsnorm_forward_mpfr(b->y, b->rstd, b->sum, b->x, b->skip, b->gamma, b->bias,
                                       b->v.rows, b->v.n, b->eps, b->offset, dt);
    int t2 = skip_rmsnorm_backward_mpfr(b->dx, b->dskip, b->dbias, b->dg, b->dy, b->x, b->skip,
                                        b->gamma, b->bias, b->v.rows, b->v.n, b->eps, b->offset,
                                        dt);
    return t1 == RN_TWIN_NOMEM || t2 == RN_TWIN_NOMEM ? RN_TWIN_NOMEM : (t1 ? t1 : t2);
}

/* One case: files, and its two manifest entries (skip_rmsnorm/<case>,
   skip_rmsnorm_backward/<case>), sharing the directory and the inputs x, skip, gamma, [bias]. */
static int srms_gen_case(golden_ctx *G, const scase *c)
{
    srms_bufs b = {0};
    int nd = c->ndim, rc = -1;
    golden_row_view(nd, c->shape, c->axis, &b.v);
    size_t rows = b.v.rows, n = b.v.n, N = rows * n;
    rn_dtype ed;
    if (golden_eps(c->name, c->eps, NULL, c->in, &b.eps, &ed) != 0)
        return -1;
    b.offset = c->offset;
    b.x = malloc(N * sizeof *b.x), b.skip = malloc(N * sizeof *b.skip);
    b.dy = malloc(N * sizeof *b.dy), b.gamma = malloc(n * sizeof *b.gamma);
    double *bias = malloc(n * sizeof *bias);
    b.y = malloc(N * sizeof *b.y), b.sum = malloc(N * sizeof *b.sum);
    b.rstd = malloc(rows * sizeof *b.rstd), b.dx = malloc(N * sizeof *b.dx);
    b.dskip = malloc(N * sizeof *b.dskip), b.dbias = malloc(n * sizeof *b.dbias);
    b.dg = malloc(n * sizeof *b.dg);
    json_t *attrs = golden_norm_attrs(c->eps, c->axis, c->offset, ed);
    if (!b.x || !b.skip || !b.dy || !b.gamma || !bias || !b.y || !b.sum || !b.rstd || !b.dx ||
        !b.dskip || !b.dbias || !b.dg) {
        fprintf(stderr, "resnorm golden: out of memory\n");
        goto out;
    }
    srms_gen_inputs(c, rows, n, b.x, b.skip, b.gamma, bias, b.dy);
    b.bias = c->has_bias ? bias : NULL;
    int pnd = b.v.pnd;
    const size_t *ps = b.v.pshape, *ss = b.v.sshape, *xs = c->shape;
    golden_case gc = {
        "skip_rmsnorm", c->name, c->comment, c->flags, c->in, nd, c->shape, attrs,
        5, 7, 2,
        {golden_arr("x", nd, xs, b.x), golden_arr("skip", nd, xs, b.skip),
         golden_arr("gamma", pnd, ps, b.gamma), golden_arr("bias", pnd, ps, c->has_bias ? bias : NULL),
         golden_arr("dy", nd, xs, b.dy)},
        {golden_arr("y", nd, xs, b.y), golden_arr("rstd", nd, ss, b.rstd),
         golden_arr("sum", nd, xs, b.sum), golden_arr("dx", nd, xs, b.dx),
         golden_arr("dskip", nd, xs, b.dskip), golden_arr("dbias", pnd, ps, b.dbias),
         golden_arr("dgamma", pnd, ps, b.dg)},
        {{"skip_rmsnorm", {"x", "skip", "gamma", "bias", NULL}, {"y", "rstd", "sum", NULL}},
         {"skip_rmsnorm_backward", {"dy", "x", "skip", "gamma", "bias", NULL},
          {"dx", "dskip", "dbias", "dgamma", NULL}}},
        srms_case_twin, &b, 1, b.eps,
    };
    if (golden_case_write(G, &gc) != 0)
        goto out;
    fprintf(stderr, "golden: skip_rmsnorm/%s  rows %zu x n %zu, input %s%s, offset %d: ok\n",
            c->name, rows, n, rn_dtype_name(c->in), c->has_bias ? ", bias" : "", c->offset);
    rc = 0;
out:
    json_decref(attrs);
    free(b.x), free(b.skip), free(b.dy), free(b.gamma), free(bias), free(b.y), free(b.sum),
        free(b.rstd);
    free(b.dx), free(b.dskip), free(b.dbias), free(b.dg);
    return rc;
}

static int srms_golden(golden_ctx *G)
{
    for (size_t i = 0; i < NSCASES; i++)
        if (srms_gen_case(G, &SCASES[i]) != 0)
            return -1;
    return 0;
}

/* ---------------------------------------------------------------- registry entries */

const cli_family cli_family_skip_rmsnorm = {
    "skip_rmsnorm",
    "skip_rmsnorm (onnxruntime SkipSimplifiedLayerNormalization): s = x + skip (+ bias), then\n"
    "  RMSNorm of the exact s with eps, axis, offset as above; skip: shape of x; bias (optional):\n"
    "  like gamma; sum: s rounded once, shape of x.  skip_rmsnorm_backward: dy like x;\n"
    "  dx = dskip (shape of x), dbias and dgamma (like gamma) summed over all rows; dbias is\n"
    "  given whether or not a bias is passed.\n",
    srms_golden,
    SRMS_FLAGS,
};

const cli_op cli_op_skip_rmsnorm = {
    "skip_rmsnorm",
    "skip + RMSNorm (onnxruntime SkipSimplifiedLayerNormalization): y, rstd, sum",
    &cli_family_skip_rmsnorm,
    4, {"x", "skip", "gamma", "bias"}, {0, 0, 0, 1},
    4, {{"eps", "1e-5", CLI_ATTR_DECIMAL, 0, 0, NULL},
        {"axis", "-1", CLI_ATTR_INT, -RN_MAX_DIMS, RN_MAX_DIMS, NULL},
        {"offset", "0", CLI_ATTR_INT, 0, 1, NULL}, CLI_EPS_DTYPE_ATTR},
    3, {"y", "rstd", "sum"},
    "specs/error-analysis-residual.md", "ref/skip_rmsnorm_bound.c",
    "overflow in the compute dtype, or a sum that rounding makes zero with eps = 0, "
    "specs/error-analysis-residual.md §8",
    cli_rms_prepare, cli_ln_output_shape, srms_twin, srms_bound, NULL, NULL,
    /* rowwise: skip_rmsnorm_forward_mpfr (ref/skip_rmsnorm_mpfr.c) is the fast path
       (skip_rmsnorm_forward_fast, per row) then, per row left, that row's exact sums and
       rmsnorm_forward_mpfr_exact on one row: y, rstd, sum of row r depend on row r only. */
    CLI_ROWWISE_ROWS, NULL,
};

const cli_op cli_op_skip_rmsnorm_backward = {
    "skip_rmsnorm_backward",
    "skip + RMSNorm backward: dx = dskip, dbias (summed over rows), dgamma",
    &cli_family_skip_rmsnorm,
    5, {"x", "skip", "gamma", "dy", "bias"}, {0, 0, 0, 0, 1},
    4, {{"eps", "1e-5", CLI_ATTR_DECIMAL, 0, 0, NULL},
        {"axis", "-1", CLI_ATTR_INT, -RN_MAX_DIMS, RN_MAX_DIMS, NULL},
        {"offset", "0", CLI_ATTR_INT, 0, 1, NULL}, CLI_EPS_DTYPE_ATTR},
    4, {"dx", "dskip", "dbias", "dgamma"},
    "specs/error-analysis-residual.md", "ref/skip_rmsnorm_bound.c",
    "overflow in the compute dtype (of the sum of squares, or of the rounded sum), "
    "specs/error-analysis-residual.md §9",
    cli_rms_prepare, srms_bwd_output_shape, srms_bwd_twin, srms_bwd_bound, NULL, NULL,
    /* dx = dskip: row r from row r of x, skip and dy, bias, gamma and eps alone (the fast path's
       and the twin's rows); dbias, dgamma: sums over all rows, kept across blocks */
    CLI_ROWWISE_COLUMNS, &srms_bwd_cols,
};
