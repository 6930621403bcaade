/* The fast paths (ref/fast_dd.h, ref/<family>_fast.c) against MPFR.
 *  - fd_round_dd, the exact rounding of a double-double to each format, against rn_round_mpfr of
 *    the same exact value (MPFR), on values at, next to and around midpoints, subnormals, overflow;
 *  - fd_certify: whenever it certifies, MPFR rounds both ends of the enclosure to that value;
 *  - every family's twin with the fast path on is bit-identical to the twin alone
 *    (tests/fastpath_diff.h; make fastpath-soak runs the same with >= 1e7 elements);
 *  - the skip ops' backward on one and two threads (rows x n above the parallel cut-off) against
 *    the twin alone.
 * No expected value comes from the code under test: the reference is MPFR's rounding. */
#include <criterion/criterion.h>

#include <mpfr.h>

#include "fast_dd.h"
#include "fastpath_diff.h"
#include "suite_runner.h"

static double mpfr_round_dd(double h, double l, rn_dtype d)
{
    mpfr_t v;
    mpfr_init2(v, 2200);
    mpfr_set_d(v, h, MPFR_RNDN);
    mpfr_add_d(v, v, l, MPFR_RNDN); /* exact at 2200 bits */
    if (mpfr_zero_p(v))
        mpfr_set_zero(v, 1);
    double r = rn_round_mpfr(v, d);
    mpfr_clear(v);
    return r;
}

/* A double near a midpoint (or a value) of d, with a random low part l, normalised. */
static void draw_dd(fd_rng *r, rn_dtype d, double *h, double *l)
{
    static const double scales[] = {1.0, 0x1p-130, 0x1p-140, 0x1p-20, 0x1p-24, 0x1p-26, 6e4,
                                    0x1.fep127, 0x1.fffffep127, 1e300, 0x1p-1070};
    double base = scales[fd_pick(r, 11)] * (1.0 + fd_unif(r)) * (fd_pick(r, 2) ? 1 : -1);
    double m = fd_midpoint_near(base, d);
    if (!isfinite(m))
        m = base;
    double v;
    switch (fd_pick(r, 4)) {
    case 0: v = m; break;                                   /* a midpoint */
    case 1: v = rn_round(base, d); break;                   /* a value of d */
    case 2: v = fd_pick(r, 2) ? fd_succ(m) : fd_pred(m); break; /* next to a midpoint */
    default: v = base; break;
    }
    if (!isfinite(v))
        v = base;
    double lo;
    switch (fd_pick(r, 3)) {
    case 0: lo = 0.0; break;
    case 1: lo = (fd_unif(r) - 0.5) * fabs(v) * 0x1p-53; break;
    default: lo = (fd_pick(r, 2) ? 1 : -1) * 0x1p-1074 * (double)fd_pick(r, 3); break;
    }
    fd_two_sum(v, lo, h, l);
}

Test(fast_dd, round_dd_matches_mpfr)
{
    fd_rng r = {12345};
    for (int d = 0; d < RN_NDTYPES; d++)
        for (int k = 0; k < 200000; k++) {
            double h, l;
            draw_dd(&r, (rn_dtype)d, &h, &l);
            if (!isfinite(h))
                continue;
            double a = fd_round_dd(h, l, (rn_dtype)d), b = mpfr_round_dd(h, l, (rn_dtype)d);
            cr_assert(fd_bits(a) == fd_bits(b), "%s: h %a l %a: fast %a mpfr %a",
                      rn_dtype_name((rn_dtype)d), h, l, a, b);
        }
}

