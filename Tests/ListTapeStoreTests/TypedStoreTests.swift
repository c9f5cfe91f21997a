import Foundation
import ListTapeModel
import ListTapeRead
import Testing

@testable import ListTapeStore

/// An app's own section type: a String-backed enum, which conforms by declaring it.
enum Screen: String, ListIdentifier {
  case favorites, all
}

/// An Int-backed enum, spelled by its raw value.
enum Priority: Int, ListIdentifier {
  case low = 1
  case high = 2
}

/// A model id with no string form of its own: the app passes a codec once.
struct ContactID: Hashable, Sendable {
  var account: Int
  var local: Int

  static let codec = IdentifierCodec<ContactID>(
    encode: { "\($0.account)/\($0.local)" },
    decode: { text in
      let parts = text.split(separator: "/").compactMap { Int($0) }
      return parts.count == 2 ? ContactID(account: parts[0], local: parts[1]) : nil
    })
}

/// Collects what a store's fault handler hears, from any thread.
final class FaultLog: @unchecked Sendable {
  private let lock = NSLock()
  private var seen: [StoreFault] = []

  func note(_ fault: StoreFault) {
    lock.lock()
    seen.append(fault)
    lock.unlock()
  }

  /// Each fault heard, with the site of its call.
  var reports: [StoreFault] {
    lock.lock()
    defer { lock.unlock() }
    return seen
  }

  var faults: [ListFault] { reports.map(\.fault) }
}

/// The fault an edit threw, or nil.
func fault(_ call: () throws -> Void) -> ListFault? {
  do {
    try call()
    return nil
  } catch {
    return error as? ListFault
  }
}

@Suite struct TypedStoreTests {
  func options() -> StoreOptions {
    var o = StoreOptions()
    o.fsync = .never
    return o
  }

  /// An app keyed by an enum and UUIDs records without spelling ids itself; the log holds
  /// the enum's raw values and the UUIDs' strings, and reads back as the app's types.
  @Test func enumSectionsAndUUIDItems() throws {
    let (dir, path) = temporaryStorePath()
    defer { try? FileManager.default.removeItem(atPath: dir) }
    let ann = UUID()
    let bob = UUID()
    let cat = UUID()
    let store = try ListStore<Screen, UUID>(path: path, options: options())
    try store.perform { try $0.appendSections([.favorites, .all]) }
    try store.perform { try $0.appendItems([ann, bob], toSection: .all) }
    try store.perform { list in
      var all = try #require(list.sectionSnapshot(for: .all))
      try all.append([cat], to: bob)
      try all.expand([bob])
      try list.apply(all, to: .all)
    }
    try store.select([cat])
    #expect(store.sectionIdentifiers == [.favorites, .all])
    #expect(store.itemIdentifiers(inSection: .all) == [ann, bob, cat])
    #expect(store.itemIdentifiers(inSection: .favorites) == [])
    #expect(store.selectedItems == [cat])
    // The data source's index paths, both ways.
    #expect(store.indexPath(for: cat) == IndexPath(indexes: [1, 2]))
    #expect(store.itemIdentifier(for: IndexPath(indexes: [1, 1])) == bob)
    #expect(store.itemIdentifier(for: IndexPath(indexes: [0, 0])) == nil)
    #expect(store.sectionIdentifier(for: 1) == .all)
    #expect(store.index(for: .favorites) == 0)
    #expect(store.snapshot(for: .all)?.parent(of: cat) == bob)
    #expect(store.snapshot(for: .all)?.parent(of: bob) == nil)
    #expect(store.snapshot(for: .all)?.items == [ann, bob, cat])
    #expect(store.acceptedEvents == 4)
    try store.close()

    let timeline = try Timeline(path: path)
    let recorded = try timeline.snapshot(at: 4)
    #expect(recorded.sectionIdentifiers == ["favorites", "all"])
    #expect(recorded.itemIdentifiers(inSection: "all") == [ann, bob, cat].map(\.uuidString))
    let typed = try timeline.snapshot(
      at: 4, sections: IdentifierCodec<Screen>.standard, items: IdentifierCodec<UUID>.standard)
    #expect(typed.itemIdentifiers(inSection: Screen.all) == [ann, bob, cat])
  }

