/* A-priori per-element error bounds for LayerNorm forward and backward.
 * Every formula below is derived, term by term, in specs/error-analysis.md (section numbers in
 * brackets); this file only evaluates them on the data.
 *
 * The exact quantities the bounds need (mean m, variance v, deviations d_i = x_i - m, rstd r,
 * xhat_i = d_i r, y_i, g_i = dy_i gamma_i, ...) are computed with MPFR at 256 bits and rounded to
 * binary64; the bound is then evaluated in binary64 and multiplied by EVAL_SLACK, which covers the
 * relative error of those roundings and of the evaluation itself (fewer than 64 operations, each
 * within 2^-53: far below 2^-40) [§6]. */
#include <math.h>
#include <stdlib.h>

#include <mpfr.h>

#include "bound_profile.h"
#include "fast_dd.h"
#include "layernorm_bound.h"
#include "layernorm_mpfr.h"
#include "norm_fast.h"

#define EXACT_PREC 256
#define EVAL_SLACK (1.0 + 0x1p-40)

rn_dtype rn_compute_dtype(rn_dtype out)
{
    return out == RN_F64 ? RN_F64 : RN_F32;
}

/* gamma_k = k u / (1 - k u) [§1]; +Inf once k u >= 1/2, where the analysis says nothing useful. */
static double gamma_k(double k, double u)
{
    double ku = k * u;
    return ku < 0.5 ? ku / (1.0 - ku) : INFINITY;
}

/* The twin's f64 value `want` is exact rounded once to binary64: |want - exact| <= this [§6]. */
static double want_slack(double mag)
{
    return mag * 0x1p-53 + 0x1p-1074;
}

/* An upper bound on |exact| from its binary64 evaluation `approx` out of terms whose absolute
   values sum to `terms`: a handful of binary64 roundings, each within 2^-53 of `terms` [§6]. */
static double mag(double approx, double terms)
{
    return fabs(approx) + 0x1p-50 * terms;
}

/* Rounding of a computed value (magnitude <= mag + err) to the output format when it differs from
   the compute format [§8]. */
static double output_rounding(double mag, double err, rn_dtype compute, rn_dtype out)
{
    if (out == compute)
        return 0.0;
    return rn_dtype_unit_roundoff(out) * (mag + err) + rn_dtype_underflow_eta(out);
}

/* The bound on |got - want| from the bound `err` on |computed - exact| and an upper bound `m` on
   |exact| [§6, §8]. */
static double finish(double err, double m, rn_dtype compute, rn_dtype out)
{
    double b = (err + output_rounding(m, err, compute, out)) * EVAL_SLACK + want_slack(m);
    return isnan(b) ? INFINITY : b;
}

/* finish's output rounding with its constants taken out of the loops (no call, no branch: the
   element loops vectorize), the same operations in the same order, so the same bits. */
typedef struct {
    double keep;   /* 0 when out == compute (no output rounding), else 1 */
    double uo, eo; /* the unit roundoff and underflow_eta of out */
} out_terms;

static out_terms out_terms_of(rn_dtype compute, rn_dtype out)
{
    return (out_terms){out == compute ? 0.0 : 1.0, rn_dtype_unit_roundoff(out),
                       rn_dtype_underflow_eta(out)};
}

/* keep * rounding is output_rounding exactly: rounding >= 0, and where it is +Inf or NaN (m or
   err not finite) 0 * rounding is NaN where finish's 0.0 is not, but b is then NaN or +Inf either
   way, and both give +Inf. */
static inline double finish_o(double err, double m, const out_terms *o)
{
    double rounding = o->uo * (m + err) + o->eo;
    double b = (err + o->keep * rounding) * EVAL_SLACK + want_slack(m);
    return isnan(b) ? INFINITY : b;
}

/* Exact statistics of one row, each rounded once to binary64. */
typedef struct {
    double mean;     /* m = (1/n) sum x_i */
    double var;      /* v = (1/n) sum (x_i - m)^2 */
    double absmean;  /* A = (1/n) sum |x_i| */
    double absmax;   /* max |x_i| */
    double absdev;   /* Dmax = max |x_i - m| */
    double devmean;  /* D1 = (1/n) sum |x_i - m| */
    int finite;      /* all x_i finite */
} row_stats;

/* Scratch of the row statistics: d [n] and, allocated on the first row the fast path leaves,
   n + 1 MPFR numbers. */
typedef struct {
    size_t n;
    double *d;
    mpfr_t *t;
    mpfr_ptr *p;
    size_t *und; /* n: the elements of d the fast path leaves */
} stats_scratch;

static int mpfr_scratch(stats_scratch *sc)
{
    if (sc->t)
        return 1;
    sc->t = malloc((sc->n + 1) * sizeof *sc->t);
    sc->p = malloc((sc->n + 1) * sizeof *sc->p);
    if (!sc->t || !sc->p) {
        free(sc->t), free(sc->p);
        sc->t = NULL, sc->p = NULL;
        return 0;
    }
    for (size_t i = 0; i <= sc->n; i++)
        mpfr_init2(sc->t[i], EXACT_PREC);
    return 1;
}

