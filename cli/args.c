/* The `resnorm` command line: the op table, option parsing, loading and validating inputs, running
 * the twin and the bound on them, and publishing outputs all-or-nothing.  specs/cli.md is the
 * user-facing reference of everything here. */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bound_profile.h"
#include "cli.h"
#include "norm_fast.h"
#include "layernorm_mpfr.h" /* RN_TWIN_* */

/* The registry: one entry per op, in the order help texts list them. */
const cli_op *const cli_ops[] = {
    &cli_op_layernorm,
    &cli_op_layernorm_backward,
    &cli_op_residual,
    &cli_op_residual_backward,
    &cli_op_skip_layernorm,
    &cli_op_skip_layernorm_backward,
    &cli_op_rmsnorm,
    &cli_op_rmsnorm_backward,
    &cli_op_skip_rmsnorm,
    &cli_op_skip_rmsnorm_backward,
    &cli_op_linear,
    &cli_op_linear_backward,
    &cli_op_dropout,
    &cli_op_dropout_backward,
    &cli_op_softmax,
    &cli_op_softmax_backward,
    &cli_op_attention,
    &cli_op_attention_backward,
    &cli_op_ffn,
    &cli_op_ffn_backward,
    &cli_op_block,
    &cli_op_block_backward,
    &cli_op_stack,
    &cli_op_stack_backward,
};
const int cli_nops = (int)(sizeof cli_ops / sizeof cli_ops[0]);

/* The families, in the order their golden cases appear in the manifest. */
const cli_family *const cli_families[] = {
    &cli_family_layernorm,
    &cli_family_residual,
    &cli_family_skip_layernorm,
    &cli_family_rmsnorm,
    &cli_family_skip_rmsnorm,
    &cli_family_linear,
    &cli_family_dropout,
    &cli_family_softmax,
    &cli_family_attention,
    &cli_family_ffn,
    &cli_family_block,
};
const int cli_nfamilies = (int)(sizeof cli_families / sizeof cli_families[0]);

const cli_op *cli_find_op(const char *name)
{
    for (int i = 0; i < cli_nops; i++)
        if (!strcmp(cli_ops[i]->name, name))
            return cli_ops[i];
    return NULL;
}

int cli_attr_index(const cli_op *op, const char *name)
{
    for (int a = 0; a < op->nattrs; a++)
        if (!strcmp(op->attrs[a].name, name))
            return a;
    return -1;
}

int cli_input_index(const cli_op *op, const char *name)
{
    for (int k = 0; k < op->ninputs; k++)
        if (!strcmp(op->inputs[k], name))
            return k;
    return -1;
}

const char *cli_attr_text(const cli_job *job, int a)
{
    return job->attr_text[a] ? job->attr_text[a] : job->op->attrs[a].def;
}

rn_dtype cli_default_eps_dtype(rn_dtype x) { return x == RN_F64 ? RN_F64 : RN_F32; }

int cli_eps_dtype_from_name(const char *s, rn_dtype x, rn_dtype *d)
{
    if (!strcmp(s, "input")) {
        *d = x;
        return 0;
    }
    if (!strcmp(s, "f32") || !strcmp(s, "f64"))
        return rn_dtype_from_name(s, d);
    return -1;
}

int cli_resolve_eps(cli_job *job, int a_eps, int a_epsdt)
{
    rn_dtype xd = job->in[0].dtype, ed = cli_default_eps_dtype(xd);
    const char *dt_text = cli_attr_text(job, a_epsdt);
    if (dt_text && cli_eps_dtype_from_name(dt_text, xd, &ed) != 0) {
        cli_error(job->verb, "attribute eps_dtype: '%s' is not f32, f64 or input", dt_text);
        return RN_EXIT_USAGE;
    }
    const char *eps_text = cli_attr_text(job, a_eps);
    if (rn_parse_eps(eps_text, ed, &job->eps) != 0 || !(job->eps >= 0) || !isfinite(job->eps)) {
        cli_error(job->verb, "attribute eps: '%s' is not a finite, non-negative decimal number",
                  eps_text);
        return RN_EXIT_USAGE;
    }
    job->attr_value[a_eps] = job->eps;
    job->attr_str[a_epsdt] = rn_dtype_name(ed);
    return 0;
}

void cli_error(const char *verb, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "resnorm%s%s: error: ", verb ? " " : "", verb ? verb : "");
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

void cli_shape_str(char *buf, size_t cap, int ndim, const size_t *shape)
{
    size_t k = (size_t)snprintf(buf, cap, "(");
    for (int i = 0; i < ndim && k < cap; i++)
        k += (size_t)snprintf(buf + k, cap - k, "%s%zu", i ? ", " : "", shape[i]);
    if (k < cap)
        snprintf(buf + k, cap - k, "%s)", ndim == 1 ? "," : "");
}

static int index_of(const char *const *names, int n, const char *s, size_t len)
{
    for (int i = 0; i < n; i++)
        if (strlen(names[i]) == len && !strncmp(names[i], s, len))
            return i;
    return -1;
}

static void list_names(char *buf, size_t cap, const char *const *names, int n)
{
    size_t k = 0;
    buf[0] = '\0';
    for (int i = 0; i < n && k < cap; i++)
        k += (size_t)snprintf(buf + k, cap - k, "%s%s", i ? ", " : "", names[i]);
}

/* "--opt value" or "--opt=value": returns the value, advancing *i, or NULL (message printed). */
static const char *opt_value(const char *verb, int argc, char **argv, int *i, const char *opt)
{
    const char *a = argv[*i];
    size_t ol = strlen(opt);
    if (a[ol] == '=')
        return a + ol + 1;
    if (*i + 1 >= argc) {
        cli_error(verb, "option %s needs a value", opt);
        return NULL;
    }
    return argv[++*i];
}

