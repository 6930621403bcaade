/* The residual add (ref/residual.c, ref/residual_mpfr.c, ref/residual_bound.c, cli/op_residual.c):
 *  - the float and double kernels against the golden vectors, within the a-priori bound of
 *    specs/error-analysis-residual.md (the worst error/bound ratio is printed), and bit for bit
 *    against the golden file of their own format (an IEEE addition is correctly rounded);
 *  - the MPFR twin against independent computations in hardware arithmetic (below);
 *  - `resnorm eval` / `resnorm check` on hand-derived values, and bad input.
 * Expected values never come from the code under test: golden values come from the twin, the
 * twin is checked against hardware additions, and the CLI against values derived in comments. */
#include <criterion/criterion.h>
#include <float.h>
#include <jansson.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "npy.h"
#include "golden_harness.h"
#include "residual.h"
#include "residual_bound.h"
#include "residual_mpfr.h"

#define MANIFEST "golden/manifest.json"

/* Same value, and the same sign for zeros; NaN matches NaN. */
static int same(double a, double b)
{
    if (isnan(a) || isnan(b))
        return isnan(a) && isnan(b);
    return a == b && signbit(a) == signbit(b);
}

/* ================================================================ kernels vs golden */

/* Worst |got - want| / bound; fails on any element beyond its bound.  want is the f64 golden
   value; NaN/Inf wants demand the same class; where the bound is +Inf (overflow of the compute or
   output format, the analysis is void) got must equal the golden value of the output format,
   `exact_out` (a correct adder overflows to that infinity). */
static double compare(const char *id, const char *what, const double *got, const double *want,
                      const double *exact_out, const double *bound, size_t count)
{
    double worst = 0.0;
    for (size_t i = 0; i < count; i++) {
        if (!isfinite(want[i]) || isinf(bound[i])) {
            const double *w = isinf(bound[i]) ? exact_out : want;
            cr_assert(same(got[i], w[i]) || (got[i] == w[i]), "%s %s[%zu]: got %a, want %a", id,
                      what, i, got[i], w[i]);
            continue;
        }
        double err = fabs(got[i] - want[i]);
        cr_assert(err <= bound[i], "%s %s[%zu]: got %.17g want %.17g err %.3g > bound %.3g", id,
                  what, i, got[i], want[i], err, bound[i]);
        if (bound[i] > 0 && err / bound[i] > worst)
            worst = err / bound[i];
    }
    return worst;
}

static const char *path_of(json_t *obj, const char *key)
{
    const char *p = json_string_value(json_object_get(obj, key));
    cr_assert_not_null(p, "manifest: no %s", key);
    return p;
}

typedef struct {
    double worst[2][RN_NDTYPES]; /* [f32 kernel?][output dtype] */
    int cases[2];
} tally;

/* Run the kernel of the case's input precision; compare its result, and its result rounded to each
   narrower output format, with the golden values.  Forward or backward. */
