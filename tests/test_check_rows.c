/* `resnorm check` by blocks of rows (cli/check.c, "The check by blocks of rows") gives the report
 * of the whole-tensor path byte for byte: the same stdout (text and --json) and exit code with
 * RESNORM_CHECK_ROWS=0 (the whole tensor at once) and with blocks of 1, 2, 5, 13 rows and more
 * rows than the tensor has (ZOO_QUICK, the ASan pass: 1, 13 and more), on LayerNorm and RMSNorm
 * (with Gemma's offset) outputs that pass, that carry mismatches, NaN and Inf, an exact 0 moved, a
 * row scaled (the statistical tier flags), a duplicated row (pooled once), a row of mean 1e4, an
 * Inf in x, mean/rstd files of another dtype than y, bf16 outputs and a 3-D x; on the skip ops'
 * four (resp. three) outputs; on the norms' backward (dgamma, dbeta summed across the blocks); and
 * on the skip ops' backward (dbias, dgamma, dbeta summed across the blocks, their bound over every
 * rounded sum).  The exact values come from `resnorm eval` (the twin), never from the path under
 * test; RESNORM_TIMING's phase names show which path ran.  And the backward bounds, computed on
 * the threads in blocks of rows, give the same report on 1, 2 and 3 threads. */
#define CLI_HARNESS_PREFIX "/tmp/resnorm_test_check_rows."
#include "cli_harness.h"

#include <math.h>

/* The timeout only guards against a hang: under ASan+UBSan on a loaded 2-core machine
   skip_backward_ops took more than 300 s (a fresh make check, 6 December 2026; the whole file took
   454 s in the run before).  Speed is measured by make bench, never asserted here. */
TestSuite(check_rows, .init = setup, .fini = teardown, .timeout = 1200);

/* The shape: 13 rows of 40, or 20 rows of 4096 (where the tier's Bonferroni over all rows, not a
   block's, decides its variance floor: specs/statistical-tier.md §3.2). */
static size_t ROWS = 13, N = 40;
/* The systematic scale of scenario 2: flagged by the tier, inside the rigorous bound. */
static double scale = 0x1p-17;


static uint64_t rng = 0x9e3779b97f4a7c15ull;
static double uniform(void)
{
    rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
    return ((double)(rng >> 11) + 0.5) * 0x1p-53;
}

/* x: ROWS x N binary32 values in [-2, 2), row 3 a copy of row 1 (pooled once by the tier), row 4
   of mean 3, row 5 of mean 1e4 and std 1e-2, row 8 with an Inf when inf_row; gamma, beta of
   length N. */
static void write_inputs(int ndim, int inf_row)
{
    static double x[20 * 4096], g[4096], b[4096];
    for (size_t i = 0; i < ROWS * N; i++)
        x[i] = (float)(4 * uniform() - 2);
    for (size_t i = 0; i < N; i++) {
        x[3 * N + i] = x[1 * N + i];
        x[5 * N + i] = (float)(1e4 + 1e-2 * (uniform() - 0.5));
        x[4 * N + i] = (float)(3 + (uniform() - 0.5));
        g[i] = (float)(0.5 + uniform()), b[i] = (float)(uniform() - 0.5);
    }
    if (inf_row)
        x[8 * N + 7] = INFINITY;
    size_t s2[2] = {ROWS, N}, s3[3] = {1, ROWS, N};
    put_npy("x.npy", RN_F32, ndim, ndim == 3 ? s3 : s2, x);
    put_npy("g.npy", RN_F32, 1, s2 + 1, g);
    put_npy("b.npy", RN_F32, 1, s2 + 1, b);
}

/* name = the exact output file rounded to d, with the edits of `how`:
   0 none; 1 mismatches (elements 0, 17 and the last moved by 1e-3 relative), a NaN at 30 and an
   Inf at 31; 2 every element of rows 2 and 9 scaled by 1 + 2^-20 (systematic: the tier). */
