/* The Transformer block and stack (issue 9): the twin's properties (the seed's identity block in
 * every dtype, the seed's one-token trace step by step, the backward against finite differences of
 * the forward, a stack against its blocks composed), and the CLI's input checks and absent outputs.
 * PyTorch's TransformerEncoderLayer / TransformerEncoder and the bug zoo: tests/pytorch_block.py. */
#define CLI_HARNESS_PREFIX "/tmp/resnorm_test_block."
#include "cli_harness.h"

#include <math.h>

#include "block_harness.h"
#include "block_mpfr.h"
#include "dtype.h"
#include "ffn_mpfr.h"
#include "layernorm_mpfr.h"

/* A small random block (deterministic LCG; every value rounded to `in`). */
typedef struct {
    size_t batch, seq, d, heads, ff;
    double *x, *dy, *p[12];
    double *m[4];
    block_layer L;
} blk;

static size_t pcount(const blk *b, int j) { return block_pcount((int)b->d, (int)b->ff, j); }

static void blk_init(blk *b, size_t batch, size_t seq, size_t d, size_t heads, size_t ff,
                     rn_dtype in, unsigned long seed, int masks)
{
    memset(b, 0, sizeof *b);
    b->batch = batch, b->seq = seq, b->d = d, b->heads = heads, b->ff = ff;
    size_t N = batch * seq * d;
    b->x = malloc(N * sizeof(double)), b->dy = malloc(N * sizeof(double));
    for (size_t i = 0; i < N; i++)
        b->x[i] = rn_round(3 * lcg(&seed), in), b->dy[i] = rn_round(2 * lcg(&seed), in);
    for (int j = 0; j < 12; j++) {
        size_t n = pcount(b, j);
        b->p[j] = malloc(n * sizeof(double));
        for (size_t i = 0; i < n; i++)
            b->p[j][i] = rn_round((j == 8 || j == 10 ? 1.0 : 0.0) + lcg(&seed), in);
    }
    if (masks) {
        size_t mc[4] = {batch * heads * seq * seq, batch * seq * ff, N, N};
        for (int k = 0; k < 4; k++) {
            b->m[k] = malloc(mc[k] * sizeof(double));
            for (size_t i = 0; i < mc[k]; i++)
                b->m[k][i] = lcg(&seed) < 0.3 ? 1.0 : 0.0;
        }
    }
    b->L = (block_layer){b->p[0], b->p[1], b->p[2],  b->p[3],  b->p[4], b->p[5], b->p[6], b->p[7],
                         b->p[8], b->p[9], b->p[10], b->p[11], b->m[0], b->m[1], b->m[2], b->m[3]};
}

static void blk_free(blk *b)
{
    free(b->x), free(b->dy);
    for (int j = 0; j < 12; j++)
        free(b->p[j]);
    for (int k = 0; k < 4; k++)
        free(b->m[k]);
}

static block_args blk_args(const blk *b, int post, int causal, rn_activation act, const double *x)
{
    double eps;
    cr_assert_eq(rn_parse_eps("1e-5", RN_F32, &eps), 0);
    return (block_args){x ? x : b->x, 1, &b->L, NULL, NULL, NULL, post, causal, act, b->batch,
                        b->seq, b->d, b->heads, b->ff, eps, 0.25};
}

/* Gradient buffers for one layer. */
typedef struct {
    double *v[12];
    block_layer_grad g;
} gbuf;

static void gbuf_init(gbuf *G, const blk *b)
{
    for (int j = 0; j < 12; j++)
        G->v[j] = calloc(pcount(b, j), sizeof(double));
    G->g = (block_layer_grad){G->v[0], G->v[1], G->v[2], G->v[3],  G->v[4], G->v[5],
                              G->v[6], G->v[7], G->v[8], G->v[9], G->v[10], G->v[11]};
}

static void gbuf_free(gbuf *G)
{
    for (int j = 0; j < 12; j++)
        free(G->v[j]);
}

/* The seed: "if the ideal function for a block is the identity, F only needs to learn F(x) = 0
   (e.g. zero-initialized output weights)".  A pre-LN block with out_proj and linear2 weights and
   biases zero is the identity, exactly, in every dtype; its backward passes dy through exactly and
   every gradient upstream of the zero weights is an exact 0. */
