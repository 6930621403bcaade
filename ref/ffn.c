/* The feed-forward sublayer's float and double kernels: the code that specs/ffn.h specifies.
 * Composed from the proved linear (ref/linear.c) and dropout (ref/dropout.c) kernels and the
 * activation helpers here (libm through ref/libm.c, specs/libm.h).  The forward keeps z (the
 * pre-activation) and h (the hidden after dropout) for the backward, as llm.c's caches.  Shapes:
 * specs/ffn.h.  The twin is ref/ffn_mpfr.c, the tolerance specs/error-analysis-ffn.md.
 * The double half is the float half with double (and the f64 constants). */
#include "ffn.h"

#include "dropout.h"
#include "libm.h"
#include "linear.h"
#ifdef RESNORM_WP_ROWS
#include "ffn_rows.h" /* the rows run: the forward composed (z_rows, h_def, y_rows) */
#include "ffn_bwd_rows.h" /* and the backward (dw2_sum, db2_sum, dz_rows, dx_rows, dw1_sum, db1_sum) */

#include "rows_fit.h"

/* The rows run: every row of a [rows, n] array fits in it, with lin_row_start as the trigger
   (specs/rows_fit.h). */
/*@ ghost ROWS_FIT_LEMMA(ffn_lemma_rows_fit, ensures rows_fit: ROWS_FIT(lin_row_start);) */
#endif

/* ---- float ---- */

float ffn_relu_f32(float a)
{
    return a > 0 ? a : 0.0f;
}

float ffn_relu_grad_f32(float a, float g)
{
    return a > 0 ? g : 0.0f;
}

/* a/2·(1 + erf(a·C1)): PyTorch's GeluType::None. */
float ffn_gelu_f32(float a)
{
    return 0.5f * a * (1.0f + rn_erff(a * FFN_C1_F32));
}

/* g·((1 + erf(a·C1))/2 + a·exp(-a²/2)·C3): PyTorch's GeluBackward (GeluType::None). */
float ffn_gelu_grad_f32(float a, float g)
{
    float cdf = 0.5f * (1.0f + rn_erff(a * FFN_C1_F32));
    float pdf = rn_expf(-0.5f * a * a) * FFN_C3_F32;
    return g * (cdf + a * pdf);
}

/* a/2·(1 + tanh(C2·(a + K·a³))): PyTorch's GeluType::Tanh. */
float ffn_gelu_tanh_f32(float a)
{
    float inner = FFN_C2_F32 * (a + FFN_K_F32 * a * a * a);
    return 0.5f * a * (1.0f + rn_tanhf(inner));
}

/* g·((1 + t)/2 + a/2·(1 - t²)·C2·(1 + 3K·a²)), t = tanh(C2·(a + K·a³)): PyTorch's GeluBackward
   (GeluType::Tanh). */
float ffn_gelu_tanh_grad_f32(float a, float g)
{
    float t = rn_tanhf(FFN_C2_F32 * (a + FFN_K_F32 * a * a * a));
    float left = 0.5f * (1.0f + t);
    float right = 0.5f * a * (1.0f - t * t) * FFN_C2_F32 * (1.0f + 3.0f * FFN_K_F32 * a * a);
    return g * (left + right);
}

void ffn_act_forward_f32(float *a, const float *z, ffn_act act, int n)
{
    /*@ loop invariant i_range: 0 <= i <= n;
        loop invariant relu: WP_ONLY(act == FFN_RELU ==> \forall integer k; 0 <= k < i ==> a[k] == ffn_relu(z[k]));
        loop invariant gelu: WP_ONLY(act == FFN_GELU ==> \forall integer k; 0 <= k < i ==> a[k] == ffn_gelu(z[k], 0x1.6a09e6p-1));
        loop invariant gelu_tanh: WP_ONLY(act == FFN_GELU_TANH ==>
          \forall integer k; 0 <= k < i ==> a[k] == ffn_gelu_tanh(z[k], 0x1.988454p-1, 0x1.6e4e26p-5));
        loop assigns i, a[0 .. n - 1];
        loop variant n - i; */
    for (int i = 0; i < n; i++)
        a[i] = act == FFN_RELU ? ffn_relu_f32(z[i]) : act == FFN_GELU ? ffn_gelu_f32(z[i]) : ffn_gelu_tanh_f32(z[i]);
}

void ffn_act_backward_f32(float *g, const float *z, ffn_act act, int n)
{
    /*@ loop invariant i_range: 0 <= i <= n;
        loop invariant relu: WP_ONLY(act == FFN_RELU ==>
          \forall integer k; 0 <= k < i ==> g[k] == ffn_relu_grad(z[k], \at(g[k], Pre)));
        loop invariant gelu: WP_ONLY(act == FFN_GELU ==>
          \forall integer k; 0 <= k < i ==> g[k] == ffn_gelu_grad(z[k], \at(g[k], Pre), 0x1.6a09e6p-1, 0x1.988454p-2));
        loop invariant gelu_tanh: WP_ONLY(act == FFN_GELU_TANH ==>
          \forall integer k; 0 <= k < i ==> g[k] == ffn_gelu_tanh_grad(z[k], \at(g[k], Pre), 0x1.988454p-1, 0x1.6e4e26p-5));
        loop invariant todo: WP_ONLY(\forall integer k; i <= k < n ==> g[k] == \at(g[k], Pre));
        loop assigns i, g[0 .. n - 1];
        loop variant n - i; */
    for (int i = 0; i < n; i++)
        g[i] = act == FFN_RELU ? ffn_relu_grad_f32(z[i], g[i])
             : act == FFN_GELU ? ffn_gelu_grad_f32(z[i], g[i]) : ffn_gelu_tanh_grad_f32(z[i], g[i]);
}