static void write_actual(const char *exact, const char *name, rn_dtype d, int how)
{
    rn_array a;
    char err[512];
    cr_assert_eq(npy_read(P(exact), &a, err, sizeof err), 0, "%s", err);
    for (size_t i = 0; i < a.count; i++) {
        double v = a.data[i];
        if (how == 1 && (i == 0 || i == 17 || i + 1 == a.count))
            v *= 1 + 1e-3;
        if (how == 1 && i == 30 % a.count && a.count > 31)
            v = NAN;
        if (how == 1 && i == 31 && a.count > 31)
            v = -INFINITY;
        if (how == 2)
            v *= 1 + scale;
        a.data[i] = d == RN_F64 ? v : d == RN_F32 ? (double)(float)v : rn_round(v, d);
    }
    put_npy(name, d, a.ndim, a.shape, a.data);
    rn_array_free(&a);
}

/* Set: the blocks must decide by themselves (no hand-over to the whole-tensor path, whose phases
   RESNORM_TIMING would show after the blocks'). */
static int blocks_decide;

/* Runs `resnorm check ARGS` with every block size and the whole-tensor path, and asserts the same
   exit code and stdout; returns that exit code. */
static int same_report(const char *args)
{
    static char whole[sizeof out_text];
    setenv("RESNORM_CHECK_ROWS", "0", 1);
    setenv("RESNORM_TIMING", "1", 1);
    int rc0 = run("check %s", args);
    cr_assert_null(strstr(err_text, "timing: blocks"), "the whole-tensor path did not run");
    memcpy(whole, out_text, sizeof whole);
    /* ZOO_QUICK (the ASan pass, `make asan`): blocks of 1 and 13 rows and one block larger than
       the tensor (a block per row, a partial last block, a single block: the same code paths
       under the sanitizers); the 2- and 5-row blocks in `make unit`.  The whole file took 474 s
       of a fresh make check's ASan pass (6 December 2026), skip_backward_ops 137 s of it alone on
       the idle machine: ~360 checks of ~0.35 s under the sanitizers. */
    static const char *const all_sizes[] = {"1", "2", "5", "13", "1000"};
    static const char *const quick_sizes[] = {"1", "13", "1000"};
    int quick = getenv("ZOO_QUICK") != NULL;
    const char *const *sizes = quick ? quick_sizes : all_sizes;
    size_t nsizes = quick ? sizeof quick_sizes / sizeof *quick_sizes
                          : sizeof all_sizes / sizeof *all_sizes;
    for (size_t s = 0; s < nsizes; s++) {
        setenv("RESNORM_CHECK_ROWS", sizes[s], 1);
        int rck = run("check %s", args);
        cr_assert_not_null(strstr(err_text, "timing: blocks"), "blocks of %s rows: not run (%s)",
                           sizes[s], err_text);
        cr_assert(!blocks_decide || !strstr(err_text, "timing: twin"),
                  "blocks of %s rows: handed over to the whole tensor (%s)", sizes[s], err_text);
        cr_assert_eq(rck, rc0, "blocks of %s rows: exit %d, whole tensor %d", sizes[s], rck, rc0);
        cr_assert_str_eq(out_text, whole, "blocks of %s rows: the report differs: check %s",
                         sizes[s], args);
    }
    unsetenv("RESNORM_CHECK_ROWS");
    unsetenv("RESNORM_TIMING");
    return rc0;
}

/* The LayerNorm scenarios of one input set, text and JSON; the expected exit codes show that
   each scenario exercises what it says (0 pass, 1 mismatch, 4 statistical flag). */
