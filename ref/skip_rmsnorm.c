/* Skip + RMSNorm kernels, float and double (contracts: specs/skip_rmsnorm.h): the residual add
 * (ref/residual.c), then the bias per column, then RMSNorm (ref/rmsnorm.c) of the rounded sum.
 * Every operation rounds once, in the order written (-ffp-contract=off); the MPFR twin,
 * ref/skip_rmsnorm_mpfr.c, normalizes the exact sum instead. */
#include "skip_rmsnorm.h"

#include "residual.h"
#include "rmsnorm.h"
#include "rows_fit.h"
#ifdef RESNORM_WP_ROWS
#include "skip_rmsnorm_rows.h" /* the rows run: y_rows, rstd_rows; dx_rows, dgamma_sum, dbias_sum */
#endif

/* Index facts of the rows x n layout (proof only: ACSL lemmas, each proved as a WP goal). */
/*@ lemma skip_rms_row_offset: \forall integer r, rows, n; 0 <= r < rows && n >= 1 ==>
      0 <= r * n && r * n + n <= rows * n;
    lemma skip_rms_index: \forall integer q, j, rows, n; 0 <= q < rows && 0 <= j < n ==>
      0 <= q * n + j < rows * n;
*/

/* The rows' index facts as ghost functions whose postconditions the callers' goals read as they are,
   with rms_row_start as the trigger (the SMT solvers do not match the lemmas' products above once Qed has
   reordered them: proofs/README-skip.md).  WP_ONLY: integer facts that WP proves and EVA need
   not read. */
/*@ ghost
  // Row r of the bias loop: where it starts, that it fits, and that every row before it ends first.
  /@ requires r_range: 0 <= r < rows;
     requires n_pos: n >= 1;
     assigns \nothing;
     ensures start: WP_ONLY(rms_row_start(r, n) == r * n);
     ensures row_fits: WP_ONLY(0 <= r * n && r * n + n <= rows * n);
     ensures next: WP_ONLY(rms_row_start(r + 1, n) == rms_row_start(r, n) + n);
     ensures before: WP_ONLY(\forall integer q; 0 <= q < r ==>
       0 <= rms_row_start(q, n) && rms_row_start(q, n) + n <= rms_row_start(r, n)); @/
  static void skip_rms_lemma_row(int r, int rows, int n) {
    /@ assert row_mono: WP_ONLY((r + 1) * n <= rows * n); @/
  }

  // Every row fits in the rows x n array (specs/rows_fit.h).
  ROWS_FIT_LEMMA(skip_rms_lemma_rows_fit, ensures rows_fit: WP_ONLY(ROWS_FIT(rms_row_start));)
*/

#ifdef RESNORM_WP_ROWS
/* The rows run: where dx's columns sit, for every row at once (as skip_rms_lemma_rows_fit above:
   a postcondition the goals read with skip_col_idx as the trigger). */
/*@ ghost
  /@ requires rows_nonneg: rows >= 0;
     requires n_pos: n >= 1;
     assigns \nothing;
     ensures col_at: \forall integer q, k; 0 <= q < rows && 0 <= k < n ==>
       skip_col_idx(q, n, k) == rms_row_start(q, n) + k; @/
  static void skip_rms_lemma_cols_at(int rows, int n) {}
*/
#endif

