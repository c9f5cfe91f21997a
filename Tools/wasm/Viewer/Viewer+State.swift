import ListTapeInvestigate
import ListTapeJSON
import ListTapeModel

/// The view's state read back: rows to draw, the diff of the last event, the state JSON.
extension Viewer {
  /// What the page draws, at most `limit` rows of it: `[multipleSelection, items,
  /// visible, selected, sections, [[section, items, visible, [[level, id, flags, title?,
  /// fields?], …]], …]]`, rows in pre-order (the visible ones, or every item with
  /// `hidden`); flags: 1 expanded, 2 selected, 4 visible, 8 has children; a title (or null)
  /// only when there is a title or fields; fields as `show` lists them (`key=value, …`, keys
  /// sorted). Sections come while rows are left to draw.
  /// - Complexity: O(limit × depth + sections drawn).
  mutating func rows(limit: Int, hidden: Bool) {
    let state = view.state
    var w = JSONWriter(reservingCapacity: 4096)
    w.beginArray()
    w.bool(state.allowsMultipleSelection)
    w.int(state.numberOfAllItems)
    w.int(state.numberOfItems)
    w.int(state.numberOfSelectedItems)
    w.int(state.numberOfSections)
    w.beginArray()
    var left = limit
    for section in state.sections {
      if left <= 0 { break }
      w.beginArray()
      w.string(state.id(of: section))
      w.int(state.numberOfAllItems(in: section))
      w.int(state.numberOfItems(in: section))
      w.beginArray()
      let rows = state.rows(in: section, visibleOnly: !hidden, limit: left)
      left -= rows.count
      for row in rows {
        w.beginArray()
        w.int(row.level)
        w.string(row.id)
        w.int(
          (row.expanded ? 1 : 0) | (row.isSelected ? 2 : 0) | (row.isVisible ? 4 : 0)
            | (row.hasChildren ? 8 : 0))
        if row.title != nil || !(row.fields?.isEmpty ?? true) {
          if let title = row.title { w.string(title) } else { w.null() }
        }
        if let fields = row.fields, !fields.isEmpty {
          w.string(fields.keys.sorted().map { "\($0)=\(fields[$0] ?? "")" }.joined(separator: ", "))
        }
        w.endArray()
      }
      w.endArray()
      w.endArray()
    }
    w.endArray()
    w.endArray()
    setResult(w.bytes)
  }

  /// The diff from the state before the last event folded with `diffing` to the state now,
  /// as `listtape diff` prints it after its header: `[[kind, text], …]` (`DiffLine.Kind`
  /// raw values); `[]` when no event was folded with `diffing` since.
  mutating func diff(context: Int) {
    var w = JSONWriter(reservingCapacity: 1024)
    w.beginArray()
    if let before {
      let diff = Differ.diff(
        before, view.state, touched: touched, context: context, selectionLists: false)
      for line in DiffText.text(diff, context: context) {
        w.beginArray()
        w.int(line.kind.rawValue)
        w.string(line.text)
        w.endArray()
      }
    }
    w.endArray()
    before = nil
    touched = TouchedItems()
    setResult(w.bytes)
  }

  /// The view's state as the protocol's state JSON, with `"event": event`.
  mutating func stateJSON(event: Int) {
    var w = JSONWriter(reservingCapacity: 4096)
    view.state.writeJSON(event: event, to: &w)
    setResult(w.bytes)
  }
}
