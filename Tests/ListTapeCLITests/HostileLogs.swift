import Foundation
import ListTapeLog
import ListTapeModel
import Testing

/// Writes a crafted log through the library's own writer and event encoder, so every frame
/// and record is one the reader must accept; only what the writer refuses is built by hand.
struct CraftedLog {
  let path: String
  private let writer: LogWriter
  private var encoder = EventEncoder()
  private var scratch: [UInt8] = []
  private var time: Int64 = 1_764_400_000_000
  /// Bytes of records appended: what the reader inflates, the measure of the work a command
  /// may do.
  private(set) var rawBytes = 0

  init(path: String, maxEventsPerFrame: Int = 4096, maxRawBytesPerFrame: Int = 64 << 10)
    throws
  {
    self.path = path
    var options = LogWriterOptions()
    options.fsync = .never
    options.maxEventsPerFrame = maxEventsPerFrame
    options.maxRawBytesPerFrame = maxRawBytesPerFrame
    // Checkpoints are the recorder's business (they need the fold); crafted logs have none
    // unless a case adds one on purpose.
    options.maxEventsBetweenCheckpoints = .max
    options.minCheckpointSpacingBytes = .max
    options.eventCodecVersion = 1
    options.stateCodecVersion = 1
    writer = try LogWriter.open(path: path, options: options)
  }

  var eventCount: Int { Int(writer.eventCount) }

  mutating func add(_ op: ListOperation) throws {
    time += 1
    scratch.removeAll(keepingCapacity: true)
    try encoder.encode(Event(op, time: time), into: &scratch)
    rawBytes += scratch.count
    try writer.append(scratch)
  }

  /// A record built by hand; a log is crafted either through `add` or through this, never
  /// both (the encoder would not know the records it did not write).
  mutating func addRecord(_ record: [UInt8]) throws {
    rawBytes += record.count
    try writer.append(record)
  }

  /// A checkpoint frame holding `state` (a checkpoint's layout: version 1, the last event
  /// time, then the state codec's bytes), claimed to be the state after the last event.
  mutating func addCheckpoint(state: [UInt8]) throws {
    var blob: [UInt8] = [1]
    withUnsafeBytes(of: encoder.lastTime.littleEndian) { blob += $0 }
    blob += state
    rawBytes += blob.count
    try writer.appendCheckpoint(blob)
  }

  func close() throws { try writer.close() }
}

/// Record bytes in the event codec's layout (Sources/ListTapeModel/Codec/EventCodec.swift):
/// an op code, then varints, bytes and identifiers (a ring slot below 64, else 64 + length
/// and the text).
final class RecordBytes {
  private var bytes: [UInt8] = []

  @discardableResult func op(_ code: UInt8) -> Self {
    byte(code)
  }

  @discardableResult func byte(_ b: UInt8) -> Self {
    bytes.append(b)
    return self
  }

  @discardableResult func count(_ n: Int) -> Self {
    var v = UInt64(n)
    while v >= 0x80 {
      bytes.append(UInt8(truncatingIfNeeded: v) | 0x80)
      v >>= 7
    }
    bytes.append(UInt8(v))
    return self
  }

  @discardableResult func literal(_ id: [UInt8]) -> Self {
    count(64 + id.count)
    bytes += id
    return self
  }

  func take() -> [UInt8] {
    defer { bytes = [] }
    return bytes
  }
}

/// Appends a frame built by hand from docs/log-format.md (stored, not compressed), for what
/// the writer never writes: a META gap claiming `count` lost events.
func appendGapFrame(to path: String, count: UInt64) throws {
  var bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))
  let reader = try LogReader(path: path)
  let payload: [UInt8] = [1] + withUnsafeBytes(of: count.littleEndian) { Array($0) }
  let salt = SalvageCommandTests.crc32(0, bytes[16..<32])
  var h: [UInt8] = [0xF1, 0x46, 0x52, 0x4D, 3, 0]  // magic, META, stored
  func le<T: FixedWidthInteger>(_ v: T) { withUnsafeBytes(of: v.littleEndian) { h += $0 } }
  le(UInt16(0))
  le(reader.eventCount + 1)  // first_seq: the next event number
  le(UInt32(payload.count))
  le(UInt32(payload.count))
  le(UInt32(truncatingIfNeeded: bytes.count))
  le(SalvageCommandTests.crc32(0, payload[...]))
  le(SalvageCommandTests.crc32(salt, h[...]))
  bytes += h + payload
  try Data(bytes).write(to: URL(fileURLWithPath: path))
}

