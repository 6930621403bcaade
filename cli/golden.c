/* `resnorm golden gen --out DIR`: the golden vectors of golden/, generated, never edited.
 *
 * For every case of the table below: inputs drawn from a deterministic PRNG (xoshiro256** seeded by
 * splitmix64 from the case name; normal-ish samples by Irwin-Hall, no libm transcendental), each value
 * rounded (RN-even) to the case's input dtype; then the MPFR twin (ref/layernorm_mpfr.c) gives the
 * certified outputs, rounded once to each of f64, f32, f16, bf16.  Files are written with npy_write
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
#include "layernorm_mpfr.h"
#include "npy.h"

enum { EXIT_OK = 0, EXIT_USAGE = 2, EXIT_INTERNAL = 3 };

/* ---------------------------------------------------------------- deterministic samples */

typedef struct {
    uint64_t s[4];
} prng;

static uint64_t splitmix64(uint64_t *z)
{
    uint64_t r = (*z += 0x9E3779B97F4A7C15ull);
    r = (r ^ (r >> 30)) * 0xBF58476D1CE4E5B9ull;
    r = (r ^ (r >> 27)) * 0x94D049BB133111EBull;
    return r ^ (r >> 31);
}

static void prng_seed(prng *g, const char *name)
{
    uint64_t h = 0xCBF29CE484222325ull; /* FNV-1a of the case name */
    for (const unsigned char *p = (const unsigned char *)name; *p; p++)
        h = (h ^ *p) * 0x100000001B3ull;
    for (int i = 0; i < 4; i++)
        g->s[i] = splitmix64(&h);
}

static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

static uint64_t xoshiro(prng *g) /* xoshiro256** */
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
static double uniform(prng *g) { return (double)(xoshiro(g) >> 11) * 0x1p-53; }

/* Irwin-Hall: sum of 12 uniforms minus 6: mean 0, variance 1, support [-6, 6].  Plain IEEE double
   additions in a fixed order: the same bits on every conforming platform. */
static double randn(prng *g)
{
    double s = 0.0;
    for (int i = 0; i < 12; i++)
        s += uniform(g);
    return s - 6.0;
}

/* ---------------------------------------------------------------- the cases */

typedef enum {
    K_RANDN,       /* x = shift + scale randn; gamma = gshift + gscale randn; beta = bscale randn */
    K_CONST_ROWS,  /* row r of x is the constant cval[r % 4] */
    K_NONFINITE_X, /* rows with NaN / +Inf / -Inf / both / none */
    K_NONFINITE_P, /* finite x (last row constant); gamma, beta with Inf and NaN */
    K_NONFINITE_DY /* finite x, gamma, beta; dy with an Inf and a NaN */
} kind;

typedef struct {
    const char *name;    /* directory name and id suffix */
    const char *comment;
    const char *flags;   /* space-separated */
    rn_dtype in;
    int ndim;
    size_t shape[4];
    int axis;            /* ONNX axis as written in the manifest (may be negative) */
    const char *eps;
    kind k;
    double scale, shift, gscale, gshift, bscale;
} gcase;

static const double cval[4] = {1.0, 0.1, -3.5, 0.0};

#define RANDN_STD 1.0, 0.0, 0.1, 1.0, 0.1

