/* The linear layer (ref/linear.c, ref/linear_mpfr.c, ref/linear_bound.c, cli/op_linear.c):
 *  - the float and double kernels against every golden case of linear / linear_backward, within
 *    the a-priori bound of specs/error-analysis-linear.md (the worst error/bound ratio is printed);
 *  - the twin against an independent 4096-bit evaluation (bit for bit, every output dtype);
 *  - the twin's ball route against its exact route (bit for bit, every dtype) on planted ties,
 *    near-ties, exact zeros, underflow, overflow, Inf and NaN, and on random inputs;
 *  - the twin's backward against high-precision (4096-bit) central finite differences of the loss
 *    L = Σ dy·y, for every input and every parameter (x, weight, bias);
 *  - mutants (W not transposed, bias dropped, d.weight from one row) fail `resnorm check`, the
 *    correct float kernel passes; bad shapes exit 2.
 * Expected values never come from the code under test. */
#include <criterion/criterion.h>
#include <jansson.h>
#include <math.h>
#include <mpfr.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CLI_HARNESS_PREFIX "/tmp/resnorm_test_linear."
#include "cli_harness.h"
#include "golden_harness.h"
#include "linear.h"
#include "linear_bound.h"
#include "linear_mpfr.h"

#define MANIFEST "golden/manifest.json"

/* ================================================================ kernels vs golden */

typedef struct {
    rn_array x, w, b, dy;
    int have_b;
    size_t rows, in, out;
} lin_in;

static void load_inputs(json_t *c, lin_in *L, int bwd)
{
    json_t *in = json_object_get(c, "inputs");
    L->x = load(get_path(in, "x"));
    L->w = load(get_path(in, "weight"));
    L->have_b = get_path(in, "bias") != NULL;
    if (L->have_b)
        L->b = load(get_path(in, "bias"));
    if (bwd)
        L->dy = load(get_path(in, "dy"));
    L->in = L->x.shape[L->x.ndim - 1];
    L->rows = L->x.count / L->in;
    L->out = L->w.shape[0];
}

static float *to_f32(const double *v, size_t n)
{
    float *f = malloc((n ? n : 1) * sizeof *f);
    for (size_t i = 0; i < n; i++)
        f[i] = (float)v[i]; /* exact: the inputs are f32 (or f16/bf16) values */
    return f;
}

static double *from_f32(const float *f, size_t n)
{
    double *d = malloc((n ? n : 1) * sizeof *d);
    for (size_t i = 0; i < n; i++)
        d[i] = f[i];
    return d;
}

/* Run the f64 kernel (and the f32 one on non-f64 inputs) on case c, compare with its f64 golden
   values under the bound for (compute = out = that precision). */
