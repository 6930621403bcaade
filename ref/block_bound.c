/* The block's a-priori error bound, composed through the graph (specs/error-analysis-block.md).
 *
 * One "error-tracking" evaluation of the block in Arb balls: every intermediate is a ball that
 * contains BOTH the exact value and every value a correct implementation computing in `compute`
 * may hold there.  A stage v_out = G(v_in) is evaluated as the exact G on the input ball (Arb
 * encloses G(w) for every w in it: this propagates the upstream errors, §2) and then widened by
 * G's own rounding error (§3): the standard model per operation, γ_n·Σ|terms| for every sum and
 * dot product (any order, with or without FMA), libm's exp/erf/tanh within the errors of
 * specs/error-analysis-softmax.md and specs/ffn.h's assumptions, and LayerNorm's own bound
 * (ref/layernorm_bound.c, every variance form the default profile admits) for the norms.  At the
 * end both the exact output and the computed one lie in the output ball, so |computed - exact| <=
 * its diameter, plus want's half-ulp (§4).  Intermediates are rounded to the output dtype when it
 * is coarser than the compute dtype (an f16/bf16 pipeline stores every activation in 16 bits). */
#include "block_bound.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <arb.h>
#include <arb_hypgeom.h>

#include "bound_profile.h"
#include "layernorm_bound.h"
#include "stat_tier.h"

#define BPREC 128 /* Arb's own rounding (2^-128) is negligible beside any u; it is in the balls */

typedef struct {
    int stat;       /* 0: the rigorous tier (worst case); 1: the statistical tier's scales (§5) */
    double u;       /* unit roundoff of the compute dtype */
    double us;      /* rounding of a stored intermediate (output dtype coarser than compute), else 0 */
    rn_dtype cd, sd; /* compute dtype; the dtype intermediates are stored in */
} ectx;

/* ---------------------------------------------------------------- the standard model on balls */

static double up(double v) { return v * (1.0 + 0x1p-50); }

/* γ_n = n·u/(1 - n·u), rounded up; +Inf when n·u >= 1/2 (the analysis says nothing). */
static double gam(const ectx *E, double n)
{
    double nu = n * E->u;
    return nu < 0.5 ? up(nu / (1.0 - nu)) : INFINITY;
}

/* An upper bound of |v| (a double, rounded up). */
static double aub(const arb_t v)
{
    arf_t t;
    arf_init(t);
    arb_get_abs_ubound_arf(t, v, 64);
    double r = arf_get_d(t, ARF_RND_UP);
    arf_clear(t);
    return r;
}

static void absv(double *a, arb_srcptr v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        a[i] = aub(v + i);
}

/* The ball's radius grows by e >= 0 (rounded up; +Inf or NaN: the ball becomes unbounded). */
static void widen(arb_t v, double e)
{
    if (e == 0.0)
        return;
    mag_t m;
    mag_init(m);
    if (e > 0.0 && isfinite(e))
        mag_set_d(m, e);
    else
        mag_inf(m);
    mag_add(arb_radref(v), arb_radref(v), m);
    mag_clear(m);
}

/* Widen by rel·|v| (one rounding of relative size rel). */
static void widen_rel(arb_t v, double rel) { widen(v, up(rel * aub(v))); }

/* An intermediate stored in the storage dtype. */
static void store(const ectx *E, arb_ptr v, size_t n)
{
    if (E->us > 0)
        for (size_t i = 0; i < n; i++)
            widen_rel(v + i, E->us);
}

/* Σ a[i·as]·b[i·bs] (+ c) in binary64, rounded up to an upper bound (nonnegative terms). */
static double abs_dot(const double *a, size_t as, const double *b, size_t bs, size_t n, double c)
{
    double s = c;
    for (size_t i = 0; i < n; i++)
        s += a[i * as] * b[i * bs];
    return s * (1.0 + (double)(n + 2) * 0x1p-52);
}

/* A sum of k terms' own error in the statistical tier (§5): sqrt(k)·u·Σ|terms| (Higham & Mary's
   probabilistic γ̃_k, λ applied once at the end). */
static double own_sum_stat(const ectx *E, double k, double sum_abs) { return sqrt(k) * E->u * sum_abs; }

/* r = init + Σ x[i·xs]·y[i·ys], exact on the balls, widened by γ_{n(+1)}·(|init| + Σ|x||y|) with
   ax, ay the magnitudes' upper bounds. */
static void wdot(arb_t r, const arb_t init, arb_srcptr x, size_t xs, const double *ax,
                 const double *rx, arb_srcptr y, size_t ys, const double *ay, const double *ry,
                 size_t n, const ectx *E)
{
    arb_dot(r, init, 0, x, (slong)xs, y, (slong)ys, (slong)n, BPREC);
    double s = abs_dot(ax, xs, ay, ys, n, init ? aub(init) : 0.0);
    double k = (double)n + (init ? 1 : 0);
    if (!E->stat) {
        widen(r, up(gam(E, k) * s));
        return;
    }
    /* statistical tier (§5): the upstream errors of the terms combine as independent, mean-zero
       errors, sqrt(Σ (|y|·r_x + |x|·r_y)²) (plus the init's), and the sum's own error is
       sqrt(k)·u·Σ|x·y| (Higham & Mary): both scales, the tier's λ is applied at the end */
    double q = init ? mag_get_d(arb_radref(init)) : 0.0;
    q *= q;
    for (size_t i = 0; i < n; i++) {
        double t = ay[i * ys] * rx[i * xs] + ax[i * xs] * ry[i * ys];
        q += t * t;
    }
    mag_set_d(arb_radref(r), up(sqrt(q) * (1.0 + (double)(n + 2) * 0x1p-52) + own_sum_stat(E, k, s)));
}

/* A tensor as balls with the magnitudes' upper bounds beside them. */
typedef struct {
    arb_ptr v;
    double *a, *r; /* upper bounds of |v|, and the balls' radii */
    size_t n;
} tens;

static int tens_init(tens *t, size_t n)
{
    t->n = n;
    t->v = _arb_vec_init((slong)(n ? n : 1));
    t->a = malloc((n ? n : 1) * sizeof *t->a);
    t->r = calloc(n ? n : 1, sizeof *t->r);
    return t->a && t->r ? 0 : -1;
}

static void tens_clear(tens *t)
{
    if (t->v)
        _arb_vec_clear(t->v, (slong)(t->n ? t->n : 1));
    free(t->a), free(t->r);
    t->v = NULL, t->a = NULL, t->r = NULL;
}

static void tens_mags(tens *t)
{
    absv(t->a, t->v, t->n);
    for (size_t i = 0; i < t->n; i++)
        t->r[i] = mag_get_d(arb_radref(t->v + i));
}

/* A tensor of the exact values d[0 .. n-1]; d == NULL (an optional bias the sublayer ops may
   omit): a tensor of 0 elements, which lin_fwd reads as "no bias". */
static int tens_from(tens *t, const double *d, size_t n)
{
    if (!d)
        n = 0;
    if (tens_init(t, n) != 0)
        return -1;
    for (size_t i = 0; i < n; i++)
        arb_set_d(t->v + i, d[i]), t->a[i] = fabs(d[i]);
    return 0;
}

/* y[r, j] = b[j] + Σ_k x[r, k]·W[j, k]   (x [R, in], W [out, in]; the linear layer). */
static void lin_fwd(arb_ptr y, const tens *x, const tens *W, const tens *b, size_t R, size_t in,
                    size_t out, const ectx *E)
{
    for (size_t r = 0; r < R; r++)
        for (size_t j = 0; j < out; j++)
            wdot(y + r * out + j, b && b->n ? b->v + j : NULL, x->v + r * in, 1, x->a + r * in, x->r + r * in, W->v + j * in, 1, W->a + j * in, W->r + j * in, in, E);
}

/* The linear layer's backward: dx[r, k] = Σ_j g[r, j]·W[j, k] (dx may be NULL),
   dW[j, k] = Σ_r g[r, j]·x[r, k] (may be NULL: nothing downstream reads it, and at GPT-2 width its
   7 M sums are most of the backward's cost), db[j] = Σ_r g[r, j] (overwritten). */
static void lin_bwd(arb_ptr dx, arb_ptr dW, arb_ptr db, const tens *g, const tens *x,
                    const tens *W, const tens *ones, size_t R, size_t in, size_t out,
                    const ectx *E)
{
    if (dx)
        for (size_t r = 0; r < R; r++)
            for (size_t k = 0; k < in; k++)
                wdot(dx + r * in + k, NULL, g->v + r * out, 1, g->a + r * out, g->r + r * out, W->v + k, in, W->a + k, W->r + k, out, E);
    for (size_t j = 0; j < out; j++) {
        if (dW)
            for (size_t k = 0; k < in; k++)
                wdot(dW + j * in + k, NULL, g->v + j, out, g->a + j, g->r + j, x->v + k, in, x->a + k, x->r + k, R, E);
        wdot(db + j, NULL, g->v + j, out, g->a + j, g->r + j, ones->v, 0, ones->a, ones->r, R, E);
    }
}

/* y = v·mask·scale: fl(1/(1 - p)) and two products: γ_3·|y| (a copy without mask). */
static void wdrop(arb_ptr y, arb_srcptr v, const double *mask, const arb_t scale, size_t n,
                  const ectx *E)
{
    for (size_t i = 0; i < n; i++) {
        if (!mask) {
            arb_set(y + i, v + i);
        } else if (mask[i] == 0.0) {
            arb_zero(y + i);
        } else {
            arb_mul(y + i, v + i, scale, BPREC);
            widen_rel(y + i, gam(E, 3));
        }
    }
}

