# Shared shell library of the proof scripts (proofs/prove.sh, rmsnorm.sh, residual.sh, skip.sh, and
# one script per later op family).  Sourced, never run.  Each script is then a list of steps:
#
#   source proofs/lib.sh; proof_init NAME OUTDIR       settings, WHY3CONFIG, log folder, timer
#   proof_soundness_greps FILE...                      ACSL literals like 1e6, admit/axiom
#   proof_eva_start FILE.c...                          EVA f32 and f64 in the background
#   proof_wp_real SESSION FILE...                      WP, real model, RTE, smoke tests -> wp_rc
#   proof_wp_real_start TAG SESSION FCT FILE...        the same on functions FCT, in the background
#   proof_wp_real_wait                                 -> wp_rc (every run started above)
#   proof_wp_rows FILE FCT SESSION [LEMMAS]            the rows run of the drivers FCT (+ its lemmas) -> rows_rc
#   proof_gappa FILE SESSION PROPS SMT_PROVERS [FRAMA-C OPTION...]   two passes -> ga_rc, gs_rc
#   proof_wp_float FILE SESSION GAPPA_FCT GAPPA_PROPS FCT LEMMAS     float model, 3 passes -> fl_rc
#   proof_eva_wait                                     -> eva_f32, eva_f64 (alarm counts), eva_rc
#   proof_eva_no_unknown [ASSERTION...]                fail if EVA left any other property unknown
#   proof_summary JSON FAMILY.awk [awk -v ...]         per-kernel table + results JSON (see below)
#   proof_finish "DONE MESSAGE"                        check every rc, print, exit
#
# Environment (all scripts): WP_CACHE=replay|update|offline|none (default replay: cached results are
# reused, missing ones are proved and not stored; WP_CACHE=update refreshes the sessions), EVA_NMAX
# (default 4096), WP_TIMEOUT (default 20 s), WP_SMOKE_TIMEOUT (default 5 s: the float-model
# runs' smoke tests; the real-model runs keep WP's default, 2 s).
# WP_CACHE=cleanup (prune the entries a run did not use) is safe on a session one run owns, not on a
# float-model session: proof_wp_float's three passes share one, and each pass would prune the others'.
#
# The summary is proofs/wp_summary.awk (parses WP's goal lines, tallies per kernel and per prover,
# prints the table and the kernels' JSON entries) run after FAMILY.awk, which defines
#   kernel(goal_name)   -> the kernel (row of the table) a goal belongs to
#   json_head()         -> the JSON text before "kernels" (e.g. the tool line)
#   json_tail()         -> the JSON text after the kernel entries (totals, EVA, Gappa)
#   total_line()        -> the TOTAL line printed under the table
# and reads the awk variables given to proof_summary (json, secs, eva32, eva64, evanmax are set here).

set -u -o pipefail

# proof_init NAME OUTDIR: NAME prefixes every message ("prove-residual: ..."); logs go to OUTDIR.
proof_init() {
  PROOF_NAME=$1
  OUT=$2
  cd "$(dirname "${BASH_SOURCE[0]}")/.."
  export WHY3CONFIG="$PWD/proofs/why3.conf"      # project-local: never ~/.why3.conf
  # Frama-C's OCaml heap: a 4 M-word (32 MB) minor heap and a lazier major GC.  A replay of cached
  # goals is Qed's simplifier and the GC (perf: ~15 % of attention's replay in the minor GC's root
  # scans); measured 3 December 2026 on attention_forward_f32 + attn_row_backward_f32 (300 goals,
  # idle machine, twice each): 63.9-65.8 -> 60.4-60.5 s of CPU, +60 MB of memory.  No goal, cache
  # entry or smoke key depends on it; a caller's own OCAMLRUNPARAM wins.
  export OCAMLRUNPARAM=${OCAMLRUNPARAM:-s=4M,o=200}
  mkdir -p "$OUT" proofs/results
  WP_CACHE=${WP_CACHE:-replay}
  EVA_NMAX=${EVA_NMAX:-4096}
  WP_TIMEOUT=${WP_TIMEOUT:-20}
  WP_SMOKE=${WP_SMOKE:-auto}
  case $WP_SMOKE in
    auto|full) ;;
    *) echo "$PROOF_NAME: WP_SMOKE must be auto or full, not '$WP_SMOKE'" >&2; exit 2 ;;
  esac
  SMOKE_LEDGER=proofs/smoke/$PROOF_NAME.txt
  SMOKE_TOOLS=""; SMOKE_NEW=(); SMOKE_NOTES=(); SMOKE_LITE=0
  EVA_CACHE=${EVA_CACHE:-replay}
  case $EVA_CACHE in
    replay|none) ;;
    *) echo "$PROOF_NAME: EVA_CACHE must be replay or none, not '$EVA_CACHE'" >&2; exit 2 ;;
  esac
  EVA_STORE=proofs/eva/${PROOF_NAME#prove-}; EVA_NEW=(); EVA_NOTES=()
  CPP="-Iref -Ispecs -Icli"
  status=0
  wp_rc=0; ga_rc=0; gs_rc=0; eva_rc=0
  eva_f32=0; eva_f64=0
  PROOF_EVA=0; PROOF_GAPPA=0; PROOF_FLOAT=0
  EVA_UNKNOWN_CHECKED=0   # set by proof_eva_no_unknown; proof_finish then skips the summary's precondition count
  fl_rc=0
  PROOF_WP_PIDS=(); PROOF_WP_LOGS=(); PROOF_EVA_PIDS=(); PROOF_EVA_LOGS=()
  PROOF_ROWS_PIDS=(); PROOF_ROWS_LOGS=(); PROOF_ROWS_PROPS=()
  ROWS_BG_FILES=""; ROWS_BG_SESSION=""; ROWS_BG_LEMMAS=""
  ROWS_LEDGER=proofs/rows_ledger/$PROOF_NAME.txt; ROWS_NEW=(); ROWS_NOTES=(); ROWS_VOUCHED_LOGS=()
  t0=$(date +%s)
}

