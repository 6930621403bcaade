/* The block op family in the `resnorm` registry (issue 9): `block` / `block_backward` (one
 * torch.nn.TransformerEncoderLayer, batch_first=True) and `stack` / `stack_backward`
 * (nn.TransformerEncoder: layers.<i>.* parameters, optional final norm), with PyTorch's parameter
 * names.  Adaptors to the twin (ref/block_mpfr.c) and the bound (ref/block_bound.c), and the
 * family's golden cases (golden/block/<case>/, written by cli/golden_case.c).  Reference:
 * specs/cli.md, "block". */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "block_bound.h"
#include "block_mpfr.h"
#include "cli.h"
#include "golden.h"
#include "golden_case.h"

enum { A_NORM = 0, A_HEADS, A_ACT, A_CAUSAL, A_EPS, A_EPSDT, A_P, A_FINAL };

/* One layer's inputs, in registry order after x (block: as is; stack: prefixed layers.<i>.). */
#define NPARAM 12
#define NMASK 4
#define PER_LAYER (NPARAM + NMASK)
static const char *const PARAM[NPARAM] = {
    "self_attn.in_proj_weight", "self_attn.in_proj_bias", "self_attn.out_proj.weight",
    "self_attn.out_proj.bias",  "linear1.weight",         "linear1.bias",
    "linear2.weight",           "linear2.bias",           "norm1.weight",
    "norm1.bias",               "norm2.weight",           "norm2.bias"};
enum { P_IN_W, P_IN_B, P_OUT_W, P_OUT_B, P_W1, P_B1, P_W2, P_B2, P_G1, P_BN1, P_G2, P_BN2 };
enum { M_ATTN, M_DROP, M_DROP1, M_DROP2 };

/* Input indices: x = 0; layer l's parameter j = 1 + PER_LAYER·l + j, its mask m = 1 + PER_LAYER·l
   + NPARAM + m; then (stack only) norm.weight, norm.bias; then key_padding_mask; then dy. */
static int is_stack(const cli_op *op) { return !strncmp(op->name, "stack", 5); }
static int max_layers(const cli_op *op) { return is_stack(op) ? BLOCK_MAX_LAYERS : 1; }
static int in_param(int l, int j) { return 1 + PER_LAYER * l + j; }
static int in_mask(int l, int m) { return 1 + PER_LAYER * l + NPARAM + m; }
static int in_final(const cli_op *op) { return 1 + PER_LAYER * max_layers(op); } /* stack only */
static int in_kpm(const cli_op *op) { return in_final(op) + (is_stack(op) ? 2 : 0); }
static int in_dy(const cli_op *op) { return in_kpm(op) + 1; }
static int is_backward(const cli_op *op) { return op->ninputs > in_dy(op); }

/* ---------------------------------------------------------------- shapes and attributes */

typedef struct {
    size_t batch, seq, d, heads, ff, L;
    int final;
} bdims;

static int bad(const cli_job *job, const char *fmt, const char *what, const char *path,
               const char *detail)
{
    cli_error(job->verb, fmt, what, path, detail);
    return RN_EXIT_USAGE;
}

/* Equal after dropping size-1 dimensions (a [seq, d] x has batch 1). */
static int squeezed_eq(const rn_array *a, int nd, const size_t *want)
{
    size_t sa[RN_MAX_DIMS], sb[RN_MAX_DIMS];
    int ka = 0, kb = 0;
    for (int i = 0; i < a->ndim; i++)
        if (a->shape[i] != 1)
            sa[ka++] = a->shape[i];
    for (int i = 0; i < nd; i++)
        if (want[i] != 1)
            sb[kb++] = want[i];
    return cli_same_shape(ka, sa, kb, sb);
}

static int check_shape(const cli_job *job, int k, int nd, size_t s0, size_t s1, size_t s2,
                       size_t s3)
{
    size_t want[4] = {s0, s1, s2, s3};
    const rn_array *a = &job->in[k];
    if (squeezed_eq(a, nd, want))
        return 0;
    char got[160], exp[160];
    cli_shape_str(got, sizeof got, a->ndim, a->shape);
    cli_shape_str(exp, sizeof exp, nd, want);
    cli_error(job->verb, "input %s (%s): shape %s, expected %s", job->op->inputs[k],
              job->in_path[k], got, exp);
    return RN_EXIT_USAGE;
}

static int check_finite(const cli_job *job, int k)
{
    const rn_array *a = &job->in[k];
    for (size_t i = 0; i < a->count; i++)
        if (!isfinite(a->data[i])) {
            char e[64];
            snprintf(e, sizeof e, "element %zu is %g", i, a->data[i]);
            return bad(job, "input %s (%s): %s; the block's twin needs finite inputs (NaN or Inf "
                       "would spread through the attention to every row)", job->op->inputs[k],
                       job->in_path[k], e);
        }
    return 0;
}

static int check_mask01(const cli_job *job, int k)
{
    const rn_array *a = &job->in[k];
    for (size_t i = 0; i < a->count; i++)
        if (a->data[i] != 0.0 && a->data[i] != 1.0) {
            char e[64];
            snprintf(e, sizeof e, "element %zu is %g", i, a->data[i]);
            return bad(job, "input %s (%s): %s; a dropout mask holds 0 or 1", job->op->inputs[k],
                       job->in_path[k], e);
        }
    return 0;
}

/* The stack's layer count: layers 0 .. L-1 complete, none of layer L .. given. */
static int count_layers(const cli_job *job, size_t *L)
{
    const cli_op *op = job->op;
    int n = 0;
    while (n < max_layers(op) && job->in_path[in_param(n, 0)])
        n++;
    for (int l = 0; l < max_layers(op); l++)
        for (int j = 0; j < PER_LAYER; j++) {
            int k = in_param(l, j);
            int given = job->in_path[k] != NULL;
            if (l < n && j < NPARAM && !given) {
                cli_error(job->verb, "missing input '%s': layers 0..%d are given, each needs all "
                          "12 parameters", op->inputs[k], n - 1);
                return RN_EXIT_USAGE;
            }
            if (l >= n && given) {
                cli_error(job->verb, "input '%s' given but %s is not (layers must be 0, 1, ... "
                          "without gaps)", op->inputs[k], op->inputs[in_param(n, 0)]);
                return RN_EXIT_USAGE;
            }
        }
    if (n == 0) {
        cli_error(job->verb, "missing input '%s'", op->inputs[in_param(0, 0)]);
        return RN_EXIT_USAGE;
    }
    *L = (size_t)n;
    return 0;
}

