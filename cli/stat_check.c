/* The statistical tier in `resnorm check` and `golden run-check`: maps an op's inputs and outputs
 * onto the tests of ref/stat_tier.c and reports them apart from the rigorous verdict.
 * Model and exit policy: specs/statistical-tier.md; interface: specs/cli.md. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "block_bound.h"
#include "bound_profile.h"
#include "cli.h"
#include "layernorm_bound.h"

const char *cli_stat_mode_name(int mode)
{
    return mode == CLI_STAT_WARN ? "warn" : mode == CLI_STAT_OFF ? "off" : "fail";
}

int cli_stat_mode_parse(const char *s, int *mode)
{
    if (!strcmp(s, "fail"))
        *mode = CLI_STAT_FAIL;
    else if (!strcmp(s, "warn"))
        *mode = CLI_STAT_WARN;
    else if (!strcmp(s, "off"))
        *mode = CLI_STAT_OFF;
    else
        return -1;
    return 0;
}

int cli_check_exit(const cli_check_result *r)
{
    if (!r->pass)
        return RN_EXIT_MISMATCH;
    if (r->stat.flag && r->stat.mode == CLI_STAT_FAIL)
        return RN_EXIT_STAT;
    return RN_EXIT_OK;
}

/* Input `name` of the job, or NULL (absent, optional and not given, or empty). */
static const double *input(const cli_job *job, const char *name)
{
    int k = cli_input_index(job->op, name);
    return k >= 0 && job->in[k].count ? job->in[k].data : NULL;
}

/* The skip ops normalize x + skip (+ bias): the tier's x is that sum, exact enough in long double
   and rounded to f64 once, and mag = |x| + |skip| + |bias| bounds its rounding, for the count
   elements of a rows x n block (bias: n values, or NULL).  0, or -1 out of memory. */
static int skip_sum(const double *x, const double *skip, const double *bias, size_t n,
                    size_t count, double **sum, double **mag)
{
    *sum = malloc((count + 1) * sizeof **sum), *mag = malloc((count + 1) * sizeof **mag);
    if (!*sum || !*mag) {
        free(*sum), free(*mag);
        *sum = *mag = NULL;
        return -1;
    }
    for (size_t i = 0; i < count; i++) {
        double bi = bias ? bias[i % n] : 0;
        (*sum)[i] = (double)((long double)x[i] + skip[i] + bi);
        (*mag)[i] = fabs(x[i]) + fabs(skip[i]) + fabs(bi);
    }
    return 0;
}

/* The tests of one given output (by the op's family and the output's name); 0 if none applies. */
static int tests_for(const cli_job *job, const st_problem *p, const char *out, const double *got,
                     const double *want, const double *want_dx, size_t count, st_test *t)
{
    const char *op = job->op->name;
    int rms = strstr(op, "rmsnorm") != NULL, ln = strstr(op, "layernorm") != NULL;
    int bwd = strstr(op, "backward") != NULL;
    if (!strcmp(op, "residual"))
        return st_elementwise(p, got, want, count, NULL, 1, t);
    if (!strcmp(op, "residual_backward"))
        return st_elementwise(p, got, want, count, NULL, 0, t);
    if (!strcmp(out, "sum")) /* row by row, as the check by blocks of rows pools it */
        return p->xmag && count == p->rows * p->n ? st_skip_sum(p, got, want, t) : 0;
    if (!bwd && !strcmp(out, "y"))
        return ln ? st_layernorm_y(p, got, want, t) : rms ? st_rmsnorm_y(p, got, want, t) : 0;
    if (!bwd && !strcmp(out, "rstd"))
        return ln ? st_layernorm_rstd(p, got, want, t) : rms ? st_rmsnorm_rstd(p, got, want, t) : 0;
    if (!bwd && !strcmp(out, "mean") && ln)
        return st_layernorm_mean(p, got, want, t);
    if (bwd && (!strcmp(out, "dx") || !strcmp(out, "dskip")))
        return ln ? st_layernorm_dx(p, got, want, t) : rms ? st_rmsnorm_dx(p, got, want, t) : 0;
    if (bwd && !strcmp(out, "dgamma"))
        return ln ? st_layernorm_dgamma(p, got, want, t) : rms ? st_rmsnorm_dgamma(p, got, want, t) : 0;
    if (bwd && !strcmp(out, "dbeta"))
        return st_colsum_dy(p, got, want, t);
    if (bwd && !strcmp(out, "dbias") && want_dx)
        return ln ? st_layernorm_dbias(p, want_dx, got, want, t)
                  : rms ? st_rmsnorm_dbias(p, want_dx, got, want, t) : 0;
    return 0;
}

