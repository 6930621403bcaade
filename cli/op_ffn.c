/* The feed-forward op family in the `resnorm` registry: `ffn` (y = linear2(dropout(act(linear1(x)))),
 * act = relu | gelu | gelu_tanh, the dropout mask given as an input) and `ffn_backward` (dx and the
 * four parameter gradients).  Adaptors to the twin (ref/ffn_mpfr.c) and the bound (ref/ffn_bound.c),
 * and the family's golden cases (golden/ffn/<case>/, written by cli/golden_case.c).
 * Reference: specs/cli.md. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "cli.h"
#include "block_bound.h"
#include "ffn_bound.h"
#include "ffn_mpfr.h"
#include "golden.h"
#include "golden_case.h"

enum { I_X = 0, I_W1, I_B1, I_W2, I_B2, I_MASK, I_DY };
enum { A_ACT = 0, A_P = 1 };

static const char *const ACT_NAMES[] = {"relu", "gelu", "gelu_tanh"};

/* ---------------------------------------------------------------- CLI adaptors */

static int shape_error(cli_job *job, int k, int ndim, const size_t *want)
{
    char s1[160], s2[160];
    const rn_array *a = &job->in[k];
    cli_shape_str(s1, sizeof s1, a->ndim, a->shape);
    cli_shape_str(s2, sizeof s2, ndim, want);
    cli_error(job->verb, "input %s (%s): shape %s, expected %s", job->op->inputs[k], job->in_path[k],
              s1, s2);
    return RN_EXIT_USAGE;
}

/* Inputs as enum I_*; x [..., d], linear1.weight [ff, d], linear1.bias [ff] (optional),
   linear2.weight [d, ff], linear2.bias [d] (optional), dropout.mask [..., ff] (optional, 0/1),
   dy (backward) x's shape.  rows = prod(x.shape[:-1]), n = d; job->eps holds p. */
static int ffn_prepare(cli_job *job)
{
    const rn_array *x = &job->in[I_X], *w1 = &job->in[I_W1];
    if (x->ndim < 1 || x->shape[x->ndim - 1] == 0) {
        cli_error(job->verb, "input x (%s): expected shape [..., d] with d >= 1", job->in_path[I_X]);
        return RN_EXIT_USAGE;
    }
    size_t d = x->shape[x->ndim - 1];
    if (w1->ndim != 2 || w1->shape[1] != d || w1->shape[0] == 0) {
        size_t want[2] = {w1->ndim == 2 && w1->shape[0] ? w1->shape[0] : 1, d};
        return shape_error(job, I_W1, 2, want);
    }
    size_t ff = w1->shape[0];
    size_t vff[1] = {ff}, vd[1] = {d}, w2s[2] = {d, ff};
    if (job->in_path[I_B1] && !cli_same_shape(job->in[I_B1].ndim, job->in[I_B1].shape, 1, vff))
        return shape_error(job, I_B1, 1, vff);
    if (!cli_same_shape(job->in[I_W2].ndim, job->in[I_W2].shape, 2, w2s))
        return shape_error(job, I_W2, 2, w2s);
    if (job->in_path[I_B2] && !cli_same_shape(job->in[I_B2].ndim, job->in[I_B2].shape, 1, vd))
        return shape_error(job, I_B2, 1, vd);
    size_t hs[8];
    memcpy(hs, x->shape, sizeof(size_t) * (size_t)x->ndim);
    hs[x->ndim - 1] = ff;
    if (job->in_path[I_MASK]) {
        const rn_array *m = &job->in[I_MASK];
        if (!cli_same_shape(m->ndim, m->shape, x->ndim, hs))
            return shape_error(job, I_MASK, x->ndim, hs);
        for (size_t i = 0; i < m->count; i++)
            if (m->data[i] != 0.0 && m->data[i] != 1.0) {
                cli_error(job->verb, "input dropout.mask (%s): element %zu is %g; a dropout mask "
                                     "holds 0 or 1", job->in_path[I_MASK], i, m->data[i]);
                return RN_EXIT_USAGE;
            }
    }
    if (job->op->ninputs > I_DY && !cli_same_shape(job->in[I_DY].ndim, job->in[I_DY].shape, x->ndim, x->shape))
        return shape_error(job, I_DY, x->ndim, x->shape);
    const char *at = cli_attr_text(job, A_ACT);
    int act = -1;
    for (int k = 0; k < 3; k++)
        if (!strcmp(at, ACT_NAMES[k]))
            act = k;
    if (act < 0) { /* the parser checks the choices; kept for a direct caller */
        cli_error(job->verb, "attribute activation: '%s' is not relu, gelu or gelu_tanh", at);
        return RN_EXIT_USAGE;
    }
    job->attr_str[A_ACT] = ACT_NAMES[act];
    job->attr_value[A_ACT] = act;
    const char *pt = cli_attr_text(job, A_P);
    if (rn_parse_eps(pt, x->dtype, &job->eps) != 0 || !(job->eps >= 0.0 && job->eps < 1.0)) {
        cli_error(job->verb, "attribute p: '%s' is not a decimal number in [0, 1) (after rounding "
                             "to x's dtype)", pt);
        return RN_EXIT_USAGE;
    }
    job->attr_value[A_P] = job->eps;
    job->ax = x->ndim - 1;
    job->rows = x->count / d;
    job->n = d;
    return 0;
}

