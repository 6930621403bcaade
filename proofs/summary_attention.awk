# The attention kernels' part of the proof summary (proofs/wp_summary.awk; used by proofs/attention.sh).
function kernel(g) {
  sub(/^typed_(real_)?/, "", g)
  if (match(g, /^attention_(forward|backward)_f(32|64)/)) return substr(g, 1, RLENGTH)
  if (match(g, /^attn_(zero|nonzero|mask_row|div_row|scale_q|ctx_row|ctx_eq|row_forward|row_backward)_f(32|64)/)) return substr(g, 1, RLENGTH)
  if (g ~ /^lemma_attn|attn_row_mono|attn_row_nonneg|attn_div_exact/) return "lemmas_index_products"
  return "other"
}
function json_head() {
  return "  \"family\": \"attention\",\n  \"tool\": \"Frama-C 25 WP (-wp-rte, -wp-model real), cvc5 1.0.3, z3 4.8.12\",\n  \"assumptions\": [\"the callee contracts of specs/linear.h, specs/softmax.h (libm_exp), specs/dropout.h, proved by prove-linear, prove-softmax, prove-dropout\", \"rows run (att_row, ctx_row): the same contracts, no lemma\"],\n"
}
function json_tail() {
  return sprintf("  \"wp_goals_proved\": %d,\n  \"wp_goals_total\": %d,\n", tp, tt) \
    "  \"eva\": \"not run on the attention drivers\",\n" \
    sprintf("  \"seconds\": %d\n", secs)
}
function total_line() {
  return sprintf("TOTAL WP goals: %d/%d   EVA: not run   (%d s)", tp, tt, secs)
}