static int is_opt(const char *a, const char *opt)
{
    size_t ol = strlen(opt);
    return !strncmp(a, opt, ol) && (a[ol] == '\0' || a[ol] == '=');
}

/* The op named on the command line, found before the options are interpreted (attributes are
   the op's): the first argument that is neither an option nor an option's value.  NULL if there is
   none or it names no op (the main loop then reports it). */
/* --profile NAME: the implementation profile of the LayerNorm-family bounds (ref/bound_profile.h),
   process-wide.  0, or -1 after a message. */
int cli_set_profile(const char *verb, const char *name)
{
    rn_profile p;
    if (rn_profile_from_name(name, &p) != 0) {
        cli_error(verb, "unknown profile '%s' (known: runtimes, moments, two-pass)", name);
        return -1;
    }
    rn_bound_set_profile(p);
    return 0;
}

static const cli_op *prescan_op(int argc, char **argv, int allow)
{
    static const struct {
        const char *opt;
        int need;
    } valued[] = {{"--in", 0}, {"--attr", 0}, {"--dtype", 0}, {"--actual", CLI_ALLOW_ACTUAL},
                  {"--profile", CLI_ALLOW_ACTUAL}, {"--stat", CLI_ALLOW_ACTUAL},
                  {"--out", CLI_ALLOW_OUT}, {"--allow", CLI_ALLOW_ACTUAL}, {"--threads", 0}};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        int takes = 0;
        for (size_t k = 0; k < sizeof valued / sizeof valued[0]; k++)
            if (is_opt(a, valued[k].opt) && (!valued[k].need || (allow & valued[k].need))) {
                takes = a[strlen(valued[k].opt)] != '=';
                break;
            }
        if (takes) {
            i++;
            continue;
        }
        if (a[0] == '-' && a[1] != '\0')
            continue;
        return cli_find_op(a);
    }
    return NULL;
}

/* --attr NAME=VALUE for op (known): record it; 0 or an exit code after a message. */
static int parse_attr(cli_job *job, const cli_op *op, const char *v)
{
    const char *verb = job->verb;
    const char *eq = strchr(v, '=');
    if (!eq || eq == v) {
        cli_error(verb, "--attr '%s': expected NAME=VALUE", v);
        return RN_EXIT_USAGE;
    }
    size_t nl = (size_t)(eq - v);
    const char *val = eq + 1;
    int a = -1;
    for (int k = 0; k < op->nattrs; k++)
        if (strlen(op->attrs[k].name) == nl && !strncmp(v, op->attrs[k].name, nl))
            a = k;
    if (a < 0) {
        char known[256];
        const char *names[CLI_MAX_ATTRS];
        for (int k = 0; k < op->nattrs; k++)
            names[k] = op->attrs[k].name;
        list_names(known, sizeof known, names, op->nattrs);
        if (op->nattrs)
            cli_error(verb, "unknown attribute '%.*s' (known: %s)", (int)nl, v, known);
        else
            cli_error(verb, "unknown attribute '%.*s' (%s has no attributes)", (int)nl, v,
                      op->name);
        return RN_EXIT_USAGE;
    }
    const cli_attr *at = &op->attrs[a];
    if (job->attr_text[a]) {
        cli_error(verb, "attribute %s given twice", at->name);
        return RN_EXIT_USAGE;
    }
    if (at->kind == CLI_ATTR_ENUM) {
        size_t vl = strlen(val);
        const char *p = at->choices;
        int found = 0;
        while (p && *p && !found) {
            size_t wl = strcspn(p, " ");
            found = wl == vl && !strncmp(p, val, vl);
            p += wl + (p[wl] == ' ');
        }
        if (!found) {
            cli_error(verb, "attribute %s: '%s' is not one of: %s", at->name, val, at->choices);
            return RN_EXIT_USAGE;
        }
    }
    if (at->kind == CLI_ATTR_INT) {
        char *end;
        errno = 0;
        long iv = strtol(val, &end, 10);
        int start_ok = isdigit((unsigned char)*val) || *val == '-' || *val == '+';
        if (!start_ok || *end != '\0' || errno || iv < at->min || iv > at->max) {
            cli_error(verb, "attribute %s: '%s' is not a valid integer %s", at->name, val,
                      at->name);
            return RN_EXIT_USAGE;
        }
        job->attr_int[a] = iv;
    }
    job->attr_text[a] = val;
    return 0;
}

