/* Dropout with a given mask (ref/dropout.c, ref/dropout_mpfr.c, ref/dropout_bound.c,
 * cli/op_dropout.c):
 *  - the float and double kernels against every golden dropout / dropout_backward case, within the
 *    bound of specs/error-analysis-dropout.md (worst error/bound printed);
 *  - the twin against an independent 4096-bit division (bit for bit, every output dtype);
 *  - the twin's backward against 4096-bit central finite differences of L = Σ dy·y;
 *  - mutants (not scaled by 1/(1 - p), mask not applied in the backward) fail `resnorm check`, the
 *    float kernel passes; a mask that is not 0/1 and p >= 1 exit 2. */
#include <criterion/criterion.h>
#include <jansson.h>
#include <math.h>
#include <mpfr.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CLI_HARNESS_PREFIX "/tmp/resnorm_test_dropout."
#include "cli_harness.h"
#include "dropout.h"
#include "dropout_bound.h"
#include "dropout_mpfr.h"
#include "golden_harness.h"

#define MANIFEST "golden/manifest.json"

Test(dropout, kernels_within_bound_on_golden)
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
        if (strcmp(op, "dropout") && strcmp(op, "dropout_backward"))
            continue;
        int bwd = !strcmp(op, "dropout_backward");
        const char *id = json_string_value(json_object_get(c, "id"));
        json_t *in = json_object_get(c, "inputs");
        rn_array a = load(get_path(in, bwd ? "dy" : "x")), mk = load(get_path(in, "mask"));
        rn_array want = load(get_path(json_object_get(json_object_get(c, "expected"), "f64"),
                                      bwd ? "dx" : "y"));
        const char *pt = json_string_value(json_object_get(json_object_get(c, "attrs"), "p"));
        int f32ok = strcmp(json_string_value(json_object_get(c, "input_dtype")), "f64") != 0;
        size_t n = a.count;
        double *got = calloc(n, sizeof *got), *bd = calloc(n, sizeof *bd);
        for (int p32 = 0; p32 < 1 + f32ok; p32++) {
            rn_dtype cd = p32 ? RN_F32 : RN_F64;
            double p;
            cr_assert_eq(rn_parse_eps(pt, a.dtype, &p), 0);
            if (p32) {
                float *af = malloc(n * sizeof *af), *mf = malloc(n * sizeof *mf), *of = calloc(n, sizeof *of);
                for (size_t k = 0; k < n; k++)
                    af[k] = (float)a.data[k], mf[k] = (float)mk.data[k];
                float s = dropout_scale_f32((float)p);
                if (bwd)
                    dropout_backward_f32(of, af, mf, s, (int)n);
                else
                    dropout_forward_f32(of, af, mf, s, (int)n);
                for (size_t k = 0; k < n; k++)
                    got[k] = of[k];
                free(af), free(mf), free(of);
            } else {
                memset(got, 0, n * sizeof *got);
                double s = dropout_scale_f64(p);
                if (bwd)
                    dropout_backward_f64(got, a.data, mk.data, s, (int)n);
                else
                    dropout_forward_f64(got, a.data, mk.data, s, (int)n);
            }
            cr_assert_eq(dropout_bound(bd, a.data, mk.data, p, n, cd, cd), 0);
            for (size_t k = 0; k < n; k++) {
                double w = want.data[k];
                if (!isfinite(w)) {
                    cr_assert(isnan(w) ? isnan(got[k]) : got[k] == w, "%s [%zu]: got %a want %a", id, k, got[k], w);
                    continue;
                }
                double err = fabs(got[k] - w);
                cr_assert(err <= bd[k], "%s [%zu] (%s kernel): got %.17g want %.17g err %.3g > bound %.3g",
                          id, k, p32 ? "f32" : "f64", got[k], w, err, bd[k]);
                if (bd[k] > 0 && err / bd[k] > worst[p32])
                    worst[p32] = err / bd[k];
            }
        }
        free(got), free(bd);
        rn_array_free(&a), rn_array_free(&mk), rn_array_free(&want);
        ncases++;
    }
    cr_assert_geq(ncases, 10);
    printf("dropout: %zu golden entries; worst err/bound f64 kernel %.3g, f32 kernel %.3g\n", ncases,
           worst[0], worst[1]);
    json_decref(m);
}

static const double X[] = {1.0, -3.0, 0x1.8p-130, 7.25, 1e30, -0.1, 2.0 / 3.0, 65504.0};
static const double M[] = {1, 1, 1, 1, 1, 0, 1, 1};
#define NX (sizeof X / sizeof X[0])

