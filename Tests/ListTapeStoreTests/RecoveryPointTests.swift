import Foundation
import ListTapeLog
import ListTapeModel
import ListTapeRead
import ListTapeSamples
import Testing

@testable import ListTapeStore

/// Issue 23.3, damage costs a bounded stretch: a 2.0 log's parity frames rebuild a damaged
/// frame exactly, and its recovery points (a dictionary restart and its checkpoint) make the
/// states exact again after damage parity cannot mend (docs/log-format.md, "Damage and
/// recovery points").
@Suite struct RecoveryPointTests {
  /// A long UUID session recorded with small parity groups and frequent recovery points
  /// (no restarts for dead entries, so every restart is a forced recovery point).
  struct Recorded {
    var path: String
    var events: [Event] = []
    var directory: String { (path as NSString).deletingLastPathComponent }

    init(_ count: Int = 40_000, seed: UInt64 = 31, ratio: UInt64 = 3) throws {
      path = temporaryLogPath()
      var options = Recorder.options(.never)
      options.maxEventsPerFrame = 300
      options.maxEventsBetweenCheckpoints = 1_000_000
      options.minCheckpointSpacingBytes = 16 << 10
      var parity = ParityOptions()
      parity.width = 8 << 10
      parity.blockSize = 512
      parity.groupWidths = 8
      options.parity = parity
      options.recoveryPointRatio = ratio
      let recorder = try Recorder.open(path: path, options: options)
      recorder.restartSlack = 1 << 30
      var events: [Event] = []
      try SampleSession.generate(
        events: count, seed: seed, maxItems: 900, opening: .outline(items: 600, shape: .uuid)
      ) { e in
        _ = try recorder.record(e)
        events.append(e)
      }
      try recorder.close()
      self.events = events
    }

    func remove() { try? FileManager.default.removeItem(atPath: directory) }

    /// The offset and length of the event frame holding event `n`.
    func frame(holding n: Int) throws -> (offset: Int, length: Int) {
      var found = (0, 0)
      try LogReader(path: path).forEachFrame(from: UInt64(n), through: UInt64(n)) { view in
        found = (Int(view.offset), Int(view.length))
        return false
      }
      return found
    }
  }

