# The skip + norm kernels' part of the proof summary (proofs/wp_summary.awk; used by proofs/skip.sh).
function kernel(g) {
  sub(/^typed_(real_)?/, "", g)
  # the rows run (proofs/skip.sh): its lemma pass, its index ghost functions per family, and the
  # kernels' rows contracts per family, direction and dtype
  if (FILENAME ~ /\/rows_lemmas\.log$/) return "rows_composed_lemmas"
  if (FILENAME ~ /\/rows\.log$/) {
    fam = (g ~ /rms/ ? "skip_rmsnorm" : "skip_layernorm")
    if (g ~ /_lemma_/) return "rows_composed_" fam "_index"
    return "rows_composed_" fam (g ~ /backward/ ? "_backward_" : "_forward_") (g ~ /f64/ ? "f64" : "f32")
  }
  # the ACSL index lemmas and the ghost lemma functions (skip_*_lemma_row, _rows_fit) of each file
  if (g ~ /^(lemma_)?skip_ln_/) return "skip_layernorm_lemmas"
  if (g ~ /^(lemma_)?skip_rms_/) return "skip_rmsnorm_lemmas"
  if (match(g, /^skip_(layernorm|rmsnorm)_(forward|backward)_f(32|64)/)) return substr(g, 1, RLENGTH)
  if (g ~ /_wp_smoke_dead_call_/) return "calls_reachable"
  return "other"
}
function json_head() {
  return "  \"tool\": \"Frama-C 25 WP (-wp-rte, -wp-model real, ref/skip_*.c only), cvc5 1.0.3, z3 4.8.12\",\n"
}
function json_tail() {
  return sprintf("  \"wp_goals_proved\": %d,\n  \"wp_goals_total\": %d,\n  \"smoke_tests_passed\": %d,\n  \"smoke_tests_total\": %d,\n", tp, tt, sp, stt) \
    sprintf("  \"eva\": {\"harness\": \"proofs/eva_skip.c\", \"n_max\": %d, \"alarms_f32\": %d, \"alarms_f64\": %d,\n          \"ranges\": \"1 <= rows <= 2, 1 <= n <= %d; |x|, |skip|, |bias| <= 3.0e3; |gamma|, |beta|, |dy| <= 1.0e4; eps in [1.0e-12, 1]; with and without bias; RMSNorm offset 0 and 1\",\n          \"options\": \"-eva-precision 3; the skip kernels and the bodies of every callee\"},\n  \"seconds\": %d\n", evanmax, eva32, eva64, evanmax, secs)
}
function total_line() {
  return sprintf("TOTAL WP goals: %d/%d   smoke tests: %d/%d   EVA alarms (n <= %d): f32 %d, f64 %d   (%d s)", tp, tt, sp, stt, evanmax, eva32, eva64, secs)
}
