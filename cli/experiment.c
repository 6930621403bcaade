/* `resnorm experiment NAME [options] [--json]` (specs/cli.md, "experiment"): dispatch, and the
 * depth experiment (seed module 13, exercise 1; kernels ref/tanh_stack.c, twin
 * ref/tanh_stack_arb.c). */
#include "experiment.h"

#include <jansson.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "tanh_stack.h"

void experiment_help(void)
{
    printf(
        "usage: resnorm experiment NAME [options] [--json]\n"
        "\n"
        "The seeds' experiments (module 13) with certified numbers: the exact value (Arb balls or the\n"
        "MPFR twins) beside what float32 and float64 kernels compute on the same float inputs.\n"
        "\n"
        "names:\n"
        "  depth [--depths 5,15,30,60] [--d 32] [--seeds 20]\n"
        "      stacks of tanh(Linear(d, d)), plain and residual (x + tanh(W x + b)); W, b uniform\n"
        "      +-1/sqrt(d), x ~ N(0,1) (splitmix64, seed s = 1..SEEDS); loss = sum of outputs;\n"
        "      mean |dL/dx| per seed, certified; median/min/max over seeds and the float32/float64\n"
        "      relative errors against the certified value.\n"
        "  layernorm-stats\n"
        "      rows at several shifts and scales through LayerNorm (n = 64, eps = 1e-5): the output\n"
        "      row's mean and std, certified vs float32 two-pass (the project's kernel) vs float32\n"
        "      one-pass (E[x^2] - E[x]^2).\n"
        "  trace\n"
        "      the seed's one-token pre-LN example (d_model = 4): every intermediate exact (rounded\n"
        "      to f64) and as float32.\n"
        "  prepost [--depths 6,12,24,48] [--seeds 3] [--d 64] [--heads 4] [--ff 256] [--seq 8]\n"
        "          [--cloned]\n"
        "      stacks of nn.TransformerEncoderLayer (relu, eval mode, eps 1e-5) at PyTorch's default\n"
        "      init, pre-LN (with and without a final LayerNorm) and post-LN; x, dy ~ N(0,1),\n"
        "      loss = sum(dy * y); certified (the block twin, Arb): |dL/dx|, every layer's\n"
        "      parameter-gradient norm, RMS of y; median/min/max over seeds.  ff: 4 d is the GPT\n"
        "      convention (PyTorch's default is 2048).  --cloned: every layer a copy of layer 1, as\n"
        "      nn.TransformerEncoder clones its layer.  Cost: depth 48 needs 2048-bit balls, ~75 s\n"
        "      of CPU per seed at seq 8 (the seeds run on every core; RESNORM_THREADS).\n"
        "\n"
        "options: --json  one JSON object on stdout instead of tables;  --help, -h  this text.\n"
        "Progress goes to stderr when it is a terminal.\n"
        "exit codes: 0 ok; 2 usage error; 3 internal error\n"
        "(a value could not be certified, out of memory).\n");
}

void experiment_progress(const char *fmt, ...)
{
    if (!isatty(STDERR_FILENO))
        return;
    va_list ap;
    va_start(ap, fmt);
    fputs("\r\033[K", stderr);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fflush(stderr);
}

int experiment_is_help(const char *a)
{
    return !strcmp(a, "--help") || !strcmp(a, "-h");
}

int experiment_flags_only(const char *name, int argc, char **argv, int *json)
{
    for (int i = 0; i < argc; i++) {
        if (experiment_is_help(argv[i])) {
            experiment_help();
            return 1;
        }
        if (!strcmp(argv[i], "--json")) {
            *json = 1;
            continue;
        }
        cli_error("experiment", "%s: unknown option '%s' (see 'resnorm help experiment')", name,
                  argv[i]);
        return RN_EXIT_USAGE;
    }
    return 0;
}

/* ---- depth ---- */

enum { MAX_DEPTHS = 32 };

typedef struct {
    int depths[MAX_DEPTHS], ndepths, d, seeds, json;
} depth_opts;

