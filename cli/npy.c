/* .npy reader and writer (NumPy format 1.0, 2.0 and 3.0): see cli/npy.h and specs/cli.md.
 *
 * The reader is strict: a file is accepted only if it is exactly what np.save writes for a
 * little-endian, C-order array of a supported dtype:
 *   "\x93NUMPY" major minor  HEADER_LEN (u16 LE for 1.0, u32 LE for 2.0/3.0)  HEADER  DATA
 * HEADER is a Python dict literal with exactly the keys 'descr', 'fortran_order', 'shape'
 * (any order, each once), followed only by blanks up to the end of the header; DATA is exactly
 * count * itemsize bytes, to the end of the file.  Every rejection says which file and why, in
 * one line.  Sizes are overflow-checked before anything is allocated, and npy_read compares the
 * data size the header implies with the file's size (fstat) before it reads or allocates for the
 * data, so a lying header costs nothing; the data is then decoded in 64 KiB chunks (memory: the
 * array of doubles, not the file as well).  Only regular files are read: the file is opened with
 * O_NONBLOCK and checked by fstat first, so a FIFO or a device is refused instead of blocking.
 *
 * bf16: there is no NumPy dtype for bfloat16.  resnorm reads raw little-endian bfloat16 bits
 * stored as a 2-byte void dtype, descr '|V2' (what np.save writes for np.dtype('V2')) or '<V2'
 * (what np.save writes for an ml_dtypes.bfloat16 array), and writes '|V2'.
 *
 * The writer writes a temporary file in the destination directory (mkstemp), then renames it over
 * the destination, so a reader never sees a partial file; on failure the temporary is removed.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "npy.h"
#include "bigbuf.h"
#include "norm_fast.h" /* rn_threads */

