/* The streaming eval (cli/stream.c; specs/cli.md, "Streaming"): for every streamed op (the norms,
 * the residual add and the skip ops, forward and backward),
 * `resnorm eval` streaming (the default) and on the whole tensor (RESNORM_STREAM=0) write the same
 * bytes, on one row, on rows that are not a multiple of the block (RESNORM_STREAM_ROWS, the testing
 * knob), on 3-D x with an axis, on f64/f32/f16/bf16 inputs and --dtype outputs, with NaN/Inf in x,
 * whatever the threads; and an error in any block (a bad or truncated input, a file truncated
 * while it is read, a write failure, the memory limit, a signal) leaves no output and no
 * temporary.  The npy range reader and block writer (cli/npy.h) are tested directly too. */
#include <criterion/criterion.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "dtype.h"
#include "npy.h"

#define CLI_HARNESS_PREFIX "/tmp/resnorm_test_stream."
#include "cli_harness.h"

TestSuite(stream, .init = setup, .fini = teardown, .timeout = 300);


static int has(const char *text, const char *needle) { return strstr(text, needle) != NULL; }

/* A deterministic normal-ish value (sum of 4 uniforms, centred) from an LCG. */
static double draw(uint64_t *s)
{
    double u = 0;
    for (int k = 0; k < 4; k++) {
        *s = *s * 6364136223846793005ULL + 1442695040888963407ULL;
        u += (double)(*s >> 11) * 0x1p-53;
    }
    return u - 2.0;
}

/* T/name: shift + scale * draw, rounded to d; nonfinite: NaN, +Inf, -Inf, +Inf & -Inf in rows
   1, 2, 4, 5 (of n elements each) where they exist. */
static void put_rand(const char *name, rn_dtype d, int ndim, const size_t *shape, double scale,
                     double shift, uint64_t seed, size_t n, int nonfinite)
{
    size_t count = 1;
    for (int i = 0; i < ndim; i++)
        count *= shape[i];
    double *v = malloc((count ? count : 1) * sizeof *v);
    for (size_t i = 0; i < count; i++)
        v[i] = rn_round(shift + scale * draw(&seed), d);
    if (nonfinite) {
        size_t at[5] = {1 * n + n / 2, 2 * n, 4 * n + n - 1, 5 * n, 5 * n + n - 1};
        double val[5] = {NAN, INFINITY, -INFINITY, INFINITY, -INFINITY};
        for (int k = 0; k < 5; k++)
            if (at[k] < count)
                v[at[k]] = val[k];
    }
    put_npy(name, d, ndim, shape, v);
    free(v);
}

/* The inputs of the row-wise ops for x of this shape (n: the row length at `axis`). */
static void put_inputs(rn_dtype d, int ndim, const size_t *shape, size_t n, int nonfinite)
{
    size_t pn[1] = {n};
    put_rand("x.npy", d, ndim, shape, 1.0, 0.25, 1, n, nonfinite);
    put_rand("skip.npy", d, ndim, shape, 0.5, 0.0, 2, n, 0);
    put_rand("f.npy", d, ndim, shape, 0.5, 0.0, 3, n, 0);
    put_rand("g.npy", d, 1, pn, 0.1, 1.0, 4, n, 0);
    put_rand("b.npy", d, 1, pn, 0.1, 0.0, 5, n, 0);
    put_rand("bias.npy", d, 1, pn, 0.1, 0.0, 6, n, 0);
    put_rand("dy.npy", d, ndim, shape, 1.0, 0.0, 7, n, 0);
}

/* Each op with its inputs and outputs (the files put_inputs writes). */
typedef struct {
    const char *op, *ins, *outs;
    int axis; /* the op has the attribute axis (the residual add has none) */
} op_case;