static int check_layer(const cli_job *job, int l, const bdims *D)
{
    size_t d = D->d, ff = D->ff, b = D->batch, s = D->seq;
    int rc = check_shape(job, in_param(l, P_IN_W), 2, 3 * d, d, 1, 1);
    rc = rc ? rc : check_shape(job, in_param(l, P_IN_B), 1, 3 * d, 1, 1, 1);
    rc = rc ? rc : check_shape(job, in_param(l, P_OUT_W), 2, d, d, 1, 1);
    rc = rc ? rc : check_shape(job, in_param(l, P_OUT_B), 1, d, 1, 1, 1);
    rc = rc ? rc : check_shape(job, in_param(l, P_W1), 2, ff, d, 1, 1);
    rc = rc ? rc : check_shape(job, in_param(l, P_B1), 1, ff, 1, 1, 1);
    rc = rc ? rc : check_shape(job, in_param(l, P_W2), 2, d, ff, 1, 1);
    for (int j = P_B2; j <= P_BN2 && !rc; j++)
        rc = check_shape(job, in_param(l, j), 1, d, 1, 1, 1);
    for (int j = 0; j < NPARAM && !rc; j++)
        rc = check_finite(job, in_param(l, j));
    if (!rc && job->in_path[in_mask(l, M_ATTN)])
        rc = check_shape(job, in_mask(l, M_ATTN), 4, b, D->heads, s, s);
    if (!rc && job->in_path[in_mask(l, M_DROP)])
        rc = check_shape(job, in_mask(l, M_DROP), 3, b, s, ff, 1);
    for (int m = M_DROP1; m <= M_DROP2 && !rc; m++)
        if (job->in_path[in_mask(l, m)])
            rc = check_shape(job, in_mask(l, m), 3, b, s, d, 1);
    for (int m = 0; m < NMASK && !rc; m++)
        if (job->in_path[in_mask(l, m)])
            rc = check_mask01(job, in_mask(l, m));
    return rc;
}

/* Every query must see a live key: a fully masked softmax row is 0/0 (NaN in PyTorch). */
static int check_live_keys(const cli_job *job, const bdims *D, int causal)
{
    const double *kpm = cli_optional_in(job, in_kpm(job->op));
    if (!kpm)
        return 0;
    for (size_t b = 0; b < D->batch; b++)
        for (size_t i = 0; i < D->seq; i++) {
            size_t live = 0;
            for (size_t j = 0; j < D->seq && !live; j++)
                live = kpm[b * D->seq + j] == 0.0 && !(causal && j > i);
            if (!live) {
                char e[96];
                snprintf(e, sizeof e, "batch %zu, query %zu sees no key", b, i);
                return bad(job, "input %s (%s): %s (PyTorch gives NaN there); not supported",
                           "key_padding_mask", job->in_path[in_kpm(job->op)], e);
            }
        }
    return 0;
}

static int blk_prepare(cli_job *job)
{
    const cli_op *op = job->op;
    const rn_array *x = &job->in[0];
    bdims D = {0};
    int rc;
    if (x->ndim != 2 && x->ndim != 3)
        return bad(job, "input %s (%s): %s", "x", job->in_path[0],
                   "expected [batch, seq, d] or [seq, d]");
    D.d = x->shape[x->ndim - 1];
    D.seq = x->shape[x->ndim - 2];
    D.batch = x->ndim == 3 ? x->shape[0] : 1;
    if (!D.d || !D.seq || !D.batch)
        return bad(job, "input %s (%s): %s", "x", job->in_path[0], "a zero dimension");
    if ((rc = check_finite(job, 0)))
        return rc;
    D.L = 1;
    if (is_stack(op) && (rc = count_layers(job, &D.L)))
        return rc;
    long heads = job->attr_int[A_HEADS];
    if (heads < 1 || D.d % (size_t)heads != 0) {
        cli_error(job->verb, "attribute heads=%ld: required, >= 1, and must divide d = %zu", heads,
                  D.d);
        return RN_EXIT_USAGE;
    }
    D.heads = (size_t)heads;
    const rn_array *w1 = &job->in[in_param(0, P_W1)];
    D.ff = w1->ndim == 2 ? w1->shape[0] : 0;
    if (!D.ff)
        return bad(job, "input %s (%s): %s", op->inputs[in_param(0, P_W1)],
                   job->in_path[in_param(0, P_W1)], "expected [ff, d] with ff >= 1");
    for (int l = 0; l < (int)D.L; l++)
        if ((rc = check_layer(job, l, &D)))
            return rc;
    if (is_stack(op)) {
        D.final = (int)job->attr_int[A_FINAL];
        int given = job->in_path[in_final(op)] || job->in_path[in_final(op) + 1];
        if (D.final && !(job->in_path[in_final(op)] && job->in_path[in_final(op) + 1])) {
            cli_error(job->verb, "final_norm=1 needs the inputs norm.weight and norm.bias");
            return RN_EXIT_USAGE;
        }
        if (!D.final && given) {
            cli_error(job->verb, "norm.weight / norm.bias given but final_norm=0 (set --attr "
                                 "final_norm=1 to apply the final LayerNorm)");
            return RN_EXIT_USAGE;
        }
        for (int k = in_final(op); D.final && k < in_final(op) + 2; k++)
            if ((rc = check_shape(job, k, 1, D.d, 1, 1, 1)) || (rc = check_finite(job, k)))
                return rc;
    }
    int causal = (int)job->attr_int[A_CAUSAL];
    if (job->in_path[in_kpm(op)] &&
        ((rc = check_shape(job, in_kpm(op), 2, D.batch, D.seq, 1, 1)) ||
         (rc = check_finite(job, in_kpm(op))) || (rc = check_live_keys(job, &D, causal))))
        return rc;
    if (is_backward(op) && ((rc = check_shape(job, in_dy(op), 3, D.batch, D.seq, D.d, 1)) ||
                            (rc = check_finite(job, in_dy(op)))))
        return rc;
    const char *pt = cli_attr_text(job, A_P);
    double p;
    if (rn_parse_eps(pt, x->dtype, &p) != 0 || !(p >= 0.0 && p < 1.0)) {
        cli_error(job->verb, "attribute p: '%s' is not a decimal number in [0, 1) (after rounding "
                             "to x's dtype)", pt);
        return RN_EXIT_USAGE;
    }
    if ((rc = cli_resolve_eps(job, A_EPS, A_EPSDT)))
        return rc;
    if (!(job->eps > 0.0)) {
        cli_error(job->verb, "attribute eps: must be > 0 for the block (a constant row with eps = 0 "
                             "has no rstd)");
        return RN_EXIT_USAGE;
    }
    const char *norm = cli_attr_text(job, A_NORM), *act = cli_attr_text(job, A_ACT);
    job->attr_str[A_NORM] = norm;
    job->attr_str[A_ACT] = act;
    job->attr_value[A_NORM] = !strcmp(norm, "post");
    job->attr_value[A_ACT] = !strcmp(act, "relu") ? RN_ACT_RELU
                             : !strcmp(act, "gelu") ? RN_ACT_GELU : RN_ACT_GELU_TANH;
    job->attr_value[A_HEADS] = (double)D.heads;
    job->attr_value[A_CAUSAL] = causal;
    job->attr_value[A_P] = p;
    if (is_stack(op))
        job->attr_value[A_FINAL] = D.final;
    job->ax = x->ndim - 1;
    job->rows = D.batch * D.seq;
    job->n = D.d;
    return 0;
}

