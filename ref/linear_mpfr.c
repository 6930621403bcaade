/* MPFR twin of ref/linear.c (contract: ref/linear_mpfr.h).
 *
 * Why the result is exact.  Every input is a binary64 value (53-bit significand), so a product of
 * two inputs has at most 106 significant bits and mpfr_mul into 106 bits is exact; binary64's
 * exponent range keeps it within MPFR's default one.  sum_exact (ref/exact_mpfr.h) sums the
 * products (and the bias) at a precision covering their whole exponent span plus carries: exact.
 * The only rounding is rn_round_mpfr's, once, to the output format.  No Ziv loop: certified by
 * construction (tests/test_linear.c also compares with an independent 4096-bit evaluation).
 * That is the exact route; the twin runs the ball route below, which gives the same bits faster.
 */
#include "linear_mpfr.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "arb_matmul.h"
#include "arb_round.h"
#include "exact_mpfr.h"

int lin_ws_init(lin_dot_ws *ws, size_t cap)
{
    ws->cap = cap + 1; /* + the addend */
    ws->t = malloc(ws->cap * sizeof *ws->t);
    ws->p = malloc(ws->cap * sizeof *ws->p);
    if (!ws->t || !ws->p) {
        free(ws->t), free(ws->p);
        return RN_TWIN_NOMEM;
    }
    for (size_t i = 0; i < ws->cap; i++)
        mpfr_init2(ws->p[i], 106);
    mpfr_init2(ws->v, 53);
    return RN_TWIN_OK;
}

void lin_ws_clear(lin_dot_ws *ws)
{
    for (size_t i = 0; i < ws->cap; i++)
        mpfr_clear(ws->p[i]);
    mpfr_clear(ws->v);
    free(ws->t), free(ws->p);
}

void lin_exact_dot(lin_dot_ws *ws, const double *a, size_t sa, const double *b, size_t sb, size_t n,
                   const double *c)
{
    size_t k = 0;
    int singular = 0;
    for (size_t i = 0; i < n; i++, k++) {
        double ai = a[i * sa], bi = b ? b[i * sb] : 1.0;
        mpfr_set_d(ws->p[k], ai, MPFR_RNDN);       /* exact */
        mpfr_mul_d(ws->p[k], ws->p[k], bi, MPFR_RNDN); /* exact: 106 bits (0·Inf: NaN) */
        singular |= !mpfr_number_p(ws->p[k]);
        ws->t[k] = ws->p[k];
    }
    if (c) {
        mpfr_set_d(ws->p[k], *c, MPFR_RNDN);
        singular |= !mpfr_number_p(ws->p[k]);
        ws->t[k] = ws->p[k];
        k++;
    }
    if (singular) { /* NaN, or the Infs' sign (mpfr_sum: Inf - Inf = NaN), as IEEE */
        mpfr_set_prec(ws->v, 53);
        mpfr_sum(ws->v, ws->t, k, MPFR_RNDN);
    } else {
        sum_exact(ws->v, ws->t, k);
    }
}

/* ---------------------------------------------------------------- the two routes
 *
 * The ball route (the default): the products go through Arb's block matrix product
 * (ref/arb_matmul.h: exact integer products of the midpoints, each sum rounded once to LIN_PREC
 * bits, the rounding error in the radius), and each output ball is rounded once to `d` when both its
 * ends round to the same value (arb_round_once): rounding is monotone and the ball contains the
 * exact value, so that value is the exact value's rounding -- the bits of the exact route.  A ball
 * that does not decide (a tie or near-tie beyond LIN_PREC bits, a ball straddling 0 whose ends round
 * to -0 and +0) and every output that a non-finite input reaches (the balls see those inputs as 0)
 * take the exact route for that one output.  At GPT-2 width (64 × 768 -> 3072) this takes ~15x
 * less CPU than an exact dot per output (specs/error-analysis-linear.md). */

/* Working precision of the balls: far above binary64's 53 bits, so that a ball fails to decide only
   at a tie or near-tie (or a cancellation of ~70 bits).  No Ziv loop: what 128 bits leave undecided
   is rare, and the exact route is cheap for one output. */
#define LIN_PREC 128

/* A vector length for the allocators (never 0). */
static slong nz(size_t n) { return (slong)(n ? n : 1); }

/* v, or a copy of it with every non-finite value replaced by 0 (*own: the copy, or NULL).  bad_row[i]
   (bad_col[k]) is set when row i (column k) of v as an r × c matrix holds a non-finite value; either
   may be NULL.  Returns NULL only when out of memory. */
static const double *finite_part(const double *v, size_t r, size_t c, unsigned char *bad_row,
                                 unsigned char *bad_col, double **own)
{
    *own = NULL;
    for (size_t i = 0; i < r; i++)
        for (size_t k = 0; k < c; k++)
            if (!isfinite(v[i * c + k])) {
                if (!*own) {
                    *own = malloc((size_t)nz(r * c) * sizeof **own);
                    if (!*own)
                        return NULL;
                    memcpy(*own, v, r * c * sizeof **own);
                }
                (*own)[i * c + k] = 0.0;
                if (bad_row)
                    bad_row[i] = 1;
                if (bad_col)
                    bad_col[k] = 1;
            }
    return *own ? *own : v;
}