static const op_case OPS[] = {
    {"layernorm", "--in x=$T/x.npy --in gamma=$T/g.npy --in beta=$T/b.npy", "y mean rstd", 1},
    {"rmsnorm", "--in x=$T/x.npy --in gamma=$T/g.npy", "y rstd", 1},
    {"rmsnorm", "--in x=$T/x.npy --in gamma=$T/g.npy --attr offset=1", "y rstd", 1},
    {"residual", "--in x=$T/x.npy --in f=$T/f.npy", "y", 0},
    {"skip_layernorm", "--in x=$T/x.npy --in skip=$T/skip.npy --in gamma=$T/g.npy "
                       "--in beta=$T/b.npy", "y mean rstd sum", 1},
    {"skip_layernorm", "--in x=$T/x.npy --in skip=$T/skip.npy --in gamma=$T/g.npy "
                       "--in beta=$T/b.npy --in bias=$T/bias.npy", "y mean rstd sum", 1},
    {"skip_rmsnorm", "--in x=$T/x.npy --in skip=$T/skip.npy --in gamma=$T/g.npy", "y rstd sum", 1},
    {"skip_rmsnorm", "--in x=$T/x.npy --in skip=$T/skip.npy --in gamma=$T/g.npy "
                     "--in bias=$T/bias.npy --attr offset=1", "y rstd sum", 1},
    {"residual_backward", "--in dy=$T/dy.npy", "dx df", 0},
    /* the norms' backward: dx per row, the sums over rows kept across blocks
       (CLI_ROWWISE_COLUMNS) */
    {"layernorm_backward", "--in x=$T/x.npy --in gamma=$T/g.npy --in dy=$T/dy.npy",
     "dx dgamma dbeta", 1},
    {"rmsnorm_backward", "--in x=$T/x.npy --in gamma=$T/g.npy --in dy=$T/dy.npy --attr offset=1",
     "dx dgamma", 1},
    {"skip_layernorm_backward", "--in x=$T/x.npy --in skip=$T/skip.npy --in gamma=$T/g.npy "
                                "--in dy=$T/dy.npy --in bias=$T/bias.npy",
     "dx dskip dbias dgamma dbeta", 1},
    {"skip_rmsnorm_backward", "--in x=$T/x.npy --in skip=$T/skip.npy --in gamma=$T/g.npy "
                              "--in dy=$T/dy.npy", "dx dskip dbias dgamma", 1},
};
#define NOPS (sizeof OPS / sizeof OPS[0])

/* ZOO_QUICK (set by 'make asan'): the dtype test runs the backward ops with binary64 outputs only
   (they keep every other test under the sanitizers; the narrower dtypes add no code path of the
   stream's, and the ASan pass of this file had gone from 134 to 238 s with them). */
static int forward_only;

/* Every op: streaming with env `senv` and `extra` arguments into $T/s, the whole tensor into
   $T/w; both exit 0 and every output is byte-identical; the directories hold the outputs only. */
static void expect_identical(const char *senv, const char *extra, const char *what)
{
    for (size_t c = 0; c < NOPS; c++) {
        const op_case *o = &OPS[c];
        if (forward_only && strstr(o->op, "_backward"))
            continue;
        const char *ex = !o->axis && strstr(extra, "axis") ? "" : extra; /* x viewed flat */
        int rc = sh("rm -rf $T/s $T/w; %s $R eval %s %s %s --out $T/s", senv, o->op, o->ins, ex);
        cr_assert_eq(rc, 0, "%s, %s streaming: exit %d: %s", what, o->op, rc, err_text);
        rc = sh("RESNORM_STREAM=0 $R eval %s %s %s --out $T/w", o->op, o->ins, ex);
        cr_assert_eq(rc, 0, "%s, %s whole: exit %d: %s", what, o->op, rc, err_text);
        rc = sh("for f in %s; do cmp $T/w/$f.npy $T/s/$f.npy || exit 1; done; "
                "test \"$(ls -A $T/s | wc -l)\" = \"$(ls -A $T/w | wc -l)\"", o->outs);
        cr_assert_eq(rc, 0, "%s, %s %s: outputs differ: %s%s", what, o->op, o->ins, out_text,
                     err_text);
    }
}

/* ---------------------------------------------------------------- byte-identical outputs */

