/* The attention op family in the `resnorm` registry: `attention` (self-attention as
 * torch.nn.MultiheadAttention(batch_first=True) on (x, x, x), need_weights=False) and
 * `attention_backward` (dx and the four parameter gradients).  Adaptors to the twin
 * (ref/attention_mpfr.c, Arb balls) and the bound (ref/attention_bound.c), and the family's golden
 * cases (golden/attention/<case>/, written by cli/golden_case.c).  Reference: specs/cli.md. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "attention_bound.h"
#include "attention_mpfr.h"
#include "block_bound.h"
#include "cli.h"
#include "golden.h"
#include "golden_case.h"

enum { A_HEADS = 0, A_CAUSAL = 1, A_P = 2 };
enum { I_X = 0, I_INW, I_INB, I_OUTW, I_OUTB, I_KPM, I_AMASK, I_DY };

/* ---------------------------------------------------------------- CLI adaptors */

static int shape_error(cli_job *job, int k, const rn_array *a, const char *want)
{
    char s1[160];
    cli_shape_str(s1, sizeof s1, a->ndim, a->shape);
    cli_error(job->verb, "input %s (%s): shape %s, expected %s", job->op->inputs[k], job->in_path[k],
              s1, want);
    return RN_EXIT_USAGE;
}

static int check_01(cli_job *job, int k)
{
    const rn_array *m = &job->in[k];
    for (size_t i = 0; i < m->count; i++)
        if (m->data[i] != 0.0 && m->data[i] != 1.0) {
            cli_error(job->verb, "input %s (%s): element %zu is %g; a mask holds 0 or 1",
                      job->op->inputs[k], job->in_path[k], i, m->data[i]);
            return RN_EXIT_USAGE;
        }
    return 0;
}

/* x [B, T, d] or [T, d] (B = 1); in_proj_weight [3d, d], in_proj_bias [3d], out_proj.weight [d, d],
   out_proj.bias [d]; key_padding_mask x.shape[:-1]; attn_dropout.mask [B, heads, T, T] ([heads, T,
   T] for 2-D x); dy (backward) x's shape.  heads >= 1 divides d; causal 0/1; p in [0, 1) rounded
   to x's dtype (as dropout's).  job->rows = B·T, n = d, eps = p. */