static ffn_args ffn_job_args(const cli_job *job)
{
    const rn_array *w1 = &job->in[I_W1];
    ffn_args F = {
        w1->data, cli_optional_in(job, I_B1),
        job->in[I_W2].data, cli_optional_in(job, I_B2),
        cli_optional_in(job, I_MASK),
        job->eps, (rn_activation)(int)job->attr_value[A_ACT],
        job->rows, job->n, w1->shape[0],
    };
    return F;
}

/* ffn: y (x's shape).  ffn_backward: dx (x's shape), d.linear1.weight [ff, d], d.linear1.bias [ff],
   d.linear2.weight [d, ff], d.linear2.bias [d]. */
static void ffn_output_shape(const cli_job *job, int k, int *ndim, size_t *shape)
{
    const rn_array *x = &job->in[I_X];
    size_t d = job->n, ff = job->in[I_W1].shape[0];
    switch (k) {
    case 0:
        *ndim = x->ndim;
        memcpy(shape, x->shape, sizeof(size_t) * (size_t)x->ndim);
        break;
    case 1: *ndim = 2, shape[0] = ff, shape[1] = d; break;
    case 2: *ndim = 1, shape[0] = ff; break;
    case 3: *ndim = 2, shape[0] = d, shape[1] = ff; break;
    default: *ndim = 1, shape[0] = d; break;
    }
}

static int ffn_twin(const cli_job *job, rn_dtype d, double *const *o)
{
    ffn_args F = ffn_job_args(job);
    return ffn_forward_mpfr(o[0], job->in[I_X].data, &F, d);
}

static int ffn_bwd_twin(const cli_job *job, rn_dtype d, double *const *o)
{
    ffn_args F = ffn_job_args(job);
    return ffn_backward_mpfr(o[0], o[1], o[2], o[3], o[4], job->in[I_X].data, job->in[I_DY].data,
                             &F, d);
}

static int ffn_bound(const cli_job *job, rn_dtype compute, rn_dtype d, double *const *o)
{
    ffn_args F = ffn_job_args(job);
    return ffn_forward_bound(o[0], job->in[I_X].data, &F, compute, d);
}

static int ffn_bwd_bound(const cli_job *job, rn_dtype compute, rn_dtype d, double *const *o)
{
    ffn_args F = ffn_job_args(job);
    return ffn_backward_bound(o[0], o[1], o[2], o[3], o[4], job->in[I_X].data, job->in[I_DY].data,
                              &F, compute, d);
}

/* The statistical tier: the block's graph evaluator on the FFN alone
   (specs/error-analysis-ffn.md, "The statistical tier"). */
static int ffn_stat_bound(const cli_job *job, rn_dtype compute, rn_dtype d, double *const *o)
{
    ffn_args F = ffn_job_args(job);
    return ffn_forward_bound_stat(o[0], job->in[I_X].data, &F, compute, d);
}

static int ffn_bwd_stat_bound(const cli_job *job, rn_dtype compute, rn_dtype d, double *const *o)
{
    ffn_args F = ffn_job_args(job);
    return ffn_backward_bound_stat(o[0], o[1], o[2], o[3], o[4], job->in[I_X].data,
                                   job->in[I_DY].data, &F, compute, d);
}

/* The "act" test on y (ref/block_bound.h ffn_act_test); -1 when the activation is not a GELU
   (relu: no other approximation to test against). */