  /// XORs `length` bytes of the file at `offset`.
  static func damage(_ path: String, at offset: Int, length: Int) throws {
    var bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))
    for i in offset..<(offset + length) { bytes[i] ^= 0x5A }
    try Data(bytes).write(to: URL(fileURLWithPath: path))
  }

  /// Timeline without an index file: its seeks start from the log's own checkpoints (an
  /// index built by folding across a gap is the seek layer's concern).
  static func open(_ path: String) throws -> Timeline {
    let t = try Timeline(path: path)
    t.buildsIndex = false
    return t
  }

  /// The test, the hard case: a whole event frame in the middle of the log is lost,
  /// one that defines ids later events name. Salvage rebuilds it from parity, so every event
  /// and state equals the original's; with the parity frames destroyed the same damage
  /// costs a gap and undecodable events after it.
  @Test func aLostFrameThatDefinedLiveIdsIsRebuiltFromParity() throws {
    let s = try Recorded()
    defer { s.remove() }
    let original = try Self.open(s.path)
    let middle = s.events.count / 2
    let (offset, length) = try s.frame(holding: middle)
    #expect(length < 8 << 10 - 512)
    let pristine = try [UInt8](Data(contentsOf: URL(fileURLWithPath: s.path)))
    let parity = try parityFrames(s.path)
    #expect(parity.count >= 4)
    try Self.damage(s.path, at: offset, length: length)

    let out = s.directory + "/salvaged.ltape"
    let report = try Timeline.salvage(s.path, to: out)
    #expect(report.gaps.isEmpty && report.unrepaired.isEmpty && !report.repaired.isEmpty)
    let salvaged = try Self.open(out)
    #expect(salvaged.eventCount == s.events.count)
    var read: [Event] = []
    try salvaged.forEachEvent { _, e in
      read.append(e)
      return true
    }
    #expect(read == s.events)
    for n in stride(from: middle - 1_000, through: s.events.count, by: 1_999) {
      #expect(try salvaged.state(at: n) == original.state(at: n), "event \(n)")
    }

    // Without parity the same damage loses the frame and, with it, ids that later events name.
    var bytes = pristine
    for p in parity {
      for i in (p + 36)..<(p + 40) { bytes[i] ^= 0xFF }
    }
    for i in offset..<(offset + length) { bytes[i] ^= 0x5A }
    let bare = s.directory + "/bare.ltape"
    try Data(bytes).write(to: URL(fileURLWithPath: bare))
    let lost = try Timeline.salvage(bare, to: bare + "-salvaged")
    #expect(!lost.gaps.isEmpty)
    let withGap = try Self.open(bare + "-salvaged")
    try withGap.forEachEvent { _, _ in true }
    #expect(withGap.skippedAfterGaps > 0)
  }

  /// Damage parity cannot mend (a burst wider than the parity width): a gap, and the states
  /// from the first recovery point after it equal the original log's.
  @Test func statesAreExactAgainFromTheNextRecoveryPoint() throws {
    let s = try Recorded()
    defer { s.remove() }
    let original = try Self.open(s.path)
    let restarts = try LogReader(path: s.path).dictionaryFrameCount
    #expect(restarts >= 4)
    let (offset, _) = try s.frame(holding: s.events.count / 2)
    try Self.damage(s.path, at: offset, length: 3 * (8 << 10))

    let out = s.directory + "/salvaged.ltape"
    let report = try Timeline.salvage(s.path, to: out)
    #expect(!report.unrepaired.isEmpty)
    let gap = try #require(report.gaps.first)
    let salvaged = try Self.open(out)
    let reader = try LogReader(path: out)
    let gapEnd = gap.firstEvent + gap.count - 1
    let point = try #require(reader.recoveryPoint(atOrAfter: gapEnd))
    #expect(reader.isRecoveryPoint(checkpointSeq: point.seq))
    #expect(reader.exactFrom(through: UInt64(s.events.count)) == point.seq)
    #expect(reader.exactFrom(through: point.seq - 1) == nil)
    #expect(reader.exactFrom(through: gap.firstEvent - 1) == gap.firstEvent - 1)
    let from = Int(point.seq)
    #expect(from < s.events.count)
    for n in [from, from + 1] + Array(stride(from: from + 500, through: s.events.count, by: 1_499))
      + [s.events.count]
    {
      #expect(try salvaged.state(at: n) == original.state(at: n), "event \(n)")
    }
    // The hard case: events between the gap and the recovery point name lost ids.
    try salvaged.forEachEvent(from: Int(gapEnd) + 1, through: from) { _, _ in true }
    #expect(salvaged.skippedAfterGaps > 0)
  }

  /// Recorders space recovery points by their cost: the frames between two restarts are at
  /// least `recoveryPointRatio` × the last restart's size, so they cost at most about
  /// 1 / ratio of the log, and damage is followed by one within that many bytes.
  @Test func recoveryPointsAreSpacedByTheirCost() throws {
    let s = try Recorded(ratio: 5)
    defer { s.remove() }
    let reader = try LogReader(path: s.path)
    var restarts: [(offset: UInt64, seq: UInt64)] = []
    var offset = reader.firstFrameOffset
    var cost: [UInt64] = []
    var previous: (type: FrameView.Kind?, length: UInt64) = (nil, 0)
    while offset < reader.validEnd {
      let view = try reader.frameSummary(at: offset)
      if view.kind == .dictionary {
        restarts.append((offset, view.firstSeq))
        cost.append(view.length)
      } else if view.kind == .checkpoint, previous.type == .dictionary {
        cost[cost.count - 1] += view.length
      }
      previous = (view.kind, view.length)
      offset += view.length
    }
    #expect(restarts.count >= 3)
    for i in 1..<restarts.count {
      let spacing = restarts[i].offset - restarts[i - 1].offset
      #expect(spacing >= 5 * cost[i - 1], "restart \(i)")
      #expect(spacing <= 5 * cost[i - 1] + 64 << 10, "restart \(i)")
      #expect(reader.isRecoveryPoint(checkpointSeq: restarts[i].seq - 1))
    }
  }
}

