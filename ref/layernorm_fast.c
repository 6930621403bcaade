/* Fast path of the LayerNorm forward twin (ref/layernorm_mpfr.c): mean, rstd and every y_i of a row
 * in double-double with a rigorous error bound, certified by ref/fast_dd.h; the twin takes the rows
 * where something is not certified.  Derivation of every error term: specs/fast-path.md §5 (the
 * bracketed numbers below).
 *
 * For a row x (n doubles), mu = S / n the exact mean:
 *   mh     a pivot: RN(RN-sum(x) / n), any double near mu                                [§5.1]
 *   a_i + b_i = x_i - mh exactly (TwoSum); T = sum (a_i + b_i) and W = sum (a_i + b_i)^2 in
 *          double-double (Sum2 of Ogita, Rump and Oishi; squares by TwoProd)             [§5.2]
 *   delta  = mu - mh = T / n;  mean = mh + delta                                         [§5.3]
 *   n var  = W - n delta^2 (the deviations from mu sum to zero)                          [§5.4]
 *   rstd   1 / sqrt((n var + n eps) / n) (fd_div_d, fd_rsqrt)                            [§5.5]
 *   y_i    ((a_i + b_i - delta) gamma_i) rstd + beta_i in double-double                  [§5.6]
 * Non-finite inputs, an overflow anywhere, a near-zero var + eps (zero-variance rows with eps = 0)
 * or an enclosure that straddles a rounding boundary (a tie, an exact value such as y == beta)
 * make the row fall back. */
#include <math.h>
#include <stdlib.h>

#ifdef _OPENMP
#include <omp.h>
#endif

#include <float.h>
#include <mpfr.h>
#include <stdint.h>

#include "fast_dd.h"
#include "norm_fast.h"

#define U FD_U
#define ETA FD_ETA

/* The row's statistics (specs/fast-path.md §5.1-5.5), shared by forward and backward: the pivot
   mh, delta = mu - mh = th + tl within dle, the mean mu, rstd R.  Returns 0 (fall back) on a
   non-finite input or overflow, or when var + eps is not safely away from 0. */
typedef struct {
    double mh, th, tl, dle;
    fd_num mu, R;
} ln_stats;

/* One element of §5.2's sums, into one lane's accumulators (ln_row_moments). */
static inline __attribute__((always_inline)) void
ln_moment_step(const double *x, const double *xt, const double *xe, size_t i, double mh,
               double *ts, double *tc, double *TA, double *ws, double *wc, double *B, double *Eta,
               double *EtaW, double *Bsq)
{
    double a, b, p, pe, e, f;
    fd_two_sum(x[i], -mh, &a, &b);
    if (xt) { /* v_i - mh = a + b within eta: b absorbs the low part (one rounding) */
        b += xt[i];
        double eta = xe[i] + 2.0 * U * fabs(b);
        *Eta += eta;
        *EtaW += (2.0 * (fabs(a) + fabs(b)) + eta) * eta;
        *Bsq += b * b; /* b^2 is dropped from the square below; here |b| <= u |a| fails */
    }
    fd_two_sum(*ts, a, ts, &e);
    *tc += e;
    *tc += b;
    *TA += fabs(e) + fabs(b);
    fd_two_prod(a, a, &p, &pe);
    double l = fma(2.0 * a, b, pe);
    fd_two_sum(*ws, p, ws, &f);
    *wc += f;
    *wc += l;
    *B += fabs(f) + fabs(l);
}

/* Merges lane (s2, c2, A2) into (s, c, A) of a Sum2: s + c + (s2 + c2) = s' + c' up to the RN
   additions into c, whose leaves' magnitudes A keeps (|c2| too, as fd_acc_merge does). */
static inline void sum2_merge(double *s, double *c, double *A, double s2, double c2, double A2)
{
    double e;
    fd_two_sum(*s, s2, s, &e);
    *c += c2;
    *c += e;
    *A += A2 + fabs(e) + fabs(c2);
}

/* The row's moments [§5.1-5.4]: st without R, and V = n var.  xt, xe: NULL for binary64 inputs
   x; otherwise element i is x_i + xt_i within xe_i (the exact sums of the skip op, §5.8), and the
   deviations below carry that error.  0: a non-finite input or an overflow. */
