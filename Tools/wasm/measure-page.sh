#!/usr/bin/env bash
# The HTML viewer's figures for docs/performance.md: on the 1M-event sample, for windows of
# 200,000 events (the default --max-events), 50,000 and 1,000, the time `listtape html`
# takes, the page's size, and its time to first paint in headless Chromium (navigation
# start to the first state drawn, which the page records in data-first-render), three runs.
#
#   swift build -c release --product listtape && bash Tools/wasm/measure-page.sh
#
# The sample is cached in $TMPDIR/listtape-page-bench (delete it to regenerate).
set -euo pipefail
cd "$(dirname "$0")/../.."
bin=${LISTTAPE:-$PWD/.build/release/listtape}
chromium=$(command -v chromium || command -v chromium-browser)
dir=${TMPDIR:-/tmp}/listtape-page-bench
mkdir -p "$dir"
if [ ! -f "$dir/big.ltape" ]; then
  "$bin" generate --events 1000000 | "$bin" record "$dir/big.ltape"
fi
echo "load: $(uptime)"
if "$bin" html "$dir/big.ltape" -o "$dir/all.html" 2>"$dir/refused"; then
  echo "the whole log: written ($(wc -c <"$dir/all.html") bytes)"
else
  echo "the whole log: refused: $(cat "$dir/refused")"
fi
for from in 800001 950001 999001; do
  page="$dir/page-$from.html"
  start=$(date +%s.%N)
  "$bin" html "$dir/big.ltape" -o "$page" --from "$from" 2>/dev/null
  end=$(date +%s.%N)
  paints=()
  for _ in 1 2 3; do
    paint=$("$chromium" --headless --disable-gpu --no-sandbox --no-first-run \
      --user-data-dir="$dir/profile" --host-resolver-rules='MAP * ~NOTFOUND' --dump-dom \
      "file://$page" 2>/dev/null | grep -o 'data-first-render="[0-9]*"' | grep -o '[0-9]*')
    paints+=("${paint:-none}")
  done
  printf 'events %s-1000000: html %.1f s, %s bytes, first paint %s ms\n' "$from" \
    "$(awk "BEGIN { print $end - $start }")" "$(wc -c <"$page")" "${paints[*]}"
done