static void check_case(json_t *c, double *worst64, double *worst32)
{
    const char *id = json_string_value(json_object_get(c, "id"));
    int bwd = !strcmp(json_string_value(json_object_get(c, "op")), "linear_backward");
    int f32ok = strcmp(json_string_value(json_object_get(c, "input_dtype")), "f64") != 0;
    lin_in L;
    load_inputs(c, &L, bwd);
    json_t *ex = json_object_get(json_object_get(c, "expected"), "f64");
    const double *b = L.have_b ? L.b.data : NULL;
    size_t nx = L.rows * L.in, ny = L.rows * L.out, nw = L.out * L.in;
    for (int p = 0; p < 1 + f32ok; p++) {
        rn_dtype cd = p ? RN_F32 : RN_F64;
        double *worst = p ? worst32 : worst64;
        if (!bwd) {
            rn_array want = load(get_path(ex, "y"));
            double *y = calloc(ny, sizeof *y), *by = calloc(ny, sizeof *by);
            if (p) {
                float *xf = to_f32(L.x.data, nx), *wf = to_f32(L.w.data, nw),
                      *bf = b ? to_f32(b, L.out) : NULL, *yf = calloc(ny, sizeof *yf);
                linear_forward_f32(yf, xf, wf, bf, (int)L.rows, (int)L.in, (int)L.out);
                free(y);
                y = from_f32(yf, ny);
                free(xf), free(wf), free(bf), free(yf);
            } else {
                linear_forward_f64(y, L.x.data, L.w.data, b, (int)L.rows, (int)L.in, (int)L.out);
            }
            cr_assert_eq(linear_forward_bound(by, L.x.data, L.w.data, b, L.rows, L.in, L.out, cd, cd), 0);
            double r = golden_compare(id, "y", y, want.data, by, ny);
            if (getenv("LINEAR_VERBOSE"))
                printf("%s p%d y %.3g\n", id, p, r);
            if (r > *worst)
                *worst = r;
            free(y), free(by);
            rn_array_free(&want);
        } else {
            rn_array wdx = load(get_path(ex, "dx")), wdw = load(get_path(ex, "d.weight")),
                     wdb = load(get_path(ex, "d.bias"));
            double *dx = calloc(nx, sizeof *dx), *dw = calloc(nw, sizeof *dw),
                   *db = calloc(L.out, sizeof *db);
            if (p) {
                float *xf = to_f32(L.x.data, nx), *wf = to_f32(L.w.data, nw),
                      *dyf = to_f32(L.dy.data, ny), *dxf = calloc(nx, sizeof *dxf),
                      *dwf = calloc(nw, sizeof *dwf), *dbf = calloc(L.out, sizeof *dbf);
                linear_backward_f32(dxf, dwf, dbf, dyf, xf, wf, (int)L.rows, (int)L.in, (int)L.out);
                free(dx), free(dw), free(db);
                dx = from_f32(dxf, nx), dw = from_f32(dwf, nw), db = from_f32(dbf, L.out);
                free(xf), free(wf), free(dyf), free(dxf), free(dwf), free(dbf);
            } else {
                linear_backward_f64(dx, dw, db, L.dy.data, L.x.data, L.w.data, (int)L.rows,
                                    (int)L.in, (int)L.out);
            }
            double *bdx = calloc(nx, sizeof *bdx), *bdw = calloc(nw, sizeof *bdw),
                   *bdb = calloc(L.out, sizeof *bdb);
            cr_assert_eq(linear_backward_bound(bdx, bdw, bdb, L.dy.data, L.x.data, L.w.data, L.rows,
                                               L.in, L.out, cd, cd), 0);
            double r = fmax(golden_compare(id, "dx", dx, wdx.data, bdx, nx),
                            fmax(golden_compare(id, "d.weight", dw, wdw.data, bdw, nw),
                                 golden_compare(id, "d.bias", db, wdb.data, bdb, L.out)));
            if (getenv("LINEAR_VERBOSE"))
                printf("%s p%d grads %.3g\n", id, p, r);
            if (r > *worst)
                *worst = r;
            free(dx), free(dw), free(db), free(bdx), free(bdw), free(bdb);
            rn_array_free(&wdx), rn_array_free(&wdw), rn_array_free(&wdb);
        }
    }
    rn_array_free(&L.x), rn_array_free(&L.w);
    if (L.have_b)
        rn_array_free(&L.b);
    if (bwd)
        rn_array_free(&L.dy);
}

Test(linear, kernels_within_bound_on_golden)
{
    json_error_t e;
    json_t *m = json_load_file(MANIFEST, 0, &e);
    cr_assert_not_null(m, "%s", e.text);
    size_t i, ncases = 0;
    json_t *c;
    double w64 = 0, w32 = 0;
    json_array_foreach(json_object_get(m, "cases"), i, c)
    {
        const char *op = json_string_value(json_object_get(c, "op"));
        if (strcmp(op, "linear") && strcmp(op, "linear_backward"))
            continue;
        check_case(c, &w64, &w32);
        ncases++;
    }
    cr_assert_geq(ncases, 10, "linear cases in the manifest: %zu", ncases);
    /* a bound that is never approached would be suspicious, one that is exceeded is a failure */
    printf("linear: %zu golden entries; worst err/bound f64 kernel %.3g, f32 kernel %.3g\n", ncases,
           w64, w32);
    json_decref(m);
}

/* ================================================================ twin vs 4096-bit evaluation */

