/* libFuzzer target for the golden manifest reader (golden_manifest_check in cli/golden_tools.c,
 * behind `golden verify | list | run-check`): any byte string is parsed as JSON (jansson, as
 * load_manifest does) and, if it is JSON, checked.  Must never crash, leak or read out of bounds
 * (-fsanitize=fuzzer,address,undefined: `make fuzz-smoke`, `make fuzz`), and a manifest the check
 * accepts must really have what verify and run-check rely on -- asserted here independently:
 * every case id and file path relative, without '.' or '..' components, paths under golden/, eps
 * a string, axis and offset integers.  The accepted case's inputs and attributes are then given to
 * the command-line parser as run-check gives them (cli_parse), which must accept or refuse them
 * without crashing.  Seeds: tests/fuzz-seeds-manifest/. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "cli.h"
#include "golden.h"

/* Relative, no empty, "." or ".." component. */
static int safe(const char *p)
{
    if (!p || !*p || *p == '/')
        return 0;
    for (const char *c = p;;) {
        const char *e = strchr(c, '/');
        size_t n = e ? (size_t)(e - c) : strlen(c);
        if (n == 0 || (n == 1 && c[0] == '.') || (n == 2 && c[0] == '.' && c[1] == '.'))
            return 0;
        if (!e)
            return 1;
        c = e + 1;
    }
}

static int safe_file(json_t *v)
{
    const char *p = json_string_value(v);
    return p && safe(p) && !strncmp(p, "golden/", 7);
}

static void check_accepted_case(json_t *c)
{
    if (!safe(json_string_value(json_object_get(c, "id"))))
        abort();
    const cli_op *op = cli_find_op(json_string_value(json_object_get(c, "op")));
    if (!op)
        abort();
    const char *k;
    json_t *v, *d;
    char *argv[2 + 2 * 64 + 2];
    char *own[64];
    int argc = 0, nown = 0;
    argv[argc++] = "golden run-check";
    argv[argc++] = (char *)op->name;
    json_object_foreach(json_object_get(c, "inputs"), k, v) {
        if (!safe_file(v))
            abort();
        if (nown < 60) {
            own[nown] = malloc(strlen(k) + strlen(json_string_value(v)) + 2);
            sprintf(own[nown], "%s=%s", k, json_string_value(v));
            argv[argc++] = "--in";
            argv[argc++] = own[nown++];
        }
    }
    json_object_foreach(json_object_get(c, "attrs"), k, v) {
        int a = cli_attr_index(op, k);
        if (a < 0)
            abort();
        if (op->attrs[a].kind == CLI_ATTR_DECIMAL ? !json_is_string(v) : !json_is_integer(v))
            abort();
        if (nown < 60) {
            char num[32];
            const char *s = json_string_value(v);
            if (!s)
                snprintf(num, sizeof num, "%lld", (long long)json_integer_value(v)), s = num;
            own[nown] = malloc(strlen(k) + strlen(s) + 2);
            sprintf(own[nown], "%s=%s", k, s);
            argv[argc++] = "--attr";
            argv[argc++] = own[nown++];
        }
    }
    json_object_foreach(json_object_get(c, "expected"), k, d) {
        const char *o;
        json_object_foreach(d, o, v) {
            if (!safe_file(v))
                abort();
        }
    }
    json_object_foreach(json_object_get(c, "sha256"), k, v) {
        json_t *key = json_string(k);
        if (!safe_file(key))
            abort();
        json_decref(key);
    }
    argv[argc++] = "--actual";
    argv[argc++] = op->noutputs ? (char *)"y=out.npy" : (char *)"x=out.npy";
    argv[argc] = NULL;
    cli_job job;
    int rc = cli_parse(&job, argc, argv, CLI_ALLOW_ACTUAL);
    if (rc == 0 && job.op != op)
        abort();
    cli_job_free(&job);
    for (int i = 0; i < nown; i++)
        free(own[i]);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    json_error_t jerr;
    json_t *m = json_loadb((const char *)data, size, 0, &jerr);
    if (!m)
        return 0;
    char err[512];
    err[0] = '\0';
    if (golden_manifest_check(m, err, sizeof err) == 0) {
        size_t i;
        json_t *c;
        json_array_foreach(json_object_get(m, "cases"), i, c)
            check_accepted_case(c);
    } else if (!err[0] || strchr(err, '\n')) {
        abort(); /* a refusal is one non-empty line */
    }
    json_decref(m);
    return 0;
}
