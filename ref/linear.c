/* Linear layer kernels, float and double: y = x·Wᵀ + b and its backward, the code that
 * specs/linear.h specifies (llm.c's matmul_forward / matmul_backward without the blocking).
 * Every sum is formed left to right, one product then one addition per term (compile with
 * -ffp-contract=off: an FMA is a rounding the analysis counts differently and the proofs do not
 * model).  Its twin, ref/linear_mpfr.c, forms every sum exactly and rounds once; the tolerance of
 * the difference is specs/error-analysis-linear.md.
 * Shapes: x [rows, in], W [out, in], b [out] or NULL, y [rows, out]; backward dy [rows, out],
 * dx [rows, in], dW [out, in], db [out] or NULL, all three ACCUMULATED (+=). */
#include "linear.h"

/* Ghost lemma functions: index facts the provers need (non-linear in the integers). */
/*@ ghost
  /@ requires 0 <= r < rows && n >= 1;
     assigns \nothing;
     ensures row_start: 0 <= r * n;
     ensures row_end: r * n + n <= rows * n; @/
  static void lemma_lin_row(int r, int rows, int n) {}
*/
/*@ ghost
  /@ requires 0 <= j < n && s >= 1 && 0 <= c < s;
     assigns \nothing;
     ensures idx_lo: 0 <= j * s + c;
     ensures idx_hi: j * s + c < n * s; @/
  static void lemma_lin_index(int j, int n, int s, int c) {}
*/

/* ---- float ---- */

float linear_dot_f32(float acc, const float *x, const float *w, int n)
{
    float s = acc;
    /*@ loop invariant i_range: 0 <= i <= n;
        loop invariant s_def: s == acc + lin_dot(x, w, i);
        loop assigns i, s;
        loop variant n - i; */
    for (int i = 0; i < n; i++)
        s += x[i] * w[i];
    return s;
}

float linear_sdot_f32(float acc, const float *a, const float *w, int c, int s, int n)
{
    float t = acc;
    /*@ loop invariant j_range: 0 <= j <= n;
        loop invariant t_def: t == acc + lin_sdot(a, w, c, s, j);
        loop assigns j, t;
        loop variant n - j; */
    for (int j = 0; j < n; j++) {
        //@ ghost lemma_lin_index(j, n, s, c);
        t += a[j] * w[j * s + c];
    }
    return t;
}

void linear_row_forward_f32(float *y, const float *x, const float *w, const float *b, int in, int out)
{
    /*@ loop invariant j_range: 0 <= j <= out;
        loop assigns j, y[0 .. out - 1];
        loop variant out - j; */
    for (int j = 0; j < out; j++) {
        //@ ghost lemma_lin_row(j, out, in);
        y[j] = linear_dot_f32(b ? b[j] : 0.0f, x, w + j * in, in);
    }
}

/*@ assigns \nothing;
    ensures acc: \result == lin_acc_prod(acc, a, b); */
static inline float lin_acc_prod_f32(float acc, float a, float b)
{
    return acc + a * b;
}

/* dw[k] += dyj·x[k] for k < in: one row of dW (j fixed). */
/*@ requires in_pos: in >= 1;
    requires valid_dw: \valid(dw + (0 .. in - 1));
    requires valid_x: \valid_read(x + (0 .. in - 1));
    requires sep: \separated(dw + (0 .. in - 1), x + (0 .. in - 1));
    assigns dw[0 .. in - 1];
    ensures dw_acc: \forall integer k; 0 <= k < in ==> dw[k] == lin_acc_prod(\old(dw[k]), dyj, \old(x[k]));
*/
static void linear_acc_row_f32(float *dw, float dyj, const float *x, int in)
{
    /*@ loop invariant k_range: 0 <= k <= in;
        loop invariant dw_done: \forall integer kk; 0 <= kk < k ==> dw[kk] == lin_acc_prod(\at(dw[kk], Pre), dyj, \at(x[kk], Pre));
        loop invariant dw_todo: \forall integer kk; k <= kk < in ==> dw[kk] == \at(dw[kk], Pre);
        loop assigns k, dw[0 .. in - 1];
        loop variant in - k; */
    for (int k = 0; k < in; k++) {
        //@ assert frame_in: \forall integer kk; kk == k ==> x[kk] == \at(x[kk], Pre);
        dw[k] = lin_acc_prod_f32(dw[k], dyj, x[k]);
    }
}