/* y = a + b, one rounding. */
static void wadd(arb_ptr y, arb_srcptr a, arb_srcptr b, size_t n, const ectx *E)
{
    for (size_t i = 0; i < n; i++) {
        arb_add(y + i, a + i, b + i, BPREC);
        widen_rel(y + i, E->u);
    }
}

/* ---------------------------------------------------------------- LayerNorm: propagation + its own bound */

static void mids(double *m, arb_srcptr v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        m[i] = arf_get_d(arb_midref(v + i), ARF_RND_NEAR);
}

/* c = the centres of v as exact balls (radius 0): the point the statistical tier linearizes at. */
static void centres(arb_ptr c, arb_srcptr v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        arf_set(arb_midref(c + i), arb_midref(v + i)), mag_zero(arb_radref(c + i));
}

/* Σ_j J_ij²·r_j² for LayerNorm's Jacobian J_ij = δ_ij - (1 + xh_i·xh_j)/n at the row xh and input
   error scales r (O(n) per element); shared by the forward's and the backward's linearization. */
static double ln_jac_sumsq(const double *xh, const double *r, size_t n, size_t i)
{
    double q = 0;
    for (size_t j = 0; j < n; j++) {
        double J = (i == j ? 1.0 : 0.0) - (1.0 + xh[i] * xh[j]) / (double)n;
        q += J * J * r[j] * r[j];
    }
    return q;
}

/* Statistical tier (§5): LayerNorm's propagation linearized, with its structure.  At the exact
   row, dxh_i = rstd·Σ_j J_ij·dx_j with J_ij = δ_ij - (1 + xh_i·xh_j)/n (dxh = rstd·(dx - mean(dx)
   - xh·mean(xh·dx))); with independent input errors of scales r_j its scale is exactly
   σ(dxh_i) = rstd·sqrt(Σ_j J_ij² r_j²), summed here as non-negative terms (O(n²) per row), and
   σ(drstd) = rstd²·sqrt(Σ_j xh_j² r_j²)/n.  (This replaced the upper bound
   rstd·sqrt(r_i² + 2(1 + xh_i²)·Σ_j (1 + xh_j²) r_j²/n²), 1.3-2x larger at n = 8 for equal r_j
   and |xh_i| <= 1.4 (~1 + 2.5(1 + xh_i²)/n for large n), a factor
   that compounds over a stack's norms.  Interval arithmetic instead adds the mean's and rstd's
   radii to every element: a factor ~2-5 per norm.) */
static int ln_fwd_stat(arb_ptr y, arb_ptr xh, arb_ptr rstd, arb_srcptr v, const double *g,
                       const double *b, size_t R, size_t n, const arb_t eps)
{
    double *rr = malloc((n ? n : 1) * sizeof *rr), *xx = malloc((n ? n : 1) * sizeof *xx);
    if (!rr || !xx) {
        free(rr), free(xx);
        return RN_TWIN_NOMEM;
    }
    arb_ptr vm = _arb_vec_init((slong)(R * n));
    centres(vm, v, R * n);
    block_ln_arb_forward(y, xh, rstd, vm, g, b, R, n, eps, BPREC);
    for (size_t r = 0; r < R; r++) {
        double T = 0, rs = arf_get_d(arb_midref(rstd + r), ARF_RND_NEAR);
        for (size_t j = 0; j < n; j++) {
            rr[j] = mag_get_d(arb_radref(v + r * n + j));
            xx[j] = arf_get_d(arb_midref(xh + r * n + j), ARF_RND_NEAR);
            T += xx[j] * xx[j] * rr[j] * rr[j];
        }
        for (size_t i = 0; i < n; i++) {
            double sig = up(rs * sqrt(ln_jac_sumsq(xx, rr, n, i)) * (1.0 + (double)(n + 4) * 0x1p-52));
            widen(xh + r * n + i, sig);
            widen(y + r * n + i, up(fabs(g[i]) * sig));
        }
        widen(rstd + r, up(rs * rs * sqrt(T) / (double)n));
    }
    free(rr), free(xx);
    _arb_vec_clear(vm, (slong)(R * n));
    return 0;
}

/* The norm's own error is LayerNorm's a-priori bound evaluated at the exact intermediate (its
   variation over the ball is second order: §3.1, with the slack factor 17/16). */
#define LN_SLACK 1.0625

/* Statistical tier (§5): LayerNorm's own error as the norms' statistical tier models a correct
   implementation (specs/statistical-tier.md §3.5: the row-shared errors of the mean and rstd
   along their directions, plus each element's own roundings; any summation order, Welford and
   Chan merges, a 2-ulp rsqrt, the folded affine form), where that model holds: its scales
   replace the worst-case bound element by element, never above it.  Not under --profile
   runtimes: the one-pass variance that profile admits is outside the model (its §5). */
static int ln_own_stat(const ectx *E) { return E->stat && rn_bound_profile() != RN_PROFILE_RUNTIMES; }

/* The norms' tier's view of one LayerNorm of the graph: rows x n at the exact intermediate x, in
   the compute dtype, its output stored in E->sd. */
static st_problem ln_problem(const double *x, const double *g, const double *b, const double *dy,
                             size_t R, size_t n, double eps, const ectx *E)
{
    st_problem q = {0};
    q.rows = R, q.n = n, q.x = x, q.gamma = g, q.beta = b, q.dy = dy, q.eps = eps;
    q.u = E->u, q.u_out = E->us;
    q.eta = rn_dtype_underflow_eta(E->cd), q.eta_out = rn_dtype_underflow_eta(E->sd);
    return q;
}

/* by = min(by, the tier's scales of y) at the centres x (y: the exact row's balls). */
static int ln_fwd_own_stat(double *by, const double *x, arb_srcptr y, const double *g,
                           const double *b, size_t R, size_t n, double eps, const ectx *E)
{
    double *sy = malloc((R * n + 1) * sizeof *sy), *w = malloc((R * n + 1) * sizeof *w);
    st_problem q = ln_problem(x, g, b, NULL, R, n, eps, E);
    int rc = RN_TWIN_NOMEM;
    if (sy && w) {
        mids(w, y, R * n);
        rc = st_layernorm_y_scales(&q, w, sy) == 0 ? 0 : RN_TWIN_NOMEM;
    }
    for (size_t i = 0; rc == 0 && i < R * n; i++)
        by[i] = fmin(by[i], sy[i]);
    free(sy), free(w);
    return rc;
}

/* bdx, bdg, bdb = min(themselves, the tier's scales of dx, dgamma, dbeta) at the centres dy, x
   (dx: the exact backward's balls). */
static int ln_bwd_own_stat(double *bdx, double *bdg, double *bdb, const double *dy, const double *x,
                           arb_srcptr dx, const double *g, size_t R, size_t n, double eps,
                           const ectx *E)
{
    double *sdx = malloc((R * n + 1) * sizeof *sdx), *w = malloc((R * n + 1) * sizeof *w),
           *sdg = malloc((n ? n : 1) * sizeof *sdg), *sdb = malloc((n ? n : 1) * sizeof *sdb);
    st_problem q = ln_problem(x, g, NULL, dy, R, n, eps, E);
    int rc = RN_TWIN_NOMEM;
    if (sdx && w && sdg && sdb) {
        mids(w, dx, R * n);
        rc = st_layernorm_bwd_scales(&q, w, sdx, sdg, sdb) == 0 ? 0 : RN_TWIN_NOMEM;
    }
    for (size_t i = 0; rc == 0 && i < R * n; i++)
        bdx[i] = fmin(bdx[i], sdx[i]);
    for (size_t i = 0; rc == 0 && i < n; i++)
        bdg[i] = fmin(bdg[i], sdg[i]), bdb[i] = fmin(bdb[i], sdb[i]);
    free(sdx), free(w), free(sdg), free(sdb);
    return rc;
}

static int wln_fwd(arb_ptr y, arb_ptr xh, arb_ptr rstd, arb_srcptr v, const double *g,
                   const double *b, size_t R, size_t n, const arb_t eps, double epsd, const ectx *E)
{
    double *xm = malloc(R * n * sizeof *xm), *by = malloc(R * n * sizeof *by),
           *bm = malloc(R * sizeof *bm), *br = malloc(R * sizeof *br);
    int rc = RN_TWIN_NOMEM;
    if (!xm || !by || !bm || !br)
        goto out;
    if (E->stat) {
        if ((rc = ln_fwd_stat(y, xh, rstd, v, g, b, R, n, eps)) != 0)
            goto out;
    } else {
        block_ln_arb_forward(y, xh, rstd, v, g, b, R, n, eps, BPREC);
    }
    mids(xm, v, R * n);
    if ((rc = layernorm_forward_bound(by, bm, br, xm, g, b, R, n, epsd, E->cd, E->sd)) != 0)
        goto out;
    if (ln_own_stat(E) && (rc = ln_fwd_own_stat(by, xm, y, g, b, R, n, epsd, E)) != 0)
        goto out;
    for (size_t i = 0; i < R * n; i++)
        widen(y + i, up(LN_SLACK * by[i]));
out:
    free(xm), free(by), free(bm), free(br);
    return rc;
}

/* Statistical tier (§5): LayerNorm's backward propagation linearized, as ln_fwd_stat does for the
   forward.  With gv = dy·γ, m1 = mean(gv), m2 = mean(gv·xh), dx_i = rstd·(gv_i - m1 - xh_i·m2), at
   the exact point:
     ∂dx_i/∂gv_j  = rstd·J_ij,  J_ij = δ_ij - (1 + xh_i·xh_j)/n      (the forward's J)
     ∂dx_i/∂xh_j  = -rstd·(δ_ij·m2 + xh_i·gv_j/n)
     ∂dx_i/∂rstd  = dx_i/rstd.
   Within each group the input errors are independent (the tier's model), so a group's scale is the
   root sum of squares; the three groups (dy's errors, xh's, rstd's) are added, not combined,
   because xh's and rstd's errors share their source (the norm's input) and dy's may too: σ(a + b)
   <= σ(a) + σ(b) whatever the correlation.  xh's group uses the upper bound
   (|m2| + |xh_i·gv_i|/n)²·r_i² + (xh_i/n)²·Σ_j gv_j²·r_j² (the j = i term counted twice).
   dγ_i += Σ_rows dy·xh and dβ_i += Σ_rows dy: the rows' errors combine as root sums of squares.
   Interval arithmetic instead adds |m1|'s and |m2|'s radii (sums of n radii) to every element and
   the rows' radii linearly: ~3x per norm, compounding over a stack's norms (measured on a post-LN
   stack of 2: the relative radius grew ~3-4x across each of the five backward norms). */
