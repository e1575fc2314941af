#!/usr/bin/env bash
# Runs the test suite: the arguments are the `swift test` command line. When it
# fails, the failures are repeated at the end, since CI keeps only the tail of
# the output and a failure is otherwise buried under the logs of later tests.
set -u
log=$(mktemp)
trap 'rm -f "$log"' EXIT
"$@" 2>&1 | tee "$log"
rc=${PIPESTATUS[0]}
if [ "$rc" -ne 0 ]; then
    echo "suite: what failed (exit $rc)"
    grep -aE '^✘|Fatal error|signal code' "$log" | cut -c1-400 | head -40
fi
exit "$rc"
