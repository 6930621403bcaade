#!/usr/bin/env bash
# run_units.sh PAR BINARY...: runs the Criterion test binaries, PAR of them at a time, each with
# `--jobs $UNIT_JOBS` workers.  Why: `make asan` must run Criterion's workers one at a time (its
# runner leaks 48 bytes when two workers finish together), which leaves one of the two cores idle;
# two binaries side by side use both.  Each binary's output is printed whole when it ends, so two
# binaries' lines never interleave.  Every binary runs; the exit status is 1 if any failed.
# With PAR = 1 the binaries run one after the other with their output streamed as it comes.
# Each binary's wall time is printed after it ("== BINARY: 12 s"): make check's budget is tracked
# from these lines.
set -u
par=$1; shift
jobs=${UNIT_JOBS:-2}
fail=0

if [ "$par" -le 1 ]; then
  for t in "$@"; do
    echo "== $t"
    t0=$SECONDS
    "$t" --jobs "$jobs" || { echo "== $t FAILED (exit $?)"; fail=1; }
    echo "== $t: $((SECONDS - t0)) s"
  done
  exit $fail
fi

logdir=$(mktemp -d)
trap 'rm -rf "$logdir"' EXIT
declare -A running=()   # pid -> binary
declare -A started=()   # pid -> $SECONDS at its start

# finish_one: waits for any running binary, prints its output and verdict.
finish_one() {
  local pid rc t
  wait -n -p pid; rc=$?
  t=${running[$pid]}
  unset "running[$pid]"
  echo "== $t"
  cat "$logdir/$(basename "$t").log"
  if [ $rc -ne 0 ]; then echo "== $t FAILED (exit $rc)"; fail=1; fi
  echo "== $t: $((SECONDS - ${started[$pid]})) s"
  unset "started[$pid]"
}

for t in "$@"; do
  while [ ${#running[@]} -ge "$par" ]; do finish_one; done
  "$t" --jobs "$jobs" > "$logdir/$(basename "$t").log" 2>&1 &
  running[$!]=$t
  started[$!]=$SECONDS
done
while [ ${#running[@]} -gt 0 ]; do finish_one; done
exit $fail