static inline __attribute__((always_inline)) int ln_row_moments(const double *x, const double *xt,
                                                                const double *xe, size_t n,
                                                                ln_stats *st, fd_num *Vout)
{
    if (n == 0 || n > ((size_t)1 << 20))
        return 0;
    const double nn = (double)n;

    /* [§5.1] a pivot mh: any double near the mean (a plain sum; its error does not matter, the
       deviations from it are exact and the correction T / n below is computed accurately). */
    double sl[4] = {0.0, 0.0, 0.0, 0.0}; /* four lanes: one chain is latency-bound */
    size_t i4 = 0;
    for (; i4 + 4 <= n; i4 += 4)
        for (int k = 0; k < 4; k++)
            sl[k] += x[i4 + (size_t)k];
    for (; i4 < n; i4++)
        sl[0] += x[i4];
    double s = (sl[0] + sl[1]) + (sl[2] + sl[3]);
    if (!isfinite(s))
        return 0; /* a NaN / Inf input or an overflow: the twin's special-value rules */
    const double mh = s / nn;

    /* [§5.2] x_i - mh = a_i + b_i exactly (TwoSum).  T = sum (a_i + b_i) = S - n mh by Sum2
       (TwoSum chain on a_i, the exact errors e_i and the b_i summed in round-to-nearest);
       W = sum (a_i + b_i)^2 ~ sum p_i + (e'_i + l_i) with p_i + pe_i = a_i^2 exact and
       l_i = RN(2 a_i b_i + pe_i).  Element i goes to lane i mod LANES (the tail to lane 0): LANES
       independent chains (one would be latency-bound), merged at the end by TwoSum, whose exact
       errors join the RN sums tc, wc like the e_i (the Sum2 bound holds for any order and tree of
       the RN sums: 3 merges add 6 leaves, within the charges below) [§5.2]. */
    enum { LANES = 4 };
    double ts[LANES] = {0}, tc[LANES] = {0}, TA[LANES] = {0};
    double ws[LANES] = {0}, wc[LANES] = {0}, B[LANES] = {0};
    double Eta = 0.0, EtaW = 0.0, Bsq = 0.0; /* §5.8 only */
    size_t i = 0;
    for (; i + LANES <= n; i += LANES)
        for (int k = 0; k < LANES; k++)
            ln_moment_step(x, xt, xe, i + (size_t)k, mh, &ts[k], &tc[k], &TA[k], &ws[k], &wc[k],
                           &B[k], &Eta, &EtaW, &Bsq);
    for (; i < n; i++)
        ln_moment_step(x, xt, xe, i, mh, &ts[0], &tc[0], &TA[0], &ws[0], &wc[0], &B[0], &Eta,
                       &EtaW, &Bsq);
    for (int k = 1; k < LANES; k++) {
        sum2_merge(&ts[0], &tc[0], &TA[0], ts[k], tc[k], TA[k]);
        sum2_merge(&ws[0], &wc[0], &B[0], ws[k], wc[k], B[k]);
    }
    if (!isfinite(ws[0]) || !isfinite(wc[0]) || !isfinite(ts[0]) || !isfinite(tc[0]))
        return 0;
    fd_num T;
    fd_two_sum(ts[0], tc[0], &T.h, &T.l);
    T.e = fd_up((4.0 * nn + 2.0) * U * TA[0] + Eta);
    double wh, wl;
    fd_two_sum(ws[0], wc[0], &wh, &wl);
    double EW = fd_up((3.0 * nn + 2.0) * U * B[0] + 2.0 * U * U * ws[0] + 6.0 * nn * ETA + EtaW +
                      2.0 * Bsq);

    /* [§5.3] delta = mu - mh = T / n; the mean mu = mh + delta */
    fd_num dl = fd_div_d(T, nn);
    const double th = dl.h, tl = dl.l;
    fd_num mu;
    double m2;
    fd_two_sum(mh, th, &mu.h, &m2);
    mu.l = m2 + tl;
    mu.e = fd_up(dl.e + 2.0 * U * fabs(mu.l) + ETA);

    /* [§5.4] n var = W - n delta^2 (the deviations from mu sum to zero) */
    double t = (nn * th) * th;
    double c2 = wl - t;
    fd_num V;
    fd_two_sum(wh, c2, &V.h, &V.l);
    V.e = fd_up(EW + nn * (dl.e + fabs(tl)) * (2.0 * fabs(th) + 2.0 * fabs(tl) + dl.e) +
                3.0 * U * t + 2.0 * U * fabs(c2) + 2.0 * ETA);

    st->mh = mh, st->th = th, st->tl = tl, st->dle = dl.e, st->mu = mu;
    *Vout = V;
    return 1;
}

/* ---- A row's moments remembered between the twin and the bound (issue 12) ----
   `check` computes on each block of rows the twin's outputs (ln_forward_core) and then the bound's
   statistics (layernorm_row_bound_stats_fast), both from ln_row_moments of the same rows.
   Between rn_fast_memo_begin(x, count) and rn_fast_memo_end() (the caller does not change
   x[0..count) in between), this thread remembers the moments of each row within x[0..count) it
   sums, by the row's address and length, and the bound takes them from there instead of summing
   again.  Rows elsewhere (a callee's scratch copy, whose address a later scratch may reuse with
   other values) are neither remembered nor looked up.  The moments are a function of the row's
   values alone: the same bits either way.  Direct-mapped by the row's index in memory; a
   collision costs a recompute, nothing else. */
enum { MEMO_SLOTS = 512 };
typedef struct {
    const double *x;
    size_t n;
    ln_stats st;
    fd_num V;
} memo_slot;
static _Thread_local memo_slot memo[MEMO_SLOTS];
static _Thread_local int memo_on;
static _Thread_local const double *memo_lo, *memo_hi; /* the caller's x[0..count) */

