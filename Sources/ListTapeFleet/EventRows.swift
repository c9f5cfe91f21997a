import ListTapeInvestigate
import ListTapeModel
import ListTapeParquet
import ListTapeRead
import ListTapeStore

/// Turns each folded event of one log into a row of `events.parquet` and keeps the log's
/// counts for its `sessions` row.
struct EventRows {
  typealias C = FleetTables.Event
  /// The rows being filled; the caller swaps in empty ones when they fill a row group.
  var writer: ParquetRows
  let log: String
  /// The columns every row fills with a number or a key, kept here and handed to `writer`
  /// a column at a time (`StagedRows.flush(into:)`), before `writer` is encoded or its keys
  /// resolved.
  let staged: StagedRows
  /// The deepest level after the last event: it changes only when items come or go.
  private var depth: Int?

  /// Whether the last event may change the deepest level.
  private var structural = true
  /// The numbering of the ids keyed since the last `resolve` (`ParquetRows.append(_:key:)`).
  private var lineage: UInt64 = 0

  init(rows: ParquetRows, log: String, staged: StagedRows) {
    self.writer = rows
    self.log = log
    self.staged = staged
    // Keys name strings of one log's dictionary (and the log column's key its path).
    precondition(!rows.hasUnresolvedKeys, "rows handed on with keys unresolved")
  }

  /// Writes the event columns of the row for record `i` of `ops`, its ids read from
  /// `state`'s (the fold's, synced past it): ids go in by entry number, their text given
  /// by `EventRows.resolve` with a state of the same numbering. A record kept across a
  /// swap of the state (`FoldOps.isKept`, a recovery point's own event) numbers the ids of
  /// the state swapped out: `earlier`, whose text they go in as.
  mutating func op(
    _ ops: FoldOps, _ i: Int, _ state: inout ListState, earlier: IdSpace? = nil,
    into s: inout SessionSummary
  ) {
    // In place: see `ListState.idsLineage(of:)`.
    let idsLineage = ListState.idsLineage(of: &state)
    if idsLineage != lineage {
      // The fold calls `resolve` before the state's ids are renumbered (`beforeIds`).
      precondition(
        staged.count == 0 && !writer.hasUnresolvedKeys, "ids renumbered with keys unresolved")
      lineage = idsLineage
    }
    let w = writer
    let seq = ops.seqs[i]
    let start = ops.start(i)
    let f = ops.fields(atWord: start)
    common(seq, ops.time(i), name: f.name, into: &s)
    let k = staged.count
    keyed(StagedRows.site, k, ops.siteEntry(i) ?? -1, ops, earlier, &state)
    keyed(StagedRows.section, k, f.section, ops, earlier, &state)
    keyed(StagedRows.parent, k, f.parent, ops, earlier, &state)
    keyed(StagedRows.anchor, k, f.anchor, ops, earlier, &state)
    var label = ops.label(f)
    if ops.isBatch(atWord: start) {
      batch(w, ops, earlier, atWord: start, &state, label: &label)
    } else {
      listed(w, from: f.idsStart, count: f.idsCount, stride: f.idsStride, ops, earlier, &state)
    }
    if let label {
      staged.set(StagedRows.label, k, text: label)
      if f.labelText >= 0 { s.marks += 1 }
    } else {
      staged.set(StagedRows.label, k, key: StagedRows.null)
    }
    structural = f.structural
  }

  /// The ids a record lists (its nodes' in pre-order).
  private func listed(
    _ w: ParquetRows, from start: Int, count: Int, stride: Int, _ ops: FoldOps,
    _ earlier: IdSpace?, _ state: inout ListState
  ) {
    var k = start
    for _ in 0..<count {
      let e = ops.entry(atWord: k)
      if Self.byKey(e, earlier) {
        w.append(C.ids, key: Int(e))
      } else if e != -1 {
        w.append(C.ids, string: Self.name(e, ops, earlier, &state))
      }
      k &+= stride
    }
  }

  /// A batch's ids are those of the events inside it, in order; its label is the first
  /// mark's inside it. Nested batches are walked with a stack.
  private func batch(
    _ w: ParquetRows, _ ops: FoldOps, _ earlier: IdSpace?, atWord start: Int,
    _ state: inout ListState, label: inout String?
  ) {
    var stack: [(records: [Int], next: Int)] = [(ops.batchRecords(atWord: start), 0)]
    while let top = stack.last {
      if top.next == top.records.count {
        stack.removeLast()
        continue
      }
      let word = top.records[top.next]
      stack[stack.count - 1].next += 1
      if ops.isBatch(atWord: word) {
        stack.append((ops.batchRecords(atWord: word), 0))
        continue
      }
      let f = ops.fields(atWord: word)
      if label == nil, let text = ops.label(f) { label = text }
      listed(w, from: f.idsStart, count: f.idsCount, stride: f.idsStride, ops, earlier, &state)
    }
  }