static void run_case(json_t *c, int backward, tally *t)
{
    const char *id = json_string_value(json_object_get(c, "id"));
    json_t *in = json_object_get(c, "inputs"), *exp = json_object_get(c, "expected");
    rn_array x = load(path_of(in, backward ? "dy" : "x"));
    rn_array f = backward ? x : load(path_of(in, "f"));
    size_t N = x.count;
    int f32 = x.dtype == RN_F32;
    rn_dtype cd = f32 ? RN_F32 : RN_F64;
    double *got = malloc(N * sizeof *got), *got2 = malloc(N * sizeof *got2);
    double *b = malloc(N * sizeof *b), *b2 = malloc(N * sizeof *b2), *r = malloc(N * sizeof *r);
    if (f32) {
        float *fx = malloc(N * sizeof *fx), *ff = malloc(N * sizeof *ff);
        float *fo = calloc(N, sizeof *fo), *fo2 = calloc(N, sizeof *fo2);
        for (size_t i = 0; i < N; i++)
            fx[i] = (float)x.data[i], ff[i] = (float)f.data[i];
        if (backward) {
            residual_backward_f32(fo, fo2, fx, (int)N); /* from zero: dx = df = dy */
        } else {
            memcpy(fo, fx, N * sizeof *fo);
            residual_forward_f32(fo, fo, ff, (int)N); /* in place: y aliases x */
        }
        for (size_t i = 0; i < N; i++)
            got[i] = fo[i], got2[i] = backward ? fo2[i] : fo[i];
        free(fx), free(ff), free(fo), free(fo2);
    } else {
        double *zero = calloc(N, sizeof *zero);
        if (backward) {
            memcpy(got, zero, N * sizeof *got);
            memcpy(got2, zero, N * sizeof *got2);
            residual_backward_f64(got, got2, x.data, (int)N);
        } else {
            residual_forward_f64(got, x.data, f.data, (int)N);
            memcpy(got2, got, N * sizeof *got);
        }
        free(zero);
    }
    /* Every output format the kernel can serve: its own, and (f32 kernel) f16, bf16 by one more
       rounding of its outputs, as an f16/bf16 implementation accumulating in f32 does. */
    for (int d = 0; d < RN_NDTYPES; d++) {
        rn_dtype od = (rn_dtype)d;
        if (od != cd && !(f32 && (od == RN_F16 || od == RN_BF16)))
            continue;
        json_t *e64 = json_object_get(exp, "f64"), *eod = json_object_get(exp, rn_dtype_name(od));
        const char *names[2] = {backward ? "dx" : "y", backward ? "df" : NULL};
        if (backward)
            cr_assert_eq(residual_backward_bound(b, b2, x.data, N, cd, od), 0);
        else
            cr_assert_eq(residual_forward_bound(b, x.data, f.data, N, cd, od), 0);
        for (int k = 0; k < 2 && names[k]; k++) {
            rn_array want = load(path_of(e64, names[k])), wod = load(path_of(eod, names[k]));
            const double *g = k ? got2 : got;
            for (size_t i = 0; i < N; i++)
                r[i] = rn_round(g[i], od);
            double w = compare(id, names[k], r, want.data, wod.data, k ? b2 : b, N);
            if (od == cd) /* one IEEE addition is the exact sum rounded once: the golden bits */
                for (size_t i = 0; i < N; i++)
                    cr_assert(backward ? r[i] == wod.data[i] || same(r[i], wod.data[i])
                                       : same(r[i], wod.data[i]),
                              "%s %s[%zu]: kernel %a, golden %s %a", id, names[k], i, r[i],
                              rn_dtype_name(od), wod.data[i]);
            t->worst[f32][d] = fmax(t->worst[f32][d], w);
            rn_array_free(&want), rn_array_free(&wod);
        }
    }
    t->cases[f32]++;
    free(got), free(got2), free(b), free(b2), free(r);
    rn_array_free(&x);
    if (!backward)
        rn_array_free(&f);
}

static void run_golden(const char *op, int backward)
{
    json_error_t jerr;
    json_t *man = json_load_file(MANIFEST, 0, &jerr);
    cr_assert_not_null(man, "%s: %s", MANIFEST, jerr.text);
    tally t;
    memset(&t, 0, sizeof t);
    size_t k;
    json_t *c;
    json_array_foreach(json_object_get(man, "cases"), k, c)
    {
        const char *dt = json_string_value(json_object_get(c, "input_dtype"));
        if (strcmp(json_string_value(json_object_get(c, "op")), op) != 0 || !dt ||
            (strcmp(dt, "f32") != 0 && strcmp(dt, "f64") != 0))
            continue;
        run_case(c, backward, &t);
    }
    json_decref(man);
    cr_assert(t.cases[0] > 0 && t.cases[1] > 0, "%s: no f64 or no f32 golden case", op);
    printf("%s kernels vs golden: f64 %d cases, worst error/bound %.3g; f32 %d cases, worst "
           "error/bound %.6g (f32 outputs), %.3g (f16 outputs), %.3g (bf16 outputs)\n", op,
           t.cases[0], t.worst[0][RN_F64], t.cases[1], t.worst[1][RN_F32], t.worst[1][RN_F16],
           t.worst[1][RN_BF16]);
}

