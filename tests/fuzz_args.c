/* libFuzzer target for the command-line parser of `resnorm eval` and `resnorm check` (cli_parse in
 * cli/args.c: the op, --in, --attr, --dtype, --out, --actual, --json, both --opt VALUE and
 * --opt=VALUE).  The input is split at NUL bytes into arguments (at most 200); its first byte picks
 * the verb (eval or check).  Must never crash, leak or read out of bounds, and a command line it
 * accepts must be complete -- asserted here: an op, every required input, attribute texts only for
 * the op's attributes, at least one --actual (check) naming distinct outputs of the op, or --out
 * (eval).  Seeds: tests/fuzz-seeds-args/ (one command line per file, arguments NUL-separated). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    int check = data[0] & 1;
    char *buf = malloc(size);
    memcpy(buf, data + 1, size - 1);
    buf[size - 1] = '\0';
    char *argv[202];
    int argc = 0;
    argv[argc++] = check ? "check" : "eval";
    for (size_t i = 0; i < size - 1 && argc < 201;) {
        argv[argc++] = buf + i;
        i += strlen(buf + i) + 1;
    }
    argv[argc] = NULL;
    cli_job job;
    int rc = cli_parse(&job, argc, argv, check ? CLI_ALLOW_ACTUAL : CLI_ALLOW_OUT);
    if (rc == 0) {
        const cli_op *op = job.op;
        if (!op)
            abort();
        for (int k = 0; k < op->ninputs; k++)
            if (!job.in_path[k] && !op->optional[k])
                abort();
        for (int a = op->nattrs; a < CLI_MAX_ATTRS; a++)
            if (job.attr_text[a])
                abort();
        if (check) {
            if (job.nactual < 1 || job.nactual > op->noutputs)
                abort();
            for (int m = 0; m < job.nactual; m++) {
                if (job.act_index[m] < 0 || job.act_index[m] >= op->noutputs || !job.act_path[m])
                    abort();
                for (int j = 0; j < m; j++)
                    if (job.act_index[j] == job.act_index[m])
                        abort();
            }
        } else if (!job.out_dir || !*job.out_dir) {
            abort();
        }
    } else if (rc != -1 && rc != RN_EXIT_USAGE) {
        abort(); /* help (-1) or a usage error (2): nothing else */
    }
    cli_job_free(&job);
    free(buf);
    return 0;
}