/* The tier's model is the accuracy of two-pass / Welford variances: the one-pass variance that
   --profile runtimes admits has, on large-mean rows, a row-wide error of one sign by nature,
   which the tier sees.  Under that profile a flag is reported, not failed, unless --stat says
   otherwise (specs/statistical-tier.md §6). */
static int stat_mode(const cli_job *job)
{
    if (!job->stat_given && rn_bound_profile() == RN_PROFILE_RUNTIMES)
        return CLI_STAT_WARN;
    return job->stat_mode;
}

/* The constants of the job's problem as the tier sees it (x and the rows: the caller's). */
static void problem_of(const cli_job *job, const cli_check_result *r, st_problem *p)
{
    memset(p, 0, sizeof *p);
    p->rows = job->rows, p->n = job->n, p->eps = job->eps;
    p->u = rn_dtype_unit_roundoff(r->cd);
    p->eta = rn_dtype_underflow_eta(r->cd);
    int oa = cli_attr_index(job->op, "offset");
    p->offset = oa >= 0 ? (int)job->attr_value[oa] : 0;
    p->gamma = input(job, "gamma"), p->beta = input(job, "beta"), p->dy = input(job, "dy");
}

/* The output-dtype part of p for an output rounded to od. */
static void problem_output(st_problem *p, const cli_check_result *r, rn_dtype od)
{
    p->u_out = od != r->cd ? rn_dtype_unit_roundoff(od) : 0;
    p->eta_out = rn_dtype_underflow_eta(od);
}

/* The dtype output m is rounded to (set by the comparison: the coarser of --dtype and the dtype
   of that output's file). */
static rn_dtype output_dtype(const cli_job *job, const cli_check_result *r, int m)
{
    (void)job;
    return r->sum[m].out; /* the coarser of --dtype and the dtype of this output's file */
}

void cli_stat_run(const cli_job *job, const rn_array *want, cli_check_result *r)
{
    cli_stat_result *s = &r->stat;
    int mode = stat_mode(job);
    memset(s, 0, sizeof *s);
    s->mode = mode;
    if (mode == CLI_STAT_OFF)
        return;
    if (job->op->stat_bound) { /* the graph's composed statistical scales (block, sublayers) */
        cli_graph_stat(job, want, r);
        return;
    }
    st_problem p;
    problem_of(job, r, &p);
    p.x = input(job, "x");
    const double *skip = input(job, "skip"), *bias = input(job, "bias");
    double *sum = NULL, *mag = NULL;
    if (p.x && skip) { /* the skip ops normalize x + skip (+ bias) */
        if (skip_sum(p.x, skip, bias, p.n, p.rows * p.n, &sum, &mag))
            return;
        p.x = sum, p.sum_rounded = 1, p.xmag = mag;
    }
    p.cache = p.x ? st_rows_new(p.rows) : NULL; /* shared by the outputs' tests (NULL: none) */
    int want_dx = -1; /* dx's exact values, which dbias's model needs (the twin gives them all) */
    for (int k = 0; k < job->op->noutputs; k++)
        if (!strcmp(job->op->outputs[k], "dx"))
            want_dx = k;
    for (int m = 0; m < job->nactual; m++) {
        int k = job->act_index[m];
        const char *name = job->op->outputs[k];
        if (!p.x && strncmp(job->op->name, "residual", 8))
            continue;
        /* --allow ftz: elements accepted only as flushed carry the flush, not rounding noise; an
           output with any is not tested (specs/statistical-tier.md, limits) */
        if (job->allow_ftz && r->sum[m].ftz_accepted > 0)
            continue;
        problem_output(&p, r, output_dtype(job, r, m));
        s->ntests[m] = tests_for(job, &p, name, job->act[m].data, want[k].data,
                                 want_dx >= 0 ? want[want_dx].data : NULL, want[k].count,
                                 s->test[m]);
        for (int j = 0; j < s->ntests[m]; j++)
            s->flag |= s->test[m][j].flag;
    }
    st_rows_free(p.cache);
    free(sum), free(mag);
}

