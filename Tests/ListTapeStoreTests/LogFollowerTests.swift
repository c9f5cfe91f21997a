import Foundation
import ListTapeLog
import ListTapeModel
import ListTapeRead
import ListTapeSamples
import Testing

@testable import ListTapeStore

/// Issue 30.4: `LogFollower` reads a log while a recorder appends to it; each transition
/// of its lifecycle (docs/cli.md, "Following a log"), driven one frame at a time.
@Suite struct LogFollowerTests {
  /// A recorder that cuts a frame per event and restarts its dictionary often.
  static func recorder(_ path: String) throws -> Recorder {
    var options = Recorder.options(.never)
    options.maxEventsPerFrame = 1
    options.minCheckpointSpacingBytes = 0
    options.checkpointBytesRatio = 2
    let recorder = try Recorder.open(path: path, options: options)
    recorder.restartSlack = 8
    return recorder
  }

  /// Every event of the finished log at `path`.
  static func events(_ path: String) throws -> [Event] {
    var all: [Event] = []
    try Timeline(path: path).forEachEvent { _, e in
      all.append(e)
      return true
    }
    return all
  }

  /// A new log of `count` sections, each event in a frame of its own.
  static func sections(_ count: Int) throws -> String {
    let path = temporaryPath()
    let recorder = try recorder(path)
    for i in 0..<count { _ = try recorder.record(section("s\(i)")) }
    try recorder.close()
    return path
  }

  static func remove(_ path: String) {
    try? FileManager.default.removeItem(atPath: (path as NSString).deletingLastPathComponent)
  }

  /// Appends `bytes` to the file at `path`.
  static func append(_ bytes: some Collection<UInt8>, to path: String) throws {
    let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
    defer { try? handle.close() }
    try handle.seekToEnd()
    try handle.write(contentsOf: Data(bytes))
  }

