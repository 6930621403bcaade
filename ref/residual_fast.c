/* Fast path of the residual twins (ref/residual_mpfr.c), element by element, exact: TwoSum gives
 * x + f = s + e with no error at all (barring overflow), and fd_round_dd rounds that exact
 * double-double once to the output format (specs/fast-path.md §7).  An exact zero sum follows IEEE
 * (+0 unless both addends are -0), as the twin's mpfr_add does; NaN/Inf addends and a sum that
 * overflows binary64 go to the twin.  The backward's dy rounded once is fd_round_dd(dy, 0). */
#include <math.h>

#include "fast_dd.h"
#include "norm_fast.h"

size_t residual_forward_fast(double *y, const double *x, const double *f, size_t n, rn_dtype out,
                             unsigned char *ok)
{
    size_t left = 0;
    long N = (long)n;
#pragma omp parallel for schedule(static) reduction(+ : left) num_threads(rn_threads_for(n))
    for (long k = 0; k < N; k++) {
        size_t i = (size_t)k;
        double s, e;
        fd_two_sum(x[i], f[i], &s, &e);
        ok[i] = isfinite(s) && isfinite(e);
        if (!ok[i]) {
            left++;
            continue;
        }
        y[i] = s == 0.0 ? x[i] + f[i] : fd_round_dd(s, e, out); /* zero: IEEE's sign rule */
    }
    rn_fast_stats_add(n, left, 1);
    return left;
}

size_t residual_backward_fast(double *dx, double *df, const double *dy, size_t n, rn_dtype out,
                              unsigned char *ok)
{
    size_t left = 0;
    long N = (long)n;
#pragma omp parallel for schedule(static) reduction(+ : left) num_threads(rn_threads_for(n))
    for (long k = 0; k < N; k++) {
        size_t i = (size_t)k;
        double v = dy[i];
        ok[i] = isfinite(v);
        if (!ok[i]) {
            left++;
            continue;
        }
        double r = v == 0.0 ? v : fd_round_dd(v, 0.0, out); /* a zero keeps its sign (rn_round) */
        dx[i] = r;
        df[i] = r;
    }
    rn_fast_stats_add(n, left, 2);
    return left;
}