int cli_ffn_act_test(const cli_job *job, rn_dtype compute, rn_dtype d, const double *got,
                     const double *want, ffn_act_result *res)
{
    ffn_args F = ffn_job_args(job);
    if (F.act == RN_ACT_RELU)
        return -1;
    return ffn_act_test(res, got, want, job->in[I_X].data, &F, compute, d);
}

/* ---------------------------------------------------------------- golden cases */

typedef enum {
    F_RANDN,      /* x, dy = randn; W1 = randn/√d, W2 = randn/√ff; biases 0.5·randn */
    F_SENSITIVE,  /* W1 = 0, b1 = -2.7 + 0.2·randn, W2 = |randn|/√ff: gelu vs gelu_tanh visible */
    F_EXACT_ZERO  /* small integers: some z exactly 0 (relu(0) = 0, relu'(0) = 0), zero rows of W1 */
} fkind;

typedef struct {
    const char *name, *comment, *flags, *act, *p;
    rn_dtype in;
    int ndim;
    size_t xshape[4]; /* [..., d] */
    size_t ff;
    int bias;
    double keep;      /* probability of mask = 1; 0: no dropout.mask input */
    fkind k;
} fcase;

/* clang-format off */
static const fcase FCASES[] = {
    {"one_token_d4_relu_f32", "one token, d = 4, ff = 16, relu, no dropout", "small_n",
     "relu", "0.1", RN_F32, 2, {1, 4}, 16, 1, 0.0, F_RANDN},
    {"batch_gelu_mask_f32", "batch 2 × seq 3, d = 8, ff = 32, gelu (erf), dropout p = 0.1: the "
     "parameter gradients are summed over all 6 rows", "batch dropout_mask",
     "gelu", "0.1", RN_F32, 3, {2, 3, 8}, 32, 1, 0.9, F_RANDN},
    {"batch_gelu_tanh_mask_f32", "batch 2 × seq 3, d = 8, ff = 32, gelu_tanh, dropout p = 0.1",
     "batch dropout_mask", "gelu_tanh", "0.1", RN_F32, 3, {2, 3, 8}, 32, 1, 0.9, F_RANDN},
    {"relu_mask_f64", "f64 inputs, batch 2 × seq 4, d = 8, ff = 16, relu, dropout p = 0.5 (scale 2: "
     "every value dyadic)", "batch dropout_mask", "relu", "0.5", RN_F64, 3, {2, 4, 8}, 16, 1, 0.5, F_RANDN},
    {"gelu_f64", "f64 inputs, 3 rows, d = 8, ff = 32, gelu, no dropout", "batch", "gelu", "0.1",
     RN_F64, 2, {3, 8}, 32, 1, 0.0, F_RANDN},
    {"no_bias_relu_mask_f32", "4 rows, d = 6, ff = 12, relu, no biases, dropout p = 0.25", "batch "
     "no_bias dropout_mask", "relu", "0.25", RN_F32, 2, {4, 6}, 12, 0, 0.75, F_RANDN},
    {"relu_exact_zero_f32", "small integers: some pre-activations exactly 0 (relu(0) = 0, relu'(0) = "
     "0 as PyTorch's threshold_backward), two zero rows of linear1.weight, dropout p = 0.5",
     "batch relu_exact_zero dropout_mask", "relu", "0.5", RN_F32, 2, {3, 4}, 8, 1, 0.75, F_EXACT_ZERO},
    {"random_f16", "f16 inputs, 2 rows, d = 6, ff = 12, gelu, dropout p = 0.2 (rounded to f16)",
     "half_input batch dropout_mask", "gelu", "0.2", RN_F16, 2, {2, 6}, 12, 1, 0.8, F_RANDN},
    {"random_bf16", "bf16 inputs, 3 rows, d = 8, ff = 16, gelu_tanh, dropout p = 0.3 (rounded to bf16)",
     "half_input batch dropout_mask", "gelu_tanh", "0.3", RN_BF16, 2, {3, 8}, 16, 1, 0.7, F_RANDN},
    {"gpt2_d768_gelu_tanh_mask_f32", "GPT-2's first-layer width: 2 tokens, d = 768, ff = 32 (a slice "
     "of the 3072 hidden units, to keep golden/ small), gelu_tanh, dropout p = 0.1",
     "gpt2 batch dropout_mask", "gelu_tanh", "0.1", RN_F32, 2, {2, 768}, 32, 1, 0.9, F_RANDN},
    {"gpt2_d768_gelu_f32", "2 tokens, d = 768, ff = 32, gelu (erf), no dropout", "gpt2 batch",
     "gelu", "0.1", RN_F32, 2, {2, 768}, 32, 1, 0.0, F_RANDN},
    {"gpt2_d768_relu_mask_f32", "2 tokens, d = 768, ff = 32, relu, dropout p = 0.1", "gpt2 batch "
     "dropout_mask", "relu", "0.1", RN_F32, 2, {2, 768}, 32, 1, 0.9, F_RANDN},
    {"gpt2_ff3072_gelu_tanh_mask_f32", "GPT-2's second-layer width: 2 tokens, d = 8, ff = 3072, "
     "gelu_tanh, dropout p = 0.1", "gpt2 batch dropout_mask", "gelu_tanh", "0.1", RN_F32, 2, {2, 8},
     3072, 1, 0.9, F_RANDN},
    {"gpt2_ff3072_relu_f32", "2 tokens, d = 8, ff = 3072, relu, no dropout", "gpt2 batch", "relu",
     "0.1", RN_F32, 2, {2, 8}, 3072, 1, 0.0, F_RANDN},
    {"gelu_sensitive_f32", "one token, d = 768, ff = 32, gelu: linear1.weight = 0, linear1.bias near "
     "-2.7 (where erf and tanh GELU differ most), linear2.weight >= 0", "gpt2 gelu_sensitive",
     "gelu", "0.1", RN_F32, 2, {1, 768}, 32, 1, 0.0, F_SENSITIVE},
    {"gelu_tanh_sensitive_f32", "as gelu_sensitive_f32 with gelu_tanh", "gpt2 gelu_sensitive",
     "gelu_tanh", "0.1", RN_F32, 2, {1, 768}, 32, 1, 0.0, F_SENSITIVE},
};
/* clang-format on */
#define NFCASES (sizeof FCASES / sizeof FCASES[0])