/// The hostile logs of issue 18, each small enough for the debug build of the suite and
/// large enough that a cost quadratic in any of its dimensions shows as minutes.
enum HostileLog: String, CaseIterable, CustomTestStringConvertible {
  case deepChains
  case chain100k
  case millionSections
  case maximalFrame
  case millionEventBatch
  case megabyteIDs
  case collidingIDs
  case hugeCheckpoint
  case hugeGap

  var testDescription: String { rawValue }

  /// Writes the log at `path`, its counts multiplied by `scale` (1 is the size issue 18
  /// names; depths, id sizes and the frame's event count never shrink); returns the bytes
  /// of records and checkpoints it holds.
  func write(to path: String, scale: Double) throws -> Int {
    func n(_ full: Int) -> Int { max(1, Int(Double(full) * scale)) }
    switch self {
    case .deepChains: return try Self.deepChains(path, chains: n(300), events: n(60_000))
    case .chain100k: return try Self.chain(path, length: 100_000)
    case .millionSections:
      return try Self.millionSections(path, sections: n(1_000_000), edits: 20_000)
    case .maximalFrame: return try Self.maximalFrame(path, itemsPerEvent: n(16))
    case .millionEventBatch: return try Self.millionEventBatch(path, events: n(1_000_000))
    case .megabyteIDs: return try Self.megabyteIDs(path, events: n(2_000))
    case .collidingIDs: return try Self.collidingIDs(path, ids: n(100_000))
    case .hugeCheckpoint: return try Self.hugeCheckpoint(path)
    case .hugeGap: return try Self.hugeGap(path)
    }
  }

  /// The deepest outline the protocol allows (levels 0…255), 300 times over, then 60,000
  /// events that work at the bottom of the chains: expand and collapse their tops (hiding
  /// and showing 255 levels), select and update the deepest items, move deep subtrees
  /// between chains at the same depth.
  static func deepChains(_ path: String, chains: Int, events: Int) throws -> Int {
    var log = try CraftedLog(path: path)
    try log.add(.appendSections(["S"]))
    try log.add(.configure(multipleSelection: true))
    for c in 0..<chains {
      var node = OutlineNode("c\(c).255", expanded: true)
      for level in stride(from: 254, through: 0, by: -1) {
        node = OutlineNode("c\(c).\(level)", expanded: true, children: [node])
      }
      try log.add(.appendItems([node], section: "S", parent: nil))
    }
    for i in 0..<events {
      let c = i % chains
      let d = (i * 7 + 3) % chains
      switch i % 6 {
      case 0: try log.add(.collapse(["c\(c).0"]))
      case 1: try log.add(.expand(["c\(c).0"]))
      case 2: try log.add(.select(["c\(c).255", "c\(d).255"]))
      case 3: try log.add(.update(item: "c\(c).255", title: "t\(i)", fields: nil))
      case 4: try log.add(.moveItem("c\(c).200", .after("c\(d).200")))
      default: try log.add(.deselect(nil))
      }
    }
    try log.close()
    return log.rawBytes
  }

  /// A chain of `length` nested appends: each item the only child of the one before. Items
  /// past level 255 fault (protocol section 5), so the fold stays linear.
  static func chain(_ path: String, length: Int) throws -> Int {
    var log = try CraftedLog(path: path)
    try log.add(.appendSections(["S"]))
    try log.add(.appendItems([OutlineNode("n0", expanded: true)], section: "S", parent: nil))
    for i in 1..<length {
      try log.add(
        .appendItems([OutlineNode("n\(i)", expanded: true)], section: nil, parent: "n\(i - 1)"))
    }
    try log.close()
    return log.rawBytes
  }