/* clang-format off */
static const gcase CASES[] = {
#define ONNX_AXIS(nm, ax, dt, cmt) \
    {nm, cmt, "axis", dt, 4, {2, 3, 4, 5}, ax, "1e-5", K_RANDN, RANDN_STD}
    ONNX_AXIS("onnx_2345_axis0_f32", 0, RN_F32, "ONNX shape (2,3,4,5), axis 0: one row of 120"),
    ONNX_AXIS("onnx_2345_axis0_f64", 0, RN_F64, "ONNX shape (2,3,4,5), axis 0: one row of 120"),
    ONNX_AXIS("onnx_2345_axis1_f32", 1, RN_F32, "ONNX shape (2,3,4,5), axis 1: 2 rows of 60"),
    ONNX_AXIS("onnx_2345_axis1_f64", 1, RN_F64, "ONNX shape (2,3,4,5), axis 1: 2 rows of 60"),
    ONNX_AXIS("onnx_2345_axis2_f32", 2, RN_F32, "ONNX shape (2,3,4,5), axis 2: 6 rows of 20"),
    ONNX_AXIS("onnx_2345_axis2_f64", 2, RN_F64, "ONNX shape (2,3,4,5), axis 2: 6 rows of 20"),
    ONNX_AXIS("onnx_2345_axis3_f32", 3, RN_F32, "ONNX shape (2,3,4,5), axis 3: 24 rows of 5"),
    ONNX_AXIS("onnx_2345_axis3_f64", 3, RN_F64, "ONNX shape (2,3,4,5), axis 3: 24 rows of 5"),
    ONNX_AXIS("onnx_2345_axism1_f32", -1, RN_F32, "ONNX shape (2,3,4,5), axis -1 (= 3): 24 rows of 5"),
    ONNX_AXIS("onnx_2345_axism1_f16", -1, RN_F16, "ONNX shape (2,3,4,5), axis -1, f16 inputs"),
    ONNX_AXIS("onnx_2345_axism1_bf16", -1, RN_BF16, "ONNX shape (2,3,4,5), axis -1, bf16 inputs"),
#undef ONNX_AXIS
    {"onnx_34_eps0p1_f32", "ONNX shape (3,4), eps 0.1 (comparable to the variance)", "eps_large small_n",
     RN_F32, 2, {3, 4}, -1, "0.1", K_RANDN, 0.5, 0.0, 0.1, 1.0, 0.1},
    {"onnx_34_eps0p1_f64", "ONNX shape (3,4), eps 0.1 (comparable to the variance)", "eps_large small_n",
     RN_F64, 2, {3, 4}, -1, "0.1", K_RANDN, 0.5, 0.0, 0.1, 1.0, 0.1},
    {"onnx_235_eps0p1_f32", "ONNX shape (2,3,5), eps 0.1", "eps_large small_n",
     RN_F32, 3, {2, 3, 5}, -1, "0.1", K_RANDN, 0.5, 0.0, 0.1, 1.0, 0.1},
    {"onnx_235_eps0p1_f64", "ONNX shape (2,3,5), eps 0.1", "eps_large small_n",
     RN_F64, 3, {2, 3, 5}, -1, "0.1", K_RANDN, 0.5, 0.0, 0.1, 1.0, 0.1},
    {"small_n2_f32", "rows of 2: the unbiased variance is twice the biased one", "small_n",
     RN_F32, 2, {4, 2}, -1, "1e-5", K_RANDN, RANDN_STD},
    {"small_n2_f64", "rows of 2: the unbiased variance is twice the biased one", "small_n",
     RN_F64, 2, {4, 2}, -1, "1e-5", K_RANDN, RANDN_STD},
    {"gpt2_row_f32", "GPT-2 width: 4 rows of 768, randn x, gamma ~ 1 + 0.1 randn, beta ~ 0.1 randn", "gpt2",
     RN_F32, 2, {4, 768}, -1, "1e-5", K_RANDN, RANDN_STD},
    {"gpt2_row_f64", "GPT-2 width: 4 rows of 768, randn x", "gpt2",
     RN_F64, 2, {4, 768}, -1, "1e-5", K_RANDN, RANDN_STD},
    {"gpt2_row_f16", "GPT-2 width: 4 rows of 768, f16 inputs (eps 1e-5 rounds to an f16 subnormal)",
     "gpt2 half_input", RN_F16, 2, {4, 768}, -1, "1e-5", K_RANDN, RANDN_STD},
    {"gpt2_row_bf16", "GPT-2 width: 4 rows of 768, bf16 inputs", "gpt2 half_input",
     RN_BF16, 2, {4, 768}, -1, "1e-5", K_RANDN, RANDN_STD},
    {"large_mean_768_f32", "x = 100 + 0.01 randn, n = 768: |mean| / std = 1e4", "large_mean",
     RN_F32, 2, {2, 768}, -1, "1e-5", K_RANDN, 0.01, 100.0, 0.1, 1.0, 0.1},
    {"large_mean_768_f64", "x = 100 + 0.01 randn, n = 768", "large_mean",
     RN_F64, 2, {2, 768}, -1, "1e-5", K_RANDN, 0.01, 100.0, 0.1, 1.0, 0.1},
    {"large_mean_n8_f32", "x = 100 + 0.01 randn, n = 8", "large_mean small_n",
     RN_F32, 2, {4, 8}, -1, "1e-5", K_RANDN, 0.01, 100.0, 0.1, 1.0, 0.1},
    {"large_mean_n8_f64", "x = 100 + 0.01 randn, n = 8", "large_mean small_n",
     RN_F64, 2, {4, 8}, -1, "1e-5", K_RANDN, 0.01, 100.0, 0.1, 1.0, 0.1},
    {"large_mean_40000_f32", "x = 40000 + 0.01 randn, n = 768 (f32 spacing at 40000 is 2^-8)",
     "large_mean", RN_F32, 2, {2, 768}, -1, "1e-5", K_RANDN, 0.01, 40000.0, 0.1, 1.0, 0.1},
    {"large_mean_40000_f64", "x = 40000 + 0.01 randn, n = 768", "large_mean",
     RN_F64, 2, {2, 768}, -1, "1e-5", K_RANDN, 0.01, 40000.0, 0.1, 1.0, 0.1},
    {"large_mean_40000_n8_f32", "x = 40000 + 0.01 randn, n = 8", "large_mean small_n",
     RN_F32, 2, {4, 8}, -1, "1e-5", K_RANDN, 0.01, 40000.0, 0.1, 1.0, 0.1},
    {"zero_var_rows_f32", "constant rows 1.0, 0.1, -3.5, 0.0 (n = 16): var = 0, y == beta exactly",
     "zero_variance", RN_F32, 2, {4, 16}, -1, "1e-5", K_CONST_ROWS, RANDN_STD},
    {"zero_var_rows_f64", "constant rows 1.0, 0.1, -3.5, 0.0 (n = 16)", "zero_variance",
     RN_F64, 2, {4, 16}, -1, "1e-5", K_CONST_ROWS, RANDN_STD},
    {"zero_var_rows_f16", "constant rows 1.0, 0.1, -3.5, 0.0 (n = 16), f16 inputs",
     "zero_variance half_input", RN_F16, 2, {4, 16}, -1, "1e-5", K_CONST_ROWS, RANDN_STD},
    {"zero_var_rows_bf16", "constant rows 1.0, 0.1, -3.5, 0.0 (n = 16), bf16 inputs",
     "zero_variance half_input", RN_BF16, 2, {4, 16}, -1, "1e-5", K_CONST_ROWS, RANDN_STD},
    {"zero_var_768_f32", "constant rows 1.0 and 0.1 of width 768 (0.1 is inexact: a summed mean is "
     "not exactly 0.1)", "zero_variance", RN_F32, 2, {2, 768}, -1, "1e-5", K_CONST_ROWS, RANDN_STD},
    {"zero_var_768_f64", "constant rows 1.0 and 0.1 of width 768", "zero_variance",
     RN_F64, 2, {2, 768}, -1, "1e-5", K_CONST_ROWS, RANDN_STD},
    {"n1_f32", "n = 1: x - mean = 0, y == beta, rstd = 1/sqrt(eps)", "n1",
     RN_F32, 2, {5, 1}, -1, "1e-5", K_RANDN, RANDN_STD},
    {"n1_f64", "n = 1: x - mean = 0, y == beta, rstd = 1/sqrt(eps)", "n1",
     RN_F64, 2, {5, 1}, -1, "1e-5", K_RANDN, RANDN_STD},
    {"tiny_scale_f32", "x = 1e-30 randn, gamma = 1e-12 randn, beta = 0: f32-subnormal y",
     "tiny_scale subnormal", RN_F32, 2, {3, 64}, -1, "1e-5", K_RANDN, 1e-30, 0.0, 1e-12, 0.0, 0.0},
    {"tiny_subnormal_x_f32", "x = 1e-40 randn (f32 subnormals), beta = 0: subnormal mean and y",
     "tiny_scale subnormal", RN_F32, 2, {3, 64}, -1, "1e-5", K_RANDN, 1e-40, 0.0, 0.1, 1.0, 0.0},
    {"tiny_scale_f64", "x = 1e-300 randn, gamma = 1e-20 randn, beta = 0: f64-subnormal y",
     "tiny_scale subnormal", RN_F64, 2, {3, 64}, -1, "1e-5", K_RANDN, 1e-300, 0.0, 1e-20, 0.0, 0.0},
    {"huge_scale_f32", "x = 1e30 randn: (x - mean)^2 overflows f32, the exact result is ordinary",
     "huge_scale", RN_F32, 2, {3, 64}, -1, "1e-5", K_RANDN, 1e30, 0.0, 0.1, 1.0, 0.1},
    {"huge_scale_f64", "x = 1e30 randn in f64", "huge_scale",
     RN_F64, 2, {3, 64}, -1, "1e-5", K_RANDN, 1e30, 0.0, 0.1, 1.0, 0.1},
    {"huge_scale_1e18_f32", "x = 1e18 randn: squares near but below the f32 range", "huge_scale",
     RN_F32, 2, {3, 64}, -1, "1e-5", K_RANDN, 1e18, 0.0, 0.1, 1.0, 0.1},
    {"nonfinite_x_f32", "rows of x with NaN, +Inf, -Inf, +Inf and -Inf, then two finite rows",
     "nonfinite", RN_F32, 2, {6, 8}, -1, "1e-5", K_NONFINITE_X, RANDN_STD},
    {"nonfinite_x_f64", "rows of x with NaN, +Inf, -Inf, +Inf and -Inf, then two finite rows",
     "nonfinite", RN_F64, 2, {6, 8}, -1, "1e-5", K_NONFINITE_X, RANDN_STD},
    {"nonfinite_x_f16", "rows of x with NaN, +Inf, -Inf, both, then finite rows; f16 inputs",
     "nonfinite half_input", RN_F16, 2, {6, 8}, -1, "1e-5", K_NONFINITE_X, RANDN_STD},
    {"nonfinite_params_f32", "gamma[1] = +Inf, beta[1] = -Inf, beta[2] = +Inf, gamma[4] = NaN, "
     "beta[6] = NaN; last row constant (0 * Inf)", "nonfinite",
     RN_F32, 2, {4, 8}, -1, "1e-5", K_NONFINITE_P, RANDN_STD},
    {"nonfinite_params_f64", "gamma/beta with Inf and NaN (as nonfinite_params_f32)", "nonfinite",
     RN_F64, 2, {4, 8}, -1, "1e-5", K_NONFINITE_P, RANDN_STD},
    {"nonfinite_dy_f32", "dy[1][3] = +Inf, dy[2][5] = NaN, dy[3][3] = -Inf (backward)", "nonfinite",
     RN_F32, 2, {4, 8}, -1, "1e-5", K_NONFINITE_DY, RANDN_STD},
};
/* clang-format on */
#define NCASES (sizeof CASES / sizeof CASES[0])

