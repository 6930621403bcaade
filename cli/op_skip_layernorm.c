/* The skip + LayerNorm op family in the `resnorm` registry: `skip_layernorm` (onnxruntime's
 * SkipLayerNormalization: s = x + skip (+ bias), y = LayerNorm(s); outputs y, mean, rstd, sum) and
 * `skip_layernorm_backward` (dx = dskip = LayerNorm's input gradient at s, dbias = its sum over
 * rows, dgamma, dbeta).
 * Adaptors to the twin (ref/skip_layernorm_mpfr.c) and the bound (ref/skip_layernorm_bound.c); the
 * shapes are LayerNorm's (cli/op_layernorm.c), skip like x, bias like gamma.  Golden cases:
 * golden/skip_layernorm/<case>/ (specs/golden-format.md).  Reference: specs/cli.md. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "norm_fast.h"
#include "golden.h"
#include "skip_backward_bound.h"
#include "skip_layernorm_bound.h"
#include "skip_layernorm_mpfr.h"

/* inputs: x, skip, gamma, beta, [bias] */
static const double *bias_of(const cli_job *job) { return cli_optional_in(job, 4); }

static int sln_twin(const cli_job *job, rn_dtype out, double *const *o)
{
    return skip_layernorm_forward_mpfr(o[0], o[1], o[2], o[3], job->in[0].data, job->in[1].data,
                                       job->in[2].data, job->in[3].data, bias_of(job), job->rows,
                                       job->n, job->eps, out);
}

static int sln_bound(const cli_job *job, rn_dtype compute, rn_dtype out, double *const *o)
{
    return skip_layernorm_forward_bound(o[0], o[1], o[2], o[3], job->in[0].data, job->in[1].data,
                                        job->in[2].data, job->in[3].data, bias_of(job), job->rows,
                                        job->n, job->eps, compute, out);
}

/* backward inputs: x, skip, gamma, dy, [bias]; outputs dx, dskip, dbias, dgamma, dbeta */
static const double *bwd_bias_of(const cli_job *job) { return cli_optional_in(job, 4); }

static int sln_bwd_twin(const cli_job *job, rn_dtype out, double *const *o)
{
    return skip_layernorm_backward_mpfr(o[0], o[1], o[2], o[3], o[4], job->in[3].data,
                                        job->in[0].data, job->in[1].data, job->in[2].data,
                                        bwd_bias_of(job), job->rows, job->n, job->eps, out);
}

/* Streaming (cli.h: cli_colsums): dx = dskip of a block of rows; dgamma, dbeta, dbias in columns
   0, 1, 2. */
static int sln_bwd_rows(const cli_job *sub, rn_dtype out, double *const *o, norm_cols *c,
                        int t, unsigned char *row_ok)
{
    int k = layernorm_backward_rows_fast(c, t, o[0], sub->in[3].data, sub->in[0].data,
                                         sub->in[1].data, bwd_bias_of(sub), sub->in[2].data,
                                         sub->rows, sub->n, sub->eps, out, row_ok);
    if (k && o[1]) /* (2: the rows left get both from the caller's twin) */
        memcpy(o[1], o[0], sub->rows * sub->n * sizeof *o[1]);
    return k;
}

/* Check by blocks of rows (cli.h: cli_colsums, bstate_*): the bound's state across the blocks
   (ref/skip_backward_bound.h); dskip's bound is dx's. */
static void *sln_bstate_new(const cli_job *job, rn_dtype compute, const int *need, int threads)
{
    return skip_bwd_bound_new(0, bwd_bias_of(job) != NULL, job->rows, job->n, threads, need,
                              job->eps, 0, compute);
}

/* Shared with skip_rmsnorm_backward (the same inputs x, skip, gamma, dy, [bias]; dskip = dx): one
   block's dx bound, copied to dskip's. */
int cli_skip_bwd_bstate_rows(void *st, const cli_job *sub, int t, size_t b, double *(*o)[CLI_MAX_IO],
                             const double *const *want)
{
    double *bdx[RN_NDTYPES];
    for (int d = 0; d < RN_NDTYPES; d++)
        bdx[d] = o[d][0];
    int rc = skip_bwd_bound_rows(st, t, b, bdx, want[0], sub->in[3].data, sub->in[0].data,
                                 sub->in[1].data, sub->in[2].data, bwd_bias_of(sub), sub->rows);
    for (int d = 0; rc == 0 && d < RN_NDTYPES; d++)
        if (o[d][0] && o[d][1])
            memcpy(o[d][1], o[d][0], sub->rows * sub->n * sizeof *o[d][1]);
    return rc == SKIP_BWD_WHOLE ? CLI_BOUND_WHOLE : rc;
}

