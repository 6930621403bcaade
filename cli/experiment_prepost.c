/* `resnorm experiment prepost` (specs/cli.md, "experiment"): seed module 13, exercise 3, and the
 * seed's claim on warm-up -- stacks of pre-LN and post-LN Transformer encoder blocks at
 * initialization, the gradient reaching the input and every layer's parameter-gradient norm.
 *
 * The network: L blocks of torch.nn.TransformerEncoderLayer(d, heads, ff, dropout, relu,
 * batch_first=True) in eval mode (no dropout: the gradient at initialization, not a sample of the
 * dropout masks), eps = float32(1e-5), norm_first = True (pre-LN) or False (post-LN); the pre-LN
 * stack with and without a final LayerNorm (nn.TransformerEncoder's `norm`, GPT-2's ln_f).
 * Computed by the certified twin ref/block_mpfr.c: Arb balls through the whole forward and backward
 * pass, every output the exact value on the float32 parameters rounded once to f64.
 *
 * PyTorch 1.13's default initialization, drawn with splitmix64 (not torch's generator: the same
 * distributions, not the same numbers), every value a float32 as PyTorch's default dtype holds it:
 *   self_attn.in_proj_weight [3d, d]  xavier_uniform_: U(±sqrt(6 / (d + 3d)))
 *   self_attn.in_proj_bias [3d]       0                  (MultiheadAttention._reset_parameters)
 *   self_attn.out_proj.weight [d, d]  U(±1/sqrt(d))      (NonDynamicallyQuantizableLinear's
 *                                      kaiming_uniform_(a = sqrt(5)): bound = 1/sqrt(fan_in))
 *   self_attn.out_proj.bias [d]       0                  (_reset_parameters overwrites Linear's)
 *   linear1.weight [ff, d], .bias     U(±1/sqrt(d))      (nn.Linear's default)
 *   linear2.weight [d, ff], .bias     U(±1/sqrt(ff))
 *   norm1, norm2 (and the final norm) weight 1, bias 0
 * Streams: layer l (0-based) of seed s draws from splitmix64 state (s << 32) | (l + 1), in the
 * order above (row-major, u = top 53 bits / 2^53, value = float32((2u - 1)·bound)); x [seq, d] and
 * then dy [seq, d] ~ N(0, 1) (Box-Muller, float32) from state (s << 32).  A layer's parameters do
 * not depend on the depth (a depth-12 stack is the first 12 layers of the depth-48 one) and the
 * pre-LN and post-LN stacks of a seed share them: every comparison is paired.  --cloned gives every
 * layer layer 0's parameters, as nn.TransformerEncoder(layer, L) does (it deep-copies one layer).
 *
 * Loss = Σ dy ⊙ y with a fixed random dy (Σ y would give exactly 0 through a final LayerNorm:
 * the gradient of a row's sum through LN with γ = 1 is 0).  Reported per (norm, final norm, depth),
 * median/min/max over the seeds: ‖∂L/∂x‖₂; each layer's ‖∂L/∂θ_l‖₂ over all of its parameters
 * (attention, FFN, both LayerNorms); the ratio last/first layer per seed; RMS of y.  The norms are
 * summed in double from the certified values (each rounded once): ~1e-15 relative. */
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "block_mpfr.h"
#include "cli.h"
#include "experiment.h"
#include "norm_fast.h" /* rn_threads */
#include "tanh_stack.h" /* rn_splitmix64, rn_uniform01, rn_normal */

#define PP_EPS 1e-5f /* LayerNorm's default eps, the float32 value a float32 model uses */

enum { PP_MAX_DEPTHS = 16, PP_MAX_DEPTH = 256 };

typedef struct {
    int depths[PP_MAX_DEPTHS], ndepths, d, heads, ff, seq, seeds, json, cloned;
} pp_opts;

/* ---------------------------------------------------------------- the model */

/* One layer's parameters in one allocation: the sizes of block_layer's arrays, in that order. */
enum { PP_IN_W, PP_IN_B, PP_OUT_W, PP_OUT_B, PP_W1, PP_B1, PP_W2, PP_B2, PP_NPARAM };

