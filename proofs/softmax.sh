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
proof_eva_start ref/softmax.c ref/libm.c proofs/eva_softmax.c
proof_wp_real proofs/session_softmax ref/softmax.c
proof_eva_wait
proof_summary proofs/results/softmax.json proofs/summary_softmax.awk
proof_finish "all goals proved, 0 EVA alarms"