static const struct {
    const char *flag, *text;
} FLAGS[] = {
    {"axis", "normalization over several trailing dimensions (ONNX axis): catches implementations "
             "that normalize the last dimension only or mishandle negative axes"},
    {"eps_large", "eps (0.1) comparable to the variance: catches eps added outside the square root, "
                  "added to the standard deviation, or ignored"},
    {"small_n", "few elements per row: catches the unbiased (n-1) variance"},
    {"gpt2", "a realistic transformer width (n = 768)"},
    {"half_input", "f16 or bf16 inputs (eps is rounded to the input dtype)"},
    {"large_mean", "|mean| much larger than the standard deviation: catches the one-pass variance "
                   "E[x^2] - E[x]^2 (catastrophic cancellation) and an inaccurate mean"},
    {"zero_variance", "constant rows: var = 0 and y == beta exactly; catches var + eps mishandled "
                      "and division by the standard deviation without eps"},
    {"n1", "one element per row: x - mean = 0, rstd = 1/sqrt(eps)"},
    {"tiny_scale", "values near the bottom of the range: catches squares that underflow and "
                   "flush-to-zero"},
    {"subnormal", "expected outputs in the subnormal range of some output dtype"},
    {"huge_scale", "large magnitudes (|x| ~ 1e18 to 1e30): in f32 the squares (x - mean)^2 overflow "
                   "(1e30) or nearly (1e18) while the exact result is ordinary; catches unscaled "
                   "variance computations"},
    {"nonfinite", "NaN / Inf inputs, with the propagation defined in specs/golden-format.md"},
};

