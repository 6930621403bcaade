/* Multi-head self-attention kernels, float and double: the code that specs/attention.h specifies
 * (torch.nn.MultiheadAttention(batch_first=True) on (x, x, x), need_weights=False), composed from
 * the proved kernels of ref/linear.c (in/out projections, every dot product), ref/softmax.c (each
 * score row, max subtracted) and ref/dropout.c (the given attention-dropout mask).  Compile with
 * -ffp-contract=off.  Its twin, ref/attention_mpfr.c, encloses the exact result with Arb balls; the
 * tolerance is specs/error-analysis-attention.md.  Shapes: specs/attention.h.  The row helpers take
 * the batch element's block of qkv ([T, 3d]) and the head's column offsets, so that every index
 * they form is linear in the loop counters; the drivers instantiate two lemmas (ghost calls) for
 * the products that locate a block. */
#include "attention.h"

#include <math.h>

#ifdef RESNORM_WP_ROWS
/* The rows run (proofs/attention.sh): one query row composed, att_row and ctx_row (specs/attention_rows.h).
   ATTN_ROWS_CLAUSE(c): the clause c (semicolon included) in that run, nothing in the real-model run. */
#include "attention_rows.h"
#define ATTN_ROWS_CLAUSE(...) __VA_ARGS__
#else
#define ATTN_ROWS_CLAUSE(...)
#endif

/* Row r of a row-major [rows, n] array ends within it (as ref/softmax.c's sm_row_mono). */
/*@ lemma attn_row_mono: \forall integer a, b, n; 0 <= a < b && 0 <= n ==> a * n + n <= b * n;
    lemma attn_row_nonneg: \forall integer a, n; 0 <= a && 0 <= n ==> 0 <= a * n;
    lemma attn_div_exact: \forall integer d, h; h > 0 && d >= 0 && d % h == 0 ==> h * (d / h) == d;
*/
/*@ ghost
  /@ requires r_range: 0 <= r < rows;
     requires n_nonneg: n >= 0;
     assigns \nothing;
     ensures row_start: 0 <= r * n;
     ensures row_end: r * n + n <= rows * n; @/
  static void lemma_attn_row(int r, int rows, int n) {}
  /@ requires span: 0 <= r && 0 <= n && r + n <= rows;
     requires m_nonneg: m >= 0;
     assigns \nothing;
     ensures span_start: 0 <= r * m;
     ensures span_end: r * m + n * m <= rows * m; @/
  static void lemma_attn_span(int r, int n, int rows, int m) {}
  /@ requires H_pos: H >= 1 && d >= 1 && d % H == 0;
     assigns \nothing;
     ensures heads: H * (d / H) == d && d / H >= 1; @/
  static void lemma_attn_heads(int d, int H) {}
*/
#ifdef RESNORM_WP_ROWS
/* The rows run: the first index of the (r = b·H + h) block of att, (r·T)·T, is attn_blk(r, T)
   (specs/attention_rows.h; a lemma function: in the drivers' context the solvers do not find it). */
/*@ ghost
  /@ requires rn_def: 0 <= r && 0 <= n && 0 <= rn && rn == r * n;
     assigns \nothing;
     ensures blk: attn_blk(r, n) == rn * n; @/
  static void lemma_attn_blk(int r, int n, int rn) {}
*/
#endif

/* ---- float ---- */

/* a[k] = 0 for k < n.  (Not stated as an ACSL postcondition: in Frama-C 25's real model Qed
   prints the literal of `a[k] == 0.0` as the integer 0, and Why3 then rejects, with a type error,
   every later goal that has the postcondition as a hypothesis.  Nothing proved relies on it.) */
/*@ requires n_nonneg: n >= 0;
    requires valid_a: \valid(a + (0 .. n - 1));
    assigns a[0 .. n - 1]; */
static void attn_zero_f32(float *a, int n)
{
    /*@ loop invariant k_range: 0 <= k <= n;
        loop assigns k, a[0 .. n - 1];
        loop variant n - k; */
    for (int k = 0; k < n; k++)
        a[k] = 0.0f;
}

/* v != 0 (a key padding mask entry that says "ignore").  A function of its own, without a
   postcondition, for the same Frama-C 25 real-model defect as attn_zero_f32: a comparison with the
   literal 0 in a goal's hypotheses makes Why3 reject the goal. */
/*@ assigns \nothing; */
static int attn_nonzero_f32(float v)
{
    return v != 0.0f;
}

/* The additive mask row of query i: -Inf where key j is masked (causal: j > i; the key padding
   mask of this batch element: kpm[j] != 0), else 0.  Returns m, or NULL when nothing is masked. */
/*@ requires T_pos: T >= 1;
    requires valid_m: \valid(m + (0 .. T - 1));
    requires valid_kpm: kpm == \null || \valid_read(kpm + (0 .. T - 1));
    requires sep: kpm == \null || \separated(m + (0 .. T - 1), kpm + (0 .. T - 1));
    assigns m[0 .. T - 1];
    ensures result: \result == \null || \result == m; */
static const float *attn_mask_row_f32(float *m, const float *kpm, int i, int T, int causal)
{
    if (!causal && !kpm)
        return 0;
    /*@ loop invariant j_range: 0 <= j <= T;
        loop assigns j, m[0 .. T - 1];
        loop variant T - j; */
    for (int j = 0; j < T; j++)
        m[j] = (causal && j > i) || (kpm && attn_nonzero_f32(kpm[j])) ? -INFINITY : 0.0f;
    return m;
}

/* q[c] /= sq for c < n (one row: torch's q_scaled = q / math.sqrt(E); also dq = dqs / sqrt(dh)). */
/*@ requires n_nonneg: n >= 0;
    requires valid_q: \valid(q + (0 .. n - 1));
    assigns q[0 .. n - 1]; */
static void attn_div_row_f32(float *q, float sq, int n)
{
    /*@ loop invariant c_range: 0 <= c <= n;
        loop assigns c, q[0 .. n - 1];
        loop variant n - c; */
    for (int c = 0; c < n; c++)
        q[c] = q[c] / sq;
}

/* The q columns (the first d of each row of qkv [rows, d3]) divided by sq. */
/*@ requires dims: rows >= 0 && 1 <= d <= d3 && rows * d3 <= INT_MAX;
    requires valid_qkv: \valid(qkv + (0 .. rows * d3 - 1));
    assigns qkv[0 .. rows * d3 - 1]; */
static void attn_scale_q_f32(float *qkv, float sq, int rows, int d3, int d)
{
    /*@ loop invariant r_range: 0 <= r <= rows;
        loop assigns r, qkv[0 .. rows * d3 - 1];
        loop variant rows - r; */
    for (int r = 0; r < rows; r++) {
        //@ ghost lemma_attn_row(r, rows, d3);
        attn_div_row_f32(qkv + r * d3, sq, d);
    }
}

/* c[cc] = sum_{j<T} A[j]·qb[j·d3 + vo + cc] for cc < dh: one query row's context slice (A: its T
   attention weights, qb: the batch element's rows of qkv [T, d3], vo: the head's first v column). */
/*@ requires dims: T >= 1 && dh >= 1 && d3 >= 1 && T * d3 <= INT_MAX;
    requires v_range: 0 <= vo && vo + dh <= d3;
    requires valid_c: \valid(c + (0 .. dh - 1));
    requires valid_A: \valid_read(A + (0 .. T - 1));
    requires valid_qb: \valid_read(qb + (0 .. T * d3 - 1));
    requires sep_A: \separated(c + (0 .. dh - 1), A + (0 .. T - 1));
    requires sep_qb: \separated(c + (0 .. dh - 1), qb + (0 .. T * d3 - 1));
    assigns c[0 .. dh - 1];
    ATTN_ROWS_CLAUSE(ensures ctx_sdot: \forall integer cc; 0 <= cc < dh ==> c[cc] == lin_sdot(A, qb, vo + cc, d3, T);) */
static void attn_ctx_row_f32(float *c, const float *A, const float *qb, int vo, int T, int dh, int d3)
{
    /*@ loop invariant cc_range: 0 <= cc <= dh;
        ATTN_ROWS_CLAUSE(loop invariant done: \forall integer cc2; 0 <= cc2 < cc ==>
          c[cc2] == lin_sdot{Pre}(A, qb, vo + cc2, d3, T);)
        loop assigns cc, c[0 .. dh - 1];
        loop variant dh - cc; */
    for (int cc = 0; cc < dh; cc++) {
#ifdef RESNORM_WP_ROWS
        /* Ghost frame (not run): only c was written since entry (an induction over the row). */
        /*@ ghost
          int k = 0;
          /@ loop invariant k_range: 0 <= k <= T;
             loop invariant fr: lin_sdot(A, qb, vo + cc, d3, k) == lin_sdot{Pre}(A, qb, vo + cc, d3, k);
             loop assigns k;
             loop variant T - k; @/
          while (k < T) {
            lemma_attn_row(k, T, d3);
            /@ assert fr_k: \let kk = k; \let vc = vo + cc; A[kk] == \at(A[kk], Pre) && qb[kk * d3 + vc] == \at(qb[kk * d3 + vc], Pre); @/
            k++;
          }
        */
#endif
        c[cc] = linear_sdot_f32(0.0f, A, qb, vo + cc, d3, T);
    }
#ifdef RESNORM_WP_ROWS
    /* Ghost frame (not run): every column's dot, from entry to return. */
    /*@ ghost
      int e = 0;
      /@ loop invariant e_range: 0 <= e <= dh;
         loop invariant same: \forall integer vc; vo <= vc < vo + e ==>
           lin_sdot(A, qb, vc, d3, T) == lin_sdot{Pre}(A, qb, vc, d3, T);
         loop assigns e;
         loop variant dh - e; @/
      while (e < dh) {
        int k = 0;
        /@ loop invariant k_range: 0 <= k <= T;
           loop invariant fr: lin_sdot(A, qb, vo + e, d3, k) == lin_sdot{Pre}(A, qb, vo + e, d3, k);
           loop assigns k;
           loop variant T - k; @/
        while (k < T) {
          lemma_attn_row(k, T, d3);
          /@ assert fr_k: \let kk = k; \let vc = vo + e; A[kk] == \at(A[kk], Pre) && qb[kk * d3 + vc] == \at(qb[kk * d3 + vc], Pre); @/
          k++;
        }
        /@ assert fr_T: k == T; @/
        /@ assert fr_e: lin_sdot(A, qb, vo + e, d3, T) == lin_sdot{Pre}(A, qb, vo + e, d3, T); @/
        e++;
      }
      /@ assert e_dh: e == dh; @/
    */
#endif
}

#ifdef RESNORM_WP_ROWS
/* The rows run: the strided dot over weights A that are attn_a's is attn_ctx (one memory state). */
/*@ ghost
  /@ requires n_nonneg: n >= 0;
     requires a_def: \forall integer j; 0 <= j < n ==> A[j] == attn_a(P, am, scale, j);
     assigns \nothing;
     ensures eq: lin_sdot(A, qb, vc, d3, n) == attn_ctx(P, am, scale, qb, vc, d3, n); @/
  static void attn_ctx_eq_f32(const float *A, const float *P, const float *am, float scale, const float *qb, int vc,
                              int d3, int n)
  {
    int k = 0;
    /@ loop invariant k_range: 0 <= k <= n;
       loop invariant eq: lin_sdot(A, qb, vc, d3, k) == attn_ctx(P, am, scale, qb, vc, d3, k);
       loop assigns k;
       loop variant n - k; @/
    while (k < n) k++;
  }
*/
#endif

/* One query row: s[j] = qs·k_j, P = softmax(s + mask), A = dropout(P), c[cc] = sum_j A[j]·v_j[cc].
   qb: the batch element's rows of qkv [T, d3]; qo: the query's q slice (i·d3 + h·dh), ko, vo: the
   head's k and v columns (d + h·dh, 2d + h·dh); row: scratch [2T] (mask row, then s / A). */
/*@ requires dims: T >= 1 && dh >= 1 && d3 >= 1 && T * d3 <= INT_MAX && 2 * T <= INT_MAX;
    requires i_range: 0 <= i < T;
    requires q_range: 0 <= qo && qo + dh <= T * d3;
    requires k_range: 0 <= ko && ko + dh <= d3;
    requires v_range: 0 <= vo && vo + dh <= d3;
    requires valid_qb: \valid_read(qb + (0 .. T * d3 - 1));
    requires valid_kpm: kpm == \null || \valid_read(kpm + (0 .. T - 1));
    requires valid_am: am == \null || \valid_read(am + (0 .. T - 1));
    requires valid_c: \valid(c + (0 .. dh - 1));
    requires valid_P: \valid(P + (0 .. T - 1));
    requires valid_row: \valid(row + (0 .. 2 * T - 1));
    requires sep: \separated(c + (0 .. dh - 1), P + (0 .. T - 1), row + (0 .. 2 * T - 1), qb + (0 .. T * d3 - 1));
    requires sep_kpm: kpm == \null || \separated(kpm + (0 .. T - 1), row + (0 .. 2 * T - 1), P + (0 .. T - 1), c + (0 .. dh - 1));
    requires sep_am: am == \null || \separated(am + (0 .. T - 1), row + (0 .. 2 * T - 1), P + (0 .. T - 1), c + (0 .. dh - 1));
    assigns c[0 .. dh - 1], P[0 .. T - 1], row[0 .. 2 * T - 1]; */