typedef struct {
    size_t d, ff, seq, nlayers;
    size_t size[PP_NPARAM], layer_size; /* elements per array, per layer */
    double *params;                     /* [nlayers · layer_size] */
    double *ones, *zeros;               /* [d]: the LayerNorms' γ and β */
    double *x, *dy;                     /* [seq · d] */
    block_layer *layers;                /* [nlayers] */
} pp_model;

static void param_sizes(size_t *size, size_t d, size_t ff)
{
    size[PP_IN_W] = 3 * d * d, size[PP_IN_B] = 3 * d, size[PP_OUT_W] = d * d, size[PP_OUT_B] = d;
    size[PP_W1] = ff * d, size[PP_B1] = ff, size[PP_W2] = d * ff, size[PP_B2] = d;
}

/* v[0..n) = float32((2u - 1)·bound), u uniform on [0, 1): torch.nn.init.uniform_(-bound, bound). */
static void fill_uniform(double *v, size_t n, double bound, uint64_t *st)
{
    for (size_t i = 0; i < n; i++)
        v[i] = (double)(float)((2.0 * rn_uniform01(st) - 1.0) * bound);
}

/* The PyTorch bound of each array (0: the array is zero); file comment. */
static double init_bound(int k, size_t d, size_t ff)
{
    switch (k) {
    case PP_IN_W: return sqrt(6.0 / (double)(d + 3 * d));
    case PP_OUT_W: case PP_W1: case PP_B1: return 1.0 / sqrt((double)d);
    case PP_W2: case PP_B2: return 1.0 / sqrt((double)ff);
    default: return 0.0; /* in_proj_bias, out_proj.bias */
    }
}

static void init_layer(const pp_model *m, size_t l, uint64_t seed)
{
    uint64_t st = (seed << 32) | (uint64_t)(l + 1);
    double *p = m->params + l * m->layer_size;
    for (int k = 0; k < PP_NPARAM; p += m->size[k], k++)
        fill_uniform(p, m->size[k], init_bound(k, m->d, m->ff), &st); /* bound 0: exact zeros */
}

static void bind_layer(const pp_model *m, size_t l, const double *p)
{
    const double *a[PP_NPARAM];
    for (int k = 0; k < PP_NPARAM; p += m->size[k], k++)
        a[k] = p;
    m->layers[l] = (block_layer){a[PP_IN_W], a[PP_IN_B], a[PP_OUT_W], a[PP_OUT_B], a[PP_W1],
                                 a[PP_B1], a[PP_W2], a[PP_B2], m->ones, m->zeros, m->ones,
                                 m->zeros, NULL, NULL, NULL, NULL};
}

static void model_free(pp_model *m)
{
    free(m->params), free(m->ones), free(m->zeros), free(m->x), free(m->dy), free(m->layers);
    memset(m, 0, sizeof *m);
}

/* The deepest stack of seed s (file comment: streams, --cloned).  0, or -1 out of memory. */
static int model_init(pp_model *m, const pp_opts *o, size_t nlayers, uint64_t seed)
{
    memset(m, 0, sizeof *m);
    m->d = (size_t)o->d, m->ff = (size_t)o->ff, m->seq = (size_t)o->seq, m->nlayers = nlayers;
    param_sizes(m->size, m->d, m->ff);
    for (int k = 0; k < PP_NPARAM; k++)
        m->layer_size += m->size[k];
    size_t N = m->seq * m->d, stored = o->cloned ? 1 : nlayers;
    m->params = malloc(stored * m->layer_size * sizeof *m->params);
    m->ones = malloc(m->d * sizeof *m->ones), m->zeros = calloc(m->d, sizeof *m->zeros);
    m->x = malloc(N * sizeof *m->x), m->dy = malloc(N * sizeof *m->dy);
    m->layers = calloc(nlayers, sizeof *m->layers);
    if (!m->params || !m->ones || !m->zeros || !m->x || !m->dy || !m->layers) {
        model_free(m);
        return -1;
    }
    for (size_t i = 0; i < m->d; i++)
        m->ones[i] = 1.0;
    for (size_t l = 0; l < stored; l++)
        init_layer(m, l, seed);
    for (size_t l = 0; l < nlayers; l++)
        bind_layer(m, l, m->params + (o->cloned ? 0 : l) * m->layer_size);
    uint64_t st = seed << 32;
    for (size_t i = 0; i < N; i++)
        m->x[i] = (double)(float)rn_normal(&st);
    for (size_t i = 0; i < N; i++)
        m->dy[i] = (double)(float)rn_normal(&st);
    return 0;
}

