/* Multi-head self-attention kernels, float and double: the code that specs/attention.h specifies
 * (torch.nn.MultiheadAttention(batch_first=True) on (x, x, x), need_weights=False), composed from
 * the proved kernels of ref/linear.c (in/out projections, every dot product), ref/softmax.c (each
 * score row, max subtracted) and ref/dropout.c (the given attention-dropout mask).  Compile with
 * -ffp-contract=off.  Its twin, ref/attention_mpfr.c, encloses the exact result with Arb balls; the
 * tolerance is specs/error-analysis-attention.md.  Shapes: specs/attention.h. */
#include "attention.h"

#include <math.h>

/*@ requires n >= 0 && \valid(a + (0 .. n - 1));
    assigns a[0 .. n - 1];
    ensures \forall integer k; 0 <= k < n ==> a[k] == 0.0; */
static void attn_zero_f32(float *a, int n)
{
    /*@ loop invariant 0 <= k <= n;
        loop invariant \forall integer j; 0 <= j < k ==> a[j] == 0.0;
        loop assigns k, a[0 .. n - 1];
        loop variant n - k; */
    for (int k = 0; k < n; k++)
        a[k] = 0.0f;
}

/* The additive mask row of query i of batch b: -Inf where key j is masked (causal: j > i; the key
   padding mask: kpm[b, j] != 0), else 0.  Returns m, or NULL when nothing can be masked. */
/*@ requires T >= 1 && 0 <= i < T;
    requires valid_m: \valid(m + (0 .. T - 1));
    requires valid_kpm: kpm == \null || \valid_read(kpm + (0 .. T - 1));
    requires sep: kpm == \null || \separated(m + (0 .. T - 1), kpm + (0 .. T - 1));
    assigns m[0 .. T - 1];
    ensures \result == \null || \result == m; */
static const float *attn_mask_row_f32(float *m, const float *kpm, int i, int T, int causal)
{
    if (!causal && !kpm)
        return 0;
    /*@ loop invariant 0 <= j <= T;
        loop assigns j, m[0 .. T - 1];
        loop variant T - j; */
    for (int j = 0; j < T; j++)
        m[j] = (causal && j > i) || (kpm && kpm[j] != 0.0f) ? -INFINITY : 0.0f;
    return m;
}

/* q /= fl(sqrt(dh)) over the q columns of qkv [rows, 3d] (torch: q_scaled = q / math.sqrt(E)). */
/*@ requires rows >= 1 && d >= 1 && rows * 3 * d <= INT_MAX && sq > 0.0;
    requires \valid(qkv + (0 .. rows * 3 * d - 1));
    assigns qkv[0 .. rows * 3 * d - 1]; */
static void attn_scale_q_f32(float *qkv, float sq, int rows, int d)
{
    /*@ loop invariant 0 <= r <= rows;
        loop assigns r, qkv[0 .. rows * 3 * d - 1];
        loop variant rows - r; */
    for (int r = 0; r < rows; r++)
        /*@ loop invariant 0 <= c <= d;
            loop assigns c, qkv[0 .. rows * 3 * d - 1];
            loop variant d - c; */
        for (int c = 0; c < d; c++)
            qkv[r * 3 * d + c] = qkv[r * 3 * d + c] / sq;
}

/* One query row (b, h, i): scores, softmax into P = att row, dropout, ctx[b, i, head h]. */
static void attn_row_forward_f32(float *ctx, float *att, float *row, const float *qkv,
                                 const float *kpm, const float *amask, float scale, int b, int h,
                                 int i, int T, int d, int H, int causal)
{
    int dh = d / H, d3 = 3 * d;
    const float *qb = qkv + b * T * d3;          /* batch b's rows of qkv: [T, 3d] */
    float *s = row + T;                          /* scores, then the dropped probabilities */
    const float *m = attn_mask_row_f32(row, kpm ? kpm + b * T : 0, i, T, causal);
    float *P = att + ((b * H + h) * T + i) * T;
    for (int j = 0; j < T; j++)
        s[j] = linear_dot_f32(0.0f, qb + i * d3 + h * dh, qb + j * d3 + d + h * dh, dh);
    softmax_row_forward_f32(P, s, m, T);
    const float *A = P;
    if (amask) {
        dropout_forward_f32(s, P, amask + ((b * H + h) * T + i) * T, scale, T);
        A = s;
    }
    for (int c = 0; c < dh; c++)
        ctx[(b * T + i) * d + h * dh + c] = linear_sdot_f32(0.0f, A, qb, 2 * d + h * dh + c, d3, T);
}

