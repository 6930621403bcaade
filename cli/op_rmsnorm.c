/* The RMSNorm op family in the `resnorm` registry: `rmsnorm` and `rmsnorm_backward`.
 * Adaptors to the twin (ref/rmsnorm_mpfr.c) and the bound (ref/rmsnorm_bound.c); the shapes are
 * LayerNorm's (cli/op_layernorm.c: x viewed as rows x n over dims axis..end, gamma like
 * x.shape[axis:], rstd x.shape[:axis] + [1]*(ndim-axis)), plus the attribute `offset` (0: y = x̂·γ,
 * Llama/T5; 1: y = x̂·(1 + γ), Gemma).  Golden cases: golden/rmsnorm/<case>/ (specs/golden-format.md).
 * Reference: specs/cli.md. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "norm_fast.h"
#include "golden.h"
#include "rmsnorm_bound.h"
#include "rmsnorm_mpfr.h"

/* attribute indices, as in the table at the end: eps and axis where cli_ln_prepare expects them */
enum { A_EPS = 0, A_AXIS = 1, A_OFFSET = 2 };

/* ---------------------------------------------------------------- CLI adaptors */

/* LayerNorm's shape and eps checks (cli_ln_prepare), then the offset (range-checked at parse time:
   0 or 1).  Shared with cli/op_skip_rmsnorm.c (attrs eps, axis, offset in that order). */
int cli_rms_prepare(cli_job *job)
{
    int rc = cli_ln_prepare(job);
    if (rc)
        return rc;
    job->attr_value[A_OFFSET] = (double)job->attr_int[A_OFFSET];
    return 0;
}

int cli_rms_offset(const cli_job *job)
{
    return (int)job->attr_int[A_OFFSET];
}

/* inputs: x, gamma (forward) or x, gamma, dy (backward) */
static int rms_twin(const cli_job *job, rn_dtype out, double *const *o)
{
    return rmsnorm_forward_mpfr(o[0], o[1], job->in[0].data, job->in[1].data, job->rows, job->n,
                                job->eps, cli_rms_offset(job), out);
}

static int rms_bwd_twin(const cli_job *job, rn_dtype out, double *const *o)
{
    return rmsnorm_backward_mpfr(o[0], o[1], job->in[2].data, job->in[0].data, job->in[1].data,
                                 job->rows, job->n, job->eps, cli_rms_offset(job), out);
}

/* Streaming (cli.h: cli_colsums): dx of a block of rows; dgamma in column 0. */
static int rms_bwd_rows(const cli_job *sub, rn_dtype out, double *const *o, norm_cols *c,
                        int t, unsigned char *row_ok)
{
    return rmsnorm_backward_rows_fast(c, t, o[0], sub->in[2].data, sub->in[0].data, NULL, NULL,
                                      sub->in[1].data, sub->rows, sub->n, sub->eps,
                                      cli_rms_offset(sub), out, row_ok);
}


static int rms_bound(const cli_job *job, rn_dtype compute, rn_dtype out, double *const *o)
{
    return rmsnorm_forward_bound(o[0], o[1], job->in[0].data, job->in[1].data, job->rows, job->n,
                                 job->eps, cli_rms_offset(job), compute, out);
}

static int rms_bwd_bound(const cli_job *job, rn_dtype compute, rn_dtype out, double *const *o)
{
    return rmsnorm_backward_bound(o[0], o[1], job->in[2].data, job->in[0].data, job->in[1].data,
                                  job->rows, job->n, job->eps, cli_rms_offset(job), compute, out);
}

/* Check by blocks of rows (cli.h: cli_colsums): dx's bounds of a block, and dgamma's. */
static int rms_bwd_bound_rows(const cli_job *sub, rn_dtype compute, rn_dtype out,
                              double *const *o, double *cs, unsigned char *cf)
{
    return rmsnorm_backward_bound_rows(o[0], cs, cf, sub->in[2].data, sub->in[0].data,
                                       sub->in[1].data, sub->rows, sub->n, sub->eps,
                                       cli_rms_offset(sub), compute, out);
}