void rn_fast_memo_begin(const double *x, size_t count)
{
    for (int k = 0; k < MEMO_SLOTS; k++)
        memo[k].x = NULL;
    memo_lo = x, memo_hi = x ? x + count : NULL;
    memo_on = x != NULL;
}

void rn_fast_memo_end(void) { memo_on = 0; }

/* Row (x, n) lies in the caller's x[0..count) (compared as addresses: the memo's range). */
static int memo_covers(const double *x, size_t n)
{
    uintptr_t a = (uintptr_t)x, lo = (uintptr_t)memo_lo, hi = (uintptr_t)memo_hi;
    return memo_on && n && a >= lo && a <= hi && n <= (hi - a) / sizeof *x;
}

static memo_slot *memo_slot_of(const double *x, size_t n)
{
    return &memo[((uintptr_t)x / sizeof *x / n) % MEMO_SLOTS];
}

static void memo_put(const double *x, size_t n, const ln_stats *st, const fd_num *V)
{
    if (memo_covers(x, n)) {
        memo_slot *m = memo_slot_of(x, n);
        m->x = x, m->n = n, m->st = *st, m->V = *V;
    }
}

/* ln_row_moments of (x, n) with no skip inputs, from the memo when it has them (inlined: each
   FD_CLONES clone of the caller gets its own copy of the sums, with its fma). */
static inline __attribute__((always_inline)) int ln_row_moments_memo(const double *x, size_t n,
                                                                     ln_stats *st, fd_num *V)
{
    if (memo_covers(x, n)) {
        const memo_slot *m = memo_slot_of(x, n);
        if (m->x == x && m->n == n) {
            *st = m->st, *V = m->V;
            return 1;
        }
    }
    return ln_row_moments(x, NULL, NULL, n, st, V);
}

/* The statistics of §5.1-5.5: the moments and rstd.  0: fall back. */
static inline __attribute__((always_inline)) int ln_row_stats(const double *x, const double *xt,
                                                              const double *xe, size_t n,
                                                              double eps, ln_stats *st)
{
    fd_num V;
    if (!(eps >= 0 && eps < INFINITY) || !ln_row_moments(x, xt, xe, n, st, &V))
        return 0;
    if (!xt)
        memo_put(x, n, st, &V);
    /* [§5.5] rstd = 1 / sqrt(var + eps) = 1 / sqrt((n var + n eps) / n) */
    if (!fd_rstd(V, (double)n, eps, &st->R))
        return 0; /* var + eps not safely away from 0 (or out of range): the twin decides */
    return 1;
}

static inline __attribute__((always_inline)) int
ln_forward_core(double *y, double *mean, double *rstd, const double *x, const double *xt,
                const double *xe, const double *gamma, const double *beta, size_t n, double eps,
                rn_dtype out)
{
    ln_stats st;
    if (!ln_row_stats(x, xt, xe, n, eps, &st))
        return 0;
    const double mh = st.mh, th = st.th, tl = st.tl;
    const fd_num R = st.R;

    if (!fd_certify_num(st.mu, out, mean) || !fd_certify_num(R, out, rstd))
        return 0;

    /* [§5.6] y_i.  K bounds |rstd|.  In blocks of YB elements: the values hi + lo and their error
       bounds first (branch-free, so the compiler vectorizes it: the same operations on each
       element, hence the same bits), then their certification. */
    const double K = fabs(R.h) + fabs(R.l) + R.e;
    enum { YB = 256 };
    double lo_b[YB], err_b[YB];
    for (size_t i0 = 0; i0 < n; i0 += YB) {
        size_t m = n - i0 < YB ? n - i0 : YB;
        const double *xb = x + i0, *gb = gamma + i0, *bb = beta + i0;
        const double *xtb = xt ? xt + i0 : NULL, *xeb = xe ? xe + i0 : NULL;
        double *yb = y + i0;
        for (size_t j = 0; j < m; j++) {
            double g = gb[j];
            double a, b;
            fd_two_sum(xb[j], -mh, &a, &b);
            double eta = 0.0;
            if (xtb) { /* §5.8 */
                b += xtb[j];
                eta = xeb[j] + 2.0 * U * fabs(b);
            }
            double bp1 = b - th, bp = bp1 - tl;             /* d_i = a + bp within Ed */
            double Ed = st.dle + 2.0 * U * (fabs(bp1) + fabs(bp)) + ETA + eta;
            double p1, p2;
            fd_two_prod(a, g, &p1, &p2);
            double p2b = fma(bp, g, p2);                     /* P = d_i gamma_i = p1 + p2b within EP */
            double EP = fd_up(fabs(g) * Ed + 2.0 * U * fabs(p2b) + ETA);
            double m1, m2;
            fd_two_prod(p1, R.h, &m1, &m2);
            double f1 = fma(p2b, R.h, m2);
            double m2b = fma(p1, R.l, f1);                   /* P rstd = m1 + m2b */
            double y1, y2;
            fd_two_sum(m1, bb[j], &y1, &y2);
            double y2b = y2 + m2b;
            double Ey = EP * K + (fabs(p1) + fabs(p2b)) * R.e +
                        2.0 * U * (fabs(f1) + fabs(m2b) + fabs(y2b)) + fabs(p2b) * fabs(R.l) + 2.0 * ETA;
            yb[j] = y1, lo_b[j] = y2b, err_b[j] = fd_up(Ey);
        }
        if (out == RN_F64) { /* fd_certify's cheap test vectorized first (`check`'s twin) */
            double ok_b[YB];
            for (size_t j = 0; j < m; j++)
                ok_b[j] = fd_quick_accept_f64(yb[j], lo_b[j], err_b[j], &yb[j]);
            for (size_t j = 0; j < m; j++)
                if (ok_b[j] == 0.0 && !fd_certify(yb[j], lo_b[j], err_b[j], out, &yb[j]))
                    return 0;
        } else {
            for (size_t j = 0; j < m; j++)
                if (!fd_certify(yb[j], lo_b[j], err_b[j], out, &yb[j]))
                    return 0;
        }
    }
    return 1;
}

