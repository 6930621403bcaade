/* The LayerNorm op family in the `resnorm` registry: `layernorm` and `layernorm_backward`.
 * Adaptors from the command line's loaded arrays to the twin (ref/layernorm_mpfr.c) and the bound
 * (ref/layernorm_bound.c), the shapes of ONNX LayerNormalization, and the family's golden cases
 * (golden/layernorm/<case>/, specs/golden-format.md).  Reference: specs/cli.md. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "norm_fast.h"
#include "golden.h"
#include "layernorm_bound.h"
#include "layernorm_mpfr.h"

enum { A_EPS = 0, A_AXIS = 1 }; /* attribute indices, as in the table at the end */

/* ---------------------------------------------------------------- CLI adaptors */

/* Shapes (ONNX): x viewed as rows x n over dims axis..end; gamma, beta (and skip_layernorm's bias):
   x.shape[axis:] or 1-D of length n; dy (and skip): x.shape; eps: its text rounded once to
   eps_dtype (cli_resolve_eps).  Optional inputs not given are skipped.  Shared with cli/op_skip_layernorm.c. */
int cli_ln_prepare(cli_job *job)
{
    const char *verb = job->verb;
    const cli_op *op = job->op;
    char s1[160], s2[160];
    const rn_array *x = &job->in[0];
    if (x->ndim == 0) {
        cli_error(verb, "input x (%s): a scalar; LayerNorm needs at least one dimension",
                  job->in_path[0]);
        return RN_EXIT_USAGE;
    }
    long axis = job->attr_int[A_AXIS];
    if (axis < -(long)x->ndim || axis >= (long)x->ndim) {
        cli_error(verb, "attribute axis=%ld out of range for x (%s) of %d dimensions (valid: "
                  "%d..%d)", axis, job->in_path[0], x->ndim, -x->ndim, x->ndim - 1);
        return RN_EXIT_USAGE;
    }
    job->ax = (int)(axis < 0 ? axis + x->ndim : axis);
    job->rows = 1;
    job->n = 1;
    for (int i = 0; i < x->ndim; i++) {
        if (i < job->ax)
            job->rows *= x->shape[i];
        else
            job->n *= x->shape[i];
    }
    if (job->n == 0) {
        cli_error(verb, "input x (%s): nothing to normalize (x.shape[axis:] has a zero dimension)",
                  job->in_path[0]);
        return RN_EXIT_USAGE;
    }
    int pnd = x->ndim - job->ax;
    const size_t *pshape = x->shape + job->ax;
    for (int k = 1; k < op->ninputs; k++) {
        const rn_array *a = &job->in[k];
        const char *nm = op->inputs[k];
        int ok, like_x = !strcmp(nm, "dy") || !strcmp(nm, "skip");
        if (!job->in_path[k])
            continue;
        if (like_x) {
            ok = cli_same_shape(a->ndim, a->shape, x->ndim, x->shape);
            cli_shape_str(s2, sizeof s2, x->ndim, x->shape);
        } else {
            ok = cli_same_shape(a->ndim, a->shape, pnd, pshape) ||
                 (a->ndim == 1 && a->shape[0] == job->n);
            cli_shape_str(s2, sizeof s2, pnd, pshape);
        }
        if (!ok) {
            cli_shape_str(s1, sizeof s1, a->ndim, a->shape);
            cli_error(verb, "input %s (%s): shape %s does not match %s %s", nm, job->in_path[k],
                      s1, like_x ? "x.shape" : "x.shape[axis:]", s2);
            return RN_EXIT_USAGE;
        }
    }
    int rc = cli_resolve_eps(job, A_EPS, cli_attr_index(op, "eps_dtype"));
    if (rc)
        return rc;
    job->attr_value[A_AXIS] = job->ax;
    return 0;
}

/* y, dx (and sum): x.shape; mean, rstd: x.shape[:axis] + [1]*(ndim-axis); dgamma, dbeta:
   x.shape[axis:].  Shared with cli/op_skip_layernorm.c. */
void cli_ln_output_shape(const cli_job *job, int k, int *ndim, size_t *shape)
{
    const rn_array *x = &job->in[0];
    const char *name = job->op->outputs[k];
    *ndim = x->ndim;
    if (!strcmp(name, "mean") || !strcmp(name, "rstd")) {
        for (int i = 0; i < x->ndim; i++)
            shape[i] = i < job->ax ? x->shape[i] : 1;
    } else if (!strcmp(name, "dgamma") || !strcmp(name, "dbeta")) {
        *ndim = x->ndim - job->ax;
        for (int i = job->ax; i < x->ndim; i++)
            shape[i - job->ax] = x->shape[i];
    } else { /* y, dx, sum */
        memcpy(shape, x->shape, sizeof(size_t) * (size_t)x->ndim);
    }
}

