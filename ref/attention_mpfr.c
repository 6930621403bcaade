/* Certified twin of ref/attention.c (contract and method: ref/attention_mpfr.h).
 *
 * Ball evaluation: the linear layers (in_proj, out_proj and their gradients) are ball matrix
 * products with the exact double parameters (ref/arb_matmul.h); every per-head dot product is one
 * arb_dot (its result encloses the exact sum of the enclosed terms); 1/sqrt(dh), exp and the
 * softmax quotient, and the dropout scale 1/(1 - p) are Arb's enclosures.  Nothing is rounded to a
 * float before the end: the rounded twin certifies every output ball (certify_ball) or raises the
 * precision of the WHOLE computation. */
#include "attention_mpfr.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "arb_matmul.h"
#include "arb_round.h"
#include "exact_mpfr.h"

/* ------------------------------------------------------------------------------------------------
 * Shapes.
 */
typedef struct {
    size_t B, T, d, H, dh, rows;
} dims;

static arb_ptr vec_from_d(const double *a, size_t n)
{
    if (!a)
        return NULL;
    arb_ptr v = _arb_vec_init((slong)n);
    for (size_t i = 0; i < n; i++)
        arb_set_d(v + i, a[i]);
    return v;
}

static void dims_init(dims *D, const attn_args *A)
{
    D->B = A->batch, D->T = A->seq, D->d = A->d, D->H = A->heads;
    D->dh = A->d / A->heads, D->rows = A->batch * A->seq;
}

/* Key j is dead for query i of batch b: causal and j > i, or kpm[b, j] != 0. */
static int dead(const attn_args *A, size_t b, size_t i, size_t j)
{
    return (A->causal && j > i) || (A->kpm && A->kpm[b * A->seq + j] != 0.0);
}

/* ------------------------------------------------------------------------------------------------
 * Forward.
 */
int attn_trace_init(attn_trace *t, const attn_args *A)
{
    size_t rows = A->batch * A->seq, att = A->batch * A->heads * A->seq * A->seq;
    t->qkv = _arb_vec_init((slong)(rows * 3 * A->d));
    t->P = _arb_vec_init((slong)att);
    t->A = _arb_vec_init((slong)att);
    t->S = _arb_vec_init((slong)att);
    t->ctx = _arb_vec_init((slong)(rows * A->d));
    t->y = _arb_vec_init((slong)(rows * A->d));
    t->live = calloc(rows ? rows : 1, sizeof *t->live);
    return t->live ? 0 : -1;
}

void attn_trace_clear(attn_trace *t, const attn_args *A)
{
    size_t rows = A->batch * A->seq, att = A->batch * A->heads * A->seq * A->seq;
    _arb_vec_clear(t->qkv, (slong)(rows * 3 * A->d));
    _arb_vec_clear(t->P, (slong)att);
    _arb_vec_clear(t->A, (slong)att);
    _arb_vec_clear(t->S, (slong)att);
    _arb_vec_clear(t->ctx, (slong)(rows * A->d));
    _arb_vec_clear(t->y, (slong)(rows * A->d));
    free(t->live);
}

/* The softmax row of query (b, h, i): P[j] over the live keys.  raw[j] = q·k (unscaled), s[j] the
   scaled score (both balls, [T]).  Exact structure: no live key -> indeterminate; one live key ->
   1; live raw scores exact and all equal -> 1/L. */
