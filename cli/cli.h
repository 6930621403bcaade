/* Internals of the `resnorm` command shared by cli/main.c, cli/args.c, cli/eval.c, cli/check.c and
 * the op families (cli/op_<family>.c).  The command's user interface is documented in specs/cli.md;
 * keep the two in step.
 *
 * The op registry.  An op family plugs in with one table entry (cli_op) per op: its name, inputs
 * (each required or optional), attributes (name, default text, kind), outputs, and four adaptors:
 *   prepare       validates the loaded inputs' shapes and the attributes, derives the row view;
 *   output_shape  the shape of each output, from the loaded inputs;
 *   twin          the certified MPFR twin, rounded once to a dtype;
 *   bound         the a-priori error bound of a correct implementation (for `check`).
 * The family (cli_family) holds what its ops share: the attribute help of `eval --help` and the
 * golden cases (its generator, cli/golden.h).  The generic machinery (parsing, loading, publishing,
 * the checker's report) never names an op. */
#ifndef RESNORM_CLI_H
#define RESNORM_CLI_H

#include <stddef.h>

#include "npy.h"
#include "block_bound.h"
#include "stat_tier.h"

#define RN_VERSION_STRING "resnorm 0.1.0"

/* Exit codes (specs/cli.md). */
enum { RN_EXIT_OK = 0, RN_EXIT_MISMATCH = 1, RN_EXIT_USAGE = 2, RN_EXIT_INTERNAL = 3,
       RN_EXIT_STAT = 4 /* check: no mismatch, but the statistical tier flags (--stat=fail) */ };

/* Inputs or outputs of one op: the block stack (cli/op_block.c) has up to 12 layers of 16 inputs
   (12 parameters, 4 dropout masks) and 147 outputs. */
#define CLI_MAX_IO 200
#define CLI_MAX_ATTRS 8
/* Help texts list at most this many inputs / outputs of an op (then "... (N inputs)"). */
#define CLI_HELP_INPUTS 20

typedef struct cli_job cli_job;
struct golden_ctx;

/* Attribute kinds: decimal TEXT (eps: kept as text, rounded once by the family to its eps_dtype),
   INT (axis, offset: a base-10 integer within [min, max]) and ENUM (eps_dtype: one word of
   `choices`). */
typedef enum { CLI_ATTR_DECIMAL, CLI_ATTR_INT, CLI_ATTR_ENUM } cli_attr_kind;

typedef struct {
    const char *name;
    const char *def;           /* default, as text (NULL: resolved by the op's prepare) */
    cli_attr_kind kind;
    long min, max;             /* CLI_ATTR_INT: accepted range at parse time */
    const char *choices;       /* CLI_ATTR_ENUM: the accepted words, space-separated */
} cli_attr;

/* The eps_dtype attribute of every op with an eps: which format eps's text is rounded to. */
#define CLI_EPS_DTYPE_ATTR {"eps_dtype", NULL, CLI_ATTR_ENUM, 0, 0, "f32 f64 input"}

typedef struct {
    const char *name;          /* "layernorm": golden/<name>/..., ids "<op>/<case>" */
    /* Paragraph of `resnorm eval --help` on the family's attributes and shapes ("" if none). */
    const char *eval_help;
    /* Generates the family's golden cases (files and manifest entries); 0 or -1 (message printed). */
    int (*golden)(struct golden_ctx *G);
    /* Flags the family's golden cases use, described once in the manifest's notes (NULL-ended
       pairs flag, text; a flag already described by an earlier family is not repeated). */
    const char *const (*flags)[2];
} cli_family;