/* A tiny deterministic generator (independent of golden.c's). */
static double lcg(unsigned long long *s)
{
    *s = *s * 6364136223846793005ull + 1442695040888963407ull;
    return (double)(long long)(*s >> 11) * 0x1p-53 * 4.0 - 1.0; /* in [-1, 3) roughly */
}

static void rand_f32(double *v, size_t n, unsigned long long *s, double scale)
{
    for (size_t i = 0; i < n; i++)
        v[i] = (double)(float)(scale * (lcg(s) - 1.0));
}

/* y[r, j] = b[j] + sum_k x[r, k] w[j, k] in 4096-bit MPFR, summed naively left to right (exact for
   these exponent ranges: every term is a multiple of 2^-400 below 2^100). */
static void naive_forward(mpfr_t *y, const double *x, const double *w, const double *b, size_t rows,
                          size_t in, size_t out)
{
    mpfr_t t;
    mpfr_init2(t, 4096);
    for (size_t r = 0; r < rows; r++)
        for (size_t j = 0; j < out; j++) {
            mpfr_set_d(y[r * out + j], b ? b[j] : 0.0, MPFR_RNDN);
            for (size_t k = 0; k < in; k++) {
                mpfr_set_d(t, x[r * in + k], MPFR_RNDN);
                mpfr_mul_d(t, t, w[j * in + k], MPFR_RNDN);
                cr_assert_eq(mpfr_add(y[r * out + j], y[r * out + j], t, MPFR_RNDN), 0);
            }
        }
    mpfr_clear(t);
}

Test(linear, twin_rounded_once_matches_4096_bit_evaluation)
{
    enum { R = 3, I = 37, O = 5 };
    unsigned long long s = 12345;
    double x[R * I], w[O * I], b[O], y[R * O];
    rand_f32(x, R * I, &s, 1.0);
    rand_f32(w, O * I, &s, 0.3);
    rand_f32(b, O, &s, 2.0);
    x[3] = 0x1p-40; /* a term far below the others: exactness must reach its last bit */
    mpfr_t ref[R * O];
    for (int i = 0; i < R * O; i++)
        mpfr_init2(ref[i], 4096);
    naive_forward(ref, x, w, b, R, I, O);
    for (int d = 0; d < RN_NDTYPES; d++) {
        cr_assert_eq(linear_forward_mpfr(y, x, w, b, R, I, O, (rn_dtype)d), 0);
        for (int i = 0; i < R * O; i++) {
            double want = rn_round_mpfr(ref[i], (rn_dtype)d);
            cr_assert(y[i] == want, "dtype %d y[%d]: twin %a, 4096-bit %a", d, i, y[i], want);
        }
    }
    for (int i = 0; i < R * O; i++)
        mpfr_clear(ref[i]);
}

/* ================================================================ backward vs finite differences */

/* L = sum_{r,j} dy[r, j]·y[r, j] at 4096 bits. */
static void loss(mpfr_t L, const double *x, const double *w, const double *b, const double *dy,
                 size_t rows, size_t in, size_t out)
{
    mpfr_t *y = malloc(rows * out * sizeof *y), t;
    mpfr_init2(t, 4096);
    for (size_t i = 0; i < rows * out; i++)
        mpfr_init2(y[i], 4096);
    naive_forward(y, x, w, b, rows, in, out);
    mpfr_set_zero(L, 1);
    for (size_t i = 0; i < rows * out; i++) {
        mpfr_mul_d(t, y[i], dy[i], MPFR_RNDN);
        mpfr_add(L, L, t, MPFR_RNDN);
        mpfr_clear(y[i]);
    }
    mpfr_clear(t);
    free(y);
}

/* (L(v + h) - L(v - h)) / 2h for one input element v (h = 2^-20: v ± h is exact in binary64 for
   |v| < 2^30 with v an f32 value), rounded to binary64. */
