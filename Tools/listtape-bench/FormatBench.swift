import Foundation
import ListTapeInvestigate
import ListTapeJSON
import ListTapeLog
import ListTapeModel
import ListTapeRead
import ListTapeSamples
import ListTapeStore

/// Issue 15's figures: format 2.0 on the same sessions spelled with three id shapes
/// (`SampleSession` over a 100k-item outline), and seeks on a 10M-event UUID log.
enum FormatBench {
  static func run(quick: Bool) {
    do {
      for shape in IdShape.allCases {
        try shapeFigures(
          shape, events: quick ? 200_000 : 1_000_000, outline: quick ? 20_000 : 100_000)
      }
      try largeFigures(
        events: quick ? 1_000_000 : 10_000_000, outline: quick ? 20_000 : 100_000)
    } catch {
      print("format benchmark failed: \(error)")
    }
  }

  static func met(_ ok: Bool) -> String { ok ? "met" : "NOT met" }

  // MARK: Per shape: size, writing, recording, replay, index, upgrade

  static func shapeFigures(_ shape: IdShape, events count: Int, outline: Int) throws {
    print(
      "## Format 2.0, \(shape.rawValue) ids: \(count.formatted()) events over a \(outline.formatted())-item outline\n"
    )
    let dir = ReplayBench.directory + "/format-\(shape.rawValue)-\(count)"
    try? FileManager.default.removeItem(atPath: dir)
    try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: dir) }
    var events: [Event] = []
    events.reserveCapacity(count)
    SampleSession.generate(
      events: count, seed: 1, maxItems: outline * 11 / 10,
      opening: .outline(items: outline, shape: shape)
    ) { events.append($0) }

    // The JSON Lines a user would otherwise keep, gzip -6 of them, and gzip -dc's time.
    let jsonl = dir + "/session.jsonl"
    var w = JSONWriter(reservingCapacity: count * 100)
    for e in events {
      e.encode(to: &w)
      w.endLine()
    }
    _ = FileManager.default.createFile(atPath: jsonl, contents: Data(w.bytes))
    let gzipBytes = try ReplayBench.gzipSize(jsonl)
    try shell("gzip -6 -c '\(jsonl)' > '\(jsonl).gz'")
    let gunzipTime = try Clock.best { try shell("gzip -dc '\(jsonl).gz' > /dev/null") }

    // LogWriter alone, fed rows encoded beforehand (the frame assembly and deflate are in).
    var rowsEncoder = EventRowEncoder()
    var rows: [[UInt8]] = []
    rows.reserveCapacity(count)
    for e in events {
      var row: [UInt8] = []
      try rowsEncoder.encode(e, into: &row)
      rows.append(row)
    }
    let writerPath = dir + "/writer.ltape"
    let writeTime = try Clock.measure {
      let writer = try LogWriter.open(
        path: writerPath, options: Recorder.options(.interval(seconds: 1)),
        frames: Recorder.frameEncoder())
      for r in rows { try writer.append(r) }
      try writer.close()
    }
    rows = []

    // Recorder.record (encode, append, fold, restarts, checkpoints) through the Swift API.
    let apiPath = dir + "/api.ltape"
    let recordTime = try Clock.measure {
      let recorder = try Recorder.open(path: apiPath)
      for e in events { _ = try recorder.record(e) }
      try recorder.close()
    }

    // JSON Lines → log in process, and the `listtape record` binary: the log users keep.
    let logPath = dir + "/session.ltape"
    let pipelineTime = try ReplayBench.recordJSONLines(jsonl, to: logPath)
    let binaryTime = try ReplayBench.recordWithBinary(jsonl)
    let logBytes = ReplayBench.fileSize(logPath)

    // Replay (read, inflate, decode, fold), best of three, against gzip -dc.
    let timeline = try Timeline(path: logPath)
    var rows2 = 0
    let replayTime = try Clock.best {
      let (state, _) = try timeline.replay(through: .max) { _, _, _ in true }
      rows2 = state.numberOfAllItems
    }

    // The index file: built once for a fresh copy, at what cost and size.
    let indexTime = try Clock.measure {
      let fresh = try Timeline(path: logPath)
      try fresh.buildIndex()
    }
    let indexBytes = ReplayBench.fileSize(LogIndex.path(forLog: logPath))

    // Upgrade: the same events in a 1.0 log, rewritten as 2.0.
    let oldPath = dir + "/old.ltape"
    var options1 = Recorder.options(.never)
    options1.formatMajor = 1
    let old = try Recorder.open(path: oldPath, options: options1)
    for e in events { _ = try old.record(e) }
    try old.close()
    let oldBytes = ReplayBench.fileSize(oldPath)
    let upgraded = dir + "/upgraded.ltape"
    let upgradeTime = try Clock.measure { _ = try Timeline(path: oldPath).upgrade(to: upgraded) }

    let ratio = Double(logBytes) / Double(gzipBytes)
    let limit = shape == .short ? 0.65 : 0.5
    print("| figure | value | required |")
    print("|---|---:|---|")
    print("| JSON Lines | \(w.bytes.count.formatted()) B | |")
    print("| gzip -6 of the JSON Lines | \(gzipBytes.formatted()) B | |")
    print(
      "| 2.0 log (`listtape record`) | \(logBytes.formatted()) B (\(fmt(Double(logBytes) / Double(count))) B/event) "
        + "| ≤ \(limit) × gzip: \(fmt(ratio)) × \(met(ratio <= limit)) |")
    print(
      "| index file beside it (a rebuildable cache) | \(indexBytes.formatted()) B "
        + "(\(fmt(Double(indexBytes) / Double(logBytes))) × the log) | |")
    print(
      "| the same events in format 1.0 | \(oldBytes.formatted()) B (\(fmt(Double(oldBytes) / Double(gzipBytes))) × gzip) | |"
    )
    let writeRate = Double(count) / writeTime
    print(
      "| LogWriter.append of 2.0 rows, fsync interval | \(fmt0(writeRate)) events/s | "
        + "≥ 1,000,000: \(met(writeRate >= 1e6)) |")
    print(
      "| Recorder.record (encode + append + fold) | \(fmt0(Double(count) / recordTime)) events/s | |"
    )
    let pipeRate = Double(count) / pipelineTime
    print(
      "| JSON Lines → log in process | \(fmt0(pipeRate)) lines/s | ≥ 300,000: \(met(pipeRate >= 300_000)) |"
    )
    if let binaryTime {
      let r = Double(count) / binaryTime
      print(
        "| `listtape record` binary, file on stdin | \(fmt0(r)) lines/s | ≥ 300,000: \(met(r >= 300_000)) |"
      )
    }
    let replayRate = Double(count) / replayTime
    print(
      "| full replay, best of 3 | \(fmt(replayTime)) s, \(fmt0(replayRate)) events/s | "
        + "≥ 3,000,000: \(met(replayRate >= 3e6)) |")
    let vsGunzip = replayTime / gunzipTime
    print(
      "| replay ÷ `gzip -dc` of the JSON Lines (\(fmt(gunzipTime)) s, best of 3) | \(fmt(vsGunzip)) × | "
        + "≤ 1.0 ×: \(met(vsGunzip <= 1.0)) |")
    let indexVsReplay = indexTime / replayTime
    print(
      "| index build for a fresh copy | \(fmt(indexTime)) s = \(fmt(indexVsReplay)) × replay | "
        + "at replay speed (≤ 1.25 ×): \(met(indexVsReplay <= 1.25)) |")
    print(
      "| upgrade of the 1.0 log | \(fmt(upgradeTime)) s (\(fmt0(Double(count) / upgradeTime)) events/s) | |"
    )
    print("\n(final items: \(rows2.formatted()))\n")
  }

  // MARK: The 10M-event UUID log: open, seek, replay memory

  static func largeFigures(events count: Int, outline: Int) throws {
    print("## A \(count.formatted())-event UUID log over a \(outline.formatted())-item outline\n")
    let path = ReplayBench.directory + "/format-large-\(count)-uuid.ltape"
    let generate = try Clock.measure { try writeLarge(path, events: count, outline: outline) }
    let logBytes = ReplayBench.fileSize(path)
    print("(recorded in \(fmt(generate)) s, or cached; \(logBytes.formatted()) B)\n")

    // A fresh copy rebuilds its index once; then open skips the scan of what it covers.
    try? FileManager.default.removeItem(atPath: LogIndex.path(forLog: path))
    let scanOpen = try Clock.measure { _ = try LogReader(path: path, useIndex: false) }
    let replay = try Clock.measure {
      _ = try Timeline(path: path).replay(through: .max) { _, _, _ in true }
    }
    let build = try Clock.measure { try Timeline(path: path).buildIndex() }
    let indexBytes = ReplayBench.fileSize(LogIndex.path(forLog: path))
    var indexedOpen = Double.infinity
    for _ in 0..<5 {
      indexedOpen = min(indexedOpen, try Clock.measure { _ = try LogReader(path: path) })
    }
    let timeline = try Timeline(path: path)
    var rng = Rng(seed: 42)
    var times: [Double] = []
    var items = 0
    for _ in 0..<41 {
      let n = 1 + rng.below(timeline.eventCount)
      times.append(
        try Clock.measure { items = max(items, try timeline.state(at: n).numberOfAllItems) })
    }
    times.sort()
    let median = times[times.count / 2] * 1000
    let memory = try ReplayBench.childMemory(path)

    print("| figure | value | required |")
    print("|---|---:|---|")
    print(
      "| log | \(logBytes.formatted()) B (\(fmt(Double(logBytes) / Double(count))) B/event) | |")
    print(
      "| index file | \(indexBytes.formatted()) B (\(fmt(Double(indexBytes) / Double(logBytes))) × the log) | |"
    )
    print("| open, scanning every frame (no index) | \(fmt(scanOpen * 1000)) ms | |")
    print(
      "| open with a valid index (best of 5) | \(fmt(indexedOpen * 1000)) ms | no scan of the frames it covers |"
    )
    print("| full replay | \(fmt(replay)) s (\(fmt0(Double(count) / replay)) events/s) | |")
    let ratio = build / replay
    print(
      "| index build for a fresh copy | \(fmt(build)) s = \(fmt(ratio)) × replay | "
        + "at replay speed (≤ 1.25 ×): \(met(ratio <= 1.25)) |")
    print(
      "| state at a random event, median of 41 (up to \(items.formatted()) items) | \(fmt(median)) ms | "
        + "≤ 20 ms: \(met(median <= 20)) |")
    if let memory {
      let limit = 2 * memory.state + 16 << 20
      print(
        "| replay peak memory above baseline | \(ReplayBench.mib(memory.replayPeak)) | ≤ 2 × state "
          + "(\(ReplayBench.mib(memory.state))) + 16 MiB = \(ReplayBench.mib(limit)): "
          + "\(met(memory.replayPeak <= limit)) |")
    }
    print("")
  }

  /// Records the large session once (kept in the bench's directory between runs).
  static func writeLarge(_ path: String, events: Int, outline: Int) throws {
    if let t = try? Timeline(path: path), t.eventCount == events, t.damage == nil,
      t.formatMajor == 2
    {
      return
    }
    try? FileManager.default.removeItem(atPath: path)
    try? FileManager.default.removeItem(atPath: LogIndex.path(forLog: path))
    let recorder = try Recorder.open(path: path, fsync: .never)
    try SampleSession.generate(
      events: events, seed: 5, maxItems: outline * 11 / 10,
      opening: .outline(items: outline, shape: .uuid)
    ) { _ = try recorder.record($0) }
    try recorder.close()
  }

  /// Runs a shell command, failing on a non-zero exit.
  static func shell(_ command: String) throws {
    let p = Process()
    p.executableURL = URL(fileURLWithPath: "/bin/sh")
    p.arguments = ["-c", command]
    try p.run()
    p.waitUntilExit()
    guard p.terminationStatus == 0 else {
      throw ShellFailure(command: command, status: p.terminationStatus)
    }
  }
}

