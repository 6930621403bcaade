/* A-priori per-element error bounds of the feed-forward sublayer, forward and backward.
 * Every formula is derived in specs/error-analysis-ffn.md (section numbers in brackets); this file
 * only evaluates them on the data, in binary64, each sum enlarged by up() [§8] and the result by
 * EVAL_SLACK, with the conventions of ref/linear_bound.c.  Shapes: ref/ffn_mpfr.h. */
#include "ffn_bound.h"

#include <math.h>
#include <stdlib.h>

#define EVAL_SLACK (1.0 + 0x1p-40)

/* γ_m = m·u/(1 - m·u), +Inf past m·u = 1/2 (the analysis is void there) [§2]. */
static double gam(double m, double u)
{
    double mu = m * u;
    return mu > 0.5 ? INFINITY : mu / (1.0 - mu);
}

/* A quantity evaluated in binary64 from a sum of n non-negative terms of at most 20 operations
   each, enlarged to an upper bound of its exact value [§8]. */
static double up(double v, size_t n) { return v * (1.0 + (double)(n + 20) * 0x1p-52); }

/* The implementation model [§1-§5]. */
typedef struct {
    rn_dtype c, d;
    double u, eta;        /* compute format */
    double ud, etad;      /* storage/output format when coarser than compute (else 0) */
    rn_activation act;
    double L, L2, A;      /* |act'| <= L, |act''| <= L2, activation error A·u·|z| + 4η [§3] */
    double rho, s_hi;     /* dropout: relative error ρ and s_hi >= 1/(1 - p) [§4]; no mask: 0, 1 */
    int mask;
} bctx;

static void bctx_init(bctx *B, const ffn_args *F, rn_dtype compute, rn_dtype d)
{
    B->c = compute, B->d = d;
    B->u = rn_dtype_unit_roundoff(compute);
    B->eta = rn_dtype_underflow_eta(compute);
    int store = d != compute && rn_dtype_unit_roundoff(d) > B->u;
    B->ud = store ? rn_dtype_unit_roundoff(d) : 0.0;
    B->etad = store ? rn_dtype_underflow_eta(d) : 0.0;
    B->act = F->act;
    B->L = F->act == RN_ACT_RELU ? 1.0 : F->act == RN_ACT_GELU ? 1.25 : 1.68;
    B->L2 = F->act == RN_ACT_GELU ? 0.8 : 1.0;
    B->A = F->act == RN_ACT_RELU ? 0.0 : 8.0;
    B->mask = F->mask != NULL;
    if (B->mask) { /* [§4] as specs/error-analysis-dropout.md §2 */
        double g3 = gam(3, B->u);
        B->rho = g3 + 2.0 * B->u * F->p / (1.0 - F->p) * (1.0 + g3);
        B->s_hi = 1.0 / (1.0 - F->p) * (1.0 + 0x1p-50);
    } else {
        B->rho = 0.0, B->s_hi = 1.0;
    }
}

/* An intermediate stored in format d (coarser than compute) rounds once more [§5]. */
static double stored(const bctx *B, double err, double mag)
{
    return B->ud > 0 ? err + B->ud * (mag + err) + B->etad : err;
}

/* The final step of every output [§7]: the void region, the output rounding, want's rounding.
   err: the error before the output rounding; T: the largest partial sum; Y >= |exact|. */
static double finish(const bctx *B, double err, double T, double Y)
{
    if (!isfinite(err) || !isfinite(T) || T + err >= rn_dtype_max(B->c))
        return INFINITY;
    double outr = 0.0;
    if (B->d != B->c) {
        if (Y + err >= rn_dtype_max(B->d))
            return INFINITY;
        outr = rn_dtype_unit_roundoff(B->d) * (Y + err) + rn_dtype_underflow_eta(B->d);
    }
    return (err + outr) * EVAL_SLACK + Y * 0x1p-53 + 0x1p-1074;
}

/* Per hidden unit (r, j) [§2-§4]. */
typedef struct {
    double *zlo, *zhi;  /* z in [zlo, zhi] */
    double *E1;         /* |ẑ - z| */
    double *Aup;        /* >= |act(z)| */
    double *Eh, *Hup;   /* |ĥ - h|, >= |h| */
} hidden;

