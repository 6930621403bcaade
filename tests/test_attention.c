/* Multi-head self-attention (ref/attention.c, ref/attention_mpfr.c, ref/attention_bound.c,
 * cli/op_attention.c):
 *  - the float and double kernels against every golden attention / attention_backward case, within
 *    the bound of specs/error-analysis-attention.md (worst error/bound printed);
 *  - the twin's backward against high-precision (512-bit balls) central finite differences of its
 *    forward, L = Σ dy·y, for elements of x and of every parameter, with causal, key padding and
 *    dropout masks;
 *  - exact structure: one token (P = 1) gives exact-zero q and k gradients; the key bias's gradient
 *    is exactly 0; a fully masked query is NaN;
 *  - the CLI refuses a missing heads, a mask of the wrong shape or with a value other than 0/1 (exit
 *    2, naming the file), and a kernel with the scores scaled by 1/dh fails `resnorm check`. */
#include <criterion/criterion.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CLI_HARNESS_PREFIX "/tmp/resnorm_test_attention."
#include "attention.h"
#include "attention_bound.h"
#include "attention_mpfr.h"
#include "cli_harness.h"
#include "golden_harness.h"

#define MANIFEST "golden/manifest.json"

static double compare(const char *id, const char *name, const double *got, const double *want,
                      const double *bd, size_t count)
{
    double worst = 0.0;
    for (size_t i = 0; i < count; i++) {
        if (isnan(want[i])) {
            cr_assert(isnan(got[i]), "%s %s[%zu]: got %a, want NaN", id, name, i, got[i]);
            continue;
        }
        if (isinf(bd[i]))
            continue;
        double err = fabs(got[i] - want[i]);
        cr_assert(err <= bd[i], "%s %s[%zu]: got %.17g want %.17g err %.3g > bound %.3g", id, name, i,
                  got[i], want[i], err, bd[i]);
        if (bd[i] > 0 && err / bd[i] > worst)
            worst = err / bd[i];
    }
    return worst;
}

static float *to_f32(const double *a, size_t n)
{
    float *f = malloc((n ? n : 1) * sizeof *f);
    for (size_t i = 0; i < n; i++)
        f[i] = (float)a[i];
    return f;
}

/* The kernel at compute type p (0: f64, 1: f32) on one case: outputs as doubles in out[0..5). */
static void run_kernel(int p, int bwd, const attn_args *A, const double *x, const double *dy,
                       double *const *out)
{
    int B = (int)A->batch, T = (int)A->seq, d = (int)A->d, H = (int)A->heads;
    size_t n = (size_t)B * T * d, na = (size_t)B * H * T * T, nw = 3 * (size_t)d * d;
    size_t sz[5] = {n, nw, 3 * (size_t)d, (size_t)d * d, (size_t)d};
    double *ib = A->in_b ? (double *)A->in_b : calloc(3 * (size_t)d, sizeof(double));
    double *ob = A->out_b ? (double *)A->out_b : calloc((size_t)d, sizeof(double));
    if (!p) {
        double *y = malloc(n * sizeof *y), *qkv = malloc(3 * n * sizeof *qkv), *att = malloc(na * sizeof *att),
               *ctx = malloc(n * sizeof *ctx), *row = malloc(2 * (size_t)T * sizeof *row);
        attention_forward_f64(y, qkv, att, ctx, row, x, A->in_w, ib, A->out_w, ob, A->kpm, A->amask,
                              A->p, B, T, d, H, A->causal);
        if (!bwd)
            memcpy(out[0], y, n * sizeof *y);
        else {
            double *dq = malloc(3 * n * sizeof *dq), *dc = malloc(n * sizeof *dc);
            for (int k = 0; k < 5; k++)
                memset(out[k], 0, sz[k] * sizeof(double));
            attention_backward_f64(out[0], out[1], out[2], out[3], out[4], dq, dc, row, dy, x, A->in_w,
                                   A->out_w, qkv, att, ctx, A->amask, A->p, B, T, d, H);
            free(dq), free(dc);
        }
        free(y), free(qkv), free(att), free(ctx), free(row);
    } else {
        float *xf = to_f32(x, n), *wf = to_f32(A->in_w, nw), *bf = to_f32(ib, 3 * (size_t)d),
              *owf = to_f32(A->out_w, (size_t)d * d), *obf = to_f32(ob, (size_t)d),
              *kf = A->kpm ? to_f32(A->kpm, (size_t)B * T) : NULL, *mf = A->amask ? to_f32(A->amask, na) : NULL;
        float *y = malloc(n * sizeof *y), *qkv = malloc(3 * n * sizeof *qkv), *att = malloc(na * sizeof *att),
              *ctx = malloc(n * sizeof *ctx), *row = malloc(2 * (size_t)T * sizeof *row);
        attention_forward_f32(y, qkv, att, ctx, row, xf, wf, bf, owf, obf, kf, mf, (float)A->p, B, T, d,
                              H, A->causal);
        if (!bwd)
            for (size_t i = 0; i < n; i++)
                out[0][i] = y[i];
        else {
            float *g[5], *dq = malloc(3 * n * sizeof *dq), *dc = malloc(n * sizeof *dc), *dyf = to_f32(dy, n);
            for (int k = 0; k < 5; k++)
                g[k] = calloc(sz[k], sizeof(float));
            attention_backward_f32(g[0], g[1], g[2], g[3], g[4], dq, dc, row, dyf, xf, wf, owf, qkv, att, ctx,
                                   mf, (float)A->p, B, T, d, H);
            for (int k = 0; k < 5; k++) {
                for (size_t i = 0; i < sz[k]; i++)
                    out[k][i] = g[k][i];
                free(g[k]);
            }
            free(dq), free(dc), free(dyf);
        }
        free(xf), free(wf), free(bf), free(owf), free(obf), free(kf), free(mf);
        free(y), free(qkv), free(att), free(ctx), free(row);
    }
    if (!A->in_b)
        free(ib);
    if (!A->out_b)
        free(ob);
}