/* The dimensions prepare validated. */
static bdims dims_of(const cli_job *job)
{
    const rn_array *x = &job->in[0];
    bdims D = {0};
    D.d = job->n, D.seq = x->shape[x->ndim - 2], D.batch = job->rows / D.seq;
    D.heads = (size_t)job->attr_value[A_HEADS];
    D.ff = job->in[in_param(0, P_W1)].shape[0];
    D.L = 0;
    while ((int)D.L < max_layers(job->op) && job->in_path[in_param((int)D.L, 0)])
        D.L++;
    D.final = is_stack(job->op) && job->attr_value[A_FINAL] != 0;
    return D;
}

/* Outputs: y / dx (x's shape); d.<param> (its parameter's shape); absent for missing layers. */
static void blk_output_shape(const cli_job *job, int k, int *ndim, size_t *shape)
{
    const rn_array *x = &job->in[0];
    if (k == 0) {
        *ndim = x->ndim;
        memcpy(shape, x->shape, sizeof(size_t) * (size_t)x->ndim);
        return;
    }
    bdims D = dims_of(job);
    int src;
    if (k - 1 < NPARAM * max_layers(job->op)) {
        int l = (k - 1) / NPARAM, j = (k - 1) % NPARAM;
        if ((size_t)l >= D.L) {
            *ndim = -1;
            return;
        }
        src = in_param(l, j);
    } else { /* d.norm.weight, d.norm.bias */
        if (!D.final) {
            *ndim = -1;
            return;
        }
        src = in_final(job->op) + (k - 1 - NPARAM * max_layers(job->op));
    }
    const rn_array *a = &job->in[src];
    *ndim = a->ndim;
    memcpy(shape, a->shape, sizeof(size_t) * (size_t)a->ndim);
}

static rn_activation act_of(double v) { return (rn_activation)(int)v; }

/* block_args from a prepared job; layers: [BLOCK_MAX_LAYERS]. */
static void args_of(const cli_job *job, block_args *B, block_layer *layers)
{
    bdims D = dims_of(job);
    for (size_t l = 0; l < D.L; l++) {
        const double *p[NPARAM], *m[NMASK];
        for (int j = 0; j < NPARAM; j++)
            p[j] = job->in[in_param((int)l, j)].data;
        for (int j = 0; j < NMASK; j++)
            m[j] = cli_optional_in(job, in_mask((int)l, j));
        layers[l] = (block_layer){p[P_IN_W], p[P_IN_B], p[P_OUT_W], p[P_OUT_B], p[P_W1], p[P_B1],
                                  p[P_W2],   p[P_B2],   p[P_G1],    p[P_BN1],   p[P_G2], p[P_BN2],
                                  m[M_ATTN], m[M_DROP], m[M_DROP1], m[M_DROP2]};
    }
    *B = (block_args){job->in[0].data, D.L, layers,
                      D.final ? job->in[in_final(job->op)].data : NULL,
                      D.final ? job->in[in_final(job->op) + 1].data : NULL,
                      cli_optional_in(job, in_kpm(job->op)), job->attr_value[A_NORM] != 0,
                      job->attr_value[A_CAUSAL] != 0, act_of(job->attr_value[A_ACT]),
                      D.batch, D.seq, D.d, D.heads, D.ff, job->eps, job->attr_value[A_P]};
}

/* Output pointers o[] (dx, then NPARAM per layer; with a final norm, d.norm.weight and d.norm.bias
   at o[final_at], o[final_at + 1]) as the twin's and the bounds' gradient structs.  final_at is
   1 + NPARAM × the layers the layout has room for: the CLI's registry always has BLOCK_MAX_LAYERS
   (a stack), a golden case exactly its own. */
static void grads_of(const block_args *B, double *const *o, size_t final_at, block_layer_grad *lg,
                     block_grads *g)
{
    for (size_t l = 0; l < B->nlayers; l++) {
        double *const *q = o + 1 + NPARAM * l;
        lg[l] = (block_layer_grad){q[P_IN_W], q[P_IN_B], q[P_OUT_W], q[P_OUT_B], q[P_W1], q[P_B1],
                                   q[P_W2],   q[P_B2],   q[P_G1],    q[P_BN1],   q[P_G2], q[P_BN2]};
    }
    *g = (block_grads){o[0], lg, NULL, NULL};
    if (B->fg)
        g->dfg = o[final_at], g->dfb = o[final_at + 1];
}

/* Where the CLI's outputs put the final norm's gradients (see grads_of). */
static size_t cli_final_at(const cli_job *job) { return 1 + NPARAM * (size_t)max_layers(job->op); }

static int blk_twin(const cli_job *job, rn_dtype d, double *const *o)
{
    block_layer layers[BLOCK_MAX_LAYERS];
    block_args B;
    args_of(job, &B, layers);
    if (!is_backward(job->op))
        return block_forward_mpfr(o, &d, 1, &B);
    block_layer_grad lg[BLOCK_MAX_LAYERS];
    block_grads g;
    grads_of(&B, o, cli_final_at(job), lg, &g);
    return block_backward_mpfr(&g, &d, 1, job->in[in_dy(job->op)].data, &B);
}

static int blk_bound(const cli_job *job, rn_dtype compute, rn_dtype d, double *const *o)
{
    block_layer layers[BLOCK_MAX_LAYERS];
    block_args B;
    args_of(job, &B, layers);
    if (!is_backward(job->op))
        return block_forward_bound(o[0], &B, compute, d);
    block_layer_grad lg[BLOCK_MAX_LAYERS];
    block_grads g;
    grads_of(&B, o, cli_final_at(job), lg, &g);
    return block_backward_bound(&g, job->in[in_dy(job->op)].data, &B, compute, d);
}

/* ---------------------------------------------------------------- golden cases */

typedef enum { K_RANDOM, K_IDENTITY, K_TRACE } bkind;
enum { MK_ATTN = 1, MK_DROP = 2, MK_DROP1 = 4, MK_DROP2 = 8, MK_KPM = 16, MK_ALL = 31 };

typedef struct {
    const char *name, *comment, *flags;
    rn_dtype in;
    int x3d;                       /* x as [batch, seq, d] (else [seq, d], batch 1) */
    size_t batch, seq, d, heads, ff, L;
    int stack, post, act, causal, final, masks;
    const char *p;
    bkind k;
    int no_wgrad;                  /* 1: block_backward's golden outputs omit the four weight
                                      matrices' gradients (GPT-2 width: 28 M values per dtype;
                                      the same bilinear sums as on the small cases) */
} bcase;

/* The weight matrices, whose gradients a no_wgrad case leaves out of its golden outputs. */
static int is_weight(int j) { return j == P_IN_W || j == P_OUT_W || j == P_W1 || j == P_W2; }

