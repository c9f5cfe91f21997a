import Foundation
import ListTapeModel
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// What one run of the built tool cost.
struct Cost {
  var code: Int32
  /// Processor time (user and system), which other work on the machine barely changes;
  /// wall-clock time when the tool was killed.
  var seconds: Double
  /// Peak resident memory, KiB.
  var peakKiB: Int
  var err: String
}

/// Runs `listtape` under caps: `timeout` kills it (and its process group) after `wall`
/// seconds, GNU time reports its processor time and peak resident set (read by the parent of the tool, so the test
/// runner's own memory cannot leak into it, as it would through `rusage` of a direct child).
func measure(_ args: [String], seconds cap: Double, wall: Double) throws -> Cost {
  let dir = try TempDir()
  let timeFile = dir.path("time")
  let errFile = dir.path("stderr")
  _ = FileManager.default.createFile(atPath: errFile, contents: nil)
  let process = Process()
  process.executableURL = URL(fileURLWithPath: "/usr/bin/time")
  process.arguments =
    ["-o", timeFile, "-f", "%U %S %M", "timeout", "-s", "KILL", String(format: "%.1f", wall)]
    + [CLI.binary.path] + args
  process.environment = CLI.baseEnvironment
  process.standardInput = FileHandle.nullDevice
  process.standardOutput = FileHandle.nullDevice
  process.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: errFile))
  let start = Date()
  try process.run()
  guard waitForExit(process, seconds: wall + 60) else {
    throw RecordFailed(message: "listtape \(args) outlived its watchdog")
  }
  let elapsed = Date().timeIntervalSince(start)
  let report = (try? String(contentsOfFile: timeFile, encoding: .utf8)) ?? ""
  let last = report.split(separator: "\n").last.map(String.init) ?? ""
  let fields = last.split(separator: " ")
  let err = (try? String(contentsOfFile: errFile, encoding: .utf8)) ?? ""
  // A tool killed by `timeout` is not in the times GNU time reports.
  let killed = process.terminationStatus == 128 + SIGKILL
  let cpu = fields.count == 3 ? fields[0..<2].compactMap { Double($0) }.reduce(0, +) : nil
  return Cost(
    code: process.terminationStatus, seconds: killed ? elapsed : cpu ?? elapsed,
    peakKiB: fields.count == 3 ? Int(fields[2]) ?? 0 : 0, err: String(err.prefix(2_000)))
}

/// Issue 18, point 3: every command on every hostile log finishes in time and memory linear
/// in what the log holds (its records and checkpoints, inflated: at most 1,032 times the
/// file), with a small constant, measured on the built tool.
///
/// `swift test` runs the debug tool on logs at a tenth of the sizes issue 18 names (depths,
/// id sizes and the full frame stay whole); `LISTTAPE_HOSTILE_SCALE=1 swift test -c release
/// --filter HostileTimeTests` runs the full sizes on the release tool.
@Suite(
  .serialized,
  .enabled(
    if: FileManager.default.isExecutableFile(atPath: "/usr/bin/time"),
    "GNU time is not installed (apt-get install time)"))
struct HostileTimeTests {
  static let environment = ProcessInfo.processInfo.environment
  static let scale = environment["LISTTAPE_HOSTILE_SCALE"].flatMap { Double($0) } ?? 0.1

  /// The caps for a log whose records and checkpoints take `raw` bytes: a fixed allowance
  /// of processor seconds and memory for starting up, then per MiB (debug build; the sanitizers get four times as much). A
  /// cost quadratic in any dimension of these logs takes minutes and gigabytes.
  static func caps(raw: Int) -> (seconds: Double, kib: Int) {
    let mib = Double(raw) / Double(1 << 20)
    let slow = environment["LISTTAPE_SANITIZER"] == nil ? 1.0 : 4.0
    return ((8 + 8 * mib) * slow, Int((200 + 16 * mib) * 1024 * slow))
  }

  /// Every command of issue 18 but scrub (see `scrubFirstFrame`), with the exit
  /// codes it may end with on a hostile log.
  static func commands(_ log: String, _ dir: TempDir) -> [(String, [String], Set<Int32>)] {
    [
      ("replay", ["replay", log], [0, 2, 3]),
      ("show", ["show", log], [0, 2]),
      ("show --json", ["show", log, "--json"], [0, 2]),
      ("find", ["find", log, "--where", "count(visible) > 3 and selected(\"x\")"], [0, 1, 2]),
      ("verify", ["verify", log], [0, 2]),
      ("stats", ["stats", log], [0, 2]),
      ("salvage", ["salvage", log, "-o", dir.path("salvaged.ltape")], [0, 2]),
      ("html", ["html", log, "-o", dir.path("page.html")], [0, 2, 64]),
    ]
  }