/// A shell command the bench ran exited with a non-zero status.
struct ShellFailure: Error {
  var command: String
  var status: Int32
}

/// `listtape-bench __fuzz-seeds DIR`: the 2.0 seed inputs of Tools/fuzz (small files, kept
/// in Tools/fuzz/corpus/<target>).
enum FuzzSeeds {
  static func write(_ dir: String) throws {
    for target in [
      "log-reader", "index-reader", "event-decoder", "checkpoint-decoder", "json-line",
    ] {
      try FileManager.default.createDirectory(
        atPath: dir + "/" + target, withIntermediateDirectories: true)
    }
    func save(_ target: String, _ name: String, _ bytes: [UInt8]) {
      _ = FileManager.default.createFile(atPath: "\(dir)/\(target)/\(name)", contents: Data(bytes))
    }
    // A small 2.0 log with dictionary restarts and checkpoints, and its index.
    let scratch = NSTemporaryDirectory() + "listtape-fuzz-seeds-\(getpid())"
    try? FileManager.default.createDirectory(atPath: scratch, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: scratch) }
    let log = scratch + "/v2.ltape"
    var options = Recorder.options(.never)
    options.maxEventsPerFrame = 200
    let recorder = try Recorder.open(path: log, options: options)
    recorder.restartSlack = 16
    var lines: [String] = []
    try SampleSession.generate(
      events: 1_500, seed: 3, maxItems: 60, opening: .outline(items: 40, shape: .uuid)
    ) { e in
      _ = try recorder.record(e)
      if lines.count < 40 { lines.append(e.jsonLine) }
    }
    try recorder.close()
    /// Saves `file` as a log-reader seed named `name`, and its index (a seek point every
    /// 300 events) as an index-reader one.
    func saveWithIndex(_ file: String, _ name: String) throws {
      save("log-reader", name, try [UInt8](Data(contentsOf: URL(fileURLWithPath: file))))
      let timeline = try Timeline(path: file)
      timeline.indexSpacing = 300
      try timeline.buildIndex()
      save(
        "index-reader", name + ".idx",
        try [UInt8](Data(contentsOf: URL(fileURLWithPath: LogIndex.path(forLog: file)))))
    }
    try saveWithIndex(log, "v2-restarts.ltape")
    // Event frames and dictionary restarts, inflated, behind the target's two leading bytes.
    var n = 0
    try LogReader(path: log).forEachFrame(from: 1) { view in
      n += 1
      switch view.kind {
      case .events:
        save("event-decoder", "frame-\(n)", [0, UInt8(view.eventCount - 1)] + Array(view.payload))
      case .dictionary: save("event-decoder", "restart-\(n)", [1, 0] + Array(view.payload))
      case .checkpoint: break
      }
      return n < 12
    }
    // A log whose events have sites (layout 3: coded against the segment's site model),
    // and its first event frames: the first starts the model, the others go on with it.
    let sited = scratch + "/v2-sites.ltape"
    let siteRecorder = try Recorder.open(path: sited, options: options)
    try SampleSession.generate(
      events: 1_200, seed: 5, maxItems: 60, opening: .outline(items: 40, shape: .path),
      sites: .init(count: 30)
    ) { e in _ = try siteRecorder.record(e) }
    try siteRecorder.close()
    // Its index holds the site model at each seek point.
    try saveWithIndex(sited, "v2-sites.ltape")
    var k = 0
    try LogReader(path: sited).forEachFrame(from: 1) { view in
      if view.kind == .events {
        k += 1
        save(
          "event-decoder", "sited-frame-\(k)",
          [0, UInt8(view.eventCount - 1)] + Array(view.payload))
      }
      return k < 3
    }
    // States whose ids are the target's dictionary (i0...i511), compact and canonical.
    var state = ListState()
    state.setAllowsMultipleSelection(true)
    try state.appendSections(["i0", "i1"])
    var next = 2
    func node(_ depth: Int) -> OutlineNode {
      let id = "i\(next)"
      next += 1
      var n = OutlineNode(id, title: next % 3 == 0 ? "Title \(next)" : nil)
      if next % 5 == 0 { n.fields = ["badge": "\(next % 9)"] }
      if depth < 3 && next < 400 { n.children = (0..<3).map { _ in node(depth + 1) } }
      n.expanded = next % 2 == 0
      return n
    }
    try state.appendItems((0..<6).map { _ in node(0) }, toSection: "i0")
    try state.appendItems((0..<4).map { _ in node(1) }, toSection: "i1")
    try? state.select(["i3", "i4"])
    var table = IdTable()
    for i in 0..<512 { table.add("i\(i)") }
    let compact = try state.compactEncoded(
      segment: 0, dictionaryCount: 512, table: table)
    save("checkpoint-decoder", "compact", compact.bytes)
    save("checkpoint-decoder", "canonical", state.encoded())
    for (i, line) in lines.enumerated() { save("json-line", "line-\(i)", Array(line.utf8)) }
  }
}