Test(stream, one_row)
{
    size_t s[2] = {1, 37};
    put_inputs(RN_F32, 2, s, 37, 0);
    expect_identical("", "", "one row");
    expect_identical("RESNORM_STREAM_ROWS=1", "", "one row, R = 1");
}

/* No rows at all: every output is an empty array, written by both paths alike. */
Test(stream, empty_x)
{
    size_t s[2] = {0, 5};
    put_inputs(RN_F32, 2, s, 5, 0);
    expect_identical("", "", "(0, 5)");
    cr_assert_eq(run("eval rmsnorm --in x=%s --in gamma=%s --out %s", P("x.npy"), P("g.npy"),
                     P("e")), 0, "%s", err_text);
}

Test(stream, rows_not_a_multiple_of_the_block)
{
    size_t s[2] = {7, 5};
    put_inputs(RN_F32, 2, s, 5, 0);
    expect_identical("RESNORM_STREAM_ROWS=3", "", "7 rows, R = 3");
    expect_identical("RESNORM_STREAM_ROWS=1", "", "7 rows, R = 1");
    expect_identical("RESNORM_STREAM_ROWS=100", "", "7 rows, R = 100");
}

/* The default block (about 2 MiB of x): on one thread, 300 rows of 1000 are two blocks of 262
   and 38 rows; on three, at least one block per thread (three of 100). */
Test(stream, default_block_size_several_blocks)
{
    size_t s[2] = {300, 1000};
    put_inputs(RN_F32, 2, s, 1000, 0);
    expect_identical("", "", "300 x 1000, default R");
    expect_identical("", "--threads 1", "300 x 1000, default R, one thread");
    int rc = sh("RESNORM_TIMING=1 $R eval layernorm --in x=$T/x.npy --in gamma=$T/g.npy "
                "--in beta=$T/b.npy --threads 1 --out $T/t");
    cr_assert_eq(rc, 0, "%s", err_text);
    cr_assert(has(err_text, "timing: blocks") && has(err_text, "2 blocks of 262 rows on 1 thread"),
              "%s", err_text);
    rc = sh("RESNORM_TIMING=1 $R eval layernorm --in x=$T/x.npy --in gamma=$T/g.npy "
            "--in beta=$T/b.npy --threads 3 --out $T/t");
    cr_assert_eq(rc, 0, "%s", err_text);
    cr_assert(has(err_text, "3 blocks of 100 rows on 3 threads"), "%s", err_text);
}

Test(stream, three_d_x_with_an_axis)
{
    size_t s[3] = {2, 3, 4};
    put_inputs(RN_F32, 3, s, 12, 0); /* gamma (12,): axis 1 */
    expect_identical("RESNORM_STREAM_ROWS=1", "--attr axis=1", "(2,3,4) axis 1");
    put_inputs(RN_F64, 3, s, 4, 0); /* gamma (4,): axis -1, 6 rows */
    expect_identical("RESNORM_STREAM_ROWS=4", "--attr axis=-1", "(2,3,4) axis -1");
    put_inputs(RN_F64, 3, s, 24, 0); /* gamma (24,): axis 0, one row */
    expect_identical("RESNORM_STREAM_ROWS=1", "--attr axis=0", "(2,3,4) axis 0");
}

Test(stream, every_input_dtype_and_output_dtype)
{
    static const rn_dtype in[4] = {RN_F64, RN_F32, RN_F16, RN_BF16};
    size_t s[2] = {9, 16};
    forward_only = getenv("ZOO_QUICK") != NULL;
    for (int d = 0; d < 4; d++) {
        put_inputs(in[d], 2, s, 16, 0);
        expect_identical("RESNORM_STREAM_ROWS=4", "", rn_dtype_name(in[d]));
        expect_identical("RESNORM_STREAM_ROWS=2", "--dtype f16", "--dtype f16");
        expect_identical("RESNORM_STREAM_ROWS=2", "--dtype bf16", "--dtype bf16");
    }
    put_inputs(RN_F32, 2, s, 16, 0);
    forward_only = 0; /* binary64 outputs: where the backward's fast path leaves rows, every op */
    expect_identical("RESNORM_STREAM_ROWS=5", "--dtype f64", "f32 in, --dtype f64");
}