/* inputs: x, gamma, beta (forward) or x, gamma, dy (backward) */
static int ln_twin(const cli_job *job, rn_dtype out, double *const *o)
{
    const double *x = job->in[0].data, *g = job->in[1].data, *b = job->in[2].data;
    return layernorm_forward_mpfr(o[0], o[1], o[2], x, g, b, job->rows, job->n, job->eps, out);
}

static int ln_bwd_twin(const cli_job *job, rn_dtype out, double *const *o)
{
    const double *x = job->in[0].data, *g = job->in[1].data, *dy = job->in[2].data;
    return layernorm_backward_mpfr(o[0], o[1], o[2], dy, x, g, job->rows, job->n, job->eps, out);
}

/* Streaming (cli.h: cli_colsums): dx of a block of rows; dgamma, dbeta in columns 0, 1. */
static int ln_bwd_rows(const cli_job *sub, rn_dtype out, double *const *o, norm_cols *c,
                       int t, unsigned char *row_ok)
{
    const double *x = sub->in[0].data, *g = sub->in[1].data, *dy = sub->in[2].data;
    return layernorm_backward_rows_fast(c, t, o[0], dy, x, NULL, NULL, g, sub->rows, sub->n,
                                        sub->eps, out, row_ok);
}


static int ln_bound(const cli_job *job, rn_dtype compute, rn_dtype out, double *const *o)
{
    const double *x = job->in[0].data, *g = job->in[1].data, *b = job->in[2].data;
    return layernorm_forward_bound(o[0], o[1], o[2], x, g, b, job->rows, job->n, job->eps,
                                   compute, out);
}

static int ln_bwd_bound(const cli_job *job, rn_dtype compute, rn_dtype out, double *const *o)
{
    const double *x = job->in[0].data, *g = job->in[1].data, *dy = job->in[2].data;
    return layernorm_backward_bound(o[0], o[1], o[2], dy, x, g, job->rows, job->n, job->eps,
                                    compute, out);
}

/* Check by blocks of rows (cli.h: cli_colsums): dx's bounds of a block, and the column bounds. */
static int ln_bwd_bound_rows(const cli_job *sub, rn_dtype compute, rn_dtype out,
                             double *const *o, double *cs, unsigned char *cf)
{
    const double *x = sub->in[0].data, *g = sub->in[1].data, *dy = sub->in[2].data;
    return layernorm_backward_bound_rows(o[0], cs, cf, dy, x, g, sub->rows, sub->n, sub->eps,
                                         compute, out);
}

static void ln_bwd_bound_cols(const cli_job *job, rn_dtype compute, rn_dtype out,
                              double *const *o, double *cs, unsigned char *cf, size_t nb)
{
    layernorm_backward_bound_cols(o[1], o[2], cs, cf, nb, job->rows, job->n, compute, out);
}

static const cli_colsums ln_bwd_cols = {2, 0, {-1, 0, 1}, 1, 2, ln_bwd_rows,
                                        LN_BWD_BOUND_SUMS, LN_BWD_BOUND_FLAGS,
                                        ln_bwd_bound_rows, ln_bwd_bound_cols,
                                        NULL, NULL, NULL, NULL};

/* ---------------------------------------------------------------- golden cases */

typedef enum {
    K_RANDN,       /* x = shift + scale randn; gamma = gshift + gscale randn; beta = bscale randn */
    K_CONST_ROWS,  /* row r of x is the constant cval[r % 4] */
    K_NONFINITE_X, /* rows with NaN / +Inf / -Inf / both / none */
    K_NONFINITE_P, /* finite x (last row constant); gamma, beta with Inf and NaN */
    K_NONFINITE_DY /* finite x, gamma, beta; dy with an Inf and a NaN */
} kind;

typedef struct {
    const char *name;    /* directory name and id suffix */
    const char *comment;
    const char *flags;   /* space-separated */
    rn_dtype in;
    int ndim;
    size_t shape[4];
    int axis;            /* ONNX axis as written in the manifest (may be negative) */
    const char *eps;
    kind k;
    double scale, shift, gscale, gshift, bscale;
} gcase;