static void layernorm_scenarios(void)
{
    cr_assert_eq(run("eval layernorm --in x=%s --in gamma=%s --in beta=%s --dtype f64 --out %s",
                     P("x.npy"), P("g.npy"), P("b.npy"), P("e")), 0, "%s", err_text);
    static const struct {
        int how, expect;
        rn_dtype d;
    } sc[] = {{0, 0, RN_F32}, {1, 1, RN_F32}, {2, 4, RN_F32}, {0, 0, RN_BF16}, {1, 1, RN_F64}};
    for (size_t s = 0; s < sizeof sc / sizeof *sc; s++) {
        write_actual("e/y.npy", "y.npy", sc[s].d, sc[s].how);
        write_actual("e/mean.npy", "mean.npy", RN_F32, sc[s].how == 2 ? 0 : sc[s].how);
        write_actual("e/rstd.npy", "rstd.npy", RN_F32, sc[s].how == 2 ? 0 : sc[s].how);
        for (int json = 0; json < 2; json++) {
            char args[2048];
            snprintf(args, sizeof args,
                     "layernorm --in x=%s --in gamma=%s --in beta=%s --actual y=%s "
                     "--actual mean=%s --actual rstd=%s --threads 2%s",
                     P("x.npy"), P("g.npy"), P("b.npy"), P("y.npy"), P("mean.npy"),
                     P("rstd.npy"), json ? " --json" : "");
            int rc = same_report(args);
            cr_assert_eq(rc, sc[s].expect, "scenario %zu: exit %d\n%s", s, rc, out_text);
        }
    }
}

Test(check_rows, layernorm_2d)
{
    write_inputs(2, 0);
    layernorm_scenarios();
}

Test(check_rows, layernorm_wide_rows)
{
    ROWS = 20, N = 4096, scale = 0x1p-13; /* 81920 elements: both threads run blocks */
    write_inputs(2, 0);
    layernorm_scenarios();
}

Test(check_rows, layernorm_3d_with_an_inf_in_x)
{
    write_inputs(3, 1);
    layernorm_scenarios();
}

Test(check_rows, rmsnorm_with_and_without_offset)
{
    write_inputs(2, 1);
    scale = 0x1p-19; /* n = 40: the rigorous tier fails it (the LayerNorm cases show a flag) */
    for (int offset = 0; offset < 2; offset++) {
        cr_assert_eq(run("eval rmsnorm --in x=%s --in gamma=%s --attr offset=%d --dtype f64 "
                         "--out %s", P("x.npy"), P("g.npy"), offset, P("e")), 0, "%s", err_text);
        for (int how = 0; how < 3; how++) {
            write_actual("e/y.npy", "y.npy", RN_F32, how);
            write_actual("e/rstd.npy", "rstd.npy", RN_F16, how == 2 ? 0 : how);
            char args[2048];
            snprintf(args, sizeof args,
                     "rmsnorm --in x=%s --in gamma=%s --attr offset=%d --actual y=%s "
                     "--actual rstd=%s --json", P("x.npy"), P("g.npy"), offset, P("y.npy"),
                     P("rstd.npy"));
            int rc = same_report(args);
            cr_assert_eq(rc, how == 0 ? 0 : 1, "offset %d, scenario %d: exit %d\n%s", offset, how,
                         rc, out_text);
        }
    }
}

/* skip_layernorm and skip_rmsnorm (the tier's x is the exact sum x + skip + bias, its sum output
   tested element by element, row by row): skip.npy, ROWS x N, and bias.npy, N, from the same
   generator; every output given, passing, with mismatches / NaN / Inf, and systematically scaled
   (y and sum; the scale is below sum's rigorous bound, so only the tier can see it). */
static void write_skip_inputs(void)
{
    static double k[20 * 4096], c[4096];
    for (size_t i = 0; i < ROWS * N; i++)
        k[i] = (float)(2 * uniform() - 1);
    for (size_t i = 0; i < N; i++)
        c[i] = (float)(0.1 * (uniform() - 0.5));
    size_t s2[2] = {ROWS, N};
    put_npy("skip.npy", RN_F32, 2, s2, k);
    put_npy("bias.npy", RN_F32, 1, s2 + 1, c);
}

