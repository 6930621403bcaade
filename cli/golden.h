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

/* mkdir -p; 0 or -1. */
int golden_mkdirs(const char *path);
/* Write v (count = prod shape) as <out>/<dir>/<sub><name>.npy in dtype dt; record its manifest path
   "golden/<dir>/<sub><name>.npy" under `name` in `paths` and its SHA-256 under that path in sha1
   and sha2 (each may be NULL).  0, or -1 after a message. */
int golden_put(const char *out, const char *dir, const char *sub, const char *name, rn_dtype dt,
               int ndim, const size_t *shape, const double *v, json_t *paths, json_t *sha1,
               json_t *sha2);
json_t *golden_shape_json(int ndim, const size_t *shape);
json_t *golden_flags_json(const char *flags); /* "a b" -> ["a", "b"] */

#endif
