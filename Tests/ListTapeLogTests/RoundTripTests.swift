import Foundation
import ListTapeSamples
import Testing

@testable import ListTapeLog

@Suite("Writer and reader round trips")
struct RoundTripTests {
  @Test("records and checkpoints read back across frames, reopen and append")
  func roundTripAcrossReopen() throws {
    let dir = TempDir()
    let path = dir.file("a.log")
    var options = LogWriterOptions()
    options.fsync = .never
    options.maxEventsPerFrame = 50
    var rng = SplitMix64(seed: 1)
    var records: [[UInt8]] = []
    for session in 0..<3 {
      let w = try LogWriter.open(path: path, options: options)
      #expect(w.recovery == nil)
      #expect(w.eventCount == UInt64(records.count))
      for _ in 0..<(400 + session * 37) {
        let r = makeRecord(&rng)
        records.append(r)
        try w.append(r)
      }
      try w.append([])  // an empty record is a record
      records.append([])
      try w.appendCheckpoint([UInt8(session), 1, 2, 3])
      try w.close()
    }
    let reader = try LogReader(path: path)
    #expect(reader.stop == nil)
    #expect(reader.eventCount == UInt64(records.count))
    let fx = try Fixture(bytes: readBytes(path), records: records, checkpoints: [:])
    #expect(try fx.replayMatches(reader) == records.count)
    let cp = try #require(try reader.checkpoint(atOrBefore: UInt64(records.count)))
    #expect(cp.seq == UInt64(records.count))
    #expect(cp.state == [2, 1, 2, 3])
    #expect(try reader.checkpoint(atOrBefore: 10) == nil)
    let report = try reader.verify()
    #expect(report.status == .intact)
    #expect(report.checkpointFrames == 3)
    #expect(report.events == UInt64(records.count))
    // A range in the middle.
    var seen: [UInt64] = []
    try reader.forEachRecord(from: 777, through: 781) { seq, _ in seen.append(seq) }
    #expect(seen == [777, 778, 779, 780, 781])
  }

  @Test("seek through a checkpoint equals full replay at random event numbers")
  func seekEqualsReplay() throws {
    let dir = TempDir()
    let path = dir.file("seek.log")
    var options = LogWriterOptions()
    options.fsync = .never
    options.maxEventsPerFrame = 64
    options.maxEventsBetweenCheckpoints = 500
    options.minCheckpointSpacingBytes = 0
    let w = try LogWriter.open(path: path, options: options)
    var rng = SplitMix64(seed: 2)
    var folds: [UInt64] = [0]
    for _ in 0..<20_000 {
      let r = makeRecord(&rng)
      try w.append(r)
      folds.append(r.withUnsafeBytes { fold(folds[folds.count - 1], $0) })
      if w.checkpointDue {
        let h = folds[folds.count - 1]
        try w.appendCheckpoint(withUnsafeBytes(of: h.littleEndian) { Array($0) })
      }
    }
    try w.close()
    let reader = try LogReader(path: path)
    #expect(reader.checkpointSeqs.count >= 20)
    var pick = SplitMix64(seed: 3)
    for _ in 0..<300 {
      let n = UInt64.random(in: 0...20_000, using: &pick)
      var h: UInt64 = 0
      var from: UInt64 = 1
      if let cp = try reader.checkpoint(atOrBefore: n) {
        #expect(cp.seq <= n && n - cp.seq < 1200)
        h = cp.state.withUnsafeBytes { $0.loadUnaligned(as: UInt64.self) }
        from = cp.seq + 1
      }
      try reader.forEachRecord(from: from, through: n) { _, r in h = fold(h, r) }
      #expect(h == folds[Int(n)], "seek to \(n)")
    }
  }

  @Test("a big checkpoint and a big record round-trip")
  func bigBlobs() throws {
    let dir = TempDir()
    let path = dir.file("big.log")
    var options = LogWriterOptions()
    options.fsync = .never
    let w = try LogWriter.open(path: path, options: options)
    var rng = SplitMix64(seed: 4)
    let big = (0..<3_000_000).map { i in UInt8(truncatingIfNeeded: i % 251 == 0 ? rng.next() : 7) }
    // Int spelt out: left to itself, the type checker picks Int128 here (macOS 15).
    let record = (0..<200_000).map { (i: Int) in UInt8(truncatingIfNeeded: i &* 31) }
    try w.append([1])
    try w.append(record)
    try w.appendCheckpoint(big)
    try w.append([2])
    try w.close()
    let reader = try LogReader(path: path)
    #expect(reader.eventCount == 3)
    var got: [[UInt8]] = []
    try reader.forEachRecord { _, r in got.append(Array(r)) }
    #expect(got == [[1], record, [2]])
    let cp = try #require(try reader.checkpoint(atOrBefore: 3))
    #expect(cp.seq == 2 && cp.state == big)
  }

  @Test("the background flusher writes pending events after the batch delay")
  func batchDelayFlush() throws {
    let dir = TempDir()
    let path = dir.file("delay.log")
    var options = LogWriterOptions()
    options.batchDelay = 0.02
    options.fsync = .interval(seconds: 0.05)
    let w = try LogWriter.open(path: path, options: options)
    for i in 0..<5 { try w.append([UInt8(i)]) }
    let reader = try LogReader(path: path)
    var waited = 0
    while reader.eventCount < 5 && waited < 200 {
      usleep(10_000)
      waited += 1
      try reader.refresh()
    }
    #expect(reader.eventCount == 5)
    #expect(reader.isBeingWritten)
    try w.close()
    #expect(!reader.isBeingWritten)
  }

