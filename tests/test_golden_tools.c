/* Tests of `resnorm golden verify | list | run-check` (cli/golden_tools.c), run as a subprocess
 * ($RESNORM, default build/resnorm) on a temporary copy of golden/ (golden/ itself is never
 * touched).  Expected outcomes come from the manifest and from files copied or altered here, never
 * from the code under test. */
#include <criterion/criterion.h>
#include <stdarg.h>
#include <sys/wait.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char tmp[256];

static const char *resnorm(void)
{
    const char *r = getenv("RESNORM");
    return r ? r : "build/resnorm";
}

/* Exit status of a shell command (printf-style), output to tmp/out.txt. */
static int run(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int run(const char *fmt, ...)
{
    char cmd[4096], full[4700];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(cmd, sizeof cmd, fmt, ap);
    va_end(ap);
    snprintf(full, sizeof full, "%s > %s/out.txt 2> %s/err.txt", cmd, tmp, tmp);
    int s = system(full);
    return WIFEXITED(s) ? WEXITSTATUS(s) : -1;
}

static int out_has(const char *needle)
{
    char path[300], buf[1 << 16];
    snprintf(path, sizeof path, "%s/out.txt", tmp);
    FILE *f = fopen(path, "rb");
    if (!f)
        return 0;
    size_t k = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[k] = '\0';
    return strstr(buf, needle) != NULL;
}

static void setup(void)
{
    snprintf(tmp, sizeof tmp, "/tmp/resnorm_gtools_XXXXXX");
    cr_assert_not_null(mkdtemp(tmp));
}

static void teardown(void)
{
    char cmd[400];
    snprintf(cmd, sizeof cmd, "rm -rf %s", tmp);
    cr_assert_eq(system(cmd), 0);
}

TestSuite(golden_tools, .init = setup, .fini = teardown);

Test(golden_tools, verify_passes_on_the_committed_tree)
{
    cr_assert_eq(run("%s golden verify --root .", resnorm()), 0);
    cr_assert(out_has("0 differ or are missing, 0 not in the manifest"));
}

/* One flipped bit in a copy of a golden file (an expected output, deep in the tree), one missing
   file and one stray file: each is named, exit 1. */
Test(golden_tools, verify_catches_a_flipped_bit_a_missing_and_an_extra_file)
{
    cr_assert_eq(run("cp -r golden %s/golden", tmp), 0);
    const char *victim = "golden/rmsnorm/gpt2_row_f32/bf16/y.npy";
    char p[512];
    snprintf(p, sizeof p, "%s/%s", tmp, victim);
    FILE *f = fopen(p, "r+b");
    cr_assert_not_null(f);
    cr_assert_eq(fseek(f, 200, SEEK_SET), 0);
    int c = fgetc(f);
    cr_assert_eq(fseek(f, 200, SEEK_SET), 0);
    fputc(c ^ 0x04, f);
    fclose(f);
    cr_assert_eq(run("%s golden verify --root %s", resnorm(), tmp), 1);
    cr_assert(out_has("DIFFERS  golden/rmsnorm/gpt2_row_f32/bf16/y.npy"));
    cr_assert(out_has("1 differ or are missing, 0 not in the manifest"));
    /* restore the bit; remove an input; add a stray file */
    cr_assert_eq(run("cp golden/rmsnorm/gpt2_row_f32/bf16/y.npy %s/%s", tmp, victim), 0);
    cr_assert_eq(run("rm %s/golden/layernorm/n1_f32/x.npy && touch %s/golden/residual/stray.npy",
                     tmp, tmp), 0);
    cr_assert_eq(run("%s golden verify --root %s", resnorm(), tmp), 1);
    cr_assert(out_has("MISSING  golden/layernorm/n1_f32/x.npy"));
    cr_assert(out_has("EXTRA    golden/residual/stray.npy"));
}

Test(golden_tools, list_json_names_every_case_of_an_op)
{
    cr_assert_eq(run("%s golden list --op rmsnorm_backward --json --root . | tee %s/l.json",
                     resnorm(), tmp), 0);
    /* compare with the manifest, read independently by Python's json module */
    cr_assert_eq(run("/usr/bin/python3 -c \"import json; l = json.load(open('%s/l.json')); "
                     "m = [c for c in json.load(open('golden/manifest.json'))['cases'] "
                     "if c['op'] == 'rmsnorm_backward']; "
                     "assert [c['id'] for c in l] == [c['id'] for c in m]; "
                     "assert all(set(c) >= {'id', 'op', 'attrs', 'inputs', 'expected', 'flags', "
                     "'result'} for c in l); "
                     "assert all(a == b['inputs'] and e == b['expected'] for a, e, b in "
                     "[(c['inputs'], c['expected'], d) for c, d in zip(l, m)])\"", tmp), 0);
    cr_assert_eq(run("%s golden list --op nosuchop", resnorm()), 2);
}

/* The expected f32 files of a few cases are, by definition, within tolerance at f32; one of them
   with an element moved by many ulps must fail; a case absent from DIR is skipped. */
Test(golden_tools, run_check_passes_golden_outputs_and_flags_a_moved_element)
{
    cr_assert_eq(run("/usr/bin/python3 -c \"import json, os, shutil; "
                     "m = json.load(open('golden/manifest.json'))['cases']; "
                     "sel = [c for c in m if c['id'] in ('layernorm/gpt2_row_f32', "
                     "'rmsnorm_backward/llama_row_f32', 'skip_layernorm/gpt2_bias_f32')]; "
                     "[os.makedirs('%s/out/' + c['id']) for c in sel]; "
                     "[shutil.copy(p, '%s/out/' + c['id'] + '/' + n + '.npy') "
                     "for c in sel for n, p in c['expected']['f32'].items()]\"", tmp, tmp), 0);
    cr_assert_eq(run("%s golden run-check %s/out --dtype f32 --root .", resnorm(), tmp), 0);
    cr_assert(out_has("3 passed, 0 failed,"));
    cr_assert(out_has("layernorm/gpt2_row_f32"));
    cr_assert_eq(run("%s golden run-check %s/out --op rmsnorm_backward --json --root .", resnorm(),
                     tmp), 0);
    cr_assert(out_has("\"passed\": 1"));
    /* move y[0, 0] of the layernorm case by 0.25 (y ~ randn: far beyond any f32 bound) */
    cr_assert_eq(run("/usr/bin/python3 -c \"import numpy as np; p = '%s/out/layernorm/gpt2_row_f32"
                     "/y.npy'; y = np.load(p); y[0, 0] += np.float32(0.25); np.save(p, y)\"",
                     tmp), 0);
    cr_assert_eq(run("%s golden run-check %s/out --dtype f32 --root .", resnorm(), tmp), 1);
    cr_assert(out_has("layernorm/gpt2_row_f32"));
    cr_assert(out_has("FAIL"));
    cr_assert(out_has("2 passed, 1 failed,"));
    cr_assert_eq(run("%s golden run-check %s/nosuchdir", resnorm(), tmp), 2);
}

/* run-check's table: an error against an exact 0 is not shown as a count of ulp(0) (~7e14 for an
   error of 1e-30 in f32) but in ulps of the output's largest |exact| value, marked '*' and explained;
   --json keeps the raw count (max_ulps) and adds max_ulps_of_scale. */
Test(golden_tools, run_check_reports_an_error_at_an_exact_zero_at_the_outputs_scale)
{
    cr_assert_eq(run("/usr/bin/python3 -c \"import json, os, numpy as np; "
                     "c = [c for c in json.load(open('golden/manifest.json'))['cases'] "
                     "if c['id'] == 'residual/cancellation_f32'][0]; "
                     "d = '%s/z/residual/cancellation_f32'; os.makedirs(d); "
                     "y = np.load(c['expected']['f32']['y']); i = tuple(np.argwhere(y == 0)[0]); "
                     "y[i] = np.float32(1e-30); np.save(d + '/y.npy', y)\"", tmp), 0);
    cr_assert_eq(run("%s golden run-check %s/z --dtype f32 --root .", resnorm(), tmp), 1);
    cr_assert(out_has("residual/cancellation_f32"));
    cr_assert(out_has("e-21*"), "the error in ulps of max|y| (1e-30 / ulp(1.2e-3) ~ 8.6e-21)");
    cr_assert(!out_has("e+14"), "not the count of ulp(0)");
    cr_assert(out_has("*: the largest ulps count is at an exact 0"));
    cr_assert_eq(run("(%s golden run-check %s/z --dtype f32 --json --root . > %s/z.json)",
                     resnorm(), tmp, tmp), 1);
    cr_assert_eq(run("/usr/bin/python3 -c \"import json; c = json.load(open('%s/z.json'))['cases'][0]; "
                     "assert c['max_ulps'] > 1e14 and 1e-21 < c['max_ulps_of_scale'] < 1e-20, c\"",
                     tmp), 0);
}

/* run-check: an axis case's y given as (rows, n) is compared in C order (noted in the report);
   --eps-dtype recomputes the expected values under another eps convention; --allow ftz accepts
   what a flush-to-zero adder gives and nothing else. */
Test(golden_tools, run_check_reshaped_eps_convention_and_ftz)
{
    /* the f32 expected y of an axis-1 case (2, 3, 4, 5), saved as (2, 60) */
    cr_assert_eq(run("/usr/bin/python3 -c \"import json, os, numpy as np; "
                     "m = {c['id']: c for c in json.load(open('golden/manifest.json'))['cases']}; "
                     "c = m['layernorm/onnx_2345_axis1_f32']; d = '%s/out/' + c['id']; "
                     "os.makedirs(d); y = np.load(c['expected']['f32']['y']); "
                     "np.save(d + '/y.npy', y.reshape(2, 60))\"", tmp), 0);
    cr_assert_eq(run("%s golden run-check %s/out --dtype f32 --json --root .", resnorm(), tmp), 0);
    cr_assert(out_has("\"shape_note\": \"shape (2, 60), expected (2, 3, 4, 5)"));
    cr_assert_eq(run("rm -r %s/out", tmp), 0);

    /* zero-variance f16 rows: the f32 files (eps rounded to f32, the default) pass, and fail when
       checked under eps rounded to f16 (rstd = 1/sqrt(eps) moves by 7e-4 relative) */
    cr_assert_eq(run("/usr/bin/python3 -c \"import json, os, shutil; "
                     "m = {c['id']: c for c in json.load(open('golden/manifest.json'))['cases']}; "
                     "c = m['layernorm/zero_var_rows_f16']; d = '%s/out/' + c['id']; "
                     "os.makedirs(d); shutil.copy(c['expected']['f32']['rstd'], d + '/rstd.npy')\"",
                     tmp), 0);
    cr_assert_eq(run("%s golden run-check %s/out --dtype f32 --root .", resnorm(), tmp), 0);
    cr_assert_eq(run("%s golden run-check %s/out --dtype f32 --eps-dtype input --root .",
                     resnorm(), tmp), 1);
    cr_assert_eq(run("%s golden run-check %s/out --eps-dtype f16 --root .", resnorm(), tmp), 2);
    cr_assert_eq(run("rm -r %s/out", tmp), 0);

    /* residual/subnormal_f32 under DAZ + FTZ, computed here with numpy's IEEE float32 add:
       subnormal inputs flushed, subnormal sums flushed */
    cr_assert_eq(run("/usr/bin/python3 -c \"import json, os, numpy as np; "
                     "m = {c['id']: c for c in json.load(open('golden/manifest.json'))['cases']}; "
                     "c = m['residual/subnormal_f32']; d = '%s/out/' + c['id']; os.makedirs(d); "
                     "t = np.float32(2.0 ** -126); "
                     "fl = lambda a: np.where(np.abs(a) < t, np.float32(0), a).astype(np.float32); "
                     "y = fl(fl(np.load(c['inputs']['x'])) + fl(np.load(c['inputs']['f']))); "
                     "assert (y != (np.load(c['inputs']['x']) + np.load(c['inputs']['f']))).any(); "
                     "np.save(d + '/y.npy', y)\"", tmp), 0);
    cr_assert_eq(run("%s golden run-check %s/out --dtype f32 --root .", resnorm(), tmp), 1);
    cr_assert_eq(run("%s golden run-check %s/out --dtype f32 --allow ftz --json --root .",
                     resnorm(), tmp), 0);
    cr_assert(out_has("\"ftz_accepted\""));
    cr_assert(out_has("\"allow\": ["));
}
