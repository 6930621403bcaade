/* EVA harness for the attention kernels (float and double): the forward, then the backward on that
 * forward's caches, without and with the attention-dropout mask, nothing masked (causal = 0, no key
 * padding mask).  Run by `make prove-attention` (proofs/attention.sh) with -DRESNORM_EVA and
 * -warn-special-float non-finite: no NaN/Inf/overflow for the ranges stated in specs/attention.h
 * (change both together):
 *   1 <= B <= EVA_B, 1 <= T <= EVA_T, 1 <= H <= EVA_H, 1 <= dh <= EVA_DH, d = H·dh
 *   (EVA is non-relational: every loop is unrolled, so the sizes are kept small where they multiply;
 *   the softmax's rows and the dot products at real widths have their own runs, prove-softmax to
 *   n = 4096 and prove-linear's dot helpers to n = 4096);
 *   |x|, |in_w|, |in_b|, |out_w|, |out_b|, |dy| <= EVA_R; the attention-dropout mask 0/1 with
 *   p in [0, 0.9] (scale <= 10); the gradients accumulated from 0.
 * Why these bounds leave room (f32, the largest sizes): qkv <= d·R² + R ~ 8.0e8, each score
 * <= dh·8.0e8² ~ 2.6e18 (exp(s - max) never overflows: softmax's d_nonpos), P <= 2 (EVA's bound:
 * e <= 1 over s >= 1/2), ctx <= T·2·10·8.0e8, the backward's dS ~ 1e23 and dqkv ~ 1e32, dx ~ 1e37,
 * under FLT_MAX ~ 3.4e38.
 * Masked rows (causal, key padding) are not in this run: the mask row holds -Inf by design (as
 * torch's), which -warn-special-float non-finite reports.  They are the second run's (-DEVA_MASKED,
 * -warn-special-float nan, below: EVA_MASKED_SCENARIO); specs/attention.h states both.
 * EVA_PAD_KEY0=1 lets the masked run pad key 0 too: a causal row 0 then has every key masked, whose
 * softmax is NaN (-Inf - -Inf, as torch's), and the run raises that alarm (so it can fail).
 * EVA relies on nothing it did not prove but softmax's two given facts (d_nonpos, s_ge_half: WP
 * proves them, proofs/README-sublayers.md "Softmax: the two facts EVA is given") and the integer
 * facts of the ghost lemma functions (row offsets, WP-proved); proofs/attention.sh fails on any other
 * property left unknown.  exp is Frama-C's libc model of expf/exp (ref/libm.c given to EVA). */
#include "__fc_builtin.h"
#include "attention.h"

/* The masked run's sizes: one EVA state per shape, causal flag and key padding pattern (2^(B·(T-1))
   patterns: 56 states per dropout mode at these sizes, ~70 s of CPU per dtype); dh does not meet the
   mask, and the unmasked run covers dh <= 4 */
#ifdef EVA_MASKED
#ifndef EVA_T
#define EVA_T 3
#endif
#ifndef EVA_DH
#define EVA_DH 1
#endif
#endif
#ifndef EVA_PAD_KEY0
#define EVA_PAD_KEY0 0
#endif
#ifndef EVA_B
#define EVA_B 2
#endif
#ifndef EVA_T
#define EVA_T 4
#endif
#ifndef EVA_H
#define EVA_H 2
#endif
#ifndef EVA_DH
#define EVA_DH 4
#endif
#ifndef EVA_R
#define EVA_R 1.0e4
#endif
#define EVA_D (EVA_H * EVA_DH)
#define EVA_ROWS (EVA_B * EVA_T)
#define EVA_ATT (EVA_B * EVA_H * EVA_T * EVA_T)

/* One dtype's buffers: inputs, the forward's output and caches, the backward's outputs and scratch
   (every array at its largest size; the kernels use their leading parts). */
#define EVA_BUFFERS(FT, S)                                                                         \
    static FT x##S[EVA_ROWS * EVA_D], in_w##S[3 * EVA_D * EVA_D], in_b##S[3 * EVA_D],              \
        out_w##S[EVA_D * EVA_D], out_b##S[EVA_D], am##S[EVA_ATT], y##S[EVA_ROWS * EVA_D],          \
        qkv##S[EVA_ROWS * 3 * EVA_D], att##S[EVA_ATT], ctx##S[EVA_ROWS * EVA_D], row##S[2 * EVA_T], \
        dy##S[EVA_ROWS * EVA_D], dx##S[EVA_ROWS * EVA_D], din_w##S[3 * EVA_D * EVA_D],             \
        din_b##S[3 * EVA_D], dout_w##S[EVA_D * EVA_D], dout_b##S[EVA_D],                           \
        dqkv##S[EVA_ROWS * 3 * EVA_D], dctx##S[EVA_ROWS * EVA_D];
