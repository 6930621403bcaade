/* The linear op family in the `resnorm` registry: `linear` (y = x·Wᵀ + b, torch.nn.functional.linear)
 * and `linear_backward` (dx = dy·W, d.weight = Σ_rows dyᵀ·x, d.bias = Σ_rows dy).  Adaptors to the
 * twin (ref/linear_mpfr.c) and the bound (ref/linear_bound.c), and the family's golden cases
 * (golden/linear/<case>/, written by cli/golden_case.c).  Reference: specs/cli.md. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "golden.h"
#include "golden_case.h"
#include "linear_bound.h"
#include "linear_mpfr.h"

/* ---------------------------------------------------------------- CLI adaptors */

/* Inputs: 0 x [..., in], 1 weight [out, in], 2 bias [out] (optional), 3 dy [..., out] (backward).
   Sets rows = prod(x.shape[:-1]), n = in; the output width is weight.shape[0]. */
static int lin_prepare(cli_job *job)
{
    const rn_array *x = &job->in[0], *w = &job->in[1], *b = &job->in[2];
    char s1[160], s2[160];
    if (x->ndim < 1 || x->shape[x->ndim - 1] == 0) {
        cli_error(job->verb, "input x (%s): expected shape [..., in] with in >= 1", job->in_path[0]);
        return RN_EXIT_USAGE;
    }
    size_t in = x->shape[x->ndim - 1];
    if (w->ndim != 2 || w->shape[1] != in || w->shape[0] == 0) {
        cli_shape_str(s1, sizeof s1, w->ndim, w->shape);
        cli_shape_str(s2, sizeof s2, x->ndim, x->shape);
        cli_error(job->verb, "input weight (%s): shape %s, expected [out, %zu] (out >= 1) for x of shape %s",
                  job->in_path[1], s1, in, s2);
        return RN_EXIT_USAGE;
    }
    size_t out = w->shape[0];
    if (job->in_path[2] && (b->ndim != 1 || b->shape[0] != out)) {
        cli_shape_str(s1, sizeof s1, b->ndim, b->shape);
        cli_error(job->verb, "input bias (%s): shape %s, expected [%zu] (weight.shape[0])",
                  job->in_path[2], s1, out);
        return RN_EXIT_USAGE;
    }
    job->ax = x->ndim - 1;
    job->rows = x->count / in;
    job->n = in;
    if (job->op->ninputs > 3) {
        const rn_array *dy = &job->in[3];
        size_t want[8];
        memcpy(want, x->shape, sizeof(size_t) * (size_t)x->ndim);
        want[x->ndim - 1] = out;
        if (!cli_same_shape(dy->ndim, dy->shape, x->ndim, want)) {
            cli_shape_str(s1, sizeof s1, dy->ndim, dy->shape);
            cli_shape_str(s2, sizeof s2, x->ndim, want);
            cli_error(job->verb, "input dy (%s): shape %s, expected %s (y's shape)", job->in_path[3],
                      s1, s2);
            return RN_EXIT_USAGE;
        }
    }
    return 0;
}

static size_t lin_out(const cli_job *job) { return job->in[1].shape[0]; }
static const double *lin_bias(const cli_job *job) { return cli_optional_in(job, 2); }

/* linear: y [..., out].  linear_backward: dx (x's shape), d.weight [out, in], d.bias [out]. */
static void lin_output_shape(const cli_job *job, int k, int *ndim, size_t *shape)
{
    const rn_array *x = &job->in[0];
    int bwd = job->op->ninputs > 3;
    if (!bwd || k == 0) {
        *ndim = x->ndim;
        memcpy(shape, x->shape, sizeof(size_t) * (size_t)x->ndim);
        if (!bwd)
            shape[x->ndim - 1] = lin_out(job);
    } else if (k == 1) {
        *ndim = 2;
        shape[0] = lin_out(job);
        shape[1] = job->n;
    } else {
        *ndim = 1;
        shape[0] = lin_out(job);
    }
}

