/* resnorm check OP --in ... [--attr ...] --actual NAME=FILE.npy ... [--dtype D] [--json]
 * Compares another implementation's outputs with the twin's exact values (rounded to f64) under the
 * per-element a-priori bound of the op (registry: cli/cli.h; for LayerNorm ref/layernorm_bound.c,
 * derivation specs/error-analysis.md).
 * Element i passes iff |got_i - want_i| <= bound_i; a NaN want demands a NaN, an infinite want the
 * same infinity or a NaN (an infinity minus itself inside a running mean is a legitimate way to
 * get there), and a finite want a finite got -- except where the analysis is void (bound +Inf,
 * specs/error-analysis.md §7): such elements are unconstrained, counted and reported, never
 * failed.  The checker proper, cli_check_job, is shared with `resnorm golden run-check`
 * (cli/golden_tools.c), which runs it case by case.  Reference: specs/cli.md. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "cli.h"
#include "layernorm_bound.h"

#define WORST_MAX CLI_WORST_MAX
typedef cli_worst worst_t;
typedef cli_summary summary_t;

void cli_check_help(void)
{
    printf(
        "usage: resnorm check OP --in NAME=FILE.npy ... [--attr eps=TEXT] [--attr axis=INT]\n"
        "                        --actual NAME=FILE.npy ... [--dtype f64|f32|f16|bf16] [--json]\n"
        "                        [--stat fail|warn|off]\n"
        "\n"
        "Checks another implementation's outputs of OP (any subset, one --actual per output)\n"
        "against the certified values, element by element, under the a-priori error bound of an\n"
        "implementation that computes in DTYPE's compute precision (f64 -> f64; f32, f16, bf16 ->\n"
        "f32) and rounds its outputs to DTYPE (default: the dtype of the first --actual file).\n"
        "Element i passes iff |got - want| <= bound_i (want: exact result rounded to f64);\n"
        "NaN must match NaN, +-Inf the same infinity (or NaN). Where the analysis is void\n"
        "(overflow in the compute dtype) an element is reported as unconstrained, not failed.\n"
        "Tolerance: specs/error-analysis.md.\n"
        "\n"
        "ops, inputs and outputs:\n");
    for (int i = 0; i < cli_nops; i++) {
        const cli_op *op = cli_ops[i];
        char ins[256];
        size_t k = 0;
        ins[0] = '\0';
        for (int j = 0; j < op->ninputs && k < sizeof ins; j++)
            k += (size_t)snprintf(ins + k, sizeof ins - k, op->optional[j] ? "%s[%s]" : "%s%s",
                                  j ? " " : "", op->inputs[j]);
        printf("  %-20s%-*s->  ", op->name, (int)k + 2 > 14 ? (int)k + 2 : 14, ins);
        for (int j = 0; j < op->noutputs; j++)
            printf("%s%s", j ? " " : "", op->outputs[j]);
        printf("\n");
    }
    printf(
        "Output shapes as 'resnorm eval --help' gives them; size-1 dimensions may differ.\n"
        "\n"
        "--json prints one JSON object: {op, dtype, compute_dtype, pass, tolerance, outputs:\n"
        "  {NAME: {file, count, mismatches, unconstrained, max_ratio, max_ulps, max_ratio_index,\n"
        "          worst: [{index, got, want, err_ulps, err_bound_ratio}]}}}\n"
        "(non-finite numbers as the strings \"NaN\", \"Infinity\", \"-Infinity\").\n"
        "\n"
        "Statistical tier (specs/statistical-tier.md), reported apart from the verdict above\n"
        "(JSON key \"statistical\"): tests whether the signed errors are systematic (a scale\n"
        "on every row, a bias of one sign, rows far off) rather than rounding noise; each\n"
        "statistic has false-alarm probability 1e-10 under its model.  --stat fail (default):\n"
        "a flag exits 4; warn: reported, exit unaffected; off: not run.\n"
        "\n"
        "exit: 0 all within tolerance (and no statistical flag), 1 a mismatch, 2 usage or\n"
        "input error, 3 internal error, 4 no mismatch but the statistical tier flags.\n"
        "See specs/cli.md.\n");
}

static void multi_index(size_t i, const rn_array *a, size_t *idx)
{
    for (int d = a->ndim - 1; d >= 0; d--) {
        size_t s = a->shape[d] ? a->shape[d] : 1;
        idx[d] = i % s;
        i /= s;
    }
}

static void index_str(char *buf, size_t cap, size_t i, const rn_array *a)
{
    size_t idx[RN_MAX_DIMS];
    multi_index(i, a, idx);
    cli_shape_str(buf, cap, a->ndim, idx);
    /* "(3,)" -> "[3]" style for indices */
    size_t L = strlen(buf);
    if (L >= 2) {
        buf[0] = '[';
        if (a->ndim == 1 && L >= 3 && buf[L - 2] == ',') {
            buf[L - 2] = ']';
            buf[L - 1] = '\0';
        } else {
            buf[L - 1] = ']';
        }
    }
}

