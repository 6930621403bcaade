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
#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#ifdef _OPENMP
#include <omp.h>
#endif

#include "cli.h"
#include "layernorm_bound.h"
#include "norm_fast.h"

#define WORST_MAX CLI_WORST_MAX
#define CLI_MAX_OPS_HELP 64
#define CHECK_HELP_WRAP 72 /* longer input lists go on a line of their own */
typedef cli_worst worst_t;
typedef cli_summary summary_t;

void cli_check_help(void)
{
    printf(
        "usage: resnorm check OP --in NAME=FILE.npy ... [--attr eps=TEXT] [--attr axis=INT]\n"
        "                        --actual NAME=FILE.npy ... [--dtype f64|f32|f16|bf16]\n"
        "                        [--attr eps_dtype=f32|f64|input] [--allow ftz] [--json]\n"
        "                        [--profile runtimes|moments|two-pass] [--stat fail|warn|off]\n"
        "                        [--threads N]\n"
        "\n"
        "Checks another implementation's outputs of OP (any subset, one --actual per output)\n"
        "against the certified values, element by element, under the a-priori error bound of an\n"
        "implementation that computes in DTYPE's compute precision (f64 -> f64; f32, f16, bf16 ->\n"
        "f32; default DTYPE: the widest --actual file's dtype) and rounds each output to the\n"
        "coarser of DTYPE and that output's file dtype (an f64 graph may return f32 mean/rstd).\n"
        "eps: its text rounded once to --attr eps_dtype=f32|f64|input (default f64 for f64 x,\n"
        "else f32, as PyTorch; ONNX Runtime: f32 always).\n"
        "Element i passes iff |got - want| <= bound_i (want: exact result rounded to f64);\n"
        "NaN must match NaN, +-Inf the same infinity (or NaN). Where the analysis is void\n"
        "(overflow in the compute dtype) an element is reported as unconstrained, not failed.\n"
        "Flush-to-zero is a failure by default; --allow ftz also accepts the exact result on the\n"
        "inputs with their subnormals (in the compute dtype) flushed to zero (DAZ) and a 0 where\n"
        "the exact result is subnormal (FTZ), counts those elements and says so in the report.\n"
        "An actual of another shape with the same number of elements is compared in C order\n"
        "(the report notes it).\n"
        "--profile: the LayerNorm algorithms the bound admits (specs/error-analysis.md §0):\n"
        "moments (default: two-pass, Welford/Chan merges as PyTorch), runtimes (also one-pass\n"
        "E[x^2]-E[x]^2 as ONNX Runtime), two-pass (tightest).\n"
        "Tolerance: specs/error-analysis.md.\n"
        "layernorm, rmsnorm, the skip ops and their backward ops are checked a block of rows\n"
        "at a time, x (skip, dy) and the actuals read from their files as they go (dgamma,\n"
        "dbeta, dbias: summed across the blocks): memory is one block per thread, not the\n"
        "tensor; the report is the same (RESNORM_CHECK_ROWS=0: the whole tensor at once).\n"
        "\n"
        "ops, inputs and outputs:\n");
    /* Columns as wide as the longest op name and input list (plus two blanks), so that no two
       columns ever run together. */
    char ins[CLI_MAX_OPS_HELP][1024];
    int wname = 0, wins = 0;
    for (int i = 0; i < cli_nops && i < CLI_MAX_OPS_HELP; i++) {
        const cli_op *op = cli_ops[i];
        size_t k = 0;
        ins[i][0] = '\0';
        for (int j = 0; j < op->ninputs && j < CLI_HELP_INPUTS && k < sizeof ins[i]; j++)
            k += (size_t)snprintf(ins[i] + k, sizeof ins[i] - k,
                                  op->optional[j] ? "%s[%s]" : "%s%s", j ? " " : "",
                                  op->inputs[j]);
        if ((int)strlen(op->name) > wname)
            wname = (int)strlen(op->name);
        if ((int)strlen(ins[i]) > wins && strlen(ins[i]) <= CHECK_HELP_WRAP)
            wins = (int)strlen(ins[i]);
    }
    for (int i = 0; i < cli_nops && i < CLI_MAX_OPS_HELP; i++) {
        const cli_op *op = cli_ops[i];
        if (strlen(ins[i]) > CHECK_HELP_WRAP) /* a long list (the block ops): outputs below */
            printf("  %-*s  %s\n  %-*s  %-*s  ->  ", wname, op->name, ins[i], wname, "", wins, "");
        else
            printf("  %-*s  %-*s  ->  ", wname, op->name, wins, ins[i]);
        for (int j = 0; j < op->noutputs && j < CLI_HELP_INPUTS; j++)
            printf("%s%s", j ? " " : "", op->outputs[j]);
        if (op->noutputs > CLI_HELP_INPUTS)
            printf(" ... (%d outputs)", op->noutputs);
        printf("\n");
    }
    printf(
        "Output shapes as 'resnorm eval --help' gives them; size-1 dimensions may differ.\n"
        "\n"
        "--json prints one JSON object: {op, dtype, compute_dtype, pass, tolerance, outputs:\n"
        "  {NAME: {file, dtype, count, mismatches, unconstrained, max_ratio, max_ulps, max_ratio_index,\n"
        "          max_ulps_index, max_ulps_want, max_abs_want, max_err_ulps_of_max_abs_want,\n"
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

/* RESNORM_TIMING=1: the wall time of each phase of eval / check on stderr ("timing: twin 0.52 s"),
   for `make bench` and profiling; nothing else reads it. */
static int timing_on(void)
{
    static int on = -1;
    if (on < 0) {
        const char *e = getenv("RESNORM_TIMING");
        on = e && *e && strcmp(e, "0") != 0;
    }
    return on;
}

static struct timespec phase_last, phase_last_cpu;

static double seconds_between(const struct timespec *a, const struct timespec *b)
{
    return (double)(b->tv_sec - a->tv_sec) + 1e-9 * (double)(b->tv_nsec - a->tv_nsec);
}

static void phase_report(const char *what, double wall, double cpu, const char *note)
{
    fprintf(stderr, "timing: %-8s %.4f s wall, %.4f s CPU (all threads)%s\n", what, wall, cpu,
            note ? note : "");
}

void cli_phase_lap(cli_lap *acc)
{
    if (!timing_on())
        return;
    struct timespec now, cpu;
    clock_gettime(CLOCK_MONOTONIC, &now);
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &cpu);
    if (acc && (phase_last.tv_sec | phase_last.tv_nsec)) {
        acc->wall += seconds_between(&phase_last, &now);
        acc->cpu += seconds_between(&phase_last_cpu, &cpu);
    }
    phase_last = now, phase_last_cpu = cpu;
}

void cli_phase_print(const char *what, const cli_lap *acc, const char *note)
{
    if (timing_on())
        phase_report(what, acc->wall, acc->cpu, note);
}

void cli_phase(const char *what)
{
    if (!timing_on())
        return;
    int started = (phase_last.tv_sec | phase_last.tv_nsec) != 0;
    cli_lap lap = {0, 0};
    cli_phase_lap(&lap);
    if (what && started)
        phase_report(what, lap.wall, lap.cpu, NULL);
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

/* One element: does got match want within bound (the rules of specs/cli.md), and its error in
   ulps of d and in units of the bound.  *unc: the bound is void there (unconstrained). */
static int element_ok(double g, double w, double b, rn_dtype d, double *ulps, double *ratio,
                      int *unc)
{
    *unc = 0;
    if (isnan(w)) {
        *ulps = *ratio = isnan(g) ? 0 : INFINITY;
        return isnan(g);
    }
    if (isinf(w)) {
        int ok = g == w || isnan(g);
        *ulps = *ratio = ok ? 0 : INFINITY;
        return ok;
    }
    if (isinf(b)) {
        *ulps = *ratio = 0;
        *unc = 1;
        return 1;
    }
    if (isinf(g) && g == rn_round(w, d)) {
        /* the exact value is beyond the range of the output dtype: its correctly rounded value,
           and the golden file's, is this infinity (e.g. rstd = 1e18 in f16) */
        *ulps = *ratio = 0;
        return 1;
    }
    if (!isfinite(g)) {
        *ulps = *ratio = INFINITY;
        return 0;
    }
    double e = fabs(g - w);
    *ulps = e / rn_ulp(w, d);
    *ratio = e == 0 ? 0 : e / b; /* b == 0 -> Inf */
    return e <= b;
}

/* --allow ftz: what flushing would give.  want_f, bound_f: the twin and bound on the inputs with
   their compute-dtype subnormals flushed to zero (NULL if no input is subnormal); tiny: the
   smallest normal of the compute and output formats (a result below it may be flushed to 0). */
typedef struct {
    const double *want_f, *bound_f;
    double tiny;
} ftz_t;

/* Keep the WORST_MAX largest ratios of s->worst, first-found first among equals. */
static void worst_insert(summary_t *s, worst_t wt)
{
    int pos = s->nworst;
    while (pos > 0 && s->worst[pos - 1].ratio < wt.ratio)
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

/* Elements [lo, hi) into s and *max_err, one at a time (summarize_range's general case). */
static void summarize_elements(const double *got, const double *want, const double *bound,
                               const ftz_t *ftz, size_t lo, size_t hi, size_t base, rn_dtype d,
                               summary_t *s, double *max_err)
{
    const int P = rn_dtype_precision(d), EMIN = rn_dtype_emin(d);
    for (size_t i = lo; i < hi; i++) {
        size_t j = i - base;
        double g = got[j], w = want[j], b = bound[j], ulps, ratio;
        int unc = 0, ok;
        if (isfinite(g) && isfinite(w) && isfinite(b)) { /* element_ok's last case, inline */
            double e = fabs(g - w);
            ulps = e / rn_ulp_finite(w, P, EMIN);
            ratio = e == 0 ? 0 : e / b;
            ok = e <= b;
        } else {
            ok = element_ok(g, w, b, d, &ulps, &ratio, &unc);
        }
        if (!ok && ftz) {
            double u2, r2;
            int unc2;
            if (ftz->want_f && element_ok(g, ftz->want_f[j], ftz->bound_f[j], d, &u2, &r2, &unc2)) {
                ok = 1; /* the exact result on the flushed inputs (DAZ) */
                ulps = u2, ratio = r2;
            } else if (g == 0 && (fabs(w) < ftz->tiny ||
                                  (ftz->want_f && fabs(ftz->want_f[j]) < ftz->tiny))) {
                ok = 1; /* a subnormal result flushed to zero (FTZ) */
                ratio = 0;
            }
            if (ok)
                s->ftz_accepted++;
        }
        s->unconstrained += (size_t)unc;
        if (i == 0 || ratio > s->max_ratio) {
            s->max_ratio = ratio;
            s->max_ratio_i = i;
        }
        if (i == 0 || ulps > s->max_ulps) {
            s->max_ulps = ulps;
            s->max_ulps_i = i;
            s->max_ulps_want = w;
        }
        if (isfinite(w) && fabs(w) > s->max_abs_want)
            s->max_abs_want = fabs(w);
        if (isfinite(g) && isfinite(w) && !isinf(b) && fabs(g - w) > *max_err)
            *max_err = fabs(g - w);
        if (!ok) {
            s->mismatches++;
            worst_insert(s, (worst_t){i, g, w, ulps, ratio});
        }
    }
}

/* The index of the first element of a equal to v (v is one of them). */
static size_t first_of(const double *a, double v)
{
    size_t j = 0;
    while (a[j] != v)
        j++;
    return j;
}

/* Elements [lo, hi) (at most SUM_CHUNK) into s and *max_err as summarize_elements would, in the
   common case where every element is finite with a finite bound, within it, and its want's ulp
   has an exact reciprocal: their errors, ulps and ratios first (branch-free, so that the loop
   vectorizes: the same operations on each element, hence the same bits), then the chunk's
   maxima (exact whatever the order) and, where a maximum grows, the first element that has it,
   as the element-by-element scan takes it.  Returns 0, leaving s and *max_err untouched, when
   some element is not that case. */
enum { SUM_CHUNK = 256 };
static int summarize_chunk(const double *got, const double *want, const double *bound, size_t lo,
                           size_t hi, size_t base, rn_dtype d, summary_t *s, double *max_err)
{
    const int P = rn_dtype_precision(d), EMIN = rn_dtype_emin(d);
    const double emin_p = ldexp(1.0, EMIN), step = ldexp(1.0, 1 - P);
    double ulps_b[SUM_CHUNK], ratio_b[SUM_CHUNK];
    size_t m = hi - lo;
    const double *g = got + (lo - base), *w = want + (lo - base), *b = bound + (lo - base);
    double slow = 0, mr = 0, mu = 0, ma = 0, me = 0;
#pragma omp simd reduction(+ : slow) reduction(max : mr, mu, ma, me)
    for (size_t j = 0; j < m; j++) {
        double e = fabs(g[j] - w[j]), aw = fabs(w[j]), iu;
        double ulp = rn_ulp_pow2(aw, emin_p, step, &iu); /* rn_ulp_finite(w, P, EMIN) */
        /* ratio: e / b, and +0 where e == 0 (as 0 / 1: a divisor chosen without a branch, which
           keeps the division in the vectorized loop) */
        double ulps = e * iu, ratio = e / (b[j] + (e == 0 ? 1.0 : 0.0));
        int fast = (fabs(g[j]) <= DBL_MAX) & (aw <= DBL_MAX) & (fabs(b[j]) <= DBL_MAX) &
                   (e <= b[j]) & (ulp >= 0x1p-1022);
        slow += fast ? 0.0 : 1.0;
        ulps_b[j] = ulps, ratio_b[j] = ratio;
        mr = mr > ratio ? mr : ratio;
        mu = mu > ulps ? mu : ulps;
        ma = ma > aw ? ma : aw;
        me = me > e ? me : e;
    }
    if (slow != 0)
        return 0;
    /* no NaN among them: the maxima are the elements' own values */
    if (lo == 0 || mr > s->max_ratio) {
        s->max_ratio = mr;
        s->max_ratio_i = lo + first_of(ratio_b, mr);
    }
    if (lo == 0 || mu > s->max_ulps) {
        size_t j = first_of(ulps_b, mu);
        s->max_ulps = mu;
        s->max_ulps_i = lo + j;
        s->max_ulps_want = w[j];
    }
    if (ma > s->max_abs_want)
        s->max_abs_want = ma;
    if (me > *max_err)
        *max_err = me;
    return 1;
}

/* The summary of elements [lo, hi) (count: set by the caller); the arrays hold the elements from
   `base` on (element i at [i - base]: a block of rows).  Element 0 initialises the maxima, as a
   scan from the start does; a block that starts later begins them at -Inf, so that merging the
   blocks in order (summary_merge) takes exactly the element a scan from the start would: the
   first of the largest (a NaN is never taken after element 0). *max_err: the largest finite
   |got - want| where the bound is not void.  By chunks of SUM_CHUNK: summarize_chunk where it
   applies, else element by element. */
static void summarize_range(const double *got, const double *want, const double *bound,
                            const ftz_t *ftz, size_t lo, size_t hi, size_t base, rn_dtype d,
                            summary_t *s, double *max_err)
{
    memset(s, 0, sizeof *s);
    *max_err = 0;
    if (lo > 0)
        s->max_ratio = s->max_ulps = -INFINITY;
    for (size_t c = lo; c < hi; c += SUM_CHUNK) {
        size_t ch = hi - c < SUM_CHUNK ? hi : c + SUM_CHUNK;
        if (!summarize_chunk(got, want, bound, c, ch, base, d, s, max_err))
            summarize_elements(got, want, bound, ftz, c, ch, base, d, s, max_err);
    }
}

/* s followed by the later block b, as one scan over both would give. */
static void summary_merge(summary_t *s, const summary_t *b)
{
    s->mismatches += b->mismatches;
    s->unconstrained += b->unconstrained;
    s->ftz_accepted += b->ftz_accepted;
    if (b->max_ratio > s->max_ratio) {
        s->max_ratio = b->max_ratio;
        s->max_ratio_i = b->max_ratio_i;
    }
    if (b->max_ulps > s->max_ulps) {
        s->max_ulps = b->max_ulps;
        s->max_ulps_i = b->max_ulps_i;
        s->max_ulps_want = b->max_ulps_want;
    }
    if (b->max_abs_want > s->max_abs_want)
        s->max_abs_want = b->max_abs_want;
    for (int j = 0; j < b->nworst; j++)
        worst_insert(s, b->worst[j]); /* the global worst are each in their block's worst */
}

/* The summary of elements [lo, hi) (arrays from `base`, as summarize_range) in blocks of
   SUM_BLOCK on rn_threads() threads, merged in order (the result does not depend on the thread
   count: the blocks are fixed).  Returns 1 if a NaN ratio is among a block's mismatches (a NaN
   bound): it breaks the ordering the merge relies on, and the caller must scan serially. */
#define SUM_BLOCK ((size_t)1 << 16)
static int summarize_span(const double *got, const double *want, const double *bound,
                          const ftz_t *ftz, size_t lo, size_t hi, size_t base, rn_dtype d,
                          summary_t *s, double *max_err)
{
    size_t nb = (hi - lo) / SUM_BLOCK + 1;
    summary_t *part = malloc(nb * sizeof *part);
    double *perr = malloc(nb * sizeof *perr);
    if (!part || !perr) {
        free(part), free(perr);
        return 1;
    }
    long B = (long)nb;
#pragma omp parallel for schedule(static) num_threads(rn_threads_for(hi - lo))
    for (long b = 0; b < B; b++) {
        size_t l = lo + (size_t)b * SUM_BLOCK, h = l + SUM_BLOCK < hi ? l + SUM_BLOCK : hi;
        summarize_range(got, want, bound, ftz, l, h, base, d, &part[b], &perr[b]);
    }
    int serial = 0;
    for (size_t b = 0; b < nb; b++)
        for (int j = 0; j < part[b].nworst; j++)
            serial |= isnan(part[b].worst[j].ratio);
    *s = part[0];
    *max_err = perr[0];
    for (size_t b = 1; b < nb && !serial; b++) {
        summary_merge(s, &part[b]);
        *max_err = fmax(*max_err, perr[b]);
    }
    free(part), free(perr);
    return serial;
}

/* The comparison of one output: element_ok on every element (summarize_span, or the one serial
   scan where a NaN bound calls for it). */
static void summarize(const double *got, const double *want, const double *bound,
                      const ftz_t *ftz, size_t count, rn_dtype d, summary_t *s)
{
    double max_err = 0;
    if (summarize_span(got, want, bound, ftz, 0, count, 0, d, s, &max_err))
        summarize_range(got, want, bound, ftz, 0, count, 0, d, s, &max_err);
    s->count = count;
    s->max_ulps_of_scale = max_err / rn_ulp(s->max_abs_want, d);
}

/* Where the largest ulps count sits at an exact value far below the output's scale (an exact 0
   above all, whose ulp is the smallest subnormal), the count alone misleads: say where it is,
   the exact value there, and the largest error in ulps of the largest |exact| value.  Empty when
   the count is already at the scale (within 4x). */
int cli_ulps_below_scale(const cli_summary *s)
{
    return s->count && s->max_ulps > 4 * s->max_ulps_of_scale && isfinite(s->max_ulps);
}

static void scale_note(char *buf, size_t cap, const summary_t *s, const rn_array *a)
{
    buf[0] = 0;
    if (!cli_ulps_below_scale(s))
        return;
    char ib[160];
    index_str(ib, sizeof ib, s->max_ulps_i, a);
    int k = s->max_ulps_want == 0
                ? snprintf(buf, cap, " (against an exact 0, at %s", ib)
                : snprintf(buf, cap, " (at %s, where the exact value is %.3g", ib, s->max_ulps_want);
    if (k > 0 && (size_t)k < cap)
        snprintf(buf + k, cap - (size_t)k, "; %.3g ulp of the largest |exact| value, %.3g)",
                 s->max_ulps_of_scale, s->max_abs_want);
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

/* The first element of v[0..n) that is not a value of cd, or n.  Every double is a binary64
   value; for binary32, rn_is_f32_value over a block at a time (vectorized, ~1 ns per element),
   then rn_representable finds the element in the block that failed (and decides for f16 and
   bf16). */
static size_t first_not_in(const double *v, size_t n, rn_dtype cd)
{
    if (cd == RN_F64)
        return n;
    size_t b = 0;
    if (cd == RN_F32)
        for (; b < n; b += 4096) {
            size_t e = n - b < 4096 ? n : b + 4096;
            int bad = 0;
            for (size_t i = b; i < e; i++)
                bad |= !rn_is_f32_value(v[i]);
            if (bad)
                break;
        }
    for (size_t i = b; i < n; i++)
        if (!rn_representable(v[i], cd))
            return i;
    return n;
}

/* The message of input k's element i (value v) that the compute dtype cannot hold. */
static void not_exact_msg(char *buf, size_t cap, const cli_job *job, int k, size_t i, double v,
                          rn_dtype cd)
{
    snprintf(buf, cap, "input %s: %s: element %zu (%.17g) is not a %s value, and an "
             "implementation computing in %s would see it rounded; round the inputs to %s first "
             "(specs/error-analysis.md §0)", job->op->inputs[k], job->in_path[k], i, v,
             rn_dtype_name(cd), rn_dtype_name(cd), rn_dtype_name(cd));
}

/* The bound assumes the implementation computes on exactly these inputs: an f64 input that the
   compute dtype cannot hold would be rounded first, an error the analysis does not cover.  The
   inputs read whole (data not NULL), in order; *first: the first that fails (-1: none), its
   message in msg (not printed). */
static void inputs_exact_in(const cli_job *job, rn_dtype cd, int *first, char *msg, size_t cap)
{
    *first = -1;
    for (int k = 0; k < job->op->ninputs && *first < 0; k++) {
        if (!job->in[k].data || rn_dtype_within(job->in[k].dtype, cd))
            continue;
        size_t i = first_not_in(job->in[k].data, job->in[k].count, cd);
        if (i < job->in[k].count) {
            not_exact_msg(msg, cap, job, k, i, job->in[k].data[i], cd);
            *first = k;
        }
    }
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
        summarize(job->act[m].data, want[k].data, bound[k].data, NULL, want[k].count, d, &r->sum[m]);
        r->sum[m].out = d;
        if (r->sum[m].mismatches)
            r->pass = 0;
    }
    cli_stat_run(job, want, r); /* the statistical tier, reported apart (cli/stat_check.c) */
}

/* The checker proper, shared by `check` and `golden run-check` (cli/golden_tools.c): the job's
   inputs and actual outputs are loaded; compare every actual with the twin's exact values under the
   op's bound for (compute dtype of d, d).  d: the dtype the implementation declares. */
rn_dtype cli_coarser_dtype(rn_dtype a, rn_dtype b)
{
    return rn_dtype_unit_roundoff(a) >= rn_dtype_unit_roundoff(b) ? a : b;
}

rn_dtype cli_default_dtype(const cli_job *job)
{
    rn_dtype d = job->act[0].dtype;
    for (int m = 1; m < job->nactual; m++)
        if (rn_dtype_unit_roundoff(job->act[m].dtype) < rn_dtype_unit_roundoff(d))
            d = job->act[m].dtype;
    return d;
}

static double smallest_normal(rn_dtype d)
{
    switch (d) {
    case RN_F64: return 0x1p-1022;
    case RN_F16: return 0x1p-14;
    default: return 0x1p-126; /* f32, bf16 */
    }
}

/* --allow ftz (DAZ): a copy of job whose inputs have their compute-dtype subnormals replaced by
   zeros of the same sign; returns how many were flushed (0: no copy is needed), -1 out of memory. */
static long flushed_job(const cli_job *job, rn_dtype cd, cli_job *fj)
{
    double tiny = smallest_normal(cd);
    long nflush = 0;
    *fj = *job;
    for (int k = 0; k < job->op->ninputs; k++) {
        const rn_array *a = &job->in[k];
        fj->in[k].data = NULL;
        for (size_t i = 0; i < a->count; i++)
            if (a->data[i] != 0 && fabs(a->data[i]) < tiny) {
                if (!fj->in[k].data) {
                    if (!(fj->in[k].data = malloc(a->count * sizeof(double))))
                        return -1;
                    memcpy(fj->in[k].data, a->data, a->count * sizeof(double));
                }
                fj->in[k].data[i] = copysign(0.0, a->data[i]);
                nflush++;
            }
        if (!fj->in[k].data)
            fj->in[k].data = a->data;
    }
    return nflush;
}

static void free_flushed(const cli_job *job, cli_job *fj)
{
    for (int k = 0; k < job->op->ninputs; k++)
        if (fj->in[k].data != job->in[k].data)
            free(fj->in[k].data);
}

/* ---- The check by blocks of rows ----
   For an op whose rows are independent (cli_splits_by_rows) and whose statistical tier takes rows
   block by block (cli_stat_rows_supported: LayerNorm, RMSNorm and the skip ops), the
   twin, the bound, the comparison and the tier run on one block of rows at a time, each block on
   one thread from start to end (one parallel region for the whole check, its blocks shared out
   dynamically).
   `resnorm check` (cli_load_check) also reads x and the actual outputs a block at a time from
   their files: memory is one block per thread (ROWS_BLOCK_ELEMS values of each array), not the
   tensor, and each block's values are compared and tested while they are in the cache.  The
   report is the whole-tensor path's, byte for byte (tests/test_check_rows.c): each row's exact
   values and bounds depend on that row alone, the blocks' summaries merge in row order
   (summary_merge), and the tier pools its rows in row order at the end (ref/stat_tier.h,
   st_fwd); none of it depends on the threads.  RESNORM_CHECK_ROWS=0: the whole-tensor path;
   =K: blocks of K rows (for tests).
   The norms' backward (cli_colsums with bound hooks) go the same way for dx, on the blocks of
   their bound's partition (each taken a chunk of rows at a time: check_block_chunks); dgamma and
   dbeta, sums over every row, are summed across the blocks -- the twin's certified column
   accumulators (norm_cols), the bound's column terms one slot per block -- and compared after
   the last block (check_columns), their tier's tests in one more pass over the rows in row order.
   The skip ops' backward (cli_colsums with bstate hooks) go the same way, dx = dskip by rows and
   dbias, dgamma, dbeta by columns; their bound needs the twin on every rounded sum x + skip
   (+ bias) an implementation may form, whose columns are summed across the blocks too
   (ref/skip_backward_bound.h), and dbias's test needs each row's exact dx with the exact dbias:
   the second pass runs the twin on its rows again. */
enum { ROWS_BLOCK_ELEMS = 1 << 15 };

int cli_check_by_rows_op(const cli_job *job)
{
    const cli_colsums *cs = job->op->colsums;
    return !job->allow_ftz && cli_stat_rows_supported(job) && !job->op->stat_bound &&
           (!cs || cs->bound_rows || cs->bstate_new);
}

int cli_column_output(const cli_job *job, int k)
{
    return job->op->colsums && job->op->colsums->col[k] >= 0;
}

/* RESNORM_CHECK_ROWS: -1 when not set. */
static long check_rows_env(void)
{
    const char *e = getenv("RESNORM_CHECK_ROWS");
    return e && *e ? strtol(e, NULL, 10) : -1;
}

/* The norms' backward (cli_colsums) go by the blocks of their bound's partition: each block's
   column terms are summed in row order into its own slot, as the whole-tensor bound does, so the
   bounds of dgamma and dbeta are the same bits (=K selects this path, and chunks of K rows within
   the blocks: chunk_rows). */
size_t cli_check_by_rows(const cli_job *job)
{
    if (!cli_check_by_rows_op(job) || job->rows < 2 ||
        (!job->op->colsums && !cli_splits_by_rows(job)))
        return 0;
    long k = check_rows_env();
    if (k == 0)
        return 0;
    /* The blocks' sums are the fast path's certified columns: not under RESNORM_FASTPATH=0, the
       twin alone (as in eval's stream, cli_stream_applies); n within the column accumulators'
       reach (norm_cols_new). */
    if (job->op->colsums)
        return rn_fast_enabled() && job->n && job->n <= ((size_t)1 << 20)
                   ? rn_bound_block_rows(job->rows) : 0;
    if (k > 0)
        return (size_t)k;
    size_t R = ROWS_BLOCK_ELEMS / (job->n ? job->n : 1);
    return R ? R : 1;
}

/* One thread's buffers for a block: output k's exact values (want[k]) and its bounds for each
   output dtype some actual is rounded to (bound[od][k]), per_row[k] values of output k a row;
   the block of each input and actual read from its file (in[k], act[m]: lazy jobs). */
typedef struct {
    size_t per_row[CLI_MAX_IO];
    rn_array want[CLI_MAX_IO];
    rn_array bound[RN_NDTYPES][CLI_MAX_IO];
    rn_array in[CLI_MAX_IO], act[CLI_MAX_IO];
    int need[RN_NDTYPES];
    unsigned char *row_ok; /* the norms' backward: the block's rows whose dx the fast path gave */
} rows_bufs;

/* The norms' backward (cli_colsums), shared by the blocks: the twin's column accumulators, and
   per output dtype (need[d]: some actual is rounded to d) the bound's column slots (slot b + 1:
   block b; ns doubles and nf flags each), or the skip ops' bound state (bst). */
typedef struct {
    norm_cols *cols;
    int need[RN_NDTYPES];
    double *cs[RN_NDTYPES];
    unsigned char *cf[RN_NDTYPES];
    size_t ns, nf;
    void *bst;
} cols_state;

static void rows_bufs_free(rows_bufs *b)
{
    for (int k = 0; k < CLI_MAX_IO; k++) {
        rn_array_free(&b->want[k]);
        rn_array_free(&b->in[k]);
        rn_array_free(&b->act[k]);
        for (int t = 0; t < RN_NDTYPES; t++)
            rn_array_free(&b->bound[t][k]);
    }
    free(b->row_ok);
}

/* Output k's values per row (rows x per_row: y n, mean and rstd 1), 0 if absent or a sum over
   rows (dgamma). */
static size_t per_row_of(const cli_job *job, int k)
{
    if (cli_column_output(job, k))
        return 0;
    int nd;
    size_t sh[RN_MAX_DIMS], count = 1;
    cli_output_shape(job, k, &nd, sh);
    for (int i = 0; i < nd; i++)
        count *= sh[i];
    return nd < 0 ? 0 : count / job->rows;
}

static int block_alloc(rn_array *a, size_t len)
{
    return rn_array_alloc(a, RN_F64, 1, &len);
}

/* Buffers for R rows: BUFS_CHECK, everything a block's check needs; BUFS_TWIN, the inputs and
   the twin's outputs alone; BUFS_INPUTS, the inputs alone (the tier's second pass). */
enum { BUFS_INPUTS, BUFS_TWIN, BUFS_CHECK };
static int rows_bufs_alloc(const cli_job *job, const cli_check_result *r, size_t R, rows_bufs *b,
                           int what)
{
    memset(b, 0, sizeof *b);
    for (int m = 0; what == BUFS_CHECK && m < job->nactual; m++)
        b->need[r->sum[m].out] = 1;
    if (!(b->row_ok = malloc(R)))
        return -1;
    for (int k = 0; what != BUFS_INPUTS && k < job->op->noutputs; k++) {
        /* a sum over rows: n values the block's twin may write (and the check discards) */
        if (cli_column_output(job, k) && block_alloc(&b->want[k], job->n))
            return -1;
        if (!(b->per_row[k] = per_row_of(job, k)))
            continue;
        if (block_alloc(&b->want[k], R * b->per_row[k]))
            return -1;
        for (int t = 0; t < RN_NDTYPES; t++)
            if (b->need[t] && block_alloc(&b->bound[t][k], R * b->per_row[k]))
                return -1;
    }
    for (int k = 0; job->lazy && k < job->op->ninputs; k++)
        if (job->in_rd[k].fd >= 0 && block_alloc(&b->in[k], R * job->n))
            return -1;
    for (int m = 0; what == BUFS_CHECK && job->lazy && m < job->nactual; m++)
        if (b->per_row[job->act_index[m]] &&
            block_alloc(&b->act[m], R * b->per_row[job->act_index[m]]))
            return -1;
    return 0;
}

/* What one block leaves for the merge: per actual (nactual entries each) its summary and its
   largest error where the bound holds; the failures in the order a whole-tensor check meets them:
   a file read (read_err), an input value the compute dtype cannot hold (input_err; both messages,
   malloc'd), the twin's or the bound's status (RN_TWIN_*; what: which one), a NaN bound
   (serial: the whole-tensor path's serial scan decides). */
typedef struct {
    summary_t *sum;
    double *err;
    char *read_err, *input_err;
    int status, serial;
    const char *what;
} block_result;

/* Rows r0 .. r0 + nr of job as a job of its own (cli_rows_job); a lazy job's per-row inputs are
   read from their files into b->in.  0, or -1 with res->read_err set. */
static int block_job(const cli_job *job, size_t r0, size_t nr, rows_bufs *b, cli_job *sub,
                     block_result *res)
{
    char err[512];
    cli_rows_job(job, r0, nr, sub);
    for (int k = 0; job->lazy && k < job->op->ninputs; k++) {
        if (job->in_rd[k].fd < 0)
            continue;
        npy_reader rd = job->in_rd[k]; /* pread: each thread reads with its own copy */
        if (npy_read_range(&rd, r0 * job->n, nr * job->n, b->in[k].data, err, sizeof err)) {
            res->read_err = strdup(err);
            return -1;
        }
        sub->in[k].data = b->in[k].data;
        sub->in[k].count = nr * job->n;
    }
    return 0;
}

/* got[m]: actual m's values of rows r0 .. r0 + nr (read from its file for a lazy job).  0, or -1
   with res->read_err set. */
static int block_actuals(const cli_job *job, size_t r0, size_t nr, rows_bufs *b,
                         const double **got, block_result *res)
{
    char err[512];
    for (int m = 0; m < job->nactual; m++) {
        size_t w = b->per_row[job->act_index[m]];
        if (!w) { /* a sum over rows: compared after the blocks */
            got[m] = NULL;
            continue;
        }
        if (!job->lazy) {
            got[m] = job->act[m].data + r0 * w;
            continue;
        }
        npy_reader rd = job->act_rd[m];
        if (npy_read_range(&rd, r0 * w, nr * w, b->act[m].data, err, sizeof err)) {
            char msg[700];
            snprintf(msg, sizeof msg, "actual %s: %s", job->op->outputs[job->act_index[m]], err);
            res->read_err = strdup(msg);
            return -1;
        }
        got[m] = b->act[m].data;
    }
    return 0;
}

/* A lazy job's per-row inputs of the block (sub) checked as inputs_exact_in does; 0, or -1 with
   res->input_err set (element index in the whole input). */
static int block_inputs_exact(const cli_job *job, const cli_job *sub, size_t r0, rn_dtype cd,
                              block_result *res)
{
    for (int k = 0; job->lazy && k < job->op->ninputs; k++) {
        if (job->in[k].data || job->in_rd[k].fd < 0 || rn_dtype_within(job->in[k].dtype, cd))
            continue;
        size_t i = first_not_in(sub->in[k].data, sub->in[k].count, cd);
        if (i < sub->in[k].count) {
            char msg[1024];
            not_exact_msg(msg, sizeof msg, job, k, r0 * job->n + i, sub->in[k].data[i], cd);
            res->input_err = strdup(msg);
            return -1;
        }
    }
    return 0;
}

static int thread_index(void)
{
#ifdef _OPENMP
    return omp_get_thread_num();
#else
    return 0;
#endif
}

/* The norms' backward: the rows of sub the fast path left (row_ok[r] = 0), from the twin on each
   row alone (the MPFR twin's memory is a row's, not the block's): their per-row outputs into want
   (per_row[q] values a row; a sum over rows, per_row 0: its n values are scratch, not kept).
   0 or RN_TWIN_*. */
static int twin_rows_left(const cli_job *job, const cli_job *sub, const unsigned char *row_ok,
                          const size_t *per_row, double *const *want)
{
    for (size_t r = 0; r < sub->rows; r++) {
        if (row_ok[r])
            continue;
        cli_job one;
        double *w[CLI_MAX_IO];
        cli_rows_job(sub, r, 1, &one);
        for (int q = 0; q < job->op->noutputs; q++)
            w[q] = want[q] + r * per_row[q];
        int rc = job->op->twin(&one, RN_F64, w);
        if (rc)
            return rc;
    }
    return RN_TWIN_OK;
}

/* The norms' backward: the block's dx from the fast path, its rows' terms added to the columns;
   where some row's dx is not certified, from the twin on that row alone (twin_rows_left: the
   terms are in); where the fast path took nothing (NaN, Inf), out->serial: the whole-tensor path
   decides (the sums need the whole tensor's twin).  0 or RN_TWIN_*. */
static int block_twin_cols(const cli_job *job, const cli_job *sub, rows_bufs *b,
                           const cols_state *cst, double *const *want, block_result *out)
{
    int k = job->op->colsums->rows(sub, RN_F64, want, cst->cols, thread_index(), b->row_ok);
    if (k == 1)
        return RN_TWIN_OK;
    if (k != 2) {
        out->serial = 1;
        return RN_TWIN_OK;
    }
    return twin_rows_left(job, sub, b->row_ok, b->per_row, want);
}

/* The skip ops' backward: the block's bounds from their state (cli_colsums.bstate_rows) for every
   needed dtype at once (the twin on the rounded sums is shared by the dtypes).  Where the blocks
   cannot decide, out->serial. */
static int block_bstate(const cli_job *job, const cli_job *sub, size_t ib, rows_bufs *b,
                        const cols_state *cst, double *const *want, block_result *out)
{
    double *bounds[RN_NDTYPES][CLI_MAX_IO] = {{0}};
    for (int t = 0; t < RN_NDTYPES; t++)
        for (int k = 0; b->need[t] && k < job->op->noutputs; k++)
            bounds[t][k] = b->bound[t][k].data;
    int k = job->op->colsums->bstate_rows(cst->bst, sub, thread_index(), ib,
                                          bounds, (const double *const *)want);
    if (k != CLI_BOUND_WHOLE)
        return k;
    out->serial = 1;
    return RN_TWIN_OK;
}

/* One block (block number ib): its inputs and actuals, the twin, the bounds, the comparison of
   each actual, the tier's rows.  scan_only: the inputs' check alone (a failure is already
   known).  cst: the norms' backward's shared state (NULL for other ops). */
static void check_block(const cli_job *job, size_t ib, size_t r0, size_t nr, rows_bufs *b,
                        cli_stat_rows *st, const cols_state *cst, const cli_check_result *r,
                        int scan_only, block_result *out)
{
    cli_job sub;
    if (block_job(job, r0, nr, b, &sub, out) || block_inputs_exact(job, &sub, r0, r->cd, out) ||
        scan_only)
        return;
    const double *got[CLI_MAX_IO];
    if (block_actuals(job, r0, nr, b, got, out))
        return;
    double *want[CLI_MAX_IO], *bound[CLI_MAX_IO];
    for (int k = 0; k < job->op->noutputs; k++)
        want[k] = b->want[k].data;
    out->what = "certified twin";
    int kx = cli_input_index(job->op, "x"); /* the twin's row moments, reused by the bound */
    if (kx >= 0)
        rn_fast_memo_begin(sub.in[kx].data, sub.in[kx].count);
    out->status = cst ? block_twin_cols(job, &sub, b, cst, want, out)
                      : job->op->twin(&sub, RN_F64, want);
    if (cst && cst->bst && out->status == RN_TWIN_OK && !out->serial) {
        out->what = "error bound";
        out->status = block_bstate(job, &sub, ib, b, cst, want, out);
    }
    for (int t = 0; t < RN_NDTYPES && out->status == RN_TWIN_OK && !out->serial &&
                    !(cst && cst->bst); t++) {
        if (!b->need[t])
            continue;
        for (int k = 0; k < job->op->noutputs; k++)
            bound[k] = b->bound[t][k].data;
        out->what = "error bound";
        out->status = cst ? job->op->colsums->bound_rows(&sub, r->cd, (rn_dtype)t, bound,
                                                         cst->cs[t] + (ib + 1) * cst->ns,
                                                         cst->cf[t] + (ib + 1) * cst->nf)
                          : job->op->bound(&sub, r->cd, (rn_dtype)t, bound);
    }
    rn_fast_memo_end();
    if (out->status != RN_TWIN_OK || out->serial)
        return;
    for (int m = 0; m < job->nactual && !out->serial; m++) {
        int k = job->act_index[m];
        size_t w = b->per_row[k], lo = r0 * w;
        if (!w)
            continue; /* a sum over rows: compared after the blocks */
        out->serial = summarize_span(got[m], want[k], b->bound[r->sum[m].out][k].data, NULL, lo,
                                     lo + nr * w, lo, r->sum[m].out, &out->sum[m], &out->err[m]);
    }
    if (!out->serial && st &&
        cli_stat_rows_add(st, &sub, r0, r, got, (const double *const *)want)) {
        out->what = "statistical tier";
        out->status = RN_TWIN_NOMEM;
    }
}

/* The norms' backward's blocks are their bound's partition (a 64th of the rows, at least 16), a
   block's buffers as large as a 64th of the tensor: check_block takes them a chunk of
   ROWS_BLOCK_ELEMS values at a time (C rows; RESNORM_CHECK_ROWS=K: K rows, for tests), in row
   order -- the bound's slots, the column accumulators and the summaries see the same rows in the
   same order.  C for job's blocks of R rows (R itself for the other ops). */
static size_t chunk_rows(const cli_job *job, size_t R)
{
    long k = check_rows_env();
    size_t C = k > 0 ? (size_t)k : ROWS_BLOCK_ELEMS / (job->n ? job->n : 1);
    return !job->op->colsums ? R : C == 0 ? 1 : C < R ? C : R;
}

/* Block ib (rows r0 .. r0 + nr) by chunks of C rows: check_block on each, their summaries merged
   in row order into out's (as merge_blocks merges the blocks'); the first failure ends it. */
static void check_block_chunks(const cli_job *job, size_t ib, size_t r0, size_t nr, size_t C,
                               rows_bufs *b, cli_stat_rows *st, const cols_state *cst,
                               const cli_check_result *r, int scan_only, block_result *out)
{
    summary_t sum[CLI_MAX_IO];
    double err[CLI_MAX_IO];
    for (size_t c0 = 0; c0 < nr; c0 += C) {
        block_result part = {sum, err, NULL, NULL, RN_TWIN_OK, 0, NULL};
        memset(sum, 0, sizeof sum), memset(err, 0, sizeof err);
        check_block(job, ib, r0 + c0, nr - c0 < C ? nr - c0 : C, b, st, cst, r, scan_only,
                    &part);
        out->read_err = part.read_err, out->input_err = part.input_err;
        out->status = part.status, out->serial = part.serial, out->what = part.what;
        if (part.read_err || part.input_err || part.status != RN_TWIN_OK || part.serial)
            return;
        for (int m = 0; m < job->nactual; m++) {
            if (c0 == 0)
                out->sum[m] = sum[m], out->err[m] = err[m];
            else
                summary_merge(&out->sum[m], &sum[m]), out->err[m] = fmax(out->err[m], err[m]);
        }
    }
}

/* The blocks' results merged in row order into r: the failures first, in the order a
   whole-tensor check meets them (every file read; then the inputs' values, x before the
   parameters, whose failure is `param_err`; then the twin and the bounds, row by row).  0, 1 for
   the serial scan, or an exit code after a message. */
static int merge_blocks(const cli_job *job, const block_result *res, size_t nb,
                        const char *param_err, cli_check_result *r)
{
    for (size_t i = 0; i < nb; i++)
        if (res[i].read_err) {
            cli_error(job->verb, "%s", res[i].read_err);
            return RN_EXIT_USAGE;
        }
    for (size_t i = 0; i < nb; i++)
        if (res[i].input_err) {
            cli_error(job->verb, "%s", res[i].input_err);
            return RN_EXIT_USAGE;
        }
    if (param_err) {
        cli_error(job->verb, "%s", param_err);
        return RN_EXIT_USAGE;
    }
    for (size_t i = 0; i < nb; i++) {
        if (res[i].status != RN_TWIN_OK)
            return cli_twin_status(job, res[i].status, res[i].what);
        if (res[i].serial)
            return 1;
    }
    r->pass = 1;
    for (int m = 0; m < job->nactual; m++) {
        summary_t *s = &r->sum[m];
        rn_dtype od = s->out;
        double err = res[0].err[m];
        *s = res[0].sum[m];
        for (size_t i = 1; i < nb; i++) {
            summary_merge(s, &res[i].sum[m]);
            err = fmax(err, res[i].err[m]);
        }
        s->out = od;
        s->count = job->act[m].count;
        s->max_ulps_of_scale = err / rn_ulp(s->max_abs_want, od);
        if (s->mismatches)
            r->pass = 0;
    }
    return 0;
}

static block_result *block_results_new(size_t nb, int nactual, summary_t **sums, double **errs)
{
    size_t na = nactual > 0 ? (size_t)nactual : 1;
    block_result *res = calloc(nb, sizeof *res);
    *sums = calloc(nb * na, sizeof **sums);
    *errs = calloc(nb * na, sizeof **errs);
    if (!res || !*sums || !*errs) {
        free(res), free(*sums), free(*errs);
        *sums = NULL, *errs = NULL;
        return NULL;
    }
    for (size_t i = 0; i < nb; i++)
        res[i].sum = *sums + i * na, res[i].err = *errs + i * na;
    return res;
}

/* The twin's per-row outputs of the nr rows of sub (a step of the tier's second pass; want:
   their outputs, per_row[q] values a row) by chunks of C rows on every thread, as the blocks get
   them: the fast path (its column terms into cols, not read), a row it leaves from the twin on
   that row alone, a chunk it declines from the twin on the chunk.  0 or RN_TWIN_*. */
static int twin_by_chunks(const cli_job *job, const cli_job *sub, double *const *want,
                          const size_t *per_row, size_t C, norm_cols *cols, int threads)
{
    size_t n = job->n;
    long nc = (long)((sub->rows + C - 1) / C);
    int rc = RN_TWIN_OK;
#pragma omp parallel for schedule(dynamic, 1) num_threads(threads)
    for (long q = 0; q < nc; q++) {
        size_t c0 = (size_t)q * C, cn = sub->rows - c0 < C ? sub->rows - c0 : C;
        cli_job s2;
        cli_rows_job(sub, c0, cn, &s2);
        double *w[CLI_MAX_IO] = {0}, *sums = malloc((CLI_MAX_IO * n + 1) * sizeof *sums);
        unsigned char *ok = malloc(cn);
        for (int k = 0; sums && k < job->op->noutputs; k++) /* a sum over rows: scratch */
            w[k] = per_row[k] ? want[k] + c0 * per_row[k] : sums + (size_t)k * n;
        int e = RN_TWIN_NOMEM;
        if (sums && ok) {
            int k = job->op->colsums->rows(&s2, RN_F64, w, cols, thread_index(), ok);
            e = k == 1 ? RN_TWIN_OK
                : k == 2 ? twin_rows_left(job, &s2, ok, per_row, w)
                         : job->op->twin(&s2, RN_F64, w);
        }
        free(sums), free(ok);
        if (e) {
#pragma omp critical(resnorm_stat_twin)
            if (!rc)
                rc = e;
        }
    }
    return rc;
}

/* The tier's column tests: one more pass over the rows, in row order (x, dy, skip read again from
   their files for a lazy job), C rows at a time; with need_dx (dbias's test), the twin on the
   rows again for their exact dx, STAT_TWIN_ELEMS values at a time (their chunks on every thread:
   twin_by_chunks).  The tests take the rows on one thread, in row order (threads taking turns
   chunk by chunk, omp ordered, spun away more CPU than they saved on a busy machine).  0, -1 out
   of memory, or an exit code after a message. */
enum { STAT_TWIN_ELEMS = 1 << 18 };
static int stat_columns_pass(const cli_job *job, size_t C, cli_stat_rows *st,
                             const cli_check_result *r)
{
    int need_dx = cli_stat_cols_need_dx(st, job), kdx = 0;
    while (kdx < job->op->noutputs && strcmp(job->op->outputs[kdx], "dx"))
        kdx++; /* (dbias's ops have a dx) */
    size_t R = need_dx && STAT_TWIN_ELEMS / job->n > C ? STAT_TWIN_ELEMS / job->n : C;
    int threads = rn_threads_for(R * job->n);
    const cli_colsums *cs = job->op->colsums;
    norm_cols *cols = need_dx ? norm_cols_new(cs->ncols, cs->skip, job->n, threads) : NULL;
    rows_bufs b;
    int rc = rows_bufs_alloc(job, r, R, &b, need_dx ? BUFS_TWIN : BUFS_INPUTS) ||
                     (need_dx && !cols) ? -1 : 0;
    for (size_t r0 = 0; r0 < job->rows && !rc; r0 += R) {
        cli_job sub;
        block_result br = {0};
        const double *wdx = NULL;
        if (block_job(job, r0, job->rows - r0 < R ? job->rows - r0 : R, &b, &sub, &br)) {
            cli_error(job->verb, "%s", br.read_err);
            free(br.read_err);
            rc = RN_EXIT_USAGE;
            break;
        }
        if (need_dx) {
            double *want[CLI_MAX_IO];
            for (int k = 0; k < job->op->noutputs; k++)
                want[k] = b.want[k].data;
            int tw = twin_by_chunks(job, &sub, want, b.per_row, C, cols, threads);
            if (tw != RN_TWIN_OK) {
                rc = cli_twin_status(job, tw, "certified twin");
                break;
            }
            wdx = want[kdx];
        }
        if (cli_stat_cols_add(st, &sub, r0, r, wdx))
            rc = -1;
    }
    norm_cols_free(cols);
    rows_bufs_free(&b);
    return rc;
}

/* The norms' backward after the blocks: the sums' exact values certified from the merged
   columns (the exact column's undecided elements summed exactly), their bounds from the slots
   (the skip ops': from their state), the comparison of their actuals (the whole-tensor path's
   summary, in place of the blocks' empty one), then the tier's column tests in one more pass over
   the rows (stat_columns_pass, by chunks of C rows).  0, 1 where a sum is not certified (the
   whole-tensor path decides), or an exit code after a message. */
static int check_columns(const cli_job *job, size_t C, const cols_state *cst,
                         cli_stat_rows *st, cli_check_result *r)
{
    size_t n = job->n, B = rn_bound_block_rows(job->rows), nb = (job->rows + B - 1) / B;
    rn_array want[CLI_MAX_IO] = {{0}}, bound[RN_NDTYPES][CLI_MAX_IO] = {{{0}}};
    double *w[CLI_MAX_IO] = {0};
    const cli_colsums *cs = job->op->colsums;
    size_t *und = malloc((n + 1) * sizeof *und), nund = 0; /* the exact column's undecided */
    int kex = -1, rc = !und ? -1 : norm_cols_merge(cst->cols) ? 0 : 1;
    for (int k = 0; k < job->op->noutputs && !rc; k++) {
        if (!cli_column_output(job, k))
            continue;
        rc = block_alloc(&want[k], n) ? -1 : 0;
        for (size_t i = 0; i < n && !rc; i++) {
            if (norm_cols_value(cst->cols, cs->col[k], i, RN_F64, &want[k].data[i]))
                continue;
            if (cs->col[k] == cs->exact_col && cs->exact_input >= 0)
                kex = k, und[nund++] = i;
            else
                rc = 1;
        }
        w[k] = want[k].data;
    }
    if (!rc && nund) { /* (undecided: a sum of f32 values is a tie of binary64 in about one column
                          of 4096 at 4096 rows, its bits spanning more than 53) */
        int in = cs->exact_input;
        npy_reader rd = job->in_rd[in];
        rc = cli_exact_column_sums(job, job->in[in].data, &rd, job->rows, C, und, nund, RN_F64,
                                   want[kex].data);
    }
    free(und);
    for (int t = 0; t < RN_NDTYPES && !rc; t++) {
        double *o[CLI_MAX_IO] = {0};
        for (int k = 0; cst->need[t] && k < job->op->noutputs && !rc; k++)
            if (w[k])
                rc = block_alloc(&bound[t][k], n) ? -1 : 0, o[k] = bound[t][k].data;
        if (!cst->need[t] || rc)
            continue;
        if (!cst->bst) {
            job->op->colsums->bound_cols(job, r->cd, (rn_dtype)t, o, cst->cs[t], cst->cf[t], nb);
            continue;
        }
        int k = job->op->colsums->bstate_cols(cst->bst, job, (rn_dtype)t, o,
                                              (const double *const *)w);
        rc = k == CLI_BOUND_WHOLE ? 1
           : k == RN_TWIN_NOMEM   ? -1
                                  : cli_twin_status(job, k, "error bound");
    }
    for (int m = 0; m < job->nactual && !rc; m++) {
        int k = job->act_index[m];
        rn_dtype od = r->sum[m].out;
        if (!w[k])
            continue;
        summarize(job->act[m].data, w[k], bound[od][k].data, NULL, n, od, &r->sum[m]);
        r->sum[m].out = od;
        if (r->sum[m].mismatches)
            r->pass = 0;
    }
    cli_phase("columns");
    if (!rc && st && cli_stat_cols_wanted(st, job)) {
        rc = cli_stat_cols_begin(st, job, (const double *const *)w) ? -1 : 0;
        if (!rc)
            rc = stat_columns_pass(job, C, st, r);
        cli_phase("stat columns");
    }
    if (rc < 0) {
        cli_error(job->verb, "out of memory");
        rc = RN_EXIT_INTERNAL;
    }
    for (int k = 0; k < CLI_MAX_IO; k++) {
        rn_array_free(&want[k]);
        for (int t = 0; t < RN_NDTYPES; t++)
            rn_array_free(&bound[t][k]);
    }
    return rc;
}

/* The norms' backward's shared state for nb blocks on `threads` threads; -1 out of memory. */
static int cols_state_new(const cli_job *job, const cli_check_result *r, size_t nb, int threads,
                          cols_state *cst)
{
    const cli_colsums *cs = job->op->colsums;
    size_t w = job->n ? job->n : 1;
    memset(cst, 0, sizeof *cst);
    cst->ns = (size_t)cs->bound_sums * w, cst->nf = (size_t)cs->bound_flags * w;
    if (!(cst->cols = norm_cols_new(cs->ncols, cs->skip, job->n, threads)))
        return -1;
    for (int m = 0; m < job->nactual; m++)
        cst->need[r->sum[m].out] = 1;
    if (cs->bstate_new)
        return (cst->bst = cs->bstate_new(job, r->cd, cst->need, threads)) ? 0 : -1;
    for (int t = 0; t < RN_NDTYPES; t++) {
        if (!cst->need[t])
            continue;
        cst->cs[t] = calloc((nb + 1) * cst->ns, sizeof *cst->cs[t]);
        cst->cf[t] = calloc((nb + 1) * cst->nf, 1);
        if (!cst->cs[t] || !cst->cf[t])
            return -1;
    }
    return 0;
}

static void cols_state_free(const cli_job *job, cols_state *cst)
{
    norm_cols_free(cst->cols);
    for (int t = 0; t < RN_NDTYPES; t++)
        free(cst->cs[t]), free(cst->cf[t]);
    if (cst->bst)
        job->op->colsums->bstate_free(cst->bst);
}

/* The check by blocks of R rows.  param_err: a parameter input's value the compute dtype cannot
   hold (NULL: none), reported unless a lazily read x fails first (then the blocks only read and
   check x).  1 if the whole-tensor path must decide (a NaN bound; the norms' backward: a block
   the fast path did not take, a sum not certified), else 0 or an exit code after a message. */
static int check_by_rows(const cli_job *job, rn_dtype d, size_t R, const char *param_err,
                         cli_check_result *r)
{
    for (int m = 0; m < job->nactual; m++)
        r->sum[m].out = cli_coarser_dtype(job->act[m].dtype, d);
    size_t nb = (job->rows + R - 1) / R, C = chunk_rows(job, R);
    int threads = rn_threads_for(job->rows * job->n);
    summary_t *sums = NULL;
    double *errs = NULL;
    cols_state cst_ = {0}, *cst = job->op->colsums ? &cst_ : NULL;
    block_result *res = block_results_new(nb, job->nactual, &sums, &errs);
    cli_stat_rows *st = res && !param_err ? cli_stat_rows_begin(job, r) : NULL;
    int nomem = !res || (!st && !param_err) ||
                (cst && cols_state_new(job, r, nb, threads, cst));
    long NB = (long)nb;
    long first_fail = NB; /* blocks after a failed one cannot change the report: skipped */
    if (!nomem) {
#pragma omp parallel num_threads(threads)
        {
            rows_bufs b;
            int ok = rows_bufs_alloc(job, r, C, &b, BUFS_CHECK) == 0;
#pragma omp for schedule(dynamic, 1)
            for (long i = 0; i < NB; i++) {
                size_t r0 = (size_t)i * R;
                if (i > __atomic_load_n(&first_fail, __ATOMIC_RELAXED))
                    continue;
                if (!ok) {
                    res[i].status = RN_TWIN_NOMEM, res[i].what = "check by blocks of rows";
                    continue;
                }
                check_block_chunks(job, (size_t)i, r0, job->rows - r0 < R ? job->rows - r0 : R, C,
                                   &b, st, cst, r, param_err != NULL, &res[i]);
                long cur = __atomic_load_n(&first_fail, __ATOMIC_RELAXED);
                if (res[i].read_err || res[i].input_err || res[i].status != RN_TWIN_OK ||
                    res[i].serial)
                    while (i < cur && !__atomic_compare_exchange_n(&first_fail, &cur, i, 1,
                                                                   __ATOMIC_RELAXED,
                                                                   __ATOMIC_RELAXED))
                        ;
            }
            rows_bufs_free(&b);
        }
    }
    cli_phase("blocks");
    int rc;
    if (nomem) {
        cli_error(job->verb, "out of memory");
        rc = RN_EXIT_INTERNAL;
    } else {
        rc = merge_blocks(job, res, first_fail < NB ? (size_t)first_fail + 1 : nb, param_err, r);
        if (!rc && cst)
            rc = check_columns(job, C, cst, st, r);
        if (!rc)
            cli_stat_rows_end(st, job, r);
    }
    if (cst)
        cols_state_free(job, cst);
    for (size_t i = 0; res && i < nb; i++)
        free(res[i].read_err), free(res[i].input_err);
    cli_stat_rows_free(st);
    free(res), free(sums), free(errs);
    return rc;
}

int cli_check_job(cli_job *job, rn_dtype d, cli_check_result *r)
{
    memset(r, 0, sizeof *r);
    r->d = d;
    r->cd = rn_compute_dtype(d);
    int bad;
    char msg[1024];
    inputs_exact_in(job, r->cd, &bad, msg, sizeof msg);
    /* a lazily read input before the bad one (x, input 0) is checked first, block by block */
    if (bad >= 0 && !(job->lazy && !job->in[0].data)) {
        cli_error(job->verb, "%s", msg);
        return RN_EXIT_USAGE;
    }
    cli_phase("inputs");
    int rc = 0;
    size_t R = cli_check_by_rows(job);
    if (R) {
        rc = check_by_rows(job, d, R, bad >= 0 ? msg : NULL, r);
        if (rc != 1)
            return rc;
        if (job->lazy) { /* the whole-tensor path needs every value, which was not kept */
            if ((rc = cli_load_rest(job)) != 0)
                return rc;
            inputs_exact_in(job, rn_compute_dtype(d), &bad, msg, sizeof msg);
            if (bad >= 0) {
                cli_error(job->verb, "%s", msg);
                return RN_EXIT_USAGE;
            }
        }
        memset(r, 0, sizeof *r); /* a NaN bound: the whole-tensor path's serial scan decides */
        r->d = d;
        r->cd = rn_compute_dtype(d);
        rc = 0;
    }
    /* The bound of each output for (compute dtype, that output's final rounding): one run of the
       op's bound per distinct output dtype (an f64 graph may return Mean/InvStdDev in f32).
       Under --allow ftz, the same again on the inputs with their subnormals flushed. */
    rn_array want[2][CLI_MAX_IO] = {{{0}}}, bound[2][RN_NDTYPES][CLI_MAX_IO] = {{{{0}}}};
    int have[2][RN_NDTYPES] = {{0}}, nj = 1;
    cli_job fj;
    const cli_job *jobs[2] = {job, &fj};
    if (job->allow_ftz) {
        long nf = flushed_job(job, r->cd, &fj);
        if (nf < 0) {
            free_flushed(job, &fj);
            cli_error(job->verb, "out of memory");
            return RN_EXIT_INTERNAL;
        }
        r->ftz_inputs = (int)(nf > INT_MAX ? INT_MAX : nf);
        nj = nf > 0 ? 2 : 1;
        if (nf == 0)
            free_flushed(job, &fj);
    }
    cli_phase("inputs");
    for (int j = 0; j < nj && !rc; j++)
        rc = cli_run_twin(jobs[j], RN_F64, want[j]);
    cli_phase("twin");
    r->pass = 1;
    for (int m = 0; !rc && m < job->nactual; m++) {
        int k = job->act_index[m];
        rn_dtype od = cli_coarser_dtype(job->act[m].dtype, d);
        for (int j = 0; j < nj && !rc; j++)
            if (!have[j][od] && !(rc = cli_run_bound(jobs[j], r->cd, od, bound[j][od])))
                have[j][od] = 1;
        cli_phase("bound");
        if (rc)
            break;
        double tiny = smallest_normal(od) > smallest_normal(r->cd) ? smallest_normal(od)
                                                                   : smallest_normal(r->cd);
        ftz_t ftz = {nj > 1 ? want[1][k].data : NULL, nj > 1 ? bound[1][od][k].data : NULL, tiny};
        summarize(job->act[m].data, want[0][k].data, bound[0][od][k].data,
                  job->allow_ftz ? &ftz : NULL, want[0][k].count, od, &r->sum[m]);
        r->sum[m].out = od;
        if (r->sum[m].mismatches)
            r->pass = 0;
        cli_phase("compare");
    }
    if (!rc)
        cli_stat_run(job, want[0], r); /* the statistical tier, reported apart (cli/stat_check.c) */
    cli_phase("stat");
    if (nj > 1)
        free_flushed(job, &fj);
    for (int j = 0; j < 2; j++)
        for (int k = 0; k < CLI_MAX_IO; k++) {
            rn_array_free(&want[j][k]);
            for (int t = 0; t < RN_NDTYPES; t++)
                rn_array_free(&bound[j][t][k]);
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
    if (job->allow_ftz) { /* only with --allow ftz: the report says what was allowed */
        json_t *al = json_array();
        json_array_append_new(al, json_string("ftz"));
        json_object_set_new(root, "allow", al);
        json_object_set_new(root, "ftz_inputs_flushed", json_integer(r->ftz_inputs));
    }
    for (int a = 0; a < job->op->nattrs; a++) /* effective values: eps as used, axis >= 0 */
        json_object_set_new(root, job->op->attrs[a].name,
                            job->op->attrs[a].kind == CLI_ATTR_INT
                                ? json_integer((json_int_t)job->attr_value[a])
                            : job->op->attrs[a].kind == CLI_ATTR_ENUM
                                ? json_string(job->attr_str[a] ? job->attr_str[a] : "")
                                : json_real(job->attr_value[a]));
    json_t *outs = json_object();
    for (int m = 0; m < job->nactual; m++) {
        const summary_t *s = &sum[m];
        const rn_array *a = &job->act[m];
        json_t *o = json_object();
        json_object_set_new(o, "file", json_string(job->act_path[m]));
        json_object_set_new(o, "dtype", json_string(rn_dtype_name(s->out)));
        json_object_set_new(o, "count", json_integer((json_int_t)s->count));
        json_object_set_new(o, "mismatches", json_integer((json_int_t)s->mismatches));
        json_object_set_new(o, "unconstrained", json_integer((json_int_t)s->unconstrained));
        if (job->allow_ftz)
            json_object_set_new(o, "ftz_accepted", json_integer((json_int_t)s->ftz_accepted));
        if (job->act_reshaped[m]) {
            char note[512], s1[160], s2[160];
            cli_shape_str(s1, sizeof s1, a->ndim, a->shape);
            cli_shape_str(s2, sizeof s2, job->exp_ndim[m], job->exp_shape[m]);
            snprintf(note, sizeof note, "shape %s, expected %s: the same number of elements, "
                     "compared in C order", s1, s2);
            json_object_set_new(o, "shape_note", json_string(note));
        }
        json_object_set_new(o, "max_ratio", jnum(s->max_ratio));
        json_object_set_new(o, "max_ulps", jnum(s->max_ulps));
        json_object_set_new(o, "max_ulps_index",
                            s->count ? jindex(s->max_ulps_i, a) : json_null());
        json_object_set_new(o, "max_ulps_want", jnum(s->count ? s->max_ulps_want : 0));
        json_object_set_new(o, "max_abs_want", jnum(s->max_abs_want));
        json_object_set_new(o, "max_err_ulps_of_max_abs_want", jnum(s->max_ulps_of_scale));
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
        else if (job->op->attrs[a].kind == CLI_ATTR_ENUM)
            printf(", %s %s", job->op->attrs[a].name, job->attr_str[a] ? job->attr_str[a] : "");
        else
            printf(", %s %.17g", job->op->attrs[a].name, job->attr_value[a]);
    }
    printf("\n");
    printf("tolerance: %s (per-element a-priori bound, %s)\n", job->op->tolerance_doc,
           job->op->bound_src);
    if (job->allow_ftz)
        printf("allow ftz: subnormal inputs may be flushed to zero (%d of them here) and subnormal "
               "results may be 0\n", r->ftz_inputs);
    for (int m = 0; m < job->nactual; m++) {
        const summary_t *s = &sum[m];
        const rn_array *a = &job->act[m];
        char ib[160];
        index_str(ib, sizeof ib, s->max_ratio_i, a);
        char od[40] = "";
        if (s->out != d)
            snprintf(od, sizeof od, " (rounded to %s)", rn_dtype_name(s->out));
        char scale[256];
        scale_note(scale, sizeof scale, s, a);
        printf("  %-7s %s%s: %zu elements, %zu mismatches, max err/bound %.3g (at %s), "
               "max err %.3g ulp%s\n", job->op->outputs[job->act_index[m]], job->act_path[m], od,
               s->count, s->mismatches, s->max_ratio, s->count ? ib : "-", s->max_ulps, scale);
        for (int j = 0; j < s->nworst; j++) {
            const worst_t *w = &s->worst[j];
            index_str(ib, sizeof ib, w->i, a);
            /* the absolute error and the bound beside the ratios: against an exact 0 the ulps
               count is of ulp(0), and a bound of one subnormal (the exact value required) makes
               err/bound ~1e293; both are true and say little alone */
            double err = fabs(w->got - w->want);
            int finite = isfinite(err) && isfinite(w->ratio) && w->ratio > 0;
            char eb[96] = "";
            if (finite)
                snprintf(eb, sizeof eb, "err %.3g (%.3g ulp), bound %.3g", err, w->ulps,
                         err / w->ratio);
            else
                snprintf(eb, sizeof eb, "err %.3g ulp", w->ulps);
            printf("    MISMATCH %s%s: got %.*g, want %.17g, %s, err/bound %.3g\n",
                   job->op->outputs[job->act_index[m]], ib, digits_of(a->dtype), w->got,
                   w->want, eb, w->ratio);
        }
        if (job->act_reshaped[m]) {
            char s1[160], s2[160];
            cli_shape_str(s1, sizeof s1, a->ndim, a->shape);
            cli_shape_str(s2, sizeof s2, job->exp_ndim[m], job->exp_shape[m]);
            printf("    note: shape %s, expected %s: the same number of elements, compared in C "
                   "order\n", s1, s2);
        }
        if (s->ftz_accepted)
            printf("    %zu elements accepted only under --allow ftz (the result with subnormal "
                   "inputs or results flushed to zero)\n", s->ftz_accepted);
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
    cli_phase(NULL);
    rc = cli_load_check(&job);
    cli_phase("load");
    if (rc) {
        cli_job_free(&job);
        return rc;
    }
    rn_dtype d = job.have_dtype ? job.dtype : cli_default_dtype(&job);
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
    cli_phase("report");
    cli_job_free(&job);
    cli_phase("free");
    if (rc)
        return rc;
    return cli_check_exit(&res);
}
