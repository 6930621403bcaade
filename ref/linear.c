/* Linear layer kernels, float and double: y = x·Wᵀ + b and its backward, the code that
 * specs/linear.h specifies (llm.c's matmul_forward / matmul_backward without the blocking).
 * Every sum is formed left to right, one product then one addition per term (compile with
 * -ffp-contract=off: an FMA is a rounding the analysis counts differently and the proofs do not
 * model).  Its twin, ref/linear_mpfr.c, forms every sum exactly and rounds once; the tolerance of
 * the difference is specs/error-analysis-linear.md.
 * Shapes: x [rows, in], W [out, in], b [out] or NULL, y [rows, out]; backward dy [rows, out],
 * dx [rows, in], dW [out, in], db [out] or NULL, all three ACCUMULATED (+=). */
#include "linear.h"
#include "fperr_linear.h" /* LN_EXACT / LN_FLOAT and the float-model logic of the annotations below */
#ifdef RESNORM_WP_ROWS
#include "linear_rows.h" /* the rows run: the forward drivers' y_rows and its lemmas */
#endif

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
/* Every row q before row r ends at or before row r starts (the drivers' rows done are not touched by
   row r's writes; with r = out: every row of W lies in W). */
/*@ ghost
  /@ requires 0 <= r && n >= 1;
     assigns \nothing;
     ensures rows_before: \forall integer q; 0 <= q < r ==>
       0 <= lin_row_start(q, n) && lin_row_start(q, n) + n <= lin_row_start(r, n); @/
  static void lemma_lin_rows_before(int r, int n) {}
*/

#ifdef RESNORM_WP_ROWS
/* Every column c of a row-major [n, s] matrix lies in it (the rows run: the backward's dx_acc and
   dx_rows, specs/linear_rows.h), for every row j and column c, so that the solvers find it by the term
   lin_col_idx(j, s, c) of the goal.  Proved by a ghost loop over the rows (each step adds s: linear
   in the monomial j·s), where the bare fact j·s + c < n·s did not go through (non-linear). */
/*@ ghost
  /@ requires n >= 0 && s >= 1;
     assigns \nothing;
     ensures col_in: \forall integer j, c; 0 <= j < n && 0 <= c < s ==> 0 <= lin_col_idx(j, s, c) < n * s; @/
  static void lemma_lin_col(int n, int s)
  {
    /@ loop invariant j_range: 0 <= j <= n;
       loop invariant below: \forall integer jj, c; 0 <= jj < j && 0 <= c < s ==>
         0 <= lin_col_idx(jj, s, c) < j * s;
       loop assigns j;
       loop variant n - j; @/
    for (int j = 0; j < n; j++) {}
  }
*/
#endif

/* Float model: a finite float/double is its own rounding (what Gappa needs to know of an operand).
   Read by the float-model run only (proofs/linear_float.sh). */
#ifdef RESNORM_WP_FLOAT
/*@ lemma lin_f32_is_f32: \forall float f; \is_finite(f) ==> is_f32(f);
    lemma lin_f64_is_f64: \forall double f; \is_finite(f) ==> is_f64(f);
*/
#endif

/* ---- float ---- */

/* a * b, one term of a dot product.  Float model: |a|, |b| <= 2^50, so |a * b| <= 2^100 does not
   overflow; the error is u·|a·b| relative, or 2^-150 (half the smallest subnormal) absolute when
   |a·b| <= 2^-125 (Gappa needs the two cases apart: the behaviors; its relative-error theorem wants
   the product above 2^-125, one binade into the normal range, where the ulp is still 2^-149). */
/*@ requires mul_pre: LN_FLOAT(\is_finite(a) && \is_finite(b) && is_f32(a) && is_f32(b));
    requires mul_range: LN_FLOAT(\abs(a) <= 0x1p50 && \abs(b) <= 0x1p50);
    assigns \nothing;
    ensures mul: LN_EXACT(\result == a * b);
    ensures mul_fin: LN_FLOAT(\is_finite(\result));
    ensures mul_abs: LN_FLOAT(\abs(\result) <= 0x1p100);
    ensures mul_rnd: LN_FLOAT(\result == rnd32(a * b));
    ensures mul_ab: LN_FLOAT(\abs(a * b) <= 0x1p100);
    behavior normal:
      assumes mul_big: LN_FLOAT(\abs(a * b) >= 0x1p-125);
      ensures mul_err: LN_FLOAT(\abs(fp_err(rnd32(a * b), a * b)) <= u32 * \abs(a * b));
    behavior tiny:
      assumes mul_small: LN_FLOAT(\abs(a * b) <= 0x1p-125);
      ensures mul_err_tiny: LN_FLOAT(\abs(fp_err(rnd32(a * b), a * b)) <= 0x1p-150); */
static inline float lin_mul_f32(float a, float b)
{
    //@ assert mul_nov: LN_FLOAT(no_ovf32(a * b));
    float p = a * b;
    //@ assert mul_rnd0: LN_FLOAT(p == rnd32(a * b));
    //@ assert mul_q: LN_FLOAT(\abs(rnd32(a * b)) <= 0x1p100);
    return p;
}

/* a + b, the running sum of a dot product (a sum of two floats is exact below the normal range: no
   absolute term). */
/*@ requires add_pre: LN_FLOAT(\is_finite(a) && \is_finite(b) && is_f32(a) && is_f32(b));
    requires add_range: LN_FLOAT(\abs(a) <= 0x1p120 && \abs(b) <= 0x1p120);
    assigns \nothing;
    ensures add: LN_EXACT(\result == a + b);
    ensures add_fin: LN_FLOAT(\is_finite(\result));
    ensures add_rnd: LN_FLOAT(\result == rnd32(a + b));
    ensures add_err: LN_FLOAT(\abs(fp_err(rnd32(a + b), a + b)) <= u32 * \abs(a + b)); */
static inline float lin_add_f32(float a, float b)
{
    //@ assert add_nov: LN_FLOAT(no_ovf32(a + b));
    return a + b;
}

/* Ghost lemma function (float model; \true in the real-model run): products of non-negative factors
   that cvc5/z3 did not always prove inside linear_dot_f32's loop, proved here with no other context and
   called where they are used (k = 4096 - (i + 1) is passed in: with the difference written out in the
   product, they did not prove it even here). */
/*@ ghost
  /@ requires h_pre: LN_FLOAT(0 <= i < 4096 && 0 <= k && 0 <= lin_adot(x, w, i));
     assigns \nothing;
     ensures h_1: LN_FLOAT(0 <= i * (\abs(acc) + lin_adot(x, w, i)));
     ensures h_2: LN_FLOAT(0 <= k * (\abs(acc) + lin_adot(x, w, i)));
     ensures p_1: LN_FLOAT(0 <= i * \abs(x[i] * w[i])); @/
  static void lemma_lin_dot_hints_f32(float acc, const float *x, const float *w, int i, int k) {}
*/

/* acc + x_0 w_0 + ... + x_{n-1} w_{n-1}, left to right, one product then one addition per term.
   Float model (specs/error-analysis-linear.md §2-§3, m = n + 1 terms, acc the first):
   |s - (acc + sum_k x_k w_k)| <= (1 + 2^-11)·(n + 1)·u·(|acc| + sum_k |x_k w_k|) + n·2^-149
   (lin_err32, specs/fperr_linear.h).  The step (the assertions of the loop): with e_i the error
   after i terms, A_i = |acc| + sum_{k<i} |x_k w_k|, p = x_i w_i and eta = 2^-150,
   e_{i+1} <= u A_i + u |p| + (1 + u) e_i + (1 + u)(u |p| + eta), and with c = 1 + 2^-11,
   u + (1 + u) c (i + 1) u <= c (i + 2) u as long as c (1 - (i + 1) u) >= 1, i.e. for i + 1 <= 4096. */
