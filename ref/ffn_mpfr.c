/* Certified twin of ref/ffn.c (contract and method: ref/ffn_mpfr.h).
 *
 * The matrix products are ballmat_mul (ref/arb_matmul.h: Arb's block algorithm) on views of the
 * callers' arrays (exact float inputs make them exact integer products, rounded once to prec);
 * the activations are Arb's rigorous erf, tanh, exp.
 * Shapes (row-major): X [rows, d], W1 [ff, d], Z = H = DZ [rows, ff], W2 [d, ff], Y = DY [rows, d]. */
#include "ffn_mpfr.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <arb_hypgeom.h>
#include <arb_mat.h>

#include "arb_matmul.h"
#include "arb_round.h"
#include "exact_mpfr.h"

/* ---------------------------------------------------------------- activations */

typedef struct {
    arb_t c1, c2, c3, k; /* 1/√2, √(2/π), 1/√(2π), 0.044715 (exact reals, enclosed at prec) */
} act_consts;

static void consts_init(act_consts *C, slong prec)
{
    arb_init(C->c1), arb_init(C->c2), arb_init(C->c3), arb_init(C->k);
    arb_set_ui(C->c1, 2);
    arb_rsqrt(C->c1, C->c1, prec);              /* 1/√2 */
    arb_const_pi(C->c2, prec);
    arb_mul_2exp_si(C->c3, C->c2, 1);           /* 2π */
    arb_rsqrt(C->c3, C->c3, prec);              /* 1/√(2π) */
    arb_mul_2exp_si(C->c2, C->c3, 1);           /* 2/√(2π) = √(2/π) */
    arb_set_ui(C->k, 44715);
    arb_div_ui(C->k, C->k, 1000000, prec);      /* 0.044715 */
}

static void consts_clear(act_consts *C)
{
    arb_clear(C->c1), arb_clear(C->c2), arb_clear(C->c3), arb_clear(C->k);
}

/* a = act(z) and, if da != NULL, da = act'(z). */
static void act_eval(arb_t a, arb_t da, const arb_t z, rn_activation act, const act_consts *C,
                     slong prec)
{
    if (arb_is_zero(z)) { /* exact: relu(0) = gelu(0) = 0; relu'(0) = 0, gelu'(0) = 1/2 */
        arb_zero(a);
        if (da) {
            arb_zero(da);
            if (act != RN_ACT_RELU)
                arb_set_d(da, 0.5);
        }
        return;
    }
    if (act == RN_ACT_RELU) {
        if (arb_is_positive(z)) {
            arb_set(a, z);
            if (da)
                arb_one(da);
        } else if (arb_is_nonpositive(z)) {
            arb_zero(a);
            if (da)
                arb_zero(da);
        } else { /* the ball straddles 0 (inexact input rows only): relu in [0, ub], relu' in [0, 1] */
            arf_t lo, hi;
            arf_init(lo), arf_init(hi);
            arb_get_ubound_arf(hi, z, prec);
            arb_set_interval_arf(a, lo, hi, prec);
            if (da) {
                arf_one(hi);
                arb_set_interval_arf(da, lo, hi, prec);
            }
            arf_clear(lo), arf_clear(hi);
        }
        return;
    }
    arb_t t, u, e;
    arb_init(t), arb_init(u), arb_init(e);
    if (act == RN_ACT_GELU) {
        arb_mul(t, z, C->c1, prec);
        arb_hypgeom_erf(e, t, prec);
        arb_add_ui(e, e, 1, prec);              /* e = 1 + erf(z/√2) */
        if (da) {                               /* da = e/2 + z·exp(-z²/2)/√(2π) */
            arb_sqr(t, z, prec);
            arb_mul_2exp_si(t, t, -1);
            arb_neg(t, t);
            arb_exp(t, t, prec);
            arb_mul(t, t, z, prec);
            arb_mul(t, t, C->c3, prec);
            arb_mul_2exp_si(u, e, -1);
            arb_add(da, u, t, prec);
        }
        arb_mul(a, z, e, prec);
        arb_mul_2exp_si(a, a, -1);              /* a = z·e/2 */
    } else {
        arb_sqr(u, z, prec);                    /* u = z² */
        arb_mul(t, u, C->k, prec);
        arb_add_ui(t, t, 1, prec);
        arb_mul(t, t, z, prec);                 /* z + K·z³ = z·(1 + K·z²) */
        arb_mul(t, t, C->c2, prec);
        arb_tanh(e, t, prec);                   /* e = tanh(√(2/π)(z + K z³)) */
        if (da) {                               /* da = (1+e)/2 + z/2·(1 - e²)·√(2/π)·(1 + 3K z²) */
            arb_mul(t, u, C->k, prec);
            arb_mul_ui(t, t, 3, prec);
            arb_add_ui(t, t, 1, prec);
            arb_mul(t, t, C->c2, prec);
            arb_mul(t, t, z, prec);
            arb_mul_2exp_si(t, t, -1);
            arb_sqr(u, e, prec);
            arb_sub_ui(u, u, 1, prec);
            arb_neg(u, u);
            arb_mul(t, t, u, prec);
            arb_add_ui(u, e, 1, prec);
            arb_mul_2exp_si(u, u, -1);
            arb_add(da, u, t, prec);
        }
        arb_add_ui(e, e, 1, prec);
        arb_mul(a, z, e, prec);
        arb_mul_2exp_si(a, a, -1);
    }
    arb_clear(t), arb_clear(u), arb_clear(e);
}

