/* resnorm: the command-line front end of the verified LayerNorm reference.
 * Thin: verbs dispatch to cli/eval.c, cli/check.c and cli/golden.c.  Reference: specs/cli.md. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "experiment.h"
#include "golden.h"
#include "memlimit.h"

/* "ops: layernorm (x, gamma, beta -> y, mean, rstd),\n     layernorm_backward (...)\n" */
static void print_ops(void)
{
    for (int i = 0; i < cli_nops; i++) {
        const cli_op *op = cli_ops[i];
        printf("%s%s (", i ? "     " : "ops: ", op->name);
        for (int j = 0; j < op->ninputs && j < CLI_HELP_INPUTS; j++)
            printf(op->optional[j] ? "%s[%s]" : "%s%s", j ? ", " : "", op->inputs[j]);
        if (op->ninputs > CLI_HELP_INPUTS)
            printf(", ... (%d inputs)", op->ninputs);
        printf(" ->");
        for (int j = 0; j < op->noutputs && j < CLI_HELP_INPUTS; j++)
            printf("%s %s", j ? "," : "", op->outputs[j]);
        if (op->noutputs > CLI_HELP_INPUTS)
            printf(", ... (%d outputs)", op->noutputs);
        printf(")%s\n", i + 1 < cli_nops ? "," : "");
    }
}

static void main_help(void)
{
    printf(
        "usage: resnorm VERB [ARGS]\n"
        "\n"
        "A verified numerical reference for LayerNorm: certified, correctly rounded values\n"
        "(an MPFR twin) and a per-element a-priori tolerance for checking other implementations.\n"
        "\n"
        "verbs:\n"
        "  eval OP ...     compute OP's outputs (certified, rounded once) into .npy files\n"
        "  check OP ...    check another implementation's .npy outputs against them\n"
        "  golden ...      the golden vectors (golden/): gen, verify, list, run-check DIR\n"
        "  experiment NAME the seeds' experiments, certified: depth, layernorm-stats, trace, prepost\n"
        "  help VERB       help on VERB (also: resnorm VERB --help)\n"
        "\n");
    print_ops();
    printf(
        "\n"
        "examples:\n"
        "  resnorm eval layernorm --in x=x.npy --in gamma=g.npy --in beta=b.npy \\\n"
        "      --attr eps=1e-5 --attr axis=-1 --dtype f32 --out out/\n"
        "  resnorm check layernorm --in x=x.npy --in gamma=g.npy --in beta=b.npy \\\n"
        "      --actual y=torch_y.npy --dtype f32\n"
        "\n"
        "options: --help, -h   this text;   --version   print \"" RN_VERSION_STRING "\"\n"
        "\n"
        "exit codes: 0 ok; 1 mismatch (check); 2 usage or input error; 3 internal error\n"
        "(e.g. the twin could not certify a result); 4 (check, run-check) no mismatch, but the\n"
        "statistical tier flags a systematic error (specs/statistical-tier.md; --stat warn|off).\n"
        ".npy: <f8 <f4 <f2, and bf16 as raw little-endian bits with descr '|V2' (or '<V2').\n"
        "Reference: specs/cli.md; tolerance: specs/error-analysis.md.\n");
}

static int help_verb(const char *verb)
{
    if (!strcmp(verb, "eval")) {
        cli_eval_help();
        return RN_EXIT_OK;
    }
    if (!strcmp(verb, "check")) {
        cli_check_help();
        return RN_EXIT_OK;
    }
    if (!strcmp(verb, "golden")) {
        char *args[] = {"golden", "--help", NULL};
        return golden_main(2, args);
    }
    if (!strcmp(verb, "help")) {
        main_help();
        return RN_EXIT_OK;
    }
    if (!strcmp(verb, "experiment")) {
        experiment_help();
        return RN_EXIT_OK;
    }
    cli_error(NULL, "no help for unknown verb '%s' (verbs: eval, check, golden, experiment, help)", verb);
    return RN_EXIT_USAGE;
}

/* Everything a verb printed must have reached standard output: a full disk, a closed pipe or
   /dev/full turns a report into a silent loss.  The stream's error flag (set by a failed write
   while it ran), the final flush and the close are all checked; a lost report is exit 2 (an output
   that cannot be written, specs/cli.md) unless the verb already failed harder. */
static int finish(const char *verb, int rc)
{
    int lost = ferror(stdout) != 0;
    lost |= fflush(stdout) != 0;
    lost |= fclose(stdout) != 0;
    if (lost) {
        cli_error(verb, "cannot write to standard output: the report is incomplete");
        if (rc < RN_EXIT_USAGE)
            rc = RN_EXIT_USAGE;
    }
    return rc;
}

static int dispatch(int argc, char **argv)
{
    if (argc < 2) {
        main_help();
        cli_error(NULL, "missing VERB");
        return RN_EXIT_USAGE;
    }
    const char *verb = argv[1];
    if (!strcmp(verb, "--help") || !strcmp(verb, "-h")) {
        main_help();
        return RN_EXIT_OK;
    }
    if (!strcmp(verb, "--version")) {
        printf("%s\n", RN_VERSION_STRING);
        return RN_EXIT_OK;
    }
    if (!strcmp(verb, "help")) {
        if (argc == 2) {
            main_help();
            return RN_EXIT_OK;
        }
        if (argc > 3) {
            cli_error("help", "expected one VERB");
            return RN_EXIT_USAGE;
        }
        return help_verb(argv[2]);
    }
    if (!strcmp(verb, "eval"))
        return cli_eval_main(argc - 1, argv + 1);
    if (!strcmp(verb, "check"))
        return cli_check_main(argc - 1, argv + 1);
    if (!strcmp(verb, "golden"))
        return golden_main(argc - 1, argv + 1);
    if (!strcmp(verb, "experiment"))
        return experiment_main(argc - 1, argv + 1);
    if (verb[0] == '-') {
        cli_error(NULL, "unknown option '%s' (see 'resnorm --help')", verb);
        return RN_EXIT_USAGE;
    }
    cli_error(NULL, "unknown verb '%s' (verbs: eval, check, golden, experiment, help)", verb);
    return RN_EXIT_USAGE;
}

/* The process's peak resident set (VmHWM of /proc/self/status) in kB, or -1 where there is none:
   what a streaming run saves shows here, beside the counted arrays. */
static long peak_resident_kb(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long kb = -1;
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, "VmHWM: %ld kB", &kb) == 1)
            break;
    if (f)
        fclose(f);
    return kb;
}

int main(int argc, char **argv)
{
    const char *verb = argc >= 2 && argv[1][0] != '-' ? argv[1] : NULL;
    int rc = rn_memlimit_init(verb);
    if (!rc)
        rc = dispatch(argc, argv);
    if (getenv("RESNORM_MEMORY_REPORT"))
        fprintf(stderr, "resnorm: peak counted memory %zu bytes, peak resident %ld kB\n",
                rn_memlimit_peak(), peak_resident_kb());
    return finish(verb, rc);
}