void skip_rmsnorm_forward_f32(float *y, float *rstd, float *sum, const float *x, const float *skip,
                              const float *gamma, const float *bias, int rows, int n, float eps,
                              int offset)
{
    residual_forward_f32(sum, x, skip, rows * n); /* s = x + skip */
    if (bias)
        /* Rows 0 .. r-1 hold (x + skip) + bias, rows r .. rows-1 still x + skip (real model). */
        /*@ loop invariant r_range: 0 <= r <= rows;
            loop invariant todo: LN_EXACT(\forall integer k; rms_row_start(r, n) <= k < rows * n ==>
              sum[k] == \at(x[k], Pre) + \at(skip[k], Pre));
            loop invariant done: LN_EXACT(\forall integer q, j; 0 <= q < r && 0 <= j < n ==>
              sum[rms_row_start(q, n) + j] ==
                (\at(x[rms_row_start(q, n) + j], Pre) + \at(skip[rms_row_start(q, n) + j], Pre)) + \at(bias[j], Pre));
            loop assigns r, sum[0 .. rows * n - 1];
            loop variant rows - r; */
        for (int r = 0; r < rows; r++) {
            //@ ghost skip_rms_lemma_row(r, rows, n);
            residual_forward_f32(sum + r * n, sum + r * n, bias, n); /* s += bias, in place */
            /* The call wrote row r only: the rows before it and after it are as they were. */
            /*@ assert frame_before: LN_EXACT(\forall integer q, j; 0 <= q < r && 0 <= j < n ==>
                  sum[rms_row_start(q, n) + j] == \at(sum[rms_row_start(q, n) + j], LoopCurrent)); */
            /*@ assert frame_after: LN_EXACT(\forall integer k; rms_row_start(r, n) + n <= k < rows * n ==>
                  sum[k] == \at(sum[k], LoopCurrent)); */
        }
    //@ ghost skip_rms_lemma_rows_fit(rows, n);
#ifdef RESNORM_WP_ROWS
sum_ready:;
#endif
    rmsnorm_forward_f32(y, rstd, sum, gamma, rows, n, eps, offset);
#ifdef RESNORM_WP_ROWS
    /* The rows run: the driver's y_rows and rstd_rows are over the sum as the call read it
       (sum_ready).  The call wrote y and rstd only: sum and gamma are as they were (frame facts
       first), so each row's sum of squares is the same over the sum here (rms_sumsq_shift,
       rms_sumsq_at_frame: specs/rmsnorm_model.h), then its rstd (skip_rms_rstd_frame:
       specs/skip_rmsnorm_rows.h), and y's rows are over the sum here. */
    /*@ assert sum_same: \forall integer k; 0 <= k < rows * n ==> sum[k] == \at(sum[k], sum_ready); */
    /*@ assert rows_same: \forall integer q, i; 0 <= q < rows && 0 <= i < n ==>
          sum[rms_row_start(q, n) + i] == \at(sum[rms_row_start(q, n) + i], sum_ready); */
    /*@ assert g_same: \forall integer k; 0 <= k < n ==> gamma[k] == \at(gamma[k], sum_ready); */
    /*@ assert sq_call: \forall integer q; 0 <= q < rows ==>
          \at(rms_sumsq(sum + rms_row_start(q, n), n), sum_ready) == \at(rms_sumsq_at(sum, rms_row_start(q, n), n), sum_ready); */
    /*@ assert sq_frame: \forall integer q; 0 <= q < rows ==>
          \at(rms_sumsq_at(sum, rms_row_start(q, n), n), sum_ready) == rms_sumsq_at(sum, rms_row_start(q, n), n); */
    /*@ assert rstd_same: \forall integer q; 0 <= q < rows ==>
          \at(rms_rstd(sum + rms_row_start(q, n), n, eps), sum_ready) == rms_rstd(sum + rms_row_start(q, n), n, eps); */
    /*@ assert rstd_here: \forall integer q; 0 <= q < rows ==> rstd[q] == rms_rstd(sum + rms_row_start(q, n), n, eps); */
    /*@ assert y_call: \forall integer q; 0 <= q < rows ==>
          rms_row_y{sum_ready, Here}(y, rstd, sum, gamma, q, rms_row_start(q, n), n, offset); */
    /*@ assert y_here: \forall integer q; 0 <= q < rows ==>
          rms_row_y{Here, Here}(y, rstd, sum, gamma, q, rms_row_start(q, n), n, offset); */
#endif
}

