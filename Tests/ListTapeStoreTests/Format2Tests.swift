import Foundation
import ListTapeRead
import ListTapeSamples
import Testing

@testable import ListTapeInvestigate
@testable import ListTapeLog
@testable import ListTapeModel
@testable import ListTapeStore

/// A recorded 2.0 session: the log, its events, and the states of a direct fold.
struct RecordedSession {
  var path: String
  var events: [Event] = []
  /// The state after every `every`th event (index i: after i × every events).
  var states: [ListState] = [ListState()]
  var every: Int
  var final = ListState()
  var restarts = 0

  /// Records `count` sample events over an outline of `items` ids shaped `shape`, with
  /// small frames and a small restart slack so that dictionary restarts happen; `edit`
  /// may change each event (given its number) before it is recorded.
  init(
    _ count: Int, seed: UInt64, items: Int = 400, shape: IdShape = .uuid, every: Int = 250,
    restartSlack: Int = 64, path: String = temporaryLogPath(),
    edit: ((Int, inout Event) -> Void)? = nil
  ) throws {
    self.path = path
    self.every = every
    var options = Recorder.options(.never)
    options.maxEventsPerFrame = 300
    options.maxEventsBetweenCheckpoints = 3_000
    // Frames are cut by count alone, never by the flusher's timer: the log's frames,
    // checkpoints and so the seeks it needs are the same however slow the machine is.
    options.clock = ManualClock()
    let recorder = try Recorder.open(path: path, options: options)
    recorder.restartSlack = restartSlack
    var state = ListState()
    var events: [Event] = []
    var states: [ListState] = [ListState()]
    try SampleSession.generate(
      events: count, seed: seed, maxItems: items * 3 / 2,
      opening: .outline(items: items, shape: shape)
    ) { e in
      var e = e
      edit?(events.count + 1, &e)
      _ = try recorder.record(e)
      try? state.apply(e)
      events.append(e)
      if events.count % every == 0 { states.append(state) }
    }
    try recorder.close()
    self.events = events
    self.states = states
    final = state
    restarts = try LogReader(path: path).dictionaryFrameCount
  }

  func remove() {
    try? FileManager.default.removeItem(atPath: (path as NSString).deletingLastPathComponent)
  }
}

@Suite struct Format2Tests {
  /// Seeks (through the log's checkpoints, then through an index file), event reads,
  /// replays and verify agree with a direct fold, across dictionary restarts.
  @Test(arguments: [IdShape.short, .path, .uuid])
  func seeksAndReadsEqualTheDirectFold(shape: IdShape) throws {
    let s = try RecordedSession(6_000, seed: 21, shape: shape)
    defer { s.remove() }
    #expect(s.restarts > 0)
    let timeline = try Timeline(path: s.path)
    #expect(timeline.formatMajor == 2)
    #expect(timeline.damage == nil)
    for (i, expected) in s.states.enumerated().reversed() {
      #expect(try timeline.state(at: i * s.every) == expected, "event \(i * s.every)")
    }
    #expect(timeline.indexBytes == nil)  // a short log needs no index
    var read: [Event] = []
    try timeline.forEachEvent { _, e in
      read.append(e)
      return true
    }
    #expect(read == s.events)
    try timeline.forEachEvent(from: 4_321, through: 4_400) { n, e in
      #expect(e == s.events[n - 1])
      return true
    }
    #expect(try timeline.event(5_555) == s.events[5_554])
    let (final, stopped) = try timeline.replay(through: .max) { _, _, _ in true }
    #expect(stopped == s.events.count && final == s.final)
    let report = timeline.verify()
    #expect(report.intact, "\(String(describing: report.problem))")
    #expect(report.checkpoints > 0)

    // Through an index file with a seek point every 700 events.
    let indexed = try Timeline(path: s.path)
    indexed.indexSpacing = 700
    for (i, expected) in s.states.enumerated() {
      #expect(try indexed.state(at: i * s.every) == expected, "indexed, event \(i * s.every)")
    }
    #expect(indexed.indexStatus == .valid)
    let index = try #require(LogIndex.open(forLog: s.path))
    #expect(index.seekPoints.count >= 6_000 / 700 - 3)
    #expect(try indexed.event(5_555) == s.events[5_554])
    let reopened = try Timeline(path: s.path)
    #expect(reopened.indexStatus == .valid)
    for n in [1, 699, 700, 701, 2_345, 5_999, 6_000] {
      #expect(try reopened.state(at: n) == direct(s.events, through: n), "reopened, event \(n)")
    }
  }

