/* Fast path of the RMSNorm forward twin (ref/rmsnorm_mpfr.c): rstd and every y_i of a row in
 * double-double with a rigorous error bound, certified by ref/fast_dd.h; the twin takes the rows
 * where something is not certified.  Derivation: specs/fast-path.md §6.
 *
 *   P      sum x_i^2: x_i^2 = p_i + pe_i exactly (TwoProd), Sum2 over the p_i              [§6.1]
 *   rstd   1 / sqrt(P / n + eps) (fd_rstd)                                              [§6.2]
 *   y_i    (x_i w_i) rstd, w_i = gamma_i or 1 + gamma_i = wh + wl exactly (TwoSum)        [§6.3]
 * An exact zero y_i (x_i = 0 or w_i = 0) is +0 (the twin's convention); no cancellation occurs
 * anywhere else, so only ties, all-zero rows with eps = 0, NaN/Inf and the range limits of
 * fd_rsqrt fall back. */
#include <math.h>
#include <stdlib.h>

#ifdef _OPENMP
#include <omp.h>
#endif

#include "fast_dd.h"
#include "norm_fast.h"

#define U FD_U
#define ETA FD_ETA

/* The sum of squares P of a row (specs/fast-path.md §6.1), v_i = x_i, or (xt not NULL) the skip
   ops' exact sums v_i = x_i + xt_i within xe_i (§6.5: the cross terms 2 x_i xt_i by fma, xt_i^2
   dropped and charged, the perturbation xe_i charged); 0: fall back (non-finite, overflow). */
static inline __attribute__((always_inline)) int rms_row_sumsq(const double *x, const double *xt,
                                                               const double *xe, size_t n,
                                                               fd_num *Pout)
{
    if (n == 0 || n > ((size_t)1 << 20))
        return 0;
    const double nn = (double)n;

    /* [§6.1] P = s + sum (e_i + pe_i); c their RN-sum, B the RN-sum of their magnitudes */
    double s = 0.0, c = 0.0, B = 0.0, Bsq = 0.0, EtaW = 0.0;
    for (size_t i = 0; i < n; i++) {
        double p, pe, e;
        fd_two_prod(x[i], x[i], &p, &pe);
        fd_two_sum(s, p, &s, &e);
        c += e;
        if (xt) { /* [§6.5] l_i = RN(2 x_i xt_i + pe_i) in place of pe_i */
            double l = fma(2.0 * x[i], xt[i], pe);
            c += l;
            B += fabs(e) + fabs(l);
            Bsq += xt[i] * xt[i];
            EtaW += (2.0 * (fabs(x[i]) + fabs(xt[i])) + xe[i]) * xe[i];
        } else {
            c += pe;
            B += fabs(e) + fabs(pe);
        }
    }
    if (!isfinite(s) || !isfinite(c))
        return 0; /* NaN / Inf in x, or x^2 overflows: the twin */
    fd_num P;
    fd_two_sum(s, c, &P.h, &P.l);
    P.e = xt ? fd_up((4.0 * nn + 4.0) * U * B + nn * ETA + 2.0 * Bsq + EtaW)
             : fd_up((4.0 * nn + 2.0) * U * B + nn * ETA);
    *Pout = P;
    return 1;
}

/* rstd of a row (§6.1-6.2); 0: fall back (non-finite, overflow, ms + eps near 0 or out of
   range). */
static inline __attribute__((always_inline)) int rms_row_rstd(const double *x, const double *xt,
                                                              const double *xe, size_t n,
                                                              double eps, fd_num *Rout)
{
    fd_num P;
    if (!(eps >= 0 && eps < INFINITY) || !rms_row_sumsq(x, xt, xe, n, &P))
        return 0;
    /* [§6.2] */
    return fd_rstd(P, (double)n, eps, Rout);
}

/* v_i as an fd_num: x_i exactly, or x_i + xt_i within xe_i. */
static inline fd_num rms_v(const double *x, const double *xt, const double *xe, size_t i)
{
    return xt ? (fd_num){x[i], xt[i], xe[i]} : fd_exact(x[i], 0.0);
}