static int at_prepare(cli_job *job)
{
    const rn_array *x = &job->in[I_X];
    char want[200];
    if ((x->ndim != 2 && x->ndim != 3) || x->count == 0) {
        cli_error(job->verb, "input x (%s): expected shape [batch, seq, d] or [seq, d], non-empty",
                  job->in_path[I_X]);
        return RN_EXIT_USAGE;
    }
    size_t d = x->shape[x->ndim - 1], T = x->shape[x->ndim - 2], B = x->ndim == 3 ? x->shape[0] : 1;
    long H = job->attr_int[A_HEADS];
    if (H < 1 || d % (size_t)H != 0) {
        cli_error(job->verb, "attribute heads: %ld; required, >= 1 and dividing d = %zu", H, d);
        return RN_EXIT_USAGE;
    }
    const size_t sw[2] = {3 * d, d}, sb[1] = {3 * d}, so[2] = {d, d}, sob[1] = {d};
    if (!cli_same_shape(job->in[I_INW].ndim, job->in[I_INW].shape, 2, sw))
        return snprintf(want, sizeof want, "[%zu, %zu] ([3d, d])", 3 * d, d), shape_error(job, I_INW, &job->in[I_INW], want);
    if (job->in_path[I_INB] && !cli_same_shape(job->in[I_INB].ndim, job->in[I_INB].shape, 1, sb))
        return snprintf(want, sizeof want, "[%zu] ([3d])", 3 * d), shape_error(job, I_INB, &job->in[I_INB], want);
    if (!cli_same_shape(job->in[I_OUTW].ndim, job->in[I_OUTW].shape, 2, so))
        return snprintf(want, sizeof want, "[%zu, %zu] ([d, d])", d, d), shape_error(job, I_OUTW, &job->in[I_OUTW], want);
    if (job->in_path[I_OUTB] && !cli_same_shape(job->in[I_OUTB].ndim, job->in[I_OUTB].shape, 1, sob))
        return snprintf(want, sizeof want, "[%zu] ([d])", d), shape_error(job, I_OUTB, &job->in[I_OUTB], want);
    if (job->in_path[I_KPM]) {
        if (!cli_same_shape(job->in[I_KPM].ndim, job->in[I_KPM].shape, x->ndim - 1, x->shape)) {
            char s2[160];
            cli_shape_str(s2, sizeof s2, x->ndim - 1, x->shape);
            snprintf(want, sizeof want, "%s (x.shape[:-1]: [batch, seq])", s2);
            return shape_error(job, I_KPM, &job->in[I_KPM], want);
        }
        if (check_01(job, I_KPM))
            return RN_EXIT_USAGE;
    }
    if (job->in_path[I_AMASK]) {
        size_t sm[4] = {B, (size_t)H, T, T};
        int nd = x->ndim == 3 ? 4 : 3;
        if (!cli_same_shape(job->in[I_AMASK].ndim, job->in[I_AMASK].shape, nd, x->ndim == 3 ? sm : sm + 1)) {
            snprintf(want, sizeof want, x->ndim == 3 ? "[%zu, %zu, %zu, %zu] ([batch, heads, seq, seq])"
                                                     : "[%.0zu%zu, %zu, %zu] ([heads, seq, seq])",
                     x->ndim == 3 ? B : (size_t)0, (size_t)H, T, T);
            return shape_error(job, I_AMASK, &job->in[I_AMASK], want);
        }
        if (check_01(job, I_AMASK))
            return RN_EXIT_USAGE;
    }
    if (job->op->ninputs > I_DY && !cli_same_shape(job->in[I_DY].ndim, job->in[I_DY].shape, x->ndim, x->shape)) {
        char s2[160];
        cli_shape_str(s2, sizeof s2, x->ndim, x->shape);
        snprintf(want, sizeof want, "%s (x's shape)", s2);
        return shape_error(job, I_DY, &job->in[I_DY], want);
    }
    const char *pt = cli_attr_text(job, A_P);
    if (rn_parse_eps(pt, x->dtype, &job->eps) != 0 || !(job->eps >= 0.0 && job->eps < 1.0)) {
        cli_error(job->verb, "attribute p: '%s' is not a decimal number in [0, 1) (after rounding "
                             "to x's dtype)", pt);
        return RN_EXIT_USAGE;
    }
    job->attr_value[A_HEADS] = (double)H;
    job->attr_value[A_CAUSAL] = (double)job->attr_int[A_CAUSAL];
    job->attr_value[A_P] = job->eps;
    job->ax = x->ndim - 1;
    job->rows = B * T;
    job->n = d;
    return 0;
}

static attn_args at_args(const cli_job *job)
{
    const rn_array *x = &job->in[I_X];
    attn_args A = {job->in[I_INW].data,
                   cli_optional_in(job, I_INB),
                   job->in[I_OUTW].data,
                   cli_optional_in(job, I_OUTB),
                   cli_optional_in(job, I_KPM),
                   cli_optional_in(job, I_AMASK),
                   job->eps,
                   x->ndim == 3 ? x->shape[0] : 1,
                   x->shape[x->ndim - 2],
                   job->n,
                   (size_t)job->attr_int[A_HEADS],
                   (int)job->attr_int[A_CAUSAL]};
    return A;
}

/* attention: y (x's shape).  attention_backward: dx (x's shape), d.in_proj_weight [3d, d],
   d.in_proj_bias [3d], d.out_proj.weight [d, d], d.out_proj.bias [d]. */