/* The upper statistics (mean|x|, mean|x - m|) as the fast path defines them (ref/fast_dd.h,
   specs/fast-path.md §10.2): v inflated by 2^-45, rounded up to FD_STAT_BITS = 40 bits; >= v. */
static double stat_up(mpfr_srcptr v)
{
    mpfr_t w;
    mpfr_init2(w, EXACT_PREC);
    mpfr_mul_d(w, v, FD_STAT_INFLATE, MPFR_RNDN);
    mpfr_prec_round(w, FD_STAT_BITS, MPFR_RNDU);
    double r = mpfr_get_d(w, MPFR_RNDU); /* exact, or the round-up to a subnormal / +Inf */
    mpfr_clear(w);
    return r;
}

/* The statistics with MPFR at EXACT_PREC bits. */
/* m = the MPFR path's mean: RN256(RN256(sum x) / n); t[i] = x[i] (exact), p[i] = t[i]. */
static void mpfr_row_mean(mpfr_t m, const double *x, size_t n, mpfr_t *t, mpfr_ptr *p)
{
    for (size_t i = 0; i < n; i++) {
        mpfr_set_d(t[i], x[i], MPFR_RNDN);
        p[i] = t[i];
    }
    mpfr_sum(m, p, n, MPFR_RNDN);
    mpfr_div_ui(m, m, n, MPFR_RNDN);
}

/* The MPFR path's d[i] = RN64(RN256(x_i - m)) for the elements und[0..k) alone. */
static void mpfr_row_deviations(double *d, const size_t *und, size_t k, const double *x, size_t n,
                                mpfr_t *t, mpfr_ptr *p)
{
    mpfr_t m;
    mpfr_init2(m, EXACT_PREC);
    mpfr_row_mean(m, x, n, t, p);
    for (size_t j = 0; j < k; j++) {
        mpfr_sub(t[und[j]], t[und[j]], m, MPFR_RNDN);
        d[und[j]] = mpfr_get_d(t[und[j]], MPFR_RNDN);
    }
    mpfr_clear(m);
}

static void mpfr_row_stats(row_stats *st, double *d, const double *x, size_t n, mpfr_t *t,
                           mpfr_ptr *p)
{
    mpfr_t m, s;
    mpfr_inits2(EXACT_PREC, m, s, (mpfr_ptr)0);
    for (size_t i = 0; i < n; i++) {
        mpfr_set_d(t[i], fabs(x[i]), MPFR_RNDN);
        p[i] = t[i];
    }
    mpfr_sum(s, p, n, MPFR_RNDN);
    mpfr_div_ui(s, s, n, MPFR_RNDN);
    st->absmean = stat_up(s);
    mpfr_row_mean(m, x, n, t, p);
    st->mean = mpfr_get_d(m, MPFR_RNDN);
    for (size_t i = 0; i < n; i++) {
        mpfr_sub(t[i], t[i], m, MPFR_RNDN);
        d[i] = mpfr_get_d(t[i], MPFR_RNDN);
    }
    for (size_t i = 0; i < n; i++)
        mpfr_abs(t[i], t[i], MPFR_RNDN);
    mpfr_sum(s, p, n, MPFR_RNDN);
    mpfr_div_ui(s, s, n, MPFR_RNDN);
    st->devmean = stat_up(s);
    for (size_t i = 0; i < n; i++)
        mpfr_sqr(t[i], t[i], MPFR_RNDN);
    mpfr_sum(s, p, n, MPFR_RNDN);
    mpfr_div_ui(s, s, n, MPFR_RNDN);
    st->var = mpfr_get_d(s, MPFR_RNDN);
    mpfr_clears(m, s, (mpfr_ptr)0);
}

/* d[i] = x_i - m for the row (sc->d), and its statistics.  The double-double fast path
   (specs/fast-path.md §10) gives the same mean, var and d (certified to be the doubles of the
   MPFR path) and absmean, devmean at least as large, so the bound is never smaller; MPFR computes
   whatever it does not certify (and everything under RESNORM_FASTPATH=0).  0: out of memory. */
static int exact_row_stats(row_stats *st, const double *x, stats_scratch *sc)
{
    size_t n = sc->n;
    double *d = sc->d;
    st->finite = 1;
    st->absmax = st->absdev = st->devmean = 0.0;
    for (size_t i = 0; i < n; i++) {
        if (!isfinite(x[i]))
            st->finite = 0;
        if (fabs(x[i]) > st->absmax)
            st->absmax = fabs(x[i]);
    }
    if (!st->finite) {
        st->mean = st->var = st->absmean = NAN;
        return 1;
    }
    size_t k = 0;
    if (!rn_fast_enabled() || !layernorm_row_bound_stats_fast(&st->mean, &st->var, &st->absmean,
                                                              &st->devmean, d, sc->und, &k, x, n)) {
        if (!mpfr_scratch(sc))
            return 0;
        mpfr_row_stats(st, d, x, n, sc->t, sc->p);
    } else if (k) { /* the mean, var and the rest certified; these d_i as the MPFR path has them */
        if (!mpfr_scratch(sc))
            return 0;
        mpfr_row_deviations(d, sc->und, k, x, n, sc->t, sc->p);
    }
    /* fmax without the libm call (the row is finite: no NaN; both operands >= +0) */
    for (size_t i = 0; i < n; i++) {
        double a = fabs(d[i]) * (1.0 + 0x1p-52);
        st->absdev = a > st->absdev ? a : st->absdev;
    }
    return 1;
}

