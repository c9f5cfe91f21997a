#!/usr/bin/env bash
# Builds the fuzz targets (libFuzzer + AddressSanitizer) and runs each for a bounded time.
# Usage: Tools/fuzz/run.sh [seconds per target] [target...] (default 60 s, every target).
# Targets: log-reader (frames, both formats), index-reader (the index file), event-decoder
# (1.0 records and 2.0 columnar frames), checkpoint-decoder (1.0 and 2.0 states), json-line
# (the JSON Lines event parser). Findings land in .build/fuzz/artifacts/<target>; new inputs
# in .build/fuzz/corpus/<target> (seeded from Tools/fuzz/corpus/<target>, which holds 1.0
# and 2.0 files: `listtape-bench __fuzz-seeds DIR` writes the 2.0 ones).
set -euo pipefail
cd "$(dirname "$0")/../.."
seconds="${1:-60}"
shift || true
targets=("$@")
[ ${#targets[@]} -eq 0 ] && targets=(log-reader index-reader event-decoder checkpoint-decoder json-line)
out=.build/fuzz
mkdir -p "$out/modules"
sanitize=(-sanitize=fuzzer,address -parse-as-library -O -g -swift-version 6 -package-name ListTapeFuzz)

deflate_built=""
log_target() { # name, target file
  # ListTapeLog writes index states with ListTapeDeflate's writers: that module first.
  if [ -z "$deflate_built" ]; then
    deflate_built=1
    # ...and its CRC-32 (CListTapeCRC, C).
    clang -O2 -fsanitize=address -I Sources/CListTapeCRC/include -c Sources/CListTapeCRC/crc32.c \
      -o "$out/modules/CListTapeCRC.o"
    swiftc "${sanitize[@]}" -wmo -module-name ListTapeDeflate -emit-module \
      -emit-module-path "$out/modules/ListTapeDeflate.swiftmodule" -I Sources/CListTapeZlib \
      -I Sources/CListTapeCRC/include \
      -c Sources/ListTapeDeflate/*.swift -o "$out/modules/ListTapeDeflate.o"
  fi
  swiftc "${sanitize[@]}" -module-name ListTapeLog -I Sources/CListTapeZlib -I "$out/modules" \
    -I Sources/CListTapeCRC/include -lz Sources/ListTapeLog/*.swift "Tools/fuzz/$2" \
    "$out/modules/ListTapeDeflate.o" "$out/modules/CListTapeCRC.o" -o "$out/$1"
}

json_built=""
model_target() { # name, target file
  if [ -z "$json_built" ]; then
    json_built=1
    swiftc "${sanitize[@]}" -wmo -module-name ListTapeJSON -emit-module \
      -emit-module-path "$out/modules/ListTapeJSON.swiftmodule" \
      -c Sources/ListTapeJSON/*.swift -o "$out/modules/ListTapeJSON.o"
  fi
  # shellcheck disable=SC2046
  swiftc "${sanitize[@]}" -module-name ListTapeModel -I "$out/modules" \
    $(find Sources/ListTapeModel -name '*.swift' | sort) "Tools/fuzz/$2" \
    "$out/modules/ListTapeJSON.o" -o "$out/$1"
}

for t in "${targets[@]}"; do
  case "$t" in
    log-reader) log_target "$t" LogReaderTarget.swift ;;
    index-reader) log_target "$t" IndexReaderTarget.swift ;;
    event-decoder) model_target "$t" EventDecoderTarget.swift ;;
    checkpoint-decoder) model_target "$t" CheckpointDecoderTarget.swift ;;
    json-line) model_target "$t" JSONLineTarget.swift ;;
    *) echo "unknown target $t" >&2; exit 64 ;;
  esac
  mkdir -p "$out/corpus/$t" "$out/artifacts/$t"
  cp -n "Tools/fuzz/corpus/$t/"* "$out/corpus/$t/" 2>/dev/null || true
  echo "== $t: ${seconds} s"
  # SWIFT_BACKTRACE=enable=no: otherwise the Swift backtracer hangs libFuzzer on a crash.
  SWIFT_BACKTRACE=enable=no "$out/$t" "$out/corpus/$t" \
    -max_total_time="$seconds" -rss_limit_mb=1024 -timeout=5 -max_len=65536 \
    -artifact_prefix="$out/artifacts/$t/" -print_final_stats=1
done