/* Rows with NaN, +Inf, -Inf and both (the fast path leaves them to the twin, block by block). */
Test(stream, nonfinite_x)
{
    size_t s[2] = {7, 8};
    put_inputs(RN_F32, 2, s, 8, 1);
    expect_identical("RESNORM_STREAM_ROWS=2", "", "NaN/Inf f32");
    put_inputs(RN_BF16, 2, s, 8, 1);
    expect_identical("RESNORM_STREAM_ROWS=3", "--dtype f32", "NaN/Inf bf16");
}

/* Large-mean rows (ties and exact zeros for the twin) through the twin alone and the fast path,
   and the thread count: the bytes never change. */
Test(stream, twin_alone_and_threads)
{
    size_t s[2] = {11, 64};
    put_inputs(RN_F32, 2, s, 64, 1);
    expect_identical("RESNORM_FASTPATH=0 RESNORM_STREAM_ROWS=3", "", "twin alone");
    expect_identical("RESNORM_STREAM_ROWS=3", "--threads 1", "--threads 1");
    expect_identical("RESNORM_STREAM_ROWS=4", "--threads 3", "--threads 3");
}

/* Large enough for several threads (70,400 elements >= RN_PAR_MIN_WORK): blocks computed on three
   threads at once, NaN/Inf rows and the twin alone included, appended in row order. */
Test(stream, blocks_on_several_threads)
{
    size_t s[2] = {64, 1100};
    put_inputs(RN_F32, 2, s, 1100, 1);
    expect_identical("RESNORM_STREAM_ROWS=5", "--threads 3", "3 threads");
    expect_identical("RESNORM_FASTPATH=0 RESNORM_STREAM_ROWS=7", "--threads 3",
                     "3 threads, twin alone");
    int rc = sh("RESNORM_TIMING=1 RESNORM_STREAM_ROWS=5 $R eval layernorm --in x=$T/x.npy "
                "--in gamma=$T/g.npy --in beta=$T/b.npy --threads 3 --out $T/t");
    cr_assert_eq(rc, 0, "%s", err_text);
    cr_assert(has(err_text, "13 blocks of 5 rows on 3 threads"), "%s", err_text);
}

/* The backward's sums over rows (dgamma, dbeta, dbias) by each of their ways, each byte-identical
   to the whole tensor's and named on the timing line: certified from the blocks' accumulators
   (with f32 sums of 13 rows, about one column in eight of dbeta is exactly a midpoint of f32:
   summed again exactly from dy's file); dbeta's column 3 made a tie (1 + 2^-24); a zero row of
   dy (its dx, exactly 0, is not certified: its block's dx from the twin, the sums kept); a zero
   column of dy (dgamma exactly 0, which no enclosure certifies) and a NaN in x (that block's dx
   from the twin): every sum from the whole tensor's twin. */