FD_CLONES int layernorm_row_forward_fast(double *y, double *mean, double *rstd, const double *x,
                                         const double *gamma, const double *beta, size_t n,
                                         double eps, rn_dtype out)
{
    return ln_forward_core(y, mean, rstd, x, NULL, NULL, gamma, beta, n, eps, out);
}

size_t layernorm_forward_fast(double *y, double *mean, double *rstd, const double *x,
                              const double *gamma, const double *beta, size_t rows, size_t n,
                              double eps, rn_dtype out, unsigned char *ok)
{
    size_t left = 0;
    long R = (long)rows;
#pragma omp parallel for schedule(static) reduction(+ : left) num_threads(rn_threads_for(rows * n))
    for (long k = 0; k < R; k++) {
        size_t r = (size_t)k;
        ok[r] = (unsigned char)layernorm_row_forward_fast(y + r * n, mean + r, rstd + r, x + r * n,
                                                          gamma, beta, n, eps, out);
        left += !ok[r];
    }
    rn_fast_stats_add(rows, left, n + 2);
    return left;
}

/* ------------------------------------------------------------------------------------------------
 * The statistics of the a-priori bound (ref/layernorm_bound.c) [§10.3]: mean, var and every
 * d_i = x_i - mean rounded to nearest binary64, and upper bounds (>= round-up) of mean|x| and
 * mean|x - mean|, from the moments of §5.1-5.4.  Each RN value is certified with FD_MPFR_SLACK
 * so that it is the very double the bound's MPFR path computes; the round-up values are >= that
 * path's (round-up of an upper end).  0: something is not certified (or not finite): the caller
 * runs its MPFR path on the row.
 */
/* One element's terms of the bound's sums, into one lane: |x| by Sum2 (s, c, A) and |d| =
   |dh + dl| (dh's sign, normalised; within Ed, |.| being 1-Lipschitz) by fd_acc_add (Ds, Dc, DA,
   DE, Dm: an fd_acc's fields). */
static inline __attribute__((always_inline)) void
bound_sums_step(double xv, double dh, double dl, double Ed, double *s, double *c, double *A,
                double *Ds, double *Dc, double *DA, double *DE, double *Dm)
{
    fd_acc q = {*Ds, *Dc, *DA, *DE, *Dm};
    fd_acc_add(&q, (fd_num){fabs(dh), dh < 0.0 ? -dl : dl, Ed});
    *Ds = q.s, *Dc = q.c, *DA = q.A, *DE = q.E, *Dm = q.m;
    double e;
    fd_two_sum(*s, fabs(xv), s, &e);
    *c += e;
    *A += fabs(e);
}