static void summarize(const double *got, const double *want, const double *bound, size_t count,
                      rn_dtype d, summary_t *s)
{
    memset(s, 0, sizeof *s);
    s->count = count;
    for (size_t i = 0; i < count; i++) {
        double g = got[i], w = want[i], b = bound[i];
        int ok;
        double ulps, ratio;
        if (isnan(w)) {
            ok = isnan(g);
            ulps = ratio = ok ? 0 : INFINITY;
        } else if (isinf(w)) {
            ok = g == w || isnan(g);
            ulps = ratio = ok ? 0 : INFINITY;
        } else if (isinf(b)) {
            ok = 1;
            ulps = ratio = 0;
            s->unconstrained++;
        } else if (isinf(g) && g == rn_round(w, d)) {
            /* the exact value is beyond the range of the output dtype: its correctly rounded
               value, and the golden file's, is this infinity (e.g. rstd = 1e18 in f16) */
            ok = 1;
            ulps = ratio = 0;
        } else if (!isfinite(g)) {
            ok = 0;
            ulps = ratio = INFINITY;
        } else {
            double e = fabs(g - w);
            ok = e <= b;
            ulps = e / rn_ulp(w, d);
            if (e == 0)
                ratio = 0;
            else
                ratio = e / b; /* b == 0 -> Inf, b == Inf -> 0 */
        }
        if (i == 0 || ratio > s->max_ratio) {
            s->max_ratio = ratio;
            s->max_ratio_i = i;
        }
        if (ulps > s->max_ulps)
            s->max_ulps = ulps;
        if (!ok) {
            s->mismatches++;
            worst_t wt = {i, g, w, ulps, ratio};
            /* keep the WORST_MAX largest ratios, first-found first among equals */
            int pos = s->nworst;
            while (pos > 0 && s->worst[pos - 1].ratio < ratio)
                pos--;
            if (pos < WORST_MAX) {
                int last = s->nworst < WORST_MAX ? s->nworst : WORST_MAX - 1;
                for (int j = last; j > pos; j--)
                    s->worst[j] = s->worst[j - 1];
                s->worst[pos] = wt;
                if (s->nworst < WORST_MAX)
                    s->nworst++;
            }
        }
    }
}

static json_t *jnum(double v)
{
    if (isnan(v))
        return json_string("NaN");
    if (isinf(v))
        return json_string(v > 0 ? "Infinity" : "-Infinity");
    return json_real(v);
}

static json_t *jindex(size_t i, const rn_array *a)
{
    size_t idx[RN_MAX_DIMS];
    multi_index(i, a, idx);
    json_t *arr = json_array();
    for (int d = 0; d < a->ndim; d++)
        json_array_append_new(arr, json_integer((json_int_t)idx[d]));
    return arr;
}

static int digits_of(rn_dtype d)
{
    switch (d) {
    case RN_F64: return 17;
    case RN_F32: return 9;
    case RN_F16: return 5;
    default: return 4;
    }
}

/* The bound assumes the implementation computes on exactly these inputs: an f64 input that the
   compute dtype cannot hold would be rounded first, an error the analysis does not cover. */
