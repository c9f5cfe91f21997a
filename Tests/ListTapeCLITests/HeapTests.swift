import Foundation
import Testing

/// How `listtape` sets up its heap, read from the system calls each command makes (strace):
/// `show` and `diff` load one large state and exit, so they grow the heap by 64 MiB at once
/// for every thread to share (`AllocatorTuning.growOneHeap`); commands that run long keep
/// the allocator's defaults; and no command asks for 2 MiB pages, which on a host that
/// hands freed memory back to its hypervisor made a command run a few seconds after the
/// last 1.3-1.6 × slower (docs/performance.md, "The thirtieth stop").
@Suite(.enabled(if: toolAvailable("strace"), "strace is not installed (apt-get install strace)"))
struct HeapTests {
  /// The `brk` and `madvise` calls of a run of `listtape` with `args`, and its exit status.
  static func trace(_ args: [String]) throws -> (lines: [String], code: Int32) {
    let dir = try TempDir()
    let trace = dir.url.appendingPathComponent("trace").path
    let run = try runTool(
      findTool("strace") ?? "/usr/bin/strace",
      ["-f", "-qq", "-e", "trace=brk,madvise", "-o", trace, CLI.binary.path] + args)
    let lines = String(decoding: try Data(contentsOf: URL(fileURLWithPath: trace)), as: UTF8.self)
      .split(separator: "\n").map(String.init)
    return (lines, run.code)
  }

  /// The largest step by which the traced run moved the end of its heap.
  static func largestHeapStep(_ lines: [String]) -> Int {
    var ends: [Int] = []
    for line in lines where line.contains("brk(") {
      guard let hex = line.split(separator: "=").last?.trimmingCharacters(in: .whitespaces),
        hex.hasPrefix("0x"), let end = Int(hex.dropFirst(2), radix: 16)
      else { continue }
      ends.append(end)
    }
    return zip(ends, ends.dropFirst()).map { $1 - $0 }.max() ?? 0
  }

  @Test(arguments: [
    ["show", "--json"], ["show"], ["diff", "--from", "3", "--to", "40"], ["replay"],
  ])
  func aCommandsHeapHasNoLargePagesAndGrowsAtOnceForOneState(_ command: [String]) throws {
    let dir = try TempDir()
    let log = try CLI.record(CLI.sample("symbols"), in: dir)
    let (lines, code) = try Self.trace([command[0], log] + command.dropFirst())
    #expect(code == 0 || (command[0] == "replay" && code == 3))
    #expect(!lines.contains { $0.contains("MADV_HUGEPAGE") }, "\(lines)")
    let step = Self.largestHeapStep(lines)
    if command[0] == "replay" {
      #expect(step < 64 << 20, "replay grew its heap by \(step) bytes at once")
    } else {
      #expect(step >= 64 << 20, "\(command[0]) grew its heap by at most \(step) bytes at once")
    }
  }
}
