/* Softmax (ref/softmax.c, ref/softmax_mpfr.c, ref/softmax_bound.c, cli/op_softmax.c):
 *  - the float and double kernels against every golden softmax / softmax_backward case, within the
 *    bound of specs/error-analysis-softmax.md (worst error/bound printed);
 *  - the twin against an independent 2048-bit MPFR evaluation (mpfr_exp, rounded to f64 and f32);
 *  - the twin's backward against 2048-bit central finite differences of L = Σ dy·y;
 *  - an f32 kernel without the max subtracted fails `resnorm check` on overflowing logits, the
 *    project's kernel passes; a mask of the wrong shape exits 2. */
#include <criterion/criterion.h>
#include <jansson.h>
#include <math.h>
#include <mpfr.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CLI_HARNESS_PREFIX "/tmp/resnorm_test_softmax."
#include "cli_harness.h"
#include "golden_harness.h"
#include "softmax.h"
#include "softmax_bound.h"
#include "softmax_mpfr.h"

#define MANIFEST "golden/manifest.json"

static double compare(const char *id, const double *got, const double *want, const double *bd,
                      size_t count)
{
    double worst = 0.0;
    for (size_t i = 0; i < count; i++) {
        if (!isfinite(want[i])) {
            cr_assert(isnan(want[i]) ? isnan(got[i]) : got[i] == want[i], "%s [%zu]: got %a, want %a",
                      id, i, got[i], want[i]);
            continue;
        }
        if (isinf(bd[i]))
            continue;
        double err = fabs(got[i] - want[i]);
        cr_assert(err <= bd[i], "%s [%zu]: got %.17g want %.17g err %.3g > bound %.3g", id, i, got[i],
                  want[i], err, bd[i]);
        if (bd[i] > 0 && err / bd[i] > worst)
            worst = err / bd[i];
    }
    return worst;
}

Test(softmax, kernels_within_bound_on_golden)
{
    json_error_t e;
    json_t *m = json_load_file(MANIFEST, 0, &e);
    cr_assert_not_null(m, "%s", e.text);
    size_t i, ncases = 0;
    json_t *c;
    double worst[2] = {0, 0};
    json_array_foreach(json_object_get(m, "cases"), i, c)
    {
        const char *op = json_string_value(json_object_get(c, "op"));
        if (strcmp(op, "softmax") && strcmp(op, "softmax_backward"))
            continue;
        int bwd = !strcmp(op, "softmax_backward");
        const char *id = json_string_value(json_object_get(c, "id"));
        json_t *in = json_object_get(c, "inputs");
        rn_array x = load(get_path(in, "x")), mk = {0}, dy = {0};
        int have_mask = get_path(in, "mask") != NULL;
        if (have_mask)
            mk = load(get_path(in, "mask"));
        if (bwd)
            dy = load(get_path(in, "dy"));
        rn_array want = load(get_path(json_object_get(json_object_get(c, "expected"), "f64"),
                                      bwd ? "dx" : "y"));
        size_t N = x.count, n = x.shape[x.ndim - 1], rows = N / n;
        int f32ok = strcmp(json_string_value(json_object_get(c, "input_dtype")), "f64") != 0;
        double *got = calloc(N, sizeof *got), *bd = calloc(N, sizeof *bd);
        for (int p = 0; p < 1 + f32ok; p++) {
            rn_dtype cd = p ? RN_F32 : RN_F64;
            if (p) {
                float *xf = malloc(N * sizeof *xf), *mf = malloc(N * sizeof *mf),
                      *yf = malloc(N * sizeof *yf), *df = malloc(N * sizeof *df),
                      *gf = calloc(N, sizeof *gf);
                for (size_t k = 0; k < N; k++) {
                    xf[k] = (float)x.data[k];
                    mf[k] = have_mask ? (float)mk.data[k] : 0.0f;
                    df[k] = bwd ? (float)dy.data[k] : 0.0f;
                }
                softmax_forward_f32(yf, xf, have_mask ? mf : NULL, (int)rows, (int)n);
                if (bwd)
                    softmax_backward_f32(gf, yf, df, (int)rows, (int)n);
                for (size_t k = 0; k < N; k++)
                    got[k] = bwd ? gf[k] : yf[k];
                free(xf), free(mf), free(yf), free(df), free(gf);
            } else {
                double *y = malloc(N * sizeof *y);
                softmax_forward_f64(y, x.data, have_mask ? mk.data : NULL, (int)rows, (int)n);
                if (bwd) {
                    memset(got, 0, N * sizeof *got);
                    softmax_backward_f64(got, y, dy.data, (int)rows, (int)n);
                } else {
                    memcpy(got, y, N * sizeof *y);
                }
                free(y);
            }
            if (bwd)
                cr_assert_eq(softmax_backward_bound(bd, x.data, have_mask ? mk.data : NULL, dy.data,
                                                    rows, n, cd, cd), 0);
            else
                cr_assert_eq(softmax_forward_bound(bd, x.data, have_mask ? mk.data : NULL, rows, n,
                                                   cd, cd), 0);
            double r = compare(id, got, want.data, bd, N);
            if (r > worst[p])
                worst[p] = r;
        }
        free(got), free(bd);
        rn_array_free(&x), rn_array_free(&want);
        if (have_mask)
            rn_array_free(&mk);
        if (bwd)
            rn_array_free(&dy);
        ncases++;
    }
    cr_assert_geq(ncases, 20);
    printf("softmax: %zu golden entries; worst err/bound f64 kernel %.3g, f32 kernel %.3g\n", ncases,
           worst[0], worst[1]);
    json_decref(m);
}