void ffn_forward_f32(float *y, float *z, float *h, const float *x, const float *w1, const float *b1,
                     const float *w2, const float *b2, const float *mask, float p, ffn_act act, int rows, int d, int ff)
{
    linear_forward_f32(z, x, w1, b1, rows, d, ff);     /* z = x·w1ᵀ + b1 */
#ifdef RESNORM_WP_ROWS
z_ready:;
#endif
    ffn_act_forward_f32(h, z, act, rows * ff);         /* h = act(z) */
#ifdef RESNORM_WP_ROWS
    /*@ assert act_here: \forall integer i; 0 <= i < rows * ff ==> h[i] == ffn_act32(act, z[i]); */
#endif
    if (mask)                                           /* h = h·mask/(1 - p), in place */
        dropout_forward_f32(h, h, mask, dropout_scale_f32(p), rows * ff);
#ifdef RESNORM_WP_ROWS
    /*@ assert h_here: \forall integer i; 0 <= i < rows * ff ==> h[i] == ffn_h32(act, z, mask, p, i); */
    //@ ghost ffn_lemma_rows_fit(rows, ff);
    //@ ghost ffn_lemma_rows_fit(d, ff);
h_ready:;
#endif
    linear_forward_f32(y, h, w2, b2, rows, ff, d);     /* y = h·w2ᵀ + b2 */
#ifdef RESNORM_WP_ROWS
    /* The rows run: z's rows are as the first call left them, h as h_ready (the last call wrote y
       only: frame facts first); y's rows, stated by the call over h and w2 as it read them (h_ready),
       are over them here: each row's dot over two memory states by lin_dot_shift and
       lin_dot_at_frame (specs/linear_rows.h). */
    /*@ assert h_same: \forall integer k; 0 <= k < rows * ff ==> h[k] == \at(h[k], h_ready); */
    /*@ assert zh_same: \forall integer k; 0 <= k < rows * ff ==> z[k] == \at(z[k], h_ready); */
    /*@ assert h_model_same: \forall integer i; 0 <= i < rows * ff ==>
          \at(ffn_h32(act, z, mask, p, i), h_ready) == ffn_h32(act, z, mask, p, i); */
    /*@ assert w2_same: \forall integer k; 0 <= k < d * ff ==> w2[k] == \at(w2[k], h_ready); */
    /*@ assert b2_same: b2 == \null || \forall integer j; 0 <= j < d ==> b2[j] == \at(b2[j], h_ready); */
    /*@ assert dot_frame: \forall integer q, j; 0 <= q < rows && 0 <= j < d ==>
          \at(lin_dot_at(h, lin_row_start(q, ff), w2, lin_row_start(j, ff), ff), h_ready) ==
          lin_dot_at(h, lin_row_start(q, ff), w2, lin_row_start(j, ff), ff); */
    /*@ assert dot_same: \forall integer q, j; 0 <= q < rows && 0 <= j < d ==>
          \at(lin_dot(h + lin_row_start(q, ff), w2 + lin_row_start(j, ff), ff), h_ready) ==
          lin_dot(h + lin_row_start(q, ff), w2 + lin_row_start(j, ff), ff); */
    /*@ assert bias_same: \forall integer j; 0 <= j < d ==> \at(lin_bias(b2, j), h_ready) == lin_bias(b2, j); */
    /*@ assert y_elems: \forall integer q, j; 0 <= q < rows && 0 <= j < d ==>
          y[lin_row_start(q, d) + j] == lin_bias(b2, j) + lin_dot(h + lin_row_start(q, ff), w2 + lin_row_start(j, ff), ff); */
#endif
}

/* v[i] = c for i < n (dh = 0 before the accumulating linear backward).  The value is proved in
   the loop invariant; it is not exported as a postcondition: a float literal (the caller's 0) in the
   goals after the call trips Why3 1.5.1's real/int typing in the real model ("Type mismatch
   between real and int"), and the callers' goals (RTE, assigns) do not need it. */
#ifdef RESNORM_WP_ROWS
/* The rows run: the value, exported (the backward's dh starts from it). */
/*@ ensures filled: c * c <= 0.0 ==> ffn_zeroed(v, n); */
static void ffn_fill_f32(float *v, float c, int n);
#endif
/*@ requires n_nonneg: n >= 0;
    requires valid_v: \valid(v + (0 .. n - 1));
    assigns v[0 .. n - 1]; */
static void ffn_fill_f32(float *v, float c, int n)
{
    /*@ loop invariant i_range: 0 <= i <= n;
        loop invariant done: WP_ONLY(\forall integer k; 0 <= k < i ==> v[k] == c);
        loop assigns i, v[0 .. n - 1];
        loop variant n - i; */
    for (int i = 0; i < n; i++)
        v[i] = c;
}

