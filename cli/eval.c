/* resnorm eval OP --in NAME=FILE.npy ... [--attr eps=..] [--attr axis=..] [--dtype D] --out DIR
 * Runs the op's certified MPFR twin (ref/<family>_mpfr.c, reached through the registry of
 * cli/cli.h) and writes one .npy per output of the op into DIR, all or nothing: on the whole
 * tensor, or, for the row-wise ops (cli_op.rowwise), one block of rows at a time (cli/stream.c).
 * Reference: specs/cli.md. */
#include <stdio.h>
#include <string.h>

#include "cli.h"

/* "  layernorm           --in x= --in gamma= --in beta=    ->  y.npy mean.npy rstd.npy"; the
   names in a column of wname characters (the longest name's, at least 18), then two spaces */
static void print_op_row(const cli_op *op, int wname)
{
    char ins[1024];
    size_t k = 0;
    ins[0] = '\0';
    for (int i = 0; i < op->ninputs && i < CLI_HELP_INPUTS && k < sizeof ins; i++)
        k += (size_t)snprintf(ins + k, sizeof ins - k, op->optional[i] ? "%s[--in %s=]" : "%s--in %s=",
                              i ? " " : "", op->inputs[i]);
    if (op->ninputs > CLI_HELP_INPUTS && k < sizeof ins)
        k += (size_t)snprintf(ins + k, sizeof ins - k, " ... (%d inputs)", op->ninputs);
    if (k + 2 > 34) /* a long input list: the outputs go on the next line, aligned */
        printf("  %-*s  %s\n  %-*s  %-34s->  ", wname, op->name, ins, wname, "", "");
    else
        printf("  %-*s  %-34s->  ", wname, op->name, ins);
    for (int i = 0; i < op->noutputs && i < CLI_HELP_INPUTS; i++)
        printf("%s%s.npy", i ? " " : "", op->outputs[i]);
    if (op->noutputs > CLI_HELP_INPUTS)
        printf(" ... (%d outputs)", op->noutputs);
    printf("\n");
}

void cli_eval_help(void)
{
    printf(
        "usage: resnorm eval OP --in NAME=FILE.npy ... [--attr eps=TEXT] [--attr axis=INT]\n"
        "                       [--dtype f64|f32|f16|bf16] [--threads N] --out DIR\n"
        "\n"
        "Computes OP with the certified MPFR twin: every output element is the exact real\n"
        "result, rounded once to DTYPE (default: the dtype of x). Writes DIR/<output>.npy for\n"
        "every output of OP (DIR is created if missing); nothing is written unless all are.\n"
        "A double-double fast path with a proved error bound certifies most values; the MPFR\n"
        "twin decides the rest (RESNORM_FASTPATH=0: the twin alone; the output is the same).\n"
        "--threads N (or RESNORM_THREADS): threads over rows (default: all cores); the output\n"
        "does not depend on it.  layernorm, rmsnorm, residual, skip_layernorm, skip_rmsnorm\n"
        "and their backward ops stream: one block of rows per thread in memory, not the tensor\n"
        "(the backward's dgamma, dbeta, dbias summed across the blocks; RESNORM_STREAM=0: the\n"
        "whole tensor at once; the output is the same).\n"
        "\n"
        "ops:\n");
    int wname = 18;
    for (int i = 0; i < cli_nops; i++)
        if ((int)strlen(cli_ops[i]->name) > wname)
            wname = (int)strlen(cli_ops[i]->name);
    for (int i = 0; i < cli_nops; i++)
        print_op_row(cli_ops[i], wname);
    /* each family's paragraph on attributes and shapes, once */
    for (int f = 0; f < cli_nfamilies; f++)
        if (cli_families[f]->eval_help && *cli_families[f]->eval_help)
            printf("\n%s", cli_families[f]->eval_help);
    printf(
        "\n"
        ".npy dtypes: <f8 <f4 <f2, and bf16 as raw little-endian bits with descr '|V2' (or '<V2').\n"
        "exit: 0 ok, 2 usage or input error, 3 internal error (e.g. the twin could not certify).\n"
        "See specs/cli.md.\n");
}

int cli_eval_main(int argc, char **argv)
{
    cli_job job;
    int rc = cli_parse(&job, argc, argv, CLI_ALLOW_OUT);
    if (rc < 0) {
        cli_eval_help();
        return RN_EXIT_OK;
    }
    if (rc)
        return rc;
    if (cli_stream_applies(&job)) { /* a row-wise op: one block of rows at a time (cli/stream.c) */
        rc = cli_eval_stream(&job);
        cli_job_free(&job);
        return rc;
    }
    cli_phase(NULL); /* RESNORM_TIMING=1: phases on stderr */
    rc = cli_load(&job);
    cli_phase("load");
    if (rc) {
        cli_job_free(&job);
        return rc;
    }
    rn_dtype out = job.have_dtype ? job.dtype : job.in[0].dtype;
    rn_array outs[CLI_MAX_IO] = {{0}};
    rc = cli_run_twin(&job, out, outs);
    cli_phase("twin");
    if (!rc) { /* the outputs present for these inputs (cli.h: output_shape) */
        const char *names[CLI_MAX_IO];
        rn_array present[CLI_MAX_IO];
        int np = 0;
        for (int k = 0; k < job.op->noutputs; k++)
            if (outs[k].data)
                names[np] = job.op->outputs[k], present[np++] = outs[k];
        rc = cli_publish(job.out_dir, names, present, np);
    }
    cli_phase("write");
    for (int k = 0; k < CLI_MAX_IO; k++)
        rn_array_free(&outs[k]);
    cli_job_free(&job);
    cli_phase("free");
    return rc;
}