static void at_output_shape(const cli_job *job, int k, int *ndim, size_t *shape)
{
    const rn_array *x = &job->in[I_X];
    size_t d = job->n;
    switch (k) {
    case 0:
        *ndim = x->ndim;
        memcpy(shape, x->shape, sizeof(size_t) * (size_t)x->ndim);
        break;
    case 1: *ndim = 2, shape[0] = 3 * d, shape[1] = d; break;
    case 2: *ndim = 1, shape[0] = 3 * d; break;
    case 3: *ndim = 2, shape[0] = d, shape[1] = d; break;
    default: *ndim = 1, shape[0] = d; break;
    }
}

static int at_twin(const cli_job *job, rn_dtype d, double *const *o)
{
    attn_args A = at_args(job);
    return attention_forward_mpfr(o[0], job->in[I_X].data, &A, d);
}

static int at_bwd_twin(const cli_job *job, rn_dtype d, double *const *o)
{
    attn_args A = at_args(job);
    return attention_backward_mpfr(o[0], o[1], o[2], o[3], o[4], job->in[I_X].data,
                                   job->in[I_DY].data, &A, d);
}

static int at_bound(const cli_job *job, rn_dtype compute, rn_dtype d, double *const *o)
{
    attn_args A = at_args(job);
    return attention_forward_bound(o[0], job->in[I_X].data, &A, compute, d);
}

static int at_bwd_bound(const cli_job *job, rn_dtype compute, rn_dtype d, double *const *o)
{
    attn_args A = at_args(job);
    return attention_backward_bound(o[0], o[1], o[2], o[3], o[4], job->in[I_X].data,
                                    job->in[I_DY].data, &A, compute, d);
}

/* The statistical tier: the block's graph evaluator on the attention alone
   (specs/error-analysis-attention.md, "The statistical tier"). */
static int at_stat_bound(const cli_job *job, rn_dtype compute, rn_dtype d, double *const *o)
{
    attn_args A = at_args(job);
    return attention_forward_bound_stat(o[0], job->in[I_X].data, &A, compute, d);
}

static int at_bwd_stat_bound(const cli_job *job, rn_dtype compute, rn_dtype d, double *const *o)
{
    attn_args A = at_args(job);
    return attention_backward_bound_stat(o[0], o[1], o[2], o[3], o[4], job->in[I_X].data,
                                         job->in[I_DY].data, &A, compute, d);
}

/* ---------------------------------------------------------------- golden cases */

typedef enum {
    K_NONE = 0,
    K_LAST = 1,      /* key_padding_mask: the last key of the last batch element ignored */
    K_ALL_LAST = 2,  /* every key of the last batch element ignored: its outputs are NaN */
    K_PAD4 = 3       /* right padding: the last 4 keys of the last batch element ignored */
} kpm_kind;

typedef struct {
    const char *name, *comment, *flags;
    rn_dtype in;
    int ndim;              /* 3: [B, T, d]; 2: [T, d] */
    size_t B, T, d, H;
    int causal;
    kpm_kind kpm;
    const char *p;         /* NULL: no attn_dropout.mask (eval mode) */
    double wscale;         /* in_proj_weight ~ wscale·randn/sqrt(d): larger -> peakier softmax */
    int no_wgrad;          /* 1: the backward's golden outputs omit d.in_proj_weight and
                              d.out_proj.weight (GPT-2 width: 37 MB of files; they are the same
                              bilinear sums as on the small cases) */
} acase;

