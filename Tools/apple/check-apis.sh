#!/usr/bin/env bash
# Fails when a library target uses an API from Tools/apple/unavailable-apis.txt (missing on
# Apple platforms, not for an app, or newer than the deployment target) outside a
# Linux-only #if branch. Nothing here builds for Apple platforms; this catches by reading
# what Tools/apple/build.sh would catch on a Mac.
#
#   Tools/apple/check-apis.sh [DIR...]     check DIR (default: Sources); exit 1 on a finding
#   Tools/apple/check-apis.sh --self-test  check planted violations and guarded look-alikes
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
list="$here/unavailable-apis.txt"

check() {
  local files
  files=$(find "$@" -name '*.swift' -type f | LC_ALL=C sort)
  [ -n "$files" ] || return 0
  # shellcheck disable=SC2086
  awk -v listfile="$list" '
    BEGIN {
      FS = "\n"
      n = 0
      while ((getline line < listfile) > 0) {
        if (line ~ /^#/ || line ~ /^[ \t]*$/) continue
        tab = index(line, "\t")
        n++
        pattern[n] = substr(line, 1, tab - 1)
        why[n] = substr(line, tab + 1)
      }
      found = 0
    }
    FNR == 1 { depth = 0; inblock = 0 }
    # Whether a #if condition holds only on Linux, or on every Apple platform.
    function linuxOnly(c) { return c ~ /canImport\((Glibc|Musl)\)|os\(Linux\)/ && c !~ /!(canImport\((Glibc|Musl)\)|os\(Linux\))/ }
    function allApple(c) { return c ~ /canImport\(Darwin\)|!os\(Linux\)|!canImport\(Glibc\)/ && c !~ /!canImport\(Darwin\)/ }
    function guarded(   i) { for (i = 1; i <= depth; i++) if (linux[i]) return 1; return 0 }
    # The line without comments; string literals stay.
    function code(s,   out, i, c, instr) {
      out = ""; instr = 0
      for (i = 1; i <= length(s); i++) {
        c = substr(s, i, 1)
        if (inblock) {
          if (c == "*" && substr(s, i + 1, 1) == "/") { inblock = 0; i++ }
          continue
        }
        if (instr) {
          out = out c
          if (c == "\\") { out = out substr(s, i + 1, 1); i++ }
          else if (c == "\"") instr = 0
          continue
        }
        if (c == "\"") { instr = 1; out = out c; continue }
        if (c == "/" && substr(s, i + 1, 1) == "/") break
        if (c == "/" && substr(s, i + 1, 1) == "*") { inblock = 1; i++; continue }
        out = out c
      }
      return out
    }
    {
      raw = $0
      if (!inblock && raw ~ /^[ \t]*#if[ \t(!]/) {
        depth++; cond = raw; linux[depth] = linuxOnly(cond); apple[depth] = allApple(cond); next
      }
      if (!inblock && raw ~ /^[ \t]*#elseif[ \t(!]/) {
        cond = raw; linux[depth] = linuxOnly(cond) || apple[depth]; apple[depth] = apple[depth] || allApple(cond); next
      }
      if (!inblock && raw ~ /^[ \t]*#else([ \t]|$)/) { linux[depth] = apple[depth]; next }
      if (!inblock && raw ~ /^[ \t]*#endif/) { if (depth > 0) depth--; next }
      text = code(raw)
      if (raw ~ /\/\/ apple-api: [^ ]/ || guarded()) next
      for (k = 1; k <= n; k++) {
        if (text ~ pattern[k]) {
          printf "%s:%d: %s\n    %s\n", FILENAME, FNR, why[k], raw
          found++
        }
      }
    }
    END {
      if (found > 0) {
        printf "\n%d use(s) of APIs unavailable in an Apple build of the libraries (list: Tools/apple/unavailable-apis.txt)\n", found
        exit 1
      }
    }
  ' $files
}

if [ "${1:-}" = "--self-test" ]; then
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
  mkdir -p "$tmp/Sources/Lib"
  cat > "$tmp/Sources/Lib/Planted.swift" <<'SWIFT'
import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

func planted(_ fd: Int32, _ bytes: [UInt8]) -> String? {
  _ = fdatasync(fd)
  let text = String(validating: bytes, as: UTF8.self)
  let p = Process()
  _ = p
  _ = signal(SIGPIPE, SIG_IGN)
  return try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) ?? text
}

func guardedLookAlikes(_ fd: Int32, done: DispatchSemaphore) {
  // fdatasync( and Process() in a comment are fine
  _ = "a string that mentions fdatasync is not a call"
  done.signal()
  #if canImport(Glibc)
  _ = fdatasync(fd)
  #elseif os(Linux)
  _ = malloc_trim(0)
  #endif
  #if canImport(Darwin)
  _ = fsync(fd)
  #else
  _ = fdatasync(fd)
  #endif
  #if !os(Linux)
  _ = fsync(fd)
  #else
  _ = fdatasync(fd)
  #endif
  /* fdatasync( in a block comment */
  if #available(iOS 18, macOS 15, *) {
    _ = String(validating: [UInt8](), as: UTF8.self)  // apple-api: behind #available
  }
}
SWIFT
  set +e
  out=$(check "$tmp/Sources" 2>&1)
  status=$?
  set -e
  expected="Planted.swift:9: Planted.swift:10: Planted.swift:11: Planted.swift:13: Planted.swift:14:"
  got=$(printf '%s\n' "$out" | grep -o 'Planted\.swift:[0-9]*:' | tr '\n' ' ' | sed 's/ $//')
  if [ "$status" -ne 1 ] || [ "$got" != "$expected" ]; then
    printf 'check-apis self-test FAILED (exit %s)\nexpected: %s\ngot:      %s\n%s\n' \
      "$status" "$expected" "$got" "$out"
    exit 1
  fi
  echo "check-apis self-test: the 5 planted uses are reported with file:line; guarded, commented and waived look-alikes are not"
  exit 0
fi

if [ $# -eq 0 ]; then
  cd "$here/../.."
  set -- Sources
fi
check "$@"
echo "check-apis: no API unavailable on Apple platforms in $*"
