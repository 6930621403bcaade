/* `resnorm golden gen --out DIR`: generate the golden vectors (manifest + .npy files) into DIR.
 * Format and conventions: specs/golden-format.md.  Deterministic: bit-identical on every run.
 *
 * cli/golden.c holds the generic machinery (PRNG, files, hashes, the manifest); each op family's
 * cases and generator live in its cli/op_<family>.c and are reached through the registry
 * (cli_family.golden in cli/cli.h). */
#ifndef RESNORM_GOLDEN_H
#define RESNORM_GOLDEN_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "dtype.h"

/* argv[0] is "golden".  Returns a process exit code (0 ok, 2 usage, 3 internal failure). */
int golden_main(int argc, char **argv);

/* What a family's generator writes into. */
typedef struct golden_ctx {
    const char *out; /* output directory (becomes golden/) */
    json_t *cases;   /* the manifest's "cases" array: append entries in order */
    size_t ncases;   /* cases generated (each may give several entries) */
} golden_ctx;

/* Deterministic samples: xoshiro256** seeded by splitmix64 from the FNV-1a hash of a case name. */
typedef struct {
    uint64_t s[4];
} golden_prng;
void golden_prng_seed(golden_prng *g, const char *name);
double golden_uniform(golden_prng *g); /* in [0, 1), a multiple of 2^-53 */
double golden_randn(golden_prng *g);   /* Irwin-Hall, 12 uniforms minus 6 */

/* `golden verify | list | run-check` (cli/golden_tools.c); argv[0] is the sub-verb. */
int golden_tools_main(int argc, char **argv);
/* The manifest's structure, as verify, list and run-check rely on it: every case an object with a
   string id that is a safe relative path (no '..', '.', empty component, not absolute), unique, a
   known op, attrs of that op with their kinds' JSON types (eps a string, axis an integer), inputs
   and expected outputs of that op as safe paths under golden/, sha256 keys likewise with 64 hex
   digits.  0, or -1 with a one-line message in err (naming the case and the field). */
int golden_manifest_check(json_t *m, char *err, size_t cap);
/* SHA-256 of a file as 64 lowercase hex digits; 0 or -1. */
int golden_sha256_file(const char *path, char hex[65]);
/* The same of what fd reads to its end, and of a buffer. */
int golden_sha256_fd(int fd, char hex[65]);
int golden_sha256_mem(const void *buf, size_t len, char hex[65]);
/* The manifest `golden gen` would write (every generator run, nothing written; each file's hash is
   that of the image it would write): what `golden verify` compares the committed manifest with.
   0, or an exit code after a message; *manifest is a new reference. */
int golden_expected_manifest(json_t **manifest);
/* The same, kept per binary in $RESNORM_VERIFY_CACHE when that is set (cli/golden.c). */
int golden_expected_manifest_cached(json_t **manifest);

/* mkdir -p; 0 or -1. */
int golden_mkdirs(const char *path);
/* Write v (count = prod shape) as <out>/<dir>/<sub><name>.npy in dtype dt; record its manifest path
   "golden/<dir>/<sub><name>.npy" under `name` in `paths` and its SHA-256 under that path in sha1
   and sha2 (each may be NULL).  0, or -1 after a message. */
int golden_put(const char *out, const char *dir, const char *sub, const char *name, rn_dtype dt,
               int ndim, const size_t *shape, const double *v, json_t *paths, json_t *sha1,
               json_t *sha2);
json_t *golden_shape_json(int ndim, const size_t *shape);

/* ---------------------------------------------------------------- one case, written generically
 *
 * Every family writes a case the same way: the directory golden/<family>/<case>/, the inputs
 * (in the case's input dtype) at its top, then for each output dtype d in f64 f32 f16 bf16 the
 * twin's outputs rounded once to d in <d>/, and one manifest entry per op of the case (e.g.
 * layernorm/<case> and layernorm_backward/<case>) that names its inputs, its expected files per
 * dtype, result "valid" per dtype and the SHA-256 of every file it names.  A family describes its
 * case in a golden_case and calls golden_case_write; the bytes written depend only on that
 * description. */