/* Forward error terms of one row that every element shares [§2, §3]. */
typedef struct {
    double err_mean;  /* E_m: |m_hat - m| for every admitted way of forming the mean */
    double rstd;      /* r */
    double rel_rstd;  /* R: |r_hat - r| <= R r */
} row_terms;

/* [§2] E_sum: a sum of the n inputs in any order, then a division by n or a product with
   fl(1/n): gamma_{n+1} A, plus the underflow of the division (or of fl(1/n) and the product). */
static double err_mean_sum(const row_stats *st, size_t n, double u, double eta)
{
    return gamma_k((double)n + 1, u) * st->absmean + 2.0 * eta;
}

/* [§2.1] K_n: the merge factor, sum over merge nodes of n_b / n (b the block scaled by n_b/n_nu)
   for the admitted merge trees: 1 for Welford, log2(n)/2 for merging the smaller block into the
   larger, <= log2(n)/2 + 1 for PyTorch's RowwiseMoments. */
static double merge_factor(size_t n)
{
    return 2.0 + 0.5 * log2((double)n);
}

/* [§2.1] E_W: the error of the mean of any block of a Welford / Chan merge tree over the row,
   P = (1/2) sum |d_i| bounding every partial sum of the deviations:
   E_W = (1 + gamma_{c_W}) [ u ((n+1)/2 |m| + P + 6 K_n Dmax) + gamma_65 A + 3 eta (n+1)/2 ],
   c_W = (n+1)/2 + 6 K_n (the second-order terms, E <= E1 + c_W u E). */
static double err_mean_welford(const row_stats *st, size_t n, double u, double eta)
{
    double nn = (double)n, P = 0.5 * nn * st->devmean, K = merge_factor(n);
    double first = u * (0.5 * (nn + 1.0) * fabs(st->mean) + P + 6.0 * K * st->absdev)
                   + gamma_k(65.0, u) * st->absmean + 1.5 * (nn + 1.0) * eta;
    return (1.0 + gamma_k(0.5 * (nn + 1.0) + 6.0 * K, u)) * first;
}

/* [§3] Half-widths of the interval of v_hat, as sums of non-negative terms [§6]. */
typedef struct {
    double lo, hi;  /* v_hat in [v - lo, v + hi] */
    int may_be_negative; /* the one-pass form does not clamp: v_hat + eps may be <= 0 */
} var_interval;

static void widen(var_interval *vi, double lo, double hi)
{
    vi->lo = fmax(vi->lo, lo);
    vi->hi = fmax(vi->hi, hi);
}

static var_interval variance_interval(const row_stats *st, size_t n, double e_sum, double e_w,
                                      double u, double eta, rn_profile prof)
{
    double nn = (double)n, v = st->var;
    var_interval vi = {0.0, 0.0, 0};
    /* [§3.0] two-pass with the mean off by E_m: v_hat in [v(1 - g) - n eta, (v + E_m^2)(1 + g)
       + n eta], g = gamma_{n+4}; the mean is a sum (E_sum) or, in the moments profiles, may be
       a Welford / merged mean (E_W). */
    double g = gamma_k(nn + 4.0, u);
    double e_m = prof == RN_PROFILE_TWO_PASS ? e_sum : fmax(e_sum, e_w);
    widen(&vi, v * g + nn * eta, v * g + e_m * e_m * (1.0 + g) + nn * eta);
    if (prof != RN_PROFILE_TWO_PASS) {
        /* [§3.1] Welford / Chan merge tree: W = 4 E_W D1 ln n + E_W^2 (1 + 2 log2 n);
           v_hat in [v - ((v + W) g6 + W + 2 n eta), v + (v + W) g6 + W + 2 n eta],
           g6 = gamma_{n+6}. */
        double ln_n = log(fmax(nn, 1.0)), lg_n = log2(fmax(nn, 1.0));
        double w = 4.0 * e_w * st->devmean * ln_n + e_w * e_w * (1.0 + 2.0 * lg_n);
        double g6 = gamma_k(nn + 6.0, u);
        double dw = (v + w) * g6 + w + 2.0 * nn * eta;
        widen(&vi, dw, dw);
    }
    if (prof == RN_PROFILE_RUNTIMES) {
        /* [§3.2] one pass, v_hat = fl(fl(Q/n) - fl(m_hat^2)), Q = sum x_i^2 in any order:
           V1 = gamma_{n+1} (v + m^2) + 2|m| E_sum + E_sum^2 + u (|m| + E_sum)^2 + (n + 2) eta,
           v_hat in [v - (V1 (1 + u) + u v), v + V1 (1 + u) + u v], not clamped at 0. */
        double am = fabs(st->mean);
        double v1 = gamma_k(nn + 1.0, u) * (v + am * am) + 2.0 * am * e_sum + e_sum * e_sum
                    + u * (am + e_sum) * (am + e_sum) + (nn + 2.0) * eta;
        double d1 = v1 * (1.0 + u) + u * v;
        widen(&vi, d1, d1);
        vi.may_be_negative = d1 > v;
    }
    return vi;
}

