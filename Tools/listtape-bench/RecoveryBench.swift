import Foundation
import ListTapeJSON
import ListTapeLog
import ListTapeModel
import ListTapeSamples
import ListTapeStore

/// Issue 23.3's figures: what damage costs a 2.0 log, and what its protection costs. For
/// each id shape, the bench's 1M-event session (FormatBench's) is recorded without any
/// recovery frames, with parity frames alone, with parity and forced recovery points (what
/// recorders write), and with forced recovery points alone spaced for the same budget;
/// then one frame, and a burst wider than the parity, are damaged in the middle and salvaged.
enum RecoveryBench {
  struct Variant {
    var name: String
    var parity: ParityOptions?
    var ratio: UInt64
  }

  static var variants: [Variant] {
    var narrow = ParityOptions()
    narrow.groupWidths = 20
    return [
      Variant(name: "nothing (the log before issue 23)", parity: nil, ratio: 0),
      Variant(name: "parity, 64 KiB per 2.5 MiB", parity: ParityOptions(), ratio: 0),
      Variant(
        name:
          "parity + recovery points every 4 × their size, or 2^20 events and 2 × (recorders' "
          + "default, issue 31)",
        parity: ParityOptions(), ratio: Recorder.recoveryPointRatio),
      Variant(
        name: "parity + recovery points every 50 × their size (issue 23)",
        parity: ParityOptions(), ratio: 50),
      Variant(name: "parity, 64 KiB per 1.25 MiB", parity: narrow, ratio: 0),
    ]
  }

  /// What a log's frames cost, by kind.
  struct Sizes {
    var file = 0
    var parity = 0
    var parityFrames = 0
    var restarts = 0
    /// Bytes of dictionary frames and the checkpoints right after them.
    var restartBytes = 0
    var largestRestart = 0
  }

  static func sizes(_ path: String) throws -> Sizes {
    let reader = try LogReader(path: path)
    var s = Sizes(file: Int(reader.fileSize))
    var offset = reader.firstFrameOffset
    var afterRestart = false
    var current = 0
    while offset < reader.validEnd {
      let f = try reader.frameSummary(at: offset)
      if f.isParity {
        s.parity += Int(f.length)
        s.parityFrames += 1
      } else if f.kind == .dictionary {
        s.restarts += 1
        s.restartBytes += Int(f.length)
        current = Int(f.length)
        afterRestart = true
      } else if f.kind == .checkpoint && afterRestart {
        s.restartBytes += Int(f.length)
        current += Int(f.length)
        s.largestRestart = max(s.largestRestart, current)
        afterRestart = false
      } else {
        afterRestart = false
      }
      offset += f.length
    }
    return s
  }

  static func run(quick: Bool) {
    let count = quick ? 200_000 : 1_000_000
    let outline = quick ? 20_000 : 100_000
    print(
      "## Damage and recovery points: \(count.formatted())-event sessions over a "
        + "\(outline.formatted())-item outline\n")
    do {
      for shape in IdShape.allCases { try shapeFigures(shape, events: count, outline: outline) }
    } catch {
      print("recovery benchmark failed: \(error)")
    }
  }

