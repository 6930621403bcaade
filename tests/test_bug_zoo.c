/* The bug zoo: every bug class of the suite (golden/manifest.json notes.bugs) as a mutant of the
 * project's float kernels, run over the whole golden suite and checked by `resnorm golden
 * run-check` ($RESNORM, default build/resnorm).  Every mutant must be flagged (a FAIL on at least
 * one case) at every dtype where it is a bug, and the correct kernels must pass every case at every
 * dtype: f64 (compute f64), f32 (compute f32), and "accumulate in f32, output f16 / bf16".
 *
 * The kernels (tests/zoo_kernels.h, shared with the zoo at production widths,
 * tests/test_zoo_widths.c) are copies of ref/layernorm.c and ref/rmsnorm.c written over doubles
 * with every operation rounded to the compute dtype; a mutant is the same kernel with one bug
 * switched on.  The correct kernels must also not be flagged by the statistical tier
 * (specs/statistical-tier.md); the kill table counts the rigorous tier's failures.
 * Expected values come only from `resnorm golden run-check` (the certified twin); this file never
 * reads an expected file's values (only the manifest's inputs, attrs and shapes).
 *
 * ZOO_QUICK=1 (set by 'make asan') runs the correct kernels only.
 * Prints the kill-rate table per dtype ("killed" with the number of failing cases, "n/a" where the
 * mutant is not a bug at that dtype, e.g. an output rounded to bf16 when bf16 is promised). */
#include <criterion/criterion.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "dtype.h"
#include "golden.h"
#include "npy.h"

#include "zoo_kernels.h"
#include "suite_runner.h" /* sr_norm_family: the families these kernels implement */

/* Name (the bug class of notes.bugs it belongs to is the prefix before ':'), ops it touches. */
static const struct {
    const char *name, *ops;
    int na_mask; /* dtypes where it is not a bug: 1 << rn_dtype */
} MUT[M_COUNT] = {
    [M_NONE] = {"correct kernels", "*", 0},
    [M_UNBIASED] = {"unbiased_variance", "layernorm skip_layernorm", 0},
    [M_EPS_OUT] = {"eps_outside_sqrt", "layernorm rmsnorm skip_layernorm skip_rmsnorm", 0},
    [M_WRONG_EPS] = {"wrong_eps (1e-12)", "layernorm rmsnorm", 0},
    [M_ONE_PASS] = {"one_pass_variance", "layernorm skip_layernorm", 0},
    [M_LOWP_SUMSQ] = {"lowp_sum_of_squares (f16)", "rmsnorm skip_rmsnorm", 0},
    [M_LAST_AXIS] = {"wrong_axis: last dim only", "layernorm rmsnorm", 0},
    [M_BATCH_AXIS] = {"wrong_axis: over the batch", "layernorm rmsnorm", 0},
    [M_NO_GAMMA] = {"gamma_beta: gamma missing", "layernorm rmsnorm", 0},
    [M_NO_BETA] = {"gamma_beta: beta missing", "layernorm", 0},
    [M_SWAP_GB] = {"gamma_beta: swapped", "layernorm", 0},
    [M_GAMMA_BCAST] = {"gamma_beta: broadcast", "layernorm rmsnorm", 0},
    [M_OUT_BF16] = {"output_rounding (bf16)", "layernorm rmsnorm residual", 1 << RN_BF16},
    [M_W_AFTER_CAST] = {"weight_after_cast", "rmsnorm skip_rmsnorm", (1 << RN_F64) | (1 << RN_F32)},
    [M_NO_OFFSET] = {"gemma_offset_missing", "rmsnorm rmsnorm_backward skip_rmsnorm", 0},
    [M_NO_MEAN_G] = {"backward_missing_mean_g", "layernorm_backward skip_layernorm_backward", 0},
    [M_NO_MEAN_GX] = {"backward_missing_mean_gxhat",
                      "layernorm_backward rmsnorm_backward skip_layernorm_backward "
                      "skip_rmsnorm_backward", 0},
    [M_DG_FIRST_ROW] = {"param_grad_not_summed: row 0", "layernorm_backward rmsnorm_backward", 0},
    [M_DG_BATCH_ONLY] = {"param_grad_not_summed: batch", "layernorm_backward rmsnorm_backward", 0},
    [M_SKIP_NORM_X] = {"skip_norm_of_x", "skip_layernorm skip_rmsnorm skip_layernorm_backward "
                                         "skip_rmsnorm_backward", 0},
    [M_SKIP_SUM_NOBIAS] = {"skip_sum_before_bias", "skip_layernorm skip_rmsnorm", 0},
};

