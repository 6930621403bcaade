#!/usr/bin/env bash
# `make prove-rmsnorm`: WP (real model) on the RMSNorm kernels, EVA on the float kernels, WP in the
# IEEE float model on ref/rmsnorm.c itself (Gappa + SMT: the float error bound of the sum of squares,
# rstd never NaN; proofs/rmsnorm_float.sh), and the rows run (-DRESNORM_WP_ROWS: the forward drivers'
# y_rows, rms_rows_run in proofs/rmsnorm_float.sh).  Exits non-zero on any unproved goal, failed smoke
# test, EVA alarm, or unsound ACSL literal; writes proofs/results/rmsnorm.json and prints a per-kernel
# table.  Steps and environment: proofs/lib.sh.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/rmsnorm_float.sh"
proof_init prove-rmsnorm build/proofs/rmsnorm

proof_soundness_greps specs/rmsnorm.h specs/rmsnorm_model.h specs/fperr_rms.h ref/rmsnorm.c proofs/eva_rmsnorm.c
# EVA reads the annotations with -DRESNORM_EVA: real-model statements are \true for it (LN_EXACT,
# WP_ONLY in specs/wp_only.h), so that it narrows its states by nothing it did not prove itself
# (proof_eva_no_unknown, below).
EVA_CPP_EXTRA=-DRESNORM_EVA proof_eva_start ref/rmsnorm.c proofs/eva_rmsnorm.c
# the rows run beside the real-model and float runs (proof_wp_rows_begin: WP idles between polls)
proof_wp_rows_begin ref/rmsnorm.c "$RMS_ROWS_FCT" proofs/session_rmsnorm_rows "$RMS_ROWS_LEMMAS"
proof_wp_real proofs/session_rmsnorm ref/rmsnorm.c
# The float model on ref/rmsnorm.c itself (forward, f32 and f64): the helpers' rounding facts by Gappa,
# the loops and the kernels by SMT (proofs/README-rmsnorm-residual.md).
rms_float_run proofs/session_rmsnorm_float
# The rows x n forward drivers' functional contract (y_rows: every row r of y is (x * rstd[r]) * w of
# row r of x; rstd_rows: rstd[r] is row r's rms_rstd at entry), real model, from the row kernel's
# y_stats and rstd_def and the lemmas RMS_ROWS_LEMMAS (two proved by induction scripts).
proof_wp_rows_end
PROOF_EXTRA_LOGS="$OUT/rows.log $OUT/rows_lemmas.log"
[ "$rows_rc" -eq 0 ] || { echo "$PROOF_NAME: rows run failed (see $OUT/rows.log, $OUT/rows_lemmas.log)"; status=1; }
proof_eva_wait
proof_eva_no_unknown
proof_summary proofs/results/rmsnorm.json proofs/rmsnorm_residual_summary.awk -v family=rmsnorm
proof_finish "all goals proved, 0 EVA alarms"
