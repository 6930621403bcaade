# The attention kernels' part of the proof summary (proofs/wp_summary.awk; used by proofs/attention.sh).
function kernel(g) {
  sub(/^typed_(real_)?/, "", g)
  if (match(g, /^attention_(forward|backward)_f(32|64)/)) return substr(g, 1, RLENGTH)
  if (match(g, /^attn_(zero|nonzero|mask_row|div_row|scale_q|ctx_row|ctx_eq|row_forward|row_backward|head_forward)_f(32|64)/)) return substr(g, 1, RLENGTH)
  if (g ~ /^lemma_attn_(rows_before_ok|vidx_in_ok|smax_frame|ssum_frame|p_frame|ctx_at_eq|ctx_at_frame)/) return "lemmas_head_frames"
  if (g ~ /^lemma_attn_(dot_unfold|dot_frame|score_of_dot|head_p_relabel|bh_frame|mul_mono|blk_next|rs_nonneg|rs_mono|blk_mono|blks_before_ok)/) return "lemmas_drivers_frames"
  if (g ~ /^lemma_attn|attn_row_mono|attn_row_nonneg|attn_div_exact/) return "lemmas_index_products"
  return "other"
}
function json_head() {
  return "  \"family\": \"attention\",\n  \"tool\": \"Frama-C 25 WP (-wp-rte, -wp-model real), EVA, cvc5 1.0.3, z3 4.8.12\",\n  \"assumptions\": [\"the callee contracts of specs/linear.h, specs/softmax.h (libm_exp), specs/dropout.h, proved by prove-linear, prove-softmax, prove-dropout\", \"rows run (att_row, ctx_row; head_att, head_ctx of attn_head_forward): the same contracts, and the head's frame lemmas of specs/attention_rows.h, proved in the same target (lemmas_head_frames; the inductions by the WP scripts of proofs/session_attention_rows/script/)\"],\n"
}
function eva_json() {
  return sprintf("  \"eva\": {\"harness\": \"proofs/eva_attention.c\", \"alarms_f32\": %d, \"alarms_f64\": %d,\n          \"ranges\": \"1 <= B <= 2, 1 <= T <= 4, 1 <= H <= 2, 1 <= dh <= 4, d = H*dh; nothing masked (causal 0, no key padding mask); forward then backward, without and with the attention-dropout mask (0/1, p in [0, 0.9]); |x|, |in_w|, |in_b|, |out_w|, |out_b|, |dy| <= 1.0e4; gradients from 0\",\n          \"masked_run\": \"-warn-special-float nan (a masked key's -Inf is by design), every NaN an alarm and every output and cache (y, qkv, att, ctx, dx, d.in_proj_weight/bias, d.out_proj.weight/bias) asserted finite: 1 <= B <= 2, 1 <= T <= 3, 1 <= H <= 2, dh = 1, causal 0 and 1, every key padding mask with key 0 not padded (so every query row keeps a key), eval mode and the dropout mask, the same value ranges; the alarms above count both runs\",\n          \"given_to_eva\": [\"softmax d_nonpos: z - m <= 0\", \"softmax s_ge_half: s >= 1/2\"], \"given_justification\": \"proved by prove-softmax (WP, real model); IEEE argument in proofs/README-sublayers.md\"},\n", eva32, eva64)
}
function json_tail() {
  return sprintf("  \"wp_goals_proved\": %d,\n  \"wp_goals_total\": %d,\n", tp, tt) \
    (eva_run ? eva_json() : "  \"eva\": \"not run by make check's proof lane (PROVE_LANE=check); make prove runs proofs/eva_attention.c\",\n") \
    sprintf("  \"seconds\": %d\n", secs)
}
function total_line() {
  if (!eva_run) return sprintf("TOTAL WP goals: %d/%d   EVA: not run (make check; make prove runs it)   (%d s)", tp, tt, secs)
  return sprintf("TOTAL WP goals: %d/%d   EVA alarms (B <= 2, T <= 4, d <= 8, nothing masked; B <= 2, T <= 3, d <= 2, causal and key padding masks): f32 %d, f64 %d   (%d s)", tp, tt, eva32, eva64, secs)
}
