#!/usr/bin/env bash
# `make prove-attention`: WP (real model) on the attention kernels (ref/attention.c): RTE (index
# arithmetic included), assigns and termination of every function, and every call's precondition
# of the composed linear, softmax and dropout kernels (whose postconditions, proved by their own
# targets, state each dot product, softmax row and dropout row functionally).  No EVA run on the
# attention drivers yet.  Exits non-zero on any unproved goal, failed smoke test or unsound ACSL
# literal; writes proofs/results/attention.json.  Steps and environment: proofs/lib.sh.
source "$(dirname "$0")/lib.sh"
proof_init prove-attention build/proofs/attention

proof_soundness_greps specs/attention.h ref/attention.c
proof_wp_real proofs/session_attention ref/attention.c
proof_summary proofs/results/attention.json proofs/summary_attention.awk
proof_finish "all goals proved (WP: RTE, assigns, termination, the composed kernels' preconditions)"