  /// Apple's pattern with the app's types: take the snapshot, change it, apply it; the
  /// store records the fewest events and keeps the selection that stays visible.
  @Test func applyingASnapshotKeepsTheVisibleSelection() throws {
    let (dir, path) = temporaryStorePath()
    defer { try? FileManager.default.removeItem(atPath: dir) }
    let store = try ListStore<Priority, Int>(path: path, options: options())
    store.setAllowsMultipleSelection(true)
    try store.perform { list in
      try list.appendSections([.high, .low])
      try list.appendItems(
        [OutlineItem(1), OutlineItem(2), OutlineItem(3, children: [OutlineItem(4)])],
        toSection: .high)
      try list.expand([3])
    }
    try store.select([1, 4])
    var next = store.snapshot()
    #expect(next.sectionIdentifiers == [.high, .low])
    #expect(next.itemIdentifiers(inSection: .high) == [1, 2, 3, 4])
    try next.moveItem(2, beforeItem: 1)
    try next.appendItems([5], toSection: .low)
    var high = try #require(next.sectionSnapshot(for: .high))
    try high.collapse([3])
    try next.apply(high, to: .high)
    let ops = store.apply(next)
    #expect(ops.count == 3)  // move, insert, collapse (which deselects 4)
    #expect(store.selectedItems == [1])
    #expect(store.itemIdentifiers(inSection: .high) == [2, 1, 3])
    #expect(store.itemIdentifiers(inSection: .low) == [5])
    #expect(store.allowsMultipleSelection)
    #expect(store.apply(store.snapshot()).isEmpty)
    let live = store.core.state
    try store.close()
    #expect(try Timeline(path: path).state(at: store.acceptedEvents) == live)
  }

  /// A type of the app's own, keyed through a codec passed once. A log naming an id the
  /// codec cannot read (recorded by another build) is refused at open, naming that id,
  /// instead of the id vanishing from what the store hands back.
  @Test func ownTypesThroughACodec() throws {
    let (dir, path) = temporaryStorePath()
    defer { try? FileManager.default.removeItem(atPath: dir) }
    let store = try ListStore<String, ContactID>(
      path: path, options: options(), sections: .standard, items: ContactID.codec)
    let a = ContactID(account: 1, local: 7)
    let b = ContactID(account: 2, local: 9)
    try store.perform { list in
      try list.appendSections(["contacts"])
      try list.appendItems([a, b], toSection: "contacts")
    }
    #expect(store.itemIdentifiers(inSection: "contacts") == [a, b])
    try store.perform { try $0.deleteItems([a]) }
    #expect(
      fault { try store.perform { try $0.moveItem(b, beforeItem: a) } } == .missingAnchor("1/7"))
    #expect(store.itemIdentifiers(inSection: "contacts") == [b])
    try store.close()