int cli_parse(cli_job *job, int argc, char **argv, int allow)
{
    const char *verb = argv[0];
    memset(job, 0, sizeof *job);
    job->verb = verb;
    for (int k = 0; k < CLI_MAX_IO; k++)
        job->act_index[k] = -1;
    /* The op first (it names the valid inputs, attributes and outputs); help wins anywhere. */
    const char *opname = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h"))
            return -1;
    }
    const cli_op *pre = prescan_op(argc, argv, allow);
    if (pre)
        for (int a = 0; a < pre->nattrs; a++)
            if (pre->attrs[a].kind == CLI_ATTR_INT)
                job->attr_int[a] = strtol(pre->attrs[a].def, NULL, 10);
    /* Collect --in / --actual pairs to resolve after the op is known. */
    const char *ins[CLI_MAX_IO], *acts[CLI_MAX_IO];
    int nins = 0, nacts = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v;
        if (is_opt(a, "--in")) {
            if (!(v = opt_value(verb, argc, argv, &i, "--in")))
                return RN_EXIT_USAGE;
            if (nins == CLI_MAX_IO) {
                cli_error(verb, "too many --in options");
                return RN_EXIT_USAGE;
            }
            ins[nins++] = v;
        } else if (is_opt(a, "--actual") && (allow & CLI_ALLOW_ACTUAL)) {
            if (!(v = opt_value(verb, argc, argv, &i, "--actual")))
                return RN_EXIT_USAGE;
            if (nacts == CLI_MAX_IO) {
                cli_error(verb, "too many --actual options");
                return RN_EXIT_USAGE;
            }
            acts[nacts++] = v;
        } else if (is_opt(a, "--attr")) {
            if (!(v = opt_value(verb, argc, argv, &i, "--attr")))
                return RN_EXIT_USAGE;
            /* Without a known op the op is reported below; the attribute cannot be judged. */
            int rc = pre ? parse_attr(job, pre, v) : 0;
            if (rc)
                return rc;
        } else if (is_opt(a, "--dtype")) {
            if (!(v = opt_value(verb, argc, argv, &i, "--dtype")))
                return RN_EXIT_USAGE;
            if (job->have_dtype) {
                cli_error(verb, "--dtype given twice");
                return RN_EXIT_USAGE;
            }
            if (rn_dtype_from_name(v, &job->dtype) != 0) {
                cli_error(verb, "unknown dtype '%s' (known: f64, f32, f16, bf16)", v);
                return RN_EXIT_USAGE;
            }
            job->have_dtype = 1;
        } else if (is_opt(a, "--out") && (allow & CLI_ALLOW_OUT)) {
            if (!(v = opt_value(verb, argc, argv, &i, "--out")))
                return RN_EXIT_USAGE;
            if (job->out_dir) {
                cli_error(verb, "--out given twice");
                return RN_EXIT_USAGE;
            }
            if (!*v) {
                cli_error(verb, "--out: empty directory name");
                return RN_EXIT_USAGE;
            }
            job->out_dir = v;
        } else if (is_opt(a, "--profile") && (allow & CLI_ALLOW_ACTUAL)) {
            if (!(v = opt_value(verb, argc, argv, &i, "--profile")))
                return RN_EXIT_USAGE;
            if (cli_set_profile(verb, v) != 0)
                return RN_EXIT_USAGE;
        } else if (is_opt(a, "--threads")) {
            /* the fast paths' threads (ref/norm_fast.h); the output does not depend on it */
            if (!(v = opt_value(verb, argc, argv, &i, "--threads")))
                return RN_EXIT_USAGE;
            char *end;
            long t = strtol(v, &end, 10);
            if (!*v || *end || t < 1 || t > 1024) {
                cli_error(verb, "--threads: '%s' is not a thread count (1..1024)", v);
                return RN_EXIT_USAGE;
            }
            rn_set_threads((int)t);
        } else if (!strcmp(a, "--json") && (allow & CLI_ALLOW_ACTUAL)) {
            job->json = 1;
        } else if (is_opt(a, "--allow") && (allow & CLI_ALLOW_ACTUAL)) {
            if (!(v = opt_value(verb, argc, argv, &i, "--allow")))
                return RN_EXIT_USAGE;
            if (strcmp(v, "ftz") != 0) {
                cli_error(verb, "--allow '%s': the only choice is 'ftz' (flush-to-zero / "
                          "denormals-are-zero)", v);
                return RN_EXIT_USAGE;
            }
            job->allow_ftz = 1;
        } else if (is_opt(a, "--stat") && (allow & CLI_ALLOW_ACTUAL)) {
            /* the statistical tier's exit policy (specs/statistical-tier.md §6) */
            if (!(v = opt_value(verb, argc, argv, &i, "--stat")))
                return RN_EXIT_USAGE;
            job->stat_given = 1;
            if (cli_stat_mode_parse(v, &job->stat_mode) != 0) {
                cli_error(verb, "--stat: unknown mode '%s' (known: fail, warn, off)", v);
                return RN_EXIT_USAGE;
            }
        } else if (a[0] == '-' && a[1] != '\0') {
            cli_error(verb, "unknown option '%s' (see 'resnorm %s --help')", a, verb);
            return RN_EXIT_USAGE;
        } else if (!opname) {
            opname = a;
        } else {
            cli_error(verb, "unexpected argument '%s' (the op is already '%s')", a, opname);
            return RN_EXIT_USAGE;
        }
    }
    if (!opname) {
        cli_error(verb, "missing OP (see 'resnorm %s --help')", verb);
        return RN_EXIT_USAGE;
    }
    const cli_op *op = cli_find_op(opname);
    if (!op) {
        char known[512] = "";
        size_t k = 0;
        for (int i = 0; i < cli_nops && k < sizeof known; i++)
            k += (size_t)snprintf(known + k, sizeof known - k, "%s%s", i ? ", " : "",
                                  cli_ops[i]->name);
        cli_error(verb, "unknown op '%s' (known: %s)", opname, known);
        return RN_EXIT_USAGE;
    }
    job->op = op;
    char names[256];
    for (int j = 0; j < nins; j++) {
        const char *eq = strchr(ins[j], '=');
        if (!eq || eq == ins[j] || !eq[1]) {
            cli_error(verb, "--in '%s': expected NAME=FILE.npy", ins[j]);
            return RN_EXIT_USAGE;
        }
        int k = index_of(op->inputs, op->ninputs, ins[j], (size_t)(eq - ins[j]));
        if (k < 0) {
            list_names(names, sizeof names, op->inputs, op->ninputs);
            cli_error(verb, "unknown input '%.*s' for %s (inputs: %s)", (int)(eq - ins[j]),
                      ins[j], op->name, names);
            return RN_EXIT_USAGE;
        }
        if (job->in_path[k]) {
            cli_error(verb, "input '%s' given twice", op->inputs[k]);
            return RN_EXIT_USAGE;
        }
        job->in_path[k] = eq + 1;
    }
    for (int k = 0; k < op->ninputs; k++)
        if (!job->in_path[k] && !op->optional[k]) {
            cli_error(verb, "missing required input '%s' (--in %s=FILE.npy)", op->inputs[k],
                      op->inputs[k]);
            return RN_EXIT_USAGE;
        }
    for (int j = 0; j < nacts; j++) {
        const char *eq = strchr(acts[j], '=');
        if (!eq || eq == acts[j] || !eq[1]) {
            cli_error(verb, "--actual '%s': expected NAME=FILE.npy", acts[j]);
            return RN_EXIT_USAGE;
        }
        int k = index_of(op->outputs, op->noutputs, acts[j], (size_t)(eq - acts[j]));
        if (k < 0) {
            list_names(names, sizeof names, op->outputs, op->noutputs);
            cli_error(verb, "unknown output '%.*s' for %s (outputs: %s)", (int)(eq - acts[j]),
                      acts[j], op->name, names);
            return RN_EXIT_USAGE;
        }
        for (int m = 0; m < job->nactual; m++)
            if (job->act_index[m] == k) {
                cli_error(verb, "actual output '%s' given twice", op->outputs[k]);
                return RN_EXIT_USAGE;
            }
        job->act_index[job->nactual] = k;
        job->act_path[job->nactual] = eq + 1;
        job->nactual++;
    }
    if ((allow & CLI_ALLOW_ACTUAL) && job->nactual == 0) {
        cli_error(verb, "nothing to check: give at least one --actual NAME=FILE.npy");
        return RN_EXIT_USAGE;
    }
    if ((allow & CLI_ALLOW_OUT) && !job->out_dir) {
        cli_error(verb, "missing --out DIR");
        return RN_EXIT_USAGE;
    }
    return 0;
}

