# The block kernels' part of the proof summary (proofs/wp_summary.awk; used by proofs/block.sh).
# Rows: each block function of ref/block.c (its RTE, callee-precondition, assigns, loop and
# termination goals, and its own smoke tests: requires, dead code, dead loop), and per dtype one row
# of the dead-call smoke tests (a call after which the context is inconsistent), which WP names after
# the callee (typed_real_<callee>_wp_smoke_dead_call_s<stmt>), not after the calling block function.
function kernel(g) {
  sub(/^typed_(real_)?/, "", g)
  if (g ~ /_wp_smoke_dead_call_s[0-9]+$/ && match(g, /_f(32|64)_wp_smoke_dead_call_/))
    return "block_calls_" substr(g, RSTART + 1, 3) "_dead_call"
  if (match(g, /^block_(forward|backward|fill|dropout_grad|head|layernorm_backward|attention_backward|ffn_backward|ln1_backward_add|layernorm|ffn_sublayer|ffn_add|tail_pre|out_post|tail_post)_f(32|64)/)) return substr(g, 1, RLENGTH)
  if (g ~ /^blk_lemma_rows_fit/) return "blk_lemma_rows_fit"
  if (g ~ /^lemma_blk_d[gb]_sum_/) return "lemmas_ln_dgb_frames"
  return "other"
}
function json_head() {
  return "  \"family\": \"block\",\n  \"tool\": \"Frama-C 25 WP (-wp-rte, -wp-model real, -wp-smoke-tests), cvc5 1.0.3, z3 4.8.12\",\n  \"assumptions\": [\"the callees' contracts: specs/layernorm.h, specs/attention.h, specs/ffn.h, specs/residual.h, specs/dropout.h (proved by their own targets)\", \"rows run (the forward composed, specs/block_rows.h): the rows contracts of layernorm_forward (specs/layernorm.h) and ffn_forward (specs/ffn_rows.h) and the lemmas lin_dot_shift, lin_dot_at_frame of specs/linear_rows.h (proved by prove-layernorm, prove-ffn, prove-linear)\", \"backward rows passes (specs/block_rows.h): the rows contracts of layernorm_backward (specs/layernorm_rows.h) and ffn_backward (specs/ffn_bwd_rows.h, the FFN wrapper's pass and the post-LN FFN pass only; proved by prove-layernorm, prove-ffn)\"],\n"
}
function json_tail() {
  return sprintf("  \"wp_goals_proved\": %d,\n  \"wp_goals_total\": %d,\n", tp, tt) \
    sprintf("  \"smoke_tests_passed\": %d,\n  \"smoke_tests_total\": %d,\n", sp, stt) \
    sprintf("  \"seconds\": %d\n", secs)
}
function total_line() {
  return sprintf("TOTAL WP goals: %d/%d   smoke tests: %d/%d   (%d s)", tp, tt, sp, stt, secs)
}