/* ---------------------------------------------------------------- the forward half */

/* What the backward needs of the forward: Z (after exact-zero repair), H = act(Z)·mask·s, DA = act'(Z).
   (ffn_mpfr.h's opaque ffn_fwd: the block keeps it from its forward for its backward.) */
struct ffn_fwd {
    arb_mat_t Z, H, DA;
    arb_t s;   /* 1/(1 - p) */
    int have_da;
};
typedef struct ffn_fwd fwd_state;

static int row_is_exact(arb_srcptr x, size_t n)
{
    for (size_t k = 0; k < n; k++)
        if (!arb_is_exact(x + k))
            return 0;
    return 1;
}

/* z[r, j] recomputed exactly (x's row r exact): b1[j] + Σ_k x[r, k]·w1[j, k] at ARF_PREC_EXACT. */
static void z_exact(arb_t z, arb_srcptr xr, const ffn_args *F, size_t j)
{
    arb_t w;
    arb_init(w);
    if (F->b1)
        arb_set_d(z, F->b1[j]);
    else
        arb_zero(z);
    for (size_t k = 0; k < F->d; k++) {
        arb_set_d(w, F->w1[j * F->d + k]);
        arb_addmul(z, xr + k, w, ARF_PREC_EXACT);
    }
    arb_clear(w);
}

static void fwd_run(fwd_state *S, arb_srcptr x, const ffn_args *F, slong prec, int want_da)
{
    slong R = (slong)F->rows, D = (slong)F->d, FF = (slong)F->ff;
    arb_mat_t X, W1T;
    ballmat_view(X, x, R, D);
    ballmat_from_d(W1T, F->w1, FF, D, 1);       /* [d, ff] */
    arb_mat_init(S->Z, R, FF);
    ballmat_mul(S->Z, X, W1T, prec);            /* z = x·w1ᵀ */
    arb_mat_clear(W1T);
    ballmat_view_clear(X);
    arb_t t;
    arb_init(t);
    for (slong r = 0; r < R; r++) {
        int exact_row = -1; /* unknown until a ball straddles 0 */
        for (slong j = 0; j < FF; j++) {
            arb_ptr z = arb_mat_entry(S->Z, r, j);
            if (F->b1) {
                arb_set_d(t, F->b1[j]);
                arb_add(z, z, t, prec);
            }
            if (!arb_is_exact(z) && arb_contains_zero(z)) {
                if (exact_row < 0)
                    exact_row = row_is_exact(x + r * D, F->d);
                if (exact_row)
                    z_exact(z, x + r * D, F, (size_t)j);
            }
        }
    }
    arb_init(S->s);
    arb_one(S->s);
    if (F->mask) {
        arb_set_d(t, F->p);
        arb_sub_ui(t, t, 1, prec);
        arb_neg(t, t);                          /* 1 - p: exact */
        arb_inv(S->s, t, prec);
    }
    arb_clear(t);
    act_consts C;
    consts_init(&C, prec);
    arb_mat_init(S->H, R, FF);
    S->have_da = want_da;
    if (want_da)
        arb_mat_init(S->DA, R, FF);
    for (slong r = 0; r < R; r++)
        for (slong j = 0; j < FF; j++) {
            arb_ptr h = arb_mat_entry(S->H, r, j);
            act_eval(h, want_da ? arb_mat_entry(S->DA, r, j) : NULL, arb_mat_entry(S->Z, r, j),
                     F->act, &C, prec);
            if (F->mask) {
                if (F->mask[r * FF + j] == 0.0)
                    arb_zero(h);
                else
                    arb_mul(h, h, S->s, prec);
            }
        }
    consts_clear(&C);
}