float linear_dot_f32(float acc, const float *x, const float *w, int n)
{
    float s = acc;
    /*@ loop invariant i_range: 0 <= i <= n;
        loop invariant s_def: LN_EXACT(s == acc + lin_dot(x, w, i));
        loop invariant n_max: LN_FLOAT(n <= 4096);
        loop invariant s_fin: LN_FLOAT(\is_finite(s));
        loop invariant a_bound: LN_FLOAT(0 <= lin_adot(x, w, i) <= i * 0x1p100);
        loop invariant s_abs: LN_FLOAT(\abs(acc + lin_dot(x, w, i)) <= \abs(acc) + lin_adot(x, w, i));
        loop invariant s_err: LN_FLOAT(\abs(s - (acc + lin_dot(x, w, i))) <= lin_err32(i, \abs(acc) + lin_adot(x, w, i)));
        loop assigns i, s;
        loop variant n - i; */
    for (int i = 0; i < n; i++) {
        //@ ghost lemma_lin_dot_hints_f32(acc, x, w, i, 4096 - (i + 1));
        //@ assert x_fin: LN_FLOAT(\is_finite(x[i]) && \abs(x[i]) <= 0x1p50 && \is_finite(w[i]) && \abs(w[i]) <= 0x1p50);
        //@ assert x_flt: LN_FLOAT(is_f32(x[i]) && is_f32(w[i]) && is_f32(s));
        float q = lin_mul_f32(x[i], w[i]);
        //@ assert d_err: LN_FLOAT(\abs(q - x[i] * w[i]) <= u32 * \abs(x[i] * w[i]) + 0x1p-150);
        //@ assert q_range: LN_FLOAT(\abs(q) <= 0x1p120 && \abs(x[i] * w[i]) <= 0x1p100);
        //@ assert q_flt: LN_FLOAT(is_f32(q));
        //@ assert p_1: LN_FLOAT(0 <= i * \abs(x[i] * w[i]));
        //@ assert a_range: LN_FLOAT(\abs(acc) + lin_adot(x, w, i) <= 0x1p113);
        //@ assert h_1: LN_FLOAT(0 <= i * (\abs(acc) + lin_adot(x, w, i)));
        //@ assert h_2: LN_FLOAT(0 <= (4096 - (i + 1)) * (\abs(acc) + lin_adot(x, w, i)));
        //@ assert e_small: LN_FLOAT(\abs(s - (acc + lin_dot(x, w, i))) <= 0x1p-11 * (\abs(acc) + lin_adot(x, w, i)) + 1);
        //@ assert s_range: LN_FLOAT(\abs(s) <= 0x1p120);
        s = lin_add_f32(s, q); /* s += x[i] * w[i] */
        /*@ assert f_err: LN_FLOAT(\abs(s - (\at(s, LoopCurrent) + q)) <= u32 * \abs(\at(s, LoopCurrent) + q)); */
        //@ assert s_next: LN_FLOAT(acc + lin_dot(x, w, i + 1) == (acc + lin_dot(x, w, i)) + x[i] * w[i]);
        //@ assert a_next: LN_FLOAT(lin_adot(x, w, i + 1) == lin_adot(x, w, i) + \abs(x[i] * w[i]));
        /*@ assert tri: LN_FLOAT(\abs(s - (acc + lin_dot(x, w, i + 1)))
                 <= \abs(s - (\at(s, LoopCurrent) + q)) + \abs(\at(s, LoopCurrent) - (acc + lin_dot(x, w, i)))
                    + \abs(q - x[i] * w[i])); */
        /*@ assert tri2: LN_FLOAT(\abs(\at(s, LoopCurrent) + q)
                 <= (\abs(acc) + lin_adot(x, w, i)) + \abs(\at(s, LoopCurrent) - (acc + lin_dot(x, w, i)))
                    + \abs(x[i] * w[i]) + \abs(q - x[i] * w[i])); */
        //@ assert u_val: LN_FLOAT(u32 == 0x1p-24);
        /*@ assert step1: LN_FLOAT(\abs(s - (acc + lin_dot(x, w, i + 1)))
                 <= 0x1p-24 * (\abs(acc) + lin_adot(x, w, i)) + 0x1p-24 * \abs(x[i] * w[i])
                    + (1 + 0x1p-24) * \abs(\at(s, LoopCurrent) - (acc + lin_dot(x, w, i)))
                    + (1 + 0x1p-24) * \abs(q - x[i] * w[i])); */
        /*@ assert e_def: LN_FLOAT(lin_err32(i, \abs(acc) + lin_adot(x, w, i))
                 == (1 + 0x1p-11) * 0x1p-24 * (i * (\abs(acc) + lin_adot(x, w, i))) + (1 + 0x1p-11) * 0x1p-24 * (\abs(acc) + lin_adot(x, w, i))
                    + i * 0x1p-149); */
        /*@ assert step_a: LN_FLOAT(\abs(s - (acc + lin_dot(x, w, i + 1)))
                 <= 0x1p-24 * (\abs(acc) + lin_adot(x, w, i)) + 0x1p-24 * \abs(x[i] * w[i])
                    + (1 + 0x1p-24) * ((1 + 0x1p-11) * 0x1p-24 * (i * (\abs(acc) + lin_adot(x, w, i)))
                                   + (1 + 0x1p-11) * 0x1p-24 * (\abs(acc) + lin_adot(x, w, i)) + i * 0x1p-149)
                    + (1 + 0x1p-24) * (0x1p-24 * \abs(x[i] * w[i]) + 0x1p-150)); */
        /*@ assert k_a: LN_FLOAT(0x1p-24 * (\abs(acc) + lin_adot(x, w, i))
                 + (1 + 0x1p-24) * ((1 + 0x1p-11) * 0x1p-24 * (i * (\abs(acc) + lin_adot(x, w, i))) + (1 + 0x1p-11) * 0x1p-24 * (\abs(acc) + lin_adot(x, w, i)))
                 <= (1 + 0x1p-11) * 0x1p-24 * (i * (\abs(acc) + lin_adot(x, w, i))) + 2 * (1 + 0x1p-11) * 0x1p-24 * (\abs(acc) + lin_adot(x, w, i))); */
        /*@ assert k_p: LN_FLOAT(0x1p-24 * \abs(x[i] * w[i]) + (1 + 0x1p-24) * (0x1p-24 * \abs(x[i] * w[i]))
                 <= (1 + 0x1p-11) * 0x1p-24 * (i * \abs(x[i] * w[i])) + 2 * (1 + 0x1p-11) * 0x1p-24 * \abs(x[i] * w[i])); */
        //@ assert k_e: LN_FLOAT((1 + 0x1p-24) * (i * 0x1p-149) + (1 + 0x1p-24) * (0x1p-150) <= (i + 1) * 0x1p-149);
        /*@ assert step_b: LN_FLOAT(\abs(s - (acc + lin_dot(x, w, i + 1)))
                 <= (1 + 0x1p-11) * 0x1p-24 * (i * (\abs(acc) + lin_adot(x, w, i))) + 2 * (1 + 0x1p-11) * 0x1p-24 * (\abs(acc) + lin_adot(x, w, i))
                    + (1 + 0x1p-11) * 0x1p-24 * (i * \abs(x[i] * w[i])) + 2 * (1 + 0x1p-11) * 0x1p-24 * \abs(x[i] * w[i])
                    + (i + 1) * 0x1p-149); */
        /*@ assert e_next: LN_FLOAT(lin_err32(i + 1, \abs(acc) + lin_adot(x, w, i + 1))
                 == (1 + 0x1p-11) * 0x1p-24 * (i * (\abs(acc) + lin_adot(x, w, i))) + 2 * (1 + 0x1p-11) * 0x1p-24 * (\abs(acc) + lin_adot(x, w, i))
                    + (1 + 0x1p-11) * 0x1p-24 * (i * \abs(x[i] * w[i])) + 2 * (1 + 0x1p-11) * 0x1p-24 * \abs(x[i] * w[i])
                    + (i + 1) * 0x1p-149); */
        /*@ assert step: LN_FLOAT(\abs(s - (acc + lin_dot(x, w, i + 1)))
                 <= lin_err32(i + 1, \abs(acc) + lin_adot(x, w, i + 1))); */
    }
    return s;
}

/* Ghost lemma function (float model; \true in the real-model run): products of two non-negative
   factors that the SMT solvers did not prove inside linear_sdot_f32's loop (its goals carry the
   strided index terms), proved here with no other context, and called where they are used. */
/*@ ghost
  /@ requires h_pre: LN_FLOAT(0 <= j < 4096 && 0 <= k && 0 <= lin_sadot(a, w, c, s, j));
     assigns \nothing;
     ensures h_1: LN_FLOAT(0 <= j * (\abs(acc) + lin_sadot(a, w, c, s, j)));
     ensures h_2: LN_FLOAT(0 <= k * (\abs(acc) + lin_sadot(a, w, c, s, j)));
     ensures p_1: LN_FLOAT(0 <= j * \abs(a[j] * w[j * s + c])); @/
  static void lemma_lin_sdot_hints_f32(float acc, const float *a, const float *w, int c, int s, int j, int k) {}
*/

/* acc + a_0 w[c] + a_1 w[s + c] + ... (column c of a row-major [n, s] matrix), left to right; the
   float model as linear_dot_f32's, with lin_sdot / lin_sadot. */
float linear_sdot_f32(float acc, const float *a, const float *w, int c, int s, int n)
{
    float t = acc;
    /*@ loop invariant j_range: 0 <= j <= n;
        loop invariant t_def: LN_EXACT(t == acc + lin_sdot(a, w, c, s, j));
        loop invariant n_max: LN_FLOAT(n <= 4096);
        loop invariant t_fin: LN_FLOAT(\is_finite(t));
        loop invariant a_bound: LN_FLOAT(0 <= lin_sadot(a, w, c, s, j) <= j * 0x1p100);
        loop invariant t_abs: LN_FLOAT(\abs(acc + lin_sdot(a, w, c, s, j)) <= \abs(acc) + lin_sadot(a, w, c, s, j));
        loop invariant t_err: LN_FLOAT(\abs(t - (acc + lin_sdot(a, w, c, s, j))) <= lin_err32(j, \abs(acc) + lin_sadot(a, w, c, s, j)));
        loop assigns j, t;
        loop variant n - j; */
    for (int j = 0; j < n; j++) {
        //@ ghost lemma_lin_index(j, n, s, c);
        //@ ghost lemma_lin_sdot_hints_f32(acc, a, w, c, s, j, 4096 - (j + 1));
        //@ assert x_fin: LN_FLOAT(\is_finite(a[j]) && \abs(a[j]) <= 0x1p50 && \is_finite(w[j * s + c]) && \abs(w[j * s + c]) <= 0x1p50);
        //@ assert x_flt: LN_FLOAT(is_f32(a[j]) && is_f32(w[j * s + c]) && is_f32(t));
        float q = lin_mul_f32(a[j], w[j * s + c]);
        //@ assert d_err: LN_FLOAT(\abs(q - a[j] * w[j * s + c]) <= u32 * \abs(a[j] * w[j * s + c]) + 0x1p-150);
        //@ assert q_range: LN_FLOAT(\abs(q) <= 0x1p120 && \abs(a[j] * w[j * s + c]) <= 0x1p100);
        //@ assert q_flt: LN_FLOAT(is_f32(q));
        //@ assert p_1: LN_FLOAT(0 <= j * \abs(a[j] * w[j * s + c]));
        //@ assert a_range: LN_FLOAT(\abs(acc) + lin_sadot(a, w, c, s, j) <= 0x1p113);
        //@ assert h_1: LN_FLOAT(0 <= j * (\abs(acc) + lin_sadot(a, w, c, s, j)));
        //@ assert h_2: LN_FLOAT(0 <= (4096 - (j + 1)) * (\abs(acc) + lin_sadot(a, w, c, s, j)));
        //@ assert e_small: LN_FLOAT(\abs(t - (acc + lin_sdot(a, w, c, s, j))) <= 0x1p-11 * (\abs(acc) + lin_sadot(a, w, c, s, j)) + 1);
        //@ assert s_range: LN_FLOAT(\abs(t) <= 0x1p120);
        t = lin_add_f32(t, q); /* t += a[j] * w[j * s + c] */
        /*@ assert f_err: LN_FLOAT(\abs(t - (\at(t, LoopCurrent) + q)) <= u32 * \abs(\at(t, LoopCurrent) + q)); */
        //@ assert s_next: LN_FLOAT(acc + lin_sdot(a, w, c, s, j + 1) == (acc + lin_sdot(a, w, c, s, j)) + a[j] * w[j * s + c]);
        //@ assert a_next: LN_FLOAT(lin_sadot(a, w, c, s, j + 1) == lin_sadot(a, w, c, s, j) + \abs(a[j] * w[j * s + c]));
        /*@ assert tri: LN_FLOAT(\abs(t - (acc + lin_sdot(a, w, c, s, j + 1)))
                 <= \abs(t - (\at(t, LoopCurrent) + q)) + \abs(\at(t, LoopCurrent) - (acc + lin_sdot(a, w, c, s, j)))
                    + \abs(q - a[j] * w[j * s + c])); */
        /*@ assert tri2: LN_FLOAT(\abs(\at(t, LoopCurrent) + q)
                 <= (\abs(acc) + lin_sadot(a, w, c, s, j)) + \abs(\at(t, LoopCurrent) - (acc + lin_sdot(a, w, c, s, j)))
                    + \abs(a[j] * w[j * s + c]) + \abs(q - a[j] * w[j * s + c])); */
        //@ assert u_val: LN_FLOAT(u32 == 0x1p-24);
        /*@ assert step1: LN_FLOAT(\abs(t - (acc + lin_sdot(a, w, c, s, j + 1)))
                 <= 0x1p-24 * (\abs(acc) + lin_sadot(a, w, c, s, j)) + 0x1p-24 * \abs(a[j] * w[j * s + c])
                    + (1 + 0x1p-24) * \abs(\at(t, LoopCurrent) - (acc + lin_sdot(a, w, c, s, j)))
                    + (1 + 0x1p-24) * \abs(q - a[j] * w[j * s + c])); */
        /*@ assert e_def: LN_FLOAT(lin_err32(j, \abs(acc) + lin_sadot(a, w, c, s, j))
                 == (1 + 0x1p-11) * 0x1p-24 * (j * (\abs(acc) + lin_sadot(a, w, c, s, j))) + (1 + 0x1p-11) * 0x1p-24 * (\abs(acc) + lin_sadot(a, w, c, s, j))
                    + j * 0x1p-149); */
        /*@ assert step_a: LN_FLOAT(\abs(t - (acc + lin_sdot(a, w, c, s, j + 1)))
                 <= 0x1p-24 * (\abs(acc) + lin_sadot(a, w, c, s, j)) + 0x1p-24 * \abs(a[j] * w[j * s + c])
                    + (1 + 0x1p-24) * ((1 + 0x1p-11) * 0x1p-24 * (j * (\abs(acc) + lin_sadot(a, w, c, s, j)))
                                   + (1 + 0x1p-11) * 0x1p-24 * (\abs(acc) + lin_sadot(a, w, c, s, j)) + j * 0x1p-149)
                    + (1 + 0x1p-24) * (0x1p-24 * \abs(a[j] * w[j * s + c]) + 0x1p-150)); */
        /*@ assert k_a: LN_FLOAT(0x1p-24 * (\abs(acc) + lin_sadot(a, w, c, s, j))
                 + (1 + 0x1p-24) * ((1 + 0x1p-11) * 0x1p-24 * (j * (\abs(acc) + lin_sadot(a, w, c, s, j))) + (1 + 0x1p-11) * 0x1p-24 * (\abs(acc) + lin_sadot(a, w, c, s, j)))
                 <= (1 + 0x1p-11) * 0x1p-24 * (j * (\abs(acc) + lin_sadot(a, w, c, s, j))) + 2 * (1 + 0x1p-11) * 0x1p-24 * (\abs(acc) + lin_sadot(a, w, c, s, j))); */
        /*@ assert k_p: LN_FLOAT(0x1p-24 * \abs(a[j] * w[j * s + c]) + (1 + 0x1p-24) * (0x1p-24 * \abs(a[j] * w[j * s + c]))
                 <= (1 + 0x1p-11) * 0x1p-24 * (j * \abs(a[j] * w[j * s + c])) + 2 * (1 + 0x1p-11) * 0x1p-24 * \abs(a[j] * w[j * s + c])); */
        //@ assert k_e: LN_FLOAT((1 + 0x1p-24) * (j * 0x1p-149) + (1 + 0x1p-24) * (0x1p-150) <= (j + 1) * 0x1p-149);
        /*@ assert step_b: LN_FLOAT(\abs(t - (acc + lin_sdot(a, w, c, s, j + 1)))
                 <= (1 + 0x1p-11) * 0x1p-24 * (j * (\abs(acc) + lin_sadot(a, w, c, s, j))) + 2 * (1 + 0x1p-11) * 0x1p-24 * (\abs(acc) + lin_sadot(a, w, c, s, j))
                    + (1 + 0x1p-11) * 0x1p-24 * (j * \abs(a[j] * w[j * s + c])) + 2 * (1 + 0x1p-11) * 0x1p-24 * \abs(a[j] * w[j * s + c])
                    + (j + 1) * 0x1p-149); */
        /*@ assert e_next: LN_FLOAT(lin_err32(j + 1, \abs(acc) + lin_sadot(a, w, c, s, j + 1))
                 == (1 + 0x1p-11) * 0x1p-24 * (j * (\abs(acc) + lin_sadot(a, w, c, s, j))) + 2 * (1 + 0x1p-11) * 0x1p-24 * (\abs(acc) + lin_sadot(a, w, c, s, j))
                    + (1 + 0x1p-11) * 0x1p-24 * (j * \abs(a[j] * w[j * s + c])) + 2 * (1 + 0x1p-11) * 0x1p-24 * \abs(a[j] * w[j * s + c])
                    + (j + 1) * 0x1p-149); */
        /*@ assert step: LN_FLOAT(\abs(t - (acc + lin_sdot(a, w, c, s, j + 1)))
                 <= lin_err32(j + 1, \abs(acc) + lin_sadot(a, w, c, s, j + 1))); */
    }
    return t;
}

