#!/usr/bin/env bash
# Builds the DocC documentation of the library modules (their catalogs in
# Sources/<Module>/<Module>.docc and their symbols' doc comments) with the toolchain's
# swift-symbolgraph-extract and docc, failing on any warning and on any public declaration
# written without a doc comment (Tools/api/undocumented.py; ListTapeLog has no catalog but
# is checked too) (CI).
#
#   Tools/api/docc.sh [output-dir]   the archives land in output-dir (default: a temporary
#                                    directory that is removed)
set -euo pipefail
cd "$(dirname "$0")/../.."
modules=(ListTapeModel ListTapeStore ListTapeRead ListTapeInvestigate)
source Tools/api/modules.sh
build_modules ListTapeLog "${modules[@]}"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
out=${1:-$work/docs}
mkdir -p "$out"
for m in ListTapeLog "${modules[@]}"; do
  mkdir -p "$work/graphs/$m"
  swift-symbolgraph-extract -module-name "$m" -I "$bin/Modules" -target "$triple" \
    -minimum-access-level public -skip-inherited-docs -output-dir "$work/graphs/$m" \
    "${clang_maps[@]}"
  python3 Tools/api/undocumented.py "$work/graphs/$m/$m.symbols.json"
  [ "$m" = ListTapeLog ] && continue
  docc convert "Sources/$m/$m.docc" --additional-symbol-graph-dir "$work/graphs/$m" \
    --fallback-display-name "$m" --fallback-bundle-identifier "org.listtape.$m" \
    --output-path "$out/$m.doccarchive" --warnings-as-errors >"$work/$m.log" 2>&1 ||
    {
      cat "$work/$m.log" >&2
      echo "docc: $m has warnings (above)" >&2
      exit 1
    }
done
echo "DocC: ${modules[*]} built without warnings"
