/* The softmax op family in the `resnorm` registry: `softmax` over the last axis with an optional
 * additive mask (torch.softmax(x + mask, -1)) and `softmax_backward` (dx = y ⊙ (dy − Σ dy ⊙ y)).
 * Adaptors to the twin (ref/softmax_mpfr.c, Arb balls) and the bound (ref/softmax_bound.c), and the
 * family's golden cases (golden/softmax/<case>/, written by cli/golden_case.c).  Reference:
 * specs/cli.md. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "golden.h"
#include "golden_case.h"
#include "softmax_bound.h"
#include "softmax_mpfr.h"

/* ---------------------------------------------------------------- CLI adaptors */

/* Inputs: 0 x [..., n], 1 mask (optional, x's shape), 2 dy (backward, x's shape). */
static int sm_prepare(cli_job *job)
{
    const rn_array *x = &job->in[0];
    if (x->ndim < 1 || x->shape[x->ndim - 1] == 0) {
        cli_error(job->verb, "input x (%s): expected shape [..., n] with n >= 1", job->in_path[0]);
        return RN_EXIT_USAGE;
    }
    for (int k = 1; k < job->op->ninputs; k++) {
        const rn_array *a = &job->in[k];
        if (!job->in_path[k])
            continue;
        if (!cli_same_shape(a->ndim, a->shape, x->ndim, x->shape)) {
            char s1[160], s2[160];
            cli_shape_str(s1, sizeof s1, a->ndim, a->shape);
            cli_shape_str(s2, sizeof s2, x->ndim, x->shape);
            cli_error(job->verb, "input %s (%s): shape %s does not match x.shape %s",
                      job->op->inputs[k], job->in_path[k], s1, s2);
            return RN_EXIT_USAGE;
        }
    }
    job->ax = x->ndim - 1;
    job->n = x->shape[x->ndim - 1];
    job->rows = x->count / job->n;
    return 0;
}

static void sm_output_shape(const cli_job *job, int k, int *ndim, size_t *shape)
{
    (void)k;
    *ndim = job->in[0].ndim;
    memcpy(shape, job->in[0].shape, sizeof(size_t) * (size_t)job->in[0].ndim);
}

static const double *sm_mask(const cli_job *job) { return cli_optional_in(job, 1); }

static int sm_twin(const cli_job *job, rn_dtype d, double *const *o)
{
    return softmax_forward_mpfr(o[0], job->in[0].data, sm_mask(job), job->rows, job->n, d);
}

static int sm_bwd_twin(const cli_job *job, rn_dtype d, double *const *o)
{
    return softmax_backward_mpfr(o[0], job->in[0].data, sm_mask(job), job->in[2].data, job->rows,
                                 job->n, d);
}

static int sm_bound(const cli_job *job, rn_dtype compute, rn_dtype d, double *const *o)
{
    return softmax_forward_bound(o[0], job->in[0].data, sm_mask(job), job->rows, job->n, compute, d);
}

static int sm_bwd_bound(const cli_job *job, rn_dtype compute, rn_dtype d, double *const *o)
{
    return softmax_backward_bound(o[0], job->in[0].data, sm_mask(job), job->in[2].data, job->rows,
                                  job->n, compute, d);
}

/* ---------------------------------------------------------------- golden cases */

typedef enum {
    S_RANDN,     /* x = scale·randn (+ offset) */
    S_CAUSAL,    /* mask: -Inf above the diagonal of [seq, seq] rows, and -1e4 (HF style) on one row */
    S_EQUAL,     /* constant rows: y = 1/n exactly (n = 3: not dyadic; n = 4: dyadic) */
    S_NONFINITE  /* a NaN row, a fully masked row, a row with a -Inf logit */
} skind;

typedef struct {
    const char *name, *comment, *flags;
    rn_dtype in;
    int ndim;
    size_t shape[4];
    skind k;
    double scale, offset;
    int mask;
} scase;