/// `listtape-bench __seek-parts LOG [SAMPLES]`: where a seek's time goes on a 2.0 log with an
/// index (built first if missing): reading the dictionary, inflating the state, loading it,
/// and folding to the target; medians over SAMPLES random events (21 unless given).
enum SeekParts {
  /// Medians over `samples` random events: reading the dictionary at the seek point, inflating
  /// its state alone, inflating and loading it (as a seek does: the two overlap), the whole
  /// seek (a fresh timeline's `state(at:)`), and the events it folded past the seek point;
  /// seconds, and a count.
  struct Figures {
    var dictionary = 0.0
    var inflate = 0.0
    var load = 0.0
    var seek = 0.0
    var folded = 0
  }

  static func measure(_ path: String, samples: Int = 21) throws -> Figures {
    let timeline = try Timeline(path: path)
    if timeline.indexBytes == nil { try timeline.buildIndex() }
    let reopened = try Timeline(path: path)
    let reader = try LogReader(path: path)
    guard let index = reader.index else { return Figures() }
    var rng = Rng(seed: 9)
    var parts: [[Double]] = [[], [], [], [], []]
    for _ in 0..<max(1, samples) {
      let n = 1 + rng.below(reopened.eventCount)
      guard let p = index.seekPoint(atOrBefore: UInt64(n)) else { continue }
      var t = Clock.now()
      let dictionary = try Self.dictionary(index, at: p)
      parts[0].append(Clock.now() - t)
      t = Clock.now()
      let blob = try index.state(at: p)
      parts[1].append(Clock.now() - t)
      precondition(!blob.isEmpty)
      t = Clock.now()
      let state = try index.loadState(at: p, ids: CompactIDs(dictionary)).get()
      parts[2].append(Clock.now() - t)
      t = Clock.now()
      _ = try reopened.state(at: n)
      parts[3].append(Clock.now() - t)
      parts[4].append(Double(n - Int(p.seq)))
      precondition(state.numberOfAllItems >= 0)
    }
    guard !parts[0].isEmpty else { return Figures() }
    func median(_ v: [Double]) -> Double { v.sorted()[v.count / 2] }
    return Figures(
      dictionary: median(parts[0]), inflate: median(parts[1]), load: median(parts[2]),
      seek: median(parts[3]), folded: Int(median(parts[4])))
  }