/* clang-format off */
static const acase ACASES[] = {
    {"one_token_d4_f32", "one token, d = 4, one head: P = 1 exactly, so the q and k gradients are exact "
     "zeros", "small_n exact_dyadic", RN_F32, 3, 1, 1, 4, 1, 0, K_NONE, NULL, 1.0, 0},
    {"small_2heads_f32", "batch 2 × seq 5, d = 8, 2 heads (dh = 4), not causal, no masks: heads split "
     "contiguously", "multihead batch", RN_F32, 3, 2, 5, 8, 2, 0, K_NONE, NULL, 1.5, 0},
    {"small_causal_f32", "batch 2 × seq 6, d = 8, 2 heads, causal (query i sees keys 0..i)",
     "multihead batch causal", RN_F32, 3, 2, 6, 8, 2, 1, K_NONE, NULL, 1.5, 0},
    {"small_causal_f64", "batch 2 × seq 5, d = 12, 3 heads, causal, f64 inputs",
     "multihead batch causal", RN_F64, 3, 2, 5, 12, 3, 1, K_NONE, NULL, 1.5, 0},
    {"masks_dropout_f32", "batch 2 × seq 5, d = 8, 2 heads, key_padding_mask (the last key of batch 1 "
     "ignored) and attn_dropout.mask with p = 0.1", "multihead batch key_padding dropout",
     RN_F32, 3, 2, 5, 8, 2, 0, K_LAST, "0.1", 1.5, 0},
    {"causal_masks_f32", "seq 6 unbatched x [6, 8] (2-D), 4 heads (dh = 2, sqrt(dh) irrational), causal, "
     "key_padding_mask and attn_dropout.mask p = 0.25", "multihead causal key_padding dropout unbatched",
     RN_F32, 2, 1, 6, 8, 4, 1, K_LAST, "0.25", 1.5, 0},
    {"gpt2_causal_masks_f32", "GPT-2 width: d = 768, 12 heads (dh = 64), seq 16, batch 1, causal, "
     "key_padding_mask (right padding: the last 4 keys ignored) and attn_dropout.mask p = 0.1; "
     "in_proj_weight of GPT-2's initial scale (std 0.02 = 0.55/sqrt(768))",
     "gpt2 multihead causal key_padding dropout no_weight_grads", RN_F32, 3, 1, 16, 768, 12, 1, K_PAD4,
     "0.1", 0.55, 1},
    {"random_f16", "f16 inputs, seq 4, d = 8, 2 heads, causal", "half_input multihead causal",
     RN_F16, 3, 1, 4, 8, 2, 1, K_NONE, NULL, 1.0, 0},
    {"random_bf16", "bf16 inputs, batch 2 × seq 3, d = 8, 4 heads, key_padding_mask and dropout p = 0.5",
     "half_input multihead key_padding dropout", RN_BF16, 3, 2, 3, 8, 4, 0, K_LAST, "0.5", 1.0, 0},
    {"fully_masked_f32", "batch 2 × seq 3, d = 4: every key of batch 1 ignored (0/0): its outputs, and "
     "in the backward every gradient that sums over it, are NaN as PyTorch gives", "nonfinite key_padding",
     RN_F32, 3, 2, 3, 4, 2, 0, K_ALL_LAST, NULL, 1.0, 0},
};
/* clang-format on */
#define NACASES (sizeof ACASES / sizeof ACASES[0])

static const char *const AT_FLAGS[][2] = {
    {"multihead", "more than one head: the heads are contiguous column blocks (head h = columns "
                  "h·dh .. (h+1)·dh - 1), the scores scaled by 1/sqrt(dh)"},
    {"causal", "causal attention: query i sees keys 0 .. i only"},
    {"key_padding", "a key_padding_mask input (1 = that key is ignored by every query)"},
    {"dropout", "an attn_dropout.mask input with attr p: the attention probabilities scaled by "
                "mask/(1 - p)"},
    {"unbatched", "x is [seq, d] (2-D, no batch axis)"},
    {"no_weight_grads", "the backward's expected outputs omit the weight matrices' gradients "
                        "(attention: dx, d.in_proj_bias and d.out_proj.bias only; block: dx and "
                        "the biases' and norms' gradients): at GPT-2 width they would be tens of "
                        "MB, and they are the same bilinear sums as on the small cases"},
    {NULL, NULL},
};

/* The twin's outputs of one op at every dtype, computed once (one ball evaluation serves all the
   formats it certifies) and handed to gc_case_write's per-dtype calls. */
typedef struct {
    const double *x, *dy;
    attn_args A;
    size_t n[5];
    int have[2];
    int rc[2];
    int nwant, want[5];   /* the backward's golden outputs, in order (indices into the 5) */
    double *out[2][5][RN_NDTYPES];
} at_ctx;