void ffn_backward_f32(float *dx, float *dw1, float *db1, float *dw2, float *db2, float *dh, const float *dy,
                      const float *x, const float *z, const float *h, const float *w1, const float *w2,
                      const float *mask, float p, ffn_act act, int rows, int d, int ff)
{
#ifdef RESNORM_WP_ROWS
    //@ ghost ffn_lemma_rows_fit(rows, ff);
    //@ ghost ffn_lemma_rows_fit(rows, d);
    //@ ghost ffn_lemma_rows_fit(d, ff);
    //@ ghost ffn_lemma_rows_fit(ff, d);
    /*@ assert col_idx: \forall integer q, j, n; 0 <= q && 0 <= j < n ==>
          lin_col_idx(q, n, j) == lin_row_start(q, n) + j; */
    /*@ assert dw2_in: \forall integer j, k; 0 <= j < d && 0 <= k < ff ==>
          0 <= lin_col_idx(j, ff, k) < d * ff; */
    /*@ assert dw1_in: \forall integer j, k; 0 <= j < ff && 0 <= k < d ==>
          0 <= lin_col_idx(j, d, k) < d * ff; */
    /*@ assert dh_in: \forall integer r, k; 0 <= r < rows && 0 <= k < ff ==>
          0 <= lin_col_idx(r, ff, k) < rows * ff; */
#endif
    ffn_fill_f32(dh, 0.0f, rows * ff);
#ifdef RESNORM_WP_ROWS
bw_filled:;
#endif
    linear_backward_f32(dh, dw2, db2, dy, h, w2, rows, ff, d); /* dh = dy·w2; dw2, db2 += */
#ifdef RESNORM_WP_ROWS
    /* dh's rows: dy·w2 over dy and w2 as the call read them (only dh was written before it: frame
       facts), carried to the entry's memory by lin_sdot_off_eq and lin_sdot_off_frame
       (specs/linear_rows.h), each row of dy at its offset. */
    /*@ assert dy_fill: \forall integer i; 0 <= i < rows * d ==> \at(dy[i], bw_filled) == \at(dy[i], Pre); */
    /*@ assert w2_fill: \forall integer j, k; 0 <= j < d && 0 <= k < ff ==>
          \at(w2[lin_col_idx(j, ff, k)], bw_filled) == \at(w2[lin_col_idx(j, ff, k)], Pre); */
    /*@ assert g_off: \forall integer r, k; 0 <= r < rows && 0 <= k < ff ==>
          lin_sdot{bw_filled}(dy + lin_row_start(r, d), w2, k, ff, d) ==
          lin_sdot_off{bw_filled}(dy, lin_row_start(r, d), w2, k, ff, d)
          && lin_sdot{Pre}(dy + lin_row_start(r, d), w2, k, ff, d) ==
             lin_sdot_off{Pre}(dy, lin_row_start(r, d), w2, k, ff, d); */
    /*@ assert g_frame: \forall integer r, k; 0 <= r < rows && 0 <= k < ff ==>
          lin_sdot_off{bw_filled}(dy, lin_row_start(r, d), w2, k, ff, d) ==
          lin_sdot_off{Pre}(dy, lin_row_start(r, d), w2, k, ff, d); */
    /*@ assert g_call: \forall integer r, k; 0 <= r < rows && 0 <= k < ff ==>
          dh[lin_row_start(r, ff) + k] == \at(dh[lin_row_start(r, ff) + k], bw_filled) +
            lin_sdot{bw_filled}(dy + lin_row_start(r, d), w2, k, ff, d); */
    /*@ assert g_rows: \forall integer r, k; 0 <= r < rows && 0 <= k < ff ==>
          dh[lin_row_start(r, ff) + k] == lin_sdot{Pre}(dy + lin_row_start(r, d), w2, k, ff, d); */
    /*@ assert g_cols: \forall integer r, k; 0 <= r < rows && 0 <= k < ff ==>
          dh[lin_col_idx(r, ff, k)] == lin_sdot{Pre}(dy + lin_row_start(r, d), w2, k, ff, d); */
bw_dh:;
#endif
    if (mask)                                                    /* dh = dh·mask/(1 - p) */
        dropout_forward_f32(dh, dh, mask, dropout_scale_f32(p), rows * ff);
#ifdef RESNORM_WP_ROWS
    /*@ assert masked: \forall integer i; 0 <= i < rows * ff ==>
          dh[i] == (mask == \null ? \at(dh[i], bw_dh) : dropout_val(\at(dh[i], bw_dh), mask[i], 1.0 / (1.0 - p))); */
    /*@ assert mask_dh: mask == \null || \forall integer i; 0 <= i < rows * ff ==> mask[i] == \at(mask[i], bw_dh); */
    /*@ assert dw2_masked: \forall integer j, k; 0 <= j < d && 0 <= k < ff ==>
          dw2[lin_col_idx(j, ff, k)] == \at(dw2[lin_col_idx(j, ff, k)], bw_dh); */
    /*@ assert z_pre: \forall integer i; 0 <= i < rows * ff ==> z[i] == \at(z[i], Pre); */
    /*@ assert mask_pre: mask == \null || \forall integer i; 0 <= i < rows * ff ==> mask[i] == \at(mask[i], Pre); */
bw_masked:;
#endif
    ffn_act_backward_f32(dh, z, act, rows * ff);                /* dz = act'(z)·dh */
#ifdef RESNORM_WP_ROWS
    /*@ assert z_act: \forall integer i; 0 <= i < rows * ff ==> z[i] == \at(z[i], bw_masked); */
    /*@ assert dz_here: \forall integer i; 0 <= i < rows * ff ==>
          dh[i] == ffn_act_grad32(act, z[i], \at(dh[i], bw_masked)); */
    /*@ assert dz_rows_here: \forall integer r, k; 0 <= r < rows && 0 <= k < ff ==>
          dh[lin_col_idx(r, ff, k)] ==
            ffn_dz32{Pre}(act, z, mask, p, lin_col_idx(r, ff, k), lin_sdot{Pre}(dy + lin_row_start(r, d), w2, k, ff, d)); */
    /*@ assert dw2_dz: \forall integer j, k; 0 <= j < d && 0 <= k < ff ==>
          dw2[lin_col_idx(j, ff, k)] == \at(dw2[lin_col_idx(j, ff, k)], bw_masked); */
    /*@ assert in_dz: \forall integer i; 0 <= i < rows * d ==> dx[i] == \at(dx[i], Pre); */
    /*@ assert dw1_dz: \forall integer j, k; 0 <= j < ff && 0 <= k < d ==>
          dw1[lin_col_idx(j, d, k)] == \at(dw1[lin_col_idx(j, d, k)], Pre); */
    /*@ assert db1_dz: db1 == \null || \forall integer j; 0 <= j < ff ==> db1[j] == \at(db1[j], Pre); */
bw_dz:;
#endif
    linear_backward_f32(dx, dw1, db1, dh, x, w1, rows, d, ff);  /* dx, dw1, db1 += */
#ifdef RESNORM_WP_ROWS
    /* The rows run.  dw2, db2: the first linear_backward's dw_sum and db_sum, over dy and h as it
       read them (bw_filled: only dh was written before it) and restated over the entry's by the
       frame lemmas ffn_dw_sum_frame and ffn_csum_frame (specs/ffn_bwd_rows.h); no later call writes
       dw2 or db2.  dh (dz) as at bw_dz: the last call wrote dx, dw1, db1 only.  dx, dw1, db1: the
       last call's dx_rows, dw_sum and db_sum over dh, x and w1 as it read them (bw_dz), carried
       to return by the same frame lemmas. */
    /*@ assert dw2_same_i: \forall integer i; 0 <= i < d * ff ==> dw2[i] == \at(dw2[i], bw_dz); */
    /*@ assert dw2_same: \forall integer j, k; 0 <= j < d && 0 <= k < ff ==>
          dw2[lin_col_idx(j, ff, k)] == \at(dw2[lin_col_idx(j, ff, k)], bw_dz); */
    /*@ assert dh_same: \forall integer i; 0 <= i < rows * ff ==> dh[i] == \at(dh[i], bw_dz); */
    /*@ assert x_same: \forall integer i; 0 <= i < rows * d ==> x[i] == \at(x[i], bw_dz); */
    /*@ assert w1_same: \forall integer j, k; 0 <= j < ff && 0 <= k < d ==>
          w1[lin_col_idx(j, d, k)] == \at(w1[lin_col_idx(j, d, k)], bw_dz); */
    /*@ assert h_fill: \forall integer i; 0 <= i < rows * ff ==> \at(h[i], bw_filled) == \at(h[i], Pre); */
    /*@ assert dw2_frame: \forall integer j, k; 0 <= j < d && 0 <= k < ff ==>
          lin_dw_sum{bw_filled}(dy, h, j, k, ff, d, rows) == lin_dw_sum{Pre}(dy, h, j, k, ff, d, rows); */
    /*@ assert db2_frame: \forall integer j; 0 <= j < d ==>
          lin_csum{bw_filled}(dy, j, d, rows) == lin_csum{Pre}(dy, j, d, rows); */
    /*@ assert dw2_entry: \forall integer j, k; 0 <= j < d && 0 <= k < ff ==>
          \at(dw2[lin_col_idx(j, ff, k)], bw_filled) == \at(dw2[lin_col_idx(j, ff, k)], Pre); */
    /*@ assert db2_same: db2 == \null || \forall integer j; 0 <= j < d ==>
          db2[j] == \at(db2[j], bw_dh) && \at(db2[j], bw_filled) == \at(db2[j], Pre); */
    /*@ assert dx_call: \forall integer r, k; 0 <= r < rows && 0 <= k < d ==>
          dx[lin_row_start(r, d) + k] == \at(dx[lin_row_start(r, d) + k], bw_dz) +
            lin_sdot{bw_dz}(dh + lin_row_start(r, ff), w1, k, d, ff); */
    /*@ assert dx_off: \forall integer r, k; 0 <= r < rows && 0 <= k < d ==>
          lin_sdot{bw_dz}(dh + lin_row_start(r, ff), w1, k, d, ff) == lin_sdot_off{bw_dz}(dh, lin_row_start(r, ff), w1, k, d, ff)
          && lin_sdot(dh + lin_row_start(r, ff), w1, k, d, ff) == lin_sdot_off(dh, lin_row_start(r, ff), w1, k, d, ff); */
    /*@ assert dx_frame: \forall integer r, k; 0 <= r < rows && 0 <= k < d ==>
          lin_sdot_off{bw_dz}(dh, lin_row_start(r, ff), w1, k, d, ff) == lin_sdot_off(dh, lin_row_start(r, ff), w1, k, d, ff); */
    /*@ assert dw1_frame: \forall integer j, k; 0 <= j < ff && 0 <= k < d ==>
          lin_dw_sum{bw_dz}(dh, x, j, k, d, ff, rows) == lin_dw_sum(dh, x, j, k, d, ff, rows); */
    /*@ assert db1_frame: \forall integer j; 0 <= j < ff ==> lin_csum{bw_dz}(dh, j, ff, rows) == lin_csum(dh, j, ff, rows); */
#endif
}

