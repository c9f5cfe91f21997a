# Sourced by listing.sh and docc.sh: builds the named library modules with the flags CI
# uses (so nothing is rebuilt) and sets what the toolchain's tools need to load them:
# $bin (the build's products), $triple, and the $clang_maps flags for the C modules.
build_modules() {
  local flags=(-Xswiftc -warnings-as-errors)
  for m in "$@"; do swift build "${flags[@]}" --target "$m" >/dev/null; done
  bin=$(swift build "${flags[@]}" --show-bin-path)
  triple=$(basename "$(dirname "$bin")")
  clang_maps=(
    -Xcc -fmodule-map-file="$PWD/Sources/CListTapeZlib/module.modulemap"
    -Xcc -fmodule-map-file="$PWD/Sources/CListTapePrefetch/include/module.modulemap"
    -Xcc -fmodule-map-file="$PWD/Sources/CListTapeCRC/include/module.modulemap"
  )
}