  @Test(arguments: HostileLog.allCases)
  func everyCommandIsBounded(_ log: HostileLog) throws {
    let dir = try TempDir()
    let path = dir.path("\(log.rawValue).ltape")
    let raw = try log.write(to: path, scale: Self.scale)
    let file = (try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? 0
    let (seconds, kib) = Self.caps(raw: max(raw, file))
    // Processor time is the cap; the wall clock only stops a run that a busy machine (other
    // builds, the suite's parallel tests) slowed down past all reason.
    let wall = 3 * seconds
    for (name, args, codes) in Self.commands(path, dir) {
      try? FileManager.default.removeItem(atPath: dir.path("salvaged.ltape"))
      try? FileManager.default.removeItem(atPath: dir.path("page.html"))
      let cost = try measure(args, seconds: seconds, wall: wall)
      print(
        "hostile \(log.rawValue): \(name): \(String(format: "%.2f", cost.seconds)) s, "
          + "\(cost.peakKiB >> 10) MiB (file \(file) B, raw \(raw) B; caps "
          + "\(String(format: "%.0f", seconds)) s, \(kib >> 10) MiB), exit \(cost.code)")
      #expect(
        codes.contains(cost.code), "\(log.rawValue): \(name) exited \(cost.code): \(cost.err)")
      #expect(cost.seconds <= seconds, "\(log.rawValue): \(name) took \(cost.seconds) s")
      #expect(cost.peakKiB <= kib, "\(log.rawValue): \(name) peaked at \(cost.peakKiB) KiB")
    }
    if toolAvailable("tmux") {
      let cost = try scrubFirstFrame(path, dir, wall: wall)
      print(
        "hostile \(log.rawValue): scrub's first frame: \(String(format: "%.2f", cost.seconds)) s "
          + "(wall), \(cost.peakKiB >> 10) MiB")
      #expect(cost.code == 0, "\(log.rawValue): scrub crashed; its screen was:\n\(cost.err)")
      #expect(cost.seconds <= wall, "\(log.rawValue): scrub's first frame took \(cost.seconds) s")
      #expect(cost.peakKiB <= kib, "\(log.rawValue): scrub peaked at \(cost.peakKiB) KiB")
    }
  }

  /// Starts `scrub` in a terminal (tmux) and times it until its first frame is on the
  /// screen (wall clock: the viewer waits for keys, so its processor time is not the
  /// measure); then quits it and reads its peak memory from GNU time.
  func scrubFirstFrame(_ log: String, _ dir: TempDir, wall: Double) throws -> Cost {
    let report = dir.path("scrub-time")
    let tmux = try TmuxSession(
      "/usr/bin/time -o '\(report)' -f '%M' '\(CLI.binary.path)' scrub '\(log)'; sleep 600")
    // GNU time creates its report at once and fills it when the tool ends (after a line
    // "Command terminated by signal N" when it crashed).
    func ended() -> String? {
      (try? String(contentsOfFile: report, encoding: .utf8)).flatMap { $0.isEmpty ? nil : $0 }
    }
    func peak() -> Int? {
      ended()?.split(separator: "\n").last.flatMap { Int($0) }
    }
    let start = Date()
    var screen = try tmux.screen()
    let frame = #/event \d+ of \d+/#
    // Until the first frame, or until the tool ends (a log it refuses).
    while screen.firstMatch(of: frame) == nil && ended() == nil
      && Date().timeIntervalSince(start) < wall
    {
      usleep(20_000)
      screen = try tmux.screen()
    }
    let seconds = Date().timeIntervalSince(start)
    try tmux.keys("q")
    let deadline = Date().addingTimeInterval(wall)
    while ended() == nil && Date() < deadline { usleep(20_000) }
    let crashed = ended()?.contains("terminated by signal") ?? false
    return Cost(code: crashed ? 134 : 0, seconds: seconds, peakKiB: peak() ?? 0, err: screen)
  }
}