static int sln_bstate_cols(void *st, const cli_job *job, rn_dtype out, double *const *o,
                           const double *const *want)
{
    (void)job;
    int rc = skip_bwd_bound_cols(st, out, o[2], o[3], o[4], want[2], want[3], want[4]);
    return rc == SKIP_BWD_WHOLE ? CLI_BOUND_WHOLE : rc;
}

static void sln_bstate_free(void *st) { skip_bwd_bound_free(st); }

static const cli_colsums sln_bwd_cols = {3, 1, {-1, -1, 2, 0, 1}, 1, 3, sln_bwd_rows, 0, 0,
                                         NULL, NULL, sln_bstate_new, cli_skip_bwd_bstate_rows,
                                         sln_bstate_cols, sln_bstate_free};

/* dskip is dx, so its bound is dx's */
static int sln_bwd_bound(const cli_job *job, rn_dtype compute, rn_dtype out, double *const *o)
{
    int rc = skip_layernorm_backward_bound(o[0], o[2], o[3], o[4], job->in[3].data,
                                           job->in[0].data, job->in[1].data, job->in[2].data,
                                           bwd_bias_of(job), job->rows, job->n, job->eps, compute,
                                           out);
    for (size_t i = 0; rc == 0 && i < job->rows * job->n; i++)
        o[1][i] = o[0][i];
    return rc;
}

/* dbias is shaped like gamma (x.shape[axis:]); the rest as LayerNorm's */
static void sln_bwd_output_shape(const cli_job *job, int k, int *ndim, size_t *shape)
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
    S_RANDN,     /* x = shift + xscale randn, skip = kscale randn, gamma = 1 + 0.1 randn, ... */
    S_CONST,     /* constant rows of x and of skip: s constant, var = 0, y == beta */
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
    skind k;
    int has_bias;
    double xscale, xshift, kscale;
} scase;