/* The four implementations: compute dtype, output dtype. */
static const struct {
    rn_dtype cd, out;
    const char *label;
} IMPL[4] = {{RN_F64, RN_F64, "f64"}, {RN_F32, RN_F32, "f32"},
             {RN_F32, RN_F16, "f32->f16"}, {RN_F32, RN_BF16, "f32->bf16"}};


static json_t *KILLS; /* "<impl>" -> "<case id>" -> [mutant classes failing it] */

/* ---------------------------------------------------------------- one case */

typedef struct {
    const char *name;
    rn_array a;
} named;

static const double *in(named *ins, int nin, const char *name)
{
    for (int k = 0; k < nin; k++)
        if (!strcmp(ins[k].name, name))
            return ins[k].a.data;
    return NULL;
}

static int write_out(const char *dir, const char *name, const double *v, int ndim,
                     const size_t *shape)
{
    rn_array a;
    char path[4096], err[512];
    if (rn_array_alloc(&a, C->out, ndim, shape) != 0)
        return -1;
    memcpy(a.data, v, a.count * sizeof(double));
    snprintf(path, sizeof path, "%s/%s.npy", dir, name);
    int rc = npy_write(path, &a, err, sizeof err);
    if (rc)
        fprintf(stderr, "%s\n", err);
    rn_array_free(&a);
    return rc;
}

static int op_touched(const char *op, mutant m)
{
    if (!sr_norm_family(op)) /* the kernels here are the norms', skip ops' and residual add's */
        return 0;
    if (m == M_NONE)
        return 1;
    char buf[256];
    snprintf(buf, sizeof buf, " %s ", MUT[m].ops);
    char key[64];
    snprintf(key, sizeof key, " %s ", op);
    return strstr(buf, key) != NULL;
}

