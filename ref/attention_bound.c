/* A-priori per-element error bounds of multi-head self-attention and its backward, evaluating
 * specs/error-analysis-attention.md (sections in brackets) on the data in binary64.
 *
 * Every quantity is a pair (M, E): M >= |exact value| and E >= |computed - exact| for a correct
 * implementation in `compute`.  The magnitudes of the forward's intermediates (qkv, the scores, P,
 * A, ctx, y) are the upper ends of the twin's Arb balls at 64 bits (ref/attention_mpfr.h's trace:
 * rigorous enclosures); the backward's are sums of products of magnitudes [§1].  Sums of
 * non-negative binary64 terms are enlarged by SLACK = 1 + 2^-30, more than their rounding
 * (relative <= n·2^-53 for n <= 2^20) [§1]. */
#include "attention_bound.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "layernorm_mpfr.h" /* RN_TWIN_* */

#define SLACK (1.0 + 0x1p-30)
#define TRACE_PREC 64

/* gamma_n = n·u/(1 - n·u) [§1]; +Inf when n·u >= 1/2 (the analysis is void). */
static double gam(double n, double u) { return n * u >= 0.5 ? INFINITY : n * u / (1.0 - n * u); }

/* Upper bound of |v| (a ball), rounded up; +Inf for a non-finite ball. */
static double ub(const arb_t v)
{
    if (!arb_is_finite(v))
        return INFINITY;
    arf_t t;
    arf_init(t);
    arb_get_abs_ubound_arf(t, v, 53);
    double r = arf_get_d(t, ARF_RND_UP);
    arf_clear(t);
    return r;
}

/* The error of a dot product of n terms a_k·b_k whose operands carry errors [§2]:
     E = sum (Ea_k (Mb_k + Eb_k) + Ma_k Eb_k) + gamma_n sum (Ma_k + Ea_k)(Mb_k + Eb_k) + n·eta,
   M = sum Ma_k Mb_k (>= |exact|).  Ea, Eb may be NULL (exact operand); Mb NULL: b = 1 (a sum). */
typedef struct {
    double u, eta;
} ctx_t;

static double errdot(const ctx_t *C, const double *Ma, const double *Ea, size_t sa, const double *Mb,
                     const double *Eb, size_t sb, size_t n, double *M)
{
    double s1 = 0.0, s2 = 0.0, mag = 0.0;
    for (size_t k = 0; k < n; k++) {
        double ma = Ma[k * sa], ea = Ea ? Ea[k * sa] : 0.0;
        double mb = Mb ? Mb[k * sb] : 1.0, eb = Eb ? Eb[k * sb] : 0.0;
        s1 += ea * (mb + eb) + ma * eb;
        s2 += (ma + ea) * (mb + eb);
        mag += ma * mb;
    }
    if (M)
        *M = mag * SLACK;
    double e = (s1 + gam((double)n, C->u) * s2 + (double)n * C->eta) * SLACK;
    return isnan(e) ? INFINITY : e;
}

/* [§8] the output rounding to out (when out != compute) and want's own rounding to f64. */
static double finish(double err, double V, rn_dtype compute, rn_dtype out)
{
    if (!(err < INFINITY))
        return INFINITY;
    double outr = 0.0;
    if (out != compute) {
        if (V + err >= rn_dtype_max(out))
            return INFINITY;
        outr = rn_dtype_unit_roundoff(out) * (V + err) + rn_dtype_underflow_eta(out);
    }
    if (V + err >= rn_dtype_max(compute))
        return INFINITY;
    return (err + outr) * SLACK + V * 0x1p-53 + 0x1p-1074;
}

/* The forward analysis: (M, E) of every intermediate. */
typedef struct {
    size_t B, T, d, H, dh, rows, natt;
    double *Mx, *Mw, *Mwo;               /* |x|, |in_w|, |out_w| */
    double *Mqkv, *Eqkv;                 /* [rows, 3d]: q columns for qs */
    double *MP, *EP, *MA, *EA;           /* [natt] */
    double *Mctx, *Ectx, *My, *Ey;       /* [rows, d] */
    int *nan_row;                        /* [B, T]: a fully masked query (NaN outputs) */
    double sigma_inv, rho, rhod, scale;  /* 1/sqrt(dh) (upper), the scaling and dropout factors */
} fwd_t;

static void fwd_free(fwd_t *F)
{
    free(F->Mx), free(F->Mw), free(F->Mwo), free(F->Mqkv), free(F->Eqkv), free(F->MP), free(F->EP);
    free(F->MA), free(F->EA), free(F->Mctx), free(F->Ectx), free(F->My), free(F->Ey), free(F->nan_row);
}

