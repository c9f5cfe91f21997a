import Foundation
import ListTapeSamples
import Testing

@testable import ListTapeLog

/// An event-like record (op byte, small varints, sometimes a word): compresses like real events.
func makeRecord(_ rng: inout SplitMix64) -> [UInt8] {
  let r = rng.next()
  var out: [UInt8] = [UInt8(r % 12)]
  func varint(_ v: UInt64) {
    var v = v
    while v >= 0x80 {
      out.append(UInt8(truncatingIfNeeded: v) | 0x80)
      v >>= 7
    }
    out.append(UInt8(v))
  }
  varint((r >> 8) % 300)
  varint((r >> 20) % 5000)
  if r % 3 == 0 { out += Array(["item-", "folder-", "note-"][Int((r >> 40) % 3)].utf8) }
  varint((r >> 50) % 90)
  return out
}

/// A 64-bit fold of records: a stand-in for the model's reducer in seek tests.
func fold(_ h: UInt64, _ r: UnsafeRawBufferPointer) -> UInt64 {
  var h = h ^ 0xCBF2_9CE4_8422_2325
  for b in r { h = (h ^ UInt64(b)) &* 0x100_0000_01B3 }
  return h
}

/// A scratch directory removed at deinit.
final class TempDir: @unchecked Sendable {
  let path: String

  init() {
    var template = Array("\(NSTemporaryDirectory())/listtape-log-XXXXXX".utf8CString)
    let p = template.withUnsafeMutableBufferPointer { buf in buf.baseAddress.flatMap { mkdtemp($0) }
    }
    path = p.map { String(cString: $0) } ?? NSTemporaryDirectory()
  }

  func file(_ name: String) -> String { "\(path)/\(name)" }

  deinit { try? FileManager.default.removeItem(atPath: path) }
}

/// A log written by the real writer plus everything the oracle needs to judge a reader.
struct Fixture: Sendable {
  var bytes: [UInt8]
  var records: [[UInt8]]
  /// Flat copy of all records and their start offsets, for allocation-free comparison.
  var flat: [UInt8]
  var starts: [Int]
  /// Frame start offsets with the last event number once that frame is read.
  var frames: [(offset: Int, lastSeq: UInt64, header: FrameHeader)]
  var checkpoints: [UInt64: [UInt8]]
  var salt: UInt32

  /// Events readable when the file is cut to `length` bytes (whole frames only).
  func eventsWithin(_ length: Int) -> UInt64 {
    var last: UInt64 = 0
    for f in frames where f.offset + Int(f.header.frameLength) <= length { last = f.lastSeq }
    return last
  }

  /// Index of the frame holding byte `at` (nil for the file header).
  func frameIndex(holding at: Int) -> Int? {
    frames.lastIndex { $0.offset <= at }
  }