static int ln_bwd_stat(arb_ptr dx, arb_ptr dg, arb_ptr db, arb_srcptr dy, arb_srcptr xh,
                       arb_srcptr rstd, const double *g, size_t R, size_t n, arb_ptr gv)
{
    double *rg = malloc((n ? n : 1) * sizeof *rg), *rx = malloc((n ? n : 1) * sizeof *rx),
           *xx = malloc((n ? n : 1) * sizeof *xx), *gg = malloc((n ? n : 1) * sizeof *gg),
           *qg = calloc(n ? n : 1, sizeof *qg), *qb = calloc(n ? n : 1, sizeof *qb);
    if (!rg || !rx || !xx || !gg || !qg || !qb) {
        free(rg), free(rx), free(xx), free(gg), free(qg), free(qb);
        return RN_TWIN_NOMEM;
    }
    arb_ptr dym = _arb_vec_init((slong)(R * n)), xhm = _arb_vec_init((slong)(R * n)),
            rsm = _arb_vec_init((slong)R), dgn = _arb_vec_init((slong)n), dbn = _arb_vec_init((slong)n);
    centres(dym, dy, R * n), centres(xhm, xh, R * n), centres(rsm, rstd, R);
    block_ln_arb_backward(dx, dgn, dbn, dym, xhm, rsm, g, R, n, gv, BPREC);
    for (size_t r = 0; r < R; r++) {
        double rs = arf_get_d(arb_midref(rstd + r), ARF_RND_NEAR);
        double rr = mag_get_d(arb_radref(rstd + r)), m2 = 0, T = 0;
        for (size_t j = 0; j < n; j++) {
            double dyj = arf_get_d(arb_midref(dy + r * n + j), ARF_RND_NEAR);
            double rdy = mag_get_d(arb_radref(dy + r * n + j));
            rg[j] = fabs(g[j]) * rdy;
            rx[j] = mag_get_d(arb_radref(xh + r * n + j));
            xx[j] = arf_get_d(arb_midref(xh + r * n + j), ARF_RND_NEAR);
            gg[j] = dyj * g[j];
            m2 += gg[j] * xx[j];
            T += gg[j] * gg[j] * rx[j] * rx[j];
            double ty = fabs(xx[j]) * rdy + fabs(dyj) * rx[j];
            qg[j] += ty * ty;
            qb[j] += rdy * rdy;
        }
        m2 /= (double)n;
        for (size_t i = 0; i < n; i++) {
            double q = ln_jac_sumsq(xx, rg, n, i);
            double a = fabs(m2) + fabs(xx[i] * gg[i]) / (double)n, c = fabs(xx[i]) / (double)n;
            double sx = sqrt(a * a * rx[i] * rx[i] + c * c * T);
            double sr = fabs(arf_get_d(arb_midref(dx + r * n + i), ARF_RND_NEAR)) / rs * rr;
            widen(dx + r * n + i, up((rs * (sqrt(q) + sx) + sr) * (1.0 + (double)(n + 8) * 0x1p-52)));
        }
    }
    for (size_t i = 0; i < n; i++) {
        widen(dgn + i, up(sqrt(qg[i]) * (1.0 + (double)(R + 4) * 0x1p-52)));
        widen(dbn + i, up(sqrt(qb[i]) * (1.0 + (double)(R + 4) * 0x1p-52)));
        arb_add(dg + i, dg + i, dgn + i, BPREC), arb_add(db + i, db + i, dbn + i, BPREC);
    }
    free(rg), free(rx), free(xx), free(gg), free(qg), free(qb);
    _arb_vec_clear(dym, (slong)(R * n)), _arb_vec_clear(xhm, (slong)(R * n));
    _arb_vec_clear(rsm, (slong)R), _arb_vec_clear(dgn, (slong)n), _arb_vec_clear(dbn, (slong)n);
    return 0;
}

/* dx (overwritten), dγ, dβ (accumulated) at the LN input v (balls, its cache xh, rstd). */
static int wln_bwd(arb_ptr dx, arb_ptr dg, arb_ptr db, arb_srcptr dy, arb_srcptr v, arb_srcptr xh,
                   arb_srcptr rstd, const double *g, size_t R, size_t n, double epsd,
                   const ectx *E)
{
    double *xm = malloc(R * n * sizeof *xm), *dm = malloc(R * n * sizeof *dm),
           *bdx = malloc(R * n * sizeof *bdx), *bdg = malloc(n * sizeof *bdg),
           *bdb = malloc(n * sizeof *bdb);
    arb_ptr gv = _arb_vec_init((slong)n);
    int rc = RN_TWIN_NOMEM;
    if (!xm || !dm || !bdx || !bdg || !bdb)
        goto out;
    if (E->stat) {
        if ((rc = ln_bwd_stat(dx, dg, db, dy, xh, rstd, g, R, n, gv)) != 0)
            goto out;
    } else {
        block_ln_arb_backward(dx, dg, db, dy, xh, rstd, g, R, n, gv, BPREC);
    }
    mids(xm, v, R * n);
    mids(dm, dy, R * n);
    if ((rc = layernorm_backward_bound(bdx, bdg, bdb, dm, xm, g, R, n, epsd, E->cd, E->sd)) != 0)
        goto out;
    if (ln_own_stat(E) && (rc = ln_bwd_own_stat(bdx, bdg, bdb, dm, xm, dx, g, R, n, epsd, E)) != 0)
        goto out;
    for (size_t i = 0; i < R * n; i++)
        widen(dx + i, up(LN_SLACK * bdx[i]));
    for (size_t i = 0; i < n; i++)
        widen(dg + i, up(LN_SLACK * bdg[i])), widen(db + i, up(LN_SLACK * bdb[i]));
out:
    _arb_vec_clear(gv, (slong)n);
    free(xm), free(dm), free(bdx), free(bdg), free(bdb);
    return rc;
}

/* ---------------------------------------------------------------- the layer's parameters as balls */

typedef struct {
    tens in_w, in_b, out_w, out_b, w1, b1, w2, b2;
} lparams;

static int lp_init(lparams *P, const block_layer *L, size_t d, size_t ff)
{
    memset(P, 0, sizeof *P);
    return tens_from(&P->in_w, L->in_w, 3 * d * d) || tens_from(&P->in_b, L->in_b, 3 * d) ||
           tens_from(&P->out_w, L->out_w, d * d) || tens_from(&P->out_b, L->out_b, d) ||
           tens_from(&P->w1, L->w1, ff * d) || tens_from(&P->b1, L->b1, ff) ||
           tens_from(&P->w2, L->w2, d * ff) || tens_from(&P->b2, L->b2, d);
}

static void lp_clear(lparams *P)
{
    tens_clear(&P->in_w), tens_clear(&P->in_b), tens_clear(&P->out_w), tens_clear(&P->out_b);
    tens_clear(&P->w1), tens_clear(&P->b1), tens_clear(&P->w2), tens_clear(&P->b2);
}

/* Everything of one bound evaluation. */
typedef struct {
    const block_args *B;
    ectx E;
    size_t R, d, ff, S, H, dh;
    arb_t eps, scale, iscale; /* eps, 1/(1 - p), 1/sqrt(dh) */
    tens ones;                /* [max(R, S)] exact ones (the column sums) */
} bctx;

/* ---------------------------------------------------------------- attention (§3.3) */

typedef struct {
    tens in, qkv, P, A, ctx; /* input [R, d]; qkv [R, 3d] (q scaled); P, A [B, H, S, S]; ctx [R, d] */
} acache;

static int ac_init(acache *c, const bctx *X)
{
    size_t R = X->R, d = X->d, PP = X->B->batch * X->H * X->S * X->S;
    memset(c, 0, sizeof *c);
    return tens_init(&c->in, R * d) || tens_init(&c->qkv, R * 3 * d) || tens_init(&c->P, PP) ||
           tens_init(&c->A, PP) || tens_init(&c->ctx, R * d);
}

static void ac_clear(acache *c)
{
    tens_clear(&c->in), tens_clear(&c->qkv), tens_clear(&c->P), tens_clear(&c->A);
    tens_clear(&c->ctx);
}

static int live(const bctx *X, size_t b, size_t i, size_t j)
{
    const block_args *B = X->B;
    return !(B->causal && j > i) && !(B->kpm && B->kpm[b * X->S + j] != 0.0);
}

/* One softmax row over the live keys (max subtracted): e_k = exp(s_k - m) with the subtraction's
   rounding (u·|s_k - m|) and exp's 2u, the sum's γ_{L-1}, the quotient's u
   (specs/error-analysis-softmax.md §2-§3). */