Test(attention, kernels_within_bound_on_golden, .timeout = 600)
{
    json_error_t e;
    json_t *m = json_load_file(MANIFEST, 0, &e);
    cr_assert_not_null(m, "%s", e.text);
    size_t i, ncases = 0;
    json_t *c;
    double worst[2] = {0, 0};
    static const char *const OUT[5] = {"dx", "d.in_proj_weight", "d.in_proj_bias", "d.out_proj.weight",
                                       "d.out_proj.bias"};
    json_array_foreach(json_object_get(m, "cases"), i, c)
    {
        const char *op = json_string_value(json_object_get(c, "op"));
        if (strcmp(op, "attention") && strcmp(op, "attention_backward"))
            continue;
        int bwd = !strcmp(op, "attention_backward");
        const char *id = json_string_value(json_object_get(c, "id"));
        json_t *in = json_object_get(c, "inputs"), *at = json_object_get(c, "attrs");
        rn_array x = load(get_path(in, "x")), w = load(get_path(in, "in_proj_weight")),
                 b = load(get_path(in, "in_proj_bias")), ow = load(get_path(in, "out_proj.weight")),
                 ob = load(get_path(in, "out_proj.bias")), kpm = {0}, am = {0}, dy = {0};
        if (get_path(in, "key_padding_mask"))
            kpm = load(get_path(in, "key_padding_mask"));
        if (get_path(in, "attn_dropout.mask"))
            am = load(get_path(in, "attn_dropout.mask"));
        if (bwd)
            dy = load(get_path(in, "dy"));
        size_t d = x.shape[x.ndim - 1], T = x.shape[x.ndim - 2], B = x.ndim == 3 ? x.shape[0] : 1;
        rn_dtype indt = RN_F32;
        const char *ids = json_string_value(json_object_get(c, "input_dtype"));
        double p = 0.0;
        if (json_object_get(at, "p"))
            cr_assert_eq(rn_parse_eps(json_string_value(json_object_get(at, "p")),
                                      !strcmp(ids, "f64") ? RN_F64 : !strcmp(ids, "f16") ? RN_F16
                                      : !strcmp(ids, "bf16") ? RN_BF16 : RN_F32, &p), 0);
        (void)indt;
        attn_args A = {w.data, b.data, ow.data, ob.data, kpm.data, am.data, p, B, T, d,
                       (size_t)json_integer_value(json_object_get(at, "heads")),
                       (int)json_integer_value(json_object_get(at, "causal"))};
        size_t sz[5] = {x.count, 3 * d * d, 3 * d, d * d, d};
        double *got[5], *bd[5];
        for (int k = 0; k < 5; k++)
            got[k] = malloc(sz[k] * sizeof(double)), bd[k] = malloc(sz[k] * sizeof(double));
        int f32ok = strcmp(ids, "f64") != 0;
        json_t *exp64 = json_object_get(json_object_get(c, "expected"), "f64");
        for (int pp = 0; pp < 1 + f32ok; pp++) {
            rn_dtype cd = pp ? RN_F32 : RN_F64;
            run_kernel(pp, bwd, &A, x.data, dy.data, got);
            if (bwd)
                cr_assert_eq(attention_backward_bound(bd[0], bd[1], bd[2], bd[3], bd[4], x.data, dy.data, &A,
                                                      cd, cd), 0);
            else
                cr_assert_eq(attention_forward_bound(bd[0], x.data, &A, cd, cd), 0);
            for (int k = 0; k < (bwd ? 5 : 1); k++) {
                const char *name = bwd ? OUT[k] : "y";
                if (!get_path(exp64, name))
                    continue; /* no_weight_grads */
                rn_array want = load(get_path(exp64, name));
                double wr = compare(id, name, got[k], want.data, bd[k], want.count);
                if (wr > worst[pp])
                    worst[pp] = wr;
                rn_array_free(&want);
            }
        }
        for (int k = 0; k < 5; k++)
            free(got[k]), free(bd[k]);
        rn_array_free(&x), rn_array_free(&w), rn_array_free(&b), rn_array_free(&ow), rn_array_free(&ob);
        rn_array_free(&kpm), rn_array_free(&am), rn_array_free(&dy);
        ncases++;
    }
    json_decref(m);
    cr_assert(ncases >= 10, "only %zu attention cases in the manifest", ncases);
    fprintf(stderr, "attention kernels on %zu golden cases: worst err/bound f64 %.3g, f32 %.3g\n",
            ncases, worst[0], worst[1]);
}