  /// The dictionary a seek at `p` reads.
  static func dictionary(_ index: LogIndex, at p: IndexSeekPoint) throws -> IdSpace {
    let (stored, ends) = try index.dictionary(at: p)
    return try IdSpace(stored: stored, ends: ends)
  }

  /// The state an index stores (`blob`, inflated) over `dictionary`.
  static func state(_ blob: [UInt8], _ dictionary: IdSpace) throws -> ListState {
    try blob.withUnsafeBytes {
      try ListState(
        compact: $0, ids: dictionary,
        aliases: DefinitionAliases(vetted: dictionary.count, map: [:]))
    }
  }

  /// `listtape-bench __state-load LOG [RUNS]`: the dictionary read and state load of the
  /// last seek point, `RUNS` times in a row (for a profiler), with the median of each.
  static func loop(_ path: String, runs: Int) throws {
    let reader = try LogReader(path: path)
    guard let index = reader.index, let p = index.seekPoint(atOrBefore: UInt64.max) else {
      print("no index: run a command that builds it first")
      return
    }
    var dictionaryTimes: [Double] = []
    var loadTimes: [Double] = []
    for _ in 0..<max(1, runs) {
      var t = Clock.now()
      let dictionary = try Self.dictionary(index, at: p)
      dictionaryTimes.append(Clock.now() - t)
      t = Clock.now()
      let state = try index.loadState(at: p, ids: CompactIDs(dictionary)).get()
      loadTimes.append(Clock.now() - t)
      precondition(state.numberOfAllItems >= 0)
    }
    func median(_ v: [Double]) -> Double { v.sorted()[v.count / 2] }
    print(
      "dictionary \(fmt(median(dictionaryTimes) * 1000)) ms, "
        + "inflate and load \(fmt(median(loadTimes) * 1000)) ms (medians of \(runs))")
  }