static void attn_row_forward_f32(float *c, float *P, float *row, const float *qb, int qo, int ko,
                                 int vo, const float *kpm, const float *am, float scale, int i,
                                 int T, int dh, int d3, int causal)
{
    float *s = row + T;
    const float *m = attn_mask_row_f32(row, kpm, i, T, causal);
    /*@ loop invariant j_range: 0 <= j <= T;
        ATTN_ROWS_CLAUSE(loop invariant scores: \forall integer j2; 0 <= j2 < j ==>
          s[j2] == attn_score{Pre}(qb, qo, ko, d3, dh, j2);)
        loop assigns j, s[0 .. T - 1];
        loop variant T - j; */
    for (int j = 0; j < T; j++) {
        //@ ghost lemma_attn_row(j, T, d3);
#ifdef RESNORM_WP_ROWS
        /* Ghost frame (not run): only s was written since entry, so the query slice and key row j,
           and their dot, are as at entry (an induction over the dot's length, g counting down). */
        /*@ ghost
          int g = dh;
          /@ loop invariant g_range: 0 <= g <= dh;
             loop invariant fr: lin_dot(qb + qo, qb + j * d3 + ko, dh - g) == lin_dot{Pre}(qb + qo, qb + j * d3 + ko, dh - g);
             loop assigns g;
             loop variant g; @/
          while (g > 0) g--;
        */
#endif
        s[j] = linear_dot_f32(0.0f, qb + qo, qb + j * d3 + ko, dh);
#ifdef RESNORM_WP_ROWS
        /*@ assert s_j: s[j] == attn_score{Pre}(qb, qo, ko, d3, dh, j); */
#endif
    }
#ifdef RESNORM_WP_ROWS
    /* Without a mask the softmax's max and sum over s are those over the scores of qb at entry
       (ghost inductions over the row, each step one unfolding of both sides). */
    /*@ ghost
      if (!m) {
        int k = 1;
        /@ loop invariant k_range: 1 <= k <= T;
           loop invariant max_eq: sm_max(s, m, k) == attn_smax{Pre}(qb, qo, ko, d3, dh, k);
           loop assigns k;
           loop variant T - k; @/
        while (k < T) k++;
        k = 0;
        /@ loop invariant k_range: 0 <= k <= T;
           loop invariant sum_eq: sm_sum(s, m, sm_max(s, m, T), k) ==
             attn_ssum{Pre}(qb, qo, ko, d3, dh, attn_smax{Pre}(qb, qo, ko, d3, dh, T), k);
           loop assigns k;
           loop variant T - k; @/
        while (k < T) k++;
      }
    */
#endif
    softmax_row_forward_f32(P, s, m, T);
#ifdef RESNORM_WP_ROWS
    /*@ assert att_now: m == \null ==> \forall integer j; 0 <= j < T ==> P[j] == attn_p{Pre}(qb, qo, ko, d3, dh, T, j); */
#endif
    const float *A = P;
    if (am) {
        dropout_forward_f32(s, P, am, scale, T);
        A = s;
#ifdef RESNORM_WP_ROWS
        /*@ assert a_drop: \forall integer j; 0 <= j < T ==> s[j] == attn_a(P, am, scale, j); */
#endif
    }
#ifdef RESNORM_WP_ROWS
    /*@ assert a_pre: \forall integer j; 0 <= j < T ==> A[j] == attn_a(P, am, scale, j); */
#endif
    attn_ctx_row_f32(c, A, qb, vo, T, dh, d3);
#ifdef RESNORM_WP_ROWS
    /* c[cc] is the strided dot over A; A[j] is P[j] (or its dropout), so it is attn_ctx (ghost
       lemma calls, one per column, each a one-state induction over the row). */
    /*@ assert a_def: \forall integer j; 0 <= j < T ==> A[j] == attn_a(P, am, scale, j); */
    /*@ ghost
      int e = 0;
      /@ loop invariant e_range: 0 <= e <= dh;
         loop invariant ctx_eq: \forall integer vc; vo <= vc < vo + e ==>
           lin_sdot(A, qb, vc, d3, T) == attn_ctx(P, am, scale, qb, vc, d3, T);
         loop assigns e;
         loop variant dh - e; @/
      while (e < dh) {
        attn_ctx_eq_f32(A, P, am, scale, qb, vo + e, d3, T);
        e++;
      }
    */
#endif
}

/* One head h of one batch element b: query rows i = 0 .. T-1 of attn_row_forward in turn (the
   drivers' innermost loop, called once per (b, h)).  cb: the element's rows of ctx [T, d], of which the head writes columns
   hd .. hd + dh - 1; Pb: the (b, h) block of att [T, T]; qb: the element's rows of qkv [T, d3];
   kpb: the element's key padding row [T] or null; amb: the (b, h) block of the attention-dropout
   mask [T, T] or null.  Rows run (specs/attention_rows.h): head_att and head_ctx, every row of the
   head, composed from att_row and ctx_row across the later rows' writes. */
/*@ requires dims: T >= 1 && dh >= 1 && d >= 1 && d3 == 3 * d && T * d3 <= INT_MAX && 2 * T <= INT_MAX &&
                   T * T <= INT_MAX && T * d <= INT_MAX;
    requires head: 0 <= hd && hd + dh <= d;
    requires valid_qb: \valid_read(qb + (0 .. T * d3 - 1));
    requires valid_kpb: kpb == \null || \valid_read(kpb + (0 .. T - 1));
    requires valid_amb: amb == \null || \valid_read(amb + (0 .. T * T - 1));
    requires valid_cb: \valid(cb + (0 .. T * d - 1));
    requires valid_Pb: \valid(Pb + (0 .. T * T - 1));
    requires valid_row: \valid(row + (0 .. 2 * T - 1));
    requires sep: \separated(cb + (0 .. T * d - 1), Pb + (0 .. T * T - 1), row + (0 .. 2 * T - 1),
                             qb + (0 .. T * d3 - 1));
    requires sep_kpb: kpb == \null ||
      \separated(kpb + (0 .. T - 1), row + (0 .. 2 * T - 1), Pb + (0 .. T * T - 1), cb + (0 .. T * d - 1));
    requires sep_amb: amb == \null ||
      \separated(amb + (0 .. T * T - 1), row + (0 .. 2 * T - 1), Pb + (0 .. T * T - 1), cb + (0 .. T * d - 1));
    assigns cb[0 .. T * d - 1], Pb[0 .. T * T - 1], row[0 .. 2 * T - 1];
    ATTN_ROWS_CLAUSE(ensures head_att: causal == 0 && kpb == \null ==>
      \forall integer i; 0 <= i < T ==> attn_head_p{Pre, Here}(Pb, qb, attn_rs(i, T), attn_rs(i, d3), hd, d, d3, dh, T);)
    ATTN_ROWS_CLAUSE(ensures head_ctx: \forall integer i; 0 <= i < T ==>
      attn_head_c(cb, Pb, amb, scale, qb, attn_rs(i, d), attn_rs(i, T), hd, d, d3, dh, T);) */
static void attn_head_forward_f32(float *cb, float *Pb, float *row, const float *qb, const float *kpb,
                                  const float *amb, float scale, int hd, int T, int d, int dh, int d3,
                                  int causal)
{
    /*@ loop invariant i_range: 0 <= i <= T;
        ATTN_ROWS_CLAUSE(loop invariant att_done: causal == 0 && kpb == \null ==>
          \forall integer i2; 0 <= i2 < i ==> attn_head_p{Pre, Here}(Pb, qb, attn_rs(i2, T), attn_rs(i2, d3), hd, d, d3, dh, T);)
        ATTN_ROWS_CLAUSE(loop invariant ctx_done: \forall integer i2; 0 <= i2 < i ==>
          attn_head_c(cb, Pb, amb, scale, qb, attn_rs(i2, d), attn_rs(i2, T), hd, d, d3, dh, T);)
        loop assigns i, cb[0 .. T * d - 1], Pb[0 .. T * T - 1], row[0 .. 2 * T - 1];
        loop variant T - i; */
    for (int i = 0; i < T; i++) {
        //@ ghost lemma_attn_row(i, T, d3);
        //@ ghost lemma_attn_row(i, T, d);
        //@ ghost lemma_attn_row(i, T, T);
        const float *ami = amb ? amb + i * T : 0; /* row i of the mask block */
#ifdef RESNORM_WP_ROWS
        /*@ assert rs_i: attn_rs(i, T) == i * T && attn_rs(i, d) == i * d && attn_rs(i, d3) == i * d3; */
        /*@ assert rb: attn_rows_before(i, T) && attn_rows_before(i, d) && attn_vidx_in(T, d3); */
        /* Only cb, Pb and row were written since entry: query i's scores over qb are as at entry
           (ghost inductions over each key j's dot, as in attn_row_forward), hence its softmax row
           (attn_p_frame). */
        /*@ ghost
          int j = 0;
          /@ loop invariant j_range: 0 <= j <= T;
             loop invariant sc: attn_scores_same{Here, Pre}(qb, i * d3 + hd, d + hd, d3, dh, j);
             loop assigns j;
             loop variant T - j; @/
          while (j < T) {
            lemma_attn_row(j, T, d3);
            int g = dh;
            /@ loop invariant g_range: 0 <= g <= dh;
               loop invariant fr: lin_dot(qb + (i * d3 + hd), qb + j * d3 + (d + hd), dh - g) ==
                                  lin_dot{Pre}(qb + (i * d3 + hd), qb + j * d3 + (d + hd), dh - g);
               loop assigns g;
               loop variant g; @/
            while (g > 0) g--;
            /@ assert sj: attn_score(qb, i * d3 + hd, d + hd, d3, dh, j) ==
                          attn_score{Pre}(qb, i * d3 + hd, d + hd, d3, dh, j); @/
            j++;
          }
        */
#endif
#ifdef RESNORM_WP_ROWS
    row_i: /* (a label for the rows run's frames only: unused in the build) */
#endif
        attn_row_forward_f32(cb + i * d + hd, Pb + i * T, row, qb, i * d3 + hd, d + hd, 2 * d + hd, kpb,
                             ami, scale, i, T, dh, d3, causal);
#ifdef RESNORM_WP_ROWS
        /* Row i's context: the call's ctx_row (attn_ctx_at_eq).  The rows before it: the call wrote
           none of their cells, nor their weights, nor qb, nor the mask, so their sums are as they
           were (a ghost loop over the rows, each attn_ctx_at_frame). */
        /*@ assert ctx_eq: \forall integer vc; 2 * d + hd <= vc < 2 * d + hd + dh ==>
              attn_ctx_is_at(Pb + i * T, ami, scale, qb, vc, d3, T); */
        /*@ assert am_i: ami == attn_am_row(amb, i * T); */
        /*@ ghost
          int r = 0;
          /@ loop invariant r_range: 0 <= r <= i;
             loop invariant cf: \forall integer i2, vc; 0 <= i2 < r && 2 * d + hd <= vc < 2 * d + hd + dh ==>
               attn_ctx_at(Pb + attn_rs(i2, T), attn_am_row(amb, attn_rs(i2, T)), scale, qb, vc, d3, T) ==
               \at(attn_ctx_at(Pb + attn_rs(i2, T), attn_am_row(amb, attn_rs(i2, T)), scale, qb, vc, d3, T), row_i);
             loop assigns r;
             loop variant i - r; @/
          while (r < i) {
            /@ assert rr_b: 0 <= attn_rs(r, T) && attn_rs(r, T) + T <= i * T; @/
            /@ assert cra_p: attn_row_same{Here, row_i}(Pb + attn_rs(r, T), T); @/
            /@ assert cra_m: amb != \null ==> attn_row_same{Here, row_i}(attn_am_row(amb, attn_rs(r, T)), T); @/
            /@ assert cra0: \let rr = attn_rs(r, T); \forall integer j; 0 <= j < T ==>
                 attn_a(Pb + rr, attn_am_row(amb, rr), scale, j) == \at(attn_a(Pb + rr, attn_am_row(amb, rr), scale, j), row_i); @/
            // (a loop run once: its body's facts, which bring attn_ctx_at_frame into a goal, do not
            // reach the goals after it, only its invariant does)
            int once = 0;
            /@ loop invariant once_range: 0 <= once <= 1;
               loop invariant crr: \let rr = attn_rs(r, T); once == 1 ==> \forall integer vc; 2 * d + hd <= vc < 2 * d + hd + dh ==>
                 attn_ctx_at(Pb + rr, attn_am_row(amb, rr), scale, qb, vc, d3, T) ==
                 \at(attn_ctx_at(Pb + rr, attn_am_row(amb, rr), scale, qb, vc, d3, T), row_i);
               loop assigns once;
               loop variant 1 - once; @/
            while (once < 1) {
              /@ assert cra: \let rr = attn_rs(r, T); attn_a_same{Here, row_i}(Pb + rr, attn_am_row(amb, rr), scale, T); @/
              /@ assert crq: \forall integer vc; 0 <= vc < d3 ==> attn_v_same{Here, row_i}(qb, vc, d3, T); @/
              // (column by column: each instance of attn_ctx_at_frame is then ground; the
              // quantified cr at once timed out or came back unknown in both solvers)
              int vc = 2 * d + hd;
              /@ loop invariant vc_range: 2 * d + hd <= vc <= 2 * d + hd + dh;
                 loop invariant crv: \forall integer vc2; 2 * d + hd <= vc2 < vc ==>
                   attn_ctx_same{Here, row_i}(Pb + attn_rs(r, T), attn_am_row(amb, attn_rs(r, T)), scale, qb, vc2, d3, T);
                 loop assigns vc;
                 loop variant 2 * d + hd + dh - vc; @/
              while (vc < 2 * d + hd + dh) {
                /@ assert crv1: attn_v_same{Here, row_i}(qb, vc, d3, T); @/
                /@ assert cr1: attn_ctx_same{Here, row_i}(Pb + attn_rs(r, T), attn_am_row(amb, attn_rs(r, T)), scale, qb, vc, d3, T); @/
                vc++;
              }
              /@ assert cr: \forall integer vc2; 2 * d + hd <= vc2 < 2 * d + hd + dh ==>
                   attn_ctx_same{Here, row_i}(Pb + attn_rs(r, T), attn_am_row(amb, attn_rs(r, T)), scale, qb, vc2, d3, T); @/
              once = 1;
            }
            r++;
          }
        */
        /* (column by column: the call's ctx_row names its columns cc of c = cb + i·d + hd only
           through i·d + hd + cc, which gives the solvers no trigger for a column k of cb; the
           counter is named so that Qed orders hd + ic + i·d as it orders ctx_row's hd + cc + i·d) */
        /*@ assert ctx_new00: \forall integer cc; 0 <= cc < dh ==>
              cb[i * d + hd + cc] == attn_ctx_at(Pb + i * T, ami, scale, qb, 2 * d + hd + cc, d3, T); */
        /*@ ghost
          int ic = 0;
          /@ loop invariant e_range: 0 <= ic <= dh;
             loop invariant ce: \forall integer k; i * d + hd <= k < i * d + hd + ic ==>
               cb[k] == attn_ctx_at(Pb + i * T, ami, scale, qb, 2 * d + k - i * d, d3, T);
             loop assigns ic;
             loop variant dh - ic; @/
          while (ic < dh) {
            /@ assert ce1: cb[i * d + hd + ic] == attn_ctx_at(Pb + i * T, ami, scale, qb, 2 * d + hd + ic, d3, T); @/
            ic++;
          }
        */
        /*@ assert ctx_new0: \forall integer k; i * d + hd <= k < i * d + hd + dh ==>
              cb[k] == attn_ctx_at(Pb + i * T, ami, scale, qb, 2 * d + k - i * d, d3, T); */
        /*@ assert ctx_new1: \forall integer k; i * d + hd <= k < i * d + hd + dh ==>
              cb[k] == attn_ctx_at(Pb + i * T, attn_am_row(amb, i * T), scale, qb, 2 * d + k - i * d, d3, T); */
        /*@ assert ctx_new: attn_head_c(cb, Pb, amb, scale, qb, i * d, i * T, hd, d, d3, dh, T); */
        /*@ assert c_old: \forall integer k; 0 <= k < i * d ==> cb[k] == \at(cb[k], row_i); */
        /*@ assert ctx_old: \forall integer i2; 0 <= i2 < i ==>
              attn_head_c(cb, Pb, amb, scale, qb, attn_rs(i2, d), attn_rs(i2, T), hd, d, d3, dh, T); */
        /*@ assert p_fr: attn_p_same{row_i, Pre}(qb, i * d3 + hd, d + hd, d3, dh, T); */
        /* Row i's weights (after the context, so that the context's goals do not hold p_fr and its
           lemmas): the call's att_row (with p_fr).  The rows before it: the call wrote none
           of their cells (rb). */
        /*@ assert att_new: causal == 0 && kpb == \null ==> attn_head_p{Pre, Here}(Pb, qb, i * T, i * d3, hd, d, d3, dh, T); */
        /*@ assert P_old: \forall integer i2, j; 0 <= i2 < i && 0 <= j < T ==>
              Pb[attn_rs(i2, T) + j] == \at(Pb[attn_rs(i2, T) + j], row_i); */
        /*@ assert att_old: causal == 0 && kpb == \null ==> \forall integer i2; 0 <= i2 < i ==>
              attn_head_p{Pre, Here}(Pb, qb, attn_rs(i2, T), attn_rs(i2, d3), hd, d, d3, dh, T); */
#endif
    }
}