static int fail(char *err, size_t errlen, const char *name, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static int fail(char *err, size_t errlen, const char *name, const char *fmt, ...)
{
    if (err && errlen) {
        char msg[256];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(msg, sizeof msg, fmt, ap);
        va_end(ap);
        snprintf(err, errlen, "%s: %s", name ? name : "(npy)", msg);
    }
    return -1;
}

static size_t itemsize_of(rn_dtype d)
{
    switch (d) {
    case RN_F64: return 8;
    case RN_F32: return 4;
    case RN_F16: return 2;
    case RN_BF16: return 2;
    default: return 0;
    }
}

void (*rn_array_charge)(long long delta);

int rn_array_alloc(rn_array *a, rn_dtype dtype, int ndim, const size_t *shape)
{
    memset(a, 0, sizeof *a);
    if (ndim < 0 || ndim > RN_MAX_DIMS || (unsigned)dtype >= RN_NDTYPES)
        return -1;
    size_t count = 1;
    for (int i = 0; i < ndim; i++) {
        if (shape[i] != 0 && count > SIZE_MAX / shape[i])
            return -1;
        count *= shape[i];
        a->shape[i] = shape[i];
    }
    if (count > SIZE_MAX / sizeof(double))
        return -1;
    if (rn_array_charge)
        rn_array_charge((long long)((count ? count : 1) * sizeof(double)));
    double *data = rn_bigbuf_calloc(count, sizeof(double));
    if (!data) {
        memset(a, 0, sizeof *a);
        return -1;
    }
    a->dtype = dtype;
    a->ndim = ndim;
    a->count = count;
    a->data = data;
    return 0;
}

void rn_array_free(rn_array *a)
{
    if (!a)
        return;
    if (rn_array_charge && a->data)
        rn_array_charge(-(long long)((a->count ? a->count : 1) * sizeof(double)));
    free(a->data);
    memset(a, 0, sizeof *a);
}

/* ---------------------------------------------------------------- header parsing */

typedef struct {
    const char *p, *end;
} cursor;

static int is_blank(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

static void skip_blanks(cursor *c)
{
    while (c->p < c->end && is_blank(*c->p))
        c->p++;
}

static int accept(cursor *c, char ch)
{
    skip_blanks(c);
    if (c->p < c->end && *c->p == ch) {
        c->p++;
        return 1;
    }
    return 0;
}

/* A Python string literal without escapes, quoted with ' or ". Copies up to cap-1 chars. */
static int parse_str(cursor *c, char *buf, size_t cap)
{
    skip_blanks(c);
    if (c->p >= c->end || (*c->p != '\'' && *c->p != '"'))
        return -1;
    char q = *c->p++;
    size_t k = 0;
    while (c->p < c->end && *c->p != q) {
        if (*c->p == '\\' || *c->p == '\n')
            return -1;
        if (k + 1 >= cap)
            return -1;
        buf[k++] = *c->p++;
    }
    if (c->p >= c->end)
        return -1;
    c->p++;
    buf[k] = '\0';
    return 0;
}

static int parse_word(cursor *c, const char *w)
{
    skip_blanks(c);
    size_t n = strlen(w);
    if ((size_t)(c->end - c->p) < n || memcmp(c->p, w, n) != 0)
        return -1;
    const char *after = c->p + n;
    if (after < c->end && (isalnum((unsigned char)*after) || *after == '_'))
        return -1;
    c->p = after;
    return 0;
}

enum { SHAPE_OK = 0, SHAPE_SYNTAX = -1, SHAPE_NEG = -2, SHAPE_BIG = -3, SHAPE_NDIM = -4 };

/* A tuple of non-negative decimal ints: (), (n,), (a, b), (a, b,). */
static int parse_shape(cursor *c, size_t *shape, int *ndim)
{
    if (!accept(c, '('))
        return SHAPE_SYNTAX;
    int nd = 0;
    int need_comma_for_one = 1;
    for (;;) {
        skip_blanks(c);
        if (accept(c, ')'))
            break;
        if (c->p < c->end && *c->p == '-')
            return SHAPE_NEG;
        if (c->p >= c->end || *c->p < '0' || *c->p > '9')
            return SHAPE_SYNTAX;
        if (*c->p == '0' && c->p + 1 < c->end && c->p[1] >= '0' && c->p[1] <= '9')
            return SHAPE_SYNTAX; /* leading zero: not a Python 3 int literal */
        size_t v = 0;
        while (c->p < c->end && *c->p >= '0' && *c->p <= '9') {
            unsigned dgt = (unsigned)(*c->p - '0');
            if (v > (SIZE_MAX - dgt) / 10)
                return SHAPE_BIG;
            v = v * 10 + dgt;
            c->p++;
        }
        if (nd >= RN_MAX_DIMS)
            return SHAPE_NDIM;
        shape[nd++] = v;
        if (accept(c, ',')) {
            need_comma_for_one = 0;
            continue;
        }
        if (accept(c, ')')) {
            if (nd == 1 && need_comma_for_one)
                return SHAPE_SYNTAX; /* "(3)" is an int, not a tuple */
            break;
        }
        return SHAPE_SYNTAX;
    }
    *ndim = nd;
    return SHAPE_OK;
}

static int parse_descr(const char *s, rn_dtype *d)
{
    if (!strcmp(s, "<f8")) *d = RN_F64;
    else if (!strcmp(s, "<f4")) *d = RN_F32;
    else if (!strcmp(s, "<f2")) *d = RN_F16;
    else if (!strcmp(s, "<V2") || !strcmp(s, "|V2")) *d = RN_BF16;
    else return -1;
    return 0;
}

/* Printable form of a descr for messages (it came from the file: keep it short and printable). */
static void printable(char *dst, size_t cap, const char *s)
{
    size_t k = 0;
    for (; *s && k + 1 < cap; s++)
        dst[k++] = (*s >= 0x20 && *s < 0x7f) ? *s : '?';
    dst[k] = '\0';
}

static int parse_header(const char *name, const char *h, size_t hlen, rn_dtype *dtype, int *ndim,
                        size_t *shape, char *err, size_t errlen)
{
    for (size_t i = 0; i < hlen; i++) {
        unsigned char ch = (unsigned char)h[i];
        if (ch >= 0x80 || (ch < 0x20 && !is_blank((char)ch)))
            return fail(err, errlen, name, "header contains a non-ASCII or control byte (0x%02x at "
                        "offset %zu of the header)", ch, i);
    }
    cursor c = {h, h + hlen};
    if (!accept(&c, '{'))
        return fail(err, errlen, name, "header is not a dict literal (no '{')");
    int have_descr = 0, have_fortran = 0, have_shape = 0;
    int fortran = 0;
    for (;;) {
        if (accept(&c, '}'))
            break;
        char key[32];
        if (parse_str(&c, key, sizeof key) != 0)
            return fail(err, errlen, name, "header dict: expected a quoted key or '}'");
        if (!accept(&c, ':'))
            return fail(err, errlen, name, "header dict: expected ':' after key '%s'", key);
        if (!strcmp(key, "descr")) {
            if (have_descr)
                return fail(err, errlen, name, "header dict: duplicate key 'descr'");
            have_descr = 1;
            char val[64], pv[64];
            skip_blanks(&c);
            if (c.p < c.end && (*c.p == '[' || *c.p == '{'))
                return fail(err, errlen, name, "unsupported dtype: structured array (descr is a "
                            "list); supported: <f8 <f4 <f2 and bf16 as <V2 or |V2");
            if (parse_str(&c, val, sizeof val) != 0)
                return fail(err, errlen, name, "header dict: 'descr' is not a plain string");
            if (parse_descr(val, dtype) != 0) {
                printable(pv, sizeof pv, val);
                if (val[0] == '>')
                    return fail(err, errlen, name, "unsupported dtype '%s': big-endian data (only "
                                "little-endian is supported)", pv);
                return fail(err, errlen, name, "unsupported dtype '%s' (supported: <f8 <f4 <f2, "
                            "and bf16 as <V2 or |V2)", pv);
            }
        } else if (!strcmp(key, "fortran_order")) {
            if (have_fortran)
                return fail(err, errlen, name, "header dict: duplicate key 'fortran_order'");
            have_fortran = 1;
            if (parse_word(&c, "False") == 0)
                fortran = 0;
            else if (parse_word(&c, "True") == 0)
                fortran = 1;
            else
                return fail(err, errlen, name, "header dict: 'fortran_order' is not True or False");
        } else if (!strcmp(key, "shape")) {
            if (have_shape)
                return fail(err, errlen, name, "header dict: duplicate key 'shape'");
            have_shape = 1;
            int r = parse_shape(&c, shape, ndim);
            if (r == SHAPE_NEG)
                return fail(err, errlen, name, "shape has a negative dimension");
            if (r == SHAPE_BIG)
                return fail(err, errlen, name, "shape has a dimension too large for size_t");
            if (r == SHAPE_NDIM)
                return fail(err, errlen, name, "shape has more than %d dimensions", RN_MAX_DIMS);
            if (r != SHAPE_OK)
                return fail(err, errlen, name, "header dict: 'shape' is not a tuple of "
                            "non-negative integers");
        } else {
            char pk[32];
            printable(pk, sizeof pk, key);
            return fail(err, errlen, name, "header dict: unexpected key '%s' (allowed: 'descr', "
                        "'fortran_order', 'shape')", pk);
        }
        if (accept(&c, ','))
            continue;
        if (accept(&c, '}'))
            break;
        return fail(err, errlen, name, "header dict: expected ',' or '}'");
    }
    skip_blanks(&c);
    if (c.p != c.end)
        return fail(err, errlen, name, "header has text after the dict");
    if (!have_descr)
        return fail(err, errlen, name, "header dict: missing key 'descr'");
    if (!have_fortran)
        return fail(err, errlen, name, "header dict: missing key 'fortran_order'");
    if (!have_shape)
        return fail(err, errlen, name, "header dict: missing key 'shape'");
    if (fortran)
        return fail(err, errlen, name, "fortran_order True is not supported (write C-order "
                    "arrays, e.g. np.ascontiguousarray)");
    return 0;
}

/* ---------------------------------------------------------------- reader */

static uint64_t le64(const unsigned char *p)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = (v << 8) | p[i];
    return v;
}

static uint32_t le32(const unsigned char *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint16_t le16(const unsigned char *p) { return (uint16_t)(p[0] | p[1] << 8); }

/* What the magic, version, length field and header say, checked against the file's total size
   before any data is touched: a lying header is refused from these numbers alone. */
typedef struct {
    rn_dtype dtype;
    int ndim;
    size_t shape[RN_MAX_DIMS];
    size_t count, isz;
    size_t data_off;           /* where the data starts: 8 + length field + header */
} npy_info;

/* The fixed prefix: magic, version, header length.  prefix holds the first `have` bytes of a file
   of `total` bytes.  Sets *hstart (offset of the header) and *hlen. */
static int parse_prefix(const char *name, const unsigned char *prefix, size_t have, size_t total,
                        size_t *hstart, size_t *hlen, char *err, size_t errlen)
{
    static const unsigned char magic[6] = {0x93, 'N', 'U', 'M', 'P', 'Y'};
    if (have < 8 || memcmp(prefix, magic, 6) != 0)
        return fail(err, errlen, name, "not a .npy file (bad magic; expected \\x93NUMPY)");
    unsigned major = prefix[6], minor = prefix[7];
    size_t lenbytes;
    if (major == 1 && minor == 0)
        lenbytes = 2;
    else if ((major == 2 || major == 3) && minor == 0)
        lenbytes = 4;
    else
        return fail(err, errlen, name, "unsupported .npy format version %u.%u (supported: 1.0, "
                    "2.0, 3.0)", major, minor);
    if (have < 8 + lenbytes)
        return fail(err, errlen, name, "truncated: file ends inside the header length field");
    *hlen = lenbytes == 2 ? le16(prefix + 8) : le32(prefix + 8);
    *hstart = 8 + lenbytes;
    if (*hlen > total - *hstart)
        return fail(err, errlen, name, "header length %zu goes beyond the end of the file "
                    "(%zu bytes)", *hlen, total);
    return 0;
}

/* The header (at h, hlen bytes) and the data size it implies, against the file's total size. */
static int parse_info(const char *name, const char *h, size_t hstart, size_t hlen, size_t total,
                      npy_info *info, char *err, size_t errlen)
{
    memset(info, 0, sizeof *info);
    info->dtype = RN_F64;
    if (parse_header(name, h, hlen, &info->dtype, &info->ndim, info->shape, err, errlen))
        return -1;
    size_t count = 1;
    for (int i = 0; i < info->ndim; i++) {
        if (info->shape[i] != 0 && count > SIZE_MAX / info->shape[i])
            return fail(err, errlen, name, "shape's element count overflows size_t");
        count *= info->shape[i];
    }
    size_t isz = itemsize_of(info->dtype);
    if (count > SIZE_MAX / isz)
        return fail(err, errlen, name, "shape's byte count overflows size_t");
    size_t nbytes = count * isz;
    size_t have = total - hstart - hlen;
    if (have < nbytes)
        return fail(err, errlen, name, "truncated data: header says %zu bytes (%zu elements of "
                    "%zu bytes), file has %zu", nbytes, count, isz, have);
    if (have > nbytes)
        return fail(err, errlen, name, "%zu trailing bytes after the data (header says %zu "
                    "bytes, file has %zu)", have - nbytes, nbytes, have);
    info->count = count;
    info->isz = isz;
    info->data_off = hstart + hlen;
    return 0;
}

/* n little-endian values of dtype d at p into out[0..n).  One loop per dtype (the dtype is not
   tested per element, so gcc vectorizes the f32 and f64 loops: ~1 ns per element). */
static void decode(rn_dtype d, const unsigned char *p, size_t n, double *out)
{
    switch (d) {
    case RN_F64:
        for (size_t i = 0; i < n; i++) {
            uint64_t u = le64(p + 8 * i);
            memcpy(&out[i], &u, 8);
        }
        break;
    case RN_F32:
        for (size_t i = 0; i < n; i++) {
            uint32_t u = le32(p + 4 * i);
            float f;
            memcpy(&f, &u, 4);
            out[i] = (double)f;
        }
        break;
    case RN_F16:
        for (size_t i = 0; i < n; i++)
            out[i] = rn_f16_value(le16(p + 2 * i));
        break;
    default:
        for (size_t i = 0; i < n; i++)
            out[i] = rn_bf16_value(le16(p + 2 * i));
        break;
    }
}

int npy_parse(const char *name, const unsigned char *buf, size_t len, rn_array *out, char *err,
              size_t errlen)
{
    memset(out, 0, sizeof *out);
    if (!name)
        name = "(npy)";
    size_t hstart, hlen;
    npy_info info;
    if (parse_prefix(name, buf, len, len, &hstart, &hlen, err, errlen) ||
        parse_info(name, (const char *)buf + hstart, hstart, hlen, len, &info, err, errlen))
        return -1;
    if (rn_array_alloc(out, info.dtype, info.ndim, info.shape) != 0)
        return fail(err, errlen, name, "out of memory for %zu elements", info.count);
    decode(info.dtype, buf + info.data_off, info.count, out->data);
    return 0;
}

/* Exactly n bytes at offset off (pread: the reader keeps no position); 0, or -1 with errno (0 at
   an early end of file). */
static int pread_full(int fd, void *buf, size_t n, size_t off)
{
    unsigned char *p = buf;
    while (n) {
        ssize_t k = pread(fd, p, n, (off_t)off);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0) {
            if (k == 0)
                errno = 0;
            return -1;
        }
        p += k;
        n -= (size_t)k;
        off += (size_t)k;
    }
    return 0;
}


/* Opens path for reading only if it is a regular file.  O_NONBLOCK: opening a FIFO (or a device)
   must not wait for a writer before fstat can refuse it; it is cleared again for the reads. */
static int open_regular(const char *path, size_t *size, char *err, size_t errlen)
{
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    if (fd < 0)
        return fail(err, errlen, path, "cannot open: %s", strerror(errno));
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        return fail(err, errlen, path, "not a regular file");
    }
    int fl = fcntl(fd, F_GETFL);
    if (fl < 0 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) != 0) {
        close(fd);
        return fail(err, errlen, path, "cannot read: %s", strerror(errno));
    }
    *size = (size_t)st.st_size;
    return fd;
}