Test(fast_dd, certify_is_sound)
{
    fd_rng r = {777};
    unsigned long certified = 0, total = 0;
    for (int d = 0; d < RN_NDTYPES; d++)
        for (int k = 0; k < 200000; k++) {
            double h, l;
            draw_dd(&r, (rn_dtype)d, &h, &l);
            if (!isfinite(h))
                continue;
            double err = fd_pick(&r, 4) == 0 ? 0.0 : fabs(h) * ldexp(fd_unif(&r), -40 - fd_pick(&r, 80));
            double res;
            total++;
            if (!fd_certify(h, l, err, (rn_dtype)d, &res))
                continue;
            certified++;
            /* both ends of [h + l - err, h + l + err], exactly, rounded by MPFR */
            mpfr_t v;
            mpfr_init2(v, 2400);
            for (int s = -1; s <= 1; s += 2) {
                mpfr_set_d(v, h, MPFR_RNDN);
                mpfr_add_d(v, v, l, MPFR_RNDN);
                mpfr_add_d(v, v, s * err, MPFR_RNDN);
                if (mpfr_zero_p(v))
                    mpfr_set_zero(v, 1);
                double e = rn_round_mpfr(v, (rn_dtype)d);
                cr_assert(fd_bits(e) == fd_bits(res), "%s: h %a l %a err %a: certified %a, end %a",
                          rn_dtype_name((rn_dtype)d), h, l, err, res, e);
            }
            mpfr_clear(v);
        }
    printf("fd_certify: %lu of %lu enclosures certified, each checked at both ends\n", certified,
           total);
    cr_assert(certified > total / 4);
}

/* ZOO_QUICK (the ASan pass, `make asan`): a tenth of the elements; the same kernels, shapes and
   adversarial kinds run under the sanitizers (~38 -> ~5 s there), the full count in `make unit`. */
static void diff_family(int fam, unsigned long long target)
{
    fd_diff_stats st;
    if (getenv("ZOO_QUICK"))
        target /= 10;
    fd_diff_family(fam, target, 1, &st, 1);
    fd_print_stats(fd_fam_name[fam], &st);
    cr_assert_eq(st.mismatches, 0, "%s: %llu batches differ from the twin alone", fd_fam_name[fam],
                 st.mismatches);
    cr_assert(st.fast.rows > 0, "%s: the fast path never ran", fd_fam_name[fam]);
    cr_assert(st.fast.fallback_rows < st.fast.rows, "%s: the fast path never certified",
              fd_fam_name[fam]);
    if (fam != FD_FAM_RESIDUAL) { /* the backward calls alone: tried, and certified some */
        cr_assert(st.bwd.rows > 0, "%s: no backward call", fd_fam_name[fam]);
        cr_assert(st.bwd.fallback_rows < st.bwd.rows, "%s: the backward fast path never certified",
                  fd_fam_name[fam]);
    }
}

/* Output elements compared per family (forward and backward outputs; the skip ops' backward since
   §5.9 / §6.6): ~1.6e6 in all, well under a minute; make fastpath-soak runs >= 1e7. */
Test(fastpath, layernorm_equals_twin, .timeout = 120) { diff_family(FD_FAM_LAYERNORM, 300000); }
Test(fastpath, rmsnorm_equals_twin, .timeout = 120) { diff_family(FD_FAM_RMSNORM, 200000); }
Test(fastpath, skip_layernorm_equals_twin, .timeout = 120) { diff_family(FD_FAM_SKIP_LN, 400000); }
Test(fastpath, skip_rmsnorm_equals_twin, .timeout = 120) { diff_family(FD_FAM_SKIP_RMS, 400000); }
Test(fastpath, residual_equals_twin, .timeout = 120) { diff_family(FD_FAM_RESIDUAL, 300000); }

/* The skip ops' backward fast path (specs/fast-path.md §5.9, §6.6) on 96 x 768 random f32 rows
   (above RN_PAR_MIN_WORK, so the per-thread column sums are merged): one thread, two threads and
   the twin alone give the same bits, and both fast runs certified the whole call (none fell
   back, so the comparison is of the fast path's own values). */