static int gc_at_run(at_ctx *C, int bwd, rn_dtype d, double *const *o)
{
    int nout = bwd ? 5 : 1;
    if (!C->have[bwd]) {
        C->have[bwd] = 1;
        for (int k = 0; k < nout; k++)
            for (int t = 0; t < RN_NDTYPES; t++)
                if (!(C->out[bwd][k][t] = malloc((C->n[k] ? C->n[k] : 1) * sizeof(double))))
                    return C->rc[bwd] = RN_TWIN_NOMEM;
        rn_dtype all[RN_NDTYPES];
        for (int t = 0; t < RN_NDTYPES; t++)
            all[t] = (rn_dtype)t;
        if (bwd) {
            double *const *g[5] = {C->out[1][0], C->out[1][1], C->out[1][2], C->out[1][3], C->out[1][4]};
            C->rc[1] = attention_backward_mpfr_multi(g, all, RN_NDTYPES, C->x, C->dy, &C->A);
        } else {
            C->rc[0] = attention_forward_mpfr_multi(C->out[0][0], all, RN_NDTYPES, C->x, &C->A);
        }
    }
    if (C->rc[bwd] != RN_TWIN_OK)
        return C->rc[bwd];
    for (int k = 0; k < (bwd ? C->nwant : 1); k++) {
        int src = bwd ? C->want[k] : 0;
        memcpy(o[k], C->out[bwd][src][d], C->n[src] * sizeof(double));
    }
    return RN_TWIN_OK;
}

static int gc_at_fwd(void *c, rn_dtype d, double *const *o) { return gc_at_run(c, 0, d, o); }
static int gc_at_bwd(void *c, rn_dtype d, double *const *o) { return gc_at_run(c, 1, d, o); }

static void fill(golden_prng *g, double *a, size_t n, double scale, rn_dtype in)
{
    for (size_t i = 0; i < n; i++)
        a[i] = rn_round(scale * golden_randn(g), in);
}