static double central_difference(double *v, const double *x, const double *w, const double *b,
                                 const double *dy, size_t rows, size_t in, size_t out)
{
    const double h = 0x1p-20, v0 = *v;
    mpfr_t lp, lm;
    mpfr_inits2(4096, lp, lm, (mpfr_ptr)0);
    *v = v0 + h;
    loss(lp, x, w, b, dy, rows, in, out);
    *v = v0 - h;
    loss(lm, x, w, b, dy, rows, in, out);
    *v = v0;
    mpfr_sub(lp, lp, lm, MPFR_RNDN);
    mpfr_div_d(lp, lp, 2 * h, MPFR_RNDN);
    double g = mpfr_get_d(lp, MPFR_RNDN);
    mpfr_clears(lp, lm, (mpfr_ptr)0);
    return g;
}

Test(linear, twin_backward_matches_finite_differences_for_every_parameter)
{
    enum { R = 4, I = 6, O = 3 };
    unsigned long long s = 777;
    double x[R * I], w[O * I], b[O], dy[R * O], dx[R * I], dw[O * I], db[O];
    rand_f32(x, R * I, &s, 1.0);
    rand_f32(w, O * I, &s, 0.5);
    rand_f32(b, O, &s, 1.0);
    rand_f32(dy, R * O, &s, 1.0);
    cr_assert_eq(linear_backward_mpfr(dx, dw, db, dy, x, w, R, I, O, RN_F64), 0);
    /* L is linear in each input element, so the central difference is the exact derivative
       (at 4096 bits nothing rounds): the twin's f64 gradient must equal its rounding. */
    for (int i = 0; i < R * I; i++) {
        double g = central_difference(&x[i], x, w, b, dy, R, I, O);
        cr_assert(dx[i] == g, "dx[%d]: twin %a, finite difference %a", i, dx[i], g);
    }
    for (int i = 0; i < O * I; i++) {
        double g = central_difference(&w[i], x, w, b, dy, R, I, O);
        cr_assert(dw[i] == g, "d.weight[%d]: twin %a, finite difference %a", i, dw[i], g);
    }
    for (int i = 0; i < O; i++) {
        double g = central_difference(&b[i], x, w, b, dy, R, I, O);
        cr_assert(db[i] == g, "d.bias[%d]: twin %a, finite difference %a", i, db[i], g);
    }
}

/* ================================================================ CLI: mutants fail, kernel passes */

TestSuite(linear_cli, .init = setup, .fini = teardown);

enum { MR = 6, MI = 8, MO = 8 }; /* square W, six rows */

static void mutant_inputs(double *x, double *w, double *b, double *dy)
{
    unsigned long long s = 4242;
    rand_f32(x, MR * MI, &s, 1.0);
    rand_f32(w, MO * MI, &s, 0.35);
    rand_f32(b, MO, &s, 1.0);
    rand_f32(dy, MR * MO, &s, 1.0);
    size_t sx[2] = {MR, MI}, sw[2] = {MO, MI}, sb[1] = {MO}, sy[2] = {MR, MO};
    put_npy("x.npy", RN_F32, 2, sx, x);
    put_npy("w.npy", RN_F32, 2, sw, w);
    put_npy("b.npy", RN_F32, 1, sb, b);
    put_npy("dy.npy", RN_F32, 2, sy, dy);
}

/* The float kernel, with an optional bug: 1 W not transposed, 2 bias dropped. */
static void forward_variant(double *y, const double *x, const double *w, const double *b, int bug)
{
    for (int r = 0; r < MR; r++)
        for (int j = 0; j < MO; j++) {
            float s = bug == 2 ? 0.0f : (float)b[j];
            for (int k = 0; k < MI; k++)
                s += (float)x[r * MI + k] * (float)(bug == 1 ? w[k * MI + j] : w[j * MI + k]);
            y[r * MO + j] = s;
        }
}

static int check_y(const double *y)
{
    size_t sy[2] = {MR, MO};
    put_npy("y.npy", RN_F32, 2, sy, y);
    return run("check linear --in x=%s --in weight=%s --in bias=%s --actual y=%s --dtype f32",
               P("x.npy"), P("w.npy"), P("b.npy"), P("y.npy"));
}

