/* The rows runs' one index fact, shared: every row of a [rows, n] array fits in it.
 *
 * ROWS_FIT(start): for every row q < rows, start(q, n) .. start(q, n) + n - 1 lies in 0 .. rows·n - 1,
 * for a row-start logic function start(q, n) = q·n (ln_row_start, rms_row_start, lin_row_start).
 * ROWS_FIT_LEMMA(name, clauses): a ghost function `name(rows, n)` (rows >= 0, n >= 1) whose contract
 * ends with `clauses` (e.g. `ensures rows_fit: ROWS_FIT(lin_row_start);`), written inside an ACSL
 * ghost annotation; a call `//@ ghost name(rows, d);` puts the facts in the caller's
 * goals as a postcondition, with start(q, n) as the solvers' trigger: they do not instantiate the
 * product lemmas once Qed has reordered the products (proofs/README-skip.md).  Used by the skip
 * kernels (ref/skip_layernorm.c, ref/skip_rmsnorm.c), the FFN (ref/ffn.c) and the block
 * (ref/block.c); each keeps its own name, so that its proof goals stay as they were. */
#ifndef RESNORM_ROWS_FIT_H
#define RESNORM_ROWS_FIT_H

#define ROWS_FIT(start)                                                                            \
    \forall integer q; 0 <= q < rows ==> 0 <= start(q, n) && start(q, n) + n <= rows * n

#define ROWS_FIT_LEMMA(name, ...)                                                                  \
    /@ requires rows_nonneg: rows >= 0;                                                            \
       requires n_pos: n >= 1;                                                                     \
       assigns \nothing;                                                                           \
       __VA_ARGS__ @/                                                                              \
    static void name(int rows, int n) {}

#endif
