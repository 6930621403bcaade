#!/usr/bin/env bash
# `make prove-mutants-fast` (run by `make prove`): the proof regression of issue 13, one goal per mutant.
#
# Each proofs/mutants/*.patch is a wrong kernel (exact over the reals, wrong in float, or wrong rows).
# Its header declares the goal(s) it must break, one selection per line,
#
#   expect: MODE:FILE[,FILE...] FUNCTIONS PROPS PROVERS
#   counterexample: <inputs for which that goal is false on the mutant, and why>
#
#   MODE       the WP setup of make prove that proves the goal on ref/:
#                float   IEEE float model, -DRESNORM_WP_FLOAT, -wp-driver proofs/fperr.driver
#                        (proof_wp_float in proofs/lib.sh; layernorm_float.sh, rmsnorm_float.sh)
#                real    real model with -wp-rte (proof_wp_real)
#                rows    real model, -DRESNORM_WP_ROWS (ln_rows_run in proofs/layernorm_float.sh,
#                        rms_rows_run in proofs/rmsnorm_float.sh)
#                bwd32   rows with -DRESNORM_WP_BWD=32 (the block's f32 backward rows pass, proofs/block.sh)
#                bwdffn32  bwd32 with -DRESNORM_WP_BWD_FFN (the block's f32 FFN wrapper and post-LN FFN passes)
#   FILE       the translation unit(s) given to frama-c (paths in the repository: ref/layernorm.c)
#   FUNCTIONS  -wp-fct (comma-separated); PROPS -wp-prop (names, comma-separated); PROVERS -wp-prover
#
# or, for EVA (a kernel that WP's real model cannot tell from the right one but whose float
# operations overflow or give NaN over the stated ranges), one selection
#
#   expect: eva:FILE[,FILE...] DEFINES
#
#   FILE       the kernels and the harness, as the target's proof_eva_start gets them
#   DEFINES    the harness's macros, comma-separated (EVA_ONLY_F32,EVA_NMAX=16: a small, quick run),
#              each passed as -D, with -DRESNORM_EVA and the options of proof_eva_start; the entry
#              warn=nan is not a macro but the run's -warn-special-float mode (the attention's masked
#              run: EVA_WARN in proofs/lib.sh; default non-finite)
#   The control must raise 0 alarms. The mutant must raise an alarm or leave unknown a property that
#   the control decided: EVA narrows its states by such a property (the mutant's NaN may hide behind
#   it), and each target's proof_eva_no_unknown fails on it.
#
# For every selection WP runs twice, on temporary copies of ref/, specs/, cli/ and the prover settings,
# with no session and -wp-cache none (nothing replayed) and a short timeout (MUT_TIMEOUT, default 3 s: the
# controls take at most 1.9 s idle, and a mutant's false goal runs its provers to the timeout)
# on the unpatched copy (the control), which must prove every selected goal, and on the patched copy
# (the mutant), which must leave at least one selected goal unproved.  Both always run with the same
# timeout: a control that does not prove its goals in time (a loaded machine: at make -j3 the block's
# backward controls missed 5 s) is run again with twice the timeout, the mutant with it, up to 8 x
# MUT_TIMEOUT; only a control that fails at 8 x fails the target (4 x until 6 December 2026, when two
# block controls, starved beside a make check, missed 12 s).  It fails on: an accepted mutant,
# a failed control, an empty selection (0 goals on either copy), a patch that does not apply, a patch
# without an expect: or counterexample: line, a malformed expect: line, a Frama-C error.
# A new patch with these lines needs no change here.  See proofs/mutants/README.md.
#
#   proofs/mutants_fast.sh [PATCH...]     default: every proofs/mutants/*.patch
# Logs: build/proofs/mutants_fast/NAME.{control,mutant}.K.log (K = the selection's line number).
source "$(dirname "$0")/lib.sh"
proof_init prove-mutants-fast build/proofs/mutants_fast
OUT=$PWD/$OUT
MUT_TIMEOUT=${MUT_TIMEOUT:-3}