Test(block, identity_pre_ln_exact_in_every_dtype)
{
    for (int t = 0; t < RN_NDTYPES; t++) {
        rn_dtype in = (rn_dtype)t;
        blk b;
        blk_init(&b, 2, 3, 4, 2, 8, in, 11 + (unsigned long)t, t == 1);
        for (int j = 2; j <= 7; j++)
            if (j == 2 || j == 3 || j == 6 || j == 7)
                memset(b.p[j], 0, pcount(&b, j) * sizeof(double));
        block_args B = blk_args(&b, 0, t % 2, (rn_activation)(t % 3), NULL);
        size_t N = 2 * 3 * 4;
        double *y = malloc(N * sizeof *y), *dx = malloc(N * sizeof *dx);
        cr_assert_eq(block_forward_mpfr(&y, &in, 1, &B), RN_TWIN_OK);
        for (size_t i = 0; i < N; i++)
            cr_assert(y[i] == b.x[i], "%s: y[%zu] = %a, x = %a", rn_dtype_name(in), i, y[i], b.x[i]);
        gbuf G;
        gbuf_init(&G, &b);
        block_grads g = {dx, &G.g, NULL, NULL};
        cr_assert_eq(block_backward_mpfr(&g, &in, 1, b.dy, &B), RN_TWIN_OK);
        for (size_t i = 0; i < N; i++)
            cr_assert(dx[i] == b.dy[i], "%s: dx[%zu] = %a, dy = %a", rn_dtype_name(in), i, dx[i],
                      b.dy[i]);
        int zero[12] = {1, 1, 0, 0, 1, 1, 0, 0, 1, 1, 1, 1}; /* in_proj, linear1, norm1, norm2 */
        for (int j = 0; j < 12; j++)
            for (size_t i = 0; zero[j] && i < pcount(&b, j); i++)
                cr_assert(G.v[j][i] == 0.0, "%s: gradient %d [%zu] = %a, not 0", rn_dtype_name(in),
                          j, i, G.v[j][i]);
        gbuf_free(&G);
        free(y), free(dx);
        blk_free(&b);
    }
}

/* The seed's one-token trace (d = 4): x = [1.0, 0.5, 1.5, 0.8] (assumed, as `resnorm experiment
   trace`), γ = 1, β = 0, eps = 1e-5; the attention sublayer's update F = [0.10, -0.05, 0.20,
   0.00] (one token: attention = out_proj(v) + out_proj.bias, v = 0); x' = x + F, mean(x') =
   1.0125; then a small FFN update G on LN(x'), added to x'. */