/* clang-format off */
static const scase SCASES[] = {
    {"one_row_d4_f32", "one row of 4 logits", "small_n", RN_F32, 2, {1, 4}, S_RANDN, 2.0, 0.0, 0},
    {"rows_f32", "batch 2 × 3 rows of 16 logits, scale 3: softmax over the LAST axis only",
     "wrong_axis_target", RN_F32, 3, {2, 3, 16}, S_RANDN, 3.0, 0.0, 0},
    {"rows_f64", "3 × 5 logits, f64 inputs", "wrong_axis_target", RN_F64, 2, {3, 5}, S_RANDN, 3.0, 0.0, 0},
    {"gpt2_f32", "GPT-2 width: 2 rows of 768 logits, scale 4", "gpt2", RN_F32, 2, {2, 768}, S_RANDN, 4.0, 0.0, 0},
    {"attn_seq64_f32", "attention-like scores: 64 rows of seq = 64, scale 2, with a causal mask "
     "(-Inf above the diagonal)", "masked", RN_F32, 2, {64, 64}, S_CAUSAL, 2.0, 0.0, 1},
    {"overflow_no_max_f32", "logits 80 .. 100: exp overflows f32 (exp(88.8) = Inf) unless the max is "
     "subtracted", "overflow", RN_F32, 2, {3, 8}, S_RANDN, 5.0, 92.0, 0},
    {"underflow_no_max_f32", "logits -110 .. -90: every exp underflows to 0 in f32 (0/0) unless the "
     "max is subtracted", "underflow", RN_F32, 2, {3, 8}, S_RANDN, 5.0, -100.0, 0},
    {"logits_pm88_f32", "logits spread over [-88, 88]: tiny and dominant probabilities in one row",
     "", RN_F32, 2, {4, 32}, S_RANDN, 40.0, 0.0, 0},
    {"equal_rows_f32", "constant rows: y = 1/3 (n = 3, not dyadic) and 1/4 (exact); dx = 0 exactly "
     "where dy is constant", "exact_dyadic", RN_F32, 2, {4, 3}, S_EQUAL, 0.0, 0.0, 0},
    {"random_f16", "f16 logits, 3 rows of 12", "half_input", RN_F16, 2, {3, 12}, S_RANDN, 2.0, 0.0, 0},
    {"random_bf16", "bf16 logits, 3 rows of 12, with an additive mask", "half_input masked",
     RN_BF16, 2, {3, 12}, S_CAUSAL, 2.0, 0.0, 1},
    {"nonfinite_f32", "row 0 holds a NaN (NaN row), row 1 is fully masked (-Inf: 0/0 = NaN), row 2 "
     "has one -Inf logit (its y is 0)", "nonfinite masked", RN_F32, 2, {3, 6}, S_NONFINITE, 1.0, 0.0, 1},
};
/* clang-format on */
#define NSCASES (sizeof SCASES / sizeof SCASES[0])

static const char *const SM_FLAGS[][2] = {
    {"wrong_axis_target", "more than one row and more than one axis: a softmax over another axis "
                          "(dim 0 or 1 instead of -1) gives the right shape and wrong values"},
    {"masked", "an additive mask: -Inf (dropped, y = 0 exactly) and large negative entries"},
    {"underflow", "every exp underflows unless the max is subtracted first (0/0 = NaN)"},
    {"exact_dyadic", "exact results a ball enclosure never shrinks to (equal logits: y = 1/n, "
                     "dx = 0): computed exactly by the twin"},
    {NULL, NULL},
};

typedef struct {
    const double *x, *mask, *dy;
    size_t rows, n;
} sm_ctx;

static int gc_sm_fwd(void *c, rn_dtype d, double *const *o)
{
    sm_ctx *S = c;
    return softmax_forward_mpfr(o[0], S->x, S->mask, S->rows, S->n, d);
}

static int gc_sm_bwd(void *c, rn_dtype d, double *const *o)
{
    sm_ctx *S = c;
    return softmax_backward_mpfr(o[0], S->x, S->mask, S->dy, S->rows, S->n, d);
}