Test(stream, backward_sums_over_rows)
{
    size_t s[2] = {13, 40}, n = 40;
    static const struct {
        const char *what, *how;
        int tie, zero_col, nan, zero_row;
    } cases[] = {
        {"plain", "certified from the blocks", 0, 0, 0, 0},
        {"a dbeta tie", "certified from the blocks", 1, 0, 0, 0},
        {"a zero dy column", "from the whole tensor's twin", 0, 1, 0, 0},
        {"a NaN in x", "from the whole tensor's twin", 1, 0, 1, 0},
        /* its dx (exactly 0) is not certified: that block's dx from the twin, the sums kept */
        {"a zero dy row", "certified from the blocks", 0, 0, 0, 1},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        put_inputs(RN_F32, 2, s, n, 0);
        double *dy = malloc(13 * n * sizeof *dy), *x = malloc(13 * n * sizeof *x);
        for (size_t i = 0; i < 13 * n; i++) {
            uint64_t seed = 100 + i;
            dy[i] = rn_round(draw(&seed), RN_F32), x[i] = rn_round(draw(&seed), RN_F32);
        }
        for (size_t r = 0; r < 13; r++) {
            if (cases[c].tie)
                dy[r * n + 3] = r == 0 ? 1.0 : r == 7 ? 0x1p-24 : 0.0;
            if (cases[c].zero_col)
                dy[r * n + 5] = 0.0;
        }
        for (size_t i = 0; cases[c].zero_row && i < n; i++)
            dy[4 * n + i] = 0.0;
        if (cases[c].nan)
            x[9 * n + 2] = NAN;
        put_npy("dy.npy", RN_F32, 2, s, dy);
        put_npy("x.npy", RN_F32, 2, s, x);
        free(dy), free(x);
        expect_identical("RESNORM_STREAM_ROWS=3", "", cases[c].what);
        int rc = sh("RESNORM_TIMING=1 RESNORM_STREAM_ROWS=3 $R eval layernorm_backward "
                    "--in x=$T/x.npy --in gamma=$T/g.npy --in dy=$T/dy.npy --out $T/t");
        cr_assert_eq(rc, 0, "%s: %s", cases[c].what, err_text);
        cr_assert(has(err_text, "5 blocks of 3 rows") && has(err_text, cases[c].how), "%s: %s",
                  cases[c].what, err_text);
        const char *k = strstr(err_text, "blocks, ");
        if (cases[c].tie && !cases[c].nan) /* at least column 3 summed again exactly */
            cr_assert(k && atoi(k + strlen("blocks, ")) >= 1 && has(k, "summed again exactly"),
                      "%s: %s", cases[c].what, err_text);
    }
}

/* The backward streams with memory of a block, not of the tensor: 2048 x 1024 f64 (x and dy
   16 MiB each, dx 16 MiB) in blocks of 256 rows. */
Test(stream, backward_memory_is_a_block)
{
    size_t s[2] = {2048, 1024};
    put_inputs(RN_F64, 2, s, 1024, 0);
    int rc = sh("RESNORM_MEMORY_REPORT=1 $R eval layernorm_backward --in x=$T/x.npy "
                "--in gamma=$T/g.npy --in dy=$T/dy.npy --threads 1 --out $T/t");
    cr_assert_eq(rc, 0, "%s", err_text);
    const char *p = strstr(err_text, "peak counted memory ");
    cr_assert(p, "%s", err_text);
    long long bytes = atoll(p + strlen("peak counted memory "));
    cr_assert(bytes > 0 && bytes < 16ll << 20, "%lld bytes counted: %s", bytes, err_text);
    rc = sh("RESNORM_MEMORY_REPORT=1 RESNORM_STREAM=0 $R eval layernorm_backward "
            "--in x=$T/x.npy --in gamma=$T/g.npy --in dy=$T/dy.npy --threads 1 --out $T/w");
    cr_assert_eq(rc, 0, "%s", err_text);
    p = strstr(err_text, "peak counted memory ");
    cr_assert(p && atoll(p + strlen("peak counted memory ")) > 48ll << 20, "%s", err_text);
    cr_assert_eq(sh("cmp $T/t/dx.npy $T/w/dx.npy && cmp $T/t/dgamma.npy $T/w/dgamma.npy && "
                    "cmp $T/t/dbeta.npy $T/w/dbeta.npy"), 0, "%s", out_text);
}

/* ---------------------------------------------------------------- errors: nothing left */

/* $T/o holds exactly what it held before (files `keep`, byte for byte as in $T/o.old), or does not
   exist when it did not. */
static void expect_untouched(int existed)
{
    if (existed)
        cr_assert_eq(sh("diff -r $T/o $T/o.old && test -z \"$(ls -A $T/o | grep -v '^y.npy$' | "
                        "grep -v '^mean.npy$' | grep -v '^rstd.npy$')\""),
                     0, "o/ changed or holds temporaries: %s", (sh("ls -la $T/o"), out_text));
    else
        cr_assert_eq(sh("test ! -e $T/o"), 0, "o/ left behind: %s", (sh("ls -la $T/o"), out_text));
}

