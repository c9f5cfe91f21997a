import Dispatch
import Foundation
import ListTapeModel

/// The recording store an app holds, keyed by its own identifier types as
/// `UICollectionViewDiffableDataSource<Section, Item>` is: it owns the list, applies every
/// edit at once on the caller's thread, and records it as an event of a crash-safe log in
/// the background, faults included (the log is the evidence of what would have crashed
/// UIKit). `ListStore<String, String>` records the log's own spellings.
///
/// Edit the list with ``perform(fileID:line:function:_:)``, whose closure gets the list as
/// a ``ListSnapshot``, or apply a changed snapshot with ``apply(_:fileID:line:function:)``;
/// selection and bookmarks are the store's own calls. Every call that can fault throws the
/// `ListFault` after recording it, and tells ``StoreOptions/onFault`` first. Calls are safe
/// from any thread, recorded in the order they were made. See docs/recording.md.
public struct ListStore<Section: Hashable, Item: Hashable>: Sendable {
  /// The store that records, in the log's spellings.
  package let core: StoreCore
  let sections: IdentifierCodec<Section>
  let items: IdentifierCodec<Item>

  /// Opens LOG for recording (creating it if absent), spelling identifiers with these
  /// codecs. The store starts from the state the log ends in, so an app resumes its
  /// session; a log naming an identifier the codecs cannot read is refused
  /// (`StoreError.undecodableIdentifier`). A relative path is resolved against the working
  /// directory, and refused when that is `/` (as in an iOS app). Blocks while the log is
  /// scanned: from the main thread, prefer ``open(path:options:sections:items:)``.
  public init(
    path: String, options: StoreOptions = StoreOptions(), sections: IdentifierCodec<Section>,
    items: IdentifierCodec<Item>
  ) throws(StoreError) {
    try self.init(core: StoreCore(path: path, options: options), sections: sections, items: items)
  }

  /// Keys an open store by these identifier types, refusing (and closing) it when its state
  /// names an identifier the codecs cannot read.
  package init(core: StoreCore, sections: IdentifierCodec<Section>, items: IdentifierCodec<Item>)
    throws(StoreError)
  {
    if let bad = core.withState({ Self.undecodable($0, sections, items) }) {
      try? core.close()
      throw .undecodableIdentifier(bad, path: core.path)
    }
    self.core = core
    self.sections = sections
    self.items = items
  }

  /// The first identifier of `state` that a codec cannot read, if any. - Complexity: O(n)
  /// unless both codecs are the identity.
  package static func undecodable(
    _ state: borrowing ListState, _ sections: IdentifierCodec<Section>,
    _ items: IdentifierCodec<Item>
  ) -> String? {
    let ids = state.sectionIdentifiers
    if let bad = sections.firstUndecodable(ids) { return bad }
    guard !items.isIdentity else { return nil }
    for id in ids {
      if let bad = items.firstUndecodable(state.allItems(inSection: id) ?? []) { return bad }
    }
    return nil
  }

  /// `init(path:options:sections:items:)` off the calling thread: the log is scanned and its
  /// end state rebuilt on a background queue, folding at most one checkpoint interval of
  /// events, and the store returns with its state ready.
  public static func open(
    path: String, options: StoreOptions = StoreOptions(), sections: IdentifierCodec<Section>,
    items: IdentifierCodec<Item>
  ) async throws(StoreError) -> Self {
    try Self(
      core: await StoreCore.open(path: path, options: options), sections: sections, items: items)
  }

  /// Tells the fault handler, with the site of the call that made it, then throws.
  func report(_ fault: ListFault?, at site: String?) throws(ListFault) {
    guard let fault else { return }
    core.options.onFault?(StoreFault(fault, site: site))
    throw fault
  }

  /// The site an editing call records: `"\(fileID):\(line) \(function)"` (its caller's
  /// `#fileID`, `#line`, `#function`), or nil when ``StoreOptions/recordsSites`` is off.
  func site(_ fileID: String, _ line: Int, _ function: String) -> String? {
    core.options.recordsSites ? "\(fileID):\(line) \(function)" : nil
  }
}

extension ListStore where Section: ListIdentifier, Item: ListIdentifier {
  /// Opens LOG for recording, spelling identifiers their own way (`listIdentifier`); see
  /// ``init(path:options:sections:items:)``.
  public init(path: String, options: StoreOptions = StoreOptions()) throws(StoreError) {
    try self.init(path: path, options: options, sections: .standard, items: .standard)
  }

  /// Opens LOG for recording off the calling thread; see
  /// ``open(path:options:sections:items:)``.
  public static func open(path: String, options: StoreOptions = StoreOptions())
    async throws(StoreError) -> Self
  {
    try await open(path: path, options: options, sections: .standard, items: .standard)
  }
}

// MARK: - Editing

