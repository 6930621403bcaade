#!/usr/bin/env bash
# `make prove-attention`: WP (real model) on the attention kernels (ref/attention.c): RTE (index
# arithmetic included), assigns and termination of every function, and every call's precondition
# of the composed linear, softmax and dropout kernels (whose postconditions, proved by their own
# targets, state each dot product, softmax row and dropout row functionally) and, in a rows run, one
# query row of one head composed (att_row, ctx_row: specs/attention_rows.h) and one head's T query
# rows (head_att, head_ctx: attn_head_forward, which the drivers call once per (b, h)); EVA on the float kernels,
# forward then backward, without and with the attention-dropout mask, nothing masked and (a second
# run) causal and key-padding-masked, over the ranges of proofs/eva_attention.c (specs/attention.h).
# Exits non-zero on any unproved goal, failed smoke test, EVA alarm or property EVA leaves unknown
# (but the facts named below), or unsound ACSL literal; writes proofs/results/attention.json.
# Steps and environment: proofs/lib.sh.
source "$(dirname "$0")/lib.sh"
proof_init prove-attention build/proofs/attention

proof_soundness_greps specs/attention.h specs/attention_rows.h ref/attention.c proofs/eva_attention.c
# EVA on the kernels with the bodies of their callees (linear, softmax, dropout; ref/libm.c: Frama-C's
# own model of expf/exp), the annotations read with -DRESNORM_EVA (real-model statements \true for it).
# The sizes are small (B <= 2, T <= 4, H <= 2, dh <= 4: 64 shapes, one EVA state each): EVA unrolls
# every loop.
# Not in make check's proof lane (PROVE_LANE=check: CI's 45 minutes; ~6 min of CPU with the masked
# run); make prove runs it.
ATTN_EVA=1; [ "${PROVE_LANE:-}" = check ] && ATTN_EVA=0
# Likewise the rows run below when its inputs and session are those of a run that passed
# (proofs/rows_ledger/prove-attention.txt; proofs/lib.sh, rows_key): ~6 min of make check's CPU.
ROWS_VOUCH=1
if [ "$ATTN_EVA" -eq 1 ]; then
  EVA_CPP_EXTRA=-DRESNORM_EVA EVA_UNROLL=200 proof_eva_start ref/attention.c ref/linear.c ref/softmax.c \
    ref/dropout.c ref/libm.c proofs/eva_attention.c
  # The masked run (-DEVA_MASKED, logs eva_masked_F32/F64.log): causal 0/1 and every key padding
  # pattern that leaves key 0 (B <= 2, T <= 3, H <= 2, dh = 1: one state each), eval mode and the
  # dropout mask; infinities allowed (the -Inf of a masked key is by design), every NaN an alarm,
  # every output and cache asserted finite.  The harness has its own exp (exp(-Inf) = +0 written
  # out: EVA's expf model bounds nothing for an argument interval that holds -Inf), so not ref/libm.c.
  EVA_TAG=masked EVA_WARN=nan EVA_CPP_EXTRA="-DRESNORM_EVA -DEVA_MASKED" EVA_UNROLL=200 proof_eva_start \
    ref/attention.c ref/linear.c ref/softmax.c ref/dropout.c proofs/eva_attention.c
fi
# One query row and one head composed (specs/attention_rows.h): real model, -DRESNORM_WP_ROWS, on the
# row helpers: att_row (no mask: P is the softmax of the scores of qkv as at entry) and ctx_row (c is
# the attention weights times V), from the composed kernels' postconditions through ghost inductions
# (proofs/README-sublayers.md "Attention: one query row"); and on the head helpers (head_att,
# head_ctx: every query row of one (b, h), across the later rows' writes), with the lemmas of their
# frames (ATTN_ROWS_LEMMAS: proved after the run, the inductions by the committed scripts of
# proofs/session_attention_rows/script/).
# The drivers' heads_att (every head's weights, no mask, over qkv as on return) and their frame
# lemmas (specs/attention_rows.h, "the drivers"; attn_dot_frame_* by script).
ATTN_ROWS_FCT=attn_mask_row_f32,attn_mask_row_f64,attn_ctx_row_f32,attn_ctx_row_f64,attn_row_forward_f32,attn_row_forward_f64,attn_ctx_eq_f32,attn_ctx_eq_f64,attn_head_forward_f32,attn_head_forward_f64,lemma_attn_blk,attention_forward_f32,attention_forward_f64
ATTN_ROWS_LEMMAS=attn_rows_before_ok,attn_vidx_in_ok
ATTN_ROWS_LEMMAS+=,attn_mul_mono,attn_blk_next,attn_rs_nonneg,attn_rs_mono,attn_blk_mono,attn_blks_before_ok
for t in f32 f64; do
  ATTN_ROWS_LEMMAS+=,attn_smax_frame_$t,attn_ssum_frame_$t,attn_p_frame_$t,attn_ctx_at_eq_$t,attn_ctx_at_frame_$t
  ATTN_ROWS_LEMMAS+=,attn_dot_unfold_$t,attn_dot_frame_$t,attn_dot_frame_m_$t,attn_score_of_dot_$t,attn_head_p_relabel_$t,attn_bh_frame_$t
done
# the rows run beside the other runs (proof_wp_rows_begin in proofs/lib.sh: WP idles between polls)
# Its per-goal timeout is 40 s, not lib.sh's 20: two of the drivers' goals (attention_forward_f32's
# oh1, CVC5 24 s; attn_head_forward_f32's fr_preserved, Z3 21 s, idle) take longer, and WP reads a
# cached result whose time exceeds the timeout as a timeout.  A replay runs no solver on a cached goal.
WP_TIMEOUT=${ATTN_ROWS_TIMEOUT:-40} \
  proof_wp_rows_begin ref/attention.c "$ATTN_ROWS_FCT" proofs/session_attention_rows "$ATTN_ROWS_LEMMAS"
proof_wp_real proofs/session_attention ref/attention.c
proof_wp_rows_end
PROOF_EXTRA_LOGS="$OUT/rows.log $OUT/rows_lemmas.log"
[ "$rows_rc" -eq 0 ] || { echo "$PROOF_NAME: rows run failed (see $OUT/rows.log, $OUT/rows_lemmas.log)"; status=1; }
if [ "$ATTN_EVA" -eq 1 ]; then
  proof_eva_wait
  # EVA is given softmax's two facts (d_nonpos, s_ge_half: proved by prove-softmax's WP run, whose
  # check fails if they are not among its goals) and must reach both; any other property it leaves
  # unknown fails the run (the harness splits its states by shape, so the index facts are decided).
  proof_eva_no_unknown d_nonpos s_ge_half
fi
proof_summary proofs/results/attention.json proofs/summary_attention.awk -v eva_run="$ATTN_EVA"
rows_said="rows run: one query row and one head composed"
[ "${#ROWS_VOUCHED_LOGS[@]}" -gt 0 ] && rows_said="rows run not run: its inputs passed unchanged, proofs/rows_ledger/"
proof_finish "all goals proved (WP: RTE, assigns, termination, the composed kernels' preconditions; $rows_said)$([ "$ATTN_EVA" -eq 1 ] && echo ', 0 EVA alarms' || echo '; EVA not run (make check; make prove runs it)')"
