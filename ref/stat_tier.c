/* The statistical tier: see ref/stat_tier.h and specs/statistical-tier.md (sections cited [§n]).
 *
 * Every proxy below is a sub-Gaussian proxy (Azuma-Hoeffding: a sum of mean-independent roundings
 * delta_k, |delta_k| <= u, with coefficients a_k has proxy u*sqrt(sum a_k^2)), multiplied by
 * SAFETY to cover the associations and algorithms of the admitted class [§2] that make a few more
 * roundings than the two-pass kernel.  Every floor is a bound on the systematic part [§3]. */
#include "stat_tier.h"

#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "norm_fast.h" /* rn_threads() */

#define SAFETY 2.0

/* fmax / fmin without the libm call: GCC keeps the call at -O2 (for NaN's sake), and a call in a
   loop makes the loop's long double accumulators spill to memory at every element.  The same
   results as fmax / fmin, NaN operands included; of two zeros of opposite signs the second is
   returned, which C allows fmax / fmin to do too (every use below is insensitive to the sign of a
   zero result: it is squared, compared, or added to a non-zero). */
static inline double max_d(double a, double b) { return a > b || b != b ? a : b; }
static inline double min_d(double a, double b) { return a < b || b != b ? a : b; }

/* ---------------------------------------------------------------- the three statistics [§4] */

typedef struct {
    double S, W, Wphi, W2P2, Wref; /* pooled: sums of w*s, w, w*phi, w^2*pi^2, w*ref */
    double zrow, energy;
    size_t worst, groups;
} acc_t;

/* One group: t = <z, e>, Q = <z, z>, proxy and floor of t; ref: the scale slope_u is given in. */
static void acc_group(acc_t *a, double t, double Q, double proxy, double floor, double ref,
                      size_t index)
{
    if (!(Q > 0) || !isfinite(t) || !isfinite(Q) || !(proxy > 0) || !isfinite(proxy) ||
        !isfinite(floor))
        return;
    double s = t / Q, pi = proxy / Q, phi = floor / Q;
    double w = 1 / (pi * pi + phi * phi);
    if (!isfinite(w) || !(w > 0))
        return;
    a->S += w * s;
    a->W += w;
    a->Wphi += w * phi;
    a->W2P2 += w * w * pi * pi;
    a->Wref += w * ref;
    double z = fmax(0, fabs(s) - phi) / pi;
    if (a->groups == 0 || z > a->zrow) {
        a->zrow = z;
        a->worst = index;
    }
    a->energy += z * z;
    a->groups++;
}

/* The threshold T of the energy statistic for G groups: (T/G)^(G/2) exp(-(T-G)/2) = alpha, the
   Chernoff bound of a sum of G squared independent sub-Gaussian(1) variables [§4.3]. */
static double energy_limit(size_t G, double alpha)
{
    double g = (double)G, L = log(1 / alpha);
    double lo = g, hi = g + 2 * L + 2 * sqrt(g * L) + 1;
    while ((hi - g) / 2 - g / 2 * log(hi / g) < L)
        hi *= 2;
    for (int it = 0; it < 200; it++) {
        double mid = (lo + hi) / 2;
        if ((mid - g) / 2 - g / 2 * log(mid / g) < L)
            lo = mid;
        else
            hi = mid;
    }
    return hi;
}

static void acc_finish(const acc_t *a, const char *direction, double u, st_test *t)
{
    memset(t, 0, sizeof *t);
    t->direction = direction;
    t->groups = a->groups;
    if (!a->groups)
        return;
    t->slope = a->S / a->W;
    double ref = a->Wref / a->W;
    t->slope_u = ref > 0 ? t->slope / (u * ref) : 0;
    t->floor = a->Wphi / a->W;
    t->floor_u = ref > 0 ? t->floor / (u * ref) : 0;
    t->z_pooled = fmax(0, fabs(a->S) - a->Wphi) / sqrt(a->W2P2);
    t->lambda_pooled = sqrt(2 * log(2 / ST_ALPHA));
    t->z_row = a->zrow;
    t->worst_group = a->worst;
    t->lambda_row = sqrt(2 * log(2 * (double)a->groups / ST_ALPHA));
    t->energy = a->energy;
    t->energy_limit = energy_limit(a->groups, ST_ALPHA);
    t->flag = t->z_pooled > t->lambda_pooled || t->z_row > t->lambda_row ||
              t->energy > t->energy_limit;
}

/* b (the groups after a's, in order) added to a as acc_group would have met them one by one: the
   sums in two parts (the sums' association differs from one pass; the statistics only scale
   proxies), the largest z-score and the first group that has it exactly. */
static void acc_merge(acc_t *a, const acc_t *b)
{
    if (!b->groups)
        return;
    a->S += b->S, a->W += b->W, a->Wphi += b->Wphi, a->W2P2 += b->W2P2, a->Wref += b->Wref;
    if (a->groups == 0 || b->zrow > a->zrow) {
        a->zrow = b->zrow;
        a->worst = b->worst;
    }
    a->energy += b->energy;
    a->groups += b->groups;
}

static double want_noise(const st_problem *p, double w);

/* Elements [0, count) of an output computed element by element (st_elementwise's groups, [§3.4])
   added to *a in order: element j is group base + j, `ops` roundings of at most u*mag[j] each. */
static void elem_acc(const st_problem *p, const double *got, const double *want,
                     const double *mag, double ops, size_t count, size_t base, acc_t *a)
{
    for (size_t j = 0; j < count; j++) {
        if (!isfinite(got[j]) || !isfinite(want[j]))
            continue;
        double w = want[j], mg = mag ? mag[j] : fabs(w);
        double b = SAFETY * ops * p->u * mg + want_noise(p, w) + 2 * p->eta;
        acc_group(a, w * (got[j] - w), w * w, fabs(w) * b, 0, 1, base + j);
    }
}

/* ---------------------------------------------------------------- rows */

static double gamma_k(double k, double u) { return k * u < 0.5 ? k * u / (1 - k * u) : INFINITY; }

/* The rows of the whole problem (a block of rows gives them in rows_total): the Bonferroni
   correction is over all of them, whichever block a row comes in. */
static size_t total_rows(const st_problem *p) { return p->rows_total ? p->rows_total : p->rows; }

/* The exact value's rounding to f64 (want) and the output rounding: per-element noise [§3.4]. */
static double want_noise(const st_problem *p, double w)
{
    return p->u_out * fabs(w) + p->eta_out + 0x1p-53 * fabs(w) + 0x1p-1074;
}

/* Rows whose magnitudes leave the range where the model holds are not tested [§5]: non-finite
   values, sums of squares near overflow, variances near underflow. */
static int row_in_range(const st_problem *p, const double *x, double scale2)
{
    double huge = p->u > 1e-10 ? 0x1p50 : 0x1p450, tiny = p->u > 1e-10 ? 0x1p-80 : 0x1p-900;
    for (size_t i = 0; i < p->n; i++)
        if (!isfinite(x[i]) || fabs(x[i]) > huge)
            return 0;
    return scale2 >= tiny && isfinite(scale2);
}

/* A hash of a row's bits: identical rows give identical errors, so only the first is pooled.  One
   word a step, h <- m((h ^ w) K) with m(z) = z ^ (z >> 29) and K odd: each step is a bijection of
   h for a given w and of w for a given h, so two rows that differ in one element never collide
   (the element's lane differs, and the folding of the lanes is such a step too); the final
   splitmix64 mix spreads the bits over the table index (the low bits). */
static uint64_t row_hash(const double *a, const double *b, size_t n)
{
    /* four lanes (element i of each array into lane i mod 4: one multiply chain is
       latency-bound), then lanes 1..3 folded into lane 0 by the same step, a bijection of the
       running value for each lane's value and of each lane's value for the running one */
    enum { L = 4 };
    uint64_t h[L] = {1469598103934665603ull, 0x243f6a8885a308d3ull, 0x13198a2e03707344ull,
                     0xa4093822299f31d0ull};
    for (int k = 0; k < 2; k++) {
        const double *v = k ? b : a;
        if (!v)
            continue;
        for (size_t i = 0; i < n; i++) {
            uint64_t bits, *hl = &h[i % L];
            memcpy(&bits, &v[i], sizeof bits);
            *hl = (*hl ^ bits) * 0x9e3779b97f4a7c15ull;
            *hl ^= *hl >> 29;
        }
    }
    uint64_t r = h[0];
    for (int l = 1; l < L; l++) {
        r = (r ^ h[l]) * 0x9e3779b97f4a7c15ull;
        r ^= r >> 29;
    }
    r = (r ^ (r >> 30)) * 0xbf58476d1ce4e5b9ull;
    r = (r ^ (r >> 27)) * 0x94d049bb133111ebull;
    return r ^ (r >> 31);
}

