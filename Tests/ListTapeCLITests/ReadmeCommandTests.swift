import Foundation
import Testing

/// The command lines README.md gives to paste ("Find a bug in a sample") run as written,
/// from a directory where `Logs` is the repository's, and say what the README says.
@Suite struct ReadmeCommandTests {
  /// The `listtape …` lines of the README's block after `heading`.
  static func commands(after heading: String) throws -> [[String]] {
    let text = try String(
      contentsOf: CLI.packageRoot.appendingPathComponent("README.md"), encoding: .utf8)
    let lines = text.components(separatedBy: "\n")
    let start = try #require(lines.firstIndex(of: heading))
    let open = try #require(lines[start...].firstIndex(of: "```sh"))
    let close = try #require(lines[(open + 1)...].firstIndex(of: "```"))
    return lines[(open + 1)..<close].filter { $0.hasPrefix("listtape ") }.map(words)
  }

  /// Shell words: blanks separate, single quotes keep everything up to the next one.
  static func words(_ line: String) -> [String] {
    var out: [String] = []
    var current = ""
    var quoted = false
    var started = false
    for c in line {
      if c == "'" {
        quoted.toggle()
        started = true
      } else if c == " " && !quoted {
        if started { out.append(current) }
        current = ""
        started = false
      } else {
        current.append(c)
        started = true
      }
    }
    if started { out.append(current) }
    return out
  }

  @Test func theSampleCommandsRunAsWritten() throws {
    let commands = try Self.commands(after: "### Find a bug in a sample")
    #expect(commands.map { $0[1] } == ["find", "bisect", "diff", "shrink", "events"])
    let dir = try TempDir()
    try FileManager.default.createSymbolicLink(
      atPath: dir.path("Logs"),
      withDestinationPath: CLI.packageRoot.appendingPathComponent("Logs").path)
    var outputs: [String] = []
    for words in commands {
      let process = Process()
      process.executableURL = CLI.binary
      process.arguments = Array(words.dropFirst())
      process.currentDirectoryURL = dir.url
      process.environment = CLI.baseEnvironment
      let out = dir.path("out")
      _ = FileManager.default.createFile(atPath: out, contents: nil)
      process.standardOutput = try FileHandle(forWritingTo: URL(fileURLWithPath: out))
      process.standardError = FileHandle.nullDevice
      try process.run()
      #expect(waitForExit(process))
      #expect(process.terminationStatus == 0, "\(words.joined(separator: " "))")
      outputs.append(try String(contentsOfFile: out, encoding: .utf8))
    }
    #expect(outputs[0].contains("event 71: reconfigureItems: no item \"contact-024\""))
    #expect(outputs[1].contains("holds: 70"))
    #expect(outputs[2].contains("selection {} → {message}"))
    #expect(outputs[3].hasPrefix("kept 3 of 105 events → message-selected.ltape"))
    #expect(outputs[4].contains("select  message"))
    // The shrunk log landed where the README said, and nowhere else.
    #expect(
      try FileManager.default.contentsOfDirectory(atPath: dir.url.path).sorted()
        == ["Logs", "message-selected.ltape", "out"])
  }
}
