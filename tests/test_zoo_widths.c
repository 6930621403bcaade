/* The bug zoo at production widths (issue 7): LayerNorm and RMSNorm, forward and backward, rows of
 * n = 768, 2048, 4096, 8192 in three data families, the zoo's correct kernels and mutants
 * (tests/zoo_kernels.h, shared with tests/test_bug_zoo.c) plus correct variants of LayerNorm's
 * forward (fl(1/n), Welford, Chan's merge over 8 and 16 lanes, pairwise and Kahan sums, double
 * accumulation, an rsqrt 2 ulps off, division by sqrt, fma, the folded affine form), computing in f32 and rounding their outputs to f32, f16 or bf16.  Each output set is
 * checked in-process by the checker of `resnorm check` (cli_check_with: the rigorous per-element
 * bound and the statistical tier, specs/statistical-tier.md), with the certified values computed
 * once per case by the twin (cli_run_twin) -- never by the kernels under test.
 *
 * Prints the table mutant x width x dtype: R (caught by the rigorous tier), S (statistical), RS
 * (both), MISSED, or n/a when the mutant does not change the result by more than the output
 * rounding in any family (its worst error, in ulps of the output dtype, exceeds the correct
 * kernel's by at most one: `changes` below).  Fails if a correct kernel or
 * variant is flagged by either tier, or a mutant that changes the result is missed.
 * ZOO_QUICK=1 (set by 'make asan'): widths 768 and 8192, 8 rows, the correct kernels only. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "dtype.h"
#include "layernorm_bound.h"
#include "npy.h"

#include "zoo_kernels.h"

static const size_t WIDTHS[] = {768, 2048, 4096, 8192};
#define NW 4
static const rn_dtype DTYPES[] = {RN_F32, RN_F16, RN_BF16};
#define ND 3

/* The data families: N(0,1) rows; a large mean next to a unit spread; a variance next to eps. */
typedef struct {
    const char *name;
    double mean, scale;
} family_t;
static const family_t FAMILIES[] = {{"randn", 0, 1}, {"mean30", 30, 1}, {"var_near_eps", 0, 0.003}};
#define NF 3

typedef enum { OP_LN, OP_LN_BWD, OP_RMS, OP_RMS_BWD, NOPS } opkind;
static const char *const OPNAME[NOPS] = {"layernorm", "layernorm_backward", "rmsnorm",
                                         "rmsnorm_backward"};

/* The mutants run per op (M_NONE ends each list). */
static const mutant MUTS[NOPS][16] = {
    [OP_LN] = {M_UNBIASED, M_EPS_OUT, M_EPS_DROPPED, M_WRONG_EPS, M_ONE_PASS, M_VAR_N_MINUS_1,
               M_RSQRT12, M_RSTD_BF16, M_NO_GAMMA, M_NO_BETA, M_OUT_BF16, M_NONE},
    [OP_LN_BWD] = {M_UNBIASED, M_EPS_OUT, M_EPS_DROPPED, M_RSQRT12, M_RSTD_BF16, M_NO_MEAN_G,
                   M_NO_MEAN_GX, M_MEAN_GX_BF16, M_DG_FIRST_ROW, M_NONE},
    [OP_RMS] = {M_EPS_OUT, M_EPS_DROPPED, M_WRONG_EPS, M_VAR_N_MINUS_1, M_RSQRT12, M_RSTD_BF16,
                M_LOWP_SUMSQ, M_NO_GAMMA, M_OUT_BF16, M_W_AFTER_CAST, M_NONE},
    [OP_RMS_BWD] = {M_EPS_OUT, M_EPS_DROPPED, M_RSQRT12, M_RSTD_BF16, M_NO_MEAN_GX,
                    M_MEAN_GX_BF16, M_DG_FIRST_ROW, M_NONE},
};

