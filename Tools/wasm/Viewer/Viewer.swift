import ListTapeInvestigate
import ListTapeJSON
import ListTapeModel

/// The HTML viewer's reducer and differ: `ListState.apply`, the same code every native
/// command folds with, and `Differ` with `DiffText`, the code and words of `listtape diff`,
/// compiled to WebAssembly with Embedded Swift. The page hands over its window of events
/// once (JSON Lines), loads checkpoints (the state codec's bytes), folds events by number
/// and reads states back as rows to draw or as the protocol's state JSON, and each event's
/// diff as `listtape diff` words it.
///
/// Calls pass pointers and lengths into linear memory; text comes back in one result buffer
/// (`lt_result`, `lt_result_length`) that the next call replaces.
struct Viewer {
  var state = ListState()
  /// The window's events as JSON Lines (owned), and where each line starts.
  var events = UnsafeMutableRawBufferPointer(start: nil, count: 0)
  var starts: [Int] = []
  var result = UnsafeMutableRawBufferPointer(start: nil, count: 0)
  /// The state before the last event folded with `diffing`, and what that event touched.
  var before: ListState?
  var touched = TouchedItems()

  /// The outcome of folding one event, as the page and the checks read it.
  enum Outcome: Int32 {
    case applied = 0
    case fault = 1
    case malformed = 2
    case outOfRange = 3
  }

  mutating func setResult(_ bytes: UnsafeRawBufferPointer) {
    result.deallocate()
    result = .allocate(byteCount: max(bytes.count, 1), alignment: 1)
    if let base = bytes.baseAddress, let to = result.baseAddress {
      to.copyMemory(from: base, byteCount: bytes.count)
    }
    result = UnsafeMutableRawBufferPointer(start: result.baseAddress, count: bytes.count)
  }

  mutating func setResult(_ bytes: [UInt8]) {
    bytes.withUnsafeBytes { setResult($0) }
  }

  mutating func setResult(_ text: String) {
    setResult(Array(text.utf8))
  }

  /// Takes ownership of `bytes` (JSON Lines) as the window's events; returns their count.
  mutating func setEvents(_ bytes: UnsafeMutableRawBufferPointer) -> Int {
    events.deallocate()
    events = bytes
    starts = []
    var start = 0
    for i in 0..<bytes.count where bytes[i] == UInt8(ascii: "\n") {
      starts.append(start)
      start = i + 1
    }
    if start < bytes.count { starts.append(start) }
    starts.append(bytes.count + 1)
    return starts.count - 1
  }

  /// Event line `i` (0-based) without its newline, or nil when out of range.
  func line(_ i: Int) -> UnsafeRawBufferPointer? {
    guard i >= 0 && i + 1 < starts.count else { return nil }
    let from = starts[i]
    let to = min(starts[i + 1] - 1, events.count)
    return UnsafeRawBufferPointer(rebasing: events[from..<to])
  }

  /// Decodes and folds one JSON line; the result holds the fault or why it is malformed.
  /// With `diffing`, the state before it and what it touches are kept for `diff(context:)`.
  mutating func apply(json: UnsafeRawBufferPointer, diffing: Bool = false) -> Outcome {
    before = nil
    let event: Event
    do throws(MalformedEvent) {
      event = try Event(jsonLine: json)
    } catch {
      setResult(error.message)
      return .malformed
    }
    if diffing {
      // As `listtape diff` compares two close points: only where the events touched.
      before = state
      touched = TouchedItems(limit: max(1_024, state.numberOfAllItems / 4))
      touched.note(event, before: state)
    }
    do throws(ListFault) {
      try state.apply(event)
    } catch {
      setResult("\(event.op): \(error)")
      return .fault
    }
    setResult(UnsafeRawBufferPointer(start: nil, count: 0))
    return .applied
  }