Test(dropout, twin_matches_4096_bit_division)
{
    const char *ps[] = {"0.1", "0.5", "0.3", "0.999", "0"};
    for (size_t k = 0; k < sizeof ps / sizeof ps[0]; k++)
        for (int d = 0; d < RN_NDTYPES; d++) {
            double p, y[NX];
            cr_assert_eq(rn_parse_eps(ps[k], RN_F32, &p), 0);
            cr_assert_eq(dropout_forward_mpfr(y, X, M, p, NX, (rn_dtype)d), 0);
            mpfr_t q, den;
            mpfr_inits2(4096, q, den, (mpfr_ptr)0);
            for (size_t i = 0; i < NX; i++) {
                mpfr_set_d(den, 1.0, MPFR_RNDN);
                mpfr_sub_d(den, den, p, MPFR_RNDN);
                mpfr_set_d(q, X[i] * M[i], MPFR_RNDN);
                mpfr_div(q, q, den, MPFR_RNDN);
                double want = rn_round_mpfr(q, (rn_dtype)d);
                if (want == 0)
                    want = 0.0;
                cr_assert(y[i] == want, "p %s dtype %d [%zu]: twin %a, 4096-bit %a", ps[k], d, i, y[i], want);
            }
            mpfr_clears(q, den, (mpfr_ptr)0);
        }
}

Test(dropout, twin_backward_matches_finite_differences)
{
    double p, dy[NX], dx[NX];
    cr_assert_eq(rn_parse_eps("0.1", RN_F32, &p), 0);
    for (size_t i = 0; i < NX; i++)
        dy[i] = (double)(float)(0.5 + 0.25 * (double)i);
    cr_assert_eq(dropout_backward_mpfr(dx, dy, M, p, NX, RN_F64), 0);
    /* L(x) = Σ dy_i·x_i·m_i/(1 - p) at 4096 bits; dL/dx_i by a central difference (exact: L is
       linear in x_i), rounded to f64: must equal the twin's dx */
    mpfr_t lp, lm, t, den;
    mpfr_inits2(4096, lp, lm, t, den, (mpfr_ptr)0);
    mpfr_set_d(den, 1.0, MPFR_RNDN);
    mpfr_sub_d(den, den, p, MPFR_RNDN);
    for (size_t i = 0; i < NX; i++) {
        const double h = 0x1p-20;
        for (int s = 0; s < 2; s++) {
            mpfr_ptr L = s ? lm : lp;
            mpfr_set_zero(L, 1);
            for (size_t k = 0; k < NX; k++) {
                mpfr_set_d(t, X[k], MPFR_RNDN);
                if (k == i)
                    mpfr_add_d(t, t, s ? -h : h, MPFR_RNDN);
                mpfr_mul_d(t, t, M[k] * dy[k], MPFR_RNDN);
                mpfr_div(t, t, den, MPFR_RNDN);
                mpfr_add(L, L, t, MPFR_RNDN);
            }
        }
        mpfr_sub(t, lp, lm, MPFR_RNDN);
        mpfr_div_d(t, t, 2 * h, MPFR_RNDN);
        double g = mpfr_get_d(t, MPFR_RNDN);
        if (g == 0)
            g = 0.0;
        cr_assert(dx[i] == g, "dx[%zu]: twin %a, finite difference %a", i, dx[i], g);
    }
    mpfr_clears(lp, lm, t, den, (mpfr_ptr)0);
}

TestSuite(dropout_cli, .init = setup, .fini = teardown);

Test(dropout_cli, mutants_fail_kernel_passes_bad_input_exits_2)
{
    enum { N = 64 };
    double x[N], m[N], y[N];
    for (int i = 0; i < N; i++) {
        x[i] = (double)(float)((i % 7) - 3.2 + 0.01 * i);
        m[i] = i % 5 == 0 ? 0.0 : 1.0;
    }
    size_t s[1] = {N};
    put_npy("x.npy", RN_F32, 1, s, x);
    put_npy("m.npy", RN_F32, 1, s, m);
    float sc = dropout_scale_f32(0.1f);
    for (int bug = 0; bug < 3; bug++) {
        /* bug 1: not scaled; bug 2: the mask not applied (the backward of a dropout that forgets it) */
        for (int i = 0; i < N; i++)
            y[i] = bug == 1 ? (float)x[i] * (float)m[i] : bug == 2 ? (float)x[i] * sc : (float)x[i] * (float)m[i] * sc;
        put_npy("y.npy", RN_F32, 1, s, y);
        int rc = run("check dropout_backward --in x=%s --in mask=%s --in dy=%s --attr p=0.1 "
                     "--actual dx=%s --dtype f32", P("x.npy"), P("m.npy"), P("x.npy"), P("y.npy"));
        cr_assert_eq(rc, bug ? 1 : 0, "bug %d: %s%s", bug, out_text, err_text);
    }
    m[3] = 0.5;
    put_npy("m2.npy", RN_F32, 1, s, m);
    cr_assert_eq(run("eval dropout --in x=%s --in mask=%s --attr p=0.1 --out %s", P("x.npy"),
                     P("m2.npy"), P("o")), 2);
    cr_assert(strstr(err_text, "m2.npy"), "%s", err_text);
    cr_assert_eq(run("eval dropout --in x=%s --in mask=%s --attr p=1 --out %s", P("x.npy"),
                     P("m.npy"), P("o")), 2);
}
