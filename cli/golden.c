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
/* nftw (removing a failed tree) is XSI */
#define _XOPEN_SOURCE 700
#include "golden.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <jansson.h>
#include <math.h>
#include <openssl/evp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dtype.h"
#include "cli.h"
#include "memlimit.h"
#include "npy.h"
#include "layernorm_mpfr.h" /* RN_TWIN_* */

enum { EXIT_OK = 0, EXIT_USAGE = 2, EXIT_INTERNAL = 3 };

static int gen_into(const char *out);

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

/* Dry mode (golden_expected_manifest): the generators run as usual but nothing is written; each
   file's SHA-256 is that of the image npy_write would write.  golden_io_failed records that a
   write failed (gen then exits 2: an output problem, not an internal one). */
static int golden_dry, golden_io_failed;

int golden_mkdirs(const char *path)
{
    char buf[4096];
    if (golden_dry)
        return 0;
    if (snprintf(buf, sizeof buf, "%s", path) >= (int)sizeof buf)
        return golden_io_failed = 1, -1;
    for (char *p = buf + 1; *p; p++)
        if (*p == '/') {
            *p = '\0';
            if (mkdir(buf, 0755) != 0 && errno != EEXIST)
                return golden_io_failed = 1, -1;
            *p = '/';
        }
    if (mkdir(buf, 0755) != 0 && errno != EEXIST)
        return golden_io_failed = 1, -1;
    return 0;
}

/* SHA-256 as 64 lowercase hex digits, of a buffer (fd < 0) or of what fd reads to its end. */
static int sha256_hex(int fd, const unsigned char *mem, size_t len, char hex[65])
{
    EVP_MD_CTX *ctx = EVP_MD_CTX_new();
    int ok = ctx && EVP_DigestInit_ex(ctx, EVP_sha256(), NULL);
    if (fd < 0) {
        ok = ok && EVP_DigestUpdate(ctx, mem, len);
    } else {
        unsigned char buf[65536];
        for (;;) {
            ssize_t k = read(fd, buf, sizeof buf);
            if (k < 0 && errno == EINTR)
                continue;
            if (k <= 0) {
                ok = ok && k == 0;
                break;
            }
            ok = ok && EVP_DigestUpdate(ctx, buf, (size_t)k);
        }
    }
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int mdlen = 0;
    ok = ok && EVP_DigestFinal_ex(ctx, md, &mdlen) && mdlen == 32;
    EVP_MD_CTX_free(ctx);
    if (!ok)
        return -1;
    for (int i = 0; i < 32; i++)
        snprintf(hex + 2 * i, 3, "%02x", md[i]);
    return 0;
}

int golden_sha256_fd(int fd, char hex[65]) { return sha256_hex(fd, NULL, 0, hex); }

int golden_sha256_mem(const void *buf, size_t len, char hex[65])
{
    return sha256_hex(-1, buf, len, hex);
}

