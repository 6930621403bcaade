# The linear kernels' part of the proof summary (proofs/wp_summary.awk; used by proofs/linear.sh).
# Goals of the float-model run (build/proofs/linear/float_*.log, proofs/linear_float.sh) are counted
# apart, as float_model_* rows; those of the rows run (rows.log, rows_lemmas.log) as rows_composed_*.
function kernel(g,   fl, r) {
  fl = (FILENAME ~ /\/float_[a-z]*\.log$/)
  sub(/^typed_(real_|fperr_)?/, "", g)
  # the rows run (proofs/linear.sh): its ghost index lemmas apart, then its drivers and lemma pass
  if (FILENAME ~ /\/rows\.log$/ && g ~ /^lemma_lin/) return "rows_composed_index_lemmas"
  if ((r = rows_run_kernel(g)) != "") return r
  if (fl) {
    if (g ~ /^lemma_lin_f(32|64)_is_f/) return "float_model_lemmas"
    if (g ~ /^(linear_dot|lin_mul|lin_add|lemma_lin_dot_hints)_f32/) return "float_model_dot_f32"
    if (g ~ /^(linear_dot|lin_mul|lin_add|lemma_lin_dot_hints)_f64/) return "float_model_dot_f64"
    if (g ~ /^(linear_sdot|lemma_lin_sdot_hints)_f32/) return "float_model_sdot_f32"
    if (g ~ /^(linear_sdot|lemma_lin_sdot_hints)_f64/) return "float_model_sdot_f64"
    return "float_model_other"
  }
  if (g ~ /^lemma_lin_dot_hints_f(32|64)/) return "linear_dot_" substr(g, 21, 3)
  if (g ~ /^lemma_lin_sdot_hints_f(32|64)/) return "linear_sdot_" substr(g, 22, 3)
  if (g ~ /^lemma_lin_|^lin_acc_prod/) return "index_lemmas"
  if (g ~ /^lin_(mul|add)_f(32|64)/) return "linear_dot_" substr(g, 9, 3)
  if (match(g, /^linear_(dot|sdot|row_forward|row_backward|forward|backward)_f(32|64)/)) return substr(g, 1, RLENGTH)
  if (g ~ /^linear_acc_row_f32/) return "linear_row_backward_f32"
  if (g ~ /^linear_acc_row_f64/) return "linear_row_backward_f64"
  return "other"
}
function json_head() {
  return "  \"family\": \"linear\",\n  \"tool\": \"Frama-C 25 WP (-wp-rte, -wp-model real; float_model_*: IEEE float model on ref/linear.c itself, proofs/linear_float.sh), EVA, Gappa 1.4.1, cvc5 1.0.3, z3 4.8.12\",\n"
}
function json_tail(   k, fp, ft, fg) {
  for (k in K) if (k ~ /^float_model_/) { fp += P[k]; ft += T[k]; fg += PP[k, "Gappa"] }
  return sprintf("  \"wp_goals_proved\": %d,\n  \"wp_goals_total\": %d,\n", tp, tt) \
    sprintf("  \"eva\": {\"harness\": \"proofs/eva_linear.c\", \"n_max\": %d, \"alarms_f32\": %d, \"alarms_f64\": %d,\n          \"ranges\": \"drivers: 1 <= in <= %d, 1 <= out <= 4, 1 <= rows <= 2; dot helpers: 1 <= n <= 4096; |x|, |W|, |b|, |dy| <= 1.0e4\"},\n", evanmax, eva32, eva64, evanmax) \
    sprintf("  \"float_model\": {\"file\": \"ref/linear.c\", \"goals_proved\": %d, \"goals_total\": %d, \"by_gappa\": %d,\n", fp, ft, fg) \
    "                  \"proved\": \"linear_dot_f32/f64, linear_sdot_f32/f64: |result - (acc + sum x_k w_k)| <= (1 + 2^-11)(n + 1) u (|acc| + sum |x_k w_k|) + n 2^-149 (f64: n 2^-1074), 1 <= n <= 4096, |x_k|, |w_k| <= 2^50, |acc| <= 2^100 (specs/fperr_linear.h)\"},\n" \
    sprintf("  \"seconds\": %d\n", secs)
}
function total_line() {
  return sprintf("TOTAL WP goals: %d/%d   EVA alarms (in, n <= %d): f32 %d, f64 %d   (%d s)", tp, tt, evanmax, eva32, eva64, secs)
}