FD_CLONES int layernorm_row_bound_stats_fast(double *mean, double *var, double *absmean_up,
                                             double *devmean_up, double *d, size_t *undecided,
                                             size_t *nund, const double *x, size_t n)
{
    *nund = 0;
    ln_stats st;
    fd_num V;
    if (!ln_row_moments_memo(x, n, &st, &V))
        return 0;
    const double nn = (double)n, mh = st.mh, th = st.th, tl = st.tl;
    const double mag_m = fabs(st.mu.h) + fabs(st.mu.l) + st.mu.e; /* >= |mu| */
    if (!fd_certify_f64_slack(st.mu, mag_m, mean))
        return 0;
    /* |x| summed by Sum2 (as T in §5.2: (4n + 2) u TA), |d| by fd_acc; dmax >= max |d_i|.  In
       blocks of DB elements: d_i = dh + dl within Ed, its certification's cheap test
       (fd_quick_accept_f64) and dmax first (branch-free, vectorized), then the certifications the
       cheap test left and the sums, element i into lane i mod L of each sum (one chain is
       latency-bound; the lanes' operations side by side, so that they vectorize too), the lanes
       merged at the end as in §5.2 ("Lanes"). */
    enum { DB = 256, L = 4 };
    double as[L] = {0}, ac[L] = {0}, aA[L] = {0}, dmax = 0.0;
    double Ds[L] = {0}, Dc[L] = {0}, DA[L] = {0}, DE[L] = {0}, Dn[L] = {0}; /* fd_acc lanes */
    double dh_b[DB], dl_b[DB], ed_b[DB], ec_b[DB], ok_b[DB];
    for (size_t i0 = 0; i0 < n; i0 += DB) {
        size_t m = n - i0 < DB ? n - i0 : DB;
        const double *xb = x + i0;
        for (size_t j = 0; j < m; j++) {
            double a, b;
            fd_two_sum(xb[j], -mh, &a, &b);
            double bp1 = b - th, bp = bp1 - tl; /* d_i = a + bp within Ed [§5.6] */
            ed_b[j] = fd_up(st.dle + 2.0 * U * (fabs(bp1) + fabs(bp)) + ETA);
            fd_two_sum(a, bp, &dh_b[j], &dl_b[j]);
        }
#pragma omp simd reduction(max : dmax)
        for (size_t j = 0; j < m; j++) {
            double mag_d = fabs(dh_b[j]) + fabs(dl_b[j]) + ed_b[j];
            double ec = fd_up(ed_b[j] + FD_MPFR_SLACK * (mag_m + mag_d));
            dmax = dmax > mag_d ? dmax : mag_d; /* no NaN: the row and the enclosure are finite */
            ec_b[j] = ec;
            double r = 0.0;
            ok_b[j] = fd_quick_accept_f64(dh_b[j], dl_b[j], ec, &r); /* then r == dh */
        }
        for (size_t j = 0; j < m; j++) {
            if (ok_b[j] != 0.0)
                d[i0 + j] = dh_b[j];
            else if (!fd_certify(dh_b[j], dl_b[j], ec_b[j], RN_F64, &d[i0 + j]))
                undecided[(*nund)++] = i0 + j; /* the sums below need only the enclosure */
        }
        size_t j = 0;
        for (; j + L <= m; j += L)
            for (int k = 0; k < L; k++)
                bound_sums_step(xb[j + k], dh_b[j + k], dl_b[j + k], ed_b[j + k], &as[k], &ac[k],
                                &aA[k], &Ds[k], &Dc[k], &DA[k], &DE[k], &Dn[k]);
        for (; j < m; j++) { /* the last block's tail: lane j mod L, as i0 is a multiple of L */
            int k = (int)(j % L);
            bound_sums_step(xb[j], dh_b[j], dl_b[j], ed_b[j], &as[k], &ac[k], &aA[k], &Ds[k],
                            &Dc[k], &DA[k], &DE[k], &Dn[k]);
        }
    }
    fd_acc D[L];
    for (int k = 0; k < L; k++)
        D[k] = (fd_acc){Ds[k], Dc[k], DA[k], DE[k], Dn[k]};
    for (int k = 1; k < L; k++) {
        fd_acc_merge(&D[0], &D[k]);
        sum2_merge(&as[0], &ac[0], &aA[0], as[k], ac[k], aA[k]);
    }
    fd_num A;
    fd_two_sum(as[0], ac[0], &A.h, &A.l);
    A.e = fd_up((4.0 * nn + 2.0) * U * aA[0]);
    if (!isfinite(A.h) || !isfinite(A.l))
        return 0;
    fd_num Am = fd_div_d(A, nn), Dm = fd_div_d(fd_acc_value(&D[0]), nn), var_n = fd_div_d(V, nn);
    double mag_v = fabs(var_n.h) + fabs(var_n.l) + var_n.e;
    return isfinite(mag_v) && fd_certify_stat_up(Am, FD_MPFR_SLACK * fabs(Am.h), absmean_up) &&
           fd_certify_stat_up(Dm, FD_MPFR_SLACK * (mag_m + fabs(Dm.h)), devmean_up) &&
           fd_certify_f64_slack(var_n, mag_m * dmax + mag_v, var);
}

/* ------------------------------------------------------------------------------------------------
 * Backward [§5.7]: for row r, g_i = dy_i gamma_i (TwoProd, exact), xhat_i = d_i rstd, G = sum g,
 * H = sum g xhat (fd_acc), dx_i = rstd (g_i - G/n - xhat_i H/n); the column sums
 * dgamma_j = sum_r dy_rj xhat_rj and dbeta_j = sum_r dy_rj in per-thread fd_acc arrays, merged.
 * skip_layernorm's backward [§5.9] is the same computation on the exact sums v = x + skip (+ bias)
 * (s_i + t_i within e_i, fd_skip_split, the inputs of §5.8), with one more column sum,
 * dbias_j = sum_r dx_rj, of the dx enclosures (not of the rounded dx).  A dx that is not certified
 * leaves the row's dx to the twin (the row's terms of the sums are formed first, dbias's too: its
 * enclosure holds dx all the same; return 2, row_ok); any other failure (a non-finite dy / gamma /
 * sum, a sum not certified) hands the whole call to the twin (whose column sums need every row's
 * exact state).
 */

