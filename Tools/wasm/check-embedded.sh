#!/usr/bin/env bash
# Compiles ListTapeJSON (without its file readers) and ListTapeModel for WebAssembly with
# Embedded Swift, the way the HTML viewer's reducer is built: fails when a change to the
# model uses something Embedded Swift lacks (key paths, dynamic casts, existentials,
# Foundation, reflection). Objects only; nothing is linked or run.
set -euo pipefail
cd "$(dirname "$0")/../.."
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
printf 'module CListTapeHints { header "%s/Sources/CListTapeHints/include/CListTapeHints.h" export * }\n' \
  "$PWD" >"$out/module.modulemap"
flags=(-target wasm32-unknown-none-wasm -enable-experimental-feature Embedded -wmo
  -parse-as-library -Osize -package-name ListTape -I "$out"
  -Xcc -fmodule-map-file="$out/module.modulemap")
json=$(find Sources/ListTapeJSON -name '*.swift' ! -name 'Line*.swift' | sort)
# shellcheck disable=SC2086
swiftc "${flags[@]}" -module-name ListTapeJSON -emit-module -emit-module-path "$out/ListTapeJSON.swiftmodule" \
  -c $json -o "$out/json.o"
# shellcheck disable=SC2086
swiftc "${flags[@]}" -module-name ListTapeModel -c $(find Sources/ListTapeModel -name '*.swift' | sort) \
  -o "$out/model.o"
echo "Embedded Swift (wasm32): ListTapeJSON and ListTapeModel compile"