static const char *mutant_name(mutant m)
{
    switch (m) {
    case M_UNBIASED: return "unbiased_variance";
    case M_EPS_OUT: return "eps_outside_sqrt";
    case M_EPS_DROPPED: return "eps_dropped";
    case M_WRONG_EPS: return "wrong_eps (1e-12)";
    case M_ONE_PASS: return "one_pass_variance";
    case M_VAR_N_MINUS_1: return "variance_loop_to_n-1";
    case M_RSQRT12: return "rsqrt_12_bits";
    case M_RSTD_BF16: return "rstd_stored_bf16";
    case M_NO_GAMMA: return "gamma_missing";
    case M_NO_BETA: return "beta_missing";
    case M_OUT_BF16: return "output_rounding (bf16)";
    case M_NO_MEAN_G: return "backward_missing_mean_g";
    case M_NO_MEAN_GX: return "backward_missing_mean_gxhat";
    case M_MEAN_GX_BF16: return "mean_gxhat_in_bf16";
    case M_DG_FIRST_ROW: return "dgamma_row_0_only";
    case M_LOWP_SUMSQ: return "lowp_sum_of_squares (f16)";
    case M_W_AFTER_CAST: return "weight_after_cast";
    default: return "?";
    }
}

/* ---------------------------------------------------------------- correct variants */

/* Alternative correct kernels of the forward statistics (mean, rstd) in f32, every operation
   rounded by R(); the rest of the kernel is the zoo's.  Each is in the class the tiers admit
   (specs/error-analysis.md §0, specs/statistical-tier.md §2). */
typedef enum { V_INV_N, V_WELFORD, V_CHAN8, V_CHAN16, V_PAIRWISE, V_KAHAN, V_DOUBLE,
               V_RSQRT_2ULP, V_DIVISION, V_FMA, V_FOLDED, NVARIANTS } variant;
static const char *const VNAME[NVARIANTS] = {
    "two-pass times fl(1/n)", "Welford", "Chan merge, 8 lanes", "Chan merge, 16 lanes",
    "pairwise sums", "Kahan sums", "double accumulation", "rsqrt 2 ulps low",
    "division by sqrt", "fma for gamma, beta", "folded affine"};

static double PW_M;
static double ident(double v) { return v; }
static double sqdev(double v) { double d = R(v - PW_M); return R(d * d); }

/* Kahan's compensated sum of f(a[i]). */
static double kahan(const double *a, size_t n, double (*f)(double))
{
    double s = 0, c = 0;
    for (size_t i = 0; i < n; i++) {
        double y = R(f(a[i]) - c), t = R(s + y);
        c = R(R(t - s) - y);
        s = t;
    }
    return s;
}

static double pairwise(const double *a, size_t n, double (*f)(double))
{
    if (n <= 8) {
        double s = 0;
        for (size_t i = 0; i < n; i++)
            s = R(s + f(a[i]));
        return s;
    }
    return R(pairwise(a, n / 2, f) + pairwise(a + n / 2, n - n / 2, f));
}
static void variant_stats(variant k, const double *x, size_t n, double eps, double *mean,
                          double *rstd, double *sd)
{
    double m, var;
    if (k == V_WELFORD || k == V_CHAN8 || k == V_CHAN16) {
        size_t L = k == V_CHAN8 ? 8 : k == V_CHAN16 ? 16 : 1;
        double cnt = 0, M = 0, M2 = 0;
        for (size_t l = 0; l < L; l++) {
            double c = 0, Ml = 0, M2l = 0;
            for (size_t i = l; i < n; i += L) {
                c += 1;
                double d = R(x[i] - Ml);
                Ml = R(Ml + R(d / c));
                M2l = R(M2l + R(d * R(x[i] - Ml)));
            }
            if (c == 0)
                continue;
            double tot = cnt + c, delta = R(Ml - M);
            M = R(M + R(delta * R(c / tot)));
            M2 = R(R(M2 + M2l) + R(R(delta * delta) * R(R(cnt * c) / tot)));
            cnt = tot;
        }
        m = M, var = R(M2 / (double)n);
    } else if (k == V_PAIRWISE) {
        m = R(pairwise(x, n, ident) / (double)n);
        PW_M = m;
        var = R(pairwise(x, n, sqdev) / (double)n);
    } else if (k == V_KAHAN) {
        m = R(kahan(x, n, ident) / (double)n);
        PW_M = m;
        var = R(kahan(x, n, sqdev) / (double)n);
    } else if (k == V_DOUBLE) { /* accumulate in double, round the statistics once */
        double s = 0, q = 0;
        for (size_t i = 0; i < n; i++)
            s += x[i];
        double md = s / (double)n;
        for (size_t i = 0; i < n; i++)
            q += (x[i] - md) * (x[i] - md);
        m = R(md), var = R(q / (double)n);
    } else { /* two-pass with fl(1/n) as a multiplier */
        double s = 0, q = 0, inv = R(1.0 / (double)n);
        for (size_t i = 0; i < n; i++)
            s = R(s + x[i]);
        m = R(s * inv);
        for (size_t i = 0; i < n; i++) {
            double d = R(x[i] - m);
            q = R(q + R(d * d));
        }
        var = R(q * inv);
    }
    *sd = R(sqrt(R(var + eps)));
    double r = R(1.0 / *sd);
    if (k == V_RSQRT_2ULP) /* a hardware rsqrt within 2 ulps, always on the low side */
        r = R(r * (1 - 0x1p-23));
    *mean = m, *rstd = r;
}