typedef struct {
    uint64_t *slot;
    size_t cap;
} seen_t;

static int seen_init(seen_t *s, size_t rows)
{
    s->cap = 16;
    while (s->cap < 2 * rows)
        s->cap *= 2;
    s->slot = calloc(s->cap, sizeof *s->slot);
    return s->slot ? 0 : -1;
}

/* 1 if h was seen before (then the row is a duplicate); records it. 0 is reserved as empty. */
static int seen_check(seen_t *s, uint64_t h)
{
    if (!h)
        h = 1;
    for (size_t i = h & (s->cap - 1);; i = (i + 1) & (s->cap - 1)) {
        if (s->slot[i] == h)
            return 1;
        if (!s->slot[i]) {
            s->slot[i] = h;
            return 0;
        }
    }
}

/* The statistics of one row of LayerNorm or RMSNorm, exact enough for scales (long double), and
   the model's proxies and floors of the row-shared errors [§3.1, §3.2]. */
typedef struct rowstat_s {
    int ok;
    double m, v, r, A, M;
    double sig_m, phi_m;     /* mean error e: proxy, floor (absolute) */
    double sig_rho, phi_rho; /* rstd relative error rho: proxy, floor */
} rowstat;

/* LSD radix passes, 11 bits a digit, over the order-preserving unsigned keys k[0..n) whose digit
   histograms cnt[pass] (counters of type C) are taken: a scatter pass for each digit that is not
   the same in every key, between k and t (n keys) alternately.  Returns where the sorted keys
   are.  One definition per key width (binary64 and binary32 images). */
#define RADIX_DIGITS 2048
#define DEFINE_RADIX_PASSES(NAME, T, C)                                                         \
    static T *NAME(T *k, T *t, size_t n, int passes, C (*cnt)[RADIX_DIGITS])                    \
    {                                                                                           \
        for (int ps = 0; ps < passes && n; ps++) {                                              \
            int shift = 11 * ps;                                                                \
            C *c = cnt[ps];                                                                     \
            if (c[(k[0] >> shift) & (RADIX_DIGITS - 1)] == n)                                   \
                continue; /* one digit everywhere: the pass would not move anything */          \
            C pos = 0;                                                                          \
            for (int d = 0; d < RADIX_DIGITS; d++) {                                            \
                C m = c[d];                                                                     \
                c[d] = pos;                                                                     \
                pos += m;                                                                       \
            }                                                                                   \
            for (size_t i = 0; i < n; i++)                                                      \
                t[c[(k[i] >> shift) & (RADIX_DIGITS - 1)]++] = k[i];                            \
            T *sw = k;                                                                          \
            k = t, t = sw;                                                                      \
        }                                                                                       \
        return k;                                                                               \
    }
DEFINE_RADIX_PASSES(radix_passes64, uint64_t, size_t)
DEFINE_RADIX_PASSES(radix_passes32, uint32_t, uint32_t)

/* The sorted values of src[0..n) into dst for rows of binary32 values: the same order of the same
   values as sort_doubles (the float's bits map to keys as the double's do, and the conversions
   are exact), three passes (11, 11, 10 bits) over 4-byte keys with 4-byte counters (n < 2^32)
   instead of up to six over 8-byte ones.  tmp: n doubles, room for the 2n keys.  0: some value is
   not a finite binary32 value, or n is too large (then dst is unchanged). */
static int sort_floats(const double *src, double *dst, double *tmp, size_t n)
{
    if (n > UINT32_MAX)
        return 0;
    enum { PASSES = 3 };
    uint32_t *k = (uint32_t *)tmp;
    static _Thread_local uint32_t cnt[PASSES][RADIX_DIGITS];
    memset(cnt, 0, sizeof cnt);
    int all = 1; /* every element a finite binary32 value (a NaN fails the comparison) */
    for (size_t i = 0; i < n; i++) {
        float f = (float)src[i];
        all &= ((double)f == src[i]) & (fabsf(f) <= FLT_MAX);
        uint32_t b;
        memcpy(&b, &f, sizeof b);
        b ^= (b >> 31) ? ~0u : 0x80000000u; /* negative: flip all; else the sign */
        k[i] = b;
        for (int ps = 0; ps < PASSES; ps++)
            cnt[ps][(b >> (11 * ps)) & (RADIX_DIGITS - 1)]++;
    }
    if (!all)
        return 0;
    k = radix_passes32(k, k + n, n, PASSES, cnt);
#pragma omp simd
    for (size_t i = 0; i < n; i++) {
        uint32_t b = k[i];
        b ^= (b >> 31) ? 0x80000000u : ~0u;
        float f;
        memcpy(&f, &b, sizeof f);
        dst[i] = (double)f;
    }
    return 1;
}

/* Sorts a[0..n) ascending (any order among equal values: -0 and +0 compare equal and sum alike)
   by LSD radix on the order-preserving unsigned image of the bits: the digits' histograms in one
   read, then radix_passes64 between a and tmp (binary64 images of f32 data have 29 zero low
   bits: two passes skipped; rows of binary32 values have sort_floats); tmp: n doubles.  No NaN
   (the rows are finite). */
static void sort_doubles(double *a, double *tmp, size_t n)
{
    enum { PASSES = 6 };
    uint64_t *k = (uint64_t *)a, *t = (uint64_t *)tmp; /* the same storage, read as bits */
    static _Thread_local size_t cnt[PASSES][RADIX_DIGITS];
    memset(cnt, 0, sizeof cnt);
    for (size_t i = 0; i < n; i++) {
        uint64_t b;
        memcpy(&b, &a[i], sizeof b);
        b ^= (b >> 63) ? ~0ull : 0x8000000000000000ull; /* negative: flip all; else the sign */
        memcpy(&k[i], &b, sizeof b);
        for (int ps = 0; ps < PASSES; ps++)
            cnt[ps][(b >> (11 * ps)) & (RADIX_DIGITS - 1)]++;
    }
    k = radix_passes64(k, t, n, PASSES, cnt);
    if (k != (uint64_t *)a)
        memcpy(a, k, n * sizeof *k);
    k = (uint64_t *)a;
    for (size_t i = 0; i < n; i++) {
        uint64_t b = k[i];
        b ^= (b >> 63) ? 0x8000000000000000ull : ~0ull;
        double v;
        memcpy(&v, &b, sizeof v);
        a[i] = v; /* stored as a double: the storage is read as doubles afterwards */
    }
}

/* 1/j in binary64 for 0 < j < REC_N (rec[0] unused), computed once per thread: welford_coeff's
   divisions, read instead of repeated on every row. */
enum { REC_N = 8192 };
static const double *reciprocals(void)
{
    static _Thread_local double rec[REC_N];
    static _Thread_local int ready;
    if (!ready) {
        for (int j = 1; j < REC_N; j++)
            rec[j] = 1 / (double)j;
        ready = 1;
    }
    return rec;
}

/* a_j^2 of welford_coeff: j = dj, inv = 1/j, lo and hi the sums of the j smallest and largest. */
static inline double welford_term(double dj, double inv, double lo, double hi, double m,
                                  double rng)
{
    double bot = lo * inv, tp = hi * inv;
    double T = max_d(tp - m, m - bot), Mabs = max_d(fabs(tp), fabs(bot));
    double a = 2 * dj * T * (Mabs + 2 * rng * inv);
    return a * a;
}

/* The Welford / merged-moments proxy of the variance [§3.1]: a rounding of the running mean after j
   elements, of size u*|M_j|, changes the final M2 by 2*j*(m - M_j) to first order.  For any order
   of the elements, M_j lies between the means of the j smallest and the j largest elements (from
   the sorted row), which bounds both |M_j| and |m - M_j|.  Returns sqrt(sum_j a_j^2) / n.
   buf: 2n doubles of scratch. */
