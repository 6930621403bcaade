/* Internals of the `resnorm` command shared by cli/main.c, cli/args.c, cli/eval.c, cli/check.c.
 * The command's user interface is documented in specs/cli.md; keep the two in step. */
#ifndef RESNORM_CLI_H
#define RESNORM_CLI_H

#include <stddef.h>

#include "npy.h"

#define RN_VERSION_STRING "resnorm 0.1.0"

/* Exit codes (specs/cli.md). */
enum { RN_EXIT_OK = 0, RN_EXIT_MISMATCH = 1, RN_EXIT_USAGE = 2, RN_EXIT_INTERNAL = 3 };

#define CLI_MAX_IO 4

/* An op as the CLI sees it: named inputs (all required), named outputs. */
typedef struct {
    const char *name;
    const char *summary;
    int ninputs;
    const char *inputs[CLI_MAX_IO];
    int noutputs;
    const char *outputs[CLI_MAX_IO];
} cli_op;

const cli_op *cli_find_op(const char *name);
extern const cli_op cli_ops[];
extern const int cli_nops;

/* One parsed and loaded command line of `eval` or `check`. */
typedef struct {
    const char *verb;          /* "eval" or "check": for messages */
    const cli_op *op;
    const char *in_path[CLI_MAX_IO];
    rn_array in[CLI_MAX_IO];   /* in the order of op->inputs */
    const char *eps_text;      /* NULL: default "1e-5" */
    int have_axis;
    long axis;                 /* as given (may be negative) */
    int have_dtype;
    rn_dtype dtype;
    const char *out_dir;       /* eval */
    int json;                  /* check */
    int nactual;
    int act_index[CLI_MAX_IO]; /* output index of each --actual, in command-line order */
    const char *act_path[CLI_MAX_IO];
    rn_array act[CLI_MAX_IO];
    /* derived by cli_load */
    int ax;                    /* normalized axis, 0 <= ax < ndim(x) */
    size_t rows, n;
    double eps;
} cli_job;

/* Parse argv (argv[0] is the verb, argv[1..] its arguments). allow: which verb-specific options
   are valid. Returns 0 on success, -1 if help was requested (printed), or an exit code > 0 after
   printing a message. */
enum { CLI_ALLOW_OUT = 1, CLI_ALLOW_ACTUAL = 2 };
int cli_parse(cli_job *job, int argc, char **argv, int allow);
/* Read every input and actual file and check shapes, attributes and the dtype.
   Returns 0 or an exit code after printing a message. */
int cli_load(cli_job *job);
void cli_job_free(cli_job *job);

/* The shape output k of job's op has (eval writes it). */
void cli_output_shape(const cli_job *job, int k, int *ndim, size_t *shape);
/* Run the certified twin into outs[0..noutputs) (allocated here) rounded to `out`.
   Returns 0 or an exit code after printing a message. */
int cli_run_twin(const cli_job *job, rn_dtype out, rn_array *outs);
/* Run the lead's a-priori bound for (compute, out) into bounds[0..noutputs) (allocated here). */
int cli_run_bound(const cli_job *job, rn_dtype compute, rn_dtype out, rn_array *bounds);

/* Write files dir/<names[k]>.npy for k < n together: all or nothing (creates dir if missing).
   Returns 0 or an exit code after printing a message. */
int cli_publish(const char *dir, const char *const *names, const rn_array *arrays, int n);

/* "(2, 3)" */
void cli_shape_str(char *buf, size_t cap, int ndim, const size_t *shape);

/* Print "resnorm VERB: error: ..." on stderr. */
void cli_error(const char *verb, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

int cli_eval_main(int argc, char **argv);
int cli_check_main(int argc, char **argv);
void cli_eval_help(void);
void cli_check_help(void);

#endif