/* ---------------------------------------------------------------- input generation */

static void gen_inputs(const gcase *c, size_t rows, size_t n, double *x, double *gamma,
                       double *beta, double *dy)
{
    prng g;
    prng_seed(&g, c->name);
    for (size_t i = 0; i < rows * n; i++)
        x[i] = c->shift + c->scale * randn(&g);
    for (size_t j = 0; j < n; j++)
        gamma[j] = c->gshift + c->gscale * randn(&g);
    for (size_t j = 0; j < n; j++)
        beta[j] = c->bscale * randn(&g);
    for (size_t i = 0; i < rows * n; i++)
        dy[i] = randn(&g);
    switch (c->k) {
    case K_RANDN:
        break;
    case K_CONST_ROWS:
        for (size_t r = 0; r < rows; r++)
            for (size_t j = 0; j < n; j++)
                x[r * n + j] = cval[r % 4];
        break;
    case K_NONFINITE_X: /* rows: NaN, +Inf, -Inf, +Inf & -Inf, finite, finite */
        x[0 * n + 3] = NAN;
        x[1 * n + 0] = INFINITY;
        x[2 * n + n - 1] = -INFINITY;
        x[3 * n + 1] = INFINITY;
        x[3 * n + 2] = -INFINITY;
        break;
    case K_NONFINITE_P:
        for (size_t j = 0; j < n; j++)
            x[(rows - 1) * n + j] = 0.5; /* constant last row: x - mean = 0, 0 * Inf */
        gamma[1] = INFINITY;
        beta[1] = -INFINITY;
        beta[2] = INFINITY;
        gamma[4] = NAN;
        beta[6] = NAN;
        break;
    case K_NONFINITE_DY:
        dy[1 * n + 3] = INFINITY;
        dy[2 * n + 5] = NAN;
        dy[3 * n + 3] = -INFINITY;
        break;
    }
    for (size_t i = 0; i < rows * n; i++) {
        x[i] = rn_round(x[i], c->in);
        dy[i] = rn_round(dy[i], c->in);
    }
    for (size_t j = 0; j < n; j++) {
        gamma[j] = rn_round(gamma[j], c->in);
        beta[j] = rn_round(beta[j], c->in);
    }
}