/* 1 if backward output k (0: dx, then NPARAM per layer for L layers, then the final norm's) is a
   weight matrix's gradient: the outputs a no_wgrad case and a check that does not compare them
   leave out. */
static int is_weight_grad(size_t k, size_t L)
{
    return k >= 1 && k <= NPARAM * L && is_weight((int)((k - 1) % NPARAM));
}

/* clang-format off */
static const bcase BCASES[] = {
    {"pre_relu_d4_f32", "pre-LN block, d = 4, 1 head, ff = 8, one sequence of 3 tokens, relu",
     "pre_ln small_n", RN_F32, 1, 1, 3, 4, 1, 8, 1, 0, 0, RN_ACT_RELU, 0, 0, 0, "0.1", K_RANDOM, 0},
    {"post_gelu_d4_causal_f32", "post-LN block, d = 4, 2 heads, ff = 8, batch 2 × seq 3, gelu (erf), causal",
     "post_ln causal batch", RN_F32, 1, 2, 3, 4, 2, 8, 1, 0, 1, RN_ACT_GELU, 1, 0, 0, "0.1", K_RANDOM, 0},
    {"pre_gelu_tanh_masks_f32", "pre-LN block with every dropout mask (attn_dropout, dropout, dropout1, "
     "dropout2; p = 0.1) and a key_padding_mask, d = 8, 2 heads, ff = 16, batch 2 × seq 4",
     "pre_ln dropout_masks key_padding batch", RN_F32, 1, 2, 4, 8, 2, 16, 1, 0, 0, RN_ACT_GELU_TANH, 0, 0,
     MK_ALL, "0.1", K_RANDOM, 0},
    {"post_relu_masks_causal_f32", "post-LN block with every dropout mask (p = 0.2), causal, relu, "
     "d = 8, 2 heads, ff = 16, seq 4 as [seq, d]", "post_ln dropout_masks causal", RN_F32, 0, 1, 4, 8, 2, 16,
     1, 0, 1, RN_ACT_RELU, 1, 0, MK_ATTN | MK_DROP | MK_DROP1 | MK_DROP2, "0.2", K_RANDOM, 0},
    {"post_relu_f64", "post-LN block on f64 inputs, d = 8, 4 heads, ff = 16, batch 1 × seq 5",
     "post_ln", RN_F64, 1, 1, 5, 8, 4, 16, 1, 0, 1, RN_ACT_RELU, 0, 0, 0, "0.1", K_RANDOM, 0},
    {"pre_gelu_f16", "pre-LN block on f16 inputs, d = 4, 2 heads, ff = 8, seq 3", "pre_ln half_input",
     RN_F16, 1, 1, 3, 4, 2, 8, 1, 0, 0, RN_ACT_GELU, 0, 0, 0, "0.1", K_RANDOM, 0},
    {"post_relu_bf16", "post-LN block on bf16 inputs, d = 4, 1 head, ff = 8, seq 3", "post_ln half_input",
     RN_BF16, 1, 1, 3, 4, 1, 8, 1, 0, 1, RN_ACT_RELU, 0, 0, 0, "0.1", K_RANDOM, 0},
    {"multihead_d16_f32", "pre-LN block, d = 16, 4 heads, ff = 64, batch 2 × seq 6, gelu, causal",
     "pre_ln causal batch", RN_F32, 1, 2, 6, 16, 4, 64, 1, 0, 0, RN_ACT_GELU, 1, 0, 0, "0.1", K_RANDOM, 0},
    {"identity_pre_f32", "pre-LN block whose out_proj and linear2 weights and biases are zero: y = x "
     "exactly (the seed's 'identity is always achievable')", "pre_ln identity", RN_F32, 1, 1, 3, 4, 2, 8,
     1, 0, 0, RN_ACT_GELU, 0, 0, 0, "0.1", K_IDENTITY, 0},
    {"identity_pre_bf16", "the identity pre-LN block on bf16 inputs", "pre_ln identity half_input",
     RN_BF16, 1, 1, 3, 4, 2, 8, 1, 0, 0, RN_ACT_RELU, 0, 0, 0, "0.1", K_IDENTITY, 0},
    {"seed_trace_d4_f32", "the seed's one-token pre-LN trace: x = [1.0, 0.5, 1.5, 0.8] (assumed, as "
     "`resnorm experiment trace`), the attention sublayer's update F = out_proj.bias = [0.10, -0.05, "
     "0.20, 0.00] (value projection zero), a small FFN update G", "pre_ln one_token", RN_F32, 1, 1, 1, 4,
     1, 8, 1, 0, 0, RN_ACT_RELU, 0, 0, 0, "0.1", K_TRACE, 0},
    {"stack2_pre_final_f32", "stack of 2 pre-LN layers with the final norm (GPT-2's layout), d = 8, "
     "2 heads, ff = 16, batch 1 × seq 4, gelu, causal", "stack pre_ln final_norm causal", RN_F32, 1, 1, 4,
     8, 2, 16, 2, 1, 0, RN_ACT_GELU, 1, 1, 0, "0.1", K_RANDOM, 0},
    {"stack2_post_f32", "stack of 2 post-LN layers without final norm, d = 8, 2 heads, ff = 16, "
     "batch 2 × seq 3, relu", "stack post_ln batch", RN_F32, 1, 2, 3, 8, 2, 16, 2, 1, 1, RN_ACT_RELU, 0, 0,
     0, "0.1", K_RANDOM, 0},
    {"stack4_pre_final_f32", "stack of 4 pre-LN layers with the final norm, d = 8, 2 heads, ff = 16, "
     "batch 1 × seq 4, relu", "stack pre_ln final_norm", RN_F32, 1, 1, 4, 8, 2, 16, 4, 1, 0, RN_ACT_RELU,
     0, 1, 0, "0.1", K_RANDOM, 0},
    {"stack4_post_final_f32", "stack of 4 post-LN layers with a final norm, d = 8, 4 heads, ff = 16, "
     "batch 1 × seq 3, gelu", "stack post_ln final_norm", RN_F32, 1, 1, 3, 8, 4, 16, 4, 1, 1, RN_ACT_GELU,
     0, 1, 0, "0.1", K_RANDOM, 0},
    {"gpt2_pre_gelu_causal_bf16", "GPT-2 width: one pre-LN layer, d = 768, 12 heads (dh = 64), "
     "ff = 3072, gelu (erf), causal, batch 1 × seq 16, bf16 inputs (as a bf16 checkpoint), weights "
     "~ N(0, 1/fan_in); the backward's outputs are dx and the biases' and norms' gradients",
     "gpt2 pre_ln causal half_input no_weight_grads", RN_BF16, 1, 1, 16, 768, 12, 3072, 1, 0, 0,
     RN_ACT_GELU, 1, 0, 0, "0.1", K_RANDOM, 1},
};
/* clang-format on */
#define NBCASES (sizeof BCASES / sizeof BCASES[0])

