/* Certified twin of ref/softmax.c (contract and method: ref/softmax_mpfr.h). */
#include "softmax_mpfr.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <arb.h>

#include "arb_round.h"
#include "exact_mpfr.h"

/* One row's exact data: z (exact MPFR), which elements are live, m = max live z. */
typedef struct {
    size_t n, live;
    mpfr_t *z;
    int *alive;
    int nan;        /* the row is NaN (NaN or +Inf in z, or no live element) */
    int all_equal;  /* every live z is the same value */
    size_t imax;    /* index of a live element with z = max */
} row_t;

static int row_init(row_t *R, size_t n)
{
    R->n = n;
    R->z = malloc(n * sizeof *R->z);
    R->alive = malloc(n * sizeof *R->alive);
    if (!R->z || !R->alive) {
        free(R->z), free(R->alive);
        return -1;
    }
    for (size_t k = 0; k < n; k++)
        mpfr_init2(R->z[k], 53);
    return 0;
}

static void row_clear(row_t *R)
{
    for (size_t k = 0; k < R->n; k++)
        mpfr_clear(R->z[k]);
    free(R->z), free(R->alive);
}

/* z = x + mask exactly, the live set, the max. */
static void row_load(row_t *R, const double *x, const double *mask)
{
    mpfr_t a, b;
    mpfr_inits2(53, a, b, (mpfr_ptr)0);
    R->live = 0, R->nan = 0, R->all_equal = 1, R->imax = 0;
    for (size_t k = 0; k < R->n; k++) {
        set_d(a, x[k]);
        set_d(b, mask ? mask[k] : 0.0);
        add_exact(R->z[k], a, b); /* exact; NaN for NaN or Inf - Inf */
        if (mpfr_nan_p(R->z[k]) || (mpfr_inf_p(R->z[k]) && mpfr_sgn(R->z[k]) > 0))
            R->nan = 1;
        R->alive[k] = !mpfr_inf_p(R->z[k]) && !mpfr_nan_p(R->z[k]);
        if (R->alive[k]) {
            if (R->live == 0 || mpfr_cmp(R->z[k], R->z[R->imax]) > 0)
                R->imax = k;
            R->live++;
        }
    }
    if (R->live == 0)
        R->nan = 1;
    for (size_t k = 0; k < R->n && !R->nan; k++)
        if (R->alive[k] && !mpfr_equal_p(R->z[k], R->z[R->imax]))
            R->all_equal = 0;
    mpfr_clears(a, b, (mpfr_ptr)0);
}

/* num/den certified (both exact). */
static int quot_exact(double *res, mpfr_srcptr num, mpfr_srcptr den, rn_dtype out)
{
    work w;
    work_init(&w);
    int rc = ziv_quot(res, &w, num, NULL, den, NULL, out);
    work_clear(&w);
    return rc;
}

/* The row's y balls at precision prec: y[k] = exp(z[k] - m)/s (dead: exact 0). */
static void row_balls(arb_ptr y, const row_t *R, slong prec)
{
    arb_t s, t, m;
    arb_init(s), arb_init(t), arb_init(m);
    arf_t zf;
    arf_init(zf);
    arf_set_mpfr(zf, R->z[R->imax]);
    arb_set_arf(m, zf);
    arb_zero(s);
    for (size_t k = 0; k < R->n; k++) {
        if (!R->alive[k]) {
            arb_zero(y + k);
            continue;
        }
        arf_set_mpfr(zf, R->z[k]);
        arb_set_arf(t, zf);
        arb_sub(t, t, m, ARF_PREC_EXACT); /* exact: both dyadic */
        arb_exp(y + k, t, prec);
        arb_add(s, s, y + k, prec);
    }
    for (size_t k = 0; k < R->n; k++)
        if (R->alive[k])
            arb_div(y + k, y + k, s, prec);
    arf_clear(zf);
    arb_clear(s), arb_clear(t), arb_clear(m);
}

static int forward_row(double *yo, const row_t *R, arb_ptr y, rn_dtype out)
{
    if (R->nan) {
        for (size_t k = 0; k < R->n; k++)
            yo[k] = NAN;
        return RN_TWIN_OK;
    }
    if (R->all_equal) { /* y = 1/L on the live elements: a rational */
        mpfr_t one, L;
        mpfr_inits2(64, one, L, (mpfr_ptr)0);
        mpfr_set_ui(one, 1, MPFR_RNDN);
        mpfr_set_ui(L, (unsigned long)R->live, MPFR_RNDN);
        int rc = RN_TWIN_OK;
        for (size_t k = 0; k < R->n && rc == RN_TWIN_OK; k++)
            rc = R->alive[k] ? quot_exact(&yo[k], one, L, out) : (yo[k] = 0.0, RN_TWIN_OK);
        mpfr_clears(one, L, (mpfr_ptr)0);
        return rc;
    }
    for (slong prec = P0; prec <= ((slong)P0 << (NLEV - 1)); prec *= 2) {
        row_balls(y, R, prec);
        int all = 1;
        for (size_t k = 0; k < R->n; k++)
            if (!R->alive[k])
                yo[k] = 0.0;
            else if (!arb_round_once(&yo[k], y + k, prec, out))
                all = 0;
        if (all)
            return RN_TWIN_OK;
    }
    return RN_TWIN_UNCERTIFIED;
}