static int lin_twin(const cli_job *job, rn_dtype d, double *const *o)
{
    return linear_forward_mpfr(o[0], job->in[0].data, job->in[1].data, lin_bias(job), job->rows,
                               job->n, lin_out(job), d);
}

static int lin_bwd_twin(const cli_job *job, rn_dtype d, double *const *o)
{
    return linear_backward_mpfr(o[0], o[1], o[2], job->in[3].data, job->in[0].data,
                                job->in[1].data, job->rows, job->n, lin_out(job), d);
}

static int lin_bound(const cli_job *job, rn_dtype compute, rn_dtype d, double *const *o)
{
    return linear_forward_bound(o[0], job->in[0].data, job->in[1].data, lin_bias(job), job->rows,
                                job->n, lin_out(job), compute, d);
}

static int lin_bwd_bound(const cli_job *job, rn_dtype compute, rn_dtype d, double *const *o)
{
    return linear_backward_bound(o[0], o[1], o[2], job->in[3].data, job->in[0].data,
                                 job->in[1].data, job->rows, job->n, lin_out(job), compute, d);
}

/* ---------------------------------------------------------------- golden cases */

typedef enum {
    L_RANDN,    /* x = randn, W = wscale randn, b = randn, dy = randn */
    L_CANCEL,   /* b[j] = -(x[0]·W[j]) rounded: row 0's outputs are tiny (cancellation) */
    L_NONFINITE /* an Inf and a NaN in x, an Inf in W */
} lkind;

typedef struct {
    const char *name, *comment, *flags;
    rn_dtype in;
    int ndim;
    size_t xshape[4]; /* [..., in] */
    size_t out;
    int bias;
    lkind k;
    double wscale;
} lcase;

/* clang-format off */
static const lcase LCASES[] = {
    {"one_token_d4_f32", "one token, d = 4, square W: y = x·Wᵀ + b (x·W differs)",
     "square_weight small_n", RN_F32, 2, {1, 4}, 4, 1, L_RANDN, 0.5},
    {"square_batch_f32", "batch 2 × seq 3, square 8 × 8 W, bias: dW and db summed over all 6 rows",
     "square_weight batch", RN_F32, 3, {2, 3, 8}, 8, 1, L_RANDN, 0.35},
    {"square_batch_f64", "batch 2 × seq 3, square 8 × 8 W, bias, f64 inputs",
     "square_weight batch", RN_F64, 3, {2, 3, 8}, 8, 1, L_RANDN, 0.35},
    {"no_bias_f32", "5 rows, W [3, 6], no bias: y = x·Wᵀ; d.bias = Σ_rows dy still given",
     "no_bias batch", RN_F32, 2, {5, 6}, 3, 0, L_RANDN, 0.4},
    {"gpt2_d768_f32", "GPT-2 width: 2 tokens of d = 768 to 32 outputs (W [32, 768], 1/sqrt(768) "
     "scale), bias", "gpt2 batch", RN_F32, 2, {2, 768}, 32, 1, L_RANDN, 0.036},
    {"gpt2_ff3072_f32", "GPT-2 MLP width: 2 tokens of ff = 3072 to 8 outputs (W [8, 3072]), bias",
     "gpt2 batch", RN_F32, 2, {2, 3072}, 8, 1, L_RANDN, 0.018},
    {"random_f16", "f16 inputs, batch 2 × seq 2, W [6, 6]", "half_input square_weight batch",
     RN_F16, 3, {2, 2, 6}, 6, 1, L_RANDN, 0.4},
    {"random_bf16", "bf16 inputs, 3 rows, W [5, 7]", "half_input batch",
     RN_BF16, 2, {3, 7}, 5, 1, L_RANDN, 0.4},
    {"cancellation_f32", "row 0: b[j] = -(x·W[j]) rounded to f32, so y[0, j] is the tiny rounding "
     "error of that dot product (its relative accuracy is not required: the bound is absolute)",
     "cancellation batch", RN_F32, 2, {3, 16}, 6, 1, L_CANCEL, 0.5},
    {"nonfinite_f32", "x[0, 1] = Inf, x[1, 2] = NaN, W[2, 0] = -Inf: IEEE propagation (Inf - Inf = "
     "NaN, 0·Inf = NaN)", "nonfinite", RN_F32, 2, {3, 4}, 3, 1, L_NONFINITE, 1.0},
};
/* clang-format on */
#define NLCASES (sizeof LCASES / sizeof LCASES[0])

