#!/usr/bin/env bash
# `make prove-mutants-full`, RMSNorm and residual part: proof regression.  Each proofs/mutants/rmsnorm_*.patch
# (residual_*.patch) is a wrong ref/rmsnorm.c (ref/residual.c) that is exact over the reals (so the
# real-model proofs accept it) but wrong in float, or (rmsnorm_row0_everywhere, expect: rows:) meets
# every row-kernel contract but computes the wrong rows: that one gets the rows run (rms_rows_run).  For each, a copy of ref/, specs/ and the prover
# settings is patched in a temporary folder and the float-model WP run of proofs/rmsnorm_float.sh
# (rms_float_run / res_float_run: the same passes as in make prove, replaying a copy of its cache: a goal
# the mutation leaves unchanged is the same goal, anything else is proved anew) is run on it.  The
# target fails unless the proof REJECTS every mutant (at least one goal unproved), and unless the same
# runs on the unpatched copy (the control) prove every goal: so a rejection is the mutant's doing, not
# the runner's.  See proofs/mutants/README.md.  (proofs/mutants.sh does the same for LayerNorm.)
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/rmsnorm_float.sh"
proof_init prove-mutants-rmsnorm build/proofs/mutants_rmsnorm
OUT=$PWD/$OUT   # absolute: each run is made in a temporary copy

# run_copy NAME FAMILY [PATCH]: FAMILY rms|res (the float-model run) or rows (RMSNorm's rows run,
# rms_rows_run: a mutant whose expect: line is a rows selection, e.g. rmsnorm_row0_everywhere, which
# the float-model run accepts); prints the goals that are not Valid; exit 1 if any.
run_copy() {
  local name=$1 fam=$2 patch=${3:-} tmp log session runner=${2}_float_run
  case $fam in rms) session=proofs/session_rmsnorm_float;; res) session=proofs/session_residual_float;;
    rows) session=proofs/session_rmsnorm_rows; runner=rms_rows_run;; esac
  tmp=$(mktemp -d)
  mkdir -p "$tmp/proofs"
  cp -r ref specs cli "$tmp/"
  cp proofs/fperr.mlw proofs/fperr.driver proofs/gappa_wp.drv "$tmp/proofs/"
  cp -r "$session" "$tmp/proofs/"
  sed "s#proofs/gappa_wp.drv#$tmp/proofs/gappa_wp.drv#" proofs/why3.conf > "$tmp/proofs/why3.conf"
  if [ -n "$patch" ] && ! patch -s -d "$tmp" -p1 < "$patch"; then
    echo "$PROOF_NAME: $patch does not apply to ref/ (update the mutant)"; rm -rf "$tmp"; return 2
  fi
  log="$OUT/$name.log"
  (cd "$tmp" && export WHY3CONFIG="$tmp/proofs/why3.conf" && OUT="$OUT/$name" && mkdir -p "$OUT" &&
   WP_CACHE=replay && "$runner" "$session")
  cat "$OUT/$name"/*.log > "$log"
  rm -rf "$tmp"
  grep -E '^\[wp\] \[[^]]*\] Goal ' "$log" | grep -v ' : Valid' | sed 's/^\[wp\] \[[^]]*\] Goal /  unproved: /'
  grep -qE '^\[wp\] \[[^]]*\] Goal ' "$log" || { echo "  (no goal found: see $log)"; return 2; }
  ! grep -E '^\[wp\] \[[^]]*\] Goal ' "$log" | grep -qv ' : Valid'
}

for fam in rms res rows; do
  echo "control $fam (ref/ unpatched): every goal must be proved"
  if run_copy "control_$fam" "$fam"; then echo "  ok"; else echo "$PROOF_NAME: the $fam control run does not prove every goal"; status=1; fi
done
for p in proofs/mutants/rmsnorm_*.patch proofs/mutants/residual_*.patch; do
  [ -e "$p" ] || continue
  m=$(basename "$p" .patch)
  case $m in rmsnorm_*) fam=rms;; *) fam=res;; esac
  grep -q '^expect: rows:' "$p" && fam=rows
  echo "mutant $m: the proof must reject it"
  run_copy "$m" "$fam" "$p"; rc=$?
  case $rc in
    1) echo "  rejected";;
    0) echo "$PROOF_NAME: mutant $m is ACCEPTED by the proofs"; status=1;;
    *) status=1;;
  esac
done
[ "$status" -eq 0 ] && echo "$PROOF_NAME: every mutant rejected, controls proved" || echo "$PROOF_NAME: FAILED"
exit "$status"
