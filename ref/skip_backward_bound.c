/* The skip ops' backward bound by blocks of rows (ref/skip_backward_bound.h): the loops of
 * skip_layernorm_backward_bound / skip_rmsnorm_backward_bound turned inside out -- for each block,
 * each order c -- with their per-row parts on the block and their column parts kept across the
 * blocks.  Why the same bits:
 *   dx:     per row, the same calls on the same row (skip_sum_in, the norm's bound, the twin's dx
 *           on t_c: the fast path or the twin, each the exact value rounded once), composed and
 *           maximized over c in the same way (fmax is exact);
 *   dgamma, dbeta: the norm's bound from the same slots (the whole bound's own partition, each
 *           block's rows in row order, the blocks added in block order), composed with the twin
 *           on t_c's certified column (the exact sum rounded once, whatever the blocks);
 *           LayerNorm's dbeta on t_c is sum_r dy_rj whatever t_c, the want's own value;
 *   dbias:  skip_dbias_bound on skip_dbias_sums' partition, the twin on t_c's certified column.
 * A block is processed a chunk of CHUNK_ELEMS values at a time in row order (the slots see the
 * same additions), so that each thread's scratch is a few chunks, not a block.  A block's column
 * terms live in a slot of its own from its first row to its last, then are added into the totals
 * in block order -- the additions rn_bound_slots_add makes, in the same order, at the end -- so
 * that a few slots are alive at a time, not one per block (4 orders x 5n doubles each). */
#include "skip_backward_bound.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <mpfr.h>

#include "layernorm_bound.h"
#include "norm_fast.h"
#include "residual_mpfr.h"
#include "rmsnorm_bound.h"
#include "skip_layernorm_bound.h"
#include "skip_layernorm_mpfr.h"
#include "skip_rmsnorm_mpfr.h"

enum { CHUNK_ELEMS = 1 << 15, MAX_ORDERS = 4 };

/* One thread's scratch for a chunk of ch rows: t_c, the twin's dx on it (wc), the norm's bound
   on it for (compute, out) and for (compute, compute) (bb, bc), the zero skip the twin on t_c
   takes (as the whole bound's call), the rows the fast path left, a slot for bc's column terms
   (not read), and the exact sums' scratch. */
typedef struct {
    double *t, *wc, *bb, *bc, *zeros, *slot;
    unsigned char *row_ok, *flags;
    mpfr_t s;
    int have_s;
} scratch;

/* A block's column terms (and the totals, the same layout): for each order c, for each needed
   dtype (di: its place among them) the norm bound's ns sums and nf flags, then dbias's two sums
   sb, sa (n each, dtype-free). */
typedef struct {
    double *sum;
    unsigned char *flag;
} slot;

struct skip_bwd_bound {
    int rms, norders, threads, offset, merged;
    size_t rows, n, B, nb, ch; /* nb blocks of B rows (the partition); chunks of ch rows */
    int need[RN_NDTYPES], di[RN_NDTYPES], nd;
    double eps;
    rn_dtype compute;
    size_t ns, nf;                 /* the norm bound's slot: ns sums and nf flags */
    size_t per_c, per_cf;          /* one order's doubles and flags in a slot */
    norm_cols *cols[MAX_ORDERS];   /* the twin on t_c: dgamma, (dbeta,) dbias */
    slot total, *blk;              /* the totals; blk[b]: block b's, while it runs */
    size_t *left, next;            /* rows of each block still to come; the first block not
                                      yet added into the totals */
    unsigned char *done;
    scratch *sc;
};

static double *norm_sums(const skip_bwd_bound *S, const slot *q, int c, int d)
{
    return q->sum + (size_t)c * S->per_c + (size_t)S->di[d] * S->ns;
}

static unsigned char *norm_flags(const skip_bwd_bound *S, const slot *q, int c, int d)
{
    return q->flag + (size_t)c * S->per_cf + (size_t)S->di[d] * S->nf;
}

static double *dbias_sums(const skip_bwd_bound *S, const slot *q, int c)
{
    return q->sum + (size_t)c * S->per_c + (size_t)S->nd * S->ns;
}

static int slot_new(const skip_bwd_bound *S, slot *q)
{
    q->sum = calloc((size_t)S->norders * S->per_c + 1, sizeof *q->sum);
    q->flag = calloc((size_t)S->norders * S->per_cf + 1, 1);
    return q->sum && q->flag ? 0 : -1;
}

static void slot_free(slot *q)
{
    free(q->sum), free(q->flag);
    q->sum = NULL, q->flag = NULL;
}

