import ListTapeInvestigate
import ListTapeModel
import ListTapeParquet
import ListTapeStore

/// Turns each folded event of one log into a row of `events.parquet` and keeps the log's
/// counts for its `sessions` row.
struct EventRows {
  typealias C = FleetTables.Event
  /// The rows being filled; the caller swaps in empty ones when they fill a row group.
  var writer: ParquetRows
  let log: String
  /// The deepest level after the last event: it changes only when items come or go.
  private var depth: Int?

  /// Whether `op` wrote the row's event columns (the fold's record of the event), and
  /// whether the event may change the deepest level.
  private var pending = false
  private var structural = true
  /// The dictionary numbering the row group's keys follow (`ParquetRows.append(_:key:)`).
  private var lineage: UInt64 = 0
  /// An id `op` could not read (a record naming an entry the fold lacks): the row was
  /// written with an empty id, and the export of this log stops after it.
  private(set) var failure: (seq: Int, error: CodecError)?

  init(rows: ParquetRows, log: String) {
    self.writer = rows
    self.log = log
    // Keys name strings of one log's dictionary (and the log column's key its path).
    rows.forgetKeys()
  }

  /// Writes the event columns of the row for record `i` of `ops` (synced into `entries`):
  /// ids go in by entry number, hashed only the first time a row group meets an entry.
  mutating func op(
    _ ops: FoldOps, _ i: Int, _ entries: inout FoldEntries, into s: inout SessionSummary
  ) {
    if let event = ops.wholeEvent(i) {
      eventColumns(ops.seqs[i], event, into: &s)
      pending = true
      return
    }
    guard let f = ops.fields(i), Self.readable(f, ops, entries) else { return }
    if entries.lineage != lineage {
      writer.forgetKeys()
      lineage = entries.lineage
    }
    let w = writer
    let seq = ops.seqs[i]
    common(seq, ops.time(i), name: f.name, into: &s)
    keyed(C.section, f.section, seq, &entries)
    keyed(C.parent, f.parent, seq, &entries)
    keyed(C.anchor, f.anchor, seq, &entries)
    var k = f.idsStart
    for _ in 0..<f.idsCount {
      keyed(C.ids, ops.entry(atWord: k), seq, &entries)
      k &+= f.idsStride
    }
    if let label = f.label {
      w.append(C.label, string: label)
      s.marks += 1
    } else {
      w.appendNull(C.label)
    }
    structural = f.structural
    pending = true
  }

  /// Whether every entry the record names is one the fold has text for (else the event
  /// goes the `Event` way, which reports why it does not decode).
  private static func readable(_ f: FoldOpFields, _ ops: FoldOps, _ entries: FoldEntries) -> Bool {
    guard f.section == -1 || entries.hasText(f.section),
      f.parent == -1 || entries.hasText(f.parent),
      f.anchor == -1 || entries.hasText(f.anchor)
    else { return false }
    var k = f.idsStart
    for _ in 0..<f.idsCount {
      guard entries.hasText(ops.entry(atWord: k)) else { return false }
      k &+= f.idsStride
    }
    return true
  }

  /// Column `c`'s value (or next element) entry `e`, or null for -1.
  private mutating func keyed(_ c: Int, _ e: Int32, _ seq: Int, _ entries: inout FoldEntries) {
    let w = writer
    guard e >= 0 else {
      if c != C.ids { w.appendNull(c) }
      return
    }
    if w.append(c, key: Int(e)) { return }
    do throws(CodecError) {
      try entries.withText(e) { bytes in
        w.append(c, utf8: UnsafeRawBufferPointer(bytes), key: Int(e))
      }
    } catch {
      w.append(c, string: "")
      if failure == nil { failure = (seq, error) }
    }
  }

  /// The log, event, time and op columns.
  private func common(_ seq: Int, _ time: Int64?, name: Int, into s: inout SessionSummary) {
    let w = writer
    if !w.append(C.log, key: 0) {
      var path = log
      path.withUTF8 { w.append(C.log, utf8: UnsafeRawBufferPointer($0), key: 0) }
    }
    w.append(C.event, int64: Int64(seq))
    if let t = time {
      w.append(C.time, int64: t)
      if s.firstTime == nil { s.firstTime = t }
      s.lastTime = t
    } else {
      w.appendNull(C.time)
    }
    if !w.append(C.op, key: name) {
      var text = ListOperation.allNames[name]
      text.withUTF8 { w.append(C.op, utf8: UnsafeRawBufferPointer($0), key: name) }
    }
  }

  /// Ends the row of event `seq`: its event columns from `op` or, when `op` did not write
  /// them (the fold went by events), from `event()`; then its fault and the list's counts.
  /// `step` says whether the states before and after the event are the recorded ones (a
  /// salvaged log): the row's `exact`, and only an exact step's fault is counted.
  mutating func add(
    _ seq: Int, _ fault: ListFault?, _ event: () throws(StoreError) -> Event,
    _ state: ListState, step: StepExactness = .exact, into s: inout SessionSummary
  ) throws(StoreError) {
    if !pending { eventColumns(seq, try event(), into: &s) }
    pending = false
    stateColumns(seq, fault, state, step: step, into: &s)
  }

  /// `add` for a fold by events.
  mutating func add(
    _ seq: Int, _ event: Event, _ fault: ListFault?, _ state: ListState,
    step: StepExactness = .exact, into s: inout SessionSummary
  ) {
    eventColumns(seq, event, into: &s)
    stateColumns(seq, fault, state, step: step, into: &s)
  }

  /// Whether the row group is full (time to swap in empty rows).
  var isFull: Bool { writer.isFull }

  private mutating func stateColumns(
    _ seq: Int, _ fault: ListFault?, _ state: ListState, step: StepExactness,
    into s: inout SessionSummary
  ) {
    let w = writer
    if let fault {
      let kind = fault.kind
      let index = Self.kindIndex[kind] ?? 0
      if !w.append(C.fault, key: index) {
        var text = kind.rawValue
        text.withUTF8 { w.append(C.fault, utf8: UnsafeRawBufferPointer($0), key: index) }
      }
      w.append(C.reason, string: fault.description)
      if step == .exact {
        s.faults += 1
        s.faultsByKind[index] += 1
      }
    } else {
      w.appendNull(C.fault)
      w.appendNull(C.reason)
    }
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
    w.append(C.exact, bool: step.stateIsExact)
    if !step.stateIsExact { s.inexactRows += 1 }
    w.endRow()
  }

  /// The event columns from an `Event`.
  private mutating func eventColumns(_ seq: Int, _ event: Event, into s: inout SessionSummary) {
    let w = writer
    common(seq, event.time, name: event.operation.nameIndex, into: &s)
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
    optional(C.label, label)
    self.structural = structural
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
