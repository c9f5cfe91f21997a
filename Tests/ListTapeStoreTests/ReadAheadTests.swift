import Foundation
import ListTapeLog
import ListTapeModel
import ListTapeSamples
import Testing

@testable import ListTapeRead
@testable import ListTapeStore

/// Long folds read, inflate and decode on a second thread (`ReadAhead`); they must see
/// exactly what the single-threaded path sees, stop when the caller stops, and fail alike.
@Suite struct ReadAheadTests {
  /// A recorded sample session, its events, and the state and faults of a direct fold.
  struct Session {
    var path: String
    var events: [Event] = []
    var states: [Int: ListState] = [:]
    var faults: [Int] = []
    var final = ListState()

    /// Records `count` events with small frames; keeps the live state after each event in
    /// `keep`.
    init(_ count: Int, seed: UInt64, keep: Set<Int> = []) throws {
      path = temporaryLogPath()
      var options = Recorder.options(.never)
      options.maxEventsPerFrame = 500
      options.maxEventsBetweenCheckpoints = 25_000
      options.minCheckpointSpacingBytes = 0
      options.parity = nil  // a damaged frame must cost a gap here, not be rebuilt
      // Frames cut by count only, never by the clock, so every run (a TSan run's too) damages
      // the same frame and loses the same definitions.
      options.batchDelay = 3600
      let recorder = try Recorder.open(path: path, options: options)
      var state = ListState()
      var n = 0
      var events: [Event] = []
      var faults: [Int] = []
      var states: [Int: ListState] = [:]
      try SampleSession.generate(events: count, seed: seed, maxItems: 2_000) { e in
        n += 1
        _ = try recorder.record(e)
        if (try? state.apply(e)) == nil { faults.append(n) }
        if keep.contains(n) { states[n] = state }
        events.append(e)
      }
      try recorder.close()
      self.events = events
      self.faults = faults
      self.states = states
      final = state
    }

    func remove() {
      try? FileManager.default.removeItem(atPath: (path as NSString).deletingLastPathComponent)
    }
  }

  /// Every event (number, event) from `from` on, read ahead on a second thread or not,
  /// with the decoder it leaves and the error it ends with.
  static func read(
    _ timeline: Timeline, from: Int = 1, through: Int = .max, pipelined: Bool
  ) -> (seen: [(Int, Event)], decoder: EventDecoder, error: StoreError?) {
    var seen: [(Int, Event)] = []
    var decoder = EventDecoder()
    var ids = ListState()
    do {
      decoder = try timeline.decoder(after: from - 1)
      try timeline.fold(
        &ids, &decoder, from: from, through: through, applying: false, readAhead: pipelined
      ) { ops, i, _, s in
        seen.append((ops.seqs[i], ops.event(i, s.ids)))
        return true
      }
    } catch {
      return (seen, decoder, error)
    }
    return (seen, decoder, nil)
  }

  /// Where two reads first differ (nil when they are equal): a short failure message where
  /// comparing the arrays would print them whole.
  static func firstDifference(_ a: [(Int, Event)], _ b: [(Int, Event)]) -> Int? {
    for i in 0..<min(a.count, b.count) where a[i].0 != b[i].0 || a[i].1 != b[i].1 { return i }
    return a.count == b.count ? nil : min(a.count, b.count)
  }

  @Test func pipelinedReadsAndReplayEqualTheDirectFold() throws {
    let session = try Session(70_000, seed: 11)
    defer { session.remove() }
    let timeline = try Timeline(path: session.path)
    for (from, through) in [(1, Int.max), (12_345, 34_567), (25_001, 25_001)] {
      let direct = Self.read(timeline, from: from, through: through, pipelined: false)
      let piped = Self.read(timeline, from: from, through: through, pipelined: true)
      #expect(direct.error == nil && piped.error == nil)
      #expect(Self.firstDifference(piped.seen, direct.seen) == nil)
      #expect(piped.decoder.expected == direct.decoder.expected)
      #expect(piped.decoder.lastTime == direct.decoder.lastTime)
    }
    let all = Self.read(timeline, pipelined: true).seen
    #expect(Self.firstDifference(all, session.events.enumerated().map { ($0 + 1, $1) }) == nil)

    // A full replay takes the pipeline; it folds, reports faults and progress as before.
    var faults: [Int] = []
    var progress: [Int] = []
    let report = { (n: Int, _: Int) in progress.append(n) }
    let (state, stopped) = try timeline.replay(through: .max, progress: report) { n, _, _ in
      faults.append(n)
      return true
    }
    #expect(stopped == session.events.count)
    #expect(state.stateHash == session.final.stateHash)
    #expect(faults == session.faults)
    #expect(progress == [65_536, session.events.count])
    #expect(try timeline.state(at: session.events.count).stateHash == session.final.stateHash)
  }