/* Run the configured kernel on one manifest case and write DIR/<id>/<output>.npy. */
static int run_case(json_t *c, const char *root, const char *dir)
{
    const char *op = json_string_value(json_object_get(c, "op"));
    json_t *attrs = json_object_get(c, "attrs");
    named ins[8];
    int nin = 0;
    const char *nm;
    json_t *p;
    json_object_foreach(json_object_get(c, "inputs"), nm, p) {
        char path[4096], err[512];
        snprintf(path, sizeof path, "%s/%s", root, json_string_value(p));
        ins[nin].name = nm;
        if (npy_read(path, &ins[nin].a, err, sizeof err) != 0) {
            fprintf(stderr, "%s\n", err);
            return -1;
        }
        nin++;
    }
    const rn_array *x0 = &ins[0].a; /* x, or dy (residual_backward) */
    view v = {0};
    json_t *ax = json_object_get(attrs, "axis");
    int axis = ax ? (int)json_integer_value(ax) : -1;
    if (axis < 0)
        axis += x0->ndim;
    v.rows = 1, v.n = 1;
    for (int d = 0; d < x0->ndim; d++)
        *(d < axis ? &v.rows : &v.n) *= x0->shape[d];
    v.last = x0->ndim ? x0->shape[x0->ndim - 1] : 1;
    v.batch = axis > 0 ? x0->shape[0] : 1;
    json_t *eps = json_object_get(c, "eps_exact"); /* eps as the case uses it (hex float) */
    if (eps)
        v.eps = strtod(json_string_value(eps), NULL);
    json_t *off = json_object_get(attrs, "offset");
    v.offset = off ? (int)json_integer_value(off) : 0;

    size_t N = x0->count;
    double *o1 = calloc(N + 1, sizeof(double)), *o2 = calloc(N + 1, sizeof(double));
    double *m1 = calloc(v.rows + 1, sizeof(double)), *m2 = calloc(v.rows + 1, sizeof(double));
    double *p1 = calloc(v.n + 1, sizeof(double)), *p2 = calloc(v.n + 1, sizeof(double));
    double *p3 = calloc(v.n + 1, sizeof(double)), *s = calloc(N + 1, sizeof(double));
    const double *x = in(ins, nin, "x"), *g = in(ins, nin, "gamma"), *b = in(ins, nin, "beta"),
                 *dy = in(ins, nin, "dy");
    int skip = !strncmp(op, "skip_", 5);
    if (skip) { /* s = x + skip (+ bias), in the compute dtype */
        const double *k = in(ins, nin, "skip"), *bias = in(ins, nin, "bias");
        for (size_t i = 0; i < N; i++)
            s[i] = R(x[i] + k[i]);
        double *sb = s;
        for (size_t i = 0; i < N; i++) {
            double t = bias ? R(sb[i] + bias[i % v.n]) : sb[i];
            o2[i] = C->m == M_SKIP_SUM_NOBIAS ? sb[i] : t; /* o2: the returned sum */
            sb[i] = t;
        }
        if (C->m == M_SKIP_NORM_X)
            memcpy(s, x, N * sizeof(double));
        x = s;
    }
    char cd[4096];
    snprintf(cd, sizeof cd, "%s/%s", dir, json_string_value(json_object_get(c, "id")));
    cr_assert_eq(golden_mkdirs(cd), 0);
    int nd = x0->ndim, pnd = nd - axis;
    const size_t *shape = x0->shape, *pshape = x0->shape + axis;
    int rc = 0;
    if (!strcmp(op, "layernorm") || !strcmp(op, "skip_layernorm")) {
        ln_forward(&v, x, g, b, o1, m1, m2);
        rc |= write_out(cd, "y", o1, nd, shape) | write_out(cd, "mean", m1, axis, shape) |
              write_out(cd, "rstd", m2, axis, shape);
    } else if (!strcmp(op, "rmsnorm") || !strcmp(op, "skip_rmsnorm")) {
        rms_forward(&v, x, g, o1, m2);
        rc |= write_out(cd, "y", o1, nd, shape) | write_out(cd, "rstd", m2, axis, shape);
    } else if (!strcmp(op, "layernorm_backward") || !strcmp(op, "skip_layernorm_backward")) {
        ln_backward(&v, x, g, dy, o1, o2, p1, p2);
        rc |= write_out(cd, "dx", o1, nd, shape) | write_out(cd, "dgamma", p1, pnd, pshape) |
              write_out(cd, "dbeta", p2, pnd, pshape);
    } else if (!strcmp(op, "rmsnorm_backward") || !strcmp(op, "skip_rmsnorm_backward")) {
        rms_backward(&v, x, g, dy, o1, o2, p1);
        rc |= write_out(cd, "dx", o1, nd, shape) | write_out(cd, "dgamma", p1, pnd, pshape);
    } else if (!strcmp(op, "residual")) {
        const double *f = in(ins, nin, "f");
        for (size_t i = 0; i < N; i++)
            o1[i] = OUT(R(x[i] + f[i]));
        rc |= write_out(cd, "y", o1, nd, shape);
    } else if (!strcmp(op, "residual_backward")) {
        for (size_t i = 0; i < N; i++)
            o1[i] = OUT(dy[i]);
        rc |= write_out(cd, "dx", o1, nd, shape) | write_out(cd, "df", o1, nd, shape);
    }
    if (skip && strstr(op, "backward")) { /* dskip = dx; dbias = sum over rows of dx */
        for (size_t i = 0; i < v.n; i++) {
            double a = 0;
            for (size_t r = 0; r < v.rows; r++)
                a = R(a + o2[r * v.n + i]); /* o2: dx before the output rounding */
            p3[i] = OUT(a);
        }
        rc |= write_out(cd, "dskip", o1, nd, shape) | write_out(cd, "dbias", p3, pnd, pshape);
    } else if (skip) {
        for (size_t i = 0; i < N; i++)
            o2[i] = OUT(o2[i]);
        rc |= write_out(cd, "sum", o2, nd, shape);
    }
    free(o1), free(o2), free(m1), free(m2), free(p1), free(p2), free(p3), free(s);
    for (int k = 0; k < nin; k++)
        rn_array_free(&ins[k].a);
    return rc;
}