void linear_row_forward_f32(float *y, const float *x, const float *w, const float *b, int in, int out)
{
    /*@ loop invariant j_range: 0 <= j <= out;
        loop invariant y_done: LN_EXACT(\forall integer jj; 0 <= jj < j ==>
          y[jj] == lin_bias{Pre}(b, jj) + lin_dot{Pre}(x, w + lin_row_start(jj, in), in));
        loop assigns j, y[0 .. out - 1];
        loop variant out - j; */
    for (int j = 0; j < out; j++) {
        //@ ghost lemma_lin_row(j, out, in);
        //@ assert row_at: j * in == lin_row_start(j, in);
#ifndef RESNORM_EVA
        /* Ghost frame (not run): only y was written since entry, so x and row j of W, and their dot,
           are as at entry (an induction over the dot's length, m counting down; see
           proofs/README-sublayers.md, "Rows composed"). */
        /*@ ghost
          int m = in;
          /@ loop invariant m_range: 0 <= m <= in;
             loop invariant fr: LN_EXACT(lin_dot(x, w + j * in, in - m) == lin_dot{Pre}(x, w + j * in, in - m));
             loop assigns m;
             loop variant m; @/
          while (m > 0) m--;
        */
#endif
        y[j] = linear_dot_f32(b ? b[j] : 0.0f, x, w + j * in, in);
    }
}

/*@ assigns \nothing;
    ensures acc: LN_EXACT(\result == lin_acc_prod(acc, a, b)); */
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
    ensures dw_acc: LN_EXACT(\forall integer k; 0 <= k < in ==> dw[k] == lin_acc_prod(\old(dw[k]), dyj, \old(x[k])));
*/
static void linear_acc_row_f32(float *dw, float dyj, const float *x, int in)
{
    /*@ loop invariant k_range: 0 <= k <= in;
        loop invariant dw_done: LN_EXACT(\forall integer kk; 0 <= kk < k ==> dw[kk] == lin_acc_prod(\at(dw[kk], Pre), dyj, \at(x[kk], Pre)));
        loop invariant dw_todo: WP_ONLY(\forall integer kk; k <= kk < in ==> dw[kk] == \at(dw[kk], Pre));
        loop assigns k, dw[0 .. in - 1];
        loop variant in - k; */
    for (int k = 0; k < in; k++) {
        //@ assert frame_in: WP_ONLY(\forall integer kk; kk == k ==> x[kk] == \at(x[kk], Pre));
        dw[k] = lin_acc_prod_f32(dw[k], dyj, x[k]);
    }
}

/* db[j] += dy[j] for j < out. */
/*@ requires out_pos: out >= 1;
    requires valid_db: \valid(db + (0 .. out - 1));
    requires valid_dy: \valid_read(dy + (0 .. out - 1));
    requires sep: \separated(db + (0 .. out - 1), dy + (0 .. out - 1));
    assigns db[0 .. out - 1];
    ensures db_acc: LN_EXACT(\forall integer j; 0 <= j < out ==> db[j] == \old(db[j]) + \old(dy[j]));
*/
static void linear_acc_bias_f32(float *db, const float *dy, int out)
{
    /*@ loop invariant j_range: 0 <= j <= out;
        loop invariant db_done: LN_EXACT(\forall integer jj; 0 <= jj < j ==> db[jj] == \at(db[jj], Pre) + \at(dy[jj], Pre));
        loop invariant db_todo: WP_ONLY(\forall integer jj; j <= jj < out ==> db[jj] == \at(db[jj], Pre));
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
        loop invariant dw_same: WP_ONLY(\forall integer m; 0 <= m < in * out ==> dw[m] == \at(dw[m], Pre));
        LN_ROWS_CLAUSE(loop invariant dy_same: \forall integer j; 0 <= j < out ==> dy[j] == \at(dy[j], Pre);)
        LN_ROWS_CLAUSE(loop invariant w_same: \forall integer m; 0 <= m < in * out ==> w[m] == \at(w[m], Pre);)
        LN_ROWS_CLAUSE(loop invariant dx_done: \forall integer kk; 0 <= kk < k ==>
          dx[kk] == \at(dx[kk], Pre) + lin_sdot{Pre}(dy, w, kk, in, out);)
        LN_ROWS_CLAUSE(loop invariant dx_todo: \forall integer kk; k <= kk < in ==> dx[kk] == \at(dx[kk], Pre);)
        loop assigns k, dx[0 .. in - 1];
        loop variant in - k; */
    for (int k = 0; k < in; k++) {
        dx[k] = linear_sdot_f32(dx[k], dy, w, k, in, out);
#ifdef RESNORM_WP_ROWS
        //@ ghost lemma_lin_col(out, in);
        /* dx[k] (rows run, specs/linear_rows.h dx_acc): the call's sdot_def is over the memory of the
           call (LoopCurrent, where dx[0 .. k-1] were already written); carried to the entry's by the
           lemmas of specs/linear_rows.h (dy and W unchanged).  kk is bound: k, a C local, cannot
           appear under \at(..., Pre). */
        /*@ assert w_col: \forall integer kk, j; kk == k && 0 <= j < out ==>
              \at(w[lin_col_idx(j, in, kk)], LoopCurrent) == \at(w[lin_col_idx(j, in, kk)], Pre); */
        /*@ assert sdot_call: \forall integer kk; kk == k ==>
              \at(lin_sdot(dy, w, kk, in, out), LoopCurrent) == \at(lin_sdot_at(dy, w, kk, in, out), LoopCurrent); */
        /*@ assert sdot_frame: \forall integer kk; kk == k ==>
              \at(lin_sdot_at(dy, w, kk, in, out), LoopCurrent) == \at(lin_sdot_at(dy, w, kk, in, out), Pre); */
        /*@ assert sdot_pre: \forall integer kk; kk == k ==>
              \at(lin_sdot(dy, w, kk, in, out), Pre) == \at(lin_sdot_at(dy, w, kk, in, out), Pre); */
        /*@ assert dx_k: \forall integer kk; kk == k ==> dx[kk] == \at(dx[kk], Pre) + lin_sdot{Pre}(dy, w, kk, in, out); */
#endif
    }
    /* dW[j, k] += dy[j] x[k], one row of dW per j (linear_acc_row_f32's contract) */
    /*@ loop invariant j_range: 0 <= j <= out;
        loop invariant dw_done: LN_EXACT(\forall integer q; 0 <= q < j ==>
          lin_dw_row{Pre, Here}(dw, dy, x, lin_row_start(q, in), q, in));
        loop invariant dw_todo: WP_ONLY(\forall integer m; lin_row_start(j, in) <= m < in * out ==> dw[m] == \at(dw[m], Pre));
        loop assigns j, dw[0 .. in * out - 1];
        loop variant out - j; */
    for (int j = 0; j < out; j++) {
        //@ ghost lemma_lin_row(j, out, in);
        //@ ghost lemma_lin_rows_before(j, in);
        //@ assert row_at: j * in == lin_row_start(j, in) && j * in + in == lin_row_start(j + 1, in);
        linear_acc_row_f32(dw + j * in, dy[j], x, in);
        /*@ assert frame_dw: WP_ONLY(\forall integer m; 0 <= m < lin_row_start(j, in) ==> dw[m] == \at(dw[m], LoopCurrent)); */
        /*@ assert row_j: LN_EXACT(\forall integer q, k; q == j && 0 <= k < in ==>
              dw[lin_row_start(q, in) + k] == lin_acc_prod(\at(dw[lin_row_start(q, in) + k], Pre), \at(dy[q], Pre), \at(x[k], Pre))); */
        /*@ assert rows_old: LN_EXACT(\forall integer q; 0 <= q < j ==>
              lin_dw_row{Pre, LoopCurrent}(dw, dy, x, lin_row_start(q, in), q, in) &&
              lin_dw_row{Pre, Here}(dw, dy, x, lin_row_start(q, in), q, in)); */
        //@ assert row_new: LN_EXACT(lin_dw_row{Pre, Here}(dw, dy, x, lin_row_start(j, in), j, in));
    }
    //@ ghost lemma_lin_rows_before(out, in);
    //@ assert dw_end: lin_row_start(out, in) == in * out;
#ifdef RESNORM_WP_ROWS
    /* dw_mul (rows run, specs/linear_rows.h): dw_acc with the product through lin_mul_v, without the
       predicate, and dW's index as lin_col_idx(j, in, k): the form the backward driver composes over
       the rows (with j·in + k the solvers find no trigger for k, which only occurs under the +). */
    /*@ assert dw_mul_rs: \forall integer j, k; 0 <= j < out && 0 <= k < in ==>
          dw[lin_row_start(j, in) + k] == \at(dw[lin_row_start(j, in) + k], Pre) + lin_mul_v(\at(dy[j], Pre), \at(x[k], Pre)); */
    /*@ assert dw_idx: \forall integer j, k; 0 <= j < out && 0 <= k < in ==> lin_col_idx(j, in, k) == lin_row_start(j, in) + k; */
    /*@ assert dw_mul: \forall integer j, k; 0 <= j < out && 0 <= k < in ==>
          dw[lin_col_idx(j, in, k)] == \at(dw[lin_col_idx(j, in, k)], Pre) + lin_mul_v(\at(dy[j], Pre), \at(x[k], Pre)); */
#endif
    /* db[j] += dy[j] */
    if (db)
        linear_acc_bias_f32(db, dy, out);
}