static row_terms forward_row_terms(const row_stats *st, size_t n, double eps, rn_dtype compute)
{
    double u = rn_dtype_unit_roundoff(compute), eta = rn_dtype_underflow_eta(compute);
    rn_profile prof = rn_bound_profile();
    row_terms rt;
    double e_sum = err_mean_sum(st, n, u, eta);
    double e_w = err_mean_welford(st, n, u, eta);
    rt.err_mean = prof == RN_PROFILE_TWO_PASS ? e_sum : fmax(e_sum, e_w); /* [§2, §2.1] */
    var_interval vi = variance_interval(st, n, e_sum, e_w, u, eta, prof);
    double dv_lo = vi.lo, dv_hi = vi.hi;
    double s = st->var + eps;
    if (!vi.may_be_negative && dv_lo >= st->var)
        dv_lo = st->var; /* v_hat >= 0: a sum of squares or of non-negative increments */
    rt.rstd = 1.0 / sqrt(s);
    /* [§3.3] s_hat in [s_lo, s_hi] = [(v_lo + eps)(1 - u), (v_hi + eps)(1 + u)];
       r_hat = s_hat^(-1/2) (1 + theta), |theta| <= 4u: 1/sqrt (two roundings, 2u + u^2), a
       division by sqrt, or an rsqrt within 2 ulps (2 ulps <= 4u relative).
       rho_hi - 1 = a + 4u + 4u a with a = sqrt(s/s_lo) - 1 = q/(1 + sqrt(1 + q)),
       q = (s - s_lo)/s_lo;  1 - rho_lo = (b + 4u)/sqrt(1 + q') with b = sqrt(1 + q') - 1,
       q' = (s_hi - s)/s.  All terms non-negative. */
    double s_lo = (s - dv_lo) * (1.0 - u);
    double q = (dv_lo + u * (s - dv_lo)) / s_lo;
    double a = q / (1.0 + sqrt(1.0 + q));
    double qp = (dv_hi + u * (s + dv_hi)) / s;
    double b = qp / (1.0 + sqrt(1.0 + qp));
    double four_u = 4.0 * u;
    rt.rel_rstd = fmax(a + four_u + four_u * a, (b + four_u) / sqrt(1.0 + qp));
    /* [§7] overflow of a compute-format intermediate voids the analysis: n max|x|, or the sum of
       squares (max|x| + |m|)^2 n, beyond half the format's largest value; so does an interval of
       v_hat + eps that reaches 0. */
    double big = rn_dtype_max(compute) / 2;
    double dev = st->absmax + fabs(st->mean);
    if ((double)n * st->absmax > big || dev * dev * (double)n > big || !(s_lo > 0.0) || isnan(q))
        rt.rel_rstd = INFINITY;
    return rt;
}

/* |xhat_hat_i - xhat_i| for a deviation d_i [§4]. */
static double err_xhat(double d, const row_terms *rt, double u, double eta)
{
    double f = (1.0 + u) * (1.0 + u) * (1.0 + rt->rel_rstd);
    double f_minus_1 = 2.0 * u + u * u + rt->rel_rstd * (1.0 + u) * (1.0 + u); /* no cancellation */
    return rt->rstd * (fabs(d) * f_minus_1 + rt->err_mean * f) + eta;
}

/* [§4.1] The folded affine forms y = x (r g) + (b - m (r g)) and PyTorch's (x r + (-r m)) g + b
   compute the same value as ((x - m) r) g + b up to the roundings of products of the uncentered
   x and m: u (|g| r_hi (1 + u)^2 (2 |x| + 3 (|m| + E_m)) + |b|), r_hi = r (1 + R). */
static double err_folded(double x, double g, double b, const row_terms *rt, const row_stats *st,
                         double u)
{
    double r_hi = rt->rstd * (1.0 + rt->rel_rstd);
    return u * (fabs(g) * r_hi * (1.0 + u) * (1.0 + u)
                * (2.0 * fabs(x) + 3.0 * (fabs(st->mean) + rt->err_mean)) + fabs(b));
}

/* [§4.2] An intermediate product of any association ((x - m) r, r g, (x - m) g, x (r g), m (r g))
   may underflow, by eta, and is then multiplied by at most one of |g|, r_hi, |x - m_hat|, |x|,
   |m_hat|: eta (3 + |g| + r_hi + |d| + |x| + 2 (|m| + E_m)) (1 + 2u). */
static double eta_scaled(double d, double x, double g, const row_terms *rt, const row_stats *st,
                         double eta, double u)
{
    double r_hi = rt->rstd * (1.0 + rt->rel_rstd);
    return eta * (3.0 + fabs(g) + r_hi + fabs(d) + fabs(x) + 2.0 * (fabs(st->mean) + rt->err_mean))
           * (1.0 + 2.0 * u);
}