# make_copy DIR: the files a WP run reads, with the Why3 config pointing at the copy's Gappa driver.
make_copy() {
  mkdir -p "$1/proofs"
  cp -r ref specs cli "$1/"
  cp proofs/eva_*.c proofs/eva_*.h "$1/proofs/"
  cp proofs/fperr.mlw proofs/fperr.driver proofs/gappa_wp.drv "$1/proofs/"
  sed "s#proofs/gappa_wp.drv#$1/proofs/gappa_wp.drv#" proofs/why3.conf > "$1/proofs/why3.conf"
}

# wp_select DIR LOG MODE FILES FCT PROPS PROVERS PAR: one uncached WP run in DIR (-wp-par PAR); prints "PROVED TOTAL"
# (TOTAL 0 when WP found no goal; "ERR" when Frama-C failed).
wp_select() {
  local dir=$1 log=$2 mode=$3 files=$4 fct=$5 props=$6 provers=$7 par=$8 opts rc
  case $mode in
    float) opts=(-cpp-extra-args="$CPP -DRESNORM_WP_FLOAT" -wp -wp-driver proofs/fperr.driver);;
    real)  opts=(-cpp-extra-args="$CPP" -wp -wp-rte -wp-model real);;
    rows)  opts=(-cpp-extra-args="$CPP -DRESNORM_WP_ROWS" -wp -wp-model real);;
    bwd32) opts=(-cpp-extra-args="$CPP -DRESNORM_WP_ROWS -DRESNORM_WP_BWD=32" -wp -wp-model real);;
    bwdffn32) opts=(-cpp-extra-args="$CPP -DRESNORM_WP_ROWS -DRESNORM_WP_BWD=32 -DRESNORM_WP_BWD_FFN" -wp -wp-model real);;
  esac
  # shellcheck disable=SC2046
  (cd "$dir" && WHY3CONFIG="$dir/proofs/why3.conf" frama-c "${opts[@]}" $(tr , ' ' <<< "$files") \
     -wp-fct "$fct" -wp-prop "$props" -wp-prover "$provers" -wp-par "$par" -wp-timeout "$T_CUR" \
     -wp-cache none < /dev/null) > "$log" 2>&1
  rc=$?
  if [ $rc -ne 0 ]; then echo ERR; return; fi
  awk '/^\[wp\] Proved goals: / { p = $4; t = $6 } END { print (t == "" ? "0 0" : p " " t) }' "$log"
}

# eva_select DIR LOG FILES DEFINES: one EVA run in DIR (proof_eva_start's options, the loops unrolled
# to EVA_NMAX + 4 or 200 when DEFINES does not set it); prints its alarm count (ERR when Frama-C failed).
eva_select() {
  local dir=$1 log=$2 files=$3 defs="-DRESNORM_EVA" d nmax=196 warn=non-finite rc
  for d in $(tr , ' ' <<< "$4"); do
    case $d in
      warn=*) warn=${d#warn=} ;;
      *) defs+=" -D$d"; [[ $d == EVA_NMAX=* ]] && nmax=${d#EVA_NMAX=} ;;
    esac
  done
  # shellcheck disable=SC2046
  (cd "$dir" && frama-c -cpp-extra-args="$CPP $defs" $(tr , ' ' <<< "$files") $(eva_opts $((nmax + 4)) "$warn") \
     < /dev/null) > "$log" 2>&1
  rc=$?
  if [ $rc -ne 0 ]; then echo ERR; return; fi
  eva_alarms "$log"
}

# eva_unknown LOG: the properties EVA left unknown, one a line, without file and line (a patch shifts them)
eva_unknown() { grep -h 'got status unknown' "$1" | sed -E 's/^.*Warning: *//; s/^ *//' | sort -u; }