static double welford_coeff(const double *x, size_t n, double m, double rng, double *buf)
{
    double *top = buf + n; /* top[j]: the sum of the j largest; buf[j - 1]: of the j smallest */
    if (!sort_floats(x, buf, top, n)) {
        memcpy(buf, x, n * sizeof *buf);
        sort_doubles(buf, top, n);
    }
    top[0] = 0;
    for (size_t j = 1; j < n; j++)
        top[j] = top[j - 1] + buf[n - j];
    for (size_t j = 1; j < n; j++)
        buf[j] += buf[j - 1];
    /* The statistics only scale a proxy (§2): binary64 sums (relative error <= n*2^-53), and the
       terms summed in lanes (omp simd), are as good as exact for it. */
    double acc = 0;
    const double *rec = reciprocals();
    /* j = j0 + k with an int k: its conversion to double has vector instructions, a size_t's
       does not.  1/j from the table below REC_N (the same double as the division), divided
       above. */
    for (size_t j0 = 1; j0 < n; j0 += 1u << 20) {
        int K = (int)(n - j0 < 1u << 20 ? n - j0 : 1u << 20);
        int Kt = j0 < REC_N ? (int)(REC_N - j0 < (size_t)K ? REC_N - j0 : (size_t)K) : 0;
        const double *lo = buf + j0 - 1, *hi = top + j0, *rj = rec + j0, base = (double)j0;
#pragma omp simd reduction(+ : acc)
        for (int k = 0; k < Kt; k++)
            acc += welford_term(base + (double)k, rj[k], lo[k], hi[k], m, rng);
#pragma omp simd reduction(+ : acc)
        for (int k = Kt; k < K; k++)
            acc += welford_term(base + (double)k, 1 / (base + (double)k), lo[k], hi[k], m, rng);
    }
    return sqrt(acc) / (double)n;
}

/* The magnitude that bounds the rounding of element i of the normalized input (skip ops). */
static double xmag(const st_problem *p, const double *x, size_t i)
{
    return p->xmag ? p->xmag[x - p->x + i] : fabs(x[i]);
}

/* welford_coeff sorts the row: O(n log n), the tier's largest cost when many implementations are
   checked on the same inputs (tests/test_zoo_widths.c).  It depends on the row's values only, so
   it is remembered by the row's hash h (direct-mapped, one cache per thread: the rows of a problem
   are shared out among threads, and the value does not depend on which one computes it). */
static double welford_cached(const double *x, size_t n, uint64_t h, double m, double rng,
                             double *buf)
{
    enum { SLOTS = 4096 };
    static _Thread_local struct {
        uint64_t h;
        size_t n;
        double W;
    } cache[SLOTS];
    size_t k = (size_t)(h % SLOTS);
    if (cache[k].h == h && cache[k].n == n)
        return cache[k].W;
    double W = welford_coeff(x, n, m, rng, buf);
    cache[k].h = h, cache[k].n = n, cache[k].W = W;
    return W;
}

/* ---- the rows of a problem: hashes and statistics computed once (st_rows) ---- */

typedef enum { FAM_LN, FAM_RMS } family;

struct st_rows {
    size_t rows;
    uint64_t *hash;
    unsigned char *have_hash; /* 1: hash[r] is set */
    unsigned char *have_stat; /* 1: stat[r] is ln_row's, 2: rms_row's */
    struct rowstat_s *stat;
};

/* row_hash of row r (p->x), remembered in p->cache when there is one (as the problem's row
   p->row0 + r).  Each row is handled by one thread at a time (the parallel loops below and the
   blocks of a check split by rows), so the cache needs no lock. */
static uint64_t hash_of(const st_problem *p, size_t r)
{
    st_rows *c = p->cache;
    size_t g = p->row0 + r;
    if (c && c->have_hash[g])
        return c->hash[g];
    uint64_t h = row_hash(p->x + r * p->n, NULL, p->n);
    if (c)
        c->hash[g] = h, c->have_hash[g] = 1;
    return h;
}

static rowstat ln_row(const st_problem *p, size_t r, double *buf)
{
    const double *x = p->x + r * p->n;
    rowstat s = {0};
    size_t n = p->n;
    /* These statistics scale the proxies (§2): binary64 sums in lanes (omp simd; relative error
       <= n*2^-53 of the sums of magnitudes) are as good as exact for that. */
    double sum = 0, sa = 0, mn = INFINITY, mx = -INFINITY;
#pragma omp simd reduction(+ : sum, sa) reduction(max : mx) reduction(min : mn)
    for (size_t i = 0; i < n; i++) {
        sum += x[i], sa += fabs(x[i]);
        mn = mn < x[i] ? mn : x[i], mx = mx > x[i] ? mx : x[i];
    }
    double M = n ? max_d(-mn, mx) : 0; /* max |x_i| (a non-finite row is not tested) */
    double m = sum / (double)n, ss = 0, s4 = 0, sdx = 0, sx2 = 0;
#pragma omp simd reduction(+ : ss, s4)
    for (size_t i = 0; i < n; i++) {
        double q = (x[i] - m) * (x[i] - m);
        ss += q, s4 += q * q;
    }
    if (p->sum_rounded)
        for (size_t i = 0; i < n; i++) {
            double d = x[i] - m, mg = xmag(p, x, i);
            sdx += d * d * mg * mg, sx2 += mg * mg;
        }
    double v = ss / (double)n, u = p->u, dn = (double)n;
    if (!row_in_range(p, x, v + p->eps))
        return s;
    s.ok = 1;
    s.m = m, s.v = v, s.A = sa / dn, s.M = M;
    s.r = 1 / sqrt(v + p->eps);
    double rng = mx - mn;
    /* [§3.1] mean: any summation order (partial sums <= n*A), a Welford mean (damped, <= M),
       the division; the skip ops' rounded sum adds one rounding per element. */
    s.sig_m = SAFETY * u * (sqrt(dn) * (s.A + M) + fabs(s.m) +
                            (p->sum_rounded ? sqrt(sx2) / dn : 0));
    s.phi_m = u * fabs(s.m) + gamma_k(dn + 1, u) * gamma_k(dn + 1, u) * s.A;
    /* [§3.2] variance: the sum of squares (partial sums <= n*v), the per-term subtraction and
       square, the division, Welford's running means, the skip ops' rounded sum. */
    double W = n > 1 ? welford_cached(x, n, hash_of(p, r), s.m, rng, buf) : 0;
    double sig_v = SAFETY * u * (sqrt(dn) * v + 3 * sqrt(s4) / dn + v + W +
                                 (p->sum_rounded ? 2 * sqrt(sdx) / dn : 0));
    /* [§3.2] the second-order bias e^2 of the variance (two-pass: (1/n)sum (d - e)^2 = v + e^2;
       Welford: the running means' e_k^2): e is at most the worst case E_W, and with probability
       1 - alpha/2 over all rows at most lambda*sig_m (the mean's own tail, Bonferroni). */
    double lam = sqrt(2 * log(4 * (double)total_rows(p) / ST_ALPHA));
    double E_W = fmin((gamma_k(dn + 1, u) + 4 * u) * M, lam * s.sig_m) + 2 * p->eta;
    s.sig_rho = 0.5 * sig_v / (v + p->eps) + SAFETY * 2.5 * u;
    s.phi_rho = 0.5 * (u * v + E_W * E_W + dn * p->eta) / (v + p->eps) + 4 * u +
                0.5 * gamma_k(dn + 4, u) * gamma_k(dn + 4, u);
    return s;
}

