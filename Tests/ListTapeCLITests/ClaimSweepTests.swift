import Foundation
import ListTapeJSON
import ListTapeLog
import ListTapeModel
import ListTapeRead
import ListTapeSamples
import Testing

@testable import ListTapeStore
@testable import listtape

#if canImport(Glibc)
import Glibc
#endif

/// Issue 31.5: the claims swept. Each frame of a long log is damaged in turn (no parity, so
/// the damage loses it), the log salvaged, and what every state-printing command claims is
/// compared with the undamaged log: no state called exact differs from the recorded one,
/// and every state that differs is labelled (`"exact": false`, `(not the recorded state)`,
/// `not exact`).
@Suite struct ClaimSweepTests {
  /// What a command run in this process printed.
  struct Ran {
    var out: String
    var err: String
    var code: Int32
  }

  /// Messages a command run in process wrote.
  final class Messages: @unchecked Sendable {
    private let lock = NSLock()
    private var text = ""
    func add(_ s: String) { lock.withLock { text += s } }
    var all: String { lock.withLock { text } }
  }

  /// Runs `listtape ARGS` in this process (thousands of runs: no process each), its
  /// messages captured rather than printed.
  static func run(_ args: [String]) throws -> Ran {
    let path = FileManager.default.temporaryDirectory
      .appendingPathComponent("listtape-sweep-\(UUID().uuidString)").path
    let fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0o600)
    #expect(fd >= 0)
    defer {
      close(fd)
      unlink(path)
    }
    let messages = Messages()
    func main() -> Int32 {
      guard let command = listtape.CLI.command(named: args[0]) else { return 64 }
      let out = Output(fileDescriptor: fd)
      defer { out.flush() }
      do throws(CLIError) {
        return try command.main(Array(args.dropFirst()), environment: [:], out: out)
      } catch {
        switch error {
        case .usage(let message, _):
          messages.add(message)
          return 64
        case .failure(let message, let code):
          messages.add(message)
          return code
        }
      }
    }
    let sink: @Sendable (String) -> Void = { messages.add($0) }
    let code = Diagnostics.$sink.withValue(sink, operation: main)
    let out = try String(contentsOfFile: path, encoding: .utf8)
    return Ran(out: out, err: messages.all, code: code)
  }

  static func object(_ line: Substring) throws -> JSONObject {
    guard case .object(let o) = try JSONParser.parse(String(line)) else {
      throw RecordFailed(message: "not an object: \(line)")
    }
    return o
  }

  /// The last line of a command's `--json` output, as an object.
  static func json(_ args: [String]) throws -> JSONObject {
    let r = try run(args)
    do {
      return try object(r.out.split(separator: "\n").last ?? "")
    } catch {
      throw RecordFailed(message: "\(args): exit \(r.code), \(r.err) \(r.out.suffix(300))")
    }
  }

  static func int(_ value: JSONValue?) -> Int? {
    if case .int(let n)? = value { return Int(n) }
    return nil
  }

  /// A JSON line without its `"exact":false` (to compare with the original's line).
  static func stripped(_ line: Substring) -> String {
    line.replacingOccurrences(of: #","exact":false"#, with: "")
  }

  /// The undamaged log and everything the commands say about it.
  struct Original {
    let dir: TempDir
    let path: String
    let events: [Event]
    /// `count(items)` after each event (0...count).
    var values: [Int] = []
    /// Two items that, once created, stay to the end, and the event that created each.
    var kept: [(id: String, first: Int)] = []
    /// An item many events touch.
    var touched = ""

    init() throws {
      dir = try TempDir()
      path = dir.path("original.ltape")
      var options = Recorder.options(.never)
      options.batchDelay = 3_600  // frames cut by count only: the same frames every run
      options.maxEventsPerFrame = 150
      options.maxEventsBetweenCheckpoints = 700
      options.minCheckpointSpacingBytes = 0
      options.parity = nil
      options.recoveryPointRatio = 2
      let recorder = try Recorder.open(path: path, options: options)
      recorder.restartSlack = 1 << 30
      var events: [Event] = []
      try SampleSession.generate(
        events: 4_000, seed: 41, maxItems: 300, opening: .outline(items: 200, shape: .uuid)
      ) { e in
        _ = try recorder.record(e)
        events.append(e)
      }
      try recorder.close()
      self.events = events
      var state = ListState()
      values = [0]
      var lastAbsent: [String: Int] = [:]
      var created: [String: Int] = [:]
      var touches: [String: Int] = [:]
      for (i, e) in events.enumerated() {
        try? state.apply(e)
        values.append(state.numberOfAllItems)
        for id in e.operation.itemIDs {
          touches[id, default: 0] += 1
          if created[id] == nil { created[id] = i + 1 }
        }
        for id in created.keys where !state.contains(id) { lastAbsent[id] = i + 1 }
      }
      // Items created once and never gone after (exists() turns true once, at creation).
      let stay = created.filter { id, at in (lastAbsent[id] ?? 0) < at && state.contains(id) }
        .sorted { $0.value < $1.value }
      let early = try #require(stay.first { $0.value > 1_000 })
      let late = try #require(stay.first { $0.value > 3_000 })
      kept = [(early.key, early.value), (late.key, late.value)]
      touched = try #require(
        touches.filter { state.contains($0.key) }.max { $0.value < $1.value }?.key)
    }

    /// The frames of the log: offset and length.
    func frames() throws -> [(offset: Int, length: Int, kind: String)] {
      let reader = try LogReader(path: path)
      var out: [(offset: Int, length: Int, kind: String)] = []
      var offset = reader.firstFrameOffset
      while offset < reader.validEnd {
        let f = try reader.frameSummary(at: offset)
        out.append((Int(offset), Int(f.length), f.kind.map { "\($0)" } ?? "other"))
        offset += f.length
      }
      return out
    }
  }

  /// What the commands say about one log, for the points a sweep looks at.
  struct Claims {
    var shows: [Int: String] = [:]
    var find: [Substring] = []
    var history: [Substring] = []
    var events: [Substring] = []
    var replay: JSONObject = [:]
    var diffs: [Int: JSONObject] = [:]
    var bisects: [String: JSONObject] = [:]
    var whatIf: JSONObject = [:]
    var swift: [Int: String] = [:]

    init(_ log: String, points: [Int], original o: Original) throws {
      for n in points { shows[n] = try run(["show", log, "--at", "\(n)", "--json"]).out }
      find = try run(["find", log, "--where", "count(items)", "--json"]).out
        .split(separator: "\n").dropLast()
      history = try run(["history", log, "--item", o.touched, "--json"]).out
        .split(separator: "\n")
      events = try run(["events", log, "--json", "--numbered"]).out.split(separator: "\n")
      replay = try json(["replay", log, "--json"])
      for n in stride(from: 0, to: 3_800, by: 950) {
        diffs[n] = try json(["diff", log, "--from", "\(n)", "--to", "\(n + 400)", "--json"])
      }
      for (id, _) in o.kept {
        bisects[id] = try json(["bisect", log, "--where", "exists(\"\(id)\")", "--json"])
      }
      whatIf = try json(["what-if", log, "--without", "2000-2010", "--at", "3500", "--json"])
      for n in [1_500, 3_900] {
        swift[n] = try run(["export", log, "--swift", "--at", "\(n)"]).out
          .split(separator: "\n").dropFirst(2).joined(separator: "\n")
      }
    }
  }

  @Test func noStateCalledExactDiffersAndEveryDifferentOneIsLabelled() throws {
    let o = try Original()
    let points = Array(stride(from: 0, through: 4_000, by: 97)) + [4_000]
    let reference = try Claims(o.path, points: points, original: o)
    let frames = try o.frames()
    #expect(frames.count >= 40)
    #expect(Set(frames.map(\.kind)).isSuperset(of: ["events", "checkpoint", "dictionary"]))
    let pristine = try [UInt8](Data(contentsOf: URL(fileURLWithPath: o.path)))
    var labelled = 0
    var lossy = 0
    for (i, frame) in frames.enumerated() {
      var bytes = pristine
      for j in (frame.offset + 36)..<(frame.offset + frame.length) { bytes[j] ^= 0x5A }
      let damaged = o.dir.path("damaged-\(i).ltape")
      try Data(bytes).write(to: URL(fileURLWithPath: damaged))
      let salvaged = o.dir.path("salvaged-\(i).ltape")
      let report = try Timeline.salvage(damaged, to: salvaged)
      let what = "frame \(i) (\(frame.kind) at \(frame.offset))"
      if !report.gaps.isEmpty { lossy += 1 }
      // Points near the gaps and recovery points too.
      let reader = try LogReader(path: salvaged)
      var near = Set(points)
      for g in reader.gaps {
        let a = Int(g.firstEvent)
        near.formUnion([a - 1, a, a + Int(g.count), a + Int(g.count) + 1])
      }
      for s in reader.exactStretches { near.formUnion([Int(s.start), Int(s.start) + 1]) }
      let extra = near.filter { (0...4_000).contains($0) }.sorted()
      var ref = reference
      for n in extra where ref.shows[n] == nil {
        ref.shows[n] = try Self.run(["show", o.path, "--at", "\(n)", "--json"]).out
      }
      let claims = try Claims(salvaged, points: extra, original: o)

      // show: a state without the label is the recorded one; one that differs is labelled.
      for n in extra {
        let said = try #require(claims.shows[n])
        let exact = !said.hasSuffix(",\"exact\":false}\n")
        if exact {
          #expect(said == ref.shows[n], "\(what): show --at \(n) called exact")
        } else {
          labelled += 1
        }
        if said != ref.shows[n] { #expect(!exact, "\(what): show --at \(n) differs unlabelled") }
      }
      // events: every event listed is the recorded one; an unlabelled one's state is exact,
      // as show says of it.
      let originalEvents = reference.events
      var exactAfter: [Int: Bool] = [:]
      for line in claims.events {
        let e = try Self.object(line)
        let n = try #require(Self.int(e["event"]))
        #expect(Self.stripped(line) == String(originalEvents[n - 1]), "\(what): event \(n)")
        exactAfter[n] = e["exact"] != .bool(false)
        if let said = claims.shows[n] {
          #expect(exactAfter[n] == !said.hasSuffix(",\"exact\":false}\n"), "\(what): event \(n)")
        }
      }
      // find: a change called exact is the original's value change; and where events says
      // both states around an event are exact, the original's change there is listed.
      let changes = try claims.find.map(Self.object)
      var listed = Set<Int>()
      for (line, c) in zip(claims.find, changes) {
        let n = try #require(Self.int(c["event"]))
        listed.insert(n)
        guard c["exact"] != .bool(false) else { continue }
        #expect(
          Self.int(c["from"]) == o.values[n - 1] && Self.int(c["to"]) == o.values[n],
          "\(what): find called exact: \(line)")
      }
      for n in 1...4_000 where o.values[n] != o.values[n - 1] {
        guard exactAfter[n] == true, n == 1 || exactAfter[n - 1] == true else { continue }
        #expect(listed.contains(n), "\(what): find misses the change at \(n)")
      }
      // history: an entry called exact is the original's entry.
      let originalHistory = Dictionary(
        reference.history.map { (Self.int(try? Self.object($0)["event"]) ?? -1, String($0)) },
        uniquingKeysWith: { a, _ in a })
      for line in claims.history {
        let h = try Self.object(line)
        guard h["exact"] != .bool(false), let n = Self.int(h["event"]) else { continue }
        #expect(String(line) == originalHistory[n], "\(what): history called exact at \(n)")
      }
      // replay: an exact end is the original's; its faults are the original's.
      if claims.replay["exact"] == .bool(true) {
        let through = Self.int(claims.replay["through"]) ?? 0
        let there =
          through == 4_000
          ? reference.replay : try Self.json(["replay", o.path, "--to", "\(through)", "--json"])
        for key in ["sectionCount", "itemCount", "visibleCount", "selectedCount"] {
          #expect(claims.replay[key] == there[key], "\(what): replay \(key) at \(through)")
        }
      }
      if case .array(let faults)? = claims.replay["faultsFound"],
        case .array(let all)? = reference.replay["faultsFound"]
      {
        for fault in faults { #expect(all.contains(fault), "\(what): replay fault \(fault)") }
      }
      // diff, bisect, what-if, export: an answer called exact is the original's.
      for (n, d) in claims.diffs where d["exact"] == .bool(true) {
        #expect(d["diff"] == reference.diffs[n]?["diff"], "\(what): diff from \(n)")
      }
      for (id, first) in o.kept {
        let b = try #require(claims.bisects[id])
        if b["exact"] == .bool(true) {
          #expect(Self.int(b["first"]) == first, "\(what): bisect exists(\(id))")
        } else if case .array(let ends)? = b["candidates"], ends.count == 2 {
          let range = (Self.int(ends[0]) ?? 0)...(Self.int(ends[1]) ?? 0)
          #expect(range.contains(first), "\(what): bisect candidates \(range) miss \(first)")
        } else {
          #expect(b["first"] == .null || Self.int(b["first"]) == first, "\(what): bisect \(b)")
        }
      }
      if claims.whatIf["exact"] == .bool(true) {
        for key in ["firstDifference", "faultsAppeared", "faultsVanished", "diff"] {
          #expect(claims.whatIf[key] == reference.whatIf[key], "\(what): what-if \(key)")
        }
      }
      for (n, source) in claims.swift where !source.isEmpty {
        let run = try Self.run(["export", salvaged, "--swift", "--at", "\(n)"])
        if !run.out.contains("NOT the recorded") {
          #expect(source == reference.swift[n], "\(what): export --swift --at \(n)")
        }
      }
      // diverge: the recorded states of the two logs are the same, so it never calls them
      // different, and never equal everywhere unless it compared every state.
      let diverge = try Self.json(["diverge", o.path, salvaged, "--json"])
      #expect(
        !(diverge["exact"] == .bool(true) && diverge["event"] != .null), "\(what): \(diverge)")
      if diverge["event"] == .null {
        #expect(
          claims.shows.allSatisfy { !$0.value.hasSuffix(",\"exact\":false}\n") },
          "\(what): diverge says equal, yet a state is not the recorded one")
      }
      try? FileManager.default.removeItem(atPath: damaged)
      try? FileManager.default.removeItem(atPath: salvaged)
    }
    // The sweep met losses, and labels (it would pass vacuously on a log parity mends).
    #expect(lossy >= frames.count / 2)
    #expect(labelled > 0)
  }
}