/* ---- double: the same code with double ---- */

double ffn_relu_f64(double a)
{
    return a > 0 ? a : 0.0;
}

double ffn_relu_grad_f64(double a, double g)
{
    return a > 0 ? g : 0.0;
}

/* a/2·(1 + erf(a·C1)): PyTorch's GeluType::None. */
double ffn_gelu_f64(double a)
{
    return 0.5 * a * (1.0 + rn_erf(a * FFN_C1_F64));
}

/* g·((1 + erf(a·C1))/2 + a·exp(-a²/2)·C3): PyTorch's GeluBackward (GeluType::None). */
double ffn_gelu_grad_f64(double a, double g)
{
    double cdf = 0.5 * (1.0 + rn_erf(a * FFN_C1_F64));
    double pdf = rn_exp(-0.5 * a * a) * FFN_C3_F64;
    return g * (cdf + a * pdf);
}

/* a/2·(1 + tanh(C2·(a + K·a³))): PyTorch's GeluType::Tanh. */
double ffn_gelu_tanh_f64(double a)
{
    double inner = FFN_C2_F64 * (a + FFN_K_F64 * a * a * a);
    return 0.5 * a * (1.0 + rn_tanh(inner));
}

/* g·((1 + t)/2 + a/2·(1 - t²)·C2·(1 + 3K·a²)), t = tanh(C2·(a + K·a³)): PyTorch's GeluBackward
   (GeluType::Tanh). */
