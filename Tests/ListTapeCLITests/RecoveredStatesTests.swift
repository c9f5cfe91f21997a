import Foundation
import ListTapeJSON
import ListTapeLog
import ListTapeModel
import ListTapeSamples
import Testing

@testable import ListTapeStore
@testable import listtape

/// docs/cli.md, "Damaged logs", on a 2.0 log with recovery points: one frame damaged in the
/// middle past what parity mends, salvaged; every command gives the original's answers from
/// the recovery point after the gap on, and says plainly which answers rest on states that
/// are not the recorded ones (between the gap and that point), never with a decoding error.
@Suite struct RecoveredStatesTests {
  struct Fixture {
    let dir: TempDir
    let original: String
    let salvaged: String
    /// The events the salvage lost.
    let gap: ClosedRange<Int>
    /// The first recovery point after the gap: states are exact again from it on.
    let restored: Int
    let events: [Event]

    /// `cutsAhead` as recorders write (see below): with it the same damage also costs the
    /// dictionary frame before the lost events. Without it, events only: the frames of a
    /// writer cutting in place, what these tests were written for.
    init(cutsAhead: Bool = false) throws {
      dir = try TempDir()
      original = dir.path("original.ltape")
      // Small frames, parity 8 KiB wide, and a recovery point every few checkpoints' worth
      // of bytes, so that a 40,000-event log has several (the recorder's own spacing puts
      // them megabytes apart).
      var options = Recorder.options(.never)
      options.maxEventsPerFrame = 300
      options.batchDelay = 3_600  // frames cut by count: the same frames every run
      options.maxEventsBetweenCheckpoints = 1_000_000
      options.minCheckpointSpacingBytes = 16 << 10
      // The spacing these cases were laid out with (recorders use 10 since): with it the
      // recovery point's own event names no id the lost frames defined, so it stays
      // readable, and bisect's probes land between the gap and the point.
      options.checkpointBytesRatio = 16
      var parity = ParityOptions()
      parity.width = 8 << 10
      parity.blockSize = 512
      parity.groupWidths = 8
      options.parity = parity
      options.recoveryPointRatio = 3
      options.cutsAhead = cutsAhead
      let recorder = try Recorder.open(path: original, options: options)
      recorder.restartSlack = 1 << 30
      var events: [Event] = []
      try SampleSession.generate(
        events: 40_000, seed: 31, maxItems: 900, opening: .outline(items: 600, shape: .uuid)
      ) { e in
        _ = try recorder.record(e)
        events.append(e)
      }
      try recorder.close()
      self.events = events
      // Three parity widths of damage from the frame holding event 20,000: a gap.
      var offset = 0
      try LogReader(path: original).forEachFrame(from: 20_000, through: 20_000) { view in
        offset = Int(view.offset)
        return false
      }
      var bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: original)))
      for i in offset..<(offset + 3 * (8 << 10)) { bytes[i] ^= 0x5A }
      let damaged = dir.path("damaged.ltape")
      try Data(bytes).write(to: URL(fileURLWithPath: damaged))
      salvaged = dir.path("salvaged.ltape")
      let r = try CLI.run(["salvage", damaged, "-o", salvaged])
      #expect(r.code == 0, "\(r.err)")
      let reader = try LogReader(path: salvaged)
      // (A lost dictionary frame is a gap of no events: the events' gap is the one here.)
      let first = try #require(reader.gaps.first { $0.count > 0 })
      gap = Int(first.firstEvent)...Int(first.firstEvent + first.count - 1)
      let point = try #require(reader.recoveryPoint(atOrAfter: UInt64(gap.upperBound)))
      restored = Int(point.seq)
      #expect(restored > gap.upperBound + 1 && restored < 38_000, "a stretch to label")
    }

    /// A state in the stretch between the gap and the recovery point.
    var inexact: Int { (gap.upperBound + restored) / 2 }
  }

  /// The named case, built: the frame holding a recovery point's own event C (the events
  /// frame right before a dictionary restart) is lost, parity cannot rebuild it (its frames
  /// are destroyed), so the gap ends at C itself and C's state comes only from the recovery
  /// point's checkpoint. show and diff give the recorded state there, exit 0, and never a
  /// decoding error; events names the hole.
  @Test func aRecoveryPointWhoseOwnEventIsLostGivesTheRecordedState() throws {
    let f = try Fixture()
    let reader = try LogReader(path: f.original)
    var frames: [(offset: Int, length: Int, kind: FrameView.Kind?, parity: Bool, first: Int)] = []
    var offset = reader.firstFrameOffset
    while offset < reader.validEnd {
      let frame = try reader.frameSummary(at: offset)
      frames.append(
        (Int(offset), Int(frame.length), frame.kind, frame.isParity, Int(frame.firstSeq)))
      offset += frame.length
    }
    // An events frame, then a restart, then its checkpoint, a few restarts in.
    let restarts = frames.indices.filter { i in
      i > 0 && i + 1 < frames.count && frames[i].kind == .dictionary
        && frames[i - 1].kind == .events && frames[i + 1].kind == .checkpoint
    }
    let r = try #require(restarts.dropFirst(2).first, "a restart right after an events frame")
    let c = frames[r].first - 1
    var bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: f.original)))
    for frame in frames where frame.parity {
      for i in (frame.offset + 36)..<(frame.offset + 40) { bytes[i] ^= 0xFF }
    }
    let doomed = frames[r - 1]
    for i in (doomed.offset + 36)..<(doomed.offset + doomed.length) { bytes[i] ^= 0x5A }
    let damaged = f.dir.path("own-damaged.ltape")
    try Data(bytes).write(to: URL(fileURLWithPath: damaged))
    let salvaged = f.dir.path("own-salvaged.ltape")
    #expect(try CLI.run(["salvage", damaged, "-o", salvaged]).code == 0)
    let gap = try #require(try LogReader(path: salvaged).gaps.first)
    #expect(gap.firstEvent == UInt64(doomed.first))
    #expect(gap.firstEvent + gap.count - 1 == UInt64(c), "the gap ends at C: C's own event is lost")
    #expect(try LogReader(path: salvaged).exactFrom(through: UInt64(c)) == UInt64(c))

    let show = try CLI.run(["show", salvaged, "--at", "\(c)", "--json"])
    #expect(show.code == 0, "\(show.err)")
    #expect(show.out == (try CLI.run(["show", f.original, "--at", "\(c)", "--json"])).out)
    let text = try CLI.run(["show", salvaged, "--at", "\(c)"])
    #expect(text.code == 0, "\(text.err)")
    #expect(!text.out.contains("not the recorded state"))
    for r in [show, text] { #expect(!r.err.contains("decode"), "\(r.err)") }
    let diff = try CLI.run(["diff", salvaged, "--from", "\(c)", "--to", "\(c + 50)", "--json"])
    #expect(diff.code == 0, "\(diff.err)")
    let same = try CLI.run(["diff", f.original, "--from", "\(c)", "--to", "\(c + 50)", "--json"])
    #expect(
      diff.out.replacingOccurrences(of: salvaged, with: "LOG")
        == same.out.replacingOccurrences(of: f.original, with: "LOG"))
    let events = try CLI.run([
      "events", salvaged, "--numbered", "--from", "\(c - 1)", "--to", "\(c + 1)",
    ])
    #expect(
      events.out.contains("… event \(c): lost in a salvage")
        || events.out.contains("...\(c): lost in a salvage"), "\(events.out)")
    #expect(events.out.contains("#\(c + 1) "))
  }

  /// The JSON lines of `out` that have an `event` key, by event number.
  static func byEvent(_ out: String) throws -> [(event: Int, line: String, exact: Bool)] {
    try out.split(separator: "\n").compactMap { line in
      guard case .object(let o) = try JSONParser.parse(String(line)),
        case .int(let n)? = o["event"]
      else { return nil }
      return (Int(n), String(line), o["exact"] != .bool(false))
    }
  }

  @Test func showAndDiffGiveTheOriginalsStatesFromTheRecoveryPointOn() throws {
    let f = try Fixture()
    for n in [f.restored, f.restored + 1, (f.restored + 40_000) / 2, 40_000] {
      let r = try CLI.run(["show", f.salvaged, "--at", "\(n)", "--json"])
      #expect(r.code == 0, "\(n): \(r.err)")
      #expect(r.out == (try CLI.run(["show", f.original, "--at", "\(n)", "--json"])).out, "\(n)")
    }
    let n = f.inexact
    let text = try CLI.run(["show", f.salvaged, "--at", "\(n)"])
    #expect(text.code == 2)
    #expect(text.err.contains("the state at event \(n) is not the recorded one"), "\(text.err)")
    #expect(text.err.contains("exact again from event \(f.restored)"), "\(text.err)")
    #expect(text.out.lines[0].hasSuffix("(not the recorded state)"))
    let json = try CLI.run(["show", f.salvaged, "--at", "\(n)", "--json"])
    #expect(json.code == 2)
    #expect(json.out.hasSuffix(",\"exact\":false}\n"))
    for r in [text, json] {
      #expect(!r.err.contains("decode"), "\(r.err)")
    }
    let to = "\(f.restored + 3_000)"
    let diff = try CLI.run(["diff", f.salvaged, "--from", "\(f.restored)", "--to", to])
    #expect(diff.code == 0, "\(diff.err)")
    let same = try CLI.run(["diff", f.original, "--from", "\(f.restored)", "--to", to])
    #expect(diff.out.lines.dropFirst(2) == same.out.lines.dropFirst(2))
  }

  @Test func verifyStatsFindAndHistoryLabelWhatIsNotRecorded() throws {
    let f = try Fixture()
    let lost = "\(f.gap.lowerBound)...\(f.gap.upperBound)"
    // verify reports the gap, never a checkpoint after it that needs the lost dictionary.
    let verify = try CLI.run(["verify", f.salvaged])
    #expect(verify.code == 2)
    #expect(verify.out.contains("salvaged: "), "\(verify.out)")
    #expect(verify.out.contains("events \(lost) lost"), "\(verify.out)")
    #expect(!verify.out.contains("decode"), "\(verify.out)")

    // stats: the log's numbering, the lost events apart, faults only from recorded states.
    let stats = try CLI.run(["stats", f.salvaged, "--json"])
    #expect(stats.code == 2)
    #expect(
      stats.out.contains(#""events":40000,"lost":[[\#(f.gap.lowerBound),\#(f.gap.upperBound)]]"#))
    #expect(stats.out.contains(#""notReplayed":[[\#(f.gap.lowerBound),\#(f.restored)]]"#))
    let statsText = try CLI.run(["stats", f.salvaged])
    #expect(statsText.out.contains("in a salvage (events \(lost))"), "\(statsText.out)")

    // find --faults: the original's faults, less those the gap hides; none of the gap's own.
    let faults = try Self.byEvent(try CLI.run(["find", f.salvaged, "--faults", "--json"]).out)
    let originalFaults = try Self.byEvent(
      try CLI.run(["find", f.original, "--faults", "--json"]).out)
    #expect(Set(faults.map(\.line)).isSubset(of: Set(originalFaults.map(\.line))))
    #expect(
      faults.map(\.line)
        == originalFaults.filter { !(f.gap.lowerBound...f.restored).contains($0.event) }
        .map(\.line))

    // find --where and history: after the recovery point, what the original says; in the
    // stretch before it, labelled.
    func compare(_ args: [String]) throws {
      let salvaged = try Self.byEvent(try CLI.run([args[0], f.salvaged] + args.dropFirst()).out)
      let original = try Self.byEvent(try CLI.run([args[0], f.original] + args.dropFirst()).out)
      let after = original.filter { $0.event > f.restored }
      let exactAfter = salvaged.filter { $0.event > f.restored && $0.exact }
      #expect(Set(exactAfter.map(\.line)).isSubset(of: Set(after.map(\.line))), "\(args)")
      #expect(exactAfter.count >= after.count - 1 && !after.isEmpty, "\(args)")
      #expect(
        salvaged.filter { $0.event > f.gap.upperBound && $0.event <= f.restored }
          .allSatisfy { !$0.exact }, "\(args)")
      #expect(salvaged.contains { !$0.exact }, "\(args)")
      #expect(
        salvaged.filter { $0.event < f.gap.lowerBound }.map(\.line)
          == original.filter { $0.event < f.gap.lowerBound }.map(\.line), "\(args)")
    }
    try compare(["find", "--where", "count(visible)", "--json"])
    // An item updated both in the stretch and after the recovery point.
    func updated(_ range: ClosedRange<Int>) -> Set<String> {
      Set(
        f.events[(range.lowerBound - 1)..<range.upperBound].compactMap {
          if case .update(let item, _, _) = $0.operation { return item }
          return nil
        })
    }
    let item = try #require(
      updated((f.gap.upperBound + 1)...f.restored)
        .intersection(updated((f.restored + 1)...40_000)).sorted().first)
    try compare(["history", "--item", item, "--json"])
    let history = try CLI.run(["history", f.salvaged, "--item", item])
    #expect(history.code == 2)
    #expect(history.out.contains("(not the recorded state)"))
  }

  /// The page's `#check` lines (outcome and state hash per event) of a window of `log`.
  static func pageCheck(_ log: String, from: Int, to: Int, in dir: TempDir, name: String) throws
    -> (summary: String, lines: [String], html: String)
  {
    let html = dir.path(name + ".html")
    let r = try CLI.run(["html", log, "--from", "\(from)", "--to", "\(to)", "-o", html])
    #expect(r.err.contains("wrote \(html)"), "\(r.err)")
    let dom = try Chromium.dumpDOM(html, hash: "#check").dom
    let summary =
      dom.components(separatedBy: "<output id=\"selftest\">").last?
      .components(separatedBy: "<").first ?? ""
    let checked =
      dom.components(separatedBy: "<pre id=\"check\">").last?
      .components(separatedBy: "</pre>").first ?? ""
    return (summary, checked.split(separator: "\n").map(String.init), html)
  }

  /// A page over the gap opens (every number of the window is there: lost and undecodable
  /// events as marks), its states from the recovery point on are the original page's, and
  /// its header labels the states in between.
  @Test(.enabled(if: chromiumAvailable(), "chromium is not installed (apt-get install chromium)"))
  func htmlOverTheGapLabelsItsStatesAndRestoresThem() throws {
    let f = try Fixture()
    let from = f.gap.lowerBound - 300
    let to = min(f.restored + 2_000, 40_000)
    let salvaged = try Self.pageCheck(f.salvaged, from: from, to: to, in: f.dir, name: "s")
    let original = try Self.pageCheck(f.original, from: from, to: to, in: f.dir, name: "o")
    #expect(salvaged.summary.hasPrefix("check: ok, \(to - from + 1) events"), "\(salvaged.summary)")
    #expect(original.summary.hasPrefix("check: ok, \(to - from + 1) events"))
    let line = { (n: Int) in n - from }
    try #require(salvaged.lines.count == to - from + 1)
    #expect(salvaged.lines[..<line(f.gap.lowerBound)] == original.lines[..<line(f.gap.lowerBound)])
    // From the recovery point on, the same states (at the point itself the outcome of its
    // event, folded onto an inexact state, may differ; its state hash may not).
    #expect(
      salvaged.lines[line(f.restored)].suffix(8) == original.lines[line(f.restored)].suffix(8))
    #expect(salvaged.lines[(line(f.restored) + 1)...] == original.lines[(line(f.restored) + 1)...])
    #expect(salvaged.lines[line(f.inexact)] != original.lines[line(f.inexact)])
    let head = "<span class=\"inexact\">  (not the recorded state)</span>"
    let inexact = try Chromium.dumpDOM(salvaged.html, hash: "#event=\(f.inexact)").dom
    #expect(inexact.contains("<span>event \(f.inexact) of 40000</span>" + head))
    let exact = try Chromium.dumpDOM(salvaged.html, hash: "#event=\(f.restored)").dom
    #expect(exact.contains("<span>event \(f.restored) of 40000</span>"))
    #expect(!exact.contains(head))
  }

  /// scrub on the salvaged log: a state in the stretch says it is not the recorded one, the
  /// one after the recovery point does not, and the fault count is that of find --faults
  /// (faults folded from recorded states only).
  @Test(.enabled(if: toolAvailable("tmux"), "tmux is not installed (apt-get install tmux)"))
  func scrubLabelsTheStretchAndCountsOnlyRecordedFaults() throws {
    let f = try Fixture()
    let faults = try Self.byEvent(try CLI.run(["find", f.salvaged, "--faults", "--json"]).out)
    let tmux = try TmuxSession(ScrubTests.command(f.salvaged, "--at \(f.inexact)"), width: 160)
    try tmux.wait(seconds: 60) {
      $0.contains("event \(f.inexact) of 40000") && $0.contains("(not the recorded state)")
    }
    try tmux.waitFor("✗ " + Render.plural(faults.count, "fault"), seconds: 60)
    try tmux.keys("g")
    try tmux.waitFor("go to event")
    try tmux.type("\(f.restored + 1)")
    try tmux.keys("Enter")
    let exact = try tmux.waitFor("event \(f.restored + 1) of 40000", seconds: 30)
    #expect(!exact.contains("(not the recorded state)"))
    try tmux.keys("q")
    try tmux.wait { $0.contains("EXIT=") && $0.contains("TTY-RESTORED") }
  }
}
