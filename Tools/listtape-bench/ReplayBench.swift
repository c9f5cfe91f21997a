import Foundation
import ListTapeInvestigate
import ListTapeJSON
import ListTapeLog
import ListTapeModel
import ListTapeRead
import ListTapeSamples
import ListTapeStore

/// Issues 3, 4 and 5's figures on realistic sessions (SampleSession: the seed apps scaled
/// up plus random valid edits, with times), measured end to end through the public API.
enum ReplayBench {
  static let directory: String = {
    let d = NSTemporaryDirectory() + "listtape-bench"
    try? FileManager.default.createDirectory(atPath: d, withIntermediateDirectories: true)
    return d
  }()

  static func run(quick: Bool) {
    do {
      try logFigures(events: quick ? 200_000 : 1_000_000)
      try largeLogFigures(events: quick ? 1_000_000 : 10_000_000, maxItems: 100_000)
    } catch {
      print("replay benchmark failed: \(error)")
    }
  }

  // MARK: Issue 3 and 4: size, recording, replay

  static func logFigures(events count: Int) throws {
    print("## Log: a realistic \(count.formatted())-event session\n")
    var events: [Event] = []
    events.reserveCapacity(count)
    SampleSession.generate(events: count, seed: 1) { events.append($0) }

    // JSON Lines and gzip -6 of them, the size yardstick.
    let jsonl = directory + "/session.jsonl"
    var w = JSONWriter(reservingCapacity: count * 80)
    for e in events {
      e.encode(to: &w)
      w.endLine()
    }
    _ = FileManager.default.createFile(atPath: jsonl, contents: Data(w.bytes))
    let jsonBytes = w.bytes.count
    let gzipBytes = try gzipSize(jsonl)

    // Recording through the log writer's Swift API, default fsync policy (interval).
    var encoder = EventEncoder()
    var records: [[UInt8]] = []
    records.reserveCapacity(count)
    for e in events { records.append(try encoder.encode(e)) }
    let rawPath = directory + "/writer.ltape"
    try? FileManager.default.removeItem(atPath: rawPath)
    let writeTime = try Clock.measure {
      let writer = try LogWriter.open(path: rawPath)
      for r in records { try writer.append(r) }
      try writer.close()
    }

    // Recording through the Recorder (encode, append, fold, checkpoints), as apps and
    // `listtape record` do.
    let logPath = directory + "/session.ltape"
    try? FileManager.default.removeItem(atPath: logPath)
    let recordTime = try Clock.measure {
      let recorder = try Recorder.open(path: logPath)
      for e in events { _ = try recorder.record(e) }
      try recorder.close()
    }
    let logBytes = fileSize(logPath)

    // JSON Lines → log, the `listtape record` pipeline, in process.
    let pipePath = directory + "/pipeline.ltape"
    try? FileManager.default.removeItem(atPath: pipePath)
    let pipelineTime = try recordJSONLines(jsonl, to: pipePath)
    let binaryTime = try recordWithBinary(jsonl)

    // Full replay (read, inflate, decode, fold) against inflate alone.
    let timeline = try Timeline(path: logPath)
    var finalRows = 0
    // Best of three each, as the model bench: a busy neighbour should not decide.
    let replayTime = try Clock.best {
      let (state, _) = try timeline.replay(through: .max) { _, _, _ in true }
      finalRows = state.numberOfItems
    }
    let reader = try LogReader(path: logPath)
    var inflatedBytes = 0
    let inflateTime = try Clock.best { inflatedBytes = try reader.inflateAllEventFrames() }
    // What is left once reading, inflating and decoding cost nothing.
    let foldTime = DecodedFold.best(events)

    let ratio = Double(logBytes) / Double(gzipBytes)
    print("| figure | value | required |")
    print("|---|---:|---|")
    print("| JSON Lines | \(jsonBytes.formatted()) B | |")
    print("| gzip -6 of the JSON Lines | \(gzipBytes.formatted()) B | |")
    print(
      "| ListTape log | \(logBytes.formatted()) B (\(fmt(Double(logBytes) / Double(count))) B/event) | "
        + "≤ 0.5 × gzip: \(fmt(ratio)) × \(ratio <= 0.5 ? "met" : "NOT met") |")
    let writeRate = Double(count) / writeTime
    print(
      "| LogWriter.append, fsync interval | \(fmt0(writeRate)) events/s | ≥ 1,000,000: "
        + "\(writeRate >= 1e6 ? "met" : "NOT met") |")
    print(
      "| Recorder.record (encode + append + fold) | \(fmt0(Double(count) / recordTime)) events/s | |"
    )
    let pipeRate = Double(count) / pipelineTime
    print(
      "| JSON Lines → log in process (parse + record) | \(fmt0(pipeRate)) lines/s | ≥ 300,000: "
        + "\(pipeRate >= 300_000 ? "met" : "NOT met") |")
    if let binaryTime {
      let r = Double(count) / binaryTime
      print(
        "| `listtape record` binary, file on stdin | \(fmt0(r)) lines/s | ≥ 300,000: "
          + "\(r >= 300_000 ? "met" : "NOT met") |")
    }
    let replayRate = Double(count) / replayTime
    print(
      "| full replay (read, inflate, decode, fold) | \(fmt0(replayRate)) events/s | ≥ 3,000,000: "
        + "\(replayRate >= 3e6 ? "met" : "NOT met") |")
    let vsInflate = replayTime / inflateTime
    print(
      "| replay ÷ zlib inflate of the same frames (\(inflatedBytes.formatted()) B) | "
        + "\(fmt(vsInflate)) × (\(fmt(replayTime)) s ÷ \(fmt(inflateTime)) s) | ≤ 3 ×: "
        + "\(vsInflate <= 3 ? "met" : "NOT met") |")
    print(
      "| the fold alone, events already decoded in memory (the floor under a replay) | "
        + "\(fmt(foldTime)) s = \(fmt(foldTime / inflateTime)) × inflate | |")
    print("\nfinal visible rows: \(finalRows)\n")
  }