static int inputs_exact_in(const cli_job *job, rn_dtype cd)
{
    for (int k = 0; k < job->op->ninputs; k++)
        for (size_t i = 0; i < job->in[k].count; i++)
            if (!rn_representable(job->in[k].data[i], cd)) {
                cli_error(job->verb, "input %s: %s: element %zu (%.17g) is not a %s value, and an "
                          "implementation computing in %s would see it rounded; round the inputs "
                          "to %s first (specs/error-analysis.md §0)", job->op->inputs[k],
                          job->in_path[k], i, job->in[k].data[i], rn_dtype_name(cd),
                          rn_dtype_name(cd), rn_dtype_name(cd));
                return RN_EXIT_USAGE;
            }
    return 0;
}

/* The comparison of the job's actual outputs with given exact values (want, rounded to f64) and
   bounds (for the compute dtype of d, and d), then the statistical tier.  The zoo at production
   widths (tests/test_zoo_widths.c) calls it with want and bound computed once for many kernels. */
void cli_check_with(const cli_job *job, rn_dtype d, const rn_array *want, const rn_array *bound,
                    cli_check_result *r)
{
    memset(r, 0, sizeof *r);
    r->d = d;
    r->cd = rn_compute_dtype(d);
    r->pass = 1;
    for (int m = 0; m < job->nactual; m++) {
        int k = job->act_index[m];
        summarize(job->act[m].data, want[k].data, bound[k].data, want[k].count, d, &r->sum[m]);
        if (r->sum[m].mismatches)
            r->pass = 0;
    }
    cli_stat_run(job, want, r); /* the statistical tier, reported apart (cli/stat_check.c) */
}

/* The checker proper, shared by `check` and `golden run-check` (cli/golden_tools.c): the job's
   inputs and actual outputs are loaded; compare every actual with the twin's exact values under the
   op's bound for (compute dtype of d, d).  d: the dtype the implementation declares. */
int cli_check_job(const cli_job *job, rn_dtype d, cli_check_result *r)
{
    memset(r, 0, sizeof *r);
    r->d = d;
    r->cd = rn_compute_dtype(d);
    int rc = inputs_exact_in(job, r->cd);
    if (rc)
        return rc;
    rn_array want[CLI_MAX_IO] = {{0}}, bound[CLI_MAX_IO] = {{0}};
    rc = cli_run_twin(job, RN_F64, want);
    if (!rc)
        rc = cli_run_bound(job, r->cd, d, bound);
    if (!rc)
        cli_check_with(job, d, want, bound, r);
    for (int k = 0; k < CLI_MAX_IO; k++) {
        rn_array_free(&want[k]);
        rn_array_free(&bound[k]);
    }
    return rc;
}

/* The JSON report of one checked job (specs/cli.md). */
json_t *cli_check_json(const cli_job *job, const cli_check_result *r)
{
    const summary_t *sum = r->sum;
    rn_dtype d = r->d, cd = r->cd;
    int pass = r->pass;
    json_t *root = json_object();
    json_object_set_new(root, "op", json_string(job->op->name));
    json_object_set_new(root, "dtype", json_string(rn_dtype_name(d)));
    json_object_set_new(root, "compute_dtype", json_string(rn_dtype_name(cd)));
    json_object_set_new(root, "pass", json_boolean(pass));
    json_object_set_new(root, "tolerance", json_string(job->op->tolerance_doc));
    for (int a = 0; a < job->op->nattrs; a++) /* effective values: eps as used, axis >= 0 */
        json_object_set_new(root, job->op->attrs[a].name,
                            job->op->attrs[a].kind == CLI_ATTR_INT
                                ? json_integer((json_int_t)job->attr_value[a])
                                : json_real(job->attr_value[a]));
    json_t *outs = json_object();
    for (int m = 0; m < job->nactual; m++) {
        const summary_t *s = &sum[m];
        const rn_array *a = &job->act[m];
        json_t *o = json_object();
        json_object_set_new(o, "file", json_string(job->act_path[m]));
        json_object_set_new(o, "count", json_integer((json_int_t)s->count));
        json_object_set_new(o, "mismatches", json_integer((json_int_t)s->mismatches));
        json_object_set_new(o, "unconstrained", json_integer((json_int_t)s->unconstrained));
        json_object_set_new(o, "max_ratio", jnum(s->max_ratio));
        json_object_set_new(o, "max_ulps", jnum(s->max_ulps));
        json_object_set_new(o, "max_ratio_index",
                            s->count ? jindex(s->max_ratio_i, a) : json_null());
        json_t *w = json_array();
        for (int j = 0; j < s->nworst; j++) {
            json_t *e = json_object();
            json_object_set_new(e, "index", jindex(s->worst[j].i, a));
            json_object_set_new(e, "got", jnum(s->worst[j].got));
            json_object_set_new(e, "want", jnum(s->worst[j].want));
            json_object_set_new(e, "err_ulps", jnum(s->worst[j].ulps));
            json_object_set_new(e, "err_bound_ratio", jnum(s->worst[j].ratio));
            json_array_append_new(w, e);
        }
        json_object_set_new(o, "worst", w);
        json_object_set_new(outs, job->op->outputs[job->act_index[m]], o);
    }
    json_object_set_new(root, "outputs", outs);
    cli_stat_json(root, job, r);
    return root;
}