Test(check_rows, skip_ops)
{
    ROWS = 20, N = 512;
    scale = 0x1p-25; /* rounds some sums up a step: within their rounding, which the tier sees */
    write_inputs(2, 0);
    write_skip_inputs();
    for (int rms = 0; rms < 2; rms++) {
        const char *op = rms ? "skip_rmsnorm" : "skip_layernorm";
        char ins[1024];
        snprintf(ins, sizeof ins, "--in x=%s --in skip=%s --in bias=%s --in gamma=%s%s%s",
                 P("x.npy"), P("skip.npy"), P("bias.npy"), P("g.npy"), rms ? "" : " --in beta=",
                 rms ? "" : P("b.npy"));
        cr_assert_eq(run("eval %s %s --dtype f64 --out %s", op, ins, P("e")), 0, "%s", err_text);
        for (int how = 0; how < 3; how++) {
            write_actual("e/y.npy", "y.npy", RN_F32, how);
            write_actual("e/sum.npy", "sum.npy", RN_F32, how);
            write_actual("e/rstd.npy", "rstd.npy", RN_F32, how == 2 ? 0 : how);
            if (!rms)
                write_actual("e/mean.npy", "mean.npy", RN_F32, how == 2 ? 0 : how);
            for (int json = 0; json < 2; json++) {
                char args[4096];
                snprintf(args, sizeof args,
                         "%s %s --actual y=%s --actual sum=%s --actual rstd=%s%s%s --threads 2%s",
                         op, ins, P("y.npy"), P("sum.npy"), P("rstd.npy"),
                         rms ? "" : " --actual mean=", rms ? "" : P("mean.npy"),
                         json ? " --json" : "");
                int rc = same_report(args);
                cr_assert_eq(rc, how == 0 ? 0 : how == 1 ? 1 : 4, "%s scenario %d: exit %d\n%s",
                             op, how, rc, out_text);
            }
        }
    }
}

/* The norms' backward (dx by blocks of rows; dgamma, dbeta summed over the blocks, their bounds
   from the blocks' column slots, their tier in a second pass over the rows): 40 rows of 64 in 3
   blocks (the bound's partition: 16, 16, 8 rows), every output given; passing, with mismatches /
   NaN / Inf, with dgamma (and dbeta) systematically scaled within their rigorous bound (only the
   tier sees it), f64 outputs, and an Inf in x (the fast path declines that block: the
   whole-tensor path decides, reading the files whole). */
Test(check_rows, norm_backward_ops)
{
    ROWS = 40, N = 64;
    static double dy[40 * 64];
    for (size_t i = 0; i < ROWS * N; i++)
        dy[i] = (float)(2 * uniform() - 1);
    size_t s2[2] = {ROWS, N};
    put_npy("dy.npy", RN_F32, 2, s2, dy);
    for (int inf = 0; inf < 2; inf++) {
        write_inputs(2, inf);
        /* row 5 of mean 1e4 would set dgamma's floor (its rstd's relative error is large): an
           ordinary row instead */
        rn_array x;
        char err[512];
        cr_assert_eq(npy_read(P("x.npy"), &x, err, sizeof err), 0, "%s", err);
        for (size_t i = 0; i < N; i++)
            x.data[5 * N + i] = (float)(2 * uniform() - 1);
        put_npy("x.npy", RN_F32, 2, s2, x.data);
        rn_array_free(&x);
        for (int rms = 0; rms < 2; rms++) {
            const char *op = rms ? "rmsnorm_backward" : "layernorm_backward";
            scale = rms ? 0x1p-17 : 0x1p-18; /* RMSNorm: dgamma alone; LayerNorm: dbeta flags */
            char ins[1024];
            snprintf(ins, sizeof ins, "--in x=%s --in gamma=%s --in dy=%s", P("x.npy"),
                     P("g.npy"), P("dy.npy"));
            cr_assert_eq(run("eval %s %s --dtype f64 --out %s", op, ins, P("e")), 0, "%s",
                         err_text);
            for (int how = 0; how < 3; how++) {
                rn_dtype d = how == 1 && inf ? RN_F64 : RN_F32;
                write_actual("e/dx.npy", "dx.npy", d, how == 2 ? 0 : how);
                write_actual("e/dgamma.npy", "dgamma.npy", d, how);
                if (!rms)
                    write_actual("e/dbeta.npy", "dbeta.npy", d, how);
                for (int json = 0; json < 2; json++) {
                    char args[4096];
                    snprintf(args, sizeof args,
                             "%s %s --actual dx=%s --actual dgamma=%s%s%s --threads 2%s", op, ins,
                             P("dx.npy"), P("dgamma.npy"), rms ? "" : " --actual dbeta=",
                             rms ? "" : P("dbeta.npy"), json ? " --json" : "");
                    int rc = same_report(args);
                    if (!inf)
                        cr_assert_eq(rc, how == 0 ? 0 : how == 1 ? 1 : 4,
                                     "%s scenario %d: exit %d\n%s", op, how, rc, out_text);
                }
            }
        }
    }
    ROWS = 13, N = 40, scale = 0x1p-17;
}

