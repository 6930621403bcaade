#!/usr/bin/env bash
# `make prove-mutants-full` (LayerNorm part): proof regression, the full runs (the fast check of
# `make prove` is proofs/mutants_fast.sh).  Each proofs/mutants/*.patch is a wrong kernel that is exact
# over the reals (so the real-model proofs accept it) but wrong in float.  For each, a copy of ref/,
# specs/ and the prover settings is patched in a temporary folder and the float-model WP run
# (proofs/layernorm_float.sh, the same three passes as in make prove, replaying a copy of its cache
# proofs/session_float: a goal the mutation leaves unchanged is the same goal, anything else is proved
# anew) is run on the kernels' f32 forward functions, and the rows run (ln_rows_run: the rows x n forward
# drivers' functional contract, replaying a copy of proofs/session_rows).  The target fails unless the proof REJECTS every mutant (at least
# one goal unproved), and unless the same run on the unpatched copy (the control) proves every goal:
# so a rejection is the mutant's doing, not the runner's.  See proofs/mutants/README.md.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/layernorm_float.sh"
proof_init prove-mutants build/proofs/mutants
OUT=$PWD/$OUT   # absolute: each run is made in a temporary copy

# run_copy NAME [PATCH]: prints the goals that are not Valid; exit 1 if there are any.
run_copy() {
  local name=$1 patch=${2:-} tmp log
  tmp=$(mktemp -d)
  mkdir -p "$tmp/proofs"
  cp -r ref specs cli "$tmp/"
  cp proofs/fperr.mlw proofs/fperr.driver proofs/gappa_wp.drv "$tmp/proofs/"
  cp -r proofs/session_float proofs/session_rows "$tmp/proofs/"
  sed "s#proofs/gappa_wp.drv#$tmp/proofs/gappa_wp.drv#" proofs/why3.conf > "$tmp/proofs/why3.conf"
  if [ -n "$patch" ] && ! patch -s -d "$tmp" -p1 < "$patch"; then
    echo "$PROOF_NAME: $patch does not apply to ref/ (update the mutant)"; rm -rf "$tmp"; return 2
  fi
  log="$OUT/$name.log"
  # the same run as make prove's (proofs/layernorm_float.sh), on the copy, replaying a copy of its cache
  (cd "$tmp" && export WHY3CONFIG="$tmp/proofs/why3.conf" && OUT="$OUT/$name" && mkdir -p "$OUT" &&
   WP_CACHE=replay && ln_float_run proofs/session_float; ln_rows_run proofs/session_rows)
  cat "$OUT/$name"/float_*.log "$OUT/$name"/rows.log > "$log"
  rm -rf "$tmp"
  grep -E '^\[wp\] \[[^]]*\] Goal ' "$log" | grep -v ' : Valid' | sed 's/^\[wp\] \[[^]]*\] Goal /  unproved: /'
  grep -qE '^\[wp\] \[[^]]*\] Goal ' "$log" || { echo "  (no goal found: see $log)"; return 2; }
  # count, not grep -q: under pipefail an early-exiting grep -q can make the first grep die of SIGPIPE,
  # and the pipeline's status would then say "no unproved goal" (a rejected mutant read as accepted)
  local unproved
  unproved=$(grep -E '^\[wp\] \[[^]]*\] Goal ' "$log" | grep -vc ' : Valid')
  [ "$unproved" -eq 0 ]
}

echo "control (ref/ unpatched): every goal must be proved"
if run_copy control; then echo "  ok"; else echo "$PROOF_NAME: the control run does not prove every goal"; status=1; fi
for p in proofs/mutants/*.patch; do
  # the LayerNorm mutants only (proofs/mutants_rmsnorm.sh runs those of ref/rmsnorm.c, ref/residual.c)
  grep -q '^+++ b/ref/layernorm.c' "$p" || continue
  m=$(basename "$p" .patch)
  echo "mutant $m: the proof must reject it"
  run_copy "$m" "$p"; rc=$?
  case $rc in
    1) echo "  rejected";;
    0) echo "$PROOF_NAME: mutant $m is ACCEPTED by the proofs"; status=1;;
    *) status=1;;
  esac
done
[ "$status" -eq 0 ] && echo "$PROOF_NAME: every mutant rejected, control proved" || echo "$PROOF_NAME: FAILED"
exit "$status"