void skip_rmsnorm_forward_f64(double *y, double *rstd, double *sum, const double *x,
                              const double *skip, const double *gamma, const double *bias,
                              int rows, int n, double eps, int offset)
{
    residual_forward_f64(sum, x, skip, rows * n);
    if (bias)
        /* Rows 0 .. r-1 hold (x + skip) + bias, rows r .. rows-1 still x + skip (real model). */
        /*@ loop invariant r_range: 0 <= r <= rows;
            loop invariant todo: LN_EXACT(\forall integer k; rms_row_start(r, n) <= k < rows * n ==>
              sum[k] == \at(x[k], Pre) + \at(skip[k], Pre));
            loop invariant done: LN_EXACT(\forall integer q, j; 0 <= q < r && 0 <= j < n ==>
              sum[rms_row_start(q, n) + j] ==
                (\at(x[rms_row_start(q, n) + j], Pre) + \at(skip[rms_row_start(q, n) + j], Pre)) + \at(bias[j], Pre));
            loop assigns r, sum[0 .. rows * n - 1];
            loop variant rows - r; */
        for (int r = 0; r < rows; r++) {
            //@ ghost skip_rms_lemma_row(r, rows, n);
            residual_forward_f64(sum + r * n, sum + r * n, bias, n);
            /* The call wrote row r only: the rows before it and after it are as they were. */
            /*@ assert frame_before: LN_EXACT(\forall integer q, j; 0 <= q < r && 0 <= j < n ==>
                  sum[rms_row_start(q, n) + j] == \at(sum[rms_row_start(q, n) + j], LoopCurrent)); */
            /*@ assert frame_after: LN_EXACT(\forall integer k; rms_row_start(r, n) + n <= k < rows * n ==>
                  sum[k] == \at(sum[k], LoopCurrent)); */
        }
    //@ ghost skip_rms_lemma_rows_fit(rows, n);
#ifdef RESNORM_WP_ROWS
sum_ready:;
#endif
    rmsnorm_forward_f64(y, rstd, sum, gamma, rows, n, eps, offset);
#ifdef RESNORM_WP_ROWS
    /* The rows run: the driver's y_rows and rstd_rows are over the sum as the call read it
       (sum_ready).  The call wrote y and rstd only: sum and gamma are as they were (frame facts
       first), so each row's sum of squares is the same over the sum here (rms_sumsq_shift,
       rms_sumsq_at_frame: specs/rmsnorm_model.h), then its rstd (skip_rms_rstd_frame:
       specs/skip_rmsnorm_rows.h), and y's rows are over the sum here. */
    /*@ assert sum_same: \forall integer k; 0 <= k < rows * n ==> sum[k] == \at(sum[k], sum_ready); */
    /*@ assert rows_same: \forall integer q, i; 0 <= q < rows && 0 <= i < n ==>
          sum[rms_row_start(q, n) + i] == \at(sum[rms_row_start(q, n) + i], sum_ready); */
    /*@ assert g_same: \forall integer k; 0 <= k < n ==> gamma[k] == \at(gamma[k], sum_ready); */
    /*@ assert sq_call: \forall integer q; 0 <= q < rows ==>
          \at(rms_sumsq(sum + rms_row_start(q, n), n), sum_ready) == \at(rms_sumsq_at(sum, rms_row_start(q, n), n), sum_ready); */
    /*@ assert sq_frame: \forall integer q; 0 <= q < rows ==>
          \at(rms_sumsq_at(sum, rms_row_start(q, n), n), sum_ready) == rms_sumsq_at(sum, rms_row_start(q, n), n); */
    /*@ assert rstd_same: \forall integer q; 0 <= q < rows ==>
          \at(rms_rstd(sum + rms_row_start(q, n), n, eps), sum_ready) == rms_rstd(sum + rms_row_start(q, n), n, eps); */
    /*@ assert rstd_here: \forall integer q; 0 <= q < rows ==> rstd[q] == rms_rstd(sum + rms_row_start(q, n), n, eps); */
    /*@ assert y_call: \forall integer q; 0 <= q < rows ==>
          rms_row_y{sum_ready, Here}(y, rstd, sum, gamma, q, rms_row_start(q, n), n, offset); */
    /*@ assert y_here: \forall integer q; 0 <= q < rows ==>
          rms_row_y{Here, Here}(y, rstd, sum, gamma, q, rms_row_start(q, n), n, offset); */
#endif
}

/* Backward from the forward's saved sum and rstd: dx (= dskip) = RMSNorm's input gradient at the
   rounded sum, dgamma accumulated (ref/rmsnorm.c), dbias_j = sum over rows of dx_rj, from zero, in
   row order. */