void linear_forward_f32(float *y, const float *x, const float *w, const float *b, int rows, int in,
                        int out)
{
    /* Rows 0 .. r-1 are done (the rows run only: LN_ROWS_CLAUSE and #ifdef RESNORM_WP_ROWS;
       specs/linear_rows.h): row q of y is row q of x (as at entry) times Wᵀ plus b. */
    /*@ loop invariant r_range: 0 <= r <= rows;
        LN_ROWS_CLAUSE(loop invariant x_same: \forall integer k; 0 <= k < rows * in ==> x[k] == \at(x[k], Pre);)
        LN_ROWS_CLAUSE(loop invariant w_same: \forall integer k; 0 <= k < in * out ==> w[k] == \at(w[k], Pre);)
        LN_ROWS_CLAUSE(loop invariant b_same: b != \null ==> \forall integer k; 0 <= k < out ==> b[k] == \at(b[k], Pre);)
        LN_ROWS_CLAUSE(loop invariant y_done: \forall integer q; 0 <= q < r ==> lin_row_y{Pre, Here}(y, x, w, b, q, in, out);)
        loop assigns r, y[0 .. rows * out - 1];
        loop variant rows - r; */
    for (int r = 0; r < rows; r++) {
        //@ ghost lemma_lin_row(r, rows, in);
        //@ ghost lemma_lin_row(r, rows, out);
#ifdef RESNORM_WP_ROWS
        //@ ghost lemma_lin_rows_before(r, out);
        //@ ghost lemma_lin_rows_before(out, in);
        //@ assert row_at: r * in == lin_row_start(r, in) && r * out == lin_row_start(r, out);
#endif
        linear_row_forward_f32(y + r * out, x + r * in, w, b, in, out);
#ifdef RESNORM_WP_ROWS
        /* The call wrote row r of y only. */
        /*@ assert frame_x: \forall integer k; 0 <= k < rows * in ==> x[k] == \at(x[k], LoopCurrent); */
        /*@ assert frame_w: \forall integer k; 0 <= k < in * out ==> w[k] == \at(w[k], LoopCurrent); */
        /*@ assert frame_b: b != \null ==> \forall integer k; 0 <= k < out ==> b[k] == \at(b[k], LoopCurrent); */
        /*@ assert frame_y: \forall integer k; 0 <= k < lin_row_start(r, out) ==> y[k] == \at(y[k], LoopCurrent); */
        /* Row r: the call's y_def is over the call's memory (LoopCurrent); carried to the entry's by
           the lemmas of specs/linear_rows.h (x's row r and W unchanged: x_same, w_same). q is bound:
           r, a C local, cannot appear under \at(..., Pre). */
        /*@ assert row_call: \forall integer q, j; q == r && 0 <= j < out ==>
              y[lin_row_start(q, out) + j] ==
                \at(lin_bias(b, j) + lin_dot(x + lin_row_start(q, in), w + lin_row_start(j, in), in), LoopCurrent); */
        /*@ assert dot_call: \forall integer q, j; q == r && 0 <= j < out ==>
              \at(lin_dot(x + lin_row_start(q, in), w + lin_row_start(j, in), in), LoopCurrent) ==
              \at(lin_dot_at(x, lin_row_start(q, in), w, lin_row_start(j, in), in), LoopCurrent); */
        /*@ assert x_row: \forall integer q, k; q == r && lin_row_start(q, in) <= k < lin_row_start(q, in) + in ==>
              \at(x[k], LoopCurrent) == \at(x[k], Pre); */
        /*@ assert w_row: \forall integer j, k; 0 <= j < out && lin_row_start(j, in) <= k < lin_row_start(j, in) + in ==>
              \at(w[k], LoopCurrent) == \at(w[k], Pre); */
        /*@ assert dot_frame: \forall integer q, j; q == r && 0 <= j < out ==>
              \at(lin_dot_at(x, lin_row_start(q, in), w, lin_row_start(j, in), in), LoopCurrent) ==
              \at(lin_dot_at(x, lin_row_start(q, in), w, lin_row_start(j, in), in), Pre); */
        /*@ assert dot_pre: \forall integer q, j; q == r && 0 <= j < out ==>
              \at(lin_dot(x + lin_row_start(q, in), w + lin_row_start(j, in), in), Pre) ==
              \at(lin_dot_at(x, lin_row_start(q, in), w, lin_row_start(j, in), in), Pre); */
        /*@ assert bias_pre: \forall integer j; 0 <= j < out ==> \at(lin_bias(b, j), LoopCurrent) == lin_bias{Pre}(b, j); */
        //@ assert row_new: lin_row_y{Pre, Here}(y, x, w, b, r, in, out);
        /*@ assert idx_old: \forall integer q, j; 0 <= q < r && 0 <= j < out ==>
              0 <= lin_row_start(q, out) + j < lin_row_start(r, out); */
        /*@ assert rows_old: \forall integer q; 0 <= q < r ==>
              lin_row_y{Pre, LoopCurrent}(y, x, w, b, q, in, out) && lin_row_y{Pre, Here}(y, x, w, b, q, in, out); */
#endif
    }
}

void linear_backward_f32(float *dx, float *dw, float *db, const float *dy, const float *x,
                         const float *w, int rows, int in, int out)
{
    /* db has accumulated dy's rows 0 .. r-1 (over dy at entry); in the rows run, dx's rows 0 .. r-1
       have accumulated dy's rows times W, and every dW[j, k] the terms dy[q, j]·x[q, k] of rows
       0 .. r-1 (specs/linear_rows.h). */
    /*@ loop invariant r_range: 0 <= r <= rows;
        loop invariant dy_same: WP_ONLY(\forall integer k; 0 <= k < rows * out ==> dy[k] == \at(dy[k], Pre));
        loop invariant db_sum: LN_EXACT(db != \null ==> \forall integer j; 0 <= j < out ==>
          db[j] == \at(db[j], Pre) + lin_csum{Pre}(dy, j, out, r));
        LN_ROWS_CLAUSE(loop invariant w_same: \forall integer m; 0 <= m < in * out ==> w[m] == \at(w[m], Pre);)
        LN_ROWS_CLAUSE(loop invariant dx_done: \forall integer q; 0 <= q < r ==> lin_row_dx{Pre, Here}(dx, dy, w, q, in, out);)
        LN_ROWS_CLAUSE(loop invariant dx_todo: \forall integer k; lin_row_start(r, in) <= k < rows * in ==>
          dx[k] == \at(dx[k], Pre);)
        LN_ROWS_CLAUSE(loop invariant x_same: \forall integer k; 0 <= k < rows * in ==> x[k] == \at(x[k], Pre);)
        LN_ROWS_CLAUSE(loop invariant dw_sum: lin_dw_rows{Pre, Here}(dw, dy, x, r, in, out);)
        loop assigns r, dx[0 .. rows * in - 1], dw[0 .. in * out - 1], db[0 .. out - 1];
        loop variant rows - r; */
    for (int r = 0; r < rows; r++) {
        //@ ghost lemma_lin_row(r, rows, in);
        //@ ghost lemma_lin_row(r, rows, out);
        //@ assert row_at: r * out == lin_row_start(r, out);
#ifdef RESNORM_WP_ROWS
        //@ ghost lemma_lin_rows_before(r, in);
        //@ ghost lemma_lin_col(out, in);
        //@ assert row_at_in: r * in == lin_row_start(r, in) && (r + 1) * in == lin_row_start(r, in) + in;
#endif
        linear_row_backward_f32(dx + r * in, dw, db, dy + r * out, x + r * in, w, in, out);
#ifdef RESNORM_WP_ROWS
        /* The call wrote row r of dx (and dW, db) only; W and dy are as before it. */
        /*@ assert frame_w: \forall integer m; 0 <= m < in * out ==> w[m] == \at(w[m], LoopCurrent); */
        /*@ assert frame_dx: \forall integer k; 0 <= k < rows * in && (k < lin_row_start(r, in) || lin_row_start(r, in) + in <= k) ==>
              dx[k] == \at(dx[k], LoopCurrent); */
        /* Row r: the call's dx_acc (over the call's memory), carried to the entry's by the lemmas of
           specs/linear_rows.h (dy's row r and W unchanged); q is bound (r cannot appear under
           \at(..., Pre)). */
        /*@ assert row_call: \forall integer q, k; q == r && 0 <= k < in ==>
              dx[lin_row_start(q, in) + k] == \at(dx[lin_row_start(q, in) + k], LoopCurrent) +
                \at(lin_sdot(dy + lin_row_start(q, out), w, k, in, out), LoopCurrent); */
        /*@ assert dx_old: \forall integer q, k; q == r && 0 <= k < in ==>
              \at(dx[lin_row_start(q, in) + k], LoopCurrent) == \at(dx[lin_row_start(q, in) + k], Pre); */
        /*@ assert w_cols: \forall integer k, j; 0 <= k < in && 0 <= j < out ==>
              \at(w[lin_col_idx(j, in, k)], LoopCurrent) == \at(w[lin_col_idx(j, in, k)], Pre); */
        /*@ assert dy_row: \forall integer q, i; q == r && lin_row_start(q, out) <= i < lin_row_start(q, out) + out ==>
              \at(dy[i], LoopCurrent) == \at(dy[i], Pre); */
        /*@ assert sd_call: \forall integer q, k; q == r && 0 <= k < in ==>
              \at(lin_sdot(dy + lin_row_start(q, out), w, k, in, out), LoopCurrent) ==
              \at(lin_sdot_off(dy, lin_row_start(q, out), w, k, in, out), LoopCurrent); */
        /*@ assert sd_frame: \forall integer q, k; q == r && 0 <= k < in ==>
              \at(lin_sdot_off(dy, lin_row_start(q, out), w, k, in, out), LoopCurrent) ==
              \at(lin_sdot_off(dy, lin_row_start(q, out), w, k, in, out), Pre); */
        /*@ assert sd_pre: \forall integer q, k; q == r && 0 <= k < in ==>
              \at(lin_sdot(dy + lin_row_start(q, out), w, k, in, out), Pre) ==
              \at(lin_sdot_off(dy, lin_row_start(q, out), w, k, in, out), Pre); */
        //@ assert row_new: lin_row_dx{Pre, Here}(dx, dy, w, r, in, out);
        /*@ assert idx_old: \forall integer q, k; 0 <= q < r && 0 <= k < in ==>
              0 <= lin_row_start(q, in) + k < lin_row_start(r, in); */
        /*@ assert rows_old: \forall integer q; 0 <= q < r ==>
              lin_row_dx{Pre, LoopCurrent}(dx, dy, w, q, in, out) && lin_row_dx{Pre, Here}(dx, dy, w, q, in, out); */
        /* dW: the call's dw_acc added dy[r, j]·x[r, k] to every dW[j, k] (over the call's memory, where
           dy's and x's row r are as at entry): lin_dw_sum's step from r to r + 1, the product through
           lin_mul_v and dW's index as lin_col_idx (specs/linear_rows.h, dw_mul). */
        /*@ assert dw_call: \forall integer j, k; 0 <= j < out && 0 <= k < in ==>
              dw[lin_col_idx(j, in, k)] == \at(dw[lin_col_idx(j, in, k)], LoopCurrent) +
                lin_mul_v(\at((dy + r * out)[j], LoopCurrent), \at((x + r * in)[k], LoopCurrent)); */
        /*@ assert dw_reads: \forall integer q, j, k; q == r && 0 <= j < out && 0 <= k < in ==>
              \at((dy + q * out)[j], LoopCurrent) == \at(dy[lin_row_start(q, out) + j], Pre) &&
              \at((x + q * in)[k], LoopCurrent) == \at(x[lin_row_start(q, in) + k], Pre); */
        /*@ assert dw_step: \forall integer q, j, k; q == r && 0 <= j < out && 0 <= k < in ==>
              dw[lin_col_idx(j, in, k)] == \at(dw[lin_col_idx(j, in, k)], LoopCurrent) +
                lin_mul_v(\at(dy[lin_row_start(q, out) + j], Pre), \at(x[lin_row_start(q, in) + k], Pre)); */
        /*@ assert dw_unfold: \forall integer q, j, k; q == r && 0 <= j < out && 0 <= k < in ==>
              lin_dw_sum{Pre}(dy, x, j, k, in, out, q + 1) == lin_dw_sum{Pre}(dy, x, j, k, in, out, q) +
                lin_mul_v(\at(dy[lin_row_start(q, out) + j], Pre), \at(x[lin_row_start(q, in) + k], Pre)); */
        /*@ assert dw_next: \forall integer q, j, k; q == r && 0 <= j < out && 0 <= k < in ==>
              dw[lin_col_idx(j, in, k)] ==
                \at(dw[lin_col_idx(j, in, k)], Pre) + lin_dw_sum{Pre}(dy, x, j, k, in, out, q + 1); */
#endif
    }
}