int golden_sha256_file(const char *path, char hex[65])
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    int r = sha256_hex(fd, NULL, 0, hex);
    close(fd);
    return r;
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
    int rc;
    if (golden_dry) {
        size_t len;
        unsigned char *img = npy_encode(path, &a, &len, err, sizeof err);
        rc = img && golden_sha256_mem(img, len, hex) == 0 ? 0 : -1;
        free(img);
        if (rc)
            snprintf(err + strlen(err), sizeof err - strlen(err), " (cannot encode or hash)");
    } else {
        rc = npy_write(path, &a, err, sizeof err);
        if (rc)
            golden_io_failed = 1;
        else if (golden_sha256_file(path, hex) != 0)
            rc = -1, golden_io_failed = 1, snprintf(err, sizeof err, "%.400s: cannot hash", path);
    }
    rn_array_free(&a);
    if (rc != 0) {
        fprintf(stderr, "resnorm golden: %s\n", err);
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

/* ---------------------------------------------------------------- one case */

void golden_row_view(int ndim, const size_t *shape, int axis, golden_rowview *v)
{
    int ax = axis < 0 ? axis + ndim : axis;
    v->rows = 1;
    v->n = 1;
    v->pnd = ndim - ax;
    for (int i = 0; i < ndim; i++) {
        if (i < ax)
            v->rows *= shape[i];
        else
            v->n *= shape[i];
        if (i >= ax)
            v->pshape[i - ax] = shape[i];
        v->sshape[i] = i < ax ? shape[i] : 1;
    }
}

int golden_eps(const char *name, const char *text, const char *eps_dtype, rn_dtype in, double *eps,
               rn_dtype *ed)
{
    *ed = cli_default_eps_dtype(in);
    if ((eps_dtype && cli_eps_dtype_from_name(eps_dtype, in, ed) != 0) ||
        rn_parse_eps(text, *ed, eps) != 0) {
        fprintf(stderr, "resnorm golden: %s: bad eps '%s' or eps_dtype '%s'\n", name, text,
                eps_dtype ? eps_dtype : "(default)");
        return -1;
    }
    return 0;
}

json_t *golden_norm_attrs(const char *eps_text, int axis, int offset, rn_dtype ed)
{
    json_t *a = json_object();
    json_object_set_new(a, "eps", json_string(eps_text));
    json_object_set_new(a, "axis", json_integer(axis));
    if (offset >= 0)
        json_object_set_new(a, "offset", json_integer(offset));
    json_object_set_new(a, "eps_dtype", json_string(rn_dtype_name(ed)));
    return a;
}

golden_array golden_arr(const char *name, int ndim, const size_t *shape, double *v)
{
    golden_array a = {name, ndim, {0}, v};
    memcpy(a.shape, shape, sizeof(size_t) * (size_t)ndim);
    return a;
}

static int names_contain(const char *const *names, const char *name)
{
    for (; *names; names++)
        if (!strcmp(*names, name))
            return 1;
    return 0;
}

/* Write array a as <dir>/<sub><a.name>.npy in dtype dt; its path into *rel (a new string), its
   hash under that path into sha[e] of each entry e whose `uses(e)` list names it. */
static int put_shared(const golden_ctx *G, const golden_case *c, const char *dir, const char *sub,
                      const golden_array *a, rn_dtype dt, int input, json_t *const *sha,
                      json_t **rel)
{
    json_t *one = json_object(), *hashes = json_object();
    int rc = golden_put(G->out, dir, sub, a->name, dt, a->ndim, a->shape, a->v, one, hashes, NULL);
    if (rc == 0) {
        *rel = json_incref(json_object_get(one, a->name));
        const char *path = json_string_value(*rel);
        for (int e = 0; e < c->nentries; e++)
            if (names_contain(input ? c->entries[e].inputs : c->entries[e].outputs, a->name))
                json_object_set(sha[e], path, json_object_get(hashes, path));
    }
    json_decref(one);
    json_decref(hashes);
    return rc;
}

int golden_case_write(golden_ctx *G, const golden_case *c)
{
    char dir[512], path[4096];
    json_t *in_paths = json_object(), *res = json_object();
    json_t *sha[GOLDEN_MAX_ENTRIES], *ex[GOLDEN_MAX_ENTRIES];
    int rc = -1;
    for (int e = 0; e < c->nentries; e++) {
        sha[e] = json_object();
        ex[e] = json_object();
    }
    snprintf(dir, sizeof dir, "%s/%s", c->family, c->name);
    snprintf(path, sizeof path, "%s/%s", G->out, dir);
    if (golden_mkdirs(path) != 0) {
        fprintf(stderr, "resnorm golden: cannot create %s: %s\n", path, strerror(errno));
        goto out;
    }
    for (int k = 0; k < c->ninputs; k++) {
        json_t *rel = NULL;
        if (!c->inputs[k].v)
            continue;
        if (put_shared(G, c, dir, "", &c->inputs[k], c->in, 1, sha, &rel))
            goto out;
        json_object_set_new(in_paths, c->inputs[k].name, rel);
    }
    for (int d = 0; d < RN_NDTYPES; d++) {
        rn_dtype dt = (rn_dtype)d;
        const char *dn = rn_dtype_name(dt);
        char sub[16];
        snprintf(sub, sizeof sub, "%s/", dn);
        snprintf(path, sizeof path, "%s/%s/%s", G->out, dir, dn);
        if (golden_mkdirs(path) != 0) {
            fprintf(stderr, "resnorm golden: cannot create %s\n", path);
            goto out;
        }
        int t = c->twin(c, dt);
        if (t) {
            fprintf(stderr, "resnorm golden: %s/%s: the twin %s\n", c->name, dn,
                    t == RN_TWIN_NOMEM ? "ran out of memory" : "could not certify an output");
            goto out;
        }
        json_object_set_new(res, dn, json_string("valid"));
        /* each entry's outputs, in the entry's order (an output belongs to one entry) */
        for (int e = 0; e < c->nentries; e++) {
            json_t *p = json_object();
            json_object_set_new(ex[e], dn, p);
            for (const char *const *o = c->entries[e].outputs; *o; o++) {
                const golden_array *a = NULL;
                for (int k = 0; k < c->noutputs && !a; k++)
                    if (!strcmp(c->outputs[k].name, *o))
                        a = &c->outputs[k];
                if (!a) {
                    fprintf(stderr, "resnorm golden: %s: entry %s names no output '%s'\n",
                            c->name, c->entries[e].op, *o);
                    goto out;
                }
                if (golden_put(G->out, dir, sub, a->name, dt, a->ndim, a->shape, a->v, p, sha[e],
                               NULL))
                    goto out;
            }
        }
    }
    for (int e = 0; e < c->nentries; e++) {
        const golden_entry *en = &c->entries[e];
        json_t *j = json_object(), *ins = json_object();
        char id[512];
        for (const char *const *i = en->inputs; *i; i++) {
            json_t *p = json_object_get(in_paths, *i);
            if (p) /* an optional input the case does not have is absent */
                json_object_set(ins, *i, p);
        }
        snprintf(id, sizeof id, "%s/%s", en->op, c->name);
        json_object_set_new(j, "id", json_string(id));
        json_object_set_new(j, "op", json_string(en->op));
        json_object_set_new(j, "comment", json_string(c->comment));
        json_object_set_new(j, "flags", golden_flags_json(c->flags));
        json_object_set(j, "attrs", c->attrs);
        if (c->has_eps) {
            char hex[64];
            snprintf(hex, sizeof hex, "%a", c->eps);
            json_object_set_new(j, "eps_exact", json_string(hex));
        }
        json_object_set_new(j, "shape", golden_shape_json(c->ndim, c->shape));
        json_object_set_new(j, "input_dtype", json_string(rn_dtype_name(c->in)));
        json_object_set_new(j, "inputs", ins);
        json_object_set(j, "expected", ex[e]);
        json_object_set(j, "result", res);
        json_object_set(j, "sha256", sha[e]);
        json_array_append_new(G->cases, j);
    }
    G->ncases++;
    rc = 0;
out:
    json_decref(in_paths);
    json_decref(res);
    for (int e = 0; e < c->nentries; e++) {
        json_decref(sha[e]);
        json_decref(ex[e]);
    }
    return rc;
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
        golden_io_failed = 1;
        return -1;
    }
    return 0;
}