static void softmax_row_balls(arb_ptr P, arb_srcptr s, const int *alive, size_t n, const ectx *E)
{
    double m = -INFINITY;
    size_t L = 0;
    for (size_t k = 0; k < n; k++)
        if (alive[k]) {
            double v = arf_get_d(arb_midref(s + k), ARF_RND_NEAR);
            m = v > m ? v : m, L++;
        }
    arb_t t, sum;
    arb_init(t), arb_init(sum);
    arb_zero(sum);
    double asum = 0;
    for (size_t k = 0; k < n; k++) {
        if (!alive[k]) {
            arb_zero(P + k);
            continue;
        }
        arb_set_d(t, m);
        arb_sub(t, s + k, t, BPREC);
        widen_rel(t, E->u);
        arb_exp(P + k, t, BPREC);
        widen_rel(P + k, 2 * E->u);
        arb_add(sum, sum, P + k, BPREC);
        asum += aub(P + k);
    }
    widen(sum, up(gam(E, (double)(L > 1 ? L - 1 : 0)) * up(asum * (1.0 + (double)(n + 2) * 0x1p-52))));
    for (size_t k = 0; k < n; k++)
        if (alive[k]) {
            arb_div(P + k, P + k, sum, BPREC);
            widen_rel(P + k, E->u);
        }
    arb_clear(t), arb_clear(sum);
}

/* The softmax row on the balls s.  Rigorous tier: interval arithmetic throughout.  Statistical
   tier (§5): the row at the exact scores (the stages' own errors as above), then the scores'
   errors propagated by the softmax's exact linearization, dP_j = P_j·(ds_j - Σ_k P_k·ds_k) (the
   max's shift cancels): with independent errors of scales r_k, σ(P_j) = P_j·sqrt((1 - P_j)²·r_j²
   + Σ_{k≠j} P_k²·r_k²), bounded here by P_j·sqrt((1 - P_j)²·r_j² + Σ_k P_k²·r_k²).  Interval
   arithmetic instead adds the radii of s_j, of the max and of the denominator (the same errors
   counted three or four times) to every P_j. */
static void wsoftmax_row(arb_ptr P, arb_srcptr s, const int *alive, size_t n, const ectx *E)
{
    if (!E->stat) {
        softmax_row_balls(P, s, alive, n, E);
        return;
    }
    arb_ptr sm = _arb_vec_init((slong)n);
    centres(sm, s, n);
    softmax_row_balls(P, sm, alive, n, E);
    double Q = 0;
    for (size_t k = 0; k < n; k++)
        if (alive[k]) {
            double pk = arf_get_d(arb_midref(P + k), ARF_RND_NEAR), rk = mag_get_d(arb_radref(s + k));
            Q += pk * pk * rk * rk;
        }
    for (size_t j = 0; j < n; j++)
        if (alive[j]) {
            double pj = arf_get_d(arb_midref(P + j), ARF_RND_NEAR), rj = mag_get_d(arb_radref(s + j));
            double a = (1.0 - pj) * rj;
            widen(P + j, up(fabs(pj) * sqrt(a * a + Q) * (1.0 + (double)(n + 6) * 0x1p-52)));
        }
    _arb_vec_clear(sm, (slong)n);
}

/* y [R, d] = attention(c->in), filling the cache. */
static int watt_fwd(arb_ptr y, acache *c, const lparams *W, const block_layer *L, const bctx *X)
{
    size_t R = X->R, d = X->d, S = X->S, H = X->H, dh = X->dh, Bn = X->B->batch;
    const ectx *E = &X->E;
    int *alive = malloc(S * sizeof *alive);
    arb_ptr s = _arb_vec_init((slong)S);
    if (!alive) {
        _arb_vec_clear(s, (slong)S);
        return RN_TWIN_NOMEM;
    }
    tens_mags(&c->in);
    lin_fwd(c->qkv.v, &c->in, &W->in_w, &W->in_b, R, d, 3 * d, E);
    store(E, c->qkv.v, R * 3 * d);
    for (size_t r = 0; r < R; r++) /* q·fl(1/sqrt(dh)): two roundings */
        for (size_t k = 0; k < d; k++) {
            arb_mul(c->qkv.v + r * 3 * d + k, c->qkv.v + r * 3 * d + k, X->iscale, BPREC);
            widen_rel(c->qkv.v + r * 3 * d + k, gam(E, 2));
        }
    tens_mags(&c->qkv);
    for (size_t b = 0; b < Bn; b++)
        for (size_t h = 0; h < H; h++)
            for (size_t i = 0; i < S; i++) {
                size_t qi = (b * S + i) * 3 * d + h * dh;
                for (size_t j = 0; j < S; j++) {
                    alive[j] = live(X, b, i, j);
                    size_t kj = (b * S + j) * 3 * d + d + h * dh;
                    if (alive[j])
                        wdot(s + j, NULL, c->qkv.v + qi, 1, c->qkv.a + qi, c->qkv.r + qi, c->qkv.v + kj, 1, c->qkv.a + kj, c->qkv.r + kj, dh, E);
                }
                size_t pi = ((b * H + h) * S + i) * S;
                wsoftmax_row(c->P.v + pi, s, alive, S, E);
                store(E, c->P.v + pi, S);
                wdrop(c->A.v + pi, c->P.v + pi, L->amask ? L->amask + pi : NULL, X->scale, S, E);
            }
    tens_mags(&c->P), tens_mags(&c->A);
    for (size_t b = 0; b < Bn; b++) /* ctx[b, i, h·dh + k] = Σ_j A[b, h, i, j]·v[b, j, h·dh + k] */
        for (size_t h = 0; h < H; h++)
            for (size_t i = 0; i < S; i++)
                for (size_t k = 0; k < dh; k++) {
                    size_t pi = ((b * H + h) * S + i) * S, vj = b * S * 3 * d + 2 * d + h * dh + k;
                    wdot(c->ctx.v + (b * S + i) * d + h * dh + k, NULL, c->A.v + pi, 1, c->A.a + pi, c->A.r + pi, c->qkv.v + vj, 3 * d, c->qkv.a + vj, c->qkv.r + vj, S, E);
                }
    store(E, c->ctx.v, R * d);
    tens_mags(&c->ctx);
    lin_fwd(y, &c->ctx, &W->out_w, &W->out_b, R, d, d, E);
    store(E, y, R * d);
    free(alive);
    _arb_vec_clear(s, (slong)S);
    return 0;
}

/* The attention's backward given dY [R, d] (balls): dx (overwritten) and the parameter gradients
   into G (balls: in_w, in_b, out_w, out_b). */
static int watt_bwd(arb_ptr dx, arb_ptr gin_w, arb_ptr gin_b, arb_ptr gout_w, arb_ptr gout_b,
                    tens *dY, const acache *c, const lparams *W, const block_layer *L,
                    const bctx *X)
{
    size_t R = X->R, d = X->d, S = X->S, H = X->H, dh = X->dh, Bn = X->B->batch;
    const ectx *E = &X->E;
    tens dctx, dqkv, dP, dS;
    size_t PP = Bn * H * S * S;
    if (tens_init(&dctx, R * d) || tens_init(&dqkv, R * 3 * d) || tens_init(&dP, PP) ||
        tens_init(&dS, PP)) {
        tens_clear(&dctx), tens_clear(&dqkv), tens_clear(&dP), tens_clear(&dS);
        return RN_TWIN_NOMEM;
    }
    arb_t t;
    arb_init(t);
    tens_mags(dY);
    lin_bwd(dctx.v, gout_w, gout_b, dY, &c->ctx, &W->out_w, &X->ones, R, d, d, E);
    store(E, dctx.v, R * d);
    tens_mags(&dctx);
    for (size_t b = 0; b < Bn; b++)
        for (size_t h = 0; h < H; h++)
            for (size_t i = 0; i < S; i++) {
                size_t pi = ((b * H + h) * S + i) * S, ci = (b * S + i) * d + h * dh;
                for (size_t j = 0; j < S; j++) { /* dA_ij = dctx_i·v_j, then the dropout mask */
                    size_t vj = (b * S + j) * 3 * d + 2 * d + h * dh;
                    if (!live(X, b, i, j)) {
                        arb_zero(dP.v + pi + j);
                        continue;
                    }
                    wdot(dP.v + pi + j, NULL, dctx.v + ci, 1, dctx.a + ci, dctx.r + ci, c->qkv.v + vj, 1, c->qkv.a + vj, c->qkv.r + vj, dh, E);
                }
                wdrop(dP.v + pi, dP.v + pi, L->amask ? L->amask + pi : NULL, X->scale, S, E);
            }
    tens_mags(&dP);
    for (size_t b = 0; b < Bn; b++) /* dv[b, j, h·dh + k] = Σ_i A_ij·dctx[b, i, h·dh + k] */
        for (size_t h = 0; h < H; h++)
            for (size_t j = 0; j < S; j++)
                for (size_t k = 0; k < dh; k++) {
                    size_t a0 = ((b * H + h) * S) * S + j, c0 = b * S * d + h * dh + k;
                    wdot(dqkv.v + (b * S + j) * 3 * d + 2 * d + h * dh + k, NULL, c->A.v + a0, S, c->A.a + a0, c->A.r + a0, dctx.v + c0, d, dctx.a + c0, dctx.r + c0, S, E);
                }
    for (size_t r = 0; r < PP / S; r++) { /* dS = P ⊙ (dP - Σ_k dP_k·P_k), per softmax row */
        arb_ptr ps = c->P.v + r * S, dp = dP.v + r * S, ds = dS.v + r * S;
        wdot(t, NULL, dp, 1, dP.a + r * S, dP.r + r * S, ps, 1, c->P.a + r * S, c->P.r + r * S, S, E);
        for (size_t j = 0; j < S; j++) {
            arb_sub(ds + j, dp + j, t, BPREC);
            widen_rel(ds + j, E->u);
            arb_mul(ds + j, ds + j, ps + j, BPREC);
            widen_rel(ds + j, E->u);
        }
        store(E, ds, S);
    }
    tens_mags(&dS);
    for (size_t b = 0; b < Bn; b++) /* dq_i = Σ_j dS_ij k_j (then ·fl(1/sqrt dh)), dk_j = Σ_i dS_ij qs_i */
        for (size_t h = 0; h < H; h++)
            for (size_t i = 0; i < S; i++)
                for (size_t k = 0; k < dh; k++) {
                    size_t s0 = ((b * H + h) * S + i) * S, k0 = b * S * 3 * d + d + h * dh + k;
                    arb_ptr dq = dqkv.v + (b * S + i) * 3 * d + h * dh + k;
                    wdot(dq, NULL, dS.v + s0, 1, dS.a + s0, dS.r + s0, c->qkv.v + k0, 3 * d, c->qkv.a + k0, c->qkv.r + k0, S, E);
                    arb_mul(dq, dq, X->iscale, BPREC);
                    widen_rel(dq, gam(E, 2));
                    size_t t0 = ((b * H + h) * S) * S + i, q0 = b * S * 3 * d + h * dh + k;
                    wdot(dqkv.v + (b * S + i) * 3 * d + d + h * dh + k, NULL, dS.v + t0, S, dS.a + t0, dS.r + t0, c->qkv.v + q0, 3 * d, c->qkv.a + q0, c->qkv.r + q0, S, E);
                }
    store(E, dqkv.v, R * 3 * d);
    tens_mags(&dqkv);
    lin_bwd(dx, gin_w, gin_b, &dqkv, &c->in, &W->in_w, &X->ones, R, d, 3 * d, E);
    store(E, dx, R * d);
    arb_clear(t);
    tens_clear(&dctx), tens_clear(&dqkv), tens_clear(&dP), tens_clear(&dS);
    return 0;
}

