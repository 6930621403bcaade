# The softmax kernels' part of the proof summary (proofs/wp_summary.awk; used by proofs/softmax.sh).
function kernel(g) {
  sub(/^typed_(real_)?/, "", g)
  if (match(g, /^softmax_(row_max|row_sum|row_forward|row_backward|forward|backward)_f(32|64)/)) return substr(g, 1, RLENGTH)
  if (g ~ /^softmax_(z|y)_f32|^rn_expf_/) return "softmax_row_forward_f32"
  if (g ~ /^softmax_(z|y)_f64|^rn_exp_/) return "softmax_row_forward_f64"
  if (g ~ /^softmax_dx_f32/) return "softmax_row_backward_f32"
  if (g ~ /^softmax_dx_f64/) return "softmax_row_backward_f64"
  if (g ~ /^lemma_sm_row/) return "drivers_lemma_row_offset"
  return "other"
}
function json_head() {
  return "  \"family\": \"softmax\",\n  \"tool\": \"Frama-C 25 WP (-wp-rte, -wp-model real), EVA, cvc5 1.0.3, z3 4.8.12\",\n  \"assumptions\": [\"libm_exp: rn_expf/rn_exp == \\\\exp (specs/libm.h, proofs/libm-assumptions.md)\"],\n"
}
function json_tail() {
  return sprintf("  \"wp_goals_proved\": %d,\n  \"wp_goals_total\": %d,\n", tp, tt) \
    sprintf("  \"eva\": {\"harness\": \"proofs/eva_softmax.c\", \"n_max\": %d, \"alarms_f32\": %d, \"alarms_f64\": %d,\n          \"ranges\": \"1 <= n <= %d; forward without a mask and with one, each then backward; f32: |x| <= 88, mask in [-3.0e38, 0]; f64: |x| <= 1.0e300, mask in [-1.0e300, 0]; |dy| <= 1.0e4, dx from 0\",\n          \"given_to_eva\": [\"d_nonpos: z - m <= 0\", \"s_ge_half: s >= 1/2 (s >= 1 over the reals)\"], \"given_justification\": \"proved by WP (real model); IEEE argument in proofs/README-sublayers.md\"},\n", evanmax, eva32, eva64, evanmax) \
    sprintf("  \"seconds\": %d\n", secs)
}
function total_line() {
  return sprintf("TOTAL WP goals: %d/%d   EVA alarms (n <= %d): f32 %d, f64 %d   (%d s)", tp, tt, evanmax, eva32, eva64, secs)
}