/* ---------------------------------------------------------------- notes: results, bug classes */

/* Wycheproof's result values, as the manifest uses them. */
static json_t *results_json(void)
{
    json_t *r = json_object();
    json_object_set_new(r, "valid", json_string(
        "the expected values are the reference at that dtype: a correct implementation passes, "
        "and the case's target bug fails it"));
    json_object_set_new(r, "acceptable", json_string(
        "the expected values are the reference, but at that dtype the case's target bug stays "
        "within the tolerance of a correct implementation (the output rounding hides it): an "
        "implementation may pass or fail; the case's result_notes say why"));
    return r;
}

/* The bug classes the suite targets (the mutants of tests/test_bug_zoo.c carry these names).
   Fields: id, ops (space-separated), bug, effect, flags (space-separated), link ("" if none
   known for certain).  Block-level classes (pre/post-LN swapped, residual added to the normalized
   copy, dropout after the add) join here with the block's op. */
static const char *const BUGS[][6] = {
    {"unbiased_variance", "layernorm layernorm_backward skip_layernorm",
     "variance divided by n - 1 (torch.var's default) instead of n",
     "rstd too large by sqrt(n/(n-1)): visible when n is small, 1/(2n) relative at long rows",
     "small_n long_row", ""},
    {"eps_outside_sqrt", "layernorm rmsnorm skip_layernorm skip_rmsnorm",
     "1/(sqrt(var) + eps) or 1/sqrt(var) + eps instead of 1/sqrt(var + eps)",
     "rstd wrong where var is comparable to eps", "eps_large zero_variance zero_rows long_row", ""},
    {"wrong_eps", "layernorm rmsnorm", "eps ignored, or a different eps (1e-6 for 1e-5, 1e-12)",
     "rstd wrong where var is comparable to eps", "eps_large long_row", ""},
    {"one_pass_variance", "layernorm skip_layernorm",
     "var = E[x^2] - E[x]^2 in the compute precision",
     "catastrophic cancellation when |mean| >> std: garbage or negative variance",
     "large_mean long_row", ""},
    {"lowp_sum_of_squares", "rmsnorm skip_rmsnorm",
     "x^2 formed or summed in f16 (or bf16)", "Inf or 0 for mean(x^2): y = 0 or Inf",
     "lowp_sumsq_overflow lowp_sumsq_underflow long_row", ""},
    {"wrong_axis", "layernorm rmsnorm layernorm_backward",
     "normalizing over the last dimension only, or over the batch (columns)",
     "wrong mean and rstd for every multi-dimensional normalization", "axis", ""},
    {"gamma_beta", "layernorm rmsnorm",
     "gamma or beta missing, swapped, or broadcast along the wrong dimension",
     "y off by beta or by a factor gamma", "gpt2 axis", ""},
    {"output_rounding", "layernorm rmsnorm residual skip_layernorm skip_rmsnorm",
     "outputs rounded to bf16 or f16 where f32 is promised",
     "errors of 2^-9 or 2^-12 relative where 2^-24 is allowed: only visible at f32/f64",
     "gpt2", ""},
    {"weight_after_cast", "rmsnorm skip_rmsnorm",
     "RMSNorm weight applied after the normalized x is cast to a half dtype (HF Llama's "
     "weight * x.to(input_dtype)) instead of before the single final rounding (the reference, "
     "HF Gemma's (x * w).to(dtype))",
     "a second rounding: up to 1 ulp of the half dtype instead of half an ulp", "llama offset",
     "https://github.com/huggingface/transformers/blob/main/src/transformers/models/gemma/"
     "modeling_gemma.py"},
    {"gemma_offset_missing", "rmsnorm rmsnorm_backward skip_rmsnorm",
     "Gemma's weight 1 + gamma applied as gamma", "y nearly 0 (gamma ~ 0.1)", "offset long_row",
     "https://github.com/huggingface/transformers/blob/main/src/transformers/models/gemma/"
     "modeling_gemma.py"},
    {"backward_missing_mean_g", "layernorm_backward skip_layernorm_backward",
     "dx without the - mean(g) term", "dx shifted by rstd mean(dy gamma) per row", "gpt2", ""},
    {"backward_missing_mean_gxhat",
     "layernorm_backward rmsnorm_backward skip_layernorm_backward skip_rmsnorm_backward",
     "dx without the - xhat mean(g xhat) term", "dx off by rstd xhat mean(g xhat)", "gpt2", ""},
    {"param_grad_not_summed", "layernorm_backward rmsnorm_backward",
     "dgamma / dbeta of the last row only, or summed over the batch dimension but not over all "
     "rows", "dgamma, dbeta wrong whenever there are several rows", "axis gpt2", ""},
    {"skip_norm_of_x", "skip_layernorm skip_rmsnorm skip_layernorm_backward skip_rmsnorm_backward",
     "the fused skip + norm normalizes x instead of x + skip (+ bias)",
     "y, rstd of the wrong vector", "gpt2", ""},
    {"skip_sum_before_bias", "skip_layernorm skip_rmsnorm",
     "the returned sum (input_skip_bias_sum) is x + skip, before the bias is added",
     "sum off by bias", "gpt2", ""},
};