Test(linear_cli, forward_mutants_fail_and_kernel_passes)
{
    double x[MR * MI], w[MO * MI], b[MO], dy[MR * MO], y[MR * MO];
    mutant_inputs(x, w, b, dy);
    forward_variant(y, x, w, b, 0);
    cr_assert_eq(check_y(y), 0, "correct f32 kernel: %s%s", out_text, err_text);
    forward_variant(y, x, w, b, 1);
    cr_assert_eq(check_y(y), 1, "W not transposed must fail: %s", out_text);
    forward_variant(y, x, w, b, 2);
    cr_assert_eq(check_y(y), 1, "bias dropped must fail: %s", out_text);
}

Test(linear_cli, dweight_from_one_row_fails)
{
    double x[MR * MI], w[MO * MI], b[MO], dy[MR * MO], dw[MO * MI];
    mutant_inputs(x, w, b, dy);
    for (int bug = 0; bug < 2; bug++) {
        /* bug 1: only the last row's dyᵀ·x (the batch not summed) */
        for (int j = 0; j < MO; j++)
            for (int k = 0; k < MI; k++) {
                float s = 0.0f;
                for (int r = bug ? MR - 1 : 0; r < MR; r++)
                    s += (float)dy[r * MO + j] * (float)x[r * MI + k];
                dw[j * MI + k] = s;
            }
        size_t sw[2] = {MO, MI};
        put_npy("dw.npy", RN_F32, 2, sw, dw);
        int rc = run("check linear_backward --in x=%s --in weight=%s --in dy=%s --actual d.weight=%s "
                     "--dtype f32", P("x.npy"), P("w.npy"), P("dy.npy"), P("dw.npy"));
        cr_assert_eq(rc, bug ? 1 : 0, "bug %d: %s%s", bug, out_text, err_text);
    }
}

Test(linear_cli, bad_shapes_exit_2_naming_the_file)
{
    double x[MR * MI], w[MO * MI], b[MO], dy[MR * MO];
    mutant_inputs(x, w, b, dy);
    size_t bad[2] = {MO, MI - 1};
    put_npy("wbad.npy", RN_F32, 2, bad, w);
    cr_assert_eq(run("eval linear --in x=%s --in weight=%s --out %s", P("x.npy"), P("wbad.npy"),
                     P("o")), 2);
    cr_assert(strstr(err_text, "wbad.npy"), "%s", err_text);
    cr_assert_eq(run("eval linear --in x=%s --in weight=%s --in bias=%s --out %s", P("x.npy"),
                     P("w.npy"), P("dy.npy"), P("o")), 2);
    cr_assert(strstr(err_text, "bias"), "%s", err_text);
}

/* ================================================================ ball route vs exact route */
/* The twin's ball route (Arb block products, each ball rounded once when it decides) must give the
   bits of the exact route (an exact dot per output) on the inputs where the balls are weakest:
   ties and near-ties of every dtype, exact zeros (and -0 inputs), results below every dtype's
   subnormals, overflow, Inf and NaN.  Each planted list of terms t[0..T) becomes one output
   sum_i t[i]·q[i] for each partner vector q of PARTNERS (1, 2^-600 for f64's underflow, 0 for
   0·Inf); the other outputs are random. */

enum { T = 6, NPART = 3 };
static const double PARTNERS[NPART] = {1.0, 0x1p-600, 0.0};

