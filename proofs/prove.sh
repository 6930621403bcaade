#!/usr/bin/env bash
# `make prove` (LayerNorm part): WP (real model) on the LayerNorm kernels, WP in the float model (Gappa +
# SMT) on the f32 forward kernel's float postconditions, EVA on the float kernels, Gappa (+SMT) on the
# float error bound of the f64 mean's sum (proof copy, proofs/sum_error.c).  Exits non-zero on any unproved goal, failed
# smoke test, EVA alarm, or unsound ACSL literal.  Writes proofs/results/layernorm.json and prints a
# per-kernel table.  Steps and environment (WP_CACHE, EVA_NMAX, WP_TIMEOUT): proofs/lib.sh.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/layernorm_float.sh"
proof_init prove-layernorm build/proofs

proof_soundness_greps specs/*.h ref/*.c ref/*.h proofs/*.c
# EVA reads the annotations with -DRESNORM_EVA: real-model and float-model statements are \true for it
# (specs/fperr.h), so that it narrows its states by nothing it did not prove itself (checked below).
EVA_CPP_EXTRA=-DRESNORM_EVA proof_eva_start ref/layernorm.c proofs/eva_layernorm.c
# the rows run beside the real-model, Gappa and float runs (proof_wp_rows_begin: WP idles between polls)
proof_wp_rows_begin ref/layernorm.c "$LN_ROWS_FCT" proofs/session_rows "$LN_ROWS_LEMMAS"
proof_wp_real proofs/session ref/layernorm.c
# The summation loop (proofs/sum_error.c): add_f32/add_f64's contracts by Gappa, the rest by SMT.
GAPPA_FCT=add_f32,add_f64 proof_gappa proofs/sum_error.c proofs/session_gappa add_err,nov,res_fin \
  qed,z3nofp,cvc5,z3 -cpp-extra-args=-Ispecs
# The float model on ref/layernorm.c itself (f32 forward: the mean's error bound E_m, rstd never NaN):
# the helpers' rounding facts by Gappa, the loops and the kernel by SMT (proofs/README.md).
ln_float_run proofs/session_float
# The rows x n forward drivers' functional contract (y_rows: every row r of y is the affine map of
# row r of x with mean[r], rstd[r]), real model, from the row kernel's pointwise postcondition.
proof_wp_rows_end
PROOF_EXTRA_LOGS="$OUT/rows.log $OUT/rows_lemmas.log"
[ "$rows_rc" -eq 0 ] || { echo "$PROOF_NAME: rows run failed (see $OUT/rows.log, $OUT/rows_lemmas.log)"; status=1; }
proof_eva_wait
proof_eva_no_unknown
proof_summary proofs/results/layernorm.json proofs/summary_layernorm.awk
proof_finish "all goals proved, 0 EVA alarms"