/* ---------------------------------------------------------------- twin vs finite differences */

static double lcg(unsigned *s)
{
    *s = *s * 1103515245u + 12345u;
    return (double)((*s >> 8) & 0xffff) / 65536.0 * 2.0 - 1.0;
}

/* L = Σ dy·y at 512 bits (a ball: rounding it to a double would swamp the difference). */
static void loss(arb_t s, arb_srcptr x, const double *dy, const attn_args *A, slong prec)
{
    size_t n = A->batch * A->seq * A->d;
    arb_ptr y = _arb_vec_init((slong)n);
    cr_assert_eq(attention_arb_forward(y, x, A, prec), 0);
    arb_t t;
    arb_init(t);
    arb_zero(s);
    for (size_t i = 0; i < n; i++) {
        arb_set_d(t, dy[i]);
        arb_addmul(s, y + i, t, prec);
    }
    arb_clear(t);
    _arb_vec_clear(y, (slong)n);
}

Test(attention, twin_backward_matches_finite_differences, .timeout = 300)
{
    enum { B = 2, T = 4, D = 8, H = 2 };
    const slong prec = 512;
    const double h = 0x1p-24; /* exact perturbation of every (f32-valued) input */
    unsigned s = 7;
    double x[B * T * D], dy[B * T * D], w[3 * D * D], b[3 * D], ow[D * D], ob[D], am[B * H * T * T],
        kpm[B * T] = {0};
    for (int i = 0; i < B * T * D; i++)
        x[i] = (float)lcg(&s), dy[i] = (float)lcg(&s);
    for (int i = 0; i < 3 * D * D; i++)
        w[i] = (float)(0.6 * lcg(&s));
    for (int i = 0; i < 3 * D; i++)
        b[i] = (float)(0.2 * lcg(&s));
    for (int i = 0; i < D * D; i++)
        ow[i] = (float)(0.4 * lcg(&s));
    for (int i = 0; i < D; i++)
        ob[i] = (float)(0.2 * lcg(&s));
    for (int i = 0; i < B * H * T * T; i++)
        am[i] = lcg(&s) > -0.6 ? 1.0 : 0.0;
    kpm[B * T - 1] = 1.0;
    for (int variant = 0; variant < 2; variant++) {
        attn_args A = {w, b, ow, ob, variant ? kpm : NULL, variant ? am : NULL, 0.25, B, T, D, H, variant};
        size_t n = B * T * D;
        arb_ptr xb = _arb_vec_init((slong)n), dyb = _arb_vec_init((slong)n), g[5];
        size_t sz[5] = {n, 3 * D * D, 3 * D, D * D, D};
        for (int k = 0; k < 5; k++)
            g[k] = _arb_vec_init((slong)sz[k]);
        for (size_t i = 0; i < n; i++)
            arb_set_d(xb + i, x[i]), arb_set_d(dyb + i, dy[i]);
        cr_assert_eq(attention_arb_backward(g[0], g[1], g[2], g[3], g[4], xb, dyb, &A, prec), 0);
        double *par[5] = {NULL, w, b, ow, ob};
        int checked = 0;
        for (int k = 0; k < 5; k++)
            for (size_t e = 0; e < sz[k]; e += (k == 1 ? 13 : k == 3 ? 5 : k == 0 ? 3 : 1)) {
                arb_t lp, lm;
                arb_init(lp), arb_init(lm);
                if (k == 0) {
                    arb_set_d(xb + e, x[e] + h);
                    loss(lp, xb, dy, &A, prec);
                    arb_set_d(xb + e, x[e] - h);
                    loss(lm, xb, dy, &A, prec);
                    arb_set_d(xb + e, x[e]);
                } else {
                    double v = par[k][e];
                    par[k][e] = v + h;
                    loss(lp, xb, dy, &A, prec);
                    par[k][e] = v - h;
                    loss(lm, xb, dy, &A, prec);
                    par[k][e] = v;
                }
                arb_sub(lp, lp, lm, prec);
                arb_mul_2exp_si(lp, lp, 23); /* / (2h) */
                double fd = arf_get_d(arb_midref(lp), ARF_RND_NEAR);
                double an = arf_get_d(arb_midref(g[k] + e), ARF_RND_NEAR);
                arb_clear(lp), arb_clear(lm);
                /* central differences: error O(h²·|L'''|) ~ 1e-13 here */
                cr_assert(fabs(fd - an) <= 1e-10 * (1.0 + fabs(an)),
                          "variant %d group %d elem %zu: FD %.15g vs twin %.15g", variant, k, e, fd, an);
                checked++;
            }
        /* the key bias's gradient is exactly 0 */
        for (int c = D; c < 2 * D; c++)
            cr_assert(arb_is_zero(g[2] + c), "d.in_proj_bias[%d] is not an exact 0", c);
        cr_assert(checked >= 80, "%d elements checked", checked);
        for (int k = 0; k < 5; k++)
            _arb_vec_clear(g[k], (slong)sz[k]);
        _arb_vec_clear(xb, (slong)n), _arb_vec_clear(dyb, (slong)n);
    }
    flint_cleanup();
}