static block_args stack_args(const pp_model *m, const pp_opts *o, size_t depth, int post,
                             int final_norm)
{
    return (block_args){m->x, depth, m->layers, final_norm ? m->ones : NULL,
                        final_norm ? m->zeros : NULL, NULL, post, 0, RN_ACT_RELU,
                        1, m->seq, m->d, (size_t)o->heads, m->ff, (double)PP_EPS, 0.0};
}

/* ---------------------------------------------------------------- one stack, certified */

/* The gradients' storage for the deepest stack: per layer the layer_size parameter gradients and
   the four LayerNorm vectors, one allocation. */
typedef struct {
    double *buf, *dx, *dfg, *dfb;
    block_layer_grad *layers;
    size_t per_layer; /* doubles per layer */
} pp_grads;

static void grads_free(pp_grads *g)
{
    free(g->buf), free(g->layers);
    memset(g, 0, sizeof *g);
}

static int grads_init(pp_grads *g, const pp_model *m)
{
    memset(g, 0, sizeof *g);
    size_t N = m->seq * m->d;
    g->per_layer = m->layer_size + 4 * m->d;
    g->buf = malloc((N + 2 * m->d + m->nlayers * g->per_layer) * sizeof *g->buf);
    g->layers = calloc(m->nlayers, sizeof *g->layers);
    if (!g->buf || !g->layers) {
        grads_free(g);
        return -1;
    }
    g->dx = g->buf, g->dfg = g->dx + N, g->dfb = g->dfg + m->d;
    double *p = g->dfb + m->d;
    for (size_t l = 0; l < m->nlayers; l++) {
        double *a[PP_NPARAM];
        for (int k = 0; k < PP_NPARAM; p += m->size[k], k++)
            a[k] = p;
        g->layers[l] = (block_layer_grad){a[PP_IN_W], a[PP_IN_B], a[PP_OUT_W], a[PP_OUT_B],
                                          a[PP_W1], a[PP_B1], a[PP_W2], a[PP_B2], p, p + m->d,
                                          p + 2 * m->d, p + 3 * m->d};
        p += 4 * m->d;
    }
    return 0;
}

/* ‖v‖₂ of n doubles, scaled (no overflow or underflow of the squares). */
static double norm2(const double *v, size_t n)
{
    double amax = 0, s = 0;
    for (size_t i = 0; i < n; i++)
        amax = fmax(amax, fabs(v[i]));
    if (amax == 0)
        return 0;
    for (size_t i = 0; i < n; i++)
        s += (v[i] / amax) * (v[i] / amax);
    return amax * sqrt(s);
}

/* The parameter groups of a layer whose gradient norms are reported: all of them, and apart the
   attention's (in_proj, out_proj), the FFN's (linear1, linear2) and the two LayerNorms'. */
enum { PP_ALL, PP_ATTN, PP_FFN, PP_LN, PP_NGROUPS };
static const char *const group_key[PP_NGROUPS] = {
    "layer_grad_norms", "layer_grad_norms_attn", "layer_grad_norms_ffn", "layer_grad_norms_ln"};

/* One seed's numbers for one (norm, final norm, depth) stack. */
typedef struct {
    double grad_x, output_rms;
    double *layer[PP_NGROUPS]; /* [depth]: ‖∂L/∂θ_l‖₂ over the group's parameters */
    long prec_bwd, prec_fwd;
} pp_sample;