static rowstat rms_row(const st_problem *p, const double *x)
{
    rowstat s = {0};
    size_t n = p->n;
    double ss = 0, s4 = 0, sxm = 0, M = 0; /* binary64 in lanes: see ln_row */
#pragma omp simd reduction(+ : ss, s4) reduction(max : M)
    for (size_t i = 0; i < n; i++) {
        double q = x[i] * x[i];
        ss += q, s4 += q * q;
        M = M > fabs(x[i]) ? M : fabs(x[i]);
    }
    if (p->sum_rounded)
        for (size_t i = 0; i < n; i++) {
            double mg = xmag(p, x, i);
            sxm += x[i] * x[i] * mg * mg;
        }
    double ms = ss / (double)n, u = p->u, dn = (double)n;
    if (!row_in_range(p, x, ms + p->eps))
        return s;
    s.ok = 1;
    s.v = ms, s.M = M;
    s.r = 1 / sqrt(ms + p->eps);
    /* [§3.3] the sum of squares in any order (partial sums <= n*ms), the squares, the division,
       the skip ops' rounded sum (2x*delta per element) */
    double sig_ms = SAFETY * u * (sqrt(dn) * ms + 2 * sqrt(s4) / dn + ms +
                                  (p->sum_rounded ? 2 * sqrt(sxm) / dn : 0));
    s.sig_rho = 0.5 * sig_ms / (ms + p->eps) + SAFETY * 2.5 * u;
    s.phi_rho = 0.5 * (u * ms + dn * p->eta) / (ms + p->eps) + 4 * u +
                0.5 * gamma_k(dn + 2, u) * gamma_k(dn + 2, u);
    return s;
}

/* The statistics of row r for family f (ln_row / rms_row), remembered in p->cache.  buf: 2n
   doubles of scratch. */
static rowstat stat_of(const st_problem *p, family f, size_t r, double *buf)
{
    st_rows *c = p->cache;
    size_t g = p->row0 + r;
    unsigned char tag = f == FAM_LN ? 1 : 2;
    if (c && c->have_stat[g] == tag)
        return c->stat[g];
    rowstat s = f == FAM_LN ? ln_row(p, r, buf) : rms_row(p, p->x + r * p->n);
    if (c)
        c->stat[g] = s, c->have_stat[g] = tag;
    return s;
}

st_rows *st_rows_new(size_t rows)
{
    st_rows *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    c->rows = rows;
    c->hash = malloc((rows + 1) * sizeof *c->hash);
    c->have_hash = calloc(rows + 1, 1);
    c->have_stat = calloc(rows + 1, 1);
    c->stat = malloc((rows + 1) * sizeof *c->stat);
    if (!c->hash || !c->have_hash || !c->have_stat || !c->stat) {
        st_rows_free(c);
        return NULL;
    }
    return c;
}

void st_rows_free(st_rows *c)
{
    if (!c)
        return;
    free(c->hash), free(c->have_hash), free(c->have_stat), free(c->stat);
    free(c);
}

/* Weighted least squares of a row's errors on k <= 3 shared directions [§4]: the normal equations
   A c = y with A = sum w X X^T, y = sum w X e, w_i = (bmin / b_i)^2.  The own-noise proxy of
   coefficient j is bmin * sqrt((A^-1)_jj) (with w = bmin^2 / b^2 the covariance bound of the
   coefficients is bmin^2 A^-1).  Gauss-Jordan with partial pivoting; 0 if A is singular. */
typedef struct {
    int k;
    long double A[3][3], y[3];
} wls_t;

/* The normal equations of a row's n elements, L = {K, A = sum w X X^T, y = sum w X e}: ELEMENT
   sets element i's directions X[0..K), its error err = e_i and weight wt = w_i.  K = L->k as a
   constant, the sums in scalars (registers) over the row, in binary64 lanes (omp simd): A and y
   are within n*2^-53 relative of their sums of magnitudes, far below what wls_solve's
   dependence threshold (1e-13) and the proxies resolve. */
#define WLS_ROW(L, K, n, ELEMENT)                                                                 \
    do {                                                                                          \
        double a00_ = 0, a01_ = 0, a02_ = 0, a11_ = 0, a12_ = 0, a22_ = 0;                        \
        double y0_ = 0, y1_ = 0, y2_ = 0;                                                         \
        _Pragma("omp simd reduction(+ : a00_, a01_, a02_, a11_, a12_, a22_, y0_, y1_, y2_)")      \
        for (size_t i = 0; i < (n); i++) {                                                        \
            double X[3] = {0, 0, 0}, err, wt;                                                     \
            ELEMENT;                                                                              \
            double w0_ = wt * X[0], w1_ = wt * X[1], w2_ = wt * X[2];                             \
            y0_ += w0_ * err, a00_ += w0_ * X[0];                                                 \
            if (K > 1)                                                                            \
                y1_ += w1_ * err, a01_ += w0_ * X[1], a11_ += w1_ * X[1];                         \
            if (K > 2)                                                                            \
                y2_ += w2_ * err, a02_ += w0_ * X[2], a12_ += w1_ * X[2], a22_ += w2_ * X[2];     \
        }                                                                                         \
        const double A_[3][3] = {{a00_, a01_, a02_}, {a01_, a11_, a12_}, {a02_, a12_, a22_}};     \
        const double y_[3] = {y0_, y1_, y2_};                                                     \
        (L)->k = K;                                                                               \
        for (int a = 0; a < K; a++) {                                                             \
            (L)->y[a] = y_[a];                                                                    \
            for (int b = 0; b < K; b++)                                                           \
                (L)->A[a][b] = A_[a][b];                                                          \
        }                                                                                         \
    } while (0)

static int wls_solve(const wls_t *L, double bmin, double *coef, double *proxy)
{
    int k = L->k;
    long double M[3][6];
    for (int a = 0; a < k; a++)
        for (int b = 0; b < 2 * k; b++)
            M[a][b] = b < k ? L->A[a][b] : (b - k == a);
    long double scale = 0;
    for (int a = 0; a < k; a++)
        scale = fmaxl(scale, fabsl(L->A[a][a]));
    if (!(scale > 0) || !isfinite((double)scale))
        return 0;
    for (int c = 0; c < k; c++) {
        int piv = c;
        for (int a = c + 1; a < k; a++)
            if (fabsl(M[a][c]) > fabsl(M[piv][c]))
                piv = a;
        if (!(fabsl(M[piv][c]) > 1e-13L * scale))
            return 0; /* directions (nearly) dependent: the row says nothing separately */
        for (int b = 0; b < 2 * k; b++) {
            long double tmp = M[c][b];
            M[c][b] = M[piv][b], M[piv][b] = tmp;
        }
        long double d = M[c][c];
        for (int b = 0; b < 2 * k; b++)
            M[c][b] /= d;
        for (int a = 0; a < k; a++)
            if (a != c) {
                long double f = M[a][c];
                for (int b = 0; b < 2 * k; b++)
                    M[a][b] -= f * M[c][b];
            }
    }
    for (int a = 0; a < k; a++) {
        long double c = 0;
        for (int b = 0; b < k; b++)
            c += M[a][k + b] * L->y[b];
        coef[a] = (double)c;
        proxy[a] = bmin * (double)sqrtl(fmaxl(M[a][k + a], 0));
        if (!isfinite(coef[a]) || !isfinite(proxy[a]))
            return 0;
    }
    return 1;
}

/* The smallest element of a row of positive noise bounds (the weights' scale). */
static double row_min(const double *b, size_t n)
{
    double m = INFINITY;
    for (size_t i = 0; i < n; i++)
        m = min_d(m, b[i]);
    return m;
}

static int row_finite(const double *got, const double *want, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!isfinite(got[i]) || !isfinite(want[i]))
            return 0;
    return 1;
}

/* ---------------------------------------------------------------- forward outputs [§3.4] */

static double gam(const st_problem *p, size_t i) { return p->gamma ? p->gamma[i] : 1; }
static double weight(const st_problem *p, size_t i)
{
    return p->offset ? 1 + gam(p, i) : gam(p, i);
}

/* The noise bound of one element of LayerNorm's y [§3.4]: (x - m)*r*gamma + beta, three products
   and an add, or the folded form x*(r*gamma) + (beta - m*r*gamma); `skip`: the skip ops' rounded
   sum's term (0 without); the output's own rounding (want_noise) and underflows. */
static inline double ln_y_noise(const st_problem *p, const rowstat *s, double z, double w,
                                double x, double gi, double beta, double skip)
{
    double b = SAFETY * p->u * (3 * fabs(z) + fabs(w) + s->r * fabs(gi) * (fabs(x) + fabs(s->m)) +
                                fabs(beta) + skip);
    return b + want_noise(p, w) + 4 * p->eta * (1 + s->r * fabs(gi));
}