/* Writes the planted lists (T terms each, zero-padded) to P and returns how many. */
static size_t planted_lists(double P[][T])
{
    static const int prec[RN_NDTYPES] = {53, 24, 11, 8};
    static const double minsub[RN_NDTYPES] = {0x1p-1074, 0x1p-149, 0x1p-24, 0x1p-133};
    size_t n = 0;
#define LIST(...) do { double t_[T] = {__VA_ARGS__}; memcpy(P[n++], t_, sizeof t_); } while (0)
    for (int d = 0; d < RN_NDTYPES; d++) {
        double u = ldexp(1.0, -prec[d]);
        LIST(1.0, u);                       /* a tie: to even, down */
        LIST(1.0, 3 * u);                   /* a tie: to even, up */
        LIST(1.0, u, 0x1p-200);             /* just above a tie, beyond 128 bits */
        LIST(1.0, u, -0x1p-200);            /* just below */
        LIST(-1.0, -u, 0x1p-300);           /* negative, just above (toward 0) */
        LIST(0x1p40, 1.0, u, -0x1p40);      /* a tie after cancellation */
        LIST(0x1p40, 1.0, u, 0x1p-170, -0x1p40);
        /* below and at the subnormals: for f64 through the 2^-600 partner */
        double s = d == RN_F64 ? 0x1p-474 : minsub[d];
        LIST(0.5 * s);                      /* half the smallest subnormal: a tie to +0 */
        LIST(-0.5 * s);                     /* to -0 */
        LIST(-0.75 * s);                    /* to -minsub */
        LIST(2.5 * s);                      /* a tie between subnormals: to even */
        LIST(s, -s, 0.5 * s, 0x1p-200 * s); /* just above the tie at minsub/2 */
        LIST(1.0, 0.5 * s, -1.0);           /* the tie after cancellation */
    }
    LIST(1.5, -1.5);                        /* exact zeros */
    LIST(0x1p60, 1.0, -0x1p60, -1.0);
    LIST(-0.0, -0.0);                       /* -0 terms: the exact zero is +0 */
    LIST(0x1p-1074, -0x1p-1074);
    LIST(0x1p1023, 0x1p1023);               /* overflow: 2^1024 */
    LIST(0x1p1023, 0x1p1023, -0x1p1023);    /* a partial sum overflows, the result does not */
    LIST(0x1p127, 0x1p127);                 /* f32 overflow */
    LIST(65504.0, 16.0);                    /* f16: 65520 rounds to Inf (tie at the top) */
    LIST(65504.0, 16.0, -0x1p-100);         /* just below: 65504 */
    LIST(0x1.fep127, 0x1p119);              /* bf16: the tie at the top, to Inf */
    LIST(INFINITY, 1.0);                    /* non-finite: +Inf, then 0·Inf = NaN */
    LIST(INFINITY, -INFINITY);              /* NaN */
    LIST(-INFINITY, 0x1p1023, 0x1p1023);    /* -Inf */
    LIST(NAN, 1.0);
    unsigned long long g = 99;
    for (int k = 0; k < 6; k++) {           /* generic lists, mixed exponents */
        double t[T];
        for (int i = 0; i < T; i++)
            t[i] = ldexp((double)(float)(lcg(&g) - 1.0), (int)(lcg(&g) * 20) - 30);
        memcpy(P[n++], t, sizeof t);
    }
#undef LIST
    return n;
}

/* Bit for bit (NaN: any NaN on both sides). */
static int same_bits(double a, double b)
{
    return (isnan(a) && isnan(b)) || memcmp(&a, &b, sizeof a) == 0;
}

static void assert_same(const char *what, int d, const double *balls, const double *exact, size_t n)
{
    for (size_t i = 0; i < n; i++)
        cr_assert(same_bits(balls[i], exact[i]), "%s dtype %s [%zu]: ball route %a, exact route %a",
                  what, rn_dtype_name((rn_dtype)d), i, balls[i], exact[i]);
}

/* 1 when row i (or column i, stride-wise) of a matrix holds a non-finite value: n values from v
   with step st. */
static int line_nonfinite(const double *v, size_t n, size_t st)
{
    for (size_t k = 0; k < n; k++)
        if (!isfinite(v[k * st]))
            return 1;
    return 0;
}

/* How many outputs of c [m, n] = a·b (a [m, k] with row stride sa_r, element stride sa_k; b [k, n]
   likewise) a non-finite input reaches: they take the exact route whatever the balls say. */
static size_t reached(const double *a, size_t sa_r, size_t sa_k, const double *b, size_t sb_k,
                      size_t sb_c, size_t m, size_t k, size_t n)
{
    size_t c = 0;
    for (size_t i = 0; i < m; i++)
        for (size_t j = 0; j < n; j++)
            c += line_nonfinite(a + i * sa_r, k, sa_k) || line_nonfinite(b + j * sb_c, k, sb_k);
    return c;
}