void attention_forward_f32(float *y, float *qkv, float *att, float *ctx, float *row, const float *x,
                           const float *in_w, const float *in_b, const float *out_w,
                           const float *out_b, const float *kpm, const float *amask, float p, int B,
                           int T, int d, int H, int causal)
{
    int rows = B * T;
    float scale = amask ? dropout_scale_f32(p) : 1.0f;
    linear_forward_f32(qkv, x, in_w, in_b, rows, d, 3 * d);
    attn_scale_q_f32(qkv, sqrtf((float)(d / H)), rows, d);
    /*@ loop invariant 0 <= b <= B;
        loop assigns b, att[0 .. B * H * T * T - 1], ctx[0 .. B * T * d - 1], row[0 .. 2 * T - 1];
        loop variant B - b; */
    for (int b = 0; b < B; b++)
        /*@ loop invariant 0 <= h <= H;
            loop assigns h, att[0 .. B * H * T * T - 1], ctx[0 .. B * T * d - 1], row[0 .. 2 * T - 1];
            loop variant H - h; */
        for (int h = 0; h < H; h++)
            /*@ loop invariant 0 <= i <= T;
                loop assigns i, att[0 .. B * H * T * T - 1], ctx[0 .. B * T * d - 1], row[0 .. 2 * T - 1];
                loop variant T - i; */
            for (int i = 0; i < T; i++)
                attn_row_forward_f32(ctx, att, row, qkv, kpm, amask, scale, b, h, i, T, d, H, causal);
    linear_forward_f32(y, ctx, out_w, out_b, rows, d, d);
}

/* One query row (b, h, i) of the backward: dv, dS = softmax backward of the dropped dA, dqs, dk. */
static void attn_row_backward_f32(float *dqkv, float *row, const float *dctx, const float *qkv,
                                  const float *att, const float *amask, float scale, int b, int h,
                                  int i, int T, int d, int H)
{
    int dh = d / H, d3 = 3 * d;
    const float *qb = qkv + b * T * d3;
    float *db = dqkv + b * T * d3;
    const float *P = att + ((b * H + h) * T + i) * T;
    const float *mk = amask ? amask + ((b * H + h) * T + i) * T : 0;
    const float *dc = dctx + (b * T + i) * d + h * dh;  /* dctx[b, i, head h]: [dh] */
    const float *qs = qb + i * d3 + h * dh;
    float *dA = row, *dP = row + T;
    /* dA[j] = dctx[i, h]·v[j, h] */
    for (int j = 0; j < T; j++)
        dA[j] = linear_dot_f32(0.0f, dc, qb + j * d3 + 2 * d + h * dh, dh);
    /* dv[j, h] += A[j]·dctx[i, h], A[j] = P[j]·mask[j]·scale (dropout's formula, specs/dropout.h) */
    for (int j = 0; j < T; j++) {
        float a = mk ? P[j] * mk[j] * scale : P[j];
        for (int c = 0; c < dh; c++)
            db[j * d3 + 2 * d + h * dh + c] += a * dc[c];
    }
    /* dP = dropout backward of dA; then dS (into dA) = softmax backward at P */
    for (int j = 0; j < T; j++)
        dP[j] = mk ? 0.0f : dA[j];
    if (mk)
        dropout_backward_f32(dP, dA, mk, scale, T);
    for (int j = 0; j < T; j++)
        dA[j] = 0.0f;
    softmax_row_backward_f32(dA, P, dP, T);
    /* dqs[i, h] = sum_j dS[j]·k[j, h];  dk[j, h] += dS[j]·qs[i, h] */
    for (int c = 0; c < dh; c++)
        db[i * d3 + h * dh + c] = linear_sdot_f32(db[i * d3 + h * dh + c], dA, qb, d + h * dh + c, d3, T);
    for (int j = 0; j < T; j++)
        for (int c = 0; c < dh; c++)
            db[j * d3 + d + h * dh + c] += dA[j] * qs[c];
}

