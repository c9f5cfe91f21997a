import Foundation
import Testing

/// Colour is decided once: --color, then NO_COLOR, then TERM=dumb, then whether stdout is a tty.
@Suite struct TerminalTests {
  static let escape = "\u{1B}["

  @Test func colourFollowsTheFlagThenTheEnvironment() throws {
    let dir = try TempDir()
    let path = try CLI.record(CLI.sample("languages"), in: dir)
    #expect(!(try CLI.run(["show", path]).out.contains(Self.escape)))
    #expect(try CLI.run(["show", path, "--color", "always"]).out.contains(Self.escape))
    #expect(
      try CLI.run(["show", path, "--color=always"], environment: ["NO_COLOR": "1"]).out.contains(
        Self.escape))
    #expect(!(try CLI.run(["show", path, "--color", "never"]).out.contains(Self.escape)))
    #expect(!(try CLI.run(["replay", path, "--color", "never"]).out.contains(Self.escape)))
    #expect(try CLI.run(["replay", path, "--color", "always"]).out.contains(Self.escape))
    // --json output is never coloured.
    #expect(
      !(try CLI.run(["show", path, "--json", "--color", "always"]).out.contains(Self.escape)))
  }

  /// Runs under `script`, which gives the tool a terminal on standard output.
  private func onTerminal(_ command: String, environment: [String: String]) throws -> String? {
    guard FileManager.default.isExecutableFile(atPath: "/usr/bin/script") else { return nil }
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/script")
    process.arguments = ["-qfec", command, "/dev/null"]
    process.environment = CLI.baseEnvironment.merging(environment) { $1 }
    let pipe = Pipe()
    process.standardOutput = pipe
    process.standardInput = FileHandle.nullDevice
    try process.run()
    let data = pipe.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return String(decoding: data, as: UTF8.self)
  }

  @Test func terminalGetsColourUnlessNoColorOrDumb() throws {
    let dir = try TempDir()
    let path = try CLI.record(CLI.sample("languages"), in: dir)
    let command = "\(CLI.binary.path) show \(path)"
    guard let plain = try onTerminal(command, environment: ["TERM": "xterm"]) else { return }
    #expect(plain.contains(Self.escape))
    let noColor = try onTerminal(command, environment: ["TERM": "xterm", "NO_COLOR": "1"])
    #expect(noColor?.contains(Self.escape) == false)
    let dumb = try onTerminal(command, environment: ["TERM": "dumb"])
    #expect(dumb?.contains(Self.escape) == false)
    let never = try onTerminal(command + " --color never", environment: ["TERM": "xterm"])
    #expect(never?.contains(Self.escape) == false)
  }
}
