#!/usr/bin/env bash
# `make prove-softmax`: WP (real model) on the softmax kernels (the max, the sum of exponentials,
# every y[i], every dx[i], functionally; RTE, assigns, termination) with exp specified by the ONE
# libm assumption of specs/libm.h (ref/libm.c is not given to WP), and EVA on the float kernels
# (ref/libm.c given: Frama-C's own model of expf/exp) over the ranges of proofs/eva_softmax.c.
# Exits non-zero on any unproved goal, failed smoke test, EVA alarm, or unsound ACSL literal; writes
# proofs/results/softmax.json and prints a per-kernel table.  Steps and environment: proofs/lib.sh.
source "$(dirname "$0")/lib.sh"
proof_init prove-softmax build/proofs/softmax

proof_soundness_greps specs/softmax.h specs/libm.h ref/softmax.c ref/libm.c proofs/eva_softmax.c
# EVA reads the annotations with -DRESNORM_EVA: the real-model statements and
# the libm assumption (WP_ONLY, specs/wp_only.h) are \true for it.  It is given two facts it cannot
# decide, the assertions d_nonpos (d = z - m <= 0) and s_ge_half (s >= 1/2) of ref/softmax.c, which the WP
# run below proves and which hold in IEEE arithmetic (proofs/README-sublayers.md, "Softmax: the two
# facts EVA is given"); any other property EVA leaves unknown fails the run (checked below).
EVA_CPP_EXTRA=-DRESNORM_EVA proof_eva_start ref/softmax.c ref/libm.c proofs/eva_softmax.c
proof_wp_real proofs/session_softmax ref/softmax.c
proof_eva_wait
# EVA is given d_nonpos and s_ge_half and must reach both (a renamed or removed assertion does not
# go unnoticed); any other property it leaves unknown fails the run
proof_eva_no_unknown d_nonpos s_ge_half
# ... and WP proved them (every goal is proved or the run fails; this checks they were among them)
for a in d_nonpos s_ge_half; do
  grep -qE "Goal typed_real_softmax_.*_assert_$a : Valid" "$OUT/wp.log" || \
    { echo "$PROOF_NAME: WP did not prove assertion $a (see $OUT/wp.log)"; status=1; }
done
proof_summary proofs/results/softmax.json proofs/summary_softmax.awk
proof_finish "all goals proved, 0 EVA alarms"