  @Test func stoppingEarlyStopsTheProducer() throws {
    let k = 30_000
    let session = try Session(60_000, seed: 12, keep: [k])
    defer { session.remove() }
    let timeline = try Timeline(path: session.path)
    let firstFault = try #require(session.faults.first)

    // onFault returning false stops the replay at that event.
    let (_, stopped) = try timeline.replay(through: .max) { _, _, _ in false }
    #expect(stopped == firstFault)

    // A false from the body stops the fold there, and the decoder it leaves carries on
    // exactly.
    var state = ListState()
    var decoder = timeline.startDecoder()
    var last = 0
    try timeline.fold(&state, &decoder, from: 1, through: .max) { ops, i, _, _ in
      last = ops.seqs[i]
      return last < k
    }
    #expect(last == k)
    #expect(state.stateHash == session.states[k]?.stateHash)
    try timeline.fold(&state, &decoder, from: k + 1, through: .max) { _, _, _, _ in true }
    #expect(state.stateHash == session.final.stateHash)

    // The producer reads only the few chunks the queue holds past the stop, not the log.
    let ahead = ReadAhead(
      reader: timeline.reader, path: timeline.path, from: 1, through: timeline.eventCount,
      decoder: timeline.startDecoder(), frames: false)
    #expect(ahead.isRunning)
    var seen = 0
    try ahead.consume { chunk in
      seen += chunk.count
      return false
    }
    #expect(seen > 0)
    #expect(ahead.decoded <= (ReadAhead.depth + 2) * LogEvents.chunkEvents + 1_000)
    #expect(ahead.decoded < timeline.eventCount / 2)
  }