static void skip_bwd_threads(int rms)
{
    enum { ROWS = 96, N = 768, NT = ROWS * N };
    cr_assert(NT >= RN_PAR_MIN_WORK);
    fd_rng r = {4242 + (uint64_t)rms};
    double *x = malloc(NT * sizeof *x), *k = malloc(NT * sizeof *k), *dy = malloc(NT * sizeof *dy);
    double g[N], bias[N];
    for (size_t i = 0; i < NT; i++) {
        x[i] = rn_round(fd_randn(&r), RN_F32);
        k[i] = rn_round(0.5 * fd_randn(&r), RN_F32);
        dy[i] = rn_round(fd_randn(&r), RN_F32);
    }
    for (size_t j = 0; j < N; j++) {
        g[j] = rn_round((rms ? 0.0 : 1.0) + 0.1 * fd_randn(&r), RN_F32);
        bias[j] = rn_round(0.1 * fd_randn(&r), RN_F32);
    }
    double eps;
    cr_assert_eq(rn_parse_eps("1e-5", RN_F32, &eps), 0);
    double *o[3][5];
    for (int p = 0; p < 3; p++)
        for (int q = 0; q < 5; q++)
            o[p][q] = malloc(NT * sizeof(double));
    for (int p = 0; p < 3; p++) { /* pass 0: 1 thread, 1: 2 threads, 2: the twin alone */
        rn_set_threads(p == 1 ? 2 : 1);
        rn_fast_set_enabled(p < 2);
        rn_fast_stats a, c;
        rn_fast_stats_get(&a);
        int rc = rms ? skip_rmsnorm_backward_mpfr(o[p][0], o[p][1], o[p][2], o[p][3], dy, x, k, g,
                                                  bias, ROWS, N, eps, 1, RN_F32)
                     : skip_layernorm_backward_mpfr(o[p][0], o[p][1], o[p][2], o[p][3], o[p][4], dy,
                                                    x, k, g, bias, ROWS, N, eps, RN_F32);
        rn_fast_stats_get(&c);
        cr_assert_eq(rc, 0);
        if (p < 2) {
            cr_assert_eq(c.rows - a.rows, 1, "one call tried");
            cr_assert_eq(c.fallback_rows, a.fallback_rows, "%d thread(s): fell back",
                         p == 1 ? 2 : 1);
        }
    }
    rn_set_threads(0);
    rn_fast_set_enabled(1);
    const size_t sz[5] = {NT, NT, N, N, N};
    for (int p = 1; p < 3; p++)
        for (int q = 0; q < (rms ? 4 : 5); q++)
            cr_assert(fd_same(o[0][q], o[p][q], sz[q]), "%s output %d: %s differs",
                      rms ? "skip_rmsnorm" : "skip_layernorm", q,
                      p == 1 ? "two threads" : "the twin alone");
    for (int p = 0; p < 3; p++)
        for (int q = 0; q < 5; q++)
            free(o[p][q]);
    free(x), free(k), free(dy);
}

Test(fastpath, skip_layernorm_backward_threads, .timeout = 120) { skip_bwd_threads(0); }
Test(fastpath, skip_rmsnorm_backward_threads, .timeout = 120) { skip_bwd_threads(1); }

/* The skip ops' backward a block at a time (*_backward_rows_fast with row_ok, as `eval`'s stream
   and `check` run it): a row whose dx is not certified -- dy = 0 there, so dx is an exact zero
   whose enclosure straddles 0 -- is left to the caller (2, row_ok 0) with its terms in every
   column, dbias's included (the enclosures hold dx all the same); the other rows' dx and the
   certified sums are the twin's bits. */
