import Foundation
import ListTapeSamples
import Testing

/// The page on a 1M-event session, as the bench records one (UUID ids over a 100,000-item
/// outline): its states and diffs at random events are `listtape show`'s and `listtape
/// diff`'s, and it opens and moves within the issue's times (issue 32), measured in headless
/// Chromium and written to the test's output for docs/performance.md.
@Suite(
  .serialized,
  .enabled(if: chromiumAvailable(), "chromium is not installed (apt-get install chromium)"))
struct HTMLLargeSessionTests {
  /// The session: `LISTTAPE_PAGE_LOG` when set (the bench's `time-uuid-1000000.ltape`), else
  /// generated once per machine into the temporary directory (a few minutes with a debug
  /// build).
  static let session: Result<String, RecordFailed> = {
    if let path = ProcessInfo.processInfo.environment["LISTTAPE_PAGE_LOG"], !path.isEmpty {
      return .success(path)
    }
    let dir = FileManager.default.temporaryDirectory.appendingPathComponent(
      "listtape-page-tests")
    let log = dir.appendingPathComponent("uuid-1000000.ltape").path
    if FileManager.default.fileExists(atPath: log) { return .success(log) }
    do {
      try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
      let partial = log + ".partial-\(getpid())"
      let bin = CLI.binary.path
      let r = try runTool(
        "/bin/sh",
        [
          "-c",
          "'\(bin)' generate --events 1000000 --seed 14 --outline 100000 --shape uuid "
            + "--max-items 110000 | '\(bin)' record '\(partial)'",
        ], seconds: 1800)
      guard r.code == 0 else { return .failure(RecordFailed(message: "generate: \(r.err)")) }
      try FileManager.default.moveItem(atPath: partial, toPath: log)
    } catch {
      return .failure(error as? RecordFailed ?? RecordFailed(message: "\(error)"))
    }
    return .success(log)
  }()

  /// How long one command on the session may take: a debug build with no index beside the
  /// log, on a machine running the rest of the suite, takes tens of seconds for a seek.
  static let seconds: Double = 900

  /// The page of the whole session (written once per run).
  static let page: Result<String, RecordFailed> = {
    do {
      let log = try session.get()
      let dir = FileManager.default.temporaryDirectory.appendingPathComponent(
        "listtape-page-tests-\(getpid())")
      try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
      let html = dir.appendingPathComponent("session.html").path
      let r = try CLI.run(["html", log, "-o", html, "--force"], seconds: Self.seconds)
      guard r.code == 0 else { return .failure(RecordFailed(message: "html: \(r.err)")) }
      return .success(html)
    } catch {
      return .failure(error as? RecordFailed ?? RecordFailed(message: "\(error)"))
    }
  }()

  /// FNV-1a 32 in hex, as the page hashes the state JSON.
  static func fnv1a(_ text: String) -> String {
    var h: UInt32 = 0x811c_9dc5
    for b in text.utf8 { h = (h ^ UInt32(b)) &* 0x0100_0193 }
    let hex = String(h, radix: 16)
    return String(repeating: "0", count: 8 - hex.count) + hex
  }