static void random_fill(double *v, size_t n, unsigned long long *s)
{
    for (size_t i = 0; i < n; i++)
        v[i] = (double)(float)(lcg(s) - 1.0);
}

Test(linear, ball_route_equals_exact_route_forward_on_planted_cases)
{
    static double P[128][T];
    size_t L = planted_lists(P), O = NPART + 4;
    cr_assert_leq(L, 128);
    double *x = malloc(L * T * sizeof *x), *w = malloc(O * T * sizeof *w), b[NPART + 4];
    double *yb = malloc(L * O * sizeof *yb), *ye = malloc(L * O * sizeof *ye);
    unsigned long long s = 31;
    memcpy(x, P, L * T * sizeof *x); /* row r = list r */
    random_fill(w, O * T, &s);
    random_fill(b, O, &s);
    for (int q = 0; q < NPART; q++) { /* outputs 0 .. NPART-1: the lists against the partners */
        b[q] = 0.0;
        for (int i = 0; i < T; i++)
            w[q * T + i] = PARTNERS[q];
    }
    b[O - 1] = NAN; /* a non-finite bias reaches its column only */
    size_t fell_back = 0;
    for (int d = 0; d < RN_NDTYPES; d++) {
        size_t ne, ne_exact;
        cr_assert_eq(linear_forward_route(yb, x, w, b, L, T, O, (rn_dtype)d, LIN_ROUTE_BALLS, &ne), 0);
        cr_assert_eq(linear_forward_route(ye, x, w, b, L, T, O, (rn_dtype)d, LIN_ROUTE_EXACT,
                                          &ne_exact), 0);
        assert_same("y", d, yb, ye, L * O);
        cr_assert_eq(ne_exact, L * O);
        cr_assert_lt(ne, L * O, "dtype %d: the balls decided nothing", d);
        fell_back += ne;
    }
    /* beyond the outputs that a non-finite input reaches, the near-ties beyond 128 bits cannot
       decide: the exact route must have been taken for them too */
    size_t nonfin = 0;
    for (size_t r = 0; r < L; r++)
        for (size_t j = 0; j < O; j++)
            nonfin += line_nonfinite(x + r * T, T, 1) || line_nonfinite(w + j * T, T, 1) || isnan(b[j]);
    cr_assert_gt(fell_back, RN_NDTYPES * nonfin, "%zu by the exact route, %zu non-finite", fell_back,
                 RN_NDTYPES * nonfin);
    printf("linear ball route: %zu planted lists x %zu outputs x 4 dtypes, %zu outputs by the exact "
           "route\n", L, O, fell_back);
    free(x), free(w), free(yb), free(ye);
}

/* Backward twice: once with the lists as rows of dy (planted dx = dy·W against W's partner
   columns), once with the lists as columns of x (planted d.weight = dyᵀ·x against dy's partner
   columns). */
