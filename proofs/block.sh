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
# make check's proof lane (PROVE_LANE=check) skips each rows run below whose inputs and session are
# those of a run that passed (proofs/rows_ledger/prove-block.txt; proofs/lib.sh, rows_key): ~16 min
# of make check's CPU.  make prove runs them all.
ROWS_VOUCH=1
# One frama-c per dtype, side by side (each its own session), on the block's functions only: the
# callees are used through their headers' contracts and proved by their own targets, and anything
# else that ref/block.c may hold (later kernels) is not a goal here.
helpers() { local t=$1; echo "block_head_$t,block_layernorm_$t,block_ffn_sublayer_$t,block_ffn_add_$t,block_tail_pre_$t,block_out_post_$t,block_tail_post_$t"; }
# the backward's wrappers (the FFN's, a norm's and the attention's backward, each with a ghost frame
# of one norm's gradients; pre-LN's norm1 backward and residual add)
bwd_helpers() { local t=$1; echo "block_layernorm_backward_$t,block_attention_backward_$t,block_ffn_backward_$t,block_ln1_backward_add_$t"; }
for t in f32 f64; do
  proof_wp_real_start "$t" "proofs/session_block/$t" \
    "block_forward_$t,block_backward_$t,block_fill_$t,block_dropout_grad_$t,$(helpers "$t"),$(bwd_helpers "$t")" \
    ref/block.c
done
# The forward composed (specs/block_rows.h): real model, -DRESNORM_WP_ROWS, on the forward drivers and
# their helpers, from LayerNorm's and the FFN's rows contracts and linear's frame lemmas (proved by
# their own targets): the tails' clauses (ln2 / h rows, z_rows, h_def, f_def, y = s1 + f, s2 = h + f,
# y = norm2(s2)) and the head's s1 = x + a (proofs/README-block.md "The forward composed").  No lemma
# of its own: the ghost function blk_lemma_rows_fit is a goal (of the f32 run).  One run per dtype,
# each its own session, started beside the real-model runs: a replay is WP's goal generation, one
# core per frama-c, and the forward's rows run is the block's longest (~11 min of CPU for both
# dtypes), which alone at the end of make check's proof lane had left the other core idle.
for t in f32 f64; do
  lemma=; [ "$t" = f32 ] && lemma=,blk_lemma_rows_fit
  proof_wp_rows_start "$OUT/rows_$t.log" ref/block.c "block_forward_$t,$(helpers "$t")$lemma" \
    "proofs/session_block/rows_$t"
