#!/usr/bin/env bash
# `make prove-skip`: WP (real model) on the fused residual + norm kernels of ref/skip_layernorm.c and
# ref/skip_rmsnorm.c, from the contracts of their callees (specs/residual.h, specs/layernorm.h,
# specs/rmsnorm.h; those are proved by `make prove`, `make prove-residual`, `make prove-rmsnorm`).
# Same setup as proofs/prove.sh: exits non-zero on any unproved goal, failed smoke test, or unsound
# ACSL literal / admit / axiom; writes proofs/results/skip.json and prints a per-kernel table.
# No EVA here: the skip kernels do no float arithmetic of their own except the dbias column sums
# (see proofs/README-skip.md).
# Environment: WP_CACHE=replay|update|offline|none (default replay; `make prove-skip WP_CACHE=update`
# refreshes proofs/session_skip), WP_TIMEOUT (default 20 s).
set -u -o pipefail
cd "$(dirname "$0")/.."
export WHY3CONFIG="$PWD/proofs/why3.conf"      # project-local: never ~/.why3.conf
OUT=build/proofs/skip
mkdir -p "$OUT" proofs/results
WP_CACHE=${WP_CACHE:-replay}
WP_TIMEOUT=${WP_TIMEOUT:-20}
CPP="-Iref -Ispecs -Icli"
FILES="specs/skip_layernorm.h specs/skip_rmsnorm.h ref/skip_layernorm.c ref/skip_rmsnorm.c"
status=0
t0=$(date +%s)

# ---- 0. soundness greps: ACSL float literals like 1e6 (read as 1.6 by Frama-C 25); admit/axiom --
bad=$(awk '
  FNR == 1 { inann = 0 }
  { line = $0; ann = 0
    if (inann || line ~ /\/\*@|\/\/@/) ann = 1
    if (line ~ /\/\*@/) inann = 1
    if (inann && line ~ /\*\//) inann = 0
    if (ann && line ~ /(^|[^0-9A-Za-z_.x])[0-9]+e[0-9]/) print FILENAME ":" FNR ": " line }
' $FILES)
if [ -n "$bad" ]; then
  echo "prove-skip: ACSL float literal without '.' or sign in the exponent:"; echo "$bad"; status=1
fi
if grep -nE '\badmit\b|\baxiom [A-Za-z_]+ *:' $FILES; then
  echo "prove-skip: 'admit' or 'axiom' found in ACSL"; status=1
fi

# ---- 1. WP, real model, on the skip kernels only --------------------------------------------------
# Only ref/skip_*.c are parsed: the callees (residual_forward_*, layernorm_*, rmsnorm_*) have no body
# here, so WP uses their contracts (from specs/*.h) and proves nothing about them; the skip kernels
# are the only functions with a body.  No -wp-fct: with it WP would skip the ACSL lemmas of the two
# files (index facts of the rows x n layout), which must be proved too.  The smoke tests
# `<callee>_wp_smoke_dead_call_sN` check that each call of a skip kernel is reachable.
frama-c -cpp-extra-args="$CPP" ref/skip_layernorm.c ref/skip_rmsnorm.c \
  -wp -wp-rte -wp-model real -wp-prover qed,cvc5,z3 -wp-par 2 \
  -wp-timeout "$WP_TIMEOUT" -wp-smoke-tests -wp-session proofs/session_skip -wp-cache "$WP_CACHE" \
  -then -report-classify -report-unclassified-unknown ERROR > "$OUT/wp.log" 2>&1
wp_rc=$?

# ---- 2. summary -----------------------------------------------------------------------------
t1=$(date +%s)
awk -v secs=$((t1 - t0)) -v json=proofs/results/skip.json '
function kernel(g) {
  sub(/^typed_(real_)?/, "", g)
  if (g ~ /^lemma_skip_ln_/) return "skip_layernorm_lemmas"
  if (g ~ /^lemma_skip_rms_/) return "skip_rmsnorm_lemmas"
  if (match(g, /^skip_(layernorm|rmsnorm)_(forward|backward)_f(32|64)/)) return substr(g, 1, RLENGTH)
  if (g ~ /_wp_smoke_dead_call_/) return "calls_reachable"
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
  else if (line ~ / : Valid/) { ok = 1; prover = st; if (prover ~ /^Z3/) prover = "Z3"; else if (prover ~ /^CVC5/) prover = "CVC5"; else if (prover == "Qed") prover = "Qed"; else prover = "other:" prover }
  if (smoke) { ST[k]++; if (ok) SP[k]++; else { bad[++nb] = name } }
  else { T[k]++; if (ok) { P[k]++; PP[k, prover]++; PR[prover] = 1 } else { bad[++nb] = name } }
}
END {
  n = 0; for (k in K) keys[++n] = k
  for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (keys[j] < keys[i]) { t = keys[i]; keys[i] = keys[j]; keys[j] = t }
  printf "%-30s %8s %6s   %s\n", "kernel", "proved", "smoke", "by prover"
  printf "{\n  \"tool\": \"Frama-C 25 WP (-wp-rte, -wp-model real, ref/skip_*.c only), cvc5 1.0.3, z3 4.8.12\",\n  \"kernels\": {\n" > json
  for (i = 1; i <= n; i++) {
    k = keys[i]; s = ""; js = ""
    for (p in PR) if ((k, p) in PP) { s = s sprintf(" %s:%d", p, PP[k, p]); js = js sprintf("%s\"%s\": %d", (js == "" ? "" : ", "), p, PP[k, p]) }
    printf "%-30s %4d/%-4d %2d/%-3d %s\n", k, P[k], T[k], SP[k], ST[k], s
    printf "    \"%s\": {\"goals_proved\": %d, \"goals_total\": %d, \"smoke_tests_passed\": %d, \"smoke_tests_total\": %d, \"by_prover\": {%s}}%s\n", k, P[k], T[k], SP[k], ST[k], js, (i < n ? "," : "") > json
    tp += P[k]; tt += T[k]; sp += SP[k]; stt += ST[k]
  }
  printf "  },\n  \"wp_goals_proved\": %d,\n  \"wp_goals_total\": %d,\n  \"smoke_tests_passed\": %d,\n  \"smoke_tests_total\": %d\n}\n", tp, tt, sp, stt > json
  printf "TOTAL WP goals: %d/%d   smoke tests: %d/%d   (%d s)\n", tp, tt, sp, stt, secs
  for (i = 1; i <= nb; i++) print "UNPROVED: " bad[i]
  if (nb > 0 || tp != tt || tt == 0) exit 1
}' "$OUT/wp.log" || status=1

[ "$wp_rc" -eq 0 ] || { echo "prove-skip: WP / report-classify failed (see $OUT/wp.log)"; status=1; }
[ "$status" -eq 0 ] && echo "prove-skip: all goals proved" || echo "prove-skip: FAILED"
exit "$status"