/* The skip ops' backward (dx = dskip by rows; dbias, dgamma, dbeta summed over the blocks, their
   bounds composed over every rounded sum x + skip + bias an implementation may form, their tier
   in a second pass that runs the twin again for dbias's rows): 40 rows of 256 (the bound's
   partition 16, 16, 8 rows, in chunks of 1, 2, 5, 13 rows and whole), every output
   given, with and without a bias.  Row 7 of dy is zero: its dx is an exact 0 the fast path cannot
   certify, on the exact sums and on every rounded one, so the twin decides that row alone.
   Passing (f32, and bf16 outputs), with mismatches / NaN / Inf (f32; f64 outputs), with dbias and
   dgamma scaled within their rigorous bound (only the tier sees it), and with an Inf in x (the
   fast path declines that block: the whole-tensor path decides). */
static void skip_backward_scenarios(int rms, int bias, int inf)
{
    const char *op = rms ? "skip_rmsnorm_backward" : "skip_layernorm_backward";
    char ins[1024];
    snprintf(ins, sizeof ins, "--in x=%s --in skip=%s --in gamma=%s --in dy=%s%s%s", P("x.npy"),
             P("skip.npy"), P("g.npy"), P("dy.npy"), bias ? " --in bias=" : "",
             bias ? P("bias.npy") : "");
    cr_assert_eq(run("eval %s %s --dtype f64 --out %s", op, ins, P("e")), 0, "%s", err_text);
    static const struct {
        int how, expect;
        rn_dtype d;
    } sc[] = {{0, 0, RN_F32}, {1, 1, RN_F32}, {2, 4, RN_F32}, {0, 0, RN_BF16}, {1, 1, RN_F64}};
    for (size_t s = 0; s < sizeof sc / sizeof *sc; s++) {
        write_actual("e/dx.npy", "dx.npy", sc[s].d, sc[s].how == 2 ? 0 : sc[s].how);
        write_actual("e/dskip.npy", "dskip.npy", sc[s].d, sc[s].how == 2 ? 0 : sc[s].how);
        write_actual("e/dbias.npy", "dbias.npy", sc[s].d, sc[s].how);
        write_actual("e/dgamma.npy", "dgamma.npy", sc[s].d, sc[s].how);
        if (!rms)
            write_actual("e/dbeta.npy", "dbeta.npy", sc[s].d, sc[s].how == 2 ? 0 : sc[s].how);
        for (int json = 0; json < 2; json++) {
            char args[4096];
            snprintf(args, sizeof args,
                     "%s %s --actual dx=%s --actual dskip=%s --actual dbias=%s --actual dgamma=%s"
                     "%s%s --threads 2%s", op, ins, P("dx.npy"), P("dskip.npy"), P("dbias.npy"),
                     P("dgamma.npy"), rms ? "" : " --actual dbeta=", rms ? "" : P("dbeta.npy"),
                     json ? " --json" : "");
            blocks_decide = !inf;
            int rc = same_report(args);
            blocks_decide = 0;
            if (!inf)
                cr_assert_eq(rc, sc[s].expect, "%s%s scenario %zu: exit %d\n%s", op,
                             bias ? " (bias)" : "", s, rc, out_text);
        }
    }
}

static void skip_backward_inputs(int inf)
{
    static double dy[20 * 4096];
    size_t s2[2] = {ROWS, N};
    write_inputs(2, inf);
    write_skip_inputs();
    rn_array x;
    char err[512];
    cr_assert_eq(npy_read(P("x.npy"), &x, err, sizeof err), 0, "%s", err);
    for (size_t i = 0; i < N; i++) /* row 5 of mean 1e4 would set dgamma's floor: ordinary */
        x.data[5 * N + i] = (float)(2 * uniform() - 1);
    put_npy("x.npy", RN_F32, 2, s2, x.data);
    rn_array_free(&x);
    for (size_t i = 0; i < ROWS * N; i++)
        dy[i] = i / N == 7 ? 0.0 : (float)(2 * uniform() - 1);
    put_npy("dy.npy", RN_F32, 2, s2, dy);
}