/* One pooled row of y [§3.4, §4]: the least-squares coefficient of the row's rstd error rho
   (direction z = y - beta) and its proxy and floor (res[0..2]); 0 if the row says nothing.
   buf: 2n, bb: n doubles of scratch. */
static int forward_y_row(const st_problem *p, family f, size_t r, const double *got,
                         const double *want, double *buf, double *bb, double *res)
{
    const double *x = p->x + r * p->n, *g = got + r * p->n, *w = want + r * p->n;
    double u = p->u;
    rowstat s = stat_of(p, f, r, buf);
    if (!s.ok)
        return 0;
    double *z0 = buf, *z1 = buf + p->n; /* the directions z = w - beta and r*gamma */
    if (f == FAM_LN && p->beta && p->gamma && !p->sum_rounded) {
        /* LayerNorm's usual case, the same terms without a branch (the loop vectorizes) */
        const double *be = p->beta, *ga = p->gamma;
#pragma omp simd
        for (size_t i = 0; i < p->n; i++) {
            double z = w[i] - be[i];
            z0[i] = z, z1[i] = s.r * ga[i];
            bb[i] = ln_y_noise(p, &s, z, w[i], x[i], ga[i], be[i], 0);
        }
    } else {
        for (size_t i = 0; i < p->n; i++) {
            double beta = p->beta ? p->beta[i] : 0, z = w[i] - beta;
            double gi = gam(p, i), b;
            z0[i] = z, z1[i] = s.r * gi;
            if (f == FAM_LN) {
                bb[i] = ln_y_noise(p, &s, z, w[i], x[i], gi, beta,
                                   p->sum_rounded ? s.r * fabs(gi) * xmag(p, x, i) : 0);
                continue;
            }
            b = SAFETY * u * (3 * fabs(z) + (p->offset ? fabs(x[i]) * s.r * (1 + fabs(gi)) : 0) +
                              (p->sum_rounded ? s.r * fabs(weight(p, i)) * xmag(p, x, i) : 0));
            bb[i] = b + want_noise(p, w[i]) + 4 * p->eta * (1 + s.r * fabs(gi));
        }
    }
    /* [§4] the row's rstd error rho (direction z) and, LayerNorm, its mean error e
       (direction r*gamma), by weighted least squares; rho is tested */
    double bmin = row_min(bb, p->n), coef[3], own[3];
    wls_t L;
#define FWD_ELEMENT                                                                               \
    X[0] = z0[i], X[1] = z1[i]; /* the second only for LayerNorm (K = 2) */                       \
    err = g[i] - w[i], wt = (bmin / bb[i]) * (bmin / bb[i])
    if (f == FAM_LN)
        WLS_ROW(&L, 2, p->n, FWD_ELEMENT);
    else
        WLS_ROW(&L, 1, p->n, FWD_ELEMENT);
#undef FWD_ELEMENT
    if (!wls_solve(&L, bmin, coef, own))
        return 0;
    res[0] = coef[0], res[1] = s.sig_rho + own[0], res[2] = s.phi_rho;
    return 1;
}

/* ---- the per-row outputs, rows given block by block (st_fwd, ref/stat_tier.h) ----
   Each row's result depends on that row alone (its x, got, want and the problem's constants), so
   it is computed as its block arrives, rows in parallel (each in its own slot); which rows are
   pooled -- finite ones, the first of each distinct x -- and the pooling itself need every row
   and run at the end, in row order: the same statistics whatever the blocks and the threads. */
enum { FWD_RES = 10 }; /* per row: t, Q, proxy, floor, ref of each of its (up to 2) groups */

struct st_fwd {
    st_fwd_kind kind;
    size_t rows;
    unsigned char *fin;  /* the row's got and want are finite: it may be pooled */
    unsigned char *done; /* the row's group was formed (res holds it) */
    uint64_t *hash;      /* row_hash of the row's x: identical rows are pooled once */
    double *res;         /* FWD_RES per row */
    acc_t *part;         /* ST_SUM: each row's elements pooled (elem_acc), merged at the end */
};

st_fwd *st_fwd_new(st_fwd_kind kind, size_t rows_total)
{
    st_fwd *f = calloc(1, sizeof *f);
    if (!f)
        return NULL;
    f->kind = kind, f->rows = rows_total;
    f->fin = calloc(rows_total + 1, 1), f->done = calloc(rows_total + 1, 1);
    f->hash = malloc((rows_total + 1) * sizeof *f->hash);
    f->res = malloc((FWD_RES * rows_total + 1) * sizeof *f->res);
    if (kind == ST_SUM)
        f->part = malloc((rows_total + 1) * sizeof *f->part);
    if (!f->fin || !f->done || !f->hash || !f->res || (kind == ST_SUM && !f->part)) {
        st_fwd_free(f);
        return NULL;
    }
    return f;
}

void st_fwd_free(st_fwd *f)
{
    if (!f)
        return;
    free(f->fin), free(f->done), free(f->hash), free(f->res), free(f->part);
    free(f);
}

static family fwd_family(st_fwd_kind k)
{
    return k == ST_RMS_Y || k == ST_RMS_RSTD || k == ST_RMS_DX ? FAM_RMS : FAM_LN;
}

static int fwd_is_dx(st_fwd_kind k) { return k == ST_LN_DX || k == ST_RMS_DX; }

static int backward_dx_row(const st_problem *p, family f, size_t r, const double *got,
                           const double *want, double *buf, double *res);

/* Row r of the block (global row g): y's group [§3.3, §4] (forward_y_row), the per-row scalar
   rstd (direction: itself, "scale") or mean (direction 1, "bias"), or dx's two groups (the
   backward, backward_dx_row).  1 if a group was formed. */
static int fwd_row(const st_fwd *F, const st_problem *p, size_t r, const double *got,
                   const double *want, double *buf, double *res)
{
    family f = fwd_family(F->kind);
    if (fwd_is_dx(F->kind)) { /* the groups along dx ("scale") and r*xhat ("hbar") */
        double q[7];
        if (!backward_dx_row(p, f, r, got, want, buf, q))
            return 0;
        res[0] = q[0], res[1] = 1, res[2] = q[1], res[3] = q[2], res[4] = 1;
        res[5] = q[3], res[6] = 1, res[7] = q[4], res[8] = q[5], res[9] = q[6];
        return 1;
    }
    if (F->kind == ST_LN_Y || F->kind == ST_RMS_Y) {
        double y3[3]; /* the coefficient of the row's rstd error, its proxy and floor */
        if (!forward_y_row(p, f, r, got, want, buf, buf + 2 * p->n, y3))
            return 0;
        res[0] = y3[0], res[1] = 1, res[2] = y3[1], res[3] = y3[2], res[4] = 1;
        return 1;
    }
    rowstat s = stat_of(p, f, r, buf);
    if (!s.ok)
        return 0;
    double e = got[r] - want[r], w = want[r];
    if (F->kind == ST_LN_MEAN) {
        res[0] = e, res[1] = 1, res[2] = s.sig_m + want_noise(p, w) + 2 * p->eta;
        res[3] = s.phi_m, res[4] = s.A;
    } else {
        res[0] = w * e, res[1] = w * w, res[2] = s.sig_rho * w * w + fabs(w) * want_noise(p, w);
        res[3] = s.phi_rho * w * w, res[4] = 1;
    }
    return 1;
}