static void skip_bwd_rows_left(int rms)
{
    enum { ROWS = 12, N = 96, NT = ROWS * N, ZERO_ROW = 5 };
    fd_rng r = {977 + (uint64_t)rms};
    double x[NT], k[NT], dy[NT], dx[NT], g[N], bias[N], w[5][NT];
    for (size_t i = 0; i < NT; i++) {
        x[i] = rn_round(fd_randn(&r), RN_F32);
        k[i] = rn_round(0.5 * fd_randn(&r), RN_F32);
        dy[i] = i / N == ZERO_ROW ? 0.0 : rn_round(fd_randn(&r), RN_F32);
    }
    for (size_t j = 0; j < N; j++) {
        g[j] = rn_round(1.0 + 0.1 * fd_randn(&r), RN_F32);
        bias[j] = rn_round(0.1 * fd_randn(&r), RN_F32);
    }
    double eps;
    cr_assert_eq(rn_parse_eps("1e-5", RN_F32, &eps), 0);
    rn_fast_set_enabled(0); /* the twin alone */
    int rc = rms ? skip_rmsnorm_backward_mpfr(w[0], w[1], w[2], w[3], dy, x, k, g, bias, ROWS, N,
                                              eps, 0, RN_F32)
                 : skip_layernorm_backward_mpfr(w[0], w[1], w[2], w[3], w[4], dy, x, k, g, bias,
                                                ROWS, N, eps, RN_F32);
    rn_fast_set_enabled(1);
    cr_assert_eq(rc, 0);
    norm_cols *c = norm_cols_new(rms ? 2 : 3, 1, N, 1);
    unsigned char ok[ROWS];
    cr_assert_not_null(c);
    for (size_t r0 = 0; r0 < ROWS; r0 += 4) { /* three blocks of 4 rows */
        int kk = rms ? rmsnorm_backward_rows_fast(c, 0, dx + r0 * N, dy + r0 * N, x + r0 * N,
                                                  k + r0 * N, bias, g, 4, N, eps, 0, RN_F32,
                                                  ok + r0)
                     : layernorm_backward_rows_fast(c, 0, dx + r0 * N, dy + r0 * N, x + r0 * N,
                                                    k + r0 * N, bias, g, 4, N, eps, RN_F32, ok + r0);
        cr_assert_eq(kk, r0 / 4 == ZERO_ROW / 4 ? 2 : 1, "block at row %zu: %d", r0, kk);
    }
    for (size_t q = 0; q < ROWS; q++) {
        cr_assert_eq(ok[q], q != ZERO_ROW, "row %zu", q);
        if (q != ZERO_ROW)
            cr_assert(fd_same(dx + q * N, w[0] + q * N, N), "row %zu's dx", q);
    }
    cr_assert(norm_cols_merge(c));
    /* columns: RMSNorm dgamma, dbias; LayerNorm dgamma, dbeta, dbias (the twin's 3, 4, 2) */
    static const int twin_ln[3] = {3, 4, 2}, twin_rms[2] = {3, 2};
    for (int col = 0; col < (rms ? 2 : 3); col++)
        for (size_t j = 0; j < N; j++) {
            double v;
            int tw = rms ? twin_rms[col] : twin_ln[col];
            int cert = norm_cols_value(c, col, j, RN_F32, &v);
            if (!rms && col == 1 && !cert)
                continue; /* dbeta: a sum of f32 values is often an f32 tie (summed exactly) */
            cr_assert(cert, "column %d, %zu: not certified", col, j);
            cr_assert(fd_same(&v, &w[tw][j], 1), "column %d, %zu: %.17g, twin %.17g", col, j, v,
                      w[tw][j]);
        }
    norm_cols_free(c);
}

Test(fastpath, skip_layernorm_backward_rows_left) { skip_bwd_rows_left(0); }
Test(fastpath, skip_rmsnorm_backward_rows_left) { skip_bwd_rows_left(1); }

/* The a-priori bounds with the double-double statistics (specs/fast-path.md §10) are bit-identical
   to the MPFR path's (so never below it), on random and adversarial rows (every output dtype and
   profile). */
Test(fastpath, bounds_never_below_mpfr, .timeout = 120)
{
    fd_bound_stats s;
    fd_bound_diff(300000, 1, &s, 1);
    fd_print_bound_stats("(random, adversarial)", &s);
    cr_assert_eq(s.below, 0, "%llu bound elements below the MPFR path's", s.below);
    cr_assert_eq(s.differ, 0, "%llu bound elements differ from the MPFR path's", s.differ);
    cr_assert_eq(s.errors, 0);
    cr_assert(s.elems >= 300000);
    cr_assert(s.rows_fast > s.rows / 2, "the fast statistics rarely certify");
}

/* Rows of 4096 binary32 values (a power of two: the mean is a dyadic number with a few more bits
   than the elements, so that some x_i - mean are exactly midpoints of binary64): the fast
   statistics leave those d_i undecided and the bound computes them as the MPFR path does
   (ref/layernorm_bound.c, mpfr_row_deviations); the bounds are bit-identical to the MPFR path's.
   Rows 0-11 are multiples of 2^-20 with one element 3 * 2^-41: the mean then has its last bit at
   2^-53, and every x_i - mean in [1, 2) is a tie; rows 12-23 are ordinary random values. */