/* ---------------------------------------------------------------- the FFN (§3.4) */

/* The activation's own error (§3 of specs/error-analysis-block.md): relu 0; gelu (erf) 8u·|z|;
   gelu_tanh 4u·|z|·(2 + |z| + 0.045|z|³).  az = |z|. */
static double act_own(rn_activation act, double az, double u)
{
    if (act == RN_ACT_RELU)
        return 0.0;
    if (act == RN_ACT_GELU)
        return 8 * u * az;
    return 4 * u * az * (2 + az + 0.045 * az * az * az);
}

/* act(z) and act'(z) exact on the ball; own errors (§3.4): relu 0; gelu (erf) 8u·|z| and
   8u·(1 + |z|) for the derivative; gelu_tanh 4u·|z|·(2 + |z| + 0.045|z|³) and
   8u·(1 + |z|·(1 + |z|)·(1 + 0.14 z²)). */
static void wact(arb_t a, arb_t da, const arb_t z, rn_activation act, const ectx *E)
{
    arb_t t, u, c;
    arb_init(t), arb_init(u), arb_init(c);
    double az = aub(z);
    if (act == RN_ACT_RELU) {
        if (arb_is_positive(z))
            arb_set(a, z), arb_one(da);
        else if (arb_is_nonpositive(z))
            arb_zero(a), arb_zero(da);
        else { /* the sign is undecided: relu(z) in [0, max(z)], relu' in [0, 1] */
            arb_zero(a);
            widen(a, az);
            arb_set_d(da, 0.5), widen(da, 0.5);
        }
    } else if (act == RN_ACT_GELU) { /* z·Φ(z), Φ(z) + z·φ(z) */
        arb_sqrt_ui(u, 2, BPREC);
        arb_div(t, z, u, BPREC);
        arb_hypgeom_erf(t, t, BPREC);
        arb_add_ui(t, t, 1, BPREC);
        arb_mul_2exp_si(t, t, -1);
        arb_mul(a, z, t, BPREC);
        arb_sqr(u, z, BPREC);
        arb_mul_2exp_si(u, u, -1);
        arb_neg(u, u);
        arb_exp(u, u, BPREC);
        arb_const_pi(c, BPREC);
        arb_mul_2exp_si(c, c, 1);
        arb_rsqrt(c, c, BPREC);
        arb_mul(u, u, c, BPREC);
        arb_mul(u, u, z, BPREC);
        arb_add(da, t, u, BPREC);
        widen(a, up(act_own(act, az, E->u)));
        widen(da, up(8 * E->u * (1 + az)));
    } else { /* 0.5·z·(1 + tanh(k(z + 0.044715 z³))), k = sqrt(2/π) */
        arb_t th, s, q;
        arb_init(th), arb_init(s), arb_init(q);
        arb_const_pi(c, BPREC);
        arb_ui_div(c, 2, c, BPREC);
        arb_sqrt(c, c, BPREC);
        arb_set_ui(q, 44715);
        arb_div_ui(q, q, 1000000, BPREC);
        arb_pow_ui(s, z, 3, BPREC);
        arb_mul(s, s, q, BPREC);
        arb_add(s, s, z, BPREC);
        arb_mul(s, s, c, BPREC);
        arb_tanh(th, s, BPREC);
        arb_add_ui(t, th, 1, BPREC);
        arb_mul(a, t, z, BPREC);
        arb_mul_2exp_si(a, a, -1);
        arb_sqr(u, th, BPREC); /* d = 0.5(1 + th) + 0.5·z·(1 - th²)·k·(1 + 3·0.044715 z²) */
        arb_sub_ui(u, u, 1, BPREC);
        arb_neg(u, u);
        arb_sqr(s, z, BPREC);
        arb_mul(s, s, q, BPREC);
        arb_mul_ui(s, s, 3, BPREC);
        arb_add_ui(s, s, 1, BPREC);
        arb_mul(u, u, s, BPREC);
        arb_mul(u, u, c, BPREC);
        arb_mul(u, u, z, BPREC);
        arb_add(da, t, u, BPREC);
        arb_mul_2exp_si(da, da, -1);
        widen(a, up(act_own(act, az, E->u)));
        widen(da, up(8 * E->u * (1 + az * (1 + az) * (1 + 0.14 * az * az))));
        arb_clear(th), arb_clear(s), arb_clear(q);
    }
    arb_clear(t), arb_clear(u), arb_clear(c);
}

typedef struct {
    tens in, hid, dact; /* input [R, d]; dropped activation [R, ff]; act'(z)·mask·scale [R, ff] */
} fcache;

static int fc_init(fcache *c, const bctx *X)
{
    memset(c, 0, sizeof *c);
    return tens_init(&c->in, X->R * X->d) || tens_init(&c->hid, X->R * X->ff) ||
           tens_init(&c->dact, X->R * X->ff);
}

static void fc_clear(fcache *c) { tens_clear(&c->in), tens_clear(&c->hid), tens_clear(&c->dact); }

static int wffn_fwd(arb_ptr y, fcache *c, const lparams *W, const block_layer *L, const bctx *X)
{
    size_t R = X->R, d = X->d, ff = X->ff;
    const ectx *E = &X->E;
    tens_mags(&c->in);
    lin_fwd(c->hid.v, &c->in, &W->w1, &W->b1, R, d, ff, E);
    store(E, c->hid.v, R * ff);
    arb_t z;
    arb_init(z);
    for (size_t i = 0; i < R * ff; i++) {
        arb_set(z, c->hid.v + i);
        wact(c->hid.v + i, c->dact.v + i, z, X->B->act, E);
    }
    arb_clear(z);
    store(E, c->hid.v, R * ff);
    wdrop(c->hid.v, c->hid.v, L->dmask, X->scale, R * ff, E);
    wdrop(c->dact.v, c->dact.v, L->dmask, X->scale, R * ff, E);
    tens_mags(&c->hid);
    lin_fwd(y, &c->hid, &W->w2, &W->b2, R, ff, d, E);
    store(E, y, R * d);
    return 0;
}

static int wffn_bwd(arb_ptr dx, arb_ptr gw1, arb_ptr gb1, arb_ptr gw2, arb_ptr gb2, tens *dY,
                    const fcache *c, const lparams *W, const bctx *X)
{
    size_t R = X->R, d = X->d, ff = X->ff;
    const ectx *E = &X->E;
    tens dh;
    if (tens_init(&dh, R * ff)) {
        tens_clear(&dh);
        return RN_TWIN_NOMEM;
    }
    tens_mags(dY);
    lin_bwd(dh.v, gw2, gb2, dY, &c->hid, &W->w2, &X->ones, R, ff, d, E);
    for (size_t i = 0; i < R * ff; i++) { /* dz = dh·act'(z)·mask·scale */
        arb_mul(dh.v + i, dh.v + i, c->dact.v + i, BPREC);
        widen_rel(dh.v + i, gam(E, 2));
    }
    store(E, dh.v, R * ff);
    tens_mags(&dh);
    lin_bwd(dx, gw1, gb1, &dh, &c->in, &W->w1, &X->ones, R, d, ff, E);
    store(E, dx, R * d);
    tens_clear(&dh);
    return 0;
}

/* ---------------------------------------------------------------- the graph (as ref/block_mpfr.c) */

typedef struct {
    arb_ptr xh1, r1, xh2, r2, n1in, n2in; /* the norms' caches and inputs */
    acache ac;
    fcache fc;
} lcache;

typedef struct {
    arb_ptr in_w, in_b, out_w, out_b, w1, b1, w2, b2, g1, b1n, g2, b2n;
} lgrad;