  /// The page and the log agree where it matters most: the state at each of a few random
  /// events is the one `show --at N --json` prints (by hash), its size is about 1.33 × the
  /// log's plus the fixed part, the diff the page draws is `diff --from N-1 --to N`'s, and
  /// the events list words the event as `listtape events` does.
  @Test func randomEventsAgreeWithShowAndDiff() throws {
    let log = try Self.session.get()
    let html = try Self.page.get()
    let logBytes = try FileManager.default.attributesOfItem(atPath: log)[.size] as? Int ?? 0
    let pageBytes = try FileManager.default.attributesOfItem(atPath: html)[.size] as? Int ?? 0
    // The log as base64 (4/3) plus the viewer's fixed part (under 1.5 MB).
    #expect(pageBytes <= logBytes * 4 / 3 + 1_500_000, "\(pageBytes) bytes for \(logBytes)")
    var generator = SystemRandomNumberGenerator()
    let seed = UInt64.random(in: 1...UInt64.max, using: &generator)
    var random = SplitMix64(seed: seed)
    var points = (0..<4).map { _ in Int(random.next() % 999_999) + 2 }
    // Just after the session's last recovery point (event 706,499, docs/viewers.md), before
    // the next seek point: a jump there starts from the log's checkpoint, with the finished
    // segment's whole dictionary.
    points.append(706_500 + Int(random.next() % 4_000))
    points.append(1_000_000)
    let page = try Chromium.dumpDOM(
      html, hash: "#at=" + points.map(String.init).joined(separator: ","))
    let text = try #require(
      page.dom.components(separatedBy: "<pre id=\"check\">").last?
        .components(separatedBy: "</pre>").first, "\(page.log.suffix(2000))")
    var drawn: [Int: (hash: String, lines: [String])] = [:]
    var listed: [Int: String] = [:]
    var current: Int?
    for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
      let line = line.replacingOccurrences(of: "&lt;", with: "<")
        .replacingOccurrences(of: "&gt;", with: ">").replacingOccurrences(of: "&amp;", with: "&")
      let parts = line.split(separator: " ")
      if line.hasPrefix("@ "), parts.count == 3, let n = Int(parts[1]) {
        current = n
        drawn[n] = (String(parts[2]), [])
      } else if line.hasPrefix("= "), let n = current {
        listed[n] = String(line.dropFirst(2))
      } else if let n = current {
        drawn[n]?.lines.append(line)
      }
    }
    for n in points {
      let show = try CLI.run(["show", log, "--at", "\(n)", "--json"], seconds: Self.seconds)
      #expect(show.code == 0, "\(show.err)")
      var json = show.out
      if json.hasSuffix("\n") { json.removeLast() }
      #expect(drawn[n]?.hash == Self.fnv1a(json), "state at event \(n) (seed \(seed))")
      let diff = try CLI.run(
        ["diff", log, "--from", "\(n - 1)", "--to", "\(n)"], seconds: Self.seconds)
      #expect(diff.code == 0, "\(diff.err)")
      let expected = diff.out.split(separator: "\n", omittingEmptySubsequences: true)
        .dropFirst(2).map(String.init)
      #expect(drawn[n]?.lines == expected, "diff at event \(n) (seed \(seed))")
      // The events list's words for the event (decoded from the segment's dictionary once the
      // first fold has read it) are `listtape events`' without the time.
      let events = try CLI.run(
        ["events", log, "--from", "\(n)", "--to", "\(n)"], seconds: Self.seconds)
      #expect(events.code == 0, "\(events.err)")
      let words = events.out.split(separator: "\n").first.map {
        $0.components(separatedBy: "  ").dropFirst().joined(separator: "  ")
      }
      #expect(listed[n] == words.map(Self.listedWords), "event \(n) listed (seed \(seed))")
    }
  }

  /// `listtape events`' words for an event (op, arguments, site) as the page lists them:
  /// the arguments cut at 160 characters (`EventText.line`; a replaceChildren of three UUID
  /// children is longer).
  static func listedWords(_ words: String) -> String {
    guard let opEnd = words.range(of: "  ") else { return words }
    var arguments = String(words[opEnd.upperBound...])
    var site = ""
    if let at = arguments.range(of: "  at ", options: .backwards) {
      site = String(arguments[at.lowerBound...])
      arguments = String(arguments[..<at.lowerBound])
    }
    if arguments.count > 160 { arguments = String(arguments.prefix(160)) + "…" }
    return words[..<opEnd.upperBound] + arguments + site
  }

  @Test func longArgumentsAreCutAsThePageCutsThem() {
    let long = "children of " + String(repeating: "A", count: 200)
    #expect(
      Self.listedWords("replaceChildren  " + long)
        == "replaceChildren  " + String(long.prefix(160)) + "…")
    #expect(Self.listedWords("expand  x  at A.swift:3") == "expand  x  at A.swift:3")
    #expect(
      Self.listedWords("expand  " + long + "  at A.swift:3")
        == "expand  " + String(long.prefix(160)) + "…  at A.swift:3")
  }

  /// Opens the page with `#timing` and reads its report (the page writes it into its title,
  /// which Chromium's DevTools list of pages shows), waiting for it with a deadline.
  static func timing(_ html: String) throws -> [String: Any] {
    try Chromium.watch(html, hash: "#timing") { page in
      guard let title = page["title"] as? String, title.hasPrefix("listtape-timing ") else {
        return nil
      }
      // The list escapes the title as HTML.
      let text = title.dropFirst("listtape-timing ".count)
        .replacingOccurrences(of: "&quot;", with: "\"")
        .replacingOccurrences(of: "&lt;", with: "<").replacingOccurrences(of: "&gt;", with: ">")
        .replacingOccurrences(of: "&amp;", with: "&")
      return try? JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any]
    }
  }

  static func median(_ values: [Double]) -> Double {
    let sorted = values.sorted()
    return sorted.isEmpty ? 0 : sorted[sorted.count / 2]
  }

  /// The issue's figures: the last state drawn within 2 s of loading, a jump within
  /// 100 ms, a step within 16 ms, under 1 GB, the ids' string table built once per
  /// segment. Printed for docs/performance.md with the load average; the bounds asserted
  /// are looser unless `LISTTAPE_PAGE_TIMING_STRICT` is set (a shared machine's neighbours
  /// move these figures several times over).
  @Test func opensAndMovesWithinTheIssuesTimes() throws {
    let html = try Self.page.get()
    let load = (try? String(contentsOfFile: "/proc/loadavg", encoding: .utf8)) ?? "?"
    let report = try Self.timing(html)
    let first = report["firstRender"] as? Double ?? .infinity
    let jumps = report["jumps"] as? [Double] ?? []
    let steps = report["steps"] as? [Double] ?? []
    let back = report["back"] as? [Double] ?? []
    let memory = (report["wasmBytes"] as? Double ?? 0) + (report["jsHeap"] as? Double ?? 0)
    print(
      "HTMLLargeSessionTests: load \(load.split(separator: " ").prefix(3).joined(separator: " ")): "
        + "first state drawn \(first) ms, median jump \(Self.median(jumps)) ms, step "
        + "\(Self.median(steps)) ms, step back \(Self.median(back)) ms, memory "
        + "\(Int(memory) >> 20) MiB; \(report)")
    let strict = ProcessInfo.processInfo.environment["LISTTAPE_PAGE_TIMING_STRICT"] != nil
    let scale = strict ? 1.0 : 10.0
    #expect(first <= 2_000 * scale)
    #expect(Self.median(jumps) <= 100 * scale)
    #expect(Self.median(steps) <= 16 * scale)
    #expect(memory < Double(1 << 30))
    // Jumps within a finished segment reuse its ids' string table: one built per segment
    // (this session has two), not one per jump (20 jumps, 40 steps).
    let tables = report["tables"] as? Double ?? .infinity
    #expect(tables >= 1 && tables <= 4, "string tables built: \(tables)")
    // A step keeps the view before it: 20 steps back over 20 steps forward fold nothing
    // from a seek point (each step back restored one, then one in 24).
    #expect(report["stepRestores"] as? Double == 0, "seek points restored by steps")
  }
}
