/* Running the `resnorm` command from Criterion tests: a temporary directory per test, the command
 * run with its stdout/stderr captured, and .npy files written into the directory.
 * A test file defines CLI_HARNESS_PREFIX (e.g. "/tmp/resnorm_test_skip.") before including this,
 * and registers its suite with `.init = setup, .fini = teardown`.
 * $RESNORM names the binary (make sets it; the ASan run points it at the sanitized build). */
#ifndef RESNORM_CLI_HARNESS_H
#define RESNORM_CLI_HARNESS_H

#include <criterion/criterion.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "npy.h"

static char tmpdir[256];
static char out_text[65536], err_text[65536];

static void setup(void)
{
    snprintf(tmpdir, sizeof tmpdir, "%sXXXXXX", CLI_HARNESS_PREFIX);
    cr_assert_not_null(mkdtemp(tmpdir));
}

static void teardown(void)
{
    char cmd[512];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    cr_assert_eq(system(cmd), 0);
}

static const char *resnorm(void)
{
    const char *r = getenv("RESNORM");
    return r && *r ? r : "build/resnorm";
}

static void slurp(const char *path, char *buf, size_t cap)
{
    buf[0] = '\0';
    FILE *f = fopen(path, "rb");
    if (!f)
        return;
    size_t n = fread(buf, 1, cap - 1, f);
    buf[n] = '\0';
    fclose(f);
}

/* Runs the shell command `cmd` with its stdout and stderr captured into out_text / err_text;
   returns its exit status (`what` names it if it did not exit normally). */
static int captured(const char *cmd, const char *what)
{
    char full[9600], o[512], e[512];
    snprintf(o, sizeof o, "%s/.stdout", tmpdir);
    snprintf(e, sizeof e, "%s/.stderr", tmpdir);
    if ((size_t)snprintf(full, sizeof full, "%s >%s 2>%s", cmd, o, e) >= sizeof full)
        cr_assert_fail("command line too long");
    int st = system(full);
    slurp(o, out_text, sizeof out_text);
    slurp(e, err_text, sizeof err_text);
    unlink(o);
    unlink(e);
    cr_assert(WIFEXITED(st), "%s: did not exit normally", what);
    return WEXITSTATUS(st);
}

/* Runs "$RESNORM ARGS", captures stdout and stderr, returns the exit code. */
static int run(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int run(const char *fmt, ...)
{
    char args[8192], cmd[9000];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(args, sizeof args, fmt, ap);
    va_end(ap);
    if ((size_t)snprintf(cmd, sizeof cmd, "%s %s", resnorm(), args) >= sizeof cmd)
        cr_assert_fail("command line too long");
    return captured(cmd, cmd);
}

/* Runs a shell command (printf-style; "$R" is the resnorm binary, "$T" the test's directory),
   captures stdout and stderr into out_text / err_text, returns the exit status. */
static int sh(const char *fmt, ...) __attribute__((format(printf, 1, 2), unused));
static int sh(const char *fmt, ...)
{
    char body[8192], cmd[9400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(body, sizeof body, fmt, ap);
    va_end(ap);
    if ((size_t)snprintf(cmd, sizeof cmd, "R='%s'; T='%s'; ( %s )", resnorm(), tmpdir, body) >=
        sizeof cmd)
        cr_assert_fail("command too long");
    return captured(cmd, body);
}

/* tmpdir/name (a rotating buffer: up to 16 live results). */
static const char *P(const char *name)
{
    static char bufs[16][512];
    static int k;
    char *b = bufs[k++ % 16];
    if (snprintf(b, 512, "%s/%s", tmpdir, name) >= 512)
        cr_assert_fail("path too long");
    return b;
}

/* Write v (prod(shape) values, representable in d) as tmpdir/name in dtype d. */
static void put_npy(const char *name, rn_dtype d, int ndim, const size_t *shape, const double *v)
{
    rn_array a;
    char err[512];
    cr_assert_eq(rn_array_alloc(&a, d, ndim, shape), 0);
    memcpy(a.data, v, a.count * sizeof(double));
    cr_assert_eq(npy_write(P(name), &a, err, sizeof err), 0, "%s", err);
    rn_array_free(&a);
}

#endif