/* After a failed read of the header: close fd, and say why. */
static int read_fail(int fd, const char *path, char *err, size_t errlen)
{
    int e = errno;
    close(fd);
    if (e == 0)
        return fail(err, errlen, path, "the file shrank while it was read");
    return fail(err, errlen, path, "read error: %s", strerror(e));
}

/* Opens path and checks magic, header and the data size against the file's size (fstat), reading
   only the header (pread: the descriptor keeps no position).  Returns the descriptor, or -1 with
   a message. */
static int open_checked(const char *path, npy_info *info, char *err, size_t errlen)
{
    size_t total = 0;
    int fd = open_regular(path, &total, err, errlen);
    if (fd < 0)
        return -1;
    unsigned char prefix[12];
    size_t have = total < sizeof prefix ? total : sizeof prefix;
    if (pread_full(fd, prefix, have, 0) != 0)
        return read_fail(fd, path, err, errlen);
    size_t hstart, hlen;
    if (parse_prefix(path, prefix, have, total, &hstart, &hlen, err, errlen)) {
        close(fd);
        return -1;
    }
    /* hlen <= total - hstart: the header is no larger than the file */
    char *h = malloc(hlen ? hlen : 1);
    if (!h) {
        close(fd);
        return fail(err, errlen, path, "out of memory reading the header");
    }
    if (pread_full(fd, h, hlen, hstart) != 0) {
        free(h);
        return read_fail(fd, path, err, errlen);
    }
    int r = parse_info(path, h, hstart, hlen, total, info, err, errlen);
    free(h);
    if (r) {
        close(fd);
        return -1;
    }
    return fd;
}