/* db[j] += dy[j] for j < out. */
/*@ requires out_pos: out >= 1;
    requires valid_db: \valid(db + (0 .. out - 1));
    requires valid_dy: \valid_read(dy + (0 .. out - 1));
    requires sep: \separated(db + (0 .. out - 1), dy + (0 .. out - 1));
    assigns db[0 .. out - 1];
    ensures db_acc: \forall integer j; 0 <= j < out ==> db[j] == \old(db[j]) + \old(dy[j]);
*/
static void linear_acc_bias_f32(float *db, const float *dy, int out)
{
    /*@ loop invariant j_range: 0 <= j <= out;
        loop invariant db_done: \forall integer jj; 0 <= jj < j ==> db[jj] == \at(db[jj], Pre) + \at(dy[jj], Pre);
        loop invariant db_todo: \forall integer jj; j <= jj < out ==> db[jj] == \at(db[jj], Pre);
        loop assigns j, db[0 .. out - 1];
        loop variant out - j; */
    for (int j = 0; j < out; j++)
        db[j] += dy[j];
}

void linear_row_backward_f32(float *dx, float *dw, float *db, const float *dy, const float *x,
                             const float *w, int in, int out)
{
    /* dx[k] += sum_j dy[j] W[j, k]: column k of W against dy */
    /*@ loop invariant k_range: 0 <= k <= in;
        loop invariant dw_same: \forall integer m; 0 <= m < in * out ==> dw[m] == \at(dw[m], Pre);
        loop assigns k, dx[0 .. in - 1];
        loop variant in - k; */
    for (int k = 0; k < in; k++)
        dx[k] = linear_sdot_f32(dx[k], dy, w, k, in, out);
    /* dW[j, k] += dy[j] x[k], one row of dW per j (linear_acc_row_f32's contract) */
    /*@ loop invariant j_range: 0 <= j <= out;
        loop assigns j, dw[0 .. in * out - 1];
        loop variant out - j; */
    for (int j = 0; j < out; j++) {
        //@ ghost lemma_lin_row(j, out, in);
        linear_acc_row_f32(dw + j * in, dy[j], x, in);
    }
    /* db[j] += dy[j] */
    if (db)
        linear_acc_bias_f32(db, dy, out);
}

void linear_forward_f32(float *y, const float *x, const float *w, const float *b, int rows, int in,
                        int out)
{
    /*@ loop invariant r_range: 0 <= r <= rows;
        loop assigns r, y[0 .. rows * out - 1];
        loop variant rows - r; */
    for (int r = 0; r < rows; r++) {
        //@ ghost lemma_lin_row(r, rows, in);
        //@ ghost lemma_lin_row(r, rows, out);
        linear_row_forward_f32(y + r * out, x + r * in, w, b, in, out);
    }
}

void linear_backward_f32(float *dx, float *dw, float *db, const float *dy, const float *x,
                         const float *w, int rows, int in, int out)
{
    /*@ loop invariant r_range: 0 <= r <= rows;
        loop assigns r, dx[0 .. rows * in - 1], dw[0 .. in * out - 1], db[0 .. out - 1];
        loop variant rows - r; */
    for (int r = 0; r < rows; r++) {
        //@ ghost lemma_lin_row(r, rows, in);
        //@ ghost lemma_lin_row(r, rows, out);
        linear_row_backward_f32(dx + r * in, dw, db, dy + r * out, x + r * in, w, in, out);
    }
}

/* ---- double: the same code with double ---- */

double linear_dot_f64(double acc, const double *x, const double *w, int n)
{
    double s = acc;
    /*@ loop invariant i_range: 0 <= i <= n;
        loop invariant s_def: s == acc + lin_dot(x, w, i);
        loop assigns i, s;
        loop variant n - i; */
    for (int i = 0; i < n; i++)
        s += x[i] * w[i];
    return s;
}

double linear_sdot_f64(double acc, const double *a, const double *w, int c, int s, int n)
{
    double t = acc;
    /*@ loop invariant j_range: 0 <= j <= n;
        loop invariant t_def: t == acc + lin_sdot(a, w, c, s, j);
        loop assigns j, t;
        loop variant n - j; */
    for (int j = 0; j < n; j++) {
        //@ ghost lemma_lin_index(j, n, s, c);
        t += a[j] * w[j * s + c];
    }
    return t;
}

void linear_row_forward_f64(double *y, const double *x, const double *w, const double *b, int in, int out)
{
    /*@ loop invariant j_range: 0 <= j <= out;
        loop assigns j, y[0 .. out - 1];
        loop variant out - j; */
    for (int j = 0; j < out; j++) {
        //@ ghost lemma_lin_row(j, out, in);
        y[j] = linear_dot_f64(b ? b[j] : 0.0, x, w + j * in, in);
    }
}

/*@ assigns \nothing;
    ensures acc: \result == lin_acc_prod(acc, a, b); */
static inline double lin_acc_prod_f64(double acc, double a, double b)
{
    return acc + a * b;
}

