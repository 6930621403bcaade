# RMSNorm's and the residual add's part of the proof summary (proofs/wp_summary.awk; used by
# proofs/rmsnorm.sh and proofs/residual.sh).  Variable: family (rmsnorm|residual).
function kernel(g,   fl, r) {
  fl = (FILENAME ~ /\/float_[a-z]*\.log$/)   # the float-model run on the kernels (proofs/rmsnorm_float.sh)
  sub(/^typed_(real_|fperr_)?/, "", g)
  if (fl && family == "rmsnorm") {
    if (g ~ /^lemma_rms_f(32|64)_is_f/) return "float_model_lemmas"
    if (g ~ /_f32_/ || g ~ /^sqrtf_/) return "float_model_row_forward_f32"   # sqrtf_: a smoke test of its call
    if (g ~ /_f64_/ || g ~ /^sqrt_/) return "float_model_row_forward_f64"
    return "float_model_other"
  }
  if (fl) {
    if (g ~ /^lemma_res_f(32|64)_is_f/) return "float_model_lemmas"
    if (g ~ /^(residual_forward|res_add)_f32/) return "float_model_forward_f32"
    if (g ~ /^residual_forward_f64/ || g ~ /^res_add_f64/) return "float_model_forward_f64"
    if (g ~ /^residual_backward_f32/) return "float_model_backward_f32"
    if (g ~ /^residual_backward_f64/) return "float_model_backward_f64"
    return "float_model_other"
  }
  if (family == "rmsnorm" && (r = rows_run_kernel(g)) != "") return r   # the rows run (rms_rows_run) and its lemmas
  if (family == "rmsnorm") {
    if (g ~ /^(rmsnorm_row_forward|rms_y|rms_w|lemma_sq_nonneg|rms_sq|rms_add|rms_div|rms_row_sumsq|rms_row_rstd)_f32/ || g ~ /^sqrtf_/) return "rmsnorm_row_forward_f32"
    if (g ~ /^(rmsnorm_row_forward|rms_y|rms_w|lemma_sq_nonneg|rms_sq|rms_add|rms_div|rms_row_sumsq|rms_row_rstd)_f64/ || g ~ /^sqrt_/) return "rmsnorm_row_forward_f64"
    if (g ~ /^(rmsnorm_row_backward|rms_backward_apply|rms_dx|rms_acc_prod)_f32/) return "rmsnorm_row_backward_f32"
    if (g ~ /^(rmsnorm_row_backward|rms_backward_apply|rms_dx|rms_acc_prod)_f64/) return "rmsnorm_row_backward_f64"
    if (g ~ /^rmsnorm_forward_f32/) return "rmsnorm_forward_f32"
    if (g ~ /^rmsnorm_forward_f64/) return "rmsnorm_forward_f64"
    if (g ~ /^rmsnorm_backward_f32/) return "rmsnorm_backward_f32"
    if (g ~ /^rmsnorm_backward_f64/) return "rmsnorm_backward_f64"
    if (g ~ /^rms_lemma_row(s_before|_offset)/) return "drivers_lemma_row_offset"
  } else {
    if (g ~ /^residual_forward_f32/ || g ~ /^res_add_f32/) return "residual_forward_f32"
    if (g ~ /^residual_forward_f64/ || g ~ /^res_add_f64/) return "residual_forward_f64"
    if (g ~ /^residual_backward_f32/) return "residual_backward_f32"
    if (g ~ /^residual_backward_f64/) return "residual_backward_f64"
  }
  return "other"
}
function kfile() { return family == "rmsnorm" ? "ref/rmsnorm.c" : "ref/residual.c" }
function json_head() {
  return sprintf("  \"family\": \"%s\",\n  \"tool\": \"Frama-C 25 WP (-wp-rte, -wp-model real; float_model_*: IEEE float model on %s itself, proofs/rmsnorm_float.sh), EVA, Gappa 1.4.1, cvc5 1.0.3, z3 4.8.12\",\n", family, kfile())
}
function json_tail(   k, fp, ft, fg, ranges) {
  for (k in K) if (k ~ /^float_model_/) { fp += P[k]; ft += T[k]; fg += PP[k, "Gappa"] }
  ranges = (family == "rmsnorm" ? "1 <= n <= " evanmax "; |x|, |gamma|, |dy| <= 1.0e4; eps in [1.0e-12, 1]; offset in {0, 1}" \
                                : "0 <= n <= " evanmax "; |x|, |f|, |dy|, |dx|, |df| <= 1.0e4, and <= 0x1p126 (float) / 0x1p1022 (double)")
  return sprintf("  \"wp_goals_proved\": %d,\n  \"wp_goals_total\": %d,\n", tp, tt) \
    sprintf("  \"eva\": {\"harness\": \"proofs/eva_%s.c\", \"n_max\": %d, \"alarms_f32\": %d, \"alarms_f64\": %d,\n          \"ranges\": \"%s\"},\n", family, evanmax, eva32, eva64, ranges) \
    sprintf("  \"float_model\": {\"file\": \"%s\", \"goals_proved\": %d, \"goals_total\": %d, \"by_gappa\": %d},\n", kfile(), fp, ft, fg) \
    sprintf("  \"seconds\": %d\n", secs)
}
function total_line() {
  return sprintf("TOTAL WP goals: %d/%d   EVA alarms (n <= %d): f32 %d, f64 %d   (%d s)", tp, tt, evanmax, eva32, eva64, secs)
}