void cli_job_free(cli_job *job)
{
    for (int k = 0; k < CLI_MAX_IO; k++) {
        rn_array_free(&job->in[k]);
        rn_array_free(&job->act[k]);
        if (job->lazy) {
            npy_close(&job->in_rd[k]);
            npy_close(&job->act_rd[k]);
        }
    }
}

int cli_same_shape(int na, const size_t *a, int nb, const size_t *b)
{
    if (na != nb)
        return 0;
    for (int i = 0; i < na; i++)
        if (a[i] != b[i])
            return 0;
    return 1;
}

/* Equal after dropping every size-1 dimension (which never changes the row-major order). */
static int same_squeezed(int na, const size_t *a, int nb, const size_t *b)
{
    size_t sa[RN_MAX_DIMS], sb[RN_MAX_DIMS];
    int ka = 0, kb = 0;
    for (int i = 0; i < na; i++)
        if (a[i] != 1)
            sa[ka++] = a[i];
    for (int i = 0; i < nb; i++)
        if (b[i] != 1)
            sb[kb++] = b[i];
    return cli_same_shape(ka, sa, kb, sb);
}

void cli_output_shape(const cli_job *job, int k, int *ndim, size_t *shape)
{
    if (job->skip[k]) {
        *ndim = -1;
        return;
    }
    job->op->output_shape(job, k, ndim, shape);
}

/* check: the outputs no --actual compares and the op can leave out are not computed. */
static void mark_unchecked(cli_job *job)
{
    if (!job->nactual || !job->op->skippable)
        return;
    for (int k = 0; k < job->op->noutputs; k++) {
        int compared = 0;
        for (int m = 0; m < job->nactual; m++)
            compared |= job->act_index[m] == k;
        job->skip[k] = !compared && job->op->skippable(job, k);
    }
}

/* An eps whose text is positive but rounds to 0 in the dtype it is used in (below half the smallest
   subnormal) silently becomes eps = 0: say so. */
static void warn_tiny_eps(const cli_job *job)
{
    int a = cli_attr_index(job->op, "eps");
    if (a < 0)
        return;
    const char *text = cli_attr_text(job, a);
    double v = strtod(text, NULL);
    int d = cli_attr_index(job->op, "eps_dtype");
    const char *dt = d >= 0 && job->attr_str[d] ? job->attr_str[d] : rn_dtype_name(job->in[0].dtype);
    if (!strcmp(dt, "input"))
        dt = rn_dtype_name(job->in[0].dtype);
    if (v > 0 && job->eps == 0)
        fprintf(stderr, "resnorm %s: warning: eps=%s is below the smallest subnormal of %s and "
                "rounds to 0: the op runs with eps = 0\n", job->verb, text, dt);
}

/* The inputs, read whole (rd NULL: cli_load) or as their headers with each file left open in rd[k]
   (cli_load_headers, for the streaming eval), then the op's prepare on the shapes and attributes
   and the tiny-eps warning: one sequence of checks and messages for both. */
static int load_inputs(cli_job *job, npy_reader *rd)
{
    const cli_op *op = job->op;
    char err[512];
    for (int k = 0; rd && k < op->ninputs; k++)
        rd[k].fd = -1;
    for (int k = 0; k < op->ninputs; k++) {
        if (!job->in_path[k])
            continue;
        int r = rd ? npy_open(job->in_path[k], &rd[k], &job->in[k], err, sizeof err)
                   : npy_read(job->in_path[k], &job->in[k], err, sizeof err);
        if (r != 0) {
            cli_error(job->verb, "input %s: %s", op->inputs[k], err);
            return RN_EXIT_USAGE;
        }
    }
    int rc = op->prepare(job);
    if (rc)
        return rc;
    warn_tiny_eps(job);
    return 0;
}

int cli_load_headers(cli_job *job, npy_reader *rd)
{
    return load_inputs(job, rd);
}

/* An array's data (a holds its header), read whole from its open file rd (then closed); what,
   name, path: for messages ("input x: FILE: ...", "actual dx: ..."). */