int npy_read_header(const char *path, rn_array *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    npy_info info;
    int fd = open_checked(path, &info, err, errlen);
    if (fd < 0)
        return -1;
    close(fd);
    out->dtype = info.dtype;
    out->ndim = info.ndim;
    memcpy(out->shape, info.shape, sizeof info.shape);
    out->count = info.count;
    return 0;
}

int npy_open(const char *path, npy_reader *r, rn_array *hdr, char *err, size_t errlen)
{
    memset(r, 0, sizeof *r);
    memset(hdr, 0, sizeof *hdr);
    r->fd = -1;
    npy_info info;
    int fd = open_checked(path, &info, err, errlen);
    if (fd < 0)
        return -1;
    r->fd = fd;
    r->path = path;
    r->dtype = info.dtype;
    r->count = info.count;
    r->isz = info.isz;
    r->data_off = info.data_off;
    hdr->dtype = info.dtype;
    hdr->ndim = info.ndim;
    memcpy(hdr->shape, info.shape, sizeof info.shape);
    hdr->count = info.count;
    return 0;
}


static int range_fail(const npy_reader *r, char *err, size_t errlen)
{
    if (errno == 0)
        return fail(err, errlen, r->path, "the file shrank while it was read");
    return fail(err, errlen, r->path, "read error: %s", strerror(errno));
}