static const double cval[4] = {1.0, 0.1, -3.5, 0.0};

#define RANDN_STD 1.0, 0.0, 0.1, 1.0, 0.1

/* clang-format off */
static const gcase CASES[] = {
#define ONNX_AXIS(nm, ax, dt, cmt) \
    {nm, cmt, "axis", dt, 4, {2, 3, 4, 5}, ax, "1e-5", K_RANDN, RANDN_STD}
    ONNX_AXIS("onnx_2345_axis0_f32", 0, RN_F32, "ONNX shape (2,3,4,5), axis 0: one row of 120"),
    ONNX_AXIS("onnx_2345_axis0_f64", 0, RN_F64, "ONNX shape (2,3,4,5), axis 0: one row of 120"),
    ONNX_AXIS("onnx_2345_axis1_f32", 1, RN_F32, "ONNX shape (2,3,4,5), axis 1: 2 rows of 60"),
    ONNX_AXIS("onnx_2345_axis1_f64", 1, RN_F64, "ONNX shape (2,3,4,5), axis 1: 2 rows of 60"),
    ONNX_AXIS("onnx_2345_axis2_f32", 2, RN_F32, "ONNX shape (2,3,4,5), axis 2: 6 rows of 20"),
    ONNX_AXIS("onnx_2345_axis2_f64", 2, RN_F64, "ONNX shape (2,3,4,5), axis 2: 6 rows of 20"),
    ONNX_AXIS("onnx_2345_axis3_f32", 3, RN_F32, "ONNX shape (2,3,4,5), axis 3: 24 rows of 5"),
    ONNX_AXIS("onnx_2345_axis3_f64", 3, RN_F64, "ONNX shape (2,3,4,5), axis 3: 24 rows of 5"),
    ONNX_AXIS("onnx_2345_axism1_f32", -1, RN_F32, "ONNX shape (2,3,4,5), axis -1 (= 3): 24 rows of 5"),
    ONNX_AXIS("onnx_2345_axism1_f16", -1, RN_F16, "ONNX shape (2,3,4,5), axis -1, f16 inputs"),
    ONNX_AXIS("onnx_2345_axism1_bf16", -1, RN_BF16, "ONNX shape (2,3,4,5), axis -1, bf16 inputs"),
#undef ONNX_AXIS
    {"onnx_34_eps0p1_f32", "ONNX shape (3,4), eps 0.1 (comparable to the variance)", "eps_large small_n",
     RN_F32, 2, {3, 4}, -1, "0.1", K_RANDN, 0.5, 0.0, 0.1, 1.0, 0.1},
    {"onnx_34_eps0p1_f64", "ONNX shape (3,4), eps 0.1 (comparable to the variance)", "eps_large small_n",
     RN_F64, 2, {3, 4}, -1, "0.1", K_RANDN, 0.5, 0.0, 0.1, 1.0, 0.1},
    {"onnx_235_eps0p1_f32", "ONNX shape (2,3,5), eps 0.1", "eps_large small_n",
     RN_F32, 3, {2, 3, 5}, -1, "0.1", K_RANDN, 0.5, 0.0, 0.1, 1.0, 0.1},
    {"onnx_235_eps0p1_f64", "ONNX shape (2,3,5), eps 0.1", "eps_large small_n",
     RN_F64, 3, {2, 3, 5}, -1, "0.1", K_RANDN, 0.5, 0.0, 0.1, 1.0, 0.1},
    {"small_n2_f32", "rows of 2: the unbiased variance is twice the biased one", "small_n",
     RN_F32, 2, {4, 2}, -1, "1e-5", K_RANDN, RANDN_STD},
    {"small_n2_f64", "rows of 2: the unbiased variance is twice the biased one", "small_n",
     RN_F64, 2, {4, 2}, -1, "1e-5", K_RANDN, RANDN_STD},
    {"gpt2_row_f32", "GPT-2 width: 4 rows of 768, randn x, gamma ~ 1 + 0.1 randn, beta ~ 0.1 randn", "gpt2",
     RN_F32, 2, {4, 768}, -1, "1e-5", K_RANDN, RANDN_STD},
    {"gpt2_row_f64", "GPT-2 width: 4 rows of 768, randn x", "gpt2",
     RN_F64, 2, {4, 768}, -1, "1e-5", K_RANDN, RANDN_STD},
    {"gpt2_row_f16", "GPT-2 width: 4 rows of 768, f16 inputs (eps 1e-5 in f32, not the f16 subnormal 168 * 2^-24)",
     "gpt2 half_input", RN_F16, 2, {4, 768}, -1, "1e-5", K_RANDN, RANDN_STD},
    {"gpt2_row_bf16", "GPT-2 width: 4 rows of 768, bf16 inputs", "gpt2 half_input",
     RN_BF16, 2, {4, 768}, -1, "1e-5", K_RANDN, RANDN_STD},
    {"large_mean_768_f32", "x = 100 + 0.01 randn, n = 768: |mean| / std = 1e4", "large_mean",
     RN_F32, 2, {2, 768}, -1, "1e-5", K_RANDN, 0.01, 100.0, 0.1, 1.0, 0.1},
    {"large_mean_768_f64", "x = 100 + 0.01 randn, n = 768", "large_mean",
     RN_F64, 2, {2, 768}, -1, "1e-5", K_RANDN, 0.01, 100.0, 0.1, 1.0, 0.1},
    {"large_mean_n8_f32", "x = 100 + 0.01 randn, n = 8", "large_mean small_n",
     RN_F32, 2, {4, 8}, -1, "1e-5", K_RANDN, 0.01, 100.0, 0.1, 1.0, 0.1},
    {"large_mean_n8_f64", "x = 100 + 0.01 randn, n = 8", "large_mean small_n",
     RN_F64, 2, {4, 8}, -1, "1e-5", K_RANDN, 0.01, 100.0, 0.1, 1.0, 0.1},
    {"large_mean_40000_f32", "x = 40000 + 0.01 randn, n = 768 (f32 spacing at 40000 is 2^-8)",
     "large_mean", RN_F32, 2, {2, 768}, -1, "1e-5", K_RANDN, 0.01, 40000.0, 0.1, 1.0, 0.1},
    {"large_mean_40000_f64", "x = 40000 + 0.01 randn, n = 768", "large_mean",
     RN_F64, 2, {2, 768}, -1, "1e-5", K_RANDN, 0.01, 40000.0, 0.1, 1.0, 0.1},
    {"large_mean_40000_n8_f32", "x = 40000 + 0.01 randn, n = 8", "large_mean small_n",
     RN_F32, 2, {4, 8}, -1, "1e-5", K_RANDN, 0.01, 40000.0, 0.1, 1.0, 0.1},
    {"zero_var_rows_f32", "constant rows 1.0, 0.1, -3.5, 0.0 (n = 16): var = 0, y == beta exactly",
     "zero_variance", RN_F32, 2, {4, 16}, -1, "1e-5", K_CONST_ROWS, RANDN_STD},
    {"zero_var_rows_f64", "constant rows 1.0, 0.1, -3.5, 0.0 (n = 16)", "zero_variance",
     RN_F64, 2, {4, 16}, -1, "1e-5", K_CONST_ROWS, RANDN_STD},
    {"zero_var_rows_f16", "constant rows 1.0, 0.1, -3.5, 0.0 (n = 16), f16 inputs",
     "zero_variance half_input", RN_F16, 2, {4, 16}, -1, "1e-5", K_CONST_ROWS, RANDN_STD},
    {"zero_var_rows_bf16", "constant rows 1.0, 0.1, -3.5, 0.0 (n = 16), bf16 inputs",
     "zero_variance half_input", RN_BF16, 2, {4, 16}, -1, "1e-5", K_CONST_ROWS, RANDN_STD},
    {"zero_var_768_f32", "constant rows 1.0 and 0.1 of width 768 (0.1 is inexact: a summed mean is "
     "not exactly 0.1)", "zero_variance", RN_F32, 2, {2, 768}, -1, "1e-5", K_CONST_ROWS, RANDN_STD},
    {"zero_var_768_f64", "constant rows 1.0 and 0.1 of width 768", "zero_variance",
     RN_F64, 2, {2, 768}, -1, "1e-5", K_CONST_ROWS, RANDN_STD},
    {"n1_f32", "n = 1: x - mean = 0, y == beta, rstd = 1/sqrt(eps)", "n1",
     RN_F32, 2, {5, 1}, -1, "1e-5", K_RANDN, RANDN_STD},
    {"n1_f64", "n = 1: x - mean = 0, y == beta, rstd = 1/sqrt(eps)", "n1",
     RN_F64, 2, {5, 1}, -1, "1e-5", K_RANDN, RANDN_STD},
    {"tiny_scale_f32", "x = 1e-30 randn, gamma = 1e-12 randn, beta = 0: f32-subnormal y",
     "tiny_scale subnormal", RN_F32, 2, {3, 64}, -1, "1e-5", K_RANDN, 1e-30, 0.0, 1e-12, 0.0, 0.0},
    {"tiny_subnormal_x_f32", "x = 1e-40 randn (f32 subnormals), beta = 0: subnormal mean and y",
     "tiny_scale subnormal", RN_F32, 2, {3, 64}, -1, "1e-5", K_RANDN, 1e-40, 0.0, 0.1, 1.0, 0.0},
    {"tiny_scale_f64", "x = 1e-300 randn, gamma = 1e-20 randn, beta = 0: f64-subnormal y",
     "tiny_scale subnormal", RN_F64, 2, {3, 64}, -1, "1e-5", K_RANDN, 1e-300, 0.0, 1e-20, 0.0, 0.0},
    {"huge_scale_f32", "x = 1e30 randn: (x - mean)^2 overflows f32, the exact result is ordinary",
     "huge_scale", RN_F32, 2, {3, 64}, -1, "1e-5", K_RANDN, 1e30, 0.0, 0.1, 1.0, 0.1},
    {"huge_scale_f64", "x = 1e30 randn in f64", "huge_scale",
     RN_F64, 2, {3, 64}, -1, "1e-5", K_RANDN, 1e30, 0.0, 0.1, 1.0, 0.1},
    {"huge_scale_1e18_f32", "x = 1e18 randn: squares near but below the f32 range", "huge_scale",
     RN_F32, 2, {3, 64}, -1, "1e-5", K_RANDN, 1e18, 0.0, 0.1, 1.0, 0.1},
    {"nonfinite_x_f32", "rows of x with NaN, +Inf, -Inf, +Inf and -Inf, then two finite rows",
     "nonfinite", RN_F32, 2, {6, 8}, -1, "1e-5", K_NONFINITE_X, RANDN_STD},
    {"nonfinite_x_f64", "rows of x with NaN, +Inf, -Inf, +Inf and -Inf, then two finite rows",
     "nonfinite", RN_F64, 2, {6, 8}, -1, "1e-5", K_NONFINITE_X, RANDN_STD},
    {"nonfinite_x_f16", "rows of x with NaN, +Inf, -Inf, both, then finite rows; f16 inputs",
     "nonfinite half_input", RN_F16, 2, {6, 8}, -1, "1e-5", K_NONFINITE_X, RANDN_STD},
    {"nonfinite_params_f32", "gamma[1] = +Inf, beta[1] = -Inf, beta[2] = +Inf, gamma[4] = NaN, "
     "beta[6] = NaN; last row constant (0 * Inf)", "nonfinite",
     RN_F32, 2, {4, 8}, -1, "1e-5", K_NONFINITE_P, RANDN_STD},
    {"nonfinite_params_f64", "gamma/beta with Inf and NaN (as nonfinite_params_f32)", "nonfinite",
     RN_F64, 2, {4, 8}, -1, "1e-5", K_NONFINITE_P, RANDN_STD},
    {"nonfinite_dy_f32", "dy[1][3] = +Inf, dy[2][5] = NaN, dy[3][3] = -Inf (backward)", "nonfinite",
     RN_F32, 2, {4, 8}, -1, "1e-5", K_NONFINITE_DY, RANDN_STD},
    /* Production widths (n = 768 .. 8192), each in the regime of a bug class: var next to eps
       (eps outside the sqrt, a wrong eps, the unbiased variance whose effect is 1/(2n)), a mean
       large against the spread (one-pass variance) -- so that long-row code paths are tested. */
    {"long_eps_var_768_f32", "x = 0.003 randn, 2 rows of 768 (GPT-2): var ~ 9e-6 next to eps 1e-5",
     "eps_large long_row", RN_F32, 2, {2, 768}, -1, "1e-5", K_RANDN, 0.003, 0.0, 0.1, 1.0, 0.1},
    {"long_mean_2048_f32", "x = 10 + randn, 2 rows of 2048: |mean| / std = 10, E[x^2] - E[x]^2 "
     "loses ~7 bits in f32", "large_mean long_row", RN_F32, 2, {2, 2048}, -1, "1e-5", K_RANDN,
     1.0, 10.0, 0.1, 1.0, 0.1},
    {"long_eps_var_2048_f16", "x = 0.003 randn, one row of 2048, f16 inputs: var next to eps",
     "eps_large long_row half_input", RN_F16, 2, {1, 2048}, -1, "1e-5", K_RANDN,
     0.003, 0.0, 0.1, 1.0, 0.1},
    {"long_mean_2048_f64", "x = 1000 + 0.01 randn, one row of 2048, f64: |mean| / std = 1e5, the "
     "f64 one-pass variance is off by ~1e-6 relative", "large_mean long_row", RN_F64, 2, {1, 2048},
     -1, "1e-5", K_RANDN, 0.01, 1000.0, 0.1, 1.0, 0.1},
    {"long_eps_var_4096_bf16", "x = 0.003 randn, one row of 4096 (Llama-7B width), bf16 inputs",
     "eps_large long_row half_input", RN_BF16, 2, {1, 4096}, -1, "1e-5", K_RANDN,
     0.003, 0.0, 0.1, 1.0, 0.1},
    {"long_eps_var_8192_f32", "x = 0.003 randn, one row of 8192 (Llama-70B width): var next to eps",
     "eps_large long_row", RN_F32, 2, {1, 8192}, -1, "1e-5", K_RANDN, 0.003, 0.0, 0.1, 1.0, 0.1},
};
/* clang-format on */
#define NCASES (sizeof CASES / sizeof CASES[0])