EVA_BUFFERS(float, 32)
EVA_BUFFERS(double, 64)

/* One dtype's scenario (FT float or double, S its suffix 32 or 64, INTERVAL Frama-C's generator of
   that type), written once so that both dtypes are analysed on the same steps:
   fill##S: v[k] in [-r, r] for k < n (a constant bound: a fill loop bounded by an interval size
   would leave one EVA state per size, and every kernel would then be analysed once per size);
   inputs##S: every input at its range, the dropout mask 0/1 (the masked scenario's too);
   zero##S: the gradients accumulated from 0;
   eva_f##S: eval mode (no attention dropout), then with the mask, each forward then backward. */
#define EVA_SCENARIO(FT, S, INTERVAL)                                                              \
    static void fill##S(FT *v, int n, FT r)                                                        \
    {                                                                                              \
        for (int k = 0; k < n; k++)                                                                \
            v[k] = INTERVAL(-r, r);                                                                \
    }                                                                                              \
    static void zero##S(void)                                                                      \
    {                                                                                              \
        for (int k = 0; k < EVA_ROWS * EVA_D; k++) dx##S[k] = 0;                                   \
        for (int k = 0; k < 3 * EVA_D * EVA_D; k++) din_w##S[k] = 0;                               \
        for (int k = 0; k < 3 * EVA_D; k++) din_b##S[k] = 0;                                       \
        for (int k = 0; k < EVA_D * EVA_D; k++) dout_w##S[k] = 0;                                  \
        for (int k = 0; k < EVA_D; k++) dout_b##S[k] = 0;                                          \
    }                                                                                              \
    static void inputs##S(void)                                                                    \
    {                                                                                              \
        fill##S(x##S, EVA_ROWS * EVA_D, (FT)EVA_R);                                                \
        fill##S(in_w##S, 3 * EVA_D * EVA_D, (FT)EVA_R);                                            \
        fill##S(in_b##S, 3 * EVA_D, (FT)EVA_R);                                                    \
        fill##S(out_w##S, EVA_D * EVA_D, (FT)EVA_R);                                               \
        fill##S(out_b##S, EVA_D, (FT)EVA_R);                                                       \
        fill##S(dy##S, EVA_ROWS * EVA_D, (FT)EVA_R);                                               \
        for (int k = 0; k < EVA_ATT; k++)                                                          \
            am##S[k] = (FT)Frama_C_interval(0, 1);                                                 \
    }                                                                                              \
    void eva_f##S(int B, int T, int H, int d, FT p)                                                \
    {                                                                                              \
        inputs##S();                                                                               \
        attention_forward_f##S(y##S, qkv##S, att##S, ctx##S, row##S, x##S, in_w##S, in_b##S,        \
                               out_w##S, out_b##S, 0, 0, p, B, T, d, H, 0);                        \
        zero##S();                                                                                 \
        attention_backward_f##S(dx##S, din_w##S, din_b##S, dout_w##S, dout_b##S, dqkv##S, dctx##S, \
                                row##S, dy##S, x##S, in_w##S, out_w##S, qkv##S, att##S, ctx##S, 0, \
                                p, B, T, d, H);                                                    \
        attention_forward_f##S(y##S, qkv##S, att##S, ctx##S, row##S, x##S, in_w##S, in_b##S,        \
                               out_w##S, out_b##S, 0, am##S, p, B, T, d, H, 0);                    \
        zero##S();                                                                                 \
        attention_backward_f##S(dx##S, din_w##S, din_b##S, dout_w##S, dout_b##S, dqkv##S, dctx##S, \
                                row##S, dy##S, x##S, in_w##S, out_w##S, qkv##S, att##S, ctx##S,    \
                                am##S, p, B, T, d, H);                                             \
    }
EVA_SCENARIO(float, 32, Frama_C_float_interval)
EVA_SCENARIO(double, 64, Frama_C_double_interval)

#ifdef EVA_MASKED
/* The masked run (-DEVA_MASKED, -warn-special-float nan): causal or not, with a key padding mask
   whose key 0 is never padded, so that every query row keeps a key (causal row 0 sees key 0 only;
   a row with every key masked is NaN by design, as torch's).  EVA allows infinities in this run (a
   masked score is -Inf by design: exp(-Inf) = 0, Frama-C's libc model) and reports every NaN; every
   output and cache is then asserted finite, element by element (fin32, fin64), so that an overflow
   that reached an output would leave an assertion unknown, which fails the target.  An overflow to
   -Inf inside the scores would read as a masked key: the scores are the unmasked run's, proved
   finite there over the same ranges (the mask only adds 0 or -Inf to them). */
#include <math.h>
/* exp for this run (the unmasked run has ref/libm.c's, the same calls): exp(-Inf) = +0 exactly (C99
   Annex F, F.10.3.1) written out, because EVA's model of expf/exp bounds nothing for an argument
   interval that holds -Inf (a masked key's z - max); the other arguments go to Frama-C's expf/exp. */