void attention_backward_f32(float *dx, float *din_w, float *din_b, float *dout_w, float *dout_b,
                            float *dqkv, float *dctx, float *row, const float *dy, const float *x,
                            const float *in_w, const float *out_w, const float *qkv,
                            const float *att, const float *ctx, const float *amask, float p, int B,
                            int T, int d, int H)
{
    int rows = B * T;
    float scale = amask ? dropout_scale_f32(p) : 1.0f;
    attn_zero_f32(dctx, rows * d);
    attn_zero_f32(dqkv, rows * 3 * d);
    linear_backward_f32(dctx, dout_w, dout_b, dy, ctx, out_w, rows, d, d);
    /*@ loop invariant 0 <= b <= B;
        loop assigns b, dqkv[0 .. B * T * 3 * d - 1], row[0 .. 2 * T - 1];
        loop variant B - b; */
    for (int b = 0; b < B; b++)
        /*@ loop invariant 0 <= h <= H;
            loop assigns h, dqkv[0 .. B * T * 3 * d - 1], row[0 .. 2 * T - 1];
            loop variant H - h; */
        for (int h = 0; h < H; h++)
            /*@ loop invariant 0 <= i <= T;
                loop assigns i, dqkv[0 .. B * T * 3 * d - 1], row[0 .. 2 * T - 1];
                loop variant T - i; */
            for (int i = 0; i < T; i++)
                attn_row_backward_f32(dqkv, row, dctx, qkv, att, amask, scale, b, h, i, T, d, H);
    attn_scale_q_f32(dqkv, sqrtf((float)(d / H)), rows, d); /* dq = dqs / sqrt(dh) */
    linear_backward_f32(dx, din_w, din_b, dqkv, x, in_w, rows, d, 3 * d);
}

/* ---- double: the same code with double ---- */

/*@ requires n >= 0 && \valid(a + (0 .. n - 1));
    assigns a[0 .. n - 1];
    ensures \forall integer k; 0 <= k < n ==> a[k] == 0.0; */
static void attn_zero_f64(double *a, int n)
{
    /*@ loop invariant 0 <= k <= n;
        loop invariant \forall integer j; 0 <= j < k ==> a[j] == 0.0;
        loop assigns k, a[0 .. n - 1];
        loop variant n - k; */
    for (int k = 0; k < n; k++)
        a[k] = 0.0;
}

/* The additive mask row of query i of batch b: -Inf where key j is masked (causal: j > i; the key
   padding mask: kpm[b, j] != 0), else 0.  Returns m, or NULL when nothing can be masked. */
/*@ requires T >= 1 && 0 <= i < T;
    requires valid_m: \valid(m + (0 .. T - 1));
    requires valid_kpm: kpm == \null || \valid_read(kpm + (0 .. T - 1));
    requires sep: kpm == \null || \separated(m + (0 .. T - 1), kpm + (0 .. T - 1));
    assigns m[0 .. T - 1];
    ensures \result == \null || \result == m; */
static const double *attn_mask_row_f64(double *m, const double *kpm, int i, int T, int causal)
{
    if (!causal && !kpm)
        return 0;
    /*@ loop invariant 0 <= j <= T;
        loop assigns j, m[0 .. T - 1];
        loop variant T - j; */
    for (int j = 0; j < T; j++)
        m[j] = (causal && j > i) || (kpm && kpm[j] != 0.0) ? -INFINITY : 0.0;
    return m;
}