/* clang-format off */
static const scase SCASES[] = {
    {"gpt2_bias_f32", "GPT-2 width: 4 rows of 768, x, skip = randn, bias = 0.1 randn", "gpt2",
     RN_F32, 2, {4, 768}, -1, "1e-5", S_RANDN, 1, 1.0, 0.0, 1.0},
    {"gpt2_f32", "GPT-2 width, no bias", "gpt2", RN_F32, 2, {4, 768}, -1, "1e-5", S_RANDN, 0, 1.0, 0.0, 1.0},
    {"gpt2_bias_f64", "GPT-2 width, f64", "gpt2", RN_F64, 2, {4, 768}, -1, "1e-5", S_RANDN, 1, 1.0, 0.0, 1.0},
    {"gpt2_bias_f16", "GPT-2 width, f16 inputs", "gpt2 half_input",
     RN_F16, 2, {4, 768}, -1, "1e-5", S_RANDN, 1, 1.0, 0.0, 1.0},
    {"gpt2_bias_bf16", "GPT-2 width, bf16 inputs", "gpt2 half_input",
     RN_BF16, 2, {4, 768}, -1, "1e-5", S_RANDN, 1, 1.0, 0.0, 1.0},
    {"onnx_2345_axis1_f32", "ONNX shape (2,3,4,5), axis 1: 2 rows of 60, bias of shape (3,4,5)", "axis",
     RN_F32, 4, {2, 3, 4, 5}, 1, "1e-5", S_RANDN, 1, 1.0, 0.0, 1.0},
    {"large_mean_n8_f32", "x = 100 + 0.01 randn, skip = 0.01 randn, n = 8: the sum's rounding "
     "(2^-17 at 100) is comparable to the spread", "large_mean small_n",
     RN_F32, 2, {4, 8}, -1, "1e-5", S_RANDN, 1, 0.01, 100.0, 0.01},
    {"large_mean_768_f64", "x = 100 + 0.01 randn, skip = 0.01 randn, n = 768, f64", "large_mean",
     RN_F64, 2, {2, 768}, -1, "1e-5", S_RANDN, 1, 0.01, 100.0, 0.01},
    {"zero_var_f32", "constant rows of x and skip: the sum is constant, y == beta", "zero_variance",
     RN_F32, 2, {4, 16}, -1, "1e-5", S_CONST, 1, 1.0, 0.0, 1.0},
    {"n1_f32", "n = 1: y == beta, rstd = 1/sqrt(eps)", "n1", RN_F32, 2, {5, 1}, -1, "1e-5", S_RANDN, 1,
     1.0, 0.0, 1.0},
    {"nonfinite_f32", "row 0: x NaN; row 1: skip +Inf; row 2: x +Inf, skip -Inf (NaN sum); row 3 "
     "finite", "nonfinite", RN_F32, 2, {4, 8}, -1, "1e-5", S_NONFINITE, 1, 1.0, 0.0, 1.0},
    {"overflow_f32", "row 0: x, skip ~ 2e38: the f32 sum overflows, the exact sum and its LayerNorm "
     "are ordinary (sum in f32 is +-Inf); row 1 ordinary", "overflow huge_scale",
     RN_F32, 2, {2, 8}, -1, "1e-5", S_OVERFLOW, 0, 1.0, 0.0, 1.0},
    {"beyond_f64_f32", "x = 1, skip = 2^-80 k (k small integers), eps 0: x + skip is not a binary64 "
     "value; y = LayerNorm(k), rstd = 2^80 / std(k); a sum rounded to f32 or f64 is constant",
     "exact_sum", RN_F32, 2, {2, 8}, -1, "0", S_BEYOND_F64, 0, 1.0, 0.0, 1.0},
    /* Production widths (n = 768 .. 8192) in the regime of a bug class (flag long_row). */
    {"long_eps_var_768_f32", "x, skip = 0.002 randn, no bias, 2 rows of 768: var(sum) ~ 8e-6 next "
     "to eps 1e-5", "eps_large long_row", RN_F32, 2, {2, 768}, -1, "1e-5", S_RANDN, 0,
     0.002, 0.0, 0.002},
    {"long_mean_2048_f32", "x = 10 + randn, skip = randn, bias, one row of 2048: |mean| / std ~ 7",
     "large_mean long_row", RN_F32, 2, {1, 2048}, -1, "1e-5", S_RANDN, 1, 1.0, 10.0, 1.0},
    {"long_bias_4096_bf16", "x, skip = randn, bias, one row of 4096, bf16 inputs",
     "long_row half_input", RN_BF16, 2, {1, 4096}, -1, "1e-5", S_RANDN, 1, 1.0, 0.0, 1.0},
    {"long_eps_var_8192_f16", "x, skip = 0.002 randn, no bias, one row of 8192, f16 inputs: "
     "var(sum) next to eps", "eps_large long_row half_input", RN_F16, 2, {1, 8192}, -1, "1e-5",
     S_RANDN, 0, 0.002, 0.0, 0.002},
};
/* clang-format on */
#define NSCASES (sizeof SCASES / sizeof SCASES[0])

static const char *const SLN_FLAGS[][2] = {
    {"exact_sum", "the sum x + skip (+ bias) is not representable in binary64: the reference "
                  "normalizes the exact sum; an implementation's rounded sum can differ completely "
                  "(the bound is then void where rounding makes the row constant)"},
    {NULL, NULL},
};

