#!/usr/bin/env bash
# `make prove-block`: WP (real model) on the Transformer block kernels (ref/block.c): no runtime
# error, every callee's precondition (validity, separation, eps > 0, 0 <= p < 1, the int sizes),
# assigns and termination of the forward and backward drivers and their helpers; smoke tests (no
# vacuous precondition, no dead call or dead code); and, in a rows run, the forward composed
# (specs/block_rows.h).  The callees (LayerNorm, attention, FFN,
# residual, dropout) are used through their contracts (specs/*.h), proved by their own targets
# (prove-attention in make prove too).  No EVA run here: the block adds no float operation of its own
# beyond the residual adds and dropouts whose kernels EVA checks (eva_residual.c, eva_dropout.c).
# Exits non-zero on any unproved goal, failed smoke test or unsound ACSL literal; writes
# proofs/results/block.json and prints a per-kernel table.  Steps: proofs/lib.sh; numbers and
# cost: proofs/README-block.md.
source "$(dirname "$0")/lib.sh"
proof_init prove-block build/proofs/block

proof_soundness_greps specs/block.h ref/block.c
# One frama-c per dtype, side by side (each its own session), on the block's functions only: the
# callees are used through their headers' contracts and proved by their own targets, and anything
# else that ref/block.c may hold (later kernels) is not a goal here.
helpers() { local t=$1; echo "block_head_$t,block_layernorm_$t,block_ffn_sublayer_$t,block_ffn_add_$t,block_tail_pre_$t,block_out_post_$t,block_tail_post_$t"; }
for t in f32 f64; do
  proof_wp_real_start "$t" "proofs/session_block/$t" \
    "block_forward_$t,block_backward_$t,block_fill_$t,block_dropout_grad_$t,$(helpers "$t")" ref/block.c
done
proof_wp_real_wait
# The forward composed (specs/block_rows.h): real model, -DRESNORM_WP_ROWS, on the forward drivers and
# their helpers, from LayerNorm's and the FFN's rows contracts and linear's frame lemmas (proved by
# their own targets): the tails' clauses (ln2 / h rows, z_rows, h_def, f_def, y = s1 + f, s2 = h + f,
# y = norm2(s2)) and the head's s1 = x + a (proofs/README-block.md "The forward composed").  No lemma
# of its own: the ghost function blk_lemma_rows_fit is a goal.
proof_wp_rows ref/block.c "block_forward_f32,block_forward_f64,$(helpers f32),$(helpers f64),blk_lemma_rows_fit" \
  proofs/session_block/rows
PROOF_EXTRA_LOGS="$OUT/rows.log"
[ "$rows_rc" -eq 0 ] || { echo "$PROOF_NAME: rows run failed (see $OUT/rows.log)"; status=1; }
proof_summary proofs/results/block.json proofs/summary_block.awk
proof_finish "all goals proved"