static double *dalloc(size_t n) { return malloc((n ? n : 1) * sizeof(double)); }

static int dead(const attn_args *A, size_t b, size_t i, size_t j)
{
    return (A->causal && j > i) || (A->kpm && A->kpm[b * A->seq + j] != 0.0);
}

/* [§5] one softmax row with perturbed logits: exact P (magnitudes MPk, ball upper ends), logit
   perturbations e (absolute), the row's scores (balls) for |z_k - m|.  Writes EP. */
static void softmax_row(const ctx_t *C, double *EP, const double *MP, const double *e,
                        const arb_struct *S, const attn_args *A, size_t b, size_t i, size_t T)
{
    double u = C->u, ebar = 0.0, zmax = -INFINITY, zabs = 0.0;
    size_t L = 0;
    for (size_t j = 0; j < T; j++) {
        if (dead(A, b, i, j))
            continue;
        L++;
        ebar = fmax(ebar, e[j]);
        double z = arf_get_d(arb_midref(S + j), ARF_RND_NEAR);
        zmax = fmax(zmax, z);
        zabs = fmax(zabs, ub(S + j));
    }
    double rad = 0.0; /* the balls' radii and the mids' rounding, both tiny: covered by 2^-40 |z| */
    for (size_t j = 0; j < T; j++)
        if (!dead(A, b, i, j))
            rad = fmax(rad, mag_get_d(arb_radref(S + j)));
    rad = 2.0 * rad + zabs * 0x1p-40;
    double gL = gam((double)(L > 0 ? L - 1 : 0), u);
    /* [§5] softmax-internal roundings, as specs/error-analysis-softmax.md §4: exp within 1 ulp
       (2u) for numerator and sum terms, the sum (gamma_{L-1}), the division and a product */
    double relf = (1.0 + 2.0 * u) * (1.0 + u) * (1.0 + u) / ((1.0 - 2.0 * u) * (1.0 - gL)) - 1.0;
    double D = 0.0;
    for (size_t j = 0; j < T; j++) {
        if (dead(A, b, i, j))
            continue;
        double z = arf_get_d(arb_midref(S + j), ARF_RND_NEAR);
        double dzm = (zmax - z) + rad + 2.0 * ebar;            /* >= |zhat_j - mhat| */
        double zeta = u * (dzm + u * 2.0 * (zabs + ebar)) * SLACK;
        EP[j] = zeta; /* stash */
        D += fmin(1.0, MP[j] * exp(e[j] + ebar)) * expm1(zeta);
    }
    D *= SLACK;
    int void_row = !(D < 0.5) || !(gL < 0.5);
    for (size_t j = 0; j < T; j++) {
        if (dead(A, b, i, j)) {
            EP[j] = 0.0;
            continue;
        }
        if (void_row) {
            EP[j] = INFINITY;
            continue;
        }
        double Yh = fmin(1.0, MP[j] * exp(e[j] + ebar));    /* >= softmax(zhat)_j */
        double rel = exp(EP[j]) / (1.0 - D) * (1.0 + relf) - 1.0;
        /* [§5] input perturbation + the computed softmax of the perturbed logits + underflow */
        EP[j] = (MP[j] * expm1(e[j] + ebar) + rel * Yh + 3.0 * C->eta + 2.0 * (double)L * C->eta * Yh) * SLACK;
    }
}