  /// Writes `count` records with frames of `perFrame` events and checkpoints at the given
  /// seqs, in format `major` (2.0: event frames hold the records as they are, and a
  /// dictionary frame follows each checkpoint).
  static func make(
    seed: UInt64, count: Int, perFrame: Int, checkpointsAt: Set<Int>, checkpointSize: Int = 200,
    dir: TempDir, name: String = "fixture.log", major: UInt16 = 1
  ) throws -> Fixture {
    let path = dir.file(name)
    var options = LogWriterOptions()
    options.fsync = .never
    options.maxEventsPerFrame = perFrame
    options.batchDelay = 10
    options.formatMajor = major
    let w = try LogWriter.open(path: path, options: options)
    var rng = SplitMix64(seed: seed)
    var records: [[UInt8]] = []
    var checkpoints: [UInt64: [UInt8]] = [:]
    var h: UInt64 = 0
    for i in 1...count {
      let r = makeRecord(&rng)
      records.append(r)
      try w.append(r)
      h = r.withUnsafeBytes { fold(h, $0) }
      if checkpointsAt.contains(i) {
        var blob = withUnsafeBytes(of: h.littleEndian) { Array($0) }
        while blob.count < checkpointSize { blob.append(UInt8(truncatingIfNeeded: rng.next())) }
        try w.appendCheckpoint(blob)
        checkpoints[UInt64(i)] = blob
        if major >= 2 { try w.appendDictionary(Array(blob.prefix(40))) }
      }
    }
    try w.close()
    let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))
    return try Fixture(bytes: bytes, records: records, checkpoints: checkpoints)
  }

  init(bytes: [UInt8], records: [[UInt8]], checkpoints: [UInt64: [UInt8]]) throws {
    self.bytes = bytes
    self.records = records
    self.checkpoints = checkpoints
    flat = records.flatMap { $0 }
    var s = [0]
    for r in records { s.append(s[s.count - 1] + r.count) }
    starts = s
    let header = try bytes.withUnsafeBytes { p throws(LogError) in
      try FileHeader.decode(UnsafeRawBufferPointer(rebasing: p[0..<64]), path: "fixture")
    }
    salt = header.salt
    frames = []
    var off = 64
    var last: UInt64 = 0
    while off + 36 <= bytes.count {
      let h = try #require(
        bytes.withUnsafeBytes {
          FrameHeader.decode(UnsafeRawBufferPointer(rebasing: $0[off..<off + 36]), salt: salt)
        })
      if h.type == Format.typeEvents { last = h.firstSeq + UInt64(h.eventCount) - 1 }
      frames.append((off, last, h))
      off += Int(h.frameLength)
    }
  }

  /// Reads every record `reader` delivers and checks each against the originals.
  /// Returns how many arrived, or -1 if any differed or arrived out of order.
  func replayMatches(_ reader: LogReader) throws -> Int {
    var n = 0
    var bad = false
    _ = try flat.withUnsafeBytes { all in
      try forEachRecord(reader) { seq, r in
        n += 1
        guard seq == UInt64(n), n < starts.count else {
          bad = true
          return
        }
        let s = starts[n - 1]
        let e = starts[n]
        if r.count != e - s {
          bad = true
        } else if let a = all.baseAddress, let b = r.baseAddress, memcmp(a + s, b, r.count) != 0 {
          bad = true
        }
      }
    }
    return bad ? -1 : n
  }
}

/// Reads a file's bytes.
func readBytes(_ path: String) throws -> [UInt8] {
  try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))
}

/// Writes bytes to a file, replacing it.
func writeBytes(_ bytes: [UInt8], to path: String) throws {
  try Data(bytes).write(to: URL(fileURLWithPath: path))
}

/// Re-encodes frame header `h` at `offset` of `bytes` with valid checksums (length attacks).
func patchFrame(_ bytes: inout [UInt8], at offset: Int, salt: UInt32, _ h: FrameHeader) {
  bytes.withUnsafeMutableBytes { p in
    h.encode(into: UnsafeMutableRawBufferPointer(rebasing: p[offset..<offset + 36]), salt: salt)
  }
}

/// Every record of a log of either format: 1.0 through `forEachRecord`; 2.0 (whose event
/// payloads the log layer does not interpret; these fixtures store records as they are) by
/// frame, each payload split as 1.0 records are.
func forEachRecord(
  _ reader: LogReader, from: UInt64 = 1, _ body: (UInt64, UnsafeRawBufferPointer) -> Void
) throws {
  if reader.formatVersion.major == 1 {
    try reader.forEachRecord(from: from, body)
    return
  }
  var broken: String?
  try reader.forEachFrame(from: from) { view in
    guard view.kind == .events else { return true }
    if let problem = RecordFraming.check(view.payload, count: view.eventCount) {
      broken = problem
      return false
    }
    guard let base = view.payload.baseAddress else { return true }
    var pos = 0
    for i in 0..<view.eventCount {
      let (len, used) = RecordFraming.length(base, pos)
      pos += used
      let seq = view.firstSeq + UInt64(i)
      if seq >= from { body(seq, UnsafeRawBufferPointer(start: base + pos, count: len)) }
      pos += len
    }
    return true
  }
  if let broken { throw LogError(.damaged, path: reader.path, message: broken) }
}