/* Runs the certified backward and forward of one stack into s.  0, or an RN_TWIN_* code. */
static int run_stack(pp_sample *s, const pp_model *m, const pp_grads *g, double *y,
                     const block_args *B)
{
    const rn_dtype f64 = RN_F64;
    block_grads out = {g->dx, g->layers, g->dfg, g->dfb};
    int rc = block_backward_mpfr(&out, &f64, 1, m->dy, B);
    if (rc != RN_TWIN_OK)
        return rc;
    s->prec_bwd = block_mpfr_last_prec();
    size_t N = m->seq * m->d;
    s->grad_x = norm2(g->dx, N);
    /* a layer's gradients are contiguous (grads_init): attention, FFN, then 4 LayerNorm vectors */
    size_t attn = m->size[PP_IN_W] + m->size[PP_IN_B] + m->size[PP_OUT_W] + m->size[PP_OUT_B];
    size_t ffn = m->layer_size - attn;
    for (size_t l = 0; l < B->nlayers; l++) {
        const double *p = g->layers[l].in_w;
        double a = norm2(p, attn), f = norm2(p + attn, ffn), n = norm2(p + attn + ffn, 4 * m->d);
        s->layer[PP_ATTN][l] = a, s->layer[PP_FFN][l] = f, s->layer[PP_LN][l] = n;
        s->layer[PP_ALL][l] = norm2((const double[]){a, f, n}, 3);
    }
    double *const ys[1] = {y};
    rc = block_forward_mpfr(ys, &f64, 1, B);
    if (rc != RN_TWIN_OK)
        return rc;
    s->prec_fwd = block_mpfr_last_prec();
    s->output_rms = norm2(y, N) / sqrt((double)N);
    return 0;
}

/* ---------------------------------------------------------------- rows */

/* The three stacks of each depth: pre-LN without and with the final norm, post-LN. */
enum { PP_VARIANTS = 3 };
static const int variant_post[PP_VARIANTS] = {0, 0, 1}, variant_final[PP_VARIANTS] = {0, 1, 0};

typedef struct {
    double median, min, max;
} pp_stat;

typedef struct {
    int post, final_norm, depth, seeds;
    pp_sample *smp;          /* [seeds] */
    pp_stat grad_x, output_rms, last_over_first;
    pp_stat *layer[PP_NGROUPS]; /* [depth] */
    long prec_max;
} pp_row;

static pp_stat stat_of(double *v, int n)
{
    pp_stat s = {0, INFINITY, -INFINITY};
    for (int k = 0; k < n; k++)
        s.min = fmin(s.min, v[k]), s.max = fmax(s.max, v[k]);
    s.median = experiment_median(v, n);
    return s;
}

static void summarize(pp_row *r, double *scratch)
{
    int n = r->seeds;
    r->prec_max = 0;
    for (int k = 0; k < n; k++) {
        scratch[k] = r->smp[k].grad_x;
        long p = r->smp[k].prec_bwd > r->smp[k].prec_fwd ? r->smp[k].prec_bwd : r->smp[k].prec_fwd;
        r->prec_max = p > r->prec_max ? p : r->prec_max;
    }
    r->grad_x = stat_of(scratch, n);
    for (int k = 0; k < n; k++)
        scratch[k] = r->smp[k].output_rms;
    r->output_rms = stat_of(scratch, n);
    for (int k = 0; k < n; k++)
        scratch[k] = r->smp[k].layer[PP_ALL][r->depth - 1] / r->smp[k].layer[PP_ALL][0];
    r->last_over_first = stat_of(scratch, n);
    for (int gr = 0; gr < PP_NGROUPS; gr++)
        for (int l = 0; l < r->depth; l++) {
            for (int k = 0; k < n; k++)
                scratch[k] = r->smp[k].layer[gr][l];
            r->layer[gr][l] = stat_of(scratch, n);
        }
}

