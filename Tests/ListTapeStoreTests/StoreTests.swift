import Dispatch
import Foundation
import ListTapeModel
import ListTapeRead
import Testing

@testable import ListTapeStore

/// A deterministic clock for stores under test: 1, 2, 3… milliseconds after a base.
final class TestClock: @unchecked Sendable {
  private let lock = NSLock()
  private var now: Int64 = 1_764_400_000_000

  func tick() -> Int64 {
    lock.lock()
    defer { lock.unlock() }
    now += 1
    return now
  }
}

/// A writer stall the test controls: the writer waits at `beforeWrite` while held.
final class Stall: @unchecked Sendable {
  private let condition = NSCondition()
  private var held = false
  private var waiting = 0

  func hold() {
    condition.lock()
    held = true
    condition.unlock()
  }

  func release() {
    condition.lock()
    held = false
    condition.broadcast()
    condition.unlock()
  }

  /// Called by the writer.
  func pass() {
    condition.lock()
    waiting += 1
    while held { condition.wait() }
    waiting -= 1
    condition.unlock()
  }
}

@Suite struct StoreTests {
  func options(capacity: Int = 16_384, stall: Stall? = nil) -> StoreOptions {
    var o = StoreOptions()
    o.fsync = .never
    o.bufferCapacity = capacity
    let clock = TestClock()
    o.clock = { clock.tick() }
    if let stall { o.beforeWrite = { stall.pass() } }
    return o
  }

  /// Every event of a log, in order.
  func events(_ path: String) throws -> [Event] {
    let timeline = try Timeline(path: path)
    var out: [Event] = []
    try timeline.forEachEvent { _, e in
      out.append(e)
      return true
    }
    return out
  }