static int hidden_alloc(hidden *H, size_t n)
{
    double **f[6] = {&H->zlo, &H->zhi, &H->E1, &H->Aup, &H->Eh, &H->Hup};
    int ok = 1;
    for (int k = 0; k < 6; k++)
        ok &= (*f[k] = malloc((n ? n : 1) * sizeof(double))) != NULL;
    return ok ? 0 : -1;
}

static void hidden_free(hidden *H)
{
    free(H->zlo), free(H->zhi), free(H->E1), free(H->Aup), free(H->Eh), free(H->Hup);
}

/* |act(z)| <= Aup for z in [zlo, zhi] [§3]: |z|·Φ(z) (gelu), |z|·σ(2w(z)) (gelu_tanh), both
   increasing factors in z, evaluated at zhi with libm in binary64 and enlarged. */
static double act_up(rn_activation act, double zlo, double zhi)
{
    double zmax = fmax(fabs(zlo), fabs(zhi));
    if (act == RN_ACT_RELU)
        return fmax(zhi, 0.0);
    double f;
    if (act == RN_ACT_GELU) {
        f = 0.5 * erfc(-zhi * 0x1.6a09e667f3bcdp-1);
    } else {
        double w = 0x1.9884533d43651p-1 * (zhi + 0.044715 * zhi * zhi * zhi);
        w = w > 0 ? w * (1.0 + 0x1p-45) : w * (1.0 - 0x1p-45); /* >= the real w(zhi) */
        f = 1.0 / (1.0 + exp(-2.0 * w));
    }
    f = f * (1.0 + 0x1p-40) + 0x1p-1000;
    return zmax * fmin(1.0, f);
}

static void hidden_rows(hidden *H, const bctx *B, const double *x, const ffn_args *F)
{
    size_t D = F->d, FF = F->ff;
    double g1 = gam((double)(D + (F->b1 != NULL)), B->u);
    double g64 = gam((double)(D + 1), 0x1p-53);
    for (size_t r = 0; r < F->rows; r++)
        for (size_t j = 0; j < FF; j++) {
            size_t i = r * FF + j;
            const double *xr = x + r * D, *w = F->w1 + j * D;
            double zd = F->b1 ? F->b1[j] : 0.0, S = F->b1 ? fabs(F->b1[j]) : 0.0;
            for (size_t k = 0; k < D; k++) {
                zd += xr[k] * w[k];
                S += fabs(xr[k] * w[k]);
            }
            S = up(S, D + 1);
            double zerr = up(g64 * S + (double)D * 0x1p-1073, 1); /* |zd - z| [§8] */
            H->zlo[i] = zd - zerr, H->zhi[i] = zd + zerr;
            double zmax = fmax(fabs(H->zlo[i]), fabs(H->zhi[i]));
            /* [§2] the first linear; [§5] z stored in d */
            double E1 = stored(B, up(g1 * S + 2.0 * (double)D * B->eta, 1), zmax);
            /* [§3] the activation: Lipschitz propagation of E1 plus its own evaluation error */
            double Aup = act_up(B->act, H->zlo[i], H->zhi[i]);
            double Ea = B->L * E1 + B->A * B->u * (zmax + E1) + (B->A > 0 ? 4.0 * B->eta : 0.0);
            Ea = stored(B, up(Ea, 4), Aup);
            H->E1[i] = E1, H->Aup[i] = Aup;
            /* [§4] dropout: h = a·m·s */
            if (B->mask) {
                double m = F->mask[i];
                H->Eh[i] = m == 0.0 ? 0.0
                         : stored(B, up(B->s_hi * (Ea * (1.0 + B->rho) + B->rho * Aup) + B->eta, 4),
                                  B->s_hi * Aup);
                H->Hup[i] = m * B->s_hi * Aup;
            } else {
                H->Eh[i] = Ea, H->Hup[i] = Aup;
            }
        }
}

static int any_nonfinite(const double *v, size_t n)
{
    for (size_t i = 0; v && i < n; i++)
        if (!isfinite(v[i]))
            return 1;
    return 0;
}