static void rms_bwd_bound_cols(const cli_job *job, rn_dtype compute, rn_dtype out,
                               double *const *o, double *cs, unsigned char *cf, size_t nb)
{
    rmsnorm_backward_bound_cols(o[1], cs, cf, nb, job->rows, job->n, compute, out);
}

static const cli_colsums rms_bwd_cols = {1, 0, {-1, 0}, -1, -1, rms_bwd_rows,
                                         RMS_BWD_BOUND_SUMS, RMS_BWD_BOUND_FLAGS,
                                         rms_bwd_bound_rows, rms_bwd_bound_cols,
                                         NULL, NULL, NULL, NULL};

/* ---------------------------------------------------------------- golden cases */

typedef enum {
    K_RANDN,       /* x = shift + scale randn; gamma = gshift + gscale randn; dy = randn */
    K_ZERO_ROWS,   /* row r of x is the constant zval[r % 4] (row 0: all zeros) */
    K_NONFINITE_X, /* rows with NaN / +Inf / -Inf / both / none */
    K_NONFINITE_P, /* finite x (last row zero); gamma with Inf and NaN */
    K_NONFINITE_DY /* finite x, gamma; dy with an Inf and a NaN */
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
    int offset;
    kind k;
    double scale, shift, gscale, gshift;
} rcase;

static const double zval[4] = {0.0, 1.0, -3.5, 0.1};

#define RANDN_STD 1.0, 0.0, 0.1, 1.0
#define GEMMA_STD 1.0, 0.0, 0.1, 0.0 /* Gemma stores gamma near 0: the weight is 1 + gamma */

