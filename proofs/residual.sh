#!/usr/bin/env bash
# `make prove-residual`: WP (real model) on the residual kernels, EVA on the float kernels, WP in the
# IEEE float model on ref/residual.c itself (Gappa + SMT: every output finite and within u |exact sum|;
# proofs/rmsnorm_float.sh).  Exits non-zero on any
# unproved goal, failed smoke test, EVA alarm, or unsound ACSL literal; writes
# proofs/results/residual.json and prints a per-kernel table.  Steps and environment: proofs/lib.sh.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/rmsnorm_float.sh"
proof_init prove-residual build/proofs/residual

proof_soundness_greps specs/residual.h specs/fperr_rms.h ref/residual.c proofs/eva_residual.c
# EVA reads the annotations with -DRESNORM_EVA: real- and float-model statements, and the frame
# invariants (WP_ONLY: what WP proves of memory, which EVA need not be told), are \true for it,
# so that it narrows its states by nothing it did not prove itself (proof_eva_no_unknown, below).
EVA_CPP_EXTRA=-DRESNORM_EVA proof_eva_start ref/residual.c proofs/eva_residual.c
proof_wp_real proofs/session_residual ref/residual.c
res_float_run proofs/session_residual_float
proof_eva_wait
proof_eva_no_unknown
proof_summary proofs/results/residual.json proofs/rmsnorm_residual_summary.awk -v family=residual
proof_finish "all goals proved, 0 EVA alarms"