Test(block, seed_one_token_trace_step_by_step)
{
    static const double tx[4] = {1.0, 0.5, 1.5, 0.8}, tf[4] = {0.10, -0.05, 0.20, 0.00};
    blk b;
    blk_init(&b, 1, 1, 4, 1, 8, RN_F32, 5, 0);
    for (int i = 0; i < 4; i++)
        b.x[i] = rn_round(tx[i], RN_F32), b.p[3][i] = rn_round(tf[i], RN_F32);
    memset(b.p[0] + 8 * 4, 0, 16 * sizeof(double)); /* W_v = 0 */
    memset(b.p[1] + 8, 0, 4 * sizeof(double));      /* b_v = 0 */
    for (int j = 8; j <= 11; j++)
        for (int i = 0; i < 4; i++)
            b.p[j][i] = j == 8 || j == 10 ? 1.0 : 0.0;
    for (int j = 6; j <= 7; j++) /* step 3 alone first: no FFN update */
        memset(b.p[j], 0, pcount(&b, j) * sizeof(double));
    block_args B = blk_args(&b, 0, 0, RN_ACT_RELU, NULL);
    rn_dtype f32 = RN_F32, f64 = RN_F64;
    double y[4], xp[4], *yp = y;
    cr_assert_eq(block_forward_mpfr(&yp, &f32, 1, &B), RN_TWIN_OK);
    for (int i = 0; i < 4; i++) { /* x' = x + F: the residual add to the un-normalized x */
        xp[i] = b.x[i] + b.p[3][i]; /* exact in binary64 (two binary32 values) */
        cr_assert(y[i] == rn_round(xp[i], RN_F32), "x'[%d]: %a, want %a", i, y[i], xp[i]);
    }
    /* step 4: LayerNorm(x'): its mean is 1.0125 (the seed's "mean ≈ 1.0125") */
    double n2[4], mean, rstd, g1[4] = {1, 1, 1, 1}, b0[4] = {0};
    cr_assert_eq(layernorm_forward_mpfr(n2, &mean, &rstd, xp, g1, b0, 1, 4, B.eps, RN_F64), 0);
    cr_assert(fabs(mean - 1.0125) < 1e-7, "mean(x') = %.17g", mean);
    /* G = ffn(LN(x')) with a small linear2, then y = x' + G: the block against the composition of
       its certified parts (rounded in between: agree to ~1e-15, not bit for bit) */
    blk_free(&b);
    blk_init(&b, 1, 1, 4, 1, 8, RN_F32, 5, 0);
    for (int i = 0; i < 4; i++)
        b.x[i] = rn_round(tx[i], RN_F32), b.p[3][i] = rn_round(tf[i], RN_F32);
    memset(b.p[0] + 8 * 4, 0, 16 * sizeof(double));
    memset(b.p[1] + 8, 0, 4 * sizeof(double));
    for (int j = 8; j <= 11; j++)
        for (int i = 0; i < 4; i++)
            b.p[j][i] = j == 8 || j == 10 ? 1.0 : 0.0;
    for (int j = 6; j <= 7; j++)
        for (size_t i = 0; i < pcount(&b, j); i++)
            b.p[j][i] = rn_round(0.1 * b.p[j][i], RN_F32);
    B = blk_args(&b, 0, 0, RN_ACT_RELU, NULL);
    double y64[4], G[4], *y64p = y64;
    cr_assert_eq(block_forward_mpfr(&y64p, &f64, 1, &B), RN_TWIN_OK);
    ffn_args F = {b.p[4], b.p[5], b.p[6], b.p[7], NULL, 0.0, RN_ACT_RELU, 1, 4, 8};
    cr_assert_eq(ffn_forward_mpfr(G, n2, &F, RN_F64), 0);
    double gmax = 0;
    for (int i = 0; i < 4; i++) {
        gmax = fmax(gmax, fabs(G[i]));
        cr_assert(fabs(y64[i] - (xp[i] + G[i])) <= 1e-14, "y[%d] = %.17g, x' + G = %.17g", i,
                  y64[i], xp[i] + G[i]);
    }
    cr_assert(gmax > 1e-3 && gmax < 0.5, "G is a small, nonzero update: max |G| = %g", gmax);
    blk_free(&b);
}

/* Σ dy·y at the f64 twin's output (for finite differences). */
static double loss(const block_args *B, const double *dy, size_t N)
{
    double *y = malloc(N * sizeof *y), s = 0;
    rn_dtype f64 = RN_F64;
    cr_assert_eq(block_forward_mpfr(&y, &f64, 1, B), RN_TWIN_OK);
    for (size_t i = 0; i < N; i++)
        s += dy[i] * y[i];
    free(y);
    return s;
}

/* The backward's every output kind against central finite differences of the forward (post-LN,
   gelu, causal, with every dropout mask: the wiring of LN backward at the sums, the identity
   paths and the masks). */
