/* `resnorm golden gen --out DIR`: the golden vectors of golden/, generated, never edited.
 * This file is the generic machinery; the cases of each op family and their generator live in the
 * family's cli/op_<family>.c (registry: cli/cli.h, cli_families[] in cli/args.c).
 *
 * For every case of a family's table: inputs drawn from a deterministic PRNG (xoshiro256** seeded by
 * splitmix64 from the case name; normal-ish samples by Irwin-Hall, no libm transcendental), each value
 * rounded (RN-even) to the case's input dtype; then the family's MPFR twin (ref/<family>_mpfr.c) gives
 * the certified outputs, rounded once to each of f64, f32, f16, bf16.  Files are written with npy_write
 * (atomic), the manifest with jansson in a fixed order.  Layout and schema: specs/golden-format.md.
 * Everything is a pure function of this file: two runs give bit-identical trees.
 */
#include "golden.h"

#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <openssl/evp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dtype.h"
#include "cli.h"
#include "npy.h"

enum { EXIT_OK = 0, EXIT_USAGE = 2, EXIT_INTERNAL = 3 };

/* ---------------------------------------------------------------- deterministic samples */


static uint64_t splitmix64(uint64_t *z)
{
    uint64_t r = (*z += 0x9E3779B97F4A7C15ull);
    r = (r ^ (r >> 30)) * 0xBF58476D1CE4E5B9ull;
    r = (r ^ (r >> 27)) * 0x94D049BB133111EBull;
    return r ^ (r >> 31);
}

void golden_prng_seed(golden_prng *g, const char *name)
{
    uint64_t h = 0xCBF29CE484222325ull; /* FNV-1a of the case name */
    for (const unsigned char *p = (const unsigned char *)name; *p; p++)
        h = (h ^ *p) * 0x100000001B3ull;
    for (int i = 0; i < 4; i++)
        g->s[i] = splitmix64(&h);
}

static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

static uint64_t xoshiro(golden_prng *g) /* xoshiro256** */
{
    uint64_t *s = g->s;
    uint64_t r = rotl(s[1] * 5, 7) * 9, t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return r;
}

/* Uniform in [0, 1), a multiple of 2^-53 (exact). */
double golden_uniform(golden_prng *g) { return (double)(xoshiro(g) >> 11) * 0x1p-53; }

/* Irwin-Hall: sum of 12 uniforms minus 6: mean 0, variance 1, support [-6, 6].  Plain IEEE double
   additions in a fixed order: the same bits on every conforming platform. */
double golden_randn(golden_prng *g)
{
    double s = 0.0;
    for (int i = 0; i < 12; i++)
        s += golden_uniform(g);
    return s - 6.0;
}

/* ---------------------------------------------------------------- files */

int golden_mkdirs(const char *path)
{
    char buf[4096];
    if (snprintf(buf, sizeof buf, "%s", path) >= (int)sizeof buf)
        return -1;
    for (char *p = buf + 1; *p; p++)
        if (*p == '/') {
            *p = '\0';
            if (mkdir(buf, 0755) != 0 && errno != EEXIST)
                return -1;
            *p = '/';
        }
    if (mkdir(buf, 0755) != 0 && errno != EEXIST)
        return -1;
    return 0;
}

static int sha256_file(const char *path, char hex[65])
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return -1;
    EVP_MD_CTX *ctx = EVP_MD_CTX_new();
    int ok = ctx && EVP_DigestInit_ex(ctx, EVP_sha256(), NULL);
    unsigned char buf[65536];
    size_t k;
    while (ok && (k = fread(buf, 1, sizeof buf, f)) > 0)
        ok = EVP_DigestUpdate(ctx, buf, k);
    ok = ok && !ferror(f);
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int mdlen = 0;
    ok = ok && EVP_DigestFinal_ex(ctx, md, &mdlen) && mdlen == 32;
    EVP_MD_CTX_free(ctx);
    fclose(f);
    if (!ok)
        return -1;
    for (int i = 0; i < 32; i++)
        snprintf(hex + 2 * i, 3, "%02x", md[i]);
    return 0;
}

/* Write one array as <out>/<dir>/<sub><name>.npy; record it in `paths` (name -> manifest path) and
   its sha256 in the given sha objects. */
int golden_put(const char *out, const char *dir, const char *sub, const char *name, rn_dtype dt,
               int ndim, const size_t *shape, const double *v, json_t *paths, json_t *sha1,
               json_t *sha2)
{
    char rel[1024], path[4096], err[512], hex[65];
    snprintf(rel, sizeof rel, "golden/%s/%s%s.npy", dir, sub, name);
    snprintf(path, sizeof path, "%s/%s/%s%s.npy", out, dir, sub, name);
    rn_array a;
    if (rn_array_alloc(&a, dt, ndim, shape) != 0) {
        fprintf(stderr, "resnorm golden: out of memory\n");
        return -1;
    }
    memcpy(a.data, v, a.count * sizeof(double));
    int rc = npy_write(path, &a, err, sizeof err);
    rn_array_free(&a);
    if (rc != 0) {
        fprintf(stderr, "resnorm golden: %s\n", err);
        return -1;
    }
    if (sha256_file(path, hex) != 0) {
        fprintf(stderr, "resnorm golden: %s: cannot hash\n", path);
        return -1;
    }
    if (paths)
        json_object_set_new(paths, name, json_string(rel));
    if (sha1)
        json_object_set_new(sha1, rel, json_string(hex));
    if (sha2)
        json_object_set_new(sha2, rel, json_string(hex));
    return 0;
}