/* Elements [off, off + count) in chunks, decoded as they come: memory is the doubles, not the
   file as well.  0, or errno (0 for a short read: the file shrank). */
static int read_part(const npy_reader *r, size_t off, size_t count, double *out)
{
    unsigned char chunk[1 << 16];
    size_t per = sizeof chunk / r->isz, done = 0;
    while (done < count) {
        size_t k = count - done < per ? count - done : per;
        if (pread_full(r->fd, chunk, k * r->isz, r->data_off + (off + done) * r->isz) != 0)
            return errno ? errno : -1;
        decode(r->dtype, chunk, k, out + done);
        done += k;
    }
    return 0;
}

/* A range of at least this many elements is read in parts on rn_threads() threads (pread takes
   its offset: no shared file position; each part decodes into its own span of out, so the
   result is the same).  Inside a parallel region (a streaming block) the parts run one after
   the other. */
enum { NPY_PAR_ELEMS = 1 << 20, NPY_PARTS_MAX = 64 };

int npy_read_range(npy_reader *r, size_t off, size_t count, double *out, char *err, size_t errlen)
{
    if (off > r->count || count > r->count - off)
        return fail(err, errlen, r->path, "elements [%zu, %zu) are beyond its %zu elements", off,
                    off + count, r->count);
    int T = count >= NPY_PAR_ELEMS ? rn_threads() : 1;
    T = T < 1 ? 1 : T > NPY_PARTS_MAX ? NPY_PARTS_MAX : T;
    int res[NPY_PARTS_MAX] = {0};
#pragma omp parallel for num_threads(T) schedule(static)
    for (int t = 0; t < T; t++) {
        size_t a = count * (size_t)t / (size_t)T, b = count * (size_t)(t + 1) / (size_t)T;
        res[t] = read_part(r, off + a, b - a, out + a);
    }
    for (int t = 0; t < T; t++)
        if (res[t]) { /* the first failing part's reason, as a single reader would meet it */
            errno = res[t] > 0 ? res[t] : 0;
            return range_fail(r, err, errlen);
        }
    /* At the end of the data: the file may have grown since fstat, which is an error as when the
       header said so. */
    unsigned char one;
    if (off + count == r->count && pread(r->fd, &one, 1, (off_t)(r->data_off + r->count * r->isz)) != 0)
        return fail(err, errlen, r->path, "the file changed while it was read");
    return 0;
}

