import Foundation

/// A clock for writers' background flushers that moves only when told: a writer whose
/// `LogWriterOptions.clock` is one starts no flusher thread, and `advance(by:)` does on the
/// caller's thread what the flusher would have done by then (cut a batch that reached
/// `batchDelay`, run the interval sync). So the operations a writer makes come in the same
/// order every run (the power-loss sweeps replay them on a simulated disk).
package final class ManualClock: @unchecked Sendable {
  private let lock = NSLock()
  /// Nanoseconds; any start will do, as for a monotonic clock.
  private var nanos: UInt64 = 1_000_000_000
  private var writers: [Weak] = []

  private struct Weak {
    weak var core: WriterCore?
  }

  package init() {}

  /// The clock's time in nanoseconds.
  package var now: UInt64 { lock.withLock { nanos } }

  /// Moves the clock on by `seconds`, then runs every open writer's due flusher work.
  package func advance(by seconds: Double) {
    let cores = lock.withLock { () -> [WriterCore] in
      nanos &+= UInt64(max(seconds, 0) * 1e9)
      writers.removeAll { $0.core == nil }
      return writers.compactMap(\.core)
    }
    for core in cores { core.flushDue() }
  }

  /// A writer opened with this clock: `advance` runs its flusher.
  func register(_ core: WriterCore) {
    lock.withLock { writers.append(Weak(core: core)) }
  }
}

extension ManualClock: Equatable {
  /// The same clock.
  package static func == (a: ManualClock, b: ManualClock) -> Bool { a === b }
}