/* A first run's outputs in $T/o (and a copy in $T/o.old), for the error tests to keep. */
static void previous_outputs(void)
{
    size_t s[2] = {3, 4}, p[1] = {4};
    put_rand("x0.npy", RN_F32, 2, s, 1.0, 0.0, 9, 4, 0);
    put_rand("g0.npy", RN_F32, 1, p, 1.0, 0.0, 10, 4, 0);
    int rc = sh("$R eval layernorm --in x=$T/x0.npy --in gamma=$T/g0.npy --in beta=$T/g0.npy "
                "--out $T/o && cp -r $T/o $T/o.old");
    cr_assert_eq(rc, 0, "%s", err_text);
}

#define LN "$R eval layernorm --in gamma=$T/g.npy --in beta=$T/b.npy"

Test(stream, bad_inputs_exit_2_naming_the_file_and_leave_nothing)
{
    size_t s[2] = {6, 4}, g5[1] = {5};
    put_inputs(RN_F32, 2, s, 4, 0);
    for (int existed = 0; existed < 2; existed++) {
        if (existed)
            previous_outputs();
        /* truncated: the header says 6 rows, the file holds 5 */
        cr_assert_eq(sh("head -c $(( $(stat -c %%s $T/x.npy) - 16 )) $T/x.npy > $T/xt.npy"), 0);
        int rc = sh(LN " --in x=$T/xt.npy --out $T/o");
        cr_assert_eq(rc, 2, "exit %d: %s", rc, err_text);
        cr_assert(has(err_text, "xt.npy") && has(err_text, "truncated"), "%s", err_text);
        expect_untouched(existed);
        /* gamma of the wrong shape */
        put_rand("g5.npy", RN_F32, 1, g5, 1.0, 0.0, 7, 5, 0);
        rc = sh("$R eval layernorm --in x=$T/x.npy --in gamma=$T/g5.npy --in beta=$T/b.npy "
                "--out $T/o");
        cr_assert_eq(rc, 2, "exit %d: %s", rc, err_text);
        cr_assert(has(err_text, "g5.npy") && has(err_text, "does not match"), "%s", err_text);
        expect_untouched(existed);
        /* a bad header: the dict's shape is not a tuple */
        cr_assert_eq(sh("cp $T/x.npy $T/xh.npy && printf \"'shape': [6, 4]\" | "
                        "dd of=$T/xh.npy bs=1 seek=$(grep -abo \"'shape'\" $T/x.npy | "
                        "cut -d: -f1) conv=notrunc 2>/dev/null"), 0);
        rc = sh(LN " --in x=$T/xh.npy --out $T/o");
        cr_assert_eq(rc, 2, "exit %d: %s", rc, err_text);
        cr_assert(has(err_text, "xh.npy") && has(err_text, "shape"), "%s", err_text);
        expect_untouched(existed);
        /* the testing knob itself */
        rc = sh("RESNORM_STREAM_ROWS=0 " LN " --in x=$T/x.npy --out $T/o");
        cr_assert_eq(rc, 2, "exit %d: %s", rc, err_text);
        cr_assert(has(err_text, "RESNORM_STREAM_ROWS"), "%s", err_text);
        expect_untouched(existed);
    }
}

/* A run slow enough to be caught in the middle: the twin alone, one row per block, until its
   first temporary exists in $T/o; returns the child's pid (its exit status via waitpid). */
static pid_t start_slow_run(const char *x)
{
    pid_t pid = fork();
    cr_assert_geq(pid, 0);
    if (pid == 0) {
        char cmd[2048];
        snprintf(cmd, sizeof cmd, "R='%s'; T='%s'; RESNORM_FASTPATH=0 RESNORM_STREAM_ROWS=1 "
                 "exec $R eval layernorm --in x=%s --in gamma=$T/g.npy --in beta=$T/b.npy "
                 "--out $T/o 2>$T/slow.err", resnorm(), tmpdir, x);
        execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
        _exit(127);
    }
    for (int i = 0; i < 20000; i++) { /* up to 20 s */
        if (sh("ls -A $T/o 2>/dev/null | grep -q '^\\.y\\.npy\\.tmp\\.'") == 0)
            return pid;
        struct timespec ts = {0, 1000000};
        nanosleep(&ts, NULL);
    }
    cr_assert_fail("no temporary appeared in o/");
    return pid;
}