  /// `listtape-bench __image LOG DIR`: the state at the index's last seek point as the
  /// forest holds it in memory, one file per array in DIR, with the sizes and the time of
  /// one copy of them all (what a state stored to load by one copy would cost to store).
  static func image(_ path: String, to directory: String) throws {
    let reader = try LogReader(path: path)
    guard let index = reader.index, let p = index.seekPoint(atOrBefore: UInt64.max) else {
      print("no index: run a command that builds it first")
      return
    }
    let state = try Self.state(try index.state(at: p), try Self.dictionary(index, at: p))
    let image = state.memoryImage()
    var total = 0
    for (name, bytes) in image {
      try Data(bytes).write(to: URL(fileURLWithPath: directory + "/" + name))
      print("\(name): \(bytes.count) bytes")
      total += bytes.count
    }
    var times: [Double] = []
    for _ in 0..<21 {
      let t = Clock.now()
      var copies: [[UInt8]] = []
      for (_, bytes) in image {
        let copy = [UInt8](unsafeUninitializedCapacity: bytes.count) { to, n in
          bytes.withUnsafeBufferPointer { from in
            if let s = from.baseAddress { to.baseAddress?.update(from: s, count: from.count) }
          }
          n = bytes.count
        }
        copies.append(copy)
      }
      times.append(Clock.now() - t)
      precondition(copies.count == image.count)
    }
    print(
      "\(state.numberOfAllItems) items: \(total) bytes, one copy \(fmt(times.sorted()[10] * 1000)) ms "
        + "(memory the allocator reuses from the copy before, median of 21)")
  }