static int fwd_run(fwd_t *F, const double *x, const attn_args *A, rn_dtype compute)
{
    ctx_t C = {rn_dtype_unit_roundoff(compute), rn_dtype_underflow_eta(compute)};
    size_t B = A->batch, T = A->seq, d = A->d, H = A->heads, dh = d / H, rows = B * T, d3 = 3 * d;
    size_t natt = B * H * T * T;
    memset(F, 0, sizeof *F);
    F->B = B, F->T = T, F->d = d, F->H = H, F->dh = dh, F->rows = rows, F->natt = natt;
    F->Mx = dalloc(rows * d), F->Mw = dalloc(d3 * d), F->Mwo = dalloc(d * d);
    F->Mqkv = dalloc(rows * d3), F->Eqkv = dalloc(rows * d3);
    F->MP = dalloc(natt), F->EP = dalloc(natt), F->MA = dalloc(natt), F->EA = dalloc(natt);
    F->Mctx = dalloc(rows * d), F->Ectx = dalloc(rows * d), F->My = dalloc(rows * d), F->Ey = dalloc(rows * d);
    F->nan_row = calloc(rows ? rows : 1, sizeof(int));
    double *e = dalloc(T);
    attn_trace t;
    int tr = attn_trace_init(&t, A);
    if (!F->Mx || !F->Mw || !F->Mwo || !F->Mqkv || !F->Eqkv || !F->MP || !F->EP || !F->MA || !F->EA ||
        !F->Mctx || !F->Ectx || !F->My || !F->Ey || !F->nan_row || !e || tr != 0) {
        attn_trace_clear(&t, A);
        free(e);
        return RN_TWIN_NOMEM;
    }
    arb_ptr xb = _arb_vec_init((slong)(rows * d));
    for (size_t k = 0; k < rows * d; k++)
        arb_set_d(xb + k, x[k]), F->Mx[k] = fabs(x[k]);
    for (size_t k = 0; k < d3 * d; k++)
        F->Mw[k] = fabs(A->in_w[k]);
    for (size_t k = 0; k < d * d; k++)
        F->Mwo[k] = fabs(A->out_w[k]);
    attention_arb_trace(&t, xb, A, TRACE_PREC);
    _arb_vec_clear(xb, (slong)(rows * d));
    double u = C.u;
    F->sigma_inv = 1.0 / sqrt((double)dh) * (1.0 + 0x1p-50);
    /* [§3] q/fl(sqrt(dh)) or q·fl(1/sqrt(dh)): at most 3 roundings relative */
    F->rho = (1.0 + u) * (1.0 + u) / (1.0 - u) - 1.0;
    /* [§6] the dropout scale fl(1/fl(1 - p)) and the products: 4 roundings relative */
    F->rhod = A->amask ? (1.0 + u) * (1.0 + u) * (1.0 + u) * (1.0 + u) / ((1.0 - u) * (1.0 - u)) - 1.0 : 0.0;
    F->scale = A->amask ? 1.0 / (1.0 - A->p) * (1.0 + 0x1p-50) : 1.0;
    /* [§2] qkv = x·in_wᵀ + in_b: d products and the bias, any order */
    for (size_t r = 0; r < rows; r++)
        for (size_t c = 0; c < d3; c++) {
            double M;
            double E = errdot(&C, F->Mx + r * d, NULL, 1, F->Mw + c * d, NULL, 1, d, &M);
            double bb = A->in_b ? fabs(A->in_b[c]) : 0.0;
            E += gam((double)d + 1.0, u) * bb + (gam((double)d + 1.0, u) - gam((double)d, u)) * M;
            double Mb = ub(t.qkv + r * d3 + c); /* q columns: qs */
            if (c < d) { /* [§3] qs = q/sqrt(dh) */
                E = (E * F->sigma_inv * (1.0 + F->rho) + F->rho * Mb + C.eta) * SLACK;
            }
            F->Mqkv[r * d3 + c] = Mb;
            F->Eqkv[r * d3 + c] = E * SLACK;
        }
    /* [§4] scores, [§5] softmax, [§6] dropout */
    for (size_t b = 0; b < B; b++)
        for (size_t h = 0; h < H; h++)
            for (size_t i = 0; i < T; i++) {
                size_t row = (b * H + h) * T + i;
                const double *Mq = F->Mqkv + (b * T + i) * d3 + h * dh, *Eq = F->Eqkv + (b * T + i) * d3 + h * dh;
                if (t.live[b * T + i] == 0)
                    F->nan_row[b * T + i] = 1;
                for (size_t j = 0; j < T; j++) {
                    size_t kk = (b * T + j) * d3 + d + h * dh;
                    e[j] = errdot(&C, Mq, Eq, 1, F->Mqkv + kk, F->Eqkv + kk, 1, dh, NULL);
                    F->MP[row * T + j] = dead(A, b, i, j) ? 0.0 : fmin(1.0, ub(t.P + row * T + j));
                }
                softmax_row(&C, F->EP + row * T, F->MP + row * T, e, t.S + row * T, A, b, i, T);
                for (size_t j = 0; j < T; j++) {
                    size_t k = row * T + j;
                    double m = A->amask ? A->amask[k] : 1.0;
                    F->MA[k] = m * F->scale * F->MP[k];
                    F->EA[k] = A->amask ? (m * F->scale * (F->EP[k] * (1.0 + F->rhod) + F->rhod * F->MP[k]) + C.eta) * SLACK
                                        : F->EP[k];
                }
            }
    /* [§7] ctx = A·v, y = ctx·out_wᵀ + out_b */
    for (size_t b = 0; b < B; b++)
        for (size_t h = 0; h < H; h++)
            for (size_t i = 0; i < T; i++) {
                size_t row = (b * H + h) * T + i;
                for (size_t c = 0; c < dh; c++) {
                    size_t o = (b * T + i) * d + h * dh + c, vv = b * T * d3 + 2 * d + h * dh + c;
                    F->Ectx[o] = errdot(&C, F->MA + row * T, F->EA + row * T, 1, F->Mqkv + vv,
                                        F->Eqkv + vv, d3, T, NULL);
                    F->Mctx[o] = ub(t.ctx + o);
                }
            }
    for (size_t r = 0; r < rows; r++)
        for (size_t j = 0; j < d; j++) {
            double M;
            double E = errdot(&C, F->Mctx + r * d, F->Ectx + r * d, 1, F->Mwo + j * d, NULL, 1, d, &M);
            double bb = A->out_b ? fabs(A->out_b[j]) : 0.0;
            E += gam((double)d + 1.0, u) * bb + (gam((double)d + 1.0, u) - gam((double)d, u)) * M;
            F->Ey[r * d + j] = E * SLACK;
            F->My[r * d + j] = ub(t.y + r * d + j);
        }
    attn_trace_clear(&t, A);
    free(e);
    return 0;
}