/* The statistics of the a-priori bound (ref/rmsnorm_bound.c) [§10.4]: ms = mean(x^2) and
   r = 1 / sqrt(ms + eps), each rounded to nearest binary64 and certified with FD_MPFR_SLACK (the
   bound's MPFR path computes the same doubles).  0: the caller runs its MPFR path. */
FD_CLONES int rmsnorm_row_bound_stats_fast(double *ms, double *r, const double *x, size_t n,
                                           double eps)
{
    fd_num P, R;
    if (!(eps >= 0 && eps < INFINITY) || !rms_row_sumsq(x, NULL, NULL, n, &P) ||
        !fd_rstd(P, (double)n, eps, &R))
        return 0;
    fd_num M = fd_div_d(P, (double)n);
    return fd_certify_f64_slack(M, fabs(M.h) + fabs(M.l) + M.e, ms) &&
           fd_certify_f64_slack(R, fabs(R.h) + fabs(R.l) + R.e, r);
}

/* The row sums of RMSNorm's backward bound (ref/rmsnorm_bound.c) [§10.3], for g_i = dy_i w_i
   (w_i the binary64 weights): c = RN(mean(g x)), certified with FD_MPFR_SLACK (the MPFR path's
   products are exact at 256 bits, its sum and division within 2^-255 |c|), and the upper
   statistics FD_STAT_UP of mean|g x| and mean|g| (§10.2).  g x = fd_mul(g, x) with g exact by
   TwoProd (within eta/2); |g x| has the sign of its head.  0: a non-finite value or something
   not certified (the caller runs its MPFR path). */
FD_CLONES int rmsnorm_row_bwd_bound_sums_fast(double *c, double *C_up, double *G_up,
                                              const double *dy, const double *w, const double *x,
                                              size_t n)
{
    if (n == 0 || n > ((size_t)1 << 20))
        return 0;
    fd_acc S = {0}, SA = {0}, GA = {0};
    for (size_t i = 0; i < n; i++) {
        if (!isfinite(dy[i]) || !isfinite(w[i]) || !isfinite(x[i]))
            return 0;
        double g1, g2;
        fd_two_prod(dy[i], w[i], &g1, &g2);
        fd_num g = {g1, g2, 0.5 * ETA};
        fd_num q = fd_mul(g, fd_exact(x[i], 0.0));
        fd_acc_add(&S, q);
        fd_acc_add(&SA, (fd_num){fabs(q.h), q.h < 0.0 ? -q.l : q.l, q.e});
        fd_acc_add(&GA, (fd_num){fabs(g.h), g.h < 0.0 ? -g.l : g.l, g.e});
    }
    const double nn = (double)n;
    fd_num cm = fd_div_d(fd_acc_value(&S), nn), Cm = fd_div_d(fd_acc_value(&SA), nn),
           Gm = fd_div_d(fd_acc_value(&GA), nn);
    if (!isfinite(cm.h) || !isfinite(cm.l) || !isfinite(cm.e))
        return 0;
    return fd_certify_f64_slack(cm, fabs(cm.h) + fabs(cm.l) + cm.e, c) &&
           fd_certify_stat_up(Cm, FD_MPFR_SLACK * fabs(Cm.h), C_up) &&
           fd_certify_stat_up(Gm, FD_MPFR_SLACK * fabs(Gm.h), G_up);
}