Test(residual_golden, forward_kernels_within_bound) { run_golden("residual", 0); }
Test(residual_golden, backward_kernels_within_bound) { run_golden("residual_backward", 1); }

/* The bound is not vacuous: a kernel that adds in bf16 (a narrower format than it promises) fails
   it on the golden random case. */
Test(residual_golden, bound_catches_a_bf16_adder)
{
    rn_array x = load("golden/residual/random_f32/x.npy"), f = load("golden/residual/random_f32/f.npy");
    rn_array want = load("golden/residual/random_f32/f64/y.npy");
    double *b = malloc(x.count * sizeof *b);
    cr_assert_eq(residual_forward_bound(b, x.data, f.data, x.count, RN_F32, RN_F32), 0);
    size_t bad = 0;
    for (size_t i = 0; i < x.count; i++) {
        double g = rn_round(rn_round(x.data[i], RN_BF16) + rn_round(f.data[i], RN_BF16), RN_BF16);
        bad += fabs(g - want.data[i]) > b[i];
    }
    cr_assert_gt(bad, x.count / 2, "only %zu of %zu bf16 sums outside the f32 bound", bad, x.count);
    free(b);
    rn_array_free(&x), rn_array_free(&f), rn_array_free(&want);
}

/* ================================================================ twin vs hardware */

/* Oracles, each an IEEE computation independent of MPFR and of ref/dtype.c:
 *
 * f32 + f32 -> f32: (float)((double)x + (double)f).  When the exponents of x and f are close the
 *   double sum is exact and the cast is the only rounding.  Otherwise it rounds twice, and that is
 *   still the correctly rounded sum: for q-bit operands and an intermediate format of p >= 2q + 2
 *   bits, RN_q(RN_p(x + f)) = RN_q(x + f) (Figueroa, "When is double rounding innocuous?", SIGNUM
 *   1995), and 53 >= 2*24 + 2.  Ranges: every float sum is finite and normal-or-exact in double
 *   (a float sum below 2^-126 is a multiple of 2^-149 with at most 24 bits, exact in double); the
 *   cast then applies float's subnormals and overflow (IEEE decides overflow on the value rounded
 *   with unbounded exponent, which the double rounding preserves) once.
 * f16 + f16 -> f16 and bf16 + bf16 -> bf16: the same argument with float as the intermediate
 *   (24 >= 2*11 + 2, 24 >= 2*8 + 2), then GCC's _Float16 conversion, or round-to-nearest-even on
 *   the binary32 bit pattern for bf16.
 * f64 + f64 -> f64: the hardware sum itself (IEEE addition is correctly rounded).
 * f64 + f64 -> f32: 53 < 2*24 + 2, so (float)(x + f) can be wrong; TwoSum gives s + e = x + f
 *   exactly (|e| <= half an ulp of s), and RN_24(s + e) differs from RN_24(s) only when s is
 *   exactly halfway between two floats (any other float-rounding boundary is a double at least
 *   one double-ulp away from s, and s + e stays strictly closer); then the sign of e decides. */
static double oracle_f32(double x, double f) { return (float)(x + f); }

static double oracle_f16(double x, double f)
{
    float s = (float)x + (float)f;
    return (double)(_Float16)s;
}

static float bf16_from_bits(uint16_t b)
{
    uint32_t u = (uint32_t)b << 16;
    float v;
    memcpy(&v, &u, sizeof v);
    return v;
}

