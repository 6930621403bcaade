/* Tests of the .npy reader and writer (cli/npy.c): round trips for every dtype, byte images exactly
 * as np.save writes them, and every class of malformed file, each of which must be refused with a
 * one-line message that names the file. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "norm_fast.h" /* rn_set_threads */
#include "npy.h"

static char tmpdir[256];

static void setup(void)
{
    strcpy(tmpdir, "/tmp/resnorm_test_npy.XXXXXX");
    cr_assert_not_null(mkdtemp(tmpdir));
}

static void teardown(void)
{
    char cmd[512];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    cr_assert_eq(system(cmd), 0);
}

TestSuite(npy, .init = setup, .fini = teardown);

static void path_in(char *buf, size_t cap, const char *name)
{
    snprintf(buf, cap, "%s/%s", tmpdir, name);
}

static void write_bytes(const char *path, const void *b, size_t n)
{
    FILE *f = fopen(path, "wb");
    cr_assert_not_null(f);
    cr_assert_eq(fwrite(b, 1, n, f), n);
    cr_assert_eq(fclose(f), 0);
}

/* A v1.0 file image: header text h (padded with spaces to a multiple of 64 and '\n' terminated as
   np.save does, unless raw), then data. */
static size_t make_image(unsigned char *buf, const char *h, const void *data, size_t dlen)
{
    size_t hl = strlen(h);
    size_t total = (10 + hl + 1 + 63) / 64 * 64;
    size_t hlen = total - 10;
    memcpy(buf, "\x93NUMPY\x01\x00", 8);
    buf[8] = (unsigned char)(hlen & 0xff);
    buf[9] = (unsigned char)(hlen >> 8);
    memcpy(buf + 10, h, hl);
    memset(buf + 10 + hl, ' ', hlen - hl - 1);
    buf[total - 1] = '\n';
    memcpy(buf + total, data, dlen);
    return total + dlen;
}

/* Writes the bytes, reads them back, and expects a refusal whose message names the file and
   contains `what`. */
static void expect_bad(const char *fname, const void *img, size_t n, const char *what)
{
    char path[512], err[512] = "";
    path_in(path, sizeof path, fname);
    write_bytes(path, img, n);
    rn_array a;
    int r = npy_read(path, &a, err, sizeof err);
    cr_assert_eq(r, -1, "%s: accepted, expected an error about '%s'", fname, what);
    cr_assert_null(a.data);
    cr_assert_not_null(strstr(err, path), "message does not name the file: %s", err);
    cr_assert_null(strchr(err, '\n'), "message is not one line: %s", err);
    if (what)
        cr_assert_not_null(strstr(err, what), "message '%s' lacks '%s'", err, what);
    /* the in-memory parser says the same */
    char err2[512];
    r = npy_parse(fname, img, n, &a, err2, sizeof err2);
    cr_assert_eq(r, -1);
    cr_assert_not_null(strstr(err2, fname));
}

static void expect_bad_header(const char *fname, const char *h, size_t dlen, const char *what)
{
    static unsigned char buf[4096];
    unsigned char data[256] = {0};
    cr_assert(dlen <= sizeof data);
    size_t n = make_image(buf, h, data, dlen);
    expect_bad(fname, buf, n, what);
}

/* ---- round trips ---- */

static void roundtrip(rn_dtype d, const double *vals, size_t n, int ndim, const size_t *shape)
{
    rn_array a, b;
    cr_assert_eq(rn_array_alloc(&a, d, ndim, shape), 0);
    cr_assert_eq(a.count, n);
    memcpy(a.data, vals, n * sizeof(double));
    char path[512], err[512];
    snprintf(path, sizeof path, "%s/rt_%s.npy", tmpdir, rn_dtype_name(d));
    cr_assert_eq(npy_write(path, &a, err, sizeof err), 0, "%s", err);
    cr_assert_eq(npy_read(path, &b, err, sizeof err), 0, "%s", err);
    cr_assert_eq(b.dtype, d);
    cr_assert_eq(b.ndim, ndim);
    for (int i = 0; i < ndim; i++)
        cr_assert_eq(b.shape[i], shape[i]);
    cr_assert_eq(b.count, n);
    for (size_t i = 0; i < n; i++) {
        if (isnan(vals[i]))
            cr_assert(isnan(b.data[i]), "%s element %zu", rn_dtype_name(d), i);
        else
            cr_assert(b.data[i] == vals[i] && signbit(b.data[i]) == signbit(vals[i]),
                      "%s element %zu: wrote %a read %a", rn_dtype_name(d), i, vals[i],
                      b.data[i]);
    }
    rn_array_free(&a);
    rn_array_free(&b);
    /* no temporary file left next to it */
    char cmd[600];
    snprintf(cmd, sizeof cmd, "test -z \"$(ls -A '%s' | grep -v '^rt_')\"", tmpdir);
    cr_assert_eq(system(cmd), 0, "temporary files left in %s", tmpdir);
}

