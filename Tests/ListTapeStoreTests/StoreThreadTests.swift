import Dispatch
import Foundation
import ListTapeModel
import ListTapeRead
import Testing

@testable import ListTapeStore

/// `StoreCore` driven from many threads at once while its writer flushes: sends, snapshot
/// applies, reads, syncs and counters interleaved, with a buffer small enough to drop and
/// resync. Run under ThreadSanitizer by Tools/sanitize.sh; here it checks the outcome.
@Suite struct StoreThreadTests {
  @Test func manyThreadsSendReadAndSyncWhileTheWriterFlushes() throws {
    let (dir, path) = temporaryStorePath()
    defer { try? FileManager.default.removeItem(atPath: dir) }
    var options = StoreOptions()
    options.fsync = .never
    options.bufferCapacity = 64
    let store = try StoreCore(path: path, options: options)
    let threads = 6
    store.appendSections((0..<threads).map { "s\($0)" })
    store.setAllowsMultipleSelection(true)
    // Threads of their own: `concurrentPerform` may run the iterations one after another.
    let done = DispatchSemaphore(value: 0)
    let workers = (0..<threads).map { t in
      Thread {
        defer { done.signal() }
        let section = "s\(t)"
        for i in 0..<160 {
          let id = "\(t).\(i)"
          switch i % 8 {
          case 0:
            store.appendItems(
              [OutlineNode(id, children: [OutlineNode("\(id).c")])], toSection: section)
          case 1: store.expand(["\(t).\(i - 1)"])
          case 2: store.select(["\(t).\(i - 2).c"])
          case 3: _ = store.state.numberOfItems
          case 4:
            var next = store.state
            try? next.appendItems([OutlineNode(id)], toSection: section)
            store.apply(state: next)
          case 5: _ = (store.bufferedEvents, store.droppedEvents, store.selectedItems.count)
          case 6: if i % 24 == 6 { try? store.sync() }
          default: store.perform([.collapse(["\(t).\(i - 7)"]), .mark("m\(t)")])
          }
        }
      }
    }
    for worker in workers { worker.start() }
    for _ in workers { done.wait() }
    let live = store.state
    let accepted = store.acceptedEvents
    try store.close()
    let timeline = try Timeline(path: path)
    // Dropped events were replaced by a mark and one resync batch per gap: the log ends in
    // the state the threads left, whatever was dropped.
    let dropped = store.droppedEvents
    #expect(
      dropped == 0 ? timeline.eventCount == accepted : timeline.eventCount <= accepted + dropped)
    #expect(try timeline.state(at: timeline.eventCount) == live)
  }

  /// Empty states encoded, copied and loaded on several threads at once (a recorder's
  /// checkpoint beside an index build): no array the encoder or the loader makes for no
  /// room may be the process's shared empty one, whose count that initializer writes (a
  /// data race ThreadSanitizer reported in CI). Tools/sanitize.sh runs this suite.
  @Test func emptyStatesEncodeCopyAndLoadOnManyThreadsAtOnce() {
    let results = EncodedResults()
    DispatchQueue.concurrentPerform(iterations: 8) { k in
      let state = ListState()
      let direct = try? state.compactEncoded(segment: 0, dictionaryCount: 0).bytes
      let copied = try? CompactImage(state).encoded(segment: 0, dictionaryCount: 0).bytes
      let loaded = direct.flatMap { bytes in
        bytes.withUnsafeBytes {
          try? ListState(compact: $0, ids: IdSpace(), aliases: DefinitionAliases())
        }
      }
      let same = direct != nil && direct == copied && loaded == state
      results.set(k, same ? direct : nil)
    }
    let all = results.all
    #expect(all.allSatisfy { $0 != nil && $0 == all[0] })
  }

  /// The app's calls (`perform`, snapshot applies, selection, reads) from many threads:
  /// each `perform` is one event, faulting ones included, and the log replays to the list
  /// the threads left.
  @Test func manyThreadsPerformAndApplyThroughTheGenericStore() throws {
    let (dir, path) = temporaryStorePath()
    defer { try? FileManager.default.removeItem(atPath: dir) }
    var options = StoreOptions()
    options.fsync = .never
    options.bufferCapacity = 64
    let store = try ListStore<String, String>(path: path, options: options)
    let threads = 6
    try store.perform { try $0.appendSections((0..<threads).map { "s\($0)" }) }
    store.setAllowsMultipleSelection(true)
    let done = DispatchSemaphore(value: 0)
    let workers = (0..<threads).map { t in
      Thread {
        defer { done.signal() }
        let section = "s\(t)"
        for i in 0..<60 {
          let id = "\(t).\(i)"
          switch i % 6 {
          case 0:
            try? store.perform { list in
              try list.appendItems(
                [OutlineItem(id, title: id, children: [OutlineItem("\(id).c")])], toSection: section
              )
              try list.expand([id])
            }
          case 1: try? store.select(["\(t).\(i - 1).c"])
          case 2:
            // Faults on its second edit: both undone, one event recorded.
            try? store.perform { list in
              try list.appendItems([id], toSection: section)
              try list.moveItem(id, beforeItem: id)
            }
          case 3: _ = (store.itemIdentifiers(inSection: section), store.selectedItems.count)
          case 4:
            var next = store.snapshot()
            try? next.appendItems([id], toSection: section)
            store.apply(next)
          default: try? store.perform { try $0.collapse(["\(t).\(i - 5)"]) }
          }
        }
      }
    }
    for worker in workers { worker.start() }
    for _ in workers { done.wait() }
    let live = store.core.state
    // One per round from the moves; a stale snapshot applied by one thread may also undo
    // another's items, whose later selects and collapses then fault too.
    #expect(store.faultCount >= threads * 10)
    try store.close()
    let timeline = try Timeline(path: path)
    #expect(try timeline.state(at: timeline.eventCount) == live)
  }
}

/// What each thread of `emptyStatesEncodeCopyAndLoadOnManyThreadsAtOnce` made, under a lock.
private final class EncodedResults: @unchecked Sendable {
  private let lock = NSLock()
  private var values = [[UInt8]?](repeating: nil, count: 8)

  func set(_ k: Int, _ value: [UInt8]?) {
    lock.lock()
    values[k] = value
    lock.unlock()
  }

  var all: [[UInt8]?] {
    lock.lock()
    defer { lock.unlock() }
    return values
  }
}
