import ListTapeModel
import ListTapeRead
import ListTapeStore

/// An item as it stood after one event.
package struct ItemState: Equatable, Sendable {
  /// The section it is in.
  package var section: String
  /// Its parent, nil for a root item.
  package var parent: String?
  /// Its depth, 0 for a root item.
  package var level: Int
  /// Whether it is expanded.
  package var expanded: Bool
  /// Whether every ancestor is expanded.
  package var visible: Bool
  /// Whether it is selected.
  package var selected: Bool
  /// Visible row in its section, nil when hidden.
  package var row: Int?
  /// Its title, if it has one.
  package var title: String?
  /// Its fields, if it has any.
  package var fields: [String: String]?

  init?(_ s: ListState, _ probe: inout IdProbe) {
    guard let x = s.item(&probe) else { return nil }
    let place = s.placement(of: x)
    section = place.section
    parent = place.parent
    level = s.level(of: x)
    expanded = s.isExpanded(x)
    visible = s.isVisible(x)
    selected = s.isSelected(x)
    row = s.row(of: x)
    title = s.title(of: x)
    fields = s.fields(of: x)
  }

  /// Equal but for the row, which moves whenever anything above it changes.
  func sameIgnoringRow(_ o: ItemState) -> Bool {
    var a = self
    a.row = o.row
    return a == o
  }
}

/// One event in an item's history.
package struct HistoryEntry: Sendable {
  /// The event's number.
  package var event: Int
  /// The event.
  package var op: Event
  /// Whether the event names the item (else it changed the item indirectly).
  package var named: Bool
  /// Whether the event faulted (and so changed nothing).
  package var fault: ListFault?
  /// The item before the event (nil when absent).
  package var before: ItemState?
  /// The item after the event (nil when absent).
  package var after: ItemState?
  /// Whether the states before and after the event are the recorded ones (false after
  /// events lost in a salvage, through the point that restores the states).
  package var exact = true
}

/// Every event that touched an item: named it, or changed its place, flags or content.
package enum History {
  /// Calls `body` with each event that touched item `id`, in order, from one fold of the
  /// log; returns how many did. `progress` gets `(event, total)` now and then.
  package static func of(
    item id: String, in timeline: Timeline, progress: ((Int, Int) -> Void)? = nil,
    _ body: (HistoryEntry) -> Void
  ) throws(StoreError) -> Int {
    var state = ListState()
    var decoder = timeline.startDecoder()
    var current: ItemState?
    var count = 0
    let total = timeline.eventCount
    let steps = timeline.exactSteps
    // Whether `current` is the recorded state right before the next event (as in
    // `Find.changes`: not after an inexact step, nor across numbers the fold passed over).
    var currentIsExact = true
    var previous = 0
    var probe = IdProbe(id)
    try timeline.fold(&state, &decoder, from: 1, through: total, progress: progress) {
      ops, i, fault, s in
      let seq = ops.seqs[i]
      let e = ops.event(i, s.ids)
      if seq != previous + 1 { currentIsExact = false }
      previous = seq
      let step = steps.at(seq)
      defer { currentIsExact = step.stateIsExact }
      let named = e.operation.names(item: id)
      // Only events that name the item, or change the list around it, can touch it; after
      // a gap the restored state may hold it without any event naming it.
      let look = named || current != nil || step != .exact || !currentIsExact
      let after = look ? ItemState(s, &probe) : nil
      let changed: Bool
      switch (current, after) {
      case (nil, nil): changed = false
      case (let x?, let y?): changed = !x.sameIgnoringRow(y)
      default: changed = true
      }
      if named || changed {
        var entry = HistoryEntry(
          event: seq, op: e, named: named, fault: fault, before: current, after: after)
        entry.exact = step == .exact && currentIsExact
        body(entry)
        count += 1
      }
      current = after
      return true
    }
    return count
  }
}