Test(npy, roundtrip_f64)
{
    double v[] = {0.0, -0.0, 1.0, -2.5, 0x1p-1074, 1.7976931348623157e308, INFINITY, -INFINITY,
                  NAN, 0.1, 3.0, 1e-300};
    size_t shape[] = {3, 4};
    roundtrip(RN_F64, v, 12, 2, shape);
}

Test(npy, roundtrip_f32)
{
    double v[] = {0.0, -0.0, 1.0, -2.5, 0x1p-149, 0x1.fffffep127, INFINITY, -INFINITY, NAN,
                  (double)0.1f};
    size_t shape[] = {10};
    roundtrip(RN_F32, v, 10, 1, shape);
}

Test(npy, roundtrip_f16)
{
    double v[] = {0.0, -0.0, 1.0, -2.5, 0x1p-24, 65504.0, INFINITY, -INFINITY, NAN, 0x1.998p-4};
    size_t shape[] = {2, 1, 5};
    roundtrip(RN_F16, v, 10, 3, shape);
}

Test(npy, roundtrip_bf16)
{
    double v[] = {0.0, -0.0, 1.0, -2.5, 0x1p-133, 0x1.fep127, INFINITY, -INFINITY, NAN,
                  0x1.98p-4};
    size_t shape[] = {5, 2};
    roundtrip(RN_BF16, v, 10, 2, shape);
}

Test(npy, roundtrip_scalar_and_empty)
{
    double v[] = {42.0};
    roundtrip(RN_F32, v, 1, 0, NULL);
    size_t shape[] = {0, 3};
    roundtrip(RN_F64, v, 0, 2, shape);
}

Test(npy, writer_refuses_unrepresentable)
{
    rn_array a;
    size_t shape[] = {1};
    cr_assert_eq(rn_array_alloc(&a, RN_F32, 1, shape), 0);
    a.data[0] = 0.1; /* not a binary32 value */
    char path[512], err[512];
    path_in(path, sizeof path, "bad.npy");
    cr_assert_eq(npy_write(path, &a, err, sizeof err), -1);
    cr_assert_not_null(strstr(err, path));
    cr_assert_neq(access(path, F_OK), 0, "file written despite the error");
    char cmd[600];
    snprintf(cmd, sizeof cmd, "test -z \"$(ls -A '%s')\"", tmpdir);
    cr_assert_eq(system(cmd), 0, "temporary file left behind");
    rn_array_free(&a);
}

Test(npy, writer_fails_cleanly_in_missing_dir)
{
    rn_array a;
    size_t shape[] = {1};
    cr_assert_eq(rn_array_alloc(&a, RN_F64, 1, shape), 0);
    char path[512], err[512];
    path_in(path, sizeof path, "no/such/dir/x.npy");
    cr_assert_eq(npy_write(path, &a, err, sizeof err), -1);
    cr_assert_not_null(strstr(err, path));
    rn_array_free(&a);
}

/* ---- byte images exactly as NumPy 1.24's np.save writes them ---- */