static int layer_fwd(bctx *X, size_t l, arb_ptr out, arb_srcptr in, lcache *c, const lparams *W)
{
    const block_layer *L = &X->B->layers[l];
    size_t N = X->R * X->d, d = X->d;
    const ectx *E = &X->E;
    arb_ptr t = _arb_vec_init((slong)N), h = _arb_vec_init((slong)N);
    double epsd = X->B->eps;
    int rc;
    if (!X->B->post) {
        _arb_vec_set(c->n1in, in, (slong)N);
        if ((rc = wln_fwd(c->ac.in.v, c->xh1, c->r1, in, L->g1, L->b1n, X->R, d, X->eps, epsd, E)))
            goto out;
        if ((rc = watt_fwd(t, &c->ac, W, L, X)))
            goto out;
        wdrop(t, t, L->d1mask, X->scale, N, E);
        wadd(h, in, t, N, E);
        store(E, h, N);
        _arb_vec_set(c->n2in, h, (slong)N);
        if ((rc = wln_fwd(c->fc.in.v, c->xh2, c->r2, h, L->g2, L->b2n, X->R, d, X->eps, epsd, E)))
            goto out;
        if ((rc = wffn_fwd(t, &c->fc, W, L, X)))
            goto out;
        wdrop(t, t, L->d2mask, X->scale, N, E);
        wadd(out, h, t, N, E);
        store(E, out, N);
    } else {
        _arb_vec_set(c->ac.in.v, in, (slong)N);
        if ((rc = watt_fwd(t, &c->ac, W, L, X)))
            goto out;
        wdrop(t, t, L->d1mask, X->scale, N, E);
        wadd(h, in, t, N, E);
        store(E, h, N);
        _arb_vec_set(c->n1in, h, (slong)N);
        if ((rc = wln_fwd(c->fc.in.v, c->xh1, c->r1, h, L->g1, L->b1n, X->R, d, X->eps, epsd, E)))
            goto out;
        if ((rc = wffn_fwd(t, &c->fc, W, L, X)))
            goto out;
        wdrop(t, t, L->d2mask, X->scale, N, E);
        wadd(h, c->fc.in.v, t, N, E);
        store(E, h, N);
        _arb_vec_set(c->n2in, h, (slong)N);
        if ((rc = wln_fwd(out, c->xh2, c->r2, h, L->g2, L->b2n, X->R, d, X->eps, epsd, E)))
            goto out;
    }
out:
    _arb_vec_clear(t, (slong)N), _arb_vec_clear(h, (slong)N);
    return rc;
}

/* din = the layer's input gradient given g (consumed); the parameter gradients into G. */
static int layer_bwd(bctx *X, size_t l, arb_ptr din, arb_ptr g, lcache *c, const lparams *W,
                     lgrad *G)
{
    const block_layer *L = &X->B->layers[l];
    size_t N = X->R * X->d, d = X->d;
    const ectx *E = &X->E;
    double epsd = X->B->eps;
    tens t1;
    arb_ptr t2 = _arb_vec_init((slong)N), t3 = _arb_vec_init((slong)N);
    int rc = tens_init(&t1, N) ? RN_TWIN_NOMEM : 0;
    _arb_vec_zero(G->g1, (slong)d), _arb_vec_zero(G->b1n, (slong)d);
    _arb_vec_zero(G->g2, (slong)d), _arb_vec_zero(G->b2n, (slong)d);
    if (rc)
        goto out;
    if (!X->B->post) {
        wdrop(t1.v, g, L->d2mask, X->scale, N, E);
        if ((rc = wffn_bwd(t2, G->w1, G->b1, G->w2, G->b2, &t1, &c->fc, W, X)))
            goto out;
        if ((rc = wln_bwd(t3, G->g2, G->b2n, t2, c->n2in, c->xh2, c->r2, L->g2, X->R, d, epsd, E)))
            goto out;
        wadd(g, g, t3, N, E);
        store(E, g, N);
        wdrop(t1.v, g, L->d1mask, X->scale, N, E);
        if ((rc = watt_bwd(t2, G->in_w, G->in_b, G->out_w, G->out_b, &t1, &c->ac, W, L, X)))
            goto out;
        if ((rc = wln_bwd(t3, G->g1, G->b1n, t2, c->n1in, c->xh1, c->r1, L->g1, X->R, d, epsd, E)))
            goto out;
        wadd(din, g, t3, N, E);
        store(E, din, N);
    } else {
        if ((rc = wln_bwd(t3, G->g2, G->b2n, g, c->n2in, c->xh2, c->r2, L->g2, X->R, d, epsd, E)))
            goto out;
        store(E, t3, N);
        wdrop(t1.v, t3, L->d2mask, X->scale, N, E);
        if ((rc = wffn_bwd(t2, G->w1, G->b1, G->w2, G->b2, &t1, &c->fc, W, X)))
            goto out;
        wadd(g, t3, t2, N, E);
        store(E, g, N);
        if ((rc = wln_bwd(t3, G->g1, G->b1n, g, c->n1in, c->xh1, c->r1, L->g1, X->R, d, epsd, E)))
            goto out;
        store(E, t3, N);
        wdrop(t1.v, t3, L->d1mask, X->scale, N, E);
        if ((rc = watt_bwd(t2, G->in_w, G->in_b, G->out_w, G->out_b, &t1, &c->ac, W, L, X)))
            goto out;
        wadd(din, t3, t2, N, E);
        store(E, din, N);
    }
out:
    tens_clear(&t1);
    _arb_vec_clear(t2, (slong)N), _arb_vec_clear(t3, (slong)N);
    return rc;
}

/* ---------------------------------------------------------------- entry points (§4) */

/* bound = the ball's diameter (both the exact and the computed value lie in it) + want's half-ulp
   of f64. */
static double emit_factor = 2.0; /* set by run(): 2 (rigorous: the diameter) or BLOCK_STAT_LAMBDA */

static void emit(double *o, arb_srcptr v, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        double a = aub(v + i);
        if (mag_is_inf(arb_radref(v + i)) || !(a == a) || !arf_is_finite(arb_midref(v + i))) {
            o[i] = INFINITY; /* the analysis says nothing here (e.g. a norm's rows too wide) */
            continue;
        }
        o[i] = up(emit_factor * mag_get_d(arb_radref(v + i)) + 0x1p-53 * a);
    }
}

static int lcache_init(lcache *c, const bctx *X)
{
    size_t N = X->R * X->d;
    memset(c, 0, sizeof *c);
    c->xh1 = _arb_vec_init((slong)N), c->xh2 = _arb_vec_init((slong)N);
    c->n1in = _arb_vec_init((slong)N), c->n2in = _arb_vec_init((slong)N);
    c->r1 = _arb_vec_init((slong)X->R), c->r2 = _arb_vec_init((slong)X->R);
    return ac_init(&c->ac, X) || fc_init(&c->fc, X);
}

static void lcache_clear(lcache *c, const bctx *X)
{
    size_t N = X->R * X->d;
    _arb_vec_clear(c->xh1, (slong)N), _arb_vec_clear(c->xh2, (slong)N);
    _arb_vec_clear(c->n1in, (slong)N), _arb_vec_clear(c->n2in, (slong)N);
    _arb_vec_clear(c->r1, (slong)X->R), _arb_vec_clear(c->r2, (slong)X->R);
    ac_clear(&c->ac), fc_clear(&c->fc);
}

/* A weight matrix's gradient whose output o leaves NULL (not wanted) is not evaluated at all. */
static arb_ptr vec_if(const double *o, size_t n) { return o ? _arb_vec_init((slong)n) : NULL; }
static void vec_clear(arb_ptr v, size_t n)
{
    if (v)
        _arb_vec_clear(v, (slong)n);
}

static void lgrad_init(lgrad *G, const block_layer_grad *o, size_t d, size_t ff)
{
    G->in_w = vec_if(o->in_w, 3 * d * d), G->in_b = _arb_vec_init((slong)(3 * d));
    G->out_w = vec_if(o->out_w, d * d), G->out_b = _arb_vec_init((slong)d);
    G->w1 = vec_if(o->w1, ff * d), G->b1 = _arb_vec_init((slong)ff);
    G->w2 = vec_if(o->w2, d * ff), G->b2 = _arb_vec_init((slong)d);
    G->g1 = _arb_vec_init((slong)d), G->b1n = _arb_vec_init((slong)d);
    G->g2 = _arb_vec_init((slong)d), G->b2n = _arb_vec_init((slong)d);
}

static void lgrad_emit_clear(lgrad *G, const block_layer_grad *o, size_t d, size_t ff)
{
    if (o) {
        if (G->in_w)
            emit(o->in_w, G->in_w, 3 * d * d);
        if (G->out_w)
            emit(o->out_w, G->out_w, d * d);
        if (G->w1)
            emit(o->w1, G->w1, ff * d);
        if (G->w2)
            emit(o->w2, G->w2, d * ff);
        emit(o->in_b, G->in_b, 3 * d), emit(o->out_b, G->out_b, d);
        emit(o->b1, G->b1, ff), emit(o->b2, G->b2, d);
        emit(o->g1, G->g1, d), emit(o->b1n, G->b1n, d), emit(o->g2, G->g2, d);
        emit(o->b2n, G->b2n, d);
    }
    vec_clear(G->in_w, 3 * d * d), _arb_vec_clear(G->in_b, (slong)(3 * d));
    vec_clear(G->out_w, d * d), _arb_vec_clear(G->out_b, (slong)d);
    vec_clear(G->w1, ff * d), _arb_vec_clear(G->b1, (slong)ff);
    vec_clear(G->w2, d * ff), _arb_vec_clear(G->b2, (slong)d);
    _arb_vec_clear(G->g1, (slong)d), _arb_vec_clear(G->b1n, (slong)d);
    _arb_vec_clear(G->g2, (slong)d), _arb_vec_clear(G->b2n, (slong)d);
}

/* The evaluation's context for the shapes and attributes of B (its tensors are not read here):
   the tier (stat), the dtypes' unit roundoffs, eps, the dropout scale 1/(1 - p), 1/sqrt(dh) and the
   exact ones of the column sums.  Shared by the block, the stack and the sublayers alone. */