/* xhat_i = (v_i - mh - delta) rstd as an fd_num, v_i = x_i, or x_i + xt_i within xe_i when xt is
   not NULL (§5.9): d_i of §5.6 (a, b = TwoSum(x_i, -mh); b absorbs xt_i as in §5.8), times rstd. */
static inline fd_num ln_xhat(const ln_stats *st, const double *x, const double *xt,
                             const double *xe, size_t i)
{
    double a, b, eta = 0.0;
    fd_two_sum(x[i], -st->mh, &a, &b);
    if (xt) { /* v_i - mh = a + b within eta [§5.8] */
        b += xt[i];
        eta = xe[i] + 2.0 * U * fabs(b);
    }
    double bp1 = b - st->th, bp = bp1 - st->tl;
    fd_num d = {a, bp, fd_up(st->dle + 2.0 * U * (fabs(bp1) + fabs(bp)) + ETA + eta)};
    return fd_mul(d, st->R);
}

/* One row: dx (certified) and the row's terms added to the column accumulators dg, db, and dbs
   (dbias, when skip is not NULL).  skip == NULL: LayerNorm of x.  Otherwise the LayerNorm of the
   exact sums x + skip (+ bias), split by fd_skip_split into ws (3n doubles).  xh: n fd_num. */
FD_CLONES static int ln_row_backward_fast(double *dx, fd_acc *dg, fd_acc *db, fd_acc *dbs,
                                          const double *dy, const double *x, const double *skip,
                                          const double *bias, const double *gamma, size_t n,
                                          double eps, rn_dtype out, fd_num *xh, double *ws)
{
    const double *xt = NULL, *xe = NULL;
    if (skip) { /* [§5.9] v_i = s_i + t_i within e_i */
        double *s = ws, *t = ws + n, *e = ws + 2 * n;
        for (size_t i = 0; i < n; i++)
            if (!fd_skip_split(x[i], skip[i], bias ? &bias[i] : NULL, &s[i], &t[i], &e[i]))
                return 0; /* a non-finite addend or an overflow: the twin's special values */
        x = s, xt = t, xe = e;
    }
    ln_stats st;
    if (!ln_row_stats(x, xt, xe, n, eps, &st))
        return 0;
    fd_acc G = {0}, H = {0};
    for (size_t i = 0; i < n; i++) {
        if (!isfinite(dy[i]) || !isfinite(gamma[i]))
            return 0; /* the twin's special-value arithmetic */
        double g1, g2;
        fd_two_prod(dy[i], gamma[i], &g1, &g2);
        fd_num g = {g1, g2, 0.5 * ETA};
        xh[i] = ln_xhat(&st, x, xt, xe, i);
        fd_acc_add(&G, g);
        fd_acc_add(&H, fd_mul(g, xh[i]));
        fd_acc_add(&dg[i], fd_mul(fd_exact(dy[i], 0.0), xh[i]));
        fd_acc_add(&db[i], fd_exact(dy[i], 0.0));
    }
    const double nn = (double)n;
    fd_num mg = fd_div_d(fd_acc_value(&G), nn), mgx = fd_div_d(fd_acc_value(&H), nn);
    int all = 1;
    for (size_t i = 0; i < n; i++) {
        double g1, g2;
        fd_two_prod(dy[i], gamma[i], &g1, &g2);
        fd_num g = {g1, g2, 0.5 * ETA};
        fd_num inner = fd_add(fd_add(g, fd_neg(mg)), fd_neg(fd_mul(xh[i], mgx)));
        fd_num d = fd_mul(inner, st.R);
        if (!fd_certify_num(d, out, &dx[i])) {
            if (!dbs)
                return 2; /* dgamma's and dbeta's terms of the row are all in: dx alone is left */
            all = 0; /* the enclosure holds dx_i all the same: dbias takes it, dx is left */
        }
        if (dbs)
            fd_acc_add(&dbs[i], d); /* [§5.9] dbias_j = sum_r dx_rj, each within d.e */
    }
    return all ? 1 : 2;
}

/* ---- exact_cols (norm_fast.h): sums of doubles, exact ---- */

struct exact_cols {
    size_t k;
    mpfr_t *s;
};

exact_cols *exact_cols_new(size_t k)
{
    exact_cols *c = calloc(1, sizeof *c);
    if (!c || !(c->s = malloc((k ? k : 1) * sizeof *c->s))) {
        free(c);
        return NULL;
    }
    c->k = k;
    for (size_t t = 0; t < k; t++) {
        mpfr_init2(c->s[t], 2200);
        mpfr_set_zero(c->s[t], 1);
    }
    return c;
}

void exact_cols_add(exact_cols *c, size_t t, double v)
{
    mpfr_add_d(c->s[t], c->s[t], v, MPFR_RNDN); /* exact */
}

double exact_cols_round(exact_cols *c, size_t t, rn_dtype out)
{
    if (mpfr_zero_p(c->s[t]))
        mpfr_set_zero(c->s[t], 1);
    return rn_round_mpfr(c->s[t], out);
}

