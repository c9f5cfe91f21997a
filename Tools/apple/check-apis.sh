#!/usr/bin/env bash
# Checks the library targets (Sources/) against iOS 16 / macOS 13 with the toolchain's own
# data: every symbol the compiler resolves in them against the availability that the
# toolchain's symbol graphs carry, and the patterns of Tools/apple/unavailable-apis.txt
# (what that data cannot tell: Glibc-only C calls, processes, signals) against every line
# an Apple build compiles. How: Tools/apple/availability.py. Nothing here builds for Apple
# platforms; Tools/apple/build.sh does, on a Mac.
#
#   Tools/apple/check-apis.sh [--tests] [MODULE_DIR...]  check (default: every Swift target in
#                                              Sources); needs `swift build` first
#   Tools/apple/check-apis.sh --self-test      planted uses must be reported, exactly
set -euo pipefail
exec python3 "$(dirname "$0")/availability.py" "$@"