static void fwd_clear(fwd_state *S)
{
    arb_mat_clear(S->Z);
    arb_mat_clear(S->H);
    if (S->have_da)
        arb_mat_clear(S->DA);
    arb_clear(S->s);
}

/* out[r, i] (+)= bias[i] over the rows. */
static void add_bias(arb_ptr out, const double *b, slong R, slong n, slong prec)
{
    if (!b)
        return;
    arb_t t;
    arb_init(t);
    for (slong r = 0; r < R; r++)
        for (slong i = 0; i < n; i++) {
            arb_set_d(t, b[i]);
            arb_add(out + r * n + i, out + r * n + i, t, prec);
        }
    arb_clear(t);
}

/* col[i] = Σ_r m[r, i]. */
static void col_sums(arb_ptr col, arb_srcptr m, slong R, slong n, slong prec)
{
    for (slong i = 0; i < n; i++) {
        arb_zero(col + i);
        for (slong r = 0; r < R; r++)
            arb_add(col + i, col + i, m + r * n + i, prec);
    }
}

/* y [rows, d] = H·w2ᵀ + b2: the forward's output from its state. */
static void fwd_output(arb_ptr y, const fwd_state *S, const ffn_args *F, slong prec)
{
    slong R = (slong)F->rows, D = (slong)F->d, FF = (slong)F->ff;
    arb_mat_t Y, W2T;
    ballmat_view(Y, y, R, D);
    ballmat_from_d(W2T, F->w2, D, FF, 1);       /* [ff, d] */
    ballmat_mul(Y, S->H, W2T, prec);            /* y = h·w2ᵀ */
    add_bias(y, F->b2, R, D, prec);
    arb_mat_clear(W2T);
    ballmat_view_clear(Y);
}

int ffn_arb_forward(arb_ptr y, arb_srcptr x, const ffn_args *F, slong prec)
{
    if (F->rows == 0)
        return 0;
    fwd_state S;
    fwd_run(&S, x, F, prec, 0);
    fwd_output(y, &S, F, prec);
    fwd_clear(&S);
    return 0;
}

ffn_fwd *ffn_arb_forward_keep(arb_ptr y, arb_srcptr x, const ffn_args *F, slong prec)
{
    fwd_state *S = malloc(sizeof *S);
    if (!S)
        return NULL;
    S->have_da = -1; /* no rows: nothing computed, nothing to clear */
    if (F->rows == 0)
        return S;
    fwd_run(S, x, F, prec, 1);
    fwd_output(y, S, F, prec);
    return S;
}

void ffn_fwd_free(ffn_fwd *S)
{
    if (S && S->have_da >= 0)
        fwd_clear(S);
    free(S);
}

/* No rows: every gradient is an empty sum. */
static void zero_grads(arb_ptr dw1, arb_ptr db1, arb_ptr dw2, arb_ptr db2, const ffn_args *F)
{
    slong D = (slong)F->d, FF = (slong)F->ff;
    if (dw1)
        _arb_vec_zero(dw1, FF * D);
    if (db1)
        _arb_vec_zero(db1, FF);
    if (dw2)
        _arb_vec_zero(dw2, D * FF);
    if (db2)
        _arb_vec_zero(db2, D);
}

