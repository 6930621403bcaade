#!/usr/bin/env bash
# `make prove-linear`: WP (real model) on the linear kernels (ref/linear.c: the dot helpers
# functionally, the accumulation of dW and db functionally, everything for RTE, assigns and
# termination) and EVA on the float kernels over the ranges of specs/linear.h.  Exits non-zero on any
# unproved goal, failed smoke test, EVA alarm, or unsound ACSL literal; writes
# proofs/results/linear.json and prints a per-kernel table.  Steps and environment: proofs/lib.sh.
source "$(dirname "$0")/lib.sh"
proof_init prove-linear build/proofs/linear

proof_soundness_greps specs/linear.h ref/linear.c proofs/eva_linear.c
EVA_UNROLL=4100 proof_eva_start ref/linear.c proofs/eva_linear.c   # the dot helpers run to n = 4096
proof_wp_real proofs/session_linear ref/linear.c
proof_eva_wait
proof_summary proofs/results/linear.json proofs/summary_linear.awk
proof_finish "all goals proved, 0 EVA alarms"