static const char *const BLK_FLAGS[][2] = {
    {"pre_ln", "norm_first=True: x + drop1(attn(norm1(x))), then h + drop2(ffn(norm2(h))); an "
               "implementation that normalizes after the add (post-LN), adds the residual to the "
               "normalized copy, or swaps norm1 and norm2 fails"},
    {"post_ln", "norm_first=False: norm1(x + drop1(attn(x))), then norm2(h + drop2(ffn(h))); the "
                "backward must take LayerNorm's backward at the sum (not at its output)"},
    {"dropout_masks", "the dropout masks are inputs (attn_dropout on the attention weights, dropout "
                      "after the activation, dropout1/dropout2 on the sublayer outputs before the "
                      "residual add): dropout after the add, or a mask in the wrong place, fails"},
    {"key_padding", "a key_padding_mask (nonzero: key ignored)"},
    {"causal", "causal self-attention: key j > query i is masked"},
    {"identity", "a pre-LN block whose out_proj and linear2 weights and biases are zero: y = x "
                 "exactly, in every dtype"},
    {"one_token", "one token (seq = 1): the attention's softmax is exactly 1"},
    {"stack", "several layers (parameters layers.<i>.*): a layer's parameters taken from another "
              "layer fail"},
    {"final_norm", "the stack's final LayerNorm (norm.weight, norm.bias): missing or applied twice "
                   "fails"},
    {NULL, NULL},
};

/* Every array of one case (parameters per layer), their storage and names. */
typedef struct {
    const bcase *c;
    size_t N, R;                 /* elements of x, rows */
    double *x, *dy, *kpm, *fg, *fb;
    double *p[BLOCK_MAX_LAYERS][NPARAM], *m[BLOCK_MAX_LAYERS][NMASK];
    char names[BLOCK_MAX_LAYERS][PER_LAYER][64], dnames[BLOCK_MAX_LAYERS][NPARAM][72];
    block_layer layers[BLOCK_MAX_LAYERS];
    block_args B;
    double *ys[RN_NDTYPES];      /* the certified forward output y, each dtype */
    double *outs[RN_NDTYPES][1 + NPARAM * BLOCK_MAX_LAYERS + 2]; /* the backward's: dx, d.<param> */
    int have_fwd, have_bwd;
} bcase_data;

static size_t param_count(const bcase *c, int j)
{
    size_t d = c->d, ff = c->ff;
    switch (j) {
    case P_IN_W: return 3 * d * d;
    case P_IN_B: return 3 * d;
    case P_OUT_W: return d * d;
    case P_W1: case P_W2: return ff * d;
    case P_B1: return ff;
    default: return d;
    }
}

static size_t mask_count(const bcase *c, int m)
{
    size_t R = c->batch * c->seq;
    return m == M_ATTN ? c->batch * c->heads * c->seq * c->seq : m == M_DROP ? R * c->ff : R * c->d;
}

static void param_shape(const bcase *c, int j, int *nd, size_t *s)
{
    size_t d = c->d, ff = c->ff;
    *nd = 1;
    s[0] = param_count(c, j);
    if (j == P_IN_W)
        *nd = 2, s[0] = 3 * d, s[1] = d;
    else if (j == P_OUT_W)
        *nd = 2, s[0] = d, s[1] = d;
    else if (j == P_W1)
        *nd = 2, s[0] = ff, s[1] = d;
    else if (j == P_W2)
        *nd = 2, s[0] = d, s[1] = ff;
}

static void mask_shape(const bcase *c, int m, int *nd, size_t *s)
{
    if (m == M_ATTN) {
        *nd = 4, s[0] = c->batch, s[1] = c->heads, s[2] = c->seq, s[3] = c->seq;
        return;
    }
    size_t last = m == M_DROP ? c->ff : c->d;
    if (c->x3d)
        *nd = 3, s[0] = c->batch, s[1] = c->seq, s[2] = last;
    else
        *nd = 2, s[0] = c->seq, s[1] = last;
}

static void bd_free(bcase_data *D)
{
    free(D->x), free(D->dy), free(D->kpm), free(D->fg), free(D->fb);
    for (int l = 0; l < BLOCK_MAX_LAYERS; l++) {
        for (int j = 0; j < NPARAM; j++)
            free(D->p[l][j]);
        for (int m = 0; m < NMASK; m++)
            free(D->m[l][m]);
    }
    for (int t = 0; t < RN_NDTYPES; t++) {
        free(D->ys[t]);
        for (size_t k = 0; k < 1 + NPARAM * BLOCK_MAX_LAYERS + 2; k++)
            free(D->outs[t][k]);
    }
}

