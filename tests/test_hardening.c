/* Regression tests of issue 11 (hardening): one test (or more) per item, each reproducing the
 * failure the issue describes as a hostile or careless user would.  `resnorm` ($RESNORM, default
 * build/resnorm) runs as a subprocess in a fresh temporary directory per test, often under a shell
 * that sets a resource limit (`ulimit -f` for a full disk, `ulimit -v` for a small machine) or with
 * `timeout` (a hang becomes exit 124, which no assertion accepts).
 *
 * Expected outcomes are the documented contract (specs/cli.md: exit codes, messages naming the
 * file, no partial output), never values copied from the code under test; the suite digest is
 * recomputed here independently with sha256sum. */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "npy.h"

#define CLI_HARNESS_PREFIX "/tmp/resnorm_test_hard."
#include "cli_harness.h"

TestSuite(hardening, .init = setup, .fini = teardown, .timeout = 600);


/* Under ASan the binary reserves terabytes of address space: `ulimit -v` cannot apply there. */
static int sanitized(void) { return strstr(resnorm(), "asan") != NULL; }

/* A small LayerNorm problem: x (3, 4), gamma, beta (4,), f32.  A non-zero `shift` gives another
   problem whose y, mean and rstd all differ (x scaled by 2 and shifted; gamma and beta changed:
   LayerNorm's y does not change under x -> a x + b). */
static void put_layernorm_inputs(const char *sfx, double shift)
{
    size_t sx[2] = {3, 4}, sg[1] = {4};
    double x[12], g[4] = {1, 2, 0.5, -1}, b[4] = {0, 0.25, -0.5, 1};
    for (int i = 0; i < 12; i++)
        x[i] = (double)((i * 7) % 5) * (shift ? 2 : 1) + shift;
    for (int i = 0; shift && i < 4; i++)
        g[i] += 1, b[i] -= 0.125;
    char nx[64], ng[64], nb[64];
    snprintf(nx, sizeof nx, "x%s.npy", sfx);
    snprintf(ng, sizeof ng, "g%s.npy", sfx);
    snprintf(nb, sizeof nb, "b%s.npy", sfx);
    put_npy(nx, RN_F32, 2, sx, x);
    put_npy(ng, RN_F32, 1, sg, g);
    put_npy(nb, RN_F32, 1, sg, b);
}

#define LN_IN(sfx) "--in x=$T/x" sfx ".npy --in gamma=$T/g" sfx ".npy --in beta=$T/b" sfx ".npy"

static int has(const char *text, const char *needle) { return strstr(text, needle) != NULL; }

/* A copy of the committed golden/ under $T/root (verify and run-check edit it, never golden/). */
static void copy_golden(void)
{
    cr_assert_eq(sh("mkdir -p $T/root && cp -r golden $T/root/golden"), 0);
}

/* Edit $T/root/golden/manifest.json with a Python statement on `m` (the parsed manifest) and `c`
   (the case with id `id`, or None). */
static void edit_manifest(const char *id, const char *stmt)
{
    cr_assert_eq(sh("/usr/bin/python3 -c \"import json; p = '$T/root/golden/manifest.json'; "
                    "m = json.load(open(p)); c = ([k for k in m['cases'] if k['id'] == '%s'] + "
                    "[None])[0]; %s; json.dump(m, open(p, 'w'), indent=2)\"", id, stmt),
                 0, "%s", err_text);
}

/* DIR/<id>/<output>.npy for case `id`: its expected f32 outputs copied from golden/. */
static void outputs_of(const char *dir, const char *id)
{
    cr_assert_eq(sh("/usr/bin/python3 -c \"import json, os, shutil; "
                    "c = [k for k in json.load(open('golden/manifest.json'))['cases'] "
                    "if k['id'] == '%s'][0]; os.makedirs('%s/%s', exist_ok=True); "
                    "[shutil.copy(p, '%s/%s/' + n + '.npy') for n, p in "
                    "c['expected']['f32'].items()]\"", id, dir, id, dir, id),
                 0, "%s", err_text);
}

/* ---------------------------------------------------------------- 1. FIFO input */

