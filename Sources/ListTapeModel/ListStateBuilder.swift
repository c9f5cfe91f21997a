import ListTapeJSON

/// Builds a `ListState` from its sections and their items in pre-order, each with its level,
/// flags, id bytes and content, as a checkpoint holds them: in O(items), with one probe of
/// the id table per item and no allocation per id. State decoders rebuild states with it.
package struct ListStateBuilder {
  var state = ListState()
  var scratch = BuildScratch()
  /// The section being filled, or -1 before the first.
  var section: Handle = -1
  var selected: [Handle] = []

  /// Why the items given do not make a state.
  package enum Failure: Error, Equatable, CustomStringConvertible {
    case duplicateSection(String)
    case duplicateItem(String)
    /// An item deeper than one level below the item before it.
    case skippedLevel(level: Int, depth: Int)
    /// An item below level 255 (protocol section 5).
    case tooDeep(level: Int)
    case emptyIdentifier
    case invalidUTF8
    case itemOutsideSection
    case hiddenSelection(String)
    case tooManySelected(Int)

    package var description: String {
      switch self {
      case .duplicateSection(let id): return "duplicate section \"\(id)\""
      case .duplicateItem(let id): return "duplicate item \"\(id)\""
      case .skippedLevel(let level, let depth):
        return "item level \(level) skips a level (previous depth \(depth))"
      case .tooDeep(let level):
        return "item level \(level) is past the deepest level (\(Forest.deepestLevel))"
      case .emptyIdentifier: return "empty identifier"
      case .invalidUTF8: return "invalid UTF-8 in an identifier"
      case .itemOutsideSection: return "an item comes before any section"
      case .hiddenSelection(let id): return "selected item \"\(id)\" is hidden"
      case .tooManySelected(let n): return "\(n) items selected in single-selection mode"
      }
    }
  }

  package init(allowsMultipleSelection: Bool) {
    state.allowsMultipleSelection = allowsMultipleSelection
  }

  /// A builder whose items and sections are entries of `ids` (a log's dictionary).
  package init(allowsMultipleSelection: Bool, ids: IdSpace) {
    state.allowsMultipleSelection = allowsMultipleSelection
    state.forest.ids = ids.withoutStringTable()
    state.forest.idsFollowLog = true
  }

  /// Makes room for `items` more items, so that the tables grow once instead of doubling
  /// while they arrive.
  package mutating func reserve(items: Int) {
    let needed = state.forest.nodes.count + items
    if state.forest.nodes.capacity < needed {
      state.forest.nodes.reserveCapacity(needed)
      state.forest.entryOf.reserveCapacity(needed)
      state.forest.content.reserveCapacity(needed)
    }
    // Lists of a few items take a block each; long ones a block per 12 items and a few more.
    let blocks = state.forest.blocks.count + items / 4 + 16
    if state.forest.blocks.capacity < blocks {
      state.forest.blocks.reserveCapacity(blocks)
      state.forest.slots.reserveCapacity(blocks * BlockLayout.stride)
    }
    let entries = state.forest.ids.count
    if state.forest.handleOf.count < entries {
      state.forest.handleOf.append(
        contentsOf: repeatElement(-1, count: entries &- state.forest.handleOf.count))
    }
  }

  /// Ends the current section and starts the next one, whose id is `id`.
  package mutating func beginSection(_ id: String) throws(Failure) {
    try beginSection(entry: state.forest.ids.define(id))
  }

  /// Ends the current section and starts the next one, whose id is entry `e`.
  package mutating func beginSection(entry e: Int32) throws(Failure) {
    endSection()
    guard let s = state.forest.allocateSection(entry: e) else {
      throw .duplicateSection(state.forest.ids.text(Int(e)))
    }
    state.forest.sectionOrder.append(s)
    section = s
  }

  /// Adds the next item of the current section, in pre-order: `level` is at most one more
  /// than the item before's (0 for a root item), `id` well-formed UTF-8, new to the state.
  @discardableResult
  package mutating func appendItem(
    level: Int, id: UnsafeBufferPointer<UInt8>, expanded: Bool, selected: Bool,
    title: String?, fields: [String: String]?
  ) throws(Failure) -> Int32 {
    try checkPlace(level: level)
    guard !id.isEmpty else { throw .emptyIdentifier }
    guard UTF8Validation.isValid(id) else { throw .invalidUTF8 }
    let e = IdText.withStored(id) { form in
      state.forest.ids.entry(ofText: id) ?? state.forest.ids.append(stored: form)
    }
    let c = state.forest.storeText(title: title, fields: fields)
    return try appendItem(
      level: level, entry: e, expanded: expanded, selected: selected, content: c)
  }

  /// Adds the next item as `appendItem(level:id:…)` does, its id entry `e` of the ids and
  /// its title and fields already in the state's text (`content`). - Complexity: O(1), no
  /// hashing.
  @discardableResult
  mutating func appendItem(
    level: Int, entry e: Int32, expanded: Bool, selected: Bool, content c: ContentRef
  ) throws(Failure) -> Int32 {
    try checkPlace(level: level)
    let built = state.forest.buildItem(
      &scratch, level: level, entry: e, expanded: expanded, selected: selected,
      content: c, replacing: .nothing, tracking: false)
    switch built {
    case .built(let x):
      if selected { self.selected.append(x) }
      return x
    case .taken: throw .duplicateItem(state.forest.ids.text(Int(e)))
    }
  }

  /// Checks that an item at `level` may come next: inside a section, at most one level
  /// below the item before, not below the deepest level.
  private func checkPlace(level: Int) throws(Failure) {
    guard section >= 0 else { throw .itemOutsideSection }
    guard level <= scratch.deepestNext else {
      throw .skippedLevel(level: level, depth: scratch.deepestNext)
    }
    guard level <= Forest.deepestLevel else { throw .tooDeep(level: level) }
  }

  /// Links the current section's root items into its list.
  private mutating func endSection() {
    guard section >= 0 else { return }
    state.forest.close(&scratch, to: 0)
    for x in scratch.pending { state.forest.nodes[Int(x)].section = section }
    let root = scratch.pending.withUnsafeBufferPointer { state.forest.buildList($0) }
    state.forest.sections[Int(section)].roots = root
    state.forest.visibleRows &+= Int(state.forest.visSum(root))
    scratch.reset()
  }

  /// The state built, once its selection is checked: only visible items, at most one in
  /// single-selection mode.
  package mutating func finish() throws(Failure) -> ListState {
    endSection()
    section = -1
    try Self.checkSelection(selected, of: state)
    state.checkInvariants()
    return state
  }

  /// Checks a built state's selection (`selected`, in the order read): only visible items,
  /// at most one in single-selection mode.
  static func checkSelection(_ selected: [Handle], of state: ListState) throws(Failure) {
    for x in selected where !state.forest.isVisible(x) {
      throw .hiddenSelection(state.forest.id(of: x))
    }
    guard state.allowsMultipleSelection || selected.count <= 1 else {
      throw .tooManySelected(selected.count)
    }
  }
}
