#!/usr/bin/env bash
# `make prove-ffn`: WP (real model) on the feed-forward kernels (ref/ffn.c): the activation helpers
# and their loops functionally (relu exactly; gelu, gelu_tanh and their derivatives as their real
# formulas under the libm assumptions of specs/libm.h: ref/libm.c is not given to WP), the drivers
# for RTE, assigns and termination (the linear and dropout kernels they call are used through their
# contracts, specs/linear.h and specs/dropout.h, proved by prove-linear and prove-dropout) and, in a
# rows run, the forward and the backward composed (z_rows, h_def, y_rows; dw2_sum, db2_sum, dz_rows,
# dx_rows, dw1_sum, db1_sum: specs/ffn_rows.h, specs/ffn_bwd_rows.h).  Exits
# non-zero on any unproved goal, failed smoke test or unsound ACSL literal; writes
# proofs/results/ffn.json and prints a per-kernel table.  EVA (proofs/eva_ffn.c) on the activation
# kernels: no NaN/Inf/overflow for |z|, |g| <= 1.0e4.  Steps: proofs/lib.sh.
source "$(dirname "$0")/lib.sh"
proof_init prove-ffn build/proofs/ffn

proof_soundness_greps specs/ffn.h specs/ffn_rows.h specs/ffn_bwd_rows.h ref/ffn.c specs/libm.h proofs/eva_ffn.c
# EVA reads the annotations with -DRESNORM_EVA: the real-model statements and libm's
# erf, tanh (WP_ONLY, specs/wp_only.h) are \true for it, so it narrows its states by nothing it did not prove
# itself (but the erf/tanh range stubs of proofs/eva_ffn.c, a stated assumption); any property it
# leaves unknown fails the target (issue 13).
EVA_CPP_EXTRA=-DRESNORM_EVA proof_eva_start ref/ffn.c ref/libm.c proofs/eva_ffn.c
# the rows run beside the other runs (proof_wp_rows_begin in proofs/lib.sh: WP idles between polls)
FFN_ROWS_LEMMAS=ffn_dw_sum_step_f32,ffn_dw_sum_step_f64,ffn_dw_sum_frame_f32,ffn_dw_sum_frame_f64,ffn_csum_step_f32,ffn_csum_step_f64,ffn_csum_frame_f32,ffn_csum_frame_f64
proof_wp_rows_begin ref/ffn.c ffn_forward_f32,ffn_forward_f64,ffn_backward_f32,ffn_backward_f64,ffn_fill_f32,ffn_fill_f64,ffn_lemma_rows_fit proofs/session_ffn_rows "$FFN_ROWS_LEMMAS"
proof_wp_real proofs/session_ffn ref/ffn.c
# The forward and the backward composed (specs/ffn_rows.h, specs/ffn_bwd_rows.h): real model, -DRESNORM_WP_ROWS, on the
# drivers, from linear_forward's / linear_backward's rows contracts (specs/linear_rows.h, proved by
# prove-linear's rows run, whose lemmas lin_dot_shift, lin_dot_at_frame, lin_sdot_off_eq and
# lin_sdot_off_frame carry the dots from a call's state to another) and the activation, dropout and
# fill contracts: z_rows, h_def, y_rows; dw2_sum, db2_sum, dz_rows, dx_rows, dw1_sum, db1_sum
# (proofs/README-sublayers.md "FFN: the forward composed", "FFN: the backward composed").  Its own
# lemmas FFN_ROWS_LEMMAS (frames of lin_dw_sum and lin_csum over two memory states; the *_frame ones
# by the induction scripts of proofs/session_ffn_rows/script/) are proved after it, in its session.
proof_wp_rows_end
PROOF_EXTRA_LOGS="$OUT/rows.log $OUT/rows_lemmas.log"
[ "$rows_rc" -eq 0 ] || { echo "$PROOF_NAME: rows run failed (see $OUT/rows.log, $OUT/rows_lemmas.log)"; status=1; }
proof_eva_wait
proof_eva_no_unknown
proof_summary proofs/results/ffn.json proofs/summary_ffn.awk
proof_finish "all goals proved, 0 EVA alarms"