void skip_rmsnorm_backward_f32(float *dx, float *dbias, float *dgamma, const float *dy,
                               const float *sum, const float *gamma, const float *rstd, int rows,
                               int n, int offset)
{
    rmsnorm_backward_f32(dx, dgamma, dy, sum, gamma, rstd, rows, n, offset);
#ifdef RESNORM_WP_ROWS
    /* (rows run: dbias's loops are stated over dx as the call left it, at dx_ready, so that no
       step needs a frame of the recursive column sums; one frame at the end carries them to Post) */
dx_ready:;
#endif
    /*@ loop invariant j_range: 0 <= j <= n;
        LN_ROWS_CLAUSE(loop invariant zero: \forall integer k; 0 <= k < j ==>
          dbias[k] == \at(skip_col_sum(dx, k, n, 0), dx_ready);)
        loop assigns j, dbias[0 .. n - 1];
        loop variant n - j; */
    for (int j = 0; j < n; j++)
        dbias[j] = 0.0f;
    /* Rows 0 .. r-1 are summed (rows run only): dbias_k = sum_{q < r} dx[q·n + k]. */
    /*@ loop invariant r_range: 0 <= r <= rows;
        LN_ROWS_CLAUSE(loop invariant cols_done: \forall integer k; 0 <= k < n ==>
          \let q = r; dbias[k] == \at(skip_col_sum(dx, k, n, q), dx_ready);)
        loop assigns r, dbias[0 .. n - 1];
        loop variant rows - r; */
    for (int r = 0; r < rows; r++) {
        //@ ghost skip_rms_lemma_row(r, rows, n);
        /*@ loop invariant j_range: 0 <= j <= n;
            loop invariant row_in: 0 <= r * n && r * n + n <= rows * n;
            LN_ROWS_CLAUSE(loop invariant row_added: \forall integer k; 0 <= k < j ==>
              \let q = r; dbias[k] == \at(skip_col_sum(dx, k, n, q + 1), dx_ready);)
            LN_ROWS_CLAUSE(loop invariant row_todo: \forall integer k; j <= k < n ==>
              \let q = r; dbias[k] == \at(skip_col_sum(dx, k, n, q), dx_ready);)
            loop assigns j, dbias[0 .. n - 1];
            loop variant n - j; */
        for (int j = 0; j < n; j++) {
#ifdef RESNORM_WP_ROWS
            /* dx as the call left it (the loops write dbias only); the column's next term */
            /*@ assert dx_here: \let e = r * n + j; dx[e] == \at(dx[e], dx_ready); */
            /*@ assert col_next: \let q = r; \let c = j; \at(skip_col_sum(dx, c, n, q + 1), dx_ready) ==
                  \at(skip_col_sum(dx, c, n, q), dx_ready) + \at(dx[q * n + c], dx_ready); */
#endif
            dbias[j] = dbias[j] + dx[r * n + j];
        }
    }
#ifdef RESNORM_WP_ROWS
    /* The loops wrote dbias only: dx and dgamma are as the call left them (frame facts first,
       before the recursive sums enter the context).  dx's rows: the call's dx_rows, over dx as it
       left it, then over dx here (the same elements); dx's column sums: skip_col_sum_frame. */
    //@ ghost skip_rms_lemma_rows_fit(rows, n);
    //@ ghost skip_rms_lemma_cols_at(rows, n);
    /*@ assert dx_same: \forall integer k; 0 <= k < rows * n ==> dx[k] == \at(dx[k], dx_ready); */
    /*@ assert dx_rows_same: \forall integer q, i; 0 <= q < rows && 0 <= i < n ==>
          dx[rms_row_start(q, n) + i] == \at(dx[rms_row_start(q, n) + i], dx_ready); */
    /*@ assert dg_same: \forall integer k; 0 <= k < n ==> dgamma[k] == \at(dgamma[k], dx_ready); */
    /*@ assert rows_call: \forall integer q; 0 <= q < rows ==>
          rms_row_dx{Pre, dx_ready}(dx, dy, sum, gamma, rstd, offset, q, rms_row_start(q, n), n); */
    /*@ assert col_same: \forall integer k, q; 0 <= k < n && 0 <= q < rows ==>
          dx[skip_col_idx(q, n, k)] == \at(dx[skip_col_idx(q, n, k)], dx_ready); */
    /*@ assert sums_same: \forall integer k; 0 <= k < n ==>
          skip_col_sum(dx, k, n, rows) == \at(skip_col_sum(dx, k, n, rows), dx_ready); */
#endif
}

