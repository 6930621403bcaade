# The dropout kernels' part of the proof summary (proofs/wp_summary.awk; used by proofs/dropout.sh).
function kernel(g) {
  sub(/^typed_(real_)?/, "", g)
  if (match(g, /^dropout_(scale|forward|backward)_f(32|64)/)) return substr(g, 1, RLENGTH)
  return "other"
}
function json_head() {
  return "  \"family\": \"dropout\",\n  \"tool\": \"Frama-C 25 WP (-wp-rte, -wp-model real), EVA, cvc5 1.0.3, z3 4.8.12\",\n"
}
function json_tail() {
  return sprintf("  \"wp_goals_proved\": %d,\n  \"wp_goals_total\": %d,\n", tp, tt) \
    sprintf("  \"eva\": {\"harness\": \"proofs/eva_dropout.c\", \"n_max\": %d, \"alarms_f32\": %d, \"alarms_f64\": %d,\n          \"ranges\": \"0 <= n <= %d; |x|, |dy|, |dx| <= 1.0e4; mask in {0, 1}; p in [0, 0.999]\"},\n", evanmax, eva32, eva64, evanmax) \
    sprintf("  \"seconds\": %d\n", secs)
}
function total_line() {
  return sprintf("TOTAL WP goals: %d/%d   EVA alarms (n <= %d): f32 %d, f64 %d   (%d s)", tp, tt, evanmax, eva32, eva64, secs)
}