double ffn_gelu_tanh_grad_f64(double a, double g)
{
    double t = rn_tanh(FFN_C2_F64 * (a + FFN_K_F64 * a * a * a));
    double left = 0.5 * (1.0 + t);
    double right = 0.5 * a * (1.0 - t * t) * FFN_C2_F64 * (1.0 + 3.0 * FFN_K_F64 * a * a);
    return g * (left + right);
}

void ffn_act_forward_f64(double *a, const double *z, ffn_act act, int n)
{
    /*@ loop invariant i_range: 0 <= i <= n;
        loop invariant relu: WP_ONLY(act == FFN_RELU ==> \forall integer k; 0 <= k < i ==> a[k] == ffn_relu(z[k]));
        loop invariant gelu: WP_ONLY(act == FFN_GELU ==> \forall integer k; 0 <= k < i ==> a[k] == ffn_gelu(z[k], 0x1.6a09e667f3bcdp-1));
        loop invariant gelu_tanh: WP_ONLY(act == FFN_GELU_TANH ==>
          \forall integer k; 0 <= k < i ==> a[k] == ffn_gelu_tanh(z[k], 0x1.9884533d43651p-1, 0x1.6e4e26d4801f7p-5));
        loop assigns i, a[0 .. n - 1];
        loop variant n - i; */
    for (int i = 0; i < n; i++)
        a[i] = act == FFN_RELU ? ffn_relu_f64(z[i]) : act == FFN_GELU ? ffn_gelu_f64(z[i]) : ffn_gelu_tanh_f64(z[i]);
}

void ffn_act_backward_f64(double *g, const double *z, ffn_act act, int n)
{
    /*@ loop invariant i_range: 0 <= i <= n;
        loop invariant relu: WP_ONLY(act == FFN_RELU ==>
          \forall integer k; 0 <= k < i ==> g[k] == ffn_relu_grad(z[k], \at(g[k], Pre)));
        loop invariant gelu: WP_ONLY(act == FFN_GELU ==>
          \forall integer k; 0 <= k < i ==> g[k] == ffn_gelu_grad(z[k], \at(g[k], Pre), 0x1.6a09e667f3bcdp-1, 0x1.9884533d43651p-2));
        loop invariant gelu_tanh: WP_ONLY(act == FFN_GELU_TANH ==>
          \forall integer k; 0 <= k < i ==> g[k] == ffn_gelu_tanh_grad(z[k], \at(g[k], Pre), 0x1.9884533d43651p-1, 0x1.6e4e26d4801f7p-5));
        loop invariant todo: WP_ONLY(\forall integer k; i <= k < n ==> g[k] == \at(g[k], Pre));
        loop assigns i, g[0 .. n - 1];
        loop variant n - i; */
    for (int i = 0; i < n; i++)
        g[i] = act == FFN_RELU ? ffn_relu_grad_f64(z[i], g[i])
             : act == FFN_GELU ? ffn_gelu_grad_f64(z[i], g[i]) : ffn_gelu_tanh_grad_f64(z[i], g[i]);
}