static void rows_free(pp_row *rows, int nrows)
{
    for (int i = 0; rows && i < nrows; i++) {
        for (int gr = 0; gr < PP_NGROUPS; gr++) {
            for (int k = 0; rows[i].smp && k < rows[i].seeds; k++)
                free(rows[i].smp[k].layer[gr]);
            free(rows[i].layer[gr]);
        }
        free(rows[i].smp);
    }
    free(rows);
}

/* Rows ordered by depth, then pre-LN, pre-LN + final norm, post-LN. */
static pp_row *rows_alloc(const pp_opts *o, unsigned nrows)
{
    pp_row *rows = calloc(nrows, sizeof *rows);
    for (unsigned i = 0; rows && i < nrows; i++) {
        pp_row *r = &rows[i];
        r->depth = o->depths[i / PP_VARIANTS], r->seeds = o->seeds;
        r->post = variant_post[i % PP_VARIANTS], r->final_norm = variant_final[i % PP_VARIANTS];
        r->smp = calloc((size_t)o->seeds, sizeof *r->smp);
        int ok = r->smp != NULL;
        for (int gr = 0; ok && gr < PP_NGROUPS; gr++) {
            ok = (r->layer[gr] = calloc((size_t)r->depth, sizeof(pp_stat))) != NULL;
            for (int k = 0; ok && k < o->seeds; k++)
                ok = (r->smp[k].layer[gr] = calloc((size_t)r->depth, sizeof(double))) != NULL;
        }
        if (!ok) {
            rows_free(rows, (int)nrows);
            return NULL;
        }
    }
    return rows;
}

static const char *row_name(const pp_row *r)
{
    return r->post ? "post-LN" : r->final_norm ? "pre-LN + final LN" : "pre-LN";
}

/* Every row's sample of one seed.  0, or an RN_TWIN_* code / -1 (out of memory). */
static int run_seed(pp_row *rows, int nrows, const pp_opts *o, int seed, size_t maxdepth)
{
    pp_model m;
    pp_grads g = {0};
    if (model_init(&m, o, maxdepth, (uint64_t)seed) < 0)
        return -1;
    double *y = malloc(m.seq * m.d * sizeof *y);
    int rc = y && grads_init(&g, &m) == 0 ? 0 : -1;
    for (int i = 0; i < nrows && rc == 0; i++) {
        pp_row *r = &rows[i];
#pragma omp critical(prepost_progress)
        experiment_progress("prepost: seed %d/%d, depth %d, %s", seed, o->seeds, r->depth,
                            row_name(r));
        block_args B = stack_args(&m, o, (size_t)r->depth, r->post, r->final_norm);
        rc = run_stack(&r->smp[seed - 1], &m, &g, y, &B);
    }
    grads_free(&g);
    free(y);
    model_free(&m);
    return rc;
}

/* ---------------------------------------------------------------- output */

static void print_table(const pp_row *rows, int nrows, const pp_opts *o)
{
    printf("prepost experiment: nn.TransformerEncoderLayer(d = %d, heads = %d, ff = %d, relu), eval "
           "mode, PyTorch's default init%s;\nseq = %d, batch 1, %d seed(s); loss = sum(dy * y), dy, x "
           "~ N(0,1); certified (Arb), median [min, max] over seeds\n\n",
           o->d, o->heads, o->ff, o->cloned ? " (cloned layers)" : "", o->seq, o->seeds);
    printf("%5s  %-17s  %-30s  %-10s  %-10s  %-22s  %-10s  %s\n", "depth", "stack", "|dL/dx|",
           "|dL/dW_1|", "|dL/dW_L|", "|dL/dW_L| / |dL/dW_1|", "RMS(y)", "bits");
    for (int i = 0; i < nrows; i++) {
        const pp_row *r = &rows[i];
        printf("%5d  %-17s  %-9.3g [%-8.3g, %-8.3g]  %-10.3g  %-10.3g  %-6.3g [%-5.3g, %-5.3g]  "
               "%-10.4g  %ld\n",
               r->depth, row_name(r), r->grad_x.median, r->grad_x.min, r->grad_x.max,
               r->layer[PP_ALL][0].median, r->layer[PP_ALL][r->depth - 1].median, r->last_over_first.median,
               r->last_over_first.min, r->last_over_first.max, r->output_rms.median, r->prec_max);
    }
    printf("\nper-layer parameter-gradient norm |dL/dW_l| (median over seeds), l = 1 .. L:\n");
    for (int i = 0; i < nrows; i++) {
        const pp_row *r = &rows[i];
        printf("depth %d, %s:", r->depth, row_name(r));
        for (int l = 0; l < r->depth; l++)
            printf("%s%.3g", l % 12 ? " " : "\n  ", r->layer[PP_ALL][l].median);
        putchar('\n');
    }
    printf("\nseed (module 13 article): post-LN's gradients at initialization grow with depth "
           "(warm-up needed); pre-LN trains without warm-up; pre-LN may need a final LayerNorm to "
           "control the output scale.\n");
}

