import ListTapeModel
import ListTapeRead
import ListTapeStore

// The diff of two points of a log, apart from the state differ (Diff.swift,
// IncrementalDiff.swift, TouchedItems.swift), which needs only the model: the HTML viewer's
// WebAssembly module compiles those files as they are (Tools/wasm/build.sh).
extension Differ {
  /// At most this many events apart, and this many items touched, ids are found by
  /// scanning rather than through a table built for them.
  static let fewEvents = 8
  static let fewItems = 16

  /// The diff between the states after events `from` and `to` of one log (either may come
  /// first). Close points are one seek and a fold of the events between them, compared
  /// only where those events touched; far ones are two seeks and a whole comparison.
  /// The result is `diff(state(from), state(to)).foldingUnchanged(longerThan: context)`;
  /// without `selectionLists`, a close diff leaves out both whole selections when they hold
  /// more than `StateDiff.listedSelection` items (the words tell only what changed).
  /// - Complexity: a seek, then O(events between × log n) when close; O(n) when far.
  public static func diff(
    _ timeline: Timeline, from: Int, to: Int, context: Int = 2, selectionLists: Bool = true
  ) throws(StoreError) -> StateDiff {
    if abs(to - from) <= fewEvents,
      let d = try diff(
        timeline, from: from, to: to, context: context, scanning: true,
        selectionLists: selectionLists)
    {
      return d
    }
    // Many events, or a few that name many ids: through the id table.
    guard
      let d = try diff(
        timeline, from: from, to: to, context: context, scanning: false,
        selectionLists: selectionLists)
    else { preconditionFailure("a diff through the id table always ends") }
    return d
  }

  /// `diff(_:from:to:context:)`. The touched items are noted and compared by string:
  /// through the id table unless `scanning` (building it hashes every id, ~30 ms for 200k
  /// UUIDs), else by scanning the ids, and nil as soon as an event names more than a
  /// handful (the caller then asks again through the table).
  private static func diff(
    _ timeline: Timeline, from: Int, to: Int, context: Int, scanning: Bool,
    selectionLists: Bool
  ) throws(StoreError) -> StateDiff? {
    let lo = min(from, to)
    let hi = max(from, to)
    var (a, decoder) = try timeline.seek(to: lo)
    if !scanning { a.indexIDs() }
    // Folding forward beats a second seek while it costs less than decoding a checkpoint
    // (about 30k events' worth) and folding from it.
    guard hi - lo <= 30_000 + hi - timeline.checkpointSeq(atOrBefore: hi) else {
      let b = try timeline.state(at: hi)
      return (from <= to ? diff(a, b) : diff(b, a)).foldingUnchanged(longerThan: context)
    }
    if from + 1 == to {
      return try adjacent(
        timeline, &a, &decoder, event: to, context: context, scanning: scanning,
        selectionLists: selectionLists)
    }
    var b = a
    var touched = TouchedItems(limit: max(1_024, a.numberOfAllItems / 4))
    var many = false
    func note(_ ops: FoldOps, _ i: Int, _ s: inout ListState) {
      guard !many else { return }
      let event = ops.event(i, s.ids)
      if scanning && event.operation.itemIDs.count > fewItems {
        many = true
        return
      }
      touched.note(event, before: s)
    }
    try timeline.fold(&b, &decoder, from: lo + 1, through: hi, before: note) { _, _, _, _ in
      !many
    }
    if many { return nil }
    if scanning && (touched.overflowed || touched.count > fewItems) {
      a.indexIDs()
      b.indexIDs()
    }
    return from <= to
      ? diff(a, b, touched: touched, context: context, selectionLists: selectionLists)
      : diff(b, a, touched: touched, context: context, selectionLists: selectionLists)
  }

  /// `diff(_:from:to:context:scanning:selectionLists:)` of event `n` after `b` (the state
  /// before it, with `decoder` standing there; `b` becomes the state after). What the diff
  /// needs of the state before is read ahead of the event, which then changes the state in
  /// place, so the state is not copied. It is kept whole (copied) when the event touches
  /// too many items to follow or may move items in ways only the state after tells
  /// (`DiffBefore`); when the event was not read (a salvaged log's hole) or what was read
  /// ahead falls short (a delete or a move that faulted), the state before is sought again.
  private static func adjacent(
    _ timeline: Timeline, _ b: inout ListState, _ decoder: inout EventDecoder,
    event n: Int, context: Int, scanning: Bool, selectionLists: Bool
  ) throws(StoreError) -> StateDiff? {
    var touched = TouchedItems(limit: max(1_024, b.numberOfAllItems / 4))
    var many = false
    var before: DiffBefore?
    var kept: ListState?
    func note(_ ops: FoldOps, _ i: Int, _ s: inout ListState) {
      let event = ops.event(i, s.ids)
      if scanning && event.operation.itemIDs.count > fewItems {
        many = true
        return
      }
      touched.note(event, before: s)
      if !touched.overflowed && !(scanning && touched.count > fewItems) {
        before = DiffBefore(s, event: event, touched: touched, selectionLists: selectionLists)
      }
      if before == nil { kept = s }
    }
    try timeline.fold(&b, &decoder, from: n, through: n, before: note) { _, _, _, _ in !many }
    if many { return nil }
    if let before,
      let d = diff(before, b, touched: touched, context: context, selectionLists: selectionLists)
    {
      return d
    }
    var a: ListState
    if let kept { a = kept } else { a = try timeline.seek(to: n - 1).state }
    if kept == nil || (scanning && (touched.overflowed || touched.count > fewItems)) {
      a.indexIDs()
      b.indexIDs()
    }
    return diff(a, b, touched: touched, context: context, selectionLists: selectionLists)
  }
}
