/* `resnorm golden verify | list | run-check`: the consumers' side of golden/ (the generator is
 * cli/golden.c).  Reference: specs/cli.md; manifest format: specs/golden-format.md.
 *
 *   verify     re-hash every file the manifest names (SHA-256) and look for files it does not name;
 *   list       the cases, as text or as JSON for harnesses in any language;
 *   run-check  check a directory of another implementation's outputs, DIR/<case id>/<output>.npy,
 *              case by case with the checker of `resnorm check` (cli_check_job in cli/check.c).
 *
 * Paths in the manifest are relative to the repository root; --root names it (default: the current
 * directory if it holds golden/manifest.json, else the directory above the resnorm binary). */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>

#include "cli.h"
#include "golden.h"

/* ---------------------------------------------------------------- root and manifest */

static int is_file(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0 && S_ISREG(st.st_mode);
}

static int is_dir(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

/* The repository root: --root, else "." if it has golden/manifest.json, else <binary dir>/..
   (build/resnorm run from anywhere). */
static void find_root(const char *given, char *root, size_t cap)
{
    if (given) {
        snprintf(root, cap, "%s", given);
        return;
    }
    if (is_file("golden/manifest.json")) {
        snprintf(root, cap, ".");
        return;
    }
    char exe[PATH_MAX - 16]; /* room for "/.." in root */
    ssize_t k = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (k > 0) {
        exe[k] = '\0';
        char *s = strrchr(exe, '/');
        if (s) {
            *s = '\0';
            snprintf(root, cap, "%s/..", exe);
            return;
        }
    }
    snprintf(root, cap, ".");
}

static json_t *load_manifest(const char *verb, const char *root)
{
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/golden/manifest.json", root);
    json_error_t err;
    json_t *m = json_load_file(path, 0, &err);
    if (!m) {
        cli_error(verb, "%s: %s (line %d); use --root DIR (the repository root)", path, err.text,
                  err.line);
        return NULL;
    }
    if (!json_is_array(json_object_get(m, "cases"))) {
        cli_error(verb, "%s: no \"cases\" array", path);
        json_decref(m);
        return NULL;
    }
    return m;
}

static const char *jstr(json_t *o, const char *key)
{
    const char *s = json_string_value(json_object_get(o, key));
    return s ? s : "";
}

/* The options of the three verbs (each allows a subset): --root, --op, --dtype, --json, and DIR
   (run-check's one positional argument).  0, or an exit code after a message. */
typedef struct {
    const char *root, *op, *dir;
    int json, have_dtype;
    rn_dtype dtype;
    const char *stat;          /* run-check: --stat MODE, passed to each case's check */
} opts_t;

static int parse_opts(const char *verb, int argc, char **argv, opts_t *o, int allow_dir,
                      int allow_op, int allow_json, int allow_dtype)
{
    memset(o, 0, sizeof *o);
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = NULL;
        const char *eq = strchr(a, '=');
        size_t nl = eq ? (size_t)(eq - a) : strlen(a);
#define OPT(name) (strlen(name) == nl && !strncmp(a, name, nl))
#define VALUE()                                                                                    \
    do {                                                                                           \
        if (eq)                                                                                    \
            v = eq + 1;                                                                            \
        else if (i + 1 < argc)                                                                     \
            v = argv[++i];                                                                         \
        else {                                                                                     \
            cli_error(verb, "option %.*s needs a value", (int)nl, a);                              \
            return RN_EXIT_USAGE;                                                                  \
        }                                                                                          \
    } while (0)
        if (OPT("--root")) {
            VALUE();
            o->root = v;
        } else if (allow_op && OPT("--op")) {
            VALUE();
            if (!cli_find_op(v)) {
                cli_error(verb, "unknown op '%s'", v);
                return RN_EXIT_USAGE;
            }
            o->op = v;
        } else if (allow_dtype && OPT("--dtype")) {
            VALUE();
            if (rn_dtype_from_name(v, &o->dtype) != 0) {
                cli_error(verb, "unknown dtype '%s' (known: f64, f32, f16, bf16)", v);
                return RN_EXIT_USAGE;
            }
            o->have_dtype = 1;
        } else if (allow_json && !strcmp(a, "--json")) {
            o->json = 1;
        } else if (allow_dir && OPT("--stat")) {
            VALUE();
            int mode;
            if (cli_stat_mode_parse(v, &mode) != 0) {
                cli_error(verb, "--stat: unknown mode '%s' (known: fail, warn, off)", v);
                return RN_EXIT_USAGE;
            }
            o->stat = v;
        } else if (a[0] == '-' && a[1]) {
            cli_error(verb, "unknown option '%s' (see 'resnorm golden --help')", a);
            return RN_EXIT_USAGE;
        } else if (allow_dir && !o->dir) {
            o->dir = a;
        } else {
            cli_error(verb, "unexpected argument '%s'", a);
            return RN_EXIT_USAGE;
        }
#undef OPT
#undef VALUE
    }
    if (allow_dir && !o->dir) {
        cli_error(verb, "missing DIR (the implementation's outputs, DIR/<case id>/<output>.npy)");
        return RN_EXIT_USAGE;
    }
    return 0;
}