/* Cases whose target bug the dtype cannot distinguish (result "acceptable" there, with the reason).
   Found by the bug zoo (tests/test_bug_zoo.c prints the (case, dtype) pairs where no mutant of a
   targeted class fails): with |mean| / std = 1e4 or more, the bound of a correct two-pass kernel
   computing in f32 is itself larger than the one-pass variance's error. */
static const char *const ACCEPTABLE[][3] = {
#define LM_F32 "computing in f32 with |mean| / std >= 1e4, rounding the mean alone costs u |mean| / std " \
               "relative in x - mean, so the tolerance of a correct two-pass kernel exceeds the "   \
               "error of the one-pass variance E[x^2] - E[x]^2 (the target of flag large_mean): "   \
               "both pass here; layernorm/large_mean_n8_f32 catches it at f32, f16 and bf16"
    {"layernorm/large_mean_768_f32", "f32 f16 bf16", LM_F32},
    {"layernorm/large_mean_40000_f32", "f32 f16 bf16", LM_F32},
    {"layernorm/large_mean_40000_n8_f32", "f32 f16 bf16",
     LM_F32 " (and this row's tolerance also covers the unbiased variance of flag small_n)"},
    {"skip_layernorm/large_mean_768_f64", "f64",
     "in f64 the one-pass variance's error (u mean^2 / var ~ 1e-8 relative) stays within the "
     "bound on this row; layernorm/large_mean_n8_f64 and large_mean_40000_f64 catch it at f64"},
#undef LM_F32
};