static void softmax_row_balls(arb_ptr P, arb_srcptr raw, arb_srcptr s, const attn_args *A, size_t b,
                              size_t i, size_t L, slong prec)
{
    size_t T = A->seq;
    if (L == 0) {
        for (size_t j = 0; j < T; j++)
            arb_indeterminate(P + j);
        return;
    }
    int equal = 1;
    size_t jf = T; /* the first live key */
    for (size_t j = 0; j < T; j++) {
        if (dead(A, b, i, j))
            continue;
        if (jf == T)
            jf = j;
        if (!arb_is_exact(raw + j) || !arb_equal(raw + j, raw + jf))
            equal = 0;
    }
    arb_t sum, m;
    arb_init(sum), arb_init(m);
    if (equal) {
        arb_one(m);
        arb_div_ui(m, m, (ulong)L, prec); /* exact when L is a power of 2 */
    } else {
        /* exp(s_j - c) with c the midpoint of a live score: the same quotient, no huge exponents */
        arb_set_arf(m, arb_midref(s + jf));
        arb_zero(sum);
        for (size_t j = 0; j < T; j++) {
            if (dead(A, b, i, j))
                continue;
            arb_sub(P + j, s + j, m, prec);
            arb_exp(P + j, P + j, prec);
            arb_add(sum, sum, P + j, prec);
        }
    }
    for (size_t j = 0; j < T; j++) {
        if (dead(A, b, i, j))
            arb_zero(P + j);
        else if (equal)
            arb_set(P + j, m);
        else
            arb_div(P + j, P + j, sum, prec);
    }
    arb_clear(sum), arb_clear(m);
}

int attention_arb_trace(attn_trace *t, arb_srcptr x, const attn_args *A, slong prec)
{
    dims D;
    dims_init(&D, A);
    size_t T = D.T, d = D.d, dh = D.dh, d3 = 3 * d;
    arb_ptr raw = _arb_vec_init((slong)T), s = _arb_vec_init((slong)T);
    arb_t sq, scale;
    arb_init(sq), arb_init(scale);
    ballmat_linear(t->qkv, x, A->in_w, A->in_b, (slong)D.rows, (slong)d, (slong)d3, prec);
    arb_sqrt_ui(sq, (ulong)dh, prec);
    arb_one(scale);
    if (A->amask) { /* 1/(1 - p): 1 - p exact (both dyadic) */
        arb_t q;
        arb_init(q);
        arb_set_d(q, A->p);
        arb_sub_ui(q, q, 1, ARF_PREC_EXACT);
        arb_neg(q, q);
        arb_div(scale, scale, q, prec);
        arb_clear(q);
    }
    /* raw scores from the UNSCALED q (for the exact-equality test), then q /= sqrt(dh) */
    for (size_t b = 0; b < D.B; b++)
        for (size_t i = 0; i < T; i++) {
            size_t L = 0;
            for (size_t j = 0; j < T; j++)
                L += !dead(A, b, i, j);
            t->live[b * T + i] = L;
        }
    for (size_t b = 0; b < D.B; b++)
        for (size_t h = 0; h < D.H; h++)
            for (size_t i = 0; i < T; i++) {
                arb_srcptr q = t->qkv + (b * T + i) * d3 + h * dh;
                for (size_t j = 0; j < T; j++) {
                    arb_srcptr k = t->qkv + (b * T + j) * d3 + d + h * dh;
                    arb_dot(raw + j, NULL, 0, q, 1, k, 1, (slong)dh, prec);
                    arb_div(s + j, raw + j, sq, prec); /* = (q/sqrt(dh))·k over the reals */
                }
                size_t row = (b * D.H + h) * T + i;
                _arb_vec_set(t->S + row * T, s, (slong)T);
                softmax_row_balls(t->P + row * T, raw, s, A, b, i, t->live[b * T + i], prec);
                for (size_t j = 0; j < T; j++) {
                    arb_ptr a = t->A + row * T + j;
                    if (!A->amask)
                        arb_set(a, t->P + row * T + j);
                    else if (A->amask[row * T + j] == 0.0)
                        arb_zero(a);
                    else {
                        arb_set(a, t->P + row * T + j);
                        if (A->amask[row * T + j] != 1.0) {
                            arb_t mv;
                            arb_init(mv);
                            arb_set_d(mv, A->amask[row * T + j]);
                            arb_mul(a, a, mv, prec);
                            arb_clear(mv);
                        }
                        arb_mul(a, a, scale, prec);
                    }
                }
            }
    for (size_t r = 0; r < D.rows; r++)
        for (size_t c = 0; c < d; c++)
            arb_div(t->qkv + r * d3 + c, t->qkv + r * d3 + c, sq, prec);
    /* ctx[b, i, h·dh + c] = sum_j A[b, h, i, j]·v[b, j, h·dh + c] */
    for (size_t b = 0; b < D.B; b++)
        for (size_t h = 0; h < D.H; h++)
            for (size_t i = 0; i < T; i++) {
                size_t row = (b * D.H + h) * T + i;
                for (size_t c = 0; c < dh; c++)
                    arb_dot(t->ctx + (b * T + i) * d + h * dh + c, NULL, 0, t->A + row * T, 1,
                            t->qkv + b * T * d3 + 2 * d + h * dh + c, (slong)d3, (slong)T, prec);
            }
    ballmat_linear(t->y, t->ctx, A->out_w, A->out_b, (slong)D.rows, (slong)d, (slong)d, prec);
    arb_clear(sq), arb_clear(scale);
    _arb_vec_clear(raw, (slong)T), _arb_vec_clear(s, (slong)T);
    return 0;
}

