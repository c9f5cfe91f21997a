#!/usr/bin/env bash
# The public API of each library, as the toolchain prints it from the built module
# (swift-synthesize-interface; doc comments left out), checked in as docs/api/<Module>.txt
# so that every change to what an app can call shows up in review.
#
#   Tools/api/listing.sh          rewrite the listings
#   Tools/api/listing.sh --check  fail, with the difference, when a listing is stale (CI)
set -euo pipefail
cd "$(dirname "$0")/../.."
modules=(ListTapeJSON ListTapeModel ListTapeLog ListTapeStore ListTapeRead ListTapeInvestigate)
source Tools/api/modules.sh
build_modules "${modules[@]}"
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
for m in "${modules[@]}"; do
  swift-synthesize-interface -module-name "$m" -I "$bin/Modules" -target "$triple" \
    "${clang_maps[@]}" |
    # Doc comments and the platform's C library are not API; blank lines are squeezed.
    grep -v -E '^[[:space:]]*///|^import (Glibc|Darwin)$' | cat -s >"$out/$m.txt"
done
if [ "${1:-}" = "--check" ]; then
  status=0
  for m in "${modules[@]}"; do
    if ! diff -u "docs/api/$m.txt" "$out/$m.txt"; then status=1; fi
  done
  if [ $status -ne 0 ]; then
    echo "The public API changed: run Tools/api/listing.sh and commit docs/api/ with the change." >&2
  fi
  exit $status
fi
mkdir -p docs/api
for m in "${modules[@]}"; do cp "$out/$m.txt" "docs/api/$m.txt"; done
echo "Wrote docs/api/{$(IFS=,; echo "${modules[*]}")}.txt"