static int ctx_open(bctx *X, const block_args *B, rn_dtype compute, rn_dtype out, int stat)
{
    memset(X, 0, sizeof *X);
    X->B = B;
    X->E.stat = stat;
    emit_factor = stat ? BLOCK_STAT_LAMBDA : 2.0;
    X->E.cd = compute;
    X->E.u = rn_dtype_unit_roundoff(compute);
    X->E.sd = rn_dtype_unit_roundoff(out) > X->E.u ? out : compute;
    X->E.us = X->E.sd != compute ? rn_dtype_unit_roundoff(out) : 0.0;
    X->R = B->batch * B->seq, X->d = B->d, X->ff = B->ff, X->S = B->seq, X->H = B->heads;
    X->dh = B->d / B->heads;
    arb_init(X->eps), arb_init(X->scale), arb_init(X->iscale);
    arb_set_d(X->eps, B->eps);
    arb_one(X->scale);
    if (B->p != 0.0) {
        arb_t p;
        arb_init(p);
        arb_set_d(p, B->p);
        arb_sub(X->scale, X->scale, p, BPREC);
        arb_clear(p);
        arb_inv(X->scale, X->scale, BPREC);
    }
    arb_rsqrt_ui(X->iscale, (ulong)X->dh, BPREC);
    size_t no = X->R > X->S ? X->R : X->S;
    int rc = tens_init(&X->ones, no) ? RN_TWIN_NOMEM : 0;
    for (size_t i = 0; i < no && !rc; i++)
        arb_one(X->ones.v + i), X->ones.a[i] = 1.0;
    return rc;
}

static void ctx_close(bctx *X)
{
    tens_clear(&X->ones);
    arb_clear(X->eps), arb_clear(X->scale), arb_clear(X->iscale);
}

static int run(double *y, const block_grads *g, const double *dy, const block_args *B,
               rn_dtype compute, rn_dtype out, int stat)
{
    bctx X;
    int rc = ctx_open(&X, B, compute, out, stat);
    size_t N = X.R * X.d, d = X.d, L = B->nlayers;
    lcache *c = calloc(L, sizeof *c);
    lparams *W = calloc(L, sizeof *W);
    lgrad *G = dy ? calloc(L, sizeof *G) : NULL;
    arb_ptr v = _arb_vec_init((slong)N), w = _arb_vec_init((slong)N);
    arb_ptr xhf = _arb_vec_init((slong)N), rf = _arb_vec_init((slong)X.R),
            fin = _arb_vec_init((slong)N), dfg = _arb_vec_init((slong)d),
            dfb = _arb_vec_init((slong)d);
    if (!c || !W || (dy && !G))
        rc = RN_TWIN_NOMEM;
    for (size_t l = 0; l < L && !rc; l++)
        if (lcache_init(&c[l], &X) || lp_init(&W[l], &B->layers[l], d, X.ff))
            rc = RN_TWIN_NOMEM;
    for (size_t i = 0; i < N && !rc; i++)
        arb_set_d(v + i, B->x[i]);
    for (size_t l = 0; l < L && !rc; l++) {
        rc = layer_fwd(&X, l, w, v, &c[l], &W[l]);
        _arb_vec_swap(v, w, (slong)N);
    }
    if (!rc && B->fg) {
        _arb_vec_set(fin, v, (slong)N);
        rc = wln_fwd(v, xhf, rf, fin, B->fg, B->fb, X.R, d, X.eps, B->eps, &X.E);
    }
    if (!rc && !dy) {
        store(&X.E, v, N);
        emit(y, v, N);
    }
    if (!rc && dy) {
        for (size_t i = 0; i < N; i++)
            arb_set_d(v + i, dy[i]);
        if (B->fg) {
            _arb_vec_zero(dfg, (slong)d), _arb_vec_zero(dfb, (slong)d);
            rc = wln_bwd(w, dfg, dfb, v, fin, xhf, rf, B->fg, X.R, d, B->eps, &X.E);
            _arb_vec_swap(v, w, (slong)N);
        }
        for (size_t l = 0; l < L; l++)
            lgrad_init(&G[l], &g->layers[l], d, X.ff);
        for (size_t l = L; l-- > 0 && !rc;) {
            rc = layer_bwd(&X, l, w, v, &c[l], &W[l], &G[l]);
            _arb_vec_swap(v, w, (slong)N);
        }
        if (!rc) {
            store(&X.E, v, N);
            emit(g->dx, v, N);
            if (B->fg)
                emit(g->dfg, dfg, d), emit(g->dfb, dfb, d);
        }
        for (size_t l = 0; l < L; l++)
            lgrad_emit_clear(&G[l], rc ? NULL : &g->layers[l], d, X.ff);
    }
    for (size_t l = 0; l < L && c && W; l++)
        lcache_clear(&c[l], &X), lp_clear(&W[l]);
    free(c), free(W), free(G);
    _arb_vec_clear(v, (slong)N), _arb_vec_clear(w, (slong)N), _arb_vec_clear(xhf, (slong)N);
    _arb_vec_clear(rf, (slong)X.R), _arb_vec_clear(fin, (slong)N);
    _arb_vec_clear(dfg, (slong)d), _arb_vec_clear(dfb, (slong)d);
    ctx_close(&X);
    flint_cleanup();
    return rc;
}

int block_forward_bound(double *y, const block_args *B, rn_dtype compute, rn_dtype out)
{
    return run(y, NULL, NULL, B, compute, out, 0);
}

int block_backward_bound(const block_grads *g, const double *dy, const block_args *B,
                         rn_dtype compute, rn_dtype out)
{
    return run(NULL, g, dy, B, compute, out, 0);
}

int block_forward_bound_stat(double *y, const block_args *B, rn_dtype compute, rn_dtype out)
{
    return run(y, NULL, NULL, B, compute, out, 1);
}

int block_backward_bound_stat(const block_grads *g, const double *dy, const block_args *B,
                              rn_dtype compute, rn_dtype out)
{
    return run(NULL, g, dy, B, compute, out, 1);
}

/* ---------------------------------------------------------------- the sublayers alone

   `attention`, `ffn` and their backward ops evaluated by the same graph code as inside the block
   (watt_fwd/watt_bwd, wffn_fwd/wffn_bwd): the op's input x enters exact (radius 0), the sublayer's
   stages add their own errors exactly as in the block, and the outputs are emitted as the block's
   (specs/error-analysis-attention.md and -ffn.md, "The statistical tier").  Only the statistical
   tier is exposed: the sublayers' rigorous bounds are their own written analyses
   (ref/attention_bound.c, ref/ffn_bound.c). */

typedef enum { SUB_ATTENTION, SUB_FFN } sub_kind;

/* The sizes of a sublayer's four parameter gradients (in_w, in_b, out_w, out_b or w1, b1, w2, b2). */
static void sub_grad_sizes(sub_kind k, const bctx *X, size_t n[4])
{
    size_t d = X->d, f = k == SUB_ATTENTION ? 3 * d : X->ff;
    n[0] = f * d, n[1] = f, n[2] = k == SUB_ATTENTION ? d * d : d * f, n[3] = d;
}

/* o[0] = y (forward, dy == NULL), or o[0] = dx and o[1..4] the parameter gradients (any may be
   NULL: not wanted).  B describes the sublayer as a one-layer block (its layers[0]). */
static int sub_run(sub_kind k, double *const *o, const double *x, const double *dy,
                   const block_args *B, rn_dtype compute, rn_dtype out)
{
    bctx X;
    int rc = ctx_open(&X, B, compute, out, 1);
    const block_layer *L = &B->layers[0];
    size_t N = X.R * X.d, ng[4];
    sub_grad_sizes(k, &X, ng);
    lparams W;
    acache ac;
    fcache fc;
    memset(&W, 0, sizeof W), memset(&ac, 0, sizeof ac), memset(&fc, 0, sizeof fc);
    tens dY;
    memset(&dY, 0, sizeof dY);
    arb_ptr y = _arb_vec_init((slong)N), g[4];
    for (int q = 0; q < 4; q++)
        g[q] = _arb_vec_init((slong)(dy ? ng[q] : 1));
    if (!rc && (lp_init(&W, L, X.d, X.ff) ||
                (k == SUB_ATTENTION ? ac_init(&ac, &X) : fc_init(&fc, &X)) ||
                (dy && tens_from(&dY, dy, N))))
        rc = RN_TWIN_NOMEM;
    tens *in = k == SUB_ATTENTION ? &ac.in : &fc.in;
    for (size_t i = 0; i < N && !rc; i++)
        arb_set_d(in->v + i, x[i]);
    if (!rc)
        rc = k == SUB_ATTENTION ? watt_fwd(y, &ac, &W, L, &X) : wffn_fwd(y, &fc, &W, L, &X);
    if (!rc && dy)
        rc = k == SUB_ATTENTION
                 ? watt_bwd(y, g[0], g[1], g[2], g[3], &dY, &ac, &W, L, &X)
                 : wffn_bwd(y, g[0], g[1], g[2], g[3], &dY, &fc, &W, &X);
    if (!rc) { /* y and dx are stored by the stages; the parameter gradients' own output rounding */
        emit(o[0], y, N);
        for (int q = 0; q < 4 && dy; q++)
            if (o[q + 1]) {
                store(&X.E, g[q], ng[q]);
                emit(o[q + 1], g[q], ng[q]);
            }
    }
    _arb_vec_clear(y, (slong)N);
    for (int q = 0; q < 4; q++)
        _arb_vec_clear(g[q], (slong)(dy ? ng[q] : 1));
    tens_clear(&dY), lp_clear(&W), ac_clear(&ac), fc_clear(&fc);
    ctx_close(&X);
    flint_cleanup();
    return rc;
}