  /// Staged column `slot`'s value in row `k`: entry `e`, an id the record holds as text, or
  /// null for -1.
  private func keyed(
    _ slot: Int, _ k: Int, _ e: Int32, _ ops: FoldOps, _ earlier: IdSpace?,
    _ state: inout ListState
  ) {
    if e == -1 || Self.byKey(e, earlier) {
      staged.set(slot, k, key: e)
    } else {
      staged.set(slot, k, text: Self.name(e, ops, earlier, &state))
    }
  }

  /// Whether entry `e` goes in by its key: an entry of the state's own ids (not of
  /// `earlier`'s, nor an id the record holds as text, nor null).
  @inline(__always)
  private static func byKey(_ e: Int32, _ earlier: IdSpace?) -> Bool { e >= 0 && earlier == nil }

  /// An id the record holds as text, or names by an entry of `earlier`: apart, so that
  /// the usual call does not copy the state that reading its ids needs.
  @inline(never)
  private static func name(
    _ e: Int32, _ ops: FoldOps, _ earlier: IdSpace?, _ state: inout ListState
  ) -> String {
    ops.name(entry: e, earlier ?? state.ids)
  }

  /// Gives `rows` the rows `staged` holds and the strings of the keys appended since the
  /// last call: ids from `state`'s (the numbering they were keyed in), the log's path, ops
  /// and fault kinds. Static: the fold's `beforeIds` calls it without the `EventRows` its
  /// callback holds.
  static func resolve(
    _ rows: ParquetRows, _ staged: StagedRows, log: String, _ state: ListState
  ) {
    staged.flush(into: rows)
    rows.resolveKeys { c, key, bytes in
      switch c {
      case C.log: bytes.append(contentsOf: log.utf8)
      case C.op: bytes.append(contentsOf: ListOperation.allNames[key].utf8)
      case C.fault: bytes.append(contentsOf: FaultKind.allCases[key].rawValue.utf8)
      default: state.withIdText(key) { bytes.append(contentsOf: $0) }
      }
    }
  }

  /// The log, event, time and op columns (staged).
  private func common(_ seq: Int, _ time: Int64?, name: Int, into s: inout SessionSummary) {
    let k = staged.count
    staged.event[k] = Int64(seq)
    staged.time[k] = time ?? 0
    staged.timePresent[k] = time != nil
    staged.op[k] = Int32(truncatingIfNeeded: name)
    if let t = time {
      if s.firstTime == nil { s.firstTime = t }
      s.lastTime = t
    }
  }

  /// Ends the row of event `seq` (its event columns written by `op`): its fault and the
  /// list's counts. `step` says whether the states before and after the event are the
  /// recorded ones (a salvaged log): the row's `exact`, and only an exact step's fault is
  /// counted. Returns whether the row group is full (time to swap in empty rows): asked
  /// here, where the rows are in hand, rather than through a copy of `self` per event.
  mutating func add(
    _ seq: Int, _ fault: ListFault?, _ state: inout ListState, step: StepExactness = .exact,
    into s: inout SessionSummary
  ) -> Bool {
    stateColumns(seq, fault, state.counts(depth: fault == nil && structural), step: step, into: &s)
  }

  private mutating func stateColumns(
    _ seq: Int, _ fault: ListFault?, _ counts: ListCounts, step: StepExactness,
    into s: inout SessionSummary
  ) -> Bool {
    let w = writer
    let k = staged.count
    if let fault {
      let kind = fault.kind
      let index = Self.kindIndex[kind] ?? 0
      staged.set(StagedRows.fault, k, key: Int32(index))
      staged.set(StagedRows.reason, k, text: fault.description)
      if step == .exact {
        s.faults += 1
        s.faultsByKind[index] += 1
      }
    } else {
      staged.set(StagedRows.fault, k, key: StagedRows.null)
      staged.set(StagedRows.reason, k, key: StagedRows.null)
    }
    if fault == nil && structural { depth = counts.deepest }
    s.events = seq
    s.sections = counts.sections
    s.items = counts.items
    s.visible = counts.visible
    s.selected = counts.selected
    s.depth = depth
    staged.sections[k] = Int64(Int32(clamping: s.sections))
    staged.items[k] = Int64(Int32(clamping: s.items))
    staged.visible[k] = Int64(Int32(clamping: s.visible))
    staged.selected[k] = Int64(Int32(clamping: s.selected))
    staged.depth[k] = Int64(Int32(clamping: depth ?? 0))
    staged.depthPresent[k] = depth != nil
    staged.exact[k] = step.stateIsExact
    if !step.stateIsExact { s.inexactRows += 1 }
    staged.count = k + 1
    w.endRow()
    let full = w.isFull
    if full || staged.count == StagedRows.capacity { staged.flush(into: w) }
    return full
  }

  private static let kindIndex: [FaultKind: Int] = Dictionary(
    uniqueKeysWithValues: FaultKind.allCases.enumerated().map { ($1, $0) })
}