/* x truncated while it is streamed: the next block's read fails; exit 2 naming x, nothing left. */
Test(stream, input_truncated_while_streaming)
{
    size_t s[2] = {2000, 512};
    put_inputs(RN_F32, 2, s, 512, 0);
    pid_t pid = start_slow_run("$T/x.npy");
    cr_assert_eq(truncate(P("x.npy"), 4096), 0);
    int st;
    cr_assert_eq(waitpid(pid, &st, 0), pid);
    slurp(P("slow.err"), err_text, sizeof err_text);
    cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 2, "status %d: %s", st, err_text);
    cr_assert(has(err_text, "x.npy") && has(err_text, "shrank"), "%s", err_text);
    expect_untouched(0);
}

/* SIGTERM in the middle: the temporaries go with the process. */
Test(stream, signal_removes_the_temporaries)
{
    size_t s[2] = {2000, 512};
    put_inputs(RN_F32, 2, s, 512, 0);
    pid_t pid = start_slow_run("$T/x.npy");
    cr_assert_eq(kill(pid, SIGTERM), 0);
    int st;
    cr_assert_eq(waitpid(pid, &st, 0), pid);
    cr_assert(WIFSIGNALED(st) && WTERMSIG(st) == SIGTERM, "status %d", st);
    cr_assert_eq(sh("test -z \"$(ls -A $T/o)\""), 0, "left in o/: %s", (sh("ls -A $T/o"), out_text));
}

/* A write that fails in a later block (a file-size limit of 16 KiB; y is 64 KiB, written 4 KiB a
   block): exit 2 naming y.npy, the previous outputs kept, no temporary. */
Test(stream, write_failure_in_a_later_block)
{
    size_t s[2] = {64, 256};
    put_inputs(RN_F32, 2, s, 256, 0);
    previous_outputs();
    int rc = sh("trap '' XFSZ; ulimit -f 16; RESNORM_STREAM_ROWS=4 " LN " --in x=$T/x.npy "
                "--out $T/o");
    cr_assert_eq(rc, 2, "exit %d: %s", rc, err_text);
    cr_assert(has(err_text, "y.npy") && has(err_text, "no output written"), "%s", err_text);
    expect_untouched(1);
}

/* The memory limit reached in the last block (its NaN row is the only one the twin computes, with
   ~170 bytes per element of MPFR state): exit 2, no temporary, no directory. */
Test(stream, memory_limit_in_a_later_block)
{
    size_t s[2] = {8, 4096};
    put_inputs(RN_F32, 2, s, 4096, 0);
    int rc = sh("RESNORM_MEMORY_REPORT=1 RESNORM_STREAM_ROWS=2 " LN " --in x=$T/x.npy --out $T/p");
    cr_assert_eq(rc, 0, "%s", err_text);
    const char *p = strstr(err_text, "peak counted memory ");
    cr_assert_not_null(p, "%s", err_text);
    size_t peak = strtoull(p + strlen("peak counted memory "), NULL, 10);
    /* the same x with a NaN in its last row */
    rn_array x;
    char err[512];
    cr_assert_eq(npy_read(P("x.npy"), &x, err, sizeof err), 0, "%s", err);
    x.data[7 * 4096 + 100] = NAN;
    put_npy("xn.npy", RN_F32, 2, s, x.data);
    rn_array_free(&x);
    rc = sh("RESNORM_MEMORY_LIMIT=%zu RESNORM_STREAM_ROWS=2 " LN " --in x=$T/xn.npy --out $T/o",
            peak + 256 * 1024);
    cr_assert_eq(rc, 2, "exit %d: %s", rc, err_text);
    cr_assert(has(err_text, "memory limit"), "%s", err_text);
    expect_untouched(0);
    /* with room for it, the same run succeeds and matches the whole path */
    rc = sh("RESNORM_STREAM_ROWS=2 " LN " --in x=$T/xn.npy --out $T/s && RESNORM_STREAM=0 " LN
            " --in x=$T/xn.npy --out $T/w && cmp $T/s/y.npy $T/w/y.npy");
    cr_assert_eq(rc, 0, "%s", err_text);
}