static arb_ptr balls_of(const double *v, size_t n)
{
    arb_ptr b = _arb_vec_init(nz(n));
    for (size_t i = 0; i < n; i++)
        arb_set_d(b + i, v[i]);
    return b;
}

/* The exact route for one output: c + sum_{i<n} a[i·sa]·b[i·sb] rounded once to d. */
static double exact_out(lin_dot_ws *ws, const double *a, size_t sa, const double *b, size_t sb,
                        size_t n, const double *c, rn_dtype d)
{
    lin_exact_dot(ws, a, sa, b, sb, n, c);
    return round_exact(ws->v, d);
}

/* An output of the ball route: ball v rounded once, unless `bad` (a non-finite input reaches it)
   or v does not decide; then 0 and the caller takes the exact route. */
static int ball_out(double *res, const arb_t v, int bad, rn_dtype d)
{
    return !bad && arb_round_once(res, v, LIN_PREC, d);
}

static int forward_exact(double *y, const double *x, const double *w, const double *b, size_t rows,
                         size_t in, size_t out, rn_dtype d)
{
    lin_dot_ws ws;
    if (lin_ws_init(&ws, in) != RN_TWIN_OK)
        return RN_TWIN_NOMEM;
    for (size_t r = 0; r < rows; r++)
        for (size_t j = 0; j < out; j++)
            y[r * out + j] = exact_out(&ws, x + r * in, 1, w + j * in, 1, in, b ? b + j : NULL, d);
    lin_ws_clear(&ws);
    return RN_TWIN_OK;
}

static int forward_balls(double *y, const double *x, const double *w, const double *b, size_t rows,
                         size_t in, size_t out, rn_dtype d, size_t *n_exact)
{
    unsigned char *xr = calloc(nz(rows), 1), *wr = calloc(nz(out), 1), *bb = calloc(nz(out), 1);
    double *xo = NULL, *wo = NULL, *bo = NULL;
    const double *xs = NULL, *wf = NULL, *bs = NULL;
    lin_dot_ws ws;
    int rc = RN_TWIN_NOMEM, have_ws = 0;
    if (!xr || !wr || !bb)
        goto done;
    xs = finite_part(x, rows, in, xr, NULL, &xo);
    wf = finite_part(w, out, in, wr, NULL, &wo);
    bs = b ? finite_part(b, out, 1, bb, NULL, &bo) : NULL;
    if (!xs || !wf || (b && !bs) || lin_ws_init(&ws, in) != RN_TWIN_OK)
        goto done;
    have_ws = 1;
    arb_ptr xb = balls_of(xs, rows * in), yb = _arb_vec_init(nz(rows * out));
    ballmat_linear(yb, xb, wf, bs, (slong)rows, (slong)in, (slong)out, LIN_PREC); /* [rows, out] */
    _arb_vec_clear(xb, nz(rows * in));
    for (size_t r = 0; r < rows; r++)
        for (size_t j = 0; j < out; j++) {
            double *o = y + r * out + j;
            if (!ball_out(o, yb + r * out + j, xr[r] || wr[j] || bb[j], d)) {
                *o = exact_out(&ws, x + r * in, 1, w + j * in, 1, in, b ? b + j : NULL, d);
                ++*n_exact;
            }
        }
    _arb_vec_clear(yb, nz(rows * out));
    flint_cleanup();
    rc = RN_TWIN_OK;
done:
    if (have_ws)
        lin_ws_clear(&ws);
    free(xr), free(wr), free(bb), free(xo), free(wo), free(bo);
    return rc;
}

int linear_forward_route(double *y, const double *x, const double *w, const double *b, size_t rows,
                         size_t in, size_t out, rn_dtype d, lin_route route, size_t *n_exact)
{
    size_t n = 0;
    int rc;
    if (route == LIN_ROUTE_EXACT) {
        rc = forward_exact(y, x, w, b, rows, in, out, d);
        n = rows * out;
    } else {
        rc = forward_balls(y, x, w, b, rows, in, out, d, &n);
    }
    if (n_exact)
        *n_exact = n;
    return rc;
}

int linear_forward_mpfr(double *y, const double *x, const double *w, const double *b, size_t rows,
                        size_t in, size_t out, rn_dtype d)
{
    return linear_forward_route(y, x, w, b, rows, in, out, d, LIN_ROUTE_BALLS, NULL);
}

/* d.bias[j] = sum_r dy[r, j]: rows · out terms in all, as many as dy itself, so the exact route
   costs no more than reading dy into balls would; both routes use it. */
static void bias_grad_exact(double *db, lin_dot_ws *ws, const double *dy, size_t rows, size_t out,
                            rn_dtype d)
{
    for (size_t j = 0; db && j < out; j++)
        db[j] = exact_out(ws, dy + j, out, NULL, 0, rows, NULL, d);
}