/* ---- the tier over blocks of rows (`check` of the norms, forward and backward, cli/check.c) ----
   The same tests as cli_stat_run, fed a block of rows at a time (ref/stat_tier.h: st_fwd for the
   per-row outputs, st_cols for the sums over rows). */
struct cli_stat_rows {
    int mode;                     /* CLI_STAT_*, as cli_stat_run resolves it */
    int active;                   /* the tier runs (mode not off) */
    st_problem p;                 /* the whole problem's constants (x, dy: per block) and the
                                     rows' cache (the problem's rows: every block's) */
    st_fwd *f[CLI_MAX_IO];        /* per actual: its per-row test, or NULL */
    st_cols *c[CLI_MAX_IO];       /* per actual: its column test (cli_stat_cols_begin), or NULL */
};

/* The st_fwd test of output `out` of a norm op, or -1. */
static int fwd_kind(const cli_job *job, const char *out)
{
    const char *op = job->op->name;
    int skip = !strncmp(op, "skip_", 5);
    if (skip && !strcmp(out, "sum"))
        return ST_SUM;
    if (skip)
        op += 5; /* the norm of the sum */
    if (!strcmp(op, "layernorm"))
        return !strcmp(out, "y") ? ST_LN_Y : !strcmp(out, "mean") ? ST_LN_MEAN
                                           : !strcmp(out, "rstd") ? ST_LN_RSTD : -1;
    if (!strcmp(op, "rmsnorm"))
        return !strcmp(out, "y") ? ST_RMS_Y : !strcmp(out, "rstd") ? ST_RMS_RSTD : -1;
    int dx = !strcmp(out, "dx") || (skip && !strcmp(out, "dskip")); /* dskip is dx */
    if (!strcmp(op, "layernorm_backward"))
        return dx ? ST_LN_DX : -1;
    if (!strcmp(op, "rmsnorm_backward"))
        return dx ? ST_RMS_DX : -1;
    return -1;
}

/* The st_cols test of output `out` of a norm's backward or a skip op's, or -1. */
static int col_kind(const cli_job *job, const char *out)
{
    const char *op = job->op->name;
    int skip = !strncmp(op, "skip_", 5);
    if (skip)
        op += 5; /* the norm's backward of the sum, and dbias */
    if (!strcmp(op, "layernorm_backward"))
        return !strcmp(out, "dgamma")           ? ST_LN_DGAMMA
               : !strcmp(out, "dbeta")          ? ST_DBETA
               : skip && !strcmp(out, "dbias") ? ST_LN_DBIAS
                                                : -1;
    if (!strcmp(op, "rmsnorm_backward"))
        return !strcmp(out, "dgamma")           ? ST_RMS_DGAMMA
               : skip && !strcmp(out, "dbias") ? ST_RMS_DBIAS
                                                : -1;
    return -1;
}

int cli_stat_rows_supported(const cli_job *job)
{
    static const char *const ops[] = {"layernorm", "rmsnorm", "skip_layernorm", "skip_rmsnorm",
                                      "layernorm_backward", "rmsnorm_backward",
                                      "skip_layernorm_backward", "skip_rmsnorm_backward"};
    for (size_t k = 0; k < sizeof ops / sizeof *ops; k++)
        if (!strcmp(job->op->name, ops[k]))
            return 1;
    return 0;
}

cli_stat_rows *cli_stat_rows_begin(const cli_job *job, const cli_check_result *r)
{
    cli_stat_rows *s = calloc(1, sizeof *s);
    if (!s)
        return NULL;
    s->mode = stat_mode(job);
    s->active = s->mode != CLI_STAT_OFF;
    problem_of(job, r, &s->p);
    s->p.rows_total = job->rows;
    if (s->active && !(s->p.cache = st_rows_new(job->rows))) {
        cli_stat_rows_free(s);
        return NULL;
    }
    for (int m = 0; s->active && m < job->nactual; m++) {
        int kind = fwd_kind(job, job->op->outputs[job->act_index[m]]);
        if (kind >= 0 && !(s->f[m] = st_fwd_new((st_fwd_kind)kind, job->rows))) {
            cli_stat_rows_free(s);
            return NULL;
        }
    }
    return s;
}

