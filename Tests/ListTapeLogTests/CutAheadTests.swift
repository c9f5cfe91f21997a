import Foundation
import ListTapeSamples
import Testing

@testable import ListTapeLog

/// `cutsAhead`: full batches are framed and written on the flusher thread while appends
/// fill the next one. The frames are those a writer cutting in place writes, a batch handed
/// ahead is written without another call, and a failed write fails the next call with its
/// events counted as unwritten.
@Suite struct CutAheadTests {
  static func options(ahead: Bool) -> LogWriterOptions {
    var o = LogWriterOptions()
    o.fsync = .never
    o.batchDelay = 3_600  // no timed cuts: only full batches, flushes and frames cut
    o.maxEventsPerFrame = 64
    o.cutsAhead = ahead
    return o
  }

  /// Frames as (kind, first event, events) and every record, in order.
  static func frames(_ path: String) throws -> (frames: [String], records: [[UInt8]]) {
    var frames: [String] = []
    let reader = try LogReader(path: path)
    try reader.forEachFrame(from: 1, through: reader.eventCount, checkpoints: true) { view in
      frames.append("\(view.kind) \(view.firstSeq) \(view.eventCount)")
      return true
    }
    var records: [[UInt8]] = []
    try reader.forEachRecord { _, r in records.append(Array(r)) }
    return (frames, records)
  }

  @Test func theFramesAreThoseOfAWriterCuttingInPlace() throws {
    let dir = TempDir()
    var handed = 0
    var logs: [(frames: [String], records: [[UInt8]])] = []
    for ahead in [false, true] {
      let path = dir.file(ahead ? "ahead.log" : "inplace.log")
      let w = try LogWriter.open(path: path, options: Self.options(ahead: ahead))
      var rng = SplitMix64(seed: 7)
      for n in 1...5_000 {
        try w.append(makeRecord(&rng))
        if n % 1_000 == 0 { try w.appendCheckpoint(Array("state \(n)".utf8)) }
        if n == 2_500 { try w.flush() }
        if n == 4_321 { try w.sync() }
      }
      if ahead { handed = w.batchesCutAhead }
      try w.close()
      logs.append(try Self.frames(path))
    }
    #expect(handed > 50)
    #expect(logs[0].records.count == 5_000)
    #expect(logs[1].frames == logs[0].frames)
    #expect(logs[1].records == logs[0].records)
  }

  @Test func aBatchHandedAheadIsWrittenWithoutAnotherCall() throws {
    let dir = TempDir()
    let path = dir.file("a.log")
    let w = try LogWriter.open(path: path, options: Self.options(ahead: true))
    for i in 0..<64 { try w.append([UInt8(i)]) }
    #expect(w.batchesCutAhead == 1)
    #expect(eventually { w.unwrittenEvents == 0 })
    // Read while the writer is open: the frame is in the file.
    #expect(try LogReader(path: path).eventCount == 64)
    try w.close()
  }

  @Test func aFailedWriteAheadFailsTheNextCallAndItsEventsStayUnwritten() throws {
    let dir = TempDir()
    let files = ControlledFiles()
    let path = dir.file("a.log")
    let w = try LogWriter.open(path: path, options: Self.options(ahead: true), files: files)
    for i in 0..<10 { try w.append([UInt8(i)]) }
    try w.flush()
    files.failWrites(with: ENOSPC)
    var appended = 0
    var thrown: LogError?
    // The second full batch waits for the first one's write, and throws its failure.
    while appended < 1_000 {
      do {
        try w.append([1, 2, 3])
        appended += 1
      } catch {
        thrown = error
        break
      }
    }
    let error = try #require(thrown)
    #expect(appended >= 64 && appended <= 128)
    #expect(error.message.contains("write failed"))
    // Every event since the flush is unwritten (the call that threw took its own, as a
    // cut in place does: `eventCount` tells).
    let taken = Int(w.eventCount) - 10
    #expect(taken == appended || taken == appended + 1)
    #expect(w.unwrittenEvents == taken)
    guard case .failed = w.state else {
      Issue.record("state \(w.state)")
      return
    }
    #expect(throws: LogError.self) { try w.close() }
    #expect(try LogReader(path: path).eventCount == 10)
  }
}