  static func shapeFigures(_ shape: IdShape, events count: Int, outline: Int) throws {
    let dir = ReplayBench.directory + "/recovery-\(shape.rawValue)-\(count)"
    try? FileManager.default.removeItem(atPath: dir)
    try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: dir) }
    var events: [Event] = []
    events.reserveCapacity(count)
    SampleSession.generate(
      events: count, seed: 1, maxItems: outline * 11 / 10,
      opening: .outline(items: outline, shape: shape)
    ) { events.append($0) }

    // The seek issue's size guard: the log against gzip -6 of the same JSON Lines.
    let jsonl = dir + "/session.jsonl"
    var w = JSONWriter(reservingCapacity: count * 100)
    for e in events {
      e.encode(to: &w)
      w.endLine()
    }
    _ = FileManager.default.createFile(atPath: jsonl, contents: Data(w.bytes))
    let gzipBytes = try ReplayBench.gzipSize(jsonl)
    try? FileManager.default.removeItem(atPath: jsonl)
    let guardRatio = shape == .short ? 0.65 : 0.5

    print("### \(shape.rawValue) ids (gzip -6 of the JSON Lines: \(gzipBytes.formatted()) B)\n")
    print(
      "| protection | log bytes | ÷ gzip (≤ \(guardRatio)) | parity | recovery points | cost "
        + "| record, events/s |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    var base = 0
    var recorded: [String] = []
    for (i, v) in variants.enumerated() {
      let path = dir + "/v\(i).ltape"
      var options = Recorder.options(.never)
      options.parity = v.parity
      options.recoveryPointRatio = v.ratio
      let time = try Clock.measure {
        let recorder = try Recorder.open(path: path, options: options)
        for e in events { _ = try recorder.record(e) }
        try recorder.close()
      }
      let s = try sizes(path)
      if i == 0 { base = s.file }
      let cost = Double(s.file - base) / Double(base) * 100
      let ratio = Double(s.file) / Double(gzipBytes)
      print(
        "| \(v.name) | \(s.file.formatted()) | \(String(format: "%.3f", ratio))"
          + "\(i == 2 ? (ratio <= guardRatio ? " met" : " NOT met") : "") "
          + "| \(s.parity.formatted()) B in \(s.parityFrames) "
          + "| \(s.restarts) (\(s.restartBytes.formatted()) B, largest \(s.largestRestart.formatted()) B) "
          + "| \(fmt(cost)) % | \(fmt0(Double(count) / time)) |")
      recorded.append(path)
    }
    let chosen = recorded[2]
    let s = try sizes(chosen)
    let bound = Double(Recorder.recoveryPointRatio) * Double(max(s.largestRestart, 1))
    print(
      "\nBound (recorders' default): damage within 60 KiB of one parity group is rebuilt; "
        + "larger damage is exact again at the next recovery point, at most "
        + "\(Recorder.recoveryPointRatio) × a restart's size (here \(fmt(bound / 1e6)) MB, about "
        + "\(fmt0(bound / (Double(s.file) / Double(count)))) events) after it.\n")
    try damageFigures(chosen, events: count)
    print("")
  }

  /// Damages the middle of `path` twice over (one frame; a 256 KiB burst) and salvages.
  static func damageFigures(_ path: String, events count: Int) throws {
    var frame = (offset: UInt64(0), length: UInt64(0))
    try LogReader(path: path).forEachFrame(
      from: UInt64(count / 2), through: UInt64(count / 2)
    ) { view in
      frame = (view.offset, view.length)
      return false
    }
    let pristine = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))
    print("| damage in the middle | repaired | events lost | exact again from | salvage |")
    print("|---|---:|---:|---|---:|")
    for (name, length) in [
      ("the whole frame holding event \(count / 2)", Int(frame.length)),
      ("a 256 KiB burst from that frame on", 256 << 10),
    ] {
      var bytes = pristine
      for i in Int(frame.offset)..<min(bytes.count, Int(frame.offset) + length) { bytes[i] ^= 0x5A }
      let damaged = path + ".damaged"
      let out = path + ".salvaged"
      try? FileManager.default.removeItem(atPath: out)
      try Data(bytes).write(to: URL(fileURLWithPath: damaged))
      var salvaged: SalvageReport?
      let time = try Clock.measure { salvaged = try LogReader.salvage(from: damaged, to: out) }
      guard let report = salvaged else { continue }
      let lost = report.gaps.reduce(UInt64(0)) { $0 + $1.count }
      let reader = try LogReader(path: out)
      let exact: String
      if report.gaps.isEmpty {
        exact = "every event (nothing lost)"
      } else if let from = reader.exactFrom(through: reader.eventCount) {
        let gapEnd = report.gaps.last.map { $0.firstEvent + $0.count - 1 } ?? 0
        exact = "event \(from.formatted()) (\((from - gapEnd).formatted()) after the gap)"
      } else {
        exact = "no recovery point before the end (\(reader.eventCount.formatted()))"
      }
      let repaired = report.repaired.reduce(UInt64(0)) { $0 + $1.length }
      print(
        "| \(name) (\(length.formatted()) B) | \(repaired.formatted()) B | \(lost.formatted()) "
          + "| \(exact) | \(fmt(time)) s |")
    }
  }
}