  @Test func aRecordThatDoesNotDecodeFailsAsBefore() throws {
    let path = temporaryLogPath()
    defer {
      try? FileManager.default.removeItem(atPath: (path as NSString).deletingLastPathComponent)
    }
    // Records that pass every checksum, one of which is not an event.
    let bad = 25_000
    var options = LogWriterOptions()
    options.fsync = .never
    let writer = try LogWriter.open(path: path, options: options)
    var encoder = EventEncoder()
    var n = 0
    try SampleSession.generate(events: 40_000, seed: 13, maxItems: 2_000) { e in
      n += 1
      try writer.append(n == bad ? [0x7F, 0xFF, 0xFF] : encoder.encode(e))
    }
    try writer.close()

    let timeline = try Timeline(path: path)
    let direct = Self.read(timeline, pipelined: false)
    let piped = Self.read(timeline, pipelined: true)
    /// The event a read failed to decode, if that is how it failed.
    func undecodable(_ error: StoreError?) -> Int? {
      guard case .undecodableEvent(let n, _, path: timeline.path)? = error else { return nil }
      return n
    }
    #expect(undecodable(direct.error) == bad)
    #expect(undecodable(piped.error) == bad)
    // The events before it are still handed over first.
    #expect(direct.seen.count == bad - 1)
    #expect(Self.firstDifference(piped.seen, direct.seen) == nil)
    let replayed = #expect(throws: StoreError.self) {
      _ = try timeline.replay(through: .max) { _, _, _ in true }
    }
    #expect(undecodable(replayed) == bad)
  }

  @Test func damagedAndSalvagedLogsReadAsBefore() throws {
    let session = try Session(30_000, seed: 14)
    defer { session.remove() }
    // Flip a byte in the event frame holding the middle event: reading stops at that frame,
    // and the salvaged copy skips the later events it cannot decode without the lost ones.
    var frame: UInt64 = 0
    try LogReader(path: session.path).forEachFrame(from: 15_000, through: 15_000) { view in
      frame = view.offset
      return false
    }
    var bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: session.path)))
    bytes[Int(frame) + 40] ^= 0x5A
    try Data(bytes).write(to: URL(fileURLWithPath: session.path))
    let damaged = try Timeline(path: session.path)
    #expect(damaged.damage?.kind == .damaged)
    let (_, stopped) = try damaged.replay(through: .max) { _, _, _ in true }
    #expect(stopped == damaged.eventCount)
    #expect(stopped < session.events.count)

    let salvaged = session.path + "-salvaged"
    _ = try Timeline.salvage(session.path, to: salvaged)
    let a = try Timeline(path: salvaged)
    let b = try Timeline(path: salvaged)
    let direct = Self.read(a, pipelined: false)
    let piped = Self.read(b, pipelined: true)
    #expect(direct.error == nil && piped.error == nil)
    #expect(a.skippedAfterGaps > 0)
    #expect(b.skippedAfterGaps == a.skippedAfterGaps)
    #expect(Self.firstDifference(piped.seen, direct.seen) == nil)
  }

  /// The definitions a seek without an index reads (`absorbDefinitions`) come out the same
  /// whether a second thread reads and inflates the frames ahead or not: on a whole log,
  /// stopped partway, and on a log damaged partway (read up to the damage, alike).
  @Test func definitionsReadAheadEqualTheDirectRead() throws {
    let session = try Session(30_000, seed: 15)
    defer { session.remove() }
    func absorb(through: Int, ahead: Bool) throws -> (ids: [String], error: String?) {
      let reader = try LogReader(path: session.path)
      let start = LogStart(reader: reader, path: session.path)
      var decoder = start.startDecoder()
      var failure: String?
      do {
        try start.absorbDefinitions(
          &decoder, from: 1, through: through, start: reader.firstFrameOffset,
          aheadFrom: ahead ? 0 : .max)
      } catch {
        failure = "\(error)"
      }
      let d = decoder.dictionary
      return ((0..<d.count).map { d.text($0) }, failure)
    }
    let whole = try absorb(through: 29_999, ahead: false).ids
    for through in [29_999, 12_345] {
      let direct = try absorb(through: through, ahead: false)
      let ahead = try absorb(through: through, ahead: true)
      #expect(direct.error == nil && ahead.error == nil)
      #expect(direct.ids.count > 100)
      #expect(ahead.ids == direct.ids, "through \(through)")
    }
    var frame: UInt64 = 0
    try LogReader(path: session.path).forEachFrame(from: 20_000, through: 20_000) { view in
      frame = view.offset
      return false
    }
    var bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: session.path)))
    bytes[Int(frame) + 40] ^= 0x5A
    try Data(bytes).write(to: URL(fileURLWithPath: session.path))
    // The reader ends the log before the damaged frame: both read up to it, alike.
    let direct = try absorb(through: 29_999, ahead: false)
    let ahead = try absorb(through: 29_999, ahead: true)
    #expect(ahead.error == direct.error)
    #expect(direct.ids != whole)
    #expect(ahead.ids == direct.ids)
  }

  /// The frames read ahead for a seek's definitions are bounded by bytes, not by a few
  /// frames: while the consumer holds its first frame (as it holds one of 100,000 new ids),
  /// the second thread inflates on through a run of small frames.
  @Test func definitionsReadAheadRunOnByBytes() throws {
    let (timeline, _) = try Self.bigEvents(64, refs: 1)
    defer { Self.remove(timeline) }
    let reader = try LogReader(path: timeline.path)
    let ahead = try #require(
      FramesAhead(reader: reader, from: 1, through: 66, start: reader.firstFrameOffset, prefix: nil)
    )
    var frames = 0
    var waiting = 0
    try ahead.consume { _ in
      frames += 1
      if frames == 1 {
        // Waits for the condition (10 s at most), never for luck.
        let deadline = Date().addingTimeInterval(10)
        while ahead.waiting < 32 && Date() < deadline { usleep(1_000) }
        waiting = ahead.waiting
      }
      return true
    }
    #expect(waiting >= 32)
    #expect(frames >= 64)
  }

  /// A log of `count` events after an opening, each a `reconfigureItems` naming the same
  /// two items `refs` times in all (as large in records as an event of `refs` items), each
  /// its own frame; and the state of the whole.
  static func bigEvents(_ count: Int, refs: Int) throws -> (timeline: Timeline, final: ListState) {
    let path = temporaryLogPath()
    var options = Recorder.options(.never)
    options.maxEventsPerFrame = 1
    options.batchDelay = 3600
    let recorder = try Recorder.open(path: path, options: options)
    var state = ListState()
    var events = [
      Event(.appendSections(["s"])),
      Event(.appendItems([OutlineNode("a"), OutlineNode("b")], section: "s", parent: nil)),
    ]
    let names = (0..<refs).map { $0 % 2 == 0 ? "a" : "b" }
    for _ in 0..<count { events.append(Event(.reconfigureItems(names))) }
    for e in events {
      _ = try recorder.record(e)
      try state.apply(e)
    }
    try recorder.close()
    return (try Timeline(path: path), state)
  }

  /// Removes the directory of a log made by `bigEvents`.
  static func remove(_ timeline: Timeline) {
    try? FileManager.default.removeItem(
      atPath: (timeline.path as NSString).deletingLastPathComponent)
  }

  /// A state folding chunks of a log from its start, and how many records did not decode.
  struct ChunkFold {
    var state = ListState()
    var undecodable = 0

    init(_ timeline: Timeline) throws {
      let decoder = timeline.startDecoder()
      try state.adopt(decoder.dictionary, aliases: decoder.aliases)
    }

    mutating func fold(_ chunk: FoldOps) {
      for i in 0..<chunk.count {
        do { _ = try state.apply(chunk, i) } catch { undecodable += 1 }
      }
    }
  }

  /// Chunks are cut by size too: events of many items each do not gather by the thousand
  /// into one chunk (a log of 30 events of 2M items each held 240 MB in one).
  @Test func chunksAreCutByBytes() throws {
    let (timeline, final) = try Self.bigEvents(60, refs: 10_000)
    defer { Self.remove(timeline) }
    let path = timeline.path
    let limit = 64 << 10
    var ops = FoldOps()
    var decoder = timeline.startDecoder()
    var folded = try ChunkFold(timeline)
    var chunks: [(count: Int, bytes: Int)] = []
    func fold(_ chunk: inout FoldOps) -> Bool {
      chunks.append(((0..<chunk.count).count { chunk.isEvent($0) }, chunk.heldBytes))
      folded.fold(chunk)
      chunk.removeAll()
      return true
    }
    try LogEvents.decode(
      timeline.reader, path: path, decoder: &decoder, from: 1, through: timeline.eventCount,
      ops: &ops, bytes: limit, skipped: { _ in }, fold)
    #expect(chunks.map(\.count).reduce(0, +) == timeline.eventCount)
    // One event's records are about 40 KB: a chunk passes the limit by one event at most.
    let oneEvent = 10_000 * 4 + 1_024
    #expect(chunks.count >= 60 * 40_000 / (limit + oneEvent))
    for c in chunks { #expect(c.bytes < limit + oneEvent) }
    #expect(folded.undecodable == 0)
    #expect(folded.state.stateHash == final.stateHash)
  }

  /// The read-ahead queue is bounded in bytes too: a reader that gets ahead of the fold
  /// waits once the queued chunks hold the budget (one chunk of any size aside), not when
  /// 24 chunks of whatever size are queued.
  @Test func theQueueHoldsItsByteBudgetAtMost() throws {
    let (timeline, final) = try Self.bigEvents(120, refs: 10_000)
    defer { Self.remove(timeline) }
    let path = timeline.path
    let budget = 256 << 10
    let ahead = ReadAhead(
      reader: timeline.reader, path: path, from: 1, through: timeline.eventCount,
      decoder: timeline.startDecoder(), frames: false, chunkBytes: 64 << 10, byteBudget: budget)
    #expect(ahead.isRunning)
    var folded = try ChunkFold(timeline)
    var first = true
    var held: (chunks: Int, bytes: Int, producerWaits: Bool)?
    try ahead.consume { chunk in
      if first {
        // Wait for the reader to fill the queue (it then waits for room); the fold has
        // taken one chunk, so 120 events are more than the queue can hold.
        first = false
        let deadline = Date().addingTimeInterval(60)
        while !ahead.queue.producerWaits && Date() < deadline { usleep(1_000) }
        held = ahead.queue
      }
      folded.fold(chunk)
      return true
    }
    let queue = try #require(held)
    #expect(queue.producerWaits)
    #expect(queue.chunks >= 2)
    #expect(queue.bytes <= budget)
    #expect(folded.undecodable == 0)
    #expect(folded.state.stateHash == final.stateHash)
  }
}
