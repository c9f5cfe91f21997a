import Foundation
import ListTapeModel
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

@Suite struct TypedStoreTests {
  func options() -> ListStore.Options {
    var o = ListStore.Options()
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
    let store = try TypedListStore<Screen, UUID>(path: path, options: options())
    #expect(store.appendSections([.favorites, .all]) == nil)
    #expect(store.appendItems([ann, bob], toSection: .all) == nil)
    #expect(store.appendItems([cat], toParent: bob) == nil)
    #expect(store.expand([bob]) == nil)
    #expect(store.select([cat]) == nil)
    #expect(store.sectionIdentifiers == [.favorites, .all])
    #expect(store.itemIdentifiers(inSection: .all) == [ann, bob, cat])
    #expect(store.selectedItems == [cat])
    // The data source's index paths, both ways.
    #expect(store.indexPath(for: cat) == IndexPath(indexes: [1, 2]))
    #expect(store.itemIdentifier(for: IndexPath(indexes: [1, 1])) == bob)
    #expect(store.itemIdentifier(for: IndexPath(indexes: [0, 0])) == nil)
    #expect(store.sectionIdentifier(for: 1) == .all)
    #expect(store.index(for: .favorites) == 0)
    #expect(store.snapshot(for: .all)?.parent(of: cat) == bob)
    #expect(store.snapshot(for: .all)?.parent(of: bob) == nil)
    try store.base.close()

    let recorded = try Timeline(path: path).state(at: 5)
    #expect(recorded.sectionIdentifiers == ["favorites", "all"])
    #expect(recorded.itemIdentifiers(inSection: "all") == [ann, bob, cat].map(\.uuidString))
    #expect(recorded.selectedItems == [cat.uuidString])
  }

  /// Apple's pattern with the app's types: take the snapshot, change it, apply it; the
  /// store records the fewest events and keeps the selection that stays visible.
  @Test func applyingASnapshotKeepsTheVisibleSelection() throws {
    let (dir, path) = temporaryStorePath()
    defer { try? FileManager.default.removeItem(atPath: dir) }
    let store = try TypedListStore<Priority, Int>(path: path, options: options())
    store.setAllowsMultipleSelection(true)
    store.appendSections([.high, .low])
    store.appendItems([1, 2, 3], toSection: .high)
    store.appendItems([4], toParent: 3)
    store.expand([3])
    store.select([1, 4])
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
    #expect(store.base.state.allowsMultipleSelection)
    #expect(store.apply(store.snapshot()).isEmpty)
    try store.base.close()
    #expect(try Timeline(path: path).state(at: store.base.acceptedEvents) == store.base.state)
  }

  /// A type of the app's own, keyed through a codec passed once; spellings that do not
  /// decode (ids recorded by another build) are left out of what the store hands back.
  @Test func ownTypesThroughACodec() throws {
    let (dir, path) = temporaryStorePath()
    defer { try? FileManager.default.removeItem(atPath: dir) }
    let store = try TypedListStore<String, ContactID>(
      path: path, options: options(), sections: .standard, items: ContactID.codec)
    let a = ContactID(account: 1, local: 7)
    let b = ContactID(account: 2, local: 9)
    store.appendSections(["contacts"])
    store.appendItems([a, b], toSection: "contacts")
    store.base.appendItems(["not-a-contact"], toSection: "contacts")
    #expect(store.base.itemIdentifiers(inSection: "contacts") == ["1/7", "2/9", "not-a-contact"])
    #expect(store.itemIdentifiers(inSection: "contacts") == [a, b])
    #expect(store.deleteItems([a]) == nil)
    #expect(store.moveItem(b, beforeItem: a) == .missingAnchor("1/7"))
    #expect(store.itemIdentifiers(inSection: "contacts") == [b])
  }

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