static int read_whole(const cli_job *job, rn_array *a, npy_reader *rd, const char *what,
                      const char *name, const char *path)
{
    char err[512];
    rn_array h = *a; /* the header (rn_array_alloc clears *a first) */
    int rc = 0;
    if (rn_array_alloc(a, h.dtype, h.ndim, h.shape) != 0) {
        cli_error(job->verb, "%s %s: %s: out of memory for %zu elements", what, name, path,
                  h.count);
        rc = RN_EXIT_USAGE;
    } else if (npy_read_range(rd, 0, a->count, a->data, err, sizeof err) != 0) {
        cli_error(job->verb, "%s %s: %s", what, name, err);
        rc = RN_EXIT_USAGE;
    }
    npy_close(rd);
    return rc;
}

/* Input k's data, read whole from its open file rd (then closed). */
static int read_input_whole(cli_job *job, int k, npy_reader *rd)
{
    return read_whole(job, &job->in[k], rd, "input", job->op->inputs[k], job->in_path[k]);
}

/* Actual m: its header against the expected shape (a wrong or huge file is refused before its
   data is read), then its data whole, or (lazy) its file left open in job->act_rd[m]. */
static int load_actual(cli_job *job, int m, int lazy)
{
    const char *verb = job->verb;
    const cli_op *op = job->op;
    char err[512], s1[160], s2[160];
    int k = job->act_index[m];
    rn_array h;
    if (npy_read_header(job->act_path[m], &h, err, sizeof err) != 0) {
        cli_error(verb, "actual %s: %s", op->outputs[k], err);
        return RN_EXIT_USAGE;
    }
    int nd;
    size_t sh[RN_MAX_DIMS];
    cli_output_shape(job, k, &nd, sh);
    if (nd < 0) {
        cli_error(verb, "actual %s (%s): %s has no output %s for these inputs", op->outputs[k],
                  job->act_path[m], op->name, op->outputs[k]);
        return RN_EXIT_USAGE;
    }
    job->exp_ndim[m] = nd;
    memcpy(job->exp_shape[m], sh, sizeof sh);
    size_t hcount = 1, count = 1;
    for (int i = 0; i < h.ndim; i++)
        hcount *= h.shape[i];
    for (int i = 0; i < nd; i++)
        count *= sh[i];
    if (!same_squeezed(h.ndim, h.shape, nd, sh)) {
        cli_shape_str(s1, sizeof s1, h.ndim, h.shape);
        cli_shape_str(s2, sizeof s2, nd, sh);
        if (hcount != count) {
            cli_error(verb, "actual %s (%s): shape %s does not match the expected %s: %zu "
                      "elements, expected %zu", op->outputs[k], job->act_path[m], s1, s2,
                      hcount, count);
            return RN_EXIT_USAGE;
        }
        /* same elements in C order under another shape (e.g. (rows, n) for an axis case):
           compared element by element, and the report notes it */
        job->act_reshaped[m] = 1;
    }
    const rn_array *a = &job->act[m];
    int r = lazy ? npy_open(job->act_path[m], &job->act_rd[m], &job->act[m], err, sizeof err)
                 : npy_read(job->act_path[m], &job->act[m], err, sizeof err);
    if (r != 0) {
        cli_error(verb, "actual %s: %s", op->outputs[k], err);
        return RN_EXIT_USAGE;
    }
    if (!same_squeezed(a->ndim, a->shape, h.ndim, h.shape)) { /* the file changed in between */
        cli_error(verb, "actual %s (%s): the file changed while it was read", op->outputs[k],
                  job->act_path[m]);
        return RN_EXIT_USAGE;
    }
    return 0;
}

/* cli_load, and (lazy_ok) its variant for `check` by blocks of rows: where cli_check_by_rows
   applies to the job, the per-row inputs (x: rows x n values) and the actuals stay open files
   (job->in_rd, job->act_rd; data NULL) that the check reads a block at a time; everything else
   is read whole.  The same checks and messages either way. */
static int load(cli_job *job, int lazy_ok)
{
    npy_reader rd[CLI_MAX_IO];
    /* Only the ops a check by rows can take are read header first: their prepare looks at shapes
       and attributes alone (dropout's, and the masks of attention, ffn, the block, read values). */
    if (!lazy_ok || !cli_check_by_rows_op(job)) {
        int rc = load_inputs(job, NULL);
        for (int m = 0; m < job->nactual && !rc; m++)
            rc = load_actual(job, m, 0);
        if (!rc)
            mark_unchecked(job);
        return rc;
    }
    int rc = load_inputs(job, rd);
    if (!rc) {
        job->lazy = cli_check_by_rows(job) > 0;
        for (int m = 0; m < CLI_MAX_IO; m++)
            job->in_rd[m].fd = job->act_rd[m].fd = -1;
    }
    for (int k = 0; k < job->op->ninputs; k++) {
        if (!job->in_path[k] || rd[k].fd < 0)
            continue;
        if (!rc && job->lazy && job->in[k].count == job->rows * job->n)
            job->in_rd[k] = rd[k]; /* kept open for the blocks */
        else if (!rc)
            rc = read_input_whole(job, k, &rd[k]);
        else
            npy_close(&rd[k]);
    }
    for (int m = 0; m < job->nactual && !rc; m++) /* a sum over rows (dgamma): read whole */
        rc = load_actual(job, m, job->lazy && !cli_column_output(job, job->act_index[m]));
    if (!rc)
        mark_unchecked(job);
    return rc;
}

int cli_load(cli_job *job) { return load(job, 0); }