/* (experiment.h) A base-10 integer in [lo, hi], the whole text. */
int experiment_parse_int(const char *text, long lo, long hi, int *out)
{
    char *end;
    long v = strtol(text, &end, 10);
    if (!*text || *end || v < lo || v > hi)
        return -1;
    *out = (int)v;
    return 0;
}

/* (experiment.h) A comma-separated list of 1..max integers in [lo, hi] into out; their count. */
int experiment_parse_list(const char *text, long lo, long hi, int *out, int max)
{
    char buf[256];
    if (strlen(text) >= sizeof buf)
        return -1;
    strcpy(buf, text);
    int n = 0;
    for (char *save, *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        if (n == max || experiment_parse_int(tok, lo, hi, &out[n]) < 0)
            return -1;
        n++;
    }
    return n ? n : -1;
}

static int parse_depth_opts(int argc, char **argv, depth_opts *o)
{
    *o = (depth_opts){{5, 15, 30, 60}, 4, 32, 20, 0};
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (experiment_is_help(a)) {
            experiment_help();
            return 1;
        }
        if (!strcmp(a, "--json")) {
            o->json = 1;
            continue;
        }
        int bad = !v;
        if (!bad && !strcmp(a, "--depths"))
            bad = (o->ndepths = experiment_parse_list(v, 1, 1000, o->depths, MAX_DEPTHS)) < 0;
        else if (!bad && !strcmp(a, "--d"))
            bad = experiment_parse_int(v, 1, 1024, &o->d) < 0;
        else if (!bad && !strcmp(a, "--seeds"))
            bad = experiment_parse_int(v, 1, 100000, &o->seeds) < 0;
        else {
            cli_error("experiment", "depth: unknown option '%s' (see 'resnorm help experiment')", a);
            return RN_EXIT_USAGE;
        }
        if (bad) {
            cli_error("experiment", "depth: %s needs %s", a,
                      !strcmp(a, "--depths") ? "a list of integers 1..1000 such as 5,15,30,60"
                      : !strcmp(a, "--d")    ? "an integer 1..1024"
                                             : "an integer 1..100000");
            return RN_EXIT_USAGE;
        }
        i++;
    }
    /* the parameters of the deepest stack, as floats: keep them well under any memory limit */
    for (int k = 0; k < o->ndepths; k++) {
        if ((double)o->depths[k] * o->d * o->d > 0x1p26) {
            cli_error("experiment", "depth: depth %d x d %d^2 weights is over 2^26 (256 MB)",
                      o->depths[k], o->d);
            return RN_EXIT_USAGE;
        }
    }
    return 0;
}

/* One seed's three gradients: the certified ball and the two float kernels. */
typedef struct {
    double mid, rad, f32, f64;
    long prec;
} depth_sample;

/* Statistics of one (depth, residual) row over its seeds. */
typedef struct {
    int depth, residual, seeds, uncertified;
    double median, min, max;          /* of the certified values */
    double f32_median, f64_median;    /* of the kernels' values */
    double f32_relerr_max, f32_relerr_median, f64_relerr_max, f64_relerr_median;
    double rel_radius_max;            /* widest certified ball, relative */
    long prec_max;
} depth_row;

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* (experiment.h) Median of v[0..n-1] (sorts v): the mean of the two middle values when n is even. */
double experiment_median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

static double rel_err(double got, double exact)
{
    return exact != 0 ? fabs(got - exact) / fabs(exact) : fabs(got);
}

/* Which per-seed quantity a median is taken of. */
enum { SAMPLE_EXACT, SAMPLE_F32, SAMPLE_F64, SAMPLE_F32_RELERR, SAMPLE_F64_RELERR };

static double sample_value(const depth_sample *s, int what)
{
    switch (what) {
    case SAMPLE_F32: return s->f32;
    case SAMPLE_F64: return s->f64;
    case SAMPLE_F32_RELERR: return rel_err(s->f32, s->mid);
    case SAMPLE_F64_RELERR: return rel_err(s->f64, s->mid);
    default: return s->mid;
    }
}