Test(fastpath, bounds_with_undecided_deviations, .timeout = 120)
{
    enum { R = 24, N = 4096 };
    static double x[R * N], dy[R * N], g[N], b[N], dev[N];
    static size_t und[N];
    fd_rng r = {77};
    for (size_t i = 0; i < (size_t)R * N; i++) {
        x[i] = i < (size_t)R * N / 2 ? ldexp(floor(fd_unif(&r) * 0x1p22) - 0x1p21, -20)
                                     : (float)(fd_unif(&r) * 4 - 2 + fd_unif(&r) * 1e-4);
        dy[i] = (float)(fd_unif(&r) * 2 - 1);
    }
    for (size_t row = 0; row < R / 2; row++)
        x[row * N + 5] = 3 * 0x1p-41;
    for (size_t i = 0; i < N; i++)
        g[i] = (float)(0.5 + fd_unif(&r)), b[i] = (float)(fd_unif(&r) - 0.5);
    size_t rows_with = 0, total = 0, k;
    for (size_t row = 0; row < R; row++) {
        double a1, a2, a3, a4;
        cr_assert(layernorm_row_bound_stats_fast(&a1, &a2, &a3, &a4, dev, und, &k, x + row * N,
                                                 N));
        rows_with += k > 0, total += k;
    }
    cr_assert(rows_with > 0, "no row with an undecided deviation: the test tests nothing");
    fd_batch B = {.in = RN_F32, .eps = 1e-5, .rows = R, .n = N, .x = x, .g = g, .b = b, .f = dy};
    double *o1[6], *o2[6];
    for (int j = 0; j < 6; j++)
        o1[j] = malloc(R * N * sizeof(double)), o2[j] = malloc(R * N * sizeof(double));
    fd_bound_stats s = {0};
    static const rn_dtype outs[3] = {RN_F32, RN_BF16, RN_F64};
    for (int o = 0; o < 3; o++)
        fd_bound_run(FD_FAM_LAYERNORM, &B, outs[o], RN_PROFILE_RUNTIMES, o1, o2, &s, 0);
    for (int j = 0; j < 6; j++)
        free(o1[j]), free(o2[j]);
    printf("undecided deviations: %zu in %zu of %d rows; %llu bound elements, %llu differ\n", total,
           rows_with, R, s.elems, s.differ);
    cr_assert_eq(s.errors, 0);
    cr_assert_eq(s.differ, 0, "%llu bound elements differ from the MPFR path's", s.differ);
    cr_assert_eq(s.below, 0);
}

/* The backward's fast path leaves the dx of a row it cannot certify to the twin, on that row alone,
   and keeps the rest: a row of dy all zero (dx exactly 0, which no enclosure certifies) among
   random rows.  layernorm_backward_fast / rmsnorm_backward_fast return 2 with that row flagged;
   the twins' outputs (dx, dgamma, dbeta) are bit-identical to the twin alone's, for f64, f32 and
   bf16 outputs. */