  /// What the page draws, smaller than the state JSON: `[multipleSelection, [[section,
  /// [[level, id, flags, title?, fields?], …]], …]]`, every item in pre-order; flags: 1
  /// expanded, 2 selected, 4 visible, 8 has children; a title (or null) only when there is a
  /// title or fields; fields as `show` lists them (`key=value, …`, keys sorted).
  mutating func rows() {
    var w = JSONWriter(reservingCapacity: 4096)
    w.beginArray()
    w.bool(state.allowsMultipleSelection)
    w.beginArray()
    for section in state.sectionIdentifiers {
      w.beginArray()
      w.string(section)
      w.beginArray()
      for row in state.rows(inSection: section) ?? [] {
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
      let diff = Differ.diff(before, state, touched: touched, context: context)
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

  mutating func stateJSON(event: Int) {
    var w = JSONWriter(reservingCapacity: 4096)
    state.writeJSON(event: event, to: &w)
    setResult(w.bytes)
  }
}

nonisolated(unsafe) var viewer = Viewer()

/// `count` bytes of linear memory for the page to fill; give them back with `lt_free`
/// (or hand them to `lt_events`, which keeps them).
@_expose(wasm, "lt_alloc")
@_cdecl("lt_alloc")
func ltAlloc(_ count: Int32) -> UnsafeMutableRawPointer {
  .allocate(byteCount: max(Int(count), 1), alignment: 16)
}

@_expose(wasm, "lt_free")
@_cdecl("lt_free")
func ltFree(_ pointer: UnsafeMutableRawPointer) {
  pointer.deallocate()
}

/// Where the last result starts, and its length in bytes.
@_expose(wasm, "lt_result")
@_cdecl("lt_result")
func ltResult() -> UnsafeMutableRawPointer? { viewer.result.baseAddress }

@_expose(wasm, "lt_result_length")
@_cdecl("lt_result_length")
func ltResultLength() -> Int32 { Int32(viewer.result.count) }

/// Keeps `count` bytes at `pointer` (from `lt_alloc`) as the window's events, one JSON
/// object a line; returns how many lines there are.
@_expose(wasm, "lt_events")
@_cdecl("lt_events")
func ltEvents(_ pointer: UnsafeMutableRawPointer, _ count: Int32) -> Int32 {
  Int32(viewer.setEvents(UnsafeMutableRawBufferPointer(start: pointer, count: Int(count))))
}

/// Puts event line `index` (0-based) in the result; returns 0, or 3 when out of range.
@_expose(wasm, "lt_event")
@_cdecl("lt_event")
func ltEvent(_ index: Int32) -> Int32 {
  guard let line = viewer.line(Int(index)) else { return Viewer.Outcome.outOfRange.rawValue }
  viewer.setResult(line)
  return Viewer.Outcome.applied.rawValue
}

/// The empty list (event 0).
@_expose(wasm, "lt_reset")
@_cdecl("lt_reset")
func ltReset() {
  viewer.state = ListState()
}

/// Replaces the state with the one encoded at `pointer` (the state codec, as in a log's
/// checkpoints); returns 0, or 1 with the reason in the result.
@_expose(wasm, "lt_load")
@_cdecl("lt_load")
func ltLoad(_ pointer: UnsafeRawPointer, _ count: Int32) -> Int32 {
  do throws(CodecError) {
    viewer.state = try ListState(encoded: UnsafeRawBufferPointer(start: pointer, count: Int(count)))
    return 0
  } catch {
    viewer.setResult("\(error)")
    return 1
  }
}

/// Folds event line `index`: 0 applied, 1 fault, 2 malformed (message in the result), 3 no
/// such line.
@_expose(wasm, "lt_apply")
@_cdecl("lt_apply")
func ltApply(_ index: Int32) -> Int32 {
  guard let line = viewer.line(Int(index)) else { return Viewer.Outcome.outOfRange.rawValue }
  return viewer.apply(json: line).rawValue
}

/// Folds event line `index` as `lt_apply` does, keeping what `lt_diff` needs to say what it
/// changed.
@_expose(wasm, "lt_apply_diff")
@_cdecl("lt_apply_diff")
func ltApplyDiff(_ index: Int32) -> Int32 {
  guard let line = viewer.line(Int(index)) else { return Viewer.Outcome.outOfRange.rawValue }
  return viewer.apply(json: line, diffing: true).rawValue
}

/// Puts what the last `lt_apply_diff` changed in the result, in the words of `listtape diff`
/// with `--context context` (`Viewer.diff`).
@_expose(wasm, "lt_diff")
@_cdecl("lt_diff")
func ltDiff(_ context: Int32) {
  viewer.diff(context: Int(context))
}

/// Folds the JSON event at `pointer`, as `lt_apply`.
@_expose(wasm, "lt_apply_json")
@_cdecl("lt_apply_json")
func ltApplyJSON(_ pointer: UnsafeRawPointer, _ count: Int32) -> Int32 {
  viewer.apply(json: UnsafeRawBufferPointer(start: pointer, count: Int(count))).rawValue
}

/// Puts the state as the protocol's state JSON (with `"event": event`) in the result.
@_expose(wasm, "lt_state")
@_cdecl("lt_state")
func ltState(_ event: Int32) {
  viewer.stateJSON(event: Int(event))
}

/// Puts the rows the page draws in the result (`Viewer.rows`).
@_expose(wasm, "lt_rows")
@_cdecl("lt_rows")
func ltRows() {
  viewer.rows()
}