/* q /= fl(sqrt(dh)) over the q columns of qkv [rows, 3d] (torch: q_scaled = q / math.sqrt(E)). */
/*@ requires rows >= 1 && d >= 1 && rows * 3 * d <= INT_MAX && sq > 0.0;
    requires \valid(qkv + (0 .. rows * 3 * d - 1));
    assigns qkv[0 .. rows * 3 * d - 1]; */
static void attn_scale_q_f64(double *qkv, double sq, int rows, int d)
{
    /*@ loop invariant 0 <= r <= rows;
        loop assigns r, qkv[0 .. rows * 3 * d - 1];
        loop variant rows - r; */
    for (int r = 0; r < rows; r++)
        /*@ loop invariant 0 <= c <= d;
            loop assigns c, qkv[0 .. rows * 3 * d - 1];
            loop variant d - c; */
        for (int c = 0; c < d; c++)
            qkv[r * 3 * d + c] = qkv[r * 3 * d + c] / sq;
}

/* One query row (b, h, i): scores, softmax into P = att row, dropout, ctx[b, i, head h]. */
static void attn_row_forward_f64(double *ctx, double *att, double *row, const double *qkv,
                                 const double *kpm, const double *amask, double scale, int b, int h,
                                 int i, int T, int d, int H, int causal)
{
    int dh = d / H, d3 = 3 * d;
    const double *qb = qkv + b * T * d3;          /* batch b's rows of qkv: [T, 3d] */
    double *s = row + T;                          /* scores, then the dropped probabilities */
    const double *m = attn_mask_row_f64(row, kpm ? kpm + b * T : 0, i, T, causal);
    double *P = att + ((b * H + h) * T + i) * T;
    for (int j = 0; j < T; j++)
        s[j] = linear_dot_f64(0.0, qb + i * d3 + h * dh, qb + j * d3 + d + h * dh, dh);
    softmax_row_forward_f64(P, s, m, T);
    const double *A = P;
    if (amask) {
        dropout_forward_f64(s, P, amask + ((b * H + h) * T + i) * T, scale, T);
        A = s;
    }
    for (int c = 0; c < dh; c++)
        ctx[(b * T + i) * d + h * dh + c] = linear_sdot_f64(0.0, A, qb, 2 * d + h * dh + c, d3, T);
}

void attention_forward_f64(double *y, double *qkv, double *att, double *ctx, double *row, const double *x,
                           const double *in_w, const double *in_b, const double *out_w,
                           const double *out_b, const double *kpm, const double *amask, double p, int B,
                           int T, int d, int H, int causal)
{
    int rows = B * T;
    double scale = amask ? dropout_scale_f64(p) : 1.0;
    linear_forward_f64(qkv, x, in_w, in_b, rows, d, 3 * d);
    attn_scale_q_f64(qkv, sqrt((double)(d / H)), rows, d);
    /*@ loop invariant 0 <= b <= B;
        loop assigns b, att[0 .. B * H * T * T - 1], ctx[0 .. B * T * d - 1], row[0 .. 2 * T - 1];
        loop variant B - b; */
    for (int b = 0; b < B; b++)
        /*@ loop invariant 0 <= h <= H;
            loop assigns h, att[0 .. B * H * T * T - 1], ctx[0 .. B * T * d - 1], row[0 .. 2 * T - 1];
            loop variant H - h; */
        for (int h = 0; h < H; h++)
            /*@ loop invariant 0 <= i <= T;
                loop assigns i, att[0 .. B * H * T * T - 1], ctx[0 .. B * T * d - 1], row[0 .. 2 * T - 1];
                loop variant T - i; */
            for (int i = 0; i < T; i++)
                attn_row_forward_f64(ctx, att, row, qkv, kpm, amask, scale, b, h, i, T, d, H, causal);
    linear_forward_f64(y, ctx, out_w, out_b, rows, d, d);
}

