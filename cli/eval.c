/* resnorm eval OP --in NAME=FILE.npy ... [--attr eps=..] [--attr axis=..] [--dtype D] --out DIR
 * Runs the certified MPFR twin (ref/layernorm_mpfr.c) and writes one .npy per output of the op into
 * DIR, all or nothing.  Reference: specs/cli.md. */
#include <stdio.h>

#include "cli.h"

void cli_eval_help(void)
{
    printf(
        "usage: resnorm eval OP --in NAME=FILE.npy ... [--attr eps=TEXT] [--attr axis=INT]\n"
        "                       [--dtype f64|f32|f16|bf16] --out DIR\n"
        "\n"
        "Computes OP with the certified MPFR twin: every output element is the exact real\n"
        "result, rounded once to DTYPE (default: the dtype of x). Writes DIR/<output>.npy for\n"
        "every output of OP (DIR is created if missing); nothing is written unless all are.\n"
        "\n"
        "ops:\n"
        "  layernorm           --in x= --in gamma= --in beta=    ->  y.npy mean.npy rstd.npy\n"
        "  layernorm_backward  --in x= --in gamma= --in dy=      ->  dx.npy dgamma.npy dbeta.npy\n"
        "\n"
        "attributes (ONNX LayerNormalization):\n"
        "  axis=INT   normalize over dims axis..ndim-1 (negative counts from the end; default -1).\n"
        "             gamma, beta: shape x.shape[axis:] (or 1-D of that size); dy: shape of x.\n"
        "             mean, rstd: x.shape[:axis] + [1]*(ndim-axis); dgamma, dbeta: x.shape[axis:],\n"
        "             summed over all rows.\n"
        "  eps=TEXT   decimal text, rounded once to the dtype of x (default 1e-5).\n"
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
    rc = cli_load(&job);
    if (rc) {
        cli_job_free(&job);
        return rc;
    }
    rn_dtype out = job.have_dtype ? job.dtype : job.in[0].dtype;
    rn_array outs[CLI_MAX_IO] = {{0}};
    rc = cli_run_twin(&job, out, outs);
    if (!rc)
        rc = cli_publish(job.out_dir, job.op->outputs, outs, job.op->noutputs);
    for (int k = 0; k < CLI_MAX_IO; k++)
        rn_array_free(&outs[k]);
    cli_job_free(&job);
    return rc;
}