/* Set result = "acceptable" (and result_notes) for the ACCEPTABLE entries; the result object of a
   forward entry is shared with its backward, so it is copied, and result_notes follows result. */
static void apply_acceptable(json_t *cases)
{
    size_t i;
    json_t *c;
    json_array_foreach(cases, i, c) {
        const char *id = json_string_value(json_object_get(c, "id"));
        for (size_t a = 0; a < sizeof ACCEPTABLE / sizeof ACCEPTABLE[0]; a++) {
            if (strcmp(id, ACCEPTABLE[a][0]))
                continue;
            json_t *res = json_deep_copy(json_object_get(c, "result")), *notes = json_object();
            json_t *dts = golden_flags_json(ACCEPTABLE[a][1]), *d;
            size_t j;
            json_array_foreach(dts, j, d) {
                json_object_set_new(res, json_string_value(d), json_string("acceptable"));
                json_object_set_new(notes, json_string_value(d), json_string(ACCEPTABLE[a][2]));
            }
            json_decref(dts);
            json_t *sha = json_incref(json_object_get(c, "sha256"));
            json_object_del(c, "sha256");
            json_object_set_new(c, "result", res);
            json_object_set_new(c, "result_notes", notes);
            json_object_set_new(c, "sha256", sha);
        }
    }
}

static json_t *words_json(const char *s) { return golden_flags_json(s); }