/* [§5.4] PyTorch's CPU backward (layer_norm_kernel.cpp): ds = sum g x, db = sum g (any order),
   b = (db m_hat - ds) a^3 / n, c = -b m_hat - db a / n, dx = a dy gamma + b x + c, a = r_hat.
   Row terms: E_Q >= |Q_hat - Q| for Q = db m - ds = -B (B = sum g d), E_b >= |b_hat - b|,
   b_hi >= |b_hat|, E_K >= |fl(db a / n) - r gbar|. */
typedef struct {
    double e_b, b_hi, e_k, k_hi;
} torch_bwd;

static torch_bwd torch_backward_terms(const row_stats *st, const row_terms *rt, size_t n,
                                      double G, double gbar_m, double X, double hbar_m, double u)
{
    double nn = (double)n, r = rt->rstd, R = rt->rel_rstd;
    double am = fabs(st->mean), em = rt->err_mean;
    double gN = gamma_k(nn, u), gN1 = gamma_k(nn + 1.0, u);
    double B = nn * hbar_m / r;                              /* |sum g d| */
    double e_p = nn * gbar_m * em + gN * nn * G * (am + em); /* db_hat m_hat vs db m */
    double e_q = (e_p + u * nn * G * (1.0 + gN) * (am + em) + gN1 * nn * X) * (1.0 + u) + u * B;
    double R3 = (1.0 + R) * (1.0 + R) * (1.0 + R) * (1.0 + gamma_k(5.0, u)) - 1.0;
    torch_bwd tb;
    tb.e_b = r * r * r / nn * ((B + e_q) * R3 + e_q);
    tb.b_hi = r * r * r / nn * B + tb.e_b;
    double g3 = gamma_k(3.0, u);
    tb.e_k = r * (gbar_m * ((1.0 + R) * (1.0 + g3) - 1.0) + gN * G * (1.0 + R) * (1.0 + g3));
    tb.k_hi = r * gbar_m + tb.e_k;
    return tb;
}

/* [§5.4] |dx_hat - dx| of PyTorch's form for element i (d = x - m, g = dy gamma). */
static double err_dx_torch(const torch_bwd *tb, const row_stats *st, const row_terms *rt,
                           double d, double x, double g, double eta, double u)
{
    double r = rt->rstd, R = rt->rel_rstd, r_hi = r * (1.0 + R), g2 = gamma_k(2.0, u);
    double am = fabs(st->mean), em = rt->err_mean, ag = fabs(g), ax = fabs(x);
    double c_hi = tb->b_hi * (am + em) * (1.0 + u) + tb->k_hi;
    double e = r * ag * ((1.0 + R) * (1.0 + g2) - 1.0)        /* a dy gamma */
               + tb->e_b * fabs(d) + tb->b_hi * em + tb->e_k  /* b (x - m_hat) - K */
               + u * tb->b_hi * ax                            /* fl(b x) */
               + u * tb->b_hi * (am + em) * (1.0 + u) + u * c_hi /* fl(-b m), c */
               + u * (r_hi * ag * (1.0 + g2) + tb->b_hi * ax * (1.0 + u)); /* t1 + t2 */
    return e * (1.0 + u) * (1.0 + u) + eta * (6.0 + r_hi * (1.0 + ag) + ax + am + tb->b_hi);
}

/* [§5.5] The autograd form: B = sum g (x - m_hat), dvar = -1/2 r_hat^3 B,
   dx1_i = g_i r_hat + dvar 2 (x_i - m_hat) / n, dm = -sum dx1, dx_i = dx1_i + dm / n.
   Row terms: E_dvar >= |dvar_hat - dvar|, dvar_hi >= |dvar_hat|, and the binary64 magnitude
   B_abs >= |B| = n |hbar| / r. */
typedef struct {
    double e_dvar, dvar_hi, dvar;
} autograd_bwd;

static autograd_bwd autograd_terms(const row_terms *rt, size_t n, double G, double gbar_m,
                                   double H, double hbar_m, double u)
{
    double nn = (double)n, r = rt->rstd, R = rt->rel_rstd, em = rt->err_mean;
    double B = nn * hbar_m / r;
    double e_B = nn * gbar_m * em + gamma_k(nn + 2.0, u) * nn * (H / r + G * em);
    double R3 = (1.0 + R) * (1.0 + R) * (1.0 + R) * (1.0 + gamma_k(3.0, u)) - 1.0;
    autograd_bwd ab;
    ab.dvar = 0.5 * r * r * r * B;
    ab.e_dvar = 0.5 * r * r * r * ((B + e_B) * R3 + e_B);
    ab.dvar_hi = ab.dvar + ab.e_dvar;
    return ab;
}