void npy_close(npy_reader *r)
{
    if (r->fd >= 0)
        close(r->fd);
    r->fd = -1;
}

int npy_read(const char *path, rn_array *out, char *err, size_t errlen)
{
    npy_reader r;
    rn_array h;
    memset(out, 0, sizeof *out);
    if (npy_open(path, &r, &h, err, errlen) != 0)
        return -1;
    if (rn_array_alloc(out, h.dtype, h.ndim, h.shape) != 0) {
        npy_close(&r);
        return fail(err, errlen, path, "out of memory for %zu elements", h.count);
    }
    int rc = npy_read_range(&r, 0, h.count, out->data, err, errlen);
    npy_close(&r);
    if (rc)
        rn_array_free(out);
    return rc;
}

/* ---------------------------------------------------------------- writer */

static const char *descr_of(rn_dtype d)
{
    switch (d) {
    case RN_F64: return "<f8";
    case RN_F32: return "<f4";
    case RN_F16: return "<f2";
    default: return "|V2";
    }
}

/* f32 on a little-endian machine, the common case of a large output: the float images memcpy'd,
   in one pass that also checks representability (rn_is_f32_value).  1 when
   done; 0 (nothing promised about out) when another dtype or an element not of f32 leaves it to
   the general loop, which names the element. */
static int encode_f32_le(const double *v, size_t count, rn_dtype d, unsigned char *out)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    if (d != RN_F32)
        return 0;
    for (size_t i = 0; i < count; i++) {
        if (!rn_is_f32_value(v[i]))
            return 0;
        float f = (float)v[i];
        memcpy(out + 4 * i, &f, 4);
    }
    return 1;
#else
    (void)v, (void)count, (void)d, (void)out;
    return 0;
#endif
}

int npy_encode_header(const char *path, rn_dtype d, int ndim, const size_t *shape,
                      unsigned char *buf, size_t *len, char *err, size_t errlen)
{
    if ((unsigned)d >= RN_NDTYPES || ndim < 0 || ndim > RN_MAX_DIMS)
        return fail(err, errlen, path, "invalid array (dtype or ndim)");
    size_t count = 1;
    for (int i = 0; i < ndim; i++) {
        if (shape[i] != 0 && count > SIZE_MAX / shape[i])
            return fail(err, errlen, path, "shape's element count overflows size_t");
        count *= shape[i];
    }
    char dict[512];
    int k = snprintf(dict, sizeof dict, "{'descr': '%s', 'fortran_order': False, 'shape': (",
                     descr_of(d));
    for (int i = 0; i < ndim; i++)
        k += snprintf(dict + k, sizeof dict - (size_t)k, "%s%zu", i ? ", " : "", shape[i]);
    k += snprintf(dict + k, sizeof dict - (size_t)k, "%s), }", ndim == 1 ? "," : "");
    size_t dlen = (size_t)k;
    size_t total_hdr = 10 + dlen + 1; /* magic, version, u16 length, dict, '\n' */
    size_t padded = (total_hdr + 63) / 64 * 64; /* <= NPY_HEADER_MAX */
    size_t hlen = padded - 10;
    if (count > (SIZE_MAX - padded) / itemsize_of(d))
        return fail(err, errlen, path, "array too large");
    memcpy(buf, "\x93NUMPY\x01\x00", 8);
    buf[8] = (unsigned char)(hlen & 0xff);
    buf[9] = (unsigned char)(hlen >> 8);
    memcpy(buf + 10, dict, dlen);
    memset(buf + 10 + dlen, ' ', hlen - dlen - 1);
    buf[padded - 1] = '\n';
    *len = padded;
    return 0;
}