# eva_selection M K FILES DEFINES: the control and the mutant of selection K of mutant M, in parallel;
# clears ok unless the control raised no alarm and the mutant raised one or left unknown a property
# that the control decided.
eva_selection() {
  local m=$1 k=$2 files=$3 defs=$4 ca ma new
  local lc="$OUT/$m.control.$k.log" lm="$OUT/$m.mutant.$k.log"
  eva_select "$CONTROL" "$lc" "$files" "$defs" > "$OUT/$m.rc.c" &
  eva_select "$tmp" "$lm" "$files" "$defs" > "$OUT/$m.rc.m"
  wait
  read -r ca < "$OUT/$m.rc.c"; read -r ma < "$OUT/$m.rc.m"; rm -f "$OUT/$m.rc.c" "$OUT/$m.rc.m"
  echo "$m: eva $defs: control ${ca} alarms, mutant ${ma} alarms"
  if [ "$ca" = ERR ] || [ "$ca" = -1 ]; then echo "$m: FAIL: EVA failed on the control (see $lc)"; ok=0; return; fi
  if [ "$ma" = ERR ] || [ "$ma" = -1 ]; then echo "$m: FAIL: EVA failed on the mutant (see $lm)"; ok=0; return; fi
  [ "$ca" -eq 0 ] || { echo "$m: FAIL: the control raised $ca EVA alarms (see $lc)"; ok=0; }
  new=$(comm -13 <(eva_unknown "$lc") <(eva_unknown "$lm"))
  if [ "$ma" -eq 0 ] && [ -z "$new" ]; then
    echo "$m: FAIL: mutant ACCEPTED: no EVA alarm on it and no property left unknown that the control decided (see $lm)"; ok=0
  else
    grep -A1 '^\[eva:alarm\]' "$lm" | grep -vE '^\[|^--|got status unknown' | sort -u | head -3 |
      sed 's/^ */      mutant alarm: /'
    [ -z "$new" ] || sed 's/^/      mutant unknown (the control decided it): /' <<< "$new"
  fi
}

# unproved WHO LOG: the names of the goals WP did not prove (indented, one a line).
unproved() {
  grep -E '^\[wp\] \[[^]]*\] Goal ' "$2" | grep -v ' : Valid' |
    sed -E "s/^\\[wp\\] \\[[^]]*\\] Goal ([^ ]*).*/      $1 unproved: \\1/"
}

CONTROL=$(mktemp -d)
trap 'rm -rf "$CONTROL"' EXIT
make_copy "$CONTROL"

