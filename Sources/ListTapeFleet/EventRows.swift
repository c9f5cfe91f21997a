import ListTapeInvestigate
import ListTapeModel
import ListTapeParquet

/// Turns each folded event of one log into a row of `events.parquet` and keeps the log's
/// counts for its `sessions` row.
struct EventRows {
  typealias C = FleetTables.Event
  let writer: ParquetRows
  let log: String
  /// Takes the rows when they fill a row group (encodes and appends them).
  let flush: (ParquetRows) throws(ParquetError) -> Void
  /// The deepest level after the last event: it changes only when items come or go.
  private var depth: Int?

  init(
    rows: ParquetRows, log: String, flush: @escaping (ParquetRows) throws(ParquetError) -> Void
  ) {
    self.writer = rows
    self.log = log
    self.flush = flush
  }

  mutating func add(
    _ seq: Int, _ event: Event, _ fault: ListFault?, _ state: ListState,
    into s: inout SessionSummary
  ) throws(ParquetError) {
    let w = writer
    w.append(C.log, string: log)
    w.append(C.event, int64: Int64(seq))
    if let t = event.time {
      w.append(C.time, int64: t)
      if s.firstTime == nil { s.firstTime = t }
      s.lastTime = t
    } else {
      w.appendNull(C.time)
    }
    w.append(C.op, string: event.op)
    var section: String?
    var parent: String?
    var anchor: String?
    var label: String?
    // Whether the event, when it applies, may change the deepest level: items came or went.
    var structural = true
    switch event.operation {
    case .deleteSections(let ids):
      strings(ids)
    case .appendSections(let ids), .reloadSections(let ids):
      strings(ids)
      structural = false
    case .insertSections(let ids, let a):
      strings(ids)
      anchor = a.id
      structural = false
    case .moveSection(let id, let a):
      section = id
      anchor = a.id
      structural = false
    case .appendItems(let nodes, let sec, let par):
      section = sec
      parent = par
      self.nodes(nodes)
    case .insertItems(let nodes, let a):
      self.nodes(nodes)
      anchor = a.id
    case .deleteItems(let ids):
      strings(ids)
    case .reloadItems(let ids), .reconfigureItems(let ids), .expand(let ids), .collapse(let ids),
      .select(let ids):
      strings(ids)
      structural = false
    case .deselect(let ids):
      if let ids { strings(ids) }
      structural = false
    case .moveItem(let id, let a):
      w.append(C.ids, string: id)
      anchor = a.id
    case .replaceChildren(let par, let nodes):
      parent = par
      self.nodes(nodes)
    case .applySectionSnapshot(let sec, let nodes):
      section = sec
      self.nodes(nodes)
    case .update(let item, _, _):
      w.append(C.ids, string: item)
      structural = false
    case .deleteAllItems:
      break
    case .configure:
      structural = false
    case .mark(let text):
      label = text
      s.marks += 1
      structural = false
    case .batch(let inner):
      batch(inner, label: &label)
    }
    optional(C.section, section)
    optional(C.parent, parent)
    optional(C.anchor, anchor)
    if let fault {
      let kind = fault.kind
      w.append(C.fault, string: kind.rawValue)
      w.append(C.reason, string: fault.description)
      s.faults += 1
      s.faultsByKind[Self.kindIndex[kind] ?? 0] += 1
    } else {
      w.appendNull(C.fault)
      w.appendNull(C.reason)
    }
    optional(C.label, label)
    if fault == nil && structural { depth = state.deepestLevel }
    s.events = seq
    s.sections = state.numberOfSections
    s.items = state.numberOfAllItems
    s.visible = state.numberOfItems
    s.selected = state.numberOfSelectedItems
    s.depth = depth
    w.append(C.sections, int32: Int32(clamping: s.sections))
    w.append(C.items, int32: Int32(clamping: s.items))
    w.append(C.visible, int32: Int32(clamping: s.visible))
    w.append(C.selected, int32: Int32(clamping: s.selected))
    if let depth { w.append(C.depth, int32: Int32(depth)) } else { w.appendNull(C.depth) }
    w.endRow()
    if w.isFull { try flush(w) }
  }

  private func optional(_ c: Int, _ value: String?) {
    if let value { writer.append(c, string: value) } else { writer.appendNull(c) }
  }

  private func strings(_ ids: [String]) {
    for id in ids { writer.append(C.ids, string: id) }
  }

  /// Inserted subtrees, pre-order.
  private func nodes(_ list: [OutlineNode]) {
    for node in list {
      if node.children.isEmpty {
        writer.append(C.ids, string: node.id)
      } else {
        node.forEachID { writer.append(C.ids, string: $0) }
      }
    }
  }

  /// A batch's ids are those of the events inside it, in order; its label is the first
  /// mark's inside it. Nested batches are walked with a stack.
  private func batch(_ events: [Event], label: inout String?) {
    var stack: [(events: [Event], next: Int)] = [(events, 0)]
    while let top = stack.last {
      if top.next == top.events.count {
        stack.removeLast()
        continue
      }
      let op = top.events[top.next].operation
      stack[stack.count - 1].next += 1
      switch op {
      case .appendSections(let ids), .deleteSections(let ids), .reloadSections(let ids),
        .insertSections(let ids, _):
        strings(ids)
      case .appendItems(let n, _, _), .insertItems(let n, _), .replaceChildren(_, let n),
        .applySectionSnapshot(_, let n):
        nodes(n)
      case .deleteItems(let ids), .reloadItems(let ids), .reconfigureItems(let ids),
        .expand(let ids), .collapse(let ids), .select(let ids):
        strings(ids)
      case .deselect(let ids):
        if let ids { strings(ids) }
      case .moveItem(let id, _), .update(let id, _, _):
        writer.append(C.ids, string: id)
      case .mark(let text):
        if label == nil { label = text }
      case .batch(let inner):
        stack.append((inner, 0))
      case .moveSection, .deleteAllItems, .configure:
        break
      }
    }
  }

  private static let kindIndex: [FaultKind: Int] = Dictionary(
    uniqueKeysWithValues: FaultKind.allCases.enumerated().map { ($1, $0) })
}