done
# The backward's values (specs/block_rows.h): post-LN's d.norm2.weight and d.norm2.bias at return
# are LayerNorm's backward sums at s2 (dgb2_post), pre-LN's d.norm1 ones the sums at x of the
# attention's input gradient left in the scratch (dgb1_pre); pre-LN's FFN parameter gradients at
# return (assertions db2_pre, dw2_pre, dw1_pre, db1_pre: the FFN's sums over its gradients at its call).  A rows pass over the backward drivers
# and their wrappers, restricted to the clauses and their chains of frames (every other goal of these
# functions is the real-model runs'; no callee precondition is rows-only but the wrappers' sep_tail,
# which is in the list), one per dtype, with -DRESNORM_WP_BWD=32 or 64: that dtype's frame lemmas of
# ln_dg_sum and ln_db_sum (proved below, by induction from the scripts committed in
# proofs/session_block/rows_lemmas_T/, a session of its own: WP_CACHE=cleanup drops what a run did
# not use): proofs/README-block.md "The backward".
BLK_BWD_PROPS=sep_ffn,sep_ln1,sep_att,sep_tail,tail_kept,dg2_k1,dg2_k2,dg2_k3,dg2_k4,dg2_k5,dg2_k6,dg2_k7
BLK_BWD_PROPS+=,dg2_k8,dg2_k9,dg2_same,db2n_same,dgb2_here,dgb2_end,dgb2_post
BLK_BWD_PROPS+=,sep_ffn1,sep_ln2,sep_att1,dg1_k1,dg1_k2,dg1_k3,dg1_k4,dg1_k5,dg1_k6,dg1_k7,dg1_k8
BLK_BWD_PROPS+=,dgb1_end,dgb1_pre,dgb_call,dg_kept,in_same,stats_same,col_rng,in_cols,dgb_ret
# pre-LN's FFN parameter gradients (db2_pre, dw2_pre, dw1_pre, db1_pre): the FFN wrapper's clauses
# from ffn_backward's rows contract (specs/ffn_bwd_rows.h, its rows-only sep_mask_db at both calls),
# the frame of grads' FFN range across the later steps (dl_k*, the wrappers' ffn_kept, bwd_kept), and
# rows_fit (its ghost calls' rows_nonneg, n_pos) for the weights' indices
BLK_BWD_PROPS+=,sep_mask_db,ffn_kept,bwd_kept,rows_nonneg,n_pos
BLK_BWD_PROPS+=,dw2_rs,dw1_rs,col_rs,dw2_rng,dw1_rng,dl_k1,dl_k2,dw2_in,db2_ffn,dw2_call,dw2_ffn,dw1_ffn,db1_ffn,sep_ln2f
BLK_BWD_PROPS+=,dl_k3,dl_k4,dl_k5,dl_k6,sep_attf,dl_k7,sep_ln1f,dl_k8,db2_pre,dw2_pre,dw1_pre,db1_pre
# post-LN's FFN parameter gradients (db2_post, dw1_post, db1_post): the FFN's values after its call
# (db2_ffnp, dw1_ffnp, db1_ffnp) are the post-LN FFN pass's below; here their frame from entry to the
# call (dlp_k1..3) and from the call to return (dlp_k4..9, restated after the first add, *_at1, and
# before the last, *_at2), with the
# wrappers' ffn_kept (pointwise: post-LN's norm1 backward writes d.norm1, inside the range [4d² + 4d, o))
BLK_BWD_PROPS+=,dlp_k1,dlp_k2,dlp_k3,dw1_rsp,col_rsp,dw1_rngp,sep_ln1p,dlp_k4,db2_at1,dw1_at1,db1_at1
BLK_BWD_PROPS+=,g2off_eq,dlp_k5,dlp_k6,dlp_k7,sep_attp,dlp_k8,sep_resp,db2_at2,dw1_at2,db1_at2,dlp_k9
BLK_BWD_PROPS+=,db2_post,dw1_post,db1_post
# The backward rows passes' per-goal timeout is 40 s, not lib.sh's 20: post-LN's frame across the
# attention's backward (dlp_k8) takes 10-12 s idle (more under load), and WP reads a cached
# result whose time exceeds the timeout as a timeout.
for t in f32 f64; do
  WP_TIMEOUT=${BLK_BWD_TIMEOUT:-40} ROWS_PROPS=$BLK_BWD_PROPS ROWS_CPP_EXTRA=-DRESNORM_WP_BWD=${t#f} \
    proof_wp_rows_start "$OUT/rows_backward_$t.log" \
    ref/block.c "block_backward_$t,$(bwd_helpers "$t")" "proofs/session_block/rows_backward_$t"
done
# The FFN wrapper's d.linear* clauses (ffn_db2, ffn_dw2, ffn_dw1, ffn_db1, and the callee's sep_mask_db
# at its call), from ffn_backward's rows clauses (specs/ffn_bwd_rows.h, proved by prove-ffn): a pass of
# its own, -DRESNORM_WP_BWD_FFN, the only one that reads that header (in the driver's pass above, the
# clauses would sit in the context of post-LN's direct call of ffn_backward_*: its frame step dg2_k3
# then timed out at 90 s).  The driver's pass uses the wrapper's contract, the same text in both.
for t in f32 f64; do
  ROWS_PROPS=sep_mask_db,ffn_db2,ffn_dw2,ffn_dw1,ffn_db1 \
  ROWS_CPP_EXTRA="-DRESNORM_WP_BWD=${t#f} -DRESNORM_WP_BWD_FFN" proof_wp_rows_start "$OUT/rows_bwd_ffn_$t.log" \
    ref/block.c "block_ffn_backward_$t" "proofs/session_block/rows_bwd_ffn_$t"
done
# Post-LN's FFN parameter gradients after its call (db2_ffnp, dw1_ffnp, db1_ffnp, and the callee's
# sep_mask_db at both calls): post-LN calls ffn_backward_* directly, so its rows clauses
# (specs/ffn_bwd_rows.h) are read in a pass of its own on the driver, -DRESNORM_WP_BWD_FFN; the backward
# rows pass above carries the values to return (the same assertions' text in both passes).
for t in f32 f64; do
  WP_TIMEOUT=${BLK_BWD_TIMEOUT:-40} ROWS_PROPS=sep_mask_db,db2_ffnp,dw1_ffnp,db1_ffnp \
  ROWS_CPP_EXTRA="-DRESNORM_WP_BWD=${t#f} -DRESNORM_WP_BWD_FFN" proof_wp_rows_start "$OUT/rows_bwd_post_$t.log" \
    ref/block.c "block_backward_$t" "proofs/session_block/rows_bwd_post_$t"
done
proof_wp_real_wait
proof_wp_rows_wait
[ "$rows_rc" -eq 0 ] || { echo "$PROOF_NAME: a rows run failed (see $OUT/rows_*.log)"; status=1; }
for t in f32 f64; do
  ROWS_CPP_EXTRA=-DRESNORM_WP_BWD=${t#f} proof_wp_lemmas ref/block.c "proofs/session_block/rows_lemmas_$t" \
    "blk_dg_sum_step_$t,blk_dg_sum_frame_$t,blk_db_sum_step_$t,blk_db_sum_frame_$t" "$OUT/rows_lemmas_$t.log" ||
    { echo "$PROOF_NAME: a lemma is not proved (see $OUT/rows_lemmas_$t.log)"; status=1; }
done
PROOF_EXTRA_LOGS="$OUT/rows_f32.log $OUT/rows_f64.log $OUT/rows_backward_f32.log $OUT/rows_backward_f64.log"
PROOF_EXTRA_LOGS+=" $OUT/rows_lemmas_f32.log $OUT/rows_lemmas_f64.log $OUT/rows_bwd_ffn_f32.log $OUT/rows_bwd_ffn_f64.log"
PROOF_EXTRA_LOGS+=" $OUT/rows_bwd_post_f32.log $OUT/rows_bwd_post_f64.log"
proof_summary proofs/results/block.json proofs/summary_block.awk
proof_finish "all goals proved"
