#!/usr/bin/env bash
# Builds the ListTapeLog reader fuzzer (libFuzzer + AddressSanitizer) and runs it for a
# bounded time. Usage: Tools/fuzz/run.sh [seconds] (default 60). Findings land in
# .build/fuzz/artifacts; new inputs in .build/fuzz/corpus (seeded from Tools/fuzz/corpus).
set -euo pipefail
cd "$(dirname "$0")/../.."
seconds="${1:-60}"
out=.build/fuzz
mkdir -p "$out/corpus" "$out/artifacts"
swiftc -sanitize=fuzzer,address -parse-as-library -O -g \
  -module-name ListTapeLog -package-name ListTapeFuzz -swift-version 6 \
  -I Sources/CZlib -lz \
  Sources/ListTapeLog/*.swift Tools/fuzz/FuzzReader.swift \
  -o "$out/log-reader"
cp -n Tools/fuzz/corpus/* "$out/corpus/" 2>/dev/null || true
# SWIFT_BACKTRACE=enable=no: otherwise the Swift backtracer hangs libFuzzer on a crash.
SWIFT_BACKTRACE=enable=no "$out/log-reader" "$out/corpus" \
  -max_total_time="$seconds" -rss_limit_mb=1024 -timeout=5 -max_len=65536 \
  -artifact_prefix="$out/artifacts/" -print_final_stats=1