json_t *golden_shape_json(int ndim, const size_t *shape)
{
    json_t *a = json_array();
    for (int i = 0; i < ndim; i++)
        json_array_append_new(a, json_integer((json_int_t)shape[i]));
    return a;
}

json_t *golden_flags_json(const char *flags)
{
    json_t *a = json_array();
    char buf[256];
    snprintf(buf, sizeof buf, "%s", flags);
    for (char *save = NULL, *t = strtok_r(buf, " ", &save); t; t = strtok_r(NULL, " ", &save))
        json_array_append_new(a, json_string(t));
    return a;
}

static int write_manifest(const char *out, json_t *root)
{
    char path[4096], tmp[4200];
    snprintf(path, sizeof path, "%s/manifest.json", out);
    snprintf(tmp, sizeof tmp, "%s/.manifest.json.tmp", out);
    char *s = json_dumps(root, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_ENSURE_ASCII);
    if (!s)
        return -1;
    FILE *f = fopen(tmp, "wb");
    int ok = f && fputs(s, f) >= 0 && fputc('\n', f) != EOF;
    ok = (f && fclose(f) == 0) && ok;
    free(s);
    if (!ok || rename(tmp, path) != 0) {
        unlink(tmp);
        return -1;
    }
    return 0;
}

static void usage(FILE *f)
{
    /* the families from the registry: "layernorm/<case>/..., residual/<case>/..." */
    fprintf(f, "usage: resnorm golden gen --out DIR\n"
               "  Generate the golden vectors (manifest.json and ");
    size_t col = 49; /* wrap the family list before column 100 */
    for (int i = 0; i < cli_nfamilies; i++) {
        size_t w = strlen(cli_families[i]->name) + 12 + (i ? 2 : 0);
        if (i && col + w > 92) {
            fprintf(f, ",\n   ");
            col = 3;
            w -= 2;
        } else if (i) {
            fprintf(f, ", ");
        }
        fprintf(f, "%s/<case>/...", cli_families[i]->name);
        col += w;
    }
    fprintf(f, ") into DIR.\n"
               "  Paths inside the manifest are relative to the repository root (golden/...), so DIR\n"
               "  is meant to become golden/ ('make golden').  Deterministic: bit-identical output.\n"
               "  Format: specs/golden-format.md.  One progress line per case on stderr.\n");
}

int golden_main(int argc, char **argv)
{
    if (argc >= 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
        usage(stdout);
        return EXIT_OK;
    }
    if (argc < 2 || strcmp(argv[1], "gen") != 0) {
        usage(stderr);
        fprintf(stderr, "resnorm golden: expected 'gen'\n");
        return EXIT_USAGE;
    }
    const char *out = NULL;
    for (int i = 2; i < argc; i++) {
        if (!strcmp(argv[i], "--out") && i + 1 < argc && !out)
            out = argv[++i];
        else if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            usage(stdout);
            return EXIT_OK;
        } else {
            usage(stderr);
            fprintf(stderr, "resnorm golden gen: unexpected argument '%s'\n", argv[i]);
            return EXIT_USAGE;
        }
    }
    if (!out || !*out) {
        usage(stderr);
        fprintf(stderr, "resnorm golden gen: missing --out DIR\n");
        return EXIT_USAGE;
    }
    if (golden_mkdirs(out) != 0) {
        fprintf(stderr, "resnorm golden gen: cannot create %s: %s\n", out, strerror(errno));
        return EXIT_INTERNAL;
    }

    json_t *root = json_object();
    json_object_set_new(root, "schema", json_string("resnorm-golden"));
    json_object_set_new(root, "version", json_integer(1));
    json_t *notes = json_object(), *fl = json_object();
    json_object_set_new(notes, "doc", json_string("specs/golden-format.md"));
    /* Each family's flags in registry order; a flag already described is not repeated. */
    for (int f = 0; f < cli_nfamilies; f++)
        for (const char *const(*p)[2] = cli_families[f]->flags; p && (*p)[0]; p++)
            if (!json_object_get(fl, (*p)[0]))
                json_object_set_new(fl, (*p)[0], json_string((*p)[1]));
    json_object_set_new(notes, "flags", fl);
    json_object_set_new(root, "notes", notes);
    json_t *cases = json_array();
    json_object_set_new(root, "cases", cases);

    int rc = EXIT_OK;
    golden_ctx G = {out, cases, 0};
    for (int f = 0; f < cli_nfamilies && rc == EXIT_OK; f++)
        if (cli_families[f]->golden && cli_families[f]->golden(&G) != 0)
            rc = EXIT_INTERNAL;
    if (rc == EXIT_OK && write_manifest(out, root) != 0) {
        fprintf(stderr, "resnorm golden gen: cannot write %s/manifest.json\n", out);
        rc = EXIT_INTERNAL;
    }
    json_decref(root);
    if (rc == EXIT_OK)
        fprintf(stderr, "golden: %zu cases (forward and backward) written to %s\n", G.ncases, out);
    return rc;
}
