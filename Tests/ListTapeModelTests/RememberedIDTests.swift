import Testing

@testable import ListTapeModel

/// Long ids referenced again by the same string are found without hashing their bytes, and
/// the shortcut never changes an answer.
@Suite struct RememberedIDTests {
  static func long(_ c: Character, _ n: Int = 1 << 16) -> String { String(repeating: c, count: n) }

  /// What a decoded log does: every back-reference hands the fold the same string.
  @Test func repeatedReferencesAreAnsweredByIdentity() throws {
    let a = Self.long("a")
    let b = Self.long("b")
    var state = ListState()
    try state.apply(Event(.appendSections(["S"])))
    try state.apply(Event(.configure(multipleSelection: true)))
    try state.apply(
      Event(.appendItems([OutlineNode(a), OutlineNode(b)], section: "S", parent: nil)))
    let before = state.forest.itemIndex.rememberedAnswers
    try state.apply(Event(.expand(Array(repeating: a, count: 256))))
    try state.apply(Event(.select([a, b])))
    try state.apply(Event(.moveItem(a, .after(b))))
    try state.apply(Event(.update(item: a, title: "t", fields: nil)))
    // 256 + 2 + 2 + 1 references; the first of a and of b (at most) are hashed.
    #expect(state.forest.itemIndex.rememberedAnswers - before >= 259)
    #expect(state.isExpanded(a))
    #expect(state.selectedItems == [b, a])
    #expect(state.title(of: a) == "t")
  }

  /// Equal bytes in another string are found by hashing; different bytes of the same length
  /// are never taken for a remembered id.
  @Test func otherStringsTakeTheHashedPath() {
    var index = IdentifierIndex()
    let a = Self.long("a")
    let twin = String(decoding: Array(a.utf8), as: UTF8.self)
    var near = Array(a.utf8)
    near[near.count / 2] = UInt8(ascii: "b")
    let other = String(decoding: near, as: UTF8.self)
    index[a] = 7
    #expect(index.handle(remembering: a) == 7)
    #expect(index.handle(remembering: a) == 7)
    #expect(index.rememberedAnswers == 1)
    #expect(index.handle(remembering: twin) == 7)
    #expect(index.handle(remembering: other) == nil)
    #expect(index.handle(remembering: other) == nil)
    #expect(index.rememberedAnswers == 2)
    // Below the threshold nothing is remembered.
    let short = String(repeating: "s", count: IdentifierIndex.rememberedLength - 1)
    index[short] = 9
    #expect(index.handle(remembering: short) == 9)
    #expect(index.handle(remembering: short) == 9)
    #expect(index.rememberedAnswers == 2)
  }

  /// Any change of what an id maps to retires every remembered answer.
  @Test func changesRetireRememberedAnswers() {
    var index = IdentifierIndex()
    let a = Self.long("a")
    let b = Self.long("b")
    #expect(index.handle(remembering: a) == nil)
    index[a] = 1
    #expect(index.handle(remembering: a) == 1)
    index[b] = 2
    #expect(index.handle(remembering: a) == 1)
    index[a] = 3
    #expect(index.handle(remembering: a) == 3)
    index[a] = nil
    #expect(index.handle(remembering: a) == nil)
    #expect(index.handle(remembering: b) == 2)
  }

  /// A batch that removes a remembered id and then faults puts it back: the lookups after
  /// the rollback find it again, through the state as through the index.
  @Test func rollbackRestoresRememberedIDs() throws {
    let a = Self.long("a")
    var state = ListState()
    try state.apply(Event(.appendSections(["S"])))
    try state.apply(Event(.appendItems([OutlineNode(a)], section: "S", parent: nil)))
    try state.apply(Event(.expand([a])))
    #expect(throws: ListFault.self) {
      try state.apply(
        Event(.batch([Event(.deleteItems([a])), Event(.collapse([a]))])))
    }
    try state.apply(Event(.collapse([a, a])))
    #expect(!state.isExpanded(a))
    try state.apply(Event(.deleteItems([a])))
    #expect(throws: ListFault.self) { try state.apply(Event(.expand([a]))) }
    #expect(invariantViolations(state).isEmpty)
  }

  /// Many distinct long strings round robin through the four entries: every answer stays
  /// right.
  @Test func manyLongIDsStayExact() {
    var index = IdentifierIndex()
    let ids = (0..<12).map { "\(Self.long("x", 300))\($0)" }
    for (k, id) in ids.enumerated() where k % 2 == 0 { index[id] = Handle(k) }
    for _ in 0..<3 {
      for (k, id) in ids.enumerated() {
        #expect(index.handle(remembering: id) == (k % 2 == 0 ? Handle(k) : nil))
      }
    }
  }

  /// Fold hints skip long ids: hashing one per event would cost its length again.
  @Test func hintsDoNotHashLongIDs() {
    let a = Self.long("a")
    let hint = FoldHint(Event(.expand([a])))
    #expect(hint.first == 0 && hint.second == 0)
    #expect(FoldHint(Event(.expand(["short"]))).first == IdentifierIndex.hash(of: "short"))
  }
}
