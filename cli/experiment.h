/* `resnorm experiment NAME`: the seeds' experiments reproduced with certified numbers
 * (cli/experiment.c: dispatch, depth; cli/experiment_ln.c: layernorm-stats, trace).
 * Reference: specs/cli.md, "experiment". */
#ifndef RESNORM_EXPERIMENT_H
#define RESNORM_EXPERIMENT_H

#include <stdio.h>

int experiment_main(int argc, char **argv); /* argv[0] = "experiment" */
void experiment_help(void);

/* The two LayerNorm experiments (cli/experiment_ln.c); argv after NAME. */
int experiment_layernorm_stats(int argc, char **argv);
int experiment_trace(int argc, char **argv);

/* Shared by the experiments: --json / --help parsing of the argument list after NAME;
   returns 0, 1 when --help was printed, or RN_EXIT_USAGE (message printed). */
int experiment_flags_only(const char *name, int argc, char **argv, int *json);

/* The pre-LN vs post-LN stacks (cli/experiment_prepost.c); argv after NAME. */
int experiment_prepost(int argc, char **argv);

/* Option parsing shared by the experiments: "--help" or "-h"; a base-10 integer in [lo, hi] (the
   whole text: 0, else -1); a comma-separated list of 1..max such integers into out (its count, or
   -1). */
int experiment_is_help(const char *arg);
int experiment_parse_int(const char *text, long lo, long hi, int *out);
int experiment_parse_list(const char *text, long lo, long hi, int *out, int max);

/* Median of v[0..n-1] (sorts v in place): the mean of the two middle values when n is even. */
double experiment_median(double *v, int n);

/* Progress on stderr, only when stderr is a terminal (a pipe or a log gets no noise). */
void experiment_progress(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