static void sln_gen_inputs(const scase *c, size_t rows, size_t n, double *x, double *skip,
                           double *gamma, double *beta, double *bias, double *dy)
{
    golden_prng g;
    golden_prng_seed(&g, c->name);
    size_t N = rows * n;
    for (size_t i = 0; i < N; i++)
        x[i] = c->xshift + c->xscale * golden_randn(&g);
    for (size_t i = 0; i < N; i++)
        skip[i] = c->kscale * golden_randn(&g);
    for (size_t j = 0; j < n; j++) {
        gamma[j] = 1.0 + 0.1 * golden_randn(&g);
        beta[j] = 0.1 * golden_randn(&g);
        bias[j] = c->has_bias ? 0.1 * golden_randn(&g) : 0.0;
    }
    switch (c->k) {
    case S_RANDN:
        break;
    case S_CONST:
        for (size_t r = 0; r < rows; r++)
            for (size_t j = 0; j < n; j++) {
                x[r * n + j] = 0.5 * (double)r - 1.0;
                skip[r * n + j] = 0.25 * (double)r;
            }
        for (size_t j = 0; j < n; j++)
            bias[j] = 0.0; /* a bias would make the row's sum vary */
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
        dy[i] = rn_round(golden_randn(&g), c->in);
    for (size_t i = 0; i < N; i++) {
        x[i] = rn_round(x[i], c->in);
        skip[i] = rn_round(skip[i], c->in);
    }
    for (size_t j = 0; j < n; j++) {
        gamma[j] = rn_round(gamma[j], c->in);
        beta[j] = rn_round(beta[j], c->in);
        bias[j] = rn_round(bias[j], c->in);
    }
}

/* The buffers of one case, and the twin that fills its outputs for golden_case_write. */
typedef struct {
    golden_rowview v;
    double eps;
    const double *bias; /* NULL without a bias */
    double *x, *skip, *gamma, *beta, *dy, *y, *mean, *rstd, *sum, *dx, *dskip, *dbias, *dg, *dbeta;
} sln_bufs;

static int sln_case_twin(const golden_case *gc, rn_dtype dt)
{
    const sln_bufs *b = gc->arg;
    int t = skip_layernorm_forward_mpfr(b->y, b->mean, b->rstd, b->sum, b->x, b->skip, b->gamma,
                                        b->beta, b->bias, b->v.rows, b->v.n, b->eps, dt);
    if (!t)
        t = skip_layernorm_backward_mpfr(b->dx, b->dskip, b->dbias, b->dg, b->dbeta, b->dy, b->x,
                                         b->skip, b->gamma, b->bias, b->v.rows, b->v.n, b->eps, dt);
    return t;
}

/* One case: files, and its two manifest entries (skip_layernorm/<case>,
   skip_layernorm_backward/<case>, the backward's dy drawn last). */
static int sln_gen_case(golden_ctx *G, const scase *c)
{
    sln_bufs b = {0};
    int nd = c->ndim, rc = -1;
    golden_row_view(nd, c->shape, c->axis, &b.v);
    size_t rows = b.v.rows, n = b.v.n, N = rows * n;
    rn_dtype ed;
    if (golden_eps(c->name, c->eps, NULL, c->in, &b.eps, &ed) != 0)
        return -1;
    b.x = malloc(N * sizeof *b.x), b.skip = malloc(N * sizeof *b.skip);
    b.gamma = malloc(n * sizeof *b.gamma), b.beta = malloc(n * sizeof *b.beta);
    double *bias = malloc(n * sizeof *bias);
    b.y = malloc(N * sizeof *b.y), b.sum = malloc(N * sizeof *b.sum);
    b.mean = malloc(rows * sizeof *b.mean), b.rstd = malloc(rows * sizeof *b.rstd);
    b.dy = malloc(N * sizeof *b.dy), b.dx = malloc(N * sizeof *b.dx);
    b.dskip = malloc(N * sizeof *b.dskip), b.dbias = malloc(n * sizeof *b.dbias);
    b.dg = malloc(n * sizeof *b.dg), b.dbeta = malloc(n * sizeof *b.dbeta);
    json_t *attrs = golden_norm_attrs(c->eps, c->axis, -1, ed);
    if (!b.x || !b.skip || !b.gamma || !b.beta || !bias || !b.y || !b.sum || !b.mean || !b.rstd ||
        !b.dy || !b.dx || !b.dskip || !b.dbias || !b.dg || !b.dbeta) {
        fprintf(stderr, "resnorm golden: out of memory\n");
        goto out;
    }
    sln_gen_inputs(c, rows, n, b.x, b.skip, b.gamma, b.beta, bias, b.dy);
    b.bias = c->has_bias ? bias : NULL;
    int pnd = b.v.pnd;
    const size_t *ps = b.v.pshape, *ss = b.v.sshape, *xs = c->shape;
    golden_case gc = {
        "skip_layernorm", c->name, c->comment, c->flags, c->in, nd, c->shape, attrs,
        6, 9, 2,
        {golden_arr("x", nd, xs, b.x), golden_arr("skip", nd, xs, b.skip),
         golden_arr("gamma", pnd, ps, b.gamma), golden_arr("beta", pnd, ps, b.beta),
         golden_arr("bias", pnd, ps, c->has_bias ? bias : NULL), golden_arr("dy", nd, xs, b.dy)},
        {golden_arr("y", nd, xs, b.y), golden_arr("mean", nd, ss, b.mean),
         golden_arr("rstd", nd, ss, b.rstd), golden_arr("sum", nd, xs, b.sum),
         golden_arr("dx", nd, xs, b.dx), golden_arr("dskip", nd, xs, b.dskip),
         golden_arr("dbias", pnd, ps, b.dbias), golden_arr("dgamma", pnd, ps, b.dg),
         golden_arr("dbeta", pnd, ps, b.dbeta)},
        {{"skip_layernorm", {"x", "skip", "gamma", "beta", "bias", NULL},
          {"y", "mean", "rstd", "sum", NULL}},
         {"skip_layernorm_backward", {"dy", "x", "skip", "gamma", "bias", NULL},
          {"dx", "dskip", "dbias", "dgamma", "dbeta", NULL}}},
        sln_case_twin, &b, 1, b.eps,
    };
    if (golden_case_write(G, &gc) != 0)
        goto out;
    fprintf(stderr, "golden: skip_layernorm/%s  rows %zu x n %zu, input %s%s: ok\n", c->name, rows,
            n, rn_dtype_name(c->in), c->has_bias ? ", bias" : "");
    rc = 0;
out:
    json_decref(attrs);
    free(b.dy), free(b.dx), free(b.dskip), free(b.dbias), free(b.dg), free(b.dbeta);
    free(b.x), free(b.skip), free(b.gamma), free(b.beta), free(bias), free(b.y), free(b.sum),
        free(b.mean), free(b.rstd);
    return rc;
}

static int sln_golden(golden_ctx *G)
{
    for (size_t i = 0; i < NSCASES; i++)
        if (sln_gen_case(G, &SCASES[i]) != 0)
            return -1;
    return 0;
}

/* ---------------------------------------------------------------- registry entries */

const cli_family cli_family_skip_layernorm = {
    "skip_layernorm",
    "skip_layernorm (onnxruntime SkipLayerNormalization): s = x + skip (+ bias), then LayerNorm\n"
    "  of the exact s with eps, axis as above; skip: shape of x; bias (optional): like gamma;\n"
    "  sum: s rounded once, shape of x.  skip_layernorm_backward: dy like x; dx = dskip (shape\n"
    "  of x), dbias, dgamma, dbeta (like gamma) summed over all rows; dbias is given whether or\n"
    "  not a bias is passed.\n",
    sln_golden,
    SLN_FLAGS,
};

const cli_op cli_op_skip_layernorm = {
    "skip_layernorm", "skip + LayerNorm (onnxruntime SkipLayerNormalization): y, mean, rstd, sum",
    &cli_family_skip_layernorm,
    5, {"x", "skip", "gamma", "beta", "bias"}, {0, 0, 0, 0, 1},
    3, {{"eps", "1e-5", CLI_ATTR_DECIMAL, 0, 0, NULL},
        {"axis", "-1", CLI_ATTR_INT, -RN_MAX_DIMS, RN_MAX_DIMS, NULL}, CLI_EPS_DTYPE_ATTR},
    4, {"y", "mean", "rstd", "sum"},
    "specs/error-analysis-residual.md", "ref/skip_layernorm_bound.c",
    "overflow in the compute dtype, or a sum that rounding makes constant, "
    "specs/error-analysis-residual.md §7",
    cli_ln_prepare, cli_ln_output_shape, sln_twin, sln_bound, NULL, NULL,
    /* rowwise: skip_layernorm_forward_mpfr (ref/skip_layernorm_mpfr.c) is the fast path
       (skip_layernorm_forward_fast, per row, with per-thread scratch) then, per row left, the
       exact sums x + skip (+ bias) of that row and layernorm_forward_mpfr_exact on one row:
       y, mean, rstd, sum of row r depend on row r of x and skip and the shared gamma, beta, bias. */
    CLI_ROWWISE_ROWS, NULL,
};

const cli_op cli_op_skip_layernorm_backward = {
    "skip_layernorm_backward",
    "skip + LayerNorm backward: dx = dskip, dbias (summed over rows), dgamma, dbeta",
    &cli_family_skip_layernorm,
    5, {"x", "skip", "gamma", "dy", "bias"}, {0, 0, 0, 0, 1},
    3, {{"eps", "1e-5", CLI_ATTR_DECIMAL, 0, 0, NULL},
        {"axis", "-1", CLI_ATTR_INT, -RN_MAX_DIMS, RN_MAX_DIMS, NULL}, CLI_EPS_DTYPE_ATTR},
    5, {"dx", "dskip", "dbias", "dgamma", "dbeta"},
    "specs/error-analysis-residual.md", "ref/skip_layernorm_bound.c",
    "overflow in the compute dtype, or a sum that rounding makes constant, "
    "specs/error-analysis-residual.md §9",
    cli_ln_prepare, sln_bwd_output_shape, sln_bwd_twin, sln_bwd_bound, NULL, NULL,
    /* dx = dskip: row r from row r of x, skip and dy, bias, gamma and eps alone (the fast path's
       and the twin's rows); dbias, dgamma, dbeta: sums over all rows, kept across blocks */
    CLI_ROWWISE_COLUMNS, &sln_bwd_cols,
};