int st_fwd_rows(st_fwd *F, const st_problem *p, size_t r0, const double *got, const double *want)
{
    size_t R = p->rows, n = p->n;
    if (F->kind == ST_SUM) {
        if (r0 > F->rows || R > F->rows - r0)
            return 0;
        for (size_t r = 0; r < R; r++) { /* the skip sum: two roundings of at most u*xmag */
            acc_t *a = &F->part[r0 + r];
            *a = (acc_t){0};
            elem_acc(p, got + r * n, want + r * n, p->xmag ? p->xmag + r * n : NULL, 2, n,
                     (r0 + r) * n, a);
        }
        return 1;
    }
    int per_row = F->kind != ST_LN_Y && F->kind != ST_RMS_Y && !fwd_is_dx(F->kind);
    size_t w = per_row ? 1 : n; /* the output's elements per row */
    if (r0 > F->rows || R > F->rows - r0)
        return 0;
    int ok = 1;
    long NR = (long)R;
#pragma omp parallel num_threads(rn_threads_for(R * n)) reduction(&& : ok)
    {
        double *buf = malloc((4 * n + 1) * sizeof *buf);
        ok = buf != NULL;
#pragma omp for schedule(dynamic, 4)
        for (long k = 0; k < NR; k++) {
            size_t r = (size_t)k, g = r0 + r;
            F->hash[g] = hash_of(p, r);
            F->fin[g] = (unsigned char)row_finite(got + r * w, want + r * w, w);
            F->done[g] = buf && F->fin[g] &&
                         (unsigned char)fwd_row(F, p, r, got, want, buf, F->res + FWD_RES * g);
        }
        free(buf);
    }
    return ok;
}

int st_fwd_finish(const st_fwd *F, double u, st_test *t)
{
    acc_t a = {0}, a2 = {0};
    if (F->kind == ST_SUM) {
        for (size_t g = 0; g < F->rows; g++)
            acc_merge(&a, &F->part[g]);
        acc_finish(&a, "scale", u, &t[0]);
        return 1;
    }
    seen_t seen;
    if (seen_init(&seen, F->rows))
        return 0;
    for (size_t g = 0; g < F->rows; g++) {
        /* the first finite row of each distinct x, whether or not it formed a group */
        if (!F->fin[g] || seen_check(&seen, F->hash[g]) || !F->done[g])
            continue;
        const double *q = F->res + FWD_RES * g;
        acc_group(&a, q[0], q[1], q[2], q[3], q[4], g);
        if (fwd_is_dx(F->kind))
            acc_group(&a2, q[5], q[6], q[7], q[8], q[9], g);
    }
    free(seen.slot);
    acc_finish(&a, F->kind == ST_LN_MEAN ? "bias" : "scale", u, &t[0]);
    if (!fwd_is_dx(F->kind))
        return 1;
    acc_finish(&a2, "hbar", u, &t[1]);
    return 2;
}

/* The whole problem as one block. */
static int rows_whole(const st_problem *p, st_fwd_kind kind, const double *got,
                      const double *want, st_test *t)
{
    st_fwd *F = st_fwd_new(kind, p->rows);
    int k = F && st_fwd_rows(F, p, 0, got, want) ? st_fwd_finish(F, p->u, t) : 0;
    st_fwd_free(F);
    return k;
}

int st_layernorm_y(const st_problem *p, const double *got, const double *want, st_test *t)
{
    return rows_whole(p, ST_LN_Y, got, want, t);
}

int st_skip_sum(const st_problem *p, const double *got, const double *want, st_test *t)
{
    return rows_whole(p, ST_SUM, got, want, t);
}

int st_rmsnorm_y(const st_problem *p, const double *got, const double *want, st_test *t)
{
    return rows_whole(p, ST_RMS_Y, got, want, t);
}

int st_layernorm_mean(const st_problem *p, const double *got, const double *want, st_test *t)
{
    return rows_whole(p, ST_LN_MEAN, got, want, t);
}

int st_layernorm_rstd(const st_problem *p, const double *got, const double *want, st_test *t)
{
    return rows_whole(p, ST_LN_RSTD, got, want, t);
}

int st_rmsnorm_rstd(const st_problem *p, const double *got, const double *want, st_test *t)
{
    return rows_whole(p, ST_RMS_RSTD, got, want, t);
}

/* ---------------------------------------------------------------- backward [§3.4] */

/* dx = r*(g - gbar - xhat*hbar) (LayerNorm; RMSNorm without gbar and with m = 0).  To first order
   in the row-shared errors (rho of rstd, e of the mean, Dg of gbar, Dh of hbar):
     dx^ - dx = rho*dx - (2*rho*hbar + Dh - e*r*gbar) * r*xhat - (Dg - e*r*hbar) * r
   directions D1 = dx, D2 = r*xhat, D3 = r; tested along z1 = dx ("scale") and z2 = r*xhat
   ("hbar"). */
/* The model of one row of dx (rows x n; w: dx's exact values of the row): the row statistics,
   the proxies and floors of the coefficients of D1 = dx, D2 = r*xhat, D3 = r, and each element's
   own-noise bound bb[i]; xh, gg, bb: n each.  0 if the row is out of the model's range. */
typedef struct {
    rowstat s;
    double sig[3], phi[3], H, hbar;
} dxrow_t;

static int dx_row_model(const st_problem *p, family f, size_t r, const double *w, double *buf,
                        double *xh, double *gg, double *bb, dxrow_t *d)
{
    size_t n = p->n;
    double u = p->u, dn = (double)n;
    const double *x = p->x + r * n, *dy = p->dy + r * n;
    rowstat s = stat_of(p, f, r, buf);
    if (!s.ok)
        return 0;
    long double sg = 0, sh = 0, sG = 0, sH = 0, sh2 = 0;
    int fin = 1;
    for (size_t i = 0; i < n; i++) {
        xh[i] = (x[i] - s.m) * s.r;
        gg[i] = dy[i] * weight(p, i);
        fin &= isfinite(gg[i]) && isfinite(w[i]);
        sg += gg[i], sh += (long double)gg[i] * xh[i];
        sG += fabs(gg[i]), sH += fabsl((long double)gg[i] * xh[i]);
        sh2 += (long double)gg[i] * xh[i] * gg[i] * xh[i];
    }
    if (!fin)
        return 0;
    double gbar = f == FAM_LN ? (double)(sg / n) : 0, hbar = (double)(sh / n);
    double G = (double)(sG / n), H = (double)(sH / n);
    /* [§3.4] proxies and floors of Dg, Dh: sums in any order, the products, the division */
    double sig_g = f == FAM_LN ? SAFETY * u * (sqrt(dn) * G + G + fabs(gbar)) : 0;
    double sig_h = SAFETY * u * (sqrt(dn) * H + 4 * (double)sqrtl(sh2) / dn + fabs(hbar));
    double phi_g = u * fabs(gbar), phi_h = u * fabs(hbar);
    d->s = s, d->H = H, d->hbar = hbar;
    d->sig[0] = s.sig_rho, d->phi[0] = s.phi_rho;
    d->sig[1] = 2 * s.sig_rho * fabs(hbar) + sig_h + s.sig_m * s.r * fabs(gbar);
    d->phi[1] = 2 * s.phi_rho * fabs(hbar) + phi_h + s.phi_m * s.r * fabs(gbar);
    d->sig[2] = sig_g + s.sig_m * s.r * fabs(hbar);
    d->phi[2] = phi_g + s.phi_m * s.r * fabs(hbar);
    for (size_t i = 0; i < n; i++)
        bb[i] = SAFETY * u * (s.r * (2 * fabs(gg[i]) + fabs(gbar) + 4 * fabs(xh[i] * hbar) +
                                     (p->sum_rounded ? xmag(p, x, i) * s.r * fabs(hbar) : 0)) +
                              2 * fabs(w[i])) +
                want_noise(p, w[i]) + 4 * p->eta * (1 + s.r);
    return 1;
}

/* One pooled row of dx [§4]: the coefficients of D1 = dx, D2 = r*xhat (and D3 = r) by weighted
   least squares: c1 = rho and c2 (the error of mean(g xhat), with 2 rho hbar - e r gbar) are
   tested, c3 (gbar's) is a nuisance; res[0..5]: the two groups' (t, proxy, floor, ref) minus
   the first's ref (1).  buf: 4n doubles.  0 if the row says nothing. */