  /// While the fold starves (its queue empty), each frame's records are handed as soon as
  /// the frame is read, however few; otherwise nothing is handed before `chunkEvents`
  /// records are in. Either way the same events in the same order.
  @Test func aStarvingFoldGetsEachFrameAsItIsRead() throws {
    let s = try RecordedSession(6_000, seed: 23, shape: .path)
    defer { s.remove() }
    let timeline = try Timeline(path: s.path)
    let reader = try LogReader(path: s.path)
    func read(starving: Bool) throws -> (hands: [Int], seqs: [Int]) {
      var decoder = try timeline.decoder(after: 0)
      var hands: [Int] = []
      var seqs: [Int] = []
      func hand(_ chunk: inout FoldOps) -> Bool {
        hands.append(chunk.count)
        for i in 0..<chunk.count where chunk.isEvent(i) { seqs.append(chunk.seqs[i]) }
        chunk.removeAll()
        return true
      }
      var ops = FoldOps()
      try LogEvents.decode(
        reader, path: s.path, decoder: &decoder, from: 1, through: 6_000, ops: &ops,
        starving: { starving }, skipped: { _ in }, hand)
      return (hands, seqs)
    }
    let eager = try read(starving: true)
    let chunked = try read(starving: false)
    #expect(eager.seqs == Array(1...6_000))
    #expect(chunked.seqs == eager.seqs)
    // Frames of at most 300 events (a restart's record joins the next frame's).
    #expect(eager.hands.count >= 6_000 / 300)
    #expect(eager.hands.allSatisfy { $0 <= 301 })
    #expect(chunked.hands.dropLast().allSatisfy { $0 >= LogEvents.chunkEvents })
    #expect(chunked.hands.count <= 2)
  }

  /// A fold that starts at a dictionary restart, from a decoder a seek positioned there
  /// (the checkpoint after a restart), does not enter the restart again (its live ids
  /// entered and the state renumbered twice); one standing before the restart still does.
  @Test func aFoldFromARestartDoesNotEnterItAgain() throws {
    let s = try RecordedSession(6_000, seed: 21, shape: .uuid)
    defer { s.remove() }
    let timeline = try Timeline(path: s.path)
    let reader = try LogReader(path: s.path)
    func fold(_ decoder: inout EventDecoder, from: Int, through: Int) throws -> (
      restarts: Int, events: Int
    ) {
      var counts = (restarts: 0, events: 0)
      func hand(_ chunk: inout FoldOps) -> Bool {
        for i in 0..<chunk.count {
          if chunk.kind(i) == FoldOps.Kind.restart { counts.restarts += 1 }
          if chunk.isEvent(i) { counts.events += 1 }
        }
        chunk.removeAll()
        return true
      }
      var ops = FoldOps()
      try LogEvents.decode(
        reader, path: s.path, decoder: &decoder, from: from, through: through, ops: &ops,
        skipped: { _ in }, hand)
      return counts
    }
    var checked = 0
    for r in reader.restartSeqs {
      let n = Int(r)
      guard n > 2, n + 50 <= s.events.count else { continue }
      var positioned = try timeline.decoder(after: n - 1)
      let defined = positioned.defined
      #expect(positioned.segment == r)
      let there = try fold(&positioned, from: n, through: n + 50)
      #expect(there.restarts == 0 && there.events == 51, "restart before event \(n)")
      #expect(positioned.segment == r && positioned.defined >= defined)
      var before = try timeline.decoder(after: n - 2)
      let across = try fold(&before, from: n - 1, through: n + 50)
      #expect(across.restarts == 1 && across.events == 52, "restart before event \(n)")
      #expect(before.defined == positioned.defined && before.segment == r)
      #expect(try timeline.state(at: n + 50) == direct(s.events, through: n + 50))
      checked += 1
    }
    #expect(checked > 0)
  }