/// What a `perform` swaps into its snapshot while it lends the store's state out: shared, so
/// that no call builds (and allocates) an empty list.
private let emptyListState = ListState()

extension ListStore {
  /// Edits the list in place: `body` gets it as a snapshot, and every edit it makes is
  /// recorded, all of them as one event (a `batch` when there are several). The edits stand
  /// or fall together: when one faults, every edit of `body` is undone, the event is
  /// recorded anyway (the log's evidence), ``StoreOptions/onFault`` hears of it, and this
  /// throws the `ListFault` as replaying the log reports it. Nothing is diffed or copied.
  ///
  ///     try store.perform { list in
  ///       try list.appendItems([OutlineItem(file.id, title: file.name)], toSection: .files)
  ///     }
  ///
  /// An error `body` throws of its own (no edit faulted) undoes its edits, records nothing
  /// and is rethrown. `body` runs under the store's lock: it reads and edits through `list`
  /// only (a call into the store from inside it would wait forever; debug builds stop there).
  ///
  /// The event records its site, the caller's `fileID`, `line` and `function` (leave them
  /// to their defaults), unless ``StoreOptions/recordsSites`` is off.
  public func perform(
    fileID: String = #fileID, line: Int = #line, function: String = #function,
    _ body: (inout ListSnapshot<Section, Item>) throws -> Void
  ) throws {
    var abandoned: (any Error)?
    let site = site(fileID, line, function)
    let fault = core.edit(site: site) { state in
      var list = ListSnapshot(live: emptyListState, sections: sections, items: items)
      swap(&list.state, &state)
      list.journal = .init()
      do {
        try body(&list)
      } catch {
        abandoned = error
      }
      // A list assigned a whole other snapshot has lost the store's state and its journal:
      // nothing could be recorded or undone, so that is a programming error.
      precondition(
        list.journal != nil, "perform's list was replaced by another snapshot: edit it in place")
      swap(&list.state, &state)
      guard let journal = list.journal, journal.fault != nil || abandoned == nil else {
        return nil
      }
      abandoned = nil
      return (journal.operations, journal.fault)
    }
    if let abandoned { throw abandoned }
    try report(fault, at: site)
  }

  /// Makes the sections and outlines those of `snapshot` (take it from ``snapshot()``, as
  /// Apple's `dataSource.snapshot()`, so that what the app does not touch stays), keeping
  /// the selection mode and the selected items that stay visible, and records the fewest
  /// events that do so as one event (nothing when nothing changes). Diffs the whole list:
  /// where the app knows what changed, ``perform(fileID:line:function:_:)`` costs less.
  /// - Returns: the operations recorded (empty when nothing changed).
  @discardableResult
  public func apply(
    _ snapshot: ListSnapshot<Section, Item>, fileID: String = #fileID, line: Int = #line,
    function: String = #function
  ) -> [ListOperation] {
    core.apply(site: site(fileID, line, function)) { snapshot.target(from: $0) }
  }

  /// Replaces one section's outline (Apple's `apply(_:to:)`), recording the fewest events
  /// that do so. A snapshot that cannot apply (a missing section, an item of another
  /// section) records one faulting `applySectionSnapshot` event and throws its fault.
  public func apply(
    _ snapshot: ListSectionSnapshot<Item>, to section: Section, fileID: String = #fileID,
    line: Int = #line, function: String = #function
  ) throws(ListFault) {
    let site = site(fileID, line, function)
    try report(core.apply(snapshot.outline, to: sections.spell(section), site: site), at: site)
  }

  /// Selects visible items (`collectionView(_:didSelectItemAt:)`); in single-selection mode
  /// the selection becomes these (at most one).
  public func select(
    _ ids: [Item], fileID: String = #fileID, line: Int = #line, function: String = #function
  ) throws(ListFault) {
    let site = site(fileID, line, function)
    try report(core.send(.select(items.spellAll(ids)), site: site), at: site)
  }

  /// Deselects these items (`didDeselectItemAt`), or everything when nil.
  public func deselect(
    _ ids: [Item]? = nil, fileID: String = #fileID, line: Int = #line,
    function: String = #function
  ) {
    _ = core.send(.deselect(ids.map(items.spellAll)), site: site(fileID, line, function))
  }

  /// Sets the selection mode (`allowsMultipleSelection`); single clears the selection.
  public func setAllowsMultipleSelection(
    _ value: Bool, fileID: String = #fileID, line: Int = #line, function: String = #function
  ) {
    _ = core.send(.configure(multipleSelection: value), site: site(fileID, line, function))
  }

  /// Records a bookmark (a screen shown, a test step) that `listtape show --at mark:LABEL`
  /// finds.
  public func mark(
    _ label: String, fileID: String = #fileID, line: Int = #line, function: String = #function
  ) {
    _ = core.send(.mark(label), site: site(fileID, line, function))
  }
}