static json_t *bugs_json(void)
{
    json_t *b = json_object();
    for (size_t i = 0; i < sizeof BUGS / sizeof BUGS[0]; i++) {
        json_t *e = json_object();
        json_object_set_new(e, "ops", words_json(BUGS[i][1]));
        json_object_set_new(e, "bug", json_string(BUGS[i][2]));
        json_object_set_new(e, "effect", json_string(BUGS[i][3]));
        json_object_set_new(e, "flags", words_json(BUGS[i][4]));
        json_t *l = json_array();
        if (BUGS[i][5][0])
            json_array_append_new(l, json_string(BUGS[i][5]));
        json_object_set_new(e, "links", l);
        json_object_set_new(b, BUGS[i][0], e);
    }
    return b;
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
               "  DIR must be new or empty; the tree appears only when complete (exit 2 otherwise).\n"
               "  Format: specs/golden-format.md.  One progress line per case on stderr.\n"
               "\n"
               "usage: resnorm golden verify [--root DIR] [--digest HEX]\n"
               "  Prove DIR/golden is what this resnorm generates: the manifest's structure (safe\n"
               "  paths under golden/), the manifest against the one gen would write (cases, attrs,\n"
               "  inputs, outputs, hashes), every file it names re-hashed (SHA-256, no symbolic link\n"
               "  followed), files it does not name; then one digest of the manifest and every file\n"
               "  (sha256sum of each, sorted by path, hashed); --digest: require it. Exit 0 if all\n"
               "  match, 1 otherwise.  DIR: the repository root (default: '.' if it has\n"
               "  golden/manifest.json, else the directory above the resnorm binary).\n"
               "usage: resnorm golden list [--op OP] [--json] [--root DIR]\n"
               "  The cases; --json: an array of {id, op, attrs, shape, input_dtype, inputs,\n"
               "  expected, flags, result, comment} with paths relative to the repository root.\n"
               "usage: resnorm golden run-check DIR [--dtype D] [--eps-dtype f32|f64|input] [--op OP]\n"
               "                                    [--allow ftz] [--profile runtimes|moments|two-pass]\n"
               "                                    [--stat fail|warn|off] [--json] [--root DIR]\n"
               "  Check another implementation's outputs laid out DIR/<case id>/<output>.npy (any\n"
               "  subset of cases and outputs) as 'resnorm check' does; --dtype: the dtype the\n"
               "  implementation computes in (default: the widest of each case's files; each output\n"
               "  is rounded to the coarser of D and its file's dtype); --eps-dtype: check under\n"
               "  that eps convention (ONNX Runtime: f32 in every graph) instead of the case's\n"
               "  attrs.eps_dtype, the expected values recomputed by the twin; --allow ftz: as for\n"
               "  'resnorm check', flushed subnormals are accepted and counted. Cases absent from\n"
               "  DIR are skipped. Prints case, verdict, worst error in ulps and in units of the\n"
               "  bound, the statistical tier's verdict (column stat: ok or FLAG; specs/\n"
               "  statistical-tier.md), and 'N passed, M failed, K skipped'. Exit 0 all pass, 1 a\n"
               "  mismatch, 2 an input error, 4 no mismatch but a statistical flag (--stat fail,\n"
               "  the default; warn: report only; off: not run).  --profile as for\n"
               "  'resnorm check'.  See specs/cli.md.\n");
}


/* Run every family's generator into `out` (nothing is written in dry mode); the manifest goes to
   out/manifest.json and, if manifest is not NULL, to *manifest (a new reference).  Returns 0, 2
   (a file or directory could not be written) or 3 (internal: a twin failed). */
static int generate(const char *out, json_t **manifest)
{
    golden_io_failed = 0;
    json_t *root = json_object();
    json_object_set_new(root, "schema", json_string("resnorm-golden"));
    json_object_set_new(root, "version", json_integer(2));
    /* The schema lives in specs/ ('make golden' replaces golden/ as a whole). */
    json_object_set_new(root, "json_schema", json_string("specs/golden-manifest.schema.json"));
    json_t *notes = json_object(), *fl = json_object();
    json_object_set_new(notes, "doc", json_string("specs/golden-format.md"));
    /* Each family's flags in registry order; a flag already described is not repeated. */
    for (int f = 0; f < cli_nfamilies; f++)
        for (const char *const(*p)[2] = cli_families[f]->flags; p && (*p)[0]; p++)
            if (!json_object_get(fl, (*p)[0]))
                json_object_set_new(fl, (*p)[0], json_string((*p)[1]));
    json_object_set_new(notes, "flags", fl);
    json_object_set_new(notes, "results", results_json());
    json_object_set_new(notes, "bugs", bugs_json());
    json_object_set_new(root, "notes", notes);
    json_t *cases = json_array();
    json_object_set_new(root, "cases", cases);

    int rc = EXIT_OK;
    golden_ctx G = {out, cases, 0};
    for (int f = 0; f < cli_nfamilies && rc == EXIT_OK; f++)
        if (cli_families[f]->golden && cli_families[f]->golden(&G) != 0)
            rc = EXIT_INTERNAL;
    if (rc == EXIT_OK)
        apply_acceptable(cases);
    if (rc == EXIT_OK && !golden_dry && write_manifest(out, root) != 0) {
        fprintf(stderr, "resnorm golden gen: cannot write %s/manifest.json\n", out);
        rc = EXIT_INTERNAL;
    }
    if (rc == EXIT_INTERNAL && golden_io_failed)
        rc = EXIT_USAGE;
    if (rc == EXIT_OK && !golden_dry)
        fprintf(stderr, "golden: %zu cases (forward and backward) written to %s\n", G.ncases, out);
    if (rc == EXIT_OK && manifest)
        *manifest = json_incref(root);
    json_decref(root);
    return rc;
}

