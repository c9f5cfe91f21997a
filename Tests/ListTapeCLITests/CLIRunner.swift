import Foundation
import ListTapeLog
import ListTapeModel

#if canImport(Glibc)
import Glibc
#endif

/// What a run of the built `listtape` printed and how it exited.
struct RunResult {
  var out: String
  var err: String
  var code: Int32
}

/// Runs the `listtape` binary that `swift build` put next to the test bundle.
enum CLI {
  /// The products folder holds both the test bundle and the tool.
  static let binary: URL = {
    let products = Bundle.main.bundleURL
    let candidate = products.appendingPathComponent("listtape")
    if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
    // Fall back to the package's debug build folder.
    return packageRoot.appendingPathComponent(".build/debug/listtape")
  }()

  static let packageRoot = URL(fileURLWithPath: #filePath)
    .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

  static let samples = packageRoot.appendingPathComponent("Logs/samples")
  static let sampleNames = ["symbols", "languages", "form", "contacts"]

  static func sample(_ name: String) -> URL {
    samples.appendingPathComponent(name + ".jsonl")
  }

  /// A clean environment: no colour hints unless a test adds them.
  static let baseEnvironment: [String: String] = {
    var env = ProcessInfo.processInfo.environment
    env["NO_COLOR"] = nil
    env["TERM"] = nil
    return env
  }()

  /// Runs the tool with `args` (in `directory`, if given), feeding `input` on standard input
  /// (empty when nil), for at most `seconds`. Output goes through files, so a chatty run can
  /// never block on a full pipe.
  static func run(
    _ args: [String], input: Data? = nil, environment: [String: String] = [:],
    seconds: Double = 60, in directory: URL? = nil
  ) throws -> RunResult {
    let dir = try TempDir()
    let inURL = dir.url.appendingPathComponent("stdin")
    let outURL = dir.url.appendingPathComponent("stdout")
    let errURL = dir.url.appendingPathComponent("stderr")
    try (input ?? Data()).write(to: inURL)
    _ = FileManager.default.createFile(atPath: outURL.path, contents: nil)
    _ = FileManager.default.createFile(atPath: errURL.path, contents: nil)
    let process = Process()
    process.executableURL = binary
    process.arguments = args
    process.environment = baseEnvironment.merging(environment) { $1 }
    if let directory { process.currentDirectoryURL = directory }
    process.standardInput = try FileHandle(forReadingFrom: inURL)
    process.standardOutput = try FileHandle(forWritingTo: outURL)
    process.standardError = try FileHandle(forWritingTo: errURL)
    try process.run()
    guard waitForExit(process, seconds: seconds) else {
      throw RecordFailed(message: "listtape \(args) hung")
    }
    return RunResult(
      out: String(decoding: try Data(contentsOf: outURL), as: UTF8.self),
      err: String(decoding: try Data(contentsOf: errURL), as: UTF8.self),
      code: process.terminationStatus)
  }

  /// Records `jsonl` into a new log in `dir` and returns its path.
  static func record(_ jsonl: URL, in dir: TempDir, name: String = "log.ltape") throws -> String {
    let path = dir.url.appendingPathComponent(name).path
    let result = try run(["record", path], input: try Data(contentsOf: jsonl))
    guard result.code == 0 else {
      throw RecordFailed(message: "record exited \(result.code): \(result.err)")
    }
    return path
  }

  /// The states a direct fold of a JSON Lines file gives, after 0, 1, … n events, as JSON.
  static func foldedStates(_ jsonl: URL) throws -> (events: [Event], states: [String]) {
    let text = try String(contentsOf: jsonl, encoding: .utf8)
    var state = ListState()
    var events: [Event] = []
    var states = [state.json(event: 0)]
    for line in text.split(separator: "\n") where !line.allSatisfy(\.isWhitespace) {
      let event = try Event(jsonLine: String(line))
      events.append(event)
      try? state.apply(event)
      states.append(state.json(event: events.count))
    }
    return (events, states)
  }
}

/// Waits for `process` to end, killing it after `seconds`; false when it had to be killed.
func waitForExit(_ process: Process, seconds: Double = 60) -> Bool {
  let deadline = Date().addingTimeInterval(seconds)
  while process.isRunning {
    if Date() > deadline {
      kill(process.processIdentifier, SIGKILL)
      process.waitUntilExit()
      return false
    }
    usleep(1000)
  }
  process.waitUntilExit()
  return true
}

/// Waits until the log at `path` reads back at least `count` events (a live recorder's
/// complete prefix); false after `seconds`.
func waitForEvents(_ path: String, atLeast count: Int, seconds: Double = 30) -> Bool {
  let deadline = Date().addingTimeInterval(seconds)
  while Date() < deadline {
    if let reader = try? LogReader(path: path), Int(reader.eventCount) >= count { return true }
    usleep(10_000)
  }
  return false
}

struct RecordFailed: Error {
  var message: String
}

/// A fresh directory removed when the value goes away.
final class TempDir {
  let url: URL

  init() throws {
    url = FileManager.default.temporaryDirectory
      .appendingPathComponent("listtape-cli-tests-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
  }

  deinit { try? FileManager.default.removeItem(at: url) }

  func path(_ name: String) -> String { url.appendingPathComponent(name).path }
}

extension String {
  var lines: [Substring] { split(separator: "\n", omittingEmptySubsequences: false) }
}
