/* Running an implementation over the whole golden suite and checking it with `resnorm golden
 * run-check`: shared by the bug zoo (tests/test_bug_zoo.c: mutants must fail) and the battery of
 * correct implementations (tests/test_battery.c: every variant must pass).
 *
 * A case is loaded from the manifest into an sr_case: its inputs (as doubles), and the rows x n view
 * of x for its ONNX axis (rows = prod(shape[:axis]), n = prod(shape[axis:])), eps (its text rounded
 * as the suite rounds it) and offset.  The implementation writes DIR/<case id>/<output>.npy with
 * sr_write, then sr_run_check runs `$RESNORM golden run-check DIR --dtype D --json` and returns the
 * parsed report.  Expected values are never read here: they come only from run-check (the twin). */
#ifndef RESNORM_SUITE_RUNNER_H
#define RESNORM_SUITE_RUNNER_H

#include <criterion/criterion.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "dtype.h"
#include "golden.h"
#include "npy.h"

typedef struct {
    size_t rows, n, last, batch; /* rows x n; last: size of the last dim; batch: shape[0] */
    double eps;
    int offset;
} sr_view;

typedef struct {
    const char *name;
    rn_array a;
} sr_named;

typedef struct {
    const char *op, *id;
    sr_named in[8];
    int nin;
    sr_view v;
    int axis;            /* non-negative */
    const rn_array *x0;  /* the first input: x, or dy for residual_backward */
} sr_case;

/* The data of input `name`, or NULL when the case has none (an optional bias). */
static inline const double *sr_in(const sr_case *k, const char *name)
{
    for (int i = 0; i < k->nin; i++)
        if (!strcmp(k->in[i].name, name))
            return k->in[i].a.data;
    return NULL;
}

/* Load the inputs of manifest case c (paths relative to root); 0 or -1 (message on stderr). */
static inline int sr_load_case(json_t *c, const char *root, sr_case *k)
{
    memset(k, 0, sizeof *k);
    k->op = json_string_value(json_object_get(c, "op"));
    k->id = json_string_value(json_object_get(c, "id"));
    json_t *attrs = json_object_get(c, "attrs");
    rn_dtype idt;
    rn_dtype_from_name(json_string_value(json_object_get(c, "input_dtype")), &idt);
    const char *nm;
    json_t *p;
    json_object_foreach(json_object_get(c, "inputs"), nm, p) {
        char path[4096], err[512];
        snprintf(path, sizeof path, "%s/%s", root, json_string_value(p));
        if (k->nin == 8 || npy_read(path, &k->in[k->nin].a, err, sizeof err) != 0) {
            fprintf(stderr, "%s\n", err);
            return -1;
        }
        k->in[k->nin++].name = nm;
    }
    k->x0 = &k->in[0].a;
    json_t *ax = json_object_get(attrs, "axis");
    int axis = ax ? (int)json_integer_value(ax) : -1;
    if (axis < 0)
        axis += k->x0->ndim;
    k->axis = axis;
    k->v.rows = 1, k->v.n = 1;
    for (int d = 0; d < k->x0->ndim; d++)
        *(d < axis ? &k->v.rows : &k->v.n) *= k->x0->shape[d];
    k->v.last = k->x0->ndim ? k->x0->shape[k->x0->ndim - 1] : 1;
    k->v.batch = axis > 0 ? k->x0->shape[0] : 1;
    json_t *eps = json_object_get(c, "eps_exact"); /* eps as the case uses it (hex float) */
    if (eps)
        k->v.eps = strtod(json_string_value(eps), NULL);
    json_t *off = json_object_get(attrs, "offset");
    k->v.offset = off ? (int)json_integer_value(off) : 0;
    return 0;
}

static inline void sr_free_case(sr_case *k)
{
    for (int i = 0; i < k->nin; i++)
        rn_array_free(&k->in[i].a);
}

/* Write v (already rounded to `out`) as DIR/NAME.npy of dtype `out`. */
static inline int sr_write(const char *dir, const char *name, const double *v, int ndim,
                           const size_t *shape, rn_dtype out)
{
    rn_array a;
    char path[4200], err[512];
    if (rn_array_alloc(&a, out, ndim, shape) != 0)
        return -1;
    memcpy(a.data, v, a.count * sizeof(double));
    snprintf(path, sizeof path, "%s/%s.npy", dir, name);
    int rc = npy_write(path, &a, err, sizeof err);
    if (rc)
        fprintf(stderr, "%s\n", err);
    rn_array_free(&a);
    return rc;
}

static inline const char *sr_resnorm(void)
{
    const char *r = getenv("RESNORM");
    return r ? r : "build/resnorm";
}

/* Whether op belongs to the families the zoo's and the battery's kernels implement (the norms, the
   skip ops and the residual add, forward and backward); the sublayer families (linear, dropout,
   softmax) have other shapes and their own tests. */
static inline int sr_norm_family(const char *op)
{
    static const char *const fam[] = {"layernorm", "rmsnorm", "skip_layernorm", "skip_rmsnorm",
                                       "residual"};
    for (size_t i = 0; i < sizeof fam / sizeof fam[0]; i++) {
        size_t k = strlen(fam[i]);
        if (!strncmp(op, fam[i], k) && (op[k] == '\0' || !strcmp(op + k, "_backward")))
            return 1;
    }
    return 0;
}

/* Cases an implementation computing in cd can run: inputs exact in cd (f64 inputs only at f64). */
static inline int sr_runnable(json_t *c, rn_dtype cd)
{
    const char *idt = json_string_value(json_object_get(c, "input_dtype"));
    return cd == RN_F64 || strcmp(idt, "f64") != 0;
}

/* `resnorm golden run-check DIR --dtype OUT --json [extra]` from the repository root; returns the
   parsed report (the caller decrefs it) and removes DIR. */
static inline json_t *sr_run_check(const char *dir, rn_dtype out, const char *extra)
{
    char cmd[1400], jp[600];
    snprintf(cmd, sizeof cmd, "%s golden run-check %s --dtype %s --json --root . %s > %s.json",
             sr_resnorm(), dir, rn_dtype_name(out), extra ? extra : "", dir);
    int st = system(cmd);
    /* 4: no rigorous failure, but the statistical tier flags some case (specs/cli.md) */
    cr_assert(WIFEXITED(st) && (WEXITSTATUS(st) == 0 || WEXITSTATUS(st) == 1 ||
                                WEXITSTATUS(st) == 4),
              "run-check failed to run: %s", cmd);
    snprintf(jp, sizeof jp, "%s.json", dir);
    json_error_t e;
    json_t *rep = json_load_file(jp, 0, &e);
    cr_assert_not_null(rep, "%s: %s", jp, e.text);
    snprintf(cmd, sizeof cmd, "rm -rf %s %s.json", dir, dir);
    cr_assert_eq(system(cmd), 0);
    return rep;
}

#endif