/* ---------------------------------------------------------------- files */

static int mkdirs(const char *path)
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

typedef struct {
    const char *out;   /* output directory (becomes golden/) */
    const char *dir;   /* "layernorm/<case>" */
    json_t *sha_fwd, *sha_bwd;
} ctx;

/* Write one array as <out>/<dir>/<sub><name>.npy; record it in `paths` (name -> manifest path) and
   its sha256 in the given sha objects. */
static int put(ctx *C, const char *sub, const char *name, rn_dtype dt, int ndim,
               const size_t *shape, const double *v, json_t *paths, json_t *sha1, json_t *sha2)
{
    char rel[1024], path[4096], err[512], hex[65];
    snprintf(rel, sizeof rel, "golden/%s/%s%s.npy", C->dir, sub, name);
    snprintf(path, sizeof path, "%s/%s/%s%s.npy", C->out, C->dir, sub, name);
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

static json_t *shape_json(int ndim, const size_t *shape)
{
    json_t *a = json_array();
    for (int i = 0; i < ndim; i++)
        json_array_append_new(a, json_integer((json_int_t)shape[i]));
    return a;
}

static json_t *flags_json(const char *flags)
{
    json_t *a = json_array();
    char buf[256];
    snprintf(buf, sizeof buf, "%s", flags);
    for (char *save = NULL, *t = strtok_r(buf, " ", &save); t; t = strtok_r(NULL, " ", &save))
        json_array_append_new(a, json_string(t));
    return a;
}

/* One case: files, and its two manifest entries appended to `cases`. */
static int gen_case(const char *out, const gcase *c, json_t *cases)
{
    int nd = c->ndim, axis = c->axis < 0 ? c->axis + nd : c->axis;
    size_t rows = 1, n = 1;
    for (int i = 0; i < nd; i++) {
        if (i < axis)
            rows *= c->shape[i];
        else
            n *= c->shape[i];
    }
    size_t pshape[4], sshape[4];
    int pnd = nd - axis;
    for (int i = 0; i < nd; i++) {
        if (i >= axis)
            pshape[i - axis] = c->shape[i];
        sshape[i] = i < axis ? c->shape[i] : 1;
    }
    double eps;
    if (rn_parse_eps(c->eps, c->in, &eps) != 0) {
        fprintf(stderr, "resnorm golden: %s: bad eps '%s'\n", c->name, c->eps);
        return -1;
    }

    size_t N = rows * n;
    double *x = malloc(N * sizeof *x), *dy = malloc(N * sizeof *dy), *gamma = malloc(n * sizeof *gamma),
           *beta = malloc(n * sizeof *beta), *y = malloc(N * sizeof *y), *dx = malloc(N * sizeof *dx),
           *mean = malloc(rows * sizeof *mean), *rstd = malloc(rows * sizeof *rstd),
           *dg = malloc(n * sizeof *dg), *db = malloc(n * sizeof *db);
    int rc = -1;
    json_t *fwd = NULL, *bwd = NULL;
    if (!x || !dy || !gamma || !beta || !y || !dx || !mean || !rstd || !dg || !db) {
        fprintf(stderr, "resnorm golden: out of memory\n");
        goto out;
    }
    gen_inputs(c, rows, n, x, gamma, beta, dy);

    ctx C = {out, NULL, json_object(), json_object()};
    char dir[512], path[4096];
    snprintf(dir, sizeof dir, "layernorm/%s", c->name);
    C.dir = dir;
    snprintf(path, sizeof path, "%s/%s", out, dir);
    if (mkdirs(path) != 0) {
        fprintf(stderr, "resnorm golden: cannot create %s: %s\n", path, strerror(errno));
        goto out;
    }

    json_t *in_f = json_object(), *in_b = json_object();
    json_t *ex_f = json_object(), *ex_b = json_object(), *res = json_object();
    fwd = json_object();
    bwd = json_object();
    if (put(&C, "", "x", c->in, nd, c->shape, x, in_f, C.sha_fwd, C.sha_bwd) ||
        put(&C, "", "gamma", c->in, pnd, pshape, gamma, in_f, C.sha_fwd, C.sha_bwd) ||
        put(&C, "", "beta", c->in, pnd, pshape, beta, in_f, C.sha_fwd, NULL) ||
        put(&C, "", "dy", c->in, nd, c->shape, dy, NULL, C.sha_bwd, NULL))
        goto out_json;
    json_object_set(in_b, "x", json_object_get(in_f, "x"));
    json_object_set(in_b, "gamma", json_object_get(in_f, "gamma"));
    {
        char rel[1024];
        snprintf(rel, sizeof rel, "golden/%s/dy.npy", dir);
        json_object_set_new(in_b, "dy", json_string(rel));
    }

    for (int d = 0; d < RN_NDTYPES; d++) {
        rn_dtype dt = (rn_dtype)d;
        char sub[16];
        snprintf(sub, sizeof sub, "%s/", rn_dtype_name(dt));
        snprintf(path, sizeof path, "%s/%s/%s", out, dir, rn_dtype_name(dt));
        if (mkdirs(path) != 0) {
            fprintf(stderr, "resnorm golden: cannot create %s\n", path);
            goto out_json;
        }
        int t1 = layernorm_forward_mpfr(y, mean, rstd, x, gamma, beta, rows, n, eps, dt);
        int t2 = layernorm_backward_mpfr(dx, dg, db, dy, x, gamma, rows, n, eps, dt);
        if (t1 || t2) {
            fprintf(stderr, "resnorm golden: %s/%s: the twin %s\n", c->name, rn_dtype_name(dt),
                    (t1 == RN_TWIN_NOMEM || t2 == RN_TWIN_NOMEM) ? "ran out of memory"
                                                                : "could not certify an output");
            goto out_json;
        }
        json_t *pf = json_object(), *pb = json_object();
        json_object_set_new(ex_f, rn_dtype_name(dt), pf);
        json_object_set_new(ex_b, rn_dtype_name(dt), pb);
        json_object_set_new(res, rn_dtype_name(dt), json_string("valid"));
        if (put(&C, sub, "y", dt, nd, c->shape, y, pf, C.sha_fwd, NULL) ||
            put(&C, sub, "mean", dt, nd, sshape, mean, pf, C.sha_fwd, NULL) ||
            put(&C, sub, "rstd", dt, nd, sshape, rstd, pf, C.sha_fwd, NULL) ||
            put(&C, sub, "dx", dt, nd, c->shape, dx, pb, C.sha_bwd, NULL) ||
            put(&C, sub, "dgamma", dt, pnd, pshape, dg, pb, C.sha_bwd, NULL) ||
            put(&C, sub, "dbeta", dt, pnd, pshape, db, pb, C.sha_bwd, NULL))
            goto out_json;
    }

    for (int b = 0; b < 2; b++) {
        json_t *e = b ? bwd : fwd;
        char id[512];
        snprintf(id, sizeof id, "%s/%s", b ? "layernorm_backward" : "layernorm", c->name);
        json_object_set_new(e, "id", json_string(id));
        json_object_set_new(e, "op", json_string(b ? "layernorm_backward" : "layernorm"));
        json_object_set_new(e, "comment", json_string(c->comment));
        json_object_set_new(e, "flags", flags_json(c->flags));
        json_t *attrs = json_object();
        json_object_set_new(attrs, "eps", json_string(c->eps));
        json_object_set_new(attrs, "axis", json_integer(c->axis));
        json_object_set_new(e, "attrs", attrs);
        json_object_set_new(e, "shape", shape_json(nd, c->shape));
        json_object_set_new(e, "input_dtype", json_string(rn_dtype_name(c->in)));
        json_object_set(e, "inputs", b ? in_b : in_f);
        json_object_set(e, "expected", b ? ex_b : ex_f);
        json_object_set(e, "result", res);
        json_object_set(e, "sha256", b ? C.sha_bwd : C.sha_fwd);
    }
    json_array_append(cases, fwd);
    json_array_append(cases, bwd);
    fprintf(stderr, "golden: layernorm/%s  rows %zu x n %zu, input %s: ok\n", c->name, rows, n,
            rn_dtype_name(c->in));
    rc = 0;
out_json:
    json_decref(in_f), json_decref(in_b), json_decref(ex_f), json_decref(ex_b), json_decref(res);
    json_decref(C.sha_fwd), json_decref(C.sha_bwd);
out:
    json_decref(fwd), json_decref(bwd);
    free(x), free(dy), free(gamma), free(beta), free(y), free(dx), free(mean), free(rstd), free(dg),
        free(db);
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
        return -1;
    }
    return 0;
}

