import Foundation
import ListTapeInvestigate
import ListTapeJSON
import ListTapeModel
import ListTapeRead
import ListTapeStore

/// The data a self-contained HTML viewer embeds for a window of a log: the events as JSON
/// Lines (which the page's reducer, the model compiled to WebAssembly, folds), a line of
/// description each, the faults and marks found by folding them, and full states
/// (checkpoints, in the state codec) every K events so the page folds at most K events to
/// show any state.
///
/// K grows with the list (`max(64, (items + sections) / 2)`, or fixed by `checkpointEvery`), so the
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

  /// What the page embeds, each part escaped for a `<script>` element.
  struct Parts {
    /// `{"version", "name", "total", "from", "to", "descriptions", "faults", "marks",
    /// "checkpoints", "inexact"}`; a checkpoint is `[n, base64 of the state codec]`;
    /// `inexact` the `[first, last]` ranges of states that are not the recorded ones.
    var data: [UInt8]
    /// The window's events, one protocol JSON object a line.
    var events: [UInt8]
  }

  var name: String
  var timeline: Timeline
  /// Events `from...through` are embedded; the page shows states `from - 1 ... through`.
  var from: Int
  var through: Int
  var checkpointEvery: Int?

  /// Folds the window once through `Timeline.fold` (long windows are read ahead on a
  /// second thread) and collects what the page embeds; `progress` gets (done, total).
  func parts(progress: (Int, Int) -> Void = { _, _ in }) throws(Failure) -> Parts {
    var state: ListState
    var decoder: EventDecoder
    do {
      (state, decoder) = try timeline.seek(to: from - 1)
    } catch {
      throw .replay(error)
    }
    var events = JSONWriter(reservingCapacity: 1 << 16)
    var descriptions = JSONWriter(reservingCapacity: 1 << 16)
    var faults = JSONWriter()
    var marks = JSONWriter()
    var checkpoints = JSONWriter(reservingCapacity: 1 << 16)
    descriptions.beginArray()
    faults.beginArray()
    marks.beginArray()
    checkpoints.beginArray()
    Self.checkpoint(state, at: from - 1, to: &checkpoints)
    var lastCheckpoint = from - 1
    var failure: Failure?
    // A salvaged log: the page needs every number of the window, so each lost or
    // undecodable event becomes a mark (it changes nothing, as the native fold skips it),
    // and each point where the fold re-anchors gets a checkpoint of the restored state.
    let steps = timeline.exactSteps
    var restored: [Int: ListState] = [:]
    var inexact = JSONWriter()
    inexact.beginArray()
    if steps.hasGaps {
      do {
        for point in timeline.anchors(from: from, through: through) {
          restored[point] = try timeline.restoredState(from: point, through: point)
        }
      } catch {
        throw .replay(error)
      }
      var open: Int?
      func close(_ end: Int) {
        if let start = open {
          inexact.beginArray()
          inexact.int(start)
          inexact.int(end)
          inexact.endArray()
          open = nil
        }
      }
      for n in max(from - 1, 0)...through {
        if steps.stateIsExact(at: n) { close(n - 1) } else if open == nil { open = n }
      }
      close(through)
    }
    inexact.endArray()
    var next = from
    func placeholders(before n: Int) {
      while next < n {
        Event(.mark("(event \(next) lost in a salvage, or unreadable after lost events)"))
          .encode(to: &events)
        events.endLine()
        descriptions.string("(lost in a salvage, or unreadable after lost events)")
        if let state = restored[next] {
          Self.checkpoint(state, at: next, to: &checkpoints)
          lastCheckpoint = next
        }
        next += 1
      }
      next = n + 1
    }
    func size() -> Int {
      events.bytes.count + descriptions.bytes.count + checkpoints.bytes.count
        + faults.bytes.count + marks.bytes.count
    }
    do {
      try timeline.fold(&state, &decoder, from: from, through: through) {
        ops, i, fault, state in
        let n = ops.seqs[i]
        let event = ops.event(i, state.ids)
        placeholders(before: n)
        // An event may name a long id many times over (a log's back-references are a byte
        // each): refuse before writing its JSON, not after.
        let idBytes = event.operation.itemIDBytes
        if size() + idBytes > Self.maxBytes {
          failure = .tooLarge(bytes: size() + idBytes, atEvent: n)
          return false
        }
        event.encode(to: &events)
        events.endLine()
        var text = Render.describe(event.operation)
        if text.count > 160 { text = String(text.prefix(160)) + "…" }
        if let site = event.site { text += "  at \(site)" }
        descriptions.string(text)
        let labels = event.operation.markLabels
        if !labels.isEmpty {
          marks.beginArray()
          marks.int(n)
          marks.string(labels.joined(separator: ", "))
          marks.endArray()
        }
        if let fault {
          faults.beginArray()
          faults.int(n)
          faults.string("\(event.op): \(fault)")
          faults.endArray()
        }
        // Sections count too: a checkpoint holds every section's id.
        let every =
          checkpointEvery ?? max(64, (state.numberOfAllItems + state.numberOfSections) / 2)
        if n - lastCheckpoint >= every || restored[n] != nil {
          Self.checkpoint(state, at: n, to: &checkpoints)
          lastCheckpoint = n
        }
        if n & 0x3FF == 0 { progress(n - from + 1, through - from + 1) }
        if size() > Self.maxBytes {
          failure = .tooLarge(bytes: size(), atEvent: n)
          return false
        }
        return true
      }
    } catch {
      throw .replay(error)
    }
    if let failure { throw failure }
    placeholders(before: through + 1)
    if size() > Self.maxBytes { throw .tooLarge(bytes: size(), atEvent: through) }
    descriptions.endArray()
    faults.endArray()
    marks.endArray()
    checkpoints.endArray()
    var head = JSONWriter()
    head.beginObject()
    head.key("version")
    head.int(2)
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
    field("descriptions", descriptions)
    field("faults", faults)
    field("marks", marks)
    field("checkpoints", checkpoints)
    field("inexact", inexact)
    out.append(UInt8(ascii: "}"))
    return Parts(data: Self.escapeForScript(out), events: Self.escapeForScript(events.bytes))
  }

  /// `[n, base64]`: the state in the state codec (as a log's checkpoints hold it), which the
  /// page's reducer decodes.
  static func checkpoint(_ state: ListState, at n: Int, to w: inout JSONWriter) {
    w.beginArray()
    w.int(n)
    w.string(Data(state.encoded()).base64EncodedString())
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
