import ListTapeJSON
import ListTapeModel
import ListTapeStore

/// The data a self-contained HTML viewer embeds for a window of a log: the events with a
/// line of description each, the faults and marks found by folding them, and full states
/// (checkpoints) every K events so the page folds at most K events to show any state.
///
/// K grows with the list (`max(64, items / 2)`, or fixed by `checkpointEvery`), so the
/// checkpoints cost about as many bytes as the events, whatever the list's size.
struct HTMLReport {
  /// The largest window of events a page may embed by default.
  static let defaultMaxEvents = 200_000
  /// The largest page written, in bytes.
  static let maxBytes = 50 << 20

  enum Failure: Error {
    case tooLarge(bytes: Int, atEvent: Int)
    case replay(StoreError)
  }

  var name: String
  var timeline: Timeline
  /// Events `from...through` are embedded; the page shows states `from - 1 ... through`.
  var from: Int
  var through: Int
  var checkpointEvery: Int?

  /// The JSON document the page reads, escaped for a `<script type="application/json">`.
  func data(progress: (Int, Int) -> Void = { _, _ in }) throws(Failure) -> [UInt8] {
    var state: ListState
    do {
      state = try timeline.state(at: from - 1)
    } catch {
      throw .replay(error)
    }
    var events = JSONWriter(reservingCapacity: 1 << 16)
    var descriptions = JSONWriter(reservingCapacity: 1 << 16)
    var faults = JSONWriter()
    var marks = JSONWriter()
    var checkpoints = JSONWriter(reservingCapacity: 1 << 16)
    events.beginArray()
    descriptions.beginArray()
    faults.beginArray()
    marks.beginArray()
    checkpoints.beginArray()
    Self.checkpoint(state, at: from - 1, to: &checkpoints)
    var lastCheckpoint = from - 1
    var failure: Failure?
    func size() -> Int {
      events.bytes.count + descriptions.bytes.count + checkpoints.bytes.count
        + faults.bytes.count + marks.bytes.count
    }
    do {
      try timeline.forEachEvent(from: from, through: through) { n, event in
        event.encode(to: &events)
        var text = Render.describe(event.operation)
        if text.count > 160 { text = String(text.prefix(160)) + "…" }
        descriptions.string(text)
        let labels = event.operation.markLabels
        if !labels.isEmpty {
          marks.beginArray()
          marks.int(n)
          marks.string(labels.joined(separator: ", "))
          marks.endArray()
        }
        do throws(ListFault) {
          try state.apply(event)
        } catch {
          faults.beginArray()
          faults.int(n)
          faults.string("\(event.op): \(error)")
          faults.endArray()
        }
        let every = checkpointEvery ?? max(64, state.numberOfAllItems / 2)
        if n - lastCheckpoint >= every {
          Self.checkpoint(state, at: n, to: &checkpoints)
          lastCheckpoint = n
        }
        if n & 0x3FF == 0 {
          progress(n - from + 1, through - from + 1)
          if size() > Self.maxBytes {
            failure = .tooLarge(bytes: size(), atEvent: n)
            return false
          }
        }
        return true
      }
    } catch {
      throw .replay(error)
    }
    if let failure { throw failure }
    if size() > Self.maxBytes { throw .tooLarge(bytes: size(), atEvent: through) }
    events.endArray()
    descriptions.endArray()
    faults.endArray()
    marks.endArray()
    checkpoints.endArray()
    var head = JSONWriter()
    head.beginObject()
    head.key("version")
    head.int(1)
    head.key("name")
    head.string(name)
    head.key("total")
    head.int(timeline.eventCount)
    head.key("from")
    head.int(from)
    head.key("to")
    head.int(through)
    var out = head.bytes
    func field(_ key: String, _ w: JSONWriter) {
      out += Array(",\"\(key)\":".utf8)
      out += w.bytes
    }
    field("events", events)
    field("descriptions", descriptions)
    field("faults", faults)
    field("marks", marks)
    field("checkpoints", checkpoints)
    out.append(UInt8(ascii: "}"))
    return Self.escapeForScript(out)
  }

  /// `[n, multipleSelection, [[section, [[level, id, flags, title?, fields?], …]], …]]`:
  /// every item in pre-order; flags bit 0 expanded, bit 1 selected.
  static func checkpoint(_ state: ListState, at n: Int, to w: inout JSONWriter) {
    w.beginArray()
    w.int(n)
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
        w.int((row.expanded ? 1 : 0) | (row.isSelected ? 2 : 0))
        if row.title != nil || row.fields != nil {
          if let title = row.title { w.string(title) } else { w.null() }
        }
        if let fields = row.fields {
          w.beginObject()
          for key in fields.keys.sorted() {
            w.key(key)
            w.string(fields[key] ?? "")
          }
          w.endObject()
        }
        w.endArray()
      }
      w.endArray()
      w.endArray()
    }
    w.endArray()
    w.endArray()
  }

  /// JSON made safe inside a `<script>` element: `<`, `>`, `&`, U+2028 and U+2029 become
  /// `\u` escapes. They can only occur inside JSON strings, where the escapes mean the same.
  static func escapeForScript(_ json: [UInt8]) -> [UInt8] {
    var out: [UInt8] = []
    out.reserveCapacity(json.count + json.count / 16)
    var i = 0
    while i < json.count {
      let b = json[i]
      switch b {
      case UInt8(ascii: "<"): out += Array("\\u003c".utf8)
      case UInt8(ascii: ">"): out += Array("\\u003e".utf8)
      case UInt8(ascii: "&"): out += Array("\\u0026".utf8)
      case 0xE2 where i + 2 < json.count && json[i + 1] == 0x80 && json[i + 2] == 0xA8:
        out += Array("\\u2028".utf8)
        i += 2
      case 0xE2 where i + 2 < json.count && json[i + 1] == 0x80 && json[i + 2] == 0xA9:
        out += Array("\\u2029".utf8)
        i += 2
      default: out.append(b)
      }
      i += 1
    }
    return out
  }
}
