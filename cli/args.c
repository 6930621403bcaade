/* The `resnorm` command line: the op table, option parsing, loading and validating inputs, running
 * the twin and the bound on them, and publishing outputs all-or-nothing.  specs/cli.md is the
 * user-facing reference of everything here. */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
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

const char *cli_attr_text(const cli_job *job, int a)
{
    return job->attr_text[a] ? job->attr_text[a] : job->op->attrs[a].def;
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
static const cli_op *prescan_op(int argc, char **argv, int allow)
{
    static const struct {
        const char *opt;
        int need;
    } valued[] = {{"--in", 0}, {"--attr", 0}, {"--dtype", 0}, {"--actual", CLI_ALLOW_ACTUAL},
                  {"--out", CLI_ALLOW_OUT}};
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
    const char *ins[64], *acts[64];
    int nins = 0, nacts = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v;
        if (is_opt(a, "--in")) {
            if (!(v = opt_value(verb, argc, argv, &i, "--in")))
                return RN_EXIT_USAGE;
            if (nins == 64) {
                cli_error(verb, "too many --in options");
                return RN_EXIT_USAGE;
            }
            ins[nins++] = v;
        } else if (is_opt(a, "--actual") && (allow & CLI_ALLOW_ACTUAL)) {
            if (!(v = opt_value(verb, argc, argv, &i, "--actual")))
                return RN_EXIT_USAGE;
            if (nacts == 64) {
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
        } else if (!strcmp(a, "--json") && (allow & CLI_ALLOW_ACTUAL)) {
            job->json = 1;
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
    job->op->output_shape(job, k, ndim, shape);
}

int cli_load(cli_job *job)
{
    const char *verb = job->verb;
    const cli_op *op = job->op;
    char err[512], s1[160], s2[160];
    for (int k = 0; k < op->ninputs; k++)
        if (job->in_path[k] && npy_read(job->in_path[k], &job->in[k], err, sizeof err) != 0) {
            cli_error(verb, "input %s: %s", op->inputs[k], err);
            return RN_EXIT_USAGE;
        }
    int rc = op->prepare(job);
    if (rc)
        return rc;
    for (int m = 0; m < job->nactual; m++) {
        int k = job->act_index[m];
        if (npy_read(job->act_path[m], &job->act[m], err, sizeof err) != 0) {
            cli_error(verb, "actual %s: %s", op->outputs[k], err);
            return RN_EXIT_USAGE;
        }
        int nd;
        size_t sh[RN_MAX_DIMS];
        cli_output_shape(job, k, &nd, sh);
        const rn_array *a = &job->act[m];
        if (!same_squeezed(a->ndim, a->shape, nd, sh)) {
            cli_shape_str(s1, sizeof s1, a->ndim, a->shape);
            cli_shape_str(s2, sizeof s2, nd, sh);
            cli_error(verb, "actual %s (%s): shape %s does not match the expected %s (size-1 "
                      "dimensions aside)", op->outputs[k], job->act_path[m], s1, s2);
            return RN_EXIT_USAGE;
        }
    }
    return 0;
}

static int alloc_outputs(const cli_job *job, rn_dtype d, rn_array *outs)
{
    for (int k = 0; k < job->op->noutputs; k++) {
        int nd;
        size_t sh[RN_MAX_DIMS];
        cli_output_shape(job, k, &nd, sh);
        if (rn_array_alloc(&outs[k], d, nd, sh) != 0) {
            for (int j = 0; j < k; j++)
                rn_array_free(&outs[j]);
            cli_error(job->verb, "out of memory");
            return RN_EXIT_INTERNAL;
        }
    }
    return 0;
}

static int twin_status(const cli_job *job, int r, const char *what, rn_array *outs)
{
    if (r == RN_TWIN_OK)
        return 0;
    for (int k = 0; k < job->op->noutputs; k++)
        rn_array_free(&outs[k]);
    if (r == RN_TWIN_UNCERTIFIED)
        cli_error(job->verb, "internal: the %s could not certify %s at its maximum precision; "
                  "no output written", what, job->op->name);
    else if (r == RN_TWIN_NOMEM)
        cli_error(job->verb, "internal: the %s ran out of memory", what);
    else
        cli_error(job->verb, "internal: the %s failed (code %d)", what, r);
    return RN_EXIT_INTERNAL;
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

int cli_run_bound(const cli_job *job, rn_dtype compute, rn_dtype out, rn_array *bounds)
{
    int r = alloc_outputs(job, RN_F64, bounds);
    if (r)
        return r;
    double *p[CLI_MAX_IO];
    for (int k = 0; k < job->op->noutputs; k++)
        p[k] = bounds[k].data;
    r = job->op->bound(job, compute, out, p);
    return twin_status(job, r, "error bound", bounds);
}

/* mkdir -p; records the directories it created (outermost first) for rollback. */
static int make_dirs(const char *dir, char created[][4096], int *ncreated, int maxc)
{
    char path[4096];
    if (strlen(dir) >= sizeof path) {
        errno = ENAMETOOLONG;
        return -1;
    }
    strcpy(path, dir);
    size_t len = strlen(path);
    while (len > 1 && path[len - 1] == '/')
        path[--len] = '\0';
    for (size_t i = 1; i <= len; i++) {
        if (path[i] != '/' && path[i] != '\0')
            continue;
        char save = path[i];
        path[i] = '\0';
        struct stat st;
        if (stat(path, &st) == 0) {
            if (!S_ISDIR(st.st_mode)) {
                errno = ENOTDIR;
                return -1;
            }
        } else if (mkdir(path, 0777) == 0) {
            if (*ncreated < maxc)
                strcpy(created[(*ncreated)++], path);
        } else if (errno != EEXIST) {
            return -1;
        }
        path[i] = save;
    }
    return 0;
}

int cli_publish(const char *dir, const char *const *names, const rn_array *arrays, int n)
{
    static char created[RN_MAX_DIMS * 4][4096];
    int ncreated = 0;
    char tmp[CLI_MAX_IO][4096], dst[CLI_MAX_IO][4096], err[512];
    int ntmp = 0, nren = 0, rc = 0;
    if (n > CLI_MAX_IO)
        return RN_EXIT_INTERNAL;
    if (make_dirs(dir, created, &ncreated, (int)(sizeof created / sizeof created[0])) != 0) {
        cli_error("eval", "--out %s: cannot create the directory: %s", dir, strerror(errno));
        rc = RN_EXIT_USAGE;
        goto rollback;
    }
    for (int k = 0; k < n; k++) {
        if ((size_t)snprintf(dst[k], sizeof dst[k], "%s/%s.npy", dir, names[k]) >= sizeof dst[k]) {
            cli_error("eval", "--out %s: path too long", dir);
            rc = RN_EXIT_USAGE;
            goto rollback;
        }
        if (npy_write_tmp(dst[k], &arrays[k], tmp[k], sizeof tmp[k], err, sizeof err) != 0) {
            cli_error("eval", "%s; no output written", err);
            rc = RN_EXIT_USAGE;
            goto rollback;
        }
        ntmp = k + 1;
    }
    for (int k = 0; k < n; k++) {
        if (rename(tmp[k], dst[k]) != 0) {
            cli_error("eval", "%s: cannot put the file in place: %s; no output written", dst[k],
                      strerror(errno));
            rc = RN_EXIT_USAGE;
            goto rollback;
        }
        nren = k + 1;
    }
    return 0;
rollback:
    for (int k = 0; k < nren; k++)
        unlink(dst[k]);
    for (int k = nren; k < ntmp; k++)
        unlink(tmp[k]);
    for (int k = ncreated - 1; k >= 0; k--)
        rmdir(created[k]);
    return rc;
}
