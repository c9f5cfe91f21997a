import Foundation
import ListTapeModel
import Testing

@testable import ListTapeLog
@testable import ListTapeStore

/// Voluntary plus involuntary context switches of one thread of this process, from
/// /proc (Linux): every time it woke up and ran.
func contextSwitches(thread tid: Int32) -> Int? {
  guard let text = try? String(contentsOfFile: "/proc/self/task/\(tid)/status", encoding: .utf8)
  else { return nil }
  var total = 0
  for line in text.split(separator: "\n") {
    let parts = line.split(separator: ":")
    guard parts.count == 2, parts[0].hasSuffix("ctxt_switches") else { continue }
    total += Int(parts[1].trimmingCharacters(in: .whitespaces)) ?? 0
  }
  return total
}

/// Whether `condition` holds within `seconds`, polled every 10 ms.
func eventually(_ seconds: Double = 20, _ condition: () -> Bool) -> Bool {
  let deadline = Date().addingTimeInterval(seconds)
  while !condition() {
    if Date() > deadline { return false }
    Thread.sleep(forTimeInterval: 0.01)
  }
  return true
}

/// An idle writer and an idle store cost nothing: their flusher thread sleeps until there
/// is work (docs/apple.md, "Idle"). Measured with the kernel's count of the thread's
/// context switches over three idle seconds; the bound is one a second, the design zero.
@Suite struct IdleTests {
  static let idleSeconds = 3.0

  @Test func anIdleWriterDoesNotWakeUp() throws {
    #if os(Linux)
    let dir = ScratchDir("idle-writer")
    let disk = SimulatedDisk(semantics: .linux)
    var o = LogWriterOptions()
    o.fsync = .interval(seconds: 0.2)
    let writer = try LogWriter.open(path: dir.file("idle.ltape"), options: o, files: disk)
    for i in 0..<10 { try writer.append([UInt8(i), 1, 2]) }
    // The flusher cuts the batch after 50 ms and syncs it 0.2 s after the last sync.
    #expect(eventually { writer.unwrittenEvents == 0 })
    Thread.sleep(forTimeInterval: 0.6)
    let tid = try #require(disk.threadID("ListTapeLog flusher"))
    let before = try #require(contextSwitches(thread: tid))
    let wakeups = writer.flusherWakeups
    Thread.sleep(forTimeInterval: Self.idleSeconds)
    let switches = try #require(contextSwitches(thread: tid)) - before
    #expect(switches <= Int(Self.idleSeconds), "\(switches) context switches while idle")
    #expect(writer.flusherWakeups == wakeups)
    // It still wakes for work: a new batch is cut within its delay.
    try writer.append([9])
    #expect(eventually { writer.unwrittenEvents == 0 })
    try writer.close()
    #endif
  }

  @Test func anIdleStoreDoesNotWakeUp() throws {
    #if os(Linux)
    let dir = ScratchDir("idle-store")
    let disk = SimulatedDisk(semantics: .linux)
    var o = StoreOptions()
    o.files = disk
    let store = try StoreCore(path: dir.file("idle.ltape"), options: o)
    store.appendSections(["main"])
    store.appendItems(["a", "b"], toSection: "main")
    try store.sync()
    Thread.sleep(forTimeInterval: 0.3)
    let tid = try #require(disk.threadID("ListTapeLog flusher"))
    let before = try #require(contextSwitches(thread: tid))
    Thread.sleep(forTimeInterval: Self.idleSeconds)
    let switches = try #require(contextSwitches(thread: tid)) - before
    #expect(switches <= Int(Self.idleSeconds), "\(switches) context switches while idle")
    #expect(store.bufferedEvents == 0)
    try store.close()
    #endif
  }
}
