#!/usr/bin/env bash
# Issue 23.8's check: README's test command five times in a row on a fresh clone of this
# repository's HEAD, the third with a release build of a second clone running beside it.
# Usage: bash Tools/suite/runs.sh [OUT_DIR]   (a line per run in OUT_DIR/results.txt)
set -u
repo=$(cd "$(dirname "$0")/../.." && pwd)
out=${1:-$(mktemp -d /tmp/suite-XXXX)}
mkdir -p "$out"
d=$(mktemp -d /tmp/fresh-XXXX); git clone -q "$repo" "$d/ListTape"
d2=$(mktemp -d /tmp/other-XXXX); git clone -q "$repo" "$d2/ListTape"
cd "$d/ListTape"
echo "clone of $(git rev-parse --short HEAD) at $d" >> "$out/results.txt"
for i in 1 2 3 4 5; do
  if [ $i = 3 ]; then
    (cd "$d2/ListTape" && swift build -c release > "$out/other-build.log" 2>&1
      echo "other build rc=$?" >> "$out/results.txt") &
  fi
  start=$(date +%s)
  swift test > "$out/run$i.log" 2>&1; rc=$?
  end=$(date +%s)
  echo "run $i: rc=$rc $((end-start)) s load $(cut -d' ' -f1-3 /proc/loadavg)" \
    "$(grep -E 'Test run with' "$out/run$i.log" | tail -1)" >> "$out/results.txt"
done
wait
echo "results in $out/results.txt"
