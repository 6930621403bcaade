#!/usr/bin/env bash
# `make prove-block`: WP (real model) on the Transformer block kernels (ref/block.c): no runtime
# error, every callee's precondition (validity, separation, eps > 0, 0 <= p < 1, the int sizes),
# assigns and termination of the forward and backward drivers and their helpers, and the forward's
# two residual adds functionally.  The callees (LayerNorm, attention, FFN, residual, dropout) are
# used through their contracts (specs/*.h), proved by their own targets (attention's not yet in
# full: specs/attention.h).  No EVA run here: the block adds no float operation of its own beyond
# the residual adds and dropouts whose kernels EVA checks (proofs/eva_residual.c, eva_dropout.c).
# Exits non-zero on any unproved goal, failed smoke test or unsound ACSL literal; writes
# proofs/results/block.json and prints a per-kernel table.  Steps: proofs/lib.sh.
source "$(dirname "$0")/lib.sh"
proof_init prove-block build/proofs/block

proof_soundness_greps specs/block.h ref/block.c
# The stack's kernels at the end of ref/block.c (issue 9) and their ghost lemmas are proved by
# `make prove-stack` (proofs/stack.sh, its own session): skipped here, so that this target covers
# the block alone.
proof_wp_real proofs/session_block ref/block.c \
  -wp-skip-fct stack_forward_f32,stack_forward_f64,stack_backward_f32,stack_backward_f64,stack_block_params,stack_block_acts,stack_block_scratch,stack_mask_f32,stack_mask_f64,lemma_stack_layer,lemma_stack_next,lemma_stack_sum
proof_summary proofs/results/block.json proofs/summary_block.awk
proof_finish "all goals proved"