static double oracle_bf16(double x, double f)
{
    float s = (float)x + (float)f;
    if (isnan(s))
        return NAN;
    uint32_t u;
    memcpy(&u, &s, sizeof u);
    u += 0x7FFFu + ((u >> 16) & 1u); /* round to nearest even on the upper half (carries to Inf) */
    return bf16_from_bits((uint16_t)(u >> 16));
}

static double oracle_f64(double x, double f) { return x + f; }

static double oracle_f64_to_f32(double x, double f)
{
    double s = x + f;
    if (!isfinite(s))
        return (float)s;
    double z = s - x, e = (x - (s - z)) + (f - z); /* TwoSum (Knuth): s + e = x + f exactly */
    float r = (float)s;
    if (e == 0 || (double)r == s)
        return r;
    float lo = (double)r < s ? r : nextafterf(r, -INFINITY);
    float hi = (double)r < s ? nextafterf(r, INFINITY) : r;
    double T = (double)FLT_MAX + 0x1p103; /* halfway between FLT_MAX and 2^128: the overflow tie */
    double mid = isinf(hi) ? T : isinf(lo) ? -T : ((double)lo + (double)hi) / 2; /* exact */
    if (s != mid)
        return r;
    return e > 0 ? hi : lo;
}

static uint64_t sm_next(uint64_t *z)
{
    uint64_t r = (*z += 0x9E3779B97F4A7C15ull);
    r = (r ^ (r >> 30)) * 0xBF58476D1CE4E5B9ull;
    r = (r ^ (r >> 27)) * 0x94D049BB133111EBull;
    return r ^ (r >> 31);
}

/* A random value of format d from random bits: all signs, exponents (subnormals, zeros, Inf,
   NaN). near != NULL: the same exponent as *near, give or take 2, so that sums round and cancel. */
static double random_value(rn_dtype d, uint64_t *z, const double *near)
{
    uint64_t r = sm_next(z);
    switch (d) {
    case RN_F64: {
        if (near) {
            uint64_t nb;
            memcpy(&nb, near, sizeof nb);
            long ex = (long)((nb >> 52) & 0x7FF) + (long)(r % 5) - 2;
            if (ex < 0 || ex > 0x7FE)
                ex = (long)((nb >> 52) & 0x7FF);
            r = (r & 0x800FFFFFFFFFFFFFull) | ((uint64_t)ex << 52);
        }
        double v;
        memcpy(&v, &r, sizeof v);
        return v;
    }
    case RN_F32: {
        uint32_t u = (uint32_t)r;
        if (near) {
            float nf = (float)*near;
            uint32_t nb;
            memcpy(&nb, &nf, sizeof nb);
            long ex = (long)((nb >> 23) & 0xFF) + (long)((r >> 32) % 5) - 2;
            if (ex < 0 || ex > 0xFE)
                ex = (long)((nb >> 23) & 0xFF);
            u = (u & 0x807FFFFFu) | ((uint32_t)ex << 23);
        }
        float v;
        memcpy(&v, &u, sizeof v);
        return v;
    }
    case RN_F16: {
        uint16_t u = (uint16_t)r;
        _Float16 h;
        memcpy(&h, &u, sizeof h);
        return (double)h;
    }
    default:
        return bf16_from_bits((uint16_t)r);
    }
}

