import ListTapeModel
import ListTapeRead
import ListTapeStore

/// A movable position in a timeline: moving forward a short way folds the events in
/// between; anything else seeks through the nearest checkpoint. Counts what it did, so
/// tools can report how many states they materialised.
package struct Cursor {
  let timeline: Timeline
  package private(set) var position: Int
  package private(set) var state: ListState
  var decoder: EventDecoder
  /// States built from a checkpoint (or from scratch).
  package private(set) var seeks = 0
  /// Events folded forward from an earlier position.
  package private(set) var folded = 0
  /// What decoding a checkpoint costs, in events folded (docs/performance.md).
  let decodeCost = 30_000

  /// A cursor at event 0 (the empty state).
  package init(_ timeline: Timeline) {
    self.timeline = timeline
    position = 0
    state = ListState()
    decoder = timeline.startDecoder()
  }

  /// Folds forward from the current position through event `limit`, stopping right after
  /// the first event whose state satisfies `condition`; returns that event, or nil (the
  /// cursor then stands at `limit`).
  package mutating func advance(through limit: Int, until condition: (Int, ListState) -> Bool)
    throws(StoreError) -> Int?
  {
    guard limit > position else { return nil }
    var hit: Int?
    var stop = position
    try timeline.fold(&state, &decoder, from: position + 1, through: limit) { ops, i, _, s in
      stop = ops.seqs[i]
      if condition(stop, s) {
        hit = stop
        return false
      }
      return true
    }
    folded += stop - position
    position = stop
    return hit
  }

  /// Moves to the state after event `n`.
  package mutating func move(to n: Int) throws(StoreError) {
    if n == position { return }
    // Fold forward when that is cheaper than decoding the checkpoint before n and folding
    // from there.
    let seekCost = decodeCost + (n - timeline.checkpointSeq(atOrBefore: n))
    if n > position && n - position <= seekCost {
      try timeline.fold(&state, &decoder, from: position + 1, through: n) { _, _, _, _ in true }
      folded += n - position
    } else {
      (state, decoder) = try timeline.seek(to: n, cache: true)
      seeks += 1
    }
    position = n
  }
}