Test(npy, reads_numpy_images)
{
    /* np.save(f, np.array([1.0, -2.0], dtype='<f4')) */
    static const char h[] = "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }";
    unsigned char data[8] = {0x00, 0x00, 0x80, 0x3f, 0x00, 0x00, 0x00, 0xc0};
    unsigned char buf[256];
    size_t n = make_image(buf, h, data, 8);
    cr_assert_eq(n, 136); /* 128-byte header, as np.save pads to 64 */
    rn_array a;
    char err[256];
    cr_assert_eq(npy_parse("mem", buf, n, &a, err, sizeof err), 0, "%s", err);
    cr_assert_eq(a.dtype, RN_F32);
    cr_assert_eq(a.ndim, 1);
    cr_assert_eq(a.shape[0], 2);
    cr_assert_eq(a.data[0], 1.0);
    cr_assert_eq(a.data[1], -2.0);
    rn_array_free(&a);

    /* np.save(f, np.zeros((2,3), dtype='V2')): bf16 raw bits, 0x3f80 = 1.0 */
    static const char hb[] = "{'descr': '|V2', 'fortran_order': False, 'shape': (2, 3), }";
    unsigned char db[12] = {0x80, 0x3f};
    n = make_image(buf, hb, db, 12);
    cr_assert_eq(npy_parse("mem", buf, n, &a, err, sizeof err), 0, "%s", err);
    cr_assert_eq(a.dtype, RN_BF16);
    cr_assert_eq(a.count, 6);
    cr_assert_eq(a.data[0], 1.0);
    cr_assert_eq(a.data[5], 0.0);
    rn_array_free(&a);

    /* ml_dtypes' bfloat16 is saved as '<V2'; keys in another order, double quotes, no trailing
       comma, version 2.0 */
    static const char h2[] = "{\"shape\": (1,), \"fortran_order\": False, \"descr\": \"<V2\"}";
    n = make_image(buf, h2, db, 2);
    buf[6] = 2;
    size_t hlen = n - 2 - 10;
    memmove(buf + 12, buf + 10, n - 10);
    buf[8] = (unsigned char)(hlen & 0xff);
    buf[9] = (unsigned char)(hlen >> 8);
    buf[10] = buf[11] = 0;
    n += 2;
    cr_assert_eq(npy_parse("mem", buf, n, &a, err, sizeof err), 0, "%s", err);
    cr_assert_eq(a.dtype, RN_BF16);
    cr_assert_eq(a.data[0], 1.0);
    rn_array_free(&a);
    /* version 3.0 has the 2.0 layout (UTF-8 header) */
    buf[6] = 3;
    cr_assert_eq(npy_parse("mem", buf, n, &a, err, sizeof err), 0, "%s", err);
    cr_assert_eq(a.data[0], 1.0);
    rn_array_free(&a);
}

Test(npy, writes_numpy_header_bytes)
{
    /* what np.save writes for a (2, 3) '<f2' array: the header text and its padding to 128 bytes */
    rn_array a;
    size_t shape[] = {2, 3};
    cr_assert_eq(rn_array_alloc(&a, RN_F16, 2, shape), 0);
    char path[512], err[256];
    path_in(path, sizeof path, "h.npy");
    cr_assert_eq(npy_write(path, &a, err, sizeof err), 0, "%s", err);
    rn_array_free(&a);
    unsigned char buf[256];
    FILE *f = fopen(path, "rb");
    cr_assert_not_null(f);
    size_t n = fread(buf, 1, sizeof buf, f);
    fclose(f);
    cr_assert_eq(n, 128 + 12);
    cr_assert_eq(memcmp(buf, "\x93NUMPY\x01\x00\x76\x00", 10), 0);
    static const char h[] = "{'descr': '<f2', 'fortran_order': False, 'shape': (2, 3), }";
    cr_assert_eq(memcmp(buf + 10, h, strlen(h)), 0);
    for (size_t i = 10 + strlen(h); i < 127; i++)
        cr_assert_eq(buf[i], ' ');
    cr_assert_eq(buf[127], '\n');
}

/* Optional cross-check with NumPy itself, only where python3 has numpy (never required). */
Test(npy, numpy_cross_check_if_available)
{
    if (system("python3 -c 'import numpy' >/dev/null 2>&1") != 0)
        cr_skip_test("python3 with numpy not available");
    rn_array a;
    size_t shape[] = {2, 2};
    cr_assert_eq(rn_array_alloc(&a, RN_F32, 2, shape), 0);
    a.data[0] = 1.0;
    a.data[1] = -0.5;
    a.data[2] = 3.0;
    a.data[3] = INFINITY;
    char path[512], err[256], cmd[4096];
    path_in(path, sizeof path, "np.npy");
    cr_assert_eq(npy_write(path, &a, err, sizeof err), 0, "%s", err);
    a.dtype = RN_BF16;
    char pb[512];
    path_in(pb, sizeof pb, "npb.npy");
    cr_assert_eq(npy_write(pb, &a, err, sizeof err), 0, "%s", err);
    rn_array_free(&a);
    snprintf(cmd, sizeof cmd,
             "python3 -c \"import numpy as np, sys; a = np.load('%s'); "
             "assert a.dtype == np.dtype('<f4') and a.shape == (2, 2), a; "
             "assert a.tolist() == [[1.0, -0.5], [3.0, float('inf')]], a; "
             "b = np.load('%s'); assert b.dtype == np.dtype('V2') and b.shape == (2, 2); "
             "u = b.view('<u2'); assert u.tolist() == [[0x3f80, 0xbf00], [0x4040, 0x7f80]], u; "
             "np.save('%s/fromnp.npy', np.arange(6, dtype='<f8').reshape(3, 2))\"",
             path, pb, tmpdir);
    cr_assert_eq(system(cmd), 0, "numpy disagrees with the writer");
    path_in(path, sizeof path, "fromnp.npy");
    cr_assert_eq(npy_read(path, &a, err, sizeof err), 0, "%s", err);
    cr_assert_eq(a.ndim, 2);
    cr_assert_eq(a.shape[0], 3);
    cr_assert_eq(a.shape[1], 2);
    for (int i = 0; i < 6; i++)
        cr_assert_eq(a.data[i], (double)i);
    rn_array_free(&a);
}