void ffn_forward_f64(double *y, double *z, double *h, const double *x, const double *w1, const double *b1,
                     const double *w2, const double *b2, const double *mask, double p, ffn_act act, int rows, int d, int ff)
{
    linear_forward_f64(z, x, w1, b1, rows, d, ff);     /* z = x·w1ᵀ + b1 */
#ifdef RESNORM_WP_ROWS
z_ready:;
#endif
    ffn_act_forward_f64(h, z, act, rows * ff);         /* h = act(z) */
#ifdef RESNORM_WP_ROWS
    /*@ assert act_here: \forall integer i; 0 <= i < rows * ff ==> h[i] == ffn_act64(act, z[i]); */
#endif
    if (mask)                                           /* h = h·mask/(1 - p), in place */
        dropout_forward_f64(h, h, mask, dropout_scale_f64(p), rows * ff);
#ifdef RESNORM_WP_ROWS
    /*@ assert h_here: \forall integer i; 0 <= i < rows * ff ==> h[i] == ffn_h64(act, z, mask, p, i); */
    //@ ghost ffn_lemma_rows_fit(rows, ff);
    //@ ghost ffn_lemma_rows_fit(d, ff);
h_ready:;
#endif
    linear_forward_f64(y, h, w2, b2, rows, ff, d);     /* y = h·w2ᵀ + b2 */
#ifdef RESNORM_WP_ROWS
    /* The rows run: z's rows are as the first call left them, h as h_ready (the last call wrote y
       only: frame facts first); y's rows, stated by the call over h and w2 as it read them (h_ready),
       are over them here: each row's dot over two memory states by lin_dot_shift and
       lin_dot_at_frame (specs/linear_rows.h). */
    /*@ assert h_same: \forall integer k; 0 <= k < rows * ff ==> h[k] == \at(h[k], h_ready); */
    /*@ assert zh_same: \forall integer k; 0 <= k < rows * ff ==> z[k] == \at(z[k], h_ready); */
    /*@ assert h_model_same: \forall integer i; 0 <= i < rows * ff ==>
          \at(ffn_h64(act, z, mask, p, i), h_ready) == ffn_h64(act, z, mask, p, i); */
    /*@ assert w2_same: \forall integer k; 0 <= k < d * ff ==> w2[k] == \at(w2[k], h_ready); */
    /*@ assert b2_same: b2 == \null || \forall integer j; 0 <= j < d ==> b2[j] == \at(b2[j], h_ready); */
    /*@ assert dot_frame: \forall integer q, j; 0 <= q < rows && 0 <= j < d ==>
          \at(lin_dot_at(h, lin_row_start(q, ff), w2, lin_row_start(j, ff), ff), h_ready) ==
          lin_dot_at(h, lin_row_start(q, ff), w2, lin_row_start(j, ff), ff); */
    /*@ assert dot_same: \forall integer q, j; 0 <= q < rows && 0 <= j < d ==>
          \at(lin_dot(h + lin_row_start(q, ff), w2 + lin_row_start(j, ff), ff), h_ready) ==
          lin_dot(h + lin_row_start(q, ff), w2 + lin_row_start(j, ff), ff); */
    /*@ assert bias_same: \forall integer j; 0 <= j < d ==> \at(lin_bias(b2, j), h_ready) == lin_bias(b2, j); */
    /*@ assert y_elems: \forall integer q, j; 0 <= q < rows && 0 <= j < d ==>
          y[lin_row_start(q, d) + j] == lin_bias(b2, j) + lin_dot(h + lin_row_start(q, ff), w2 + lin_row_start(j, ff), ff); */
#endif
}

/* v[i] = c for i < n (dh = 0 before the accumulating linear backward).  The value is proved in
   the loop invariant; it is not exported as a postcondition: a float literal (the caller's 0) in the
   goals after the call trips Why3 1.5.1's real/int typing in the real model ("Type mismatch
   between real and int"), and the callers' goals (RTE, assigns) do not need it. */
#ifdef RESNORM_WP_ROWS
/* The rows run: the value, exported (the backward's dh starts from it). */
/*@ ensures filled: c * c <= 0.0 ==> ffn_zeroed(v, n); */
static void ffn_fill_f64(double *v, double c, int n);
#endif
/*@ requires n_nonneg: n >= 0;
    requires valid_v: \valid(v + (0 .. n - 1));
    assigns v[0 .. n - 1]; */
static void ffn_fill_f64(double *v, double c, int n)
{
    /*@ loop invariant i_range: 0 <= i <= n;
        loop invariant done: WP_ONLY(\forall integer k; 0 <= k < i ==> v[k] == c);
        loop assigns i, v[0 .. n - 1];
        loop variant n - i; */
    for (int i = 0; i < n; i++)
        v[i] = c;
}