# ---- smoke tests: the full set, or the lite set where the ledger vouches for the full one ----------
# Why: WP's cache (the sessions) keeps no smoke-test result, so every replay ran them all again, and
# they were ~40 % of a real-model replay's CPU (prove-ffn: 58 s with them, 35 s without), nearly all
# of it in the dead-code and dead-call tests (100 of ffn's 116).  proofs/smoke/TARGET.txt (the
# ledger) holds one line per WP run of the target, "RUN KEY PASSED/TOTAL DATE": KEY is a SHA-256 of
# everything that run reads (smoke_key: the Frama-C, Why3, Gappa and prover versions, proofs/why3.conf
# and the drivers, the run's options, and its sources with every local header gcc -MM finds under the
# run's preprocessor options), recorded when the run, with the full set of smoke tests, passed.
# WP_SMOKE=auto (the default): a run whose key is in the ledger ran the full set on exactly these
# inputs, so it runs the lite set (default_requires, dead_loop, dead_assumes: no inconsistent
# precondition set, loop invariant or assumes clause); any other run runs the full set, and when the
# whole target passes, proof_finish records its key.  WP_SMOKE=full: every run runs the full set
# (and records it).  So a change to a kernel, a contract, a header, a setting or a tool version is
# smoke-tested in full by the first run that sees it, make check's included.
smoke_key() {
  local cpp=$1; shift
  local files=() f
  while [ $# -gt 0 ] && [ "$1" != -- ]; do files+=("$1"); shift; done
  shift
  if [ -z "$SMOKE_TOOLS" ]; then
    SMOKE_TOOLS=$( { frama-c -version; why3 --version; z3 --version; cvc5 --version | head -1
                     gappa --version 2>&1 | head -1
                     cat proofs/why3.conf proofs/*.driver proofs/*.mlw proofs/*.drv; } 2>&1 | sha256sum)
  fi
  # shellcheck disable=SC2086
  { echo "$SMOKE_TOOLS"; printf '%s\n' "$cpp" "$@"
    for f in $(gcc -MM $cpp "${files[@]}" | tr -d '\\' | tr ' ' '\n' | grep -v ':$' | grep . | sort -u); do
      echo "== $f"; cat "$f"
    done; } | sha256sum | cut -c1-64
}

# smoke_select RUN LOG CPP FILE... -- OPTION...: SMOKE_OPTS for the WP run RUN of this target, whose
# log is LOG (CPP: its preprocessor options; FILE: its sources; OPTION: its other frama-c options).
smoke_select() {
  local run=$1 log=$2; shift 2
  local key line=""
  key=$(smoke_key "$@")
  if [ "$WP_SMOKE" = auto ] && [ -f "$SMOKE_LEDGER" ]; then
    line=$(grep -m1 "^$run $key " "$SMOKE_LEDGER")
  fi
  if [ -n "$line" ]; then
    SMOKE_OPTS=(-wp-smoke-tests -wp-no-smoke-dead-code -wp-no-smoke-dead-call)
    SMOKE_LITE=$((SMOKE_LITE + 1))
    SMOKE_NOTES+=("$run: lite smoke set (default_requires, dead_loop, dead_assumes); the full set passed on these inputs: $(cut -d' ' -f3- <<< "$line") ($SMOKE_LEDGER)")
  else
    SMOKE_OPTS=(-wp-smoke-tests)
    SMOKE_NEW+=("$run $key $log")
    SMOKE_NOTES+=("$run: full smoke set (the ledger has no entry for these inputs, or WP_SMOKE=full)")
  fi
}

# smoke_record: after a passing target, the ledger lines of its full-set runs, with their smoke
# counts (from each run's log).
smoke_record() {
  local entry run key log n p lines=()
  [ "${#SMOKE_NEW[@]}" -eq 0 ] && return 0
  for entry in "${SMOKE_NEW[@]}"; do
    read -r run key log <<< "$entry"
    n=$(grep -cE '^\[wp\] \[[^]]*\] Smoke-test ' "$log")
    p=$(grep -cE '^\[wp\] \[Passed\] Smoke-test ' "$log")
    lines+=("$run $key $p/$n $(date -u +%Y-%m-%d)")
  done
  ledger_update "$SMOKE_LEDGER" "# RUN KEY PASSED/TOTAL DATE: WP runs of $PROOF_NAME that passed the full set of smoke tests on the inputs hashed in KEY (proofs/lib.sh, smoke_select; proofs/README.md)" "${lines[@]}"
}

# ledger_update FILE HEADER LINE...: the ledger FILE (the smoke tests', the EVA store's) with each
# LINE in place of the line that starts with the same first word, HEADER written if FILE is new,
# sorted (the header first), written through a temporary file and renamed.
ledger_update() {
  local file=$1 header=$2 line tmp; shift 2
  mkdir -p "$(dirname "$file")"
  tmp=$(mktemp "$file.XXXXXX")
  if [ -f "$file" ]; then cp "$file" "$tmp"; else echo "$header" > "$tmp"; fi
  for line in "$@"; do
    grep -v "^${line%% *} " "$tmp" > "$tmp.new"; mv "$tmp.new" "$tmp"
    echo "$line" >> "$tmp"
  done
  LC_ALL=C sort -o "$tmp" "$tmp"; mv "$tmp" "$file"
}

# ---- 0. soundness greps ----------------------------------------------------------------------
# In ACSL annotations of Frama-C 25, `1e6` is read as 1.6: literals must be 1.0e6, 1e+6 or hex.
# Annotation lines: inside /*@ ... */ or after //@ (continuation lines of a /*@ block included).
# No admitted goals, no axioms in the ACSL (recursive/explicit definitions only; lemmas are proved).
proof_soundness_greps() {
  local bad
  bad=$(awk '
    FNR == 1 { inann = 0 }
    { line = $0; ann = 0
      if (inann || line ~ /\/\*@|\/\/@/) ann = 1
      if (line ~ /\/\*@/) inann = 1
      if (inann && line ~ /\*\//) inann = 0
      if (ann && line ~ /(^|[^0-9A-Za-z_.x])[0-9]+e[0-9]/) print FILENAME ":" FNR ": " line }
  ' "$@" 2>/dev/null)
  if [ -n "$bad" ]; then
    echo "$PROOF_NAME: ACSL float literal without '.' or sign in the exponent (read as a wrong value):"
    echo "$bad"; status=1
  fi
  # Frama-C 25 reads a hex float literal in ACSL through a binary64 double: one that is not exactly a
  # binary64 value is rounded, and one below 2^-1074 reads as 0 (tested: the lemma 0x1p-1075 == 0 is
  # proved by Qed, 0x1p-1075 > 0 is not; proofs/README.md "Literals").  Write such a value as an exact
  # product (0x1p-1000 * 0x1p-75).  Decimal literals are read exactly (1.0e-400 > 0 is proved,
  # 1.0e-400 == 0 is not); those below 1.0e-323 are rejected too, as a precaution.
  bad=$(awk '
    function hexbad(lit,   s, p, mant, e, D, M, i, b, t) {
      s = tolower(lit); sub(/^0x/, "", s)
      p = index(s, "p"); mant = substr(s, 1, p - 1); e = substr(s, p + 1) + 0
      p = index(mant, ".")
      if (p) { D = substr(mant, 1, p - 1) substr(mant, p + 1); e -= 4 * (length(mant) - p) } else D = mant
      sub(/^0+/, "", D)
      if (D == "") return 0                      # zero
      while (D ~ /0$/) { D = substr(D, 1, length(D) - 1); e += 4 }
      if (length(D) > 14) return 1               # more than 53 bits: rounded
      M = 0
      for (i = 1; i <= length(D); i++) M = M * 16 + index("0123456789abcdef", substr(D, i, 1)) - 1
      while (M % 2 == 0) { M /= 2; e++ }
      b = 0; t = M; while (t >= 1) { t = int(t / 2); b++ }
      return (e < -1074 || b > 53 || e + b > 1024)   # value M 2^e, M odd: not a binary64 number
    }
    function decbad(lit,   s, m, ex, p, ip, fp, order, i) {
      s = tolower(lit); ex = 0
      p = index(s, "e"); if (p) { ex = substr(s, p + 1) + 0; m = substr(s, 1, p - 1) } else m = s
      p = index(m, "."); if (p) { ip = substr(m, 1, p - 1); fp = substr(m, p + 1) } else { ip = m; fp = "" }
      sub(/^0+/, "", ip)
      if (ip != "") return (ex + length(ip) - 1 <= -324)
      for (i = 1; i <= length(fp); i++) if (substr(fp, i, 1) != "0") return (ex - i <= -324)
      return 0                                   # zero
    }
    FNR == 1 { inann = 0 }
    { line = $0; ann = 0
      if (inann || line ~ /\/\*@|\/\/@/) ann = 1
      if (line ~ /\/\*@/) inann = 1
      if (inann && line ~ /\*\//) inann = 0
      if (!ann) next
      rest = line
      while (match(rest, /0[xX][0-9a-fA-F]*\.?[0-9a-fA-F]*[pP][-+]?[0-9]+/)) {
        lit = substr(rest, RSTART, RLENGTH)
        if (hexbad(lit)) print FILENAME ":" FNR ": " lit ": " line
        rest = substr(rest, 1, RSTART - 1) " " substr(rest, RSTART + RLENGTH)
      }
      while (match(rest, /(^|[^A-Za-z_0-9.])[0-9]*\.?[0-9]+[eE][-+]?[0-9]+/)) {
        lit = substr(rest, RSTART, RLENGTH); sub(/^[^0-9.]/, "", lit)
        if (decbad(lit)) print FILENAME ":" FNR ": " lit ": " line
        rest = substr(rest, RSTART + RLENGTH)
      }
    }
  ' "$@" 2>/dev/null)
  if [ -n "$bad" ]; then
    echo "$PROOF_NAME: ACSL float literal that Frama-C reads rounded (not a binary64 value; below 2^-1074: read as 0):"
    echo "$bad"; status=1
  fi
  if grep -nE '\badmit\b|\baxiom [A-Za-z_]+ *:' "$@" 2>/dev/null; then
    echo "$PROOF_NAME: 'admit' or 'axiom' found in ACSL"; status=1
  fi
}

# ---- 1. EVA, in the background (float and double in parallel) ----------------------------------
# EVA_CPP_EXTRA, if set, is added to the preprocessor options (LayerNorm: -DRESNORM_EVA, specs/fperr.h).
# EVA_EXTRA_OPTS, if set, is added to the frama-c options (the skip kernels: -eva-precision 3).
# FILE.c...: the kernels and the harness (EVA_UNROLL, if set, overrides the unrolling EVA_NMAX + 4); the harness selects the precision with -DEVA_ONLY_F32 /
# -DEVA_ONLY_F64 and the size with EVA_NMAX.
# EVA_TAG, if set, names a further pair of runs of the same target (logs eva_TAG_F32.log and
# eva_TAG_F64.log beside eva_F32.log and eva_F64.log; the attention's masked run), and EVA_WARN its
# -warn-special-float mode (default non-finite: any NaN or infinity is an alarm; nan: only NaN is,
# for a run whose infinities are by design, which must then assert what it needs finite).
# eva_opts UNROLL [WARN]: the EVA options of every run (also prove-mutants-fast's EVA selections).
# loop-unroll:auto=inactive drops EVA's "Automatic loop unrolling" note per loop (the option used
# before, -eva-msg-key=-loop-unroll, is not a message key: it only added a warning to every log).
eva_opts() {
  echo "-eva -warn-special-float ${2:-non-finite} -eva-auto-loop-unroll $1 -eva-subdivide-non-linear 16 \
    -eva-warn-key loop-unroll:auto=inactive ${EVA_EXTRA_OPTS:-}"
}
# eva_logs: the EVA logs of this target's runs (the default pair when none was started: selftest)
eva_logs() {
  if [ "${#PROOF_EVA_LOGS[@]}" -gt 0 ]; then printf '%s\n' "${PROOF_EVA_LOGS[@]}"
  else printf '%s\n' "$OUT/eva_F32.log" "$OUT/eva_F64.log"; fi
}
# An EVA run is replayed from its stored log when nothing it reads has changed (EVA_CACHE=replay,
# the default; proofs/README.md "EVA: each run once per input"): EVA is deterministic, so the log of
# a run on exactly these inputs is that run's result, and it goes through every check a fresh log
# goes through (alarms, invalid and unknown properties, preconditions).  The key is smoke_key's
# (the tool versions, the run's preprocessor and EVA options, its sources and every local header
# they include); the store is proofs/eva/TARGET/ (NAME.log: the log; TARGET.txt beside it: the
# ledger, "NAME KEY DATE CPU"), NAME being the log's name and the size bound (eva_F32.n4096).  A run
# whose key has no stored log runs, and proof_finish stores its log when the whole target passes.
# EVA_CACHE=none: every run runs (and is stored on a pass).  The proof regression's EVA runs
# (proofs/mutants_fast.sh) are patched copies: never stored, always run.
# eva_cpp P: the preprocessor options of the EVA run of dtype P (F32 or F64), part of its key.
eva_cpp() { echo "$CPP ${EVA_CPP_EXTRA:-} -DEVA_NMAX=$EVA_NMAX -DEVA_ONLY_$1"; }
proof_eva_start() {
  local p log cpp name key line
  PROOF_EVA=1
  local unroll=$((EVA_NMAX + 4))
  [ -n "${EVA_UNROLL:-}" ] && unroll=$EVA_UNROLL
  local opts
  opts=$(eva_opts "$unroll" "${EVA_WARN:-non-finite}")
  for p in F32 F64; do
    log="$OUT/eva${EVA_TAG:+_$EVA_TAG}_$p.log"
    cpp=$(eva_cpp "$p")
    name="$(basename "$log" .log).n$EVA_NMAX"
    # shellcheck disable=SC2086
    key=$(smoke_key "$cpp" "$@" -- $opts)
    line=""
    [ "$EVA_CACHE" = replay ] && [ -f "$EVA_STORE.txt" ] && line=$(grep -m1 "^$name $key " "$EVA_STORE.txt")
    PROOF_EVA_LOGS+=("$log")
    if [ -n "$line" ] && [ -f "$EVA_STORE/$name.log" ]; then
      cp "$EVA_STORE/$name.log" "$log"
      EVA_NOTES+=("$name: replayed, the log stored for these inputs ($(cut -d' ' -f3- <<< "$line"); $EVA_STORE/$name.log)")
      continue
    fi
    # shellcheck disable=SC2086
    ( frama-c -cpp-extra-args="$cpp" "$@" $opts > "$log" 2>&1; rc=$?
      times > "$log.cpu"; exit $rc ) &
    PROOF_EVA_PIDS+=("$!"); EVA_NEW+=("$name $key $log")
    EVA_NOTES+=("$name: ran (no stored log for these inputs$([ "$EVA_CACHE" = none ] && echo ', or EVA_CACHE=none'))")
  done
}

# eva_record: after a passing target, store the logs of the EVA runs that ran, with the ledger line
# "NAME KEY DATE CPU" (CPU: the run's user + system seconds, children included).
eva_record() {
  local entry name key log cpu lines=()
  [ "${#EVA_NEW[@]}" -eq 0 ] && return 0
  mkdir -p "$EVA_STORE"
  for entry in "${EVA_NEW[@]}"; do
    read -r name key log <<< "$entry"
    cpu=$(awk 'NR == 2 { for (i = 1; i <= 2; i++) { split($i, t, "m"); sub("s", "", t[2]); s += t[1] * 60 + t[2] } } END { printf "%.0fs", s }' "$log.cpu" 2>/dev/null)
    cp "$log" "$EVA_STORE/$name.log"
    lines+=("$name $key $(date -u +%Y-%m-%d) cpu=${cpu:-?}")
  done
  ledger_update "$EVA_STORE.txt" "# NAME KEY DATE CPU: EVA runs of $PROOF_NAME that passed on the inputs hashed in KEY; their logs are $EVA_STORE/NAME.log (proofs/lib.sh, proof_eva_start; proofs/README.md)" "${lines[@]}"
}

# ---- 2. WP, real model, on every function of the given files ------------------------------------
proof_wp_real() {
  local session=$1; shift
  local opts=(-wp -wp-rte -wp-model real -wp-prover qed,cvc5,z3 -wp-timeout "$WP_TIMEOUT")
  smoke_select "${session##*/}" "$OUT/wp.log" "$CPP" "$@" -- "${opts[@]}"
  frama-c -cpp-extra-args="$CPP" "$@" "${opts[@]}" -wp-par 2 \
    "${SMOKE_OPTS[@]}" -wp-session "$session" -wp-cache "$WP_CACHE" \
    -then -report-classify -report-unclassified-unknown ERROR > "$OUT/wp.log" 2>&1
  wp_rc=$?
}

# ---- 2b. WP, real model, on some functions, in the background (several runs side by side) ---------
# proof_wp_real_start TAG SESSION FCT FILE...: proof_wp_real's run restricted to the functions FCT
# (-wp-fct, comma-separated), log $OUT/wp_TAG.log, started in the background; proof_wp_real_wait
# waits for every such run (-> wp_rc) and proof_summary reads their logs instead of $OUT/wp.log.
# Each run has its own SESSION (WP_CACHE=cleanup then prunes each one's stale entries), and WP_PAR
# provers (default 1: two runs side by side fill the 2 cores; a replay is WP's goal generation, one
# core per run).  The lemmas of FILE are not goals of such a run (-wp-fct).
# No -report-classify in such a run: a callee's precondition has one consolidated status over all
# its call sites in FILE, and the call sites in functions outside FCT (the stack's calls of the block
# and of LayerNorm, proved by prove-stack) are not this run's goals, so the report would call it
# unknown.  proof_summary checks instead that every goal and smoke test of the run is proved
# (wp_summary.awk exits 1 otherwise, or if no goal was found); frama-c's exit code still catches
# parse and run errors.
proof_wp_real_start() {
  local tag=$1 session=$2 fct=$3; shift 3
  local opts=(-wp -wp-fct "$fct" -wp-rte -wp-model real -wp-prover qed,cvc5,z3 -wp-timeout "$WP_TIMEOUT")
  smoke_select "$tag" "$OUT/wp_$tag.log" "$CPP" "$@" -- "${opts[@]}"
  frama-c -cpp-extra-args="$CPP" "$@" "${opts[@]}" -wp-par "${WP_PAR:-1}" \
    "${SMOKE_OPTS[@]}" -wp-session "$session" -wp-cache "$WP_CACHE" \
    > "$OUT/wp_$tag.log" 2>&1 &
  PROOF_WP_PIDS+=($!)
  PROOF_WP_LOGS+=("$OUT/wp_$tag.log")
}

proof_wp_real_wait() {
  local pid
  for pid in "${PROOF_WP_PIDS[@]}"; do wait "$pid" || wp_rc=1; done
}

# ---- 2c. WP, real model, the rows run (issue 13, "rows composed") -----------------------------
# proof_wp_rows FILES FCT SESSION [LEMMAS]: WP in the real model with -DRESNORM_WP_ROWS (specs/fperr.h:
# LN_ROWS, LN_ROWMODEL) on the rows x n drivers FCT of FILES (one file, or several separated by spaces:
# the skip kernels' two files), which proves their functional contract
# y_rows from the row kernel's pointwise postcondition y_stats (proved by the real-model run).
# Log $OUT/rows.log, exit code in rows_rc.  Every goal and smoke test of the run must be proved.
# (No -report-classify: it would also report the preconditions of the row-offset lemma function,
# whose other callers, the backward drivers, this run does not check; the real-model run proves
# every call site.)
# ROWS_PROPS (comma-separated property names), if set, restricts the run to those properties
# (-wp-prop; no smoke tests: the real-model run has them for the same functions) and every name
# must give at least one Valid goal; ROWS_LOG names the log (default $OUT/rows.log).
proof_wp_rows() {
  proof_wp_rows_begin "$@"
  proof_wp_rows_end
}

# proof_wp_rows_begin FILES FCT SESSION [LEMMAS] ... proof_wp_rows_end: proof_wp_rows in two halves,
# the rows run started in the background by the first and waited for by the second, which then runs
# the lemmas (in the same session, so after the run).  A target calls begin before its real-model
# run and end after its other runs: the runs go side by side.  Why: WP polls its provers every
# 50 ms, about one goal per poll at -wp-par 1 (strace, 6 December 2026: 147 sleeps of 50 ms,
# 7.4 s of a 14.7 s replay), so a replay alone leaves its core idle half the time; a second run
# beside it uses that time.  One begin at a time (begin ... end, then the next begin).
proof_wp_rows_begin() {
  ROWS_BG_FILES=$1; ROWS_BG_SESSION=$3; ROWS_BG_LEMMAS=${4:-}
  # no log of an earlier run may stand in for this one's (the summary reads rows_lemmas.log)
  rm -f "$OUT/rows_lemmas.log" "${ROWS_LOG:-$OUT/rows.log}"
  proof_wp_rows_start "${ROWS_LOG:-$OUT/rows.log}" "$1" "$2" "$3"
}

proof_wp_rows_end() {
  proof_wp_rows_wait
  # The lemmas the run's goals use (-wp-fct proves none: WP assumes them there).
  if [ -n "$ROWS_BG_LEMMAS" ]; then
    proof_wp_lemmas "$ROWS_BG_FILES" "$ROWS_BG_SESSION" "$ROWS_BG_LEMMAS" "$OUT/rows_lemmas.log" || rows_rc=1
  fi
}

# proof_wp_lemmas FILES SESSION LEMMAS LOG: the rows run's lemmas LEMMAS (comma-separated names) as
# goals (-wp-prop, no -wp-fct), with ROWS_CPP_EXTRA as there.  A lemma that needs an induction is
# proved by its committed script (prover "script": SESSION's script/lemma_NAME.json, Wp.induction;
# proofs/README.md "Rows composed: induction by script"); every one of them must be Valid.
proof_wp_lemmas() {
  local session=$2 lemmas=$3 log=$4 files want
  read -ra files <<< "$1"
  want=$(printf '%s' "$lemmas" | tr ',' '\n' | grep -c .)
  frama-c -cpp-extra-args="$CPP -DRESNORM_WP_ROWS ${ROWS_CPP_EXTRA:-}" "${files[@]}" -wp -wp-model real \
    -wp-prop "$lemmas" -wp-prover script,qed,cvc5,z3 -wp-timeout "$WP_TIMEOUT" -wp-par 2 \
    -wp-session "$session" -wp-cache "$WP_CACHE" > "$log" 2>&1 || return 1
  [ "$(grep -cE '^\[wp\] \[[^]]*\] Goal typed_real_lemma_[A-Za-z0-9_]* : Valid' "$log")" -eq "$want" ]
}

# ---- rows runs vouched for in make check: each run once per input --------------------------------
# Why: the block's and the attention's rows runs (the forward and backward composed) are ~22 min of
# CPU of make check's replays (7 December 2026, idle: prove-block 1480 s of CPU, 965 s of it rows
# runs; prove-attention 683 s, its rows run 377 s), and make check (proofs and tests side by side)
# had grown to 53 min of CI's 45.  A target that sets ROWS_VOUCH=1 (proofs/block.sh,
# proofs/attention.sh) skips, in make check's proof lane only (PROVE_LANE=check), each rows run whose
# inputs are exactly those of a run that passed: proofs/rows_ledger/TARGET.txt holds one line per
# rows run, "RUN KEY DATE", KEY a SHA-256 of everything the run reads (smoke_key's: the tool versions,
# proofs/why3.conf and the drivers, the run's options and preprocessor flags, its sources with every
# local header they include) and of its session (the committed cache it replays).  So a change to
# ref/, specs/, a setting, a tool or a session makes make check run the rows run again (and, on a
# pass, record it); only an unchanged run is skipped.  make prove runs every rows run and records it.
# The lemma runs (seconds) always run.
# rows_key INPUT_KEY SESSION: the ledger key of a rows run, from smoke_key's key of its inputs and
# the session's files as they are now (rows_record hashes them after the run: a recording run
# updates its session).
rows_key() {
  { echo "$1"; find "$2" -type f -print0 | LC_ALL=C sort -z | xargs -0 -r sha256sum; } | sha256sum | cut -c1-64
}

# rows_record: after a passing target, the ledger lines of the rows runs that ran.
rows_record() {
  local entry run ikey session lines=()
  [ "${#ROWS_NEW[@]}" -eq 0 ] && return 0
  for entry in "${ROWS_NEW[@]}"; do
    read -r run ikey session <<< "$entry"
    lines+=("$run $(rows_key "$ikey" "$session") $(date -u +%Y-%m-%d)")
  done
  ledger_update "$ROWS_LEDGER" "# RUN KEY DATE: rows runs of $PROOF_NAME that passed on the inputs (and the session) hashed in KEY; make check skips a run whose key is here (proofs/lib.sh, rows_key; proofs/README.md)" "${lines[@]}"
}

# proof_wp_rows_start LOG FILES FCT SESSION: proof_wp_rows's frama-c run (ROWS_PROPS as there; ROWS_CPP_EXTRA:
# further preprocessor flags), started
# in the background with its log LOG, so that several rows runs (e.g. one per dtype, each its own
# SESSION) go side by side with each other and with the real-model runs; proof_wp_rows_wait waits for
# every run started so and checks each log (-> rows_rc: every goal and smoke test proved, at least one
# goal, and with ROWS_PROPS a proved goal for each name).  The smoke ledger is read and written by
# this shell (smoke_select here, smoke_record at proof_finish).
proof_wp_rows_start() {
  local log=$1 fct=$3 session=$4 files ikey line
  read -ra files <<< "$2"
  local opts=(-wp -wp-model real -wp-fct "$fct" -wp-prover qed,cvc5,z3 -wp-timeout "$WP_TIMEOUT")
  [ -n "${ROWS_PROPS:-}" ] && opts+=(-wp-prop "$ROWS_PROPS")
  rm -f "$log"
  # the rows ledger (rows_key above): only the targets that read it key and record their runs
  if [ "${ROWS_VOUCH:-0}" = 1 ]; then
    ikey=$(smoke_key "$CPP -DRESNORM_WP_ROWS ${ROWS_CPP_EXTRA:-}" "${files[@]}" -- "${opts[@]}")
    if [ "${PROVE_LANE:-}" = check ] && [ -f "$ROWS_LEDGER" ] &&
       line=$(grep -m1 "^${session##*/} $(rows_key "$ikey" "$session") " "$ROWS_LEDGER"); then
      ROWS_VOUCHED_LOGS+=("$log")
      ROWS_NOTES+=("${session##*/}: not run (make check): the same inputs passed on $(cut -d' ' -f3- <<< "$line") ($ROWS_LEDGER; make prove runs it)")
      return 0
    fi
    ROWS_NEW+=("${session##*/} $ikey $session")
  fi
  if [ -n "${ROWS_PROPS:-}" ]; then
    SMOKE_OPTS=()
  else
    smoke_select "${session##*/}" "$log" "$CPP -DRESNORM_WP_ROWS" "${files[@]}" -- "${opts[@]}"
  fi
  frama-c -cpp-extra-args="$CPP -DRESNORM_WP_ROWS ${ROWS_CPP_EXTRA:-}" "${files[@]}" "${opts[@]}" -wp-par 2 \
    "${SMOKE_OPTS[@]}" -wp-session "$session" -wp-cache "$WP_CACHE" \
    > "$log" 2>&1 &
  PROOF_ROWS_PIDS+=($!); PROOF_ROWS_LOGS+=("$log"); PROOF_ROWS_PROPS+=("${ROWS_PROPS:-}")
}

proof_wp_rows_wait() {
  local i log name
  rows_rc=0
  for i in "${!PROOF_ROWS_PIDS[@]}"; do
    log=${PROOF_ROWS_LOGS[i]}
    wait "${PROOF_ROWS_PIDS[i]}" || rows_rc=1
    grep -qE '^\[wp\] \[[^]]*\] Goal ' "$log" || rows_rc=1
    if grep -E '^\[wp\] \[[^]]*\] (Goal|Smoke-test) ' "$log" | grep -vE ' : Valid|^\[wp\] \[Passed\]' | grep -q .; then
      rows_rc=1
    fi
    for name in ${PROOF_ROWS_PROPS[i]//,/ }; do
      grep -qE "^\[wp\] \[[^]]*\] Goal typed_real_[A-Za-z0-9_]*_${name}(_[A-Za-z0-9_]*)? : Valid" "$log" ||
        { echo "$PROOF_NAME: no proved goal named $name in $log"; rows_rc=1; }
    done
  done
  PROOF_ROWS_PIDS=(); PROOF_ROWS_LOGS=(); PROOF_ROWS_PROPS=()
}

# ---- 3. Gappa + SMT, IEEE float model ----------------------------------------------------------
# proof_gappa FILE SESSION PROPS SMT_PROVERS [FRAMA-C OPTION...]
# (GAPPA_FCT, if set, restricts pass A to those functions: -wp-fct GAPPA_FCT.)
# Pass A: the float operations' contracts (PROPS, comma-separated) with Gappa; pass B: every other
# goal with SMT_PROVERS.  Each goal must be proved by one of its pass's provers (checked by the
# summary: every goal line of both logs must say Valid; no -report-classify here, since each pass
# leaves the other pass's goals unknown).
proof_gappa() {
  local file=$1 session=$2 props=$3 smt=$4; shift 4
  local neg
  PROOF_GAPPA=1
  neg=$(printf '%s' "$props" | sed 's/^/-/; s/,/,-/g')
  local fct=()
  [ -n "${GAPPA_FCT:-}" ] && fct=(-wp-fct "$GAPPA_FCT")
  frama-c "$@" "$file" -wp -wp-rte -wp-driver proofs/fperr.driver "${fct[@]}" \
    -wp-prop "$props" -wp-prover gappa -wp-par 2 -wp-timeout "$WP_TIMEOUT" \
    -wp-session "$session" -wp-cache "$WP_CACHE" > "$OUT/gappa.log" 2>&1
  ga_rc=$?
  frama-c "$@" "$file" -wp -wp-rte -wp-driver proofs/fperr.driver \
    -wp-prop="$neg" -wp-prover "$smt" -wp-par 2 -wp-timeout "$WP_TIMEOUT" \
    -wp-session "$session" -wp-cache "$WP_CACHE" > "$OUT/gappa_smt.log" 2>&1
  gs_rc=$?
}

# ---- 3b. WP in the IEEE float model on the kernels themselves ----------------------------------
# proof_wp_float FILE SESSION GAPPA_FCT GAPPA_PROPS FCT LEMMAS [FRAMA-C OPTION...]
# The annotations are read with -DRESNORM_WP_FLOAT (specs/fperr.h: LN_EXACT(p) is \true, LN_FLOAT(p)
# is p), so that no real-model statement is a hypothesis here.  No -wp-rte (the run-time errors are
# the real-model run's; float finiteness is stated where it is proved).  Three passes, each of which
# must prove every goal it is given: A, Gappa on GAPPA_PROPS of the helpers GAPPA_FCT; B, SMT on every
# other goal of the functions FCT; C, SMT on the float-model LEMMAS (the pure real lemmas of FILE are
# proved by the real-model run).
# Pass B also runs WP's smoke tests (-wp-smoke-tests) of the functions FCT, with its four provers and
# timeout WP_SMOKE_TIMEOUT (default 5 s): a float-model goal proved by an SMT solver is trustworthy only
# where its context is consistent (cvc5 once proved \false after a call in a mutant's float-model
# context, in 0.7-1.3 s: proofs/mutants/README.md, "Gap: rmsnorm_absorb"), and a smoke test fails
# when a prover proves \false from a function's preconditions, a loop's invariants, or the context of
# a call or a statement.  wp_summary.awk counts them apart (smoke column) and fails on any that is not
# "Passed".  Pass A (the helpers' Gappa props) reads the same preconditions as pass B's smoke tests;
# pass C (lemmas) has no function context to test.
proof_wp_float() {
  local file=$1 session=$2 gfct=$3 gprops=$4 fct=$5 lemmas=$6; shift 6
  local neg base common smt
  PROOF_FLOAT=1
  neg=$(printf '%s' "$gprops" | sed 's/^/-/; s/,/,-/g')
  base=(-wp -wp-driver proofs/fperr.driver -wp-timeout "$WP_TIMEOUT")
  common=(-cpp-extra-args="$CPP -DRESNORM_WP_FLOAT" "$@" "$file" "${base[@]}" -wp-par 2
          -wp-session "$session" -wp-cache "$WP_CACHE")
  smt=(-wp-fct "$fct" -wp-prop="$neg" -wp-prover qed,z3nofp,cvc5,z3 -wp-smoke-timeout "${WP_SMOKE_TIMEOUT:-5}")
  fl_rc=0
  frama-c "${common[@]}" -wp-fct "$gfct" -wp-prop "$gprops" -wp-prover gappa > "$OUT/float_gappa.log" 2>&1 || fl_rc=1
  smoke_select "${session##*/}" "$OUT/float_smt.log" "$CPP -DRESNORM_WP_FLOAT" "$file" -- \
    "${base[@]}" "${smt[@]}" "$@"
  frama-c "${common[@]}" "${smt[@]}" "${SMOKE_OPTS[@]}" > "$OUT/float_smt.log" 2>&1 || fl_rc=1
  frama-c "${common[@]}" -wp-prop "$lemmas" -wp-prover qed,z3nofp,cvc5,z3 > "$OUT/float_lemmas.log" 2>&1 || fl_rc=1
}

# ---- 4. wait for EVA ------------------------------------------------------------------------
eva_alarms() { awk '/ alarms? generated by the analysis/ { n = $1 } END { print (n == "" ? -1 : n) }' "$1"; }
eva_invalid() { grep -cE '^ +(Assertions|Preconditions) .* [1-9][0-9]* invalid' "$1"; }
eva_pre_unknown() { awk '/^ +Preconditions/ { print $4 }' "$1"; }

# proof_eva_no_unknown [ASSERTION...]: fails the target if EVA left any property (assertion,
# invariant, postcondition) unknown in either log, other than the named assertions: EVA narrows its
# states by such a property, so an unknown one could hide a NaN (issue 13).  For runs whose
# annotations EVA reads with -DRESNORM_EVA (real- and float-model statements are \true for it:
# specs/fperr.h), called after proof_eva_wait.  A named assertion (a fact EVA is given, e.g.
# softmax's d_nonpos) must be reached by EVA in each log; that WP proves it is the caller's check.
# An argument with a space is a whole property as EVA names it, e.g. "loop invariant 'i_range'" or
# "function lemma_row_offset: postcondition 'row_end'": allowed to stay unknown, not required to be
# reached (the skip kernels' run: integer, pointer and frame facts of the callees, proved by WP,
# that involve no float operation; proofs/README-skip.md lists them and why each may be given).
proof_eva_no_unknown() {
  local f a other pats=() names=() what=""
  EVA_UNKNOWN_CHECKED=1
  for a in "$@"; do
    case "$a" in
      *" "*) pats+=("$a") ;;
      *) names+=("$a"); pats+=("assertion '$a'") ;;
    esac
  done
  [ $# -gt 0 ] && what=" other than $(IFS=/; echo "$*")"
  for f in $(eva_logs); do
    # every unknown property but the allowed ones (grep -F: one whole-line pattern per allowed property)
    other=$(grep "got status unknown" "$f" | { if [ $# -gt 0 ]; then grep -vF -e "$(printf '%s got status unknown\n' "${pats[@]}")"; else cat; fi; } | sort -u)
    if [ -n "$other" ]; then
      echo "$PROOF_NAME: EVA left a property unknown$what (it may have narrowed its states by it; see $f):"
      echo "$other"; status=1
    fi
    for a in "${names[@]}"; do
      grep -q "assertion '$a' got status" "$f" || \
        { echo "$PROOF_NAME: EVA never reached assertion $a (see $f)"; status=1; }
    done
  done
}

# eva_sum P: the alarms of this target's runs of dtype P (F32 or F64), -1 if a log has no count
eva_sum() {
  local f a n=0
  for f in $(eva_logs); do
    [[ $f == *_$1.log ]] || continue
    a=$(eva_alarms "$f"); [ "$a" -lt 0 ] && { echo -1; return; }
    n=$((n + a))
  done
  echo "$n"
}
# -> eva_rc, and eva_f32, eva_f64: the alarms of every run of that dtype
proof_eva_wait() {
  local pid
  eva_rc=0
  for pid in "${PROOF_EVA_PIDS[@]}"; do wait "$pid" || eva_rc=1; done
  eva_f32=$(eva_sum F32); eva_f64=$(eva_sum F64)
}

# ---- 5. summary -----------------------------------------------------------------------------
# proof_summary JSON FAMILY.awk [awk option...]: the logs of the steps that ran, in the order
# wp, gappa, gappa_smt.
proof_summary() {
  local json=$1 family=$2; shift 2
  local logs=("${PROOF_WP_LOGS[@]:-$OUT/wp.log}")
  [ "$PROOF_GAPPA" -eq 1 ] && logs+=("$OUT/gappa.log" "$OUT/gappa_smt.log")
  [ "$PROOF_FLOAT" -eq 1 ] && logs+=("$OUT/float_gappa.log" "$OUT/float_smt.log" "$OUT/float_lemmas.log")
  # further WP logs of the family's own runs (e.g. LayerNorm's rows run: $OUT/rows.log)
  [ -n "${PROOF_EXTRA_LOGS:-}" ] && logs+=(${PROOF_EXTRA_LOGS})
  # a rows run make check skipped (rows_key) has no log: its goals are not counted
  local l keep=() v
  for l in "${logs[@]}"; do
    for v in "${ROWS_VOUCHED_LOGS[@]}"; do [ "$l" = "$v" ] && continue 2; done
    keep+=("$l")
  done
  logs=("${keep[@]}")
  t1=$(date +%s)
  local smoke_set=full
  if [ "$SMOKE_LITE" -gt 0 ]; then
    smoke_set="lite where $SMOKE_LEDGER vouches for the full set (default_requires, dead_loop, dead_assumes run; dead_code, dead_call recorded)"
  fi
  awk -v eva32="$eva_f32" -v eva64="$eva_f64" -v evanmax="$EVA_NMAX" -v secs=$((t1 - t0)) \
      -v json="$json" -v smoke_set="$smoke_set" "$@" -f "$family" -f proofs/wp_summary.awk "${logs[@]}" || status=1
}

# proof_finish DONE_MESSAGE: every step's exit code and EVA's alarms; prints the verdict and exits.
proof_finish() {
  local p f a
  [ "$wp_rc" -eq 0 ] || { echo "$PROOF_NAME: WP / report-classify failed (see $OUT/wp.log)"; status=1; }
  if [ "$PROOF_GAPPA" -eq 1 ]; then
    [ "$ga_rc" -eq 0 ] || { echo "$PROOF_NAME: Gappa pass failed (see $OUT/gappa.log)"; status=1; }
    [ "$gs_rc" -eq 0 ] || { echo "$PROOF_NAME: Gappa-SMT pass failed (see $OUT/gappa_smt.log)"; status=1; }
  fi
  [ "$PROOF_FLOAT" -eq 1 ] && [ "$fl_rc" -ne 0 ] && { echo "$PROOF_NAME: float-model WP run failed (see $OUT/float_*.log)"; status=1; }
  if [ "$PROOF_EVA" -eq 1 ]; then
    for f in $(eva_logs); do
      p=${f##*/}; p=${p%.log}; a=$(eva_alarms "$f")
      if [ "$a" != 0 ]; then echo "$PROOF_NAME: EVA $p: $a alarms (see $f)"; status=1; fi
      if [ "$(eva_invalid "$f")" != 0 ]; then echo "$PROOF_NAME: EVA $p: invalid property (see $f)"; status=1; fi
      # (after proof_eva_no_unknown, which checked every unknown property one by one, preconditions
      # included, the count would also hold the ones it was told to allow)
      if [ "$EVA_UNKNOWN_CHECKED" -eq 0 ] && [ "$(eva_pre_unknown "$f")" != 0 ]; then
        echo "$PROOF_NAME: EVA $p: kernel precondition not established by the harness (see $f)"; status=1
      fi
    done
    [ "$eva_rc" -eq 0 ] || { echo "$PROOF_NAME: EVA run failed"; status=1; }
  fi
  local note
  for note in "${SMOKE_NOTES[@]}"; do echo "$PROOF_NAME: smoke tests, $note"; done
  for note in "${EVA_NOTES[@]}"; do echo "$PROOF_NAME: EVA, $note"; done
  for note in "${ROWS_NOTES[@]}"; do echo "$PROOF_NAME: rows run $note"; done
  if [ "$status" -eq 0 ] && [ "$WP_CACHE" != offline ]; then smoke_record; rows_record; fi
  if [ "$status" -eq 0 ]; then eva_record; fi
  [ "$status" -eq 0 ] && echo "$PROOF_NAME: $1" || echo "$PROOF_NAME: FAILED"
  exit "$status"
}

# mutant_applies PATCH DIR LOG [PATCH OPTION...]: the proof-regression mutant PATCH
# (proofs/mutants/*.patch) has its expect: and counterexample: lines and applies to the tree DIR with
# patch --fuzz=0 (a mutant whose context no longer matches ref/ exactly is stale: update it); patch's
# messages go to LOG.  Prints why not and returns 1 otherwise.  One test for both users:
# mutants_fast.sh applies the mutant to its copy, selftest.sh (make check) dry-runs it on the tree.
mutant_applies() {
  local p=$1 dir=$2 log=$3; shift 3
  : > "$log"
  grep -q '^expect: ' "$p" || { echo "no 'expect:' line in $p"; return 1; }
  grep -q '^counterexample: ' "$p" || { echo "no 'counterexample:' line in $p"; return 1; }
  patch -s --fuzz=0 --no-backup-if-mismatch -d "$dir" -p1 "$@" < "$p" > "$log" 2>&1 ||
    { echo "$p does not apply to ref/ (update the mutant: proofs/mutants/README.md; patch says: $log)"; return 1; }
}