/* Draw the case's inputs (deterministic: golden_prng seeded by the case name). */
static int bd_fill(bcase_data *D, const bcase *c)
{
    golden_prng g;
    golden_prng_seed(&g, c->name);
    memset(D, 0, sizeof *D);
    D->c = c;
    D->R = c->batch * c->seq, D->N = D->R * c->d;
    double sd = 1.0 / sqrt((double)c->d), sff = 1.0 / sqrt((double)c->ff);
#define R_(v) rn_round((v), c->in)
    if (!(D->x = malloc(D->N * sizeof *D->x)) || !(D->dy = malloc(D->N * sizeof *D->dy)))
        return -1;
    for (size_t i = 0; i < D->N; i++)
        D->x[i] = R_(golden_randn(&g)), D->dy[i] = R_(golden_randn(&g));
    for (size_t l = 0; l < c->L; l++) {
        for (int j = 0; j < NPARAM; j++) {
            size_t n = param_count(c, j);
            if (!(D->p[l][j] = malloc(n * sizeof(double))))
                return -1;
            double s = j == P_W2 ? sff : (j == P_IN_W || j == P_OUT_W || j == P_W1) ? sd : 0.1;
            for (size_t i = 0; i < n; i++)
                D->p[l][j][i] = R_((j == P_G1 || j == P_G2 ? 1.0 : 0.0) + s * golden_randn(&g));
        }
        for (int m = 0; m < NMASK; m++) {
            if (!(c->masks & (1 << m)))
                continue;
            size_t n = mask_count(c, m);
            if (!(D->m[l][m] = malloc(n * sizeof(double))))
                return -1;
            for (size_t i = 0; i < n; i++)
                D->m[l][m][i] = golden_uniform(&g) < 0.8 ? 1.0 : 0.0;
        }
    }
    if (c->masks & MK_KPM) { /* the last key of every sequence but the first is padding */
        if (!(D->kpm = calloc(D->R, sizeof *D->kpm)))
            return -1;
        for (size_t b = 1; b < c->batch; b++)
            D->kpm[b * c->seq + c->seq - 1] = 1.0;
    }
    if (c->final) {
        if (!(D->fg = malloc(c->d * sizeof *D->fg)) || !(D->fb = malloc(c->d * sizeof *D->fb)))
            return -1;
        for (size_t i = 0; i < c->d; i++)
            D->fg[i] = R_(1.0 + 0.1 * golden_randn(&g)), D->fb[i] = R_(0.1 * golden_randn(&g));
    }
    if (c->k == K_IDENTITY) /* out_proj and linear2 zero: both sublayers output exactly 0 */
        for (int j = P_OUT_W; j <= P_B2; j++)
            if (j == P_OUT_W || j == P_OUT_B || j == P_W2 || j == P_B2)
                memset(D->p[0][j], 0, param_count(c, j) * sizeof(double));
    if (c->k == K_TRACE) { /* the seed's x and F = out_proj(v) + out_b with v = 0 */
        static const double tx[4] = {1.0, 0.5, 1.5, 0.8}, tf[4] = {0.10, -0.05, 0.20, 0.00};
        for (int i = 0; i < 4; i++)
            D->x[i] = R_(tx[i]), D->p[0][P_OUT_B][i] = R_(tf[i]);
        memset(D->p[0][P_IN_W] + 2 * c->d * c->d, 0, c->d * c->d * sizeof(double)); /* W_v = 0 */
        memset(D->p[0][P_IN_B] + 2 * c->d, 0, c->d * sizeof(double));               /* b_v = 0 */
        for (int j = P_G1; j <= P_BN2; j++) /* identity affine norms, as in the seed */
            for (size_t i = 0; i < c->d; i++)
                D->p[0][j][i] = j == P_G1 || j == P_G2 ? 1.0 : 0.0;
        for (int j = P_W2; j <= P_B2; j++) /* a small FFN update G, as the seed's "some small update" */
            for (size_t i = 0; i < param_count(c, j); i++)
                D->p[0][j][i] = R_(0.1 * D->p[0][j][i]);
    }
#undef R_
    for (size_t l = 0; l < c->L; l++)
        D->layers[l] = (block_layer){D->p[l][0], D->p[l][1], D->p[l][2], D->p[l][3], D->p[l][4],
                                     D->p[l][5], D->p[l][6], D->p[l][7], D->p[l][8], D->p[l][9],
                                     D->p[l][10], D->p[l][11], D->m[l][0], D->m[l][1],
                                     D->m[l][2], D->m[l][3]};
    double p;
    if (rn_parse_eps(c->p, c->in, &p) != 0)
        return -1;
    double eps;
    if (rn_parse_eps("1e-5", cli_default_eps_dtype(c->in), &eps) != 0)
        return -1;
    D->B = (block_args){D->x, c->L, D->layers, D->fg, D->fb, D->kpm, c->post, c->causal,
                        (rn_activation)c->act, c->batch, c->seq, c->d, c->heads, c->ff, eps, p};
    return 0;
}

/* gc_case_write asks for one dtype at a time (forward and backward in turn); the twin certifies
   all four dtypes of an op in one computation the first time (the block's Ziv loop is the
   expensive part) and serves the others from it. */
/* The element count of backward output k (is_weight_grad's numbering). */
static size_t bd_out_count(const bcase_data *D, size_t k)
{
    const bcase *c = D->c;
    return k == 0 ? D->N : k <= NPARAM * c->L ? param_count(c, (int)((k - 1) % NPARAM)) : c->d;
}

static int bd_compute(bcase_data *D, int backward)
{
    const bcase *c = D->c;
    size_t nout = backward ? 1 + NPARAM * c->L + (c->final ? 2 : 0) : 0;
    rn_dtype dts[RN_NDTYPES];
    for (int t = 0; t < RN_NDTYPES; t++) {
        dts[t] = (rn_dtype)t;
        if (!backward) {
            free(D->ys[t]);
            if (!(D->ys[t] = malloc(D->N * sizeof(double))))
                return RN_TWIN_NOMEM;
        }
        for (size_t k = 0; k < nout; k++) {
            free(D->outs[t][k]);
            D->outs[t][k] = NULL;
            if (c->no_wgrad && is_weight_grad(k, c->L))
                continue; /* not written: the twin computes its balls but does not round them */
            if (!(D->outs[t][k] = malloc(bd_out_count(D, k) * sizeof(double))))
                return RN_TWIN_NOMEM;
        }
    }
    if (!backward)
        return block_forward_mpfr(D->ys, dts, RN_NDTYPES, &D->B);
    block_layer_grad lg[RN_NDTYPES][BLOCK_MAX_LAYERS];
    block_grads g[RN_NDTYPES];
    for (int t = 0; t < RN_NDTYPES; t++) {
        grads_of(&D->B, D->outs[t], 1 + NPARAM * c->L, lg[t], &g[t]);
    }
    return block_backward_mpfr(g, dts, RN_NDTYPES, D->dy, &D->B);
}

static int gc_fwd(void *ctx, rn_dtype d, double *const *o)
{
    bcase_data *D = ctx;
    if (!D->have_fwd) {
        int rc = bd_compute(D, 0);
        if (rc)
            return rc;
        D->have_fwd = 1;
    }
    memcpy(o[0], D->ys[d], D->N * sizeof(double));
    return RN_TWIN_OK;
}

static int gc_bwd(void *ctx, rn_dtype d, double *const *o)
{
    bcase_data *D = ctx;
    const bcase *c = D->c;
    if (!D->have_bwd) {
        int rc = bd_compute(D, 1);
        if (rc)
            return rc;
        D->have_bwd = 1;
    }
    size_t nout = 1 + NPARAM * c->L + (c->final ? 2 : 0), w = 0; /* w: the written output */
    for (size_t k = 0; k < nout; k++) {
        if (c->no_wgrad && is_weight_grad(k, c->L))
            continue;
        memcpy(o[w++], D->outs[d][k], bd_out_count(D, k) * sizeof(double));
    }
    return RN_TWIN_OK;
}

static json_t *bd_attrs(const bcase *c)
{
    json_t *a = json_object();
    json_object_set_new(a, "norm", json_string(c->post ? "post" : "pre"));
    json_object_set_new(a, "heads", json_integer((json_int_t)c->heads));
    json_object_set_new(a, "activation", json_string(c->act == RN_ACT_RELU   ? "relu"
                                                     : c->act == RN_ACT_GELU ? "gelu"
                                                                             : "gelu_tanh"));
    json_object_set_new(a, "causal", json_integer(c->causal));
    json_object_set_new(a, "eps", json_string("1e-5"));
    json_object_set_new(a, "eps_dtype", json_string(rn_dtype_name(cli_default_eps_dtype(c->in))));
    json_object_set_new(a, "p", json_string(c->p));
    if (c->stack)
        json_object_set_new(a, "final_norm", json_integer(c->final));
    return a;
}