/* count values v into out (count * itemsize bytes, little-endian); v[0] is element `first` of the
   file's array, so that a value not of dtype d is named by its index in the whole array. */
static int encode_values(const char *path, const double *v, size_t count, size_t first,
                         rn_dtype d, unsigned char *out, char *err, size_t errlen)
{
    if (encode_f32_le(v, count, d, out))
        return 0;
    size_t isz = itemsize_of(d);
    unsigned char *p = out;
    for (size_t i = 0; i < count; i++, p += isz) {
        double x = v[i];
        if (!rn_representable(x, d))
            return fail(err, errlen, path, "element %zu (%.17g) is not a value of dtype %s",
                        first + i, x, rn_dtype_name(d));
        uint64_t u;
        switch (d) {
        case RN_F64: memcpy(&u, &x, 8); break;
        case RN_F32: {
            float f = (float)x;
            uint32_t w;
            memcpy(&w, &f, 4);
            u = w;
            break;
        }
        case RN_F16: u = rn_f16_bits(x); break;
        default: u = rn_bf16_bits(x); break;
        }
        for (size_t b = 0; b < isz; b++)
            p[b] = (unsigned char)(u >> (8 * b));
    }
    return 0;
}

/* The complete file image of a: npy_encode_header's header, then the values. */
unsigned char *npy_encode(const char *path, const rn_array *a, size_t *len, char *err,
                          size_t errlen)
{
    unsigned char hdr[NPY_HEADER_MAX];
    size_t hl;
    if (npy_encode_header(path, a->dtype, a->ndim, a->shape, hdr, &hl, err, errlen) != 0)
        return NULL;
    size_t count = 1;
    for (int i = 0; i < a->ndim; i++)
        count *= a->shape[i];
    if (count != a->count || (count && !a->data)) {
        fail(err, errlen, path, "invalid array (count %zu does not match its shape)", a->count);
        return NULL;
    }
    *len = hl + count * itemsize_of(a->dtype);
    unsigned char *img = rn_bigbuf_calloc(*len, 1); /* 2 MiB pages: ref/bigbuf.h */
    if (!img) {
        fail(err, errlen, path, "out of memory");
        return NULL;
    }
    memcpy(img, hdr, hl);
    if (encode_values(path, a->data, count, 0, a->dtype, img + hl, err, errlen) != 0) {
        free(img);
        return NULL;
    }
    return img;
}

/* Directory part of path ("." if none). */
static char *dir_of(const char *path)
{
    const char *slash = strrchr(path, '/');
    if (!slash)
        return strdup(".");
    if (slash == path)
        return strdup("/");
    size_t n = (size_t)(slash - path);
    char *d = malloc(n + 1);
    if (d) {
        memcpy(d, path, n);
        d[n] = '\0';
    }
    return d;
}

/* All of buf to fd; 0, or an errno value. */
static int write_all(int fd, const unsigned char *buf, size_t len)
{
    size_t off = 0;
    while (off < len) {
        ssize_t w = write(fd, buf + off, len - off);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            return errno;
        }
        off += (size_t)w;
    }
    return 0;
}

/* The writer encodes this many values at a time (512 KiB of f64) between writes. */
enum { WRITER_CHUNK = 1 << 16 };

