#!/usr/bin/env bash
# `make prove-linear`: WP (real model) on the linear kernels (ref/linear.c: the dot helpers, the row
# kernels' y, dx, dW and db, the backward driver's db over the rows and (rows run) the forward drivers'
# rows of y, the row backward's dx and the backward driver's rows of dx and dW over the rows
# functionally, everything for
# RTE, assigns and termination), EVA on the float kernels over the ranges of specs/linear.h, and WP in the IEEE float
# model on ref/linear.c itself (Gappa + SMT: the dot products' error bound, proofs/linear_float.sh).
# Exits non-zero on any unproved goal, failed smoke test, EVA alarm, or unsound ACSL literal; writes
# proofs/results/linear.json and prints a per-kernel table.  Steps and environment: proofs/lib.sh.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/linear_float.sh"
proof_init prove-linear build/proofs/linear

proof_soundness_greps specs/linear.h specs/linear_rows.h specs/fperr_linear.h ref/linear.c proofs/eva_linear.c
# EVA reads the annotations with -DRESNORM_EVA (specs/fperr.h): the real-model and the float-model
# statements are \true for it, so it relies on nothing it did not prove itself.
EVA_CPP_EXTRA=-DRESNORM_EVA EVA_UNROLL=4100 proof_eva_start ref/linear.c proofs/eva_linear.c   # the dot helpers run to n = 4096
LIN_ROWS_FCT=linear_forward_f32,linear_forward_f64,linear_row_backward_f32,linear_row_backward_f64,linear_backward_f32,linear_backward_f64,lemma_lin_rows_before,lemma_lin_col
LIN_ROWS_LEMMAS=lin_dot_unfold_f32,lin_dot_unfold_f64,lin_dot_shift_step_f32,lin_dot_shift_step_f64,lin_dot_shift_f32,lin_dot_shift_f64,lin_dot_at_step_f32,lin_dot_at_step_f64,lin_dot_at_frame_f32,lin_dot_at_frame_f64,lin_col_idx_def,lin_sdot_unfold_f32,lin_sdot_unfold_f64,lin_sdot_at_eq_step_f32,lin_sdot_at_eq_step_f64,lin_sdot_at_eq_f32,lin_sdot_at_eq_f64,lin_sdot_at_step_f32,lin_sdot_at_step_f64,lin_sdot_at_frame_f32,lin_sdot_at_frame_f64,lin_sdot_off_eq_step_f32,lin_sdot_off_eq_step_f64,lin_sdot_off_eq_f32,lin_sdot_off_eq_f64,lin_sdot_off_step_f32,lin_sdot_off_step_f64,lin_sdot_off_frame_f32,lin_sdot_off_frame_f64
# the rows run beside the real-model and float runs (proof_wp_rows_begin: WP idles between polls)
proof_wp_rows_begin ref/linear.c "$LIN_ROWS_FCT" proofs/session_linear_rows "$LIN_ROWS_LEMMAS"
proof_wp_real proofs/session_linear ref/linear.c
# The float model on ref/linear.c itself (linear_dot_f32/f64, linear_sdot_f32/f64): the helpers'
# rounding facts by Gappa, the loops by SMT (proofs/README-sublayers.md, "Float model").
lin_float_run proofs/session_linear_float
# The drivers' rows (y_rows, dx_rows, dw_sum) and the row backward's dx (dx_acc, dw_mul), specs/linear_rows.h: real
# model, -DRESNORM_WP_ROWS, from the row kernels' y_def and the dot helpers' sdot_def and the lemmas
# LIN_ROWS_LEMMAS (the *_shift, *_eq and *_frame ones by induction
# scripts, proofs/session_linear_rows/script/; proofs/README-sublayers.md "Rows composed").
proof_wp_rows_end
PROOF_EXTRA_LOGS="$OUT/rows.log $OUT/rows_lemmas.log"
[ "$rows_rc" -eq 0 ] || { echo "$PROOF_NAME: rows run failed (see $OUT/rows.log, $OUT/rows_lemmas.log)"; status=1; }
proof_eva_wait
# EVA may leave unknown only the integer facts of the ghost lemma functions (row offsets and index
# bounds, WP-proved, no float operation); every real-model statement and frame fact is \true for it
# (LN_EXACT, WP_ONLY under -DRESNORM_EVA), so it narrows its states by nothing
# else it did not prove (issue 13).
proof_eva_no_unknown "lemma_lin_row: postcondition 'row_end'" "lemma_lin_index: postcondition 'idx_hi'" \
  "function lemma_lin_rows_before: postcondition 'rows_before'" "assertion 'row_at'" "assertion 'dw_end'"
proof_summary proofs/results/linear.json proofs/summary_linear.awk
proof_finish "all goals proved, 0 EVA alarms"
