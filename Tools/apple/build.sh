#!/usr/bin/env bash
# Builds the library products for Apple platforms. Run it on a Mac with Xcode 16 or later:
# Linux CI cannot build for them (docs/apple.md says what is verified where).
#
#   Tools/apple/build.sh          swift build for macOS, then every library product with
#                                 xcodebuild for a generic iOS device and the iOS simulator
#   Tools/apple/build.sh --test   also runs swift test on macOS
set -euo pipefail
cd "$(dirname "$0")/../.."

if [ "$(uname)" != "Darwin" ] || ! command -v xcodebuild >/dev/null; then
  echo "Tools/apple/build.sh: needs macOS with Xcode (xcodebuild); on Linux run .ci/run" >&2
  exit 69
fi

# The library products, as Package.swift declares them.
libraries=$(sed -n 's/.*\.library(name: "\([^"]*\)".*/\1/p' Package.swift)
if [ -z "$libraries" ]; then
  echo "Tools/apple/build.sh: no .library(name: ...) products found in Package.swift" >&2
  exit 1
fi

step() { printf '\n== %s\n' "$*"; }
failed=()

step "swift build (macOS $(sw_vers -productVersion), $(xcodebuild -version | head -1))"
swift build || failed+=("swift build (macOS)")
if [ "${1:-}" = "--test" ]; then
  step "swift test (macOS)"
  swift test || failed+=("swift test (macOS)")
fi

for library in $libraries; do
  for destination in "generic/platform=iOS" "generic/platform=iOS Simulator"; do
    step "xcodebuild build -scheme $library -destination '$destination'"
    xcodebuild build -quiet -scheme "$library" -destination "$destination" \
      -derivedDataPath .build/apple CODE_SIGNING_ALLOWED=NO \
      || failed+=("$library for $destination")
  done
done

echo
if [ ${#failed[@]} -gt 0 ]; then
  printf 'Apple builds FAILED:\n'
  printf '  %s\n' "${failed[@]}"
  exit 1
fi
echo "Apple builds passed: $(echo $libraries | tr '\n' ' ')for macOS, iOS and the iOS simulator"