FD_CLONES int rmsnorm_row_forward_fast(double *y, double *rstd, const double *x, const double *gamma,
                             size_t n, double eps, int offset, rn_dtype out)
{
    fd_num R;
    if (!rms_row_rstd(x, NULL, NULL, n, eps, &R) || !fd_certify_num(R, out, rstd))
        return 0;

    /* [§6.3] */
    const double K = fabs(R.h) + fabs(R.l) + R.e;
    for (size_t i = 0; i < n; i++) {
        if (!isfinite(gamma[i]))
            return 0; /* the twin's special-value rules (0 * Inf is NaN) */
        double wh = gamma[i], wl = 0.0;
        if (offset)
            fd_two_sum(1.0, gamma[i], &wh, &wl);
        if (x[i] == 0.0 || (wh == 0.0 && wl == 0.0)) {
            y[i] = 0.0; /* an exact zero: +0 */
            continue;
        }
        double p1, p2;
        fd_two_prod(x[i], wh, &p1, &p2);
        double p2b = fma(x[i], wl, p2);                  /* x w = p1 + p2b within EP */
        double EP = fd_up(2.0 * U * fabs(p2b) + ETA);
        double m1, m2;
        fd_two_prod(p1, R.h, &m1, &m2);
        double f1 = fma(p2b, R.h, m2);
        double m2b = fma(p1, R.l, f1);                   /* x w rstd = m1 + m2b */
        double Ey = EP * K + (fabs(p1) + fabs(p2b)) * R.e + 2.0 * U * (fabs(f1) + fabs(m2b)) +
                    fabs(p2b) * fabs(R.l) + 2.0 * ETA;
        if (!fd_certify(m1, m2b, fd_up(Ey), out, &y[i]))
            return 0;
    }
    return 1;
}

size_t rmsnorm_forward_fast(double *y, double *rstd, const double *x, const double *gamma,
                            size_t rows, size_t n, double eps, int offset, rn_dtype out,
                            unsigned char *ok)
{
    size_t left = 0;
    long R = (long)rows;
#pragma omp parallel for schedule(static) reduction(+ : left) num_threads(rn_threads_for(rows * n))
    for (long k = 0; k < R; k++) {
        size_t r = (size_t)k;
        ok[r] = (unsigned char)rmsnorm_row_forward_fast(y + r * n, rstd + r, x + r * n, gamma, n,
                                                        eps, offset, out);
        left += !ok[r];
    }
    rn_fast_stats_add(rows, left, n + 1);
    return left;
}

/* ------------------------------------------------------------------------------------------------
 * Backward [§6.4]: g_i = dy_i w_i, xhat_i = x_i rstd, H = sum g xhat, dx_i = rstd (g_i - xhat_i H/n),
 * dgamma_j = sum_r dy_rj xhat_rj (per-thread fd_acc columns, merged).  skip_rmsnorm's backward
 * [§6.6]: the same on the exact sums v = x + skip (+ bias) (s_i + t_i within e_i, fd_skip_split),
 * and dbias_j = sum_r dx_rj.  What falls back, and how, as for LayerNorm (ref/layernorm_fast.c).
 */

/* One row: dx (certified), the row's terms added to dg (and to dbs, dbias, when skip is not
   NULL: then the row is the exact sums x + skip (+ bias), split into ws, 3n doubles). */
FD_CLONES static int rms_row_backward_fast(double *dx, fd_acc *dg, fd_acc *dbs, const double *dy,
                                           const double *x, const double *skip,
                                           const double *bias, const double *gamma, size_t n,
                                           double eps, int offset, rn_dtype out, double *ws)
{
    const double *xt = NULL, *xe = NULL;
    if (skip) { /* [§6.6] v_i = s_i + t_i within e_i */
        double *s = ws, *t = ws + n, *e = ws + 2 * n;
        for (size_t i = 0; i < n; i++)
            if (!fd_skip_split(x[i], skip[i], bias ? &bias[i] : NULL, &s[i], &t[i], &e[i]))
                return 0;
        x = s, xt = t, xe = e;
    }
    fd_num R;
    if (!rms_row_rstd(x, xt, xe, n, eps, &R))
        return 0;
    fd_acc H = {0};
    for (size_t i = 0; i < n; i++) {
        if (!isfinite(dy[i]) || !isfinite(gamma[i]))
            return 0;
        double wh = gamma[i], wl = 0.0;
        if (offset)
            fd_two_sum(1.0, gamma[i], &wh, &wl);
        fd_num g = fd_mul(fd_exact(dy[i], 0.0), fd_exact(wh, wl));
        fd_num xh = fd_mul(rms_v(x, xt, xe, i), R);
        fd_acc_add(&H, fd_mul(g, xh));
        fd_acc_add(&dg[i], fd_mul(fd_exact(dy[i], 0.0), xh));
    }
    fd_num mgx = fd_div_d(fd_acc_value(&H), (double)n);
    int all = 1;
    for (size_t i = 0; i < n; i++) {
        double wh = gamma[i], wl = 0.0;
        if (offset)
            fd_two_sum(1.0, gamma[i], &wh, &wl);
        fd_num g = fd_mul(fd_exact(dy[i], 0.0), fd_exact(wh, wl));
        fd_num xh = fd_mul(rms_v(x, xt, xe, i), R);
        fd_num inner = fd_add(g, fd_neg(fd_mul(xh, mgx)));
        fd_num d = fd_mul(inner, R);
        if (!fd_certify_num(d, out, &dx[i])) {
            if (!dbs)
                return 2; /* dgamma's terms of the row are all in: dx alone is left */
            all = 0; /* the enclosure holds dx_i all the same: dbias takes it, dx is left */
        }
        if (dbs)
            fd_acc_add(&dbs[i], d); /* [§6.6] dbias_j = sum_r dx_rj */
    }
    return all ? 1 : 2;
}