/* ---- double: the same code with double ---- */

/* a * b, one term of a dot product.  Float model: |a|, |b| <= 2^50, so |a * b| <= 2^100 does not
   overflow; the error is u·|a·b| relative, or 2^-1075 (half the smallest subnormal) absolute when
   |a·b| <= 2^-1021 (Gappa needs the two cases apart: the behaviors; its relative-error theorem wants
   the product above 2^-1021, one binade into the normal range, where the ulp is still 2^-1074). */
/*@ requires mul_pre: LN_FLOAT(\is_finite(a) && \is_finite(b) && is_f64(a) && is_f64(b));
    requires mul_range: LN_FLOAT(\abs(a) <= 0x1p50 && \abs(b) <= 0x1p50);
    assigns \nothing;
    ensures mul: LN_EXACT(\result == a * b);
    ensures mul_fin: LN_FLOAT(\is_finite(\result));
    ensures mul_abs: LN_FLOAT(\abs(\result) <= 0x1p100);
    ensures mul_rnd: LN_FLOAT(\result == rnd64(a * b));
    ensures mul_ab: LN_FLOAT(\abs(a * b) <= 0x1p100);
    behavior normal:
      assumes mul_big: LN_FLOAT(\abs(a * b) >= 0x1p-1021);
      ensures mul_err: LN_FLOAT(\abs(fp_err(rnd64(a * b), a * b)) <= u64 * \abs(a * b));
    behavior tiny:
      assumes mul_small: LN_FLOAT(\abs(a * b) <= 0x1p-1021);
      ensures mul_err_tiny: LN_FLOAT(\abs(fp_err(rnd64(a * b), a * b)) <= 0x1p-1074 / 2); */
static inline double lin_mul_f64(double a, double b)
{
    //@ assert mul_nov: LN_FLOAT(no_ovf64(a * b));
    double p = a * b;
    //@ assert mul_rnd0: LN_FLOAT(p == rnd64(a * b));
    //@ assert mul_q: LN_FLOAT(\abs(rnd64(a * b)) <= 0x1p100);
    return p;
}

/* a + b, the running sum of a dot product (a sum of two doubles is exact below the normal range: no
   absolute term). */
/*@ requires add_pre: LN_FLOAT(\is_finite(a) && \is_finite(b) && is_f64(a) && is_f64(b));
    requires add_range: LN_FLOAT(\abs(a) <= 0x1p120 && \abs(b) <= 0x1p120);
    assigns \nothing;
    ensures add: LN_EXACT(\result == a + b);
    ensures add_fin: LN_FLOAT(\is_finite(\result));
    ensures add_rnd: LN_FLOAT(\result == rnd64(a + b));
    ensures add_err: LN_FLOAT(\abs(fp_err(rnd64(a + b), a + b)) <= u64 * \abs(a + b)); */
static inline double lin_add_f64(double a, double b)
{
    //@ assert add_nov: LN_FLOAT(no_ovf64(a + b));
    return a + b;
}

/* Ghost lemma function (float model; \true in the real-model run): products of non-negative factors
   that cvc5/z3 did not always prove inside linear_dot_f64's loop, proved here with no other context and
   called where they are used (k = 4096 - (i + 1) is passed in: with the difference written out in the
   product, they did not prove it even here). */
/*@ ghost
  /@ requires h_pre: LN_FLOAT(0 <= i < 4096 && 0 <= k && 0 <= lin_adot(x, w, i));
     assigns \nothing;
     ensures h_1: LN_FLOAT(0 <= i * (\abs(acc) + lin_adot(x, w, i)));
     ensures h_2: LN_FLOAT(0 <= k * (\abs(acc) + lin_adot(x, w, i)));
     ensures p_1: LN_FLOAT(0 <= i * \abs(x[i] * w[i])); @/
  static void lemma_lin_dot_hints_f64(double acc, const double *x, const double *w, int i, int k) {}
*/

/* acc + x_0 w_0 + ... + x_{n-1} w_{n-1}, left to right, one product then one addition per term.
   Float model (specs/error-analysis-linear.md §2-§3, m = n + 1 terms, acc the first):
   |s - (acc + sum_k x_k w_k)| <= (1 + 2^-11)·(n + 1)·u·(|acc| + sum_k |x_k w_k|) + n·2^-1074
   (lin_err64, specs/fperr_linear.h).  The step (the assertions of the loop): with e_i the error
   after i terms, A_i = |acc| + sum_{k<i} |x_k w_k|, p = x_i w_i and eta = 2^-1075,
   e_{i+1} <= u A_i + u |p| + (1 + u) e_i + (1 + u)(u |p| + eta), and with c = 1 + 2^-11,
   u + (1 + u) c (i + 1) u <= c (i + 2) u as long as c (1 - (i + 1) u) >= 1, i.e. for i + 1 <= 4096. */
double linear_dot_f64(double acc, const double *x, const double *w, int n)
{
    double s = acc;
    /*@ loop invariant i_range: 0 <= i <= n;
        loop invariant s_def: LN_EXACT(s == acc + lin_dot(x, w, i));
        loop invariant n_max: LN_FLOAT(n <= 4096);
        loop invariant s_fin: LN_FLOAT(\is_finite(s));
        loop invariant a_bound: LN_FLOAT(0 <= lin_adot(x, w, i) <= i * 0x1p100);
        loop invariant s_abs: LN_FLOAT(\abs(acc + lin_dot(x, w, i)) <= \abs(acc) + lin_adot(x, w, i));
        loop invariant s_err: LN_FLOAT(\abs(s - (acc + lin_dot(x, w, i))) <= lin_err64(i, \abs(acc) + lin_adot(x, w, i)));
        loop assigns i, s;
        loop variant n - i; */
    for (int i = 0; i < n; i++) {
        //@ ghost lemma_lin_dot_hints_f64(acc, x, w, i, 4096 - (i + 1));
        //@ assert x_fin: LN_FLOAT(\is_finite(x[i]) && \abs(x[i]) <= 0x1p50 && \is_finite(w[i]) && \abs(w[i]) <= 0x1p50);
        //@ assert x_flt: LN_FLOAT(is_f64(x[i]) && is_f64(w[i]) && is_f64(s));
        double q = lin_mul_f64(x[i], w[i]);
        //@ assert d_err: LN_FLOAT(\abs(q - x[i] * w[i]) <= u64 * \abs(x[i] * w[i]) + 0x1p-1074 / 2);
        //@ assert q_range: LN_FLOAT(\abs(q) <= 0x1p120 && \abs(x[i] * w[i]) <= 0x1p100);
        //@ assert q_flt: LN_FLOAT(is_f64(q));
        //@ assert p_1: LN_FLOAT(0 <= i * \abs(x[i] * w[i]));
        //@ assert a_range: LN_FLOAT(\abs(acc) + lin_adot(x, w, i) <= 0x1p113);
        //@ assert h_1: LN_FLOAT(0 <= i * (\abs(acc) + lin_adot(x, w, i)));
        //@ assert h_2: LN_FLOAT(0 <= (4096 - (i + 1)) * (\abs(acc) + lin_adot(x, w, i)));
        //@ assert e_small: LN_FLOAT(\abs(s - (acc + lin_dot(x, w, i))) <= 0x1p-11 * (\abs(acc) + lin_adot(x, w, i)) + 1);
        //@ assert s_range: LN_FLOAT(\abs(s) <= 0x1p120);
        s = lin_add_f64(s, q); /* s += x[i] * w[i] */
        /*@ assert f_err: LN_FLOAT(\abs(s - (\at(s, LoopCurrent) + q)) <= u64 * \abs(\at(s, LoopCurrent) + q)); */
        //@ assert s_next: LN_FLOAT(acc + lin_dot(x, w, i + 1) == (acc + lin_dot(x, w, i)) + x[i] * w[i]);
        //@ assert a_next: LN_FLOAT(lin_adot(x, w, i + 1) == lin_adot(x, w, i) + \abs(x[i] * w[i]));
        /*@ assert tri: LN_FLOAT(\abs(s - (acc + lin_dot(x, w, i + 1)))
                 <= \abs(s - (\at(s, LoopCurrent) + q)) + \abs(\at(s, LoopCurrent) - (acc + lin_dot(x, w, i)))
                    + \abs(q - x[i] * w[i])); */
        /*@ assert tri2: LN_FLOAT(\abs(\at(s, LoopCurrent) + q)
                 <= (\abs(acc) + lin_adot(x, w, i)) + \abs(\at(s, LoopCurrent) - (acc + lin_dot(x, w, i)))
                    + \abs(x[i] * w[i]) + \abs(q - x[i] * w[i])); */
        //@ assert u_val: LN_FLOAT(u64 == 0x1p-53);
        /*@ assert step1: LN_FLOAT(\abs(s - (acc + lin_dot(x, w, i + 1)))
                 <= 0x1p-53 * (\abs(acc) + lin_adot(x, w, i)) + 0x1p-53 * \abs(x[i] * w[i])
                    + (1 + 0x1p-53) * \abs(\at(s, LoopCurrent) - (acc + lin_dot(x, w, i)))
                    + (1 + 0x1p-53) * \abs(q - x[i] * w[i])); */
        /*@ assert e_def: LN_FLOAT(lin_err64(i, \abs(acc) + lin_adot(x, w, i))
                 == (1 + 0x1p-11) * 0x1p-53 * (i * (\abs(acc) + lin_adot(x, w, i))) + (1 + 0x1p-11) * 0x1p-53 * (\abs(acc) + lin_adot(x, w, i))
                    + i * 0x1p-1074); */
        /*@ assert step_a: LN_FLOAT(\abs(s - (acc + lin_dot(x, w, i + 1)))
                 <= 0x1p-53 * (\abs(acc) + lin_adot(x, w, i)) + 0x1p-53 * \abs(x[i] * w[i])
                    + (1 + 0x1p-53) * ((1 + 0x1p-11) * 0x1p-53 * (i * (\abs(acc) + lin_adot(x, w, i)))
                                   + (1 + 0x1p-11) * 0x1p-53 * (\abs(acc) + lin_adot(x, w, i)) + i * 0x1p-1074)
                    + (1 + 0x1p-53) * (0x1p-53 * \abs(x[i] * w[i]) + 0x1p-1074 / 2)); */
        /*@ assert k_a: LN_FLOAT(0x1p-53 * (\abs(acc) + lin_adot(x, w, i))
                 + (1 + 0x1p-53) * ((1 + 0x1p-11) * 0x1p-53 * (i * (\abs(acc) + lin_adot(x, w, i))) + (1 + 0x1p-11) * 0x1p-53 * (\abs(acc) + lin_adot(x, w, i)))
                 <= (1 + 0x1p-11) * 0x1p-53 * (i * (\abs(acc) + lin_adot(x, w, i))) + 2 * (1 + 0x1p-11) * 0x1p-53 * (\abs(acc) + lin_adot(x, w, i))); */
        /*@ assert k_p: LN_FLOAT(0x1p-53 * \abs(x[i] * w[i]) + (1 + 0x1p-53) * (0x1p-53 * \abs(x[i] * w[i]))
                 <= (1 + 0x1p-11) * 0x1p-53 * (i * \abs(x[i] * w[i])) + 2 * (1 + 0x1p-11) * 0x1p-53 * \abs(x[i] * w[i])); */
        //@ assert k_e: LN_FLOAT((1 + 0x1p-53) * (i * 0x1p-1074) + (1 + 0x1p-53) * (0x1p-1074 / 2) <= (i + 1) * 0x1p-1074);
        /*@ assert step_b: LN_FLOAT(\abs(s - (acc + lin_dot(x, w, i + 1)))
                 <= (1 + 0x1p-11) * 0x1p-53 * (i * (\abs(acc) + lin_adot(x, w, i))) + 2 * (1 + 0x1p-11) * 0x1p-53 * (\abs(acc) + lin_adot(x, w, i))
                    + (1 + 0x1p-11) * 0x1p-53 * (i * \abs(x[i] * w[i])) + 2 * (1 + 0x1p-11) * 0x1p-53 * \abs(x[i] * w[i])
                    + (i + 1) * 0x1p-1074); */
        /*@ assert e_next: LN_FLOAT(lin_err64(i + 1, \abs(acc) + lin_adot(x, w, i + 1))
                 == (1 + 0x1p-11) * 0x1p-53 * (i * (\abs(acc) + lin_adot(x, w, i))) + 2 * (1 + 0x1p-11) * 0x1p-53 * (\abs(acc) + lin_adot(x, w, i))
                    + (1 + 0x1p-11) * 0x1p-53 * (i * \abs(x[i] * w[i])) + 2 * (1 + 0x1p-11) * 0x1p-53 * \abs(x[i] * w[i])
                    + (i + 1) * 0x1p-1074); */
        /*@ assert step: LN_FLOAT(\abs(s - (acc + lin_dot(x, w, i + 1)))
                 <= lin_err64(i + 1, \abs(acc) + lin_adot(x, w, i + 1))); */
    }
    return s;
}