  /// A hostile log with two dictionary frames before the same event, the first naming too
  /// few ids: a seek from the checkpoint after them reads on with the second (as its
  /// decoder does), never renumbering through the first; the index build does the same.
  @Test func aSeekAfterTwoDictionariesReadsOnWithTheSecond() throws {
    let path = temporaryLogPath()
    defer {
      try? FileManager.default.removeItem(atPath: (path as NSString).deletingLastPathComponent)
    }
    var options = Recorder.options(.never)
    options.maxEventsPerFrame = 300
    options.clock = ManualClock()
    let recorder = try Recorder.open(path: path, options: options)
    var events: [Event] = []
    try SampleSession.generate(
      events: 1_500, seed: 31, maxItems: 600, opening: .outline(items: 400, shape: .path)
    ) { e in
      if events.count == 700 {
        let bogus = DictionaryPayload.encode(["not-an-id-of-the-list"])
        try recorder.writer.appendDictionary(bogus.bytes, flushPoints: bogus.flushPoints)
        try recorder.restartDictionary()
      }
      _ = try recorder.record(e)
      events.append(e)
    }
    try recorder.close()
    for n in [699, 700, 701, 1_000, 1_500] {
      #expect(try Timeline(path: path).state(at: n) == direct(events, through: n), "event \(n)")
    }
    // From the log's start: through both dictionaries, the state renumbered by the second.
    let replayed = try Timeline(path: path).replay(through: .max) { _, _, _ in true }
    #expect(replayed.stoppedAt == 1_500 && replayed.state == direct(events, through: 1_500))
    let indexed = try Timeline(path: path)
    indexed.indexSpacing = 200
    try indexed.buildIndex()
    for n in [701, 950, 1_499] {
      #expect(try indexed.state(at: n) == direct(events, through: n), "event \(n)")
    }
  }