static int sm_gen_case(golden_ctx *G, const scase *c)
{
    size_t N = 1, n = c->shape[c->ndim - 1];
    for (int i = 0; i < c->ndim; i++)
        N *= c->shape[i];
    size_t rows = N / n;
    double *x = malloc(N * sizeof *x), *mask = calloc(N, sizeof *mask), *dy = malloc(N * sizeof *dy);
    int rc = -1;
    if (!x || !mask || !dy) {
        fprintf(stderr, "resnorm golden: out of memory\n");
        goto out;
    }
    golden_prng g;
    golden_prng_seed(&g, c->name);
    for (size_t i = 0; i < N; i++) {
        x[i] = c->offset + c->scale * golden_randn(&g);
        dy[i] = golden_randn(&g);
    }
    if (c->k == S_CAUSAL)
        for (size_t r = 0; r < rows; r++)
            for (size_t k = 0; k < n; k++)
                mask[r * n + k] = k > r % n ? -INFINITY : (r == 1 && k == 0) ? -1.0e4 : 0.0;
    if (c->k == S_EQUAL)
        for (size_t r = 0; r < rows; r++)
            for (size_t k = 0; k < n; k++) {
                x[r * n + k] = 0.5 * (double)r;
                if (r % 2)
                    dy[r * n + k] = 0.75; /* constant dy: dx = 0 exactly */
            }
    if (c->k == S_NONFINITE) {
        x[2] = NAN;
        for (size_t k = 0; k < n; k++)
            mask[n + k] = -INFINITY;
        x[2 * n + 1] = -INFINITY;
    }
    for (size_t i = 0; i < N; i++) {
        x[i] = rn_round(x[i], c->in);
        dy[i] = rn_round(dy[i], c->in);
        mask[i] = rn_round(mask[i], c->in);
    }
    sm_ctx S = {x, c->mask ? mask : NULL, dy, rows, n};
    gc_case gc = {"softmax", c->name, c->comment, c->flags, c->in, c->ndim, {0}, NULL, 0, {{0}}, 2, {{0}}};
    memcpy(gc.shape, c->shape, sizeof gc.shape);
    gc_array ax = {"x", c->ndim, {0}, x};
    memcpy(ax.shape, c->shape, sizeof ax.shape);
    gc_array am = ax, ady = ax, oy = ax, odx = ax;
    am.name = "mask", am.v = mask, ady.name = "dy", ady.v = dy, oy.name = "y", odx.name = "dx";
    gc.arrays[gc.narrays++] = ax;
    if (c->mask)
        gc.arrays[gc.narrays++] = am;
    gc.arrays[gc.narrays++] = ady;
    if (c->mask) {
        gc.ops[0] = (gc_op){"softmax", 2, {"x", "mask"}, 1, {oy}, gc_sm_fwd};
        gc.ops[1] = (gc_op){"softmax_backward", 3, {"x", "mask", "dy"}, 1, {odx}, gc_sm_bwd};
    } else {
        gc.ops[0] = (gc_op){"softmax", 1, {"x"}, 1, {oy}, gc_sm_fwd};
        gc.ops[1] = (gc_op){"softmax_backward", 2, {"x", "dy"}, 1, {odx}, gc_sm_bwd};
    }
    rc = gc_case_write(G, &gc, &S);
out:
    free(x), free(mask), free(dy);
    return rc;
}

static int sm_golden(golden_ctx *G)
{
    for (size_t i = 0; i < NSCASES; i++)
        if (sm_gen_case(G, &SCASES[i]) != 0)
            return -1;
    return 0;
}

/* ---------------------------------------------------------------- registry entries */

const cli_family cli_family_softmax = {
    "softmax",
    "softmax, softmax_backward: no attributes; over the LAST axis.  mask (optional): x's shape,\n"
    "  added to x (-inf drops an element: y = 0).  y = exp(z - max z)/Σ exp(z - max z), z = x + mask,\n"
    "  each element the exact value rounded once; a row with a NaN/+Inf z or no finite z is NaN.\n"
    "  softmax_backward (dy: x's shape) gives dx = y ⊙ (dy − Σ dy ⊙ y) at the exact y.\n",
    sm_golden,
    SM_FLAGS,
};

const cli_op cli_op_softmax = {
    "softmax", "softmax over the last axis, optional additive mask: y = softmax(x + mask, -1)",
    &cli_family_softmax,
    2, {"x", "mask"}, {0, 1},
    0, {{0}},
    1, {"y"},
    "specs/error-analysis-softmax.md", "ref/softmax_bound.c",
    "a row whose rounding perturbation is too large for the analysis, or overflow of dx, "
    "specs/error-analysis-softmax.md §3",
    sm_prepare, sm_output_shape, sm_twin, sm_bound, NULL, NULL,
    CLI_WHOLE, NULL, /* not streamed (issue 12 asks for the norms and the residual) */
};

const cli_op cli_op_softmax_backward = {
    "softmax_backward", "softmax backward: dx = y ⊙ (dy − Σ dy ⊙ y)",
    &cli_family_softmax,
    3, {"x", "mask", "dy"}, {0, 1, 0},
    0, {{0}},
    1, {"dx"},
    "specs/error-analysis-softmax.md", "ref/softmax_bound.c",
    "a row whose rounding perturbation is too large for the analysis, or overflow of dx, "
    "specs/error-analysis-softmax.md §3",
    sm_prepare, sm_output_shape, sm_bwd_twin, sm_bwd_bound, NULL, NULL,
    CLI_WHOLE, NULL, /* not streamed (issue 12 asks for the norms and the residual) */
};