Test(block, backward_matches_finite_differences_of_forward)
{
    for (int post = 0; post <= 1; post++) {
        blk b;
        blk_init(&b, 2, 3, 4, 2, 8, RN_F64, 99 + (unsigned long)post, 1);
        block_args B = blk_args(&b, post, 1, RN_ACT_GELU, NULL);
        size_t N = 2 * 3 * 4;
        double *dx = malloc(N * sizeof *dx);
        gbuf G;
        gbuf_init(&G, &b);
        block_grads g = {dx, &G.g, NULL, NULL};
        rn_dtype f64 = RN_F64;
        cr_assert_eq(block_backward_mpfr(&g, &f64, 1, b.dy, &B), RN_TWIN_OK);
        /* (array, index, its gradient): x and one element of every parameter */
        struct { double *a, *grad; } probe[13] = {{b.x, dx}};
        for (int j = 0; j < 12; j++)
            probe[j + 1].a = b.p[j], probe[j + 1].grad = G.v[j];
        for (int k = 0; k < 13; k++) {
            size_t i = (size_t)(k * 5) % (k == 0 ? N : pcount(&b, k - 1));
            if (k == 2 && i >= 4 && i < 8) /* the key bias: its gradient is exactly 0 */
                i = 1;
            double v = probe[k].a[i], h = 0x1p-18 * fmax(1.0, fabs(v));
            probe[k].a[i] = v + h;
            double lp = loss(&B, b.dy, N);
            probe[k].a[i] = v - h;
            double lm = loss(&B, b.dy, N);
            probe[k].a[i] = v;
            double fd = (lp - lm) / (2 * h), an = probe[k].grad[i];
            cr_assert(fabs(fd - an) <= 1e-7 * fmax(1.0, fabs(an)),
                      "post %d, input %d [%zu]: backward %.12g, finite difference %.12g", post, k,
                      i, an, fd);
        }
        double kb = 0; /* d.in_proj_bias[d .. 2d): exactly 0 */
        for (size_t i = 4; i < 8; i++)
            kb = fmax(kb, fabs(G.v[1][i]));
        cr_assert(kb == 0.0, "the key bias gradient is %g, not exactly 0", kb);
        gbuf_free(&G);
        free(dx);
        blk_free(&b);
    }
}

/* A stack of 2 is its two blocks applied in order (then the final norm): against the blocks
   composed with a rounding in between (agreement ~1e-15, and not with the layers swapped). */
Test(block, stack_is_its_blocks_in_order)
{
    blk b0, b1;
    blk_init(&b0, 1, 4, 8, 2, 16, RN_F32, 3, 0);
    blk_init(&b1, 1, 4, 8, 2, 16, RN_F32, 4, 0);
    block_layer L2[2] = {b0.L, b1.L};
    block_args S = blk_args(&b0, 0, 1, RN_ACT_GELU, NULL);
    S.layers = L2, S.nlayers = 2;
    size_t N = 32;
    double ys[32], h[32], y2[32], yw[32], *p;
    rn_dtype f64 = RN_F64;
    p = ys;
    cr_assert_eq(block_forward_mpfr(&p, &f64, 1, &S), RN_TWIN_OK);
    block_args A = blk_args(&b0, 0, 1, RN_ACT_GELU, NULL);
    p = h;
    cr_assert_eq(block_forward_mpfr(&p, &f64, 1, &A), RN_TWIN_OK);
    block_args Bb = blk_args(&b1, 0, 1, RN_ACT_GELU, h);
    p = y2;
    cr_assert_eq(block_forward_mpfr(&p, &f64, 1, &Bb), RN_TWIN_OK);
    block_layer Lw[2] = {b1.L, b0.L}; /* the layers swapped: a different function */
    S.layers = Lw;
    p = yw;
    cr_assert_eq(block_forward_mpfr(&p, &f64, 1, &S), RN_TWIN_OK);
    double e = 0, w = 0;
    for (size_t i = 0; i < N; i++)
        e = fmax(e, fabs(ys[i] - y2[i])), w = fmax(w, fabs(ys[i] - yw[i]));
    cr_assert(e < 1e-13, "stack vs blocks composed: %g", e);
    cr_assert(w > 1e-3, "swapping the layers changes nothing (%g): the test cannot see order", w);
    blk_free(&b0), blk_free(&b1);
}

/* ---------------------------------------------------------------- CLI */

static const char *const PN[12] = {
    "self_attn.in_proj_weight", "self_attn.in_proj_bias", "self_attn.out_proj.weight",
    "self_attn.out_proj.bias",  "linear1.weight",         "linear1.bias",
    "linear2.weight",           "linear2.bias",           "norm1.weight",
    "norm1.bias",               "norm2.weight",           "norm2.bias"};

/* Writes x, dy and a block's parameters (prefix "" or "layers.<i>.") as .npy; returns the --in
   arguments (static buffer, appended to args). */