typedef struct {
    const char *name;
    const char *summary;
    const cli_family *family;
    int ninputs;
    const char *inputs[CLI_MAX_IO];
    int optional[CLI_MAX_IO];  /* 1: the input may be omitted (its array is then empty) */
    int nattrs;
    cli_attr attrs[CLI_MAX_ATTRS];
    int noutputs;
    const char *outputs[CLI_MAX_IO];
    const char *tolerance_doc; /* where the bound is derived: "specs/error-analysis.md" */
    const char *bound_src;     /* the code that evaluates it: "ref/layernorm_bound.c" */
    const char *void_note;     /* where the bound is +Inf (unconstrained), and why */
    /* Check the loaded inputs (shapes) and attributes, set job->rows, n, ax, eps and the
       effective attribute values; 0 or an exit code after a message. */
    int (*prepare)(cli_job *job);
    /* *ndim = -1: output k is absent for these inputs (a stack layer beyond the given ones):
       not computed, not written, not checkable. */
    void (*output_shape)(const cli_job *job, int k, int *ndim, size_t *shape);
    /* Certified outputs rounded once to `out`, into outs[k] (count elements each, allocated by the
       caller with output_shape); returns RN_TWIN_* (ref/layernorm_mpfr.h). */
    int (*twin)(const cli_job *job, rn_dtype out, double *const *outs);
    /* Per-element bound on |got - want| for an implementation computing in `compute` and rounding
       its outputs to `out` (want: exact rounded to f64); returns RN_TWIN_*. */
    int (*bound)(const cli_job *job, rn_dtype compute, rn_dtype out, double *const *bounds);
    /* Optional (NULL: the op's statistical tier is ref/stat_tier.c's, or none): the per-element
       bound of the "graph" statistical tier (errors inside sums combined as independent, λ applied
       once: specs/error-analysis-block.md §5), same arguments as bound. */
    int (*stat_bound)(const cli_job *job, rn_dtype compute, rn_dtype out, double *const *bounds);
    /* Optional (NULL: every output is always computed): 1 if output k may be left out of a check
       that does not compare it -- twin and bound then see a NULL pointer for it and evaluate
       nothing of it.  The block's weight matrices' gradients: 7 M values per layer at GPT-2 width,
       leaves of the graph, most of the backward's certification and bound cost. */
    int (*skippable)(const cli_job *job, int k);
    /* How `eval` may stream the op (cli/stream.c): read its inputs, run its twin and write its
       outputs one block of rows at a time, so that memory is one block's, not the tensor's.
       CLI_WHOLE (0, the default): the whole tensor at once.  CLI_ROWWISE_ROWS: the twin computes
       row r of every output (y, sum: n values; mean, rstd: one) from row r of the inputs shaped
       like x (x, skip) and the shared parameters (gamma, beta, bias) alone, so a sub-job of rows
       [r0, r1) gives those rows bit for bit.  CLI_ROWWISE_ELEMENTS: the same with single elements
       (the residual add, which prepare views as one row of count elements).  Set only where the
       twin and its fast path have been read to hold this (the comment at each op says why); never
       on an op mixing rows (attention).  CLI_ROWWISE_COLUMNS: the norms' backward -- the outputs
       shaped like x (dx, dskip) are per row as with CLI_ROWWISE_ROWS, and the others (dgamma,
       dbeta, dbias) are sums over all rows, accumulated block by block (`colsums`). */
    int rowwise;
    /* With CLI_ROWWISE_COLUMNS (NULL otherwise): how the sums over rows are kept across blocks. */
    const struct cli_colsums *colsums;
} cli_op;

enum { CLI_WHOLE = 0, CLI_ROWWISE_ROWS = 1, CLI_ROWWISE_ELEMENTS = 2, CLI_ROWWISE_COLUMNS = 3 };

/* The streaming of a norm's backward (cli/stream.c; ref/norm_fast.h: norm_cols).  col[k]: output
   k's column in the norm_cols (0 dgamma, 1 dbeta / RMSNorm's dbias, ...), or -1 for an output
   per row.  rows: the fast path on the rows of sub (a block), thread t: every per-row output
   (outs[k], col[k] < 0) certified and written, the rows' terms added to thread t's columns of c;
   1, or 0 when some output was not certified (the stream then runs the op's twin on the block
   and the whole tensor's twin for the sums); 2 when only the dx of some rows was not certified
   (row_ok[r] = 0, room for the block's rows): every row's terms are in the columns, and the
   stream runs the op's twin on the block for dx alone.  The sums' values are norm_cols_value's. */