static int at_gen_case(golden_ctx *G, const acase *c)
{
    size_t B = c->B, T = c->T, d = c->d, H = c->H, n = B * T * d, natt = B * H * T * T;
    double *x = malloc(n * sizeof *x), *dy = malloc(n * sizeof *dy), *w = malloc(3 * d * d * sizeof *w),
           *b = malloc(3 * d * sizeof *b), *ow = malloc(d * d * sizeof *ow), *ob = malloc(d * sizeof *ob),
           *kpm = calloc(B * T, sizeof *kpm), *am = malloc(natt * sizeof *am);
    at_ctx C;
    memset(&C, 0, sizeof C);
    int rc = -1;
    if (!x || !dy || !w || !b || !ow || !ob || !kpm || !am) {
        fprintf(stderr, "resnorm golden: out of memory\n");
        goto out;
    }
    golden_prng g;
    golden_prng_seed(&g, c->name);
    fill(&g, x, n, 1.0, c->in);
    fill(&g, w, 3 * d * d, c->wscale / sqrt((double)d), c->in);
    fill(&g, b, 3 * d, 0.1, c->in);
    fill(&g, ow, d * d, 1.0 / sqrt((double)d), c->in);
    fill(&g, ob, d, 0.1, c->in);
    fill(&g, dy, n, 1.0, c->in);
    double p = 0.0;
    if (c->p) {
        p = rn_round(strtod(c->p, NULL), c->in);
        for (size_t i = 0; i < natt; i++)
            am[i] = golden_uniform(&g) < 1.0 - p ? 1.0 : 0.0;
    }
    if (c->kpm == K_LAST)
        kpm[B * T - 1] = 1.0;
    else if (c->kpm == K_PAD4)
        for (size_t j = T - 4; j < T; j++)
            kpm[(B - 1) * T + j] = 1.0;
    else if (c->kpm == K_ALL_LAST)
        for (size_t j = 0; j < T; j++)
            kpm[(B - 1) * T + j] = 1.0;
    C.x = x, C.dy = dy;
    C.A = (attn_args){w, b, ow, ob, c->kpm ? kpm : NULL, c->p ? am : NULL, p, B, T, d, H, c->causal};
    C.n[0] = n, C.n[1] = 3 * d * d, C.n[2] = 3 * d, C.n[3] = d * d, C.n[4] = d;
    json_t *attrs = json_object();
    json_object_set_new(attrs, "heads", json_integer((json_int_t)H));
    json_object_set_new(attrs, "causal", json_integer(c->causal));
    if (c->p)
        json_object_set_new(attrs, "p", json_string(c->p));
    gc_case gc = {"attention", c->name, c->comment, c->flags, c->in, c->ndim, {0}, attrs, 0, {{0}}, 2, {{0}}};
    size_t xs[3] = {B, T, d};
    const size_t *xshape = c->ndim == 3 ? xs : xs + 1;
    memcpy(gc.shape, xshape, sizeof(size_t) * (size_t)c->ndim);
    gc_array ax = {"x", c->ndim, {0}, x}, aw = {"in_proj_weight", 2, {3 * d, d}, w},
             ab = {"in_proj_bias", 1, {3 * d}, b}, aow = {"out_proj.weight", 2, {d, d}, ow},
             aob = {"out_proj.bias", 1, {d}, ob}, ak = {"key_padding_mask", c->ndim - 1, {0}, kpm},
             aam = {"attn_dropout.mask", c->ndim + 1, {0}, am}, ady = {"dy", c->ndim, {0}, dy};
    memcpy(ax.shape, xshape, sizeof(size_t) * (size_t)c->ndim);
    memcpy(ady.shape, xshape, sizeof(size_t) * (size_t)c->ndim);
    memcpy(ak.shape, xshape, sizeof(size_t) * (size_t)(c->ndim - 1));
    size_t ms[4] = {B, H, T, T};
    memcpy(aam.shape, c->ndim == 3 ? ms : ms + 1, sizeof(size_t) * (size_t)(c->ndim + 1));
    gc_op *f = &gc.ops[0], *bw = &gc.ops[1];
    gc.arrays[gc.narrays++] = ax;
    gc.arrays[gc.narrays++] = aw;
    gc.arrays[gc.narrays++] = ab;
    gc.arrays[gc.narrays++] = aow;
    gc.arrays[gc.narrays++] = aob;
    f->op = "attention";
    const char *names[5] = {"x", "in_proj_weight", "in_proj_bias", "out_proj.weight", "out_proj.bias"};
    for (int k = 0; k < 5; k++)
        f->inputs[f->ninputs++] = names[k];
    if (c->kpm) {
        gc.arrays[gc.narrays++] = ak;
        f->inputs[f->ninputs++] = "key_padding_mask";
    }
    if (c->p) {
        gc.arrays[gc.narrays++] = aam;
        f->inputs[f->ninputs++] = "attn_dropout.mask";
    }
    gc.arrays[gc.narrays++] = ady;
    gc_array oy = ax;
    oy.name = "y";
    f->outputs[f->noutputs++] = oy;
    f->twin = gc_at_fwd;
    bw->op = "attention_backward";
    memcpy(bw->inputs, f->inputs, sizeof bw->inputs);
    bw->ninputs = f->ninputs;
    bw->inputs[bw->ninputs++] = "dy";
    gc_array odx = ax, odw = aw, odb = ab, odow = aow, odob = aob;
    odx.name = "dx", odw.name = "d.in_proj_weight", odb.name = "d.in_proj_bias";
    odow.name = "d.out_proj.weight", odob.name = "d.out_proj.bias";
    const gc_array *bo[5] = {&odx, &odw, &odb, &odow, &odob};
    for (int k = 0; k < 5; k++)
        if (!(c->no_wgrad && (k == 1 || k == 3))) {
            C.want[C.nwant++] = k;
            bw->outputs[bw->noutputs++] = *bo[k];
        }
    bw->twin = gc_at_bwd;
    rc = gc_case_write(G, &gc, &C);
out:
    for (int o = 0; o < 2; o++)
        for (int k = 0; k < 5; k++)
            for (int t = 0; t < RN_NDTYPES; t++)
                free(C.out[o][k][t]);
    free(x), free(dy), free(w), free(b), free(ow), free(ob), free(kpm), free(am);
    return rc;
}