patches=("$@")
[ ${#patches[@]} -eq 0 ] && patches=(proofs/mutants/*.patch)
n_rej=0; n_all=0; n_raised=0
for p in "${patches[@]}"; do
  m=$(basename "$p" .patch)
  n_all=$((n_all + 1))
  t_m=$(date +%s)
  tmp=$(mktemp -d)
  make_copy "$tmp"
  if ! why=$(mutant_applies "$p" "$tmp" "$OUT/$m.patch.log"); then
    echo "$m: FAIL: $why"; status=1
    rm -rf "$tmp"; continue
  fi
  ok=1; k=0
  while read -r _ run fct props provers extra; do
    k=$((k + 1))
    mode=${run%%:*}; files=${run#*:}
    if [ "$mode" = eva ]; then
      if [ -z "$fct" ] || [ -n "$props" ]; then
        echo "$m: FAIL: malformed line 'expect: $run $fct $props $provers $extra'"
        echo "    (want: expect: eva:FILE[,FILE] DEFINES)"; ok=0; continue
      fi
      for f in $(tr , ' ' <<< "$files"); do
        [ -f "$CONTROL/$f" ] || { echo "$m: FAIL: expect: no file $f"; ok=0; continue 2; }
      done
      eva_selection "$m" "$k" "$files" "$fct"; continue
    fi
    if [ -z "$provers" ] || [ -n "$extra" ] || [ "$mode" = "$run" ] ||
       ! [[ $mode =~ ^(float|real|rows|bwd32|bwdffn32)$ ]]; then
      echo "$m: FAIL: malformed line 'expect: $run $fct $props $provers $extra'"
      echo "    (want: expect: float|real|rows|bwd32|bwdffn32:FILE[,FILE] FUNCTIONS PROPS PROVERS)"; ok=0; continue
    fi
    for f in $(tr , ' ' <<< "$files"); do
      [ -f "$CONTROL/$f" ] || { echo "$m: FAIL: expect: no file $f"; ok=0; continue 2; }
    done
    lc="$OUT/$m.control.$k.log"; lm="$OUT/$m.mutant.$k.log"
    # the control and the mutant in parallel (the control's goals take well under a second; the
    # mutant's unproved ones run to the timeout, two at a time)
    T_CUR=$MUT_TIMEOUT
    while :; do
      wp_select "$CONTROL" "$lc" "$mode" "$files" "$fct" "$props" "$provers" 1 > "$OUT/$m.rc.c" &
      wp_select "$tmp" "$lm" "$mode" "$files" "$fct" "$props" "$provers" 2 > "$OUT/$m.rc.m"
      wait
      read -r cp ct < "$OUT/$m.rc.c"; read -r mp mt < "$OUT/$m.rc.m"; rm -f "$OUT/$m.rc.c" "$OUT/$m.rc.m"
      # the control missed its goals in time (not a Frama-C error): both again, with twice the time
      if [ "$cp" != ERR ] && [ "$mp" != ERR ] && [ "${ct:-0}" -gt 0 ] && [ "$cp" -ne "$ct" ] &&
         [ "$T_CUR" -lt $((8 * MUT_TIMEOUT)) ]; then
        echo "$m: the control proved $cp/$ct in ${T_CUR} s; control and mutant again with $((2 * T_CUR)) s"
        T_CUR=$((2 * T_CUR)); n_raised=$((n_raised + 1)); continue
      fi
      break
    done
    sel="$mode $fct $props"
    echo "$m: $sel: control ${cp}/${ct:-?}, mutant ${mp}/${mt:-?} proved (timeout ${T_CUR} s)"
    if [ "$cp" = ERR ]; then echo "$m: FAIL: Frama-C failed on the control (see $lc)"; ok=0; continue; fi
    if [ "$mp" = ERR ]; then echo "$m: FAIL: Frama-C failed on the mutant (see $lm)"; ok=0; continue; fi
    if [ "$ct" -eq 0 ] || [ "$mt" -eq 0 ]; then
      echo "$m: FAIL: empty selection (0 goals; see $lc, $lm)"; ok=0; continue
    fi
    if [ "$cp" -ne "$ct" ]; then
      echo "$m: FAIL: the control does not prove every selected goal (see $lc)"; unproved control "$lc"; ok=0
    fi
    if [ "$mp" -eq "$mt" ]; then
      echo "$m: FAIL: mutant ACCEPTED: every selected goal proved on it (see $lm)"; ok=0
    else
      unproved mutant "$lm"
    fi
  done < <(grep '^expect: ' "$p")
  rm -rf "$tmp"
  if [ "$ok" -eq 1 ]; then
    echo "$m: rejected ($(( $(date +%s) - t_m )) s)"; n_rej=$((n_rej + 1))
  else
    status=1
  fi
done
secs=$(( $(date +%s) - t0 ))
if [ "$status" -eq 0 ]; then
  echo "$PROOF_NAME: $n_rej/$n_all mutants rejected, every control proved (${secs} s, timeout ${MUT_TIMEOUT} s; raised for $n_raised selection(s) whose control missed it)"
else
  echo "$PROOF_NAME: FAILED ($n_rej/$n_all mutants rejected with their controls proved; ${secs} s)"
fi
exit "$status"