  static func run(_ path: String, samples: Int = 21) throws {
    let f = try measure(path, samples: samples)
    print(
      "dictionary \(fmt(f.dictionary * 1000)) ms, state inflate alone \(fmt(f.inflate * 1000)) ms, "
        + "state inflate + load \(fmt(f.load * 1000)) ms, whole seek \(fmt(f.seek * 1000)) ms, "
        + "events folded \(f.folded) (medians of \(samples))")
  }
}

/// `listtape-bench __encode-parts LOG`: what writing one seek point costs, on the state at
/// the index's last seek point: encoding it, and the copy the fold's thread makes for the
/// thread that encodes it (medians of 9).
enum EncodeParts {
  static func run(_ path: String) throws {
    let timeline = try Timeline(path: path)
    if timeline.indexBytes == nil { try timeline.buildIndex() }
    let reader = try LogReader(path: path)
    guard let index = reader.index, let p = index.seekPoint(atOrBefore: UInt64.max) else { return }
    // Median time of 9 encodings of `state` at `p`, and its size.
    func encode(_ state: ListState) throws -> (ms: Double, bytes: Int) {
      var times: [Double] = []
      var bytes = 0
      for _ in 0..<9 {
        let t = Clock.now()
        bytes = try state.compactEncoded(segment: p.segment, dictionaryCount: p.dictionaryCount)
          .bytes.count
        times.append(Clock.now() - t)
      }
      return (times.sorted()[4] * 1000, bytes)
    }
    let state = try SeekParts.state(try index.state(at: p), try SeekParts.dictionary(index, at: p))
    let loaded = try encode(state)
    print(
      String(
        format: "%d items: encode %.2f ms, %d bytes", state.numberOfAllItems, loaded.ms,
        loaded.bytes))
    // The same point's state as the index build holds it: folded from the log's start.
    var folded = ListState()
    var decoder = timeline.startDecoder()
    try timeline.fold(&folded, &decoder, from: 1, through: Int(p.seq)) { _, _, _, _ in true }
    let scattered = try encode(folded)
    print(String(format: "as folded: encode %.2f ms, %d bytes", scattered.ms, scattered.bytes))
    // What the index build's fold thread spends on each point: the copy another thread
    // encodes (`CompactImage`).
    var copies: [Double] = []
    for _ in 0..<9 {
      let t = Clock.now()
      let image = CompactImage(folded)
      copies.append(Clock.now() - t)
      withExtendedLifetime(image) {}
    }
    print(String(format: "as folded: copy for another thread %.2f ms", copies.sorted()[4] * 1000))
  }
}

