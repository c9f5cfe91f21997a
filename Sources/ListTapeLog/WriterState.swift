/// Where a log writer is in its life. Every change goes through one of the named
/// transitions below, under the writer's lock; each has a test (`WriterStateTests`).
///
/// ```
///            append / frame written            background sync starts
///   open ─────────────────────────> writing ─────────────────────────> flushing
///     ^  <───────────────────────── |     ^ <──────────────────────────── |
///     |     sync done, nothing left       background sync done           |
///     |                                                                   |
///     └──── any of the three ── write, encode or sync fails ──> failed ───┤
///                         └──────────── close ─────────────> closed <─────┘
/// ```
package enum WriterState: Sendable, CustomStringConvertible {
  /// Usable and idle: no event waits in the batch and every frame written is synced (or the
  /// policy never syncs).
  case open
  /// Usable: events wait in the batch, or frames were written since the last sync.
  case writing
  /// Usable: the interval flusher is syncing outside the lock (appends go on meanwhile).
  case flushing
  /// A write, encode or sync failed: the partial frame was cut off, and every call but
  /// `close` throws this error (fsyncgate: a failed sync is never retried).
  case failed(LogError)
  /// Closed: the lock and descriptor are released; every call throws `.closed`.
  case closed

  package var description: String {
    switch self {
    case .open: return "open"
    case .writing: return "writing"
    case .flushing: return "flushing"
    case .failed(let e): return "failed(\(e.message))"
    case .closed: return "closed"
    }
  }

  /// Whether appends, flushes and syncs are accepted.
  var isUsable: Bool {
    switch self {
    case .open, .writing, .flushing: return true
    case .failed, .closed: return false
    }
  }

  /// Throws what a call on a writer in this state must throw, if anything.
  func checkUsable(path: String) throws(LogError) {
    switch self {
    case .open, .writing, .flushing: return
    case .failed(let e): throw e
    case .closed: throw LogError(.closed, path: path, message: "log writer is closed")
    }
  }

  // MARK: Transitions

  /// An event entered the batch or a frame was written: open → writing (a running
  /// background sync stays flushing).
  mutating func beginWriting() {
    if case .open = self { self = .writing }
  }

  /// A sync returned, or a frame-less flush found nothing to write: writing → open when
  /// nothing waits and nothing is unsynced.
  mutating func settle(idle: Bool) {
    if case .writing = self, idle { self = .open }
  }

  /// The interval flusher starts a sync outside the lock: writing → flushing.
  mutating func beginFlushing() {
    if case .writing = self { self = .flushing }
  }

  /// The background sync returned: flushing → open when nothing waits and nothing was
  /// written meanwhile, else writing.
  mutating func endFlushing(idle: Bool) {
    if case .flushing = self { self = idle ? .open : .writing }
  }

  /// A write, encode or sync failed: any usable state → failed; the first failure stays.
  mutating func fail(_ error: LogError) {
    if isUsable { self = .failed(error) }
  }

  /// `close` released the file: any state → closed.
  mutating func close() { self = .closed }
}

extension WriterState: Equatable {
  /// Failures are equal when their kind and message are.
  package static func == (a: WriterState, b: WriterState) -> Bool {
    switch (a, b) {
    case (.open, .open), (.writing, .writing), (.flushing, .flushing), (.closed, .closed):
      return true
    case (.failed(let x), .failed(let y)): return x.kind == y.kind && x.message == y.message
    default: return false
    }
  }
}