Test(hardening, item01_fifo_input_is_refused_not_read)
{
    put_layernorm_inputs("", 0);
    cr_assert_eq(mkfifo(P("fifo.npy"), 0600), 0);
    int rc = sh("timeout 20 $R eval layernorm --in x=$T/fifo.npy --in gamma=$T/g.npy "
                "--in beta=$T/b.npy --out $T/o");
    cr_assert_eq(rc, 2, "exit %d (124: blocked on the FIFO): %s", rc, err_text);
    cr_assert(has(err_text, "fifo.npy") && has(err_text, "not a regular file"), "%s", err_text);
    rc = sh("timeout 20 $R check layernorm " LN_IN("") " --actual y=$T/fifo.npy");
    cr_assert_eq(rc, 2, "exit %d: %s", rc, err_text);
}

/* ---------------------------------------------------------------- 2. rollback keeps old outputs */

Test(hardening, item02_failed_eval_keeps_the_previous_outputs)
{
    put_layernorm_inputs("", 0);
    put_layernorm_inputs("2", 3.5);
    cr_assert_eq(sh("$R eval layernorm " LN_IN("") " --out $T/o"), 0, "%s", err_text);
    cr_assert_eq(sh("cp $T/o/y.npy $T/y.old && cp $T/o/rstd.npy $T/rstd.old"), 0);
    /* mean.npy becomes a directory: the second run cannot put its mean in place */
    cr_assert_eq(sh("rm $T/o/mean.npy && mkdir $T/o/mean.npy"), 0);
    int rc = sh("$R eval layernorm " LN_IN("2") " --out $T/o");
    cr_assert_eq(rc, 2, "%s", err_text);
    cr_assert(has(err_text, "mean.npy"), "%s", err_text);
    cr_assert_eq(sh("cmp $T/o/y.npy $T/y.old && cmp $T/o/rstd.npy $T/rstd.old"), 0,
                 "the first run's y.npy / rstd.npy were destroyed or replaced");
    cr_assert_eq(sh("test -d $T/o/mean.npy && test -z \"$(ls -A $T/o | grep -v '^[ymr]')\""), 0,
                 "temporary or backup files left in o/");
}

/* A write failure in the middle of publishing (a full disk: `ulimit -f`) restores every file the
   run replaced. */
Test(hardening, item02_write_failure_restores_replaced_files)
{
    put_layernorm_inputs("", 0);
    size_t sx[2] = {2, 3000}, sg[1] = {3000};
    double *x = malloc(6000 * sizeof *x), g[3000], b[3000];
    for (int i = 0; i < 6000; i++)
        x[i] = (double)(i % 17) - 8;
    for (int i = 0; i < 3000; i++)
        g[i] = 1, b[i] = 0;
    put_npy("xb.npy", RN_F32, 2, sx, x);
    put_npy("gb.npy", RN_F32, 1, sg, g);
    put_npy("bb.npy", RN_F32, 1, sg, b);
    free(x);
    cr_assert_eq(sh("$R eval layernorm " LN_IN("") " --out $T/o && cp -r $T/o $T/o.old"), 0);
    /* y.npy of the big problem is 24 KB: over a 16 KB file-size limit, mean/rstd are not */
    int rc = sh("trap '' XFSZ; ulimit -f 16; $R eval layernorm --in x=$T/xb.npy --in gamma=$T/gb.npy"
                " --in beta=$T/bb.npy --out $T/o");
    cr_assert_eq(rc, 2, "exit %d: %s", rc, err_text);
    cr_assert_eq(sh("diff -r $T/o $T/o.old"), 0, "%s", out_text);
}

/* ---------------------------------------------------------------- 3. created directories */

Test(hardening, item03_failed_eval_removes_every_directory_it_created)
{
    put_layernorm_inputs("", 0);
    char deep[2048] = "";
    for (int i = 0; i < 40; i++)
        strcat(deep, "/d");
    int rc = sh("trap '' XFSZ; ulimit -f 0; $R eval layernorm " LN_IN("") " --out $T/top%s", deep);
    cr_assert_eq(rc, 2, "exit %d: %s", rc, err_text);
    cr_assert_eq(sh("test ! -e $T/top"), 0, "directories left behind: %s",
                 (sh("find $T/top | wc -l"), out_text));
}

/* ---------------------------------------------------------------- 4 + 5. run-check argv */