Test(check_rows, skip_backward_ops)
{
    ROWS = 40, N = 256;
    for (int inf = 0; inf < 2; inf++) {
        skip_backward_inputs(inf);
        for (int rms = 0; rms < 2; rms++) {
            scale = 0x1p-17; /* dbias and dgamma flag, within their rigorous bound */
            skip_backward_scenarios(rms, 1, inf);
            if (!inf)
                skip_backward_scenarios(rms, 0, inf);
        }
    }
    ROWS = 13, N = 40, scale = 0x1p-17;
}

/* The skip ops' backward by blocks on 1, 2 and 3 threads (80 rows of 1024, above
   RN_PAR_MIN_WORK: every thread busy; the blocks' column terms reach the totals in block order
   whichever thread ends first) gives the whole-tensor report (text and JSON), dx and dbias with
   mismatches, the tier flagging dgamma. */
Test(check_rows, skip_backward_does_not_depend_on_threads)
{
    ROWS = 80, N = 1024, scale = 0x1p-16;
    skip_backward_inputs(0);
    for (int rms = 0; rms < 2; rms++) {
        const char *op = rms ? "skip_rmsnorm_backward" : "skip_layernorm_backward";
        char ins[1024];
        snprintf(ins, sizeof ins, "--in x=%s --in skip=%s --in gamma=%s --in dy=%s --in bias=%s",
                 P("x.npy"), P("skip.npy"), P("g.npy"), P("dy.npy"), P("bias.npy"));
        cr_assert_eq(run("eval %s %s --dtype f64 --out %s", op, ins, P("e")), 0, "%s", err_text);
        write_actual("e/dx.npy", "dx.npy", RN_F32, 1);
        write_actual("e/dbias.npy", "dbias.npy", RN_F32, 1);
        write_actual("e/dgamma.npy", "dgamma.npy", RN_F32, 2);
        for (int json = 0; json < 2; json++) {
            static char whole[sizeof out_text];
            setenv("RESNORM_CHECK_ROWS", "0", 1);
            int rc0 = run("check %s %s --actual dx=%s --actual dbias=%s --actual dgamma=%s "
                          "--threads 2%s", op, ins, P("dx.npy"), P("dbias.npy"), P("dgamma.npy"),
                          json ? " --json" : "");
            unsetenv("RESNORM_CHECK_ROWS");
            cr_assert_eq(rc0, 1, "%s: exit %d (the edited dx and dbias mismatch): %s%s", op, rc0,
                         out_text, err_text);
            cr_assert_not_null(strstr(out_text, json ? "\"flag\": true" : "dgamma  scale FLAG"),
                               "%s: the tier does not flag dgamma: %s", op, out_text);
            memcpy(whole, out_text, sizeof whole);
            for (int t = 1; t <= 3; t++) {
                setenv("RESNORM_TIMING", "1", 1);
                int rc = run("check %s %s --actual dx=%s --actual dbias=%s --actual dgamma=%s "
                             "--threads %d%s", op, ins, P("dx.npy"), P("dbias.npy"),
                             P("dgamma.npy"), t, json ? " --json" : "");
                unsetenv("RESNORM_TIMING");
                cr_assert(strstr(err_text, "timing: blocks") && !strstr(err_text, "timing: twin"),
                          "%s on %d threads: not decided by blocks (%s)", op, t, err_text);
                cr_assert_eq(rc, rc0);
                cr_assert_str_eq(out_text, whole, "%s on %d threads: the report differs", op, t);
            }
        }
    }
    ROWS = 13, N = 40, scale = 0x1p-17;
}

/* Runs `resnorm check ARGS` whole and in blocks of 1, 2, 5 rows: the same exit code (2) and the
   same message on standard error. */