float rn_expf(float x)
{
    return x == -INFINITY ? 0.0f : expf(x);
}
double rn_exp(double x)
{
    return x == -INFINITY ? 0.0 : exp(x);
}
static float kpm32[EVA_ROWS];
static double kpm64[EVA_ROWS];
static void fin32(const float *v, int n)
{
    for (int k = 0; k < n; k++) {
        //@ assert finite32: \is_finite(v[k]);
    }
}
static void fin64(const double *v, int n)
{
    for (int k = 0; k < n; k++) {
        //@ assert finite64: \is_finite(v[k]);
    }
}
#define EVA_MASKED_SCENARIO(FT, S)                                                                 \
    static void kpm_fill##S(int B, int T, int pat)                                                 \
    {                                                                                              \
        for (int b = 0; b < B; b++)                                                                \
            for (int j = 0; j < T; j++)                                                            \
                kpm##S[b * T + j] = j == 0 ? (FT)EVA_PAD_KEY0 : (FT)((pat >> (b * (T - 1) + j - 1)) & 1); \
    }                                                                                              \
    static void fin_all##S(int B, int T, int H, int d)                                             \
    {                                                                                              \
        fin##S(y##S, B * T * d);                                                                   \
        fin##S(qkv##S, B * T * 3 * d);                                                             \
        fin##S(att##S, B * H * T * T);                                                             \
        fin##S(ctx##S, B * T * d);                                                                 \
    }                                                                                              \
    static void fin_grads##S(int B, int T, int d)                                                  \
    {                                                                                              \
        fin##S(dx##S, B * T * d);                                                                  \
        fin##S(din_w##S, 3 * d * d);                                                               \
        fin##S(din_b##S, 3 * d);                                                                   \
        fin##S(dout_w##S, d * d);                                                                  \
        fin##S(dout_b##S, d);                                                                      \
    }                                                                                              \
    /* forward then backward on its caches, with the key padding mask; am: NULL (eval) or the     \
       dropout mask; every output and cache checked finite after each */                           \
    static void masked_pass##S(const FT *am, FT p, int B, int T, int H, int d, int causal)        \
    {                                                                                              \
        attention_forward_f##S(y##S, qkv##S, att##S, ctx##S, row##S, x##S, in_w##S, in_b##S,        \
                               out_w##S, out_b##S, kpm##S, am, p, B, T, d, H, causal);             \
        fin_all##S(B, T, H, d);                                                                    \
        zero##S();                                                                                 \
        attention_backward_f##S(dx##S, din_w##S, din_b##S, dout_w##S, dout_b##S, dqkv##S, dctx##S, \
                                row##S, dy##S, x##S, in_w##S, out_w##S, qkv##S, att##S, ctx##S, am, \
                                p, B, T, d, H);                                                    \
        fin_grads##S(B, T, d);                                                                     \
    }                                                                                              \
    void eva_m##S(int B, int T, int H, int d, FT p, int causal, int pat)                           \
    {                                                                                              \
        inputs##S();                                                                               \
        kpm_fill##S(B, T, pat);                                                                    \
        masked_pass##S(0, p, B, T, H, d, causal);                                                  \
        masked_pass##S(am##S, p, B, T, H, d, causal);                                              \
    }
EVA_MASKED_SCENARIO(float, 32)
EVA_MASKED_SCENARIO(double, 64)
#endif

int main(void)
{
    int B = Frama_C_interval(1, EVA_B), T = Frama_C_interval(1, EVA_T);
    int H = Frama_C_interval(1, EVA_H), dh = Frama_C_interval(1, EVA_DH);
    /* one EVA state per shape (2·4·2·4 = 64): the kernels' index arithmetic (dh = d / H, the head
       offsets) is then exact, where intervals of B, T, H, dh would not keep d % H == 0 */
    //@ split B;
    //@ split T;
    //@ split H;
    //@ split dh;
    int d = H * dh;
#ifdef EVA_MASKED
    int causal = Frama_C_interval(0, 1);
    //@ split causal;
    int pat = Frama_C_interval(0, (1 << (B * (T - 1))) - 1);
    //@ split pat;
#ifndef EVA_ONLY_F64
    eva_m32(B, T, H, d, Frama_C_float_interval(0.0f, 0.9f), causal, pat);
#endif
#ifndef EVA_ONLY_F32
    eva_m64(B, T, H, d, Frama_C_double_interval(0.0, 0.9), causal, pat);
#endif
#else
#ifndef EVA_ONLY_F64
    eva_f32(B, T, H, d, Frama_C_float_interval(0.0f, 0.9f));
#endif
#ifndef EVA_ONLY_F32
    eva_f64(B, T, H, d, Frama_C_double_interval(0.0, 0.9));
#endif
#endif
    return 0;
}