static void usage(FILE *f)
{
    fprintf(f, "usage: resnorm golden gen --out DIR\n"
               "  Generate the golden vectors (manifest.json and layernorm/<case>/...) into DIR.\n"
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
    if (mkdirs(out) != 0) {
        fprintf(stderr, "resnorm golden gen: cannot create %s: %s\n", out, strerror(errno));
        return EXIT_INTERNAL;
    }

    json_t *root = json_object();
    json_object_set_new(root, "schema", json_string("resnorm-golden"));
    json_object_set_new(root, "version", json_integer(1));
    json_t *notes = json_object(), *fl = json_object();
    json_object_set_new(notes, "doc", json_string("specs/golden-format.md"));
    for (size_t i = 0; i < sizeof FLAGS / sizeof FLAGS[0]; i++)
        json_object_set_new(fl, FLAGS[i].flag, json_string(FLAGS[i].text));
    json_object_set_new(notes, "flags", fl);
    json_object_set_new(root, "notes", notes);
    json_t *cases = json_array();
    json_object_set_new(root, "cases", cases);

    int rc = EXIT_OK;
    for (size_t i = 0; i < NCASES && rc == EXIT_OK; i++)
        if (gen_case(out, &CASES[i], cases) != 0)
            rc = EXIT_INTERNAL;
    if (rc == EXIT_OK && write_manifest(out, root) != 0) {
        fprintf(stderr, "resnorm golden gen: cannot write %s/manifest.json\n", out);
        rc = EXIT_INTERNAL;
    }
    json_decref(root);
    if (rc == EXIT_OK)
        fprintf(stderr, "golden: %zu cases (forward and backward) written to %s\n", NCASES, out);
    return rc;
}