// MARK: - Reading

extension ListStore {
  /// The sections and outlines, to change and `apply` (Apple's `dataSource.snapshot()`).
  /// - Complexity: O(1) until it is changed, then one copy of the list.
  public func snapshot() -> ListSnapshot<Section, Item> {
    core.withState { ListSnapshot(copy $0, sections: sections, items: items) }
  }

  /// One section's outline, nil when absent (Apple's `snapshot(for:)`).
  public func snapshot(for section: Section) -> ListSectionSnapshot<Item>? {
    core.withState { $0.sectionSnapshot(for: sections.spell(section)) }.map {
      ListSectionSnapshot(outline: $0, items: items)
    }
  }

  /// Sections in display order.
  public var sectionIdentifiers: [Section] {
    sections.readAll(core.withState { $0.sectionIdentifiers })
  }

  /// Visible items of a section, the rows it shows (empty when absent, as on a snapshot).
  public func itemIdentifiers(inSection section: Section) -> [Item] {
    items.readAll(core.withState { $0.itemIdentifiers(inSection: sections.spell(section)) } ?? [])
  }

  /// The visible item at `indexPath` (section, item), nil when out of range.
  public func itemIdentifier(for indexPath: IndexPath) -> Item? {
    guard indexPath.count == 2 else { return nil }
    return core.withState { $0.itemIdentifier(at: (indexPath[0], indexPath[1])) }.map(items.read)
  }

  /// Where a visible item shows, nil when hidden or absent.
  public func indexPath(for item: Item) -> IndexPath? {
    core.withState { $0.indexPath(for: items.spell(item)) }.map {
      IndexPath(indexes: [$0.section, $0.item])
    }
  }

  /// The section at a position, nil when out of range.
  public func sectionIdentifier(for index: Int) -> Section? {
    let ids = core.withState { $0.sectionIdentifiers }
    return ids.indices.contains(index) ? sections.read(ids[index]) : nil
  }

  /// The position of a section, nil when absent.
  public func index(for section: Section) -> Int? {
    core.withState { $0.indexOfSection(sections.spell(section)) }
  }

  /// Selected items in display order.
  public var selectedItems: [Item] { items.readAll(core.withState { $0.selectedItems }) }

  /// Whether several items may be selected at once.
  public var allowsMultipleSelection: Bool { core.withState { $0.allowsMultipleSelection } }
}

// MARK: - Lifecycle

/// What an app needs around launch, suspension and termination (docs/apple.md).
extension ListStore {
  /// The log being recorded (absolute; `resume(path:)` may change it).
  public var path: String { core.path }

  /// Waits until every event handed to the store before this call is written and forced
  /// to stable storage; throws the first write failure, if any. Blocks the calling thread:
  /// from the main thread, prefer `await sync()`.
  public func sync() throws(StoreError) { try core.sync() }

  /// `sync()` without blocking a thread: suspends until every event handed to the store
  /// before the call is written and forced to stable storage.
  public func sync() async throws(StoreError) { try await core.sync() }

  /// Writes and syncs what is buffered, waiting at most until `deadline` (a background
  /// task's expiration handler, termination). Returns true when everything handed to the
  /// store before the call is on stable storage, false when the deadline came first.
  @discardableResult
  public func flush(deadline: DispatchTime) throws(StoreError) -> Bool {
    try core.flush(deadline: deadline)
  }

  /// Writes what is buffered, syncs and closes the log. Later edits still apply to the list
  /// but are counted as dropped. Closing twice does nothing; a store that is released
  /// closes itself.
  public func close() throws(StoreError) { try core.close() }

  /// After a write failure (`lastWriteError`), records again into the same log or, with
  /// `path`, into another one, writing one gap (a `mark` counting the events lost and a
  /// `batch` that turns the log's last state into the live one). Blocks like `init`.
  public func resume(path: String? = nil) throws(StoreError) { try core.resume(path: path) }

  /// `resume(path:)` off the calling thread.
  public func resume(path: String? = nil) async throws(StoreError) {
    try await core.resume(path: path)
  }

  /// Events the store applied and handed to the writer (faults included).
  public var acceptedEvents: Int { core.acceptedEvents }

  /// Events applied to the list but not recorded (a full buffer, a failed log, a closed
  /// store); each gap in the log is marked and followed by a resync batch.
  public var droppedEvents: Int { core.droppedEvents }

  /// Events that faulted (recorded or not).
  public var faultCount: Int { core.faultCount }

  /// Events waiting for the writer.
  public var bufferedEvents: Int { core.bufferedEvents }

  /// The first write failure, if any; from then on events are dropped, and `sync()` and
  /// `close()` throw it.
  public var lastWriteError: StoreError? { core.lastWriteError }
}