static void put_block(const blk *b, const char *prefix, char *args, size_t cap)
{
    size_t d = b->d, ff = b->ff;
    size_t sh[12][2] = {{3 * d, d}, {3 * d}, {d, d}, {d}, {ff, d}, {ff}, {d, ff}, {d}, {d}, {d}, {d}, {d}};
    for (int j = 0; j < 12; j++) {
        char name[128], file[160];
        snprintf(name, sizeof name, "%s%s", prefix, PN[j]);
        snprintf(file, sizeof file, "%s.npy", name);
        put_npy(file, RN_F32, sh[j][1] ? 2 : 1, sh[j], b->p[j]);
        size_t k = strlen(args);
        snprintf(args + k, cap - k, " --in %s=%s", name, P(file));
    }
}

Test(block_cli, bad_inputs_exit_2_and_stack_outputs_only_its_layers, .init = setup, .fini = teardown)
{
    blk b;
    blk_init(&b, 1, 3, 4, 2, 8, RN_F32, 7, 0);
    size_t xs[3] = {1, 3, 4};
    put_npy("x.npy", RN_F32, 3, xs, b.x);
    put_npy("dy.npy", RN_F32, 3, xs, b.dy);
    static char a[16384], s[32768];
    a[0] = '\0';
    put_block(&b, "", a, sizeof a);
    cr_assert_eq(run("eval block --in x=%s%s --attr heads=2 --attr norm=pre --out %s", P("x.npy"),
                     a, P("o")), 0, "%s", err_text);
    cr_assert_eq(run("eval block --in x=%s%s --out %s", P("x.npy"), a, P("o2")), 2);
    cr_assert(strstr(err_text, "heads"), "%s", err_text);
    cr_assert_eq(run("eval block --in x=%s%s --attr heads=3 --out %s", P("x.npy"), a, P("o2")), 2);
    double bad[12];
    memcpy(bad, b.x, sizeof bad);
    bad[5] = NAN;
    put_npy("xnan.npy", RN_F32, 3, xs, bad);
    cr_assert_eq(run("eval block --in x=%s%s --attr heads=2 --out %s", P("xnan.npy"), a, P("o2")), 2);
    cr_assert(strstr(err_text, "xnan.npy") && strstr(err_text, "finite"), "%s", err_text);
    double m[12] = {1, 0, 1, 0.5, 1, 1, 1, 1, 1, 1, 1, 1};
    put_npy("m.npy", RN_F32, 3, xs, m);
    cr_assert_eq(run("eval block --in x=%s%s --in dropout1.mask=%s --attr heads=2 --out %s",
                     P("x.npy"), a, P("m.npy"), P("o2")), 2);
    cr_assert(strstr(err_text, "0 or 1"), "%s", err_text);
    double kp[3] = {1, 1, 1};
    size_t ks[2] = {1, 3};
    put_npy("kpm.npy", RN_F32, 2, ks, kp);
    cr_assert_eq(run("eval block --in x=%s%s --in key_padding_mask=%s --attr heads=2 --out %s",
                     P("x.npy"), a, P("kpm.npy"), P("o2")), 2);
    cr_assert(strstr(err_text, "sees no key"), "%s", err_text);
    /* the stack: layers 0 and 1 given, outputs only theirs */
    s[0] = '\0';
    put_block(&b, "layers.0.", s, sizeof s);
    put_block(&b, "layers.1.", s, sizeof s);
    cr_assert_eq(run("eval stack_backward --in x=%s --in dy=%s%s --attr heads=2 --out %s",
                     P("x.npy"), P("dy.npy"), s, P("st")), 0, "%s", err_text);
    char f[600];
    snprintf(f, sizeof f, "%s/d.layers.1.linear2.weight.npy", P("st"));
    cr_assert_eq(access(f, F_OK), 0, "%s missing", f);
    snprintf(f, sizeof f, "%s/d.layers.2.linear2.weight.npy", P("st"));
    cr_assert_neq(access(f, F_OK), 0, "%s written for an absent layer", f);
    snprintf(f, sizeof f, "%s/d.norm.weight.npy", P("st"));
    cr_assert_neq(access(f, F_OK), 0, "%s written without a final norm", f);
    cr_assert_eq(run("check stack_backward --in x=%s --in dy=%s%s --attr heads=2 --actual "
                     "d.layers.5.linear1.weight=%s", P("x.npy"), P("dy.npy"), s, P("x.npy")), 2);
    cr_assert(strstr(err_text, "no output"), "%s", err_text);
    cr_assert_eq(run("eval stack --in x=%s%s --attr heads=2 --attr final_norm=1 --out %s",
                     P("x.npy"), s, P("o3")), 2);
    cr_assert(strstr(err_text, "norm.weight"), "%s", err_text);
    /* a gap: layers 0 and 2 */
    static char gap[32768];
    gap[0] = '\0';
    put_block(&b, "layers.0.", gap, sizeof gap);
    put_block(&b, "layers.2.", gap, sizeof gap);
    cr_assert_eq(run("eval stack --in x=%s%s --attr heads=2 --out %s", P("x.npy"), gap, P("o4")), 2);
    cr_assert(strstr(err_text, "without gaps"), "%s", err_text);
    /* the twin's own outputs pass the check (f32: both tiers) */
    snprintf(f, sizeof f, "%s/y.npy", P("o"));
    cr_assert_eq(run("check block --in x=%s%s --attr heads=2 --attr norm=pre --actual y=%s",
                     P("x.npy"), a, f), 0, "%s%s", out_text, err_text);
    blk_free(&b);
}

