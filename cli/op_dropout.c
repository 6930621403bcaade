/* The dropout op family in the `resnorm` registry: `dropout` (y = x·mask/(1 - p), the 0/1 mask
 * given as an input) and `dropout_backward` (dx = dy·mask/(1 - p)).  Adaptors to the twin
 * (ref/dropout_mpfr.c) and the bound (ref/dropout_bound.c), and the family's golden cases
 * (golden/dropout/<case>/, written by cli/golden_case.c).  Reference: specs/cli.md. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "cli.h"
#include "dropout_bound.h"
#include "dropout_mpfr.h"
#include "golden.h"
#include "golden_case.h"

enum { A_P = 0 };

/* ---------------------------------------------------------------- CLI adaptors */

/* Inputs: 0 x, 1 mask (x's shape, every value 0 or 1), 2 dy (backward: x's shape).  p: decimal
   text rounded once to x's dtype, 0 <= p < 1.  job->eps holds p. */
static int do_prepare(cli_job *job)
{
    const rn_array *x = &job->in[0];
    for (int k = 1; k < job->op->ninputs; k++) {
        const rn_array *a = &job->in[k];
        if (!cli_same_shape(a->ndim, a->shape, x->ndim, x->shape)) {
            char s1[160], s2[160];
            cli_shape_str(s1, sizeof s1, a->ndim, a->shape);
            cli_shape_str(s2, sizeof s2, x->ndim, x->shape);
            cli_error(job->verb, "input %s (%s): shape %s does not match x.shape %s",
                      job->op->inputs[k], job->in_path[k], s1, s2);
            return RN_EXIT_USAGE;
        }
    }
    const rn_array *m = &job->in[1];
    for (size_t i = 0; i < m->count; i++)
        if (m->data[i] != 0.0 && m->data[i] != 1.0) {
            cli_error(job->verb, "input mask (%s): element %zu is %g; a dropout mask holds 0 or 1",
                      job->in_path[1], i, m->data[i]);
            return RN_EXIT_USAGE;
        }
    const char *pt = cli_attr_text(job, A_P);
    if (rn_parse_eps(pt, x->dtype, &job->eps) != 0 || !(job->eps >= 0.0 && job->eps < 1.0)) {
        cli_error(job->verb, "attribute p: '%s' is not a decimal number in [0, 1) (after rounding "
                             "to x's dtype)", pt);
        return RN_EXIT_USAGE;
    }
    job->attr_value[A_P] = job->eps;
    job->ax = 0;
    job->rows = 1;
    job->n = x->count;
    return 0;
}

static void do_output_shape(const cli_job *job, int k, int *ndim, size_t *shape)
{
    (void)k;
    *ndim = job->in[0].ndim;
    memcpy(shape, job->in[0].shape, sizeof(size_t) * (size_t)job->in[0].ndim);
}

/* The array the op scales: x (forward) or dy (backward, input 2). */
static const double *do_arg(const cli_job *job) { return job->in[job->op->ninputs == 3 ? 2 : 0].data; }

static int do_twin(const cli_job *job, rn_dtype d, double *const *o)
{
    return dropout_forward_mpfr(o[0], do_arg(job), job->in[1].data, job->eps, job->n, d);
}

static int do_bound(const cli_job *job, rn_dtype compute, rn_dtype d, double *const *o)
{
    return dropout_bound(o[0], do_arg(job), job->in[1].data, job->eps, job->n, compute, d);
}

/* ---------------------------------------------------------------- golden cases */

typedef enum { D_RANDN, D_TINY, D_NONFINITE } dkind;

typedef struct {
    const char *name, *comment, *flags, *p;
    rn_dtype in;
    int ndim;
    size_t shape[4];
    double keep; /* probability of mask = 1 */
    dkind k;
} dcase;

/* clang-format off */
static const dcase DCASES[] = {
    {"p0_1_f32", "p = 0.1 (not dyadic: 1/(1 - p) has no finite binary expansion), batch 2 × seq 3 × 16",
     "", "0.1", RN_F32, 3, {2, 3, 16}, 0.9, D_RANDN},
    {"p0_1_f64", "p = 0.1 with f64 inputs (p rounded to f64)", "", "0.1", RN_F64, 2, {4, 16}, 0.9, D_RANDN},
    {"p0_5_f32", "p = 0.5: y = 2x exactly where kept (a dyadic result)", "", "0.5",
     RN_F32, 2, {4, 16}, 0.5, D_RANDN},
    {"p0_9_f32", "p = 0.9: scale 10, most elements dropped", "", "0.9", RN_F32, 2, {4, 32}, 0.1, D_RANDN},
    {"p0_f32", "p = 0: the identity on kept elements (mask still applied)", "", "0",
     RN_F32, 2, {2, 8}, 0.75, D_RANDN},
    {"gpt2_f32", "GPT-2 width: 4 rows of 768, p = 0.1", "gpt2", "0.1", RN_F32, 2, {4, 768}, 0.9, D_RANDN},
    {"random_f16", "f16 inputs, p = 0.2 (rounded to f16)", "half_input", "0.2",
     RN_F16, 2, {3, 16}, 0.8, D_RANDN},
    {"random_bf16", "bf16 inputs, p = 0.3 (rounded to bf16)", "half_input", "0.3",
     RN_BF16, 2, {3, 16}, 0.7, D_RANDN},
    {"tiny_f32", "x near the f32 subnormal range (and f16-underflowing values), p = 0.1",
     "tiny_scale", "0.1", RN_F32, 2, {2, 16}, 0.9, D_TINY},
    {"nonfinite_f32", "NaN and +-Inf, kept and dropped: Inf·0 = NaN, NaN·0 = NaN (IEEE)",
     "nonfinite", "0.25", RN_F32, 1, {8}, 0.5, D_NONFINITE},
};
/* clang-format on */
#define NDCASES (sizeof DCASES / sizeof DCASES[0])