static int nonfinite_inputs(const double *x, const double *dy, const ffn_args *F)
{
    size_t R = F->rows, D = F->d, FF = F->ff;
    return any_nonfinite(x, R * D) || any_nonfinite(dy, R * D) || any_nonfinite(F->w1, FF * D) ||
           any_nonfinite(F->b1, FF) || any_nonfinite(F->w2, D * FF) || any_nonfinite(F->b2, D);
}

static void zeros(double *v, size_t n)
{
    for (size_t i = 0; v && i < n; i++)
        v[i] = 0.0;
}

int ffn_forward_bound(double *by, const double *x, const ffn_args *F, rn_dtype compute, rn_dtype d)
{
    size_t R = F->rows, D = F->d, FF = F->ff;
    if (nonfinite_inputs(x, NULL, F)) {
        zeros(by, R * D);
        return RN_TWIN_OK;
    }
    bctx B;
    bctx_init(&B, F, compute, d);
    hidden H;
    if (hidden_alloc(&H, R * FF) != 0) {
        hidden_free(&H);
        return RN_TWIN_NOMEM;
    }
    hidden_rows(&H, &B, x, F);
    double g2 = gam((double)(FF + (F->b2 != NULL)), B.u);
    for (size_t r = 0; r < R; r++)
        for (size_t i = 0; i < D; i++) { /* [§6] y = b2 + w2·ĥ */
            const double *w = F->w2 + i * FF;
            double b = F->b2 ? fabs(F->b2[i]) : 0.0, T = b, P = 0.0, Y = b;
            for (size_t j = 0; j < FF; j++) {
                size_t k = r * FF + j;
                T += fabs(w[j]) * (H.Hup[k] + H.Eh[k]);
                P += fabs(w[j]) * H.Eh[k];
                Y += fabs(w[j]) * H.Hup[k];
            }
            T = up(T, FF + 1), P = up(P, FF), Y = up(Y, FF + 1);
            double err = g2 * T + 2.0 * (double)FF * B.eta + P;
            by[r * D + i] = finish(&B, up(err, 3), T, Y);
        }
    hidden_free(&H);
    return RN_TWIN_OK;
}