static void same_error(const char *args)
{
    static char whole[sizeof err_text];
    setenv("RESNORM_CHECK_ROWS", "0", 1);
    cr_assert_eq(run("check %s", args), 2, "%s", err_text);
    memcpy(whole, err_text, sizeof whole);
    static const char *const sizes[] = {"1", "2", "5"};
    for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++) {
        setenv("RESNORM_CHECK_ROWS", sizes[s], 1);
        cr_assert_eq(run("check %s", args), 2, "blocks of %s rows: %s", sizes[s], err_text);
        cr_assert_str_eq(err_text, whole, "blocks of %s rows", sizes[s]);
    }
    unsetenv("RESNORM_CHECK_ROWS");
}

/* x read a block at a time: an input value the compute dtype cannot hold is reported as the whole
   tensor's check reports it (x's first bad element, with its index in the whole x; a parameter's
   only when x has none). */
Test(check_rows, input_errors_as_the_whole_tensor_reports_them)
{
    write_inputs(2, 0);
    cr_assert_eq(run("eval layernorm --in x=%s --in gamma=%s --in beta=%s --dtype f32 --out %s",
                     P("x.npy"), P("g.npy"), P("b.npy"), P("e")), 0, "%s", err_text);
    rn_array x, g;
    char err[512];
    cr_assert_eq(npy_read(P("x.npy"), &x, err, sizeof err), 0, "%s", err);
    cr_assert_eq(npy_read(P("g.npy"), &g, err, sizeof err), 0, "%s", err);
    double x9 = x.data[9 * N + 3], x11 = x.data[11 * N + 1], g5 = g.data[5];
    x.data[9 * N + 3] = 0.1, x.data[11 * N + 1] = 0.3, g.data[5] = 0.7; /* not binary32 values */
    put_npy("x64bad.npy", RN_F64, x.ndim, x.shape, x.data);
    put_npy("g64bad.npy", RN_F64, g.ndim, g.shape, g.data);
    x.data[9 * N + 3] = x9, x.data[11 * N + 1] = x11, g.data[5] = g5;
    put_npy("x64.npy", RN_F64, x.ndim, x.shape, x.data);
    put_npy("g64.npy", RN_F64, g.ndim, g.shape, g.data);
    rn_array_free(&x), rn_array_free(&g);
    static const char *const xs[] = {"x64bad.npy", "x64.npy", "x64bad.npy"};
    static const char *const gs[] = {"g64.npy", "g64bad.npy", "g64bad.npy"};
    static const char *const want[] = {"element 363 (0.10000000000000001)",
                                       "element 5 (0.69999999999999996)",
                                       "element 363 (0.10000000000000001)"};
    for (int c = 0; c < 3; c++) {
        char args[2048];
        snprintf(args, sizeof args, "layernorm --in x=%s --in gamma=%s --in beta=%s --actual y=%s "
                 "--dtype f32", P(xs[c]), P(gs[c]), P("b.npy"), P("e/y.npy"));
        same_error(args);
        cr_assert_not_null(strstr(err_text, want[c]), "case %d: %s", c, err_text);
    }
}