    // Another build records an id this codec cannot read.
    let strings = try ListStore<String, String>(path: path, options: options())
    try strings.perform { try $0.appendItems(["not-a-contact"], toSection: "contacts") }
    try strings.close()
    #expect(throws: StoreError.self) {
      try ListStore<String, ContactID>(
        path: path, options: options(), sections: .standard, items: ContactID.codec)
    }
    do {
      _ = try ListStore<String, ContactID>(
        path: path, options: options(), sections: .standard, items: ContactID.codec)
    } catch {
      guard case .undecodableIdentifier(let id, _) = error else {
        Issue.record("unexpected \(error)")
        return
      }
      #expect(id == "not-a-contact")
    }
    // The refused store released the log: it opens again.
    let again = try ListStore<String, String>(path: path, options: options())
    #expect(again.itemIdentifiers(inSection: "contacts") == ["2/9", "not-a-contact"])
    try again.close()
    let timeline = try Timeline(path: path)
    #expect(throws: StoreError.self) {
      try timeline.snapshot(
        at: timeline.eventCount, sections: IdentifierCodec<String>.standard, items: ContactID.codec)
    }
  }

  /// A faulting edit throws where it is made, tells the fault handler, is recorded anyway,
  /// and leaves the list as it was; the edits of one `perform` stand or fall together, as
  /// one event that replays to the same fault.
  @Test func faultsReportAtTheCallThatMadeThem() throws {
    let (dir, path) = temporaryStorePath()
    defer { try? FileManager.default.removeItem(atPath: dir) }
    let heard = FaultLog()
    var o = options()
    o.onFault = { heard.note($0) }
    let store = try ListStore<String, String>(path: path, options: o)
    try store.perform { list in
      try list.appendSections(["main"])
      try list.appendItems([OutlineItem("a", children: [OutlineItem("a1")])], toSection: "main")
    }
    #expect(fault { try store.select(["a1"]) } == .hiddenItem("a1"))
    let before = store.snapshot()
    // Two edits, the second faults: both undone, one batch recorded.
    let batchFault = fault {
      try store.perform { list in
        try list.appendItems(["b"], toSection: "main")
        try list.moveItem("a", afterItem: "a1")
      }
    }
    #expect(
      batchFault
        == .inBatch(
          index: 1, op: "moveItem", fault: .moveIntoOwnSubtree(item: "a", anchor: "a1")))
    #expect(store.snapshot() == before)
    // A fault caught inside the closure still ends the perform and is still reported.
    let caught = fault {
      try store.perform { list in
        _ = try? list.deleteSections(["nothing"])
        _ = try? list.expand(["missing"])
        try list.appendItems(["c"], toSection: "main")
      }
    }
    #expect(caught == .inBatch(index: 1, op: "expand", fault: .missingItem("missing")))
    #expect(store.snapshot() == before)
    // An error of the app's own undoes the edits and records nothing.
    struct Cancelled: Error {}
    #expect(throws: Cancelled.self) {
      try store.perform { list in
        try list.appendItems(["d"], toSection: "main")
        throw Cancelled()
      }
    }
    #expect(store.snapshot() == before)
    #expect(store.faultCount == 3)
    #expect(heard.faults.count == 3)
    #expect(heard.faults.first == .hiddenItem("a1"))
    #expect(heard.faults.last == caught)
    #expect(store.acceptedEvents == 4)
    try store.close()

    // The log holds the faulting events, and replaying reports the same faults.
    let timeline = try Timeline(path: path)
    var replayed: [ListFault] = []
    _ = try timeline.replay(through: timeline.eventCount) { _, _, f in
      replayed.append(f)
      return true
    }
    #expect(replayed == [.hiddenItem("a1"), batchFault, caught].compactMap { $0 })
  }

  /// Titles and fields go in with the insertion: one event per edit, not one more per row.
  @Test func titlesAndFieldsAtInsert() throws {
    let (dir, path) = temporaryStorePath()
    defer { try? FileManager.default.removeItem(atPath: dir) }
    let store = try ListStore<Screen, Int>(path: path, options: options())
    try store.perform { list in
      try list.appendSections([.all])
      try list.appendItems(
        [
          OutlineItem(1, title: "Ann", fields: ["email": "ann@example.com"]),
          OutlineItem(2, title: "Docs", expanded: true, children: [OutlineItem(3, title: "a.txt")]),
        ], toSection: .all)
      try list.insertItems([OutlineItem(4, title: "Bob")], afterItem: 1)
      try list.reloadItems([1])
      try list.reconfigureItems([2])
      try list.updateItem(1, fields: ["phone": "1"])
    }
    let list = store.snapshot()
    #expect(list.itemIdentifiers(inSection: .all) == [1, 4, 2, 3])
    #expect(list.title(of: 2) == "Docs")
    #expect(list.title(of: 3) == "a.txt")
    #expect(list.fields(of: 1) == ["email": "ann@example.com", "phone": "1"])
    // Apple's section snapshot verbs, with content at insert.
    var all = try #require(store.snapshot(for: .all))
    var files = ListSectionSnapshot<Int>()
    try files.append([OutlineItem(5, title: "b.txt"), OutlineItem(6, title: "c.txt")])
    try all.replace(childrenOf: 2, using: files)
    try store.apply(all, to: .all)
    #expect(store.snapshot().title(of: 6) == "c.txt")
    #expect(store.snapshot(for: .all)?.items == [1, 4, 2, 5, 6])
    #expect(store.acceptedEvents == 2)
    try store.close()
    let events = try Timeline(path: path).event(1)
    #expect(events.op == "batch")
    guard case .batch(let inner) = events.operation else { return }
    #expect(
      inner.map(\.op) == [
        "appendSections", "appendItems", "insertItems", "reloadItems", "reconfigureItems", "update",
      ])
  }

  /// The whole lifecycle on the generic store, without reaching for the string store.
  @Test func lifecycleWithoutTheStringStore() async throws {
    let (dir, path) = temporaryStorePath()
    defer { try? FileManager.default.removeItem(atPath: dir) }
    let store = try await ListStore<Screen, UUID>.open(path: path, options: options())
    let id = UUID()
    try store.perform { list in
      try list.appendSections([.favorites])
      try list.appendItems([id])
    }
    store.mark("loaded")
    try await store.sync()
    #expect(store.bufferedEvents == 0)
    #expect(try store.flush(deadline: .now() + 5))
    #expect(store.path == path)
    #expect(store.droppedEvents == 0)
    #expect(store.lastWriteError == nil)
    try store.close()
    let reopened = try await ListStore<Screen, UUID>.open(path: path, options: options())
    #expect(reopened.itemIdentifiers(inSection: .favorites) == [id])
    try reopened.close()
  }

  #if os(Linux) && DEBUG
  /// Calling the store from inside its own `perform`, which would wait forever for the lock
  /// the closure runs under, stops a debug build at that call.
  @Test func callingTheStoreInsideItsPerformStops() async {
    await #expect(processExitsWith: .failure) {
      let (_, path) = temporaryStorePath()
      let store = try ListStore<String, String>(path: path)
      try store.perform { list in
        try list.appendSections(["main"])
        _ = store.selectedItems
      }
    }
  }
  #endif

  #if os(Linux)
  /// A codec whose decode does not invert its encode stops the program at the encode, the
  /// call that used it, instead of recording a spelling that reads back as another id.
  @Test func aCodecThatDoesNotRoundTripFailsWhenItEncodes() async {
    await #expect(processExitsWith: .failure) {
      let lossy = IdentifierCodec<Int>(encode: { "\($0 / 2)" }, decode: { Int($0) })
      var list = ListSnapshot<String, Int>(sections: .standard, items: lossy)
      try? list.appendSections(["main"])
      try? list.appendItems([3], toSection: "main")
    }
  }
  #endif

  /// `indexPath(for:)` and `itemIdentifier(at:)` are inverse on every visible item of
  /// random states, and nil outside them.
  @Test(arguments: [UInt64(1), 2, 3, 4])
  func indexPathsRoundTrip(seed: UInt64) {
    var lists = RandomLists(seed: seed)
    for _ in 0..<20 {
      let s = lists.state()
      for (section, id) in s.sectionIdentifiers.enumerated() {
        for (row, item) in (s.itemIdentifiers(inSection: id) ?? []).enumerated() {
          #expect(s.indexPath(for: item).map { [$0.section, $0.item] } == [section, row])
          #expect(s.itemIdentifier(at: (section, row)) == item)
        }
        #expect(s.itemIdentifier(at: (section, s.numberOfItems(inSection: id) ?? 0)) == nil)
      }
      #expect(s.itemIdentifier(at: (s.numberOfSections, 0)) == nil)
      #expect(s.itemIdentifier(at: (0, -1)) == nil)
      for id in s.sectionIdentifiers.flatMap({ s.allItems(inSection: $0) ?? [] })
      where !s.isVisible(id) {
        #expect(s.indexPath(for: id) == nil)
      }
    }
  }
}