int npy_writer_open(npy_writer *w, const char *path, rn_dtype d, int ndim, const size_t *shape,
                    char *err, size_t errlen)
{
    memset(w, 0, sizeof *w);
    w->fd = -1;
    w->path = path;
    w->dtype = d;
    unsigned char hdr[NPY_HEADER_MAX];
    size_t hl;
    if (npy_encode_header(path, d, ndim, shape, hdr, &hl, err, errlen) != 0)
        return -1;
    w->count = 1;
    for (int i = 0; i < ndim; i++)
        w->count *= shape[i];
    if (!(w->buf = malloc(WRITER_CHUNK * itemsize_of(d))))
        return fail(err, errlen, path, "out of memory");
    char *dir = dir_of(path);
    const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
    if (!dir || (size_t)snprintf(w->tmp, sizeof w->tmp, "%s/.%s.tmp.XXXXXX", dir, base) >=
                    sizeof w->tmp) {
        free(dir);
        npy_writer_abort(w);
        return fail(err, errlen, path, "path too long");
    }
    free(dir);
    if ((w->fd = mkstemp(w->tmp)) < 0) {
        int e = errno;
        npy_writer_abort(w);
        return fail(err, errlen, path, "cannot create a temporary file next to it: %s",
                    strerror(e));
    }
    w->have_tmp = 1;
    /* mkstemp makes the file 0600; give it the mode an ordinary create would. */
    mode_t mask = umask(0);
    umask(mask);
    (void)fchmod(w->fd, 0666 & ~mask);
    int e = write_all(w->fd, hdr, hl);
    if (e) {
        npy_writer_abort(w);
        return fail(err, errlen, path, "write failed: %s", strerror(e));
    }
    return 0;
}

int npy_writer_append(npy_writer *w, const double *v, size_t count, char *err, size_t errlen)
{
    if (count > w->count - w->done)
        return fail(err, errlen, w->path, "more values than its shape holds");
    size_t isz = itemsize_of(w->dtype);
    for (size_t i = 0; i < count; i += WRITER_CHUNK) {
        size_t k = count - i < WRITER_CHUNK ? count - i : WRITER_CHUNK;
        if (encode_values(w->path, v + i, k, w->done, w->dtype, w->buf, err, errlen) != 0)
            return -1;
        int e = write_all(w->fd, w->buf, k * isz);
        if (e)
            return fail(err, errlen, w->path, "write failed: %s", strerror(e));
        w->done += k;
    }
    return 0;
}

int npy_writer_close(npy_writer *w, char *err, size_t errlen)
{
    int e = 0;
    if (w->done != w->count) {
        fail(err, errlen, w->path, "%zu values written, its shape holds %zu", w->done, w->count);
        npy_writer_abort(w);
        return -1;
    }
    if (getenv("RESNORM_FSYNC") && fsync(w->fd) != 0)
        e = errno;
    if (close(w->fd) != 0 && !e)
        e = errno;
    w->fd = -1;
    free(w->buf);
    w->buf = NULL;
    if (e) {
        npy_writer_abort(w);
        return fail(err, errlen, w->path, "write failed: %s", strerror(e));
    }
    return 0;
}

void npy_writer_abort(npy_writer *w)
{
    if (w->fd >= 0)
        close(w->fd);
    w->fd = -1;
    if (w->have_tmp)
        unlink(w->tmp);
    w->have_tmp = 0;
    w->tmp[0] = '\0';
    free(w->buf);
    w->buf = NULL;
}

int npy_write_tmp(const char *path, const rn_array *a, char *tmp, size_t tmplen, char *err,
                  size_t errlen)
{
    if (tmplen)
        tmp[0] = '\0';
    size_t count = 1;
    for (int i = 0; i < a->ndim && a->ndim <= RN_MAX_DIMS; i++)
        count *= a->shape[i];
    if (a->ndim < 0 || a->ndim > RN_MAX_DIMS || count != a->count || (count && !a->data))
        return fail(err, errlen, path, "invalid array (count %zu does not match its shape)",
                    a->count);
    npy_writer w;
    if (npy_writer_open(&w, path, a->dtype, a->ndim, a->shape, err, errlen) != 0)
        return -1;
    if (npy_writer_append(&w, a->data, a->count, err, errlen) != 0) {
        npy_writer_abort(&w);
        return -1;
    }
    if ((size_t)snprintf(tmp, tmplen, "%s", w.tmp) >= tmplen) {
        npy_writer_abort(&w);
        if (tmplen)
            tmp[0] = '\0';
        return fail(err, errlen, path, "path too long");
    }
    if (npy_writer_close(&w, err, errlen) != 0) {
        tmp[0] = '\0';
        return -1;
    }
    return 0;
}

int npy_write(const char *path, const rn_array *a, char *err, size_t errlen)
{
    char tmp[4096];
    if (npy_write_tmp(path, a, tmp, sizeof tmp, err, errlen) != 0)
        return -1;
    if (rename(tmp, path) != 0) {
        int e = errno;
        unlink(tmp);
        return fail(err, errlen, path, "cannot rename the temporary file into place: %s",
                    strerror(e));
    }
    return 0;
}