Test(fastpath, backward_rows_left_to_the_twin, .timeout = 120)
{
    enum { R = 9, N = 300 };
    static double x[R * N], dy[R * N], g[N], o1[3][R * N], o2[3][R * N];
    unsigned char ok[R];
    fd_rng r = {91};
    for (size_t i = 0; i < (size_t)R * N; i++) {
        x[i] = (float)(fd_unif(&r) * 4 - 2);
        dy[i] = i / N == 3 ? 0.0 : (float)(fd_unif(&r) * 2 - 1);
    }
    for (size_t i = 0; i < N; i++)
        g[i] = (float)(0.5 + fd_unif(&r));
    static const rn_dtype outs[3] = {RN_F64, RN_F32, RN_BF16};
    for (int o = 0; o < 3; o++) {
        for (int fam = 0; fam < 2; fam++) {
            int f = fam ? rmsnorm_backward_fast(o1[0], o1[1], dy, x, g, R, N, 1e-5, 0, outs[o], ok)
                        : layernorm_backward_fast(o1[0], o1[1], o1[2], dy, x, g, R, N, 1e-5,
                                                  outs[o], ok);
            cr_assert_eq(f, 2, "%s: the fast path returned %d", fam ? "rmsnorm" : "layernorm", f);
            for (int k = 0; k < R; k++)
                cr_assert_eq(ok[k], k != 3, "row %d flagged %d", k, ok[k]);
            for (int pass = 0; pass < 2; pass++) {
                double (*q)[R * N] = pass ? o2 : o1;
                memset(q, 0xff, sizeof o1); /* NaNs: a row left unwritten shows */
                rn_fast_set_enabled(pass == 0);
                int rc = fam ? rmsnorm_backward_mpfr(q[0], q[1], dy, x, g, R, N, 1e-5, 0, outs[o])
                             : layernorm_backward_mpfr(q[0], q[1], q[2], dy, x, g, R, N, 1e-5,
                                                       outs[o]);
                cr_assert_eq(rc, 0);
            }
            rn_fast_set_enabled(1);
            cr_assert_eq(memcmp(o1, o2, sizeof o1), 0, "%s, out %s: differs from the twin alone",
                         fam ? "rmsnorm" : "layernorm", rn_dtype_name(outs[o]));
        }
    }
}

/* The same on every LayerNorm / RMSNorm-family case of the golden suite (x, gamma, beta, dy of
   the case; the skip ops' x alone), for the four output dtypes. */
Test(fastpath, bounds_never_below_mpfr_golden, .timeout = 120)
{
    json_error_t e;
    json_t *man = json_load_file("golden/manifest.json", 0, &e);
    cr_assert_not_null(man, "golden/manifest.json: %s (run from the repository root)", e.text);
    fd_bound_stats s = {0};
    size_t i, ncases = 0;
    json_t *c;
    json_array_foreach(json_object_get(man, "cases"), i, c) {
        const char *op = json_string_value(json_object_get(c, "op"));
        int fam = !strncmp(op, "layernorm", 9) || !strncmp(op, "skip_layernorm", 14)
                      ? FD_FAM_LAYERNORM
                  : !strncmp(op, "rmsnorm", 7) || !strncmp(op, "skip_rmsnorm", 12)
                      ? FD_FAM_RMSNORM
                      : -1;
        sr_case k;
        if (fam < 0 || sr_load_case(c, ".", &k) != 0)
            continue;
        const double *x = sr_in(&k, "x");
        if (!x) {
            sr_free_case(&k);
            continue;
        }
        size_t N = k.v.rows * k.v.n, n = k.v.n;
        fd_batch B = {.eps = k.v.eps, .rows = k.v.rows, .n = n, .offset = k.v.offset};
        B.x = (double *)x;
        B.g = calloc(n + 1, sizeof(double));
        B.b = calloc(n + 1, sizeof(double));
        B.f = calloc(N + 1, sizeof(double));
        const double *g = sr_in(&k, "gamma"), *b = sr_in(&k, "beta"), *dy = sr_in(&k, "dy");
        for (size_t j = 0; j < n; j++) {
            B.g[j] = g ? g[j] : 1.0;
            B.b[j] = b ? b[j] : 0.0;
        }
        for (size_t j = 0; j < N; j++)
            B.f[j] = dy ? dy[j] : x[(j * 7 + 3) % N]; /* some dy when the case has none */
        double *o1[6], *o2[6];
        for (int q = 0; q < 6; q++) {
            o1[q] = malloc((N + 1) * sizeof(double));
            o2[q] = malloc((N + 1) * sizeof(double));
        }
        for (int d = 0; d < RN_NDTYPES; d++)
            fd_bound_run(fam, &B, (rn_dtype)d, (rn_profile)(ncases % 3), o1, o2, &s, 1);
        for (int q = 0; q < 6; q++)
            free(o1[q]), free(o2[q]);
        free(B.g), free(B.b), free(B.f);
        sr_free_case(&k);
        ncases++;
    }
    json_decref(man);
    printf("golden suite: %zu cases; ", ncases);
    fd_print_bound_stats("(golden suite)", &s);
    cr_assert(ncases > 20);
    cr_assert_eq(s.below, 0, "%llu bound elements below the MPFR path's", s.below);
    cr_assert_eq(s.differ, 0, "%llu bound elements differ from the MPFR path's", s.differ);
    cr_assert_eq(s.errors, 0);
}