  /// A state of tens of thousands of items is stored in the index in two parts, inflated
  /// side by side, and loads to the state a direct fold makes.
  @Test func largeIndexStatesLoadFromTwoParts() throws {
    let s = try RecordedSession(1_500, seed: 26, items: 40_000, shape: .uuid, every: 500)
    defer { s.remove() }
    let timeline = try Timeline(path: s.path)
    timeline.indexSpacing = 500
    timeline.spacesPointsByItems = false
    try timeline.buildIndex()
    let index = try #require(LogIndex.open(forLog: s.path))
    #expect(index.seekPoints.contains { $0.isInTwoParts })
    let reopened = try Timeline(path: s.path)
    #expect(reopened.indexStatus == .valid)
    for (i, expected) in s.states.enumerated().reversed() {
      #expect(try reopened.state(at: i * s.every) == expected, "event \(i * s.every)")
    }
    #expect(try reopened.state(at: 1_234) == direct(s.events, through: 1_234))
    // Each thread checks the CRC of the part it inflates: a byte flipped in either part is
    // caught, and the two CRCs joined are the stored one.
    let point = try #require(index.seekPoints.first { $0.isInTwoParts })
    #expect(try index.state(at: point).count == point.rawLength)
    // Read side by side (the last column still inflating while the rest loads), each time
    // the same state, checked only once the other thread is done.
    let (stored, ends) = try index.dictionary(at: point)
    let ids = try IdSpace(stored: stored, ends: ends)
    let whole = try index.state(at: point).withUnsafeBytes {
      try ListState(
        compact: $0, ids: ids, aliases: DefinitionAliases(vetted: ids.count, map: [:]))
    }
    for _ in 0..<40 {
      #expect(try index.loadState(at: point, ids: CompactIDs(ids)).get() == whole)
    }
    let indexPath = LogIndex.path(forLog: s.path)
    let good = try Data(contentsOf: URL(fileURLWithPath: indexPath))
    defer { try? good.write(to: URL(fileURLWithPath: indexPath)) }
    for at in [Int(point.blobOffset) + 2, Int(point.blobOffset) + point.partOffset + 2] {
      var bad = good
      bad[at] ^= 0x10
      try bad.write(to: URL(fileURLWithPath: indexPath))
      let damaged = try #require(LogIndex.open(forLog: s.path))
      #expect(throws: LogError.self, "byte \(at)") { try damaged.state(at: point) }
      #expect(throws: LogError.self, "byte \(at)") {
        try damaged.loadState(at: point, ids: CompactIDs(ids))
      }
      do {
        _ = try damaged.state(at: point)
      } catch {
        #expect(error.message.contains("does not check out"), "byte \(at): \(error.message)")
      }
    }
  }

  /// A large state spaces the index's seek points by its size (half its items, when that is
  /// more than the spacing asked), so a point's cost per event folded stays bounded; with
  /// the rule off (`LISTTAPE_INDEX_SPACING`, tests) the spacing is the one asked. Seeks
  /// between the wider points read the state a direct fold makes.
  @Test func aLargeStateSpacesItsSeekPointsByItsItems() throws {
    #expect(Timeline.seekPointSpacing(500, items: 3_000) == 1_500)
    #expect(Timeline.seekPointSpacing(500, items: 999) == 500)
    let s = try RecordedSession(8_000, seed: 28, items: 3_000, shape: .path, every: 1_000)
    defer { s.remove() }
    var counts: [Bool: Int] = [:]
    for byItems in [true, false] {
      try? FileManager.default.removeItem(atPath: LogIndex.path(forLog: s.path))
      let timeline = try Timeline(path: s.path)
      timeline.indexSpacing = 500
      timeline.spacesPointsByItems = byItems
      try timeline.buildIndex()
      let seqs = try #require(LogIndex.open(forLog: s.path)).seekPoints.map { Int($0.seq) }
      counts[byItems] = seqs.count
      var previous = 0
      for seq in seqs {
        let items = direct(s.events, through: seq).numberOfAllItems
        let due = byItems ? max(500, items / 2) : 500
        #expect(items >= 2_000 && seq - previous >= due, "point at \(seq) after \(previous)")
        if !byItems { #expect(seq - previous < 1_000, "point at \(seq) after \(previous)") }
        previous = seq
      }
      let reopened = try Timeline(path: s.path)
      reopened.buildsIndex = false
      for n in [1_234, 3_333, 7_999] {
        #expect(try reopened.state(at: n) == direct(s.events, through: n), "event \(n)")
      }
    }
    #expect((counts[true] ?? 0) >= 3 && (counts[true] ?? 0) * 2 <= counts[false] ?? 0)
  }

  /// With a valid index, open does not scan the frames it covers: damage inside them is
  /// found only when those frames are read (and reported with its offset then); without
  /// the index the same open reports it at once.
  /// A seek point whose state could not be encoded on the compressing thread fails the
  /// builder's next step with the event named, and leaves no index file behind.
  @Test func aSeekPointThatWasNotEncodedFailsTheBuildAndLeavesNoIndex() throws {
    let s = try RecordedSession(1_000, seed: 23)
    defer { s.remove() }
    let reader = try LogReader(path: s.path, useIndex: false)
    var builder: LogIndexBuilder? = try LogIndexBuilder(reader: reader)
    try builder?.addSeekPoint(
      seq: 300, frameOffset: reader.firstFrameOffset, segment: 0, dictionaryCount: 0
    ) { nil }
    do {
      _ = try builder?.finish(reader: reader)
      Issue.record("finish succeeded")
    } catch {
      #expect(error.kind == .io)
      #expect(error.message == "the state after event 300 was not encoded", "\(error)")
    }
    builder = nil
    let dir = (s.path as NSString).deletingLastPathComponent
    let left = try FileManager.default.contentsOfDirectory(atPath: dir)
    #expect(!left.contains { $0.contains(".idx") }, "\(left)")
  }

  @Test func aValidIndexStandsInForTheScan() throws {
    let s = try RecordedSession(5_000, seed: 22)
    defer { s.remove() }
    let timeline = try Timeline(path: s.path)
    timeline.indexSpacing = 500
    try timeline.buildIndex()
    // Flip a byte in the payload of the frame holding event 2,500.
    var frame: UInt64 = 0
    try LogReader(path: s.path).forEachFrame(from: 2_500, through: 2_500) { view in
      frame = view.offset
      return false
    }
    try flipByte(s.path, at: Int(frame) + 40)
    let withIndex = try LogReader(path: s.path)
    #expect(withIndex.indexStatus == .valid)
    #expect(withIndex.stop == nil)
    #expect(throws: LogError.self) {
      try withIndex.forEachFrame(from: 2_000, through: 3_000) { _ in true }
    }
    let scanned = try LogReader(path: s.path, useIndex: false)
    #expect(scanned.stop?.offset == frame)
  }

  /// An index written by an older version (format 1, its dictionaries stored as they are)
  /// is not read but reported as such, and the next build replaces it.
  @Test func anIndexOfAnOlderFormatIsIgnoredAndRebuilt() throws {
    let s = try RecordedSession(3_000, seed: 31)
    defer { s.remove() }
    var timeline = try Timeline(path: s.path)
    timeline.indexSpacing = 400
    try timeline.buildIndex()
    let indexPath = LogIndex.path(forLog: s.path)
    var bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: indexPath)))
    #expect(bytes[8] == 2 && bytes[9] == 0)
    bytes[8] = 1
    // The header's CRC-32 (bytes 0..<124, at 124), made again so that only the format differs.
    let crc = bytes.withUnsafeBytes { crc32Bytes(0, UnsafeRawBufferPointer(rebasing: $0[..<124])) }
    for i in 0..<4 { bytes[124 + i] = UInt8(truncatingIfNeeded: crc >> (8 * i)) }
    try Data(bytes).write(to: URL(fileURLWithPath: indexPath))
    timeline = try Timeline(path: s.path)
    #expect(timeline.indexStatus == .damaged("index format 1, written by an older version"))
    timeline.indexSpacing = 400
    #expect(try timeline.state(at: 2_222) == direct(s.events, through: 2_222))
    try timeline.buildIndex()
    #expect(try Timeline(path: s.path).indexStatus == .valid)
    #expect(try Timeline(path: s.path).state(at: 1_717) == direct(s.events, through: 1_717))
  }

  /// An index that no longer describes the log is ignored and rebuilt: the log grew (the
  /// index is extended), another log took its name, or the index file was damaged.
  @Test func staleAndDamagedIndexesAreIgnoredAndRebuilt() throws {
    let s = try RecordedSession(4_000, seed: 23)
    defer { s.remove() }
    var timeline = try Timeline(path: s.path)
    timeline.indexSpacing = 400
    #expect(try timeline.state(at: 3_999) == direct(s.events, through: 3_999))
    _ = timeline.checkpointSeqs  // many seeks to come: the index is built
    let first = try #require(LogIndex.open(forLog: s.path))
    let covered = first.eventsCovered

    // The log grows: the index is still valid for what it covers, then extended.
    var options = Recorder.options(.never)
    options.maxEventsPerFrame = 300
    let recorder = try Recorder.open(path: s.path, options: options)
    var events = s.events
    try SampleSession.generate(events: 3_000, seed: 99, maxItems: 300) { e in
      _ = try recorder.record(e)
      events.append(e)
    }
    try recorder.close()
    timeline = try Timeline(path: s.path)
    timeline.indexSpacing = 400
    #expect(timeline.indexStatus == .valid)
    _ = timeline.checkpointSeqs
    #expect(try timeline.state(at: 6_900) == direct(events, through: 6_900))
    let extended = try #require(LogIndex.open(forLog: s.path))
    #expect(extended.eventsCovered > covered)
    #expect(extended.seekPoints.count > first.seekPoints.count)
    #expect(
      Array(extended.seekPoints.prefix(first.seekPoints.count)).map(\.seq)
        == first.seekPoints.map(\.seq))

    // Another log under the same name: stale, and rebuilt for the new log.
    let other = try RecordedSession(3_000, seed: 24, path: s.path + "-other")
    try FileManager.default.removeItem(atPath: s.path)
    try FileManager.default.copyItem(atPath: other.path, toPath: s.path)
    timeline = try Timeline(path: s.path)
    timeline.indexSpacing = 400
    guard case .stale = timeline.indexStatus else {
      Issue.record("expected a stale index, got \(timeline.indexStatus)")
      return
    }
    #expect(try timeline.state(at: 2_500) == direct(other.events, through: 2_500))
    try timeline.buildIndex()
    #expect(try Timeline(path: s.path).indexStatus == .valid)

    // A damaged index file: ignored, rebuilt, answers unchanged.
    let indexPath = LogIndex.path(forLog: s.path)
    var bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: indexPath)))
    bytes[bytes.count / 2] ^= 0x40
    try Data(bytes).write(to: URL(fileURLWithPath: indexPath))
    timeline = try Timeline(path: s.path)
    timeline.indexSpacing = 400
    try timeline.buildIndex()
    #expect(try timeline.state(at: 2_999) == direct(other.events, through: 2_999))
    for n in [450, 1_234, 2_000] {
      #expect(try timeline.state(at: n) == direct(other.events, through: n), "event \(n)")
    }
  }

  /// The builder codes each segment's dictionary on its compressing thread, queued behind
  /// the seek points added before it (the fold does not stop for them at a restart): every
  /// segment is in the index once, in order, each point names the segment it belongs to,
  /// and a seek from each point answers as a fold from the start.
  @Test func everySegmentIsWrittenOnceBehindItsPoints() throws {
    let s = try RecordedSession(
      8_000, seed: 34, items: 150, shape: .path, every: 500, restartSlack: 16)
    defer { s.remove() }
    #expect(s.restarts >= 2)
    let timeline = try Timeline(path: s.path)
    timeline.indexSpacing = 300
    try timeline.buildIndex()
    let index = try #require(LogIndex.open(forLog: s.path))
    let keys = index.segments.map(\.key)
    #expect(keys.count == s.restarts + 1)
    #expect(keys == keys.sorted() && Set(keys).count == keys.count)
    #expect(index.seekPoints.count > s.restarts)
    for p in index.seekPoints {
      #expect(index.segments.indices.contains(p.segmentIndex), "point after \(p.seq)")
      #expect(index.segments[p.segmentIndex].key == p.segment, "point after \(p.seq)")
    }
    for i in index.segments.indices {
      let (stored, ends) = try index.dictionary(segment: i)
      #expect(ends.count == index.segments[i].entries && stored.count == Int(ends.last ?? 0))
    }
    let reopened = try Timeline(path: s.path)
    reopened.buildsIndex = false
    for p in index.seekPoints {
      let n = Int(p.seq) + 1
      #expect(try reopened.state(at: n) == direct(s.events, through: n), "event \(n)")
    }
    #expect(reopened.indexStatus == .valid)
  }

  /// A seek reads the point's dictionary on another thread while it loads the state: a
  /// dictionary that does not check out (a flipped byte, caught by its CRC) drops the index
  /// with the dictionary's own reason, and the seek answers from the log as before.
  @Test func aDamagedIndexDictionaryDropsTheIndexAndTheSeekStillAnswers() throws {
    let s = try RecordedSession(4_000, seed: 27, items: 3_000, shape: .uuid, every: 1_000)
    defer { s.remove() }
    let timeline = try Timeline(path: s.path)
    timeline.indexSpacing = 500
    try timeline.buildIndex()
    let index = try #require(LogIndex.open(forLog: s.path))
    let segment = try #require(index.segments.first)
    try flipByte(
      LogIndex.path(forLog: s.path), at: Int(segment.codedOffset) + segment.codedLength / 2)
    let reopened = try Timeline(path: s.path)
    #expect(reopened.indexStatus == .valid)
    reopened.buildsIndex = false
    for n in [1_777, 3_001] {
      #expect(try reopened.state(at: n) == direct(s.events, through: n), "event \(n)")
    }
    guard case .damaged(let why) = reopened.indexStatus else {
      Issue.record("expected the index dropped, got \(reopened.indexStatus)")
      return
    }
    #expect(why.contains("index dictionary checksum mismatch"))
  }

  /// A log copied without its index reads, seeks and bisects correctly, and a directory
  /// where no index can be written changes nothing but speed.
  @Test func aCopiedLogWithoutItsIndexAndAReadOnlyDirectory() throws {
    let s = try RecordedSession(5_000, seed: 25)
    defer { s.remove() }
    let original = try Timeline(path: s.path)
    original.indexSpacing = 500
    try original.buildIndex()
    let dir = (s.path as NSString).deletingLastPathComponent + "/copy"
    try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
    let copy = dir + "/log.ltape"
    try FileManager.default.copyItem(atPath: s.path, toPath: copy)
    let copied = try Timeline(path: copy)
    #expect(copied.indexStatus == .missing)
    copied.indexSpacing = 500
    let query = try Query("count(sections) >= 8")
    let a = try Bisect.run(original, scanInterval: true) { _, st in
      query.holds(in: st) ? .bad : .good
    }
    let b = try Bisect.run(copied, scanInterval: true) { _, st in query.holds(in: st) ? .bad : .good
    }
    #expect(a.first == b.first)
    for n in [1, 777, 2_500, 4_999] {
      #expect(try copied.state(at: n) == direct(s.events, through: n))
    }
    #expect(FileManager.default.fileExists(atPath: LogIndex.path(forLog: copy)))

    // A read-only directory: no index, same answers.
    let locked = (s.path as NSString).deletingLastPathComponent + "/locked"
    try FileManager.default.createDirectory(atPath: locked, withIntermediateDirectories: true)
    try FileManager.default.copyItem(atPath: s.path, toPath: locked + "/log.ltape")
    try FileManager.default.setAttributes([.posixPermissions: 0o555], ofItemAtPath: locked)
    defer {
      try? FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: locked)
    }
    let readOnly = try Timeline(path: locked + "/log.ltape")
    readOnly.indexSpacing = 500
    for n in [1, 2_500, 4_999] {
      #expect(try readOnly.state(at: n) == direct(s.events, through: n))
    }
  }

  /// A recorder that reopens a 2.0 log (after a close, and after a torn tail) continues
  /// its dictionary: everything reads back as one session.
  @Test func reopeningContinuesTheDictionary() throws {
    let s = try RecordedSession(3_000, seed: 26)
    defer { s.remove() }
    var events = s.events
    for round in 0..<3 {
      if round == 2 {
        // A torn tail: half a frame at the end.
        let h = try FileHandle(forWritingTo: URL(fileURLWithPath: s.path))
        try h.seekToEnd()
        try h.write(contentsOf: Data([0xF1, 0x46, 0x52, 0x4D, 1, 1, 0, 0]))
        try h.close()
      }
      let recorder = try Recorder.open(path: s.path, fsync: .never)
      recorder.restartSlack = 64
      #expect(recorder.formatMajor == 2)
      #expect(recorder.state == direct(events, through: events.count))
      try SampleSession.generate(events: 1_500, seed: UInt64(40 + round), maxItems: 600) { e in
        _ = try recorder.record(e)
        events.append(e)
      }
      try recorder.close()
    }
    let timeline = try Timeline(path: s.path)
    var read: [Event] = []
    try timeline.forEachEvent { _, e in
      read.append(e)
      return true
    }
    #expect(read == events)
    #expect(try timeline.state(at: events.count) == direct(events, through: events.count))
  }

  /// A 1.0 log keeps being appended to in 1.0, and reads as one log.
  @Test func appendingToA10LogContinuesIn10() throws {
    let path = temporaryLogPath()
    defer {
      try? FileManager.default.removeItem(atPath: (path as NSString).deletingLastPathComponent)
    }
    var options = Recorder.options(.never)
    options.formatMajor = 1
    var events: [Event] = []
    let first = try Recorder.open(path: path, options: options)
    #expect(first.formatMajor == 1)
    try SampleSession.generate(events: 2_000, seed: 27, maxItems: 300) { e in
      _ = try first.record(e)
      events.append(e)
    }
    try first.close()
    let again = try Recorder.open(path: path, fsync: .never)
    #expect(again.formatMajor == 1)
    try SampleSession.generate(events: 1_000, seed: 28, maxItems: 300) { e in
      _ = try again.record(e)
      events.append(e)
    }
    try again.close()
    let timeline = try Timeline(path: path)
    #expect(timeline.formatMajor == 1)
    var read: [Event] = []
    try timeline.forEachEvent { _, e in
      read.append(e)
      return true
    }
    #expect(read == events)
  }

  /// Salvage of a damaged 2.0 log: the events after the lost frames that name no
  /// identifier defined in them read back exactly; the others are skipped and counted.
  @Test func salvagedLogsDecodeAcrossLostDefinitions() throws {
    let s = try RecordedSession(6_000, seed: 29, restartSlack: 100_000)
    defer { s.remove() }
    var frame: UInt64 = 0
    try LogReader(path: s.path).forEachFrame(from: 2_000, through: 2_000) { view in
      frame = view.offset
      return false
    }
    try flipByte(s.path, at: Int(frame) + 40)
    let out = s.path + "-salvaged"
    _ = try Timeline.salvage(s.path, to: out)
    let salvaged = try Timeline(path: out)
    #expect(!salvaged.gaps.isEmpty)
    var read: [Int: Event] = [:]
    try salvaged.forEachEvent { n, e in
      read[n] = e
      return true
    }
    for (n, e) in read { #expect(e == s.events[n - 1], "event \(n)") }
    #expect(salvaged.skippedAfterGaps > 0)
    // Most events after the gap still decode (1.0 lost everything up to a reset point).
    let after = read.keys.filter { $0 > 2_400 }.count
    #expect(after > (6_000 - 2_400) / 2)
  }

  /// A site first written in a frame that a salvage loses: later events made there keep
  /// their operation without the site (a site never changes a state), while an event that
  /// names an identifier defined in the lost frame is still skipped. Layout 3 codes sites
  /// against a model the segment's frames share, which the lost frame moved: every site of
  /// the segment after the gap is lost with it (until the next recovery point starts the
  /// model over), none is misread.
  @Test func anEventWhoseSiteWasLostKeepsItsOperation() throws {
    // No restart: one would write the site again after the gap.
    let s = try RecordedSession(1_500, seed: 33, restartSlack: 100_000) { n, e in
      // First made at event 701 (the third frame, lost below), then again after the gap.
      let late = (701...702).contains(n) || (1_201...1_260).contains(n)
      e.site = late ? "Late.swift:9 late()" : "Early.swift:1"
    }
    defer { s.remove() }
    let (path, events) = (s.path, s.events)
    var frame: UInt64 = 0
    try LogReader(path: path).forEachFrame(from: 701, through: 701) { view in
      frame = view.offset
      return false
    }
    try flipByte(path, at: Int(frame) + 40)
    let out = path + "-salvaged"
    _ = try Timeline.salvage(path, to: out)
    let salvaged = try Timeline(path: out)
    let gap = try #require(salvaged.gaps.first)
    #expect(gap.firstEvent <= 701 && 701 < gap.firstEvent + gap.count)
    var read: [Int: Event] = [:]
    try salvaged.forEachEvent { n, e in
      read[n] = e
      return true
    }
    var kept = 0
    for (n, e) in read {
      let recorded = events[n - 1]
      if n < gap.firstEvent {
        #expect(e == recorded, "event \(n)")
        continue
      }
      #expect(e.site == nil, "event \(n)")
      #expect(e.operation == recorded.operation && e.time == recorded.time, "event \(n)")
      if (1_201...1_260).contains(n) { kept += 1 }
    }
    #expect(kept > 30, "events made at the lost site that name no lost identifier")
    #expect(salvaged.skippedAfterGaps > 0)
  }
}

