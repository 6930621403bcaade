/* Rounding vocabulary of the float-model proofs (ACSL only; nothing here is compiled).  The switch
 * between the two WP runs that read the same annotations (proofs/README.md, "Two runs"), LN_EXACT(p)
 * and LN_FLOAT(p), is specs/wp_only.h's, included here.
 *
 * The symbols are declared here without a body and defined in proofs/fperr.mlw (Why3 definitions,
 * nothing assumed), linked by proofs/fperr.driver, which only the float-model run loads:
 *   fp_err(c, e) = c - e,  u32 = 2^-24,  u64 = 2^-53  (unit roundoffs),
 *   rnd32 / rnd64 = rounding to nearest-even binary32 / binary64 (no overflow check),
 *   is_f32(x) <=> rnd32(x) == x,  no_ovf32(x) <=> rounding x to nearest does not overflow.
 * They stay named symbols in the WP goals so that WP's simplifier does not rewrite |rnd(a + b) - (a + b)|
 * out of the shape Gappa recognises as a relative error.
 */
#ifndef RESNORM_FPERR_H
#define RESNORM_FPERR_H

#include "wp_only.h" /* LN_EXACT, LN_FLOAT, WP_ONLY */

/*@ axiomatic FpErr {
      logic real fp_err(real computed, real exact);
      logic real u32;
      logic real u64;
      logic real rnd32(real x);
      logic real rnd64(real x);
      predicate is_f32(real x);
      predicate is_f64(real x);
      predicate no_ovf32(real x);
      predicate no_ovf64(real x);
    } */

/* ---- rows composed (issue 13, LayerNorm): a third WP run, on the rows x n drivers ------------------
 * -DRESNORM_WP_ROWS: the real model (-wp-model real), on the drivers only (proofs/layernorm_float.sh,
 * ln_rows_run).  The drivers' functional contracts are proved there, from the row kernels' pointwise
 * postconditions (y_stats), with the row kernels' recursive model postconditions hidden from the goals
 * (with them in the context the SMT solvers time out on index goals: proofs/README.md "Rows composed").
 *   LN_ROWS(p):     a driver's functional statement: p in the rows run, \true in the other runs
 *                   (where it still costs a goal each: LayerNorm's drivers, not yet moved to LN_ROWS_CLAUSE).
 *   LN_ROWS_CLAUSE(c): a driver's functional clause c (a whole "ensures NAME: p;" or "loop invariant
 *                   NAME: p;", semicolon included): c in the rows run, nothing in the other runs, so
 *                   that the real-model run has no goal for it (it read \true there and still cost
 *                   goals, 17 per driver).  The drivers' assertions of the rows run sit in the code
 *                   under #ifdef RESNORM_WP_ROWS (an annotation cannot be empty).
 *   LN_ROWMODEL(p): a row kernel's model postcondition the drivers' proof does not use: \true in the
 *                   rows run (it assumes fewer callee postconditions: sound), LN_EXACT(p) elsewhere,
 *                   where the real-model run proves it.
 * Each run still proves every annotation it reads.
 */
#ifdef RESNORM_WP_ROWS
#define LN_ROWS(...) (__VA_ARGS__)
#define LN_ROWS_CLAUSE(...) __VA_ARGS__
#define LN_ROWMODEL(...) \true
#else
#define LN_ROWS(...) \true
#define LN_ROWS_CLAUSE(...)
#define LN_ROWMODEL(...) LN_EXACT(__VA_ARGS__)
#endif

/* EVA (-DRESNORM_EVA, proofs/prove.sh) reads LN_EXACT and LN_FLOAT as \true (specs/wp_only.h): it
 * relies only on what it proves itself (prove.sh checks that no assertion, invariant or
 * postcondition is left "unknown").  A statement both WP runs prove and EVA does not decide (e.g.
 * a * a >= 0 of reals): WP_ONLY. */
/* ---- end of rows composed ---- */

#endif