/* clang-format off */
static const rcase CASES[] = {
#define ONNX_AXIS(nm, ax, dt, cmt) \
    {nm, cmt, "axis", dt, 4, {2, 3, 4, 5}, ax, "1e-5", 0, K_RANDN, RANDN_STD}
    ONNX_AXIS("onnx_2345_axis0_f32", 0, RN_F32, "ONNX shape (2,3,4,5), axis 0: one row of 120"),
    ONNX_AXIS("onnx_2345_axis1_f32", 1, RN_F32, "ONNX shape (2,3,4,5), axis 1: 2 rows of 60"),
    ONNX_AXIS("onnx_2345_axis1_f64", 1, RN_F64, "ONNX shape (2,3,4,5), axis 1: 2 rows of 60"),
    ONNX_AXIS("onnx_2345_axis2_f32", 2, RN_F32, "ONNX shape (2,3,4,5), axis 2: 6 rows of 20"),
    ONNX_AXIS("onnx_2345_axis3_f32", 3, RN_F32, "ONNX shape (2,3,4,5), axis 3: 24 rows of 5"),
    ONNX_AXIS("onnx_2345_axism1_f32", -1, RN_F32, "ONNX shape (2,3,4,5), axis -1 (= 3): 24 rows of 5"),
    ONNX_AXIS("onnx_2345_axism1_f64", -1, RN_F64, "ONNX shape (2,3,4,5), axis -1: 24 rows of 5"),
    ONNX_AXIS("onnx_2345_axism1_f16", -1, RN_F16, "ONNX shape (2,3,4,5), axis -1, f16 inputs"),
    ONNX_AXIS("onnx_2345_axism1_bf16", -1, RN_BF16, "ONNX shape (2,3,4,5), axis -1, bf16 inputs"),
#undef ONNX_AXIS
    {"onnx_34_eps0p1_f32", "ONNX shape (3,4), x = 0.3 randn, eps 0.1 (comparable to mean(x^2))",
     "eps_large small_n", RN_F32, 2, {3, 4}, -1, "0.1", 0, K_RANDN, 0.3, 0.0, 0.1, 1.0},
    {"onnx_34_eps0p1_f64", "ONNX shape (3,4), x = 0.3 randn, eps 0.1", "eps_large small_n",
     RN_F64, 2, {3, 4}, -1, "0.1", 0, K_RANDN, 0.3, 0.0, 0.1, 1.0},
    {"gpt2_row_f32", "GPT-2 width: 4 rows of 768, randn x, gamma ~ 1 + 0.1 randn", "gpt2",
     RN_F32, 2, {4, 768}, -1, "1e-5", 0, K_RANDN, RANDN_STD},
    {"gpt2_row_f64", "GPT-2 width: 4 rows of 768, randn x", "gpt2",
     RN_F64, 2, {4, 768}, -1, "1e-5", 0, K_RANDN, RANDN_STD},
    {"gpt2_row_f16", "GPT-2 width, f16 inputs (eps 1e-5 in f32, eps_dtype)",
     "gpt2 half_input", RN_F16, 2, {4, 768}, -1, "1e-5", 0, K_RANDN, RANDN_STD},
    {"gpt2_row_bf16", "GPT-2 width, bf16 inputs", "gpt2 half_input",
     RN_BF16, 2, {4, 768}, -1, "1e-5", 0, K_RANDN, RANDN_STD},
    {"llama_row_f32", "Llama-like width: 2 rows of 2048, eps 1e-6 (Llama's rms_norm_eps)", "llama",
     RN_F32, 2, {2, 2048}, -1, "1e-6", 0, K_RANDN, RANDN_STD},
    {"llama_row_bf16", "Llama-like width: 2 rows of 2048, bf16 inputs, eps 1e-6", "llama half_input",
     RN_BF16, 2, {2, 2048}, -1, "1e-6", 0, K_RANDN, RANDN_STD},
    {"gemma_offset1_f32", "offset 1 (Gemma): y = xhat (1 + gamma), gamma = 0.1 randn; 4 rows of 256",
     "offset", RN_F32, 2, {4, 256}, -1, "1e-6", 1, K_RANDN, GEMMA_STD},
    {"gemma_offset1_f64", "offset 1 (Gemma), f64", "offset",
     RN_F64, 2, {4, 256}, -1, "1e-6", 1, K_RANDN, GEMMA_STD},
    {"gemma_offset1_bf16", "offset 1 (Gemma), bf16 inputs", "offset half_input",
     RN_BF16, 2, {4, 256}, -1, "1e-6", 1, K_RANDN, GEMMA_STD},
    {"large_mean_768_f32", "x = 100 + 0.01 randn, n = 768: benign for RMSNorm (no mean is "
     "subtracted), y ~ gamma", "large_mean", RN_F32, 2, {2, 768}, -1, "1e-5", 0, K_RANDN,
     0.01, 100.0, 0.1, 1.0},
    {"large_mean_768_f64", "x = 100 + 0.01 randn, n = 768", "large_mean",
     RN_F64, 2, {2, 768}, -1, "1e-5", 0, K_RANDN, 0.01, 100.0, 0.1, 1.0},
    {"tiny_ms_f32", "x = 1e-3 randn: mean(x^2) ~ 1e-6 < eps = 1e-5, eps dominates rstd",
     "eps_large", RN_F32, 2, {3, 64}, -1, "1e-5", 0, K_RANDN, 1e-3, 0.0, 0.1, 1.0},
    {"tiny_scale_eps0_f32", "x = 1e-18 randn, eps 0: squares ~ 1e-36 near the bottom of f32's "
     "normal range", "tiny_scale", RN_F32, 2, {3, 64}, -1, "0", 0, K_RANDN, 1e-18, 0.0, 0.1, 1.0},
    {"tiny_scale_eps0_f64", "x = 1e-160 randn, eps 0: squares ~ 1e-320, f64 subnormal",
     "tiny_scale subnormal", RN_F64, 2, {3, 64}, -1, "0", 0, K_RANDN, 1e-160, 0.0, 0.1, 1.0},
    {"huge_scale_f32", "x = 1e20 randn: x^2 overflows f32 (bound void there), the exact result is "
     "ordinary", "huge_scale", RN_F32, 2, {3, 64}, -1, "1e-5", 0, K_RANDN, 1e20, 0.0, 0.1, 1.0},
    {"huge_scale_f64", "x = 1e20 randn in f64", "huge_scale",
     RN_F64, 2, {3, 64}, -1, "1e-5", 0, K_RANDN, 1e20, 0.0, 0.1, 1.0},
    {"zero_rows_f32", "rows 0 (all zeros: y = 0, rstd = 1/sqrt(eps)), 1.0, -3.5, 0.1 (n = 16)",
     "zero_rows", RN_F32, 2, {4, 16}, -1, "1e-5", 0, K_ZERO_ROWS, RANDN_STD},
    {"zero_rows_f64", "rows 0, 1.0, -3.5, 0.1 (n = 16)", "zero_rows",
     RN_F64, 2, {4, 16}, -1, "1e-5", 0, K_ZERO_ROWS, RANDN_STD},
    {"zero_rows_f16", "rows 0, 1.0, -3.5, 0.1 (n = 16), f16 inputs", "zero_rows half_input",
     RN_F16, 2, {4, 16}, -1, "1e-5", 0, K_ZERO_ROWS, RANDN_STD},
    {"zero_rows_bf16", "rows 0, 1.0, -3.5, 0.1 (n = 16), bf16 inputs", "zero_rows half_input",
     RN_BF16, 2, {4, 16}, -1, "1e-5", 0, K_ZERO_ROWS, RANDN_STD},
    {"n1_f32", "n = 1: y = x gamma / sqrt(x^2 + eps) ~ sign(x) gamma", "n1",
     RN_F32, 2, {5, 1}, -1, "1e-5", 0, K_RANDN, RANDN_STD},
    {"n1_f64", "n = 1: y ~ sign(x) gamma", "n1", RN_F64, 2, {5, 1}, -1, "1e-5", 0, K_RANDN, RANDN_STD},
    {"lowp_sumsq_overflow_f32", "x = 300 randn, n = 1024: sum x^2 ~ 1e8 and most x^2 exceed f16's "
     "65504; an implementation that squares or sums in f16 gets Inf (y = 0)",
     "lowp_sumsq_overflow", RN_F32, 2, {2, 1024}, -1, "1e-5", 0, K_RANDN, 300.0, 0.0, 0.1, 1.0},
    {"lowp_sumsq_overflow_f16", "x = 300 randn in f16, n = 1024: the f16 sum of squares overflows, "
     "the f32 one does not; f16 outputs are ordinary", "lowp_sumsq_overflow half_input",
     RN_F16, 2, {2, 1024}, -1, "1e-5", 0, K_RANDN, 300.0, 0.0, 0.1, 1.0},
    {"lowp_sumsq_underflow_f32", "x = 1e-4 randn, eps 0, n = 1024: x^2 ~ 1e-8 is below f16's "
     "smallest subnormal (6e-8); an f16 sum of squares is 0 or a few ulps (rstd Inf or far off)",
     "lowp_sumsq_underflow", RN_F32, 2, {2, 1024}, -1, "0", 0, K_RANDN, 1e-4, 0.0, 0.1, 1.0},
    {"lowp_sumsq_underflow_f16", "x = 1e-4 randn in f16 (normal: > 6.1e-5 mostly), eps 0: the f16 "
     "squares underflow", "lowp_sumsq_underflow half_input",
     RN_F16, 2, {2, 1024}, -1, "0", 0, K_RANDN, 1e-4, 0.0, 0.1, 1.0},
    {"lowp_sumsq_underflow_bf16", "x = 1e-20 randn in bf16, eps 0: x^2 ~ 1e-40 is bf16-subnormal "
     "(1-7 bits); an f32 accumulator keeps ~16 bits (f32 subnormal), a bf16 one loses the row",
     "lowp_sumsq_underflow half_input subnormal",
     RN_BF16, 2, {2, 1024}, -1, "0", 0, K_RANDN, 1e-20, 0.0, 0.1, 1.0},
    {"nonfinite_x_f32", "rows of x with NaN, +Inf, -Inf, +Inf and -Inf, then two finite rows",
     "nonfinite", RN_F32, 2, {6, 8}, -1, "1e-5", 0, K_NONFINITE_X, RANDN_STD},
    {"nonfinite_x_f64", "rows of x with NaN, +Inf, -Inf, +Inf and -Inf, then two finite rows",
     "nonfinite", RN_F64, 2, {6, 8}, -1, "1e-5", 0, K_NONFINITE_X, RANDN_STD},
    {"nonfinite_x_f16", "rows of x with NaN, +Inf, -Inf, both, then finite rows; f16 inputs",
     "nonfinite half_input", RN_F16, 2, {6, 8}, -1, "1e-5", 0, K_NONFINITE_X, RANDN_STD},
    {"nonfinite_params_f32", "gamma[1] = +Inf, gamma[2] = -Inf, gamma[4] = NaN; last row zero "
     "(0 * Inf = NaN)", "nonfinite", RN_F32, 2, {4, 8}, -1, "1e-5", 0, K_NONFINITE_P, RANDN_STD},
    {"nonfinite_dy_f32", "dy[1][3] = +Inf, dy[2][5] = NaN, dy[3][3] = -Inf (backward)", "nonfinite",
     RN_F32, 2, {4, 8}, -1, "1e-5", 0, K_NONFINITE_DY, RANDN_STD},
    /* Production widths (n = 768 .. 8192) in the regime of a bug class (flag long_row). */
    {"long_eps_ms_768_f32", "x = 0.003 randn, 2 rows of 768: mean(x^2) ~ 9e-6 next to eps 1e-5",
     "eps_large long_row", RN_F32, 2, {2, 768}, -1, "1e-5", 0, K_RANDN, 0.003, 0.0, 0.1, 1.0},
    {"long_gemma_2048_bf16", "offset 1 (Gemma), one row of 2048, bf16 inputs, eps 1e-6",
     "offset long_row half_input", RN_BF16, 2, {1, 2048}, -1, "1e-6", 1, K_RANDN, GEMMA_STD},
    {"long_llama_eps_4096_bf16", "x = 0.001 randn, one row of 4096 (Llama-7B), bf16 inputs, eps "
     "1e-6: mean(x^2) ~ 1e-6 = eps", "llama eps_large long_row half_input", RN_BF16, 2, {1, 4096},
     -1, "1e-6", 0, K_RANDN, 0.001, 0.0, 0.1, 1.0},
    {"long_sumsq_overflow_8192_f16", "x = 300 randn, one row of 8192 (Llama-70B), f16 inputs: the "
     "f16 squares and their sum overflow", "lowp_sumsq_overflow long_row half_input",
     RN_F16, 2, {1, 8192}, -1, "1e-5", 0, K_RANDN, 300.0, 0.0, 0.1, 1.0},
};
/* clang-format on */
#define NCASES (sizeof CASES / sizeof CASES[0])