/* Ghost lemma function (float model; \true in the real-model run): products of two non-negative
   factors that the SMT solvers did not prove inside linear_sdot_f64's loop (its goals carry the
   strided index terms), proved here with no other context, and called where they are used. */
/*@ ghost
  /@ requires h_pre: LN_FLOAT(0 <= j < 4096 && 0 <= k && 0 <= lin_sadot(a, w, c, s, j));
     assigns \nothing;
     ensures h_1: LN_FLOAT(0 <= j * (\abs(acc) + lin_sadot(a, w, c, s, j)));
     ensures h_2: LN_FLOAT(0 <= k * (\abs(acc) + lin_sadot(a, w, c, s, j)));
     ensures p_1: LN_FLOAT(0 <= j * \abs(a[j] * w[j * s + c])); @/
  static void lemma_lin_sdot_hints_f64(double acc, const double *a, const double *w, int c, int s, int j, int k) {}
*/

/* acc + a_0 w[c] + a_1 w[s + c] + ... (column c of a row-major [n, s] matrix), left to right; the
   float model as linear_dot_f64's, with lin_sdot / lin_sadot. */
double linear_sdot_f64(double acc, const double *a, const double *w, int c, int s, int n)
{
    double t = acc;
    /*@ loop invariant j_range: 0 <= j <= n;
        loop invariant t_def: LN_EXACT(t == acc + lin_sdot(a, w, c, s, j));
        loop invariant n_max: LN_FLOAT(n <= 4096);
        loop invariant t_fin: LN_FLOAT(\is_finite(t));
        loop invariant a_bound: LN_FLOAT(0 <= lin_sadot(a, w, c, s, j) <= j * 0x1p100);
        loop invariant t_abs: LN_FLOAT(\abs(acc + lin_sdot(a, w, c, s, j)) <= \abs(acc) + lin_sadot(a, w, c, s, j));
        loop invariant t_err: LN_FLOAT(\abs(t - (acc + lin_sdot(a, w, c, s, j))) <= lin_err64(j, \abs(acc) + lin_sadot(a, w, c, s, j)));
        loop assigns j, t;
        loop variant n - j; */
    for (int j = 0; j < n; j++) {
        //@ ghost lemma_lin_index(j, n, s, c);
        //@ ghost lemma_lin_sdot_hints_f64(acc, a, w, c, s, j, 4096 - (j + 1));
        //@ assert x_fin: LN_FLOAT(\is_finite(a[j]) && \abs(a[j]) <= 0x1p50 && \is_finite(w[j * s + c]) && \abs(w[j * s + c]) <= 0x1p50);
        //@ assert x_flt: LN_FLOAT(is_f64(a[j]) && is_f64(w[j * s + c]) && is_f64(t));
        double q = lin_mul_f64(a[j], w[j * s + c]);
        //@ assert d_err: LN_FLOAT(\abs(q - a[j] * w[j * s + c]) <= u64 * \abs(a[j] * w[j * s + c]) + 0x1p-1074 / 2);
        //@ assert q_range: LN_FLOAT(\abs(q) <= 0x1p120 && \abs(a[j] * w[j * s + c]) <= 0x1p100);
        //@ assert q_flt: LN_FLOAT(is_f64(q));
        //@ assert p_1: LN_FLOAT(0 <= j * \abs(a[j] * w[j * s + c]));
        //@ assert a_range: LN_FLOAT(\abs(acc) + lin_sadot(a, w, c, s, j) <= 0x1p113);
        //@ assert h_1: LN_FLOAT(0 <= j * (\abs(acc) + lin_sadot(a, w, c, s, j)));
        //@ assert h_2: LN_FLOAT(0 <= (4096 - (j + 1)) * (\abs(acc) + lin_sadot(a, w, c, s, j)));
        //@ assert e_small: LN_FLOAT(\abs(t - (acc + lin_sdot(a, w, c, s, j))) <= 0x1p-11 * (\abs(acc) + lin_sadot(a, w, c, s, j)) + 1);
        //@ assert s_range: LN_FLOAT(\abs(t) <= 0x1p120);
        t = lin_add_f64(t, q); /* t += a[j] * w[j * s + c] */
        /*@ assert f_err: LN_FLOAT(\abs(t - (\at(t, LoopCurrent) + q)) <= u64 * \abs(\at(t, LoopCurrent) + q)); */
        //@ assert s_next: LN_FLOAT(acc + lin_sdot(a, w, c, s, j + 1) == (acc + lin_sdot(a, w, c, s, j)) + a[j] * w[j * s + c]);
        //@ assert a_next: LN_FLOAT(lin_sadot(a, w, c, s, j + 1) == lin_sadot(a, w, c, s, j) + \abs(a[j] * w[j * s + c]));
        /*@ assert tri: LN_FLOAT(\abs(t - (acc + lin_sdot(a, w, c, s, j + 1)))
                 <= \abs(t - (\at(t, LoopCurrent) + q)) + \abs(\at(t, LoopCurrent) - (acc + lin_sdot(a, w, c, s, j)))
                    + \abs(q - a[j] * w[j * s + c])); */
        /*@ assert tri2: LN_FLOAT(\abs(\at(t, LoopCurrent) + q)
                 <= (\abs(acc) + lin_sadot(a, w, c, s, j)) + \abs(\at(t, LoopCurrent) - (acc + lin_sdot(a, w, c, s, j)))
                    + \abs(a[j] * w[j * s + c]) + \abs(q - a[j] * w[j * s + c])); */
        //@ assert u_val: LN_FLOAT(u64 == 0x1p-53);
        /*@ assert step1: LN_FLOAT(\abs(t - (acc + lin_sdot(a, w, c, s, j + 1)))
                 <= 0x1p-53 * (\abs(acc) + lin_sadot(a, w, c, s, j)) + 0x1p-53 * \abs(a[j] * w[j * s + c])
                    + (1 + 0x1p-53) * \abs(\at(t, LoopCurrent) - (acc + lin_sdot(a, w, c, s, j)))
                    + (1 + 0x1p-53) * \abs(q - a[j] * w[j * s + c])); */
        /*@ assert e_def: LN_FLOAT(lin_err64(j, \abs(acc) + lin_sadot(a, w, c, s, j))
                 == (1 + 0x1p-11) * 0x1p-53 * (j * (\abs(acc) + lin_sadot(a, w, c, s, j))) + (1 + 0x1p-11) * 0x1p-53 * (\abs(acc) + lin_sadot(a, w, c, s, j))
                    + j * 0x1p-1074); */
        /*@ assert step_a: LN_FLOAT(\abs(t - (acc + lin_sdot(a, w, c, s, j + 1)))
                 <= 0x1p-53 * (\abs(acc) + lin_sadot(a, w, c, s, j)) + 0x1p-53 * \abs(a[j] * w[j * s + c])
                    + (1 + 0x1p-53) * ((1 + 0x1p-11) * 0x1p-53 * (j * (\abs(acc) + lin_sadot(a, w, c, s, j)))
                                   + (1 + 0x1p-11) * 0x1p-53 * (\abs(acc) + lin_sadot(a, w, c, s, j)) + j * 0x1p-1074)
                    + (1 + 0x1p-53) * (0x1p-53 * \abs(a[j] * w[j * s + c]) + 0x1p-1074 / 2)); */
        /*@ assert k_a: LN_FLOAT(0x1p-53 * (\abs(acc) + lin_sadot(a, w, c, s, j))
                 + (1 + 0x1p-53) * ((1 + 0x1p-11) * 0x1p-53 * (j * (\abs(acc) + lin_sadot(a, w, c, s, j))) + (1 + 0x1p-11) * 0x1p-53 * (\abs(acc) + lin_sadot(a, w, c, s, j)))
                 <= (1 + 0x1p-11) * 0x1p-53 * (j * (\abs(acc) + lin_sadot(a, w, c, s, j))) + 2 * (1 + 0x1p-11) * 0x1p-53 * (\abs(acc) + lin_sadot(a, w, c, s, j))); */
        /*@ assert k_p: LN_FLOAT(0x1p-53 * \abs(a[j] * w[j * s + c]) + (1 + 0x1p-53) * (0x1p-53 * \abs(a[j] * w[j * s + c]))
                 <= (1 + 0x1p-11) * 0x1p-53 * (j * \abs(a[j] * w[j * s + c])) + 2 * (1 + 0x1p-11) * 0x1p-53 * \abs(a[j] * w[j * s + c])); */
        //@ assert k_e: LN_FLOAT((1 + 0x1p-53) * (j * 0x1p-1074) + (1 + 0x1p-53) * (0x1p-1074 / 2) <= (j + 1) * 0x1p-1074);
        /*@ assert step_b: LN_FLOAT(\abs(t - (acc + lin_sdot(a, w, c, s, j + 1)))
                 <= (1 + 0x1p-11) * 0x1p-53 * (j * (\abs(acc) + lin_sadot(a, w, c, s, j))) + 2 * (1 + 0x1p-11) * 0x1p-53 * (\abs(acc) + lin_sadot(a, w, c, s, j))
                    + (1 + 0x1p-11) * 0x1p-53 * (j * \abs(a[j] * w[j * s + c])) + 2 * (1 + 0x1p-11) * 0x1p-53 * \abs(a[j] * w[j * s + c])
                    + (j + 1) * 0x1p-1074); */
        /*@ assert e_next: LN_FLOAT(lin_err64(j + 1, \abs(acc) + lin_sadot(a, w, c, s, j + 1))
                 == (1 + 0x1p-11) * 0x1p-53 * (j * (\abs(acc) + lin_sadot(a, w, c, s, j))) + 2 * (1 + 0x1p-11) * 0x1p-53 * (\abs(acc) + lin_sadot(a, w, c, s, j))
                    + (1 + 0x1p-11) * 0x1p-53 * (j * \abs(a[j] * w[j * s + c])) + 2 * (1 + 0x1p-11) * 0x1p-53 * \abs(a[j] * w[j * s + c])
                    + (j + 1) * 0x1p-1074); */
        /*@ assert step: LN_FLOAT(\abs(t - (acc + lin_sdot(a, w, c, s, j + 1)))
                 <= lin_err64(j + 1, \abs(acc) + lin_sadot(a, w, c, s, j + 1))); */
    }
    return t;
}