static const char *const FFN_FLAGS[][2] = {
    {"dropout_mask", "a dropout.mask input (0/1) with p: h = act(z)·mask/(1 - p); its backward must "
                     "apply the same mask and scale (a dropped unit's gradients are exactly 0)"},
    {"gelu_sensitive", "pre-activations where gelu (erf) and gelu_tanh differ most (z near -2.7, "
                       "4.7e-4 apart) and a non-negative second layer that adds the difference "
                       "coherently: the one form computed for the other fails in f32 at GPT-2 width"},
    {"relu_exact_zero", "pre-activations exactly 0: relu(0) = 0 and relu'(0) = 0 (PyTorch's "
                        "threshold_backward), computed exactly by the twin"},
    {NULL, NULL},
};

typedef struct {
    ffn_args F;
    const double *x, *dy;
} ffn_ctx;

static int gc_ffn_fwd(void *c, rn_dtype d, double *const *o)
{
    ffn_ctx *C = c;
    return ffn_forward_mpfr(o[0], C->x, &C->F, d);
}

static int gc_ffn_bwd(void *c, rn_dtype d, double *const *o)
{
    ffn_ctx *C = c;
    return ffn_backward_mpfr(o[0], o[1], o[2], o[3], o[4], C->x, C->dy, &C->F, d);
}

static void ffn_gen_inputs(const fcase *c, size_t rows, size_t d, size_t ff, double *x, double *w1,
                           double *b1, double *w2, double *b2, double *mask, double *dy)
{
    golden_prng g;
    golden_prng_seed(&g, c->name);
    double s1 = 1.0 / sqrt((double)d), s2 = 1.0 / sqrt((double)ff);
    for (size_t i = 0; i < rows * d; i++)
        x[i] = rn_round(golden_randn(&g), c->in);
    for (size_t i = 0; i < ff * d; i++)
        w1[i] = rn_round(s1 * golden_randn(&g), c->in);
    for (size_t j = 0; j < ff; j++)
        b1[j] = rn_round(0.5 * golden_randn(&g), c->in);
    for (size_t i = 0; i < d * ff; i++)
        w2[i] = rn_round(s2 * golden_randn(&g), c->in);
    for (size_t i = 0; i < d; i++)
        b2[i] = rn_round(0.5 * golden_randn(&g), c->in);
    for (size_t i = 0; i < rows * d; i++)
        dy[i] = rn_round(golden_randn(&g), c->in);
    for (size_t i = 0; i < rows * ff; i++)
        mask[i] = golden_uniform(&g) < c->keep ? 1.0 : 0.0;
    if (c->k == F_SENSITIVE) {
        for (size_t i = 0; i < ff * d; i++)
            w1[i] = 0.0;
        for (size_t j = 0; j < ff; j++)
            b1[j] = rn_round(-2.7 + 0.2 * golden_randn(&g), c->in);
        for (size_t i = 0; i < d * ff; i++)
            w2[i] = fabs(w2[i]);
    } else if (c->k == F_EXACT_ZERO) { /* integers in [-2, 2]: z = b1 + x·w1 is an integer */
        for (size_t i = 0; i < rows * d; i++)
            x[i] = floor(5.0 * golden_uniform(&g)) - 2.0;
        for (size_t i = 0; i < ff * d; i++)
            w1[i] = (i / d) % 4 == 3 ? 0.0 : floor(5.0 * golden_uniform(&g)) - 2.0;
        for (size_t j = 0; j < ff; j++)
            b1[j] = floor(3.0 * golden_uniform(&g)) - 1.0;
    }
}

