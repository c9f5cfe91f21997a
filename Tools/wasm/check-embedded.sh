#!/usr/bin/env bash
# Compiles ListTapeJSON (without its file readers) and ListTapeModel for WebAssembly with
# Embedded Swift, as the HTML viewer's reducer is built (Tools/wasm/build.sh): fails when a
# change to the model uses something Embedded Swift lacks (key paths, dynamic casts,
# existentials, Foundation, reflection). Objects only; nothing is linked or run.
exec bash "$(dirname "$0")/build.sh" --compile