void skip_bwd_bound_free(skip_bwd_bound *S)
{
    if (!S)
        return;
    for (int c = 0; c < MAX_ORDERS; c++)
        norm_cols_free(S->cols[c]);
    slot_free(&S->total);
    for (size_t b = 0; S->blk && b < S->nb; b++)
        slot_free(&S->blk[b]);
    free(S->blk), free(S->left), free(S->done);
    for (int t = 0; S->sc && t < S->threads; t++) {
        scratch *w = &S->sc[t];
        free(w->t), free(w->wc), free(w->bb), free(w->bc), free(w->zeros), free(w->slot);
        free(w->row_ok), free(w->flags);
        if (w->have_s)
            mpfr_clear(w->s);
    }
    free(S->sc);
    free(S);
}

static int scratch_new(scratch *w, size_t ch, size_t n, size_t ns, size_t nf)
{
    size_t len = ch * n + 1;
    w->t = malloc(len * sizeof *w->t), w->wc = malloc(len * sizeof *w->wc);
    w->bb = malloc(len * sizeof *w->bb), w->bc = malloc(len * sizeof *w->bc);
    w->zeros = calloc(len, sizeof *w->zeros), w->slot = malloc((ns + 1) * sizeof *w->slot);
    w->row_ok = malloc(ch + 1), w->flags = malloc(nf + 1);
    residual_exact_init(w->s);
    w->have_s = 1;
    return w->t && w->wc && w->bb && w->bc && w->zeros && w->slot && w->row_ok && w->flags ? 0
                                                                                           : -1;
}

skip_bwd_bound *skip_bwd_bound_new(int rms, int has_bias, size_t rows, size_t n, int threads,
                                   const int *need, double eps, int offset, rn_dtype compute)
{
    skip_bwd_bound *S = calloc(1, sizeof *S);
    if (!S || threads < 1 || rows == 0 || n == 0) {
        free(S);
        return NULL;
    }
    size_t B = rn_bound_block_rows(rows), ch = CHUNK_ELEMS / n ? CHUNK_ELEMS / n : 1;
    S->rms = rms, S->norders = has_bias ? 4 : 1, S->threads = threads, S->offset = offset;
    S->rows = rows, S->n = n, S->B = B, S->nb = (rows + B - 1) / B, S->ch = ch < B ? ch : B;
    S->eps = eps, S->compute = compute;
    S->ns = (size_t)(rms ? RMS_BWD_BOUND_SUMS : LN_BWD_BOUND_SUMS) * n;
    S->nf = (size_t)(rms ? RMS_BWD_BOUND_FLAGS : LN_BWD_BOUND_FLAGS) * n;
    for (int d = 0; d < RN_NDTYPES; d++)
        if ((S->need[d] = need[d] != 0))
            S->di[d] = S->nd++;
    S->per_c = (size_t)S->nd * S->ns + 2 * n, S->per_cf = (size_t)S->nd * S->nf;
    S->blk = calloc(S->nb, sizeof *S->blk), S->done = calloc(S->nb, 1);
    S->left = malloc(S->nb * sizeof *S->left);
    int ok = (S->sc = calloc((size_t)threads, sizeof *S->sc)) && S->blk && S->done && S->left &&
             slot_new(S, &S->total) == 0;
    for (size_t b = 0; ok && b < S->nb; b++)
        S->left[b] = rows - b * B < B ? rows - b * B : B;
    for (int t = 0; ok && t < threads; t++)
        ok = scratch_new(&S->sc[t], S->ch, n, S->ns, S->nf) == 0;
    for (int c = 0; ok && c < S->norders; c++)
        ok = (S->cols[c] = norm_cols_new(rms ? 2 : 3, 1, n, threads)) != NULL;
    if (!ok) {
        skip_bwd_bound_free(S);
        return NULL;
    }
    return S;
}

/* The norm's backward bound (compute, out) of nr rows of t (dy: theirs), their column terms into
   one slot (cs, cf). */
static int norm_bound_rows(const skip_bwd_bound *S, double *b, double *cs, unsigned char *cf,
                           const double *dy, const double *t, const double *gamma, size_t nr,
                           rn_dtype out)
{
    return S->rms ? rmsnorm_backward_bound_rows(b, cs, cf, dy, t, gamma, nr, S->n, S->eps,
                                                S->offset, S->compute, out)
                  : layernorm_backward_bound_rows(b, cs, cf, dy, t, gamma, nr, S->n, S->eps,
                                                  S->compute, out);
}

/* dx of the rows the fast path left (ok[r] = 0) from the twin on t with a zero skip and no bias
   (the whole bound's call, on those rows alone; its column outputs are not kept), into wc. */