/* ---------------------------------------------------------------- the zoo */

static const char *resnorm(void)
{
    const char *r = getenv("RESNORM");
    return r ? r : "build/resnorm";
}

/* Cases an implementation computing in cd can run: inputs exact in cd (f64 inputs only at f64). */
static int runnable(json_t *c, rn_dtype cd)
{
    const char *idt = json_string_value(json_object_get(c, "input_dtype"));
    return cd == RN_F64 || strcmp(idt, "f64") != 0;
}

typedef struct {
    int failed, passed, skipped, acceptable;
    int by_target; /* failing cases that carry a flag notes.bugs lists for the mutant's class */
    int stat_flagged; /* cases the statistical tier flags (specs/statistical-tier.md) */
    char first_fail[160];
} outcome;

/* The bug class of a mutant: its name up to ' ' or ':' (notes.bugs key). */
static json_t *bug_class(json_t *man, mutant m)
{
    char id[64];
    size_t k = strcspn(MUT[m].name, " :");
    snprintf(id, sizeof id, "%.*s", (int)k, MUT[m].name);
    return json_object_get(json_object_get(json_object_get(man, "notes"), "bugs"), id);
}

/* Whether the case with this id carries one of the class's target flags. */
static int targeted(json_t *cases, json_t *bug, const char *id)
{
    size_t i, j, k;
    json_t *c, *f, *t;
    json_array_foreach(cases, i, c) {
        if (strcmp(json_string_value(json_object_get(c, "id")), id))
            continue;
        json_array_foreach(json_object_get(c, "flags"), j, f)
            json_array_foreach(json_object_get(bug, "flags"), k, t)
                if (json_equal(f, t))
                    return 1;
        return 0;
    }
    return 0;
}

