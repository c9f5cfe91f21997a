import Foundation
import ListTapeSamples
import Testing

@testable import ListTapeLog

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The writer's durability rules that the power-loss suite relies on, checked one by one:
/// the sync calls' fallback, which frames are sync points, and which damage the next writer
/// cuts (what a power loss leaves) or refuses (docs/log-format.md, "Power loss").
@Suite("Sync calls and sync points")
struct SyncPointTests {
  @Test("F_FULLFSYNC falls back to fsync only when unsupported, never after an I/O error")
  func fallback() {
    var fallbackCalls = 0
    func run(_ primary: Int32?) -> Int32? {
      FileSync.withFallback(
        { primary },
        fallback: {
          fallbackCalls += 1
          return nil
        })
    }
    #expect(run(nil) == nil)
    #expect(fallbackCalls == 0)
    for unsupported in [EINVAL, ENOTSUP, ENOTTY] {
      #expect(run(unsupported) == nil)
    }
    #expect(fallbackCalls == 3)
    #expect(run(EIO) == EIO)
    #expect(run(ENOSPC) == ENOSPC)
    #expect(fallbackCalls == 3)
  }

  /// The flags of every frame of the log at `path`, in order.
  func frameFlags(_ path: String) throws -> [(offset: Int, flags: UInt8)] {
    let fx = try Fixture(bytes: readBytes(path), records: [], checkpoints: [:])
    return fx.frames.map { ($0.offset, $0.header.flags) }
  }

  func options(_ policy: FsyncPolicy) -> LogWriterOptions {
    var o = LogWriterOptions()
    o.fsync = policy
    o.batchDelay = 60
    return o
  }

  @Test("under .always every frame is a sync point, under .never none")
  func alwaysAndNever() throws {
    let dir = TempDir()
    for (policy, expected) in [(FsyncPolicy.always, true), (.never, false)] {
      let path = dir.file("\(expected).log")
      let w = try LogWriter.open(path: path, options: options(policy))
      for i in 0..<5 {
        try w.append([UInt8(i), 7, 7, 7])
        try w.flush()
      }
      try w.close()
      let flags = try frameFlags(path)
      #expect(flags.count == 5)
      #expect(flags.allSatisfy { ($0.flags & Format.flagSyncPoint != 0) == expected })
    }
  }

  /// An interval log (no background sync during the test) with frames A B C, a sync, then D:
  /// A follows the synced header and D the sync, so both are sync points; B and C are not.
  func intervalLog(_ path: String) throws -> [(offset: Int, flags: UInt8)] {
    let w = try LogWriter.open(path: path, options: options(.interval(seconds: 3600)))
    for i in 0..<3 {
      try w.append([UInt8(i), 1, 2, 3, 4, 5])
      try w.flush()
    }
    try w.sync()
    try w.append([9, 9, 9])
    try w.flush()
    try w.close()
    let flags = try frameFlags(path)
    #expect(flags.map { $0.flags & Format.flagSyncPoint != 0 } == [true, false, false, true])
    return flags
  }

  /// The interval log of `intervalLog` with frame B garbled, and D cut off when
  /// `withoutLastSyncPoint`; returns its frames and bytes.
  func damagedIntervalLog(_ path: String, withoutLastSyncPoint: Bool) throws
    -> (frames: [(offset: Int, flags: UInt8)], bytes: [UInt8])
  {
    let frames = try intervalLog(path)
    var bytes = try readBytes(path)
    if withoutLastSyncPoint { bytes.removeSubrange(frames[3].offset...) }
    bytes[frames[1].offset + 40] ^= 0x20
    try writeBytes(bytes, to: path)
    #expect(try LogReader(path: path).stop?.kind == .damaged)
    return (frames, bytes)
  }

  @Test("damage followed only by frames written after the last sync is cut like a torn tail")
  func powerLossShapeIsCut() throws {
    let dir = TempDir()
    let path = dir.file("interval.log")
    // What follows B is C, written after the last sync.
    let (frames, bytes) = try damagedIntervalLog(path, withoutLastSyncPoint: true)
    let w = try LogWriter.open(path: path, options: options(.never))
    let recovery = try #require(w.recovery)
    #expect(recovery.offset == UInt64(frames[1].offset))
    #expect(recovery.framesFollowed)
    #expect("\(recovery)".contains("written after the last sync"))
    #expect(w.eventCount == 1)
    try w.append([42])
    try w.close()
    let reader = try LogReader(path: path)
    #expect(reader.eventCount == 2 && reader.stop == nil)
    let saved = try #require(recovery.savedTo)
    #expect(try readBytes(saved) == Array(bytes[frames[1].offset...]))
  }

  /// Every 2.0 writer marks sync points, so a torn first frame (nothing synced after the
  /// header, as a power loss leaves it under the interval policy) is cut; a 1.0 log may come
  /// from a writer that did not mark them, so there it is refused.
  @Test("a torn first frame is cut in a 2.0 log and refused in a 1.0 log", arguments: [1, 2])
  func tornFirstFrame(_ major: Int) throws {
    let dir = TempDir()
    let path = dir.file("first.log")
    var o = options(.interval(seconds: 3600))
    o.formatMajor = UInt16(major)
    let w = try LogWriter.open(path: path, options: o)
    for i in 0..<3 {
      try w.append([UInt8(i), 1, 2, 3, 4, 5])
      try w.flush()
    }
    try w.close()
    let frames = try frameFlags(path)
    var bytes = try readBytes(path)
    for i in frames[0].offset..<(frames[0].offset + 24) { bytes[i] = 0 }
    try writeBytes(bytes, to: path)
    #expect(try LogReader(path: path).stop?.kind == .damaged)
    if major == 1 {
      #expect { try LogWriter.open(path: path, options: options(.never)) } throws: { error in
        (error as? LogError)?.kind == .damaged
      }
      #expect(try readBytes(path) == bytes)
    } else {
      let again = try LogWriter.open(path: path, options: options(.never))
      let recovery = try #require(again.recovery)
      #expect(recovery.offset == UInt64(frames[0].offset))
      #expect(again.eventCount == 0)
      try again.close()
      let saved = try #require(recovery.savedTo)
      #expect(try readBytes(saved) == Array(bytes[frames[0].offset...]))
    }
  }

  @Test("damage before a sync point is refused: it was durable once")
  func damageBeforeASyncPointIsRefused() throws {
    let dir = TempDir()
    let path = dir.file("interval.log")
    let (_, bytes) = try damagedIntervalLog(path, withoutLastSyncPoint: false)
    #expect { try LogWriter.open(path: path, options: options(.never)) } throws: { error in
      (error as? LogError)?.kind == .damaged
    }
    #expect(try readBytes(path) == bytes)
  }

  @Test("a new log is linked into place with its whole header; the temporary name is gone")
  func creationIsAtomic() throws {
    let dir = TempDir()
    let path = dir.file("new.log")
    let w = try LogWriter.open(path: path, options: options(.interval(seconds: 1)))
    // The temporary name is gone once the log is in place.
    let names = try FileManager.default.contentsOfDirectory(atPath: dir.path)
    #expect(names == ["new.log"])
    #expect(try readBytes(path).count == Format.headerLength)
    try w.close()
    // A name that neither opens nor links is refused, not retried for ever.
    let dangling = dir.file("dangling.log")
    try FileManager.default.createSymbolicLink(
      atPath: dangling, withDestinationPath: dir.file("missing/target.log"))
    #expect { try LogWriter.open(path: dangling, options: options(.never)) } throws: { error in
      (error as? LogError)?.kind == .io
    }
  }
}