Test(linear, ball_route_equals_exact_route_backward_on_planted_cases)
{
    static double P[128][T];
    size_t L = planted_lists(P), W = NPART + 3;
    unsigned long long s = 57;
    for (int pass = 0; pass < 2; pass++) {
        /* pass 0: rows L, out T, in W.  pass 1: rows T, in L, out W. */
        size_t rows = pass ? T : L, in = pass ? L : W, out = pass ? W : T;
        double *dy = malloc(rows * out * sizeof *dy), *x = malloc(rows * in * sizeof *x),
               *w = malloc(out * in * sizeof *w);
        double *g[2][3];
        for (int k = 0; k < 2; k++) {
            g[k][0] = malloc(rows * in * sizeof(double));
            g[k][1] = malloc(out * in * sizeof(double));
            g[k][2] = malloc(out * sizeof(double));
        }
        random_fill(dy, rows * out, &s);
        random_fill(x, rows * in, &s);
        random_fill(w, out * in, &s);
        for (size_t l = 0; l < L; l++)
            for (int i = 0; i < T; i++) {
                if (pass == 0)
                    dy[l * out + i] = P[l][i];
                else
                    x[i * in + l] = P[l][i];
            }
        for (int q = 0; q < NPART; q++)
            for (int i = 0; i < T; i++) {
                if (pass == 0)
                    w[i * in + q] = PARTNERS[q]; /* column q of W */
                else
                    dy[i * out + q] = PARTNERS[q]; /* column q of dy */
            }
        /* outputs reached by a non-finite input: dx = dy·W, d.weight = dyᵀ·x */
        size_t nonfin = reached(dy, out, 1, w, in, 1, rows, out, in) +
                        reached(dy, 1, out, x, in, 1, out, rows, in);
        size_t fell_back = 0;
        for (int d = 0; d < RN_NDTYPES; d++) {
            size_t ne;
            cr_assert_eq(linear_backward_route(g[0][0], g[0][1], g[0][2], dy, x, w, rows, in, out,
                                               (rn_dtype)d, LIN_ROUTE_BALLS, &ne), 0);
            cr_assert_eq(linear_backward_route(g[1][0], g[1][1], g[1][2], dy, x, w, rows, in, out,
                                               (rn_dtype)d, LIN_ROUTE_EXACT, NULL), 0);
            assert_same("dx", d, g[0][0], g[1][0], rows * in);
            assert_same("d.weight", d, g[0][1], g[1][1], out * in);
            assert_same("d.bias", d, g[0][2], g[1][2], out);
            cr_assert_lt(ne, rows * in + out * in, "dtype %d: the balls decided nothing", d);
            fell_back += ne;
        }
        cr_assert_gt(fell_back, RN_NDTYPES * nonfin,
                     "pass %d: the planted near-ties must take the exact route (%zu, %zu non-finite)",
                     pass, fell_back, RN_NDTYPES * nonfin);
        free(dy), free(x), free(w);
        for (int k = 0; k < 2; k++)
            free(g[k][0]), free(g[k][1]), free(g[k][2]);
    }
}

/* Generic inputs at a width where the block product splits into several blocks and chunks (more
   than BALLMAT_CHUNK = 192 columns): the same bits, and every output decided by its ball. */
Test(linear, ball_route_equals_exact_route_on_random_inputs_and_decides_them_all)
{
    enum { R = 5, I = 300, O = 200 };
    unsigned long long s = 2024;
    double *x = malloc(R * I * sizeof *x), *w = malloc(O * I * sizeof *w), b[O], *dy = malloc(R * O * sizeof *dy);
    double *a = malloc(O * I * sizeof *a), *e = malloc(O * I * sizeof *e);
    double *a2 = malloc(R * I * sizeof *a2), *e2 = malloc(R * I * sizeof *e2), ab[O], eb[O];
    random_fill(x, R * I, &s);
    random_fill(w, O * I, &s);
    random_fill(b, O, &s);
    random_fill(dy, R * O, &s);
    for (int i = 0; i < R * I; i += 7)
        x[i] = ldexp(x[i], -60); /* a spread of exponents */
    for (int d = 0; d < RN_NDTYPES; d++) {
        size_t ne;
        cr_assert_eq(linear_forward_route(a, x, w, b, R, I, O, (rn_dtype)d, LIN_ROUTE_BALLS, &ne), 0);
        cr_assert_eq(linear_forward_route(e, x, w, b, R, I, O, (rn_dtype)d, LIN_ROUTE_EXACT, NULL), 0);
        assert_same("y", d, a, e, R * O);
        cr_assert_eq(ne, 0, "dtype %d: %zu forward outputs by the exact route", d, ne);
        cr_assert_eq(linear_backward_route(a2, a, ab, dy, x, w, R, I, O, (rn_dtype)d,
                                           LIN_ROUTE_BALLS, &ne), 0);
        cr_assert_eq(linear_backward_route(e2, e, eb, dy, x, w, R, I, O, (rn_dtype)d,
                                           LIN_ROUTE_EXACT, NULL), 0);
        assert_same("dx", d, a2, e2, R * I);
        assert_same("d.weight", d, a, e, O * I);
        assert_same("d.bias", d, ab, eb, O);
        cr_assert_eq(ne, 0, "dtype %d: %zu backward outputs by the exact route", d, ne);
    }
    free(x), free(w), free(dy), free(a), free(e), free(a2), free(e2);
}