static int twin_rows_left(const skip_bwd_bound *S, double *wc, const double *dy, const double *t,
                          const double *zeros, const double *gamma, const unsigned char *ok,
                          size_t nr)
{
    size_t n = S->n, k = 0;
    for (size_t r = 0; r < nr; r++)
        k += !ok[r];
    double *buf = malloc((4 * k * n + 3 * n + 1) * sizeof *buf);
    if (!buf)
        return RN_TWIN_NOMEM;
    double *dyl = buf, *tl = dyl + k * n, *dxl = tl + k * n, *dsk = dxl + k * n,
           *cols = dsk + k * n;
    rows_left_gather(dyl, dy, ok, nr, n);
    rows_left_gather(tl, t, ok, nr, n);
    int rc = S->rms ? skip_rmsnorm_backward_mpfr(dxl, dsk, cols, cols + n, dyl, tl, zeros, gamma,
                                                 NULL, k, n, S->eps, S->offset, RN_F64)
                    : skip_layernorm_backward_mpfr(dxl, dsk, cols, cols + n, cols + 2 * n, dyl,
                                                   tl, zeros, gamma, NULL, k, n, S->eps, RN_F64);
    if (rc == RN_TWIN_OK)
        rows_left_scatter(wc, dxl, ok, nr, n);
    free(buf);
    return rc;
}

/* Order c on a chunk of nr rows of a block: t_c, the twin's dx on it, the norm's bounds, dx's
   composed bound into bdx[d], the column terms into the block's slot q. */
static int chunk_order(skip_bwd_bound *S, int t, const slot *q, int c, double *const *bdx,
                       const double *w, const double *dy, const double *x, const double *skip,
                       const double *gamma, const double *bias, size_t nr)
{
    scratch *sc = &S->sc[t];
    size_t n = S->n, N = nr * n;
    for (size_t i = 0; i < N; i++)
        sc->t[i] = skip_sum_in(sc->s, x[i], skip[i], bias ? &bias[i % n] : NULL, c, S->compute);
    int k = S->rms ? rmsnorm_backward_rows_fast(S->cols[c], t, sc->wc, dy, sc->t, sc->zeros, NULL,
                                                gamma, nr, n, S->eps, S->offset, RN_F64,
                                                sc->row_ok)
                   : layernorm_backward_rows_fast(S->cols[c], t, sc->wc, dy, sc->t, sc->zeros,
                                                  NULL, gamma, nr, n, S->eps, RN_F64, sc->row_ok);
    if (k == 0)
        return SKIP_BWD_WHOLE; /* a non-finite t_c or dy, ...: the twin's special values */
    int rc = k == 2 ? twin_rows_left(S, sc->wc, dy, sc->t, sc->zeros, gamma, sc->row_ok, nr) : 0;
    /* (compute, compute): the dx an implementation sums into dbias before any output rounding */
    rn_dtype cd = S->compute;
    double *cs = S->need[cd] ? norm_sums(S, q, c, cd) : sc->slot;
    unsigned char *cf = S->need[cd] ? norm_flags(S, q, c, cd) : sc->flags;
    if (!S->need[cd])
        memset(sc->slot, 0, S->ns * sizeof *sc->slot), memset(sc->flags, 0, S->nf);
    if (!rc)
        rc = norm_bound_rows(S, sc->bc, cs, cf, dy, sc->t, gamma, nr, cd);
    if (rc)
        return rc;
    double *ds = dbias_sums(S, q, c);
    skip_dbias_terms(ds, ds + n, sc->bc, sc->wc, nr, n);
    for (int d = 0; d < RN_NDTYPES; d++) {
        if (!S->need[d])
            continue;
        const double *bd = sc->bc;
        if (d != (int)cd) {
            rc = norm_bound_rows(S, sc->bb, norm_sums(S, q, c, d), norm_flags(S, q, c, d), dy,
                                 sc->t, gamma, nr, (rn_dtype)d);
            if (rc)
                return rc;
            bd = sc->bb;
        }
        for (size_t i = 0; i < N; i++)
            bdx[d][i] = fmax(bdx[d][i], skip_compose(bd[i], sc->wc[i], w[i]));
    }
    return 0;
}

/* Block b is complete: the blocks complete from the first not yet added on, added into the
   totals in block order (any thread; one at a time), their slots freed. */