struct norm_cols;
typedef struct cli_colsums {
    int ncols, skip; /* norm_cols_new's arguments (skip: x + skip is normalized) */
    int col[CLI_MAX_IO];
    /* The column (-1: none) that sums an input's values (LayerNorm's dbeta = sum_r dy_rj), and
       that input: where the accumulators leave it undecided (a tie, an exact zero), it is summed
       exactly in one more pass over that input's file (ref/norm_fast.h: exact_cols). */
    int exact_col, exact_input;
    int (*rows)(const cli_job *sub, rn_dtype out, double *const *outs, struct norm_cols *c,
                int t, unsigned char *row_ok);
    /* `check` by blocks of rows (cli/check.c; NULL: check takes the whole tensor): the op's
       bound a block at a time, on the partition of its whole-tensor bound (blocks of
       rn_bound_block_rows(job->rows) rows, ref/norm_fast.h).  bound_rows: the per-row outputs'
       bounds (outs[k], col[k] < 0) of the rows of sub, their column terms added into one slot
       (cs: bound_sums x n doubles, cf: bound_flags x n bytes, zeroed); 0 or RN_TWIN_*.
       bound_cols: slots 1..nb added in block order (into slot 0) and the sums' bounds (outs[k],
       col[k] >= 0) of the whole problem, job. */
    int bound_sums, bound_flags;
    int (*bound_rows)(const cli_job *sub, rn_dtype compute, rn_dtype out, double *const *outs,
                      double *cs, unsigned char *cf);
    void (*bound_cols)(const cli_job *job, rn_dtype compute, rn_dtype out, double *const *outs,
                       double *cs, unsigned char *cf, size_t nb);
    /* The skip ops' bound by blocks, in place of bound_rows / bound_cols (NULL for the others):
       its blocks share more than slots -- the twin on every rounded sum an implementation may form
       (ref/skip_backward_bound.h) -- and need the twin's own values.  bstate_new: the state of the
       whole problem `job` for the output dtypes need[d] != 0 (RN_NDTYPES flags) on `threads`
       threads (NULL: out of memory).  bstate_rows: block number b of the same partition (the rows
       of sub, thread t), the per-row outputs' bounds bounds[d][k] (col[k] < 0) for every needed
       d, given want[k], the twin's values of the block rounded to f64.  bstate_cols: after every
       block, once per needed dtype `out`, the sums' bounds bounds[k] (col[k] >= 0) given want[k],
       their certified values.  0, RN_TWIN_*, or CLI_BOUND_WHOLE: the whole-tensor check decides
       (what the blocks cannot give: e.g. a rounded sum that overflows). */
    void *(*bstate_new)(const cli_job *job, rn_dtype compute, const int *need, int threads);
    int (*bstate_rows)(void *st, const cli_job *sub, int t, size_t b,
                       double *(*bounds)[CLI_MAX_IO], const double *const *want);
    int (*bstate_cols)(void *st, const cli_job *job, rn_dtype out, double *const *bounds,
                       const double *const *want);
    void (*bstate_free)(void *st);
} cli_colsums;

enum { CLI_BOUND_WHOLE = -1 };

/* The registry (cli/args.c): every op, in help order. */
extern const cli_op *const cli_ops[];
extern const int cli_nops;
const cli_op *cli_find_op(const char *name);
/* The families, in golden order (each once). */
extern const cli_family *const cli_families[];
extern const int cli_nfamilies;