static int ffn_gen_case(golden_ctx *G, const fcase *c)
{
    size_t d = c->xshape[c->ndim - 1], rows = 1, ff = c->ff;
    for (int i = 0; i < c->ndim - 1; i++)
        rows *= c->xshape[i];
    double *x = malloc(rows * d * sizeof *x), *w1 = malloc(ff * d * sizeof *w1),
           *b1 = malloc(ff * sizeof *b1), *w2 = malloc(d * ff * sizeof *w2), *b2 = malloc(d * sizeof *b2),
           *mask = malloc(rows * ff * sizeof *mask), *dy = malloc(rows * d * sizeof *dy);
    int rc = -1;
    double p;
    if (!x || !w1 || !b1 || !w2 || !b2 || !mask || !dy || rn_parse_eps(c->p, c->in, &p) != 0) {
        fprintf(stderr, "resnorm golden: ffn/%s: out of memory or bad p\n", c->name);
        goto out;
    }
    ffn_gen_inputs(c, rows, d, ff, x, w1, b1, w2, b2, mask, dy);
    int act = !strcmp(c->act, "relu") ? RN_ACT_RELU : !strcmp(c->act, "gelu") ? RN_ACT_GELU : RN_ACT_GELU_TANH;
    ffn_ctx C = {{w1, c->bias ? b1 : NULL, w2, c->bias ? b2 : NULL, c->keep > 0 ? mask : NULL, p,
                  (rn_activation)act, rows, d, ff}, x, dy};
    json_t *attrs = json_object();
    json_object_set_new(attrs, "activation", json_string(c->act));
    json_object_set_new(attrs, "p", json_string(c->p));
    gc_case gc = {"ffn", c->name, c->comment, c->flags, c->in, c->ndim, {0}, attrs, 0, {{0}}, 2, {{0}}};
    memcpy(gc.shape, c->xshape, sizeof gc.shape);
    gc_array ax = {"x", c->ndim, {0}, x}, aw1 = {"linear1.weight", 2, {ff, d}, w1},
             ab1 = {"linear1.bias", 1, {ff}, b1}, aw2 = {"linear2.weight", 2, {d, ff}, w2},
             ab2 = {"linear2.bias", 1, {d}, b2}, am = {"dropout.mask", c->ndim, {0}, mask};
    memcpy(ax.shape, c->xshape, sizeof ax.shape);
    memcpy(am.shape, c->xshape, sizeof am.shape);
    am.shape[c->ndim - 1] = ff;
    gc_array ady = ax;
    ady.name = "dy", ady.v = dy;
    gc_op *f = &gc.ops[0], *bw = &gc.ops[1];
    f->op = "ffn";
    gc.arrays[gc.narrays++] = ax;
    f->inputs[f->ninputs++] = "x";
    gc.arrays[gc.narrays++] = aw1;
    f->inputs[f->ninputs++] = "linear1.weight";
    if (c->bias) {
        gc.arrays[gc.narrays++] = ab1;
        f->inputs[f->ninputs++] = "linear1.bias";
    }
    gc.arrays[gc.narrays++] = aw2;
    f->inputs[f->ninputs++] = "linear2.weight";
    if (c->bias) {
        gc.arrays[gc.narrays++] = ab2;
        f->inputs[f->ninputs++] = "linear2.bias";
    }
    if (c->keep > 0) {
        gc.arrays[gc.narrays++] = am;
        f->inputs[f->ninputs++] = "dropout.mask";
    }
    gc.arrays[gc.narrays++] = ady;
    gc_array oy = ax;
    oy.name = "y";
    f->outputs[f->noutputs++] = oy;
    f->twin = gc_ffn_fwd;
    bw->op = "ffn_backward";
    memcpy(bw->inputs, f->inputs, sizeof bw->inputs);
    bw->ninputs = f->ninputs;
    bw->inputs[bw->ninputs++] = "dy";
    gc_array odx = ax, odw1 = aw1, odb1 = ab1, odw2 = aw2, odb2 = ab2;
    odx.name = "dx", odw1.name = "d.linear1.weight", odb1.name = "d.linear1.bias";
    odw2.name = "d.linear2.weight", odb2.name = "d.linear2.bias";
    bw->outputs[bw->noutputs++] = odx;
    bw->outputs[bw->noutputs++] = odw1;
    bw->outputs[bw->noutputs++] = odb1;
    bw->outputs[bw->noutputs++] = odw2;
    bw->outputs[bw->noutputs++] = odb2;
    bw->twin = gc_ffn_bwd;
    rc = gc_case_write(G, &gc, &C);
out:
    free(x), free(w1), free(b1), free(w2), free(b2), free(mask), free(dy);
    return rc;
}