/* The text report of one checked job (specs/cli.md). */
static void print_text(const cli_job *job, const cli_check_result *r)
{
    const summary_t *sum = r->sum;
    rn_dtype d = r->d, cd = r->cd;
    int pass = r->pass;
    printf("check %s: dtype %s, compute dtype %s", job->op->name, rn_dtype_name(d),
           rn_dtype_name(cd));
    for (int a = 0; a < job->op->nattrs; a++) {
        if (job->op->attrs[a].kind == CLI_ATTR_INT)
            printf(", %s %ld", job->op->attrs[a].name, (long)job->attr_value[a]);
        else
            printf(", %s %.17g", job->op->attrs[a].name, job->attr_value[a]);
    }
    printf("\n");
    printf("tolerance: %s (per-element a-priori bound, %s)\n", job->op->tolerance_doc,
           job->op->bound_src);
    for (int m = 0; m < job->nactual; m++) {
        const summary_t *s = &sum[m];
        const rn_array *a = &job->act[m];
        char ib[160];
        index_str(ib, sizeof ib, s->max_ratio_i, a);
        printf("  %-7s %s: %zu elements, %zu mismatches, max err/bound %.3g (at %s), "
               "max err %.3g ulp\n", job->op->outputs[job->act_index[m]], job->act_path[m],
               s->count, s->mismatches, s->max_ratio, s->count ? ib : "-", s->max_ulps);
        for (int j = 0; j < s->nworst; j++) {
            const worst_t *w = &s->worst[j];
            index_str(ib, sizeof ib, w->i, a);
            printf("    MISMATCH %s%s: got %.*g, want %.17g, err %.3g ulp, err/bound %.3g\n",
                   job->op->outputs[job->act_index[m]], ib, digits_of(a->dtype), w->got,
                   w->want, w->ulps, w->ratio);
        }
        if (s->unconstrained)
            printf("    %zu elements unconstrained: the analysis is void there (%s)\n",
                   s->unconstrained, job->op->void_note);
        if (s->mismatches > (size_t)s->nworst)
            printf("    ... and %zu more mismatches\n", s->mismatches - (size_t)s->nworst);
    }
    printf("%s\n", pass ? "PASS: every element within tolerance"
                        : "FAIL: some elements are outside the tolerance");
    cli_stat_print(job, r);
}

int cli_check_main(int argc, char **argv)
{
    cli_job job;
    int rc = cli_parse(&job, argc, argv, CLI_ALLOW_ACTUAL);
    if (rc < 0) {
        cli_check_help();
        return RN_EXIT_OK;
    }
    if (rc)
        return rc;
    rc = cli_load(&job);
    if (rc) {
        cli_job_free(&job);
        return rc;
    }
    rn_dtype d = job.have_dtype ? job.dtype : job.act[0].dtype;
    cli_check_result res;
    rc = cli_check_job(&job, d, &res);
    if (rc) {
        cli_job_free(&job);
        return rc;
    }
    if (job.json) {
        json_t *root = cli_check_json(&job, &res);
        size_t flags = JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(17);
        char *text = json_dumps(root, flags);
        if (text) {
            puts(text);
            free(text);
        } else {
            rc = RN_EXIT_INTERNAL;
        }
        json_decref(root);
    } else {
        print_text(&job, &res);
    }
    cli_job_free(&job);
    if (rc)
        return rc;
    return cli_check_exit(&res);
}
