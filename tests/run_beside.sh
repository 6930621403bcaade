#!/usr/bin/env bash
# run_beside.sh LOG 'BACKGROUND COMMAND' FOREGROUND COMMAND...: `make check`'s two lanes.
# Why: the proofs (Frama-C replaying committed sessions: mostly one core) and the tests (two Criterion
# binaries or workers at a time) share no file, and run one after the other they left a core idle for
# much of the run.  The background command's output goes to LOG and is printed whole when the
# foreground command ends (so the two never interleave); the exit status is 0 only if both passed.
# Ctrl-C (or any signal that stops this script) stops both lanes.
set -u
log=$1; bg=$2; shift 2
mkdir -p "$(dirname "$log")"

# setsid: the background lane is its own process group, so that it can be stopped whole
setsid bash -c "$bg" > "$log" 2>&1 < /dev/null &
bg_pid=$!
stop_bg() { kill -TERM -- "-$bg_pid" 2>/dev/null; }
trap 'stop_bg; exit 130' INT TERM HUP

echo "run_beside: started in the background: $bg (log: $log)"
"$@"; fg_rc=$?
[ $fg_rc -eq 0 ] || echo "run_beside: the foreground lane FAILED (exit $fg_rc); waiting for the background lane"
wait "$bg_pid"; bg_rc=$?
trap - INT TERM HUP
echo "==== background lane: $bg (exit $bg_rc) ===="
cat "$log"
echo "==== end of the background lane ===="
[ $bg_rc -eq 0 ] || echo "run_beside: the background lane FAILED (exit $bg_rc): $bg"
[ $fg_rc -eq 0 ] && [ $bg_rc -eq 0 ]