static const char *const LIN_FLAGS[][2] = {
    {"square_weight", "W is square (out = in): an implementation that forgets to transpose W "
                      "(x·W instead of x·Wᵀ) gives the right shape and a wrong value"},
    {"batch", "more than one row (a batch and/or sequence axis): d.weight and d.bias must be summed "
              "over every row, not taken from one row or averaged"},
    {"no_bias", "no bias input: y = x·Wᵀ (d.bias, the sum of dy over the rows, is still given)"},
    {NULL, NULL},
};

typedef struct {
    const double *x, *w, *b, *dy;
    size_t rows, in, out;
} lin_ctx;

static int gc_lin_fwd(void *c, rn_dtype d, double *const *o)
{
    lin_ctx *L = c;
    return linear_forward_mpfr(o[0], L->x, L->w, L->b, L->rows, L->in, L->out, d);
}

static int gc_lin_bwd(void *c, rn_dtype d, double *const *o)
{
    lin_ctx *L = c;
    return linear_backward_mpfr(o[0], o[1], o[2], L->dy, L->x, L->w, L->rows, L->in, L->out, d);
}

static void lin_gen_inputs(const lcase *c, size_t rows, size_t in, size_t out, double *x, double *w,
                           double *b, double *dy)
{
    golden_prng g;
    golden_prng_seed(&g, c->name);
    for (size_t i = 0; i < rows * in; i++)
        x[i] = rn_round(golden_randn(&g), c->in);
    for (size_t i = 0; i < out * in; i++)
        w[i] = rn_round(c->wscale * golden_randn(&g), c->in);
    for (size_t j = 0; j < out; j++)
        b[j] = rn_round(golden_randn(&g), c->in);
    for (size_t i = 0; i < rows * out; i++)
        dy[i] = rn_round(golden_randn(&g), c->in);
    if (c->k == L_CANCEL) {
        double *y0 = malloc(out * sizeof *y0);
        if (y0 && linear_forward_mpfr(y0, x, w, NULL, 1, in, out, c->in) == 0)
            for (size_t j = 0; j < out; j++)
                b[j] = -y0[j];
        free(y0);
    } else if (c->k == L_NONFINITE) {
        x[1] = INFINITY;
        x[in + 2] = NAN;
        w[2 * in] = -INFINITY;
    }
}

