import Foundation
import ListTapeInvestigate
import ListTapeJSON
import ListTapeLog
import ListTapeModel
import ListTapeRead
import ListTapeStore

/// What a self-contained HTML viewer embeds for a window of a log: the log itself, its
/// bytes from the file header through the frame holding the window's last event, which the
/// page reads with the library's frame checks and decoder and folds with the one reducer
/// (all compiled to WebAssembly, Tools/wasm), and a few numbers that name the window.
///
/// A 1.0 log is first cut to 2.0 in memory (`Timeline.cut`: the same events, numbers and
/// recovery points), so the page reads one format. A salvaged log travels as it is; the page
/// gets the stretches whose states are not the recorded ones and the recovery points where
/// the fold takes the log's checkpoint, as every command labels and restores them.
struct HTMLReport {
  /// The most events a page may embed by default: a guard on the browser's memory (about
  /// 300 MiB for the bench's 1M-event sessions), far above the sessions it is made for.
  static let defaultMaxEvents = 10_000_000
  /// The most log bytes a page embeds (as base64, a third more).
  static let maxLogBytes = 192 << 20
  /// Events between the seek points the page keeps by default (copies of the state).
  static let defaultSpacing = 16_384

  enum Failure: Error {
    case tooLarge(bytes: Int)
    case replay(StoreError)
  }

  /// What the page embeds.
  struct Parts {
    /// `{"version", "name", "total", "from", "to", "spacing", "bytes", "inexact",
    /// "anchors"}`: `inexact` the `[first, last]` ranges of states that are not the
    /// recorded ones, `anchors` the recovery points where the fold restores them.
    var data: [UInt8]
    /// The log's bytes, written as base64.
    var log: LogBytes
    /// How many bytes of log that is.
    var logBytes: Int { log.count }
  }

  /// The log bytes a page embeds: the start of the log's own file (read a piece at a time
  /// as the page is written), or a 1.0 log cut to 2.0 in memory.
  enum LogBytes {
    case file(path: String, count: Int)
    case data(Data)

    /// Bytes read and encoded at a time: a multiple of 3, so the pieces' base64 joins up.
    static let piece = 3 << 20

    var count: Int {
      switch self {
      case .file(_, let count): return count
      case .data(let data): return data.count
      }
    }

    /// Hands over the bytes' base64 in order, a piece at a time.
    func forEachBase64Piece(_ body: ([UInt8]) throws(CLIError) -> Void) throws(CLIError) {
      switch self {
      case .data(let data):
        try Self.pieces(count: data.count, body) { done, want in
          data[data.startIndex + done..<data.startIndex + done + want]
        }
      case .file(let path, let count):
        func failed(_ error: any Error) -> CLIError {
          .failure("cannot read \(path): \(error.localizedDescription)", code: ExitCode.io)
        }
        let handle: FileHandle
        do {
          handle = try FileHandle(forReadingFrom: URL(fileURLWithPath: path))
        } catch {
          throw failed(error)
        }
        defer { try? handle.close() }
        try Self.pieces(count: count, body) { (done, want) throws(CLIError) in
          let data: Data
          do {
            data = try handle.read(upToCount: want) ?? Data()
          } catch {
            throw failed(error)
          }
          guard data.count == want else {
            throw .failure(
              "\(path) became shorter while the page was written (\(done + data.count) of "
                + "\(count) bytes read)", code: ExitCode.io)
          }
          return data
        }
      }
    }

    /// `count` bytes taken `piece` at a time from `read(done, want)`, each handed to `body`
    /// as base64.
    private static func pieces(
      count: Int, _ body: ([UInt8]) throws(CLIError) -> Void,
      read: (Int, Int) throws(CLIError) -> Data
    ) throws(CLIError) {
      var done = 0
      while done < count {
        let want = min(piece, count - done)
        try body(Array(try read(done, want).base64EncodedString().utf8))
        done += want
      }
    }
  }

  var name: String
  var timeline: Timeline
  /// Events `from...through` are shown; the page shows states `from - 1 ... through`.
  var from: Int
  var through: Int
  var spacing: Int?

  func parts() throws(Failure) -> Parts {
    let bytes = try logBytes()
    guard bytes.count <= Self.maxLogBytes else { throw .tooLarge(bytes: bytes.count) }
    let steps = timeline.exactSteps
    var inexact = JSONWriter()
    inexact.beginArray()
    var anchors = JSONWriter()
    anchors.beginArray()
    if steps.hasGaps {
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
      for point in timeline.anchors(from: 1, through: through) { anchors.int(point) }
    }
    inexact.endArray()
    anchors.endArray()
    var head = JSONWriter()
    head.beginObject()
    head.key("version")
    head.int(3)
    head.key("name")
    head.string(name)
    head.key("total")
    head.int(timeline.eventCount)
    head.key("from")
    head.int(from)
    head.key("to")
    head.int(through)
    head.key("spacing")
    head.int(spacing ?? Self.defaultSpacing)
    head.key("bytes")
    head.int(bytes.count)
    var out = head.bytes
    out += Array(",\"inexact\":".utf8) + inexact.bytes
    out += Array(",\"anchors\":".utf8) + anchors.bytes
    out.append(UInt8(ascii: "}"))
    return Parts(data: Self.escapeForScript(out), log: bytes)
  }

  /// The log's bytes through the frames of event `through` (and the frames after it that
  /// hold no event: a restart, the checkpoint of a recovery point); a 1.0 log cut to 2.0.
  func logBytes() throws(Failure) -> LogBytes {
    if timeline.formatMajor < 2 { return .data(try cutBytes()) }
    var end = timeline.reader.validEnd
    if through < timeline.eventCount {
      do {
        try timeline.reader.forEachFrame(from: UInt64(through + 1), through: UInt64(through + 1)) {
          view in
          guard view.kind == .events, view.firstSeq > UInt64(through) else { return true }
          end = view.offset
          return false
        }
      } catch {
        throw .replay(.log(error))
      }
    }
    return .file(path: timeline.path, count: Int(end))
  }

  /// A 1.0 log's events `1...through` written as a 2.0 log (in a private temporary file,
  /// removed after), as `listtape cut` writes them.
  func cutBytes() throws(Failure) -> Data {
    let dir = FileManager.default.temporaryDirectory.appendingPathComponent(
      "listtape-html-\(getpid())-\(UInt32.random(in: 0...UInt32.max))")
    do {
      try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: false)
    } catch {
      throw .replay(
        .log(LogError(.io, path: dir.path, message: "cannot make a temporary directory")))
    }
    defer { try? FileManager.default.removeItem(at: dir) }
    // Re-encoding writes each id out: a log naming long ids many times over (a byte each
    // by back-reference in 1.0) is refused before it is re-encoded.
    var written = 0
    do {
      var (state, decoder) = try timeline.seek(to: 0)
      try timeline.fold(&state, &decoder, from: 1, through: through, applying: false) {
        ops, i, _, state in
        written += ops.event(i, state.ids).operation.itemIDBytes
        return written <= Self.maxLogBytes
      }
    } catch {
      throw .replay(error)
    }
    if written > Self.maxLogBytes { throw .tooLarge(bytes: written) }
    let path = dir.appendingPathComponent("cut.ltape").path
    do {
      try timeline.cut(through: through, to: path, fsync: .never)
    } catch {
      throw .replay(error)
    }
    do {
      return try Data(contentsOf: URL(fileURLWithPath: path))
    } catch {
      throw .replay(.log(LogError(.io, path: path, message: "cannot read the cut log")))
    }
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