/// Offsets of the PARITY frames of the log at `path`.
private func parityFrames(_ path: String) throws -> [Int] {
  let reader = try LogReader(path: path)
  var out: [Int] = []
  var offset = reader.firstFrameOffset
  while offset < reader.validEnd {
    let view = try reader.frameSummary(at: offset)
    if view.isParity { out.append(Int(offset)) }
    offset += view.length
  }
  return out
}

/// The real file system, with protection classes kept in memory and the renames, directory
/// syncs and classes set recorded in order.
final class WatchedFiles: FileLayer, @unchecked Sendable {
  private let lock = NSLock()
  private var classes: [String: ProtectionClass] = [:]
  private var events: [String] = []

  init(_ classes: [String: ProtectionClass]) { self.classes = classes }

  var log: [String] { lock.withLock { events } }

  private func note(_ s: String) { lock.withLock { events.append(s) } }

  func open(_ path: String, _ flags: Int32) -> Posix.Opened { SystemFiles.shared.open(path, flags) }
  func write(_ fd: Int32, _ bytes: UnsafeRawBufferPointer) -> Int32? {
    SystemFiles.shared.write(fd, bytes)
  }
  func truncate(_ fd: Int32, _ length: UInt64) -> Int32? {
    SystemFiles.shared.truncate(fd, length)
  }
  func sync(_ fd: Int32, _ kind: SyncKind) -> Int32? { SystemFiles.shared.sync(fd, kind) }
  func syncDirectory(of path: String) -> Int32? {
    note("syncDirectory \(path)")
    return SystemFiles.shared.syncDirectory(of: path)
  }
  func link(_ from: String, _ to: String) -> Int32? { SystemFiles.shared.link(from, to) }
  func unlink(_ path: String) -> Int32? { SystemFiles.shared.unlink(path) }
  func rename(_ from: String, _ to: String) -> Int32? {
    note("rename \(to)")
    return SystemFiles.shared.rename(from, to)
  }
  func close(_ fd: Int32) -> Int32? { SystemFiles.shared.close(fd) }
  func protectionClass(of path: String) -> ProtectionClass? { lock.withLock { classes[path] } }
  func setProtectionClass(_ protection: ProtectionClass, of path: String) {
    note("protect \(path)")
    lock.withLock { classes[path] = protection }
  }
}

@Suite struct UpgradeDurabilityTests {
  /// Issue 23.7: `upgrade` syncs the directory after renaming its output into place, and
  /// the output is created with the source log's protection class.
  @Test func upgradeSyncsTheDirectoryAndKeepsTheClass() throws {
    let path = temporaryLogPath()
    defer {
      try? FileManager.default.removeItem(atPath: (path as NSString).deletingLastPathComponent)
    }
    var options = Recorder.options(.never)
    options.formatMajor = 1
    let old = try Recorder.open(path: path, options: options)
    try SampleSession.generate(events: 500, seed: 3, maxItems: 100) { _ = try old.record($0) }
    try old.close()
    let files = WatchedFiles([path: .complete])
    let output = path + "-2.ltape"
    _ = try Timeline(path: path).upgrade(to: output, files: files)
    let log = files.log
    let rename = try #require(log.firstIndex(of: "rename \(output)"))
    #expect(log[(rename + 1)...].contains("syncDirectory \(output)"))
    let created = try #require(log.first { $0.hasPrefix("protect \(output).upgrade-") })
    #expect(files.protectionClass(of: String(created.dropFirst("protect ".count))) == .complete)
    #expect(try Timeline(path: output).eventCount == 500)
  }
}