static int lin_gen_case(golden_ctx *G, const lcase *c)
{
    size_t in = c->xshape[c->ndim - 1], rows = 1, out = c->out;
    for (int i = 0; i < c->ndim - 1; i++)
        rows *= c->xshape[i];
    double *x = malloc(rows * in * sizeof *x), *w = malloc(out * in * sizeof *w),
           *b = malloc(out * sizeof *b), *dy = malloc(rows * out * sizeof *dy);
    int rc = -1;
    if (!x || !w || !b || !dy) {
        fprintf(stderr, "resnorm golden: out of memory\n");
        goto out;
    }
    lin_gen_inputs(c, rows, in, out, x, w, b, dy);
    lin_ctx L = {x, w, c->bias ? b : NULL, dy, rows, in, out};
    gc_case gc = {"linear", c->name, c->comment, c->flags, c->in, c->ndim, {0}, NULL, 0, {{0}}, 2, {{0}}};
    memcpy(gc.shape, c->xshape, sizeof gc.shape);
    gc_array ax = {"x", c->ndim, {0}, x}, aw = {"weight", 2, {out, in}, w}, ab = {"bias", 1, {out}, b},
             ady = {"dy", c->ndim, {0}, dy};
    memcpy(ax.shape, c->xshape, sizeof ax.shape);
    memcpy(ady.shape, c->xshape, sizeof ady.shape);
    ady.shape[c->ndim - 1] = out;
    gc.arrays[gc.narrays++] = ax;
    gc.arrays[gc.narrays++] = aw;
    if (c->bias)
        gc.arrays[gc.narrays++] = ab;
    gc.arrays[gc.narrays++] = ady;
    gc_op *f = &gc.ops[0], *bw = &gc.ops[1];
    f->op = "linear";
    f->inputs[f->ninputs++] = "x";
    f->inputs[f->ninputs++] = "weight";
    if (c->bias)
        f->inputs[f->ninputs++] = "bias";
    f->outputs[f->noutputs++] = ady; /* y: dy's shape */
    f->outputs[0].name = "y";
    f->twin = gc_lin_fwd;
    bw->op = "linear_backward";
    memcpy(bw->inputs, f->inputs, sizeof bw->inputs);
    bw->ninputs = f->ninputs;
    bw->inputs[bw->ninputs++] = "dy";
    gc_array odx = ax, odw = aw, odb = ab;
    odx.name = "dx", odw.name = "d.weight", odb.name = "d.bias";
    bw->outputs[bw->noutputs++] = odx;
    bw->outputs[bw->noutputs++] = odw;
    bw->outputs[bw->noutputs++] = odb;
    bw->twin = gc_lin_bwd;
    rc = gc_case_write(G, &gc, &L);
out:
    free(x), free(w), free(b), free(dy);
    return rc;
}

static int lin_golden(golden_ctx *G)
{
    for (size_t i = 0; i < NLCASES; i++)
        if (lin_gen_case(G, &LCASES[i]) != 0)
            return -1;
    return 0;
}

/* ---------------------------------------------------------------- registry entries */

const cli_family cli_family_linear = {
    "linear",
    "linear, linear_backward: no attributes.  x [..., in], weight [out, in], bias [out] (optional);\n"
    "  y [..., out] = x·weightᵀ + bias, each element the exact value rounded once.  linear_backward\n"
    "  (dy: y's shape) gives dx (x's shape) = dy·weight, d.weight [out, in] = Σ_rows dyᵀ·x and\n"
    "  d.bias [out] = Σ_rows dy (always given), the gradients from zero.\n",
    lin_golden,
    LIN_FLAGS,
};

const cli_op cli_op_linear = {
    "linear", "linear layer: y = x·weightᵀ + bias (torch.nn.functional.linear)",
    &cli_family_linear,
    3, {"x", "weight", "bias"}, {0, 0, 1},
    0, {{0}},
    1, {"y"},
    "specs/error-analysis-linear.md", "ref/linear_bound.c",
    "a partial sum that may overflow the compute dtype, or overflow of the output dtype, "
    "specs/error-analysis-linear.md §4",
    lin_prepare, lin_output_shape, lin_twin, lin_bound, NULL, NULL,
    CLI_WHOLE, NULL, /* not streamed; the backward sums over rows */
};

const cli_op cli_op_linear_backward = {
    "linear_backward", "linear layer backward: dx = dy·weight, d.weight = Σ dyᵀ·x, d.bias = Σ dy",
    &cli_family_linear,
    4, {"x", "weight", "bias", "dy"}, {0, 0, 1, 0},
    0, {{0}},
    3, {"dx", "d.weight", "d.bias"},
    "specs/error-analysis-linear.md", "ref/linear_bound.c",
    "a partial sum that may overflow the compute dtype, or overflow of the output dtype, "
    "specs/error-analysis-linear.md §4",
    lin_prepare, lin_output_shape, lin_bwd_twin, lin_bwd_bound, NULL, NULL,
    CLI_WHOLE, NULL, /* not streamed; the backward sums over rows */
};
