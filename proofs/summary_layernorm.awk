# LayerNorm's part of the proof summary (proofs/wp_summary.awk; used by proofs/prove.sh).
function kernel(g,   fl, r) {
  fl = (FILENAME ~ /\/float_[a-z]*\.log$/)   # the float-model run on ref/layernorm.c (proof_wp_float's logs)
  sub(/^typed_(real_|fperr_)?/, "", g)
  if (fl) return "float_model_row_forward_f32"
  # In the real model a float overflow/NaN goal reads "Prove: true" (floats are reals): closed by Qed,
  # it says nothing about floats, so it is not counted with the kernel (issue 13): its own row.
  if (FILENAME ~ /\/wp\.log$/ && g ~ /_rte_is_nan_or_infinite/) return "zz_real_model_float_rte_trivially_true"
  if ((r = rows_run_kernel(g)) != "") return r   # the rows run (ln_rows_run) and its lemmas
  if (g ~ /^lemma_(err_sum|err_mean|per_|f32_is_f32|f64_is_f64)/) return "float_error_lemmas"
  if (g ~ /^(ln_add|ln_sqdev|ln_row_mean|ln_row_rstd)_f32/) return "layernorm_row_forward_f32"
  if (g ~ /^(ln_add|ln_sqdev|ln_row_mean|ln_row_rstd)_f64/) return "layernorm_row_forward_f64"
  if (g ~ /^lemma_(sum_err_step|errb|f32_is|f64_is)/) return "sum_error"
  if (g ~ /^(add_f32|add_f64|sum_f32|sum_f64)_/) return "sum_error"
  if (g ~ /^(layernorm_row_forward|ln_affine|lemma_sq_nonneg)_?f32/ || g ~ /^layernorm_row_forward_f32/) return "layernorm_row_forward_f32"
  if (g ~ /^(layernorm_row_forward|ln_affine|lemma_sq_nonneg)_?f64/ || g ~ /^layernorm_row_forward_f64/) return "layernorm_row_forward_f64"
  if (g ~ /^(layernorm_row_backward|ln_backward_apply|ln_xhat|ln_mul|ln_div|ln_acc_prod|ln_dx)_f32/) return "layernorm_row_backward_f32"
  if (g ~ /^(layernorm_row_backward|ln_backward_apply|ln_xhat|ln_mul|ln_div|ln_acc_prod|ln_dx)_f64/) return "layernorm_row_backward_f64"
  if (g ~ /^layernorm_forward_f32/) return "layernorm_forward_f32"
  if (g ~ /^layernorm_forward_f64/) return "layernorm_forward_f64"
  if (g ~ /^layernorm_backward_f32/) return "layernorm_backward_f32"
  if (g ~ /^layernorm_backward_f64/) return "layernorm_backward_f64"
  if (g ~ /^lemma_row(s_before|_offset)/) return "drivers_lemma_row_offset"
  if (g ~ /^sqrtf_/) return "layernorm_row_forward_f32"   # smoke test of the call to sqrtf
  if (g ~ /^sqrt_/) return "layernorm_row_forward_f64"
  return "other"
}
function json_head() {
  return "  \"tool\": \"Frama-C 25 WP (-wp-rte, -wp-model real; float_model_row_forward_f32 and sum_error: IEEE float model), EVA, Gappa 1.4.1, cvc5 1.0.3, z3 4.8.12\",\n"
}
function json_tail() {
  return sprintf("  \"wp_goals_proved\": %d,\n  \"wp_goals_total\": %d,\n", tp, tt) \
    sprintf("  \"wp_goals_real_model_float_rte_trivially_true\": %d,\n", T["zz_real_model_float_rte_trivially_true"]) \
    sprintf("  \"eva\": {\"harness\": \"proofs/eva_layernorm.c\", \"n_max\": %d, \"alarms_f32\": %d, \"alarms_f64\": %d,\n          \"ranges\": \"1 <= n <= %d; |x|, |gamma|, |beta|, |dy| <= 1.0e4; eps in [1.0e-12, 1]\"},\n", evanmax, eva32, eva64, evanmax) \
    sprintf("  \"gappa\": {\"file\": \"proofs/sum_error.c\", \"goals_proved\": %d, \"goals_total\": %d, \"by_gappa\": %d,\n            \"bound\": \"|fl(sum) - sum x_i| <= 1.001 * n * u * sum |x_i|, u = 2^-24 (f32), 2^-53 (f64), 1 <= n <= 4096, |x_i| <= 2^80\"}\n", P["sum_error"], T["sum_error"], PP["sum_error", "Gappa"])
}
function total_line() {
  return sprintf("TOTAL WP goals: %d/%d, of which %d are real-model float-RTE goals (\"Prove: true\", no float claim)\n", tp, tt, T["zz_real_model_float_rte_trivially_true"]) \
    sprintf("WP goals not counting them: %d/%d   EVA alarms (n <= %d): f32 %d, f64 %d   (%d s)", tp - T["zz_real_model_float_rte_trivially_true"], tt - T["zz_real_model_float_rte_trivially_true"], evanmax, eva32, eva64, secs)
}