/* LayerNorm forward of a variant; outputs rounded to C->out. */
static void variant_ln_forward(variant k, const view *v, const double *x, const double *g,
                               const double *b, double *y, double *mean, double *rstd)
{
    for (size_t r = 0; r < v->rows; r++) {
        const double *xr = x + r * v->n;
        double m, rs, sd;
        variant_stats(k, xr, v->n, v->eps, &m, &rs, &sd);
        for (size_t i = 0; i < v->n; i++) {
            double yi;
            if (k == V_FOLDED) { /* y = x*(r*g) + (b - m*(r*g)) */
                double a = R(rs * g[i]);
                yi = R(R(xr[i] * a) + R(b[i] - R(m * a)));
            } else if (k == V_DIVISION) { /* (x - m) / sd with sd = sqrt(var + eps) */
                yi = R(R(R(R(xr[i] - m) / sd) * g[i]) + b[i]);
            } else if (k == V_FMA) { /* fma(xhat, gamma, beta): xhat*gamma exact in binary64 */
                double xh = R(R(xr[i] - m) * rs);
                yi = R(xh * g[i] + b[i]);
            } else {
                yi = R(R(R(R(xr[i] - m) * rs) * g[i]) + b[i]);
            }
            y[r * v->n + i] = rn_round(yi, C->out);
        }
        mean[r] = rn_round(m, C->out), rstd[r] = rn_round(rs, C->out);
    }
}

/* ---------------------------------------------------------------- data */

static uint64_t RNG;
static double uniform01(void)
{
    RNG ^= RNG << 13, RNG ^= RNG >> 7, RNG ^= RNG << 17;
    return ((double)(RNG >> 11) + 0.5) * 0x1p-53;
}
static double randn(void)
{
    return sqrt(-2 * log(uniform01())) * cos(6.283185307179586 * uniform01());
}

typedef struct {
    size_t rows, n;
    double *x, *g, *b, *dy;
} data_t;

/* x = mean + scale*N(0,1); gamma = 1 + 0.1 N; beta = 0.1 N; dy = N + 0.5*(x - m)/s (a gradient
   correlated with xhat, so that mean(g xhat) is O(1), as in training), all f32 values. */
static void make_data(data_t *d, size_t rows, size_t n, const family_t *f, uint64_t seed)
{
    RNG = seed * 0x9E3779B97F4A7C15ull + 1;
    d->rows = rows, d->n = n;
    d->x = malloc(rows * n * sizeof(double)), d->dy = malloc(rows * n * sizeof(double));
    d->g = malloc(n * sizeof(double)), d->b = malloc(n * sizeof(double));
    for (size_t i = 0; i < rows * n; i++)
        d->x[i] = (double)(float)(f->mean + f->scale * randn());
    for (size_t i = 0; i < n; i++) {
        d->g[i] = (double)(float)(1 + 0.1 * randn());
        d->b[i] = (double)(float)(0.1 * randn());
    }
    for (size_t r = 0; r < rows; r++) {
        double s = 0, q = 0;
        for (size_t i = 0; i < n; i++)
            s += d->x[r * n + i];
        s /= (double)n;
        for (size_t i = 0; i < n; i++)
            q += (d->x[r * n + i] - s) * (d->x[r * n + i] - s);
        q = sqrt(q / (double)n);
        for (size_t i = 0; i < n; i++)
            d->dy[r * n + i] = (double)(float)(randn() + 0.5 * (d->x[r * n + i] - s) / q);
    }
}

static void free_data(data_t *d) { free(d->x), free(d->g), free(d->b), free(d->dy); }

static void save(const char *dir, const char *name, const double *v, int ndim, const size_t *shape)
{
    rn_array a;
    char path[512], err[256];
    cr_assert_eq(rn_array_alloc(&a, RN_F32, ndim, shape), 0);
    memcpy(a.data, v, a.count * sizeof(double));
    snprintf(path, sizeof path, "%s/%s.npy", dir, name);
    cr_assert_eq(npy_write(path, &a, err, sizeof err), 0, "%s", err);
    rn_array_free(&a);
}