/* The problem's constants with the rows of block sub (first row r0). */
static st_problem block_problem(const cli_stat_rows *s, const cli_job *sub, size_t r0)
{
    st_problem p = s->p;
    p.rows = sub->rows, p.row0 = r0;
    p.x = input(sub, "x"), p.dy = input(sub, "dy");
    return p;
}

/* The skip ops normalize x + skip (+ bias): the block's x in p made that sum (*sum, *mag: to be
   freed), as cli_stat_run's.  0, or -1 out of memory. */
static int block_sum(const cli_stat_rows *s, const cli_job *sub, st_problem *p, double **sum,
                     double **mag)
{
    const double *skip = input(sub, "skip");
    *sum = *mag = NULL;
    if (!s->active || !p->x || !skip)
        return 0;
    if (skip_sum(p->x, skip, input(sub, "bias"), p->n, p->rows * p->n, sum, mag))
        return -1;
    p->x = *sum, p->sum_rounded = 1, p->xmag = *mag;
    return 0;
}

int cli_stat_rows_add(cli_stat_rows *s, const cli_job *sub, size_t r0,
                      const cli_check_result *r, const double *const *got,
                      const double *const *want)
{
    st_problem p = block_problem(s, sub, r0);
    double *sum, *mag;
    if (block_sum(s, sub, &p, &sum, &mag))
        return -1;
    int rc = 0;
    for (int m = 0; s->active && m < sub->nactual && !rc; m++) {
        if (!s->f[m])
            continue;
        problem_output(&p, r, output_dtype(sub, r, m));
        if (!st_fwd_rows(s->f[m], &p, r0, got[m], want[sub->act_index[m]]))
            rc = -1;
    }
    free(sum), free(mag);
    return rc;
}

int cli_stat_cols_begin(cli_stat_rows *s, const cli_job *job, const double *const *want)
{
    for (int m = 0; s->active && m < job->nactual; m++) {
        int k = job->act_index[m], kind = col_kind(job, job->op->outputs[k]);
        if (kind >= 0 && !(s->c[m] = st_cols_new((st_col_kind)kind, job->rows, job->act[m].data,
                                                 want[k], job->n)))
            return -1;
    }
    return 0;
}

int cli_stat_cols_add(cli_stat_rows *s, const cli_job *sub, size_t r0, const cli_check_result *r,
                      const double *want_dx)
{
    st_problem p = block_problem(s, sub, r0);
    double *sum, *mag;
    if (block_sum(s, sub, &p, &sum, &mag))
        return -1;
    p.want_dx = want_dx;
    int rc = 0;
    for (int m = 0; m < sub->nactual && !rc; m++) {
        if (!s->c[m])
            continue;
        problem_output(&p, r, output_dtype(sub, r, m));
        if (!st_cols_rows(s->c[m], &p, r0))
            rc = -1;
    }
    free(sum), free(mag);
    return rc;
}

/* Whether any actual has a column test (need_dx: one that needs dx's exact values, dbias's). */
static int cols_wanted(const cli_stat_rows *s, const cli_job *job, int need_dx)
{
    for (int m = 0; s->active && m < job->nactual; m++) {
        int kind = col_kind(job, job->op->outputs[job->act_index[m]]);
        if (kind >= 0 && (!need_dx || kind == ST_LN_DBIAS || kind == ST_RMS_DBIAS))
            return 1;
    }
    return 0;
}

int cli_stat_cols_wanted(const cli_stat_rows *s, const cli_job *job)
{
    return cols_wanted(s, job, 0);
}

int cli_stat_cols_need_dx(const cli_stat_rows *s, const cli_job *job)
{
    return cols_wanted(s, job, 1);
}

void cli_stat_rows_end(cli_stat_rows *s, const cli_job *job, cli_check_result *r)
{
    cli_stat_result *t = &r->stat;
    memset(t, 0, sizeof *t);
    t->mode = s->mode;
    for (int m = 0; s->active && m < job->nactual; m++) {
        st_problem p = s->p;
        problem_output(&p, r, output_dtype(job, r, m));
        if (s->f[m])
            t->ntests[m] = st_fwd_finish(s->f[m], s->p.u, t->test[m]);
        else if (s->c[m])
            t->ntests[m] = st_cols_finish(s->c[m], &p, t->test[m]);
        for (int j = 0; j < t->ntests[m]; j++)
            t->flag |= t->test[m][j].flag;
    }
}