/* ---- malformed files ---- */

static const char GOOD[] = "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }";

Test(npy, bad_magic)
{
    unsigned char buf[256], d[8] = {0};
    size_t n = make_image(buf, GOOD, d, 8);
    buf[1] = 'X';
    expect_bad("magic.npy", buf, n, "magic");
}

Test(npy, empty_and_tiny_files)
{
    expect_bad("empty.npy", "", 0, "magic");
    expect_bad("tiny.npy", "\x93NUMPY\x01", 7, "magic");
    expect_bad("lenfield.npy", "\x93NUMPY\x02\x00\x10", 9, "truncated");
}

Test(npy, bad_version)
{
    unsigned char buf[256], d[8] = {0};
    size_t n = make_image(buf, GOOD, d, 8);
    buf[6] = 4;
    expect_bad("version4.npy", buf, n, "version 4.0");
    buf[6] = 1;
    buf[7] = 1;
    expect_bad("version11.npy", buf, n, "version 1.1");
}

Test(npy, header_length_beyond_file)
{
    unsigned char buf[256], d[8] = {0};
    size_t n = make_image(buf, GOOD, d, 8);
    buf[8] = 0xff;
    buf[9] = 0x7f;
    expect_bad("hlen.npy", buf, n, "header length");
}

Test(npy, missing_key)
{
    expect_bad_header("nokey.npy", "{'descr': '<f4', 'shape': (2,), }", 8, "missing key "
                      "'fortran_order'");
    expect_bad_header("noshape.npy", "{'descr': '<f4', 'fortran_order': False}", 8,
                      "missing key 'shape'");
}

Test(npy, extra_and_duplicate_key)
{
    expect_bad_header("extra.npy",
                      "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), 'x': 1, }", 8,
                      "unexpected key 'x'");
    expect_bad_header("dup.npy",
                      "{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (2,)}",
                      8, "duplicate key");
}

Test(npy, fortran_order_true)
{
    expect_bad_header("fortran.npy", "{'descr': '<f4', 'fortran_order': True, 'shape': (2,), }",
                      8, "fortran_order");
}

Test(npy, unsupported_dtypes)
{
    expect_bad_header("be.npy", "{'descr': '>f4', 'fortran_order': False, 'shape': (2,), }", 8,
                      "big-endian");
    expect_bad_header("i4.npy", "{'descr': '<i4', 'fortran_order': False, 'shape': (2,), }", 8,
                      "'<i4'");
    expect_bad_header("obj.npy", "{'descr': '|O', 'fortran_order': False, 'shape': (2,), }", 8,
                      "'|O'");
    expect_bad_header("v4.npy", "{'descr': '|V4', 'fortran_order': False, 'shape': (2,), }", 8,
                      "'|V4'");
    expect_bad_header("struct.npy", "{'descr': [('a', '<f4')], 'fortran_order': False, "
                      "'shape': (2,), }", 8, "structured");
}