/* The attention as a one-layer block: its projections, masks and attributes. */
static block_args attention_as_block(const attn_args *A, block_layer *L)
{
    memset(L, 0, sizeof *L);
    L->in_w = A->in_w, L->in_b = A->in_b, L->out_w = A->out_w, L->out_b = A->out_b;
    L->amask = A->amask;
    block_args B;
    memset(&B, 0, sizeof B);
    B.nlayers = 1, B.layers = L, B.kpm = A->kpm, B.causal = A->causal, B.p = A->p;
    B.batch = A->batch, B.seq = A->seq, B.d = A->d, B.heads = A->heads;
    return B;
}

/* The FFN as a one-layer block over its rows (batch 1, seq = rows, one head: unused). */
static block_args ffn_as_block(const ffn_args *F, block_layer *L)
{
    memset(L, 0, sizeof *L);
    L->w1 = F->w1, L->b1 = F->b1, L->w2 = F->w2, L->b2 = F->b2, L->dmask = F->mask;
    block_args B;
    memset(&B, 0, sizeof B);
    B.nlayers = 1, B.layers = L, B.act = F->act, B.p = F->p;
    B.batch = 1, B.seq = F->rows, B.d = F->d, B.heads = 1, B.ff = F->ff;
    return B;
}

int attention_forward_bound_stat(double *by, const double *x, const attn_args *A, rn_dtype compute,
                                 rn_dtype out)
{
    block_layer L;
    block_args B = attention_as_block(A, &L);
    double *o[1] = {by};
    return sub_run(SUB_ATTENTION, o, x, NULL, &B, compute, out);
}

int attention_backward_bound_stat(double *bdx, double *bdin_w, double *bdin_b, double *bdout_w,
                                  double *bdout_b, const double *x, const double *dy,
                                  const attn_args *A, rn_dtype compute, rn_dtype out)
{
    block_layer L;
    block_args B = attention_as_block(A, &L);
    double *o[5] = {bdx, bdin_w, bdin_b, bdout_w, bdout_b};
    return sub_run(SUB_ATTENTION, o, x, dy, &B, compute, out);
}

int ffn_forward_bound_stat(double *by, const double *x, const ffn_args *F, rn_dtype compute,
                           rn_dtype out)
{
    block_layer L;
    block_args B = ffn_as_block(F, &L);
    double *o[1] = {by};
    return sub_run(SUB_FFN, o, x, NULL, &B, compute, out);
}

int ffn_backward_bound_stat(double *bdx, double *bdw1, double *bdb1, double *bdw2, double *bdb2,
                            const double *x, const double *dy, const ffn_args *F, rn_dtype compute,
                            rn_dtype out)
{
    block_layer L;
    block_args B = ffn_as_block(F, &L);
    double *o[5] = {bdx, bdw1, bdb1, bdw2, bdb2};
    return sub_run(SUB_FFN, o, x, dy, &B, compute, out);
}

/* ---------------------------------------------------------------- the FFN's activation direction

   specs/error-analysis-ffn.md, "The statistical tier", test "act": the errors of y projected on
   the direction of the other GELU, D_r = W2·((act_o(z_r) - act(z_r))·mask·scale) per row r (act_o:
   gelu_tanh for gelu and gelu for gelu_tanh; z_r = x_r·W1ᵀ + b1 at the exact inputs, in long double:
   D is data, not an error).  Under the tier's model the errors of a correct implementation are
   e_r = W2·ε_h + o_r with ε_h the dropped activation's errors (independent across the ff units,
   scale r_h,k: the evaluator's statistical radii) and o_r linear2's own errors (independent across
   the d outputs, scale own_i), so t_r = D_r·e_r has scale pi_r = (Σ_k c_k² r_h,k² + Σ_i D_i² own_i²)^½
   with c = W2ᵀ·D_r; the activation's and the dropout's own errors, which a libm or a shared constant
   may bias, are also counted as possibly systematic: floor phi_r = Σ_k |c_k|·(own_act,k·mask·scale
   + γ₃|h_k|). */

static double gelu_erf_d(double z) { return 0.5 * z * (1.0 + erf(z * 0.70710678118654752440)); }

static double gelu_tanh_d(double z)
{
    return 0.5 * z * (1.0 + tanh(0.79788456080286535588 * (z + 0.044715 * z * z * z)));
}

/* One row's D (d), pi and phi, given the evaluator's state after wffn_fwd. */
static void act_dir_row(double *D, double *pi, double *phi, size_t r, const double *x,
                        const ffn_args *F, const fcache *fc, arb_srcptr y, double scale,
                        const ectx *E, double *dlt, double *c, double *own_a)
{
    size_t d = F->d, ff = F->ff;
    for (size_t k = 0; k < ff; k++) {
        long double z = F->b1 ? F->b1[k] : 0.0;
        for (size_t j = 0; j < d; j++)
            z += (long double)x[r * d + j] * F->w1[k * d + j];
        double zd = (double)z, m = F->mask ? F->mask[r * ff + k] * scale : 1.0;
        double other = F->act == RN_ACT_GELU ? gelu_tanh_d(zd) - gelu_erf_d(zd)
                                             : gelu_erf_d(zd) - gelu_tanh_d(zd);
        dlt[k] = other * m;
        own_a[k] = act_own(F->act, fabs(zd), E->u) * fabs(m) +
                   (F->mask ? gam(E, 3) * fc->hid.a[r * ff + k] : 0.0);
    }
    double var = 0.0;
    for (size_t i = 0; i < d; i++) {
        double s = 0.0, sa = F->b2 ? fabs(F->b2[i]) : 0.0;
        for (size_t k = 0; k < ff; k++)
            s += F->w2[i * ff + k] * dlt[k], sa += fabs(F->w2[i * ff + k]) * fc->hid.a[r * ff + k];
        D[r * d + i] = s;
        double own = own_sum_stat(E, (double)ff + (F->b2 ? 1 : 0), sa) +
                     (E->us + 0x1p-53) * aub(y + r * d + i);
        var += s * s * own * own;
    }
    for (size_t k = 0; k < ff; k++)
        c[k] = 0.0;
    for (size_t i = 0; i < d; i++)
        for (size_t k = 0; k < ff; k++)
            c[k] += D[r * d + i] * F->w2[i * ff + k];
    double fl = 0.0;
    for (size_t k = 0; k < ff; k++) {
        double rh = fc->hid.r[r * ff + k];
        var += c[k] * c[k] * rh * rh;
        fl += fabs(c[k]) * own_a[k];
    }
    pi[r] = up(sqrt(var) * (1.0 + 0x1p-40));
    phi[r] = up(fl * (1.0 + 0x1p-40));
}

int ffn_act_direction_stat(double *D, double *pi, double *phi, const double *x, const ffn_args *F,
                           rn_dtype compute, rn_dtype out)
{
    block_layer L;
    block_args B = ffn_as_block(F, &L);
    bctx X;
    int rc = ctx_open(&X, &B, compute, out, 1);
    size_t N = X.R * X.d;
    lparams W;
    fcache fc;
    memset(&W, 0, sizeof W), memset(&fc, 0, sizeof fc);
    arb_ptr y = _arb_vec_init((slong)N);
    double *dlt = malloc((F->ff + 1) * sizeof *dlt), *c = malloc((F->ff + 1) * sizeof *c),
           *own_a = malloc((F->ff + 1) * sizeof *own_a);
    if (!rc && (!dlt || !c || !own_a || lp_init(&W, &L, X.d, X.ff) || fc_init(&fc, &X)))
        rc = RN_TWIN_NOMEM;
    for (size_t i = 0; i < N && !rc; i++)
        arb_set_d(fc.in.v + i, x[i]);
    if (!rc)
        rc = wffn_fwd(y, &fc, &W, &L, &X);
    double scale = 1.0 / (1.0 - F->p);
    for (size_t r = 0; r < F->rows && !rc; r++)
        act_dir_row(D, pi, phi, r, x, F, &fc, y, scale, &X.E, dlt, c, own_a);
    free(dlt), free(c), free(own_a);
    _arb_vec_clear(y, (slong)N);
    lp_clear(&W), fc_clear(&fc);
    ctx_close(&X);
    flint_cleanup();
    return rc;
}

/* The pooled test over the rows (specs/error-analysis-ffn.md §10): t_r = D_r·(got_r - want_r),
   S = Σ t_r, slope S/Σ|D_r|², floor Σ phi_r/Σ|D_r|², z = max(0, |S| - Σ phi_r)/Σ pi_r; rows with a
   non-finite t_r, pi_r or phi_r are left out (*used counts the others). */
int ffn_act_test(ffn_act_result *res, const double *got, const double *want, const double *x,
                 const ffn_args *F, rn_dtype compute, rn_dtype out)
{
    size_t R = F->rows, d = F->d;
    double *D = malloc((R * d + 1) * sizeof *D), *pi = malloc((R + 1) * sizeof *pi),
           *phi = malloc((R + 1) * sizeof *phi);
    int rc = D && pi && phi ? ffn_act_direction_stat(D, pi, phi, x, F, compute, out) : RN_TWIN_NOMEM;
    memset(res, 0, sizeof *res);
    if (!rc) {
        double S = 0, Q = 0, P = 0, Fl = 0;
        for (size_t r = 0; r < R; r++) {
            double tr = 0, qr = 0;
            for (size_t i = 0; i < d; i++)
                tr += D[r * d + i] * (got[r * d + i] - want[r * d + i]), qr += D[r * d + i] * D[r * d + i];
            if (!isfinite(tr) || !isfinite(qr) || !isfinite(pi[r]) || !isfinite(phi[r]))
                continue;
            S += tr, Q += qr, P += pi[r], Fl += phi[r], res->used++;
        }
        res->slope = Q > 0 ? S / Q : 0;
        res->floor = Q > 0 ? Fl / Q : 0;
        res->z = P > 0 ? fmax(0.0, fabs(S) - Fl) / P : (fabs(S) > Fl ? INFINITY : 0);
    }
    free(D), free(pi), free(phi);
    return rc;
}