  /// A session like the seeds' (symbols outline, languages, contacts with swipe-to-delete).
  func session(_ store: StoreCore) throws {
    #expect(store.appendSections(["symbols", "contacts"]) == nil)
    #expect(
      store.appendItems(
        [
          OutlineNode("Communication", title: "Communication", children: ["mic", "message"]),
          OutlineNode("Weather", title: "Weather", children: ["sun.max", "cloud"]),
        ], toSection: "symbols") == nil)
    #expect(store.expand(["Communication"]) == nil)
    #expect(store.select(["mic"]) == nil)
    #expect(store.setAllowsMultipleSelection(true) == nil)
    #expect(store.appendItems(["ann", "bob", "cat"], toSection: "contacts") == nil)
    #expect(store.select(["ann", "cat"]) == nil)
    #expect(store.deleteItems(["bob"]) == nil)
    #expect(store.mark("swiped") == nil)
    #expect(store.updateItem("Weather", title: "Weather (2)") == nil)
    // Apple's pattern: take the snapshot, change it, apply it.
    let typed = try ListStore<String, String>(core: store, sections: .standard, items: .standard)
    var next = typed.snapshot()
    try next.moveItem("cat", beforeItem: "ann")
    try next.appendItems(["dan"], toSection: "contacts")
    var symbols = try #require(next.sectionSnapshot(for: "symbols"))
    try symbols.collapse(["Communication"])
    try next.apply(symbols, to: "symbols")
    #expect(typed.apply(next).count == 3)
    var section = try #require(store.sectionSnapshot(for: "symbols"))
    try section.move("Weather", before: "Communication")
    try section.expand(["Weather"])
    #expect(store.apply(section, to: "symbols") == nil)
  }

  @Test func recordsWhatItApplied() throws {
    let (dir, path) = temporaryStorePath()
    defer { try? FileManager.default.removeItem(atPath: dir) }
    let store = try StoreCore(path: path, options: options())
    try session(store)
    let live = store.state
    #expect(store.acceptedEvents == 12)
    try store.close()

    let recorded = try events(path)
    #expect(recorded.count == 12)
    var folded = ListState()
    for e in recorded { try folded.apply(e) }
    #expect(folded == live)
    #expect(try Timeline(path: path).state(at: recorded.count) == live)
    // Times are the clock's at the call, in order.
    let times = recorded.compactMap(\.time)
    #expect(times.count == recorded.count)
    #expect(times == times.sorted())
    #expect(recorded[8].operation == .mark("swiped"))
    #expect(recorded[10].op == "batch")
    #expect(recorded[11].op == "batch")
  }

  @Test func faultsAreRecordedAndReturned() throws {
    let (dir, path) = temporaryStorePath()
    defer { try? FileManager.default.removeItem(atPath: dir) }
    let store = try StoreCore(path: path, options: options())
    store.appendSections(["main"])
    store.appendItems([OutlineNode("a", children: ["a1"])], toSection: "main")
    let before = store.state
    #expect(store.select(["a1"]) == .hiddenItem("a1"))
    #expect(store.appendItems(["a"]) == .duplicateItem("a"))
    #expect(store.moveItem("a", afterItem: "a1") == .moveIntoOwnSubtree(item: "a", anchor: "a1"))
    var bad = SectionSnapshot()
    try bad.append(["a"])
    store.appendSections(["other"])
    #expect(store.apply(bad, to: "missing") == .missingSection("missing"))
    #expect(
      store.state
        == { () -> ListState in
          var s = before
          try? s.appendSections(["other"])
          return s
        }())
    #expect(store.faultCount == 4)
    try store.close()

    let recorded = try events(path)
    #expect(recorded.count == 7)
    var state = ListState()
    var faulted: [Int] = []
    for (i, e) in recorded.enumerated() {
      do { try state.apply(e) } catch { faulted.append(i + 1) }
    }
    #expect(faulted == [3, 4, 5, 7])
    #expect(recorded[6].op == "applySectionSnapshot")
  }

  /// The writer is stalled for the whole burst: every call still returns. A call that
  /// waited for the disk would never return (the stall is released only after the loop), so
  /// finishing the loop is the proof; no wall-clock bound that a loaded machine could miss.
  @Test func callerNeverWaitsForTheDisk() throws {
    let (dir, path) = temporaryStorePath()
    defer { try? FileManager.default.removeItem(atPath: dir) }
    let stall = Stall()
    stall.hold()
    let store = try StoreCore(path: path, options: options(stall: stall))
    store.appendSections(["main"])
    for i in 0..<3_000 { store.appendItems(["i\(i)"], toSection: "main") }
    // Nothing was written while stalled; the calls did not wait for it.
    #expect(store.bufferedEvents >= 3_000)
    stall.release()
    try store.close()
    #expect(try Timeline(path: path).eventCount == 3_001)
  }

  /// A full buffer drops and counts; the next event after room returns is preceded by a gap
  /// mark and a resync batch, so the log still ends in the live state.
  @Test func overflowDropsCountsAndResyncs() throws {
    let (dir, path) = temporaryStorePath()
    defer { try? FileManager.default.removeItem(atPath: dir) }
    let stall = Stall()
    stall.hold()
    let store = try StoreCore(path: path, options: options(capacity: 64, stall: stall))
    store.appendSections(["main"])
    for i in 0..<200 { store.appendItems(["i\(i)"], toSection: "main") }
    store.select(["nope"])  // a fault inside the gap: counted, state unchanged
    #expect(store.droppedEvents == 201 - 64 + 1)
    stall.release()
    try store.sync()
    #expect(store.bufferedEvents == 0)
    store.moveItem("i199", beforeItem: "i0")
    let live = store.state
    try store.close()

    let recorded = try events(path)
    #expect(recorded.count == 64 + 3)
    guard case .mark(let label) = recorded[64].operation else {
      Issue.record("no gap mark: \(recorded[64])")
      return
    }
    #expect(label.hasPrefix("listtape.gap dropped=138 faults=1 "))
    #expect(recorded[65].op == "batch")
    #expect(recorded[66].operation == .moveItem("i199", .before("i0")))
    #expect(try Timeline(path: path).state(at: recorded.count) == live)
  }

  @Test func syncMakesEverythingReadableAndCloseResumes() throws {
    let (dir, path) = temporaryStorePath()
    defer { try? FileManager.default.removeItem(atPath: dir) }
    var o = options()
    o.fsync = .always
    let store = try StoreCore(path: path, options: o)
    store.appendSections(["main"])
    for i in 0..<100 { store.appendItems(["i\(i)"]) }
    try store.sync()
    // A reader sees every event handed over before `sync()` while the store stays open.
    #expect(try Timeline(path: path).eventCount == 101)
    try store.close()
    try store.close()
    #expect(store.appendItems(["late"]) == nil)
    #expect(store.droppedEvents == 1)

    // A new store resumes from the log's last state and appends after it.
    let again = try StoreCore(path: path, options: options())
    #expect(again.itemIdentifiers(inSection: "main")?.count == 100)
    again.deleteItems(["i0"])
    let live = again.state
    try again.close()
    let timeline = try Timeline(path: path)
    #expect(timeline.eventCount == 102)
    #expect(try timeline.state(at: 102) == live)
  }

  @Test func concurrentCallersAreSerialised() throws {
    let (dir, path) = temporaryStorePath()
    defer { try? FileManager.default.removeItem(atPath: dir) }
    let store = try StoreCore(path: path, options: options())
    let sections = (0..<4).map { "s\($0)" }
    store.appendSections(sections)
    DispatchQueue.concurrentPerform(iterations: sections.count) { t in
      for i in 0..<300 {
        store.appendItems(["\(t).\(i)"], toSection: sections[t])
        if i % 10 == 0 { store.moveItem("\(t).\(i)", beforeItem: "\(t).0") }
        if i % 50 == 0 { store.deleteItems(["\(t).\(i - 1)"]) }
      }
    }
    let live = store.state
    #expect(store.faultCount == 4)  // "t.0" moved before itself
    try store.close()
    let timeline = try Timeline(path: path)
    #expect(timeline.eventCount == store.acceptedEvents)
    #expect(try timeline.state(at: timeline.eventCount) == live)
  }
}
