#!/usr/bin/env bash
# `make prove-ffn`: WP (real model) on the feed-forward kernels (ref/ffn.c): the activation helpers
# and their loops functionally (relu exactly; gelu, gelu_tanh and their derivatives as their real
# formulas under the libm assumptions of specs/libm.h: ref/libm.c is not given to WP), the drivers
# for RTE, assigns and termination (the linear and dropout kernels they call are used through their
# contracts, specs/linear.h and specs/dropout.h, proved by prove-linear and prove-dropout).  Exits
# non-zero on any unproved goal, failed smoke test or unsound ACSL literal; writes
# proofs/results/ffn.json and prints a per-kernel table.  EVA (proofs/eva_ffn.c) on the activation
# kernels: no NaN/Inf/overflow for |z|, |g| <= 1.0e4.  Steps: proofs/lib.sh.
source "$(dirname "$0")/lib.sh"
proof_init prove-ffn build/proofs/ffn

proof_soundness_greps specs/ffn.h ref/ffn.c specs/libm.h proofs/eva_ffn.c
proof_eva_start ref/ffn.c ref/libm.c proofs/eva_ffn.c
proof_wp_real proofs/session_ffn ref/ffn.c
proof_eva_wait
proof_summary proofs/results/ffn.json proofs/summary_ffn.awk
proof_finish "all goals proved, 0 EVA alarms"
