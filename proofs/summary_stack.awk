# The stack kernels' part of the proof summary (proofs/wp_summary.awk; used by proofs/stack.sh).
function kernel(g) {
  sub(/^typed_(real_)?/, "", g)
  if (match(g, /^stack_(forward|backward|mask)_f(32|64)/)) return substr(g, 1, RLENGTH)
  if (match(g, /^stack_block_(params|acts|scratch)/)) return substr(g, 1, RLENGTH)
  if (g ~ /^lemma_stack/) return "lemmas_layer_offsets"
  return "other"
}
function json_head() {
  return "  \"family\": \"stack\",\n  \"tool\": \"Frama-C 25 WP (-wp-rte, -wp-model real), cvc5 1.0.3, z3 4.8.12\",\n  \"assumptions\": [\"the callees' contracts: specs/block.h (block_forward_*, block_backward_*: prove-block), specs/layernorm.h (prove)\"],\n"
}
function json_tail() {
  return sprintf("  \"wp_goals_proved\": %d,\n  \"wp_goals_total\": %d,\n", tp, tt) \
    sprintf("  \"seconds\": %d\n", secs)
}
function total_line() {
  return sprintf("TOTAL WP goals: %d/%d   (%d s)", tp, tt, secs)
}