/* --allow ftz and the ops without a row-wise tier keep the whole-tensor path. */
Test(check_rows, other_checks_keep_the_whole_tensor_path)
{
    write_inputs(2, 0);
    cr_assert_eq(run("eval layernorm --in x=%s --in gamma=%s --in beta=%s --dtype f32 --out %s",
                     P("x.npy"), P("g.npy"), P("b.npy"), P("e")), 0, "%s", err_text);
    setenv("RESNORM_TIMING", "1", 1);
    setenv("RESNORM_CHECK_ROWS", "2", 1);
    cr_assert_eq(run("check layernorm --in x=%s --in gamma=%s --in beta=%s --actual y=%s "
                     "--allow ftz", P("x.npy"), P("g.npy"), P("b.npy"), P("e/y.npy")), 0, "%s",
                 out_text);
    cr_assert_null(strstr(err_text, "timing: blocks"), "%s", err_text);
    cr_assert_eq(run("check residual --in x=%s --in f=%s --actual y=%s", P("x.npy"), P("x.npy"),
                     P("x.npy")), 1, "%s%s", out_text, err_text);
    cr_assert_null(strstr(err_text, "timing: blocks"), "%s", err_text);
    /* The backward's blocks sum the fast path's certified columns: RESNORM_FASTPATH=0 (the twin
       alone) takes the whole tensor, with the same verdict. */
    cr_assert_eq(run("eval layernorm_backward --in x=%s --in gamma=%s --in dy=%s --dtype f32 "
                     "--out %s", P("x.npy"), P("g.npy"), P("x.npy"), P("e")), 0, "%s", err_text);
    const char *bwd = "check layernorm_backward --in x=%s --in gamma=%s --in dy=%s --actual dx=%s "
                      "--actual dgamma=%s --actual dbeta=%s";
    cr_assert_eq(run(bwd, P("x.npy"), P("g.npy"), P("x.npy"), P("e/dx.npy"), P("e/dgamma.npy"),
                     P("e/dbeta.npy")), 0, "%s%s", out_text, err_text);
    cr_assert_not_null(strstr(err_text, "timing: blocks"), "%s", err_text);
    setenv("RESNORM_FASTPATH", "0", 1);
    cr_assert_eq(run(bwd, P("x.npy"), P("g.npy"), P("x.npy"), P("e/dx.npy"), P("e/dgamma.npy"),
                     P("e/dbeta.npy")), 0, "%s%s", out_text, err_text);
    cr_assert_null(strstr(err_text, "timing: blocks"), "%s", err_text);
    unsetenv("RESNORM_FASTPATH");
    unsetenv("RESNORM_CHECK_ROWS");
    unsetenv("RESNORM_TIMING");
}

/* The backward bounds of LayerNorm and RMSNorm (ref/layernorm_bound.c, ref/rmsnorm_bound.c) run
   their rows on the threads in blocks whose column sums are added in block order: the report
   (text and JSON) and the exit code are the same on 1, 2 and 3 threads, on 80 rows of 1024 (every
   thread busy: above RN_PAR_MIN_WORK), with mismatches, a NaN and an Inf in dx. */
Test(check_rows, backward_bounds_do_not_depend_on_threads)
{
    ROWS = 80, N = 1024;
    write_inputs(2, 0);
    static double dy[80 * 1024];
    for (size_t i = 0; i < ROWS * N; i++)
        dy[i] = (float)(2 * uniform() - 1);
    size_t s2[2] = {ROWS, N};
    put_npy("dy.npy", RN_F32, 2, s2, dy);
    static const char *const ops[2] = {"layernorm_backward", "rmsnorm_backward"};
    for (int o = 0; o < 2; o++) {
        cr_assert_eq(run("eval %s --in x=%s --in gamma=%s --in dy=%s --dtype f64 --out %s", ops[o],
                         P("x.npy"), P("g.npy"), P("dy.npy"), P("e")), 0, "%s", err_text);
        write_actual("e/dx.npy", "dx.npy", RN_F32, 1);
        write_actual("e/dgamma.npy", "dgamma.npy", RN_F32, 0);
        for (int json = 0; json < 2; json++) {
            static char first[sizeof out_text];
            int rc1 = 0;
            for (int t = 1; t <= 3; t++) {
                int rc = run("check %s --in x=%s --in gamma=%s --in dy=%s --actual dx=%s "
                             "--actual dgamma=%s --threads %d%s", ops[o], P("x.npy"), P("g.npy"),
                             P("dy.npy"), P("dx.npy"), P("dgamma.npy"), t, json ? " --json" : "");
                cr_assert_eq(rc, 1, "%s: exit %d (the edited dx mismatches): %s%s", ops[o], rc,
                             out_text, err_text);
                if (t == 1) {
                    memcpy(first, out_text, sizeof first);
                    rc1 = rc;
                    continue;
                }
                cr_assert_eq(rc, rc1);
                cr_assert_str_eq(out_text, first, "%s on %d threads: the report differs", ops[o],
                                 t);
            }
        }
    }
    ROWS = 13, N = 40;
}
