import ListTapeModel
import ListTapeRead
import ListTapeStore

/// One change of an expression's value during a full scan.
public struct ValueChange: Sendable {
  /// The event after which the value changed.
  public var event: Int
  /// The value before it.
  public var from: QueryValue
  /// The value after it.
  public var to: QueryValue
  /// Whether both states are the recorded ones (false after events lost in a salvage,
  /// through the point that restores the states).
  package var exact = true
}

/// Exact full scans: every event where an expression changes value, every fault.
public enum Find {
  /// Folds the whole log once, evaluating `query` after every event; reports the value at
  /// event 0 and each change after it. No monotonic assumption. Reads and decodes on a
  /// second thread as `replay` does; the callbacks must not use the timeline.
  public static func changes(
    _ timeline: Timeline, query: Query, progress: ((Int, Int) -> Void)? = nil,
    onChange: (ValueChange, Event) -> Void
  ) throws(StoreError) -> (initial: QueryValue, changes: Int) {
    var state = ListState()
    var decoder = timeline.startDecoder()
    var evaluation = Query.Evaluation(query)
    let initial = evaluation.evaluate(state)
    var current = initial
    var count = 0
    let total = timeline.eventCount
    let steps = timeline.exactSteps
    // Whether `current` is the recorded state right before the next event: not after an
    // inexact step, and not when the fold passed over numbers (lost or undecodable events:
    // `current` is then the value before them, and the event that restores the states may
    // be one of them).
    var currentIsExact = true
    var previous = 0
    try timeline.fold(&state, &decoder, from: 1, through: total, progress: progress) {
      ops, i, _, s in
      let seq = ops.seqs[i]
      if seq != previous + 1 { currentIsExact = false }
      previous = seq
      let step = steps.at(seq)
      let v = evaluation.evaluate(s)
      if v != current {
        var change = ValueChange(event: seq, from: current, to: v)
        change.exact = step == .exact && currentIsExact
        onChange(change, ops.event(i, s.ids))
        current = v
        count += 1
      }
      currentIsExact = step.stateIsExact
      return true
    }
    return (initial, count)
  }
}