int golden_expected_manifest(json_t **manifest)
{
    golden_dry = 1;
    int rc = generate("(dry run)", manifest);
    golden_dry = 0;
    return rc;
}

/* RESNORM_VERIFY_CACHE=DIR: the expected manifest of this very binary, kept in
   DIR/expected-<SHA-256 of the executable>.json and reused.  Sound because gen reads no input:
   its output is a function of the binary alone (deterministic, bit-reproducible: a rebuilt
   binary has another SHA-256, so it certifies the suite again).  Why: every `golden verify` otherwise certifies the whole
   suite again (the test suites call it ~10 times per build, under the sanitizers too).
   Verifies that start together (Criterion's workers, two test binaries side by side) take turns
   on DIR/expected-<SHA-256>.lock: the first certifies the suite, the others wait and read its file
   instead of each certifying it again (a whole-suite generation is ~40 s of CPU, minutes under the
   sanitizers).  Without the lock (it cannot be created or taken) each computes its own, as before. */
int golden_expected_manifest_cached(json_t **manifest)
{
    const char *dir = getenv("RESNORM_VERIFY_CACHE");
    char hex[65], path[4200], tmp[4300], lock[4300];
    int fd = dir && dir[0] ? open("/proc/self/exe", O_RDONLY) : -1;
    int keyed = fd >= 0 && golden_sha256_fd(fd, hex) == 0;
    if (fd >= 0)
        close(fd);
    if (!keyed)
        return golden_expected_manifest(manifest);
    snprintf(path, sizeof path, "%s/expected-%s.json", dir, hex);
    if ((*manifest = json_load_file(path, 0, NULL)))
        return EXIT_OK;
    if (mkdir(dir, 0777) != 0 && errno != EEXIST)
        return golden_expected_manifest(manifest);
    snprintf(lock, sizeof lock, "%s/expected-%s.lock", dir, hex);
    int lfd = open(lock, O_RDWR | O_CREAT | O_CLOEXEC, 0666);
    if (lfd >= 0 && flock(lfd, LOCK_EX) != 0) {
        close(lfd);
        lfd = -1;
    }
    /* the holder before us may have written it */
    if (lfd >= 0 && (*manifest = json_load_file(path, 0, NULL))) {
        close(lfd);
        return EXIT_OK;
    }
    int rc = golden_expected_manifest(manifest);
    if (rc == EXIT_OK) {
        /* a temporary file renamed into place: a verify without the lock reads a whole file or none */
        snprintf(tmp, sizeof tmp, "%s.%ld.tmp", path, (long)getpid());
        if (json_dump_file(*manifest, tmp, JSON_COMPACT) != 0 || rename(tmp, path) != 0)
            remove(tmp);
    }
    if (lfd >= 0)
        close(lfd); /* releases the lock */
    return rc;
}

static int rm_entry(const char *p, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st, (void)flag, (void)ftw;
    return remove(p) != 0 ? -1 : 0;
}

/* The temporary tree of a gen in progress: removed on failure, also when the memory limit
   (cli/memlimit.c) ends the run. */
static char gen_tmp[4200];