/* y at 2048 bits by mpfr_exp (independent of Arb), rounded to d. */
static void ref_softmax(mpfr_t *y, const double *x, size_t n)
{
    mpfr_t s, m;
    mpfr_inits2(2048, s, m, (mpfr_ptr)0);
    double mx = x[0];
    for (size_t k = 1; k < n; k++)
        mx = fmax(mx, x[k]);
    mpfr_set_d(m, mx, MPFR_RNDN);
    mpfr_set_zero(s, 1);
    for (size_t k = 0; k < n; k++) {
        mpfr_set_d(y[k], x[k], MPFR_RNDN);
        mpfr_sub(y[k], y[k], m, MPFR_RNDN);
        mpfr_exp(y[k], y[k], MPFR_RNDN);
        mpfr_add(s, s, y[k], MPFR_RNDN);
    }
    for (size_t k = 0; k < n; k++)
        mpfr_div(y[k], y[k], s, MPFR_RNDN);
    mpfr_clears(s, m, (mpfr_ptr)0);
}

static const double X[] = {0.5, -1.25, 3.0, 87.5, 80.0, -0.03125, 2.0 / 3.0, 86.0};
#define NX (sizeof X / sizeof X[0])

Test(softmax, twin_matches_2048_bit_mpfr)
{
    mpfr_t y[NX];
    for (size_t k = 0; k < NX; k++)
        mpfr_init2(y[k], 2048);
    ref_softmax(y, X, NX);
    for (int d = 0; d < 2; d++) {
        double t[NX];
        cr_assert_eq(softmax_forward_mpfr(t, X, NULL, 1, NX, (rn_dtype)d), 0);
        for (size_t k = 0; k < NX; k++) {
            double w = rn_round_mpfr(y[k], (rn_dtype)d);
            cr_assert(t[k] == w, "dtype %d y[%zu]: twin %a, 2048-bit %a", d, k, t[k], w);
        }
    }
    for (size_t k = 0; k < NX; k++)
        mpfr_clear(y[k]);
}