/* The skip ops' backward fast path alone (no twin behind it) on every skip_*_backward case of the
   golden suite, for each output dtype of the case: wherever it certifies the call, every output
   (dx, dskip = dx, dbias, dgamma, dbeta) equals the committed golden file bit for bit (the twin's
   values; make golden-check regenerates them with the fast path in front).  Prints how many of
   the (case, dtype) calls it certified. */
Test(fastpath, skip_backward_golden, .timeout = 120)
{
    json_error_t e;
    json_t *man = json_load_file("golden/manifest.json", 0, &e);
    cr_assert_not_null(man, "golden/manifest.json: %s (run from the repository root)", e.text);
    size_t i, calls = 0, certified = 0, compared = 0, differ = 0;
    json_t *c;
    json_array_foreach(json_object_get(man, "cases"), i, c) {
        const char *op = json_string_value(json_object_get(c, "op"));
        int rms = !strcmp(op, "skip_rmsnorm_backward");
        sr_case k;
        if ((!rms && strcmp(op, "skip_layernorm_backward")) || sr_load_case(c, ".", &k) != 0)
            continue;
        const double *x = sr_in(&k, "x"), *sk = sr_in(&k, "skip"), *g = sr_in(&k, "gamma"),
                     *dy = sr_in(&k, "dy"), *bias = sr_in(&k, "bias");
        cr_assert(x && sk && g && dy, "%s: inputs", k.id);
        size_t rows = k.v.rows, n = k.v.n, N = rows * n;
        double *o[4];
        for (int q = 0; q < 4; q++)
            o[q] = malloc((N + 1) * sizeof(double));
        const char *dn;
        json_t *files;
        json_object_foreach(json_object_get(c, "expected"), dn, files) {
            rn_dtype d;
            cr_assert_eq(rn_dtype_from_name(dn, &d), 0);
            calls++;
            int ok = rms ? skip_rmsnorm_backward_fast(o[0], o[1], o[2], dy, x, sk, g, bias, rows, n,
                                                      k.v.eps, k.v.offset, d)
                         : skip_layernorm_backward_fast(o[0], o[1], o[2], o[3], dy, x, sk, g, bias,
                                                        rows, n, k.v.eps, d);
            if (!ok)
                continue;
            certified++;
            static const char *const nm[5] = {"dx", "dskip", "dbias", "dgamma", "dbeta"};
            const int src[5] = {0, 0, 1, 2, 3};
            for (int q = 0; q < (rms ? 4 : 5); q++) {
                json_t *f = json_object_get(files, nm[q]);
                cr_assert_not_null(f, "%s %s: no %s", k.id, dn, nm[q]);
                rn_array a;
                char err[512];
                cr_assert_eq(npy_read(json_string_value(f), &a, err, sizeof err), 0, "%s", err);
                cr_assert_eq(a.count, q < 2 ? N : n, "%s %s %s: size", k.id, dn, nm[q]);
                for (size_t j = 0; j < a.count; j++, compared++)
                    if (fd_bits(a.data[j]) != fd_bits(o[src[q]][j])) {
                        if (differ++ < 5)
                            fprintf(stderr, "%s %s %s[%zu]: fast %a, golden %a\n", k.id, dn, nm[q],
                                    j, o[src[q]][j], a.data[j]);
                    }
                rn_array_free(&a);
            }
        }
        for (int q = 0; q < 4; q++)
            free(o[q]);
        sr_free_case(&k);
    }
    json_decref(man);
    printf("golden suite, skip ops' backward: the fast path certified %zu of %zu (case, dtype) "
           "calls (%.3g%% fell back); %zu output elements compared with the golden files, %zu "
           "differ\n", certified, calls, calls ? 100.0 * (double)(calls - certified) / (double)calls : 0.0,
           compared, differ);
    cr_assert(calls > 40, "only %zu calls", calls);
    cr_assert(certified > calls / 4, "the fast path rarely certified (%zu of %zu)", certified, calls);
    cr_assert_eq(differ, 0, "%zu elements differ from the golden files", differ);
}