  /// A finished log cut back to its first `keep` bytes, and the bytes cut.
  static func split(_ path: String, keep: Int) throws -> [UInt8] {
    let all = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))
    try Data(all[..<keep]).write(to: URL(fileURLWithPath: path))
    return Array(all[keep...])
  }

  /// The event frame holding event `n`: where it starts and ends (a restart's frames may
  /// follow it).
  static func frame(ofEvent n: Int, in path: String) throws -> Range<Int> {
    var found = 0..<0
    try LogReader(path: path).forEachFrame(from: UInt64(n), through: UInt64(n)) { view in
      guard view.kind == .events else { return true }
      found = Int(view.offset)..<Int(view.offset + view.length)
      return false
    }
    return found
  }

  static func end(ofEvent n: Int, in path: String) throws -> Int {
    try frame(ofEvent: n, in: path).upperBound
  }

  @Test func everyEventOnceAcrossRestartsCheckpointsAndAReopen() throws {
    let path = Self.temporaryPath()
    defer { Self.remove(path) }
    var recorder = try Self.recorder(path)
    let timeline = try Timeline(path: path)
    let follower = LogFollower(timeline)
    var seen: [Event] = []
    func look() throws {
      #expect(try follower.poll() == .following)
      try follower.forEachNewEvent { n, e in
        #expect(n == seen.count + 1)
        seen.append(e)
      }
    }
    var recorded = 0
    try SampleSession.generate(events: 900, seed: 7, maxItems: 40) { e in
      _ = try recorder.record(e)
      recorded += 1
      // A recorder that closes and a second one that appends to the same log.
      if recorded == 450 {
        try recorder.close()
        try look()
        recorder = try Self.recorder(path)
      }
      // After each event, the frame, and the dictionary and checkpoint frames of a restart
      // when one came: the follower reads between them.
      try look()
    }
    try recorder.close()
    try look()
    let reader = try LogReader(path: path)
    #expect(reader.restartSeq(after: 0) != nil, "the session restarted its dictionary")
    #expect(seen == (try Self.events(path)))
    #expect(seen.count == 900)
  }

  @Test func aFrameBeingWrittenIsNotYet() throws {
    let path = try Self.sections(3)
    defer { Self.remove(path) }
    let third = try Self.frame(ofEvent: 3, in: path)
    let tail = Array(try Self.split(path, keep: third.lowerBound).prefix(third.count))
    let follower = LogFollower(try Timeline(path: path))
    var seen: [Int] = []
    try follower.forEachNewEvent { n, _ in seen.append(n) }
    #expect(seen == [1, 2])
    // The third frame arrives in pieces: its header cut short, a header alone, all but
    // the payload's last byte.
    let prefix = third.lowerBound
    for cut in [10, 36, tail.count - 1] {
      try Self.append(tail[..<cut], to: path)
      #expect(try follower.poll() == .following)
      try follower.forEachNewEvent { n, _ in seen.append(n) }
      #expect(seen == [1, 2])
      #expect(follower.timeline.reader.stop?.kind == .tornTail)
      _ = try Self.split(path, keep: prefix)
    }
    try Self.append(tail, to: path)
    #expect(try follower.poll() == .following)
    try follower.forEachNewEvent { n, _ in seen.append(n) }
    #expect(seen == [1, 2, 3])
    // A writer killed mid-frame, and the next one, which cuts that tail and writes there.
    try Self.append(tail[..<20], to: path)
    #expect(try follower.poll() == .following)
    let next = try Self.recorder(path)
    #expect(next.recovery != nil)
    _ = try next.record(Self.section("s3"))
    try next.close()
    #expect(try follower.poll() == .following)
    try follower.forEachNewEvent { n, _ in seen.append(n) }
    #expect(seen == [1, 2, 3, 4])
    #expect(try Self.events(path).last == Self.section("s3"))
  }

  @Test func damageIsReportedOnlyWhenTwoReadsAgree() throws {
    let path = try Self.sections(4)
    defer { Self.remove(path) }
    let at = try Self.end(ofEvent: 1, in: path)
    let rest = try Self.split(path, keep: at)
    let follower = LogFollower(try Timeline(path: path))
    // The frame after event 1's (a recovery point's, or event 2's) with a payload byte
    // wrong, and frames of this log after it.
    var bad = rest
    bad[40] ^= 0xFF
    try Self.append(bad, to: path)
    #expect(try follower.poll() == .suspect(offset: UInt64(at)))
    // The byte as written: a read that caught it mid-write is forgotten.
    _ = try Self.split(path, keep: at)
    try Self.append(rest, to: path)
    #expect(try follower.poll() == .following)
    var seen: [Int] = []
    try follower.forEachNewEvent { n, _ in seen.append(n) }
    #expect(seen == [1, 2, 3, 4])

    _ = try Self.split(path, keep: at)
    try Self.append(bad, to: path)
    let damaged = LogFollower(try Timeline(path: path))
    #expect(damaged.state == .suspect(offset: UInt64(at)))
    guard case .ended(.damaged(let damage)) = try damaged.poll() else {
      Issue.record("not damaged: \(damaged.state)")
      return
    }
    #expect(damage.offset == UInt64(at))
    #expect(damage.kind == .damaged)
    #expect(try damaged.poll() == .ended(.damaged(damage)), "an end is for good")
  }

  @Test func aRemovedLogEndsAfterItsLastFrames() throws {
    let path = Self.temporaryPath()
    defer { Self.remove(path) }
    let recorder = try Self.recorder(path)
    _ = try recorder.record(Self.section("a"))
    let follower = LogFollower(try Timeline(path: path))
    _ = try recorder.record(Self.section("b"))
    try recorder.close()
    try FileManager.default.removeItem(atPath: path)
    #expect(try follower.poll() == .ended(.removed))
    var seen: [Int] = []
    try follower.forEachNewEvent { n, _ in seen.append(n) }
    #expect(seen == [1, 2])
    #expect(try follower.poll() == .ended(.removed))
  }

  @Test func aReplacedOrRewrittenLogEnds() throws {
    let path = try Self.sections(3)
    defer { Self.remove(path) }
    let other = path + ".other"
    try FileManager.default.copyItem(atPath: path, toPath: other)

    let renamedOver = LogFollower(try Timeline(path: path))
    #expect(rename(other, path) == 0)
    #expect(try renamedOver.poll() == .ended(.replaced))

    // Cut in place below what was read (a copy written over it goes through that).
    let rewritten = LogFollower(try Timeline(path: path))
    _ = try Self.split(path, keep: try Self.end(ofEvent: 1, in: path))
    #expect(try rewritten.poll() == .ended(.replaced))
  }

  /// Another log written over this one in place, longer than what was read (a copy
  /// between two polls: the cut below what was read is never seen): the same file, other
  /// bytes from its header on.
  @Test func aLogOverwrittenInPlaceByALongerOneEnds() throws {
    let path = try Self.sections(3)
    defer { Self.remove(path) }
    let longer = try Self.sections(12)
    defer { Self.remove(longer) }
    let follower = LogFollower(try Timeline(path: path))
    #expect(try follower.poll() == .following)
    let bytes = try Data(contentsOf: URL(fileURLWithPath: longer))
    let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
    try handle.write(contentsOf: bytes)
    try handle.close()
    #expect(try follower.poll() == .ended(.replaced))
    #expect(follower.timeline.eventCount == 3, "nothing of the other log is read as this one's")
  }

  static func section(_ id: String) -> Event {
    Event(.appendSections([id]), time: 1_000)
  }

  static func temporaryPath() -> String { temporaryLogPath("follow") }
}
