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

#include "fast_dd.h"
#include "norm_fast.h"

#define U FD_U
#define ETA FD_ETA

FD_CLONES int layernorm_row_forward_fast(double *y, double *mean, double *rstd, const double *x,
                               const double *gamma, const double *beta, size_t n, double eps,
                               rn_dtype out)
{
    if (n == 0 || n > ((size_t)1 << 20) || !(eps >= 0 && eps < INFINITY))
        return 0;
    const double nn = (double)n;

    /* [§5.1] a pivot mh: any double near the mean (a plain sum; its error does not matter, the
       deviations from it are exact and the correction T / n below is computed accurately). */
    double s = 0.0;
    for (size_t i = 0; i < n; i++)
        s += x[i];
    if (!isfinite(s))
        return 0; /* a NaN / Inf input or an overflow: the twin's special-value rules */
    const double mh = s / nn;

    /* [§5.2] x_i - mh = a_i + b_i exactly (TwoSum).  T = sum (a_i + b_i) = S - n mh by Sum2
       (TwoSum chain on a_i, the exact errors e_i and the b_i summed in round-to-nearest);
       W = sum (a_i + b_i)^2 ~ sum p_i + (e'_i + l_i) with p_i + pe_i = a_i^2 exact and
       l_i = RN(2 a_i b_i + pe_i). */
    double ts = 0.0, tc = 0.0, TA = 0.0, ws = 0.0, wc = 0.0, B = 0.0;
    for (size_t i = 0; i < n; i++) {
        double a, b, p, pe, e, f;
        fd_two_sum(x[i], -mh, &a, &b);
        fd_two_sum(ts, a, &ts, &e);
        tc += e;
        tc += b;
        TA += fabs(e) + fabs(b);
        fd_two_prod(a, a, &p, &pe);
        double l = fma(2.0 * a, b, pe);
        fd_two_sum(ws, p, &ws, &f);
        wc += f;
        wc += l;
        B += fabs(f) + fabs(l);
    }
    if (!isfinite(ws) || !isfinite(wc) || !isfinite(ts) || !isfinite(tc))
        return 0;
    fd_num T;
    fd_two_sum(ts, tc, &T.h, &T.l);
    T.e = fd_up((4.0 * nn + 2.0) * U * TA);
    double wh, wl;
    fd_two_sum(ws, wc, &wh, &wl);
    double EW = fd_up((3.0 * nn + 2.0) * U * B + 2.0 * U * U * ws + 6.0 * nn * ETA);

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

    /* [§5.5] rstd = 1 / sqrt(var + eps) = 1 / sqrt((n var + n eps) / n) */
    fd_num R;
    if (!fd_rstd(V, nn, eps, &R))
        return 0; /* var + eps not safely away from 0 (or out of range): the twin decides */

    if (!fd_certify_num(mu, out, mean) || !fd_certify_num(R, out, rstd))
        return 0;

    /* [§5.6] y_i.  K bounds |rstd|. */
    const double K = fabs(R.h) + fabs(R.l) + R.e;
    for (size_t i = 0; i < n; i++) {
        double g = gamma[i];
        double a, b;
        fd_two_sum(x[i], -mh, &a, &b);
        double bp1 = b - th, bp = bp1 - tl;             /* d_i = a + bp within Ed */
        double Ed = dl.e + 2.0 * U * (fabs(bp1) + fabs(bp)) + ETA;
        double p1, p2;
        fd_two_prod(a, g, &p1, &p2);
        double p2b = fma(bp, g, p2);                     /* P = d_i gamma_i = p1 + p2b within EP */
        double EP = fd_up(fabs(g) * Ed + 2.0 * U * fabs(p2b) + ETA);
        double m1, m2;
        fd_two_prod(p1, R.h, &m1, &m2);
        double f1 = fma(p2b, R.h, m2);
        double m2b = fma(p1, R.l, f1);                   /* P rstd = m1 + m2b */
        double y1, y2;
        fd_two_sum(m1, beta[i], &y1, &y2);
        double y2b = y2 + m2b;
        double Ey = EP * K + (fabs(p1) + fabs(p2b)) * R.e +
                    2.0 * U * (fabs(f1) + fabs(m2b) + fabs(y2b)) + fabs(p2b) * fabs(R.l) + 2.0 * ETA;
        if (!fd_certify(y1, y2b, fd_up(Ey), out, &y[i]))
            return 0;
    }
    return 1;
}

size_t layernorm_forward_fast(double *y, double *mean, double *rstd, const double *x,
                              const double *gamma, const double *beta, size_t rows, size_t n,
                              double eps, rn_dtype out, unsigned char *ok)
{
    size_t left = 0;
    long R = (long)rows;
#pragma omp parallel for schedule(static) reduction(+ : left) num_threads(rn_threads())
    for (long k = 0; k < R; k++) {
        size_t r = (size_t)k;
        ok[r] = (unsigned char)layernorm_row_forward_fast(y + r * n, mean + r, rstd + r, x + r * n,
                                                          gamma, beta, n, eps, out);
        left += !ok[r];
    }
    rn_fast_stats_add(rows, left, n + 2);
    return left;
}