@Suite struct Format2DivergeTests {
  /// Records `events` with frames of `perFrame` events, replacing event `k` (1-based) by a
  /// mark when given.
  static func record(_ events: [Event], perFrame: Int, changing k: Int?, path: String) throws {
    var options = Recorder.options(.never)
    options.maxEventsPerFrame = perFrame
    let recorder = try Recorder.open(path: path, options: options)
    for (i, e) in events.enumerated() {
      _ = try recorder.record(i + 1 == k ? Event(.mark("changed"), time: e.time) : e)
    }
    try recorder.close()
  }

  /// Two 2.0 logs compare by frame fingerprints while their frames are equal, then by event;
  /// frames cut differently, or a 1.0 log against its upgrade, compare by event.
  @Test func theFirstDifferentEventIsFoundWhateverTheFraming() throws {
    let path = temporaryLogPath()
    let dir = (path as NSString).deletingLastPathComponent
    defer { try? FileManager.default.removeItem(atPath: dir) }
    var events: [Event] = []
    SampleSession.generate(events: 9_000, seed: 31, maxItems: 800) { events.append($0) }
    try Self.record(events, perFrame: 500, changing: nil, path: dir + "/a.ltape")
    try Self.record(events, perFrame: 500, changing: 6_789, path: dir + "/b.ltape")
    try Self.record(events, perFrame: 333, changing: 6_789, path: dir + "/c.ltape")
    try Self.record(events, perFrame: 333, changing: nil, path: dir + "/d.ltape")
    let a = try Timeline(path: dir + "/a.ltape")
    #expect(try a.firstDifferentFrame(try Timeline(path: dir + "/b.ltape"), through: 9_000) != nil)
    #expect(
      try a.firstDifferentEvent(try Timeline(path: dir + "/b.ltape"), through: 9_000) == 6_789)
    #expect(
      try a.firstDifferentEvent(try Timeline(path: dir + "/c.ltape"), through: 9_000) == 6_789)
    #expect(try a.firstDifferentEvent(try Timeline(path: dir + "/d.ltape"), through: 9_000) == nil)
    #expect(try a.firstDifferentFrame(try Timeline(path: dir + "/a.ltape"), through: 9_000) == nil)
    let found = try Diverge.find(a, try Timeline(path: dir + "/b.ltape"))
    #expect(found.firstDifferentRecord == 6_789)
  }
}