Test(attention, twin_exact_structure)
{
    /* one token: P = 1 exactly, so dq = dk = 0 exactly: the q and k rows of d.in_proj_weight and
       d.in_proj_bias are +0; and every output certifies in every format */
    enum { D = 4 };
    double x[D] = {0.5, -1.25, 2.0, 0.375}, dy[D] = {1.0, -0.5, 0.25, 3.0}, w[3 * D * D], b[3 * D],
           ow[D * D], ob[D];
    unsigned s = 3;
    for (int i = 0; i < 3 * D * D; i++)
        w[i] = (float)lcg(&s);
    for (int i = 0; i < 3 * D; i++)
        b[i] = (float)lcg(&s);
    for (int i = 0; i < D * D; i++)
        ow[i] = (float)lcg(&s);
    for (int i = 0; i < D; i++)
        ob[i] = (float)lcg(&s);
    attn_args A = {w, b, ow, ob, NULL, NULL, 0.0, 1, 1, D, 1, 0};
    double dx[D], dw[3 * D * D], db[3 * D], dow[D * D], dob[D];
    for (int t = 0; t < RN_NDTYPES; t++) {
        cr_assert_eq(attention_backward_mpfr(dx, dw, db, dow, dob, x, dy, &A, (rn_dtype)t), RN_TWIN_OK);
        for (int c = 0; c < 2 * D; c++) {
            cr_assert(db[c] == 0.0 && !signbit(db[c]), "dtype %d d.in_proj_bias[%d] = %a", t, c, db[c]);
            for (int k = 0; k < D; k++)
                cr_assert(dw[c * D + k] == 0.0, "d.in_proj_weight[%d, %d] = %a", c, k, dw[c * D + k]);
        }
    }
    /* a fully masked query: NaN (PyTorch's 0/0) */
    double kpm[1] = {1.0}, y[D];
    A.kpm = kpm;
    cr_assert_eq(attention_forward_mpfr(y, x, &A, RN_F32), RN_TWIN_OK);
    for (int i = 0; i < D; i++)
        cr_assert(isnan(y[i]));
}