static int ffn_golden(golden_ctx *G)
{
    for (size_t i = 0; i < NFCASES; i++)
        if (ffn_gen_case(G, &FCASES[i]) != 0)
            return -1;
    return 0;
}

/* ---------------------------------------------------------------- registry entries */

#define FFN_ATTRS                                                                                  \
    {{"activation", "relu", CLI_ATTR_ENUM, 0, 0, "relu gelu gelu_tanh"},                           \
     {"p", "0.1", CLI_ATTR_DECIMAL, 0, 0, NULL}}

const cli_family cli_family_ffn = {
    "ffn",
    "ffn, ffn_backward: activation relu|gelu|gelu_tanh (default relu; gelu is the erf form,\n"
    "  gelu_tanh PyTorch's approximate='tanh'); p (default 0.1): decimal text rounded once to x's\n"
    "  dtype, 0 <= p < 1, used only with dropout.mask.  x [..., d], linear1.weight [ff, d],\n"
    "  linear1.bias [ff] (optional), linear2.weight [d, ff], linear2.bias [d] (optional),\n"
    "  dropout.mask [..., ff] (optional, 0/1);  y = linear2(dropout(act(linear1(x)))), each element\n"
    "  the exact value rounded once.  ffn_backward (dy: x's shape) gives dx, d.linear1.weight,\n"
    "  d.linear1.bias, d.linear2.weight, d.linear2.bias (summed over the rows, from zero).\n",
    ffn_golden,
    FFN_FLAGS,
};

const cli_op cli_op_ffn = {
    "ffn", "feed-forward sublayer: y = linear2(dropout(act(linear1(x))))",
    &cli_family_ffn,
    6, {"x", "linear1.weight", "linear1.bias", "linear2.weight", "linear2.bias", "dropout.mask"},
    {0, 0, 1, 0, 1, 1},
    2, FFN_ATTRS,
    1, {"y"},
    "specs/error-analysis-ffn.md", "ref/ffn_bound.c",
    "a partial sum that may overflow the compute dtype, or overflow of the output dtype, "
    "specs/error-analysis-ffn.md §7",
    ffn_prepare, ffn_output_shape, ffn_twin, ffn_bound, ffn_stat_bound, NULL,
    CLI_WHOLE, NULL, /* not streamed (issue 12 asks for the norms and the residual) */
};

const cli_op cli_op_ffn_backward = {
    "ffn_backward", "feed-forward sublayer backward: dx and the gradients of both linear layers",
    &cli_family_ffn,
    7, {"x", "linear1.weight", "linear1.bias", "linear2.weight", "linear2.bias", "dropout.mask", "dy"},
    {0, 0, 1, 0, 1, 1, 0},
    2, FFN_ATTRS,
    5, {"dx", "d.linear1.weight", "d.linear1.bias", "d.linear2.weight", "d.linear2.bias"},
    "specs/error-analysis-ffn.md", "ref/ffn_bound.c",
    "a partial sum that may overflow the compute dtype, or overflow of the output dtype, "
    "specs/error-analysis-ffn.md §7",
    ffn_prepare, ffn_output_shape, ffn_bwd_twin, ffn_bwd_bound, ffn_bwd_stat_bound, NULL,
    CLI_WHOLE, NULL, /* not streamed (issue 12 asks for the norms and the residual) */
};