@Suite struct Format2VerifyTests {
  /// A 2.0 checkpoint whose state is not the fold of the events before it is reported by
  /// verify with its event number, even when an index file has denser seek points.
  @Test func verifyFindsA20CheckpointThatDisagreesWithTheFold() throws {
    let path = temporaryLogPath()
    defer {
      try? FileManager.default.removeItem(atPath: (path as NSString).deletingLastPathComponent)
    }
    let recorder = try Recorder.open(path: path, options: Recorder.options(.never))
    try SampleSession.generate(events: 8_000, seed: 30, maxItems: 500) { e in
      _ = try recorder.record(e)
    }
    var saved = recorder.state
    let expanded = try #require(
      saved.sectionIdentifiers.lazy.compactMap { saved.allItems(inSection: $0) }.joined()
        .first { saved.isExpanded($0) })
    try saved.collapse([expanded])
    let table = try #require(recorder.rows?.table)
    let (bytes, points) = try saved.compactEncoded(
      segment: recorder.writer.segment, dictionaryCount: table.count, table: table)
    try recorder.writer.appendCheckpoint(bytes, flushPoints: points)
    try recorder.close()
    let timeline = try Timeline(path: path)
    timeline.indexSpacing = 1_000
    try timeline.buildIndex()
    let report = try Timeline(path: path).verify()
    #expect(!report.intact)
    guard case .checkpointDisagrees(event: 8_000) = report.problem else {
      Issue.record(
        "expected the checkpoint after event 8000 to disagree: \(String(describing: report.problem))"
      )
      return
    }
  }
}

/// The state after `n` of `events`, folded directly.
func direct(_ events: [Event], through n: Int) -> ListState {
  var s = ListState()
  for e in events.prefix(n) { try? s.apply(e) }
  return s
}

/// Flips one byte of a file.
func flipByte(_ path: String, at offset: Int) throws {
  var bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))
  bytes[offset] ^= 0x5A
  try Data(bytes).write(to: URL(fileURLWithPath: path))
}