static const char *const LN_FLAGS[][2] = {
    {"axis", "normalization over several trailing dimensions (ONNX axis): catches implementations "
             "that normalize the last dimension only or mishandle negative axes"},
    {"eps_large", "eps (0.1) comparable to the variance: catches eps added outside the square root, "
                  "added to the standard deviation, or ignored"},
    {"small_n", "few elements per row: catches the unbiased (n-1) variance"},
    {"gpt2", "a realistic transformer width (n = 768)"},
    {"half_input", "f16 or bf16 inputs (eps is rounded to f32: attrs.eps_dtype)"},
    {"large_mean", "|mean| much larger than the standard deviation: catches the one-pass variance "
                   "E[x^2] - E[x]^2 (catastrophic cancellation) and an inaccurate mean"},
    {"zero_variance", "constant rows: var = 0 and y == beta exactly; catches var + eps mishandled "
                      "and division by the standard deviation without eps"},
    {"n1", "one element per row: x - mean = 0, rstd = 1/sqrt(eps)"},
    {"tiny_scale", "values near the bottom of the range: catches squares that underflow and "
                   "flush-to-zero"},
    {"subnormal", "expected outputs in the subnormal range of some output dtype"},
    {"huge_scale", "large magnitudes (|x| ~ 1e18 to 1e30): in f32 the squares (x - mean)^2 overflow "
                   "(1e30) or nearly (1e18) while the exact result is ordinary; catches unscaled "
                   "variance computations"},
    {"nonfinite", "NaN / Inf inputs, with the propagation defined in specs/golden-format.md"},
    {"long_row", "a production width (n = 768, 2048, 4096 or 8192) in the regime of the other "
                 "flags' bug (var or mean(x^2) next to eps, a large mean, Gemma's offset, f16 "
                 "squares): catches long-row code paths (vector loops, dispatch on n) and bugs "
                 "whose effect shrinks with n"},
    {NULL, NULL},
};