void linear_row_forward_f64(double *y, const double *x, const double *w, const double *b, int in, int out)
{
    /*@ loop invariant j_range: 0 <= j <= out;
        loop invariant y_done: LN_EXACT(\forall integer jj; 0 <= jj < j ==>
          y[jj] == lin_bias{Pre}(b, jj) + lin_dot{Pre}(x, w + lin_row_start(jj, in), in));
        loop assigns j, y[0 .. out - 1];
        loop variant out - j; */
    for (int j = 0; j < out; j++) {
        //@ ghost lemma_lin_row(j, out, in);
        //@ assert row_at: j * in == lin_row_start(j, in);
#ifndef RESNORM_EVA
        /* Ghost frame (not run): only y was written since entry, so x and row j of W, and their dot,
           are as at entry (an induction over the dot's length, m counting down; see
           proofs/README-sublayers.md, "Rows composed"). */
        /*@ ghost
          int m = in;
          /@ loop invariant m_range: 0 <= m <= in;
             loop invariant fr: LN_EXACT(lin_dot(x, w + j * in, in - m) == lin_dot{Pre}(x, w + j * in, in - m));
             loop assigns m;
             loop variant m; @/
          while (m > 0) m--;
        */
#endif
        y[j] = linear_dot_f64(b ? b[j] : 0.0, x, w + j * in, in);
    }
}

/*@ assigns \nothing;
    ensures acc: LN_EXACT(\result == lin_acc_prod(acc, a, b)); */
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
    ensures dw_acc: LN_EXACT(\forall integer k; 0 <= k < in ==> dw[k] == lin_acc_prod(\old(dw[k]), dyj, \old(x[k])));
*/
static void linear_acc_row_f64(double *dw, double dyj, const double *x, int in)
{
    /*@ loop invariant k_range: 0 <= k <= in;
        loop invariant dw_done: LN_EXACT(\forall integer kk; 0 <= kk < k ==> dw[kk] == lin_acc_prod(\at(dw[kk], Pre), dyj, \at(x[kk], Pre)));
        loop invariant dw_todo: WP_ONLY(\forall integer kk; k <= kk < in ==> dw[kk] == \at(dw[kk], Pre));
        loop assigns k, dw[0 .. in - 1];
        loop variant in - k; */
    for (int k = 0; k < in; k++) {
        //@ assert frame_in: WP_ONLY(\forall integer kk; kk == k ==> x[kk] == \at(x[kk], Pre));
        dw[k] = lin_acc_prod_f64(dw[k], dyj, x[k]);
    }
}

/* db[j] += dy[j] for j < out. */
/*@ requires out_pos: out >= 1;
    requires valid_db: \valid(db + (0 .. out - 1));
    requires valid_dy: \valid_read(dy + (0 .. out - 1));
    requires sep: \separated(db + (0 .. out - 1), dy + (0 .. out - 1));
    assigns db[0 .. out - 1];
    ensures db_acc: LN_EXACT(\forall integer j; 0 <= j < out ==> db[j] == \old(db[j]) + \old(dy[j]));
*/
static void linear_acc_bias_f64(double *db, const double *dy, int out)
{
    /*@ loop invariant j_range: 0 <= j <= out;
        loop invariant db_done: LN_EXACT(\forall integer jj; 0 <= jj < j ==> db[jj] == \at(db[jj], Pre) + \at(dy[jj], Pre));
        loop invariant db_todo: WP_ONLY(\forall integer jj; j <= jj < out ==> db[jj] == \at(db[jj], Pre));
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
        loop invariant dw_same: WP_ONLY(\forall integer m; 0 <= m < in * out ==> dw[m] == \at(dw[m], Pre));
        LN_ROWS_CLAUSE(loop invariant dy_same: \forall integer j; 0 <= j < out ==> dy[j] == \at(dy[j], Pre);)
        LN_ROWS_CLAUSE(loop invariant w_same: \forall integer m; 0 <= m < in * out ==> w[m] == \at(w[m], Pre);)
        LN_ROWS_CLAUSE(loop invariant dx_done: \forall integer kk; 0 <= kk < k ==>
          dx[kk] == \at(dx[kk], Pre) + lin_sdot{Pre}(dy, w, kk, in, out);)
        LN_ROWS_CLAUSE(loop invariant dx_todo: \forall integer kk; k <= kk < in ==> dx[kk] == \at(dx[kk], Pre);)
        loop assigns k, dx[0 .. in - 1];
        loop variant in - k; */
    for (int k = 0; k < in; k++) {
        dx[k] = linear_sdot_f64(dx[k], dy, w, k, in, out);
#ifdef RESNORM_WP_ROWS
        //@ ghost lemma_lin_col(out, in);
        /* dx[k] (rows run, specs/linear_rows.h dx_acc): the call's sdot_def is over the memory of the
           call (LoopCurrent, where dx[0 .. k-1] were already written); carried to the entry's by the
           lemmas of specs/linear_rows.h (dy and W unchanged).  kk is bound: k, a C local, cannot
           appear under \at(..., Pre). */
        /*@ assert w_col: \forall integer kk, j; kk == k && 0 <= j < out ==>
              \at(w[lin_col_idx(j, in, kk)], LoopCurrent) == \at(w[lin_col_idx(j, in, kk)], Pre); */
        /*@ assert sdot_call: \forall integer kk; kk == k ==>
              \at(lin_sdot(dy, w, kk, in, out), LoopCurrent) == \at(lin_sdot_at(dy, w, kk, in, out), LoopCurrent); */
        /*@ assert sdot_frame: \forall integer kk; kk == k ==>
              \at(lin_sdot_at(dy, w, kk, in, out), LoopCurrent) == \at(lin_sdot_at(dy, w, kk, in, out), Pre); */
        /*@ assert sdot_pre: \forall integer kk; kk == k ==>
              \at(lin_sdot(dy, w, kk, in, out), Pre) == \at(lin_sdot_at(dy, w, kk, in, out), Pre); */
        /*@ assert dx_k: \forall integer kk; kk == k ==> dx[kk] == \at(dx[kk], Pre) + lin_sdot{Pre}(dy, w, kk, in, out); */
#endif
    }
    /* dW[j, k] += dy[j] x[k], one row of dW per j (linear_acc_row_f64's contract) */
    /*@ loop invariant j_range: 0 <= j <= out;
        loop invariant dw_done: LN_EXACT(\forall integer q; 0 <= q < j ==>
          lin_dw_row{Pre, Here}(dw, dy, x, lin_row_start(q, in), q, in));
        loop invariant dw_todo: WP_ONLY(\forall integer m; lin_row_start(j, in) <= m < in * out ==> dw[m] == \at(dw[m], Pre));
        loop assigns j, dw[0 .. in * out - 1];
        loop variant out - j; */
    for (int j = 0; j < out; j++) {
        //@ ghost lemma_lin_row(j, out, in);
        //@ ghost lemma_lin_rows_before(j, in);
        //@ assert row_at: j * in == lin_row_start(j, in) && j * in + in == lin_row_start(j + 1, in);
        linear_acc_row_f64(dw + j * in, dy[j], x, in);
        /*@ assert frame_dw: WP_ONLY(\forall integer m; 0 <= m < lin_row_start(j, in) ==> dw[m] == \at(dw[m], LoopCurrent)); */
        /*@ assert row_j: LN_EXACT(\forall integer q, k; q == j && 0 <= k < in ==>
              dw[lin_row_start(q, in) + k] == lin_acc_prod(\at(dw[lin_row_start(q, in) + k], Pre), \at(dy[q], Pre), \at(x[k], Pre))); */
        /*@ assert rows_old: LN_EXACT(\forall integer q; 0 <= q < j ==>
              lin_dw_row{Pre, LoopCurrent}(dw, dy, x, lin_row_start(q, in), q, in) &&
              lin_dw_row{Pre, Here}(dw, dy, x, lin_row_start(q, in), q, in)); */
        //@ assert row_new: LN_EXACT(lin_dw_row{Pre, Here}(dw, dy, x, lin_row_start(j, in), j, in));
    }
    //@ ghost lemma_lin_rows_before(out, in);
    //@ assert dw_end: lin_row_start(out, in) == in * out;
#ifdef RESNORM_WP_ROWS
    /* dw_mul (rows run, specs/linear_rows.h): dw_acc with the product through lin_mul_v, without the
       predicate, and dW's index as lin_col_idx(j, in, k): the form the backward driver composes over
       the rows (with j·in + k the solvers find no trigger for k, which only occurs under the +). */
    /*@ assert dw_mul_rs: \forall integer j, k; 0 <= j < out && 0 <= k < in ==>
          dw[lin_row_start(j, in) + k] == \at(dw[lin_row_start(j, in) + k], Pre) + lin_mul_v(\at(dy[j], Pre), \at(x[k], Pre)); */
    /*@ assert dw_idx: \forall integer j, k; 0 <= j < out && 0 <= k < in ==> lin_col_idx(j, in, k) == lin_row_start(j, in) + k; */
    /*@ assert dw_mul: \forall integer j, k; 0 <= j < out && 0 <= k < in ==>
          dw[lin_col_idx(j, in, k)] == \at(dw[lin_col_idx(j, in, k)], Pre) + lin_mul_v(\at(dy[j], Pre), \at(x[k], Pre)); */
#endif
    /* db[j] += dy[j] */
    if (db)
        linear_acc_bias_f64(db, dy, out);
}