/* [§5.5] |dx1_hat_i - dx1_i| and |dx1_i| (its exact magnitude bound M1_i). */
static double err_dx1_autograd(const autograd_bwd *ab, const row_terms *rt, size_t n, double d,
                               double g, double u, double *m1)
{
    double nn = (double)n, r = rt->rstd, R = rt->rel_rstd, em = rt->err_mean;
    double g2 = gamma_k(2.0, u), g3 = gamma_k(3.0, u), ad = fabs(d), ag = fabs(g);
    *m1 = r * ag + 2.0 * ab->dvar * ad / nn;
    double e = r * ag * ((1.0 + R) * (1.0 + g2) - 1.0)
               + 2.0 / nn * (ab->e_dvar * (ad + em) + ab->dvar * em + ab->dvar_hi * (ad + em) * g3);
    return e * (1.0 + u) + u * *m1;
}

static int alloc_scratch(size_t n, stats_scratch *sc)
{
    *sc = (stats_scratch){n, malloc((n ? n : 1) * sizeof *sc->d), NULL, NULL,
                          malloc((n ? n : 1) * sizeof *sc->und)};
    return sc->d && sc->und ? RN_TWIN_OK : RN_TWIN_NOMEM;
}

static void free_scratch(stats_scratch *sc)
{
    if (sc->t)
        for (size_t i = 0; i <= sc->n; i++)
            mpfr_clear(sc->t[i]);
    free(sc->d), free(sc->t), free(sc->p), free(sc->und);
}

/* FD_CLONES (ref/fast_dd.h): an AVX2 + FMA clone where the CPU has them, for wider vectors in the
   element loop; -ffp-contract=off keeps every operation rounded as written, so the same bits. */
FD_CLONES int layernorm_forward_bound(double *by, double *bmean, double *brstd, const double *x,
                            const double *gamma, const double *beta, size_t rows, size_t n,
                            double eps, rn_dtype compute, rn_dtype out)
{
    double u = rn_dtype_unit_roundoff(compute), eta = rn_dtype_underflow_eta(compute);
    const out_terms ot = out_terms_of(compute, out);
    stats_scratch sc;
    if (alloc_scratch(n, &sc))
        return RN_TWIN_NOMEM;
    const double *d = sc.d;
    for (size_t r = 0; r < rows; r++) {
        row_stats st;
        const double *xr = x + r * n;
        if (!exact_row_stats(&st, xr, &sc)) {
            free_scratch(&sc);
            return RN_TWIN_NOMEM;
        }
        if (!st.finite) { /* the exact outputs are NaN/Inf: the checker demands the same class */
            bmean[r] = brstd[r] = 0.0;
            for (size_t i = 0; i < n; i++)
                by[r * n + i] = 0.0;
            continue;
        }
        row_terms rt = forward_row_terms(&st, n, eps, compute);
        bmean[r] = finish(rt.err_mean, mag(st.mean, st.absmean), compute, out);
        brstd[r] = finish(rt.rstd * rt.rel_rstd, mag(rt.rstd, rt.rstd), compute, out);
        /* every element computed and then kept or not (0 where gamma or beta is not finite):
           no branch, so the loop vectorizes; each element's operations are unchanged */
#pragma omp simd
        for (size_t i = 0; i < n; i++) {
            double gi = gamma[i], bi = beta[i];
            /* [§4] y_hat = fl(fl(xhat_hat * gamma) + beta); any association of the three
               products, or an fma, makes no more roundings than this; plus [§4.1] the folded
               forms' extra roundings and [§4.2] the underflow of any intermediate product,
               scaled by what multiplies it later. */
            double xh = d[i] * rt.rstd;
            double ym = mag(xh * gi + bi, fabs(xh * gi) + fabs(bi));
            double T = fabs(gi) * (err_xhat(d[i], &rt, u, eta) * (1.0 + u) + u * fabs(xh))
                       + err_folded(xr[i], gi, bi, &rt, &st, u)
                       + eta_scaled(d[i], xr[i], gi, &rt, &st, eta, u);
            double e = T * (1.0 + u) + u * ym;
            double b = finish_o(e, ym, &ot);
            by[r * n + i] = isfinite(gi) & isfinite(bi) ? b : 0.0;
        }
    }
    free_scratch(&sc);
    return RN_TWIN_OK;
}

/* Row r of the backward bound [§5]: bdx's row, and the row's terms added to the column sums of
   dgamma (cg_err, cg_mag) and dbeta (cb_mag) and to the columns' non-finite flags (dg_bad,
   db_bad).  0: out of memory. */