/* ---------------------------------------------------------------- verify */

/* Every regular file under root/golden, as "golden/...", that `known` does not name. */
static size_t report_extra(const char *root, const char *rel, json_t *known)
{
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/%s", root, rel);
    DIR *d = opendir(path);
    if (!d)
        return 0;
    size_t extra = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
            continue;
        char sub[PATH_MAX], full[2 * PATH_MAX + 2];
        snprintf(sub, sizeof sub, "%s/%s", rel, e->d_name);
        snprintf(full, sizeof full, "%s/%s", root, sub);
        if (is_dir(full))
            extra += report_extra(root, sub, known);
        else if (!json_object_get(known, sub)) {
            printf("EXTRA    %s (not in the manifest)\n", sub);
            extra++;
        }
    }
    closedir(d);
    return extra;
}

static int verify_main(int argc, char **argv)
{
    const char *verb = "golden verify";
    opts_t o;
    int rc = parse_opts(verb, argc, argv, &o, 0, 0, 0, 0);
    if (rc)
        return rc;
    char root[PATH_MAX];
    find_root(o.root, root, sizeof root);
    json_t *m = load_manifest(verb, root);
    if (!m)
        return RN_EXIT_USAGE;
    /* Files are shared between entries (a forward and its backward): hash each once. */
    json_t *known = json_object();
    json_object_set_new(known, "golden/manifest.json", json_true());
    size_t nfiles = 0, bad = 0, i;
    json_t *c;
    json_array_foreach(json_object_get(m, "cases"), i, c) {
        const char *p;
        json_t *h;
        json_object_foreach(json_object_get(c, "sha256"), p, h) {
            if (json_object_get(known, p))
                continue;
            json_object_set_new(known, p, json_true());
            nfiles++;
            char full[2 * PATH_MAX + 2], hex[65];
            snprintf(full, sizeof full, "%s/%s", root, p);
            if (!is_file(full)) {
                printf("MISSING  %s\n", p);
                bad++;
            } else if (golden_sha256_file(full, hex) != 0) {
                printf("UNREADABLE %s\n", p);
                bad++;
            } else if (strcmp(hex, json_string_value(h) ? json_string_value(h) : "")) {
                printf("DIFFERS  %s: sha256 %s, manifest says %s\n", p, hex,
                       json_string_value(h) ? json_string_value(h) : "?");
                bad++;
            }
        }
    }
    size_t extra = report_extra(root, "golden", known);
    printf("verify: %zu files in the manifest, %zu differ or are missing, %zu not in the manifest\n",
           nfiles, bad, extra);
    json_decref(known);
    json_decref(m);
    return bad || extra ? RN_EXIT_MISMATCH : RN_EXIT_OK;
}

/* ---------------------------------------------------------------- list */

/* The fields a harness needs, in a fixed order (the manifest's entry without its hashes). */
static json_t *list_entry(json_t *c)
{
    static const char *const keys[] = {"id", "op", "attrs", "shape", "input_dtype", "inputs",
                                       "expected", "flags", "result", "result_notes", "comment"};
    json_t *e = json_object();
    for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++) {
        json_t *v = json_object_get(c, keys[k]);
        if (v)
            json_object_set(e, keys[k], v);
    }
    return e;
}