  // MARK: Issue 3 and 5 on a long log

  static func largeLogFigures(events count: Int, maxItems: Int) throws {
    print("## A \(count.formatted())-event session (list of up to \(maxItems.formatted()) items)\n")
    let planted = count * 9 / 10
    let a = directory + "/large-\(count)-v3-a.ltape"
    let b = directory + "/large-\(count)-v3-b.ltape"
    let generate = try Clock.measure {
      try writeLarge(a, events: count, maxItems: maxItems, planted: planted, bug: true)
      try writeLarge(b, events: count, maxItems: maxItems, planted: planted, bug: false)
    }
    print(
      "(generated and recorded both logs in \(fmt(generate)) s; \(fileSize(a).formatted()) B each)\n"
    )

    // State at a random event, after open.
    let openStart = Clock.now()
    let timeline = try Timeline(path: a)
    let openTime = Clock.now() - openStart
    var rng = Rng(seed: 42)
    var times: [Double] = []
    var items = 0
    for _ in 0..<41 {
      let n = 1 + rng.below(timeline.eventCount)
      times.append(
        try Clock.measure {
          items = max(items, try timeline.state(at: n).numberOfAllItems)
        })
    }
    times.sort()
    let median = times[times.count / 2] * 1000

    // Replay and its memory, in child processes so the peaks are the replay's own.
    let replay = try Clock.measure { _ = try timeline.replay(through: .max) { _, _, _ in true } }
    let memory = try childMemory(a)

    // bisect, find, diverge.
    let query = try Query("count(sections) == 6")
    var result: BisectResult?
    let bisectTime = try Clock.measure {
      result = try Bisect.run(timeline, scanInterval: true) { _, s in
        query.holds(in: s) ? .bad : .good
      }
    }
    var changes = 0
    let findTime = try Clock.measure {
      changes = try Find.changes(timeline, query: query) { _, _ in }.changes
    }
    let other = try Timeline(path: b)
    var divergence: Divergence?
    let divergeTime = try Clock.measure { divergence = try Diverge.find(timeline, other) }

    print("| figure | value | required |")
    print("|---|---:|---|")
    print("| open (scan \(fileSize(a).formatted()) B) | \(fmt(openTime * 1000)) ms | |")
    print(
      "| state at a random event (median of 41, up to \(items.formatted()) items) | \(fmt(median)) ms | "
        + "≤ 20 ms: \(median <= 20 ? "met" : "NOT met") |")
    print("| full replay | \(fmt(replay)) s (\(fmt0(Double(count) / replay)) events/s) | |")
    if let memory {
      let limit = 2 * memory.state + 16 << 20
      print(
        "| replay peak memory above baseline | \(mib(memory.replayPeak)) | ≤ 2 × state "
          + "(\(mib(memory.state))) + 16 MiB = \(mib(limit)): "
          + "\(memory.replayPeak <= limit ? "met" : "NOT met") |")
    }
    if let result {
      let ok = bisectTime <= 1 && result.probes.count <= 40 && result.first == planted
      print(
        "| bisect --where (answer \(result.first.map(String.init) ?? "none"), planted \(planted)) | "
          + "\(fmt(bisectTime)) s, \(result.probes.count) states (\(result.seeks) seeks) | "
          + "≤ 1 s and ≤ 40 states: \(ok ? "met" : "NOT met") |")
    }
    let findRatio = findTime / replay
    print(
      "| find --where (\(changes) change) | \(fmt(findTime)) s = \(fmt(findRatio)) × replay | "
        + "≤ 1.5 ×: \(findRatio <= 1.5 ? "met" : "NOT met") |")
    if let divergence {
      let ok = divergeTime <= 2 && divergence.event == planted
      print(
        "| diverge (answer \(divergence.event.map(String.init) ?? "none")) | \(fmt(divergeTime)) s | "
          + "≤ 2 s: \(ok ? "met" : "NOT met") |")
    }
    print("")
  }

