# The ffn kernels' part of the proof summary (proofs/wp_summary.awk; used by proofs/ffn.sh).
function kernel(g) {
  sub(/^typed_(real_)?/, "", g)
  if (match(g, /^ffn_(relu_grad|relu|gelu_tanh_grad|gelu_tanh|gelu_grad|gelu|act_forward|act_backward|forward|backward|fill)_f(32|64)/)) return substr(g, 1, RLENGTH)
  if (g ~ /^ffn_lemma_rows_fit/) return "ffn_lemma_rows_fit"
  if (g ~ /^lemma_ffn_/) return "ffn_rows_lemmas"
  return "other"
}
function json_head() {
  return "  \"family\": \"ffn\",\n  \"tool\": \"Frama-C 25 WP (-wp-rte, -wp-model real), EVA, cvc5 1.0.3, z3 4.8.12\",\n  \"assumptions\": [\"libm_exp: rn_expf/rn_exp == \\\\exp\", \"libm_erf: rn_erff/rn_erf == rn_real_erf (declared, undefined)\", \"libm_tanh: rn_tanhf/rn_tanh == \\\\tanh (specs/libm.h, proofs/libm-assumptions.md)\", \"the linear and dropout kernels' contracts (specs/linear.h, specs/dropout.h; proved by prove-linear, prove-dropout)\", \"rows run (z_rows, h_def, y_rows; dw2_sum, db2_sum, dz_rows, dx_rows, dw1_sum, db1_sum, under its extra precondition sep_mask_db, specs/ffn_bwd_rows.h): linear_forward's y_rows, linear_backward's dx_rows, dw_sum and db_sum, and the lemmas lin_dot_shift, lin_dot_at_frame, lin_sdot_off_eq, lin_sdot_off_frame of specs/linear_rows.h (proved by prove-linear's rows run)\"],\n"
}
function json_tail() {
  return sprintf("  \"wp_goals_proved\": %d,\n  \"wp_goals_total\": %d,\n", tp, tt) \
    sprintf("  \"eva\": {\"harness\": \"proofs/eva_ffn.c\", \"n_max\": %d, \"alarms_f32\": %d, \"alarms_f64\": %d,\n          \"ranges\": \"0 <= n <= %d; |z|, |g| <= 1.0e4; relu, gelu, gelu_tanh; erf/tanh stubs: finite, in [-1, 1]\"},\n", evanmax, eva32, eva64, evanmax) \
    sprintf("  \"seconds\": %d\n", secs)
}
function total_line() {
  return sprintf("TOTAL WP goals: %d/%d   EVA alarms (n <= %d): f32 %d, f64 %d   (%d s)", tp, tt, evanmax, eva32, eva64, secs)
}