void skip_rmsnorm_backward_f64(double *dx, double *dbias, double *dgamma, const double *dy,
                               const double *sum, const double *gamma, const double *rstd,
                               int rows, int n, int offset)
{
    rmsnorm_backward_f64(dx, dgamma, dy, sum, gamma, rstd, rows, n, offset);
#ifdef RESNORM_WP_ROWS
    /* (rows run: dbias's loops are stated over dx as the call left it, at dx_ready, so that no
       step needs a frame of the recursive column sums; one frame at the end carries them to Post) */
dx_ready:;
#endif
    /*@ loop invariant j_range: 0 <= j <= n;
        LN_ROWS_CLAUSE(loop invariant zero: \forall integer k; 0 <= k < j ==>
          dbias[k] == \at(skip_col_sum(dx, k, n, 0), dx_ready);)
        loop assigns j, dbias[0 .. n - 1];
        loop variant n - j; */
    for (int j = 0; j < n; j++)
        dbias[j] = 0.0;
    /* Rows 0 .. r-1 are summed (rows run only): dbias_k = sum_{q < r} dx[q·n + k]. */
    /*@ loop invariant r_range: 0 <= r <= rows;
        LN_ROWS_CLAUSE(loop invariant cols_done: \forall integer k; 0 <= k < n ==>
          \let q = r; dbias[k] == \at(skip_col_sum(dx, k, n, q), dx_ready);)
        loop assigns r, dbias[0 .. n - 1];
        loop variant rows - r; */
    for (int r = 0; r < rows; r++) {
        //@ ghost skip_rms_lemma_row(r, rows, n);
        /*@ loop invariant j_range: 0 <= j <= n;
            loop invariant row_in: 0 <= r * n && r * n + n <= rows * n;
            LN_ROWS_CLAUSE(loop invariant row_added: \forall integer k; 0 <= k < j ==>
              \let q = r; dbias[k] == \at(skip_col_sum(dx, k, n, q + 1), dx_ready);)
            LN_ROWS_CLAUSE(loop invariant row_todo: \forall integer k; j <= k < n ==>
              \let q = r; dbias[k] == \at(skip_col_sum(dx, k, n, q), dx_ready);)
            loop assigns j, dbias[0 .. n - 1];
            loop variant n - j; */
        for (int j = 0; j < n; j++) {
#ifdef RESNORM_WP_ROWS
            /* dx as the call left it (the loops write dbias only); the column's next term */
            /*@ assert dx_here: \let e = r * n + j; dx[e] == \at(dx[e], dx_ready); */
            /*@ assert col_next: \let q = r; \let c = j; \at(skip_col_sum(dx, c, n, q + 1), dx_ready) ==
                  \at(skip_col_sum(dx, c, n, q), dx_ready) + \at(dx[q * n + c], dx_ready); */
#endif
            dbias[j] = dbias[j] + dx[r * n + j];
        }
    }
#ifdef RESNORM_WP_ROWS
    /* The loops wrote dbias only: dx and dgamma are as the call left them (frame facts first,
       before the recursive sums enter the context).  dx's rows: the call's dx_rows, over dx as it
       left it, then over dx here (the same elements); dx's column sums: skip_col_sum_frame. */
    //@ ghost skip_rms_lemma_rows_fit(rows, n);
    //@ ghost skip_rms_lemma_cols_at(rows, n);
    /*@ assert dx_same: \forall integer k; 0 <= k < rows * n ==> dx[k] == \at(dx[k], dx_ready); */
    /*@ assert dx_rows_same: \forall integer q, i; 0 <= q < rows && 0 <= i < n ==>
          dx[rms_row_start(q, n) + i] == \at(dx[rms_row_start(q, n) + i], dx_ready); */
    /*@ assert dg_same: \forall integer k; 0 <= k < n ==> dgamma[k] == \at(dgamma[k], dx_ready); */
    /*@ assert rows_call: \forall integer q; 0 <= q < rows ==>
          rms_row_dx{Pre, dx_ready}(dx, dy, sum, gamma, rstd, offset, q, rms_row_start(q, n), n); */
    /*@ assert col_same: \forall integer k, q; 0 <= k < n && 0 <= q < rows ==>
          dx[skip_col_idx(q, n, k)] == \at(dx[skip_col_idx(q, n, k)], dx_ready); */
    /*@ assert sums_same: \forall integer k; 0 <= k < n ==>
          skip_col_sum(dx, k, n, rows) == \at(skip_col_sum(dx, k, n, rows), dx_ready); */
#endif
}