static int backward_dx_row(const st_problem *p, family f, size_t r, const double *got,
                           const double *want, double *buf, double *res)
{
    size_t n = p->n;
    const double *g = got + r * n, *w = want + r * n;
    double *xh = buf + n, *gg = buf + 2 * n, *bb = buf + 3 * n;
    dxrow_t d;
    if (!dx_row_model(p, f, r, w, buf, xh, gg, bb, &d))
        return 0;
    double bmin = row_min(bb, n), coef[3], own[3], rr = d.s.r;
    wls_t L;
#define DX_ELEMENT                                                                                \
    X[0] = w[i], X[1] = rr * xh[i];                                                               \
    if (f == FAM_LN)                                                                              \
        X[2] = rr;                                                                                \
    err = g[i] - w[i], wt = (bmin / bb[i]) * (bmin / bb[i])
    if (f == FAM_LN)
        WLS_ROW(&L, 3, n, DX_ELEMENT);
    else
        WLS_ROW(&L, 2, n, DX_ELEMENT);
#undef DX_ELEMENT
    if (!wls_solve(&L, bmin, coef, own))
        return 0;
    res[0] = coef[0], res[1] = d.sig[0] + own[0], res[2] = d.phi[0];
    res[3] = coef[1], res[4] = d.sig[1] + own[1], res[5] = d.phi[1];
    res[6] = fmax(d.H, fabs(d.hbar));
    return 1;
}

int st_layernorm_dx(const st_problem *p, const double *got, const double *want, st_test *t)
{
    return rows_whole(p, ST_LN_DX, got, want, t);
}

int st_rmsnorm_dx(const st_problem *p, const double *got, const double *want, st_test *t)
{
    return rows_whole(p, ST_RMS_DX, got, want, t);
}

/* ---- the column outputs, rows given block by block in row order (st_cols, ref/stat_tier.h) ----
   dgamma_i = sum_rows dy*xhat: one group (the vector), direction z = dgamma.  The rows' shared
   errors (rho_r, e_r) enter every column: independent across distinct rows (identical rows are
   merged, their contributions added before squaring).  dbeta_i = sum_rows dy: a column sum of
   exact inputs; one group, direction dbeta.  dbias_i = sum_rows dx (the skip ops): one group,
   direction z = dbias; each row's shared errors enter every column through P_j = <z, D_j(row)>
   (D_j: dx's directions, backward_dx_row), distinct rows independent, identical rows (same x)
   adding their contributions before squaring; each column adds its rows' own noises and the
   column sum's roundings.  Every sum runs over the rows in row order, whatever the blocks: the
   same bits as one block. */
struct st_cols {
    st_col_kind kind;
    size_t rows, n, next;  /* next: the first row of the next block */
    const double *got;
    double *want;          /* a copy */
    int ok;                /* every value finite and every row in the model's range so far */
    double floor;
    double *buf, *S1, *S2; /* dgamma: a row's scratch, the columns' sums of |q| and q^2;
                              dbias: a row's scratch, the columns' sums of |dx| and of the
                              squared own-noise bounds */
    double *Pr, *Pm, *sr, *sm; /* dgamma, per distinct row (the first of its content) */
    double *cr;            /* dbias, per distinct row: its shared errors' proxy */
    uint64_t *h;
    long double *L1;       /* dbeta: the columns' sums of |dy| */
};

void st_cols_free(st_cols *c)
{
    if (!c)
        return;
    free(c->buf), free(c->S1), free(c->S2), free(c->Pr), free(c->Pm), free(c->sr), free(c->sm);
    free(c->cr), free(c->h), free(c->L1), free(c->want);
    free(c);
}

static int is_dbias(st_col_kind k) { return k == ST_LN_DBIAS || k == ST_RMS_DBIAS; }

st_cols *st_cols_new(st_col_kind kind, size_t rows, const double *got, const double *want,
                     size_t n)
{
    st_cols *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    c->kind = kind, c->rows = rows, c->n = n, c->got = got;
    if (!(c->want = malloc((n + 1) * sizeof *c->want))) {
        st_cols_free(c);
        return NULL;
    }
    memcpy(c->want, want, n * sizeof *want);
    c->ok = row_finite(got, want, n);
    if (kind == ST_DBETA) {
        if (!(c->L1 = calloc(n + 1, sizeof *c->L1))) {
            st_cols_free(c);
            return NULL;
        }
        return c;
    }
    c->S1 = calloc(n + 1, sizeof *c->S1), c->S2 = calloc(n + 1, sizeof *c->S2);
    c->h = calloc(rows + 1, sizeof *c->h);
    if (is_dbias(kind)) {
        c->buf = malloc((4 * n + 1) * sizeof *c->buf);
        c->cr = calloc(rows + 1, sizeof *c->cr);
        if (!c->buf || !c->S1 || !c->S2 || !c->h || !c->cr) {
            st_cols_free(c);
            return NULL;
        }
        return c;
    }
    c->buf = malloc((2 * n + 1) * sizeof *c->buf);
    c->Pr = calloc(rows + 1, sizeof *c->Pr), c->Pm = calloc(rows + 1, sizeof *c->Pm);
    c->sr = calloc(rows + 1, sizeof *c->sr), c->sm = calloc(rows + 1, sizeof *c->sm);
    if (!c->buf || !c->S1 || !c->S2 || !c->Pr || !c->Pm || !c->sr || !c->sm || !c->h) {
        st_cols_free(c);
        return NULL;
    }
    return c;
}

/* The first row of the problem with row g's content (hash h[g]): identical rows share it. */
static size_t first_same_row(const uint64_t *h, size_t g)
{
    for (size_t j = 0; j < g; j++)
        if (h[j] == h[g])
            return j;
    return g;
}

/* Row r of the block, row g of the problem: its terms of dgamma's group. */
static void dgamma_row(st_cols *c, const st_problem *p, family f, size_t r, size_t g)
{
    size_t n = c->n;
    const double *x = p->x + r * n, *dy = p->dy + r * n, *want = c->want;
    rowstat s = stat_of(p, f, r, c->buf);
    if (!s.ok) {
        c->ok = 0;
        return;
    }
    double pr = 0, pm = 0;
    for (size_t i = 0; i < n; i++) {
        double xh = (x[i] - s.m) * s.r, q = dy[i] * xh;
        if (!isfinite(q))
            c->ok = 0;
        c->S1[i] += fabs(q), c->S2[i] += q * q;
        pr += want[i] * q, pm += want[i] * dy[i];
    }
    /* merge identical rows: same x, same shared errors */
    c->h[g] = hash_of(p, r);
    size_t k = first_same_row(c->h, g);
    c->Pr[k] += pr, c->Pm[k] += pm * s.r;
    c->sr[k] = s.sig_rho, c->sm[k] = s.sig_m;
    c->floor += s.phi_rho * fabs(pr) + s.phi_m * s.r * fabs(pm);
}

/* Row r of the block, row g of the problem: its terms of dbias's group (p->want_dx: the block's
   exact dx). */
static void dbias_row(st_cols *c, const st_problem *p, family f, size_t r, size_t g)
{
    size_t n = c->n;
    double *buf = c->buf, *xh = buf + n, *gg = buf + 2 * n, *bb = buf + 3 * n;
    const double *w = p->want_dx + r * n, *want = c->want;
    dxrow_t d;
    if (!dx_row_model(p, f, r, w, buf, xh, gg, bb, &d)) {
        c->ok = 0;
        return;
    }
    double P[3] = {0, 0, 0};
    for (size_t i = 0; i < n; i++) {
        P[0] += want[i] * w[i], P[1] += want[i] * d.s.r * xh[i], P[2] += want[i] * d.s.r;
        c->S2[i] += bb[i] * bb[i], c->S1[i] += fabs(w[i]);
    }
    double cr = 0;
    for (int j = 0; j < 3; j++)
        cr += d.sig[j] * fabs(P[j]), c->floor += d.phi[j] * fabs(P[j]);
    c->h[g] = hash_of(p, r);
    c->cr[first_same_row(c->h, g)] += cr;
}

int st_cols_rows(st_cols *c, const st_problem *p, size_t r0)
{
    if (r0 != c->next || p->rows > c->rows - r0)
        return 0; /* blocks out of order */
    c->next = r0 + p->rows;
    for (size_t r = 0; c->ok && r < p->rows; r++) {
        if (c->kind == ST_DBETA) {
            for (size_t i = 0; i < c->n; i++)
                c->L1[i] += fabs(p->dy[r * c->n + i]);
            continue;
        }
        family f = c->kind == ST_RMS_DGAMMA || c->kind == ST_RMS_DBIAS ? FAM_RMS : FAM_LN;
        if (is_dbias(c->kind) && !p->want_dx)
            c->ok = 0; /* (the caller gives dx's exact values with every block) */
        else if (is_dbias(c->kind))
            dbias_row(c, p, f, r, r0 + r);
        else
            dgamma_row(c, p, f, r, r0 + r);
    }
    return 1;
}

