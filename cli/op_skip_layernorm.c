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
#include "golden.h"
#include "skip_layernorm_bound.h"
#include "skip_layernorm_mpfr.h"

/* inputs: x, skip, gamma, beta, [bias] */
static const double *bias_of(const cli_job *job)
{
    return job->in_path[4] ? job->in[4].data : NULL;
}

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
static const double *bwd_bias_of(const cli_job *job)
{
    return job->in_path[4] ? job->in[4].data : NULL;
}

static int sln_bwd_twin(const cli_job *job, rn_dtype out, double *const *o)
{
    return skip_layernorm_backward_mpfr(o[0], o[1], o[2], o[3], o[4], job->in[3].data,
                                        job->in[0].data, job->in[1].data, job->in[2].data,
                                        bwd_bias_of(job), job->rows, job->n, job->eps, out);
}

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

static int sln_gen_case(golden_ctx *G, const scase *c)
{
    const char *out = G->out;
    int nd = c->ndim, axis = c->axis < 0 ? c->axis + nd : c->axis;
    size_t rows = 1, n = 1, pshape[4], sshape[4];
    int pnd = nd - axis;
    for (int i = 0; i < nd; i++) {
        if (i < axis)
            rows *= c->shape[i];
        else
            n *= c->shape[i];
        if (i >= axis)
            pshape[i - axis] = c->shape[i];
        sshape[i] = i < axis ? c->shape[i] : 1;
    }
    double eps;
    if (rn_parse_eps(c->eps, c->in, &eps) != 0) {
        fprintf(stderr, "resnorm golden: %s: bad eps '%s'\n", c->name, c->eps);
        return -1;
    }
    size_t N = rows * n;
    double *x = malloc(N * sizeof *x), *skip = malloc(N * sizeof *skip),
           *gamma = malloc(n * sizeof *gamma), *beta = malloc(n * sizeof *beta),
           *bias = malloc(n * sizeof *bias), *y = malloc(N * sizeof *y),
           *sum = malloc(N * sizeof *sum), *mean = malloc(rows * sizeof *mean),
           *rstd = malloc(rows * sizeof *rstd), *dy = malloc(N * sizeof *dy),
           *dx = malloc(N * sizeof *dx), *dskip = malloc(N * sizeof *dskip),
           *dbias = malloc(n * sizeof *dbias), *dg = malloc(n * sizeof *dg),
           *dbeta = malloc(n * sizeof *dbeta);
    json_t *in = json_object(), *ex = json_object(), *res = json_object(), *sha = json_object(),
           *e = json_object();
    /* the backward entry (skip_layernorm_backward/<case>): inputs x, skip, gamma, dy, [bias] */
    json_t *in_b = json_object(), *ex_b = json_object(), *sha_b = json_object(), *eb = json_object();
    int rc = -1;
    char dir[512], path[4096];
    if (!x || !skip || !gamma || !beta || !bias || !y || !sum || !mean || !rstd || !dy || !dx ||
        !dskip || !dbias || !dg || !dbeta) {
        fprintf(stderr, "resnorm golden: out of memory\n");
        goto out;
    }
    sln_gen_inputs(c, rows, n, x, skip, gamma, beta, bias, dy);
    snprintf(dir, sizeof dir, "skip_layernorm/%s", c->name);
    snprintf(path, sizeof path, "%s/%s", out, dir);
    if (golden_mkdirs(path) != 0) {
        fprintf(stderr, "resnorm golden: cannot create %s: %s\n", path, strerror(errno));
        goto out;
    }
    if (golden_put(out, dir, "", "x", c->in, nd, c->shape, x, in, sha, sha_b) ||
        golden_put(out, dir, "", "skip", c->in, nd, c->shape, skip, in, sha, sha_b) ||
        golden_put(out, dir, "", "gamma", c->in, pnd, pshape, gamma, in, sha, sha_b) ||
        golden_put(out, dir, "", "beta", c->in, pnd, pshape, beta, in, sha, NULL) ||
        (c->has_bias &&
         golden_put(out, dir, "", "bias", c->in, pnd, pshape, bias, in, sha, sha_b)) ||
        golden_put(out, dir, "", "dy", c->in, nd, c->shape, dy, in_b, sha_b, NULL))
        goto out;
    json_object_set(in_b, "x", json_object_get(in, "x"));
    json_object_set(in_b, "skip", json_object_get(in, "skip"));
    json_object_set(in_b, "gamma", json_object_get(in, "gamma"));
    if (c->has_bias)
        json_object_set(in_b, "bias", json_object_get(in, "bias"));
    for (int d = 0; d < RN_NDTYPES; d++) {
        rn_dtype dt = (rn_dtype)d;
        char sub[16];
        snprintf(sub, sizeof sub, "%s/", rn_dtype_name(dt));
        snprintf(path, sizeof path, "%s/%s/%s", out, dir, rn_dtype_name(dt));
        if (golden_mkdirs(path) != 0) {
            fprintf(stderr, "resnorm golden: cannot create %s\n", path);
            goto out;
        }
        int t = skip_layernorm_forward_mpfr(y, mean, rstd, sum, x, skip, gamma, beta,
                                            c->has_bias ? bias : NULL, rows, n, eps, dt);
        if (!t)
            t = skip_layernorm_backward_mpfr(dx, dskip, dbias, dg, dbeta, dy, x, skip, gamma,
                                             c->has_bias ? bias : NULL, rows, n, eps, dt);
        if (t) {
            fprintf(stderr, "resnorm golden: %s/%s: the twin %s\n", c->name, rn_dtype_name(dt),
                    t == RN_TWIN_NOMEM ? "ran out of memory" : "could not certify an output");
            goto out;
        }
        json_t *p = json_object();
        json_object_set_new(ex, rn_dtype_name(dt), p);
        json_object_set_new(res, rn_dtype_name(dt), json_string("valid"));
        if (golden_put(out, dir, sub, "y", dt, nd, c->shape, y, p, sha, NULL) ||
            golden_put(out, dir, sub, "mean", dt, nd, sshape, mean, p, sha, NULL) ||
            golden_put(out, dir, sub, "rstd", dt, nd, sshape, rstd, p, sha, NULL) ||
            golden_put(out, dir, sub, "sum", dt, nd, c->shape, sum, p, sha, NULL))
            goto out;
        json_t *pb = json_object();
        json_object_set_new(ex_b, rn_dtype_name(dt), pb);
        if (golden_put(out, dir, sub, "dx", dt, nd, c->shape, dx, pb, sha_b, NULL) ||
            golden_put(out, dir, sub, "dskip", dt, nd, c->shape, dskip, pb, sha_b, NULL) ||
            golden_put(out, dir, sub, "dbias", dt, pnd, pshape, dbias, pb, sha_b, NULL) ||
            golden_put(out, dir, sub, "dgamma", dt, pnd, pshape, dg, pb, sha_b, NULL) ||
            golden_put(out, dir, sub, "dbeta", dt, pnd, pshape, dbeta, pb, sha_b, NULL))
            goto out;
    }
    char id[512];
    snprintf(id, sizeof id, "skip_layernorm/%s", c->name);
    json_object_set_new(e, "id", json_string(id));
    json_object_set_new(e, "op", json_string("skip_layernorm"));
    json_object_set_new(e, "comment", json_string(c->comment));
    json_object_set_new(e, "flags", golden_flags_json(c->flags));
    json_t *attrs = json_object();
    json_object_set_new(attrs, "eps", json_string(c->eps));
    json_object_set_new(attrs, "axis", json_integer(c->axis));
    json_object_set_new(e, "attrs", attrs);
    json_object_set_new(e, "shape", golden_shape_json(nd, c->shape));
    json_object_set_new(e, "input_dtype", json_string(rn_dtype_name(c->in)));
    json_object_set(e, "inputs", in);
    json_object_set(e, "expected", ex);
    json_object_set(e, "result", res);
    json_object_set(e, "sha256", sha);
    json_array_append(G->cases, e);
    /* the backward entry: the same fields, after the forward's (whose bytes do not change) */
    snprintf(id, sizeof id, "skip_layernorm_backward/%s", c->name);
    json_object_set_new(eb, "id", json_string(id));
    json_object_set_new(eb, "op", json_string("skip_layernorm_backward"));
    json_object_set_new(eb, "comment", json_string(c->comment));
    json_object_set_new(eb, "flags", golden_flags_json(c->flags));
    json_object_set(eb, "attrs", attrs);
    json_object_set_new(eb, "shape", golden_shape_json(nd, c->shape));
    json_object_set_new(eb, "input_dtype", json_string(rn_dtype_name(c->in)));
    json_object_set(eb, "inputs", in_b);
    json_object_set(eb, "expected", ex_b);
    json_object_set(eb, "result", res);
    json_object_set(eb, "sha256", sha_b);
    json_array_append(G->cases, eb);
    G->ncases++;
    fprintf(stderr, "golden: skip_layernorm/%s  rows %zu x n %zu, input %s%s: ok\n", c->name, rows,
            n, rn_dtype_name(c->in), c->has_bias ? ", bias" : "");
    rc = 0;
out:
    json_decref(in), json_decref(ex), json_decref(res), json_decref(sha), json_decref(e);
    json_decref(in_b), json_decref(ex_b), json_decref(sha_b), json_decref(eb);
    free(dy), free(dx), free(dskip), free(dbias), free(dg), free(dbeta);
    free(x), free(skip), free(gamma), free(beta), free(bias), free(y), free(sum), free(mean),
        free(rstd);
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
    2, {{"eps", "1e-5", CLI_ATTR_DECIMAL, 0, 0}, {"axis", "-1", CLI_ATTR_INT, -RN_MAX_DIMS, RN_MAX_DIMS}},
    4, {"y", "mean", "rstd", "sum"},
    "specs/error-analysis-residual.md", "ref/skip_layernorm_bound.c",
    "overflow in the compute dtype, or a sum that rounding makes constant, "
    "specs/error-analysis-residual.md §7",
    cli_ln_prepare, cli_ln_output_shape, sln_twin, sln_bound,
};

const cli_op cli_op_skip_layernorm_backward = {
    "skip_layernorm_backward",
    "skip + LayerNorm backward: dx = dskip, dbias (summed over rows), dgamma, dbeta",
    &cli_family_skip_layernorm,
    5, {"x", "skip", "gamma", "dy", "bias"}, {0, 0, 0, 0, 1},
    2, {{"eps", "1e-5", CLI_ATTR_DECIMAL, 0, 0}, {"axis", "-1", CLI_ATTR_INT, -RN_MAX_DIMS, RN_MAX_DIMS}},
    5, {"dx", "dskip", "dbias", "dgamma", "dbeta"},
    "specs/error-analysis-residual.md", "ref/skip_layernorm_bound.c",
    "overflow in the compute dtype, or a sum that rounding makes constant, "
    "specs/error-analysis-residual.md §9",
    cli_ln_prepare, sln_bwd_output_shape, sln_bwd_twin, sln_bwd_bound,
};