void attention_forward_f32(float *y, float *qkv, float *att, float *ctx, float *row, const float *x,
                           const float *in_w, const float *in_b, const float *out_w,
                           const float *out_b, const float *kpm, const float *amask, float p, int B,
                           int T, int d, int H, int causal)
{
    /* every product of sizes is formed once, from two variables (each bounded by attn_dims), so
       that no index expression nests a product inside a product (the provers do not see through
       the int conversion of an inner product) */
    int rows = B * T, d3 = 3 * d, dh = d / H, Td3 = T * d3;
    //@ ghost int BH = B * H, BHT = BH * T;
    //@ ghost lemma_attn_heads(d, H);
    float scale = amask ? dropout_scale_f32(p) : 1.0f;
    linear_forward_f32(qkv, x, in_w, in_b, rows, d, d3);
    attn_scale_q_f32(qkv, sqrtf((float)dh), rows, d3, d);
#ifdef RESNORM_WP_ROWS
    /* qkv is not written after this point (the rows run's heads_att is over qkv as here) */
  scaled: ;
#endif
    /*@ loop invariant b_range: 0 <= b <= B;
        ATTN_ROWS_CLAUSE(loop invariant att_b: causal == 0 && kpm == \null ==> \forall integer b2, h2;
          0 <= b2 < b && 0 <= h2 < H ==> attn_bh_att{scaled, Here}(att, qkv, b2, h2, H, T, d, d3, Td3, dh);)
        loop assigns b, att[0 .. B * H * T * T - 1], ctx[0 .. B * T * d - 1], row[0 .. 2 * T - 1];
        loop variant B - b; */
    for (int b = 0; b < B; b++) {
        //@ ghost lemma_attn_row(b, B, H);
        //@ ghost lemma_attn_row(b, B, T);
        //@ ghost lemma_attn_row(b, B, Td3);
        int bT = b * T; /* the batch element's first row of x, ctx, y, dy: [B, T] */
        //@ ghost lemma_attn_span(bT, T, rows, d);
#ifdef RESNORM_WP_ROWS
        /*@ assert rb_b: attn_rs(b, H) == b * H && attn_rows_before(b, H); */
#endif
        /*@ loop invariant h_range: 0 <= h <= H;
            ATTN_ROWS_CLAUSE(loop invariant att_b: causal == 0 && kpm == \null ==> \forall integer b2, h2;
              0 <= b2 < b && 0 <= h2 < H ==> attn_bh_att{scaled, Here}(att, qkv, b2, h2, H, T, d, d3, Td3, dh);)
            ATTN_ROWS_CLAUSE(loop invariant att_h: causal == 0 && kpm == \null ==> \forall integer h2;
              0 <= h2 < h ==> attn_bh_att{scaled, Here}(att, qkv, b, h2, H, T, d, d3, Td3, dh);)
            loop assigns h, att[0 .. B * H * T * T - 1], ctx[0 .. B * T * d - 1], row[0 .. 2 * T - 1];
            loop variant H - h; */
        for (int h = 0; h < H; h++) {
            //@ ghost lemma_attn_row(h, H, dh);
            int bh = b * H + h, hd = h * dh; /* the [B, H] index; the head's first column */
            //@ ghost lemma_attn_row(bh, BH, T);
            int bhT = bh * T; /* the head's first score row [B, H, T] */
            //@ ghost lemma_attn_span(bhT, T, BHT, T);
#ifdef RESNORM_WP_ROWS
            /*@ assert ix_h: attn_rs(h, dh) == hd; */
            /*@ assert ix_b: attn_rs(b, Td3) == b * Td3; */
            /*@ assert ix_r: 0 <= bh && 0 <= bhT && attn_rs(bh, T) == bhT; */
            //@ ghost lemma_attn_blk(bh, T, bhT);
            /*@ assert rtt: attn_rows_before(T, T) && attn_rs(T, T) == T * T; */
            /* the head's query and key slices lie in the element's rows of qkv, which lie in qkv */
            /*@ assert q_in: 0 <= b * Td3 && b * Td3 + Td3 <= B * T * 3 * d && Td3 == T * d3 && d3 == 3 * d; */
            /*@ assert h_in: 0 <= hd && hd + dh <= d; */
            /* Only att, ctx and row were written since `scaled`: every score of the head's T query
               rows over qkv is as there (attn_score_frame: its two slices of qkv are, by the
               loops' assigns), hence their softmax rows (attn_p_frame). */
            /*@ assert rtd: attn_rows_before(T, d3) && attn_rs(T, d3) == Td3 && 0 <= Td3; */
            /*@ assert m2: \forall integer i; 0 <= i < T ==>
                  attn_mem_same{Here, scaled}(qkv + b * Td3 + (attn_rs(i, d3) + hd), dh); */
            /*@ assert mk: \forall integer j; 0 <= j < T ==>
                  attn_mem_same{Here, scaled}(qkv + b * Td3 + (attn_rs(j, d3) + (d + hd)), dh); */
            /*@ assert sd: \forall integer i, j; 0 <= i < T && 0 <= j < T ==>
                  attn_dot_same{Here, scaled}(qkv + b * Td3 + (attn_rs(i, d3) + hd), qkv + b * Td3 + (attn_rs(j, d3) + (d + hd)), dh); */
            /*@ assert sf: \forall integer i, j; 0 <= i < T && 0 <= j < T ==>
                  attn_score_same{Here, scaled}(qkv + b * Td3, attn_rs(i, d3) + hd, d + hd, d3, dh, j); */
            /*@ assert ss: \forall integer i; 0 <= i < T ==>
                  attn_scores_same{Here, scaled}(qkv + b * Td3, attn_rs(i, d3) + hd, d + hd, d3, dh, T); */
            /*@ assert pf: \forall integer i; 0 <= i < T ==>
                  attn_p_same{Here, scaled}(qkv + b * Td3, attn_rs(i, d3) + hd, d + hd, d3, dh, T); */
#endif
            /* the T query rows of head h: ctx rows bT .. bT + T - 1 (columns hd ..), att block bh */
#ifdef RESNORM_WP_ROWS
          head: /* (a label for the rows run's frames only) */
#endif
            attn_head_forward_f32(ctx + bT * d, att + bhT * T, row, qkv + b * Td3, kpm ? kpm + bT : 0,
                                  amask ? amask + bhT * T : 0, scale, hd, T, d, dh, d3, causal);
#ifdef RESNORM_WP_ROWS
            /* This head's rows: the call's head_att, over qkv as at `scaled` (pi).  The heads before
               it: the call wrote none of their blocks (bb). */
            /* (row by row: each step one ground instance of the call's head_att and of pf) */
            /*@ ghost
              int ia = 0;
              /@ loop invariant ia_range: 0 <= ia <= T;
                 loop invariant an: causal == 0 && kpm == \null ==> \forall integer i2; 0 <= i2 < ia ==>
                   attn_head_p{scaled, Here}(att + attn_blk(attn_rs(b, H) + h, T), qkv + attn_rs(b, Td3), attn_rs(i2, T),
                                             attn_rs(i2, d3), attn_rs(h, dh), d, d3, dh, T);
                 loop assigns ia;
                 loop variant T - ia; @/
              while (ia < T) {
                /@ assert an_p: attn_p_same_at{head, scaled}(qkv + b * Td3, attn_rs(ia, d3) + hd, d + hd, d3, dh, T); @/
                /@ assert an_i: causal == 0 && kpm == \null ==>
                     attn_head_p{scaled, Here}(att + bhT * T, qkv + b * Td3, attn_rs(ia, T), attn_rs(ia, d3), hd, d, d3, dh, T); @/
                /@ assert an_x: attn_blk(attn_rs(b, H) + h, T) == bhT * T && attn_rs(b, Td3) == b * Td3 && attn_rs(h, dh) == hd; @/
                /@ assert an_j: causal == 0 && kpm == \null ==>
                     attn_head_p{scaled, Here}(att + attn_blk(attn_rs(b, H) + h, T), qkv + attn_rs(b, Td3), attn_rs(ia, T),
                                               attn_rs(ia, d3), attn_rs(h, dh), d, d3, dh, T); @/
                ia++;
              }
            */
            /*@ assert att_new: causal == 0 && kpm == \null ==> attn_bh_att{scaled, Here}(att, qkv, b, h, H, T, d, d3, Td3, dh); */
            /* the blocks before this one end before it (a loop run once: its body's attn_blks_before,
               which brings AttnBlocksBefore's lemmas into a goal, does not reach the goals after it) */
            /*@ ghost
              int once = 0;
              /@ loop invariant once_range: 0 <= once <= 1;
                 loop invariant bbo: once == 1 ==> \forall integer r2; 0 <= r2 < bh ==>
                   0 <= attn_blk(r2, T) && attn_blk(r2, T) + T * T <= bhT * T;
                 loop assigns once;
                 loop variant 1 - once; @/
              while (once < 1) {
                /@ assert bb: attn_blks_before(bh, T); @/
                once = 1;
              }
            */
            /* (head by head: each step one ground instance of attn_bh_frame) */
            /*@ ghost
              int ho = 0;
              /@ loop invariant ho_range: 0 <= ho <= h;
                 loop invariant oh: causal == 0 && kpm == \null ==> \forall integer h3; 0 <= h3 < ho ==>
                   attn_bh_att{scaled, Here}(att, qkv, b, h3, H, T, d, d3, Td3, dh);
                 loop assigns ho;
                 loop variant h - ho; @/
              while (ho < h) {
                /@ assert oh_b: attn_blk_same{head, Here}(att + attn_blk(attn_rs(b, H) + ho, T), T); @/
                /@ assert oh_o: causal == 0 && kpm == \null ==> attn_bh_att{scaled, head}(att, qkv, b, ho, H, T, d, d3, Td3, dh); @/
                /@ assert oh1: causal == 0 && kpm == \null ==> attn_bh_att{scaled, Here}(att, qkv, b, ho, H, T, d, d3, Td3, dh); @/
                ho++;
              }
            */
            /*@ assert att_oh: causal == 0 && kpm == \null ==> \forall integer h2; 0 <= h2 < h ==>
                  attn_bh_att{scaled, Here}(att, qkv, b, h2, H, T, d, d3, Td3, dh); */
            /*@ ghost
              int bo = 0;
              /@ loop invariant bo_range: 0 <= bo <= b;
                 loop invariant ob: causal == 0 && kpm == \null ==> \forall integer b3, h3; 0 <= b3 < bo && 0 <= h3 < H ==>
                   attn_bh_att{scaled, Here}(att, qkv, b3, h3, H, T, d, d3, Td3, dh);
                 loop assigns bo;
                 loop variant b - bo; @/
              while (bo < b) {
                int hq = 0;
                /@ loop invariant hq_range: 0 <= hq <= H;
                   loop invariant obh: causal == 0 && kpm == \null ==> \forall integer h3; 0 <= h3 < hq ==>
                     attn_bh_att{scaled, Here}(att, qkv, bo, h3, H, T, d, d3, Td3, dh);
                   loop assigns hq;
                   loop variant H - hq; @/
                while (hq < H) {
                  /@ assert ob_b: attn_blk_same{head, Here}(att + attn_blk(attn_rs(bo, H) + hq, T), T); @/
                  /@ assert ob_o: causal == 0 && kpm == \null ==> attn_bh_att{scaled, head}(att, qkv, bo, hq, H, T, d, d3, Td3, dh); @/
                  /@ assert ob1: causal == 0 && kpm == \null ==> attn_bh_att{scaled, Here}(att, qkv, bo, hq, H, T, d, d3, Td3, dh); @/
                  hq++;
                }
                bo++;
              }
            */
            /*@ assert att_ob: causal == 0 && kpm == \null ==> \forall integer b2, h2; 0 <= b2 < b && 0 <= h2 < H ==>
                  attn_bh_att{scaled, Here}(att, qkv, b2, h2, H, T, d, d3, Td3, dh); */
#endif
        }
    }
#ifdef RESNORM_WP_ROWS
  heads: ;
#endif
    linear_forward_f32(y, ctx, out_w, out_b, rows, d, d);
#ifdef RESNORM_WP_ROWS
    /* The out-projection wrote y only (att as after the heads), and qkv is as at `scaled`: every
       head's scores, hence its softmax rows, are as there (the ghost induction above over every
       (b, h, i, j)). */
    /*@ assert fin0: 0 <= BH && 0 <= BHT; */
    /*@ assert fin1: attn_rs(B, H) == BH && attn_rows_before(B, H); */
    /*@ assert fin2: attn_rows_before(T, T) && attn_rs(T, T) == T * T; */
    //@ ghost lemma_attn_blk(BH, T, BHT);
    /*@ ghost
      int once = 0;
      /@ loop invariant once_range: 0 <= once <= 1;
         loop invariant bbo: once == 1 ==> \forall integer r2; 0 <= r2 < BH ==>
           0 <= attn_blk(r2, T) && attn_blk(r2, T) + T * T <= BHT * T;
         loop assigns once;
         loop variant 1 - once; @/
      while (once < 1) {
        /@ assert bb: attn_blks_before(BH, T); @/
        once = 1;
      }
    */
    /* The out-projection wrote y only: every head's block of att is as after the heads (fq), and
       qkv as at `scaled`: every head's scores, hence its softmax rows, are as there (the (b, h)
       body's frames, head by head), so each head's statement reads over qkv as here. */
    /*@ assert rtd: attn_rows_before(T, d3) && attn_rs(T, d3) == Td3 && 0 <= Td3; */
    /*@ assert fin3: attn_rows_before(B, Td3) && attn_rs(B, Td3) == B * Td3 && attn_rows_before(H, dh) && attn_rs(H, dh) == d; */
    /*@ assert fq: \forall integer b2, h2; 0 <= b2 < B && 0 <= h2 < H ==>
          attn_blk_same{heads, Here}(att + attn_blk(attn_rs(b2, H) + h2, T), T); */
    /*@ ghost
      int eb = 0;
      /@ loop invariant eb_range: 0 <= eb <= B;
         loop invariant pb: causal == 0 && kpm == \null ==> \forall integer b3, h3; 0 <= b3 < eb && 0 <= h3 < H ==>
           attn_bh_att{Here, Here}(att, qkv, b3, h3, H, T, d, d3, Td3, dh);
         loop assigns eb;
         loop variant B - eb; @/
      while (eb < B) {
        int eh = 0;
        /@ loop invariant eh_range: 0 <= eh <= H;
           loop invariant ph: causal == 0 && kpm == \null ==> \forall integer h3; 0 <= h3 < eh ==>
             attn_bh_att{Here, Here}(att, qkv, eb, h3, H, T, d, d3, Td3, dh);
           loop assigns eh;
           loop variant H - eh; @/
        while (eh < H) {
          /@ assert e_o: causal == 0 && kpm == \null ==> attn_bh_att{scaled, heads}(att, qkv, eb, eh, H, T, d, d3, Td3, dh); @/
          /@ assert e_b: attn_blk_same{heads, Here}(att + attn_blk(attn_rs(eb, H) + eh, T), T); @/
          /@ assert e_a: causal == 0 && kpm == \null ==> attn_bh_att{scaled, Here}(att, qkv, eb, eh, H, T, d, d3, Td3, dh); @/
          /@ assert e_m2: \forall integer i; 0 <= i < T ==>
               attn_mem_same{Here, scaled}(qkv + attn_rs(eb, Td3) + (attn_rs(i, d3) + attn_rs(eh, dh)), dh); @/
          /@ assert e_mk: \forall integer j; 0 <= j < T ==>
               attn_mem_same{Here, scaled}(qkv + attn_rs(eb, Td3) + (attn_rs(j, d3) + (d + attn_rs(eh, dh))), dh); @/
          /@ assert e_sd: \forall integer i, j; 0 <= i < T && 0 <= j < T ==>
               attn_dot_same{Here, scaled}(qkv + attn_rs(eb, Td3) + (attn_rs(i, d3) + attn_rs(eh, dh)),
                                           qkv + attn_rs(eb, Td3) + (attn_rs(j, d3) + (d + attn_rs(eh, dh))), dh); @/
          /@ assert e_sf: \forall integer i, j; 0 <= i < T && 0 <= j < T ==>
               attn_score_same{Here, scaled}(qkv + attn_rs(eb, Td3), attn_rs(i, d3) + attn_rs(eh, dh), d + attn_rs(eh, dh), d3, dh, j); @/
          /@ assert e_ss: \forall integer i; 0 <= i < T ==>
               attn_scores_same{Here, scaled}(qkv + attn_rs(eb, Td3), attn_rs(i, d3) + attn_rs(eh, dh), d + attn_rs(eh, dh), d3, dh, T); @/
          /@ assert e_pf: \forall integer i; 0 <= i < T ==>
               attn_p_same{Here, scaled}(qkv + attn_rs(eb, Td3), attn_rs(i, d3) + attn_rs(eh, dh), d + attn_rs(eh, dh), d3, dh, T); @/
          int ei = 0;
          /@ loop invariant ei_range: 0 <= ei <= T;
             loop invariant pi: causal == 0 && kpm == \null ==> \forall integer i2; 0 <= i2 < ei ==>
               attn_head_p{Here, Here}(att + attn_blk(attn_rs(eb, H) + eh, T), qkv + attn_rs(eb, Td3), attn_rs(i2, T),
                                       attn_rs(i2, d3), attn_rs(eh, dh), d, d3, dh, T);
             loop assigns ei;
             loop variant T - ei; @/
          while (ei < T) {
            /@ assert e_p: attn_p_same_at{scaled, Here}(qkv + attn_rs(eb, Td3), attn_rs(ei, d3) + attn_rs(eh, dh), d + attn_rs(eh, dh), d3, dh, T); @/
            /@ assert e_i: causal == 0 && kpm == \null ==>
                 attn_head_p{Here, Here}(att + attn_blk(attn_rs(eb, H) + eh, T), qkv + attn_rs(eb, Td3), attn_rs(ei, T),
                                         attn_rs(ei, d3), attn_rs(eh, dh), d, d3, dh, T); @/
            ei++;
          }
          eh++;
        }
        eb++;
      }
    */
    /*@ assert fin: causal == 0 && kpm == \null ==> \forall integer b2, h2; 0 <= b2 < B && 0 <= h2 < H ==>
          attn_bh_att{Here, Here}(att, qkv, b2, h2, H, T, d, d3, Td3, dh); */
#endif
}