/* A manifest case with 30 inputs and 30 attributes: a clear input error, never a crash. */
Test(hardening, item04_many_manifest_inputs_and_attrs_are_an_error_not_a_crash)
{
    copy_golden();
    edit_manifest("layernorm/gpt2_row_f32",
                  "[c['inputs'].__setitem__('in%d' % i, c['inputs']['x']) for i in range(30)]; "
                  "[c['attrs'].__setitem__('a%d' % i, '1') for i in range(30)]");
    outputs_of("$T/out", "layernorm/gpt2_row_f32");
    int rc = sh("$R golden run-check $T/out --root $T/root --dtype f32");
    cr_assert_eq(rc, 2, "exit %d (139: SIGSEGV): %s", rc, err_text);
    cr_assert(has(err_text, "layernorm/gpt2_row_f32"), "%s", err_text);
}

/* The JSON report names each checked file; under ASan (make asan) a path pointing into a dead
   stack frame is a stack-use-after-return report and a non-zero exit. */
Test(hardening, item05_run_check_json_reports_the_files_it_checked)
{
    outputs_of("$T/out", "layernorm/gpt2_row_f32");
    outputs_of("$T/out", "rmsnorm_backward/llama_row_f32");
    int rc = sh("$R golden run-check $T/out --json --root . --dtype f32");
    cr_assert_eq(rc, 0, "exit %d: %s", rc, err_text);
    char want[600];
    snprintf(want, sizeof want, "\"file\": \"%s/out/layernorm/gpt2_row_f32/mean.npy\"", tmpdir);
    cr_assert(has(out_text, want), "%s not in %s", want, out_text);
    snprintf(want, sizeof want, "\"file\": \"%s/out/rmsnorm_backward/llama_row_f32/dgamma.npy\"",
             tmpdir);
    cr_assert(has(out_text, want), "%s not in the report", want);
}

/* ---------------------------------------------------------------- 6. verify covers the manifest */

Test(hardening, item06_verify_catches_a_changed_eps_a_moved_input_and_a_deleted_case)
{
    /* The three corruptions in one tree, so that one verify (it regenerates the whole suite: the
       costly part under the sanitizers) must name each case; the pristine tree's exit 0 is
       item06_verify_prints_one_digest_of_the_manifest_and_every_file's. */
    copy_golden();
    edit_manifest("layernorm/onnx_2345_axis1_f32", "c['attrs']['eps'] = '10'");
    /* an input pointed at a copy of the same file elsewhere (under golden/: same hash) */
    cr_assert_eq(sh("cp golden/layernorm/n1_f32/x.npy $T/root/golden/x_copy.npy"), 0);
    edit_manifest("layernorm/n1_f32", "c['inputs']['x'] = 'golden/x_copy.npy'; "
                  "c['sha256']['golden/x_copy.npy'] = c['sha256'].pop('golden/layernorm/n1_f32/x.npy')");
    /* a case deleted with its files */
    edit_manifest("residual/random_f32", "m['cases'].remove(c)");
    cr_assert_eq(sh("/usr/bin/python3 -c \"import json; c = [k for k in json.load(open("
                    "'golden/manifest.json'))['cases'] if k['id'] == 'residual/random_f32'][0]; "
                    "print(' '.join(c['sha256']))\" | tr ' ' '\\n' | sed 's|^|$T/root/|' | "
                    "xargs rm -f"), 0);
    cr_assert_eq(sh("$R golden verify --root $T/root"), 1, "%s", out_text);
    cr_assert(has(out_text, "layernorm/onnx_2345_axis1_f32"), "%s", out_text);
    cr_assert(has(out_text, "layernorm/n1_f32"), "%s", out_text);
    cr_assert(has(out_text, "residual/random_f32"), "%s", out_text);
}

/* The suite digest: SHA-256 of what `sha256sum` prints for the manifest and every file it names,
   sorted by path, relative to the root -- recomputed here with coreutils. */
