import Foundation
import Testing

/// The workflow in docs/investigate.md runs as written, and prints what the page says.
@Suite struct DocExampleTests {
  /// The fenced block after the `<!-- example: NAME -->` comment.
  static func block(_ name: String, in text: String) throws -> String {
    let marker = try #require(text.range(of: "<!-- example: \(name) -->\n"))
    let rest = text[marker.upperBound...]
    let open = try #require(rest.range(of: "\n"))
    let close = try #require(rest[open.upperBound...].range(of: "```"))
    return String(rest[open.upperBound..<close.lowerBound])
  }

  @Test func theWorkflowFromRecordingsToATest() throws {
    let page = try String(
      contentsOf: CLI.packageRoot.appendingPathComponent("docs/investigate.md"), encoding: .utf8)
    let script = try Self.block("workflow", in: page)
    let expected = try Self.block("workflow output", in: page)
    let dir = try TempDir()
    let scriptURL = dir.url.appendingPathComponent("workflow.sh")
    try script.write(to: scriptURL, atomically: true, encoding: .utf8)
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/bin/bash")
    process.arguments = ["-e", "-o", "pipefail", scriptURL.path]
    process.currentDirectoryURL = dir.url
    var environment = CLI.baseEnvironment
    environment["PATH"] =
      CLI.binary.deletingLastPathComponent().path + ":" + (environment["PATH"] ?? "/usr/bin:/bin")
    process.environment = environment
    let outURL = dir.url.appendingPathComponent("out")
    _ = FileManager.default.createFile(atPath: outURL.path, contents: nil)
    process.standardOutput = try FileHandle(forWritingTo: outURL)
    process.standardError = FileHandle.nullDevice
    try process.run()
    #expect(waitForExit(process, seconds: 300))
    #expect(process.terminationStatus == 0)
    let out = try String(contentsOf: outURL, encoding: .utf8)
    let lines = Set(out.split(separator: "\n").map(String.init))
    for line in expected.split(separator: "\n").map(String.init) {
      #expect(lines.contains(line), "missing: \(line)\n\(out)")
    }
    // Step 5's files: Swift source for the state, the three events.
    let swift = try String(
      contentsOf: dir.url.appendingPathComponent("RecordedBug.swift"), encoding: .utf8)
    #expect(swift.contains(#".expand(["draft-1"])"#))
    let events = try String(
      contentsOf: dir.url.appendingPathComponent("RecordedBug.jsonl"), encoding: .utf8)
    #expect(events.split(separator: "\n").count == 3)
  }
}
