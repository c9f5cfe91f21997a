import Foundation
import Testing

#if canImport(Glibc)
import Glibc

/// A command whose standard output cannot be written (a full disk: `/dev/full`) says so and
/// exits 74 instead of ending as if everything had been printed.
@Suite struct StdoutWriteErrorTests {
  static let log = CLI.samples.appendingPathComponent("symbols.ltape").path

  /// Runs the tool with standard output to `/dev/full`: its exit code and standard error.
  static func runToFullDevice(_ args: [String]) throws -> (code: Int32, err: String) {
    let dir = try TempDir()
    let err = dir.url.appendingPathComponent("stderr").path
    let pid = try startProcess(
      CLI.binary.path, argv: [CLI.binary.path] + args, environment: CLI.baseEnvironment,
      stdout: "/dev/full", stderr: err)
    var status: Int32 = 0
    while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
    let code = status & 0x7F == 0 ? (status >> 8) & 0xFF : 128 + (status & 0x7F)
    return (code, String(decoding: try Data(contentsOf: URL(fileURLWithPath: err)), as: UTF8.self))
  }

  @Test(
    .enabled(if: FileManager.default.fileExists(atPath: "/dev/full"), "needs /dev/full"),
    arguments: [
      ["show", log, "--at", "3"], ["show", log, "--at", "3", "--json"],
      ["diff", log, "--from", "2", "--to", "3"],
      ["diff", log, "--from", "2", "--to", "3", "--json"],
      ["stats", log], ["stats", log, "--json"], ["events", log], ["replay", log],
    ])
  func aFullDiskIsAnIOError(args: [String]) throws {
    let r = try Self.runToFullDevice(args)
    #expect(r.code == 74, "\(args)")
    #expect(
      r.err == "listtape: error: cannot write to standard output: No space left on device\n",
      "\(args)")
  }

  /// The same commands printing to a file succeed (the error above is the device's).
  @Test func theSameCommandsSucceedOnAWritableOutput() throws {
    for args in [["show", Self.log, "--at", "3", "--json"], ["stats", Self.log]] {
      let r = try CLI.run(args)
      #expect(r.code == 0, "\(args): \(r.err)")
      #expect(!r.out.isEmpty)
    }
  }
}
#endif