/// The columns of `events.parquet` that hold one value a row (all but `ids`), kept for up to
/// `capacity` rows and handed to the rows a column at a time: seventeen appends a row fewer,
/// each a call into the rows otherwise.
final class StagedRows {
  typealias C = FleetTables.Event
  static let capacity = 4_096
  /// The optional string columns, each staged as keys (`set(_:_:key:)`) or null, and text
  /// where a row has some (an id a record holds as text, a fault's reason, a label). Each
  /// column's place (its slot) in `keyedColumns`.
  static let keyedColumns = [C.site, C.section, C.parent, C.anchor, C.fault, C.reason, C.label]
  static let site = 0
  static let section = 1
  static let parent = 2
  static let anchor = 3
  static let fault = 4
  static let reason = 5
  static let label = 6
  /// A staged key column's null.
  static let null: Int32 = -1
  /// A staged key column's value that is the next of its `texts`.
  private static let text: Int32 = -2
  /// Rows staged (each ended in the rows it belongs to).
  var count = 0
  let event = UnsafeMutablePointer<Int64>.allocate(capacity: capacity)
  let time = UnsafeMutablePointer<Int64>.allocate(capacity: capacity)
  let timePresent = UnsafeMutablePointer<Bool>.allocate(capacity: capacity)
  let op = UnsafeMutablePointer<Int32>.allocate(capacity: capacity)
  let sections = UnsafeMutablePointer<Int64>.allocate(capacity: capacity)
  let items = UnsafeMutablePointer<Int64>.allocate(capacity: capacity)
  let visible = UnsafeMutablePointer<Int64>.allocate(capacity: capacity)
  let selected = UnsafeMutablePointer<Int64>.allocate(capacity: capacity)
  let depth = UnsafeMutablePointer<Int64>.allocate(capacity: capacity)
  let depthPresent = UnsafeMutablePointer<Bool>.allocate(capacity: capacity)
  let exact = UnsafeMutablePointer<Bool>.allocate(capacity: capacity)
  /// The log column's key (0) for every row.
  private let logKeys = UnsafeMutablePointer<Int32>.allocate(capacity: capacity)
  /// The key columns, `capacity` rows each, in slot order.
  private let keys = UnsafeMutablePointer<Int32>.allocate(
    capacity: capacity * keyedColumns.count)
  /// Each key column's text values, in row order.
  private var texts = [[String]](repeating: [], count: keyedColumns.count)

  init() { logKeys.initialize(repeating: 0, count: Self.capacity) }

  deinit {
    for p in [event, time, sections, items, visible, selected, depth] { p.deallocate() }
    for p in [timePresent, depthPresent, exact] { p.deallocate() }
    op.deallocate()
    logKeys.deallocate()
    keys.deallocate()
  }

  /// Key column `slot`'s value in row `k`: `key` (from 0), or null for `StagedRows.null`.
  @inline(__always) func set(_ slot: Int, _ k: Int, key: Int32) {
    keys[slot &* Self.capacity &+ k] = key
  }

  /// Key column `slot`'s value in row `k`: a string (of a key column, a value not keyed).
  func set(_ slot: Int, _ k: Int, text: String) {
    keys[slot &* Self.capacity &+ k] = Self.text
    texts[slot].append(text)
  }

  /// Appends the staged rows' columns to `rows` (whose other columns hold these rows) and
  /// empties the stage.
  func flush(into rows: ParquetRows) {
    let n = count
    guard n > 0 else { return }
    func all<T>(_ p: UnsafeMutablePointer<T>) -> UnsafeBufferPointer<T> {
      UnsafeBufferPointer(start: p, count: n)
    }
    rows.append(C.log, keys: all(logKeys))
    rows.append(C.event, int64s: all(event))
    rows.append(C.time, int64s: all(time), present: all(timePresent))
    rows.append(C.op, keys: all(op))
    rows.append(C.sections, int64s: all(sections))
    rows.append(C.items, int64s: all(items))
    rows.append(C.visible, int64s: all(visible))
    rows.append(C.selected, int64s: all(selected))
    rows.append(C.depth, int64s: all(depth), present: all(depthPresent))
    rows.append(C.exact, bools: all(exact))
    for (slot, c) in Self.keyedColumns.enumerated() {
      let column = UnsafeBufferPointer(start: keys + slot * Self.capacity, count: n)
      if texts[slot].isEmpty {
        rows.append(c, keys: column)
        continue
      }
      // The texts between runs of keys and nulls, in row order.
      var from = 0
      var next = 0
      for k in 0..<n where column[k] == Self.text {
        rows.append(c, keys: UnsafeBufferPointer(rebasing: column[from..<k]))
        rows.append(c, string: texts[slot][next])
        next += 1
        from = k + 1
      }
      rows.append(c, keys: UnsafeBufferPointer(rebasing: column[from..<n]))
      texts[slot].removeAll(keepingCapacity: true)
    }
    count = 0
  }
}