/* One query row of the backward: dA[j] = dctx·v_j; dv_j += A[j]·dctx; dP = dropout backward of dA;
   dS = softmax backward at P (into dA); dqs = sum_j dS[j]·k_j; dk_j += dS[j]·qs.  gb, qb: the batch
   element's rows of dqkv and qkv [T, d3]; dc: dctx's head slice [dh]; row: scratch [2T]. */
/*@ requires dims: T >= 1 && dh >= 1 && d3 >= 1 && T * d3 <= INT_MAX && 2 * T <= INT_MAX;
    requires q_range: 0 <= qo && qo + dh <= T * d3;
    requires k_range: 0 <= ko && ko + dh <= d3;
    requires v_range: 0 <= vo && vo + dh <= d3;
    requires valid_qb: \valid_read(qb + (0 .. T * d3 - 1));
    requires valid_gb: \valid(gb + (0 .. T * d3 - 1));
    requires valid_dc: \valid_read(dc + (0 .. dh - 1));
    requires valid_P: \valid_read(P + (0 .. T - 1));
    requires valid_am: am == \null || \valid_read(am + (0 .. T - 1));
    requires valid_row: \valid(row + (0 .. 2 * T - 1));
    requires sep_gb_row: \separated(gb + (0 .. T * d3 - 1), row + (0 .. 2 * T - 1));
    requires sep_gb_qb: \separated(gb + (0 .. T * d3 - 1), qb + (0 .. T * d3 - 1));
    requires sep_gb_dc: \separated(gb + (0 .. T * d3 - 1), dc + (0 .. dh - 1));
    requires sep_gb_P: \separated(gb + (0 .. T * d3 - 1), P + (0 .. T - 1));
    requires sep_row_qb: \separated(row + (0 .. 2 * T - 1), qb + (0 .. T * d3 - 1));
    requires sep_row_dc: \separated(row + (0 .. 2 * T - 1), dc + (0 .. dh - 1));
    requires sep_row_P: \separated(row + (0 .. 2 * T - 1), P + (0 .. T - 1));
    requires sep_am: am == \null || \separated(am + (0 .. T - 1), row + (0 .. 2 * T - 1), gb + (0 .. T * d3 - 1));
    assigns gb[0 .. T * d3 - 1], row[0 .. 2 * T - 1]; */
static void attn_row_backward_f32(float *gb, float *row, const float *qb, const float *dc,
                                  const float *P, const float *am, float scale, int qo, int ko,
                                  int vo, int T, int dh, int d3)
{
    float *dA = row, *dP = row + T;
    /*@ loop invariant j_range: 0 <= j <= T;
        loop assigns j, dA[0 .. T - 1];
        loop variant T - j; */
    for (int j = 0; j < T; j++) {
        //@ ghost lemma_attn_row(j, T, d3);
        dA[j] = linear_dot_f32(0.0f, dc, qb + j * d3 + vo, dh);
    }
    /*@ loop invariant j_range: 0 <= j <= T;
        loop assigns j, gb[0 .. T * d3 - 1];
        loop variant T - j; */
    for (int j = 0; j < T; j++) {
        //@ ghost lemma_attn_row(j, T, d3);
        float a = am ? P[j] * am[j] * scale : P[j]; /* A[j]: dropout's formula (specs/dropout.h) */
        /*@ loop invariant cc_range: 0 <= cc <= dh;
            loop assigns cc, gb[0 .. T * d3 - 1];
            loop variant dh - cc; */
        for (int cc = 0; cc < dh; cc++)
            gb[j * d3 + vo + cc] += a * dc[cc];
    }
    /*@ loop invariant j_range: 0 <= j <= T;
        loop assigns j, dP[0 .. T - 1];
        loop variant T - j; */
    for (int j = 0; j < T; j++)
        dP[j] = am ? 0.0f : dA[j];
    if (am)
        dropout_backward_f32(dP, dA, am, scale, T);
    attn_zero_f32(dA, T);
    softmax_row_backward_f32(dA, P, dP, T);
    /*@ loop invariant cc_range: 0 <= cc <= dh;
        loop assigns cc, gb[0 .. T * d3 - 1];
        loop variant dh - cc; */
    for (int cc = 0; cc < dh; cc++)
        gb[qo + cc] = linear_sdot_f32(gb[qo + cc], dA, qb, ko + cc, d3, T);
    /*@ loop invariant j_range: 0 <= j <= T;
        loop assigns j, gb[0 .. T * d3 - 1];
        loop variant T - j; */
    for (int j = 0; j < T; j++) {
        //@ ghost lemma_attn_row(j, T, d3);
        /*@ loop invariant cc_range: 0 <= cc <= dh;
            loop assigns cc, gb[0 .. T * d3 - 1];
            loop variant dh - cc; */
        for (int cc = 0; cc < dh; cc++)
            gb[j * d3 + ko + cc] += dA[j] * qb[qo + cc];
    }
}

