/* Reading golden block and stack cases in Criterion tests (tests/test_block_kernel.c,
 * tests/test_stack_kernel.c): the parameter and dropout-mask names of one layer, their element
 * counts in specs/block.h's layout, an input that may be absent, a case's attributes as the CLI
 * reads them, the worst err/bound ratio of an output, and the double <-> kernel-dtype
 * conversions.  Static functions, as in golden_harness.h. */
#ifndef RESNORM_BLOCK_HARNESS_H
#define RESNORM_BLOCK_HARNESS_H

#include <criterion/criterion.h>
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "block.h"
#include "dtype.h"
#include "golden_harness.h"

#define NP 12 /* parameters per layer */
#define NM 4  /* dropout masks per layer */

/* One layer's parameters, in specs/block.h's layout order (a stack's are "layers.<l>.<name>"). */
static const char *const PNAME[NP] = {
    "self_attn.in_proj_weight", "self_attn.in_proj_bias", "self_attn.out_proj.weight",
    "self_attn.out_proj.bias",  "linear1.weight",         "linear1.bias",
    "linear2.weight",           "linear2.bias",           "norm1.weight",
    "norm1.bias",               "norm2.weight",           "norm2.bias"};
static const char *const MNAME[NM] = {"attn_dropout.mask", "dropout.mask", "dropout1.mask",
                                      "dropout2.mask"};

/* Elements of parameter j (PNAME index) at width d, hidden ff: in_proj 3d x d and 3d, out_proj
   d x d and d, linear1 ff x d and ff, linear2 d x ff and d, the norms d each. */
static inline size_t block_pcount(int d, int ff, int j)
{
    size_t D = (size_t)d, FF = (size_t)ff;
    static const int kind[NP] = {0, 1, 2, 3, 4, 5, 4, 3, 3, 3, 3, 3};
    switch (kind[j]) {
    case 0: return 3 * D * D;
    case 1: return 3 * D;
    case 2: return D * D;
    case 4: return FF * D;
    case 5: return FF;
    default: return D;
    }
}

/* Elements of dropout mask k (MNAME index): attention B·T x H x T, the FFN's B·T x ff, the two
   residual ones B·T x d. */
static inline size_t block_mcount(int B, int T, int H, int d, int ff, int k)
{
    size_t rows = (size_t)B * (size_t)T;
    return k == 0 ? rows * (size_t)H * (size_t)T : k == 1 ? rows * (size_t)ff : rows * (size_t)d;
}

/* The data of input `name` of a manifest entry's inputs (kept alive in *keep), or NULL when the
   entry has no such input. */
static inline double *load_data(json_t *in, const char *name, rn_array *keep)
{
    const char *path = get_path(in, name);
    if (!path)
        return NULL;
    *keep = load(path);
    return keep->data;
}

static inline void free_arrays(rn_array *a, size_t n)
{
    for (size_t k = 0; k < n; k++)
        if (a[k].data)
            rn_array_free(&a[k]);
}

/* A block or stack entry's shapes and attributes: B, T, d from x ([B,] T, d), and heads, norm,
   causal, activation, eps (its text rounded once to eps_dtype) and p (its text rounded once to
   x's dtype), as the CLI reads them. */
static inline void block_case_attrs(json_t *c, const rn_array *x, int *B, int *T, int *d, int *H,
                                    int *post, int *causal, ffn_act *act, double *eps, double *p)
{
    json_t *attrs = json_object_get(c, "attrs");
    *d = (int)x->shape[x->ndim - 1];
    *T = (int)x->shape[x->ndim - 2];
    *B = x->ndim == 3 ? (int)x->shape[0] : 1;
    *H = (int)json_integer_value(json_object_get(attrs, "heads"));
    *post = !strcmp(json_string_value(json_object_get(attrs, "norm")), "post");
    *causal = (int)json_integer_value(json_object_get(attrs, "causal"));
    const char *a = json_string_value(json_object_get(attrs, "activation"));
    *act = !strcmp(a, "relu") ? FFN_RELU : !strcmp(a, "gelu") ? FFN_GELU : FFN_GELU_TANH;
    rn_dtype edt;
    cr_assert_eq(rn_dtype_from_name(json_string_value(json_object_get(attrs, "eps_dtype")), &edt), 0);
    cr_assert_eq(rn_parse_eps(json_string_value(json_object_get(attrs, "eps")), edt, eps), 0);
    cr_assert_eq(rn_parse_eps(json_string_value(json_object_get(attrs, "p")), x->dtype, p), 0);
}

/* max |got - want|/bound over n elements as `resnorm check` counts it: non-finite bounds skipped
   (+Inf: unconstrained; test_ffn.c's own fails a NaN one), non-finite expected values demand the
   same class; +Inf when a zero bound is exceeded.  *constrained (unless NULL) counts the elements
   whose bound was applied. */
static inline double worst_ratio(const double *got, const double *want, const double *bound,
                                 size_t n, size_t *constrained)
{
    double worst = 0.0;
    for (size_t i = 0; i < n; i++) {
        if (!isfinite(want[i])) {
            if (!(isnan(want[i]) ? isnan(got[i]) : got[i] == want[i]))
                return INFINITY;
            continue;
        }
        if (!isfinite(bound[i]))
            continue;
        if (constrained)
            ++*constrained;
        double e = fabs(got[i] - want[i]);
        double r = bound[i] > 0 ? e / bound[i] : (e > 0 ? INFINITY : 0.0);
        if (!(r <= worst))
            worst = r;
    }
    return worst;
}

/* conv_<sfx>(v, n): v in type TY (NULL for NULL; exact: the inputs are values of the input
   dtype); zeros_<sfx>(n); widen_<sfx>(v, n): a TY vector back in double. */
#define BLOCK_HARNESS_CONV(TY, sfx)                                                                \
    static inline TY *conv_##sfx(const double *v, size_t n)                                               \
    {                                                                                              \
        if (!v)                                                                                    \
            return NULL;                                                                           \
        TY *o = malloc((n ? n : 1) * sizeof *o);                                                   \
        for (size_t i = 0; i < n; i++)                                                             \
            o[i] = (TY)v[i];                                                                       \
        return o;                                                                                  \
    }                                                                                              \
    static inline TY *zeros_##sfx(size_t n) { return calloc(n ? n : 1, sizeof(TY)); }                     \
    static inline double *widen_##sfx(const TY *v, size_t n)                                              \
    {                                                                                              \
        double *o = calloc(n ? n : 1, sizeof *o);                                                  \
        for (size_t i = 0; i < n; i++)                                                             \
            o[i] = v[i];                                                                           \
        return o;                                                                                  \
    }
BLOCK_HARNESS_CONV(float, f32)
BLOCK_HARNESS_CONV(double, f64)

/* The seeds' generator: a uniform value in [-0.5, 0.5). */
static inline double lcg(unsigned long *s)
{
    *s = *s * 6364136223846793005UL + 1442695040888963407UL;
    return (double)(*s >> 11) * 0x1p-53 - 0.5;
}

#endif