/* check block_backward computes a weight matrix's gradient only when an --actual gives it
   (cli_op.skippable): the dx report is the same with or without the weights' actuals, and a
   weight gradient that is given is still compared (one element moved: exit 1). */
Test(block_cli, check_leaves_out_the_weight_gradients_nobody_gives, .init = setup, .fini = teardown)
{
    blk b;
    blk_init(&b, 1, 3, 4, 2, 8, RN_F32, 11, 0);
    size_t xs[3] = {1, 3, 4};
    put_npy("x.npy", RN_F32, 3, xs, b.x);
    put_npy("dy.npy", RN_F32, 3, xs, b.dy);
    static char a[16384];
    a[0] = '\0';
    put_block(&b, "", a, sizeof a);
    cr_assert_eq(run("eval block_backward --in x=%s --in dy=%s%s --attr heads=2 --out %s",
                     P("x.npy"), P("dy.npy"), a, P("g")), 0, "%s", err_text);
    char dx[600], w1[600];
    snprintf(dx, sizeof dx, "%s/dx.npy", P("g"));
    snprintf(w1, sizeof w1, "%s/d.linear1.weight.npy", P("g"));
    cr_assert_eq(run("check block_backward --in x=%s --in dy=%s%s --attr heads=2 --json --actual "
                     "dx=%s", P("x.npy"), P("dy.npy"), a, dx), 0, "%s%s", out_text, err_text);
    static char alone[1 << 16];
    snprintf(alone, sizeof alone, "%s", out_text);
    cr_assert_eq(run("check block_backward --in x=%s --in dy=%s%s --attr heads=2 --json --actual "
                     "dx=%s --actual d.linear1.weight=%s", P("x.npy"), P("dy.npy"), a, dx, w1),
                 0, "%s%s", out_text, err_text);
    /* the dx entry of the second report is the first one's, byte for byte */
    const char *k1 = strstr(alone, "\"dx\""), *k2 = strstr(out_text, "\"dx\"");
    cr_assert(k1 && k2, "%s", out_text);
    const char *e1 = strchr(k1, '}');
    cr_assert(e1 && !strncmp(k1, k2, (size_t)(e1 - k1)), "dx reports differ:\n%s\n%s", alone, out_text);
    rn_array g;
    char err[256];
    cr_assert_eq(npy_read(w1, &g, err, sizeof err), 0, "%s", err);
    g.data[5] += 0.5; /* the weights' gradients here are O(1): far beyond any f32 bound */
    put_npy("w1_moved.npy", RN_F32, g.ndim, g.shape, g.data);
    rn_array_free(&g);
    cr_assert_eq(run("check block_backward --in x=%s --in dy=%s%s --attr heads=2 --actual dx=%s "
                     "--actual d.linear1.weight=%s", P("x.npy"), P("dy.npy"), a, dx,
                     P("w1_moved.npy")), 1, "%s%s", out_text, err_text);
    blk_free(&b);
}