static int list_main(int argc, char **argv)
{
    const char *verb = "golden list";
    opts_t o;
    int rc = parse_opts(verb, argc, argv, &o, 0, 1, 1, 0);
    if (rc)
        return rc;
    char root[PATH_MAX];
    find_root(o.root, root, sizeof root);
    json_t *m = load_manifest(verb, root);
    if (!m)
        return RN_EXIT_USAGE;
    json_t *out = json_array(), *c;
    size_t i;
    json_array_foreach(json_object_get(m, "cases"), i, c) {
        if (o.op && strcmp(jstr(c, "op"), o.op))
            continue;
        if (o.json) {
            json_array_append_new(out, list_entry(c));
            continue;
        }
        char *attrs = json_dumps(json_object_get(c, "attrs"), JSON_COMPACT | JSON_PRESERVE_ORDER);
        char *flags = json_dumps(json_object_get(c, "flags"), JSON_COMPACT);
        printf("%-52s %-24s input %-4s attrs %s flags %s\n", jstr(c, "id"), jstr(c, "op"),
               jstr(c, "input_dtype"), attrs ? attrs : "{}", flags ? flags : "[]");
        free(attrs), free(flags);
    }
    if (o.json) {
        char *s = json_dumps(out, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
        if (s)
            puts(s);
        free(s);
    }
    json_decref(out);
    json_decref(m);
    return RN_EXIT_OK;
}

/* ---------------------------------------------------------------- run-check */

typedef struct {
    size_t passed, failed, skipped, acceptable, errors;
    size_t stat_flagged;       /* cases the statistical tier flags (reported apart) */
} tally_t;

/* Build the argv of `check` for one case (inputs, attributes from the manifest; the outputs found
   in casedir) and run the shared checker -- through cli_parse and cli_load, so a case is validated
   exactly as `resnorm check` validates a command line.  Returns 0 (r set), -1 (no output file:
   skipped) or an exit code after a message. */
static int check_case(json_t *c, const char *root, const char *casedir, const opts_t *o,
                      cli_job *job, cli_check_result *r)
{
    const cli_op *op = cli_find_op(jstr(c, "op"));
    if (!op) {
        cli_error("golden run-check", "%s: unknown op '%s'", jstr(c, "id"), jstr(c, "op"));
        return RN_EXIT_USAGE;
    }
    enum { MAXA = 2 + 2 * (2 * CLI_MAX_IO + CLI_MAX_ATTRS) + 4 };
    char *av[MAXA];
    char buf[MAXA][PATH_MAX + 64];
    int ac = 0, nact = 0, nb = 0;
    av[ac++] = "golden run-check";
    av[ac++] = (char *)op->name;
    const char *name;
    json_t *v;
    json_object_foreach(json_object_get(c, "inputs"), name, v) {
        snprintf(buf[nb], sizeof buf[nb], "%s=%s/%s", name, root, json_string_value(v));
        av[ac++] = "--in";
        av[ac++] = buf[nb++];
    }
    json_object_foreach(json_object_get(c, "attrs"), name, v) {
        if (json_is_string(v))
            snprintf(buf[nb], sizeof buf[nb], "%s=%s", name, json_string_value(v));
        else
            snprintf(buf[nb], sizeof buf[nb], "%s=%lld", name, (long long)json_integer_value(v));
        av[ac++] = "--attr";
        av[ac++] = buf[nb++];
    }
    for (int k = 0; k < op->noutputs; k++) {
        char p[PATH_MAX];
        snprintf(p, sizeof p, "%s/%s.npy", casedir, op->outputs[k]);
        if (!is_file(p))
            continue;
        snprintf(buf[nb], sizeof buf[nb], "%s=%s", op->outputs[k], p);
        av[ac++] = "--actual";
        av[ac++] = buf[nb++];
        nact++;
    }
    if (!nact)
        return -1;
    if (o->have_dtype) {
        av[ac++] = "--dtype";
        av[ac++] = (char *)rn_dtype_name(o->dtype);
    }
    if (o->stat) {
        av[ac++] = "--stat";
        av[ac++] = (char *)o->stat;
    }
    int rc = cli_parse(job, ac, av, CLI_ALLOW_ACTUAL);
    if (rc)
        return rc < 0 ? RN_EXIT_INTERNAL : rc;
    rc = cli_load(job);
    if (!rc)
        rc = cli_check_job(job, job->have_dtype ? job->dtype : job->act[0].dtype, r);
    return rc;
}

/* The worst output of a checked case: by error/bound (ties: by ulps). */
static int worst_output(const cli_check_result *r, int nact)
{
    int w = 0;
    for (int m = 1; m < nact; m++)
        if (r->sum[m].max_ratio > r->sum[w].max_ratio)
            w = m;
    return w;
}

static double max_ulps(const cli_check_result *r, int nact)
{
    double u = 0;
    for (int m = 0; m < nact; m++)
        if (r->sum[m].max_ulps > u || isnan(r->sum[m].max_ulps))
            u = r->sum[m].max_ulps;
    return u;
}

static json_t *jnum_or_str(double v)
{
    if (isnan(v))
        return json_string("NaN");
    if (isinf(v))
        return json_string(v > 0 ? "Infinity" : "-Infinity");
    return json_real(v);
}

/* Verdict of a checked case: pass, FAIL, or acceptable (a mismatch where the manifest's result for
   this dtype is "acceptable": the dtype cannot tell the target bug from rounding). */
static const char *verdict(json_t *c, const cli_check_result *r)
{
    if (r->pass)
        return "pass";
    const char *res = json_string_value(json_object_get(json_object_get(c, "result"),
                                                        rn_dtype_name(r->d)));
    return res && !strcmp(res, "acceptable") ? "acceptable" : "FAIL";
}

static int run_check_main(int argc, char **argv)
{
    const char *verb = "golden run-check";
    opts_t o;
    int rc = parse_opts(verb, argc, argv, &o, 1, 1, 1, 1);
    if (rc)
        return rc;
    if (!is_dir(o.dir)) {
        cli_error(verb, "%s: not a directory", o.dir);
        return RN_EXIT_USAGE;
    }
    char root[PATH_MAX];
    find_root(o.root, root, sizeof root);
    json_t *m = load_manifest(verb, root);
    if (!m)
        return RN_EXIT_USAGE;
    tally_t t = {0};
    json_t *reports = json_array(), *skipped = json_array(), *c;
    size_t i;
    if (!o.json)
        printf("run-check %s against golden/ (%s/golden/manifest.json)\n"
               "tolerance: per-element a-priori bounds of a correct implementation computing in the "
               "compute dtype of DTYPE:\n  specs/error-analysis.md (layernorm), "
               "specs/error-analysis-rmsnorm.md (rmsnorm), specs/error-analysis-residual.md "
               "(residual, skip_*)\n"
               "statistical tier: specs/statistical-tier.md (column 'stat'; --stat %s)\n"
               "%-56s %-10s %-5s %12s %12s  %-7s %s\n", o.dir, root,
               o.stat ? o.stat : "fail", "case", "verdict", "dtype", "max err ulp", "err/bound",
               "worst output", "stat");
    json_array_foreach(json_object_get(m, "cases"), i, c) {
        const char *id = jstr(c, "id");
        if (o.op && strcmp(jstr(c, "op"), o.op))
            continue;
        char casedir[PATH_MAX];
        snprintf(casedir, sizeof casedir, "%s/%s", o.dir, id);
        if (!is_dir(casedir)) {
            t.skipped++;
            json_array_append_new(skipped, json_string(id));
            continue;
        }
        cli_job job;
        cli_check_result r;
        memset(&job, 0, sizeof job);
        int crc = check_case(c, root, casedir, &o, &job, &r);
        if (crc < 0) {
            t.skipped++;
            json_array_append_new(skipped, json_string(id));
            cli_job_free(&job);
            continue;
        }
        if (crc) {
            fprintf(stderr, "resnorm golden run-check: error: case %s could not be checked "
                            "(exit %d, message above)\n", id, crc);
            t.errors++;
            if (crc > rc)
                rc = crc;
            cli_job_free(&job);
            continue;
        }
        const char *vd = verdict(c, &r);
        if (!strcmp(vd, "pass"))
            t.passed++;
        else if (!strcmp(vd, "acceptable"))
            t.passed++, t.acceptable++;
        else
            t.failed++;
        if (r.stat.flag)
            t.stat_flagged++;
        const char *sv = r.stat.mode == CLI_STAT_OFF ? "-" : r.stat.flag ? "FLAG" : "ok";
        int w = worst_output(&r, job.nactual);
        const char *wname = job.op->outputs[job.act_index[w]];
        if (o.json) {
            json_t *e = json_object();
            json_object_set_new(e, "id", json_string(id));
            json_object_set_new(e, "verdict", json_string(vd));
            json_object_set_new(e, "max_ulps", jnum_or_str(max_ulps(&r, job.nactual)));
            json_object_set_new(e, "max_ratio", jnum_or_str(r.sum[w].max_ratio));
            json_object_set_new(e, "worst_output", json_string(wname));
            json_object_set_new(e, "statistical", json_string(sv));
            json_object_set_new(e, "check", cli_check_json(&job, &r));
            json_array_append_new(reports, e);
        } else {
            printf("%-56s %-10s %-5s %12.3g %12.3g  %-7s %s\n", id, vd, rn_dtype_name(r.d),
                   max_ulps(&r, job.nactual), r.sum[w].max_ratio, wname, sv);
        }
        cli_job_free(&job);
    }
    if (!rc && t.failed)
        rc = RN_EXIT_MISMATCH;
    int stat_fail = !o.stat || !strcmp(o.stat, "fail");
    if (!rc && t.stat_flagged && stat_fail) /* the statistical tier's policy: specs/cli.md */
        rc = RN_EXIT_STAT;
    if (o.json) {
        json_t *root_j = json_object();
        json_object_set_new(root_j, "dir", json_string(o.dir));
        json_object_set_new(root_j, "pass", json_boolean(rc == 0 || rc == RN_EXIT_STAT));
        json_object_set_new(root_j, "passed", json_integer((json_int_t)t.passed));
        json_object_set_new(root_j, "failed", json_integer((json_int_t)t.failed));
        json_object_set_new(root_j, "skipped", json_integer((json_int_t)t.skipped));
        json_object_set_new(root_j, "acceptable", json_integer((json_int_t)t.acceptable));
        json_object_set_new(root_j, "errors", json_integer((json_int_t)t.errors));
        json_object_set_new(root_j, "statistical_flagged", json_integer((json_int_t)t.stat_flagged));
        json_object_set_new(root_j, "statistical_mode", json_string(o.stat ? o.stat : "fail"));
        json_object_set_new(root_j, "cases", reports);
        json_object_set_new(root_j, "skipped_ids", skipped);
        char *s = json_dumps(root_j, JSON_INDENT(2) | JSON_PRESERVE_ORDER |
                                         JSON_REAL_PRECISION(17));
        if (s)
            puts(s);
        free(s);
        json_decref(root_j);
    } else {
        json_decref(reports);
        json_decref(skipped);
        printf("%zu passed, %zu failed, %zu skipped\n", t.passed, t.failed, t.skipped);
        if (t.acceptable)
            printf("(%zu of the passed cases mismatch where the manifest's result is "
                   "'acceptable' for that dtype: specs/golden-format.md)\n", t.acceptable);
        if (t.errors)
            printf("%zu cases could not be checked (errors above)\n", t.errors);
        if (o.stat && !strcmp(o.stat, "off"))
            printf("statistical tier: off\n");
        else
            printf("statistical tier: %zu cases flagged (errors systematic, not rounding noise)%s\n",
                   t.stat_flagged, t.stat_flagged && stat_fail ? "; exit 4 unless a case failed" : "");
    }
    json_decref(m);
    return rc;
}

int golden_tools_main(int argc, char **argv)
{
    if (!strcmp(argv[0], "verify"))
        return verify_main(argc, argv);
    if (!strcmp(argv[0], "list"))
        return list_main(argc, argv);
    return run_check_main(argc, argv);
}