/* ---------------------------------------------------------------- one case */

/* A loaded job for (op, data) whose actual outputs the kernels overwrite, with the twin's exact
   values (want) computed once. */
typedef struct {
    cli_job job;
    rn_array want[CLI_MAX_IO];
    view v;
    const data_t *d;
    opkind op;
} case_t;

static void open_case(case_t *c, const char *dir, opkind op, const data_t *d)
{
    memset(c, 0, sizeof *c);
    c->op = op, c->d = d;
    size_t shape[2] = {d->rows, d->n}, rshape[2] = {d->rows, 1};
    save(dir, "x", d->x, 2, shape);
    save(dir, "gamma", d->g, 1, shape + 1);
    save(dir, "beta", d->b, 1, shape + 1);
    save(dir, "dy", d->dy, 2, shape);
    /* placeholder actual outputs of the right shapes (overwritten in memory below) */
    save(dir, "y", d->x, 2, shape), save(dir, "dx", d->x, 2, shape);
    save(dir, "mean", d->x, 2, rshape), save(dir, "rstd", d->x, 2, rshape);
    save(dir, "dgamma", d->g, 1, shape + 1), save(dir, "dbeta", d->g, 1, shape + 1);
    static char buf[16][600];
    char *av[40];
    int ac = 0, nb = 0;
    av[ac++] = "check";
    av[ac++] = (char *)OPNAME[op];
    int ln = op == OP_LN || op == OP_LN_BWD, bwd = op == OP_LN_BWD || op == OP_RMS_BWD;
    const char *ins[3] = {"x", "gamma", bwd ? "dy" : ln ? "beta" : NULL};
    for (int k = 0; k < 3 && ins[k]; k++) {
        snprintf(buf[nb], sizeof buf[nb], "%s=%s/%s.npy", ins[k], dir, ins[k]);
        av[ac++] = "--in", av[ac++] = buf[nb++];
    }
    av[ac++] = "--attr", av[ac++] = "eps=1e-5";
    const cli_op *o = cli_find_op(OPNAME[op]);
    for (int k = 0; k < o->noutputs; k++) {
        snprintf(buf[nb], sizeof buf[nb], "%s=%s/%s.npy", o->outputs[k], dir, o->outputs[k]);
        av[ac++] = "--actual", av[ac++] = buf[nb++];
    }
    cr_assert_eq(cli_parse(&c->job, ac, av, CLI_ALLOW_ACTUAL), 0);
    cr_assert_eq(cli_load(&c->job), 0);
    cr_assert_eq(cli_run_twin(&c->job, RN_F64, c->want), 0);
    c->v.rows = d->rows, c->v.n = d->n, c->v.last = d->n, c->v.batch = d->rows;
    c->v.eps = c->job.eps, c->v.offset = 0;
}

static void close_case(case_t *c)
{
    for (int k = 0; k < CLI_MAX_IO; k++)
        rn_array_free(&c->want[k]);
    cli_job_free(&c->job);
}

/* Run the configured kernel (C) or a variant into the job's actual outputs. */
static void run_kernel(case_t *c, int var)
{
    const data_t *d = c->d;
    double **o = malloc(CLI_MAX_IO * sizeof *o);
    for (int m = 0; m < c->job.nactual; m++)
        o[m] = c->job.act[m].data;
    double *raw = malloc(d->rows * d->n * sizeof(double));
    switch (c->op) {
    case OP_LN:
        if (var >= 0)
            variant_ln_forward((variant)var, &c->v, d->x, d->g, d->b, o[0], o[1], o[2]);
        else
            ln_forward(&c->v, d->x, d->g, d->b, o[0], o[1], o[2]);
        break;
    case OP_LN_BWD: ln_backward(&c->v, d->x, d->g, d->dy, o[0], raw, o[1], o[2]); break;
    case OP_RMS: rms_forward(&c->v, d->x, d->g, o[0], o[1]); break;
    default: rms_backward(&c->v, d->x, d->g, d->dy, o[0], raw, o[1]); break;
    }
    free(raw), free(o);
}

