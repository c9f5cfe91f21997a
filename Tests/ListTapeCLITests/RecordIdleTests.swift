import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Context switches of every thread of process `pid` (Linux /proc): how often it woke up.
func processContextSwitches(_ pid: Int32) -> Int? {
  let tasks = "/proc/\(pid)/task"
  guard let tids = try? FileManager.default.contentsOfDirectory(atPath: tasks) else { return nil }
  var total = 0
  for tid in tids {
    guard let text = try? String(contentsOfFile: "\(tasks)/\(tid)/status", encoding: .utf8)
    else { continue }
    for line in text.split(separator: "\n") where line.contains("ctxt_switches:") {
      total += Int(line.split(separator: ":")[1].trimmingCharacters(in: .whitespaces)) ?? 0
    }
  }
  return total
}

/// `listtape record` waiting on standard input costs nothing: no thread of the process
/// wakes while nothing arrives (docs/apple.md, "Idle").
@Suite struct RecordIdleTests {
  @Test func anIdleRecordWaitingOnStandardInputDoesNotWakeUp() throws {
    #if os(Linux)
    let dir = try TempDir()
    let path = dir.path("log.ltape")
    let process = Process()
    process.executableURL = CLI.binary
    process.environment = CLI.baseEnvironment
    process.standardError = FileHandle.nullDevice
    let input = Pipe()
    process.standardInput = input
    process.arguments = ["record", path]
    try process.run()
    input.fileHandleForWriting.write(
      Data(
        (#"{"op":"appendSections","sections":["a"]}"# + "\n"
          + #"{"op":"appendItems","items":["x","y"]}"# + "\n").utf8))
    // Recorded, cut by the flusher after 50 ms, synced within the 1 s interval: then idle.
    let deadline = Date().addingTimeInterval(30)
    while (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? 0 <= 64,
      Date() < deadline
    {
      usleep(10_000)
    }
    usleep(1_500_000)
    let pid = process.processIdentifier
    let before = try #require(processContextSwitches(pid))
    let seconds = 3.0
    usleep(UInt32(seconds * 1_000_000))
    let switches = try #require(processContextSwitches(pid)) - before
    #expect(switches <= Int(seconds), "\(switches) context switches in \(seconds) idle seconds")
    try input.fileHandleForWriting.close()
    #expect(waitForExit(process))
    #expect(process.terminationStatus == 0)
    let show = try CLI.run(["show", path, "--json"])
    #expect(show.out.contains(#""id":"y""#))
    #endif
  }
}
