import ListTapeLog
import ListTapeModel
import ListTapeRead
import ListTapeStore

extension Timeline {
  /// Records events 1...n of this log into `recorder` (a new 2.0 log) with their numbers:
  /// event N of the copy is event N of this log, or what `replacing` makes of it. Events a
  /// salvage lost, and those that do not decode after them, become gaps, as in this log;
  /// at each recovery point after a gap where `adopts` says the copy's state is this log's,
  /// the copy takes the restored state and writes its own recovery point. So the copy's
  /// exact states are this log's (`cut`, `what-if -o`). Returns the events recorded.
  /// - Complexity: one pass over the events, plus a checkpoint decode per recovery point.
  package func copyEvents(
    through n: Int, into recorder: Recorder,
    replacing: (Int, Event) -> Event = { $1 },
    adopts: (Int) -> Bool = { _ in true }
  ) throws(StoreError) -> Int {
    var next = 1
    var written = 0
    func fill(upTo m: Int) throws(StoreError) {
      guard m > next else { return }
      try recorder.recordGap(m - next)
      next = m
    }
    var lo = 1
    var ids = ListState()
    var decoder = startDecoder()
    func copy(through end: Int) throws(StoreError) {
      var failure: StoreError?
      try forEachEvent(from: lo, through: end, ids: &ids, decoder: &decoder) { seq, event in
        do throws(StoreError) {
          try fill(upTo: seq)
          _ = try recorder.record(replacing(seq, event))
        } catch {
          failure = error
          return false
        }
        written += 1
        next = seq + 1
        return true
      }
      if let failure { throw failure }
      try fill(upTo: end + 1)
      lo = end + 1
    }
    for point in anchors(from: 1, through: n) {
      try copy(through: point)
      if adopts(point) {
        guard let restored = try logCheckpoint(atOrBefore: point), restored.seq == point else {
          throw .log(LogError(.damaged, path: path, message: "no checkpoint after event \(point)"))
        }
        try recorder.adopt(restored.state)
        decoder = restored.decoder
      } else {
        decoder = try self.decoder(after: point)
      }
      // The ids follow the new decoder from here (a recovery point may begin a segment).
      ids = ListState()
    }
    try copy(through: n)
    return written
  }
}