int attention_arb_forward(arb_ptr y, arb_srcptr x, const attn_args *A, slong prec)
{
    attn_trace t;
    if (attn_trace_init(&t, A) != 0) {
        attn_trace_clear(&t, A);
        return -1;
    }
    attention_arb_trace(&t, x, A, prec);
    _arb_vec_set(y, t.y, (slong)(A->batch * A->seq * A->d));
    attn_trace_clear(&t, A);
    return 0;
}

/* ------------------------------------------------------------------------------------------------
 * Backward.
 */
int attention_arb_backward(arb_ptr dx, arb_ptr din_w, arb_ptr din_b, arb_ptr dout_w, arb_ptr dout_b,
                           arb_srcptr x, arb_srcptr dy, const attn_args *A, slong prec)
{
    attn_trace t;
    if (attn_trace_init(&t, A) != 0) {
        attn_trace_clear(&t, A);
        return -1;
    }
    attention_arb_trace(&t, x, A, prec);
    int rc = attention_arb_backward_from(&t, dx, din_w, din_b, dout_w, dout_b, x, dy, A, prec);
    attn_trace_clear(&t, A);
    return rc;
}

int attention_arb_backward_from(const attn_trace *tp, arb_ptr dx, arb_ptr din_w, arb_ptr din_b,
                                arb_ptr dout_w, arb_ptr dout_b, arb_srcptr x, arb_srcptr dy,
                                const attn_args *A, slong prec)
{
    const attn_trace t = *tp; /* the forward's balls, read only */
    dims D;
    dims_init(&D, A);
    size_t T = D.T, d = D.d, dh = D.dh, d3 = 3 * d, rows = D.rows, natt = D.B * D.H * T * T;
    arb_ptr dctx = _arb_vec_init((slong)(rows * d)), dqkv = _arb_vec_init((slong)(rows * d3));
    arb_ptr dS = _arb_vec_init((slong)natt), dP = _arb_vec_init((slong)T);
    arb_t g, sq, scale, tmp;
    arb_init(g), arb_init(sq), arb_init(scale), arb_init(tmp);
    arb_sqrt_ui(sq, (ulong)dh, prec);
    /* out_proj: dctx = dy·out_w, d.out_proj.weight = dyᵀ·ctx, d.out_proj.bias = sum_rows dy */
    ballmat_mul_d(dctx, dy, A->out_w, (slong)rows, (slong)d, (slong)d, prec);
    if (dout_w)
        ballmat_tmul(dout_w, dy, t.ctx, (slong)rows, (slong)d, (slong)d, prec);
    if (dout_b)
        for (size_t j = 0; j < d; j++) {
            arb_zero(dout_b + j);
            for (size_t r = 0; r < rows; r++)
                arb_add(dout_b + j, dout_b + j, dy + r * d + j, prec);
        }
    /* the scale of the dropped probabilities: dP = dA·mask/(1 - p) */
    arb_one(scale);
    if (A->amask) {
        arb_set_d(tmp, A->p);
        arb_sub_ui(tmp, tmp, 1, ARF_PREC_EXACT);
        arb_neg(tmp, tmp);
        arb_div(scale, scale, tmp, prec);
    }
    /* per query row: dA = dctx·vᵀ, dP, dS = P ⊙ (dP - dP·P) */
    for (size_t b = 0; b < D.B; b++)
        for (size_t h = 0; h < D.H; h++)
            for (size_t i = 0; i < T; i++) {
                size_t row = (b * D.H + h) * T + i, L = t.live[b * T + i];
                arb_srcptr P = t.P + row * T;
                arb_ptr S = dS + row * T;
                for (size_t j = 0; j < T; j++) {
                    arb_dot(dP + j, NULL, 0, dctx + (b * T + i) * d + h * dh, 1,
                            t.qkv + (b * T + j) * d3 + 2 * d + h * dh, 1, (slong)dh, prec);
                    if (A->amask) {
                        double m = A->amask[row * T + j];
                        if (m == 0.0)
                            arb_zero(dP + j);
                        else {
                            if (m != 1.0) {
                                arb_set_d(tmp, m);
                                arb_mul(dP + j, dP + j, tmp, prec);
                            }
                            arb_mul(dP + j, dP + j, scale, prec);
                        }
                    }
                }
                if (L == 0) {
                    for (size_t j = 0; j < T; j++)
                        arb_indeterminate(S + j);
                    continue;
                }
                if (L == 1) { /* P = 1 at the live key: dS = 1·(dP - dP·1) = 0 exactly */
                    for (size_t j = 0; j < T; j++)
                        arb_zero(S + j);
                    continue;
                }
                arb_dot(g, NULL, 0, dP, 1, P, 1, (slong)T, prec);
                for (size_t j = 0; j < T; j++) {
                    if (dead(A, b, i, j)) {
                        arb_zero(S + j);
                        continue;
                    }
                    arb_sub(S + j, dP + j, g, prec);
                    arb_mul(S + j, S + j, P + j, prec);
                }
            }
    /* dq[i] = sum_j dS[i, j]·k[j] / sqrt(dh); dk[j] = sum_i dS[i, j]·qs[i]; dv[j] = sum_i A[i, j]·dctx[i] */
    for (size_t b = 0; b < D.B; b++)
        for (size_t h = 0; h < D.H; h++) {
            size_t base = (b * D.H + h) * T * T;
            arb_srcptr qb = t.qkv + b * T * d3;
            arb_ptr gb = dqkv + b * T * d3;
            for (size_t i = 0; i < T; i++)
                for (size_t c = 0; c < dh; c++) {
                    arb_ptr dq = gb + i * d3 + h * dh + c;
                    arb_dot(dq, NULL, 0, dS + base + i * T, 1, qb + d + h * dh + c, (slong)d3, (slong)T, prec);
                    arb_div(dq, dq, sq, prec);
                }
            for (size_t j = 0; j < T; j++)
                for (size_t c = 0; c < dh; c++) {
                    arb_dot(gb + j * d3 + d + h * dh + c, NULL, 0, dS + base + j, (slong)T,
                            qb + h * dh + c, (slong)d3, (slong)T, prec);
                    arb_dot(gb + j * d3 + 2 * d + h * dh + c, NULL, 0, t.A + base + j, (slong)T,
                            dctx + b * T * d + h * dh + c, (slong)d, (slong)T, prec);
                }
        }
    /* in_proj: dx = dqkv·in_w, d.in_proj_weight = dqkvᵀ·x, d.in_proj_bias = sum_rows dqkv */
    ballmat_mul_d(dx, dqkv, A->in_w, (slong)rows, (slong)d3, (slong)d, prec);
    if (din_w)
        ballmat_tmul(din_w, dqkv, x, (slong)rows, (slong)d3, (slong)d, prec);
    if (din_b)
        for (size_t c = 0; c < d3; c++) {
            arb_zero(din_b + c);
            for (size_t r = 0; r < rows; r++)
                arb_add(din_b + c, din_b + c, dqkv + r * d3 + c, prec);
            /* The key bias's gradient is exactly 0: sum_j dk[j] = sum_i qs[i]·sum_j dS[i, j] and every
               softmax-backward row sums to 0 (sum_j P_j (dP_j - g) = g - g); a key bias shifts a
               query's scores by a constant.  A ball never shrinks to it: set it (unless NaN). */
            if (c >= d && c < 2 * d && arb_is_finite(din_b + c))
                arb_zero(din_b + c);
            /* Without dropout the value bias's gradient is the dyadic sum_i dctx[i]:
               sum_j dv[j] = sum_i dctx[i]·sum_j P[i, j] and every live softmax row sums to 1.  Through
               the P balls it would never become exact (a rounding tie then defeats Ziv): sum dctx. */
            if (c >= 2 * d && !A->amask && arb_is_finite(din_b + c)) {
                arb_zero(din_b + c);
                for (size_t r = 0; r < rows; r++)
                    arb_add(din_b + c, din_b + c, dctx + r * d + (c - 2 * d), prec);
            }
        }
    arb_clear(g), arb_clear(sq), arb_clear(scale), arb_clear(tmp);
    _arb_vec_clear(dctx, (slong)(rows * d)), _arb_vec_clear(dqkv, (slong)(rows * d3));
    _arb_vec_clear(dS, (slong)natt), _arb_vec_clear(dP, (slong)T);
    return 0;
}