int cli_load_rest(cli_job *job)
{
    int rc = 0;
    for (int k = 0; k < job->op->ninputs; k++)
        if (job->lazy && job->in_rd[k].fd >= 0 && !rc)
            rc = read_input_whole(job, k, &job->in_rd[k]);
    for (int m = 0; m < job->nactual && !rc; m++)
        if (job->lazy && job->act_rd[m].fd >= 0)
            rc = read_whole(job, &job->act[m], &job->act_rd[m], "actual",
                            job->op->outputs[job->act_index[m]], job->act_path[m]);
    return rc;
}

int cli_load_check(cli_job *job) { return load(job, 1); }

static int alloc_outputs(const cli_job *job, rn_dtype d, rn_array *outs)
{
    for (int k = 0; k < job->op->noutputs; k++) {
        int nd;
        size_t sh[RN_MAX_DIMS];
        cli_output_shape(job, k, &nd, sh);
        if (nd < 0) { /* absent for these inputs: left empty */
            memset(&outs[k], 0, sizeof outs[k]);
            continue;
        }
        if (rn_array_alloc(&outs[k], d, nd, sh) != 0) {
            for (int j = 0; j < k; j++)
                rn_array_free(&outs[j]);
            cli_error(job->verb, "out of memory");
            return RN_EXIT_INTERNAL;
        }
    }
    return 0;
}

int cli_twin_status(const cli_job *job, int r, const char *what)
{
    if (r == RN_TWIN_OK)
        return 0;
    if (r == RN_TWIN_UNCERTIFIED)
        cli_error(job->verb, "internal: the %s could not certify %s at its maximum precision; "
                  "no output written", what, job->op->name);
    else if (r == RN_TWIN_NOMEM)
        cli_error(job->verb, "internal: the %s ran out of memory", what);
    else
        cli_error(job->verb, "internal: the %s failed (code %d)", what, r);
    return RN_EXIT_INTERNAL;
}

static int twin_status(const cli_job *job, int r, const char *what, rn_array *outs)
{
    if (r != RN_TWIN_OK)
        for (int k = 0; k < job->op->noutputs; k++)
            rn_array_free(&outs[k]);
    return cli_twin_status(job, r, what);
}

int cli_run_twin(const cli_job *job, rn_dtype out, rn_array *outs)
{
    int r = alloc_outputs(job, out, outs);
    if (r)
        return r;
    double *p[CLI_MAX_IO];
    for (int k = 0; k < job->op->noutputs; k++)
        p[k] = outs[k].data;
    r = job->op->twin(job, out, p);
    return twin_status(job, r, "certified twin", outs);
}

/* Whether the op's bound can be evaluated on blocks of rows independently: every output is per
   row (the parameter gradients dgamma, dbeta, dbias sum over all rows: not splittable). */
static int bound_splits_by_rows(const cli_job *job)
{
    if (job->rows < 2)
        return 0;
    /* attention (alone or in a block): the rows of a sequence attend to each other */
    if (job->op->family == &cli_family_block || job->op->family == &cli_family_attention)
        return 0;
    for (int k = 0; k < job->op->noutputs; k++) {
        const char *nm = job->op->outputs[k];
        if (!strncmp(nm, "dgamma", 6) || !strncmp(nm, "dbeta", 5) || !strncmp(nm, "dbias", 5) ||
            !strncmp(nm, "d.", 2) /* the sublayers' parameter gradients: d.weight, d.bias, ... */)
            return 0;
    }
    return 1;
}

enum { BOUND_BLOCK_ROWS = 16 }; /* the partition depends on rows only, never on the threads */

void cli_rows_job(const cli_job *job, size_t r0, size_t nr, cli_job *sub)
{
    *sub = *job;
    sub->rows = nr;
    for (int k = 0; k < job->op->ninputs; k++)
        if (job->in[k].data && job->in[k].count == job->rows * job->n) {
            sub->in[k].data = job->in[k].data + r0 * job->n;
            sub->in[k].count = nr * job->n;
        }
}

/* The bound on blocks of BOUND_BLOCK_ROWS rows, in parallel: a sub-job whose per-row inputs
   (count rows * n: x, dy, skip) and outputs start at the block's first row; parameters (gamma,
   beta, bias) are shared.  Each row's bound depends on that row only, so the result is the
   whole-tensor call's, bit for bit, whatever the thread count. */
static int bound_by_row_blocks(const cli_job *job, rn_dtype compute, rn_dtype out,
                               const rn_array *bounds, double *const *p)
{
    size_t rows = job->rows, n = job->n;
    long nb = (long)((rows + BOUND_BLOCK_ROWS - 1) / BOUND_BLOCK_ROWS);
    int rc = 0;
#pragma omp parallel for schedule(dynamic, 1) num_threads(rn_threads_for(rows * n))
    for (long b = 0; b < nb; b++) {
        size_t r0 = (size_t)b * BOUND_BLOCK_ROWS;
        size_t r1 = r0 + BOUND_BLOCK_ROWS < rows ? r0 + BOUND_BLOCK_ROWS : rows;
        cli_job sub;
        cli_rows_job(job, r0, r1 - r0, &sub);
        double *q[CLI_MAX_IO];
        for (int k = 0; k < job->op->noutputs; k++)
            q[k] = p[k] + r0 * (bounds[k].count / rows);
        int r = job->op->bound(&sub, compute, out, q);
        if (r) {
#pragma omp critical(resnorm_bound_rc)
            if (!rc)
                rc = r;
        }
    }
    return rc;
}

enum { BOUND_BLOCK_ELEMS = 1 << 14 };

/* The residual add's bound is element by element (every input and output has x's count): blocks
   of BOUND_BLOCK_ELEMS elements in parallel, as bound_by_row_blocks does for rows. */