/* ---------------------------------------------------------------- input generation */

static void gen_inputs(const gcase *c, size_t rows, size_t n, double *x, double *gamma,
                       double *beta, double *dy)
{
    golden_prng g;
    golden_prng_seed(&g, c->name);
    for (size_t i = 0; i < rows * n; i++)
        x[i] = c->shift + c->scale * golden_randn(&g);
    for (size_t j = 0; j < n; j++)
        gamma[j] = c->gshift + c->gscale * golden_randn(&g);
    for (size_t j = 0; j < n; j++)
        beta[j] = c->bscale * golden_randn(&g);
    for (size_t i = 0; i < rows * n; i++)
        dy[i] = golden_randn(&g);
    switch (c->k) {
    case K_RANDN:
        break;
    case K_CONST_ROWS:
        for (size_t r = 0; r < rows; r++)
            for (size_t j = 0; j < n; j++)
                x[r * n + j] = cval[r % 4];
        break;
    case K_NONFINITE_X: /* rows: NaN, +Inf, -Inf, +Inf & -Inf, finite, finite */
        x[0 * n + 3] = NAN;
        x[1 * n + 0] = INFINITY;
        x[2 * n + n - 1] = -INFINITY;
        x[3 * n + 1] = INFINITY;
        x[3 * n + 2] = -INFINITY;
        break;
    case K_NONFINITE_P:
        for (size_t j = 0; j < n; j++)
            x[(rows - 1) * n + j] = 0.5; /* constant last row: x - mean = 0, 0 * Inf */
        gamma[1] = INFINITY;
        beta[1] = -INFINITY;
        beta[2] = INFINITY;
        gamma[4] = NAN;
        beta[6] = NAN;
        break;
    case K_NONFINITE_DY:
        dy[1 * n + 3] = INFINITY;
        dy[2 * n + 5] = NAN;
        dy[3 * n + 3] = -INFINITY;
        break;
    }
    for (size_t i = 0; i < rows * n; i++) {
        x[i] = rn_round(x[i], c->in);
        dy[i] = rn_round(dy[i], c->in);
    }
    for (size_t j = 0; j < n; j++) {
        gamma[j] = rn_round(gamma[j], c->in);
        beta[j] = rn_round(beta[j], c->in);
    }
}