void exact_cols_free(exact_cols *c)
{
    if (!c)
        return;
    for (size_t t = 0; t < c->k; t++)
        mpfr_clear(c->s[t]);
    free(c->s);
    free(c);
}

/* dbeta_j = sum_r dy_rj exactly, rounded once, for the columns whose double-double enclosure
   straddles a rounding boundary: a sum of f32 values is exactly a midpoint of the f32 output in a
   few columns of a thousand, a sum of few f16 / bf16 values often of a narrower format.  (NaN:
   out of memory; the all-rows call then fails, and the twin decides.) */
static double column_sum_exact(const double *dy, size_t rows, size_t n, size_t j, rn_dtype out)
{
    exact_cols *c = exact_cols_new(1);
    if (!c)
        return NAN;
    for (size_t r = 0; r < rows; r++)
        exact_cols_add(c, 0, dy[r * n + j]);
    double v = exact_cols_round(c, 0, out);
    exact_cols_free(c);
    return v;
}

/* ---- norm_cols (norm_fast.h): the column sums across calls, per thread ---- */

norm_cols *norm_cols_new(int ncols, int skip, size_t n, int threads)
{
    if (ncols < 1 || ncols > 3 || threads < 1 || n == 0 || n > ((size_t)1 << 20))
        return NULL;
    norm_cols *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    size_t T = (size_t)threads;
    c->ncols = ncols, c->threads = threads, c->n = n;
    c->rows = calloc(T, sizeof *c->rows);
    c->acc = calloc(T * (size_t)ncols * n, sizeof *c->acc);
    c->xh = malloc(T * n * sizeof *c->xh);
    c->ws = skip ? malloc(T * 3 * n * sizeof *c->ws) : NULL;
    if (!c->rows || !c->acc || !c->xh || (skip && !c->ws)) {
        norm_cols_free(c);
        return NULL;
    }
    return c;
}

void norm_cols_free(norm_cols *c)
{
    if (!c)
        return;
    free(c->rows), free(c->acc), free(c->xh), free(c->ws);
    free(c);
}

/* Thread 0's columns += the others' (any order: the certified values do not depend on it). */
int norm_cols_merge(norm_cols *c)
{
    size_t rows = 0;
    for (int t = 0; t < c->threads; t++)
        rows += c->rows[t];
    if (rows > ((size_t)1 << 30))
        return 0;
    for (int t = 1; !c->merged && t < c->threads; t++)
        for (int k = 0; k < c->ncols; k++) {
            fd_acc *q = norm_cols_acc(c, 0, k), *r = norm_cols_acc(c, t, k);
            for (size_t j = 0; j < c->n; j++)
                fd_acc_merge(&q[j], &r[j]);
        }
    c->merged = 1;
    return 1;
}

int norm_cols_value(norm_cols *c, int k, size_t j, rn_dtype out, double *v)
{
    return c->merged && k < c->ncols && j < c->n &&
           fd_certify_num(fd_acc_value(&norm_cols_acc(c, 0, k)[j]), out, v);
}

int layernorm_backward_rows_fast(norm_cols *c, int t, double *dx, const double *dy,
                                 const double *x, const double *skip, const double *bias,
                                 const double *gamma, size_t rows, size_t n, double eps,
                                 rn_dtype out, unsigned char *row_ok)
{
    if (n != c->n || t < 0 || t >= c->threads || c->ncols != (skip ? 3 : 2) || (skip && !c->ws))
        return 0;
    fd_acc *dg = norm_cols_acc(c, t, 0), *db = norm_cols_acc(c, t, 1);
    fd_acc *dbs = skip ? norm_cols_acc(c, t, 2) : NULL;
    double *ws = skip ? c->ws + (size_t)t * 3 * n : NULL;
    int all = 1;
    for (size_t r = 0; r < rows; r++)
        if (!norm_cols_row(ln_row_backward_fast(dx + r * n, dg, db, dbs, dy + r * n, x + r * n,
                                                skip ? skip + r * n : NULL, bias, gamma, n, eps,
                                                out, c->xh + (size_t)t * n, ws),
                           row_ok, r, &all))
            return 0;
    c->rows[t] += rows;
    return all ? 1 : 2;
}

/* The backward of LayerNorm (skip == NULL; dbias not written) or of skip_layernorm (x + skip
   (+ bias); dbias [n] the column sums of dx), all rows: 1 when every output was certified.  Each
   thread runs layernorm_backward_rows_fast on its share of the rows (OpenMP's static split),
   into its own columns, merged at the end. */