static int bound_by_element_blocks(const cli_job *job, rn_dtype compute, rn_dtype out,
                                   double *const *p)
{
    size_t N = job->in[0].count;
    long nb = (long)((N + BOUND_BLOCK_ELEMS - 1) / BOUND_BLOCK_ELEMS);
    int rc = 0;
#pragma omp parallel for schedule(dynamic, 1) num_threads(rn_threads_for(N))
    for (long b = 0; b < nb; b++) {
        size_t i0 = (size_t)b * BOUND_BLOCK_ELEMS;
        size_t i1 = i0 + BOUND_BLOCK_ELEMS < N ? i0 + BOUND_BLOCK_ELEMS : N;
        cli_job sub = *job;
        for (int k = 0; k < job->op->ninputs; k++)
            if (job->in[k].data) {
                sub.in[k].data = job->in[k].data + i0;
                sub.in[k].count = i1 - i0;
            }
        double *q[CLI_MAX_IO];
        for (int k = 0; k < job->op->noutputs; k++)
            q[k] = p[k] + i0;
        int r = job->op->bound(&sub, compute, out, q);
        if (r) {
#pragma omp critical(resnorm_bound_rc)
            if (!rc)
                rc = r;
        }
    }
    return rc;
}

static int bound_is_elementwise(const cli_job *job, const rn_array *bounds)
{
    if (job->op->family != &cli_family_residual || job->in[0].count < 2 * BOUND_BLOCK_ELEMS)
        return 0;
    for (int k = 0; k < job->op->ninputs; k++)
        if (job->in[k].data && job->in[k].count != job->in[0].count)
            return 0;
    for (int k = 0; k < job->op->noutputs; k++)
        if (bounds[k].count != job->in[0].count)
            return 0;
    return 1;
}

int cli_run_bound(const cli_job *job, rn_dtype compute, rn_dtype out, rn_array *bounds)
{
    int r = alloc_outputs(job, RN_F64, bounds);
    if (r)
        return r;
    double *p[CLI_MAX_IO];
    for (int k = 0; k < job->op->noutputs; k++)
        p[k] = bounds[k].data;
    if (bound_is_elementwise(job, bounds))
        r = bound_by_element_blocks(job, compute, out, p);
    else if (bound_splits_by_rows(job))
        r = bound_by_row_blocks(job, compute, out, bounds, p);
    else
        r = job->op->bound(job, compute, out, p);
    return twin_status(job, r, "error bound", bounds);
}

int cli_splits_by_rows(const cli_job *job) { return bound_splits_by_rows(job); }

/* The directories a run created, outermost first, removed innermost first on failure (any
   depth: the list grows as needed). */
typedef struct {
    char **path;
    int n, cap;
} dir_list;

static int dir_list_add(dir_list *l, const char *p)
{
    if (l->n == l->cap) {
        int cap = l->cap ? 2 * l->cap : 16;
        char **np = realloc(l->path, (size_t)cap * sizeof *np);
        if (!np)
            return -1;
        l->path = np, l->cap = cap;
    }
    if (!(l->path[l->n] = strdup(p)))
        return -1;
    l->n++;
    return 0;
}

/* rmdir every listed directory, innermost first (each is empty again after a rollback), and free
   the list. */
static void dir_list_remove(dir_list *l, int remove)
{
    for (int k = l->n - 1; k >= 0; k--) {
        if (remove)
            rmdir(l->path[k]);
        free(l->path[k]);
    }
    free(l->path);
    memset(l, 0, sizeof *l);
}

/* mkdir -p dir; records each directory it creates in `created`.  0, or -1 with errno. */
static int make_dirs(const char *dir, dir_list *created)
{
    char *path = strdup(dir);
    if (!path)
        return -1;
    size_t len = strlen(path);
    while (len > 1 && path[len - 1] == '/')
        path[--len] = '\0';
    for (size_t i = 1; i <= len; i++) {
        if (path[i] != '/' && path[i] != '\0')
            continue;
        char save = path[i];
        path[i] = '\0';
        struct stat st;
        int e = 0;
        if (stat(path, &st) == 0) {
            if (!S_ISDIR(st.st_mode))
                e = ENOTDIR;
        } else if (mkdir(path, 0777) == 0) {
            if (dir_list_add(created, path) != 0)
                e = ENOMEM;
        } else if (errno != EEXIST) {
            e = errno;
        }
        path[i] = save;
        if (e) {
            free(path);
            errno = e;
            return -1;
        }
    }
    free(path);
    return 0;
}

/* An exclusive lock on the output directory (flock on the directory itself: no lock file is left
   behind), held while the outputs are put in place, so two runs writing into the same DIR publish
   one after the other and DIR never holds outputs of both.  Returns the descriptor or -1. */
static int lock_dir(const char *dir)
{
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    if (flock(fd, LOCK_EX | LOCK_NB) == 0)
        return fd;
    if (errno == EWOULDBLOCK) {
        fprintf(stderr, "resnorm eval: waiting for another resnorm writing into %s\n", dir);
        int r;
        while ((r = flock(fd, LOCK_EX)) != 0 && errno == EINTR)
            ;
        if (r == 0)
            return fd;
    }
    int e = errno;
    close(fd);
    errno = e;
    return -1;
}

/* One output: its destination, its temporary, and the backup of the file it replaces. */
typedef struct {
    char dst[4096], tmp[4096], bak[4096];
    int have_tmp, have_bak, renamed;
} pub_file;

/* Keep the file at f->dst (if any) as a hard link f->bak, so that a failed run can put it back. */
static int backup(pub_file *f, const char *dir, const char *name)
{
    struct stat st;
    if (lstat(f->dst, &st) != 0)
        return errno == ENOENT ? 0 : -1;
    for (int attempt = 0; attempt < 100; attempt++) {
        snprintf(f->bak, sizeof f->bak, "%s/.%s.npy.bak.%ld.%d", dir, name, (long)getpid(),
                 attempt);
        if (link(f->dst, f->bak) == 0) {
            f->have_bak = 1;
            return 0;
        }
        if (errno != EEXIST)
            return -1;
    }
    return -1;
}