/* Copies of the actual outputs (to compare a mutant with the correct kernel). */
static double **snapshot(const case_t *c)
{
    double **s = calloc(CLI_MAX_IO, sizeof *s);
    for (int m = 0; m < c->job.nactual; m++) {
        s[m] = malloc(c->job.act[m].count * sizeof(double));
        memcpy(s[m], c->job.act[m].data, c->job.act[m].count * sizeof(double));
    }
    return s;
}

static void free_snapshot(double **s)
{
    for (int m = 0; m < CLI_MAX_IO; m++)
        free(s[m]);
    free(s);
}

/* The largest error of output m in units of the dtype's spacing at the exact value. */
static double max_err_ulps(const case_t *c, int m, const double *got, rn_dtype d)
{
    const double *want = c->want[c->job.act_index[m]].data;
    double worst = 0;
    for (size_t i = 0; i < c->job.act[m].count; i++) {
        if (!isfinite(want[i]))
            continue;
        double e = isfinite(got[i]) ? fabs(got[i] - want[i]) / rn_ulp(want[i], d) : INFINITY;
        worst = fmax(worst, e);
    }
    return worst;
}

/* Whether the mutant changes the result by more than the output rounding: on some output its
   largest error, in units of the dtype's spacing, exceeds the correct kernel's (ref) by more than
   one unit.  (Rounding both to the dtype can move two nearby values one unit apart; an error
   beyond that is the mutant's own.  Compared worst to worst, so that elements near zero, where
   the compute dtype's own error already spans many units of the output's, do not count.) */
static int changes(const case_t *c, double **ref, rn_dtype d)
{
    for (int m = 0; m < c->job.nactual; m++)
        if (max_err_ulps(c, m, c->job.act[m].data, d) > max_err_ulps(c, m, ref[m], d) + 1)
            return 1;
    return 0;
}

enum { CAUGHT_R = 1, CAUGHT_S = 2 };

static int verdict(case_t *c, const rn_array *bound, rn_dtype d, char *why, size_t cap)
{
    cli_check_result r;
    cli_check_with(&c->job, d, c->want, bound, &r);
    int v = (!r.pass ? CAUGHT_R : 0) | (r.stat.flag ? CAUGHT_S : 0);
    if (why && v) {
        size_t k = 0;
        why[0] = '\0';
        for (int m = 0; m < c->job.nactual && k < cap; m++) {
            if (r.sum[m].mismatches)
                k += (size_t)snprintf(why + k, cap - k, " %s: %zu mismatches (err/bound %.3g);",
                                      c->job.op->outputs[c->job.act_index[m]],
                                      r.sum[m].mismatches, r.sum[m].max_ratio);
            for (int j = 0; j < r.stat.ntests[m] && k < cap; j++) {
                const st_test *t = &r.stat.test[m][j];
                if (t->flag)
                    k += (size_t)snprintf(why + k, cap - k,
                                          " %s %s: slope %.3g u, pooled z %.3g/%.3g, row z "
                                          "%.3g/%.3g, energy %.4g/%.4g;",
                                          c->job.op->outputs[c->job.act_index[m]], t->direction,
                                          t->slope_u, t->z_pooled, t->lambda_pooled, t->z_row,
                                          t->lambda_row, t->energy, t->energy_limit);
            }
        }
    }
    return v;
}

/* ---------------------------------------------------------------- the table */

#define MAXROWS 64
typedef struct {
    int caught[NW][ND]; /* CAUGHT_* over the families */
    int changed[NW][ND];
} cellrow;

