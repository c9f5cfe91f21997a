#!/usr/bin/env bash
# Runs the tests that exercise the log, the codecs, the store and the pipeline threads under
# AddressSanitizer and ThreadSanitizer. Each sanitizer builds in its own scratch path
# (.build/address, .build/thread), so the normal build is left alone.
#
#   Tools/sanitize.sh              both, every suite below
#   Tools/sanitize.sh address      one of them
#   Tools/sanitize.sh --ci         the subset .ci/run runs (see docs/performance.md)
#
# Address: the log's round trips, faults (truncation, bit flips, forged lengths) and kill -9
# loop, the codecs (event and state round trips, hostile records and checkpoints), the
# timeline and the replay pipeline, the store (its kill -9 loop included), and the hostile
# logs through the instrumented `listtape`. Thread: the store driven from many threads while
# its writer flushes, the writer's background flusher with concurrent appenders, and the
# replay pipeline's two threads.
set -euo pipefail
cd "$(dirname "$0")/.."

ci=0
which=()
for arg in "$@"; do
  case "$arg" in
    --ci) ci=1 ;;
    address | thread) which+=("$arg") ;;
    -h | --help)
      sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//'
      exit 0
      ;;
    *)
      echo "sanitize.sh: unknown argument '$arg'" >&2
      exit 64
      ;;
  esac
done
[ ${#which[@]} -gt 0 ] || which=(address thread)

log='ListTapeLogTests\.(FaultTests|KillTests|RoundTripTests|ParityTests|WriterStateTests)'
codecs='ListTapeModelTests\.(StateCodecTests|EventRoundTripTests|EventDecodingTests)'
replay='ListTapeStoreTests\.(HostileBytesTests|TimelineTests|GoldenTests|ReadAheadTests)'
store='ListTapeStoreTests\.(StoreTests|StoreThreadTests|StoreKillTests)'
address_suites="$log|$codecs|$replay|$store|ListTapeCLITests\.HostileTimeTests|ListTapeJSONTests"
thread_suites='ListTapeStoreTests\.(StoreTests|StoreThreadTests|ReadAheadTests)|ListTapeLogTests\.(RoundTripTests|WriterStateTests|PointCompressorTests)|ListTapeParquetTests\.WriterTests'
# A latency bound (p99 of send) that the instrumentation alone breaks.
skip='callerNeverWaitsForTheDisk'
if [ "$ci" = 1 ]; then
  # About 4 minutes on the project machine: one instrumented build is most of the cost, so
  # CI runs ThreadSanitizer on the threaded suites and AddressSanitizer only locally.
  which=(thread)
fi

export SWIFT_BACKTRACE=enable=no
# Leak reports would come from the runtime's and Foundation's caches, not from ListTape.
export ASAN_OPTIONS="detect_leaks=0:halt_on_error=1:abort_on_error=1"
export TSAN_OPTIONS="halt_on_error=1:second_deadlock_stack=1"
for sanitizer in "${which[@]}"; do
  suites=$address_suites
  [ "$sanitizer" = thread ] && suites=$thread_suites
  echo "sanitize.sh: $sanitizer: building (.build/$sanitizer)"
  start=$(date +%s)
  swift build --build-tests --sanitize="$sanitizer" --scratch-path ".build/$sanitizer"
  echo "sanitize.sh: $sanitizer: running $suites"
  LISTTAPE_SANITIZER=$sanitizer swift test --skip-build --sanitize="$sanitizer" \
    --scratch-path ".build/$sanitizer" --filter "$suites" --skip "$skip"
  echo "sanitize.sh: $sanitizer: clean in $(($(date +%s) - start)) s"
done