/* The backward from the forward's state S (with DA): shapes as ffn_arb_backward's. */
static void backward_from(const fwd_state *S, arb_ptr dx, arb_ptr dw1, arb_ptr db1, arb_ptr dw2,
                          arb_ptr db2, arb_srcptr x, arb_srcptr dy, const ffn_args *F, slong prec)
{
    slong R = (slong)F->rows, D = (slong)F->d, FF = (slong)F->ff;
    arb_mat_t DY, W, DZ, V, T;
    ballmat_view(DY, dy, R, D);
    /* second layer: dh = dy·w2 [rows, ff]; dw2 = dyᵀ·h [d, ff]; db2 = Σ dy */
    ballmat_from_d(W, F->w2, D, FF, 0);
    arb_mat_init(DZ, R, FF);
    ballmat_mul(DZ, DY, W, prec);
    arb_mat_clear(W);
    if (dw2) {
        arb_mat_init(T, D, R);
        arb_mat_transpose(T, DY);
        ballmat_view(V, dw2, D, FF);
        ballmat_mul(V, T, S->H, prec);
        ballmat_view_clear(V);
        arb_mat_clear(T);
    }
    if (db2)
        col_sums(db2, dy, R, D, prec);
    ballmat_view_clear(DY);
    /* dropout and activation: dz = act'(z)·dh·mask·s */
    for (slong r = 0; r < R; r++)
        for (slong j = 0; j < FF; j++) {
            arb_ptr g = arb_mat_entry(DZ, r, j);
            if (F->mask) {
                if (F->mask[r * FF + j] == 0.0)
                    arb_zero(g);
                else
                    arb_mul(g, g, S->s, prec);
            }
            arb_mul(g, g, arb_mat_entry(S->DA, r, j), prec);
        }
    /* first layer: dx = dz·w1 [rows, d]; dw1 = dzᵀ·x [ff, d]; db1 = Σ dz */
    ballmat_from_d(W, F->w1, FF, D, 0);
    ballmat_view(V, dx, R, D);
    ballmat_mul(V, DZ, W, prec);
    ballmat_view_clear(V);
    arb_mat_clear(W);
    if (dw1) {
        arb_mat_t X;
        ballmat_view(X, x, R, D);
        arb_mat_init(T, FF, R);
        arb_mat_transpose(T, DZ);
        ballmat_view(V, dw1, FF, D);
        ballmat_mul(V, T, X, prec);
        ballmat_view_clear(V);
        arb_mat_clear(T);
        ballmat_view_clear(X);
    }
    if (db1)
        col_sums(db1, DZ->entries, R, FF, prec);
    arb_mat_clear(DZ);
}

int ffn_arb_backward(arb_ptr dx, arb_ptr dw1, arb_ptr db1, arb_ptr dw2, arb_ptr db2,
                     arb_srcptr x, arb_srcptr dy, const ffn_args *F, slong prec)
{
    if (F->rows == 0) {
        zero_grads(dw1, db1, dw2, db2, F);
        return 0;
    }
    fwd_state S;
    fwd_run(&S, x, F, prec, 1);
    backward_from(&S, dx, dw1, db1, dw2, db2, x, dy, F, prec);
    fwd_clear(&S);
    return 0;
}

int ffn_arb_backward_from(const ffn_fwd *S, arb_ptr dx, arb_ptr dw1, arb_ptr db1, arb_ptr dw2,
                          arb_ptr db2, arb_srcptr x, arb_srcptr dy, const ffn_args *F, slong prec)
{
    if (F->rows == 0) {
        zero_grads(dw1, db1, dw2, db2, F);
        return 0;
    }
    backward_from(S, dx, dw1, db1, dw2, db2, x, dy, F, prec);
    return 0;
}

/* ---------------------------------------------------------------- rounded entry points */

/* Certify an Arb ball: both ends (outward to MPFR) round to the same value of out. */
static int certify_ball(double *res, const arb_t v, slong prec, rn_dtype out)
{
    if (!arb_is_finite(v))
        return 0;
    return arb_round_once(res, v, prec, out);
}

static int all_finite(const double *v, size_t n)
{
    for (size_t i = 0; v && i < n; i++)
        if (!isfinite(v[i]))
            return 0;
    return 1;
}

static int inputs_finite(const double *x, const double *dy, const ffn_args *F)
{
    size_t R = F->rows, D = F->d, FF = F->ff;
    return all_finite(x, R * D) && all_finite(dy, R * D) && all_finite(F->w1, FF * D) &&
           all_finite(F->b1, FF) && all_finite(F->w2, D * FF) && all_finite(F->b2, D);
}

/* One output array of the rounded op: where its balls are, where its doubles go. */
typedef struct {
    double *o;
    arb_ptr b;
    size_t n;
} outbuf;

/* First working precision of the Ziv loop.  Not P0 = 64: at GPT-2 width (64, 768, 3072, gelu_tanh)
   a 64-bit pass certifies only 2/3 of the forward's outputs and 86% of the backward's (the 768- and
   3072-term products and the activations lose the rest), so it costs a whole extra pass; a 128-bit
   pass certifies all of them, as the block twin's first pass (BLOCK_PREC0 = 128) does. */