static int bd_gen_case(golden_ctx *G, const bcase *c)
{
    bcase_data *D = calloc(1, sizeof *D);
    int rc = -1;
    if (!D || bd_fill(D, c) != 0) {
        fprintf(stderr, "resnorm golden: block/%s: out of memory\n", c->name);
        goto out;
    }
    gc_case gc = {"block", c->name, c->comment, c->flags, c->in, 0, {0}, bd_attrs(c), 0, {{0}}, 2,
                  {{0}}};
    gc_array ax = {"x", 0, {0}, D->x};
    if (c->x3d)
        ax.ndim = 3, ax.shape[0] = c->batch, ax.shape[1] = c->seq, ax.shape[2] = c->d;
    else
        ax.ndim = 2, ax.shape[0] = c->seq, ax.shape[1] = c->d;
    gc.ndim = ax.ndim;
    memcpy(gc.shape, ax.shape, sizeof gc.shape);
    gc_op *f = &gc.ops[0], *bw = &gc.ops[1];
    f->op = c->stack ? "stack" : "block";
    bw->op = c->stack ? "stack_backward" : "block_backward";
    gc.arrays[gc.narrays++] = ax;
    f->inputs[f->ninputs++] = "x";
    gc_array ody = ax;
    ody.name = "dx";
    bw->outputs[bw->noutputs++] = ody;
    for (size_t l = 0; l < c->L; l++) {
        for (int j = 0; j < PER_LAYER; j++) {
            int m = j - NPARAM;
            if (j >= NPARAM && !D->m[l][m])
                continue;
            if (c->stack)
                snprintf(D->names[l][j], sizeof D->names[l][j], "layers.%zu.%s", l,
                         j < NPARAM ? PARAM[j] : cli_op_block.inputs[1 + j]);
            else
                snprintf(D->names[l][j], sizeof D->names[l][j], "%s",
                         j < NPARAM ? PARAM[j] : cli_op_block.inputs[1 + j]);
            gc_array a = {D->names[l][j], 0, {0}, j < NPARAM ? D->p[l][j] : D->m[l][m]};
            if (j < NPARAM)
                param_shape(c, j, &a.ndim, a.shape);
            else
                mask_shape(c, m, &a.ndim, a.shape);
            gc.arrays[gc.narrays++] = a;
            f->inputs[f->ninputs++] = D->names[l][j];
            if (j < NPARAM && !(c->no_wgrad && is_weight(j))) {
                snprintf(D->dnames[l][j], sizeof D->dnames[l][j], "d.%s", D->names[l][j]);
                a.name = D->dnames[l][j];
                bw->outputs[bw->noutputs++] = a;
            }
        }
    }
    if (c->final) {
        gc_array gw = {"norm.weight", 1, {c->d}, D->fg}, gb = {"norm.bias", 1, {c->d}, D->fb};
        gc.arrays[gc.narrays++] = gw, gc.arrays[gc.narrays++] = gb;
        f->inputs[f->ninputs++] = "norm.weight", f->inputs[f->ninputs++] = "norm.bias";
        gw.name = "d.norm.weight", gb.name = "d.norm.bias";
        bw->outputs[bw->noutputs++] = gw, bw->outputs[bw->noutputs++] = gb;
    }
    if (D->kpm) {
        gc_array k = {"key_padding_mask", 2, {c->batch, c->seq}, D->kpm};
        if (!c->x3d)
            k.ndim = 1, k.shape[0] = c->seq;
        gc.arrays[gc.narrays++] = k;
        f->inputs[f->ninputs++] = "key_padding_mask";
    }
    gc_array ady = ax;
    ady.name = "dy", ady.v = D->dy;
    gc.arrays[gc.narrays++] = ady;
    f->outputs[f->noutputs++] = ax;
    f->outputs[0].name = "y";
    f->twin = gc_fwd;
    memcpy(bw->inputs, f->inputs, sizeof bw->inputs);
    bw->ninputs = f->ninputs;
    bw->inputs[bw->ninputs++] = "dy";
    bw->twin = gc_bwd;
    rc = gc_case_write(G, &gc, D);
out:
    if (D)
        bd_free(D);
    free(D);
    return rc;
}

static int blk_golden(golden_ctx *G)
{
    for (size_t i = 0; i < NBCASES; i++)
        if (bd_gen_case(G, &BCASES[i]) != 0)
            return -1;
    return 0;
}

/* ---------------------------------------------------------------- registry entries */

const cli_family cli_family_block = {
    "block",
    "block, block_backward, stack, stack_backward (torch.nn.TransformerEncoderLayer /\n"
    "  TransformerEncoder, batch_first=True, PyTorch's parameter names): x [batch, seq, d] or [seq, d];\n"
    "  self_attn.in_proj_weight [3d, d], self_attn.in_proj_bias [3d], self_attn.out_proj.weight\n"
    "  [d, d], self_attn.out_proj.bias [d], linear1.weight [ff, d], linear1.bias [ff],\n"
    "  linear2.weight [d, ff], linear2.bias [d], norm1/norm2.weight and .bias [d]; optional 0/1\n"
    "  masks attn_dropout.mask [batch, heads, seq, seq], dropout.mask [batch, seq, ff] (after the\n"
    "  activation), dropout1.mask / dropout2.mask (x's shape; on the attention / FFN output before\n"
    "  the residual add), scaled by 1/(1 - p) (no mask: eval mode); key_padding_mask [batch, seq]\n"
    "  (nonzero: key ignored).  Attrs: norm=pre|post (norm_first True|False; default post, as\n"
    "  PyTorch), heads (required), activation=relu|gelu|gelu_tanh (default relu), causal=0|1, eps\n"
    "  (default 1e-5; eps_dtype as LayerNorm's), p (default 0.1, rounded to x's dtype).  y: x's\n"
    "  shape.  *_backward (+ dy, x's shape) gives dx and d.<parameter> for every parameter.\n"
    "  stack: the same parameters prefixed layers.<i>. (i = 0 .. L-1, L <= 12, masks too),\n"
    "  attr final_norm=0|1 with norm.weight, norm.bias; outputs d.layers.<i>.<parameter>,\n"
    "  d.norm.weight, d.norm.bias.  Inputs must be finite; every query must see a key.\n",
    blk_golden,
    BLK_FLAGS,
};

#define BLK_ATTRS                                                                                  \
    {"norm", "post", CLI_ATTR_ENUM, 0, 0, "pre post"}, {"heads", "0", CLI_ATTR_INT, 0, 1 << 20, NULL}, \
        {"activation", "relu", CLI_ATTR_ENUM, 0, 0, "relu gelu gelu_tanh"},                        \
        {"causal", "0", CLI_ATTR_INT, 0, 1, NULL}, {"eps", "1e-5", CLI_ATTR_DECIMAL, 0, 0, NULL},  \
        CLI_EPS_DTYPE_ATTR, {"p", "0.1", CLI_ATTR_DECIMAL, 0, 0, NULL}