Test(npy, bad_shapes)
{
    expect_bad_header("neg.npy", "{'descr': '<f4', 'fortran_order': False, 'shape': (-2,), }",
                      8, "negative");
    expect_bad_header("notuple.npy", "{'descr': '<f4', 'fortran_order': False, 'shape': (2), }",
                      8, "shape");
    expect_bad_header("float.npy", "{'descr': '<f4', 'fortran_order': False, 'shape': (2.0,), }",
                      8, "shape");
    expect_bad_header("hugedim.npy", "{'descr': '<f4', 'fortran_order': False, 'shape': "
                      "(99999999999999999999999,), }", 8, "too large");
    /* each dimension fits, the product does not */
    expect_bad_header("overflow.npy", "{'descr': '<f4', 'fortran_order': False, 'shape': "
                      "(4294967296, 4294967296, 16), }", 8, "overflows");
    /* the element count fits, the byte count does not */
    expect_bad_header("bytes.npy", "{'descr': '<f8', 'fortran_order': False, 'shape': "
                      "(4611686018427387904,), }", 8, "overflows");
    /* a large but lying shape: refused by the length check, not by a huge allocation */
    expect_bad_header("lying.npy", "{'descr': '<f8', 'fortran_order': False, 'shape': "
                      "(1000000000000,), }", 8, "truncated");
    expect_bad_header("ndim.npy", "{'descr': '<f4', 'fortran_order': False, 'shape': "
                      "(1, 1, 1, 1, 1, 1, 1, 1, 1), }", 4, "dimensions");
}

Test(npy, truncated_and_trailing_data)
{
    expect_bad_header("short.npy", GOOD, 7, "truncated");
    expect_bad_header("long.npy", GOOD, 9, "trailing");
}

Test(npy, junk_in_header)
{
    expect_bad_header("utf8.npy", "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), "
                      "\xff\xfe}", 8, "non-ASCII");
    expect_bad_header("nodict.npy", "['descr', '<f4']", 8, "dict");
    expect_bad_header("after.npy", "{'descr': '<f4', 'fortran_order': False, 'shape': (2,)} x",
                      8, "after the dict");
    expect_bad_header("fo.npy", "{'descr': '<f4', 'fortran_order': 0, 'shape': (2,)}", 8,
                      "fortran_order");
    expect_bad_header("unterminated.npy", "{'descr': '<f4", 8, NULL);
}

Test(npy, missing_file)
{
    char path[512], err[512];
    path_in(path, sizeof path, "does_not_exist.npy");
    rn_array a;
    cr_assert_eq(npy_read(path, &a, err, sizeof err), -1);
    cr_assert_not_null(strstr(err, path));
}

/* A range of >= 2^20 elements is read in parts on several threads (cli/npy.c, npy_read_range):
   the doubles are those of a single reader, on 1, 2 and 3 threads, for f32 and f16 files; and a
   file that shrinks after it was opened fails with "shrank", whichever part meets the end. */
Test(npy, large_ranges_read_in_parts)
{
    static const rn_dtype dts[2] = {RN_F32, RN_F16};
    size_t count = 3u << 20, shape[1] = {3u << 20};
    for (int d = 0; d < 2; d++) {
        rn_array a, b;
        char path[512], err[512];
        path_in(path, sizeof path, "big.npy");
        cr_assert_eq(rn_array_alloc(&a, dts[d], 1, shape), 0);
        for (size_t i = 0; i < count; i++) /* values of both formats: small integers and halves */
            a.data[i] = (double)((int)(i % 2000) - 1000) * 0.5;
        cr_assert_eq(npy_write(path, &a, err, sizeof err), 0, "%s", err);
        for (int t = 1; t <= 3; t++) {
            rn_set_threads(t);
            cr_assert_eq(npy_read(path, &b, err, sizeof err), 0, "%s", err);
            cr_assert_eq(b.count, count);
            cr_assert_eq(memcmp(a.data, b.data, count * sizeof *a.data), 0,
                         "%s on %d threads: the values differ", rn_dtype_name(dts[d]), t);
            rn_array_free(&b);
            /* shrunk after the header was read: every part past the end fails */
            npy_reader r;
            rn_array h;
            cr_assert_eq(npy_open(path, &r, &h, err, sizeof err), 0, "%s", err);
            cr_assert_eq(truncate(path, 4096), 0);
            double *out = malloc(count * sizeof *out);
            cr_assert_eq(npy_read_range(&r, 0, count, out, err, sizeof err), -1);
            cr_assert(strstr(err, "shrank") && strstr(err, "big.npy"), "%s", err);
            free(out);
            npy_close(&r);
            cr_assert_eq(npy_write(path, &a, err, sizeof err), 0, "%s", err);
        }
        rn_set_threads(0);
        rn_array_free(&a);
    }
}
