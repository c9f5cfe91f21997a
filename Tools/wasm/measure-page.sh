#!/usr/bin/env bash
# The HTML viewer's figures for docs/performance.md (issue 32): for the bench's 1M-event
# sessions (three id shapes), the time `listtape html` takes, the page's size against the
# log's, and the page's own `#timing` report in headless Chromium: navigation start to the
# last state drawn, 20 jumps to spread-out events, 20 steps forward and 20 back (each the
# time to fold and redraw), and memory. The page writes the report into its title, read
# here through Chromium's DevTools list of pages. The load average is printed first.
#
#   swift build -c release --product listtape && bash Tools/wasm/measure-page.sh [RUNS]
#
# Sessions come from $LISTTAPE_PAGE_DIR (time-{short,path,uuid}-1000000.ltape, as the
# bench writes them; copied, since `html` reads only) or are generated into
# $TMPDIR/listtape-page-bench.
set -euo pipefail
cd "$(dirname "$0")/../.."
bin=${LISTTAPE:-$PWD/.build/release/listtape}
runs=${1:-3}
chromium=$(command -v chromium || command -v chromium-browser)
dir=${TMPDIR:-/tmp}/listtape-page-bench
mkdir -p "$dir"
echo "load: $(cat /proc/loadavg)"
for shape in short path uuid; do
  log="$dir/time-$shape-1000000.ltape"
  if [ ! -f "$log" ]; then
    if [ -n "${LISTTAPE_PAGE_DIR:-}" ]; then
      cp "$LISTTAPE_PAGE_DIR/time-$shape-1000000.ltape" "$log"
    else
      "$bin" generate --events 1000000 --seed 14 --outline 100000 --shape "$shape" \
        --max-items 110000 | "$bin" record "$log"
    fi
  fi
  page="$dir/$shape.html"
  start=$(date +%s.%N)
  "$bin" html "$log" -o "$page" --force 2>/dev/null
  end=$(date +%s.%N)
  printf '%s: html %.2f s, log %s bytes, page %s bytes\n' "$shape" \
    "$(awk "BEGIN { print $end - $start }")" "$(wc -c <"$log")" "$(wc -c <"$page")"
  for _ in $(seq "$runs"); do
    profile=$(mktemp -d)
    "$chromium" --headless --disable-gpu --no-sandbox --no-first-run \
      --user-data-dir="$profile" --host-resolver-rules='MAP * ~NOTFOUND' \
      --remote-debugging-port=0 "file://$page#timing" 2>"$profile/err" &
    pid=$!
    report=""
    for _ in $(seq 600); do
      port=$(grep -o '127.0.0.1:[0-9]*' "$profile/err" | head -1 || true)
      if [ -n "$port" ]; then
        report=$(curl -s "http://$port/json/list" | grep -o 'listtape-timing [^"]*' || true)
        [ -n "$report" ] && break
      fi
      sleep 0.2
    done
    kill "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
    # Chromium's helper processes may still be writing the profile as the browser exits.
    rm -rf "$profile" 2>/dev/null || { sleep 1; rm -rf "$profile" || true; }
    echo "  ${report:-no report}" | sed 's/&quot;/"/g'
  done
done
echo "load: $(cat /proc/loadavg)"