/* A publication in progress: the directories this run created, and each output's files. */
struct cli_pub {
    const char *dir;
    int n;
    const char *const *names;
    dir_list created;
    pub_file *f;
};

/* Output k's path is refused if something other than a regular file is there. */
static int check_dst(const pub_file *f)
{
    struct stat st;
    if (lstat(f->dst, &st) == 0 && !S_ISREG(st.st_mode)) {
        cli_error("eval", "%s exists and is not a regular file; no output written", f->dst);
        return RN_EXIT_USAGE;
    }
    return 0;
}

cli_pub *cli_pub_begin(const char *dir, const char *const *names, int n, int *rc)
{
    cli_pub *p = calloc(1, sizeof *p);
    pub_file *f = calloc(n > 0 ? (size_t)n : 1, sizeof *f);
    if (!p || !f) {
        free(p), free(f);
        cli_error("eval", "out of memory");
        *rc = RN_EXIT_INTERNAL;
        return NULL;
    }
    p->dir = dir, p->n = n, p->names = names, p->f = f;
    *rc = 0;
    if (make_dirs(dir, &p->created) != 0) {
        cli_error("eval", "--out %s: cannot create the directory: %s", dir, strerror(errno));
        *rc = RN_EXIT_USAGE;
    }
    /* Everything that can be checked is checked before anything is computed or written. */
    for (int k = 0; k < n && !*rc; k++) {
        if ((size_t)snprintf(f[k].dst, sizeof f[k].dst, "%s/%s.npy", dir, names[k]) >=
            sizeof f[k].dst) {
            cli_error("eval", "--out %s: path too long", dir);
            *rc = RN_EXIT_USAGE;
        } else {
            *rc = check_dst(&f[k]);
        }
    }
    if (*rc) {
        cli_pub_end(p, *rc);
        return NULL;
    }
    return p;
}

const char *cli_pub_dst(const cli_pub *p, int k) { return p->f[k].dst; }

int cli_pub_set_tmp(cli_pub *p, int k, const char *tmp)
{
    if ((size_t)snprintf(p->f[k].tmp, sizeof p->f[k].tmp, "%s", tmp) >= sizeof p->f[k].tmp) {
        unlink(tmp);
        cli_error("eval", "%s: path too long", tmp);
        return RN_EXIT_USAGE;
    }
    p->f[k].have_tmp = 1;
    return 0;
}

int cli_pub_commit(cli_pub *p)
{
    pub_file *f = p->f;
    int rc = 0, lockfd = lock_dir(p->dir);
    if (lockfd < 0) {
        cli_error("eval", "--out %s: cannot lock the directory: %s", p->dir, strerror(errno));
        return RN_EXIT_USAGE;
    }
    /* again under the lock: another run may have put something there in the meantime */
    for (int k = 0; k < p->n && !rc; k++)
        rc = check_dst(&f[k]);
    for (int k = 0; k < p->n && !rc; k++)
        if (backup(&f[k], p->dir, p->names[k]) != 0) {
            cli_error("eval", "%s: cannot keep the previous file while replacing it: %s; no "
                      "output written", f[k].dst, strerror(errno));
            rc = RN_EXIT_USAGE;
        }
    for (int k = 0; k < p->n && !rc; k++) {
        if (rename(f[k].tmp, f[k].dst) != 0) {
            cli_error("eval", "%s: cannot put the file in place: %s; no output written",
                      f[k].dst, strerror(errno));
            rc = RN_EXIT_USAGE;
            break;
        }
        f[k].have_tmp = 0;
        f[k].renamed = 1;
    }
    /* On failure: every replaced file back (atomically, from its backup), every new file removed
       (cli_pub_end removes the temporaries and the directories).  On success: the backups go. */
    for (int k = 0; k < p->n; k++) {
        if (rc && f[k].renamed && f[k].have_bak) {
            if (rename(f[k].bak, f[k].dst) != 0)
                cli_error("eval", "%s: could not restore the previous file: it is kept as %s",
                          f[k].dst, f[k].bak);
        } else if (rc && f[k].renamed) {
            unlink(f[k].dst);
        } else if (f[k].have_bak) {
            unlink(f[k].bak);
        }
        f[k].have_bak = 0;
    }
    close(lockfd);
    return rc;
}

void cli_pub_rollback(cli_pub *p)
{
    for (int k = 0; k < p->n; k++) {
        if (p->f[k].have_tmp)
            unlink(p->f[k].tmp);
        p->f[k].have_tmp = 0;
    }
    dir_list_remove(&p->created, 1);
}

void cli_pub_end(cli_pub *p, int rc)
{
    if (!p)
        return;
    if (rc)
        cli_pub_rollback(p);
    else
        dir_list_remove(&p->created, 0);
    free(p->f);
    free(p);
}

int cli_publish(const char *dir, const char *const *names, const rn_array *arrays, int n)
{
    char err[512], tmp[4096];
    int rc;
    cli_pub *p = cli_pub_begin(dir, names, n, &rc);
    if (!p)
        return rc;
    for (int k = 0; k < n && !rc; k++) {
        if (npy_write_tmp(cli_pub_dst(p, k), &arrays[k], tmp, sizeof tmp, err, sizeof err) != 0) {
            cli_error("eval", "%s; no output written", err);
            rc = RN_EXIT_USAGE;
        } else {
            rc = cli_pub_set_tmp(p, k, tmp);
        }
    }
    if (!rc)
        rc = cli_pub_commit(p);
    cli_pub_end(p, rc);
    return rc;
}
