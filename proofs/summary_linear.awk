# The linear kernels' part of the proof summary (proofs/wp_summary.awk; used by proofs/linear.sh).
function kernel(g) {
  sub(/^typed_(real_)?/, "", g)
  if (g ~ /^lemma_lin_|^lin_/) return "index_lemmas"
  if (match(g, /^linear_(dot|sdot|row_forward|row_backward|forward|backward)_f(32|64)/)) return substr(g, 1, RLENGTH)
  if (g ~ /^linear_acc_row_f32/) return "linear_row_backward_f32"
  if (g ~ /^linear_acc_row_f64/) return "linear_row_backward_f64"
  return "other"
}
function json_head() {
  return "  \"family\": \"linear\",\n  \"tool\": \"Frama-C 25 WP (-wp-rte, -wp-model real), EVA, cvc5 1.0.3, z3 4.8.12\",\n"
}
function json_tail() {
  return sprintf("  \"wp_goals_proved\": %d,\n  \"wp_goals_total\": %d,\n", tp, tt) \
    sprintf("  \"eva\": {\"harness\": \"proofs/eva_linear.c\", \"n_max\": %d, \"alarms_f32\": %d, \"alarms_f64\": %d,\n          \"ranges\": \"drivers: 1 <= in <= %d, 1 <= out <= 4, 1 <= rows <= 2; dot helpers: 1 <= n <= 4096; |x|, |W|, |b|, |dy| <= 1.0e4\"},\n", evanmax, eva32, eva64, evanmax) \
    sprintf("  \"seconds\": %d\n", secs)
}
function total_line() {
  return sprintf("TOTAL WP goals: %d/%d   EVA alarms (in, n <= %d): f32 %d, f64 %d   (%d s)", tp, tt, evanmax, eva32, eva64, secs)
}
