import ListTapeLog
import ListTapeModel
import ListTapeStore

/// Follows a log another process is appending to: each `poll()` reads the frames written
/// since the last one, and `forEachNewEvent` hands over their events, each once, in order.
/// The caller decides how often to poll (the CLI: every 50 ms); nothing here waits.
///
/// Its lifecycle (`State`):
///
///     following ──a bad frame with a frame of this log after it──▶ suspect(X)
///     suspect(X) ──the next poll reads past X──▶ following
///     suspect(X) ──the next poll stops at X again──▶ ended(.damaged)
///     following, suspect ──the path names no file / another file──▶ ended(.removed / .replaced)
///     following, suspect ──the file is shorter than what was read──▶ ended(.replaced)
///
/// A frame still being written (a partial header or payload, or one whose checksum does
/// not hold yet: a torn tail, with nothing of this log after it) is "not yet": it leaves
/// the state alone and is read once complete, by this writer or by the next one, which
/// cuts it and writes in its place. Damage needs two reads a poll apart to agree, so a
/// read that caught bytes mid-write on a file system that shows them out of order is never
/// reported. Removal and replacement end the follow after a last read of what the open
/// descriptor still holds.
package final class LogFollower {
  /// Where following stands.
  package enum State: Sendable, Equatable {
    /// Reading; a torn tail is waited for.
    case following
    /// A bad frame at byte `offset` with a frame of this log after it, seen once.
    case suspect(offset: UInt64)
    /// Following stopped for good.
    case ended(End)
  }

  /// Why following stopped.
  package enum End: Sendable, Equatable {
    /// The log's path names no file any more.
    case removed
    /// The log's path names another file, or the file was cut below what was read.
    case replaced
    /// Damage two reads agreed on.
    case damaged(LogDamage)
  }

  /// The log followed (its `eventCount` grows with each poll).
  package let timeline: Timeline
  package private(set) var state: State = .following
  /// The next event `forEachNewEvent` hands over.
  package private(set) var next: Int
  /// The log's ids as they stand before `next`, and a decoder standing there (made by the
  /// first `forEachNewEvent`: a follower that only polls, as the viewer's, never decodes).
  private var ids = ListState()
  private var decoder: EventDecoder?

  /// Follows `timeline` from event `from` on (events before it are never handed over; a
  /// `from` past the events read so far starts after them).
  package init(_ timeline: Timeline, from: Int = 1) {
    self.timeline = timeline
    next = min(max(from, 1), timeline.eventCount + 1)
    judge(timeline.reader.stop)
  }

  /// Whether following has stopped for good.
  package var ended: Bool {
    if case .ended = state { return true }
    return false
  }

  /// Reads what was appended since the last poll and checks the path; returns the state.
  @discardableResult
  package func poll() throws(StoreError) -> State {
    guard !ended else { return state }
    let reader = timeline.reader
    // Before the read: frames the writer appended before the path went away are still
    // read through the open descriptor.
    let path = reader.pathStatus
    try timeline.refresh()
    if reader.fileSize < reader.validEnd {
      state = .ended(.replaced)
      return state
    }
    judge(reader.stop)
    switch path {
    case .same: break
    case .removed: state = .ended(.removed)
    case .replaced: state = .ended(.replaced)
    }
    return state
  }

  /// Hands over the events read and not yet handed over (those after a salvaged gap that
  /// do not decode are passed over, as every scan does).
  package func forEachNewEvent(_ body: (Int, Event) -> Void) throws(StoreError) {
    let last = timeline.eventCount
    guard next <= last else { return }
    var decoder: EventDecoder
    if let kept = self.decoder {
      decoder = kept
    } else {
      decoder = try timeline.decoder(after: next - 1)
    }
    defer { self.decoder = decoder }
    try timeline.forEachEvent(from: next, through: last, ids: &ids, decoder: &decoder) {
      n, event in
      body(n, event)
      return true
    }
    next = last + 1
  }

  /// The state after a read that stopped at `stop` (nil: at the end of the file).
  private func judge(_ stop: LogDamage?) {
    guard let stop, stop.kind == .damaged else {
      state = .following
      return
    }
    if case .suspect(let offset) = state, offset == stop.offset {
      state = .ended(.damaged(stop))
    } else {
      state = .suspect(offset: stop.offset)
    }
  }
}