static double sample_median(const depth_sample *smp, int n, int what, double *scratch)
{
    for (int k = 0; k < n; k++)
        scratch[k] = sample_value(&smp[k], what);
    return experiment_median(scratch, n);
}

static int run_sample(depth_sample *smp, int depth, int d, int residual, int seed, int *uncert)
{
    tanh_stack s;
    if (tanh_stack_init(&s, depth, d, residual, (uint64_t)seed) < 0)
        return -1;
    int rc = tanh_stack_grad_arb(&s, &smp->mid, &smp->rad, &smp->prec);
    smp->f32 = (double)tanh_stack_grad_f32(&s);
    smp->f64 = tanh_stack_grad_f64(&s);
    tanh_stack_free(&s);
    if (rc < 0)
        return -1;
    *uncert += rc;
    return 0;
}

/* The row's statistics from its samples (scratch: n doubles). */
static void summarize(depth_row *r, const depth_sample *smp, int n, double *scratch)
{
    r->min = INFINITY, r->max = -INFINITY, r->rel_radius_max = 0, r->prec_max = 0;
    for (int k = 0; k < n; k++) {
        r->min = fmin(r->min, smp[k].mid), r->max = fmax(r->max, smp[k].mid);
        r->rel_radius_max = fmax(r->rel_radius_max, smp[k].rad / fabs(smp[k].mid));
        r->prec_max = smp[k].prec > r->prec_max ? smp[k].prec : r->prec_max;
    }
    r->median = sample_median(smp, n, SAMPLE_EXACT, scratch);
    r->f32_median = sample_median(smp, n, SAMPLE_F32, scratch);
    r->f64_median = sample_median(smp, n, SAMPLE_F64, scratch);
    r->f32_relerr_median = sample_median(smp, n, SAMPLE_F32_RELERR, scratch);
    r->f64_relerr_median = sample_median(smp, n, SAMPLE_F64_RELERR, scratch);
    r->f32_relerr_max = r->f64_relerr_max = 0;
    for (int k = 0; k < n; k++) {
        r->f32_relerr_max = fmax(r->f32_relerr_max, rel_err(smp[k].f32, smp[k].mid));
        r->f64_relerr_max = fmax(r->f64_relerr_max, rel_err(smp[k].f64, smp[k].mid));
    }
}

static void print_depth_table(const depth_row *rows, int nrows, const depth_opts *o)
{
    printf("depth experiment: d = %d, %d seeds; mean |dL/dx| certified (Arb), median [min, max];\n"
           "float32 / float64 kernels: relative error against the certified value, median (max)\n\n",
           o->d, o->seeds);
    printf("%5s  %-8s  %-10s  %-10s  %-10s  %-19s  %-19s  %s\n", "depth", "residual", "median",
           "min", "max", "f32 rel err", "f64 rel err", "prec");
    for (int i = 0; i < nrows; i++) {
        const depth_row *r = &rows[i];
        printf("%5d  %-8s  %-10.3g  %-10.3g  %-10.3g  %-8.2g (%-8.2g)  %-8.2g (%-8.2g)  %ld\n",
               r->depth, r->residual ? "yes" : "no", r->median, r->min, r->max,
               r->f32_relerr_median, r->f32_relerr_max, r->f64_relerr_median, r->f64_relerr_max,
               r->prec_max);
    }
    for (int i = 0; i < nrows; i++)
        if (rows[i].uncertified)
            printf("depth %d %s: %d seed(s) not certified to 2^-53 at 8192 bits; widest ball "
                   "relative radius %.2g\n", rows[i].depth, rows[i].residual ? "residual" : "plain",
                   rows[i].uncertified, rows[i].rel_radius_max);
    printf("\nseed (module 13), depth 30, d = 32: 1.84e-08 without the residual, 4.73 with it.\n");
}