#define BLK_LAYER_INPUTS(P)                                                                        \
    P "self_attn.in_proj_weight", P "self_attn.in_proj_bias", P "self_attn.out_proj.weight",        \
        P "self_attn.out_proj.bias", P "linear1.weight", P "linear1.bias", P "linear2.weight",      \
        P "linear2.bias", P "norm1.weight", P "norm1.bias", P "norm2.weight", P "norm2.bias",       \
        P "attn_dropout.mask", P "dropout.mask", P "dropout1.mask", P "dropout2.mask"
#define BLK_LAYER_GRADS(P)                                                                         \
    "d." P "self_attn.in_proj_weight", "d." P "self_attn.in_proj_bias",                            \
        "d." P "self_attn.out_proj.weight", "d." P "self_attn.out_proj.bias",                      \
        "d." P "linear1.weight", "d." P "linear1.bias", "d." P "linear2.weight",                   \
        "d." P "linear2.bias", "d." P "norm1.weight", "d." P "norm1.bias", "d." P "norm2.weight",  \
        "d." P "norm2.bias"
#define BLK_REQ 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1
#define BLK_OPT 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1
#define STACK_INPUTS                                                                               \
    BLK_LAYER_INPUTS("layers.0."), BLK_LAYER_INPUTS("layers.1."), BLK_LAYER_INPUTS("layers.2."),   \
        BLK_LAYER_INPUTS("layers.3."), BLK_LAYER_INPUTS("layers.4."),                              \
        BLK_LAYER_INPUTS("layers.5."), BLK_LAYER_INPUTS("layers.6."),                              \
        BLK_LAYER_INPUTS("layers.7."), BLK_LAYER_INPUTS("layers.8."),                              \
        BLK_LAYER_INPUTS("layers.9."), BLK_LAYER_INPUTS("layers.10."),                             \
        BLK_LAYER_INPUTS("layers.11.")
#define STACK_GRADS                                                                                \
    BLK_LAYER_GRADS("layers.0."), BLK_LAYER_GRADS("layers.1."), BLK_LAYER_GRADS("layers.2."),      \
        BLK_LAYER_GRADS("layers.3."), BLK_LAYER_GRADS("layers.4."), BLK_LAYER_GRADS("layers.5."),  \
        BLK_LAYER_GRADS("layers.6."), BLK_LAYER_GRADS("layers.7."), BLK_LAYER_GRADS("layers.8."),  \
        BLK_LAYER_GRADS("layers.9."), BLK_LAYER_GRADS("layers.10."), BLK_LAYER_GRADS("layers.11.")
#define STACK_OPT                                                                                  \
    BLK_OPT, BLK_OPT, BLK_OPT, BLK_OPT, BLK_OPT, BLK_OPT, BLK_OPT, BLK_OPT, BLK_OPT, BLK_OPT,      \
        BLK_OPT, BLK_OPT

#define BLK_DOC "specs/error-analysis-block.md", "ref/block_bound.c"
#define BLK_VOID                                                                                   \
    "where the worst-case enclosure of the graph is too wide to bound a norm's rstd (deep stacks; "  \
    "the statistical tier still checks them), specs/error-analysis-block.md §4"

/* ---------------------------------------------------------------- the statistical tier */

/* The graph's statistical bounds of every output (specs/error-analysis-block.md §5). */
static int blk_stat_bound(const cli_job *job, rn_dtype cd, rn_dtype od, double *const *o)
{
    block_layer layers[BLOCK_MAX_LAYERS];
    block_args B;
    args_of(job, &B, layers);
    if (!is_backward(job->op))
        return block_forward_bound_stat(o[0], &B, cd, od);
    block_layer_grad lg[BLOCK_MAX_LAYERS];
    block_grads g;
    grads_of(&B, o, cli_final_at(job), lg, &g);
    return block_backward_bound_stat(&g, job->in[in_dy(job->op)].data, &B, cd, od);
}

/* The weight matrices' gradients (self_attn.in_proj_weight, out_proj.weight, linear1.weight,
   linear2.weight of every layer) need not be computed when a check does not compare them. */
static int blk_skippable(const cli_job *job, int k)
{
    return is_backward(job->op) && is_weight_grad((size_t)k, (size_t)max_layers(job->op));
}

const cli_op cli_op_block = {
    "block", "Transformer encoder layer (torch.nn.TransformerEncoderLayer), pre- or post-LN",
    &cli_family_block,
    18, {"x", BLK_LAYER_INPUTS(""), "key_padding_mask"}, {0, BLK_REQ, 1},
    7, {BLK_ATTRS},
    1, {"y"},
    BLK_DOC, BLK_VOID,
    blk_prepare, blk_output_shape, blk_twin, blk_bound, blk_stat_bound, blk_skippable,
    CLI_WHOLE, NULL, /* attention mixes rows; the gradients sum over rows */
};

const cli_op cli_op_block_backward = {
    "block_backward", "the encoder layer's backward: dx and every parameter's gradient",
    &cli_family_block,
    19, {"x", BLK_LAYER_INPUTS(""), "key_padding_mask", "dy"}, {0, BLK_REQ, 1, 0},
    7, {BLK_ATTRS},
    13, {"dx", BLK_LAYER_GRADS("")},
    BLK_DOC, BLK_VOID,
    blk_prepare, blk_output_shape, blk_twin, blk_bound, blk_stat_bound, blk_skippable,
    CLI_WHOLE, NULL, /* attention mixes rows; the gradients sum over rows */
};

const cli_op cli_op_stack = {
    "stack", "a stack of encoder layers (torch.nn.TransformerEncoder), optional final norm",
    &cli_family_block,
    1 + PER_LAYER * BLOCK_MAX_LAYERS + 3,
    {"x", STACK_INPUTS, "norm.weight", "norm.bias", "key_padding_mask"},
    {0, STACK_OPT, 1, 1, 1},
    8, {BLK_ATTRS, {"final_norm", "0", CLI_ATTR_INT, 0, 1, NULL}},
    1, {"y"},
    BLK_DOC, BLK_VOID,
    blk_prepare, blk_output_shape, blk_twin, blk_bound, blk_stat_bound, blk_skippable,
    CLI_WHOLE, NULL, /* attention mixes rows; the gradients sum over rows */
};

const cli_op cli_op_stack_backward = {
    "stack_backward", "the stack's backward: dx and every layer's parameter gradients",
    &cli_family_block,
    1 + PER_LAYER * BLOCK_MAX_LAYERS + 4,
    {"x", STACK_INPUTS, "norm.weight", "norm.bias", "key_padding_mask", "dy"},
    {0, STACK_OPT, 1, 1, 1, 0},
    8, {BLK_ATTRS, {"final_norm", "0", CLI_ATTR_INT, 0, 1, NULL}},
    1 + NPARAM * BLOCK_MAX_LAYERS + 2, {"dx", STACK_GRADS, "d.norm.weight", "d.norm.bias"},
    BLK_DOC, BLK_VOID,
    blk_prepare, blk_output_shape, blk_twin, blk_bound, blk_stat_bound, blk_skippable,
    CLI_WHOLE, NULL, /* attention mixes rows; the gradients sum over rows */
};