int rmsnorm_backward_rows_fast(norm_cols *c, int t, double *dx, const double *dy, const double *x,
                               const double *skip, const double *bias, const double *gamma,
                               size_t rows, size_t n, double eps, int offset, rn_dtype out,
                               unsigned char *row_ok)
{
    if (n != c->n || t < 0 || t >= c->threads || c->ncols != (skip ? 2 : 1) || (skip && !c->ws))
        return 0;
    fd_acc *dg = norm_cols_acc(c, t, 0), *dbs = skip ? norm_cols_acc(c, t, 1) : NULL;
    double *ws = skip ? c->ws + (size_t)t * 3 * n : NULL;
    int all = 1;
    for (size_t r = 0; r < rows; r++)
        if (!norm_cols_row(rms_row_backward_fast(dx + r * n, dg, dbs, dy + r * n, x + r * n,
                                                 skip ? skip + r * n : NULL, bias, gamma, n, eps,
                                                 offset, out, ws),
                           row_ok, r, &all))
            return 0;
    c->rows[t] += rows;
    return all ? 1 : 2;
}

/* The backward of RMSNorm (skip == NULL; dbias not written) or of skip_rmsnorm (dbias [n]), all
   rows: 1 when every output was certified.  Each thread runs rmsnorm_backward_rows_fast on its
   share of the rows (OpenMP's static split), into its own columns, merged at the end. */
static int rms_backward_calls(double *dx, double *dgamma, double *dbias, const double *dy,
                              const double *x, const double *skip, const double *bias,
                              const double *gamma, size_t rows, size_t n, double eps, int offset,
                              rn_dtype out, unsigned char *row_ok)
{
    if (n == 0 || rows == 0 || rows > ((size_t)1 << 30) || n > ((size_t)1 << 20))
        return 0;
    int nt = rn_threads_for(rows * n), ok = 1, all = 1;
    norm_cols *c = norm_cols_new(skip ? 2 : 1, skip != NULL, n, nt);
    if (!c)
        return 0;
#pragma omp parallel num_threads(nt) reduction(&& : ok, all)
    {
        int t = 0, T = 1;
#ifdef _OPENMP
        t = omp_get_thread_num(), T = omp_get_num_threads();
#endif
        size_t r0 = rows * (size_t)t / (size_t)T, r1 = rows * (size_t)(t + 1) / (size_t)T;
        int k = rmsnorm_backward_rows_fast(c, t, dx + r0 * n, dy + r0 * n, x + r0 * n,
                                           skip ? skip + r0 * n : NULL, bias, gamma, r1 - r0, n,
                                           eps, offset, out, row_ok ? row_ok + r0 : NULL);
        ok = k != 0, all = k == 1;
    }
    ok = ok && norm_cols_merge(c);
    for (size_t j = 0; ok && j < n; j++) {
        ok = norm_cols_value(c, 0, j, out, &dgamma[j]);
        if (ok && skip)
            ok = norm_cols_value(c, 1, j, out, &dbias[j]);
    }
    norm_cols_free(c);
    return ok ? (all ? 1 : 2) : 0;
}