static void block_done(skip_bwd_bound *S, size_t b)
{
#pragma omp critical(skip_bwd_bound_fold)
    {
        S->done[b] = 1;
        size_t L = (size_t)S->norders * S->per_c, F = (size_t)S->norders * S->per_cf;
        for (; S->next < S->nb && S->done[S->next]; S->next++) {
            slot *q = &S->blk[S->next];
            for (size_t i = 0; i < L; i++)
                S->total.sum[i] += q->sum[i];
            for (size_t i = 0; i < F; i++)
                S->total.flag[i] |= q->flag[i];
            slot_free(q);
        }
    }
}

int skip_bwd_bound_rows(skip_bwd_bound *S, int t, size_t b, double *const *bdx, const double *w,
                        const double *dy, const double *x, const double *skip,
                        const double *gamma, const double *bias, size_t nr)
{
    size_t n = S->n;
    if (t < 0 || t >= S->threads || b >= S->nb || nr > S->left[b])
        return RN_TWIN_NOMEM; /* (a caller's error) */
    slot *q = &S->blk[b]; /* this thread's alone until the block is done */
    if (!q->sum && slot_new(S, q))
        return RN_TWIN_NOMEM;
    for (int d = 0; d < RN_NDTYPES; d++)
        if (S->need[d])
            memset(bdx[d], 0, nr * n * sizeof *bdx[d]);
    for (size_t r0 = 0; r0 < nr; r0 += S->ch) {
        size_t k = nr - r0 < S->ch ? nr - r0 : S->ch, o = r0 * n;
        double *bd[RN_NDTYPES] = {0};
        for (int d = 0; d < RN_NDTYPES; d++)
            bd[d] = S->need[d] ? bdx[d] + o : NULL;
        for (int c = 0; c < S->norders; c++) {
            int rc = chunk_order(S, t, q, c, bd, w + o, dy + o, x + o, skip + o, gamma, bias, k);
            if (rc)
                return rc;
        }
    }
    if ((S->left[b] -= nr) == 0)
        block_done(S, b);
    return 0;
}

/* Once, after every block: the twin's columns merged (every block's terms in the totals). */
static int merge_once(skip_bwd_bound *S)
{
    if (S->merged)
        return S->merged > 0 ? 0 : SKIP_BWD_WHOLE;
    S->merged = -1;
    if (S->next != S->nb)
        return SKIP_BWD_WHOLE; /* (some block did not run: a caller's error) */
    for (int c = 0; c < S->norders; c++)
        if (!norm_cols_merge(S->cols[c]))
            return SKIP_BWD_WHOLE;
    S->merged = 1;
    return 0;
}

int skip_bwd_bound_cols(skip_bwd_bound *S, rn_dtype out, double *bdbias, double *bdgamma,
                        double *bdbeta, const double *wb, const double *wg, const double *wbe)
{
    size_t n = S->n;
    int rc = merge_once(S);
    if (rc)
        return rc;
    if (!S->need[out])
        return RN_TWIN_NOMEM; /* (a caller's error: no slots for it) */
    double *bg = malloc((2 * n + 1) * sizeof *bg), *bbe = bg ? bg + n : NULL;
    if (!bg)
        return RN_TWIN_NOMEM;
    for (size_t j = 0; j < n; j++) {
        bdbias[j] = bdgamma[j] = 0.0;
        if (!S->rms)
            bdbeta[j] = 0.0;
    }
    for (int c = 0; c < S->norders && !rc; c++) {
        /* the totals: no slot left to add (nb = 0) */
        double *cs = norm_sums(S, &S->total, c, out);
        unsigned char *cf = norm_flags(S, &S->total, c, out);
        if (S->rms)
            rmsnorm_backward_bound_cols(bg, cs, cf, 0, S->rows, n, S->compute, out);
        else
            layernorm_backward_bound_cols(bg, bbe, cs, cf, 0, S->rows, n, S->compute, out);
        const double *sb = dbias_sums(S, &S->total, c), *sa = sb + n;
        for (size_t j = 0; j < n && !rc; j++) {
            double wcg, wcb; /* the twin on t_c: dgamma(t_c), dbias(t_c) */
            if (!norm_cols_value(S->cols[c], 0, j, RN_F64, &wcg) ||
                !norm_cols_value(S->cols[c], S->rms ? 1 : 2, j, RN_F64, &wcb)) {
                rc = SKIP_BWD_WHOLE;
                break;
            }
            bdgamma[j] = fmax(bdgamma[j], skip_compose(bg[j], wcg, wg[j]));
            if (!S->rms)
                bdbeta[j] = fmax(bdbeta[j], skip_compose(bbe[j], wbe[j], wbe[j]));
            bdbias[j] = fmax(bdbias[j], skip_dbias_bound(sb[j], sa[j], S->rows, wcb, wb[j],
                                                         S->compute, out));
        }
    }
    free(bg);
    return rc;
}