/* Pairs: random bits, same-exponent pairs, f = -x, and the edges of every format. */
static void twin_vs(rn_dtype in, rn_dtype out, double (*oracle)(double, double), size_t count)
{
    uint64_t z = 0x5EED0000u + (uint64_t)in * 16 + (uint64_t)out;
    const double M = in == RN_F64 ? DBL_MAX : in == RN_F32 ? FLT_MAX : in == RN_F16 ? 65504.0
                                                                                    : 0x1.fep127;
    const double edges[][2] = {{0.0, -0.0}, {-0.0, 0.0}, {-0.0, -0.0}, {1.0, -1.0}, {M, M},
                               {M, -M},     {-M, -M},    {INFINITY, -INFINITY}, {NAN, 1.0},
                               {INFINITY, 1.0}, {1.0, 0x1p-60}, {1.0 + 0x1p-11, 0x1p-80},
                               {1.0 + 0x1p-24, 0x1p-80}, {1.0 + 0x1p-24, -0x1p-80},
                               {(double)FLT_MAX, 0x1p103}, {(double)FLT_MAX + 0x1p103, 0x1p-900},
                               {(double)FLT_MAX + 0x1p103, -0x1p-900}, {0x1p-149, -0x1p-150}};
    size_t nedges = sizeof edges / sizeof edges[0];
    double *x = malloc((count + nedges) * sizeof *x), *f = malloc((count + nedges) * sizeof *f);
    double *y = malloc((count + nedges) * sizeof *y);
    size_t n = 0;
    for (size_t e = 0; e < nedges; e++) {
        double a = edges[e][0], b = edges[e][1];
        /* only pairs that are values of the input format */
        int ok = in == RN_F64;
        if (in == RN_F32)
            ok = ((double)(float)a == a || isnan(a)) && ((double)(float)b == b || isnan(b));
        if (in == RN_F16)
            ok = ((double)(_Float16)a == a || isnan(a)) && ((double)(_Float16)b == b || isnan(b));
        if (in == RN_BF16)
            ok = (fabs(a) <= 0x1.fep127 || !isfinite(a)) && oracle_bf16(a, 0.0) == a &&
                 oracle_bf16(b, 0.0) == b;
        if (ok)
            x[n] = a, f[n] = b, n++;
    }
    for (size_t i = 0; i < count; i++, n++) {
        x[n] = random_value(in, &z, NULL);
        switch (i % 4) {
        case 0: f[n] = random_value(in, &z, NULL); break;
        case 1: f[n] = random_value(in, &z, &x[n]); break;
        case 2: f[n] = -random_value(in, &z, &x[n]); break;
        default: f[n] = -x[n]; break;
        }
    }
    cr_assert_eq(residual_forward_mpfr(y, x, f, n, out), RN_TWIN_OK);
    for (size_t i = 0; i < n; i++) {
        double w = oracle(x[i], f[i]);
        cr_assert(same(y[i], w), "%s + %s -> %s: %a + %a: twin %a, hardware %a", rn_dtype_name(in),
                  rn_dtype_name(in), rn_dtype_name(out), x[i], f[i], y[i], w);
    }
    free(x), free(f), free(y);
}

Test(residual_twin, f32_matches_double_then_float) { twin_vs(RN_F32, RN_F32, oracle_f32, 200000); }
Test(residual_twin, f64_matches_hardware_add) { twin_vs(RN_F64, RN_F64, oracle_f64, 200000); }
Test(residual_twin, f64_to_f32_matches_twosum) { twin_vs(RN_F64, RN_F32, oracle_f64_to_f32, 200000); }
Test(residual_twin, f16_matches_float_then_half) { twin_vs(RN_F16, RN_F16, oracle_f16, 100000); }
Test(residual_twin, bf16_matches_float_then_bf16) { twin_vs(RN_BF16, RN_BF16, oracle_bf16, 100000); }

/* The backward twin: dx = df = dy rounded once (f64 -> f32 by the hardware cast, one rounding). */
Test(residual_twin, backward_is_dy_rounded_once)
{
    uint64_t z = 42;
    enum { N = 10000 };
    static double dy[N], dx[N], df[N];
    for (size_t i = 0; i < N; i++)
        dy[i] = random_value(RN_F64, &z, NULL);
    dy[0] = -0.0;
    cr_assert_eq(residual_backward_mpfr(dx, df, dy, N, RN_F32), RN_TWIN_OK);
    for (size_t i = 0; i < N; i++) {
        double w = (float)dy[i];
        cr_assert(same(dx[i], w) && same(df[i], w), "dy %a: dx %a df %a, want %a", dy[i], dx[i],
                  df[i], w);
    }
}

