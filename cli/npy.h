/* .npy files (NumPy format 1.0/2.0/3.0), little-endian, C order.
 * dtypes: '<f8' f64, '<f4' f32, '<f2' f16, and bf16 as '<V2' or '|V2' (raw little-endian bfloat16
 * bits, which is how ml_dtypes' bfloat16 arrays are saved by np.save). Anything else is an error.
 * In memory the values are doubles (exact for every supported dtype). */
#ifndef RESNORM_NPY_H
#define RESNORM_NPY_H

#include <stddef.h>

#include "dtype.h"

#define RN_MAX_DIMS 8

typedef struct {
    rn_dtype dtype;
    int ndim;                  /* 0 (scalar) .. RN_MAX_DIMS */
    size_t shape[RN_MAX_DIMS];
    size_t count;              /* product of shape (1 for a scalar) */
    double *data;              /* count values */
} rn_array;

/* Read path into *out. On any problem (missing file, bad magic, malformed or lying header,
   unsupported dtype, Fortran order, truncated or overlong data, size overflow) returns -1 and writes
   a one-line message that names the file and the problem into err[errlen]; *out is left empty. */
int npy_read(const char *path, rn_array *out, char *err, size_t errlen);
/* The same checks as npy_read (a regular file, opened without blocking; magic, header, and the data
   size the header implies equal to the file's size from fstat) reading only the header: *out gets
   dtype, ndim, shape and count, no data (out->data is NULL).  Lets a caller refuse a shape before
   the data is read. */
int npy_read_header(const char *path, rn_array *out, char *err, size_t errlen);
/* An open .npy file whose data is read a range at a time (eval's streaming path, cli/stream.c):
   npy_open makes npy_read_header's checks and keeps the file open, so every later range comes from
   the file whose header was checked (renaming another file over path in between changes nothing). */
typedef struct {
    int fd;
    const char *path;          /* for messages (not copied) */
    rn_dtype dtype;
    size_t count, isz, data_off;
} npy_reader;
/* *hdr gets dtype, ndim, shape and count (hdr->data is NULL).  0, or -1 with npy_read's messages. */
int npy_open(const char *path, npy_reader *r, rn_array *hdr, char *err, size_t errlen);
/* Elements [off, off + count) of the data, decoded into out[0..count).  -1 with a message naming the
   file, as npy_read's: "the file shrank while it was read" (it was truncated after npy_open), a
   read error, or, for a range that ends the data, "the file changed while it was read" (it grew). */
int npy_read_range(npy_reader *r, size_t off, size_t count, double *out, char *err,
                   size_t errlen);
void npy_close(npy_reader *r);
/* Parse an in-memory .npy image (the reader behind npy_read; what the fuzzer drives). name is used
   in messages. */
int npy_parse(const char *name, const unsigned char *buf, size_t len, rn_array *out, char *err,
              size_t errlen);
/* Write a to path atomically: a temporary file in the same directory, then rename. Values must be
   representable in a->dtype. Returns 0, or -1 with a message. */
int npy_write(const char *path, const rn_array *a, char *err, size_t errlen);
/* The first half of npy_write, for callers that publish several files together: write a's complete
   file to a new temporary file in path's directory and put its name in tmp[tmplen]; the caller
   then renames it to path (or unlinks it). Returns 0, or -1 with a message and no file left. */
int npy_write_tmp(const char *path, const rn_array *a, char *tmp, size_t tmplen, char *err,
                  size_t errlen);

/* A .npy file written a block of values at a time into a new temporary file next to path
   (".NAME.npy.tmp.XXXXXX", as npy_write_tmp): the header with the full shape first, then the values
   in order.  npy_write_tmp is this writer, so both give the same bytes.  The caller renames w->tmp
   into place after npy_writer_close, or removes it with npy_writer_abort. */
typedef struct {
    int fd, have_tmp;
    char tmp[4096];
    const char *path;
    rn_dtype dtype;
    size_t count, done;        /* elements the shape holds, and written so far */
    unsigned char *buf;        /* encoding buffer */
} npy_writer;
/* 0, or -1 with a message naming path and no temporary left. */
int npy_writer_open(npy_writer *w, const char *path, rn_dtype d, int ndim, const size_t *shape,
                    char *err, size_t errlen);
/* The next count values (each must be a value of the dtype: else the message names its index in
   the whole array).  0, or -1 with a message (the temporary stays until npy_writer_abort). */
int npy_writer_append(npy_writer *w, const double *v, size_t count, char *err, size_t errlen);
/* Every value written: closes the file (fsync first under RESNORM_FSYNC); the temporary stays for
   the caller.  0, or -1 with a message and the temporary removed. */
int npy_writer_close(npy_writer *w, char *err, size_t errlen);
/* Closes and removes the temporary (nothing if there is none). */
void npy_writer_abort(npy_writer *w);

/* The header np.save writes for an array of dtype d and this shape (padded to a multiple of 64
   bytes, ending in '\n'; at most NPY_HEADER_MAX bytes) into buf, its length in *len.  0, or -1 with
   a message naming path. */
#define NPY_HEADER_MAX 640
int npy_encode_header(const char *path, rn_dtype d, int ndim, const size_t *shape,
                      unsigned char *buf, size_t *len, char *err, size_t errlen);
/* The complete file image npy_write writes for a (malloc'd, *len bytes), or NULL with a message
   naming path. */
unsigned char *npy_encode(const char *path, const rn_array *a, size_t *len, char *err,
                          size_t errlen);

/* If set, called with +bytes before each rn_array_alloc and -bytes at each rn_array_free of a
   non-empty array (the memory limit of cli/memlimit.c counts the arrays this way). */
extern void (*rn_array_charge)(long long delta);

int rn_array_alloc(rn_array *a, rn_dtype dtype, int ndim, const size_t *shape);
void rn_array_free(rn_array *a);

#endif