/// `listtape-bench __noindex-parts LOG [N]`: where a one-shot seek's wall time goes on a 2.0
/// log without an index (the log's own checkpoints): the log opened, the segment's
/// definitions read up to the checkpoint, the checkpoint loaded over them, the fold to the
/// target, and the state's JSON written; medians of 9 random events (or 9 seeks to N), each
/// on a fresh timeline.
enum NoIndexParts {
  static func run(_ path: String, at fixed: Int? = nil) throws {
    var rng = Rng(seed: 5)
    var parts: [[Double]] = [[], [], [], [], [], []]
    for _ in 0..<9 {
      let opened = Clock.now()
      let timeline = try Timeline(path: path)
      parts[5].append(Clock.now() - opened)
      precondition(timeline.indexBytes == nil, "remove the index first")
      let n = fixed ?? 1 + rng.below(timeline.eventCount)
      let cpSeq = timeline.checkpointSeq(atOrBefore: n)
      var t = Clock.now()
      _ = try timeline.decoder(after: cpSeq)
      parts[0].append(Clock.now() - t)
      t = Clock.now()
      guard var cp = try timeline.logCheckpoint(atOrBefore: n) else { continue }
      parts[1].append(Clock.now() - t)
      t = Clock.now()
      try timeline.fold(&cp.state, &cp.decoder, from: cp.seq + 1, through: n) { _, _, _, _ in true }
      parts[2].append(Clock.now() - t)
      parts[4].append(Double(n - cp.seq))
      t = Clock.now()
      var w = JSONWriter()
      var bytes = 0
      cp.state.writeJSON(event: n, to: &w, drain: { bytes += $0.count })
      parts[3].append(Clock.now() - t)
    }
    func median(_ v: [Double]) -> Double { v.sorted()[v.count / 2] }
    print(
      String(
        format: "open %.1f ms, definitions %.1f ms, checkpoint (definitions + load) %.1f ms,"
          + " fold %.1f ms (%.0f events), JSON %.1f ms",
        median(parts[5]) * 1e3, median(parts[0]) * 1e3, median(parts[1]) * 1e3,
        median(parts[2]) * 1e3, median(parts[4]), median(parts[3]) * 1e3))
  }
}

/// `listtape-bench __deltas LOG [SPACING]`: how much of the state a seek point written as
/// what changed would hold (issue 28.3's design): at every SPACING events (49,152 by
/// default) of a fold from the start, the items whose placement (section, parent, previous
/// sibling) or content differ from the state 1, 2 and 4 points before (items added and
/// removed counted), and those whose flags alone differ; as a share of the items then. And
/// what a delta of item records would take in a log (each changed item's section, parent,
/// item before it, flags and text; ids numbered as met), deflated at the log's level, beside
/// the full compact state at that point deflated the same way.
enum DeltaShare {
  struct Placed: Equatable {
    var section: String
    var parent: String?
    var after: String?
    var expanded: Bool
    var selected: Bool
    var title: String?
    var fields: [String: String]?
  }

  static func snapshot(_ state: ListState) -> [String: Placed] {
    var out: [String: Placed] = [:]
    out.reserveCapacity(state.numberOfAllItems)
    for s in state.sections {
      let section = state.id(of: s)
      var lastChild: [String: String] = [:]
      var lastRoot: String?
      for r in state.rows(in: s) {
        let after = r.parent.map { lastChild[$0] } ?? lastRoot
        out[r.id] = Placed(
          section: section, parent: r.parent, after: after, expanded: r.expanded,
          selected: r.isSelected, title: r.title, fields: r.fields)
        if let p = r.parent { lastChild[p] = r.id } else { lastRoot = r.id }
      }
    }
    return out
  }

  /// Items of `b` placed or filled otherwise than in `a` (added and removed ones counted),
  /// and items whose flags alone differ.
  static func changed(_ a: [String: Placed], _ b: [String: Placed]) -> (
    moved: Int, flagsOnly: Int
  ) {
    var moved = 0
    var flags = 0
    for (id, placed) in b {
      guard let before = a[id] else {
        moved += 1
        continue
      }
      guard before != placed else { continue }
      if before.section == placed.section && before.parent == placed.parent
        && before.after == placed.after && before.title == placed.title
        && before.fields == placed.fields
      {
        flags += 1
      } else {
        moved += 1
      }
    }
    for id in a.keys where b[id] == nil { moved += 1 }
    return (moved, flags)
  }