/* ---------------------------------------------------------------- CLI */

TestSuite(attention_cli, .init = setup, .fini = teardown);

Test(attention_cli, bad_inputs_exit_2_and_scaled_by_dh_fails)
{
    enum { T = 20, D = 8, H = 2 }; /* T > 16: the CLI must not split the bound into row blocks */
    double x[T * D], w[3 * D * D], b[3 * D], ow[D * D], ob[D], m[H * T * T], kpm[T] = {0};
    kpm[2] = 1.0;
    unsigned s = 11;
    for (int i = 0; i < T * D; i++)
        x[i] = (float)lcg(&s);
    for (int i = 0; i < 3 * D * D; i++)
        w[i] = (float)lcg(&s);
    for (int i = 0; i < 3 * D; i++)
        b[i] = (float)(0.1 * lcg(&s));
    for (int i = 0; i < D * D; i++)
        ow[i] = (float)(0.4 * lcg(&s));
    for (int i = 0; i < D; i++)
        ob[i] = (float)(0.1 * lcg(&s));
    for (int i = 0; i < H * T * T; i++)
        m[i] = 1.0;
    size_t sx[2] = {T, D}, sw[2] = {3 * D, D}, sb[1] = {3 * D}, so[2] = {D, D}, sob[1] = {D},
           sm[3] = {H, T, T}, sk[1] = {T}, sm_bad[3] = {H, T, T - 1};
    put_npy("x.npy", RN_F32, 2, sx, x);
    put_npy("w.npy", RN_F32, 2, sw, w);
    put_npy("b.npy", RN_F32, 1, sb, b);
    put_npy("ow.npy", RN_F32, 2, so, ow);
    put_npy("ob.npy", RN_F32, 1, sob, ob);
    put_npy("k.npy", RN_F32, 1, sk, kpm);
    put_npy("mbad.npy", RN_F32, 3, sm_bad, m);
    m[3] = 2.0;
    put_npy("m2.npy", RN_F32, 3, sm, m);
    char ins[1024];
    snprintf(ins, sizeof ins, "--in x=%s --in in_proj_weight=%s --in in_proj_bias=%s --in "
             "out_proj.weight=%s --in out_proj.bias=%s --in key_padding_mask=%s",
             P("x.npy"), P("w.npy"), P("b.npy"), P("ow.npy"), P("ob.npy"), P("k.npy"));
    cr_assert_eq(run("eval attention %s --out %s", ins, P("o")), 2, "%s", err_text);
    cr_assert(strstr(err_text, "heads"), "%s", err_text);
    cr_assert_eq(run("eval attention %s --in attn_dropout.mask=%s --attr heads=2 --attr p=0.1 --out %s",
                     ins, P("mbad.npy"), P("o")), 2);
    cr_assert(strstr(err_text, "mbad.npy"), "%s", err_text);
    cr_assert_eq(run("eval attention %s --in attn_dropout.mask=%s --attr heads=2 --attr p=0.1 --out %s",
                     ins, P("m2.npy"), P("o")), 2);
    cr_assert(strstr(err_text, "m2.npy"), "%s", err_text);
    /* the f32 kernel passes `check`; the same kernel with the scores scaled by 1/dh (q·kᵀ/dh: the
       q columns of in_proj_weight and in_proj_bias divided by sqrt(dh) = 2, exact) fails */
    for (int bug = 0; bug < 2; bug++) {
        double wk[3 * D * D], bk[3 * D], y[T * D];
        memcpy(wk, w, sizeof w), memcpy(bk, b, sizeof b);
        if (bug) {
            for (int i = 0; i < D * D; i++)
                wk[i] /= 2.0;
            for (int i = 0; i < D; i++)
                bk[i] /= 2.0;
        }
        attn_args A = {wk, bk, ow, ob, kpm, NULL, 0.0, 1, T, D, H, 1};
        double *o[5] = {y, NULL, NULL, NULL, NULL};
        run_kernel(1, 0, &A, x, NULL, o);
        put_npy("y.npy", RN_F32, 2, sx, y);
        int rc = run("check attention %s --attr heads=2 --attr causal=1 --actual y=%s --dtype f32", ins,
                     P("y.npy"));
        cr_assert_eq(rc, bug ? 1 : 0, "bug %d: %s%s", bug, out_text, err_text);
    }
}