Test(hardening, item06_verify_prints_one_digest_of_the_manifest_and_every_file)
{
    cr_assert_eq(sh("/usr/bin/python3 -c \"import json; m = json.load(open('golden/manifest.json'));"
                    " print('\\n'.join(sorted({'golden/manifest.json'} | {p for c in m['cases'] "
                    "for p in c['sha256']})))\" | LC_ALL=C sort | xargs sha256sum | sha256sum | "
                    "cut -c1-64"), 0);
    char want[128];
    snprintf(want, sizeof want, "digest sha256:%.64s", out_text);
    cr_assert_eq(sh("$R golden verify --root ."), 0, "%s", out_text);
    cr_assert(has(out_text, want), "'%s' not in: %s", want, out_text);
    /* --digest: a mismatch is exit 1 */
    cr_assert_eq(sh("$R golden verify --root . --digest %.64s", want + 14), 0, "%s", err_text);
    cr_assert_eq(sh("$R golden verify --root . --digest %064d", 0), 1);
    cr_assert(has(out_text, "DIGEST"), "%s", out_text);
}

/* ---------------------------------------------------------------- 7. paths confined */

Test(hardening, item07_manifest_paths_outside_the_suite_are_refused)
{
    copy_golden();
    cr_assert_eq(sh("mkdir -p $T/secret && cp golden/layernorm/n1_f32/x.npy $T/secret/x.npy"), 0);
    edit_manifest("layernorm/n1_f32", "c['inputs']['x'] = 'golden/../../secret/x.npy'; "
                  "c['sha256']['golden/../../secret/x.npy'] = c['sha256']['golden/layernorm/n1_f32/x.npy']");
    int rc = sh("$R golden verify --root $T/root");
    cr_assert(rc == 1 || rc == 2, "exit %d", rc);
    cr_assert(has(out_text, "golden/../../secret/x.npy") || has(err_text, "golden/../../secret"),
              "%s%s", out_text, err_text);
    cr_assert(!has(out_text, "0 differ or are missing"), "%s", out_text);
    /* run-check must not read it either */
    outputs_of("$T/out", "layernorm/n1_f32");
    rc = sh("$R golden run-check $T/out --root $T/root --dtype f32");
    cr_assert_eq(rc, 2, "exit %d: %s%s", rc, out_text, err_text);
    cr_assert(has(err_text, "outside"), "%s", err_text);
}

Test(hardening, item07_absolute_paths_and_symlinks_out_of_the_root_are_refused)
{
    copy_golden();
    cr_assert_eq(sh("mkdir -p $T/elsewhere && mv $T/root/golden/layernorm/n1_f32/x.npy "
                    "$T/elsewhere/x.npy && ln -s $T/elsewhere/x.npy "
                    "$T/root/golden/layernorm/n1_f32/x.npy"), 0);
    cr_assert_eq(sh("$R golden verify --root $T/root"), 1, "%s", out_text);
    cr_assert(has(out_text, "golden/layernorm/n1_f32/x.npy"), "%s", out_text);
    cr_assert_eq(sh("rm -rf $T/root/golden && cp -r golden $T/root/golden"), 0);
    edit_manifest("layernorm/n1_f32", "c['inputs']['x'] = '/etc/passwd'; "
                  "c['sha256']['/etc/passwd'] = '0' * 64");
    int rc = sh("$R golden verify --root $T/root");
    cr_assert(rc == 1 || rc == 2, "exit %d", rc);
    cr_assert(has(out_text, "/etc/passwd") || has(err_text, "/etc/passwd"), "%s", out_text);
}

Test(hardening, item07_run_check_stays_inside_dir)
{
    copy_golden();
    /* a case id climbing out of DIR */
    edit_manifest("layernorm/n1_f32", "c['id'] = 'layernorm/../../escape'");
    outputs_of("$T/escape_src", "layernorm/n1_f32");
    cr_assert_eq(sh("mkdir -p $T/out/layernorm $T/escape && cp $T/escape_src/layernorm/n1_f32/* "
                    "$T/escape/"), 0);
    int rc = sh("$R golden run-check $T/out --root $T/root --dtype f32");
    cr_assert_eq(rc, 2, "exit %d: %s%s", rc, out_text, err_text);
    cr_assert(has(err_text, "layernorm/../../escape"), "%s", err_text);
    /* an output that is a symlink to a file outside DIR */
    outputs_of("$T/out2", "layernorm/gpt2_row_f32");
    cr_assert_eq(sh("mv $T/out2/layernorm/gpt2_row_f32/y.npy $T/y_outside.npy && ln -s "
                    "$T/y_outside.npy $T/out2/layernorm/gpt2_row_f32/y.npy"), 0);
    rc = sh("$R golden run-check $T/out2 --root . --dtype f32");
    cr_assert_eq(rc, 2, "exit %d: %s%s", rc, out_text, err_text);
    cr_assert(has(err_text, "y.npy"), "%s", err_text);
}

