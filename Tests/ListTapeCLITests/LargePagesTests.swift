import Foundation
import Testing

/// `show` and `diff` load one large state and exit: their heap is asked for 2 MiB pages
/// before the load (`AllocatorTuning.backTheHeapWithLargePages`), where faulting in 4 KiB
/// pages one by one was a third of a `diff`'s time; commands that run long keep the
/// allocator's defaults. Read from the system calls each command makes (strace).
@Suite(.enabled(if: toolAvailable("strace"), "strace is not installed (apt-get install strace)"))
struct LargePagesTests {
  /// The `madvise` calls of a run of `listtape` with `args`, and its exit status.
  static func advice(_ args: [String]) throws -> (calls: [String], code: Int32) {
    let dir = try TempDir()
    let trace = dir.url.appendingPathComponent("trace").path
    let strace = findTool("strace") ?? "/usr/bin/strace"
    let process = Process()
    process.executableURL = URL(fileURLWithPath: strace)
    process.arguments = ["-f", "-qq", "-e", "trace=madvise", "-o", trace, CLI.binary.path] + args
    process.standardOutput = FileHandle.nullDevice
    process.standardError = FileHandle.nullDevice
    try process.run()
    process.waitUntilExit()
    let lines = String(decoding: try Data(contentsOf: URL(fileURLWithPath: trace)), as: UTF8.self)
      .split(separator: "\n").map(String.init)
    return (lines.filter { $0.contains("madvise(") }, process.terminationStatus)
  }

  @Test(arguments: [
    ["show", "--json"], ["show"], ["diff", "--from", "3", "--to", "40"],
  ])
  func aOneStateCommandAsksForLargePages(_ command: [String]) throws {
    let dir = try TempDir()
    let log = try CLI.record(CLI.sample("symbols"), in: dir)
    let (calls, code) = try Self.advice([command[0], log] + command.dropFirst())
    #expect(code == 0)
    let granted = calls.filter { $0.contains("MADV_HUGEPAGE") && $0.hasSuffix("= 0") }
    #expect(granted.count == 1, "\(calls)")
  }

  @Test func aLongCommandKeepsTheAllocatorsDefaults() throws {
    let dir = try TempDir()
    let log = try CLI.record(CLI.sample("symbols"), in: dir)
    let (calls, code) = try Self.advice(["replay", log])
    #expect(code == 3 || code == 0)
    #expect(!calls.contains { $0.contains("MADV_HUGEPAGE") }, "\(calls)")
  }
}