void attention_backward_f32(float *dx, float *din_w, float *din_b, float *dout_w, float *dout_b,
                            float *dqkv, float *dctx, float *row, const float *dy, const float *x,
                            const float *in_w, const float *out_w, const float *qkv,
                            const float *att, const float *ctx, const float *amask, float p, int B,
                            int T, int d, int H)
{
    /* the products of sizes formed once, as in attention_forward_f32 */
    int rows = B * T, d3 = 3 * d, dh = d / H, Td3 = T * d3;
    //@ ghost int BH = B * H, BHT = BH * T;
    int rd = rows * d, rd3 = rows * d3;
    //@ ghost lemma_attn_heads(d, H);
    float scale = amask ? dropout_scale_f32(p) : 1.0f;
    attn_zero_f32(dctx, rd);
    attn_zero_f32(dqkv, rd3);
    linear_backward_f32(dctx, dout_w, dout_b, dy, ctx, out_w, rows, d, d);
    /*@ loop invariant b_range: 0 <= b <= B;
        loop assigns b, dqkv[0 .. B * T * 3 * d - 1], row[0 .. 2 * T - 1];
        loop variant B - b; */
    for (int b = 0; b < B; b++) {
        //@ ghost lemma_attn_row(b, B, H);
        //@ ghost lemma_attn_row(b, B, T);
        //@ ghost lemma_attn_row(b, B, Td3);
        int bT = b * T; /* the batch element's first row of x, ctx, y, dy: [B, T] */
        /*@ loop invariant h_range: 0 <= h <= H;
            loop assigns h, dqkv[0 .. B * T * 3 * d - 1], row[0 .. 2 * T - 1];
            loop variant H - h; */
        for (int h = 0; h < H; h++) {
            //@ ghost lemma_attn_row(h, H, dh);
            int bh = b * H + h, hd = h * dh; /* the [B, H] index; the head's first column */
            //@ ghost lemma_attn_row(bh, BH, T);
            /*@ loop invariant i_range: 0 <= i <= T;
                loop assigns i, dqkv[0 .. B * T * 3 * d - 1], row[0 .. 2 * T - 1];
                loop variant T - i; */
            for (int i = 0; i < T; i++) {
                int r = bh * T + i, bi = bT + i;
                //@ ghost lemma_attn_row(r, BHT, T);
                //@ ghost lemma_attn_row(i, T, d3);
                //@ ghost lemma_attn_row(bi, rows, d);
                attn_row_backward_f32(dqkv + b * Td3, row, qkv + b * Td3, dctx + bi * d + hd,
                                      att + r * T, amask ? amask + r * T : 0, scale, i * d3 + hd,
                                      d + hd, 2 * d + hd, T, dh, d3);
            }
        }
    }
    attn_scale_q_f32(dqkv, sqrtf((float)dh), rows, d3, d); /* dq = dqs / sqrt(dh) */
    linear_backward_f32(dx, din_w, din_b, dqkv, x, in_w, rows, d, d3);
}

/* ---- double: the same code with double ---- */

/* a[k] = 0 for k < n.  (Not stated as an ACSL postcondition: in Frama-C 25's real model Qed
   prints the literal of `a[k] == 0.0` as the integer 0, and Why3 then rejects, with a type error,
   every later goal that has the postcondition as a hypothesis.  Nothing proved relies on it.) */
/*@ requires n_nonneg: n >= 0;
    requires valid_a: \valid(a + (0 .. n - 1));
    assigns a[0 .. n - 1]; */
static void attn_zero_f64(double *a, int n)
{
    /*@ loop invariant k_range: 0 <= k <= n;
        loop assigns k, a[0 .. n - 1];
        loop variant n - k; */
    for (int k = 0; k < n; k++)
        a[k] = 0.0;
}

/* v != 0 (a key padding mask entry that says "ignore").  A function of its own, without a
   postcondition, for the same Frama-C 25 real-model defect as attn_zero_f64: a comparison with the
   literal 0 in a goal's hypotheses makes Why3 reject the goal. */
/*@ assigns \nothing; */
static int attn_nonzero_f64(double v)
{
    return v != 0.0;
}

/* The additive mask row of query i: -Inf where key j is masked (causal: j > i; the key padding
   mask of this batch element: kpm[j] != 0), else 0.  Returns m, or NULL when nothing is masked. */
/*@ requires T_pos: T >= 1;
    requires valid_m: \valid(m + (0 .. T - 1));
    requires valid_kpm: kpm == \null || \valid_read(kpm + (0 .. T - 1));
    requires sep: kpm == \null || \separated(m + (0 .. T - 1), kpm + (0 .. T - 1));
    assigns m[0 .. T - 1];
    ensures result: \result == \null || \result == m; */
static const double *attn_mask_row_f64(double *m, const double *kpm, int i, int T, int causal)
{
    if (!causal && !kpm)
        return 0;
    /*@ loop invariant j_range: 0 <= j <= T;
        loop assigns j, m[0 .. T - 1];
        loop variant T - j; */
    for (int j = 0; j < T; j++)
        m[j] = (causal && j > i) || (kpm && attn_nonzero_f64(kpm[j])) ? -INFINITY : 0.0;
    return m;
}

/* q[c] /= sq for c < n (one row: torch's q_scaled = q / math.sqrt(E); also dq = dqs / sqrt(dh)). */
/*@ requires n_nonneg: n >= 0;
    requires valid_q: \valid(q + (0 .. n - 1));
    assigns q[0 .. n - 1]; */
static void attn_div_row_f64(double *q, double sq, int n)
{
    /*@ loop invariant c_range: 0 <= c <= n;
        loop assigns c, q[0 .. n - 1];
        loop variant n - c; */
    for (int c = 0; c < n; c++)
        q[c] = q[c] / sq;
}

/* The q columns (the first d of each row of qkv [rows, d3]) divided by sq. */
/*@ requires dims: rows >= 0 && 1 <= d <= d3 && rows * d3 <= INT_MAX;
    requires valid_qkv: \valid(qkv + (0 .. rows * d3 - 1));
    assigns qkv[0 .. rows * d3 - 1]; */
static void attn_scale_q_f64(double *qkv, double sq, int rows, int d3, int d)
{
    /*@ loop invariant r_range: 0 <= r <= rows;
        loop assigns r, qkv[0 .. rows * d3 - 1];
        loop variant rows - r; */
    for (int r = 0; r < rows; r++) {
        //@ ghost lemma_attn_row(r, rows, d3);
        attn_div_row_f64(qkv + r * d3, sq, d);
    }
}

/* c[cc] = sum_{j<T} A[j]·qb[j·d3 + vo + cc] for cc < dh: one query row's context slice (A: its T
   attention weights, qb: the batch element's rows of qkv [T, d3], vo: the head's first v column). */
/*@ requires dims: T >= 1 && dh >= 1 && d3 >= 1 && T * d3 <= INT_MAX;
    requires v_range: 0 <= vo && vo + dh <= d3;
    requires valid_c: \valid(c + (0 .. dh - 1));
    requires valid_A: \valid_read(A + (0 .. T - 1));
    requires valid_qb: \valid_read(qb + (0 .. T * d3 - 1));
    requires sep_A: \separated(c + (0 .. dh - 1), A + (0 .. T - 1));
    requires sep_qb: \separated(c + (0 .. dh - 1), qb + (0 .. T * d3 - 1));
    assigns c[0 .. dh - 1];
    ATTN_ROWS_CLAUSE(ensures ctx_sdot: \forall integer cc; 0 <= cc < dh ==> c[cc] == lin_sdot(A, qb, vo + cc, d3, T);) */
static void attn_ctx_row_f64(double *c, const double *A, const double *qb, int vo, int T, int dh, int d3)
{
    /*@ loop invariant cc_range: 0 <= cc <= dh;
        ATTN_ROWS_CLAUSE(loop invariant done: \forall integer cc2; 0 <= cc2 < cc ==>
          c[cc2] == lin_sdot{Pre}(A, qb, vo + cc2, d3, T);)
        loop assigns cc, c[0 .. dh - 1];
        loop variant dh - cc; */
    for (int cc = 0; cc < dh; cc++) {
#ifdef RESNORM_WP_ROWS
        /* Ghost frame (not run): only c was written since entry (an induction over the row). */
        /*@ ghost
          int k = 0;
          /@ loop invariant k_range: 0 <= k <= T;
             loop invariant fr: lin_sdot(A, qb, vo + cc, d3, k) == lin_sdot{Pre}(A, qb, vo + cc, d3, k);
             loop assigns k;
             loop variant T - k; @/
          while (k < T) {
            lemma_attn_row(k, T, d3);
            /@ assert fr_k: \let kk = k; \let vc = vo + cc; A[kk] == \at(A[kk], Pre) && qb[kk * d3 + vc] == \at(qb[kk * d3 + vc], Pre); @/
            k++;
          }
        */
#endif
        c[cc] = linear_sdot_f64(0.0, A, qb, vo + cc, d3, T);
    }
#ifdef RESNORM_WP_ROWS
    /* Ghost frame (not run): every column's dot, from entry to return. */
    /*@ ghost
      int e = 0;
      /@ loop invariant e_range: 0 <= e <= dh;
         loop invariant same: \forall integer vc; vo <= vc < vo + e ==>
           lin_sdot(A, qb, vc, d3, T) == lin_sdot{Pre}(A, qb, vc, d3, T);
         loop assigns e;
         loop variant dh - e; @/
      while (e < dh) {
        int k = 0;
        /@ loop invariant k_range: 0 <= k <= T;
           loop invariant fr: lin_sdot(A, qb, vo + e, d3, k) == lin_sdot{Pre}(A, qb, vo + e, d3, k);
           loop assigns k;
           loop variant T - k; @/
        while (k < T) {
          lemma_attn_row(k, T, d3);
          /@ assert fr_k: \let kk = k; \let vc = vo + e; A[kk] == \at(A[kk], Pre) && qb[kk * d3 + vc] == \at(qb[kk * d3 + vc], Pre); @/
          k++;
        }
        /@ assert fr_T: k == T; @/
        /@ assert fr_e: lin_sdot(A, qb, vo + e, d3, T) == lin_sdot{Pre}(A, qb, vo + e, d3, T); @/
        e++;
      }
      /@ assert e_dh: e == dh; @/
    */
#endif
}

#ifdef RESNORM_WP_ROWS
/* The rows run: the strided dot over weights A that are attn_a's is attn_ctx (one memory state). */
/*@ ghost
  /@ requires n_nonneg: n >= 0;
     requires a_def: \forall integer j; 0 <= j < n ==> A[j] == attn_a(P, am, scale, j);
     assigns \nothing;
     ensures eq: lin_sdot(A, qb, vc, d3, n) == attn_ctx(P, am, scale, qb, vc, d3, n); @/
  static void attn_ctx_eq_f64(const double *A, const double *P, const double *am, double scale, const double *qb, int vc,
                              int d3, int n)
  {
    int k = 0;
    /@ loop invariant k_range: 0 <= k <= n;
       loop invariant eq: lin_sdot(A, qb, vc, d3, k) == attn_ctx(P, am, scale, qb, vc, d3, k);
       loop assigns k;
       loop variant n - k; @/
    while (k < n) k++;
  }
*/
#endif

/* One query row: s[j] = qs·k_j, P = softmax(s + mask), A = dropout(P), c[cc] = sum_j A[j]·v_j[cc].
   qb: the batch element's rows of qkv [T, d3]; qo: the query's q slice (i·d3 + h·dh), ko, vo: the
   head's k and v columns (d + h·dh, 2d + h·dh); row: scratch [2T] (mask row, then s / A). */
/*@ requires dims: T >= 1 && dh >= 1 && d3 >= 1 && T * d3 <= INT_MAX && 2 * T <= INT_MAX;
    requires i_range: 0 <= i < T;
    requires q_range: 0 <= qo && qo + dh <= T * d3;
    requires k_range: 0 <= ko && ko + dh <= d3;
    requires v_range: 0 <= vo && vo + dh <= d3;
    requires valid_qb: \valid_read(qb + (0 .. T * d3 - 1));
    requires valid_kpm: kpm == \null || \valid_read(kpm + (0 .. T - 1));
    requires valid_am: am == \null || \valid_read(am + (0 .. T - 1));
    requires valid_c: \valid(c + (0 .. dh - 1));
    requires valid_P: \valid(P + (0 .. T - 1));
    requires valid_row: \valid(row + (0 .. 2 * T - 1));
    requires sep: \separated(c + (0 .. dh - 1), P + (0 .. T - 1), row + (0 .. 2 * T - 1), qb + (0 .. T * d3 - 1));
    requires sep_kpm: kpm == \null || \separated(kpm + (0 .. T - 1), row + (0 .. 2 * T - 1), P + (0 .. T - 1), c + (0 .. dh - 1));
    requires sep_am: am == \null || \separated(am + (0 .. T - 1), row + (0 .. 2 * T - 1), P + (0 .. T - 1), c + (0 .. dh - 1));
    assigns c[0 .. dh - 1], P[0 .. T - 1], row[0 .. 2 * T - 1]; */