/* ---------------------------------------------------------------- 8. symlink loops */

Test(hardening, item08_verify_does_not_follow_directory_symlink_loops)
{
    copy_golden();
    cr_assert_eq(sh("ln -s . $T/root/golden/layernorm/loop && ln -s .. $T/root/golden/rmsnorm/up"),
                 0);
    /* verify regenerates every case (minutes under the sanitizers on a loaded machine): the
       timeout only has to end a walk that never would */
    int rc = sh("timeout 480 $R golden verify --root $T/root");
    cr_assert_eq(rc, 1, "exit %d (124: still walking)", rc);
    cr_assert(has(out_text, "golden/layernorm/loop"));
    cr_assert(has(out_text, "golden/rmsnorm/up"));
}

/* ---------------------------------------------------------------- 9. non-regular outputs */

Test(hardening, item09_run_check_refuses_non_regular_output_files)
{
    const char *kinds[] = {"mkfifo $T/out/layernorm/gpt2_row_f32/y.npy",
                           "mkdir $T/out/layernorm/gpt2_row_f32/y.npy",
                           "ln -s /dev/zero $T/out/layernorm/gpt2_row_f32/y.npy"};
    for (int k = 0; k < 3; k++) {
        sh("rm -rf $T/out");
        outputs_of("$T/out", "layernorm/gpt2_row_f32");
        cr_assert_eq(sh("rm $T/out/layernorm/gpt2_row_f32/y.npy && %s", kinds[k]), 0);
        int rc = sh("timeout 60 $R golden run-check $T/out --root . --dtype f32");
        cr_assert_eq(rc, 2, "%s: exit %d: %s%s", kinds[k], rc, out_text, err_text);
        cr_assert(has(err_text, "y.npy"), "%s", err_text);
    }
}

/* ---------------------------------------------------------------- 10. stdout errors */

Test(hardening, item10_unwritable_stdout_is_an_error)
{
    const char *cmds[] = {"$R golden list --json --root . >/dev/full",
                          "$R golden list --root . >/dev/full",
                          "$R golden run-check $T/out --json --root . --dtype f32 >/dev/full",
                          "$R --help >/dev/full", "$R eval --help >/dev/full",
                          "$R check layernorm " LN_IN("") " --actual y=$T/o/y.npy --json >/dev/full"};
    put_layernorm_inputs("", 0);
    cr_assert_eq(sh("$R eval layernorm " LN_IN("") " --out $T/o"), 0);
    outputs_of("$T/out", "layernorm/gpt2_row_f32");
    /* control: the same report to a writable stdout is complete and exit 0 */
    cr_assert_eq(run("golden list --json --root ."), 0, "%s", err_text);
    cr_assert(has(out_text, "\"id\": \"layernorm/gpt2_row_f32\""));
    for (size_t k = 0; k < sizeof cmds / sizeof cmds[0]; k++) {
        int rc = sh("%s", cmds[k]);
        cr_assert_eq(rc, 2, "%s: exit %d", cmds[k], rc);
        cr_assert(has(err_text, "standard output"), "%s: %s", cmds[k], err_text);
    }
}

/* ---------------------------------------------------------------- 11. gen into a bad directory */

Test(hardening, item11_gen_into_a_full_or_unwritable_directory_exits_2_without_a_tree)
{
    /* full: a 64 KB file-size limit fails an early write of a big case */
    int rc = sh("mkdir $T/p && trap '' XFSZ; ulimit -f 64; $R golden gen --out $T/p/g");
    cr_assert_eq(rc, 2, "exit %d: %s", rc, err_text);
    cr_assert_eq(sh("test -z \"$(ls -A $T/p)\""), 0, "left behind: %s",
                 (sh("ls -A $T/p"), out_text));
    /* parents created for DIR go too */
    rc = sh("trap '' XFSZ; ulimit -f 64; $R golden gen --out $T/new/a/b/g");
    cr_assert_eq(rc, 2, "exit %d: %s", rc, err_text);
    cr_assert_eq(sh("test ! -e $T/new"), 0, "parents left behind");
    /* unwritable: a path under a regular file */
    cr_assert_eq(sh("touch $T/file"), 0);
    rc = sh("$R golden gen --out $T/file/g");
    cr_assert_eq(rc, 2, "exit %d: %s", rc, err_text);
    /* an existing non-empty directory is not overwritten */
    cr_assert_eq(sh("mkdir -p $T/full && touch $T/full/keep"), 0);
    cr_assert_eq(sh("$R golden gen --out $T/full"), 2, "%s", err_text);
    cr_assert_eq(sh("test \"$(ls -A $T/full)\" = keep"), 0);
}

