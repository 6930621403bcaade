# Per-kernel summary of WP logs for proofs/rmsnorm.sh and proofs/residual.sh (the same table and JSON
# layout as proofs/prove.sh writes for LayerNorm).  Variables: family (rmsnorm|residual), json,
# eva32, eva64, evanmax, secs.  Exit 1 if any goal or smoke test is not proved.
function kernel(g) {
  sub(/^typed_(real_|fperr_)?/, "", g)
  if (family == "rmsnorm") {
    if (g ~ /^lemma_rq_|^(rms_sq|rms_add|sumsq)_f(32|64)_/) return "sumsq_error (Gappa)"
    if (g ~ /^(rmsnorm_row_forward|rms_y|rms_w|lemma_sq_nonneg)_f32/ || g ~ /^sqrtf_/) return "rmsnorm_row_forward_f32"
    if (g ~ /^(rmsnorm_row_forward|rms_y|rms_w|lemma_sq_nonneg)_f64/ || g ~ /^sqrt_/) return "rmsnorm_row_forward_f64"
    if (g ~ /^(rmsnorm_row_backward|rms_backward_apply|rms_dx|rms_acc_prod)_f32/) return "rmsnorm_row_backward_f32"
    if (g ~ /^(rmsnorm_row_backward|rms_backward_apply|rms_dx|rms_acc_prod)_f64/) return "rmsnorm_row_backward_f64"
    if (g ~ /^rmsnorm_forward_f32/) return "rmsnorm_forward_f32"
    if (g ~ /^rmsnorm_forward_f64/) return "rmsnorm_forward_f64"
    if (g ~ /^rmsnorm_backward_f32/) return "rmsnorm_backward_f32"
    if (g ~ /^rmsnorm_backward_f64/) return "rmsnorm_backward_f64"
    if (g ~ /^rms_lemma_row_offset/) return "drivers_lemma_row_offset"
  } else {
    if (g ~ /^lemma_rs_|^residual_add_f(32|64)_/) return "residual_add (Gappa)"
    if (g ~ /^residual_forward_f32/) return "residual_forward_f32"
    if (g ~ /^residual_forward_f64/) return "residual_forward_f64"
    if (g ~ /^residual_backward_f32/) return "residual_backward_f32"
    if (g ~ /^residual_backward_f64/) return "residual_backward_f64"
  }
  return "other"
}
/^\[wp\] \[[^]]*\] (Goal|Smoke-test) / {
  st = $0; sub(/^\[wp\] \[/, "", st); sub(/\] (Goal|Smoke-test) .*/, "", st)
  line = $0; sub(/^\[wp\] \[[^]]*\] /, "", line)
  smoke = (line ~ /^Smoke-test/)
  sub(/^(Goal|Smoke-test) /, "", line); name = line; sub(/ .*/, "", name)
  k = kernel(name); K[k] = 1
  ok = 0; prover = ""
  if (smoke) { if (st == "Passed") ok = 1; prover = "smoke" }
  else if (line ~ / : Valid/) { ok = 1; prover = st; if (prover ~ /^Z3.*noFP/) prover = "Z3_noFP"; else if (prover ~ /^Z3/) prover = "Z3"; else if (prover ~ /^CVC5/) prover = "CVC5"; else if (prover ~ /^Gappa/) prover = "Gappa" }
  if (smoke) { ST[k]++; if (ok) SP[k]++; else { bad[++nb] = name } }
  else { T[k]++; if (ok) { P[k]++; PP[k, prover]++; PR[prover] = 1 } else { bad[++nb] = name } }
}
END {
  n = 0; for (k in K) keys[++n] = k
  for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (keys[j] < keys[i]) { t = keys[i]; keys[i] = keys[j]; keys[j] = t }
  printf "%-30s %8s %6s   %s\n", "kernel (with its helpers)", "proved", "smoke", "by prover"
  gfile = (family == "rmsnorm" ? "proofs/gappa_rmsnorm_sumsq.c" : "proofs/gappa_residual.c")
  gkey = (family == "rmsnorm" ? "sumsq_error (Gappa)" : "residual_add (Gappa)")
  harness = "proofs/eva_" family ".c"
  ranges = (family == "rmsnorm" ? "1 <= n <= " evanmax "; |x|, |gamma|, |dy| <= 1.0e4; eps in [1.0e-12, 1]; offset in {0, 1}" \
                                : "0 <= n <= " evanmax "; |x|, |f|, |dy|, |dx|, |df| <= 1.0e4, and <= 0x1p126 (float) / 0x1p1022 (double)")
  printf "{\n  \"family\": \"%s\",\n  \"tool\": \"Frama-C 25 WP (-wp-rte, -wp-model real; %s: IEEE float model), EVA, Gappa 1.4.1, cvc5 1.0.3, z3 4.8.12\",\n  \"kernels\": {\n", family, gfile > json
  for (i = 1; i <= n; i++) {
    k = keys[i]; s = ""; js = ""
    for (p in PR) if ((k, p) in PP) { s = s sprintf(" %s:%d", p, PP[k, p]); js = js sprintf("%s\"%s\": %d", (js == "" ? "" : ", "), p, PP[k, p]) }
    printf "%-30s %4d/%-4d %2d/%-3d %s\n", k, P[k], T[k], SP[k], ST[k], s
    printf "    \"%s\": {\"goals_proved\": %d, \"goals_total\": %d, \"smoke_tests_passed\": %d, \"smoke_tests_total\": %d, \"by_prover\": {%s}}%s\n", k, P[k], T[k], SP[k], ST[k], js, (i < n ? "," : "") > json
    tp += P[k]; tt += T[k]
  }
  printf "  },\n  \"wp_goals_proved\": %d,\n  \"wp_goals_total\": %d,\n", tp, tt > json
  printf "  \"eva\": {\"harness\": \"%s\", \"n_max\": %d, \"alarms_f32\": %d, \"alarms_f64\": %d,\n          \"ranges\": \"%s\"},\n", harness, evanmax, eva32, eva64, ranges > json
  printf "  \"gappa\": {\"file\": \"%s\", \"goals_proved\": %d, \"goals_total\": %d},\n", gfile, P[gkey], T[gkey] > json
  printf "  \"seconds\": %d\n}\n", secs > json
  printf "TOTAL WP goals: %d/%d   EVA alarms (n <= %d): f32 %d, f64 %d   (%d s)\n", tp, tt, evanmax, eva32, eva64, secs
  for (i = 1; i <= nb; i++) print "UNPROVED: " bad[i]
  if (nb > 0 || tp != tt) exit 1
}