  /// Records a generated session, planting a sixth section (or a mark) at `planted`; kept
  /// between runs in the temporary directory.
  static func writeLarge(_ path: String, events: Int, maxItems: Int, planted: Int, bug: Bool)
    throws
  {
    if let t = try? Timeline(path: path), t.eventCount == events, t.damage == nil { return }
    try? FileManager.default.removeItem(atPath: path)
    let recorder = try Recorder.open(path: path, fsync: .never)
    var n = 0
    try SampleSession.generate(events: events - 1, seed: 5, maxItems: maxItems) { e in
      n += 1
      if n == planted {
        let op: ListOperation = bug ? .appendSections(["zzz-bug"]) : .mark("no bug here")
        _ = try recorder.record(Event(op, time: e.time))
        n += 1
      }
      _ = try recorder.record(e)
    }
    try recorder.close()
  }

  // MARK: Helpers

  static func fileSize(_ path: String) -> Int {
    (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? 0
  }

  static func mib(_ bytes: Int) -> String { String(format: "%.1f MiB", Double(bytes) / 1_048_576) }

  static func gzipSize(_ path: String) throws -> Int {
    let p = Process()
    p.executableURL = URL(fileURLWithPath: "/bin/sh")
    p.arguments = ["-c", "gzip -6 -c '\(path)' | wc -c"]
    let out = Pipe()
    p.standardOutput = out
    try p.run()
    let data = out.fileHandleForReading.readDataToEndOfFile()
    p.waitUntilExit()
    return Int(
      String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0
  }

  /// Times JSON Lines → log in process, as `listtape record` does it (LineReader, parse,
  /// Recorder).
  static func recordJSONLines(_ jsonl: String, to path: String) throws -> Double {
    try Clock.measure {
      let fd = open(jsonl, O_RDONLY)
      defer { close(fd) }
      var reader = LineReader(fileDescriptor: fd)
      let recorder = try Recorder.open(path: path)
      while let line = try reader.next() {
        guard case .text(_, let bytes) = line, !bytes.isEmpty else { continue }
        let event = try bytes.withUnsafeBytes { try Event(jsonLine: $0) }
        _ = try recorder.record(event)
      }
      try recorder.close()
    }
  }

  /// Times the release `listtape record` binary next to this one, if it was built.
  static func recordWithBinary(_ jsonl: String) throws -> Double? {
    let binary = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
      .appendingPathComponent("listtape").path
    guard FileManager.default.isExecutableFile(atPath: binary) else { return nil }
    let log = directory + "/binary.ltape"
    try? FileManager.default.removeItem(atPath: log)
    let p = Process()
    p.executableURL = URL(fileURLWithPath: binary)
    p.arguments = ["record", log]
    p.standardInput = FileHandle(forReadingAtPath: jsonl)
    p.standardError = FileHandle.nullDevice
    p.standardOutput = FileHandle.nullDevice
    let start = Clock.now()
    try p.run()
    p.waitUntilExit()
    return Clock.now() - start
  }

  /// Peak resident memory of a child replaying the log, and the resident size of the
  /// final state in another child, each above its own baseline.
  static func childMemory(_ path: String) throws -> (replayPeak: Int, state: Int)? {
    func run(_ mode: String) throws -> [Int] {
      let p = Process()
      p.executableURL = URL(fileURLWithPath: CommandLine.arguments[0])
      p.arguments = [mode, path]
      let out = Pipe()
      p.standardOutput = out
      try p.run()
      let data = out.fileHandleForReading.readDataToEndOfFile()
      p.waitUntilExit()
      return String(decoding: data, as: UTF8.self).split(separator: " ").compactMap {
        Int($0.trimmingCharacters(in: .whitespacesAndNewlines))
      }
    }
    let replay = try run("__replay-memory")
    let state = try run("__state-memory")
    guard replay.count == 2, state.count == 2 else { return nil }
    return (replay[1] - replay[0], state[1] - state[0])
  }

  /// Child mode: prints baseline and peak resident bytes of a full replay.
  static func replayMemory(_ path: String) {
    let baseline = Memory.resident()
    guard let t = try? Timeline(path: path),
      (try? t.replay(through: .max) { _, _, _ in true }) != nil
    else { return }
    print(baseline, Memory.peak())
  }

  /// Child mode: prints baseline and resident bytes while holding the final state.
  static func stateMemory(_ path: String) {
    let baseline = Memory.resident()
    // Only the state stays: the timeline (its cache, the decoding thread's chunks) goes,
    // and the allocator hands freed pages back before the state is weighed.
    let state: ListState? = {
      guard let t = try? Timeline(path: path) else { return nil }
      return try? t.state(at: t.eventCount)
    }()
    guard let s = state else { return }
    #if os(Linux)
    _ = mallocTrim(0)
    #endif
    let resident = Memory.resident()
    print(baseline, resident, terminator: "")
    print(s.numberOfAllItems > -1 ? "" : " ")
  }
}

#if os(Linux)
/// glibc's malloc_trim (malloc.h is not in the Glibc module): returns freed pages to the OS.
@_silgen_name("malloc_trim") func mallocTrim(_ pad: Int) -> Int32
#endif

/// Resident memory from /proc (Linux) or getrusage.
enum Memory {
  static func resident() -> Int {
    #if os(Linux)
    if let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) {
      let fields = text.split(separator: " ")
      if fields.count > 1, let pages = Int(fields[1]) {
        return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
      }
    }
    #endif
    return peak()
  }

  /// Peak resident bytes of this process image. On Linux VmHWM (per address space): the
  /// rusage maximum survives exec and would report the parent's peak in a spawned child.
  static func peak() -> Int {
    #if os(Linux)
    if let text = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
      let line = text.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") }),
      let kb = Int(line.split(separator: " ").dropFirst().first ?? "")
    {
      return kb * 1024
    }
    #endif
    var usage = rusage()
    #if os(Linux)
    getrusage(RUSAGE_SELF.rawValue, &usage)
    return usage.ru_maxrss * 1024
    #else
    getrusage(RUSAGE_SELF, &usage)
    return usage.ru_maxrss
    #endif
  }
}