static json_t *stat_json(pp_stat s)
{
    return json_pack("{s:f, s:f, s:f}", "median", s.median, "min", s.min, "max", s.max);
}

/* layer_grad_norms*: one {median, min, max} per layer index, 1 .. depth. */
static json_t *row_json(const pp_row *r)
{
    json_t *row = json_pack("{s:s, s:i, s:b, s:o, s:o, s:f, s:o, s:i, s:i}", "norm",
                            r->post ? "post" : "pre", "depth", r->depth, "final_norm",
                            r->final_norm, "grad_x", stat_json(r->grad_x), "last_over_first_layer",
                            stat_json(r->last_over_first), "output_rms", r->output_rms.median,
                            "output_rms_stats", stat_json(r->output_rms), "seeds", r->seeds,
                            "prec_bits_max", (json_int_t)r->prec_max);
    for (int gr = 0; row && gr < PP_NGROUPS; gr++) {
        json_t *layers = json_array();
        for (int l = 0; l < r->depth; l++)
            json_array_append_new(layers, stat_json(r->layer[gr][l]));
        json_object_set_new(row, group_key[gr], layers);
    }
    return row;
}

static int print_json(const pp_row *rows, int nrows, const pp_opts *o)
{
    json_t *arr = json_array();
    for (int i = 0; i < nrows; i++)
        json_array_append_new(arr, row_json(&rows[i]));
    json_t *doc = json_pack("{s:s, s:i, s:i, s:i, s:i, s:i, s:i, s:f, s:s, s:b, s:o}",
                            "experiment", "prepost", "d", o->d, "heads", o->heads, "ff", o->ff,
                            "seq", o->seq, "batch", 1, "seeds", o->seeds, "eps", (double)PP_EPS,
                            "activation", "relu", "cloned", o->cloned, "rows", arr);
    if (!doc)
        return -1;
    json_dumpf(doc, stdout, JSON_INDENT(1) | JSON_REAL_PRECISION(17));
    putchar('\n');
    json_decref(doc);
    return 0;
}

/* ---------------------------------------------------------------- options, main */

static int usage(const char *fmt, const char *a)
{
    cli_error("experiment", fmt, a);
    return RN_EXIT_USAGE;
}

