import Foundation
import Testing

/// A one-shot seek that folds far on a log without an index answers as before, then leaves
/// the index to a process of its own (`listtape __build-index`), so that the next command
/// seeks from it; off when standard error is no terminal, unless told.
@Suite struct BackgroundIndexTests {
  /// A 6,000-event log, and seek points every 200 events (so that a seek folds far).
  static func log(in dir: TempDir) throws -> String {
    let generated = try CLI.run(["generate", "--events", "6000", "--seed", "5"])
    #expect(generated.code == 0)
    let path = dir.path("a.ltape")
    let recorded = try CLI.run(["record", path], input: Data(generated.out.utf8))
    #expect(recorded.code == 0, "\(recorded.err)")
    return path
  }

  static let spacing = ["LISTTAPE_INDEX_SPACING": "200"]

  /// Waits up to a minute for `path` to exist.
  static func waitForFile(_ path: String) -> Bool {
    let deadline = Date().addingTimeInterval(60)
    while Date() < deadline {
      if FileManager.default.fileExists(atPath: path) { return true }
      Thread.sleep(forTimeInterval: 0.05)
    }
    return false
  }

  @Test(arguments: [
    ["show", "--at", "5000", "--json"], ["diff", "--from", "4000", "--to", "4001"],
  ])
  func aFarSeekLeavesTheIndexToABuilder(_ command: [String]) throws {
    let dir = try TempDir()
    let log = try Self.log(in: dir)
    let args = [command[0], log] + command.dropFirst()
    let quiet = try CLI.run(
      args, environment: Self.spacing.merging(["LISTTAPE_BACKGROUND_INDEX": "0"]) { $1 })
    #expect(quiet.code == 0, "\(quiet.err)")
    let index = log + ".idx"
    #expect(!FileManager.default.fileExists(atPath: index))
    let run = try CLI.run(
      args, environment: Self.spacing.merging(["LISTTAPE_BACKGROUND_INDEX": "1"]) { $1 })
    #expect(run.code == 0 && run.out == quiet.out && run.err == quiet.err)
    #expect(Self.waitForFile(index), "no index appeared beside the log")
    // The builder writes a temporary file and renames it: once the index is there, it is
    // whole. The next command seeks from it and says the same.
    let stats = try CLI.run(["stats", log, "--json"])
    #expect(
      stats.out.range(of: #""indexBytes":[1-9]"#, options: .regularExpression) != nil,
      "\(stats.out)")
    let again = try CLI.run(args, environment: Self.spacing)
    #expect(again.code == 0 && again.out == quiet.out)
    let leftovers = try FileManager.default.contentsOfDirectory(atPath: dir.url.path)
      .filter { $0.contains(".tmp-") }
    #expect(leftovers.isEmpty)
  }

  /// Standard error is a file here, as in a script: no builder unless told.
  @Test func noBuilderWithoutATerminal() throws {
    let dir = try TempDir()
    let log = try Self.log(in: dir)
    var environment = Self.spacing
    environment["LISTTAPE_BACKGROUND_INDEX"] = nil
    let run = try CLI.run(["show", log, "--at", "5000"], environment: environment)
    #expect(run.code == 0)
    // A builder is started (or not) before the command exits; it would write its temporary
    // file within a moment of starting.
    Thread.sleep(forTimeInterval: 1)
    let files = try FileManager.default.contentsOfDirectory(atPath: dir.url.path)
    #expect(files == ["a.ltape"], "\(files)")
  }

  /// The builder's own command line: quiet, exit 0 on a log it cannot read (the index is
  /// only a cache), 64 and its usage on a wrong command line.
  @Test func theBuilderIsQuiet() throws {
    let dir = try TempDir()
    let missing = try CLI.run(["__build-index", dir.path("none.ltape")])
    #expect(missing.code == 0 && missing.out.isEmpty && missing.err.isEmpty)
    for line in [["__build-index"], ["__build-index", "a", "b"], ["__build-index", "--help"]] {
      let wrong = try CLI.run(line)
      #expect(wrong.code == 64, "\(line)")
      #expect(wrong.out.isEmpty, "\(line)")
      #expect(wrong.err.hasPrefix("listtape: usage: listtape __build-index LOG"), "\(wrong.err)")
    }
    let log = try Self.log(in: dir)
    let built = try CLI.run(["__build-index", log], environment: Self.spacing)
    #expect(built.code == 0 && built.out.isEmpty && built.err.isEmpty)
    #expect(FileManager.default.fileExists(atPath: log + ".idx"))
  }
}