void cli_stat_rows_free(cli_stat_rows *s)
{
    if (!s)
        return;
    for (int m = 0; m < CLI_MAX_IO; m++)
        st_fwd_free(s->f[m]), st_cols_free(s->c[m]);
    st_rows_free(s->p.cache);
    free(s);
}

/* The op's statistical bounds of every output for output dtype od, into b[] (allocated here). */
static int graph_stat_bounds(const cli_job *job, rn_dtype cd, rn_dtype od, rn_array *b)
{
    double *o[CLI_MAX_IO] = {0};
    for (int q = 0; q < job->op->noutputs; q++) {
        int nd;
        size_t sh[RN_MAX_DIMS];
        cli_output_shape(job, q, &nd, sh);
        if (nd >= 0 && rn_array_alloc(&b[q], RN_F64, nd, sh) != 0)
            return -1;
        o[q] = b[q].data;
    }
    return job->op->stat_bound(job, cd, od, o);
}

/* The ffn forward's "act" test (specs/error-analysis-ffn.md §10, ref/block_bound.c
   ffn_act_test) as a test line of direction "act"; 1 if the test ran. */
static int ffn_act_line(const cli_job *job, rn_dtype cd, rn_dtype od, const double *got,
                        const double *want, st_test *t)
{
    ffn_act_result a;
    if (cli_ffn_act_test(job, cd, od, got, want, &a) != 0)
        return 0;
    memset(t, 0, sizeof *t);
    t->direction = "act";
    t->groups = a.used;
    t->slope = a.slope, t->floor = a.floor;
    t->z_pooled = a.z;
    t->lambda_pooled = BLOCK_STAT_LAMBDA;
    t->flag = a.used > 0 && !(a.z <= BLOCK_STAT_LAMBDA);
    return 1;
}

/* The tier over every actual: one evaluation of the graph per distinct output dtype.  Direction
   "graph": z_row = max |err| / bound over the output's finite elements; flag if it exceeds 1. */
void cli_graph_stat(const cli_job *job, const rn_array *want, cli_check_result *r)
{
    cli_stat_result *s = &r->stat;
    rn_array(*b)[CLI_MAX_IO] = calloc(RN_NDTYPES, sizeof *b);
    int have[RN_NDTYPES] = {0}, rc[RN_NDTYPES] = {0};
    if (!b)
        return; /* out of memory: the tier reports nothing tested */
    for (int m = 0; m < job->nactual; m++) {
        int k = job->act_index[m];
        rn_dtype od = r->sum[m].out;
        if (!have[od])
            rc[od] = graph_stat_bounds(job, r->cd, od, b[od]), have[od] = 1;
        st_test *t = &s->test[m][0];
        memset(t, 0, sizeof *t);
        t->direction = "graph";
        if (rc[od])
            continue;
        const double *got = job->act[m].data, *w = want[k].data, *bd = b[od][k].data;
        for (size_t i = 0; i < want[k].count; i++) {
            if (!isfinite(w[i]) || !isfinite(bd[i]))
                continue;
            double e = fabs(got[i] - w[i]), q = bd[i] > 0 ? e / bd[i] : (e > 0 ? INFINITY : 0);
            if (!(q <= t->z_row))
                t->z_row = q, t->worst_group = i;
        }
        t->groups = want[k].count;
        t->lambda_row = 1.0;
        t->flag = !(t->z_row <= 1.0);
        s->ntests[m] = 1;
        if (!strcmp(job->op->name, "ffn") && ffn_act_line(job, r->cd, od, job->act[m].data, w, &t[1]))
            s->ntests[m] = 2;
        for (int j = 0; j < s->ntests[m]; j++)
            s->flag |= t[j].flag;
    }
    for (int d = 0; d < RN_NDTYPES; d++)
        for (int q = 0; q < CLI_MAX_IO; q++)
            rn_array_free(&b[d][q]);
    free(b);
}

static json_t *jnum(double v)
{
    if (isnan(v))
        return json_string("NaN");
    if (isinf(v))
        return json_string(v > 0 ? "Infinity" : "-Infinity");
    return json_real(v);
}

