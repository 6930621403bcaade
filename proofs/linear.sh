#!/usr/bin/env bash
# `make prove-linear`: WP (real model) on the linear kernels (ref/linear.c: the dot helpers, the row
# kernels' y, dx, dW and db, and the backward driver's db over the rows functionally, everything for
# RTE, assigns and termination), EVA on the float kernels over the ranges of specs/linear.h, and WP in the IEEE float
# model on ref/linear.c itself (Gappa + SMT: the dot products' error bound, proofs/linear_float.sh).
# Exits non-zero on any unproved goal, failed smoke test, EVA alarm, or unsound ACSL literal; writes
# proofs/results/linear.json and prints a per-kernel table.  Steps and environment: proofs/lib.sh.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/linear_float.sh"
proof_init prove-linear build/proofs/linear

proof_soundness_greps specs/linear.h specs/fperr_linear.h ref/linear.c proofs/eva_linear.c
# EVA reads the annotations with -DRESNORM_EVA (specs/fperr.h): the real-model and the float-model
# statements are \true for it, so it relies on nothing it did not prove itself.
EVA_CPP_EXTRA=-DRESNORM_EVA EVA_UNROLL=4100 proof_eva_start ref/linear.c proofs/eva_linear.c   # the dot helpers run to n = 4096
proof_wp_real proofs/session_linear ref/linear.c
# The float model on ref/linear.c itself (linear_dot_f32/f64, linear_sdot_f32/f64): the helpers'
# rounding facts by Gappa, the loops by SMT (proofs/README-sublayers.md, "Float model").
lin_float_run proofs/session_linear_float
proof_eva_wait
proof_summary proofs/results/linear.json proofs/summary_linear.awk
proof_finish "all goals proved, 0 EVA alarms"