/* ---------------------------------------------------------------- the npy range reader and writer */

Test(stream, npy_ranges_are_the_whole_read)
{
    size_t s[2] = {5, 7};
    put_rand("a.npy", RN_F16, 2, s, 3.0, 0.0, 11, 7, 0);
    rn_array whole, h;
    npy_reader r;
    char err[512];
    double v[35];
    cr_assert_eq(npy_read(P("a.npy"), &whole, err, sizeof err), 0, "%s", err);
    cr_assert_eq(npy_open(P("a.npy"), &r, &h, err, sizeof err), 0, "%s", err);
    cr_assert(h.count == 35 && h.ndim == 2 && h.shape[1] == 7 && !h.data);
    for (size_t off = 0; off < 35; off += 6) {
        size_t k = off + 6 <= 35 ? 6 : 35 - off;
        cr_assert_eq(npy_read_range(&r, off, k, v + off, err, sizeof err), 0, "%s", err);
    }
    cr_assert_eq(memcmp(v, whole.data, sizeof v), 0);
    cr_assert_neq(npy_read_range(&r, 30, 6, v, err, sizeof err), 0);
    /* grown after it was opened: reading to the end of the data says so */
    cr_assert_eq(sh("printf x >> $T/a.npy"), 0);
    cr_assert_neq(npy_read_range(&r, 28, 7, v, err, sizeof err), 0);
    cr_assert(has(err, "a.npy") && has(err, "changed"), "%s", err);
    /* shrunk: the missing elements are an error naming the file */
    cr_assert_eq(truncate(P("a.npy"), 128 + 20), 0);
    cr_assert_neq(npy_read_range(&r, 0, 35, v, err, sizeof err), 0);
    cr_assert(has(err, "a.npy") && has(err, "shrank"), "%s", err);
    npy_close(&r);
    rn_array_free(&whole);
}

/* The writer's bytes are npy_write's, and a value not of the dtype in a later block is named by
   its index in the whole array. */
Test(stream, npy_writer_blocks_are_npy_write)
{
    size_t s[2] = {4, 3};
    double v[12];
    for (int i = 0; i < 12; i++)
        v[i] = rn_round(0.37 * i - 1.5, RN_BF16);
    put_npy("ref.npy", RN_BF16, 2, s, v);
    npy_writer w;
    char err[512];
    cr_assert_eq(npy_writer_open(&w, P("out.npy"), RN_BF16, 2, s, err, sizeof err), 0, "%s", err);
    for (int b = 0; b < 12; b += 5)
        cr_assert_eq(npy_writer_append(&w, v + b, b + 5 <= 12 ? 5 : 12 - b, err, sizeof err), 0);
    cr_assert_eq(npy_writer_close(&w, err, sizeof err), 0, "%s", err);
    cr_assert_eq(rename(w.tmp, P("out.npy")), 0);
    cr_assert_eq(sh("cmp $T/ref.npy $T/out.npy"), 0);
    /* 1e-9 is not an f16 value: element 3 + 1 = 4 */
    double bad[2] = {1.0, 1e-9};
    cr_assert_eq(npy_writer_open(&w, P("bad.npy"), RN_F16, 1, (size_t[]){5}, err, sizeof err), 0);
    cr_assert_eq(npy_writer_append(&w, v, 3, err, sizeof err), 0, "%s", err);
    cr_assert_neq(npy_writer_append(&w, bad, 2, err, sizeof err), 0);
    cr_assert(has(err, "bad.npy") && has(err, "element 4 "), "%s", err);
    npy_writer_abort(&w);
    cr_assert_eq(sh("test -z \"$(ls -A $T | grep tmp)\""), 0, "temporary left: %s", out_text);
}