/* ---------------------------------------------------------------- generation */

/* The buffers of one case, and the twin that fills its outputs for golden_case_write. */
typedef struct {
    golden_rowview v;
    double eps;
    double *x, *gamma, *beta, *dy, *y, *mean, *rstd, *dx, *dg, *db;
} ln_bufs;

static int ln_case_twin(const golden_case *gc, rn_dtype dt)
{
    const ln_bufs *b = gc->arg;
    int t1 = layernorm_forward_mpfr(b->y, b->mean, b->rstd, b->x, b->gamma, b->beta, b->v.rows,
                                    b->v.n, b->eps, dt);
    int t2 = layernorm_backward_mpfr(b->dx, b->dg, b->db, b->dy, b->x, b->gamma, b->v.rows, b->v.n,
                                     b->eps, dt);
    return t1 == RN_TWIN_NOMEM || t2 == RN_TWIN_NOMEM ? RN_TWIN_NOMEM : (t1 ? t1 : t2);
}

/* One case: files, and its two manifest entries (layernorm/<case>, layernorm_backward/<case>). */
static int gen_case(golden_ctx *G, const gcase *c)
{
    ln_bufs b = {0};
    int nd = c->ndim, rc = -1;
    golden_row_view(nd, c->shape, c->axis, &b.v);
    size_t rows = b.v.rows, n = b.v.n, N = rows * n;
    rn_dtype ed;
    if (golden_eps(c->name, c->eps, NULL, c->in, &b.eps, &ed) != 0)
        return -1;
    b.x = malloc(N * sizeof *b.x), b.dy = malloc(N * sizeof *b.dy);
    b.gamma = malloc(n * sizeof *b.gamma), b.beta = malloc(n * sizeof *b.beta);
    b.y = malloc(N * sizeof *b.y), b.dx = malloc(N * sizeof *b.dx);
    b.mean = malloc(rows * sizeof *b.mean), b.rstd = malloc(rows * sizeof *b.rstd);
    b.dg = malloc(n * sizeof *b.dg), b.db = malloc(n * sizeof *b.db);
    json_t *attrs = golden_norm_attrs(c->eps, c->axis, -1, ed);
    if (!b.x || !b.dy || !b.gamma || !b.beta || !b.y || !b.dx || !b.mean || !b.rstd || !b.dg ||
        !b.db) {
        fprintf(stderr, "resnorm golden: out of memory\n");
        goto out;
    }
    gen_inputs(c, rows, n, b.x, b.gamma, b.beta, b.dy);
    int pnd = b.v.pnd;
    const size_t *ps = b.v.pshape, *ss = b.v.sshape, *xs = c->shape;
    golden_case gc = {
        "layernorm", c->name, c->comment, c->flags, c->in, nd, c->shape, attrs,
        4, 6, 2,
        {golden_arr("x", nd, xs, b.x), golden_arr("gamma", pnd, ps, b.gamma),
         golden_arr("beta", pnd, ps, b.beta), golden_arr("dy", nd, xs, b.dy)},
        {golden_arr("y", nd, xs, b.y), golden_arr("mean", nd, ss, b.mean),
         golden_arr("rstd", nd, ss, b.rstd), golden_arr("dx", nd, xs, b.dx),
         golden_arr("dgamma", pnd, ps, b.dg), golden_arr("dbeta", pnd, ps, b.db)},
        {{"layernorm", {"x", "gamma", "beta", NULL}, {"y", "mean", "rstd", NULL}},
         {"layernorm_backward", {"x", "gamma", "dy", NULL}, {"dx", "dgamma", "dbeta", NULL}}},
        ln_case_twin, &b, 1, b.eps,
    };
    if (golden_case_write(G, &gc) != 0)
        goto out;
    fprintf(stderr, "golden: layernorm/%s  rows %zu x n %zu, input %s: ok\n", c->name, rows, n,
            rn_dtype_name(c->in));
    rc = 0;
out:
    json_decref(attrs);
    free(b.x), free(b.dy), free(b.gamma), free(b.beta), free(b.y), free(b.dx), free(b.mean),
        free(b.rstd), free(b.dg), free(b.db);
    return rc;
}