/* ---------------------------------------------------------------- 12. lying .npy sizes */

/* A 2 GiB sparse file: header says 10 elements (trailing 2 GiB), or the right size for a shape
   that does not fit.  Both are refused from the header and the file size, without reading the
   data (under a 1 GiB address-space limit, which reading it would exceed). */
Test(hardening, item12_lying_or_huge_npy_is_refused_before_reading_its_data)
{
    put_layernorm_inputs("", 0);
    const char hdr_small[] = "{'descr': '<f8', 'fortran_order': False, 'shape': (10,), }";
    const char hdr_big[] = "{'descr': '<f4', 'fortran_order': False, 'shape': (536870912,), }";
    const char *hdrs[2] = {hdr_small, hdr_big};
    for (int k = 0; k < 2; k++) {
        char img[128];
        size_t hl = strlen(hdrs[k]);
        memcpy(img, "\x93NUMPY\x01\x00", 8);
        img[8] = 118, img[9] = 0; /* header length: 10 + 118 = 128 bytes before the data */
        memcpy(img + 10, hdrs[k], hl);
        memset(img + 10 + hl, ' ', 118 - hl - 1);
        img[127] = '\n';
        char name[32];
        snprintf(name, sizeof name, "big%d.npy", k);
        FILE *f = fopen(P(name), "wb");
        cr_assert_not_null(f);
        cr_assert_eq(fwrite(img, 1, 128, f), 128);
        fclose(f);
        cr_assert_eq(truncate(P(name), 128 + ((off_t)1 << 31)), 0);
    }
    const char *lim = sanitized() ? "" : "ulimit -v 1048576;";
    int rc = sh("%s timeout 60 $R check layernorm " LN_IN("") " --actual y=$T/big0.npy", lim);
    cr_assert_eq(rc, 2, "exit %d: %s", rc, err_text);
    cr_assert(has(err_text, "big0.npy") && has(err_text, "trailing"), "%s", err_text);
    rc = sh("%s timeout 60 $R check layernorm " LN_IN("") " --actual y=$T/big1.npy", lim);
    cr_assert_eq(rc, 2, "exit %d: %s", rc, err_text);
    cr_assert(has(err_text, "big1.npy") && has(err_text, "does not match"), "%s", err_text);
    rc = sh("%s timeout 60 $R eval layernorm --in x=$T/big0.npy --in gamma=$T/g.npy "
            "--in beta=$T/b.npy --out $T/o", lim);
    cr_assert_eq(rc, 2, "exit %d: %s", rc, err_text);
    cr_assert(has(err_text, "trailing"), "%s", err_text);
}

/* ---------------------------------------------------------------- 13. concurrent evals */

/* While another process holds the lock of --out, an eval waits: it writes nothing until the lock
   is released, then publishes all its outputs. */
Test(hardening, item13_eval_waits_for_the_lock_of_its_output_directory)
{
    put_layernorm_inputs("", 0);
    cr_assert_eq(mkdir(P("o"), 0755), 0);
    int fd = open(P("o"), O_RDONLY | O_DIRECTORY);
    cr_assert_geq(fd, 0);
    cr_assert_eq(flock(fd, LOCK_EX), 0);
    pid_t pid = fork();
    cr_assert_geq(pid, 0);
    if (pid == 0) {
        close(fd);
        char cmd[2048];
        snprintf(cmd, sizeof cmd, "R='%s'; T='%s'; exec $R eval layernorm " LN_IN("")
                 " --out $T/o 2>$T/eval.err", resnorm(), tmpdir);
        execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
        _exit(127);
    }
    /* the eval alone takes well under a second; give it several */
    sleep(3);
    int st;
    cr_assert_eq(waitpid(pid, &st, WNOHANG), 0, "eval finished while the lock was held");
    cr_assert_eq(access(P("o/y.npy"), F_OK), -1, "eval wrote while the lock was held");
    cr_assert_eq(flock(fd, LOCK_UN), 0);
    close(fd);
    cr_assert_eq(waitpid(pid, &st, 0), pid);
    cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    cr_assert_eq(sh("test -f $T/o/y.npy && test -f $T/o/mean.npy && test -f $T/o/rstd.npy"), 0);
}