int attention_forward_bound(double *by, const double *x, const attn_args *A, rn_dtype compute,
                            rn_dtype out)
{
    fwd_t F;
    if (fwd_run(&F, x, A, compute) != 0) {
        fwd_free(&F);
        return RN_TWIN_NOMEM;
    }
    for (size_t r = 0; r < F.rows; r++)
        for (size_t j = 0; j < F.d; j++) {
            size_t k = r * F.d + j;
            by[k] = F.nan_row[r] || !isfinite(F.My[k]) ? 0.0 : finish(F.Ey[k], F.My[k], compute, out);
        }
    fwd_free(&F);
    return 0;
}

/* [§9] the backward, stage by stage. */
int attention_backward_bound(double *bdx, double *bdin_w, double *bdin_b, double *bdout_w,
                             double *bdout_b, const double *x, const double *dy,
                             const attn_args *A, rn_dtype compute, rn_dtype out)
{
    fwd_t F;
    if (fwd_run(&F, x, A, compute) != 0) {
        fwd_free(&F);
        return RN_TWIN_NOMEM;
    }
    ctx_t C = {rn_dtype_unit_roundoff(compute), rn_dtype_underflow_eta(compute)};
    double u = C.u;
    size_t B = F.B, T = F.T, d = F.d, H = F.H, dh = F.dh, rows = F.rows, d3 = 3 * d, natt = F.natt;
    double *Mdy = dalloc(rows * d), *Mdc = dalloc(rows * d), *Edc = dalloc(rows * d);
    double *MdS = dalloc(natt), *EdS = dalloc(natt), *MdP = dalloc(T), *EdP = dalloc(T);
    double *Mg = dalloc(rows * d3), *Eg = dalloc(rows * d3);
    if (!Mdy || !Mdc || !Edc || !MdS || !EdS || !MdP || !EdP || !Mg || !Eg) {
        free(Mdy), free(Mdc), free(Edc), free(MdS), free(EdS), free(MdP), free(EdP), free(Mg), free(Eg);
        fwd_free(&F);
        return RN_TWIN_NOMEM;
    }
    /* where the exact gradient is NaN (a fully masked query spreads it through k, v and the
       parameter sums) the checker demands NaN whatever the bound */
    for (size_t k = 0; k < rows * d; k++)
        Mdy[k] = fabs(dy[k]);
    /* [§9.1] out_proj backward: dctx = dy·out_w; d.out_proj.weight = dyᵀ·ctx; d.out_proj.bias */
    for (size_t r = 0; r < rows; r++)
        for (size_t c = 0; c < d; c++)
            Edc[r * d + c] = errdot(&C, Mdy + r * d, NULL, 1, F.Mwo + c, NULL, d, d, &Mdc[r * d + c]);
    if (bdout_w)
        for (size_t j = 0; j < d; j++)
            for (size_t c = 0; c < d; c++) {
                double M, E = errdot(&C, Mdy + j, NULL, d, F.Mctx + c, F.Ectx + c, d, rows, &M);
                bdout_w[j * d + c] = finish(E, M, compute, out);
            }
    if (bdout_b)
        for (size_t j = 0; j < d; j++) {
            double M, E = errdot(&C, Mdy + j, NULL, d, NULL, NULL, 0, rows, &M);
            bdout_b[j] = finish(E, M, compute, out);
        }
    /* [§9.2] per query row: dA = dctx·vᵀ, dP = dropout backward, dS = P ⊙ (dP - dP·P) */
    for (size_t b = 0; b < B; b++)
        for (size_t h = 0; h < H; h++)
            for (size_t i = 0; i < T; i++) {
                size_t row = (b * H + h) * T + i;
                const double *Md = Mdc + (b * T + i) * d + h * dh, *Ed = Edc + (b * T + i) * d + h * dh;
                for (size_t j = 0; j < T; j++) {
                    size_t vv = (b * T + j) * d3 + 2 * d + h * dh;
                    double M, E = errdot(&C, Md, Ed, 1, F.Mqkv + vv, F.Eqkv + vv, 1, dh, &M);
                    double m = A->amask ? A->amask[row * T + j] : 1.0;
                    MdP[j] = m * F.scale * M;
                    EdP[j] = A->amask ? (m * F.scale * (E * (1.0 + F.rhod) + F.rhod * M) + C.eta) * SLACK : E;
                }
                double Mgd, Egd = errdot(&C, MdP, EdP, 1, F.MP + row * T, F.EP + row * T, 1, T, &Mgd);
                for (size_t j = 0; j < T; j++) {
                    size_t k = row * T + j;
                    if (F.MP[k] == 0.0 && F.EP[k] == 0.0) { /* a dead key: dS = 0 exactly */
                        MdS[k] = EdS[k] = 0.0;
                        continue;
                    }
                    double Mt = MdP[j] + Mgd;
                    double Et = (EdP[j] + Egd + u * (Mt + EdP[j] + Egd)) * SLACK;
                    MdS[k] = F.MP[k] * Mt * SLACK;
                    EdS[k] = (F.EP[k] * (Mt + Et) + F.MP[k] * Et + u * (F.MP[k] + F.EP[k]) * (Mt + Et) + C.eta) * SLACK;
                }
            }
    /* [§9.3] dq = (dS·k)/sqrt(dh), dk = dSᵀ·qs, dv = Aᵀ·dctx */
    for (size_t b = 0; b < B; b++)
        for (size_t h = 0; h < H; h++) {
            size_t base = (b * H + h) * T * T;
            for (size_t i = 0; i < T; i++)
                for (size_t c = 0; c < dh; c++) {
                    size_t o = (b * T + i) * d3 + h * dh + c, kk = b * T * d3 + d + h * dh + c;
                    double M, E = errdot(&C, MdS + base + i * T, EdS + base + i * T, 1, F.Mqkv + kk,
                                         F.Eqkv + kk, d3, T, &M);
                    Mg[o] = M * F.sigma_inv * SLACK;
                    Eg[o] = (E * F.sigma_inv * (1.0 + F.rho) + F.rho * Mg[o] + C.eta) * SLACK;
                }
            for (size_t j = 0; j < T; j++)
                for (size_t c = 0; c < dh; c++) {
                    size_t ok = (b * T + j) * d3 + d + h * dh + c, ov = ok + d;
                    size_t qq = b * T * d3 + h * dh + c, dd = b * T * d + h * dh + c;
                    Eg[ok] = errdot(&C, MdS + base + j, EdS + base + j, T, F.Mqkv + qq, F.Eqkv + qq, d3, T, &Mg[ok]);
                    Eg[ov] = errdot(&C, F.MA + base + j, F.EA + base + j, T, Mdc + dd, Edc + dd, d, T, &Mg[ov]);
                }
        }
    /* [§9.4] in_proj backward: dx = dqkv·in_w; d.in_proj_weight = dqkvᵀ·x; d.in_proj_bias */
    for (size_t r = 0; r < rows; r++)
        for (size_t k = 0; k < d; k++) {
            double M, E = errdot(&C, Mg + r * d3, Eg + r * d3, 1, F.Mw + k, NULL, d, d3, &M);
            bdx[r * d + k] = finish(E, M, compute, out);
        }
    if (bdin_w)
        for (size_t c = 0; c < d3; c++)
            for (size_t k = 0; k < d; k++) {
                double M, E = errdot(&C, Mg + c, Eg + c, d3, F.Mx + k, NULL, d, rows, &M);
                bdin_w[c * d + k] = finish(E, M, compute, out);
            }
    if (bdin_b)
        for (size_t c = 0; c < d3; c++) {
            double M, E = errdot(&C, Mg + c, Eg + c, d3, NULL, NULL, 0, rows, &M);
            bdin_b[c] = finish(E, M, compute, out);
        }
    free(Mdy), free(Mdc), free(Edc), free(MdS), free(EdS), free(MdP), free(EdP), free(Mg), free(Eg);
    fwd_free(&F);
    return 0;
}