static int ln_golden(golden_ctx *G)
{
    for (size_t i = 0; i < NCASES; i++)
        if (gen_case(G, &CASES[i]) != 0)
            return -1;
    return 0;
}

/* ---------------------------------------------------------------- registry entries */

const cli_family cli_family_layernorm = {
    "layernorm",
    "attributes (ONNX LayerNormalization):\n"
    "  axis=INT   normalize over dims axis..ndim-1 (negative counts from the end; default -1).\n"
    "             gamma, beta: shape x.shape[axis:] (or 1-D of that size); dy: shape of x.\n"
    "             mean, rstd: x.shape[:axis] + [1]*(ndim-axis); dgamma, dbeta: x.shape[axis:],\n"
    "             summed over all rows.\n"
    "  eps=TEXT   decimal text, rounded once to eps_dtype (default 1e-5).\n"
    "  eps_dtype=f32|f64|input  the format eps is rounded to (input: the dtype of x); default\n"
    "             f64 for an f64 x, else f32, as PyTorch (specs/golden-format.md, 'eps').\n",
    ln_golden,
    LN_FLAGS,
};

#define LN_ATTRS                                                                                   \
    3, {{"eps", "1e-5", CLI_ATTR_DECIMAL, 0, 0, NULL},                                             \
        {"axis", "-1", CLI_ATTR_INT, -RN_MAX_DIMS, RN_MAX_DIMS, NULL}, CLI_EPS_DTYPE_ATTR}

