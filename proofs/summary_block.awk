# The block kernels' part of the proof summary (proofs/wp_summary.awk; used by proofs/block.sh).
function kernel(g) {
  sub(/^typed_(real_)?/, "", g)
  if (match(g, /^block_(forward|backward|fill|dropout_grad)_f(32|64)/)) return substr(g, 1, RLENGTH)
  return "other"
}
function json_head() {
  return "  \"family\": \"block\",\n  \"tool\": \"Frama-C 25 WP (-wp-rte, -wp-model real), cvc5 1.0.3, z3 4.8.12\",\n  \"assumptions\": [\"the callees' contracts: specs/layernorm.h, specs/attention.h (not yet fully proved), specs/ffn.h, specs/residual.h, specs/dropout.h\"],\n"
}
function json_tail() {
  return sprintf("  \"wp_goals_proved\": %d,\n  \"wp_goals_total\": %d,\n", tp, tt) \
    sprintf("  \"seconds\": %d\n", secs)
}
function total_line() {
  return sprintf("TOTAL WP goals: %d/%d   (%d s)", tp, tt, secs)
}