static void attn_row_forward_f64(double *c, double *P, double *row, const double *qb, int qo, int ko,
                                 int vo, const double *kpm, const double *am, double scale, int i,
                                 int T, int dh, int d3, int causal)
{
    double *s = row + T;
    const double *m = attn_mask_row_f64(row, kpm, i, T, causal);
    /*@ loop invariant j_range: 0 <= j <= T;
        ATTN_ROWS_CLAUSE(loop invariant scores: \forall integer j2; 0 <= j2 < j ==>
          s[j2] == attn_score{Pre}(qb, qo, ko, d3, dh, j2);)
        loop assigns j, s[0 .. T - 1];
        loop variant T - j; */
    for (int j = 0; j < T; j++) {
        //@ ghost lemma_attn_row(j, T, d3);
#ifdef RESNORM_WP_ROWS
        /* Ghost frame (not run): only s was written since entry, so the query slice and key row j,
           and their dot, are as at entry (an induction over the dot's length, g counting down). */
        /*@ ghost
          int g = dh;
          /@ loop invariant g_range: 0 <= g <= dh;
             loop invariant fr: lin_dot(qb + qo, qb + j * d3 + ko, dh - g) == lin_dot{Pre}(qb + qo, qb + j * d3 + ko, dh - g);
             loop assigns g;
             loop variant g; @/
          while (g > 0) g--;
        */
#endif
        s[j] = linear_dot_f64(0.0, qb + qo, qb + j * d3 + ko, dh);
#ifdef RESNORM_WP_ROWS
        /*@ assert s_j: s[j] == attn_score{Pre}(qb, qo, ko, d3, dh, j); */
#endif
    }
#ifdef RESNORM_WP_ROWS
    /* Without a mask the softmax's max and sum over s are those over the scores of qb at entry
       (ghost inductions over the row, each step one unfolding of both sides). */
    /*@ ghost
      if (!m) {
        int k = 1;
        /@ loop invariant k_range: 1 <= k <= T;
           loop invariant max_eq: sm_max(s, m, k) == attn_smax{Pre}(qb, qo, ko, d3, dh, k);
           loop assigns k;
           loop variant T - k; @/
        while (k < T) k++;
        k = 0;
        /@ loop invariant k_range: 0 <= k <= T;
           loop invariant sum_eq: sm_sum(s, m, sm_max(s, m, T), k) ==
             attn_ssum{Pre}(qb, qo, ko, d3, dh, attn_smax{Pre}(qb, qo, ko, d3, dh, T), k);
           loop assigns k;
           loop variant T - k; @/
        while (k < T) k++;
      }
    */
#endif
    softmax_row_forward_f64(P, s, m, T);
#ifdef RESNORM_WP_ROWS
    /*@ assert att_now: m == \null ==> \forall integer j; 0 <= j < T ==> P[j] == attn_p{Pre}(qb, qo, ko, d3, dh, T, j); */
#endif
    const double *A = P;
    if (am) {
        dropout_forward_f64(s, P, am, scale, T);
        A = s;
#ifdef RESNORM_WP_ROWS
        /*@ assert a_drop: \forall integer j; 0 <= j < T ==> s[j] == attn_a(P, am, scale, j); */
#endif
    }
#ifdef RESNORM_WP_ROWS
    /*@ assert a_pre: \forall integer j; 0 <= j < T ==> A[j] == attn_a(P, am, scale, j); */
#endif
    attn_ctx_row_f64(c, A, qb, vo, T, dh, d3);
#ifdef RESNORM_WP_ROWS
    /* c[cc] is the strided dot over A; A[j] is P[j] (or its dropout), so it is attn_ctx (ghost
       lemma calls, one per column, each a one-state induction over the row). */
    /*@ assert a_def: \forall integer j; 0 <= j < T ==> A[j] == attn_a(P, am, scale, j); */
    /*@ ghost
      int e = 0;
      /@ loop invariant e_range: 0 <= e <= dh;
         loop invariant ctx_eq: \forall integer vc; vo <= vc < vo + e ==>
           lin_sdot(A, qb, vc, d3, T) == attn_ctx(P, am, scale, qb, vc, d3, T);
         loop assigns e;
         loop variant dh - e; @/
      while (e < dh) {
        attn_ctx_eq_f64(A, P, am, scale, qb, vo + e, d3, T);
        e++;
      }
    */
#endif
}

/* One head h of one batch element b: query rows i = 0 .. T-1 of attn_row_forward in turn (the
   drivers' innermost loop, called once per (b, h)).  cb: the element's rows of ctx [T, d], of which the head writes columns
   hd .. hd + dh - 1; Pb: the (b, h) block of att [T, T]; qb: the element's rows of qkv [T, d3];
   kpb: the element's key padding row [T] or null; amb: the (b, h) block of the attention-dropout
   mask [T, T] or null.  Rows run (specs/attention_rows.h): head_att and head_ctx, every row of the
   head, composed from att_row and ctx_row across the later rows' writes. */
/*@ requires dims: T >= 1 && dh >= 1 && d >= 1 && d3 == 3 * d && T * d3 <= INT_MAX && 2 * T <= INT_MAX &&
                   T * T <= INT_MAX && T * d <= INT_MAX;
    requires head: 0 <= hd && hd + dh <= d;
    requires valid_qb: \valid_read(qb + (0 .. T * d3 - 1));
    requires valid_kpb: kpb == \null || \valid_read(kpb + (0 .. T - 1));
    requires valid_amb: amb == \null || \valid_read(amb + (0 .. T * T - 1));
    requires valid_cb: \valid(cb + (0 .. T * d - 1));
    requires valid_Pb: \valid(Pb + (0 .. T * T - 1));
    requires valid_row: \valid(row + (0 .. 2 * T - 1));
    requires sep: \separated(cb + (0 .. T * d - 1), Pb + (0 .. T * T - 1), row + (0 .. 2 * T - 1),
                             qb + (0 .. T * d3 - 1));
    requires sep_kpb: kpb == \null ||
      \separated(kpb + (0 .. T - 1), row + (0 .. 2 * T - 1), Pb + (0 .. T * T - 1), cb + (0 .. T * d - 1));
    requires sep_amb: amb == \null ||
      \separated(amb + (0 .. T * T - 1), row + (0 .. 2 * T - 1), Pb + (0 .. T * T - 1), cb + (0 .. T * d - 1));
    assigns cb[0 .. T * d - 1], Pb[0 .. T * T - 1], row[0 .. 2 * T - 1];
    ATTN_ROWS_CLAUSE(ensures head_att: causal == 0 && kpb == \null ==>
      \forall integer i; 0 <= i < T ==> attn_head_p{Pre, Here}(Pb, qb, attn_rs(i, T), attn_rs(i, d3), hd, d, d3, dh, T);)
    ATTN_ROWS_CLAUSE(ensures head_ctx: \forall integer i; 0 <= i < T ==>
      attn_head_c(cb, Pb, amb, scale, qb, attn_rs(i, d), attn_rs(i, T), hd, d, d3, dh, T);) */
static void attn_head_forward_f64(double *cb, double *Pb, double *row, const double *qb, const double *kpb,
                                  const double *amb, double scale, int hd, int T, int d, int dh, int d3,
                                  int causal)
{
    /*@ loop invariant i_range: 0 <= i <= T;
        ATTN_ROWS_CLAUSE(loop invariant att_done: causal == 0 && kpb == \null ==>
          \forall integer i2; 0 <= i2 < i ==> attn_head_p{Pre, Here}(Pb, qb, attn_rs(i2, T), attn_rs(i2, d3), hd, d, d3, dh, T);)
        ATTN_ROWS_CLAUSE(loop invariant ctx_done: \forall integer i2; 0 <= i2 < i ==>
          attn_head_c(cb, Pb, amb, scale, qb, attn_rs(i2, d), attn_rs(i2, T), hd, d, d3, dh, T);)
        loop assigns i, cb[0 .. T * d - 1], Pb[0 .. T * T - 1], row[0 .. 2 * T - 1];
        loop variant T - i; */
    for (int i = 0; i < T; i++) {
        //@ ghost lemma_attn_row(i, T, d3);
        //@ ghost lemma_attn_row(i, T, d);
        //@ ghost lemma_attn_row(i, T, T);
        const double *ami = amb ? amb + i * T : 0; /* row i of the mask block */
#ifdef RESNORM_WP_ROWS
        /*@ assert rs_i: attn_rs(i, T) == i * T && attn_rs(i, d) == i * d && attn_rs(i, d3) == i * d3; */
        /*@ assert rb: attn_rows_before(i, T) && attn_rows_before(i, d) && attn_vidx_in(T, d3); */
        /* Only cb, Pb and row were written since entry: query i's scores over qb are as at entry
           (ghost inductions over each key j's dot, as in attn_row_forward), hence its softmax row
           (attn_p_frame). */
        /*@ ghost
          int j = 0;
          /@ loop invariant j_range: 0 <= j <= T;
             loop invariant sc: attn_scores_same{Here, Pre}(qb, i * d3 + hd, d + hd, d3, dh, j);
             loop assigns j;
             loop variant T - j; @/
          while (j < T) {
            lemma_attn_row(j, T, d3);
            int g = dh;
            /@ loop invariant g_range: 0 <= g <= dh;
               loop invariant fr: lin_dot(qb + (i * d3 + hd), qb + j * d3 + (d + hd), dh - g) ==
                                  lin_dot{Pre}(qb + (i * d3 + hd), qb + j * d3 + (d + hd), dh - g);
               loop assigns g;
               loop variant g; @/
            while (g > 0) g--;
            /@ assert sj: attn_score(qb, i * d3 + hd, d + hd, d3, dh, j) ==
                          attn_score{Pre}(qb, i * d3 + hd, d + hd, d3, dh, j); @/
            j++;
          }
        */
#endif
#ifdef RESNORM_WP_ROWS
    row_i: /* (a label for the rows run's frames only: unused in the build) */
#endif
        attn_row_forward_f64(cb + i * d + hd, Pb + i * T, row, qb, i * d3 + hd, d + hd, 2 * d + hd, kpb,
                             ami, scale, i, T, dh, d3, causal);
#ifdef RESNORM_WP_ROWS
        /* Row i's context: the call's ctx_row (attn_ctx_at_eq).  The rows before it: the call wrote
           none of their cells, nor their weights, nor qb, nor the mask, so their sums are as they
           were (a ghost loop over the rows, each attn_ctx_at_frame). */
        /*@ assert ctx_eq: \forall integer vc; 2 * d + hd <= vc < 2 * d + hd + dh ==>
              attn_ctx_is_at(Pb + i * T, ami, scale, qb, vc, d3, T); */
        /*@ assert am_i: ami == attn_am_row(amb, i * T); */
        /*@ ghost
          int r = 0;
          /@ loop invariant r_range: 0 <= r <= i;
             loop invariant cf: \forall integer i2, vc; 0 <= i2 < r && 2 * d + hd <= vc < 2 * d + hd + dh ==>
               attn_ctx_at(Pb + attn_rs(i2, T), attn_am_row(amb, attn_rs(i2, T)), scale, qb, vc, d3, T) ==
               \at(attn_ctx_at(Pb + attn_rs(i2, T), attn_am_row(amb, attn_rs(i2, T)), scale, qb, vc, d3, T), row_i);
             loop assigns r;
             loop variant i - r; @/
          while (r < i) {
            /@ assert rr_b: 0 <= attn_rs(r, T) && attn_rs(r, T) + T <= i * T; @/
            /@ assert cra_p: attn_row_same{Here, row_i}(Pb + attn_rs(r, T), T); @/
            /@ assert cra_m: amb != \null ==> attn_row_same{Here, row_i}(attn_am_row(amb, attn_rs(r, T)), T); @/
            /@ assert cra0: \let rr = attn_rs(r, T); \forall integer j; 0 <= j < T ==>
                 attn_a(Pb + rr, attn_am_row(amb, rr), scale, j) == \at(attn_a(Pb + rr, attn_am_row(amb, rr), scale, j), row_i); @/
            // (a loop run once: its body's facts, which bring attn_ctx_at_frame into a goal, do not
            // reach the goals after it, only its invariant does)
            int once = 0;
            /@ loop invariant once_range: 0 <= once <= 1;
               loop invariant crr: \let rr = attn_rs(r, T); once == 1 ==> \forall integer vc; 2 * d + hd <= vc < 2 * d + hd + dh ==>
                 attn_ctx_at(Pb + rr, attn_am_row(amb, rr), scale, qb, vc, d3, T) ==
                 \at(attn_ctx_at(Pb + rr, attn_am_row(amb, rr), scale, qb, vc, d3, T), row_i);
               loop assigns once;
               loop variant 1 - once; @/
            while (once < 1) {
              /@ assert cra: \let rr = attn_rs(r, T); attn_a_same{Here, row_i}(Pb + rr, attn_am_row(amb, rr), scale, T); @/
              /@ assert crq: \forall integer vc; 0 <= vc < d3 ==> attn_v_same{Here, row_i}(qb, vc, d3, T); @/
              // (column by column: each instance of attn_ctx_at_frame is then ground; the
              // quantified cr at once timed out or came back unknown in both solvers)
              int vc = 2 * d + hd;
              /@ loop invariant vc_range: 2 * d + hd <= vc <= 2 * d + hd + dh;
                 loop invariant crv: \forall integer vc2; 2 * d + hd <= vc2 < vc ==>
                   attn_ctx_same{Here, row_i}(Pb + attn_rs(r, T), attn_am_row(amb, attn_rs(r, T)), scale, qb, vc2, d3, T);
                 loop assigns vc;
                 loop variant 2 * d + hd + dh - vc; @/
              while (vc < 2 * d + hd + dh) {
                /@ assert crv1: attn_v_same{Here, row_i}(qb, vc, d3, T); @/
                /@ assert cr1: attn_ctx_same{Here, row_i}(Pb + attn_rs(r, T), attn_am_row(amb, attn_rs(r, T)), scale, qb, vc, d3, T); @/
                vc++;
              }
              /@ assert cr: \forall integer vc2; 2 * d + hd <= vc2 < 2 * d + hd + dh ==>
                   attn_ctx_same{Here, row_i}(Pb + attn_rs(r, T), attn_am_row(amb, attn_rs(r, T)), scale, qb, vc2, d3, T); @/
              once = 1;
            }
            r++;
          }
        */
        /* (column by column: the call's ctx_row names its columns cc of c = cb + i·d + hd only
           through i·d + hd + cc, which gives the solvers no trigger for a column k of cb; the
           counter is named so that Qed orders hd + ic + i·d as it orders ctx_row's hd + cc + i·d) */
        /*@ assert ctx_new00: \forall integer cc; 0 <= cc < dh ==>
              cb[i * d + hd + cc] == attn_ctx_at(Pb + i * T, ami, scale, qb, 2 * d + hd + cc, d3, T); */
        /*@ ghost
          int ic = 0;
          /@ loop invariant e_range: 0 <= ic <= dh;
             loop invariant ce: \forall integer k; i * d + hd <= k < i * d + hd + ic ==>
               cb[k] == attn_ctx_at(Pb + i * T, ami, scale, qb, 2 * d + k - i * d, d3, T);
             loop assigns ic;
             loop variant dh - ic; @/
          while (ic < dh) {
            /@ assert ce1: cb[i * d + hd + ic] == attn_ctx_at(Pb + i * T, ami, scale, qb, 2 * d + hd + ic, d3, T); @/
            ic++;
          }
        */
        /*@ assert ctx_new0: \forall integer k; i * d + hd <= k < i * d + hd + dh ==>
              cb[k] == attn_ctx_at(Pb + i * T, ami, scale, qb, 2 * d + k - i * d, d3, T); */
        /*@ assert ctx_new1: \forall integer k; i * d + hd <= k < i * d + hd + dh ==>
              cb[k] == attn_ctx_at(Pb + i * T, attn_am_row(amb, i * T), scale, qb, 2 * d + k - i * d, d3, T); */
        /*@ assert ctx_new: attn_head_c(cb, Pb, amb, scale, qb, i * d, i * T, hd, d, d3, dh, T); */
        /*@ assert c_old: \forall integer k; 0 <= k < i * d ==> cb[k] == \at(cb[k], row_i); */
        /*@ assert ctx_old: \forall integer i2; 0 <= i2 < i ==>
              attn_head_c(cb, Pb, amb, scale, qb, attn_rs(i2, d), attn_rs(i2, T), hd, d, d3, dh, T); */
        /*@ assert p_fr: attn_p_same{row_i, Pre}(qb, i * d3 + hd, d + hd, d3, dh, T); */
        /* Row i's weights (after the context, so that the context's goals do not hold p_fr and its
           lemmas): the call's att_row (with p_fr).  The rows before it: the call wrote none
           of their cells (rb). */
        /*@ assert att_new: causal == 0 && kpb == \null ==> attn_head_p{Pre, Here}(Pb, qb, i * T, i * d3, hd, d, d3, dh, T); */
        /*@ assert P_old: \forall integer i2, j; 0 <= i2 < i && 0 <= j < T ==>
              Pb[attn_rs(i2, T) + j] == \at(Pb[attn_rs(i2, T) + j], row_i); */
        /*@ assert att_old: causal == 0 && kpb == \null ==> \forall integer i2; 0 <= i2 < i ==>
              attn_head_p{Pre, Here}(Pb, qb, attn_rs(i2, T), attn_rs(i2, d3), hd, d, d3, dh, T); */
#endif
    }
}