int ffn_backward_bound(double *bdx, double *bdw1, double *bdb1, double *bdw2, double *bdb2,
                       const double *x, const double *dy, const ffn_args *F, rn_dtype compute,
                       rn_dtype d)
{
    size_t R = F->rows, D = F->d, FF = F->ff;
    if (nonfinite_inputs(x, dy, F)) {
        zeros(bdx, R * D), zeros(bdw1, FF * D), zeros(bdb1, FF), zeros(bdw2, D * FF), zeros(bdb2, D);
        return RN_TWIN_OK;
    }
    bctx B;
    bctx_init(&B, F, compute, d);
    hidden H;
    size_t NH = R * FF > 0 ? R * FF : 1;
    double *Edz = malloc(NH * sizeof *Edz),
           *DZ = malloc(NH * sizeof *DZ);
    if (hidden_alloc(&H, R * FF) != 0 || !Edz || !DZ) {
        hidden_free(&H), free(Edz), free(DZ);
        return RN_TWIN_NOMEM;
    }
    hidden_rows(&H, &B, x, F);
    double gd = gam((double)D, B.u);
    for (size_t r = 0; r < R; r++)
        for (size_t j = 0; j < FF; j++) {
            size_t k = r * FF + j;
            /* [§6] dh = dy·w2 (column j of w2) */
            double S = 0.0;
            for (size_t i = 0; i < D; i++)
                S += fabs(dy[r * D + i] * F->w2[i * FF + j]);
            S = up(S, D);
            double Edh = stored(&B, up(gd * S + 2.0 * (double)D * B.eta, 1), S), DH = S;
            /* [§4] dropout map on dh */
            double Eda = Edh, DA = DH;
            if (B.mask) {
                double m = F->mask[k];
                Eda = m == 0.0 ? 0.0 : up(B.s_hi * (Edh * (1.0 + B.rho) + B.rho * DH) + B.eta, 4);
                DA = m * B.s_hi * DH;
            }
            /* [§3] dz = act'(ẑ)·da */
            double zlo = H.zlo[k], zhi = H.zhi[k], E1 = H.E1[k];
            double Ez, Dz;
            if (B.act == RN_ACT_RELU) {
                if (zhi < -E1) /* z and ẑ both negative: dz = 0 exactly */
                    Ez = 0.0, Dz = 0.0;
                else if (zlo > E1) /* both positive: dz = da */
                    Ez = Eda, Dz = DA;
                else /* the sign of ẑ may differ from z's: relu' may be 0 or 1 */
                    Ez = Eda + DA, Dz = DA;
            } else {
                double zmax = fmax(fabs(zlo), fabs(zhi)) + E1;
                double ad = B.act == RN_ACT_GELU ? 12.0 : 6.0 + 10.0 * zmax * (1.0 + 0.134145 * zmax * zmax);
                double al = ad * B.u;                 /* |act'_computed(ẑ) - act'(ẑ)| */
                Ez = (B.L + al) * Eda + (B.L2 * E1 + al) * DA + B.u * (B.L + al) * (DA + Eda) + B.eta;
                Dz = B.L * DA;
            }
            Edz[k] = stored(&B, up(Ez, 6), Dz);
            DZ[k] = Dz;
        }
    double gff = gam((double)FF, B.u), gr = gam((double)R, B.u), gr1 = gam((double)(R ? R - 1 : 0), B.u);
    /* [§6] dx = dz·w1 */
    for (size_t r = 0; r < R; r++)
        for (size_t c = 0; c < D; c++) {
            double T = 0.0, P = 0.0, Y = 0.0;
            for (size_t j = 0; j < FF; j++) {
                double w = fabs(F->w1[j * D + c]);
                size_t k = r * FF + j;
                T += w * (DZ[k] + Edz[k]), P += w * Edz[k], Y += w * DZ[k];
            }
            T = up(T, FF), P = up(P, FF), Y = up(Y, FF);
            bdx[r * D + c] = finish(&B, up(gff * T + 2.0 * (double)FF * B.eta + P, 3), T, Y);
        }
    /* [§6] dw1 = dzᵀ·x, db1 = Σ_rows dz */
    for (size_t j = 0; j < FF; j++) {
        for (size_t c = 0; c < D; c++) {
            double T = 0.0, P = 0.0, Y = 0.0;
            for (size_t r = 0; r < R; r++) {
                double a = fabs(x[r * D + c]);
                size_t k = r * FF + j;
                T += a * (DZ[k] + Edz[k]), P += a * Edz[k], Y += a * DZ[k];
            }
            T = up(T, R), P = up(P, R), Y = up(Y, R);
            bdw1[j * D + c] = finish(&B, up(gr * T + 2.0 * (double)R * B.eta + P, 3), T, Y);
        }
        if (bdb1) {
            double T = 0.0, P = 0.0, Y = 0.0;
            for (size_t r = 0; r < R; r++) {
                size_t k = r * FF + j;
                T += DZ[k] + Edz[k], P += Edz[k], Y += DZ[k];
            }
            T = up(T, R), P = up(P, R), Y = up(Y, R);
            bdb1[j] = finish(&B, up(gr1 * T + P, 3), T, Y);
        }
    }
    /* [§6] dw2 = dyᵀ·ĥ, db2 = Σ_rows dy (exact inputs: a plain sum) */
    for (size_t i = 0; i < D; i++) {
        for (size_t j = 0; j < FF; j++) {
            double T = 0.0, P = 0.0, Y = 0.0;
            for (size_t r = 0; r < R; r++) {
                double a = fabs(dy[r * D + i]);
                size_t k = r * FF + j;
                T += a * (H.Hup[k] + H.Eh[k]), P += a * H.Eh[k], Y += a * H.Hup[k];
            }
            T = up(T, R), P = up(P, R), Y = up(Y, R);
            bdw2[i * FF + j] = finish(&B, up(gr * T + 2.0 * (double)R * B.eta + P, 3), T, Y);
        }
        if (bdb2) {
            double T = 0.0;
            for (size_t r = 0; r < R; r++)
                T += fabs(dy[r * D + i]);
            T = up(T, R);
            bdb2[i] = finish(&B, up(gr1 * T, 1), T, T);
        }
    }
    hidden_free(&H), free(Edz), free(DZ);
    return RN_TWIN_OK;
}