#define FFN_PREC0 128

/* Ziv over the whole op: run(prec) fills every outbuf's balls; certify what is not done yet. */
static int ziv(outbuf *ob, int nb, int (*run)(void *, slong), void *ctx, rn_dtype out)
{
    size_t total = 0;
    for (int k = 0; k < nb; k++)
        total += ob[k].n;
    char *done = calloc(total ? total : 1, 1);
    if (!done)
        return RN_TWIN_NOMEM;
    int rc = RN_TWIN_UNCERTIFIED;
    for (slong prec = FFN_PREC0; prec <= ((slong)P0 << (NLEV - 1)); prec *= 2) {
        if (run(ctx, prec) != 0) {
            rc = RN_TWIN_NOMEM;
            break;
        }
        int all = 1;
        size_t at = 0;
        for (int k = 0; k < nb; k++)
            for (size_t i = 0; i < ob[k].n; i++, at++)
                if (!done[at]) {
                    if (certify_ball(&ob[k].o[i], ob[k].b + i, prec, out))
                        done[at] = 1;
                    else
                        all = 0;
                }
        if (all) {
            rc = RN_TWIN_OK;
            break;
        }
    }
    free(done);
    return rc;
}

typedef struct {
    const ffn_args *F;
    arb_ptr x, dy;
    outbuf *ob;
} zctx;

static int run_fwd(void *c, slong prec)
{
    zctx *Z = c;
    return ffn_arb_forward(Z->ob[0].b, Z->x, Z->F, prec);
}

static int run_bwd(void *c, slong prec)
{
    zctx *Z = c;
    outbuf *o = Z->ob;
    return ffn_arb_backward(o[0].b, o[1].b, o[2].n ? o[2].b : NULL, o[3].b, o[4].n ? o[4].b : NULL,
                            Z->x, Z->dy, Z->F, prec);
}

/* A vector length for _arb_vec_init (never 0). */
static slong nz(size_t n) { return (slong)(n ? n : 1); }

static arb_ptr vec_from_d(const double *v, size_t n)
{
    arb_ptr b = _arb_vec_init(nz(n));
    for (size_t i = 0; i < n; i++)
        arb_set_d(b + i, v[i]);
    return b;
}

static void fill_nan(double *o, size_t n)
{
    for (size_t i = 0; o && i < n; i++)
        o[i] = NAN;
}

int ffn_forward_mpfr(double *y, const double *x, const ffn_args *F, rn_dtype out)
{
    size_t ny = F->rows * F->d;
    if (!inputs_finite(x, NULL, F)) {
        fill_nan(y, ny);
        return RN_TWIN_OK;
    }
    arb_ptr xb = vec_from_d(x, F->rows * F->d);
    outbuf ob[1] = {{y, _arb_vec_init(nz(ny)), ny}};
    zctx Z = {F, xb, NULL, ob};
    int rc = ziv(ob, 1, run_fwd, &Z, out);
    _arb_vec_clear(ob[0].b, nz(ny));
    _arb_vec_clear(xb, nz(F->rows * F->d));
    flint_cleanup();
    return rc;
}

int ffn_backward_mpfr(double *dx, double *dw1, double *db1, double *dw2, double *db2,
                      const double *x, const double *dy, const ffn_args *F, rn_dtype out)
{
    size_t R = F->rows, D = F->d, FF = F->ff;
    size_t n[5] = {R * D, FF * D, db1 ? FF : 0, D * FF, db2 ? D : 0};
    double *o[5] = {dx, dw1, db1, dw2, db2};
    if (!inputs_finite(x, dy, F)) {
        for (int k = 0; k < 5; k++)
            fill_nan(o[k], n[k]);
        return RN_TWIN_OK;
    }
    outbuf ob[5];
    for (int k = 0; k < 5; k++)
        ob[k] = (outbuf){o[k], _arb_vec_init(nz(n[k])), n[k]};
    arb_ptr xb = vec_from_d(x, R * D), dyb = vec_from_d(dy, R * D);
    zctx Z = {F, xb, dyb, ob};
    int rc = ziv(ob, 5, run_bwd, &Z, out);
    for (int k = 0; k < 5; k++)
        _arb_vec_clear(ob[k].b, nz(n[k]));
    _arb_vec_clear(xb, nz(R * D));
    _arb_vec_clear(dyb, nz(R * D));
    flint_cleanup();
    return rc;
}