/* ================================================================ the CLI */

#define CLI_HARNESS_PREFIX "/tmp/resnorm_test_residual."
#include "cli_harness.h"

static void put(const char *name, rn_dtype d, int ndim, const size_t *shape, const double *v)
{
    put_npy(name, d, ndim, shape, v);
}

static void expect_file(const char *name, rn_dtype d, size_t count, const double *want)
{
    rn_array a = load(P(name));
    cr_assert_eq(a.dtype, d, "%s: dtype %s", name, rn_dtype_name(a.dtype));
    cr_assert_eq(a.count, count);
    for (size_t i = 0; i < count; i++)
        cr_assert(same(a.data[i], want[i]), "%s[%zu] = %a, expected %a", name, i, a.data[i],
                  want[i]);
    rn_array_free(&a);
}

TestSuite(residual_cli, .init = setup, .fini = teardown);

/* x = [1.5, -0, FLT_MAX, 1], f = [2.25, +0, FLT_MAX, 2^-30], shape (2, 2):
 *   exact sums [3.75, +0 (IEEE: -0 + +0 = +0), 2 FLT_MAX = 2^129 - 2^105, 1 + 2^-30];
 *   f64: all representable; f32: 2 FLT_MAX overflows to +Inf, 1 + 2^-30 rounds to 1. */
static const size_t S22[] = {2, 2};
static const double X[] = {1.5, -0.0, 0x1.fffffep127, 1.0}, F[] = {2.25, 0.0, 0x1.fffffep127, 0x1p-30};
static const double Y64[] = {3.75, 0.0, 0x1.fffffep128, 1.0 + 0x1p-30};
static const double Y32[] = {3.75, 0.0, INFINITY, 1.0};

Test(residual_cli, eval_forward_and_backward)
{
    put("x.npy", RN_F32, 2, S22, X);
    put("f.npy", RN_F32, 2, S22, F);
    int rc = run("eval residual --in x=%s --in f=%s --out %s", P("x.npy"), P("f.npy"), P("o32"));
    cr_assert_eq(rc, 0, "exit %d: %s", rc, err_text);
    expect_file("o32/y.npy", RN_F32, 4, Y32);
    rc = run("eval residual --in f=%s --in x=%s --dtype f64 --out %s", P("f.npy"), P("x.npy"),
             P("o64"));
    cr_assert_eq(rc, 0, "exit %d: %s", rc, err_text);
    expect_file("o64/y.npy", RN_F64, 4, Y64);
    /* backward: dx = df = dy exactly; dy = x, f16: 1.5 -> 1.5, -0 -> -0, FLT_MAX -> Inf, 1 -> 1 */
    rc = run("eval residual_backward --in dy=%s --dtype f16 --out %s", P("x.npy"), P("ob"));
    cr_assert_eq(rc, 0, "exit %d: %s", rc, err_text);
    static const double D16[] = {1.5, -0.0, INFINITY, 1.0};
    expect_file("ob/dx.npy", RN_F16, 4, D16);
    expect_file("ob/df.npy", RN_F16, 4, D16);
}