void ffn_backward_f64(double *dx, double *dw1, double *db1, double *dw2, double *db2, double *dh, const double *dy,
                      const double *x, const double *z, const double *h, const double *w1, const double *w2,
                      const double *mask, double p, ffn_act act, int rows, int d, int ff)
{
#ifdef RESNORM_WP_ROWS
    //@ ghost ffn_lemma_rows_fit(rows, ff);
    //@ ghost ffn_lemma_rows_fit(rows, d);
    //@ ghost ffn_lemma_rows_fit(d, ff);
    //@ ghost ffn_lemma_rows_fit(ff, d);
    /*@ assert col_idx: \forall integer q, j, n; 0 <= q && 0 <= j < n ==>
          lin_col_idx(q, n, j) == lin_row_start(q, n) + j; */
    /*@ assert dw2_in: \forall integer j, k; 0 <= j < d && 0 <= k < ff ==>
          0 <= lin_col_idx(j, ff, k) < d * ff; */
    /*@ assert dw1_in: \forall integer j, k; 0 <= j < ff && 0 <= k < d ==>
          0 <= lin_col_idx(j, d, k) < d * ff; */
    /*@ assert dh_in: \forall integer r, k; 0 <= r < rows && 0 <= k < ff ==>
          0 <= lin_col_idx(r, ff, k) < rows * ff; */
#endif
    ffn_fill_f64(dh, 0.0, rows * ff);
#ifdef RESNORM_WP_ROWS
bw_filled:;
#endif
    linear_backward_f64(dh, dw2, db2, dy, h, w2, rows, ff, d); /* dh = dy·w2; dw2, db2 += */
#ifdef RESNORM_WP_ROWS
    /* dh's rows: dy·w2 over dy and w2 as the call read them (only dh was written before it: frame
       facts), carried to the entry's memory by lin_sdot_off_eq and lin_sdot_off_frame
       (specs/linear_rows.h), each row of dy at its offset. */
    /*@ assert dy_fill: \forall integer i; 0 <= i < rows * d ==> \at(dy[i], bw_filled) == \at(dy[i], Pre); */
    /*@ assert w2_fill: \forall integer j, k; 0 <= j < d && 0 <= k < ff ==>
          \at(w2[lin_col_idx(j, ff, k)], bw_filled) == \at(w2[lin_col_idx(j, ff, k)], Pre); */
    /*@ assert g_off: \forall integer r, k; 0 <= r < rows && 0 <= k < ff ==>
          lin_sdot{bw_filled}(dy + lin_row_start(r, d), w2, k, ff, d) ==
          lin_sdot_off{bw_filled}(dy, lin_row_start(r, d), w2, k, ff, d)
          && lin_sdot{Pre}(dy + lin_row_start(r, d), w2, k, ff, d) ==
             lin_sdot_off{Pre}(dy, lin_row_start(r, d), w2, k, ff, d); */
    /*@ assert g_frame: \forall integer r, k; 0 <= r < rows && 0 <= k < ff ==>
          lin_sdot_off{bw_filled}(dy, lin_row_start(r, d), w2, k, ff, d) ==
          lin_sdot_off{Pre}(dy, lin_row_start(r, d), w2, k, ff, d); */
    /*@ assert g_call: \forall integer r, k; 0 <= r < rows && 0 <= k < ff ==>
          dh[lin_row_start(r, ff) + k] == \at(dh[lin_row_start(r, ff) + k], bw_filled) +
            lin_sdot{bw_filled}(dy + lin_row_start(r, d), w2, k, ff, d); */
    /*@ assert g_rows: \forall integer r, k; 0 <= r < rows && 0 <= k < ff ==>
          dh[lin_row_start(r, ff) + k] == lin_sdot{Pre}(dy + lin_row_start(r, d), w2, k, ff, d); */
    /*@ assert g_cols: \forall integer r, k; 0 <= r < rows && 0 <= k < ff ==>
          dh[lin_col_idx(r, ff, k)] == lin_sdot{Pre}(dy + lin_row_start(r, d), w2, k, ff, d); */
bw_dh:;
#endif
    if (mask)                                                    /* dh = dh·mask/(1 - p) */
        dropout_forward_f64(dh, dh, mask, dropout_scale_f64(p), rows * ff);
#ifdef RESNORM_WP_ROWS
    /*@ assert masked: \forall integer i; 0 <= i < rows * ff ==>
          dh[i] == (mask == \null ? \at(dh[i], bw_dh) : dropout_val(\at(dh[i], bw_dh), mask[i], 1.0 / (1.0 - p))); */
    /*@ assert mask_dh: mask == \null || \forall integer i; 0 <= i < rows * ff ==> mask[i] == \at(mask[i], bw_dh); */
    /*@ assert dw2_masked: \forall integer j, k; 0 <= j < d && 0 <= k < ff ==>
          dw2[lin_col_idx(j, ff, k)] == \at(dw2[lin_col_idx(j, ff, k)], bw_dh); */
    /*@ assert z_pre: \forall integer i; 0 <= i < rows * ff ==> z[i] == \at(z[i], Pre); */
    /*@ assert mask_pre: mask == \null || \forall integer i; 0 <= i < rows * ff ==> mask[i] == \at(mask[i], Pre); */
bw_masked:;
#endif
    ffn_act_backward_f64(dh, z, act, rows * ff);                /* dz = act'(z)·dh */
#ifdef RESNORM_WP_ROWS
    /*@ assert z_act: \forall integer i; 0 <= i < rows * ff ==> z[i] == \at(z[i], bw_masked); */
    /*@ assert dz_here: \forall integer i; 0 <= i < rows * ff ==>
          dh[i] == ffn_act_grad64(act, z[i], \at(dh[i], bw_masked)); */
    /*@ assert dz_rows_here: \forall integer r, k; 0 <= r < rows && 0 <= k < ff ==>
          dh[lin_col_idx(r, ff, k)] ==
            ffn_dz64{Pre}(act, z, mask, p, lin_col_idx(r, ff, k), lin_sdot{Pre}(dy + lin_row_start(r, d), w2, k, ff, d)); */
    /*@ assert dw2_dz: \forall integer j, k; 0 <= j < d && 0 <= k < ff ==>
          dw2[lin_col_idx(j, ff, k)] == \at(dw2[lin_col_idx(j, ff, k)], bw_masked); */
    /*@ assert in_dz: \forall integer i; 0 <= i < rows * d ==> dx[i] == \at(dx[i], Pre); */
    /*@ assert dw1_dz: \forall integer j, k; 0 <= j < ff && 0 <= k < d ==>
          dw1[lin_col_idx(j, d, k)] == \at(dw1[lin_col_idx(j, d, k)], Pre); */
    /*@ assert db1_dz: db1 == \null || \forall integer j; 0 <= j < ff ==> db1[j] == \at(db1[j], Pre); */
bw_dz:;
#endif
    linear_backward_f64(dx, dw1, db1, dh, x, w1, rows, d, ff);  /* dx, dw1, db1 += */
#ifdef RESNORM_WP_ROWS
    /* The rows run.  dw2, db2: the first linear_backward's dw_sum and db_sum, over dy and h as it
       read them (bw_filled: only dh was written before it) and restated over the entry's by the
       frame lemmas ffn_dw_sum_frame and ffn_csum_frame (specs/ffn_bwd_rows.h); no later call writes
       dw2 or db2.  dh (dz) as at bw_dz: the last call wrote dx, dw1, db1 only.  dx, dw1, db1: the
       last call's dx_rows, dw_sum and db_sum over dh, x and w1 as it read them (bw_dz), carried
       to return by the same frame lemmas. */
    /*@ assert dw2_same_i: \forall integer i; 0 <= i < d * ff ==> dw2[i] == \at(dw2[i], bw_dz); */
    /*@ assert dw2_same: \forall integer j, k; 0 <= j < d && 0 <= k < ff ==>
          dw2[lin_col_idx(j, ff, k)] == \at(dw2[lin_col_idx(j, ff, k)], bw_dz); */
    /*@ assert dh_same: \forall integer i; 0 <= i < rows * ff ==> dh[i] == \at(dh[i], bw_dz); */
    /*@ assert x_same: \forall integer i; 0 <= i < rows * d ==> x[i] == \at(x[i], bw_dz); */
    /*@ assert w1_same: \forall integer j, k; 0 <= j < ff && 0 <= k < d ==>
          w1[lin_col_idx(j, d, k)] == \at(w1[lin_col_idx(j, d, k)], bw_dz); */
    /*@ assert h_fill: \forall integer i; 0 <= i < rows * ff ==> \at(h[i], bw_filled) == \at(h[i], Pre); */
    /*@ assert dw2_frame: \forall integer j, k; 0 <= j < d && 0 <= k < ff ==>
          lin_dw_sum{bw_filled}(dy, h, j, k, ff, d, rows) == lin_dw_sum{Pre}(dy, h, j, k, ff, d, rows); */
    /*@ assert db2_frame: \forall integer j; 0 <= j < d ==>
          lin_csum{bw_filled}(dy, j, d, rows) == lin_csum{Pre}(dy, j, d, rows); */
    /*@ assert dw2_entry: \forall integer j, k; 0 <= j < d && 0 <= k < ff ==>
          \at(dw2[lin_col_idx(j, ff, k)], bw_filled) == \at(dw2[lin_col_idx(j, ff, k)], Pre); */
    /*@ assert db2_same: db2 == \null || \forall integer j; 0 <= j < d ==>
          db2[j] == \at(db2[j], bw_dh) && \at(db2[j], bw_filled) == \at(db2[j], Pre); */
    /*@ assert dx_call: \forall integer r, k; 0 <= r < rows && 0 <= k < d ==>
          dx[lin_row_start(r, d) + k] == \at(dx[lin_row_start(r, d) + k], bw_dz) +
            lin_sdot{bw_dz}(dh + lin_row_start(r, ff), w1, k, d, ff); */
    /*@ assert dx_off: \forall integer r, k; 0 <= r < rows && 0 <= k < d ==>
          lin_sdot{bw_dz}(dh + lin_row_start(r, ff), w1, k, d, ff) == lin_sdot_off{bw_dz}(dh, lin_row_start(r, ff), w1, k, d, ff)
          && lin_sdot(dh + lin_row_start(r, ff), w1, k, d, ff) == lin_sdot_off(dh, lin_row_start(r, ff), w1, k, d, ff); */
    /*@ assert dx_frame: \forall integer r, k; 0 <= r < rows && 0 <= k < d ==>
          lin_sdot_off{bw_dz}(dh, lin_row_start(r, ff), w1, k, d, ff) == lin_sdot_off(dh, lin_row_start(r, ff), w1, k, d, ff); */
    /*@ assert dw1_frame: \forall integer j, k; 0 <= j < ff && 0 <= k < d ==>
          lin_dw_sum{bw_dz}(dh, x, j, k, d, ff, rows) == lin_dw_sum(dh, x, j, k, d, ff, rows); */
    /*@ assert db1_frame: \forall integer j; 0 <= j < ff ==> lin_csum{bw_dz}(dh, j, ff, rows) == lin_csum(dh, j, ff, rows); */
#endif
}