/* Many concurrent evals of two different problems into one directory: the three outputs always
   come from the same run (each pair of runs has its own y/mean/rstd; we compare with both). */
Test(hardening, item13_concurrent_evals_never_mix_outputs)
{
    put_layernorm_inputs("", 0);
    put_layernorm_inputs("2", 3.5);
    cr_assert_eq(sh("$R eval layernorm " LN_IN("") " --out $T/a && $R eval layernorm " LN_IN("2")
                    " --out $T/b"), 0);
    for (int round = 0; round < 10; round++) {
        int rc = sh("for i in 1 2 3; do $R eval layernorm " LN_IN("") " --out $T/o & "
                    "$R eval layernorm " LN_IN("2") " --out $T/o & done; wait; "
                    "s=a; cmp -s $T/o/y.npy $T/a/y.npy || s=b; "
                    "cmp $T/o/y.npy $T/$s/y.npy && cmp $T/o/mean.npy $T/$s/mean.npy && "
                    "cmp $T/o/rstd.npy $T/$s/rstd.npy");
        cr_assert_eq(rc, 0, "round %d: outputs of two runs mixed: %s", round, out_text);
    }
}

/* ---------------------------------------------------------------- 14. manifest types, tiny eps */

Test(hardening, item14_manifest_eps_as_a_number_is_an_error)
{
    copy_golden();
    edit_manifest("layernorm/onnx_34_eps0p1_f32", "c['attrs']['eps'] = 0.1");
    outputs_of("$T/out", "layernorm/onnx_34_eps0p1_f32");
    int rc = sh("$R golden run-check $T/out --root $T/root --dtype f32");
    cr_assert_eq(rc, 2, "exit %d: %s%s", rc, out_text, err_text);
    cr_assert(has(err_text, "eps") && has(err_text, "string"), "%s", err_text);
}

Test(hardening, item14_manifest_non_string_input_path_is_an_error)
{
    copy_golden();
    edit_manifest("layernorm/onnx_34_eps0p1_f32", "c['inputs']['gamma'] = 42");
    outputs_of("$T/out", "layernorm/onnx_34_eps0p1_f32");
    int rc = sh("$R golden run-check $T/out --root $T/root --dtype f32");
    cr_assert_eq(rc, 2, "exit %d: %s%s", rc, out_text, err_text);
    cr_assert(has(err_text, "gamma") && !has(err_text, "(null)"), "%s", err_text);
    rc = sh("$R golden verify --root $T/root");
    cr_assert(rc == 1 || rc == 2, "exit %d", rc);
    cr_assert(!has(out_text, "(null)") && !has(err_text, "(null)"), "%s%s", out_text, err_text);
}

Test(hardening, item14_eps_below_the_smallest_subnormal_warns)
{
    put_layernorm_inputs("", 0);
    int rc = sh("$R eval layernorm " LN_IN("") " --attr eps=1e-50 --out $T/o");
    cr_assert_eq(rc, 0, "%s", err_text);
    cr_assert(has(err_text, "warning") && has(err_text, "1e-50") && has(err_text, "0"), "%s",
              err_text);
    /* an eps that is a subnormal f32 is not 0: no warning */
    rc = sh("$R eval layernorm " LN_IN("") " --attr eps=1e-40 --out $T/o2");
    cr_assert_eq(rc, 0, "%s", err_text);
    cr_assert(!has(err_text, "warning"), "%s", err_text);
}

/* ---------------------------------------------------------------- 15. memory limit */

