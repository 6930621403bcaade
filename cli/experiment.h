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

/* Progress on stderr, only when stderr is a terminal (a pipe or a log gets no noise). */
void experiment_progress(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
