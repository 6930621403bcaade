#!/usr/bin/env bash
# `make prove-skip`: WP (real model) on the fused residual + norm kernels of ref/skip_layernorm.c and
# ref/skip_rmsnorm.c, from the contracts of their callees (specs/residual.h, specs/layernorm.h,
# specs/rmsnorm.h; those are proved by `make prove`, `make prove-residual`, `make prove-rmsnorm`).
# Exits non-zero on any unproved goal, failed smoke test, or unsound ACSL literal / admit / axiom;
# writes proofs/results/skip.json and prints a per-kernel table.  EVA (proofs/eva_skip.c): no
# NaN/Inf/overflow through the skip kernels and every callee they run (residual add, bias add, the
# LayerNorm / RMSNorm rows x n drivers, the dbias column sums), f32 and f64, n <= 64 (see
# proofs/README-skip.md).  Steps and environment: proofs/lib.sh.
source "$(dirname "$0")/lib.sh"
proof_init prove-skip build/proofs/skip

proof_soundness_greps specs/skip_layernorm.h specs/skip_rmsnorm.h specs/skip_rows.h specs/skip_layernorm_rows.h specs/skip_rmsnorm_rows.h ref/skip_layernorm.c ref/skip_rmsnorm.c proofs/eva_skip.c
# EVA on the skip kernels with the bodies of their callees, reading the annotations with -DRESNORM_EVA
# (real- and float-model statements are \true for it: specs/fperr.h), at -eva-precision 3 (at the
# default precision EVA loses sum's range inside the first residual add), n <= 64 (EVA unrolls every
# loop; the row kernels alone are checked to n = 4096 by prove-layernorm and prove-rmsnorm).
EVA_NMAX=64
EVA_EXTRA_OPTS="-eva-precision 3" EVA_CPP_EXTRA=-DRESNORM_EVA proof_eva_start \
  ref/skip_layernorm.c ref/skip_rmsnorm.c ref/layernorm.c ref/rmsnorm.c ref/residual.c proofs/eva_skip.c
# Only ref/skip_*.c are parsed: the callees (residual_forward_*, layernorm_*, rmsnorm_*) have no body
# here, so WP uses their contracts (from specs/*.h) and proves nothing about them; the skip kernels
# are the only functions with a body.  No -wp-fct: with it WP would skip the ACSL lemmas of the two
# files (index facts of the rows x n layout), which must be proved too.  The smoke tests
# `<callee>_wp_smoke_dead_call_sN` check that each call of a skip kernel is reachable.
SKIP_ROWS_FCT=skip_layernorm_forward_f32,skip_layernorm_forward_f64,skip_layernorm_backward_f32,skip_layernorm_backward_f64,skip_ln_lemma_row,skip_ln_lemma_rows_fit,skip_ln_lemma_cols_at,skip_rmsnorm_forward_f32,skip_rmsnorm_forward_f64,skip_rmsnorm_backward_f32,skip_rmsnorm_backward_f64,skip_rms_lemma_row,skip_rms_lemma_rows_fit,skip_rms_lemma_cols_at
SKIP_ROWS_LEMMAS=skip_col_sum_step_f32,skip_col_sum_step_f64,skip_col_sum_frame_f32,skip_col_sum_frame_f64,skip_rms_rstd_frame_f32,skip_rms_rstd_frame_f64,skip_ln_mean_frame_f32,skip_ln_mean_frame_f64,skip_ln_var_frame_f32,skip_ln_var_frame_f64,skip_ln_sqrt_frame_f32,skip_ln_sqrt_frame_f64,skip_ln_rstd_frame_f32,skip_ln_rstd_frame_f64
# the rows run beside the other runs (proof_wp_rows_begin in proofs/lib.sh: WP idles between polls)
proof_wp_rows_begin "ref/skip_layernorm.c ref/skip_rmsnorm.c" "$SKIP_ROWS_FCT" proofs/session_skip_rows "$SKIP_ROWS_LEMMAS"
proof_wp_real proofs/session_skip ref/skip_layernorm.c ref/skip_rmsnorm.c
# The rows run (-DRESNORM_WP_ROWS; specs/skip_layernorm_rows.h, specs/skip_rmsnorm_rows.h), from the
# norm drivers' rows contracts (proved by prove-layernorm's and prove-rmsnorm's rows runs): the
# forward kernels' y_rows and stats_rows / rstd_rows (every row of y is the norm of its row of the
# sum output, with that row's own statistics), the backward kernels' dx_rows (every row of dx is the
# norm's backward of its rows of dy and sum), the drivers' dgamma/dbeta sums, and dbias_sum (dbias is
# dx's column sum in row order).  The lemmas (specs/skip_rows.h: the column sums' frame, by its
# committed induction script; specs/skip_layernorm_rows.h, specs/skip_rmsnorm_rows.h: a row's
# statistics over two memory states) are proved in a pass of their own.
proof_wp_rows_end
PROOF_EXTRA_LOGS="$OUT/rows.log $OUT/rows_lemmas.log"
[ "$rows_rc" -eq 0 ] || { echo "$PROOF_NAME: rows run failed (see $OUT/rows.log, $OUT/rows_lemmas.log)"; status=1; }
proof_eva_wait
# EVA may leave unknown only these properties of the callees, each proved by WP (prove-layernorm,
# prove-rmsnorm, prove-residual, and this target for the skip kernels' own calls and loops), and none
# of them a statement about float operations: integer facts (row offsets, loop ranges; row_end is the
# ghost lemmas lemma_row_offset's and rms_lemma_row_offset's), a pointer fact
# (the residual add's in-place rule alias_x: y == x or separated, with r*n an interval for EVA), and
# RMSNorm's backward frame facts (dgamma[k] still its value at entry).  Narrowing by them cannot
# hide a NaN.  Anything else unknown fails the target (proofs/README-skip.md, "EVA").
proof_eva_no_unknown "assertion 'row_mono'" "lemma_row_offset: postcondition 'row_end'" \
  "function lemma_rows_before: postcondition 'rows_before'" "loop invariant 'i_range'" \
  "loop invariant 'row_in'" "precondition 'alias_x'" "loop invariant 'dgamma_todo'" \
  "assertion 'frame_acc'"
proof_summary proofs/results/skip.json proofs/summary_skip.awk
proof_finish "all goals proved, 0 EVA alarms"