/* One parsed and loaded command line of `eval` or `check`. */
struct cli_job {
    const char *verb;          /* "eval" or "check": for messages */
    const cli_op *op;
    const char *in_path[CLI_MAX_IO]; /* NULL: an optional input not given */
    rn_array in[CLI_MAX_IO];   /* in the order of op->inputs */
    const char *attr_text[CLI_MAX_ATTRS]; /* as given; NULL: not given (default applies) */
    long attr_int[CLI_MAX_ATTRS];        /* CLI_ATTR_INT: as given, or the parsed default */
    /* set by prepare: the effective value of each attribute, as the checker reports it
       (CLI_ATTR_ENUM: attr_str, e.g. eps_dtype "f32" after resolving its default) */
    double attr_value[CLI_MAX_ATTRS];
    const char *attr_str[CLI_MAX_ATTRS];
    int have_dtype;
    rn_dtype dtype;
    const char *out_dir;       /* eval */
    int json;                  /* check */
    int allow_ftz;             /* check --allow ftz: accept what flushing subnormals would give */
    int stat_mode;             /* check: CLI_STAT_FAIL (default), CLI_STAT_WARN, CLI_STAT_OFF */
    int stat_given;            /* --stat was given (else: fail, or warn under --profile runtimes) */
    int nactual;
    int act_index[CLI_MAX_IO]; /* output index of each --actual, in command-line order */
    const char *act_path[CLI_MAX_IO];
    rn_array act[CLI_MAX_IO];
    /* set by cli_load: 1 if the actual's shape differs from the expected one beyond size-1
       dimensions while its element count is the same (compared element by element in C order,
       and the report says so); exp_ndim/exp_shape: the expected shape */
    int act_reshaped[CLI_MAX_IO];
    /* set by cli_load for check: 1 for an output that no --actual compares and the op may skip
       (op->skippable); cli_output_shape then calls it absent (not computed, not checkable) */
    int skip[CLI_MAX_IO];
    int exp_ndim[CLI_MAX_IO];
    size_t exp_shape[CLI_MAX_IO][RN_MAX_DIMS];
    /* set by cli_load_check when the check runs by blocks of rows (cli_check_by_rows): the
       per-row inputs (count rows * n) and the actuals are open files read a block at a time
       (their rn_array holds the header: dtype, shape, count; data NULL); fd -1 elsewhere */
    int lazy;
    npy_reader in_rd[CLI_MAX_IO], act_rd[CLI_MAX_IO];
    /* derived by prepare */
    int ax;                    /* normalized axis, 0 <= ax < ndim(x) (row view of input 0) */
    size_t rows, n;
    double eps;
};

/* Input k's values, or NULL when it is an optional input that was not given (a bias, a mask). */
static inline const double *cli_optional_in(const cli_job *job, int k)
{
    return job->in_path[k] ? job->in[k].data : NULL;
}

/* Index of attribute `name` of job's op, or -1. */
int cli_attr_index(const cli_op *op, const char *name);
/* The index of input `name` in op->inputs, or -1. */
int cli_input_index(const cli_op *op, const char *name);
/* The attribute's text: as given, or its default (NULL if it has none). */
const char *cli_attr_text(const cli_job *job, int a);
/* eps as real runtimes use it: its text rounded once to the format eps_dtype names -- f32, f64, or
   `input` (the dtype of x) -- by default f64 when x is f64, else f32 (PyTorch: `static_cast<acc_t>
   (eps)`; specs/golden-format.md, "eps").  Sets job->eps, attr_value[a_eps] and attr_str[a_epsdt];
   0 or an exit code after a message. */
int cli_resolve_eps(cli_job *job, int a_eps, int a_epsdt);
/* The default eps_dtype for inputs of dtype x: f64 for f64, else f32. */
rn_dtype cli_default_eps_dtype(rn_dtype x);
/* "f32", "f64" or "input" -> the format eps is rounded to for inputs of dtype x; -1 if unknown. */
int cli_eps_dtype_from_name(const char *s, rn_dtype x, rn_dtype *d);