/* ------------------------------------------------------------------------------------------------
 * Rounded twin: Ziv over the whole op.
 */

/* Certify an Arb ball: both ends (outward to MPFR) round to the same value of out (as
   ref/softmax_mpfr.c); a non-finite ball (a fully masked query: 0/0) is NaN. */
static int certify_ball(double *res, const arb_t v, slong prec, rn_dtype out)
{
    if (!arb_is_finite(v)) {
        *res = NAN;
        return 1;
    }
    return arb_round_once(res, v, prec, out);
}

/* outs: ngroups arrays of balls (sizes n[k]); dst[t][k]: the rounded array of group k for format
   out[t] (NULL: not wanted).  Returns 1 when every wanted output of every pending format
   certified; marks done[t]. */
static int certify_all(double *const *const *dst, const rn_dtype *out, int nd, int *done,
                       arb_srcptr const *balls, const size_t *n, int ngroups, slong prec)
{
    int all = 1;
    for (int t = 0; t < nd; t++) {
        if (done[t])
            continue;
        int ok = 1;
        for (int k = 0; k < ngroups && ok; k++) {
            if (!dst[t][k] || !balls[k])
                continue;
            for (size_t e = 0; e < n[k] && ok; e++)
                ok = certify_ball(&dst[t][k][e], balls[k] + e, prec, out[t]);
        }
        done[t] = ok;
        all &= ok;
    }
    return all;
}