/* Write the mutant's outputs for every case of the ops it touches, run run-check, tally. */
static outcome run_zoo(json_t *man, json_t *cases, const char *tmp, int impl, mutant m)
{
    cfg cf = {IMPL[impl].cd, IMPL[impl].out, m};
    C = &cf;
    char dir[512], cmd[1200];
    snprintf(dir, sizeof dir, "%s/impl%d_m%d", tmp, impl, (int)m);
    size_t i;
    json_t *c;
    json_array_foreach(cases, i, c) {
        if (runnable(c, cf.cd) && op_touched(json_string_value(json_object_get(c, "op")), m))
            cr_assert_eq(run_case(c, ".", dir), 0, "%s", json_string_value(json_object_get(c, "id")));
    }
    snprintf(cmd, sizeof cmd, "%s golden run-check %s --dtype %s --json --root . > %s.json",
             resnorm(), dir, rn_dtype_name(cf.out), dir);
    int st = system(cmd);
    /* 4: no rigorous failure, but the statistical tier flags some case (specs/cli.md) */
    cr_assert(WIFEXITED(st) && (WEXITSTATUS(st) == 0 || WEXITSTATUS(st) == 1 ||
                                WEXITSTATUS(st) == 4),
              "run-check failed to run: %s", cmd);
    char jp[600];
    snprintf(jp, sizeof jp, "%s.json", dir);
    json_error_t e;
    json_t *rep = json_load_file(jp, 0, &e);
    cr_assert_not_null(rep, "%s: %s", jp, e.text);
    outcome o = {0};
    o.failed = (int)json_integer_value(json_object_get(rep, "failed"));
    o.passed = (int)json_integer_value(json_object_get(rep, "passed"));
    o.acceptable = (int)json_integer_value(json_object_get(rep, "acceptable"));
    o.stat_flagged = (int)json_integer_value(json_object_get(rep, "statistical_flagged"));
    json_t *cr;
    json_array_foreach(json_object_get(rep, "cases"), i, cr) {
        if (m == M_NONE && !strcmp(json_string_value(json_object_get(cr, "statistical")), "FLAG"))
            fprintf(stderr, "correct kernel %s: the statistical tier FLAGS %s\n", IMPL[impl].label,
                    json_string_value(json_object_get(cr, "id")));
        if (!strcmp(json_string_value(json_object_get(cr, "verdict")), "FAIL")) {
            if (m != M_NONE && getenv("ZOO_VERBOSE"))
                printf("  %s at %s fails %s\n", MUT[m].name, IMPL[impl].label,
                       json_string_value(json_object_get(cr, "id")));
            if (m != M_NONE) {
                json_t *per = json_object_get(KILLS, IMPL[impl].label);
                const char *cid = json_string_value(json_object_get(cr, "id"));
                if (!json_object_get(per, cid))
                    json_object_set_new(per, cid, json_array());
                json_array_append_new(json_object_get(per, cid), json_integer(m));
            }
            if (m != M_NONE && targeted(cases, bug_class(man, m),
                                        json_string_value(json_object_get(cr, "id"))))
                o.by_target++;
            if (!o.first_fail[0])
                snprintf(o.first_fail, sizeof o.first_fail, "%s",
                         json_string_value(json_object_get(cr, "id")));
            if (m == M_NONE)
                fprintf(stderr, "correct kernel %s FAILS %s\n", IMPL[impl].label,
                        json_string_value(json_object_get(cr, "id")));
        }
    }
    json_decref(rep);
    snprintf(cmd, sizeof cmd, "rm -rf %s %s.json", dir, dir);
    cr_assert_eq(system(cmd), 0);
    return o;
}

/* Per case and dtype: does some mutant of a bug class the case's flags target (notes.bugs) fail it?
   Informational: a (case, dtype) where none does is a case that cannot tell its target bugs at that
   dtype -- a candidate for result "acceptable" there.  The suite-level requirement (every class
   caught at every dtype) is asserted above. */
static void report_blind_cases(json_t *man, json_t *cases)
{
    int pairs = 0, blind = 0;
    for (int k = 0; k < 4; k++) {
        json_t *per = json_object_get(KILLS, IMPL[k].label);
        size_t i;
        json_t *c;
        json_array_foreach(cases, i, c) {
            if (!runnable(c, IMPL[k].cd))
                continue;
            const char *id = json_string_value(json_object_get(c, "id"));
            const char *op = json_string_value(json_object_get(c, "op"));
            int has_target = 0, seen = 0;
            for (int m = 1; m < M_COUNT; m++) {
                if (!op_touched(op, (mutant)m) || (MUT[m].na_mask & (1 << IMPL[k].out)) ||
                    !targeted(cases, bug_class(man, (mutant)m), id))
                    continue;
                has_target = 1;
                size_t j;
                json_t *v;
                json_array_foreach(json_object_get(per, id), j, v)
                    seen |= json_integer_value(v) == m;
            }
            const char *res = json_string_value(json_object_get(json_object_get(c, "result"),
                                                                rn_dtype_name(IMPL[k].out)));
            if (!has_target || (res && !strcmp(res, "acceptable")))
                continue; /* acceptable: the manifest's result_notes say why it is blind there */
            pairs++;
            if (!seen) {
                blind++;
                if (getenv("ZOO_VERBOSE"))
                    printf("  blind: %s at %s\n", id, IMPL[k].label);
            }
        }
    }
    printf("per case: %d of %d valid (case, implementation) pairs with a targeted bug class catch "
           "none of its mutants there (ZOO_VERBOSE=1 lists them)\n", blind, pairs);
}

