import ListTapeModel
import ListTapeStore

/// An item as it stood after one event.
public struct ItemState: Equatable, Sendable {
  public var section: String
  public var parent: String?
  public var level: Int
  public var expanded: Bool
  public var visible: Bool
  public var selected: Bool
  /// Visible row in its section, nil when hidden.
  public var row: Int?
  public var title: String?
  public var fields: [String: String]?

  init?(_ s: ListState, _ id: String) {
    guard let place = s.placement(of: id), let level = s.level(of: id) else { return nil }
    section = place.section
    parent = place.parent
    self.level = level
    expanded = s.isExpanded(id)
    visible = s.isVisible(id)
    selected = s.isSelected(id)
    row = s.indexPath(for: id)?.item
    title = s.title(of: id)
    fields = s.fields(of: id)
  }

  /// Equal but for the row, which moves whenever anything above it changes.
  func sameIgnoringRow(_ o: ItemState) -> Bool {
    var a = self
    a.row = o.row
    return a == o
  }
}

/// One event in an item's history.
public struct HistoryEntry: Sendable {
  public var event: Int
  public var op: Event
  /// Whether the event names the item (else it changed the item indirectly).
  public var named: Bool
  /// Whether the event faulted (and so changed nothing).
  public var fault: ListFault?
  public var before: ItemState?
  public var after: ItemState?
}

/// Every event that touched an item: named it, or changed its place, flags or content.
public enum History {
  public static func of(
    item id: String, in timeline: Timeline, progress: ((Int, Int) -> Void)? = nil,
    _ body: (HistoryEntry) -> Void
  ) throws(StoreError) -> Int {
    var state = ListState()
    var decoder = EventDecoder()
    var current: ItemState?
    var count = 0
    let total = timeline.eventCount
    try timeline.foldEach(&state, &decoder, from: 1, through: total, progress: progress) {
      seq, e, fault, s in
      let named = e.operation.names(item: id)
      // Only events that name the item, or change the list around it, can touch it.
      let after = named || current != nil ? ItemState(s, id) : nil
      let changed: Bool
      switch (current, after) {
      case (nil, nil): changed = false
      case (let x?, let y?): changed = !x.sameIgnoringRow(y)
      default: changed = true
      }
      if named || changed {
        body(
          HistoryEntry(event: seq, op: e, named: named, fault: fault, before: current, after: after)
        )
        count += 1
      }
      current = after
      return true
    }
    return count
  }
}
