/* The fast paths (ref/fast_dd.h, ref/<family>_fast.c) against MPFR.
 *  - fd_round_dd, the exact rounding of a double-double to each format, against rn_round_mpfr of
 *    the same exact value (MPFR), on values at, next to and around midpoints, subnormals, overflow;
 *  - fd_certify: whenever it certifies, MPFR rounds both ends of the enclosure to that value;
 *  - every family's twin with the fast path on is bit-identical to the twin alone
 *    (tests/fastpath_diff.h; make fastpath-soak runs the same with >= 1e7 elements).
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

static void diff_family(int fam, unsigned long long target)
{
    fd_diff_stats st;
    fd_diff_family(fam, target, 1, &st, 1);
    fd_print_stats(fd_fam_name[fam], &st);
    cr_assert_eq(st.mismatches, 0, "%s: %llu batches differ from the twin alone", fd_fam_name[fam],
                 st.mismatches);
    cr_assert(st.fast.rows > 0, "%s: the fast path never ran", fd_fam_name[fam]);
    cr_assert(st.fast.fallback_rows < st.fast.rows, "%s: the fast path never certified",
              fd_fam_name[fam]);
}

/* Output elements compared per family (forward and, where covered, backward outputs): ~1.1e6 in
   all, well under a minute; make fastpath-soak runs >= 1e7. */
Test(fastpath, layernorm_equals_twin, .timeout = 120) { diff_family(FD_FAM_LAYERNORM, 300000); }
Test(fastpath, rmsnorm_equals_twin, .timeout = 120) { diff_family(FD_FAM_RMSNORM, 200000); }
Test(fastpath, skip_layernorm_equals_twin, .timeout = 120) { diff_family(FD_FAM_SKIP_LN, 150000); }
Test(fastpath, skip_rmsnorm_equals_twin, .timeout = 120) { diff_family(FD_FAM_SKIP_RMS, 150000); }
Test(fastpath, residual_equals_twin, .timeout = 120) { diff_family(FD_FAM_RESIDUAL, 300000); }

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