Test(bug_zoo, every_mutant_killed_and_no_false_alarm, .timeout = 600)
{
    json_error_t e;
    json_t *man = json_load_file("golden/manifest.json", 0, &e);
    cr_assert_not_null(man, "golden/manifest.json: %s (run from the repository root)", e.text);
    json_t *cases = json_object_get(man, "cases");
    char tmp[] = "/tmp/resnorm_zoo_XXXXXX";
    cr_assert_not_null(mkdtemp(tmp));
    int survivors = 0, false_alarms = 0, killed = 0, cells = 0, untargeted = 0;
    KILLS = json_object();
    for (int k = 0; k < 4; k++)
        json_object_set_new(KILLS, IMPL[k].label, json_object());
    for (int m = 1; m < M_COUNT; m++)
        cr_assert_not_null(bug_class(man, (mutant)m), "mutant %s: no notes.bugs entry", MUT[m].name);
    printf("bug zoo: mutants of the float kernels over the golden suite, checked by "
           "'resnorm golden run-check'\n");
    printf("%-32s", "mutant \\ implementation");
    for (int k = 0; k < 4; k++)
        printf(" %-13s", IMPL[k].label);
    printf("\n");
    /* ZOO_QUICK (the ASan run, 'make asan'): the correct kernels only -- every kernel path runs
       under the sanitizers; the mutants, minutes under ASan, run in the plain 'make unit'. */
    int nm = getenv("ZOO_QUICK") ? 1 : M_COUNT;
    for (int m = 0; m < nm; m++) {
        printf("%-32s", MUT[m].name);
        for (int k = 0; k < 4; k++) {
            char cell[64];
            if (MUT[m].na_mask & (1 << IMPL[k].out)) {
                snprintf(cell, sizeof cell, "n/a");
            } else {
                outcome o = run_zoo(man, cases, tmp, k, (mutant)m);
                if (m == M_NONE) {
                    snprintf(cell, sizeof cell, "%s %d/%d",
                             o.failed || o.stat_flagged ? "FALSE-ALARM" : "pass", o.passed,
                             o.passed + o.failed);
                    false_alarms += o.failed + o.stat_flagged;
                } else {
                    cells++;
                    killed += o.failed > 0;
                    survivors += o.failed == 0;
                    untargeted += o.failed > 0 && o.by_target == 0;
                    if (o.failed)
                        snprintf(cell, sizeof cell, "killed %d/%d", o.by_target, o.failed);
                    else
                        snprintf(cell, sizeof cell, "SURVIVED");
                }
            }
            printf(" %-13s", cell);
        }
        printf("\n");
        fflush(stdout);
    }
    if (nm > 1)
        report_blind_cases(man, cases);
    json_decref(KILLS);
    if (nm == 1)
        printf("mutants not run (ZOO_QUICK): %d false alarms\n", false_alarms);
    else
        printf("kill rate: %d/%d mutant-dtype cells killed (%.0f%%), %d false alarms; cells: "
               "failing cases flagged for the bug class (notes.bugs) / all failing cases\n", killed,
               cells, cells ? 100.0 * killed / cells : 0.0, false_alarms);
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf %s", tmp);
    cr_assert_eq(system(cmd), 0);
    json_decref(man);
    cr_expect_eq(false_alarms, 0, "the correct kernels fail some case");
    cr_expect_eq(survivors, 0, "some mutant survives the suite");
    /* notes.bugs says which flags target each class: a case with one of them must catch it */
    cr_expect_eq(untargeted, 0, "some mutant is killed only by cases its class's flags do not name");
}