/* Parse argv (argv[0] is the verb, argv[1..] its arguments). allow: which verb-specific options
   are valid. Returns 0 on success, -1 if help was requested (printed), or an exit code > 0 after
   printing a message. */
enum { CLI_ALLOW_OUT = 1, CLI_ALLOW_ACTUAL = 2 };
int cli_parse(cli_job *job, int argc, char **argv, int allow);
/* Read every input and actual file and check shapes, attributes and the dtype.
   Returns 0 or an exit code after printing a message. */
int cli_load(cli_job *job);
/* cli_load for `check`: where the check runs by blocks of rows, the per-row inputs and the actuals
   are left open (job->lazy) and read a block at a time; the same checks and messages. */
int cli_load_check(cli_job *job);
/* A lazy job (cli_load_check) read whole: every file still open read into its array and closed
   (job->lazy stays set: cli_job_free closes nothing twice).  The whole-tensor path's fallback of
   a check by blocks of rows.  0, or an exit code after a message. */
int cli_load_rest(cli_job *job);
/* Output k of the job's op is a sum over rows (cli_colsums: dgamma, dbeta, dbias): n values, not
   one block per row. */
int cli_column_output(const cli_job *job, int k);
/* Rows per block of the check by blocks of rows (cli/check.c) for this loaded or header-loaded
   job, or 0 where the whole-tensor check runs; cli_check_by_rows_op: whether the op and options
   allow it at all (LayerNorm, RMSNorm, the skip ops, forward and backward; no --allow ftz),
   before any input is read. */
size_t cli_check_by_rows(const cli_job *job);
int cli_check_by_rows_op(const cli_job *job);
/* cli_load's checks of the inputs (the same, in the same order, with the same messages) on their
   headers alone: job->in[k] gets each input's dtype and shape (data NULL), and rd[k] the open file
   (npy_open; fd -1 for an input not given; the caller closes them).  No actuals.  0 or an exit code
   after a message. */
int cli_load_headers(cli_job *job, npy_reader *rd);
void cli_job_free(cli_job *job);

/* Shape helpers for the families' prepare. */
int cli_same_shape(int na, const size_t *a, int nb, const size_t *b);

/* The shape output k of job's op has (eval writes it). */
void cli_output_shape(const cli_job *job, int k, int *ndim, size_t *shape);
/* Run the certified twin into outs[0..noutputs) (allocated here) rounded to `out`.
   Returns 0 or an exit code after printing a message. */
int cli_run_twin(const cli_job *job, rn_dtype out, rn_array *outs);

/* --profile NAME (check, golden run-check): sets the bounds' implementation profile
   (ref/bound_profile.h).  0, or -1 after a message naming the known profiles. */
int cli_set_profile(const char *verb, const char *name);
/* Run the op's a-priori bound for (compute, out) into bounds[0..noutputs) (allocated here). */
int cli_run_bound(const cli_job *job, rn_dtype compute, rn_dtype out, rn_array *bounds);

/* The message of a twin's or bound's status r (RN_TWIN_*, `what`: "certified twin", "error
   bound"): 0 for RN_TWIN_OK, else RN_EXIT_INTERNAL after the message. */
int cli_twin_status(const cli_job *job, int r, const char *what);
/* 1 if every output of the job's op is per row (rows x per_row[k] values) and the twin and the
   bound compute each row from that row alone (no parameter gradient summed over the rows, no
   attention across a sequence): they may then run on blocks of rows (sub-jobs). */
int cli_splits_by_rows(const cli_job *job);
/* Rows r0 .. r0 + nr of such a job as a job of its own (*sub): the inputs held in memory with
   x's rows x n values start at row r0, the others (gamma, beta, bias) are shared. */
void cli_rows_job(const cli_job *job, size_t r0, size_t nr, cli_job *sub);

/* Write files dir/<names[k]>.npy for k < n together: all or nothing (creates dir if missing).
   Returns 0 or an exit code after printing a message. */