static void put_long_row(size_t n)
{
    size_t sx[2] = {1, n}, sg[1] = {n};
    double *x = malloc(n * sizeof *x), *g = malloc(n * sizeof *g), *b = calloc(n, sizeof *b);
    for (size_t i = 0; i < n; i++)
        x[i] = (double)(i % 1024) / 1024 - 0.5, g[i] = 1 + (double)(i % 3);
    put_npy("xl.npy", RN_F32, 2, sx, x);
    put_npy("gl.npy", RN_F32, 1, sg, g);
    put_npy("bl.npy", RN_F32, 1, sg, b);
    put_npy("dyl.npy", RN_F32, 2, sx, x);
    free(x), free(g), free(b);
}

/* The sublayers' twins hold their matrices as Arb balls (FLINT's allocations, 48 bytes per value:
   specs/cli.md, Memory): those count against the limit too.  linear [8, 512] x [512, 512]: the
   weight alone is 262,144 balls, 12 MiB, over an 8 MiB limit (what MPFR/GMP and the arrays take
   is ~2.6 MiB: before FLINT was counted this run passed the limit and went on); 64 MiB is
   enough. */
Test(hardening, item15_memory_limit_counts_the_ball_matrices)
{
    size_t sx[2] = {8, 512}, sw[2] = {512, 512}, sb[1] = {512};
    double *w = malloc(512 * 512 * sizeof *w);
    for (size_t i = 0; i < 512 * 512; i++)
        w[i] = (double)(float)((double)(i % 97) / 97 - 0.5);
    put_npy("lw.npy", RN_F32, 2, sw, w);
    put_npy("lx.npy", RN_F32, 2, sx, w); /* its first 8 x 512 values */
    put_npy("lb.npy", RN_F32, 1, sb, w);
    free(w);
    const char *args = "eval linear --in x=$T/lx.npy --in weight=$T/lw.npy --in bias=$T/lb.npy";
    int rc = sh("RESNORM_MEMORY_LIMIT=8M $R %s --out $T/lo", args);
    cr_assert_eq(rc, 2, "exit %d: %s", rc, err_text);
    cr_assert(has(err_text, "memory limit") && has(err_text, "RESNORM_MEMORY_LIMIT=8M"), "%s",
              err_text);
    cr_assert_eq(sh("test ! -e $T/lo"), 0, "an output was left behind");
    rc = sh("RESNORM_MEMORY_LIMIT=64M $R %s --out $T/lo", args);
    cr_assert_eq(rc, 0, "exit %d: %s", rc, err_text);
}

/* A limit below what the twin needs is a clear error (exit 2, nothing written), not the OOM
   killer; the per-element figure specs/cli.md states is enough for the heaviest op. */
Test(hardening, item15_memory_limit_is_a_clear_error)
{
    put_long_row(100000);
    /* the twin alone (RESNORM_FASTPATH=0): the fast path needs far less than the limit */
    int rc = sh("RESNORM_FASTPATH=0 RESNORM_MEMORY_LIMIT=8M $R eval layernorm --in x=$T/xl.npy --in gamma=$T/gl.npy "
                "--in beta=$T/bl.npy --out $T/o");
    cr_assert_eq(rc, 2, "exit %d: %s", rc, err_text);
    cr_assert(has(err_text, "memory") && has(err_text, "RESNORM_MEMORY_LIMIT"), "%s", err_text);
    cr_assert_eq(sh("test ! -e $T/o"), 0);
    rc = sh("RESNORM_MEMORY_LIMIT=nonsense $R eval layernorm --in x=$T/xl.npy --in gamma=$T/gl.npy "
            "--in beta=$T/bl.npy --out $T/o");
    cr_assert_eq(rc, 2, "exit %d: %s", rc, err_text);
    /* specs/cli.md: at most 1 KiB per element of a row, plus 8 bytes per element of every array,
       for f32 inputs: 100000 * (1024 + 10 * 8) bytes */
    rc = sh("RESNORM_MEMORY_LIMIT=%zu $R eval skip_layernorm_backward --in x=$T/xl.npy "
            "--in skip=$T/dyl.npy --in gamma=$T/gl.npy --in dy=$T/dyl.npy --in bias=$T/bl.npy "
            "--out $T/o2", (size_t)100000 * (1024 + 10 * 8));
    cr_assert_eq(rc, 0, "exit %d: %s", rc, err_text);
}