/* One query row (b, h, i) of the backward: dv, dS = softmax backward of the dropped dA, dqs, dk. */
static void attn_row_backward_f64(double *dqkv, double *row, const double *dctx, const double *qkv,
                                  const double *att, const double *amask, double scale, int b, int h,
                                  int i, int T, int d, int H)
{
    int dh = d / H, d3 = 3 * d;
    const double *qb = qkv + b * T * d3;
    double *db = dqkv + b * T * d3;
    const double *P = att + ((b * H + h) * T + i) * T;
    const double *mk = amask ? amask + ((b * H + h) * T + i) * T : 0;
    const double *dc = dctx + (b * T + i) * d + h * dh;  /* dctx[b, i, head h]: [dh] */
    const double *qs = qb + i * d3 + h * dh;
    double *dA = row, *dP = row + T;
    /* dA[j] = dctx[i, h]·v[j, h] */
    for (int j = 0; j < T; j++)
        dA[j] = linear_dot_f64(0.0, dc, qb + j * d3 + 2 * d + h * dh, dh);
    /* dv[j, h] += A[j]·dctx[i, h], A[j] = P[j]·mask[j]·scale (dropout's formula, specs/dropout.h) */
    for (int j = 0; j < T; j++) {
        double a = mk ? P[j] * mk[j] * scale : P[j];
        for (int c = 0; c < dh; c++)
            db[j * d3 + 2 * d + h * dh + c] += a * dc[c];
    }
    /* dP = dropout backward of dA; then dS (into dA) = softmax backward at P */
    for (int j = 0; j < T; j++)
        dP[j] = mk ? 0.0 : dA[j];
    if (mk)
        dropout_backward_f64(dP, dA, mk, scale, T);
    for (int j = 0; j < T; j++)
        dA[j] = 0.0;
    softmax_row_backward_f64(dA, P, dP, T);
    /* dqs[i, h] = sum_j dS[j]·k[j, h];  dk[j, h] += dS[j]·qs[i, h] */
    for (int c = 0; c < dh; c++)
        db[i * d3 + h * dh + c] = linear_sdot_f64(db[i * d3 + h * dh + c], dA, qb, d + h * dh + c, d3, T);
    for (int j = 0; j < T; j++)
        for (int c = 0; c < dh; c++)
            db[j * d3 + d + h * dh + c] += dA[j] * qs[c];
}

void attention_backward_f64(double *dx, double *din_w, double *din_b, double *dout_w, double *dout_b,
                            double *dqkv, double *dctx, double *row, const double *dy, const double *x,
                            const double *in_w, const double *out_w, const double *qkv,
                            const double *att, const double *ctx, const double *amask, double p, int B,
                            int T, int d, int H)
{
    int rows = B * T;
    double scale = amask ? dropout_scale_f64(p) : 1.0;
    attn_zero_f64(dctx, rows * d);
    attn_zero_f64(dqkv, rows * 3 * d);
    linear_backward_f64(dctx, dout_w, dout_b, dy, ctx, out_w, rows, d, d);
    /*@ loop invariant 0 <= b <= B;
        loop assigns b, dqkv[0 .. B * T * 3 * d - 1], row[0 .. 2 * T - 1];
        loop variant B - b; */
    for (int b = 0; b < B; b++)
        /*@ loop invariant 0 <= h <= H;
            loop assigns h, dqkv[0 .. B * T * 3 * d - 1], row[0 .. 2 * T - 1];
            loop variant H - h; */
        for (int h = 0; h < H; h++)
            /*@ loop invariant 0 <= i <= T;
                loop assigns i, dqkv[0 .. B * T * 3 * d - 1], row[0 .. 2 * T - 1];
                loop variant T - i; */
            for (int i = 0; i < T; i++)
                attn_row_backward_f64(dqkv, row, dctx, qkv, att, amask, scale, b, h, i, T, d, H);
    attn_scale_q_f64(dqkv, sqrt((double)(d / H)), rows, d); /* dq = dqs / sqrt(dh) */
    linear_backward_f64(dx, din_w, din_b, dqkv, x, in_w, rows, d, 3 * d);
}