static int parse_opts(int argc, char **argv, pp_opts *o)
{
    *o = (pp_opts){{6, 12, 24, 48}, 4, 64, 4, 256, 8, 3, 0, 0};
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (experiment_is_help(a)) {
            experiment_help();
            return 1;
        }
        if (!strcmp(a, "--json") || !strcmp(a, "--cloned")) {
            *(a[2] == 'j' ? &o->json : &o->cloned) = 1;
            continue;
        }
        int bad = !v;
        if (!bad && !strcmp(a, "--depths"))
            bad = (o->ndepths = experiment_parse_list(v, 1, PP_MAX_DEPTH, o->depths,
                                                      PP_MAX_DEPTHS)) < 0;
        else if (!bad && !strcmp(a, "--d"))
            bad = experiment_parse_int(v, 1, 1024, &o->d) < 0;
        else if (!bad && !strcmp(a, "--heads"))
            bad = experiment_parse_int(v, 1, 1024, &o->heads) < 0;
        else if (!bad && !strcmp(a, "--ff"))
            bad = experiment_parse_int(v, 1, 8192, &o->ff) < 0;
        else if (!bad && !strcmp(a, "--seq"))
            bad = experiment_parse_int(v, 1, 1024, &o->seq) < 0;
        else if (!bad && !strcmp(a, "--seeds"))
            bad = experiment_parse_int(v, 1, 1000, &o->seeds) < 0;
        else if (strcmp(a, "--depths") && strcmp(a, "--d") && strcmp(a, "--heads") &&
                 strcmp(a, "--ff") && strcmp(a, "--seq") && strcmp(a, "--seeds"))
            return usage("prepost: unknown option '%s' (see 'resnorm help experiment')", a);
        if (bad)
            return usage(!strcmp(a, "--depths")
                             ? "prepost: %s needs a list of at most 16 integers 1..256 such as 6,12,24,48"
                         : !strcmp(a, "--ff") ? "prepost: %s needs an integer 1..8192"
                         : !strcmp(a, "--seeds") ? "prepost: %s needs an integer 1..1000"
                                                 : "prepost: %s needs an integer 1..1024",
                         a);
        i++;
    }
    if (o->d % o->heads) {
        cli_error("experiment", "prepost: --heads %d does not divide --d %d", o->heads, o->d);
        return RN_EXIT_USAGE;
    }
    /* the deepest stack's parameters and their gradients as doubles, and the twin's balls (~3x
       that at 128 bits): keep them well under any memory limit */
    int maxd = 0;
    for (int k = 0; k < o->ndepths; k++)
        maxd = o->depths[k] > maxd ? o->depths[k] : maxd;
    double per_layer = 4.0 * o->d * o->d + 2.0 * o->d * o->ff + (double)o->seq * o->d * 8;
    if (maxd * per_layer > 0x1p24) {
        cli_error("experiment", "prepost: depth %d x (4 d^2 + 2 d ff + 8 seq d) = %.3g values is "
                  "over 2^24 (the twin holds them as Arb balls)", maxd, maxd * per_layer);
        return RN_EXIT_USAGE;
    }
    return 0;
}

int experiment_prepost(int argc, char **argv)
{
    pp_opts o;
    int rc = parse_opts(argc, argv, &o);
    if (rc)
        return rc == 1 ? RN_EXIT_OK : rc;
    int nrows = PP_VARIANTS * o.ndepths, maxdepth = 0;
    for (int k = 0; k < o.ndepths; k++)
        maxdepth = o.depths[k] > maxdepth ? o.depths[k] : maxdepth;
    pp_row *rows = rows_alloc(&o, (unsigned)nrows);
    double *scratch = calloc((size_t)o.seeds, sizeof *scratch);
    int twin = rows && scratch ? 0 : -1;
    /* the seeds on every core (RESNORM_THREADS): each fills its own samples, so the output is the
       same bytes whatever the thread count */
    if (twin == 0) {
#pragma omp parallel for schedule(dynamic, 1) num_threads(rn_threads())
        for (int s = 1; s <= o.seeds; s++) {
            int r = run_seed(rows, nrows, &o, s, (size_t)maxdepth);
            if (r != 0) {
#pragma omp critical(prepost_rc)
                if (twin == 0)
                    twin = r;
            }
        }
    }
    experiment_progress("%s", "");
    if (twin != 0) {
        cli_error("experiment", "prepost: %s", twin == RN_TWIN_UNCERTIFIED
                                                   ? "a gradient could not be certified at 8192 bits"
                                                   : "out of memory");
        rc = RN_EXIT_INTERNAL;
    } else {
        for (int i = 0; i < nrows; i++)
            summarize(&rows[i], scratch);
        rc = o.json ? (print_json(rows, nrows, &o) < 0 ? RN_EXIT_INTERNAL : RN_EXIT_OK)
                    : (print_table(rows, nrows, &o), RN_EXIT_OK);
    }
    rows_free(rows, nrows);
    free(scratch);
    return rc;
}