/* dw[k] += dyj·x[k] for k < in: one row of dW (j fixed). */
/*@ requires in_pos: in >= 1;
    requires valid_dw: \valid(dw + (0 .. in - 1));
    requires valid_x: \valid_read(x + (0 .. in - 1));
    requires sep: \separated(dw + (0 .. in - 1), x + (0 .. in - 1));
    assigns dw[0 .. in - 1];
    ensures dw_acc: \forall integer k; 0 <= k < in ==> dw[k] == lin_acc_prod(\old(dw[k]), dyj, \old(x[k]));
*/
static void linear_acc_row_f64(double *dw, double dyj, const double *x, int in)
{
    /*@ loop invariant k_range: 0 <= k <= in;
        loop invariant dw_done: \forall integer kk; 0 <= kk < k ==> dw[kk] == lin_acc_prod(\at(dw[kk], Pre), dyj, \at(x[kk], Pre));
        loop invariant dw_todo: \forall integer kk; k <= kk < in ==> dw[kk] == \at(dw[kk], Pre);
        loop assigns k, dw[0 .. in - 1];
        loop variant in - k; */
    for (int k = 0; k < in; k++) {
        //@ assert frame_in: \forall integer kk; kk == k ==> x[kk] == \at(x[kk], Pre);
        dw[k] = lin_acc_prod_f64(dw[k], dyj, x[k]);
    }
}

/* db[j] += dy[j] for j < out. */
/*@ requires out_pos: out >= 1;
    requires valid_db: \valid(db + (0 .. out - 1));
    requires valid_dy: \valid_read(dy + (0 .. out - 1));
    requires sep: \separated(db + (0 .. out - 1), dy + (0 .. out - 1));
    assigns db[0 .. out - 1];
    ensures db_acc: \forall integer j; 0 <= j < out ==> db[j] == \old(db[j]) + \old(dy[j]);
*/
static void linear_acc_bias_f64(double *db, const double *dy, int out)
{
    /*@ loop invariant j_range: 0 <= j <= out;
        loop invariant db_done: \forall integer jj; 0 <= jj < j ==> db[jj] == \at(db[jj], Pre) + \at(dy[jj], Pre);
        loop invariant db_todo: \forall integer jj; j <= jj < out ==> db[jj] == \at(db[jj], Pre);
        loop assigns j, db[0 .. out - 1];
        loop variant out - j; */
    for (int j = 0; j < out; j++)
        db[j] += dy[j];
}

void linear_row_backward_f64(double *dx, double *dw, double *db, const double *dy, const double *x,
                             const double *w, int in, int out)
{
    /* dx[k] += sum_j dy[j] W[j, k]: column k of W against dy */
    /*@ loop invariant k_range: 0 <= k <= in;
        loop invariant dw_same: \forall integer m; 0 <= m < in * out ==> dw[m] == \at(dw[m], Pre);
        loop assigns k, dx[0 .. in - 1];
        loop variant in - k; */
    for (int k = 0; k < in; k++)
        dx[k] = linear_sdot_f64(dx[k], dy, w, k, in, out);
    /* dW[j, k] += dy[j] x[k], one row of dW per j (linear_acc_row_f64's contract) */
    /*@ loop invariant j_range: 0 <= j <= out;
        loop assigns j, dw[0 .. in * out - 1];
        loop variant out - j; */
    for (int j = 0; j < out; j++) {
        //@ ghost lemma_lin_row(j, out, in);
        linear_acc_row_f64(dw + j * in, dy[j], x, in);
    }
    /* db[j] += dy[j] */
    if (db)
        linear_acc_bias_f64(db, dy, out);
}

void linear_forward_f64(double *y, const double *x, const double *w, const double *b, int rows, int in,
                        int out)
{
    /*@ loop invariant r_range: 0 <= r <= rows;
        loop assigns r, y[0 .. rows * out - 1];
        loop variant rows - r; */
    for (int r = 0; r < rows; r++) {
        //@ ghost lemma_lin_row(r, rows, in);
        //@ ghost lemma_lin_row(r, rows, out);
        linear_row_forward_f64(y + r * out, x + r * in, w, b, in, out);
    }
}

void linear_backward_f64(double *dx, double *dw, double *db, const double *dy, const double *x,
                         const double *w, int rows, int in, int out)
{
    /*@ loop invariant r_range: 0 <= r <= rows;
        loop assigns r, dx[0 .. rows * in - 1], dw[0 .. in * out - 1], db[0 .. out - 1];
        loop variant rows - r; */
    for (int r = 0; r < rows; r++) {
        //@ ghost lemma_lin_row(r, rows, in);
        //@ ghost lemma_lin_row(r, rows, out);
        linear_row_backward_f64(dx + r * in, dw, db, dy + r * out, x + r * in, w, in, out);
    }
}