/* Is dx[i] exactly 0?  Σ_{k live, z[k] = t} (dy[k] - dy[i]) = 0 for every value t (exact). */
static int dx_is_zero(const row_t *R, const double *dy, size_t i)
{
    mpfr_t acc, d;
    mpfr_inits2(2200, acc, d, (mpfr_ptr)0); /* a sum of n differences of binary64 values: exact
                                              for n < 2^40 (span <= 2099 bits + carries) */
    int zero = 1;
    for (size_t k = 0; k < R->n && zero; k++) {
        if (!R->alive[k])
            continue;
        int first = 1; /* k is the first live element with its z value */
        for (size_t j = 0; j < k && first; j++)
            if (R->alive[j] && mpfr_equal_p(R->z[j], R->z[k]))
                first = 0;
        if (!first)
            continue;
        mpfr_set_zero(acc, 1);
        for (size_t j = k; j < R->n; j++)
            if (R->alive[j] && mpfr_equal_p(R->z[j], R->z[k])) {
                mpfr_set_d(d, dy[j], MPFR_RNDN);
                mpfr_sub_d(d, d, dy[i], MPFR_RNDN);
                mpfr_add(acc, acc, d, MPFR_RNDN);
            }
        zero = mpfr_zero_p(acc);
    }
    mpfr_clears(acc, d, (mpfr_ptr)0);
    return zero;
}

static int backward_row(double *dxo, const row_t *R, const double *dy, arb_ptr y, rn_dtype out)
{
    size_t n = R->n;
    int dy_bad = 0;
    for (size_t k = 0; k < n; k++)
        dy_bad |= !isfinite(dy[k]);
    if (R->nan || dy_bad) {
        for (size_t k = 0; k < n; k++)
            dxo[k] = NAN;
        return RN_TWIN_OK;
    }
    if (R->all_equal) { /* dx = (L·dy[i] - Σ_live dy)/L² exactly */
        mpfr_t S, num, den, t;
        mpfr_inits2(2200, S, num, t, (mpfr_ptr)0);
        mpfr_init2(den, 128);
        mpfr_set_zero(S, 1);
        for (size_t k = 0; k < n; k++)
            if (R->alive[k])
                mpfr_add_d(S, S, dy[k], MPFR_RNDN); /* exact at 2200 bits (see dx_is_zero) */
        mpfr_set_ui(den, (unsigned long)R->live, MPFR_RNDN);
        mpfr_mul_ui(den, den, (unsigned long)R->live, MPFR_RNDN); /* exact */
        int rc = RN_TWIN_OK;
        for (size_t k = 0; k < n && rc == RN_TWIN_OK; k++) {
            if (!R->alive[k]) {
                dxo[k] = 0.0;
                continue;
            }
            mpfr_set_d(t, dy[k], MPFR_RNDN);
            mpfr_mul_ui(t, t, (unsigned long)R->live, MPFR_RNDN);
            mpfr_sub(num, t, S, MPFR_RNDN);
            if (mpfr_zero_p(num))
                dxo[k] = 0.0;
            else
                rc = quot_exact(&dxo[k], num, den, out);
        }
        mpfr_clears(S, num, den, t, (mpfr_ptr)0);
        return rc;
    }
    char *done = calloc(n, 1);
    if (!done)
        return RN_TWIN_NOMEM;
    arb_t g, t, d;
    arb_init(g), arb_init(t), arb_init(d);
    int rc = RN_TWIN_UNCERTIFIED;
    for (slong prec = P0; prec <= ((slong)P0 << (NLEV - 1)); prec *= 2) {
        row_balls(y, R, prec);
        arb_zero(g);
        for (size_t k = 0; k < n; k++) {
            arb_set_d(d, dy[k]);
            arb_addmul(g, y + k, d, prec);
        }
        int all = 1;
        for (size_t k = 0; k < n; k++) {
            if (done[k])
                continue;
            if (!R->alive[k]) {
                dxo[k] = 0.0, done[k] = 1;
                continue;
            }
            arb_set_d(d, dy[k]);
            arb_sub(t, d, g, prec);
            arb_mul(t, t, y + k, prec);
            if (arb_round_once(&dxo[k], t, prec, out))
                done[k] = 1;
            else if (prec >= 1024 && arb_contains_zero(t) && dx_is_zero(R, dy, k))
                dxo[k] = 0.0, done[k] = 1;
            else
                all = 0;
        }
        if (all) {
            rc = RN_TWIN_OK;
            break;
        }
    }
    arb_clear(g), arb_clear(t), arb_clear(d);
    free(done);
    return rc;
}

static int run(double *o, const double *x, const double *mask, const double *dy, size_t rows,
               size_t n, rn_dtype out)
{
    row_t R;
    if (n == 0)
        return RN_TWIN_OK;
    if (row_init(&R, n) != 0)
        return RN_TWIN_NOMEM;
    arb_ptr y = _arb_vec_init((slong)n);
    int rc = RN_TWIN_OK;
    for (size_t r = 0; r < rows && rc == RN_TWIN_OK; r++) {
        row_load(&R, x + r * n, mask ? mask + r * n : NULL);
        rc = dy ? backward_row(o + r * n, &R, dy + r * n, y, out) : forward_row(o + r * n, &R, y, out);
    }
    _arb_vec_clear(y, (slong)n);
    row_clear(&R);
    flint_cleanup();
    return rc;
}

int softmax_forward_mpfr(double *y, const double *x, const double *mask, size_t rows, size_t n,
                         rn_dtype out)
{
    return run(y, x, mask, NULL, rows, n, out);
}

int softmax_backward_mpfr(double *dx, const double *x, const double *mask, const double *dy,
                          size_t rows, size_t n, rn_dtype out)
{
    return run(dx, x, mask, dy, rows, n, out);
}