static arb_ptr balls_from_d(const double *a, size_t n) { return vec_from_d(a, n); }

/* The last precision of the Ziv loop: 65536 bits, or less where the op's balls (about `balls` of
   them, each prec/8 bytes at that precision) would take more than 2 GiB (a GPT-2-width backward:
   2.5 million balls, 4096 bits).  Past it RN_TWIN_UNCERTIFIED: never a guess. */
static slong max_prec(size_t balls)
{
    slong p = (slong)P0 << (NLEV - 1);
    while (p > P0 && (double)balls * (double)p / 8.0 > 2147483648.0)
        p /= 2;
    return p;
}

int attention_forward_mpfr_multi(double *const *y, const rn_dtype *out, int nd, const double *x,
                                 const attn_args *A)
{
    size_t n = A->batch * A->seq * A->d;
    arb_ptr xb = balls_from_d(x, n), yb = _arb_vec_init((slong)n);
    int done[8] = {0}, rc = RN_TWIN_UNCERTIFIED;
    double *const *dst[8];
    double *row[8][1];
    for (int t = 0; t < nd; t++)
        row[t][0] = y[t], dst[t] = row[t];
    arb_srcptr balls[1] = {yb};
    size_t rows = A->batch * A->seq, natt = A->batch * A->heads * A->seq * A->seq;
    slong pmax = max_prec(6 * rows * A->d + 4 * natt);
    for (slong prec = P0; prec <= pmax; prec *= 2) {
        if (attention_arb_forward(yb, xb, A, prec) != 0) {
            rc = RN_TWIN_NOMEM;
            break;
        }
        if (certify_all(dst, out, nd, done, balls, &n, 1, prec)) {
            rc = RN_TWIN_OK;
            break;
        }
    }
    _arb_vec_clear(xb, (slong)n), _arb_vec_clear(yb, (slong)n);
    flint_cleanup();
    return rc;
}