/* rn_round (ref/dtype.c) is fd_round_dd with a zero low part: every double class against MPFR. */
Test(fast_dd, rn_round_matches_mpfr)
{
    fd_rng r = {99};
    for (int d = 0; d < RN_NDTYPES; d++)
        for (int k = 0; k < 300000; k++) {
            double v = fd_from_bits(fd_next(&r)); /* any bit pattern: every exponent */
            if (k % 3 == 0) {
                double h, l;
                draw_dd(&r, (rn_dtype)d, &h, &l);
                v = h;
            }
            if (!isfinite(v) || v == 0.0)
                continue;
            mpfr_t t;
            mpfr_init2(t, 53);
            mpfr_set_d(t, v, MPFR_RNDN);
            double want = rn_round_mpfr(t, (rn_dtype)d);
            mpfr_clear(t);
            double got = rn_round(v, (rn_dtype)d);
            cr_assert(fd_bits(got) == fd_bits(want), "%s: %a -> %a, MPFR %a",
                      rn_dtype_name((rn_dtype)d), v, got, want);
        }
}

/* The moments memo `check` opens around a block's twin and bound (rn_fast_memo_begin): inside the
   range it was given, the bound's statistics after the twin equal those without the memo; a row
   outside it (a scratch buffer whose values change between the twin and the bound, as a callee's
   reused allocation would) is never served from the memo.  The reference is the same function
   with the memo off. */
Test(fastpath, moments_memo_range)
{
    enum { R = 3, N = 1000 };
    static double x[R * N], scratch[N], y[N], g[N], b[N], dev[N];
    static size_t und[N];
    fd_rng r = {91};
    for (size_t i = 0; i < (size_t)R * N; i++)
        x[i] = (float)(fd_unif(&r) * 8 - 3);
    for (size_t i = 0; i < N; i++)
        g[i] = 1, b[i] = 0;
    double ref[R + 1][4], got[4], mean, rstd;
    size_t k;
    for (size_t row = 0; row < R; row++)
        cr_assert(layernorm_row_bound_stats_fast(&ref[row][0], &ref[row][1], &ref[row][2],
                                                 &ref[row][3], dev, und, &k, x + row * N, N));
    for (size_t i = 0; i < N; i++)
        scratch[i] = x[2 * N + i] + 1000; /* another row's values, far from the others' */
    cr_assert(layernorm_row_bound_stats_fast(&ref[R][0], &ref[R][1], &ref[R][2], &ref[R][3], dev,
                                             und, &k, scratch, N));
    rn_fast_memo_begin(x, (size_t)R * N);
    for (size_t row = 0; row < R; row++) /* the twin's rows: remembered */
        cr_assert(layernorm_row_forward_fast(y, &mean, &rstd, x + row * N, g, b, N, 1e-5, RN_F64));
    memcpy(scratch, x, sizeof scratch); /* the scratch holds row 0, and the twin sums it there */
    cr_assert(layernorm_row_forward_fast(y, &mean, &rstd, scratch, g, b, N, 1e-5, RN_F64));
    for (size_t i = 0; i < N; i++)
        scratch[i] = x[2 * N + i] + 1000; /* then other values at the same address */
    for (size_t row = 0; row <= R; row++) {
        const double *xr = row < R ? x + row * N : scratch;
        cr_assert(layernorm_row_bound_stats_fast(&got[0], &got[1], &got[2], &got[3], dev, und, &k,
                                                 xr, N));
        for (int j = 0; j < 4; j++)
            cr_assert(memcmp(&got[j], &ref[row][j], sizeof got[j]) == 0,
                      "row %zu statistic %d: %a, without the memo %a", row, j, got[j], ref[row][j]);
    }
    rn_fast_memo_end();
}