#define GOLDEN_MAX_ARRAYS 80 /* a stack of 4 blocks has 72 arrays (cli/golden_case.h), + the NULL ending a list */
#define GOLDEN_MAX_ENTRIES 4

typedef struct {
    const char *name;   /* file <name>.npy and the manifest key */
    int ndim;
    size_t shape[8];    /* RN_MAX_DIMS */
    double *v;          /* prod(shape) values; NULL: an optional array this case does not have
                           (no file, absent from every entry) */
} golden_array;

typedef struct {
    const char *op;     /* the entry's op; its id is "<op>/<case name>" */
    /* Names of the case's inputs and outputs this entry uses, NULL-ended.  `inputs` is in the
       order of the entry's "inputs" object; the sha256 object lists the input files in the order
       they are written (golden_case.inputs) and then, per dtype, the outputs in this order. */
    const char *inputs[GOLDEN_MAX_ARRAYS];
    const char *outputs[GOLDEN_MAX_ARRAYS];
} golden_entry;

typedef struct golden_case {
    const char *family; /* directory golden/<family>/<name>/ */
    const char *name;
    const char *comment, *flags;  /* flags space-separated */
    rn_dtype in;                  /* the input dtype (inputs must be values of it) */
    int ndim;                     /* the manifest's "shape" (of x) */
    const size_t *shape;
    json_t *attrs;                /* the manifest's "attrs" (borrowed; shared by the entries) */
    int ninputs, noutputs, nentries;
    golden_array inputs[GOLDEN_MAX_ARRAYS];  /* written in this order */
    golden_array outputs[GOLDEN_MAX_ARRAYS]; /* buffers the twin fills, for each dtype */
    golden_entry entries[GOLDEN_MAX_ENTRIES];
    /* Fill every outputs[k].v with the certified outputs rounded once to `out`; RN_TWIN_* (0 ok). */
    int (*twin)(const struct golden_case *c, rn_dtype out);
    const void *arg;              /* the family's own data for twin */
    /* Ops with an eps: has_eps = 1 and eps = the exact value used (the text of attrs.eps rounded
       once to attrs.eps_dtype), written as the entry's "eps_exact" (a C99 hex float). */
    int has_eps;
    double eps;
} golden_case;

/* eps of a case: its decimal text rounded once to eps_dtype ("f32", "f64", "input"; NULL: the
   default, f64 for f64 inputs, else f32 as PyTorch); *ed: the format used.  0, or -1 after a
   message naming the case. */
int golden_eps(const char *name, const char *text, const char *eps_dtype, rn_dtype in, double *eps,
               rn_dtype *ed);
/* The attrs of a normalization case: {"eps": text, "axis": axis, ["offset": offset (>= 0),]
   "eps_dtype": name of ed}. */
json_t *golden_norm_attrs(const char *eps_text, int axis, int offset, rn_dtype ed);

/* Write case c's files and append its entries to G->cases (G->ncases += 1).  0, or -1 after a
   message naming the case. */
int golden_case_write(golden_ctx *G, const golden_case *c);

/* The row view of a case's x (ONNX axis, may be negative): rows = prod(shape[:axis]),
   n = prod(shape[axis:]); pshape = shape[axis:] (pnd dims: gamma, beta, dgamma, ...);
   sshape = shape[:axis] + [1]*(ndim-axis) (mean, rstd). */
typedef struct {
    size_t rows, n;
    int pnd;
    size_t pshape[8], sshape[8];
} golden_rowview;
void golden_row_view(int ndim, const size_t *shape, int axis, golden_rowview *v);
/* A golden_array named `name` of ndim/shape over v. */
golden_array golden_arr(const char *name, int ndim, const size_t *shape, double *v);
json_t *golden_flags_json(const char *flags); /* "a b" -> ["a", "b"] */

#endif