static const char *const DO_FLAGS[][2] = {{NULL, NULL}};

typedef struct {
    const double *x, *mask, *dy;
    double p;
    size_t n;
} do_ctx;

static int gc_do_fwd(void *c, rn_dtype d, double *const *o)
{
    do_ctx *D = c;
    return dropout_forward_mpfr(o[0], D->x, D->mask, D->p, D->n, d);
}

static int gc_do_bwd(void *c, rn_dtype d, double *const *o)
{
    do_ctx *D = c;
    return dropout_backward_mpfr(o[0], D->dy, D->mask, D->p, D->n, d);
}

static int do_gen_case(golden_ctx *G, const dcase *c)
{
    size_t N = 1;
    for (int i = 0; i < c->ndim; i++)
        N *= c->shape[i];
    double *x = malloc(N * sizeof *x), *mask = malloc(N * sizeof *mask), *dy = malloc(N * sizeof *dy);
    int rc = -1;
    double p;
    if (!x || !mask || !dy || rn_parse_eps(c->p, c->in, &p) != 0) {
        fprintf(stderr, "resnorm golden: dropout/%s: out of memory or bad p\n", c->name);
        goto out;
    }
    golden_prng g;
    golden_prng_seed(&g, c->name);
    for (size_t i = 0; i < N; i++) {
        x[i] = golden_randn(&g);
        dy[i] = golden_randn(&g);
        mask[i] = golden_uniform(&g) < c->keep ? 1.0 : 0.0;
        if (c->k == D_TINY) {
            x[i] *= i % 2 ? 0x1p-128 : 0x1p-26;
            dy[i] *= 0x1p-130;
        }
        x[i] = rn_round(x[i], c->in);
        dy[i] = rn_round(dy[i], c->in);
    }
    if (c->k == D_NONFINITE) {
        const double v[8] = {NAN, NAN, INFINITY, INFINITY, -INFINITY, -INFINITY, 1.5, -2.0};
        const double m[8] = {1, 0, 1, 0, 1, 0, 1, 0};
        memcpy(x, v, sizeof v);
        memcpy(dy, v, sizeof v);
        memcpy(mask, m, sizeof m);
    }
    do_ctx D = {x, mask, dy, p, N};
    json_t *attrs = json_object();
    json_object_set_new(attrs, "p", json_string(c->p));
    gc_case gc = {"dropout", c->name, c->comment, c->flags, c->in, c->ndim, {0}, attrs, 0, {{0}}, 2, {{0}}};
    memcpy(gc.shape, c->shape, sizeof gc.shape);
    gc_array ax = {"x", c->ndim, {0}, x};
    memcpy(ax.shape, c->shape, sizeof ax.shape);
    gc_array am = ax, ady = ax, oy = ax, odx = ax;
    am.name = "mask", am.v = mask, ady.name = "dy", ady.v = dy, oy.name = "y", odx.name = "dx";
    gc.arrays[gc.narrays++] = ax;
    gc.arrays[gc.narrays++] = am;
    gc.arrays[gc.narrays++] = ady;
    gc.ops[0] = (gc_op){"dropout", 2, {"x", "mask"}, 1, {oy}, gc_do_fwd};
    gc.ops[1] = (gc_op){"dropout_backward", 3, {"x", "mask", "dy"}, 1, {odx}, gc_do_bwd};
    rc = gc_case_write(G, &gc, &D);
out:
    free(x), free(mask), free(dy);
    return rc;
}

static int do_golden(golden_ctx *G)
{
    for (size_t i = 0; i < NDCASES; i++)
        if (do_gen_case(G, &DCASES[i]) != 0)
            return -1;
    return 0;
}

/* ---------------------------------------------------------------- registry entries */

const cli_family cli_family_dropout = {
    "dropout",
    "dropout, dropout_backward: p (default 0.5): decimal text rounded once to x's dtype, 0 <= p < 1.\n"
    "  mask: x's shape, every value 0 or 1 (1 = kept); y = x·mask/(1 - p) rounded once;\n"
    "  dropout_backward (dy: x's shape) gives dx = dy·mask/(1 - p).\n",
    do_golden,
    DO_FLAGS,
};

const cli_op cli_op_dropout = {
    "dropout", "dropout with a given mask: y = x·mask/(1 - p)",
    &cli_family_dropout,
    2, {"x", "mask"}, {0, 0},
    1, {{"p", "0.5", CLI_ATTR_DECIMAL, 0, 0, NULL}},
    1, {"y"},
    "specs/error-analysis-dropout.md", "ref/dropout_bound.c",
    "overflow in the compute or output dtype, specs/error-analysis-dropout.md §3",
    do_prepare, do_output_shape, do_twin, do_bound, NULL, NULL,
    CLI_WHOLE, NULL, /* prepare checks every value of the mask; not streamed */
};

const cli_op cli_op_dropout_backward = {
    "dropout_backward", "dropout backward: dx = dy·mask/(1 - p)",
    &cli_family_dropout,
    3, {"x", "mask", "dy"}, {0, 0, 0},
    1, {{"p", "0.5", CLI_ATTR_DECIMAL, 0, 0, NULL}},
    1, {"dx"},
    "specs/error-analysis-dropout.md", "ref/dropout_bound.c",
    "overflow in the compute or output dtype, specs/error-analysis-dropout.md §3",
    do_prepare, do_output_shape, do_twin, do_bound, NULL, NULL,
    CLI_WHOLE, NULL, /* prepare checks every value of the mask; not streamed */
};