  /// The records that turn `a` into `b`, deflated at zlib level 4: per item placed or
  /// filled otherwise (or new), its number, section, parent, the item before it (numbers,
  /// 0 for none), flags and text; per item whose flags alone changed, its number and flags;
  /// per item gone, its number. Ids are numbered in `numbers` as first met.
  static func deltaBytes(
    _ a: [String: Placed], _ b: [String: Placed], _ numbers: inout [String: Int]
  ) -> Int {
    func n(_ id: String?) -> Int {
      guard let id else { return 0 }
      if let k = numbers[id] { return k }
      let k = numbers.count + 1
      numbers[id] = k
      return k
    }
    var placed: [(Int, Placed)] = []
    var flagged: [(Int, Placed)] = []
    var gone: [Int] = []
    for (id, p) in b {
      guard let before = a[id] else {
        placed.append((n(id), p))
        continue
      }
      guard before != p else { continue }
      var same = before
      same.expanded = p.expanded
      same.selected = p.selected
      if same == p { flagged.append((n(id), p)) } else { placed.append((n(id), p)) }
    }
    for id in a.keys where b[id] == nil { gone.append(n(id)) }
    var out: [UInt8] = []
    func count(_ v: Int) { appendVarint(UInt64(v), &out) }
    func flags(_ p: Placed) -> UInt8 {
      (p.expanded ? 1 : 0) | (p.selected ? 2 : 0) | (p.title != nil ? 4 : 0)
        | (p.fields != nil ? 8 : 0)
    }
    func text(_ t: String) {
      count(t.utf8.count)
      out.append(contentsOf: t.utf8)
    }
    count(placed.count)
    for (k, p) in placed.sorted(by: { $0.0 < $1.0 }) {
      count(k)
      count(n(p.section))
      count(n(p.parent))
      count(n(p.after))
      out.append(flags(p))
      if let t = p.title { text(t) }
      if let f = p.fields {
        count(f.count)
        for (key, value) in f.sorted(by: { $0.key < $1.key }) {
          text(key)
          text(value)
        }
      }
    }
    count(flagged.count)
    for (k, p) in flagged.sorted(by: { $0.0 < $1.0 }) {
      count(k)
      out.append(flags(p))
    }
    count(gone.count)
    for k in gone.sorted() { count(k) }
    return DeflateBench.zlibSize(out, level: 4)
  }

  static func run(_ path: String, spacing: Int) throws {
    let timeline = try Timeline(path: path)
    var state = ListState()
    var decoder = timeline.startDecoder()
    var points: [[String: Placed]] = []
    var numbers: [String: Int] = [:]
    print(
      "| point | event | items | placed or filled otherwise, since 1 point | 2 points |"
        + " 4 points | flags alone, since 1 point | delta since 1 point | since 4 points |"
        + " full state |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    var next = spacing
    var k = 0
    try timeline.fold(&state, &decoder, from: 1, through: timeline.eventCount) {
      ops, i, _, state in
      let seq = ops.seqs[i]
      guard seq == next else { return true }
      next += spacing
      let now = snapshot(state)
      let items = now.count
      func share(_ back: Int, flags: Bool = false) -> String {
        guard points.count >= back else { return "—" }
        let c = changed(points[points.count - back], now)
        let n = flags ? c.flagsOnly : c.moved
        return String(format: "%d (%.1f %%)", n, 100 * Double(n) / Double(max(items, 1)))
      }
      func delta(_ back: Int) -> String {
        guard points.count >= back else { return "—" }
        return "\(deltaBytes(points[points.count - back], now, &numbers)) B"
      }
      let full =
        (try? state.compactEncoded(segment: 0, dictionaryCount: state.ids.count))
        .map { "\(DeflateBench.zlibSize($0.bytes, level: 4)) B" } ?? "—"
      k += 1
      print(
        "| \(k) | \(seq) | \(items) | \(share(1)) | \(share(2)) | \(share(4))"
          + " | \(share(1, flags: true)) | \(delta(1)) | \(delta(4)) | \(full) |")
      points.append(now)
      if points.count > 4 { points.removeFirst() }
      return true
    }
  }
}

/// `listtape-bench __json LOG N`: what writing the state at event N as compact JSON costs in
/// process, streamed in pieces (two threads for a large state, as `show --json` writes it)
/// and into one buffer (one thread); medians of 21.
enum JSONParts {
  static func run(_ path: String, at n: Int) throws {
    let state = try Timeline(path: path).state(at: n)
    let streamed = DeflateBench.median {
      var w = JSONWriter()
      var bytes = 0
      state.writeJSON(event: n, to: &w, drain: { bytes += $0.count })
      return bytes + w.bytes.count
    }
    let whole = DeflateBench.median {
      var w = JSONWriter()
      state.writeJSON(event: n, to: &w)
      return w.bytes.count
    }
    print(
      String(
        format: "%d items, %d bytes: streamed %.2f ms, one buffer %.2f ms (medians of 21)",
        state.numberOfAllItems, streamed.0, streamed.1 * 1000, whole.1 * 1000))
  }
}

/// Appends `v` as LEB128 (the logs' varints) to `out`: the bench's own encoders' one writer.
func appendVarint(_ v: UInt64, _ out: inout [UInt8]) {
  var v = v
  while v >= 0x80 {
    out.append(UInt8(truncatingIfNeeded: v) | 0x80)
    v >>= 7
  }
  out.append(UInt8(v))
}