const cli_op cli_op_layernorm = {
    "layernorm", "LayerNorm forward (ONNX LayerNormalization): y, mean, rstd",
    &cli_family_layernorm,
    3, {"x", "gamma", "beta"}, {0, 0, 0},
    LN_ATTRS,
    3, {"y", "mean", "rstd"},
    "specs/error-analysis.md", "ref/layernorm_bound.c",
    "overflow in the compute dtype, specs/error-analysis.md §7",
    cli_ln_prepare, cli_ln_output_shape, ln_twin, ln_bound, NULL, NULL,
    /* rowwise: layernorm_forward_mpfr (ref/layernorm_mpfr.c, forward_driver) runs the fast path
       (layernorm_forward_fast: one independent call per row, ok[r] per row) and then the twin on
       the rows left, each from x + r n, gamma, beta and eps alone (layernorm_row_forward_mpfr;
       the per-row workspace is reset by row_exact, and every value is the correctly rounded exact
       one, whatever precision Ziv's loop reached on earlier rows): y, mean, rstd of row r depend
       on row r only. */
    CLI_ROWWISE_ROWS, NULL,
};

const cli_op cli_op_layernorm_backward = {
    "layernorm_backward", "LayerNorm backward: dx, and dgamma, dbeta summed over all rows",
    &cli_family_layernorm,
    3, {"x", "gamma", "dy"}, {0, 0, 0},
    LN_ATTRS,
    3, {"dx", "dgamma", "dbeta"},
    "specs/error-analysis.md", "ref/layernorm_bound.c",
    "overflow in the compute dtype, specs/error-analysis.md §7",
    cli_ln_prepare, cli_ln_output_shape, ln_bwd_twin, ln_bwd_bound, NULL, NULL,
    /* dx: row r from row r of x and dy, gamma and eps alone, in the fast path
       (ln_row_backward_fast) and in the twin (layernorm_row_backward_mpfr, every value the
       correctly rounded exact one); dgamma, dbeta: sums over all rows, kept across blocks */
    CLI_ROWWISE_COLUMNS, &ln_bwd_cols,
};