int st_cols_finish(st_cols *c, const st_problem *p, st_test *t)
{
    acc_t a = {0};
    size_t n = c->n, R = c->rows;
    const double *got = c->got, *want = c->want;
    double u = p->u, shared = 0, nz = 0, tt = 0, Q = 0;
    for (size_t r = 0; c->ok && c->kind != ST_DBETA && r < R; r++) {
        double s = is_dbias(c->kind) ? c->cr[r]
                                     : c->sr[r] * fabs(c->Pr[r]) + c->sm[r] * fabs(c->Pm[r]);
        shared += s * s;
    }
    for (size_t i = 0; c->ok && i < n; i++) {
        double b = c->kind == ST_DBETA
                       ? SAFETY * u * sqrt((double)R) * (double)c->L1[i] + want_noise(p, want[i])
                   : is_dbias(c->kind)
                       ? sqrt(c->S2[i]) + SAFETY * u * sqrt((double)R) * c->S1[i] +
                             want_noise(p, want[i])
                       : SAFETY * u * (sqrt((double)R) * c->S1[i] + 3 * sqrt(c->S2[i])) +
                             want_noise(p, want[i]) + 4 * p->eta * (double)R;
        tt += want[i] * (got[i] - want[i]), Q += want[i] * want[i];
        nz += want[i] * want[i] * b * b;
    }
    if (c->ok)
        acc_group(&a, tt, Q, sqrt(shared) + sqrt(nz), c->floor, 1, 0);
    acc_finish(&a, "scale", u, &t[0]);
    return 1;
}

/* The whole problem as one block. */
static int columns_whole(const st_problem *p, st_col_kind kind, const double *got,
                         const double *want, st_test *t)
{
    st_cols *c = st_cols_new(kind, p->rows, got, want, p->n);
    int k = c && st_cols_rows(c, p, 0) ? st_cols_finish(c, p, t) : 0;
    st_cols_free(c);
    return k;
}

int st_layernorm_dgamma(const st_problem *p, const double *got, const double *want, st_test *t)
{
    return columns_whole(p, ST_LN_DGAMMA, got, want, t);
}

int st_rmsnorm_dgamma(const st_problem *p, const double *got, const double *want, st_test *t)
{
    return columns_whole(p, ST_RMS_DGAMMA, got, want, t);
}

int st_colsum_dy(const st_problem *p, const double *got, const double *want, st_test *t)
{
    return columns_whole(p, ST_DBETA, got, want, t);
}

int st_layernorm_dbias(const st_problem *p, const double *want_dx, const double *got,
                       const double *want, st_test *t)
{
    st_problem q = *p;
    q.want_dx = want_dx;
    return columns_whole(&q, ST_LN_DBIAS, got, want, t);
}

int st_rmsnorm_dbias(const st_problem *p, const double *want_dx, const double *got,
                     const double *want, st_test *t)
{
    st_problem q = *p;
    q.want_dx = want_dx;
    return columns_whole(&q, ST_RMS_DBIAS, got, want, t);
}

/* Elementwise outputs: each element is its own group (no shared error). */
int st_elementwise(const st_problem *p, const double *got, const double *want, size_t count,
                   const double *mag, double ops, st_test *t)
{
    acc_t a = {0};
    elem_acc(p, got, want, mag, ops, count, 0, &a);
    acc_finish(&a, "scale", p->u, &t[0]);
    return 1;
}

/* ---------------------------------------------------------------- per-element scales [§3.5] */

/* y's scales: the row-shared errors along their directions (rho along z = want - beta, e along
   r*gamma), proxies and floors added, plus the element's own noise (ln_y_noise). */
int st_layernorm_y_scales(const st_problem *p, const double *want, double *sy)
{
    size_t n = p->n;
    double *buf = malloc(2 * (n ? n : 1) * sizeof *buf);
    if (!buf)
        return -1;
    for (size_t r = 0; r < p->rows; r++) {
        const double *x = p->x + r * n, *w = want + r * n;
        double *s_ = sy + r * n;
        rowstat s = ln_row(p, r, buf);
        for (size_t i = 0; i < n; i++) {
            double gi = weight(p, i), beta = p->beta ? p->beta[i] : 0, z = w[i] - beta;
            s_[i] = s.ok && isfinite(w[i])
                        ? fabs(z) * (s.sig_rho + s.phi_rho) + s.r * fabs(gi) * (s.sig_m + s.phi_m) +
                              ln_y_noise(p, &s, z, w[i], x[i], gi, beta, 0)
                        : INFINITY;
        }
    }
    free(buf);
    return 0;
}

/* dx's scales (dx_row_model: D1 = dx, D2 = r*xhat, D3 = r with their proxies and floors, and
   the own-noise bound), dgamma's and dbeta's (§3.4's dgamma and dbeta per column: the rows'
   rho_r and e_r enter column i through dy*xhat and r*dy, independent across rows, so their
   proxies combine as a root sum of squares and their floors add; the column sum's own noise
   SAFETY*u*(sqrt(R)*sum|dy*xhat| + 3*(sum (dy*xhat)^2)^(1/2)), dbeta's SAFETY*u*sqrt(R)*sum|dy|
   (which no row's model enters), and the output rounding of the sum of magnitudes). */
int st_layernorm_bwd_scales(const st_problem *p, const double *want_dx, double *sdx, double *sdg,
                            double *sdb)
{
    size_t n = p->n, R = p->rows;
    double *buf = malloc(2 * (n ? n : 1) * sizeof *buf), *xh = malloc((n ? n : 1) * sizeof *xh),
           *gg = malloc((n ? n : 1) * sizeof *gg), *bb = malloc((n ? n : 1) * sizeof *bb),
           *cs = calloc(5 * (n ? n : 1), sizeof *cs);
    int rc = -1;
    if (!buf || !xh || !gg || !bb || !cs)
        goto out;
    /* column sums over the rows: cs[0] (proxies)^2, cs[1] floors, cs[2] sum|dy*xhat|,
       cs[3] sum (dy*xhat)^2, cs[4] sum|dy|; a row outside the model makes its columns +Inf */
    double *c2 = cs, *cf = cs + n, *ca = cs + 2 * n, *cq = cs + 3 * n, *cb = cs + 4 * n;
    for (size_t r = 0; r < R; r++) {
        const double *dy = p->dy + r * n, *w = want_dx + r * n;
        double *s_ = sdx + r * n;
        dxrow_t d;
        if (!dx_row_model(p, FAM_LN, r, w, buf, xh, gg, bb, &d)) {
            for (size_t i = 0; i < n; i++)
                s_[i] = INFINITY, c2[i] = INFINITY;
            continue;
        }
        for (size_t i = 0; i < n; i++) {
            double rx = d.s.r * fabs(xh[i]), hx = fabs(dy[i] * xh[i]), rd = d.s.r * fabs(dy[i]);
            s_[i] = fabs(w[i]) * (d.sig[0] + d.phi[0]) + rx * (d.sig[1] + d.phi[1]) +
                    d.s.r * (d.sig[2] + d.phi[2]) + bb[i];
            double sg = d.s.sig_rho * hx + d.s.sig_m * rd;
            c2[i] += sg * sg;
            cf[i] += d.s.phi_rho * hx + d.s.phi_m * rd;
            ca[i] += hx, cq[i] += hx * hx, cb[i] += fabs(dy[i]);
        }
    }
    double sR = sqrt((double)R);
    for (size_t i = 0; i < n; i++) {
        sdg[i] = sqrt(c2[i]) + cf[i] + SAFETY * p->u * (sR * ca[i] + 3 * sqrt(cq[i])) +
                 want_noise(p, ca[i]) + 4 * p->eta * (double)R;
        sdb[i] = SAFETY * p->u * sR * cb[i] + want_noise(p, cb[i]);
    }
    rc = 0;
out:
    free(buf), free(xh), free(gg), free(bb), free(cs);
    return rc;
}