void linear_forward_f64(double *y, const double *x, const double *w, const double *b, int rows, int in,
                        int out)
{
    /* Rows 0 .. r-1 are done (the rows run only: LN_ROWS_CLAUSE and #ifdef RESNORM_WP_ROWS;
       specs/linear_rows.h): row q of y is row q of x (as at entry) times Wᵀ plus b. */
    /*@ loop invariant r_range: 0 <= r <= rows;
        LN_ROWS_CLAUSE(loop invariant x_same: \forall integer k; 0 <= k < rows * in ==> x[k] == \at(x[k], Pre);)
        LN_ROWS_CLAUSE(loop invariant w_same: \forall integer k; 0 <= k < in * out ==> w[k] == \at(w[k], Pre);)
        LN_ROWS_CLAUSE(loop invariant b_same: b != \null ==> \forall integer k; 0 <= k < out ==> b[k] == \at(b[k], Pre);)
        LN_ROWS_CLAUSE(loop invariant y_done: \forall integer q; 0 <= q < r ==> lin_row_y{Pre, Here}(y, x, w, b, q, in, out);)
        loop assigns r, y[0 .. rows * out - 1];
        loop variant rows - r; */
    for (int r = 0; r < rows; r++) {
        //@ ghost lemma_lin_row(r, rows, in);
        //@ ghost lemma_lin_row(r, rows, out);
#ifdef RESNORM_WP_ROWS
        //@ ghost lemma_lin_rows_before(r, out);
        //@ ghost lemma_lin_rows_before(out, in);
        //@ assert row_at: r * in == lin_row_start(r, in) && r * out == lin_row_start(r, out);
#endif
        linear_row_forward_f64(y + r * out, x + r * in, w, b, in, out);
#ifdef RESNORM_WP_ROWS
        /* The call wrote row r of y only. */
        /*@ assert frame_x: \forall integer k; 0 <= k < rows * in ==> x[k] == \at(x[k], LoopCurrent); */
        /*@ assert frame_w: \forall integer k; 0 <= k < in * out ==> w[k] == \at(w[k], LoopCurrent); */
        /*@ assert frame_b: b != \null ==> \forall integer k; 0 <= k < out ==> b[k] == \at(b[k], LoopCurrent); */
        /*@ assert frame_y: \forall integer k; 0 <= k < lin_row_start(r, out) ==> y[k] == \at(y[k], LoopCurrent); */
        /* Row r: the call's y_def is over the call's memory (LoopCurrent); carried to the entry's by
           the lemmas of specs/linear_rows.h (x's row r and W unchanged: x_same, w_same). q is bound:
           r, a C local, cannot appear under \at(..., Pre). */
        /*@ assert row_call: \forall integer q, j; q == r && 0 <= j < out ==>
              y[lin_row_start(q, out) + j] ==
                \at(lin_bias(b, j) + lin_dot(x + lin_row_start(q, in), w + lin_row_start(j, in), in), LoopCurrent); */
        /*@ assert dot_call: \forall integer q, j; q == r && 0 <= j < out ==>
              \at(lin_dot(x + lin_row_start(q, in), w + lin_row_start(j, in), in), LoopCurrent) ==
              \at(lin_dot_at(x, lin_row_start(q, in), w, lin_row_start(j, in), in), LoopCurrent); */
        /*@ assert x_row: \forall integer q, k; q == r && lin_row_start(q, in) <= k < lin_row_start(q, in) + in ==>
              \at(x[k], LoopCurrent) == \at(x[k], Pre); */
        /*@ assert w_row: \forall integer j, k; 0 <= j < out && lin_row_start(j, in) <= k < lin_row_start(j, in) + in ==>
              \at(w[k], LoopCurrent) == \at(w[k], Pre); */
        /*@ assert dot_frame: \forall integer q, j; q == r && 0 <= j < out ==>
              \at(lin_dot_at(x, lin_row_start(q, in), w, lin_row_start(j, in), in), LoopCurrent) ==
              \at(lin_dot_at(x, lin_row_start(q, in), w, lin_row_start(j, in), in), Pre); */
        /*@ assert dot_pre: \forall integer q, j; q == r && 0 <= j < out ==>
              \at(lin_dot(x + lin_row_start(q, in), w + lin_row_start(j, in), in), Pre) ==
              \at(lin_dot_at(x, lin_row_start(q, in), w, lin_row_start(j, in), in), Pre); */
        /*@ assert bias_pre: \forall integer j; 0 <= j < out ==> \at(lin_bias(b, j), LoopCurrent) == lin_bias{Pre}(b, j); */
        //@ assert row_new: lin_row_y{Pre, Here}(y, x, w, b, r, in, out);
        /*@ assert idx_old: \forall integer q, j; 0 <= q < r && 0 <= j < out ==>
              0 <= lin_row_start(q, out) + j < lin_row_start(r, out); */
        /*@ assert rows_old: \forall integer q; 0 <= q < r ==>
              lin_row_y{Pre, LoopCurrent}(y, x, w, b, q, in, out) && lin_row_y{Pre, Here}(y, x, w, b, q, in, out); */
#endif
    }
}

void linear_backward_f64(double *dx, double *dw, double *db, const double *dy, const double *x,
                         const double *w, int rows, int in, int out)
{
    /* db has accumulated dy's rows 0 .. r-1 (over dy at entry); in the rows run, dx's rows 0 .. r-1
       have accumulated dy's rows times W, and every dW[j, k] the terms dy[q, j]·x[q, k] of rows
       0 .. r-1 (specs/linear_rows.h). */
    /*@ loop invariant r_range: 0 <= r <= rows;
        loop invariant dy_same: WP_ONLY(\forall integer k; 0 <= k < rows * out ==> dy[k] == \at(dy[k], Pre));
        loop invariant db_sum: LN_EXACT(db != \null ==> \forall integer j; 0 <= j < out ==>
          db[j] == \at(db[j], Pre) + lin_csum{Pre}(dy, j, out, r));
        LN_ROWS_CLAUSE(loop invariant w_same: \forall integer m; 0 <= m < in * out ==> w[m] == \at(w[m], Pre);)
        LN_ROWS_CLAUSE(loop invariant dx_done: \forall integer q; 0 <= q < r ==> lin_row_dx{Pre, Here}(dx, dy, w, q, in, out);)
        LN_ROWS_CLAUSE(loop invariant dx_todo: \forall integer k; lin_row_start(r, in) <= k < rows * in ==>
          dx[k] == \at(dx[k], Pre);)
        LN_ROWS_CLAUSE(loop invariant x_same: \forall integer k; 0 <= k < rows * in ==> x[k] == \at(x[k], Pre);)
        LN_ROWS_CLAUSE(loop invariant dw_sum: lin_dw_rows{Pre, Here}(dw, dy, x, r, in, out);)
        loop assigns r, dx[0 .. rows * in - 1], dw[0 .. in * out - 1], db[0 .. out - 1];
        loop variant rows - r; */
    for (int r = 0; r < rows; r++) {
        //@ ghost lemma_lin_row(r, rows, in);
        //@ ghost lemma_lin_row(r, rows, out);
        //@ assert row_at: r * out == lin_row_start(r, out);
#ifdef RESNORM_WP_ROWS
        //@ ghost lemma_lin_rows_before(r, in);
        //@ ghost lemma_lin_col(out, in);
        //@ assert row_at_in: r * in == lin_row_start(r, in) && (r + 1) * in == lin_row_start(r, in) + in;
#endif
        linear_row_backward_f64(dx + r * in, dw, db, dy + r * out, x + r * in, w, in, out);
#ifdef RESNORM_WP_ROWS
        /* The call wrote row r of dx (and dW, db) only; W and dy are as before it. */
        /*@ assert frame_w: \forall integer m; 0 <= m < in * out ==> w[m] == \at(w[m], LoopCurrent); */
        /*@ assert frame_dx: \forall integer k; 0 <= k < rows * in && (k < lin_row_start(r, in) || lin_row_start(r, in) + in <= k) ==>
              dx[k] == \at(dx[k], LoopCurrent); */
        /* Row r: the call's dx_acc (over the call's memory), carried to the entry's by the lemmas of
           specs/linear_rows.h (dy's row r and W unchanged); q is bound (r cannot appear under
           \at(..., Pre)). */
        /*@ assert row_call: \forall integer q, k; q == r && 0 <= k < in ==>
              dx[lin_row_start(q, in) + k] == \at(dx[lin_row_start(q, in) + k], LoopCurrent) +
                \at(lin_sdot(dy + lin_row_start(q, out), w, k, in, out), LoopCurrent); */
        /*@ assert dx_old: \forall integer q, k; q == r && 0 <= k < in ==>
              \at(dx[lin_row_start(q, in) + k], LoopCurrent) == \at(dx[lin_row_start(q, in) + k], Pre); */
        /*@ assert w_cols: \forall integer k, j; 0 <= k < in && 0 <= j < out ==>
              \at(w[lin_col_idx(j, in, k)], LoopCurrent) == \at(w[lin_col_idx(j, in, k)], Pre); */
        /*@ assert dy_row: \forall integer q, i; q == r && lin_row_start(q, out) <= i < lin_row_start(q, out) + out ==>
              \at(dy[i], LoopCurrent) == \at(dy[i], Pre); */
        /*@ assert sd_call: \forall integer q, k; q == r && 0 <= k < in ==>
              \at(lin_sdot(dy + lin_row_start(q, out), w, k, in, out), LoopCurrent) ==
              \at(lin_sdot_off(dy, lin_row_start(q, out), w, k, in, out), LoopCurrent); */
        /*@ assert sd_frame: \forall integer q, k; q == r && 0 <= k < in ==>
              \at(lin_sdot_off(dy, lin_row_start(q, out), w, k, in, out), LoopCurrent) ==
              \at(lin_sdot_off(dy, lin_row_start(q, out), w, k, in, out), Pre); */
        /*@ assert sd_pre: \forall integer q, k; q == r && 0 <= k < in ==>
              \at(lin_sdot(dy + lin_row_start(q, out), w, k, in, out), Pre) ==
              \at(lin_sdot_off(dy, lin_row_start(q, out), w, k, in, out), Pre); */
        //@ assert row_new: lin_row_dx{Pre, Here}(dx, dy, w, r, in, out);
        /*@ assert idx_old: \forall integer q, k; 0 <= q < r && 0 <= k < in ==>
              0 <= lin_row_start(q, in) + k < lin_row_start(r, in); */
        /*@ assert rows_old: \forall integer q; 0 <= q < r ==>
              lin_row_dx{Pre, LoopCurrent}(dx, dy, w, q, in, out) && lin_row_dx{Pre, Here}(dx, dy, w, q, in, out); */
        /* dW: the call's dw_acc added dy[r, j]·x[r, k] to every dW[j, k] (over the call's memory, where
           dy's and x's row r are as at entry): lin_dw_sum's step from r to r + 1, the product through
           lin_mul_v and dW's index as lin_col_idx (specs/linear_rows.h, dw_mul). */
        /*@ assert dw_call: \forall integer j, k; 0 <= j < out && 0 <= k < in ==>
              dw[lin_col_idx(j, in, k)] == \at(dw[lin_col_idx(j, in, k)], LoopCurrent) +
                lin_mul_v(\at((dy + r * out)[j], LoopCurrent), \at((x + r * in)[k], LoopCurrent)); */
        /*@ assert dw_reads: \forall integer q, j, k; q == r && 0 <= j < out && 0 <= k < in ==>
              \at((dy + q * out)[j], LoopCurrent) == \at(dy[lin_row_start(q, out) + j], Pre) &&
              \at((x + q * in)[k], LoopCurrent) == \at(x[lin_row_start(q, in) + k], Pre); */
        /*@ assert dw_step: \forall integer q, j, k; q == r && 0 <= j < out && 0 <= k < in ==>
              dw[lin_col_idx(j, in, k)] == \at(dw[lin_col_idx(j, in, k)], LoopCurrent) +
                lin_mul_v(\at(dy[lin_row_start(q, out) + j], Pre), \at(x[lin_row_start(q, in) + k], Pre)); */
        /*@ assert dw_unfold: \forall integer q, j, k; q == r && 0 <= j < out && 0 <= k < in ==>
              lin_dw_sum{Pre}(dy, x, j, k, in, out, q + 1) == lin_dw_sum{Pre}(dy, x, j, k, in, out, q) +
                lin_mul_v(\at(dy[lin_row_start(q, out) + j], Pre), \at(x[lin_row_start(q, in) + k], Pre)); */
        /*@ assert dw_next: \forall integer q, j, k; q == r && 0 <= j < out && 0 <= k < in ==>
              dw[lin_col_idx(j, in, k)] ==
                \at(dw[lin_col_idx(j, in, k)], Pre) + lin_dw_sum{Pre}(dy, x, j, k, in, out, q + 1); */
#endif
    }
}
