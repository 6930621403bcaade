/* Reading golden cases in Criterion tests: a .npy file that must load, the rows x n view of x for
 * an ONNX axis, a path out of a manifest object, whether a case carries a flag.  Shared by the
 * kernel-vs-golden tests. */
#ifndef RESNORM_GOLDEN_HARNESS_H
#define RESNORM_GOLDEN_HARNESS_H

#include <criterion/criterion.h>
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "npy.h"

static inline rn_array load(const char *path)
{
    rn_array a;
    char err[512];
    cr_assert_eq(npy_read(path, &a, err, sizeof err), 0, "%s", err);
    return a;
}

/* Rows and row length of x for an ONNX axis: rows = prod(shape[:axis]), n = prod(shape[axis:]). */
static inline void rows_n(const rn_array *x, long axis, size_t *rows, size_t *n)
{
    if (axis < 0)
        axis += x->ndim;
    *rows = 1, *n = 1;
    for (int k = 0; k < x->ndim; k++)
        *(k < axis ? rows : n) *= x->shape[k];
}

/* A kernel's outputs against the golden ones, element by element: |got - want| <= bound, the
   bound of the family's written error analysis.  Returns the worst |got - want| / bound.  A
   non-finite want demands the same class (NaN, or the same infinity); a +Inf bound (the analysis
   is void there) is skipped. */
static inline double golden_compare(const char *id, const char *what, const double *got,
                                    const double *want, const double *bound, size_t count)
{
    double worst = 0.0;
    for (size_t i = 0; i < count; i++) {
        if (!isfinite(want[i])) {
            cr_assert(isnan(want[i]) ? isnan(got[i]) : got[i] == want[i],
                      "%s %s[%zu]: got %a, want %a", id, what, i, got[i], want[i]);
            continue;
        }
        if (isinf(bound[i]))
            continue;
        double err = fabs(got[i] - want[i]);
        cr_assert(err <= bound[i], "%s %s[%zu]: got %.17g want %.17g err %.3g > bound %.3g", id,
                  what, i, got[i], want[i], err, bound[i]);
        if (bound[i] > 0 && err / bound[i] > worst)
            worst = err / bound[i];
    }
    return worst;
}

/* The string o[k] (a manifest path), or NULL. */
static inline const char *get_path(json_t *o, const char *k)
{
    return json_string_value(json_object_get(o, k));
}

/* The exact eps of a manifest entry: its "eps_exact" (hex float: attrs.eps rounded once to
   attrs.eps_dtype). */
static inline double case_eps(json_t *entry)
{
    const char *h = json_string_value(json_object_get(entry, "eps_exact"));
    cr_assert(h, "manifest entry without eps_exact");
    return strtod(h, NULL);
}

/* 1 if the manifest entry c carries the flag f. */
static inline int has_flag(json_t *c, const char *f)
{
    size_t i;
    json_t *v;
    json_array_foreach(json_object_get(c, "flags"), i, v) if (!strcmp(json_string_value(v), f)) return 1;
    return 0;
}

#endif