static int backward_exact(double *dx, double *dw, double *db, const double *dy, const double *x,
                          const double *w, size_t rows, size_t in, size_t out, rn_dtype d)
{
    lin_dot_ws ws;
    if (lin_ws_init(&ws, rows > out ? rows : out) != RN_TWIN_OK)
        return RN_TWIN_NOMEM;
    for (size_t r = 0; r < rows; r++) /* dx[r, :] = dy[r, :]·W: column k of W */
        for (size_t k = 0; k < in; k++)
            dx[r * in + k] = exact_out(&ws, dy + r * out, 1, w + k, in, out, NULL, d);
    for (size_t j = 0; j < out; j++) /* dW[j, k] = column j of dy against column k of x */
        for (size_t k = 0; k < in; k++)
            dw[j * in + k] = exact_out(&ws, dy + j, out, x + k, in, rows, NULL, d);
    bias_grad_exact(db, &ws, dy, rows, out, d);
    lin_ws_clear(&ws);
    return RN_TWIN_OK;
}

static int backward_balls(double *dx, double *dw, double *db, const double *dy, const double *x,
                          const double *w, size_t rows, size_t in, size_t out, rn_dtype d,
                          size_t *n_exact)
{
    /* dyr/dyc: rows/columns of dy, xc: columns of x, wc: columns of W holding a non-finite value */
    unsigned char *dyr = calloc(nz(rows), 1), *dyc = calloc(nz(out), 1), *xc = calloc(nz(in), 1),
                  *wc = calloc(nz(in), 1);
    double *dyo = NULL, *xo = NULL, *wo = NULL;
    const double *dys = NULL, *xs = NULL, *wf = NULL;
    lin_dot_ws ws;
    int rc = RN_TWIN_NOMEM, have_ws = 0;
    if (!dyr || !dyc || !xc || !wc)
        goto done;
    dys = finite_part(dy, rows, out, dyr, dyc, &dyo);
    xs = finite_part(x, rows, in, NULL, xc, &xo);
    wf = finite_part(w, out, in, NULL, wc, &wo);
    if (!dys || !xs || !wf || lin_ws_init(&ws, rows > out ? rows : out) != RN_TWIN_OK)
        goto done;
    have_ws = 1;
    arb_ptr dyb = balls_of(dys, rows * out);
    arb_ptr g = _arb_vec_init(nz(rows * in));
    ballmat_mul_d(g, dyb, wf, (slong)rows, (slong)out, (slong)in, LIN_PREC); /* dx [rows, in] */
    for (size_t r = 0; r < rows; r++)
        for (size_t k = 0; k < in; k++)
            if (!ball_out(dx + r * in + k, g + r * in + k, dyr[r] || wc[k], d)) {
                dx[r * in + k] = exact_out(&ws, dy + r * out, 1, w + k, in, out, NULL, d);
                ++*n_exact;
            }
    _arb_vec_clear(g, nz(rows * in));
    arb_ptr xb = balls_of(xs, rows * in);
    g = _arb_vec_init(nz(out * in));
    ballmat_tmul(g, dyb, xb, (slong)rows, (slong)out, (slong)in, LIN_PREC); /* dW [out, in] */
    _arb_vec_clear(xb, nz(rows * in));
    _arb_vec_clear(dyb, nz(rows * out));
    for (size_t j = 0; j < out; j++)
        for (size_t k = 0; k < in; k++)
            if (!ball_out(dw + j * in + k, g + j * in + k, dyc[j] || xc[k], d)) {
                dw[j * in + k] = exact_out(&ws, dy + j, out, x + k, in, rows, NULL, d);
                ++*n_exact;
            }
    _arb_vec_clear(g, nz(out * in));
    flint_cleanup();
    bias_grad_exact(db, &ws, dy, rows, out, d);
    rc = RN_TWIN_OK;
done:
    if (have_ws)
        lin_ws_clear(&ws);
    free(dyr), free(dyc), free(xc), free(wc), free(dyo), free(xo), free(wo);
    return rc;
}

int linear_backward_route(double *dx, double *dw, double *db, const double *dy, const double *x,
                          const double *w, size_t rows, size_t in, size_t out, rn_dtype d,
                          lin_route route, size_t *n_exact)
{
    size_t n = 0;
    int rc;
    if (route == LIN_ROUTE_EXACT) {
        rc = backward_exact(dx, dw, db, dy, x, w, rows, in, out, d);
        n = rows * in + out * in;
    } else {
        rc = backward_balls(dx, dw, db, dy, x, w, rows, in, out, d, &n);
    }
    if (n_exact)
        *n_exact = n;
    return rc;
}

int linear_backward_mpfr(double *dx, double *dw, double *db, const double *dy, const double *x,
                         const double *w, size_t rows, size_t in, size_t out, rn_dtype d)
{
    return linear_backward_route(dx, dw, db, dy, x, w, rows, in, out, d, LIN_ROUTE_BALLS, NULL);
}
