#!/usr/bin/env bash
# `make prove-dropout`: WP (real model) on the dropout kernels (every output equals its formula),
# EVA on the float kernels over the ranges of specs/dropout.h.  Exits non-zero on any unproved goal,
# failed smoke test, EVA alarm, or unsound ACSL literal; writes proofs/results/dropout.json and
# prints a per-kernel table.  Steps and environment: proofs/lib.sh.
source "$(dirname "$0")/lib.sh"
proof_init prove-dropout build/proofs/dropout

proof_soundness_greps specs/dropout.h ref/dropout.c proofs/eva_dropout.c
# EVA reads the annotations with -DRESNORM_EVA: the real-model statements and WP's frame facts
# (WP_ONLY, specs/wp_only.h) are \true for it, so it narrows its states by nothing it did not prove
# itself; any property it leaves unknown fails the target (issue 13).
EVA_CPP_EXTRA=-DRESNORM_EVA proof_eva_start ref/dropout.c proofs/eva_dropout.c
proof_wp_real proofs/session_dropout ref/dropout.c
proof_eva_wait
proof_eva_no_unknown
proof_summary proofs/results/dropout.json proofs/summary_dropout.awk
proof_finish "all goals proved, 0 EVA alarms"