static void remove_gen_tmp(void)
{
    if (gen_tmp[0])
        nftw(gen_tmp, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
    gen_tmp[0] = '\0';
}

/* rmdir dir, then its parents up to and including top (the outermost one this run created);
   nothing if top is empty. */
static void remove_new_parents(const char *dir, const char *top)
{
    char cur[4096];
    snprintf(cur, sizeof cur, "%s", dir);
    while (top[0] && cur[0] && rmdir(cur) == 0 && strcmp(cur, top)) {
        char *cut = strrchr(cur, '/');
        if (!cut || cut == cur)
            break;
        *cut = '\0';
    }
}

/* `gen --out DIR`: DIR must not exist or be an empty directory.  The tree is generated in a
   temporary sibling (DIR's parent/.NAME.tmp.XXXXXX) and renamed to DIR only when complete, so a
   failed run (a full disk, an unwritable directory, a twin that cannot certify) leaves no partial
   tree: the temporary is removed. */
static int gen_into(const char *out)
{
    char parent[4096], tmp[4200];
    if (snprintf(parent, sizeof parent, "%s", out) >= (int)sizeof parent) {
        fprintf(stderr, "resnorm golden gen: --out: path too long\n");
        return EXIT_USAGE;
    }
    size_t len = strlen(parent);
    while (len > 1 && parent[len - 1] == '/')
        parent[--len] = '\0';
    char *slash = strrchr(parent, '/');
    if (slash) {
        *slash = '\0';
        snprintf(tmp, sizeof tmp, "%s/.%s.tmp.XXXXXX", slash == parent ? "/" : parent, slash + 1);
    } else {
        snprintf(tmp, sizeof tmp, ".%s.tmp.XXXXXX", parent);
    }
    struct stat st;
    if (lstat(out, &st) == 0) {
        DIR *d = S_ISDIR(st.st_mode) ? opendir(out) : NULL;
        int empty = d != NULL;
        struct dirent *e;
        while (d && (e = readdir(d)))
            if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
                empty = 0;
        if (d)
            closedir(d);
        if (!empty) {
            fprintf(stderr, "resnorm golden gen: error: %s exists and is not an empty directory "
                    "(gen writes a complete new tree: remove it first)\n", out);
            return EXIT_USAGE;
        }
    }
    /* The outermost missing ancestor of DIR: the parents this run creates, removed on failure. */
    char top_new[4096] = "", up[4096];
    snprintf(up, sizeof up, "%s", slash && slash != parent ? parent : "");
    for (char *cut; up[0] && lstat(up, &st) != 0 && errno == ENOENT;) {
        snprintf(top_new, sizeof top_new, "%s", up);
        if (!(cut = strrchr(up, '/')) || cut == up)
            break;
        *cut = '\0';
    }
    if (slash && slash != parent && golden_mkdirs(parent) != 0) {
        fprintf(stderr, "resnorm golden gen: error: cannot create %s: %s\n", parent,
                strerror(errno));
        remove_new_parents(parent, top_new);
        return EXIT_USAGE;
    }
    if (!mkdtemp(tmp)) {
        fprintf(stderr, "resnorm golden gen: error: cannot create a directory next to %s: %s\n",
                out, strerror(errno));
        remove_new_parents(parent, top_new);
        return EXIT_USAGE;
    }
    chmod(tmp, 0755); /* mkdtemp makes it 0700; an ordinary tree is 0755 */
    snprintf(gen_tmp, sizeof gen_tmp, "%s", tmp);
    rn_memlimit_on_exit(remove_gen_tmp);
    int rc = generate(tmp, NULL);
    if (rc == EXIT_OK && rename(tmp, out) != 0) {
        fprintf(stderr, "resnorm golden gen: error: cannot put the tree in place as %s: %s\n", out,
                strerror(errno));
        rc = EXIT_USAGE;
    }
    rn_memlimit_on_exit(NULL);
    if (rc != EXIT_OK) {
        remove_gen_tmp();
        remove_new_parents(parent, top_new);
        fprintf(stderr, "resnorm golden gen: no tree written\n");
    } else {
        gen_tmp[0] = '\0';
        fprintf(stderr, "golden: tree in place as %s\n", out);
    }
    return rc;
}

int golden_main(int argc, char **argv)
{
    if (argc >= 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
        usage(stdout);
        return EXIT_OK;
    }
    if (argc >= 2 && (!strcmp(argv[1], "verify") || !strcmp(argv[1], "list") ||
                      !strcmp(argv[1], "run-check"))) {
        for (int i = 2; i < argc; i++)
            if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
                usage(stdout);
                return EXIT_OK;
            }
        return golden_tools_main(argc - 1, argv + 1);
    }
    if (argc < 2 || strcmp(argv[1], "gen") != 0) {
        usage(stderr);
        fprintf(stderr, "resnorm golden: expected 'gen', 'verify', 'list' or 'run-check'\n");
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
    return gen_into(out);
}