int cli_publish(const char *dir, const char *const *names, const rn_array *arrays, int n);
/* cli_publish in steps, for a caller that writes its temporaries itself (the streaming eval):
   begin creates dir (recording the directories it creates) and refuses an output path that is not
   a regular file, before anything is computed (NULL after a message, *rc the exit code);
   set_tmp hands over output k's temporary, written next to cli_pub_dst(p, k); commit takes the
   directory's lock and puts every file in place, all or nothing (0, or an exit code after a
   message with every replaced file restored); end frees p and, when rc != 0, removes every
   temporary handed over and every directory begin created (rollback alone does that, and may be
   called from a memory-limit exit). */
typedef struct cli_pub cli_pub;
cli_pub *cli_pub_begin(const char *dir, const char *const *names, int n, int *rc);
const char *cli_pub_dst(const cli_pub *p, int k);
int cli_pub_set_tmp(cli_pub *p, int k, const char *tmp);
int cli_pub_commit(cli_pub *p);
void cli_pub_rollback(cli_pub *p);
void cli_pub_end(cli_pub *p, int rc);

/* "(2, 3)" */
void cli_shape_str(char *buf, size_t cap, int ndim, const size_t *shape);

/* Print "resnorm VERB: error: ..." on stderr. */
void cli_error(const char *verb, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The checker (cli/check.c), shared by `check` and `golden run-check`. */
#define CLI_WORST_MAX 5
typedef struct {
    size_t i;
    double got, want, ulps, ratio;
} cli_worst;
typedef struct {                /* one checked output */
    rn_dtype out;               /* its final rounding: the coarser of its file's dtype and d */
    size_t count, mismatches, unconstrained;
    size_t ftz_accepted;        /* --allow ftz: elements that pass only with subnormals flushed */
    double max_ratio, max_ulps; /* worst |got - want| / bound, and in ulps of the dtype at want */
    size_t max_ratio_i;
    /* An error in ulps at an exact value near 0 is large and says little (ulp(0) is the smallest
       subnormal): the report also gives where the largest ulps count is, the exact value there,
       and the largest error in ulps of the largest |exact| value of the output (its scale). */
    size_t max_ulps_i;
    double max_ulps_want, max_abs_want, max_ulps_of_scale;
    int nworst;
    cli_worst worst[CLI_WORST_MAX]; /* the worst mismatches by ratio */
} cli_summary;
/* The statistical tier's result (cli/stat_check.c, ref/stat_tier.h, specs/statistical-tier.md):
   per --actual, the tests run on it. */
enum { CLI_STAT_FAIL = 0, CLI_STAT_WARN = 1, CLI_STAT_OFF = 2 };
typedef struct {
    int mode;                   /* CLI_STAT_* */
    int flag;                   /* some test flags */
    int ntests[CLI_MAX_IO];
    st_test test[CLI_MAX_IO][ST_MAX_TESTS];
} cli_stat_result;
typedef struct {
    rn_dtype d, cd;             /* declared dtype (--dtype), its compute dtype */
    int ftz_inputs;             /* --allow ftz: input elements that are subnormal in cd */
    int pass;
    cli_summary sum[CLI_MAX_IO]; /* per --actual, in job->act order */
    cli_stat_result stat;
} cli_check_result;
/* Check a loaded job's actual outputs (inputs must be exact in the compute dtype of d): the
   implementation computes in rn_compute_dtype(d) and rounds each output to the coarser of d and
   the dtype of that output's file.  0, or an exit code after a message. */
int cli_check_job(cli_job *job, rn_dtype d, cli_check_result *r);
/* The declared dtype when --dtype is absent: the widest dtype among the --actual files. */
rn_dtype cli_default_dtype(const cli_job *job);
/* The coarser of two formats (larger unit roundoff; a half dtype beats f32 beats f64). */
rn_dtype cli_coarser_dtype(rn_dtype a, rn_dtype b);
/* Its comparison and statistical tier, given the twin's outputs rounded to f64 and the bounds. */
void cli_check_with(const cli_job *job, rn_dtype d, const rn_array *want, const rn_array *bound,
                    cli_check_result *r);
struct json_t;
/* Its JSON report (specs/cli.md), a new reference. */
struct json_t *cli_check_json(const cli_job *job, const cli_check_result *r);
/* 1 when an output's largest ulps count sits at an exact value far below the output's scale (an
   exact 0 above all: ulp(0) is the smallest subnormal), so that the count says little and reports
   give the error in ulps of the largest |exact| value instead (max_ulps_of_scale). */
int cli_ulps_below_scale(const cli_summary *s);

/* The statistical tier over a checked job (cli/stat_check.c): want holds the twin's outputs rounded
   to f64 (every output of the op).  Its report sections, and the mode's name ("fail", "warn",
   "off") and parser (0, or -1 if unknown). */
void cli_stat_run(const cli_job *job, const rn_array *want, cli_check_result *r);
/* The same tier over blocks of rows, for the ops it supports (cli_stat_rows_supported: the norms
   and the skip ops, forward and backward): begin after the outputs' dtypes are set in
   r->sum[m].out (NULL: out of memory); add each block, from any thread, blocks in any order (sub:
   the block's sub-job, rows r0 ..; got[m]: actual m's values of the block, want[k]: output k's
   exact values of the block; -1 out of memory) -- the per-row outputs' tests.  The sums over rows
   (dgamma, dbeta, dbias) are tested in a second pass, once their exact values are known:
   cols_begin (want[k]: output k's exact values, n of them; -1 out of memory), then cols_add for
   each block in row order, one at a time (want_dx: the block's exact dx, which dbias's test needs:
   cols_need_dx; else NULL); cols_wanted: whether any actual has such a test (else no second pass
   is needed).  end pools the rows into r->stat, the result cli_stat_run gives.  The rows'
   statistics are kept for the problem (a few words a row), so the second pass reuses them. */
typedef struct cli_stat_rows cli_stat_rows;
int cli_stat_rows_supported(const cli_job *job);
cli_stat_rows *cli_stat_rows_begin(const cli_job *job, const cli_check_result *r);
int cli_stat_rows_add(cli_stat_rows *s, const cli_job *sub, size_t r0,
                      const cli_check_result *r, const double *const *got,
                      const double *const *want);
int cli_stat_cols_begin(cli_stat_rows *s, const cli_job *job, const double *const *want);
int cli_stat_cols_add(cli_stat_rows *s, const cli_job *sub, size_t r0, const cli_check_result *r,
                      const double *want_dx);
int cli_stat_cols_wanted(const cli_stat_rows *s, const cli_job *job);
int cli_stat_cols_need_dx(const cli_stat_rows *s, const cli_job *job);
void cli_stat_rows_end(cli_stat_rows *s, const cli_job *job, cli_check_result *r);
void cli_stat_rows_free(cli_stat_rows *s);
void cli_stat_print(const cli_job *job, const cli_check_result *r);
void cli_stat_json(struct json_t *root, const cli_job *job, const cli_check_result *r);
const char *cli_stat_mode_name(int mode);
int cli_stat_mode_parse(const char *s, int *mode);
/* The exit code of a checked job: 1 a mismatch; else 4 if the statistical tier flags in mode fail;
   else 0. */
int cli_check_exit(const cli_check_result *r);

int cli_eval_main(int argc, char **argv);
/* eval of an op with op->rowwise, streaming (cli/stream.c): 1 if it applies to job (the op is
   rowwise and RESNORM_STREAM is not 0), and the run itself (after cli_parse; loads, computes and
   publishes; 0 or an exit code after a message, no output left on failure). */
int cli_stream_applies(const cli_job *job);
/* The exact column's undecided elements summed exactly (cli/stream.c; eval's stream, check by
   blocks of rows). */
int cli_exact_column_sums(const cli_job *job, const double *data, npy_reader *rd, size_t rows,
                          size_t R, const size_t *which, size_t k, rn_dtype out, double *dst);
int cli_eval_stream(cli_job *job);
int cli_check_main(int argc, char **argv);
/* RESNORM_TIMING=1: prints the wall time since the previous call, labelled `what`, on stderr
   (NULL: starts the clock).  Profiling only. */
void cli_phase(const char *what);
/* The same, summed: cli_phase_lap adds the time since the previous cli_phase or lap to *acc (NULL:
   restarts the clock), cli_phase_print prints it with a note ("" or e.g. " in 64 blocks"). */
typedef struct {
    double wall, cpu;
} cli_lap;
void cli_phase_lap(cli_lap *acc);
void cli_phase_print(const char *what, const cli_lap *acc, const char *note);
void cli_eval_help(void);
void cli_check_help(void);

/* The families (cli/op_<family>.c). */
extern const cli_family cli_family_layernorm;
extern const cli_op cli_op_layernorm, cli_op_layernorm_backward;
/* LayerNorm's shape checks and output shapes, shared by the families built on it. */
int cli_ln_prepare(cli_job *job);
void cli_ln_output_shape(const cli_job *job, int k, int *ndim, size_t *shape);
extern const cli_family cli_family_residual;
extern const cli_op cli_op_residual, cli_op_residual_backward;
extern const cli_family cli_family_skip_layernorm;
extern const cli_op cli_op_skip_layernorm, cli_op_skip_layernorm_backward;
extern const cli_family cli_family_rmsnorm;
extern const cli_op cli_op_rmsnorm, cli_op_rmsnorm_backward;
/* RMSNorm's prepare (LayerNorm's shapes, attrs eps, axis, offset) and its offset attribute. */
int cli_rms_prepare(cli_job *job);
int cli_rms_offset(const cli_job *job);
/* The skip ops' backward check by blocks of rows: one block's dx (= dskip) bound (cli_colsums'
   bstate_rows; cli/op_skip_layernorm.c, shared by skip_rmsnorm_backward). */
int cli_skip_bwd_bstate_rows(void *st, const cli_job *sub, int t, size_t b, double *(*o)[CLI_MAX_IO],
                             const double *const *want);
extern const cli_family cli_family_skip_rmsnorm;
extern const cli_op cli_op_skip_rmsnorm, cli_op_skip_rmsnorm_backward;
/* The block's sublayers (issue 8). */
extern const cli_family cli_family_linear;
extern const cli_op cli_op_linear, cli_op_linear_backward;
extern const cli_family cli_family_dropout;
extern const cli_op cli_op_dropout, cli_op_dropout_backward;
extern const cli_family cli_family_softmax;
extern const cli_op cli_op_softmax, cli_op_softmax_backward;
extern const cli_family cli_family_attention;
extern const cli_op cli_op_attention, cli_op_attention_backward;
extern const cli_family cli_family_ffn;
extern const cli_op cli_op_ffn, cli_op_ffn_backward;
/* The Transformer block and the stack (issue 9). */
extern const cli_family cli_family_block;
extern const cli_op cli_op_block, cli_op_block_backward, cli_op_stack, cli_op_stack_backward;
/* The "graph" statistical tier of the ops with a stat_bound (the block and the stack, attention,
   ffn; cli/stat_check.c, specs/error-analysis-block.md §5): every actual against the op's
   statistical bound (direction "graph"; flag: some element beyond it). */
void cli_graph_stat(const cli_job *job, const rn_array *want, cli_check_result *r);
/* The ffn forward's "act" test (cli/op_ffn.c, specs/error-analysis-ffn.md §10) on y: -1 for
   relu (no test), else RN_TWIN_*. */
int cli_ffn_act_test(const cli_job *job, rn_dtype compute, rn_dtype d, const double *got,
                     const double *want, ffn_act_result *res);

#endif