/* "statistical": {mode, alpha, flag, model, outputs: {NAME: [test, ...]}} */
void cli_stat_json(json_t *root, const cli_job *job, const cli_check_result *r)
{
    const cli_stat_result *s = &r->stat;
    json_t *o = json_object();
    json_object_set_new(o, "mode", json_string(cli_stat_mode_name(s->mode)));
    json_object_set_new(o, "model", json_string("specs/statistical-tier.md"));
    json_object_set_new(o, "alpha", json_real(ST_ALPHA));
    json_object_set_new(o, "flag", json_boolean(s->flag));
    json_t *outs = json_object();
    for (int m = 0; m < job->nactual && s->mode != CLI_STAT_OFF; m++) {
        json_t *arr = json_array();
        for (int j = 0; j < s->ntests[m]; j++) {
            const st_test *t = &s->test[m][j];
            json_t *e = json_object();
            json_object_set_new(e, "direction", json_string(t->direction));
            json_object_set_new(e, "groups", json_integer((json_int_t)t->groups));
            json_object_set_new(e, "flag", json_boolean(t->flag));
            json_object_set_new(e, "slope", jnum(t->slope));
            json_object_set_new(e, "slope_u", jnum(t->slope_u));
            json_object_set_new(e, "floor", jnum(t->floor));
            json_object_set_new(e, "floor_u", jnum(t->floor_u));
            json_object_set_new(e, "z_pooled", jnum(t->z_pooled));
            json_object_set_new(e, "lambda_pooled", jnum(t->lambda_pooled));
            json_object_set_new(e, "z_row", jnum(t->z_row));
            json_object_set_new(e, "lambda_row", jnum(t->lambda_row));
            json_object_set_new(e, "worst_group", json_integer((json_int_t)t->worst_group));
            json_object_set_new(e, "energy", jnum(t->energy));
            json_object_set_new(e, "energy_limit", jnum(t->energy_limit));
            json_array_append_new(arr, e);
        }
        json_object_set_new(outs, job->op->outputs[job->act_index[m]], arr);
    }
    json_object_set_new(o, "outputs", outs);
    json_object_set_new(root, "statistical", o);
}

void cli_stat_print(const cli_job *job, const cli_check_result *r)
{
    const cli_stat_result *s = &r->stat;
    if (s->mode == CLI_STAT_OFF) {
        printf("statistical tier: off\n");
        return;
    }
    printf("statistical tier (specs/statistical-tier.md; each statistic at false-alarm "
           "probability %.0e, mode %s):\n", ST_ALPHA, cli_stat_mode_name(s->mode));
    for (int m = 0; m < job->nactual; m++) {
        const char *name = job->op->outputs[job->act_index[m]];
        if (!s->ntests[m])
            printf("  %-7s not tested (no model for this output)\n", name);
        for (int j = 0; j < s->ntests[m]; j++) {
            const st_test *t = &s->test[m][j];
            if (!strcmp(t->direction, "act")) {
                printf("  %-7s act   %s: errors along the other GELU's direction: slope %+.3g "
                       "(1 = the other GELU; floor %.3g), z %.3g/%.3g over %zu rows\n", name,
                       t->flag ? "FLAG" : "ok", t->slope, t->floor, t->z_pooled, t->lambda_pooled,
                       t->groups);
                continue;
            }
            if (!strcmp(t->direction, "graph")) {
                printf("  %-7s graph %s: max |err| / statistical bound %.3g (element %zu of %zu)\n",
                       name, t->flag ? "FLAG" : "ok", t->z_row, t->worst_group, t->groups);
                continue;
            }
            if (!t->groups) {
                printf("  %-7s %-5s no testable group (non-finite, out of range or constant)\n",
                       name, t->direction);
                continue;
            }
            printf("  %-7s %-5s %s: %zu groups, systematic %+.3g u (floor %.3g), pooled z %.3g/%.3g, "
                   "row z %.3g/%.3g (group %zu), energy %.4g/%.4g\n", name, t->direction,
                   t->flag ? "FLAG" : "ok", t->groups, t->slope_u, t->floor_u,
                   t->z_pooled, t->lambda_pooled, t->z_row, t->lambda_row, t->worst_group,
                   t->energy, t->energy_limit);
        }
    }
    printf("%s\n", s->flag ? "STATISTICAL FLAG: the errors are systematic, not rounding noise"
                           : "statistical: no systematic error detected");
}