Test(residual_cli, check_passes_exact_and_catches_one_ulp)
{
    put("x.npy", RN_F32, 2, S22, X);
    put("f.npy", RN_F32, 2, S22, F);
    put("y.npy", RN_F32, 2, S22, Y32);
    /* Y32 is what an f32 adder returns: pass; the overflowed element is unconstrained (want, the
       exact sum in f64, is finite; the analysis is void past the format's range). */
    int rc = run("check residual --in x=%s --in f=%s --actual y=%s", P("x.npy"), P("f.npy"),
                 P("y.npy"));
    cr_assert_eq(rc, 0, "exit %d: %s%s", rc, out_text, err_text);
    cr_assert_not_null(strstr(out_text, "check residual: dtype f32, compute dtype f32\n"), "%s",
                       out_text);
    cr_assert_not_null(strstr(out_text, "1 elements unconstrained"), "%s", out_text);
    /* 3.75 + one f32 ulp (2^-22): error 2^-22 > u |x + f| = 2^-24 * 3.75 */
    double bad[4];
    memcpy(bad, Y32, sizeof bad);
    bad[0] = 3.75 + 0x1p-22;
    put("bad.npy", RN_F32, 2, S22, bad);
    rc = run("check residual --in x=%s --in f=%s --actual y=%s --json", P("x.npy"), P("f.npy"),
             P("bad.npy"));
    cr_assert_eq(rc, 1, "exit %d: %s%s", rc, out_text, err_text);
    json_error_t jerr;
    json_t *root = json_loads(out_text, 0, &jerr);
    cr_assert_not_null(root, "%s", out_text);
    cr_assert_str_eq(json_string_value(json_object_get(root, "tolerance")),
                     "specs/error-analysis-residual.md");
    cr_assert_null(json_object_get(root, "eps"));
    json_t *y = json_object_get(json_object_get(root, "outputs"), "y");
    cr_assert_eq(json_integer_value(json_object_get(y, "mismatches")), 1);
    json_decref(root);
    /* backward: dy passed through exactly */
    rc = run("check residual_backward --in dy=%s --actual dx=%s --actual df=%s", P("f.npy"),
             P("f.npy"), P("f.npy"));
    cr_assert_eq(rc, 0, "exit %d: %s%s", rc, out_text, err_text);
}

Test(residual_cli, bad_input_exit_2_no_output)
{
    static const size_t S4[] = {4}, S3[] = {3};
    put("x.npy", RN_F32, 1, S4, X);
    put("f3.npy", RN_F32, 1, S3, F);
    put("f22.npy", RN_F32, 2, S22, F);
    int rc = run("eval residual --in x=%s --in f=%s --out %s", P("x.npy"), P("f3.npy"), P("out"));
    cr_assert_eq(rc, 2, "exit %d", rc);
    cr_assert_not_null(strstr(err_text, "input f"), "%s", err_text);
    cr_assert_not_null(strstr(err_text, "does not match x.shape (4,)"), "%s", err_text);
    cr_assert_eq(access(P("out"), F_OK), -1, "output directory left behind");
    /* same count, other shape: still refused (no broadcasting, no reshaping) */
    rc = run("eval residual --in x=%s --in f=%s --out %s", P("x.npy"), P("f22.npy"), P("out"));
    cr_assert_eq(rc, 2, "exit %d", rc);
    cr_assert_eq(access(P("out"), F_OK), -1, "output directory left behind");
    rc = run("check residual --in x=%s --in f=%s --actual y=%s", P("x.npy"), P("f3.npy"),
             P("x.npy"));
    cr_assert_eq(rc, 2, "exit %d", rc);
    /* no attributes, missing input, unknown output */
    rc = run("eval residual --in x=%s --in f=%s --attr eps=1e-5 --out %s", P("x.npy"),
             P("x.npy"), P("out"));
    cr_assert_eq(rc, 2);
    cr_assert_not_null(strstr(err_text, "residual has no attributes"), "%s", err_text);
    rc = run("eval residual --in x=%s --out %s", P("x.npy"), P("out"));
    cr_assert_eq(rc, 2);
    cr_assert_not_null(strstr(err_text, "missing required input 'f'"), "%s", err_text);
    rc = run("check residual_backward --in dy=%s --actual y=%s", P("x.npy"), P("x.npy"));
    cr_assert_eq(rc, 2);
    cr_assert_not_null(strstr(err_text, "outputs: dx, df"), "%s", err_text);
    cr_assert_eq(access(P("out"), F_OK), -1, "output directory left behind");
}