int attention_backward_mpfr_multi(double *const *g[5], const rn_dtype *out, int nd,
                                  const double *x, const double *dy, const attn_args *A)
{
    size_t d = A->d, nx = A->batch * A->seq * d;
    size_t n[5] = {nx, 3 * d * d, 3 * d, d * d, d};
    arb_ptr xb = balls_from_d(x, nx), dyb = balls_from_d(dy, nx);
    arb_ptr b[5];
    for (int k = 0; k < 5; k++)
        b[k] = _arb_vec_init((slong)n[k]);
    int done[8] = {0}, rc = RN_TWIN_UNCERTIFIED;
    double *const *dst[8];
    double *rbuf[8][5];
    int want[5] = {0};
    for (int t = 0; t < nd; t++) {
        for (int k = 0; k < 5; k++) {
            rbuf[t][k] = g[k] ? g[k][t] : NULL;
            want[k] |= rbuf[t][k] != NULL;
        }
        dst[t] = rbuf[t];
    }
    arb_srcptr balls[5] = {b[0], b[1], b[2], b[3], b[4]};
    size_t rows = A->batch * A->seq, natt = A->batch * A->heads * A->seq * A->seq;
    slong pmax = max_prec(12 * rows * d + 5 * natt + 4 * d * d + 4 * d);
    for (slong prec = P0; prec <= pmax; prec *= 2) {
        if (attention_arb_backward(b[0], want[1] ? b[1] : NULL, want[2] ? b[2] : NULL,
                                   want[3] ? b[3] : NULL, want[4] ? b[4] : NULL, xb, dyb, A,
                                   prec) != 0) {
            rc = RN_TWIN_NOMEM;
            break;
        }
        if (certify_all(dst, out, nd, done, balls, n, 5, prec)) {
            rc = RN_TWIN_OK;
            break;
        }
    }
    for (int k = 0; k < 5; k++)
        _arb_vec_clear(b[k], (slong)n[k]);
    _arb_vec_clear(xb, (slong)nx), _arb_vec_clear(dyb, (slong)nx);
    flint_cleanup();
    return rc;
}

int attention_forward_mpfr(double *y, const double *x, const attn_args *A, rn_dtype out)
{
    double *const ys[1] = {y};
    return attention_forward_mpfr_multi(ys, &out, 1, x, A);
}

int attention_backward_mpfr(double *dx, double *din_w, double *din_b, double *dout_w,
                            double *dout_b, const double *x, const double *dy, const attn_args *A,
                            rn_dtype out)
{
    double *p0[1] = {dx}, *p1[1] = {din_w}, *p2[1] = {din_b}, *p3[1] = {dout_w}, *p4[1] = {dout_b};
    double *const *g[5] = {p0, din_w ? p1 : NULL, din_b ? p2 : NULL, dout_w ? p3 : NULL,
                           dout_b ? p4 : NULL};
    return attention_backward_mpfr_multi(g, &out, 1, x, dy, A);
}