static int backward_bound_row(double *bdx, double *cg_err, double *cg_mag, double *cb_mag,
                              unsigned char *dg_bad, unsigned char *db_bad, const double *dy,
                              const double *x, const double *gamma, size_t r, size_t n,
                              double eps, rn_dtype compute, rn_dtype out, stats_scratch *sc)
{
    double u = rn_dtype_unit_roundoff(compute), eta = rn_dtype_underflow_eta(compute);
    const double *d = sc->d;
    const double *xr = x + r * n, *dyr = dy + r * n;
    row_stats st;
    if (!exact_row_stats(&st, xr, sc))
        return 0;
    /* dx of the row needs x, dy and gamma finite everywhere in the row (gbar, hbar mix them). */
    int row_bad = !st.finite;
    for (size_t i = 0; i < n; i++) {
        cb_mag[i] += fabs(dyr[i]);
        if (!isfinite(dyr[i]))
            row_bad = db_bad[i] = dg_bad[i] = 1;
        if (!st.finite)
            dg_bad[i] = 1;
        if (!isfinite(gamma[i]))
            row_bad = 1;
    }
    if (row_bad) {
        for (size_t i = 0; i < n; i++)
            bdx[r * n + i] = 0.0;
        if (!st.finite)
            return 1;
    }
    row_terms rt = forward_row_terms(&st, n, eps, compute);
    /* [§5.1] the two row means: gbar = mean(g), hbar = mean(g xhat), and their errors. */
    double G1 = 0, gbar = 0, H1 = 0, hbar = 0, eps_h = 0, X1 = 0;
    for (size_t i = 0; i < n; i++) {
        double g = dyr[i] * gamma[i], xh = d[i] * rt.rstd;
        double dxh = err_xhat(d[i], &rt, u, eta);
        X1 += fabs(g * xr[i]);
        G1 += fabs(g);
        gbar += g;
        H1 += fabs(g * xh);
        hbar += g * xh;
        eps_h += fabs(g) * ((2.0 * u + u * u) * fabs(xh) + (1.0 + u) * (1.0 + u) * dxh) + eta;
    }
    /* binary64 sums of n non-negative terms: relative error <= gamma_n(2^-53), which the
       final EVAL_SLACK does not cover for n in the thousands: round them up [§6]. */
    double up = 1.0 + gamma_k((double)n + 1, 0x1p-53);
    G1 = G1 / n * up, H1 = H1 / n * up, eps_h = eps_h / n * up, X1 = X1 / n * up;
    /* gbar, hbar are binary64 sums of n terms: magnitudes within gamma_n of G1, H1 [§6]. */
    double gbar_m = fabs(gbar / n) + gamma_k((double)n + 1, 0x1p-53) * G1;
    double hbar_m = fabs(hbar / n) + gamma_k((double)n + 1, 0x1p-53) * H1;
    double gn = gamma_k((double)n + 2, u);
    double e_gbar = gn * G1 + eta;
    double e_hbar = eps_h * (1.0 + gn) + gn * H1 + eta;
    torch_bwd tb = torch_backward_terms(&st, &rt, n, G1 * (1.0 + 0x1p-50), gbar_m,
                                        X1 * (1.0 + 0x1p-50), hbar_m, u);
    /* [§5.5] the autograd form's dm = -sum dx1: E_dm from the row's dx1 errors. */
    autograd_bwd ab = autograd_terms(&rt, n, G1 * (1.0 + 0x1p-50), gbar_m,
                                     H1 * (1.0 + 0x1p-50), hbar_m, u);
    double sum_e1 = 0.0, sum_m1 = 0.0;
    for (size_t i = 0; i < n; i++) {
        double m1;
        sum_e1 += err_dx1_autograd(&ab, &rt, n, d[i], dyr[i] * gamma[i], u, &m1);
        sum_m1 += m1;
    }
    double gn1 = gamma_k((double)n - 1.0, u);
    double e_dm = ((sum_e1 * (1.0 + gn1) + gn1 * sum_m1) / (double)n) * (1.0 + u) * up
                  + u * rt.rstd * gbar_m;
    for (size_t i = 0; i < n; i++) {
        double g = dyr[i] * gamma[i], xh = d[i] * rt.rstd;
        double dxh = err_xhat(d[i], &rt, u, eta);
        /* [§5.2] t_i = xhat_i hbar; q_i = g_i - gbar - t_i; dx_i = q_i r. */
        double e_t = dxh * hbar_m + (fabs(xh) + dxh) * e_hbar
                     + u * (fabs(xh) + dxh) * (hbar_m + e_hbar) + eta;
        double mag_q = fabs(g) + gbar_m + fabs(xh) * hbar_m;
        double e_q = u * fabs(g) + eta + e_gbar + e_t;
        e_q += 2.0 * u * (mag_q + e_q);
        double qm = mag(g - gbar / n - xh * (hbar / n), mag_q) + gbar_m - fabs(gbar / n)
                    + fabs(xh) * (hbar_m - fabs(hbar / n));
        double e_dx = rt.rstd * e_q * (1.0 + rt.rel_rstd) * (1.0 + u)
                      + qm * rt.rstd * (rt.rel_rstd * (1.0 + u) + u) + eta;
        /* [§5.4] or PyTorch's a dy g + b x + c: whichever error is larger. */
        e_dx = fmax(e_dx, err_dx_torch(&tb, &st, &rt, d[i], xr[i], g, eta, u)
                              + qm * rt.rstd * u);
        /* [§5.5] or the autograd form: dx1_i + dm / n, one more rounding. */
        double m1, e1 = err_dx1_autograd(&ab, &rt, n, d[i], g, u, &m1);
        double r_hi = rt.rstd * (1.0 + rt.rel_rstd);
        e_dx = fmax(e_dx, (e1 + e_dm) * (1.0 + u) + qm * rt.rstd * u
                              + 2.0 * eta * (6.0 + r_hi * (1.0 + fabs(g)) + fabs(xr[i])
                                             + fabs(st.mean) + rt.err_mean + 2.0 * ab.dvar_hi));
        if (!row_bad)
            bdx[r * n + i] = finish(e_dx, qm * rt.rstd * (1.0 + 0x1p-50), compute, out);
        /* [§5.3] this row's term of dgamma_i = sum_r dy xhat, and of dbeta_i = sum_r dy. */
        cg_err[i] += fabs(dyr[i]) * (u * fabs(xh) + (1.0 + u) * dxh)
                     + eta * (1.0 + rt.rstd * (1.0 + rt.rel_rstd)); /* (dy (x - m)) r: §5.3 */
        cg_mag[i] += fabs(dyr[i] * xh);
    }
    return 1;
}