  /// A million sections, then 20,000 section edits at the far ends of the order (insert
  /// before the first, move the last before the first, delete the first, a batch of two).
  static func millionSections(_ path: String, sections: Int, edits: Int) throws -> Int {
    var log = try CraftedLog(path: path)
    for block in stride(from: 0, to: sections, by: 1_000) {
      try log.add(.appendSections((block..<min(sections, block + 1_000)).map { "s\($0)" }))
    }
    try log.add(.appendItems(["x"], section: "s\(sections - 1)", parent: nil))
    var first = "s0"
    var last = "s\(sections - 1)"
    for i in 0..<edits {
      switch i % 4 {
      case 0:
        try log.add(.insertSections(["n\(i)"], .before(first)))
        first = "n\(i)"
      case 1:
        try log.add(.moveSection(last, .before(first)))
        (first, last) = (last, "s\(sections - 2 - i / 4)")
      case 2:
        try log.add(.deleteSections([first]))
        first = "n\(i - 2)"
      default:
        try log.add(.batch([Event(.reloadSections([first])), Event(.appendSections(["b\(i)"]))]))
        last = "b\(i)"
      }
    }
    try log.close()
    return log.rawBytes
  }

  /// One frame of 65,535 events (the most a frame may hold), each inserting 16 new items
  /// before the list's first item (the most work per record byte an insert allows).
  static func maximalFrame(_ path: String, itemsPerEvent: Int) throws -> Int {
    var log = try CraftedLog(
      path: path, maxEventsPerFrame: 65_535, maxRawBytesPerFrame: Int(Int32.max))
    try log.add(.appendSections(["S"]))
    try log.add(.appendItems(["z"], section: "S", parent: nil))
    var front = "z"
    for e in 0..<(65_535 - 2) {
      let ids = (0..<itemsPerEvent).map { "\(e * itemsPerEvent + $0)" }
      try log.add(.insertItems(ids.map { OutlineNode($0) }, .before(front)))
      front = ids[0]
    }
    try log.close()
    return log.rawBytes
  }

  /// One `batch` event of a million events, which faults at its very end: the fold must
  /// build all of it and throw it away, once.
  static func millionEventBatch(_ path: String, events count: Int) throws -> Int {
    var log = try CraftedLog(path: path, maxRawBytesPerFrame: Int(Int32.max))
    try log.add(.appendSections(["S"]))
    try log.add(.configure(multipleSelection: true))
    var events: [Event] = []
    events.reserveCapacity(count)
    for i in 0..<(count - 1) {
      switch i % 4 {
      case 0: events.append(Event(.appendItems([OutlineNode("i\(i)")], section: "S", parent: nil)))
      case 1: events.append(Event(.select(["i\(i - 1)"])))
      case 2 where i > 2: events.append(Event(.moveItem("i\(i - 2)", .before("i0"))))
      default: events.append(Event(.mark("m")))
      }
    }
    events.append(Event(.select(["no-such-item"])))
    try log.add(.batch(events))
    try log.add(.appendItems(["after"], section: "S", parent: nil))
    try log.close()
    return log.rawBytes
  }

  /// Two items whose ids are 1 MiB each, then 2,000 events naming them, most by
  /// back-reference (one byte each, as the encoder writes an id it wrote lately). Built by
  /// hand from the codec's layout: the encoder itself hashes each id it writes, so crafting
  /// through it costs what the test measures.
  static func megabyteIDs(_ path: String, events: Int) throws -> Int {
    var log = try CraftedLog(path: path, maxRawBytesPerFrame: 16 << 20)
    let ids = (0..<2).map { k in [UInt8](repeating: UInt8(ascii: "a") + UInt8(k), count: 1 << 20) }
    let r = RecordBytes()
    r.op(1).count(1).literal(Array("S".utf8))  // appendSections ["S"]: ring slot 0
    try log.addRecord(r.take())
    r.op(20).byte(1)  // configure multipleSelection: true
    try log.addRecord(r.take())
    r.op(6).byte(1).count(0).count(2)  // appendItems to section slot 0: slots 1 and 2
    for id in ids { r.byte(0).literal(id) }
    try log.addRecord(r.take())
    var base = 1
    for i in 0..<events {
      if EventCodecLayout.isResetPoint(log.eventCount + 1) {
        r.op(13).count(2)  // reloadItems: the ids again, after the codec's reset
        for id in ids { r.literal(id) }
        try log.addRecord(r.take())
        base = 0
      }
      let a = base + i % 2
      let b = base + (i + 1) % 2
      switch i % 4 {
      case 0: r.op(18).count(2).count(a).count(b)  // select [a, b]
      case 1: r.op(10).count(a).byte(1).count(b)  // moveItem a after b
      case 2: r.op(15).byte(1).count(a).count(1).byte(UInt8(ascii: "t"))  // update a title
      default:  // expand [a × 256]
        r.op(16).count(256)
        for _ in 0..<256 { r.count(a) }
      }
      try log.addRecord(r.take())
    }
    try log.close()
    return log.rawBytes
  }