/* New flags of this family (those it shares with LayerNorm are described there). */
static const char *const RMS_FLAGS[][2] = {
    {"llama", "a Llama-like width (n = 2048) and eps 1e-6"},
    {"offset", "offset = 1 (Gemma): y = xhat (1 + gamma) with gamma near 0; catches the offset "
               "missing (y = xhat gamma, nearly 0) or applied twice"},
    {"zero_rows", "all-zero rows (and constant rows): mean(x^2) = 0, rstd = 1/sqrt(eps), y = 0; "
                  "catches eps dropped (0/0) or added outside the square root"},
    {"lowp_sumsq_overflow", "rows whose sum of squares (and most squares) exceed f16's 65504 "
                            "while y is ordinary: catches x^2 formed or summed in f16 (Inf, y = 0)"},
    {"lowp_sumsq_underflow", "rows whose squares are below f16's (or in bf16's subnormal) range, "
                             "eps 0: catches x^2 formed or summed in f16/bf16 (0 or a few bits, "
                             "rstd Inf or far off)"},
    {NULL, NULL},
};

static void gen_inputs(const rcase *c, size_t rows, size_t n, double *x, double *gamma,
                       double *dy)
{
    golden_prng g;
    golden_prng_seed(&g, c->name);
    for (size_t i = 0; i < rows * n; i++)
        x[i] = c->shift + c->scale * golden_randn(&g);
    for (size_t j = 0; j < n; j++)
        gamma[j] = c->gshift + c->gscale * golden_randn(&g);
    for (size_t i = 0; i < rows * n; i++)
        dy[i] = golden_randn(&g);
    switch (c->k) {
    case K_RANDN:
        break;
    case K_ZERO_ROWS:
        for (size_t r = 0; r < rows; r++)
            for (size_t j = 0; j < n; j++)
                x[r * n + j] = zval[r % 4];
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
            x[(rows - 1) * n + j] = 0.0; /* zero last row: xhat = 0, 0 * Inf = NaN */
        gamma[1] = INFINITY;
        gamma[2] = -INFINITY;
        gamma[4] = NAN;
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
    for (size_t j = 0; j < n; j++)
        gamma[j] = rn_round(gamma[j], c->in);
}

/* The buffers of one case, and the twin that fills its outputs for golden_case_write. */
typedef struct {
    golden_rowview v;
    double eps;
    int offset;
    double *x, *gamma, *dy, *y, *rstd, *dx, *dg;
} rms_bufs;

static int rms_case_twin(const golden_case *gc, rn_dtype dt)
{
    const rms_bufs *b = gc->arg;
    int t1 = rmsnorm_forward_mpfr(b->y, b->rstd, b->x, b->gamma, b->v.rows, b->v.n, b->eps,
                                  b->offset, dt);
    int t2 = rmsnorm_backward_mpfr(b->dx, b->dg, b->dy, b->x, b->gamma, b->v.rows, b->v.n, b->eps,
                                   b->offset, dt);
    return t1 == RN_TWIN_NOMEM || t2 == RN_TWIN_NOMEM ? RN_TWIN_NOMEM : (t1 ? t1 : t2);
}

/* One case: files, and its two manifest entries (rmsnorm/<case>, rmsnorm_backward/<case>). */
static int gen_case(golden_ctx *G, const rcase *c)
{
    rms_bufs b = {0};
    int nd = c->ndim, rc = -1;
    golden_row_view(nd, c->shape, c->axis, &b.v);
    size_t rows = b.v.rows, n = b.v.n, N = rows * n;
    rn_dtype ed;
    if (golden_eps(c->name, c->eps, NULL, c->in, &b.eps, &ed) != 0)
        return -1;
    b.offset = c->offset;
    b.x = malloc(N * sizeof *b.x), b.dy = malloc(N * sizeof *b.dy);
    b.gamma = malloc(n * sizeof *b.gamma), b.y = malloc(N * sizeof *b.y);
    b.dx = malloc(N * sizeof *b.dx), b.rstd = malloc(rows * sizeof *b.rstd);
    b.dg = malloc(n * sizeof *b.dg);
    json_t *attrs = golden_norm_attrs(c->eps, c->axis, c->offset, ed);
    if (!b.x || !b.dy || !b.gamma || !b.y || !b.dx || !b.rstd || !b.dg) {
        fprintf(stderr, "resnorm golden: out of memory\n");
        goto out;
    }
    gen_inputs(c, rows, n, b.x, b.gamma, b.dy);
    int pnd = b.v.pnd;
    const size_t *ps = b.v.pshape, *ss = b.v.sshape, *xs = c->shape;
    golden_case gc = {
        "rmsnorm", c->name, c->comment, c->flags, c->in, nd, c->shape, attrs,
        3, 4, 2,
        {golden_arr("x", nd, xs, b.x), golden_arr("gamma", pnd, ps, b.gamma),
         golden_arr("dy", nd, xs, b.dy)},
        {golden_arr("y", nd, xs, b.y), golden_arr("rstd", nd, ss, b.rstd),
         golden_arr("dx", nd, xs, b.dx), golden_arr("dgamma", pnd, ps, b.dg)},
        {{"rmsnorm", {"x", "gamma", NULL}, {"y", "rstd", NULL}},
         {"rmsnorm_backward", {"dy", "x", "gamma", NULL}, {"dx", "dgamma", NULL}}},
        rms_case_twin, &b, 1, b.eps,
    };
    if (golden_case_write(G, &gc) != 0)
        goto out;
    fprintf(stderr, "golden: rmsnorm/%s  rows %zu x n %zu, input %s, offset %d: ok\n", c->name,
            rows, n, rn_dtype_name(c->in), c->offset);
    rc = 0;
out:
    json_decref(attrs);
    free(b.x), free(b.dy), free(b.gamma), free(b.y), free(b.dx), free(b.rstd), free(b.dg);
    return rc;
}

static int rms_golden(golden_ctx *G)
{
    for (size_t i = 0; i < NCASES; i++)
        if (gen_case(G, &CASES[i]) != 0)
            return -1;
    return 0;
}

/* ---------------------------------------------------------------- registry entries */

const cli_family cli_family_rmsnorm = {
    "rmsnorm",
    "rmsnorm, rmsnorm_backward: eps, axis as for layernorm (gamma: x.shape[axis:]; rstd:\n"
    "  x.shape[:axis] + [1]*(ndim-axis); dgamma summed over all rows), and\n"
    "  offset=0|1 y = x*rstd*gamma (0, default: Llama, T5) or x*rstd*(1 + gamma) (1: Gemma).\n",
    rms_golden,
    RMS_FLAGS,
};

#define RMS_ATTRS                                                                                  \
    4, {{"eps", "1e-5", CLI_ATTR_DECIMAL, 0, 0, NULL},                                             \
        {"axis", "-1", CLI_ATTR_INT, -RN_MAX_DIMS, RN_MAX_DIMS, NULL},                             \
        {"offset", "0", CLI_ATTR_INT, 0, 1, NULL}, CLI_EPS_DTYPE_ATTR}

const cli_op cli_op_rmsnorm = {
    "rmsnorm", "RMSNorm forward (offset 1: Gemma's x̂·(1+γ)): y, rstd",
    &cli_family_rmsnorm,
    2, {"x", "gamma"}, {0, 0},
    RMS_ATTRS,
    2, {"y", "rstd"},
    "specs/error-analysis-rmsnorm.md", "ref/rmsnorm_bound.c",
    "overflow of the sum of squares in the compute dtype, or ms + eps rounding to 0, "
    "specs/error-analysis-rmsnorm.md R§6",
    cli_rms_prepare, cli_ln_output_shape, rms_twin, rms_bound, NULL, NULL,
    /* rowwise: rmsnorm_forward_mpfr (ref/rmsnorm_mpfr.c, forward_rows) is the fast path
       (rmsnorm_forward_fast, per row) then rmsnorm_row_forward_mpfr on the rows left, each from
       x + r n, gamma, eps and offset alone: y and rstd of row r depend on row r only. */
    CLI_ROWWISE_ROWS, NULL,
};

const cli_op cli_op_rmsnorm_backward = {
    "rmsnorm_backward", "RMSNorm backward: dx, and dgamma summed over all rows",
    &cli_family_rmsnorm,
    3, {"x", "gamma", "dy"}, {0, 0, 0},
    RMS_ATTRS,
    2, {"dx", "dgamma"},
    "specs/error-analysis-rmsnorm.md", "ref/rmsnorm_bound.c",
    "overflow of the sum of squares in the compute dtype, or ms + eps rounding to 0, "
    "specs/error-analysis-rmsnorm.md R§6",
    cli_rms_prepare, cli_ln_output_shape, rms_bwd_twin, rms_bwd_bound, NULL, NULL,
    /* dx: row r from row r of x and dy, gamma and eps alone (rms_row_backward_fast; the twin's
       rows likewise); dgamma: a sum over all rows, kept across blocks */
    CLI_ROWWISE_COLUMNS, &rms_bwd_cols,
};