Test(zoo_widths, caught_at_every_width_and_no_false_alarm, .timeout = 900)
{
    int quick = getenv("ZOO_QUICK") != NULL;
    size_t rows = quick ? 8 : 32;
    char dir[] = "/tmp/resnorm_zoo_widths_XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    static cellrow table[NOPS][16];
    int false_alarms = 0;
    for (int w = 0; w < NW; w++) {
        if (quick && w != 0 && w != NW - 1)
            continue;
        for (int f = 0; f < NF; f++) {
            data_t d;
            make_data(&d, rows, WIDTHS[w], &FAMILIES[f], 1000 * (uint64_t)w + (uint64_t)f);
            for (int op = 0; op < NOPS; op++) {
                case_t c;
                open_case(&c, dir, (opkind)op, &d);
                for (int k = 0; k < ND; k++) {
                    rn_array bound[CLI_MAX_IO] = {{0}};
                    cr_assert_eq(cli_run_bound(&c.job, RN_F32, DTYPES[k], bound), 0);
                    cfg cf = {RN_F32, DTYPES[k], M_NONE};
                    C = &cf;
                    char why[1200];
                    /* the correct kernels: the zoo's, and the variants (LayerNorm forward) */
                    int nv = op == OP_LN ? NVARIANTS : 0;
                    for (int var = -1; var < nv; var++) {
                        run_kernel(&c, var);
                        int v = verdict(&c, bound, DTYPES[k], why, sizeof why);
                        if (v) {
                            false_alarms++;
                            fprintf(stderr, "FALSE ALARM: correct %s (%s) at n=%zu, %s, %s:%s\n",
                                    OPNAME[op], var < 0 ? "zoo kernel" : VNAME[var], WIDTHS[w], FAMILIES[f].name,
                                    rn_dtype_name(DTYPES[k]), why);
                        }
                    }
                    run_kernel(&c, -1);
                    double **ref = snapshot(&c);
                    for (int j = 0; !quick && MUTS[op][j] != M_NONE; j++) {
                        cf.m = MUTS[op][j];
                        run_kernel(&c, -1);
                        int ch = changes(&c, ref, DTYPES[k]);
                        int v = verdict(&c, bound, DTYPES[k], why, sizeof why);
                        table[op][j].changed[w][k] |= ch;
                        table[op][j].caught[w][k] |= v;
                        if (getenv("ZOO_VERBOSE"))
                            printf("  %s %s n=%zu %s %s: changes %d, caught %d%s\n", OPNAME[op],
                                   mutant_name(cf.m), WIDTHS[w], FAMILIES[f].name,
                                   rn_dtype_name(DTYPES[k]), ch, v, v ? why : "");
                    }
                    free_snapshot(ref);
                    for (int q = 0; q < CLI_MAX_IO; q++)
                        rn_array_free(&bound[q]);
                }
                close_case(&c);
            }
            free_data(&d);
        }
    }
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    cr_assert_eq(system(cmd), 0);
    if (quick) {
        printf("zoo at widths (ZOO_QUICK: correct kernels and variants only): %d false alarms\n",
               false_alarms);
        cr_expect_eq(false_alarms, 0);
        return;
    }
    int missed = 0, cells = 0, caught_cells = 0;
    printf("bug zoo at production widths: %zu rows per family (%s, %s, %s), f32 inputs, compute "
           "f32, outputs f32/f16/bf16\n", rows, FAMILIES[0].name, FAMILIES[1].name,
           FAMILIES[2].name);
    printf("cell: R rigorous tier, S statistical tier, RS both, MISSED, n/a (the mutant's worst "
           "error exceeds the correct kernel's by at most one ulp of the dtype)\n");
    printf("%-48s", "op / mutant \\ n: dtype");
    for (int w = 0; w < NW; w++)
        printf(" | %-4zu f32 f16 bf16", WIDTHS[w]);
    printf("\n");
    for (int op = 0; op < NOPS; op++)
        for (int j = 0; MUTS[op][j] != M_NONE; j++) {
            char label[96];
            snprintf(label, sizeof label, "%s %s", OPNAME[op], mutant_name(MUTS[op][j]));
            printf("%-48s", label);
            for (int w = 0; w < NW; w++) {
                printf(" |     ");
                for (int k = 0; k < ND; k++) {
                    const char *cell;
                    int cg = table[op][j].caught[w][k];
                    if (!table[op][j].changed[w][k])
                        cell = cg == 0 ? "n/a" : cg == 3 ? "RS*" : cg == 1 ? "R*" : "S*";
                    else {
                        cells++;
                        caught_cells += cg != 0;
                        missed += cg == 0;
                        cell = cg == 3 ? "RS" : cg == 1 ? "R" : cg == 2 ? "S" : "MISSED";
                    }
                    printf(" %-3s", cell);
                }
            }
            printf("\n");
        }
    printf("(*: caught although the result does not change by more than the output rounding: a "
           "systematic sub-ulp shift)\n");
    printf("zoo at widths: %d/%d cells where the mutant changes the result caught, %d missed; "
           "%d false alarms on the correct kernels and %d variants\n", caught_cells, cells, missed,
           false_alarms, NVARIANTS);
    cr_expect_eq(false_alarms, 0, "a correct kernel is flagged");
    cr_expect_eq(missed, 0, "a mutant that changes the result is missed");
}