int rmsnorm_backward_fast(double *dx, double *dgamma, const double *dy, const double *x,
                          const double *gamma, size_t rows, size_t n, double eps, int offset,
                          rn_dtype out, unsigned char *row_ok)
{
    if (n == 0 || rows == 0 || rows > ((size_t)1 << 30))
        return 0; /* not tried (not counted) */
    int ok = rms_backward_calls(dx, dgamma, NULL, dy, x, NULL, NULL, gamma, rows, n, eps, offset,
                                out, row_ok);
    rn_fast_stats_add(1, ok != 1, rows * n + n);
    return ok;
}

int skip_rmsnorm_backward_fast(double *dx, double *dbias, double *dgamma, const double *dy,
                               const double *x, const double *skip, const double *gamma,
                               const double *bias, size_t rows, size_t n, double eps, int offset,
                               rn_dtype out)
{
    if (n == 0 || rows == 0 || rows > ((size_t)1 << 30))
        return 0; /* not tried (not counted) */
    int ok = rms_backward_calls(dx, dgamma, dbias, dy, x, skip, bias, gamma, rows, n, eps, offset,
                                out, NULL);
    rn_fast_stats_add(1, !ok, rows * n + 2 * n); /* dx (= dskip), dbias, dgamma */
    return ok;
}

/* ------------------------------------------------------------------------------------------------
 * skip_rmsnorm forward [§6.5]: the exact sums v_i = s_i + t_i within e_i (fd_skip_sum, also the
 * `sum` output), sum v_i^2 in double-double (s^2 = p + pe exactly, l = RN(2 s t + pe), t^2 and the
 * e_i charged), rstd, and y_i = (v_i w_i) rstd by fd_mul.  ws: scratch of 3n doubles.
 */
FD_CLONES int skip_rmsnorm_row_forward_fast(double *y, double *rstd, double *sum, const double *x,
                                            const double *skip, const double *gamma,
                                            const double *bias, size_t n, double eps, int offset,
                                            rn_dtype out, double *ws)
{
    if (n == 0 || n > ((size_t)1 << 20) || !(eps >= 0 && eps < INFINITY))
        return 0;
    double *s = ws, *t = ws + n, *e = ws + 2 * n;
    for (size_t i = 0; i < n; i++)
        if (!fd_skip_sum(x[i], skip[i], bias ? &bias[i] : NULL, &s[i], &t[i], &e[i], out, &sum[i]))
            return 0;
    fd_num R; /* [§6.5] the sum of squares of v, rstd */
    if (!rms_row_rstd(s, t, e, n, eps, &R) || !fd_certify_num(R, out, rstd))
        return 0;
    for (size_t i = 0; i < n; i++) {
        if (!isfinite(gamma[i]))
            return 0;
        double wh = gamma[i], wl = 0.0;
        if (offset)
            fd_two_sum(1.0, gamma[i], &wh, &wl);
        if ((s[i] == 0.0 && t[i] == 0.0) || (wh == 0.0 && wl == 0.0)) {
            y[i] = 0.0; /* an exact zero: +0 */
            continue;
        }
        fd_num v = {s[i], t[i], e[i]};
        if (!fd_certify_num(fd_mul(fd_mul(v, fd_exact(wh, wl)), R), out, &y[i]))
            return 0;
    }
    return 1;
}

size_t skip_rmsnorm_forward_fast(double *y, double *rstd, double *sum, const double *x,
                                 const double *skip, const double *gamma, const double *bias,
                                 size_t rows, size_t n, double eps, int offset, rn_dtype out,
                                 unsigned char *ok)
{
    size_t left = 0;
    long R = (long)rows;
#pragma omp parallel num_threads(rn_threads_for(rows * n)) reduction(+ : left)
    {
        double *ws = malloc(3 * n * sizeof *ws);
#pragma omp for schedule(static)
        for (long k = 0; k < R; k++) {
            size_t r = (size_t)k;
            ok[r] = ws && skip_rmsnorm_row_forward_fast(y + r * n, rstd + r, sum + r * n,
                                                        x + r * n, skip + r * n, gamma, bias, n,
                                                        eps, offset, out, ws);
            left += !ok[r];
        }
        free(ws);
    }
    rn_fast_stats_add(rows, left, 2 * n + 1);
    return left;
}