void attention_forward_f64(double *y, double *qkv, double *att, double *ctx, double *row, const double *x,
                           const double *in_w, const double *in_b, const double *out_w,
                           const double *out_b, const double *kpm, const double *amask, double p, int B,
                           int T, int d, int H, int causal)
{
    /* every product of sizes is formed once, from two variables (each bounded by attn_dims), so
       that no index expression nests a product inside a product (the provers do not see through
       the int conversion of an inner product) */
    int rows = B * T, d3 = 3 * d, dh = d / H, Td3 = T * d3;
    //@ ghost int BH = B * H, BHT = BH * T;
    //@ ghost lemma_attn_heads(d, H);
    double scale = amask ? dropout_scale_f64(p) : 1.0;
    linear_forward_f64(qkv, x, in_w, in_b, rows, d, d3);
    attn_scale_q_f64(qkv, sqrt((double)dh), rows, d3, d);
#ifdef RESNORM_WP_ROWS
    /* qkv is not written after this point (the rows run's heads_att is over qkv as here) */
  scaled: ;
#endif
    /*@ loop invariant b_range: 0 <= b <= B;
        ATTN_ROWS_CLAUSE(loop invariant att_b: causal == 0 && kpm == \null ==> \forall integer b2, h2;
          0 <= b2 < b && 0 <= h2 < H ==> attn_bh_att{scaled, Here}(att, qkv, b2, h2, H, T, d, d3, Td3, dh);)
        loop assigns b, att[0 .. B * H * T * T - 1], ctx[0 .. B * T * d - 1], row[0 .. 2 * T - 1];
        loop variant B - b; */
    for (int b = 0; b < B; b++) {
        //@ ghost lemma_attn_row(b, B, H);
        //@ ghost lemma_attn_row(b, B, T);
        //@ ghost lemma_attn_row(b, B, Td3);
        int bT = b * T; /* the batch element's first row of x, ctx, y, dy: [B, T] */
        //@ ghost lemma_attn_span(bT, T, rows, d);
#ifdef RESNORM_WP_ROWS
        /*@ assert rb_b: attn_rs(b, H) == b * H && attn_rows_before(b, H); */
#endif
        /*@ loop invariant h_range: 0 <= h <= H;
            ATTN_ROWS_CLAUSE(loop invariant att_b: causal == 0 && kpm == \null ==> \forall integer b2, h2;
              0 <= b2 < b && 0 <= h2 < H ==> attn_bh_att{scaled, Here}(att, qkv, b2, h2, H, T, d, d3, Td3, dh);)
            ATTN_ROWS_CLAUSE(loop invariant att_h: causal == 0 && kpm == \null ==> \forall integer h2;
              0 <= h2 < h ==> attn_bh_att{scaled, Here}(att, qkv, b, h2, H, T, d, d3, Td3, dh);)
            loop assigns h, att[0 .. B * H * T * T - 1], ctx[0 .. B * T * d - 1], row[0 .. 2 * T - 1];
            loop variant H - h; */
        for (int h = 0; h < H; h++) {
            //@ ghost lemma_attn_row(h, H, dh);
            int bh = b * H + h, hd = h * dh; /* the [B, H] index; the head's first column */
            //@ ghost lemma_attn_row(bh, BH, T);
            int bhT = bh * T; /* the head's first score row [B, H, T] */
            //@ ghost lemma_attn_span(bhT, T, BHT, T);
#ifdef RESNORM_WP_ROWS
            /*@ assert ix_h: attn_rs(h, dh) == hd; */
            /*@ assert ix_b: attn_rs(b, Td3) == b * Td3; */
            /*@ assert ix_r: 0 <= bh && 0 <= bhT && attn_rs(bh, T) == bhT; */
            //@ ghost lemma_attn_blk(bh, T, bhT);
            /*@ assert rtt: attn_rows_before(T, T) && attn_rs(T, T) == T * T; */
            /* the head's query and key slices lie in the element's rows of qkv, which lie in qkv */
            /*@ assert q_in: 0 <= b * Td3 && b * Td3 + Td3 <= B * T * 3 * d && Td3 == T * d3 && d3 == 3 * d; */
            /*@ assert h_in: 0 <= hd && hd + dh <= d; */
            /* Only att, ctx and row were written since `scaled`: every score of the head's T query
               rows over qkv is as there (attn_score_frame: its two slices of qkv are, by the
               loops' assigns), hence their softmax rows (attn_p_frame). */
            /*@ assert rtd: attn_rows_before(T, d3) && attn_rs(T, d3) == Td3 && 0 <= Td3; */
            /*@ assert m2: \forall integer i; 0 <= i < T ==>
                  attn_mem_same{Here, scaled}(qkv + b * Td3 + (attn_rs(i, d3) + hd), dh); */
            /*@ assert mk: \forall integer j; 0 <= j < T ==>
                  attn_mem_same{Here, scaled}(qkv + b * Td3 + (attn_rs(j, d3) + (d + hd)), dh); */
            /*@ assert sd: \forall integer i, j; 0 <= i < T && 0 <= j < T ==>
                  attn_dot_same{Here, scaled}(qkv + b * Td3 + (attn_rs(i, d3) + hd), qkv + b * Td3 + (attn_rs(j, d3) + (d + hd)), dh); */
            /*@ assert sf: \forall integer i, j; 0 <= i < T && 0 <= j < T ==>
                  attn_score_same{Here, scaled}(qkv + b * Td3, attn_rs(i, d3) + hd, d + hd, d3, dh, j); */
            /*@ assert ss: \forall integer i; 0 <= i < T ==>
                  attn_scores_same{Here, scaled}(qkv + b * Td3, attn_rs(i, d3) + hd, d + hd, d3, dh, T); */
            /*@ assert pf: \forall integer i; 0 <= i < T ==>
                  attn_p_same{Here, scaled}(qkv + b * Td3, attn_rs(i, d3) + hd, d + hd, d3, dh, T); */
#endif
            /* the T query rows of head h: ctx rows bT .. bT + T - 1 (columns hd ..), att block bh */
#ifdef RESNORM_WP_ROWS
          head: /* (a label for the rows run's frames only) */
#endif
            attn_head_forward_f64(ctx + bT * d, att + bhT * T, row, qkv + b * Td3, kpm ? kpm + bT : 0,
                                  amask ? amask + bhT * T : 0, scale, hd, T, d, dh, d3, causal);
#ifdef RESNORM_WP_ROWS
            /* This head's rows: the call's head_att, over qkv as at `scaled` (pi).  The heads before
               it: the call wrote none of their blocks (bb). */
            /* (row by row: each step one ground instance of the call's head_att and of pf) */
            /*@ ghost
              int ia = 0;
              /@ loop invariant ia_range: 0 <= ia <= T;
                 loop invariant an: causal == 0 && kpm == \null ==> \forall integer i2; 0 <= i2 < ia ==>
                   attn_head_p{scaled, Here}(att + attn_blk(attn_rs(b, H) + h, T), qkv + attn_rs(b, Td3), attn_rs(i2, T),
                                             attn_rs(i2, d3), attn_rs(h, dh), d, d3, dh, T);
                 loop assigns ia;
                 loop variant T - ia; @/
              while (ia < T) {
                /@ assert an_p: attn_p_same_at{head, scaled}(qkv + b * Td3, attn_rs(ia, d3) + hd, d + hd, d3, dh, T); @/
                /@ assert an_i: causal == 0 && kpm == \null ==>
                     attn_head_p{scaled, Here}(att + bhT * T, qkv + b * Td3, attn_rs(ia, T), attn_rs(ia, d3), hd, d, d3, dh, T); @/
                /@ assert an_x: attn_blk(attn_rs(b, H) + h, T) == bhT * T && attn_rs(b, Td3) == b * Td3 && attn_rs(h, dh) == hd; @/
                /@ assert an_j: causal == 0 && kpm == \null ==>
                     attn_head_p{scaled, Here}(att + attn_blk(attn_rs(b, H) + h, T), qkv + attn_rs(b, Td3), attn_rs(ia, T),
                                               attn_rs(ia, d3), attn_rs(h, dh), d, d3, dh, T); @/
                ia++;
              }
            */
            /*@ assert att_new: causal == 0 && kpm == \null ==> attn_bh_att{scaled, Here}(att, qkv, b, h, H, T, d, d3, Td3, dh); */
            /* the blocks before this one end before it (a loop run once: its body's attn_blks_before,
               which brings AttnBlocksBefore's lemmas into a goal, does not reach the goals after it) */
            /*@ ghost
              int once = 0;
              /@ loop invariant once_range: 0 <= once <= 1;
                 loop invariant bbo: once == 1 ==> \forall integer r2; 0 <= r2 < bh ==>
                   0 <= attn_blk(r2, T) && attn_blk(r2, T) + T * T <= bhT * T;
                 loop assigns once;
                 loop variant 1 - once; @/
              while (once < 1) {
                /@ assert bb: attn_blks_before(bh, T); @/
                once = 1;
              }
            */
            /* (head by head: each step one ground instance of attn_bh_frame) */
            /*@ ghost
              int ho = 0;
              /@ loop invariant ho_range: 0 <= ho <= h;
                 loop invariant oh: causal == 0 && kpm == \null ==> \forall integer h3; 0 <= h3 < ho ==>
                   attn_bh_att{scaled, Here}(att, qkv, b, h3, H, T, d, d3, Td3, dh);
                 loop assigns ho;
                 loop variant h - ho; @/
              while (ho < h) {
                /@ assert oh_b: attn_blk_same{head, Here}(att + attn_blk(attn_rs(b, H) + ho, T), T); @/
                /@ assert oh_o: causal == 0 && kpm == \null ==> attn_bh_att{scaled, head}(att, qkv, b, ho, H, T, d, d3, Td3, dh); @/
                /@ assert oh1: causal == 0 && kpm == \null ==> attn_bh_att{scaled, Here}(att, qkv, b, ho, H, T, d, d3, Td3, dh); @/
                ho++;
              }
            */
            /*@ assert att_oh: causal == 0 && kpm == \null ==> \forall integer h2; 0 <= h2 < h ==>
                  attn_bh_att{scaled, Here}(att, qkv, b, h2, H, T, d, d3, Td3, dh); */
            /*@ ghost
              int bo = 0;
              /@ loop invariant bo_range: 0 <= bo <= b;
                 loop invariant ob: causal == 0 && kpm == \null ==> \forall integer b3, h3; 0 <= b3 < bo && 0 <= h3 < H ==>
                   attn_bh_att{scaled, Here}(att, qkv, b3, h3, H, T, d, d3, Td3, dh);
                 loop assigns bo;
                 loop variant b - bo; @/
              while (bo < b) {
                int hq = 0;
                /@ loop invariant hq_range: 0 <= hq <= H;
                   loop invariant obh: causal == 0 && kpm == \null ==> \forall integer h3; 0 <= h3 < hq ==>
                     attn_bh_att{scaled, Here}(att, qkv, bo, h3, H, T, d, d3, Td3, dh);
                   loop assigns hq;
                   loop variant H - hq; @/
                while (hq < H) {
                  /@ assert ob_b: attn_blk_same{head, Here}(att + attn_blk(attn_rs(bo, H) + hq, T), T); @/
                  /@ assert ob_o: causal == 0 && kpm == \null ==> attn_bh_att{scaled, head}(att, qkv, bo, hq, H, T, d, d3, Td3, dh); @/
                  /@ assert ob1: causal == 0 && kpm == \null ==> attn_bh_att{scaled, Here}(att, qkv, bo, hq, H, T, d, d3, Td3, dh); @/
                  hq++;
                }
                bo++;
              }
            */
            /*@ assert att_ob: causal == 0 && kpm == \null ==> \forall integer b2, h2; 0 <= b2 < b && 0 <= h2 < H ==>
                  attn_bh_att{scaled, Here}(att, qkv, b2, h2, H, T, d, d3, Td3, dh); */
#endif
        }
    }
#ifdef RESNORM_WP_ROWS
  heads: ;
#endif
    linear_forward_f64(y, ctx, out_w, out_b, rows, d, d);
#ifdef RESNORM_WP_ROWS
    /* The out-projection wrote y only (att as after the heads), and qkv is as at `scaled`: every
       head's scores, hence its softmax rows, are as there (the ghost induction above over every
       (b, h, i, j)). */
    /*@ assert fin0: 0 <= BH && 0 <= BHT; */
    /*@ assert fin1: attn_rs(B, H) == BH && attn_rows_before(B, H); */
    /*@ assert fin2: attn_rows_before(T, T) && attn_rs(T, T) == T * T; */
    //@ ghost lemma_attn_blk(BH, T, BHT);
    /*@ ghost
      int once = 0;
      /@ loop invariant once_range: 0 <= once <= 1;
         loop invariant bbo: once == 1 ==> \forall integer r2; 0 <= r2 < BH ==>
           0 <= attn_blk(r2, T) && attn_blk(r2, T) + T * T <= BHT * T;
         loop assigns once;
         loop variant 1 - once; @/
      while (once < 1) {
        /@ assert bb: attn_blks_before(BH, T); @/
        once = 1;
      }
    */
    /* The out-projection wrote y only: every head's block of att is as after the heads (fq), and
       qkv as at `scaled`: every head's scores, hence its softmax rows, are as there (the (b, h)
       body's frames, head by head), so each head's statement reads over qkv as here. */
    /*@ assert rtd: attn_rows_before(T, d3) && attn_rs(T, d3) == Td3 && 0 <= Td3; */
    /*@ assert fin3: attn_rows_before(B, Td3) && attn_rs(B, Td3) == B * Td3 && attn_rows_before(H, dh) && attn_rs(H, dh) == d; */
    /*@ assert fq: \forall integer b2, h2; 0 <= b2 < B && 0 <= h2 < H ==>
          attn_blk_same{heads, Here}(att + attn_blk(attn_rs(b2, H) + h2, T), T); */
    /*@ ghost
      int eb = 0;
      /@ loop invariant eb_range: 0 <= eb <= B;
         loop invariant pb: causal == 0 && kpm == \null ==> \forall integer b3, h3; 0 <= b3 < eb && 0 <= h3 < H ==>
           attn_bh_att{Here, Here}(att, qkv, b3, h3, H, T, d, d3, Td3, dh);
         loop assigns eb;
         loop variant B - eb; @/
      while (eb < B) {
        int eh = 0;
        /@ loop invariant eh_range: 0 <= eh <= H;
           loop invariant ph: causal == 0 && kpm == \null ==> \forall integer h3; 0 <= h3 < eh ==>
             attn_bh_att{Here, Here}(att, qkv, eb, h3, H, T, d, d3, Td3, dh);
           loop assigns eh;
           loop variant H - eh; @/
        while (eh < H) {
          /@ assert e_o: causal == 0 && kpm == \null ==> attn_bh_att{scaled, heads}(att, qkv, eb, eh, H, T, d, d3, Td3, dh); @/
          /@ assert e_b: attn_blk_same{heads, Here}(att + attn_blk(attn_rs(eb, H) + eh, T), T); @/
          /@ assert e_a: causal == 0 && kpm == \null ==> attn_bh_att{scaled, Here}(att, qkv, eb, eh, H, T, d, d3, Td3, dh); @/
          /@ assert e_m2: \forall integer i; 0 <= i < T ==>
               attn_mem_same{Here, scaled}(qkv + attn_rs(eb, Td3) + (attn_rs(i, d3) + attn_rs(eh, dh)), dh); @/
          /@ assert e_mk: \forall integer j; 0 <= j < T ==>
               attn_mem_same{Here, scaled}(qkv + attn_rs(eb, Td3) + (attn_rs(j, d3) + (d + attn_rs(eh, dh))), dh); @/
          /@ assert e_sd: \forall integer i, j; 0 <= i < T && 0 <= j < T ==>
               attn_dot_same{Here, scaled}(qkv + attn_rs(eb, Td3) + (attn_rs(i, d3) + attn_rs(eh, dh)),
                                           qkv + attn_rs(eb, Td3) + (attn_rs(j, d3) + (d + attn_rs(eh, dh))), dh); @/
          /@ assert e_sf: \forall integer i, j; 0 <= i < T && 0 <= j < T ==>
               attn_score_same{Here, scaled}(qkv + attn_rs(eb, Td3), attn_rs(i, d3) + attn_rs(eh, dh), d + attn_rs(eh, dh), d3, dh, j); @/
          /@ assert e_ss: \forall integer i; 0 <= i < T ==>
               attn_scores_same{Here, scaled}(qkv + attn_rs(eb, Td3), attn_rs(i, d3) + attn_rs(eh, dh), d + attn_rs(eh, dh), d3, dh, T); @/
          /@ assert e_pf: \forall integer i; 0 <= i < T ==>
               attn_p_same{Here, scaled}(qkv + attn_rs(eb, Td3), attn_rs(i, d3) + attn_rs(eh, dh), d + attn_rs(eh, dh), d3, dh, T); @/
          int ei = 0;
          /@ loop invariant ei_range: 0 <= ei <= T;
             loop invariant pi: causal == 0 && kpm == \null ==> \forall integer i2; 0 <= i2 < ei ==>
               attn_head_p{Here, Here}(att + attn_blk(attn_rs(eb, H) + eh, T), qkv + attn_rs(eb, Td3), attn_rs(i2, T),
                                       attn_rs(i2, d3), attn_rs(eh, dh), d, d3, dh, T);
             loop assigns ei;
             loop variant T - ei; @/
          while (ei < T) {
            /@ assert e_p: attn_p_same_at{scaled, Here}(qkv + attn_rs(eb, Td3), attn_rs(ei, d3) + attn_rs(eh, dh), d + attn_rs(eh, dh), d3, dh, T); @/
            /@ assert e_i: causal == 0 && kpm == \null ==>
                 attn_head_p{Here, Here}(att + attn_blk(attn_rs(eb, H) + eh, T), qkv + attn_rs(eb, Td3), attn_rs(ei, T),
                                         attn_rs(ei, d3), attn_rs(eh, dh), d, d3, dh, T); @/
            ei++;
          }
          eh++;
        }
        eb++;
      }
    */
    /*@ assert fin: causal == 0 && kpm == \null ==> \forall integer b2, h2; 0 <= b2 < B && 0 <= h2 < H ==>
          attn_bh_att{Here, Here}(att, qkv, b2, h2, H, T, d, d3, Td3, dh); */
#endif
}