static int at_golden(golden_ctx *G)
{
    for (size_t i = 0; i < NACASES; i++)
        if (at_gen_case(G, &ACASES[i]) != 0)
            return -1;
    return 0;
}

/* ---------------------------------------------------------------- registry entries */

#define AT_ATTRS                                                                                   \
    3, {{"heads", "0", CLI_ATTR_INT, 0, 1L << 20, NULL},                                           \
        {"causal", "0", CLI_ATTR_INT, 0, 1, NULL},                                                 \
        {"p", "0", CLI_ATTR_DECIMAL, 0, 0, NULL}}

const cli_family cli_family_attention = {
    "attention",
    "attention, attention_backward: heads (required, divides d), causal (0|1, default 0), p (default\n"
    "  0; used with attn_dropout.mask, rounded once to x's dtype).  Self-attention as\n"
    "  torch.nn.MultiheadAttention(batch_first=True) on (x, x, x), need_weights=False: x [batch, seq, d]\n"
    "  or [seq, d]; in_proj_weight [3d, d], in_proj_bias [3d] (optional), out_proj.weight [d, d],\n"
    "  out_proj.bias [d] (optional); key_padding_mask (optional, x.shape[:-1], 1 = ignore that key);\n"
    "  attn_dropout.mask (optional, [batch, heads, seq, seq], 0/1).  Heads are contiguous column blocks,\n"
    "  scores q·kᵀ/sqrt(dh); a query whose keys are all masked gives NaN.  attention_backward (dy: x's\n"
    "  shape) gives dx, d.in_proj_weight, d.in_proj_bias, d.out_proj.weight, d.out_proj.bias.\n",
    at_golden,
    AT_FLAGS,
};

const cli_op cli_op_attention = {
    "attention", "multi-head self-attention (nn.MultiheadAttention, batch_first, need_weights=False)",
    &cli_family_attention,
    7, {"x", "in_proj_weight", "in_proj_bias", "out_proj.weight", "out_proj.bias", "key_padding_mask",
        "attn_dropout.mask"}, {0, 0, 1, 0, 1, 1, 1},
    AT_ATTRS,
    1, {"y"},
    "specs/error-analysis-attention.md", "ref/attention_bound.c",
    "a softmax row whose logit perturbation is too large for the expansion, or overflow, "
    "specs/error-analysis-attention.md §5, §8",
    at_prepare, at_output_shape, at_twin, at_bound, at_stat_bound, NULL,
    CLI_WHOLE, NULL, /* the rows of a sequence attend to each other */
};

const cli_op cli_op_attention_backward = {
    "attention_backward", "multi-head self-attention backward: dx and the projections' gradients",
    &cli_family_attention,
    8, {"x", "in_proj_weight", "in_proj_bias", "out_proj.weight", "out_proj.bias", "key_padding_mask",
        "attn_dropout.mask", "dy"}, {0, 0, 1, 0, 1, 1, 1, 0},
    AT_ATTRS,
    5, {"dx", "d.in_proj_weight", "d.in_proj_bias", "d.out_proj.weight", "d.out_proj.bias"},
    "specs/error-analysis-attention.md", "ref/attention_bound.c",
    "a softmax row whose logit perturbation is too large for the expansion, or overflow, "
    "specs/error-analysis-attention.md §5, §8",
    at_prepare, at_output_shape, at_bwd_twin, at_bwd_bound, at_bwd_stat_bound, NULL,
    CLI_WHOLE, NULL, /* the rows of a sequence attend to each other */
};