int layernorm_backward_bound_rows(double *bdx, double *cs, unsigned char *cf, const double *dy,
                                  const double *x, const double *gamma, size_t rows, size_t n,
                                  double eps, rn_dtype compute, rn_dtype out)
{
    size_t w = n ? n : 1;
    stats_scratch sc;
    if (alloc_scratch(n, &sc))
        return RN_TWIN_NOMEM;
    int ok = 1;
    for (size_t r = 0; ok && r < rows; r++)
        ok = backward_bound_row(bdx, cs, cs + w, cs + 2 * w, cf, cf + w, dy, x, gamma, r, n, eps,
                                compute, out, &sc);
    free_scratch(&sc);
    return ok ? RN_TWIN_OK : RN_TWIN_NOMEM;
}

void layernorm_backward_bound_cols(double *bdgamma, double *bdbeta, double *cs, unsigned char *cf,
                                   size_t nb, size_t rows, size_t n, rn_dtype compute,
                                   rn_dtype out)
{
    double u = rn_dtype_unit_roundoff(compute);
    size_t w = n ? n : 1;
    double *cg_err = cs, *cg_mag = cs + w, *cb_mag = cs + 2 * w;
    unsigned char *dg_bad = cf, *db_bad = cf + w;
    rn_bound_slots_add(cs, LN_BWD_BOUND_SUMS * w, cf, LN_BWD_BOUND_FLAGS * w, nb);
    /* The column sums are binary64 sums of `rows` non-negative terms (in blocks: any order of
       additions has the same bound): within gamma_rows(2^-53) relative, which the final
       EVAL_SLACK does not cover for rows in the thousands: round them up [§6]. */
    double upr = 1.0 + gamma_k((double)rows + 1, 0x1p-53);
    double g_rows = gamma_k(rows > 0 ? (double)rows - 1 : 0, u);
    for (size_t i = 0; i < n; i++) {
        double ge = cg_err[i] * upr, gm = cg_mag[i] * upr, bm = cb_mag[i] * upr;
        double e_g = ge * (1.0 + g_rows) + g_rows * gm;
        /* |exact| <= the sum of the magnitudes: a safe (if loose) magnitude for the roundings. */
        bdgamma[i] = dg_bad[i] ? 0.0 : finish(e_g, gm * (1.0 + 0x1p-50), compute, out);
        bdbeta[i] = db_bad[i] ? 0.0 : finish(g_rows * bm, bm, compute, out);
    }
}

/* The rows in blocks of rn_bound_block_rows(rows) -- a partition that depends on rows only --,
   shared out among the threads, each block summing its rows' column terms in row order into its
   own slot; the slots are then added in block order: the bounds do not depend on the threads. */
int layernorm_backward_bound(double *bdx, double *bdgamma, double *bdbeta, const double *dy,
                             const double *x, const double *gamma, size_t rows, size_t n,
                             double eps, rn_dtype compute, rn_dtype out)
{
    size_t B = rn_bound_block_rows(rows), nb = (rows + B - 1) / B, w = n ? n : 1;
    size_t ns = LN_BWD_BOUND_SUMS * w, nf = LN_BWD_BOUND_FLAGS * w;
    /* Slot b + 1: block b's column sums and non-finite flags (slot 0: their total). */
    double *cs = calloc((nb + 1) * ns, sizeof *cs);
    unsigned char *cf = calloc((nb + 1) * nf, 1);
    if (!cs || !cf) {
        free(cs), free(cf);
        return RN_TWIN_NOMEM;
    }
    int ok = 1;
    long NB = (long)nb;
#pragma omp parallel for schedule(dynamic, 1) num_threads(rn_threads_for(rows * n)) \
    reduction(&& : ok)
    for (long b = 0; b < NB; b++) {
        size_t r0 = (size_t)b * B, nr = rows - r0 < B ? rows - r0 : B;
        ok = layernorm_backward_bound_rows(bdx + r0 * n, cs + (size_t)(b + 1) * ns,
                                           cf + (size_t)(b + 1) * nf, dy + r0 * n, x + r0 * n,
                                           gamma, nr, n, eps, compute, out) == RN_TWIN_OK;
    }
    if (ok)
        layernorm_backward_bound_cols(bdgamma, bdbeta, cs, cf, nb, rows, n, compute, out);
    free(cs), free(cf);
    return ok ? RN_TWIN_OK : RN_TWIN_NOMEM;
}