/* One query row of the backward: dA[j] = dctx·v_j; dv_j += A[j]·dctx; dP = dropout backward of dA;
   dS = softmax backward at P (into dA); dqs = sum_j dS[j]·k_j; dk_j += dS[j]·qs.  gb, qb: the batch
   element's rows of dqkv and qkv [T, d3]; dc: dctx's head slice [dh]; row: scratch [2T]. */
/*@ requires dims: T >= 1 && dh >= 1 && d3 >= 1 && T * d3 <= INT_MAX && 2 * T <= INT_MAX;
    requires q_range: 0 <= qo && qo + dh <= T * d3;
    requires k_range: 0 <= ko && ko + dh <= d3;
    requires v_range: 0 <= vo && vo + dh <= d3;
    requires valid_qb: \valid_read(qb + (0 .. T * d3 - 1));
    requires valid_gb: \valid(gb + (0 .. T * d3 - 1));
    requires valid_dc: \valid_read(dc + (0 .. dh - 1));
    requires valid_P: \valid_read(P + (0 .. T - 1));
    requires valid_am: am == \null || \valid_read(am + (0 .. T - 1));
    requires valid_row: \valid(row + (0 .. 2 * T - 1));
    requires sep_gb_row: \separated(gb + (0 .. T * d3 - 1), row + (0 .. 2 * T - 1));
    requires sep_gb_qb: \separated(gb + (0 .. T * d3 - 1), qb + (0 .. T * d3 - 1));
    requires sep_gb_dc: \separated(gb + (0 .. T * d3 - 1), dc + (0 .. dh - 1));
    requires sep_gb_P: \separated(gb + (0 .. T * d3 - 1), P + (0 .. T - 1));
    requires sep_row_qb: \separated(row + (0 .. 2 * T - 1), qb + (0 .. T * d3 - 1));
    requires sep_row_dc: \separated(row + (0 .. 2 * T - 1), dc + (0 .. dh - 1));
    requires sep_row_P: \separated(row + (0 .. 2 * T - 1), P + (0 .. T - 1));
    requires sep_am: am == \null || \separated(am + (0 .. T - 1), row + (0 .. 2 * T - 1), gb + (0 .. T * d3 - 1));
    assigns gb[0 .. T * d3 - 1], row[0 .. 2 * T - 1]; */
static void attn_row_backward_f64(double *gb, double *row, const double *qb, const double *dc,
                                  const double *P, const double *am, double scale, int qo, int ko,
                                  int vo, int T, int dh, int d3)
{
    double *dA = row, *dP = row + T;
    /*@ loop invariant j_range: 0 <= j <= T;
        loop assigns j, dA[0 .. T - 1];
        loop variant T - j; */
    for (int j = 0; j < T; j++) {
        //@ ghost lemma_attn_row(j, T, d3);
        dA[j] = linear_dot_f64(0.0, dc, qb + j * d3 + vo, dh);
    }
    /*@ loop invariant j_range: 0 <= j <= T;
        loop assigns j, gb[0 .. T * d3 - 1];
        loop variant T - j; */
    for (int j = 0; j < T; j++) {
        //@ ghost lemma_attn_row(j, T, d3);
        double a = am ? P[j] * am[j] * scale : P[j]; /* A[j]: dropout's formula (specs/dropout.h) */
        /*@ loop invariant cc_range: 0 <= cc <= dh;
            loop assigns cc, gb[0 .. T * d3 - 1];
            loop variant dh - cc; */
        for (int cc = 0; cc < dh; cc++)
            gb[j * d3 + vo + cc] += a * dc[cc];
    }
    /*@ loop invariant j_range: 0 <= j <= T;
        loop assigns j, dP[0 .. T - 1];
        loop variant T - j; */
    for (int j = 0; j < T; j++)
        dP[j] = am ? 0.0 : dA[j];
    if (am)
        dropout_backward_f64(dP, dA, am, scale, T);
    attn_zero_f64(dA, T);
    softmax_row_backward_f64(dA, P, dP, T);
    /*@ loop invariant cc_range: 0 <= cc <= dh;
        loop assigns cc, gb[0 .. T * d3 - 1];
        loop variant dh - cc; */
    for (int cc = 0; cc < dh; cc++)
        gb[qo + cc] = linear_sdot_f64(gb[qo + cc], dA, qb, ko + cc, d3, T);
    /*@ loop invariant j_range: 0 <= j <= T;
        loop assigns j, gb[0 .. T * d3 - 1];
        loop variant T - j; */
    for (int j = 0; j < T; j++) {
        //@ ghost lemma_attn_row(j, T, d3);
        /*@ loop invariant cc_range: 0 <= cc <= dh;
            loop assigns cc, gb[0 .. T * d3 - 1];
            loop variant dh - cc; */
        for (int cc = 0; cc < dh; cc++)
            gb[j * d3 + ko + cc] += dA[j] * qb[qo + cc];
    }
}

void attention_backward_f64(double *dx, double *din_w, double *din_b, double *dout_w, double *dout_b,
                            double *dqkv, double *dctx, double *row, const double *dy, const double *x,
                            const double *in_w, const double *out_w, const double *qkv,
                            const double *att, const double *ctx, const double *amask, double p, int B,
                            int T, int d, int H)
{
    /* the products of sizes formed once, as in attention_forward_f64 */
    int rows = B * T, d3 = 3 * d, dh = d / H, Td3 = T * d3;
    //@ ghost int BH = B * H, BHT = BH * T;
    int rd = rows * d, rd3 = rows * d3;
    //@ ghost lemma_attn_heads(d, H);
    double scale = amask ? dropout_scale_f64(p) : 1.0;
    attn_zero_f64(dctx, rd);
    attn_zero_f64(dqkv, rd3);
    linear_backward_f64(dctx, dout_w, dout_b, dy, ctx, out_w, rows, d, d);
    /*@ loop invariant b_range: 0 <= b <= B;
        loop assigns b, dqkv[0 .. B * T * 3 * d - 1], row[0 .. 2 * T - 1];
        loop variant B - b; */
    for (int b = 0; b < B; b++) {
        //@ ghost lemma_attn_row(b, B, H);
        //@ ghost lemma_attn_row(b, B, T);
        //@ ghost lemma_attn_row(b, B, Td3);
        int bT = b * T; /* the batch element's first row of x, ctx, y, dy: [B, T] */
        /*@ loop invariant h_range: 0 <= h <= H;
            loop assigns h, dqkv[0 .. B * T * 3 * d - 1], row[0 .. 2 * T - 1];
            loop variant H - h; */
        for (int h = 0; h < H; h++) {
            //@ ghost lemma_attn_row(h, H, dh);
            int bh = b * H + h, hd = h * dh; /* the [B, H] index; the head's first column */
            //@ ghost lemma_attn_row(bh, BH, T);
            /*@ loop invariant i_range: 0 <= i <= T;
                loop assigns i, dqkv[0 .. B * T * 3 * d - 1], row[0 .. 2 * T - 1];
                loop variant T - i; */
            for (int i = 0; i < T; i++) {
                int r = bh * T + i, bi = bT + i;
                //@ ghost lemma_attn_row(r, BHT, T);
                //@ ghost lemma_attn_row(i, T, d3);
                //@ ghost lemma_attn_row(bi, rows, d);
                attn_row_backward_f64(dqkv + b * Td3, row, qkv + b * Td3, dctx + bi * d + hd,
                                      att + r * T, amask ? amask + r * T : 0, scale, i * d3 + hd,
                                      d + hd, 2 * d + hd, T, dh, d3);
            }
        }
    }
    attn_scale_q_f64(dqkv, sqrt((double)dh), rows, d3, d); /* dq = dqs / sqrt(dh) */
    linear_backward_f64(dx, din_w, din_b, dqkv, x, in_w, rows, d, d3);
}