Test(softmax, twin_backward_matches_finite_differences)
{
    double dy[NX], dx[NX], xs[NX];
    for (size_t k = 0; k < NX; k++) {
        dy[k] = 0.25 * (double)k - 1.0;
        xs[k] = X[k];
    }
    cr_assert_eq(softmax_backward_mpfr(dx, X, NULL, dy, 1, NX, RN_F64), 0);
    mpfr_t y[NX], lp, lm, t;
    for (size_t k = 0; k < NX; k++)
        mpfr_init2(y[k], 2048);
    mpfr_inits2(2048, lp, lm, t, (mpfr_ptr)0);
    const double h = 0x1p-30;
    for (size_t i = 0; i < NX; i++) {
        for (int s = 0; s < 2; s++) {
            xs[i] = X[i] + (s ? -h : h); /* exact in binary64 for these x */
            ref_softmax(y, xs, NX);
            mpfr_ptr L = s ? lm : lp;
            mpfr_set_zero(L, 1);
            for (size_t k = 0; k < NX; k++) {
                mpfr_mul_d(t, y[k], dy[k], MPFR_RNDN);
                mpfr_add(L, L, t, MPFR_RNDN);
            }
        }
        xs[i] = X[i];
        mpfr_sub(t, lp, lm, MPFR_RNDN);
        mpfr_div_d(t, t, 2 * h, MPFR_RNDN);
        double g = mpfr_get_d(t, MPFR_RNDN);
        /* central difference error O(h^2) = 1e-18 relative: far below f64's 1e-16 */
        cr_assert(fabs(dx[i] - g) <= 0x1p-50 * fabs(g) + 0x1p-60, "dx[%zu]: twin %a, finite difference %a",
                  i, dx[i], g);
    }
    for (size_t k = 0; k < NX; k++)
        mpfr_clear(y[k]);
    mpfr_clears(lp, lm, t, (mpfr_ptr)0);
}

Test(softmax, twin_exact_cases)
{
    /* equal logits: 1/3 rounded once, 1/4 exactly; dx = 0 exactly for a constant dy */
    const double x[7] = {2.5, 2.5, 2.5, -1.0, -1.0, -1.0, -1.0};
    double y[7], dx[7], dy[7] = {0.75, 0.75, 0.75, 1, 2, 3, 4};
    cr_assert_eq(softmax_forward_mpfr(y, x, NULL, 1, 3, RN_F32), 0);
    cr_assert_eq(softmax_forward_mpfr(y + 3, x + 3, NULL, 1, 4, RN_F32), 0);
    cr_assert(y[0] == (double)(1.0f / 3.0f) && y[3] == 0.25, "%a %a", y[0], y[3]);
    cr_assert_eq(softmax_backward_mpfr(dx, x, NULL, dy, 1, 3, RN_F32), 0);
    cr_assert(dx[0] == 0.0 && dx[1] == 0.0 && dx[2] == 0.0);
    /* z = [0, 0, 1, 1], dy = [1, 3, 2, 2]: dx[2] = dx[3] = 0 exactly although the z differ */
    const double z2[4] = {0, 0, 1, 1}, d2[4] = {1, 3, 2, 2};
    double o[4];
    cr_assert_eq(softmax_backward_mpfr(o, z2, NULL, d2, 1, 4, RN_F64), 0);
    cr_assert(o[2] == 0.0 && o[3] == 0.0, "%a %a", o[2], o[3]);
    cr_assert(o[0] < 0 && o[1] > 0);
}

TestSuite(softmax_cli, .init = setup, .fini = teardown);

Test(softmax_cli, max_not_subtracted_fails_kernel_passes)
{
    enum { R = 2, N = 6 };
    double x[R * N], y[R * N];
    for (int i = 0; i < R * N; i++)
        x[i] = 84.0 + (double)(i % N) + 0.25 * (double)(i / N);
    size_t s[2] = {R, N};
    put_npy("x.npy", RN_F32, 2, s, x);
    for (int bug = 0; bug < 2; bug++) {
        for (int r = 0; r < R; r++) {
            float sum = 0.0f, m = bug ? 0.0f : (float)x[r * N + N - 1]; /* the row max */
            for (int k = 0; k < N; k++)
                sum += expf((float)x[r * N + k] - m);
            for (int k = 0; k < N; k++)
                y[r * N + k] = expf((float)x[r * N + k] - m) / sum;
        }
        put_npy("y.npy", RN_F32, 2, s, y);
        int rc = run("check softmax --in x=%s --actual y=%s --dtype f32", P("x.npy"), P("y.npy"));
        cr_assert_eq(rc, bug ? 1 : 0, "bug %d: %s%s", bug, out_text, err_text);
    }
    size_t s2[2] = {R, N - 1};
    put_npy("m.npy", RN_F32, 2, s2, x);
    cr_assert_eq(run("eval softmax --in x=%s --in mask=%s --out %s", P("x.npy"), P("m.npy"), P("o")), 2);
    cr_assert(strstr(err_text, "m.npy"), "%s", err_text);
}
