# Per-kernel summary of WP logs, shared by every proof script (proofs/lib.sh: proof_summary).  Run
# after a family file that defines kernel(goal), json_head(), json_tail() and total_line() (see
# proofs/lib.sh).  Variables: json (the results file), secs, eva32, eva64, evanmax, smoke_set (which
# smoke tests ran: proofs/lib.sh, smoke_select), and the family's.
# Exit 1 if any goal or smoke test is not proved, or if no goal was found at all.
# The row of a goal of a rows run (proof_wp_rows in proofs/lib.sh: rows.log, rows_lemmas.log), for the
# families that have one: its lemma pass, else the forward or backward drivers per dtype; "" for a
# goal of another log.  g: the goal's name.
function rows_run_kernel(g) {
  if (FILENAME ~ /\/rows_lemmas\.log$/) return "rows_composed_lemmas"
  if (FILENAME !~ /\/rows\.log$/) return ""
  return "rows_composed_" (g ~ /backward/ ? "backward_" : "forward_") (g ~ /f64/ ? "f64" : "f32")
}
/^\[wp\] \[[^]]*\] (Goal|Smoke-test) / {
  st = $0; sub(/^\[wp\] \[/, "", st); sub(/\] (Goal|Smoke-test) .*/, "", st)
  line = $0; sub(/^\[wp\] \[[^]]*\] /, "", line)
  smoke = (line ~ /^Smoke-test/)
  sub(/^(Goal|Smoke-test) /, "", line); name = line; sub(/ .*/, "", name)
  k = kernel(name); K[k] = 1
  ok = 0; prover = ""
  if (smoke) { if (st == "Passed") ok = 1; prover = "smoke" }
  else if (line ~ / : Valid/) {
    ok = 1; prover = st
    if (prover ~ /^Z3.*noFP/) prover = "Z3_noFP"; else if (prover ~ /^Z3/) prover = "Z3"
    else if (prover ~ /^CVC5/) prover = "CVC5"; else if (prover ~ /^Gappa/) prover = "Gappa"
    else if (prover == "Qed") prover = "Qed"
    else if (prover == "Script") prover = "Script_induction"   # a committed TIP script (Wp.induction)
    else prover = "other:" prover
  }
  if (smoke) { ST[k]++; if (ok) SP[k]++; else { bad[++nb] = name } }
  else { T[k]++; if (ok) { P[k]++; PP[k, prover]++; PR[prover] = 1 } else { bad[++nb] = name } }
}
END {
  n = 0; for (k in K) keys[++n] = k
  for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (keys[j] < keys[i]) { t = keys[i]; keys[i] = keys[j]; keys[j] = t }
  printf "%-30s %8s %6s   %s\n", "kernel (with its helpers)", "proved", "smoke", "by prover"
  printf "{\n%s", json_head() > json
  if (smoke_set != "") printf "  \"smoke_tests_set\": \"%s\",\n", smoke_set > json
  printf "  \"kernels\": {\n" > json
  for (i = 1; i <= n; i++) {
    k = keys[i]; s = ""; js = ""
    for (p in PR) if ((k, p) in PP) { s = s sprintf(" %s:%d", p, PP[k, p]); js = js sprintf("%s\"%s\": %d", (js == "" ? "" : ", "), p, PP[k, p]) }
    printf "%-30s %4d/%-4d %2d/%-3d %s\n", k, P[k], T[k], SP[k], ST[k], s
    printf "    \"%s\": {\"goals_proved\": %d, \"goals_total\": %d, \"smoke_tests_passed\": %d, \"smoke_tests_total\": %d, \"by_prover\": {%s}}%s\n", k, P[k], T[k], SP[k], ST[k], js, (i < n ? "," : "") > json
    tp += P[k]; tt += T[k]; sp += SP[k]; stt += ST[k]
  }
  printf "  },\n%s}\n", json_tail() > json
  print total_line()
  for (i = 1; i <= nb; i++) print "UNPROVED: " bad[i]
  if (nb > 0 || tp != tt || tt == 0) exit 1
}