static int ln_backward_calls(double *dx, double *dgamma, double *dbeta, double *dbias,
                             const double *dy, const double *x, const double *skip,
                             const double *bias, const double *gamma, size_t rows, size_t n,
                             double eps, rn_dtype out, unsigned char *row_ok)
{
    if (n == 0 || rows == 0 || rows > ((size_t)1 << 30) || n > ((size_t)1 << 20))
        return 0;
    int nt = rn_threads_for(rows * n), ok = 1, all = 1;
    norm_cols *c = norm_cols_new(skip ? 3 : 2, skip != NULL, n, nt);
    if (!c)
        return 0;
#pragma omp parallel num_threads(nt) reduction(&& : ok, all)
    {
        int t = 0, T = 1;
#ifdef _OPENMP
        t = omp_get_thread_num(), T = omp_get_num_threads();
#endif
        size_t r0 = rows * (size_t)t / (size_t)T, r1 = rows * (size_t)(t + 1) / (size_t)T;
        int k = layernorm_backward_rows_fast(c, t, dx + r0 * n, dy + r0 * n, x + r0 * n,
                                             skip ? skip + r0 * n : NULL, bias, gamma, r1 - r0,
                                             n, eps, out, row_ok ? row_ok + r0 : NULL);
        ok = k != 0, all = k == 1;
    }
    ok = ok && norm_cols_merge(c);
    for (size_t j = 0; ok && j < n; j++) {
        ok = norm_cols_value(c, 0, j, out, &dgamma[j]);
        if (ok && !norm_cols_value(c, 1, j, out, &dbeta[j])) {
            dbeta[j] = column_sum_exact(dy, rows, n, j, out); /* a tie or an exact zero */
            if (isnan(dbeta[j]))
                ok = 0; /* out of memory (dy is finite here: the rows were certified) */
        }
        if (ok && skip)
            ok = norm_cols_value(c, 2, j, out, &dbias[j]);
    }
    norm_cols_free(c);
    return ok ? (all ? 1 : 2) : 0;
}

int layernorm_backward_fast(double *dx, double *dgamma, double *dbeta, const double *dy,
                            const double *x, const double *gamma, size_t rows, size_t n,
                            double eps, rn_dtype out, unsigned char *row_ok)
{
    if (n == 0 || rows == 0 || rows > ((size_t)1 << 30))
        return 0; /* not tried (not counted) */
    int ok = ln_backward_calls(dx, dgamma, dbeta, NULL, dy, x, NULL, NULL, gamma, rows, n, eps,
                               out, row_ok);
    rn_fast_stats_add(1, ok != 1, rows * n + 2 * n);
    return ok;
}

int skip_layernorm_backward_fast(double *dx, double *dbias, double *dgamma, double *dbeta,
                                 const double *dy, const double *x, const double *skip,
                                 const double *gamma, const double *bias, size_t rows, size_t n,
                                 double eps, rn_dtype out)
{
    if (n == 0 || rows == 0 || rows > ((size_t)1 << 30))
        return 0; /* not tried (not counted) */
    int ok = ln_backward_calls(dx, dgamma, dbeta, dbias, dy, x, skip, bias, gamma, rows, n, eps,
                               out, NULL);
    rn_fast_stats_add(1, !ok, rows * n + 3 * n); /* dx (= dskip), dbias, dgamma, dbeta */
    return ok;
}

/* ------------------------------------------------------------------------------------------------
 * skip_layernorm forward [§5.8]: the exact sum v_i = x_i + skip_i (+ bias_i) as s_i + t_i within
 * e_i (fd_skip_sum), its rounding (the `sum` output), then the LayerNorm of v by ln_forward_core.
 * ws: scratch of 3n doubles.
 */
FD_CLONES int skip_layernorm_row_forward_fast(double *y, double *mean, double *rstd, double *sum,
                                              const double *x, const double *skip,
                                              const double *gamma, const double *beta,
                                              const double *bias, size_t n, double eps,
                                              rn_dtype out, double *ws)
{
    double *s = ws, *t = ws + n, *e = ws + 2 * n;
    for (size_t i = 0; i < n; i++)
        if (!fd_skip_sum(x[i], skip[i], bias ? &bias[i] : NULL, &s[i], &t[i], &e[i], out, &sum[i]))
            return 0;
    return ln_forward_core(y, mean, rstd, s, t, e, gamma, beta, n, eps, out);
}

size_t skip_layernorm_forward_fast(double *y, double *mean, double *rstd, double *sum,
                                   const double *x, const double *skip, const double *gamma,
                                   const double *beta, const double *bias, size_t rows, size_t n,
                                   double eps, rn_dtype out, unsigned char *ok)
{
    size_t left = 0;
    long R = (long)rows;
#pragma omp parallel num_threads(rn_threads_for(rows * n)) reduction(+ : left)
    {
        double *ws = malloc(3 * n * sizeof *ws);
#pragma omp for schedule(static)
        for (long k = 0; k < R; k++) {
            size_t r = (size_t)k;
            ok[r] = ws && skip_layernorm_row_forward_fast(y + r * n, mean + r, rstd + r,
                                                          sum + r * n, x + r * n, skip + r * n,
                                                          gamma, beta, bias, n, eps, out, ws);
            left += !ok[r];
        }
        free(ws);
    }
    rn_fast_stats_add(rows, left, 2 * n + 2);
    return left;
}
