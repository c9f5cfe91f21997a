import Foundation
import Testing

#if canImport(Glibc)
import Glibc

/// Issue 31.3: Ctrl-C (SIGINT) or SIGTERM while a command writes its output removes what it
/// wrote in part and exits 130 or 143. Each command is started on a log large enough to take
/// a while; once its partial output exists (the condition waited for), it is sent the
/// signal; then nothing partial, and no output, may be left.
@Suite(.serialized) struct InterruptTests {
  /// A log that takes a second or more to copy, upgrade or export: a 30,000-item outline of
  /// UUIDs, then 12,000 edits.
  static func log(in dir: TempDir) throws -> String {
    let path = dir.path("big.ltape")
    let lines = dir.path("big.jsonl")
    let generated = try CLI.run([
      "generate", "--events", "12000", "--seed", "3", "--outline", "30000", "--shape", "uuid",
      "-o", lines,
    ])
    #expect(generated.code == 0)
    let recorded = try CLI.run(
      ["record", "--quiet", path], input: try Data(contentsOf: URL(fileURLWithPath: lines)))
    #expect(recorded.code == 0)
    return path
  }

  /// Entries of `dir` a command writing `output` leaves only while it writes: its temporary
  /// file (and what a library makes beside it), an export's staging directory, an index
  /// file being built.
  static func partial(in dir: String, output: String) -> [String] {
    let base = (output as NSString).lastPathComponent
    let names = (try? FileManager.default.contentsOfDirectory(atPath: dir)) ?? []
    return names.filter {
      $0.hasPrefix(".\(base).listtape-") || $0.hasPrefix(".\(base).partial-")
        || $0.contains(".idx.tmp-")
    }
  }

  /// Runs `args` (writing `output` in `dir`), sends it `signal` once its partial output
  /// exists, and checks that it exits 128 + the signal with nothing left. A signal sent to
  /// a running process reaches its main thread, whose handler notes it before that thread
  /// goes on, so an output it had not begun to put in place never appears. A command that
  /// finished first (exit 0), or was already putting its finished output in place, is run
  /// again: the condition is its partial output, never a delay.
  static func interrupt(_ args: [String], output: String, in dir: String, signal: Int32) throws {
    let stderr = dir + "/stderr"
    for attempt in 1...5 {
      if attempt > 1 { print("InterruptTests: \(args[0]) again (attempt \(attempt))") }
      let process = try Started(args, stderr: stderr)
      var sent = false
      while process.status(block: false) == nil {
        if !partial(in: dir, output: output).isEmpty {
          sent = kill(process.pid, signal) == 0
          break
        }
        usleep(200)
      }
      let code = process.status(block: true)
      let err = (try? String(contentsOfFile: stderr, encoding: .utf8)) ?? ""
      // Whatever happened, nothing partial is left.
      #expect(
        partial(in: dir, output: output).isEmpty,
        "\(args[0]) left \(partial(in: dir, output: output))")
      let finished = FileManager.default.fileExists(atPath: output)
      guard sent, !finished else {
        try? FileManager.default.removeItem(atPath: output)
        continue
      }
      #expect(code == 128 + signal, "\(args[0]): exit \(String(describing: code)); \(err)")
      #expect(err.contains("interrupted by \(signal == SIGINT ? "SIGINT" : "SIGTERM")"), "\(err)")
      return
    }
    Issue.record("\(args[0]) always ended before it could be interrupted")
  }

  /// The commands that write an output, each as it writes into `dir`.
  static func commands(_ log: String, _ dir: String) -> [(args: [String], output: String)] {
    [
      (["cut", log, "--to", "12000", "-o", dir + "/cut.ltape"], dir + "/cut.ltape"),
      (["what-if", log, "--without", "5", "-o", dir + "/whatif.ltape"], dir + "/whatif.ltape"),
      (["upgrade", log, "-o", dir + "/upgrade.ltape"], dir + "/upgrade.ltape"),
      (["salvage", log, "-o", dir + "/salvage.ltape"], dir + "/salvage.ltape"),
      (
        ["shrink", log, "--where", "count(items) >= 30000", "-o", dir + "/shrink.ltape"],
        dir + "/shrink.ltape"
      ),
      (["html", log, "--max-events", "100000", "-o", dir + "/page.html"], dir + "/page.html"),
      (["export", "--parquet", log, "-o", dir + "/tables"], dir + "/tables"),
    ]
  }

  @Test func anInterruptedWriteLeavesNothingBehind() throws {
    let dir = try TempDir()
    let log = try Self.log(in: dir)
    let out = dir.path("out")
    try FileManager.default.createDirectory(atPath: out, withIntermediateDirectories: false)
    for signal in [SIGINT, SIGTERM] {
      for (args, output) in Self.commands(log, out) {
        try Self.interrupt(args, output: output, in: out, signal: signal)
      }
    }
  }
}
#endif