  /// Ids an attacker can choose without knowing the per-process hash seed: 100,000 ids that
  /// share a 64-byte prefix, ids that differ only in length, canonically equivalent pairs
  /// (equal as Swift strings, distinct ids), and churn that keeps the table at the load
  /// where it is about to grow, deleting and re-inserting the same ids (one probe run
  /// hammered over and over, if deletion left tombstones).
  static func collidingIDs(_ path: String, ids: Int) throws -> Int {
    var log = try CraftedLog(path: path)
    let prefix = String(repeating: "p", count: 64)
    try log.add(.appendSections(["S", "T", "U"]))
    for block in stride(from: 0, to: ids, by: 100) {
      try log.add(
        .appendItems(
          (block..<min(ids, block + 100)).map { OutlineNode("\(prefix)\($0)") }, section: "S",
          parent: nil))
    }
    try log.add(
      .appendItems(
        (1...600).map { OutlineNode(String(repeating: "a", count: $0)) }, section: "T",
        parent: nil))
    try log.add(
      .appendItems(
        (0..<2_000).flatMap { [OutlineNode("\u{E9}\($0)"), OutlineNode("e\u{301}\($0)")] },
        section: "U", parent: nil))
    // Churn the shared-prefix ids in place: delete one, put back the one deleted before.
    for i in 0..<(ids / 5) {
      let id = "\(prefix)\((i * 37) % ids)"
      if i % 2 == 0 {
        try log.add(.deleteItems([id]))
      } else {
        let back = "\(prefix)\(((i - 1) * 37) % ids)"
        try log.add(.appendItems([OutlineNode(back)], section: "S", parent: nil))
        try log.add(.expand([id, back, "e\u{301}\(i % 2_000)"]))
      }
    }
    try log.close()
    return log.rawBytes
  }

  /// A valid start for the logs whose attack comes later: a section of 1,000 items.
  static func thousandItems(_ path: String) throws -> CraftedLog {
    var log = try CraftedLog(path: path)
    try log.add(.appendSections(["S"]))
    for i in 0..<1_000 {
      try log.add(.appendItems([OutlineNode("i\(i)")], section: "S", parent: nil))
    }
    return log
  }

  /// A valid session, then a checkpoint whose state claims one section of as many items as
  /// its 64 MiB of bytes could hold, followed by zeros (compressed, about 64 KiB on disk).
  static func hugeCheckpoint(_ path: String) throws -> Int {
    var log = try thousandItems(path)
    let size = 64 << 20
    var state: [UInt8] = [1, 0, 1, 1, UInt8(ascii: "S")]
    var claim = UInt64((size - 16) / 3)
    while claim >= 0x80 {
      state.append(UInt8(truncatingIfNeeded: claim) | 0x80)
      claim >>= 7
    }
    state.append(UInt8(claim))
    state += [UInt8](repeating: 0, count: size - state.count)
    try log.addCheckpoint(state: state)
    for i in 0..<1_000 { try log.add(.expand(["i\(i)"])) }
    try log.close()
    return log.rawBytes
  }

  /// A valid session whose middle holds a META gap frame claiming 2^62 lost events: event
  /// numbers after it are astronomically large, the events themselves few.
  static func hugeGap(_ path: String) throws -> Int {
    let log = try thousandItems(path)
    try log.close()
    try appendGapFrame(to: path, count: 1 << 62)
    return log.rawBytes
  }
}