  #if os(Linux)
  /// A process spawned while the writer is open keeps a copy of its descriptor (here on
  /// purpose, as every spawn does until its exec): close must still release the lock.
  @Test("close releases the lock even while a child holds a copy of the descriptor")
  func closeUnlocksEveryCopy() throws {
    let dir = TempDir()
    let path = dir.file("shared.log")
    let w = try LogWriter.open(path: path)
    try w.append([1])
    // The writer's descriptor: the one open on the log's inode (it was created under a
    // temporary name, so /proc's link text does not name the log).
    var logStat = stat()
    #expect(stat(path, &logStat) == 0)
    let fds = try FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")
    let fd = try #require(
      fds.compactMap { Int32($0) }.first { fd in
        var s = stat()
        return fstat(fd, &s) == 0 && s.st_ino == logStat.st_ino && s.st_dev == logStat.st_dev
      })
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    posix_spawn_file_actions_adddup2(&actions, fd, 9)
    let words: [String] = ["/bin/sleep", "60"]
    let argv = words.map { strdup($0) } + [nil]
    defer { for p in argv { free(p) } }
    var pid: pid_t = 0
    #expect(posix_spawn(&pid, "/bin/sleep", &actions, nil, argv, environ) == 0)
    defer {
      kill(pid, SIGKILL)
      var status: Int32 = 0
      waitpid(pid, &status, 0)
    }
    let reader = try LogReader(path: path)
    #expect(reader.isBeingWritten)
    try w.close()
    #expect(!reader.isBeingWritten)
    let again = try LogWriter.open(path: path)
    try again.close()
  }
  #endif

  @Test("a second writer is refused at once; the lock returns on close")
  func secondWriterRefused() throws {
    let dir = TempDir()
    let path = dir.file("lock.log")
    let w = try LogWriter.open(path: path)
    let start = Date()
    #expect {
      try LogWriter.open(path: path)
    } throws: { e in
      (e as? LogError)?.kind == .locked
        && "\(e)".contains("log is being recorded by another process")
    }
    // Refused, not queued behind the lock (which would never return here): the bound only
    // catches a blocking wait, with room for a loaded machine.
    #expect(Date().timeIntervalSince(start) < 30)
    try w.close()
    #expect(throws: LogError.self) { try w.append([1]) }
    let again = try LogWriter.open(path: path)
    try again.close()
  }

  @Test("many threads append; every record is read back exactly once")
  func concurrentAppends() throws {
    let dir = TempDir()
    let path = dir.file("threads.log")
    var options = LogWriterOptions()
    options.fsync = .never
    options.maxEventsPerFrame = 100
    let w = try LogWriter.open(path: path, options: options)
    DispatchQueue.concurrentPerform(iterations: 4) { t in
      for i in 0..<2000 {
        try? w.append([UInt8(t), UInt8(i & 0xFF), UInt8(i >> 8)])
      }
    }
    try w.close()
    let reader = try LogReader(path: path)
    var seen = Set<[UInt8]>()
    try reader.forEachRecord { _, r in seen.insert(Array(r)) }
    #expect(seen.count == 8000 && reader.eventCount == 8000)
  }

  @Test("checkpointDue follows the event and byte rules")
  func checkpointDue() throws {
    let dir = TempDir()
    var options = LogWriterOptions()
    options.fsync = .never
    options.maxEventsBetweenCheckpoints = 100
    options.minCheckpointSpacingBytes = 1 << 30
    let w = try LogWriter.open(path: dir.file("due.log"), options: options)
    #expect(!w.checkpointDue)
    for _ in 0..<99 { try w.append([1, 2]) }
    #expect(!w.checkpointDue)
    try w.append([3])
    #expect(w.checkpointDue)
    try w.appendCheckpoint([9])
    #expect(!w.checkpointDue)
    try w.close()
  }

  @Test("hostile headers are refused with clear errors")
  func hostileHeaders() throws {
    let dir = TempDir()
    let fx = try Fixture.make(
      seed: 5, count: 50, perFrame: 10, checkpointsAt: [], dir: dir)
    func kind(_ b: [UInt8]) -> LogError.Kind? {
      do {
        _ = try LogReader(bytes: b)
        return nil
      } catch { return error.kind }
    }
    #expect(kind([]) == .incompleteHeader)
    #expect(kind(Array(fx.bytes[0..<40])) == .incompleteHeader)
    #expect(
      kind(Array("hello, this is not a log at all, no no no no no no no no no".utf8)) == .notALog)
    func reheader(_ edit: (inout [UInt8]) -> Void) -> [UInt8] {
      var b = fx.bytes
      edit(&b)
      let crc = b.withUnsafeBytes { crc32Bytes(0, UnsafeRawBufferPointer(rebasing: $0[0..<60])) }
      b.withUnsafeMutableBytes { $0.storeLE(crc, at: 60) }
      return b
    }
    #expect(kind(reheader { $0[8] = 3 }) == .unsupportedVersion)
    #expect(kind(reheader { $0[8] = 0 }) == .unsupportedVersion)
    #expect(kind(reheader { $0[9] = 1 }) == .unsupportedVersion)
    // Major 2 reads (its frames are the same); its event payloads are not 1.0 records.
    let two = try LogReader(bytes: reheader { $0[8] = 2 })
    #expect(two.eventCount == 50 && two.formatVersion.major == 2)
    #expect(throws: LogError.self) { try two.forEachRecord { _, _ in } }
    #expect(kind(reheader { $0[48] = 9 }) == .unsupportedVersion)
    #expect(
      kind(reheader { $0.withUnsafeMutableBytes { $0.storeLE(UInt32.max, at: 12) } }) == .notALog)
    #expect(
      kind(reheader { $0.withUnsafeMutableBytes { $0.storeLE(UInt32(4096), at: 12) } })
        == .incompleteHeader)
    let minor = try LogReader(bytes: reheader { $0[10] = 7 })
    #expect(minor.eventCount == 50)
  }
}