static json_t *depth_row_json(const depth_row *r)
{
    return json_pack("{s:i, s:b, s:f, s:f, s:f, s:i, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:i, s:i}",
                     "depth", r->depth, "residual", r->residual, "median", r->median, "min", r->min,
                     "max", r->max, "seeds", r->seeds, "f32_median", r->f32_median, "f64_median",
                     r->f64_median, "f32_relerr_median", r->f32_relerr_median, "f32_relerr_max",
                     r->f32_relerr_max, "f64_relerr_median", r->f64_relerr_median, "f64_relerr_max",
                     r->f64_relerr_max, "certified_rel_radius_max", r->rel_radius_max, "prec_bits_max",
                     (json_int_t)r->prec_max, "uncertified", r->uncertified);
}

static int print_depth_json(const depth_row *rows, int nrows, const depth_opts *o)
{
    json_t *arr = json_array();
    for (int i = 0; i < nrows; i++)
        json_array_append_new(arr, depth_row_json(&rows[i]));
    json_t *doc = json_pack("{s:s, s:i, s:i, s:o, s:{s:f, s:f}}", "experiment", "depth", "d", o->d,
                            "seeds", o->seeds, "rows", arr, "seed_reported_depth30", "plain",
                            1.84e-08, "residual", 4.73);
    if (!doc)
        return -1;
    json_dumpf(doc, stdout, JSON_INDENT(1) | JSON_REAL_PRECISION(17));
    putchar('\n');
    json_decref(doc);
    return 0;
}

static int experiment_depth(int argc, char **argv)
{
    depth_opts o;
    int rc = parse_depth_opts(argc, argv, &o);
    if (rc)
        return rc == 1 ? RN_EXIT_OK : rc;
    int nrows = 2 * o.ndepths;
    depth_row *rows = calloc((size_t)nrows, sizeof *rows);
    depth_sample *smp = calloc((size_t)o.seeds, sizeof *smp);
    double *scratch = calloc((size_t)o.seeds, sizeof *scratch);
    rc = rows && smp && scratch ? RN_EXIT_OK : RN_EXIT_INTERNAL;
    for (int i = 0; i < nrows && rc == RN_EXIT_OK; i++) {
        depth_row *r = &rows[i];
        r->depth = o.depths[i / 2], r->residual = i % 2, r->seeds = o.seeds;
        for (int k = 0; k < o.seeds && rc == RN_EXIT_OK; k++) {
            experiment_progress("depth %d %s: seed %d/%d", r->depth,
                                r->residual ? "residual" : "plain", k + 1, o.seeds);
            if (run_sample(&smp[k], r->depth, o.d, r->residual, k + 1, &r->uncertified) < 0)
                rc = RN_EXIT_INTERNAL;
        }
        if (rc == RN_EXIT_OK)
            summarize(r, smp, o.seeds, scratch);
    }
    experiment_progress("%s", "");
    if (rc != RN_EXIT_OK)
        cli_error("experiment", "depth: out of memory");
    else if (o.json ? print_depth_json(rows, nrows, &o) < 0 : (print_depth_table(rows, nrows, &o), 0))
        rc = RN_EXIT_INTERNAL;
    free(rows), free(smp), free(scratch);
    return rc;
}

/* ---- dispatch ---- */

int experiment_main(int argc, char **argv)
{
    if (argc < 2 || experiment_is_help(argv[1])) {
        experiment_help();
        if (argc < 2)
            cli_error("experiment", "missing NAME (depth, layernorm-stats, trace, prepost)");
        return argc < 2 ? RN_EXIT_USAGE : RN_EXIT_OK;
    }
    const char *name = argv[1];
    if (!strcmp(name, "depth"))
        return experiment_depth(argc - 2, argv + 2);
    if (!strcmp(name, "layernorm-stats"))
        return experiment_layernorm_stats(argc - 2, argv + 2);
    if (!strcmp(name, "trace"))
        return experiment_trace(argc - 2, argv + 2);
    if (!strcmp(name, "prepost"))
        return experiment_prepost(argc - 2, argv + 2);
    cli_error("experiment", "unknown experiment '%s' (depth, layernorm-stats, trace, prepost)", name);
    return RN_EXIT_USAGE;
}
