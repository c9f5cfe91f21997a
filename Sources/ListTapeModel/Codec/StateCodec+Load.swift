import ListTapeJSON

#if canImport(Dispatch) && !hasFeature(Embedded)
import Dispatch
#endif

/// The dictionary a compact state is read with, or the promise of one still decoding on
/// another thread: its size and whether every entry names an id are known at once, and the
/// load needs the entries themselves only at its end (and for a failure's message).
package struct CompactIDs {
  /// Entries in the dictionary.
  let count: Int
  /// Whether every entry names an id (none was lost with a salvaged stretch).
  let holeFree: Bool
  private let resolve: () throws(CodecError) -> IdSpace

  /// A dictionary at hand.
  package init(_ ids: IdSpace) {
    count = ids.count
    holeFree = ids.isHoleFree
    resolve = { ids }
  }

  /// A dictionary of `count` entries, each naming an id, that `resolve` waits for (it
  /// throws when the dictionary turns out not to be that).
  package init(count: Int, resolve: @escaping () throws(CodecError) -> IdSpace) {
    self.count = count
    holeFree = true
    self.resolve = resolve
  }

  /// The dictionary, once it is there, checked against what was promised.
  func space() throws(CodecError) -> IdSpace {
    let ids = try resolve()
    guard ids.count == count, ids.isHoleFree || !holeFree else {
      throw CodecError("the dictionary is not the one promised", offset: 0)
    }
    return ids
  }
}

/// A compact state's last column (its titles and fields) still inflating on another thread:
/// its length is known at once, its bytes are awaited by the pass that copies the text.
package struct CompactStrings: @unchecked Sendable {
  /// The column's length in bytes.
  let count: Int
  private let resolve: () -> UnsafeRawBufferPointer?

  /// A column of `count` bytes that `resolve` waits for (nil: it did not inflate, which
  /// the caller reports); the bytes stay valid until the load returns.
  package init(count: Int, resolve: @escaping () -> UnsafeRawBufferPointer?) {
    self.count = count
    self.resolve = resolve
  }

  /// The column, once there, or nil when it is not `count` bytes.
  func bytes() -> UnsafeRawBufferPointer? {
    guard let b = resolve(), b.count == count else { return nil }
    return b
  }
}

/// Loading a compact state straight into a forest's arrays: one pass over the item columns
/// fills nodes, entries and text by pre-order handle (no hashing, no collection per item),
/// then one pass links every sibling list bottom-up into its B-tree. The checks are the
/// builder's, in its order, with its messages: a damaged or hostile state is refused at the
/// byte that breaks it.
extension ListState {
  /// A compact state's section: its id's entry, how many items it has, where it was read.
  struct CompactSection {
    var entry: Int32
    var count: Int
    var offset: Int
  }

  /// The state whose sections are `sections` (`total` items between them) and whose items
  /// are read from `columns` (levels, flags, entries, strings at 1...4), their ids entries
  /// below `limit` of `ids`, read through `aliases`; with `strings`, the last column is
  /// that one (its offsets counted from `origin`), not `columns[4]`. The structure (levels
  /// and flags into nodes, then the sibling lists) is read here; the entries with their
  /// handles, then the titles and fields, beside it, since nothing in the structure needs
  /// them. A failure is the first in item order, whichever pass met it.
  static func loadCompact(
    _ sections: [CompactSection], total: Int, columns: inout [ByteSource],
    strings: (CompactStrings, origin: Int)?, limit: Int, ids: CompactIDs,
    aliases: DefinitionAliases, allowsMultipleSelection: Bool, end: Int
  ) throws(CodecError) -> ListState {
    var state = ListState()
    state.allowsMultipleSelection = allowsMultipleSelection
    var f = Forest()
    // The entries are read only where one is not new or was lost (a failure), so a
    // dictionary still decoding is awaited there or at the end.
    let lostEntries = ids.holeFree ? nil : try ids.space()
    f.idsFollowLog = true
    // Room to grow: the fold after a load appends items and entries without reallocating
    // (and so without copying and faulting in every page of these arrays again).
    let room = Forest.loadHeadroom(total)
    let beside = Beside(
      entries: EntryPass(
        refs: columns[3], total: total, capacity: total &+ room, limit: limit,
        aliases: aliases, idCount: ids.count, lost: lostEntries),
      texts: TextPass(
        flags: columns[2], strings: columns[4], pending: strings, total: total,
        capacity: total &+ room)
    ).start()
    var selected: [Handle] = []
    var failure: ItemFailure?
    // Each item's parent and each one's number of children, for linking the lists.
    let parents = UnsafeMutableBufferPointer<Handle>.allocate(capacity: total)
    let childCounts = UnsafeMutableBufferPointer<Int32>.allocate(capacity: total &+ 1)
    defer {
      parents.deallocate()
      childCounts.deallocate()
    }
    childCounts.initialize(repeating: 0)
    let nodes = [Node](room: total &+ room) { nodeBuffer, nodeCount in
      do throws(ItemFailure) {
        try Self.readNodes(
          sections, columns: &columns, into: nodeBuffer.baseAddress, built: &nodeCount,
          parents: parents, childCounts: childCounts, ids: ids, forest: &f, selected: &selected)
      } catch {
        failure = error
      }
    }
    if failure == nil {
      f.nodes = nodes
      f.itemCount = total
      f.linkLists(parents: UnsafeBufferPointer(parents), childCounts: childCounts)
    }
    let (entries, texts) = beside.finish()
    // The first failure in item order: an item's text is read after its entry and before
    // its level is checked.
    let first = try Self.firstFailure(failure, entries, refs: columns[3], ids: ids)
    if let t = texts.failure,
      first.map({ t.item < $0.item || (t.item == $0.item && $0.afterText) }) ?? true
    {
      throw t.error
    }
    if let first { throw first.error }
    guard texts.count == total else {
      throw columns[2].fail("item \(texts.count)'s text was not read")
    }
    columns[2] = texts.flags
    columns[3] = entries.refs
    columns[4] = texts.strings
    for c in columns where !c.isAtEnd { throw c.fail("\(c.remaining) bytes left after the items") }
    if let lostEntries {
      f.ids = lostEntries.withoutStringTable()
    } else {
      f.ids = try ids.space().withoutStringTable()
    }
    f.text = texts.text
    f.entryOf = entries.entryOf
    f.content = texts.content
    f.handleOf = entries.handleOf
    f.selectedCount = selected.count
    state.forest = f
    do throws(ListStateBuilder.Failure) {
      try ListStateBuilder.checkSelection(selected, of: state)
    } catch {
      throw CodecError(error.description, offset: end)
    }
    state.checkInvariants()
    return state
  }

  /// The first of the structure's failure (`nodes`) and the entries' (met by `entries`,
  /// whose messages are made here: `refs` is the entry column as the load began).
  private static func firstFailure(
    _ nodes: ItemFailure?, _ entries: EntryPass, refs: ByteSource, ids: CompactIDs
  ) throws(CodecError) -> ItemFailure? {
    var fromEntries: ItemFailure?
    let i = entries.firstBad
    if i == entries.decoded, let refsFailure = entries.failure {
      fromEntries = ItemFailure(item: i, step: .entry, error: refsFailure)
    } else if i < entries.decoded {
      let e = entries.entryOf[i]
      if let lost = entries.lost, lost.extent(Int(e)).isEmpty {
        fromEntries = ItemFailure(
          item: i, step: .entry, error: Self.lost(e, in: entryAt(i, of: refs).after))
      } else {
        fromEntries = ItemFailure(
          item: i, step: .duplicate,
          error: CodecError(
            ListStateBuilder.Failure.duplicateItem(try ids.space().text(Int(e))).description,
            offset: entryAt(i, of: refs).before))
      }
    }
    guard let a = nodes else { return fromEntries }
    guard let b = fromEntries else { return a }
    return (b.item, b.step.rawValue) < (a.item, a.step.rawValue) ? b : a
  }

  /// Entry `v` read from column `c`, checked: below `limit`, read through `aliases`, and not
  /// lost with a salvaged stretch.
  @inline(__always) static func compactEntry(
    _ v: Int64, in c: ByteSource, limit: Int, aliases: DefinitionAliases, ids: IdSpace?
  ) throws(CodecError) -> Int32 {
    let e = try entryNumber(v, in: c, limit: limit, aliases: aliases)
    if let ids, ids.extent(Int(e)).isEmpty { throw lost(e, in: c) }
    return e
  }

  /// Entry `v` read from column `c`, checked against `limit` and read through `aliases`.
  @inline(__always) private static func entryNumber(
    _ v: Int64, in c: ByteSource, limit: Int, aliases: DefinitionAliases
  ) throws(CodecError) -> Int32 {
    guard v >= 0, v < Int64(limit) else { throw c.fail("entry \(v) of \(limit)") }
    return aliases.canonical(Int32(truncatingIfNeeded: v))
  }

  /// Entry `e`, read just before `c`'s offset, names an id a salvaged stretch lost.
  private static func lost(_ e: Int32, in c: ByteSource) -> CodecError {
    c.fail("entry \(e) was lost with the events that defined it")
  }

  /// A failure of a load's pass at item `item` (the next handle), at `step` of it.
  private struct ItemFailure: Error {
    /// The checks of an item in the order the builder makes them.
    enum Step: Int {
      case section, levelAndFlags, entry, level, duplicate
    }
    var item: Int
    var step: Step
    var error: CodecError
    /// Whether the check comes after the item's text is read (the text pass's failure at
    /// the same item comes first).
    var afterText: Bool { step.rawValue >= Step.level.rawValue }
  }

  /// The structure pass: every item's node (parent, section for a root, flags) in
  /// pre-order, with the builder's checks of levels and flags; `built` counts the nodes
  /// written, `parents` and `childCounts` get each one's parent and number of children
  /// (the entries and the text are read beside it).
  private static func readNodes(
    _ sections: [CompactSection], columns: inout [ByteSource],
    into nodes: UnsafeMutablePointer<Node>?, built: inout Int,
    parents: UnsafeMutableBufferPointer<Handle>, childCounts: UnsafeMutableBufferPointer<Int32>,
    ids: CompactIDs, forest f: inout Forest, selected: inout [Handle]
  ) throws(ItemFailure) {
    guard let nodes else { return }
    let refsStart = columns[3]
    // The other columns as locals for the loop, put back whatever happens.
    var levels = columns[1]
    var flagColumn = columns[2]
    defer { columns[1] = levels }
    // The latest item at each level of the current section: the next item's parent is the
    // one above its level, and `depth` of them are open.
    var path = [Handle](repeating: -1, count: Forest.deepestLevel + 1)
    var step = ItemFailure.Step.section
    try path.withUnsafeMutableBufferPointer { (path) throws(ItemFailure) in
      do throws(CodecError) {
        for section in sections {
          step = .section
          guard let s = f.allocateSection(entry: section.entry) else {
            throw CodecError(
              ListStateBuilder.Failure.duplicateSection(try ids.space().text(Int(section.entry)))
                .description, offset: section.offset)
          }
          f.sectionOrder.append(s)
          var depth = 0
          for _ in 0..<section.count {
            let i = built
            step = .levelAndFlags
            let level = try levels.varint()
            let flags = try flagColumn.byte()
            guard flags <= ItemFlag.all else { throw flagColumn.fail("bad item flags \(flags)") }
            step = .level
            guard level <= UInt64(depth) else {
              let l = level > UInt64(Int.max) ? Int.max : Int(level)
              throw CodecError(
                ListStateBuilder.Failure.skippedLevel(level: l, depth: depth).description,
                offset: entryAt(i, of: refsStart).before)
            }
            guard level <= UInt64(Forest.deepestLevel) else {
              throw CodecError(
                ListStateBuilder.Failure.tooDeep(level: Int(level)).description,
                offset: entryAt(i, of: refsStart).before)
            }
            let l = Int(level)
            let x = Handle(truncatingIfNeeded: i)
            var node = Node()
            if l > 0 {
              let p = path[l &- 1]
              node.parent = p
              childCounts[Int(p)] &+= 1
            } else {
              node.section = s
            }
            parents[i] = node.parent
            path[l] = x
            depth = l &+ 1
            node.expanded = flags & ItemFlag.expanded != 0
            if flags & ItemFlag.selected != 0 {
              node.selected = true
              node.sel = 1
              selected.append(x)
            }
            (nodes + i).initialize(to: node)
            built = i &+ 1
          }
        }
      } catch {
        throw ItemFailure(item: built, step: step, error: error)
      }
    }
  }

  /// The entry pass: every item's entry (checked below `limit` and read through
  /// `aliases`) and each entry's handle, up to the first entry that does not read, was lost
  /// with a salvaged stretch (`lost`: the dictionary when it has holes) or names an item
  /// already met. Run beside the structure pass.
  private struct EntryPass {
    var refs: ByteSource
    let total: Int
    let capacity: Int
    let limit: Int
    let aliases: DefinitionAliases
    let idCount: Int
    let lost: IdSpace?
    /// Each item's entry, by handle, and each entry's handle (-1: none).
    var entryOf: [Int32] = []
    var handleOf: [Handle] = []
    /// Entries read, and why no more when fewer than `total`.
    var decoded = 0
    var failure: CodecError?
    /// The first item whose entry is lost or repeated (`decoded` when none is).
    var firstBad = 0

    init(
      refs: ByteSource, total: Int, capacity: Int, limit: Int, aliases: DefinitionAliases,
      idCount: Int, lost: IdSpace?
    ) {
      self.refs = refs
      self.total = total
      self.capacity = max(capacity, total)
      self.limit = limit
      self.aliases = aliases
      self.idCount = idCount
      self.lost = lost
    }

    mutating func run() {
      var refs = self.refs
      var decoded = 0
      var failure: CodecError?
      let (total, limit, aliases) = (self.total, self.limit, self.aliases)
      entryOf = [Int32](room: capacity) { buffer, written in
        guard let out = buffer.baseAddress else { return }
        (decoded, failure) = ListState.decodeEntries(
          &refs, into: out, count: total, limit: limit, aliases: aliases)
        written = decoded
      }
      (self.refs, self.decoded, self.failure) = (refs, decoded, failure)
      handleOf = [Handle](
        room: idCount &+ Forest.loadHeadroom(idCount)
      ) {
        $0.baseAddress?.initialize(repeating: -1, count: idCount)
        $1 = idCount
      }
      // Every entry named and new, mapped to its handle, up to the first that is not. A
      // space without holes (an index's dictionary) has every entry named.
      var firstBad = decoded
      entryOf.withUnsafeBufferPointer { entries in
        handleOf.withUnsafeMutableBufferPointer { handles in
          if let lost {
            for i in 0..<decoded {
              let e = Int(entries[i])
              if lost.extent(e).isEmpty || handles[e] >= 0 {
                firstBad = i
                break
              }
              handles[e] = Handle(truncatingIfNeeded: i)
            }
          } else {
            for i in 0..<decoded {
              let e = Int(entries[i])
              if handles[e] >= 0 {
                firstBad = i
                break
              }
              handles[e] = Handle(truncatingIfNeeded: i)
            }
          }
        }
      }
      self.firstBad = firstBad
    }
  }

  /// The passes run beside the structure: the entries, then the titles and fields; on
  /// another thread for a large state, else here and now.
  private final class Beside: @unchecked Sendable {
    private var entries: EntryPass
    private var texts: TextPass
    #if canImport(Dispatch) && !hasFeature(Embedded)
    private let done = DispatchSemaphore(value: 0)
    #endif

    init(entries: EntryPass, texts: TextPass) {
      self.entries = entries
      self.texts = texts
    }

    /// Below this many items the passes run inline (a thread costs more than it saves).
    static let besideFrom = 16_384

    func start() -> Beside {
      #if canImport(Dispatch) && !hasFeature(Embedded)
      if texts.total >= Self.besideFrom {
        DispatchQueue.global(qos: .userInitiated).async { self.run() }
        return self
      }
      #endif
      run()
      return self
    }

    private func run() {
      entries.run()
      texts.run()
      #if canImport(Dispatch) && !hasFeature(Embedded)
      done.signal()
      #endif
    }

    /// The passes, once done.
    func finish() -> (EntryPass, TextPass) {
      #if canImport(Dispatch) && !hasFeature(Embedded)
      done.wait()
      #endif
      return (entries, texts)
    }
  }

  /// The text pass: each item's title and fields (read by its flags) copied into the
  /// state's text arena, with its content reference; run on a second thread beside the
  /// structure pass when the state is large. Stops at the first item whose flags or text
  /// do not read (the structure pass reports bad flags itself).
  private struct TextPass: @unchecked Sendable {
    var flags: ByteSource
    var strings: ByteSource
    /// The strings column still inflating (and its offset in the state), read first.
    let pending: (CompactStrings, origin: Int)?
    let total: Int
    /// Room for this many content references (the items and the fold's headroom).
    let capacity: Int
    /// Each item's content reference, by handle.
    var content: [ContentRef] = []
    var text: [UInt8] = []
    /// Items whose content is written.
    var count = 0
    var failure: (item: Int, error: CodecError)?

    init(
      flags: ByteSource, strings: ByteSource, pending: (CompactStrings, origin: Int)?,
      total: Int, capacity: Int
    ) {
      self.flags = flags
      self.strings = strings
      self.pending = pending
      self.total = total
      self.capacity = max(capacity, total)
    }

    mutating func run() {
      if let (column, origin) = pending {
        guard let bytes = column.bytes() else {
          failure = (0, CodecError("the state's last column did not inflate", offset: origin))
          return
        }
        strings = ByteSource(bytes, origin: origin)
      }
      let content = [ContentRef](room: capacity) { buffer, written in
        read(into: buffer.baseAddress)
        written = count
      }
      self.content = content
    }

    /// Reads the items' text into `text`, each item's reference into `content`.
    private mutating func read(into content: UnsafeMutablePointer<ContentRef>?) {
      guard let content else { return }
      // Each item's blob is its bytes in the strings column and a flags byte, at most; the
      // rest is room for the fold after the load.
      let room = strings.remaining &+ total
      var (flags, strings, count) = (self.flags, self.strings, 0)
      var failure: (item: Int, error: CodecError)?
      let total = self.total
      text = [UInt8](room: room &+ Forest.loadHeadroom(room)) {
        buffer, written in
        guard let out = buffer.baseAddress else { return }
        var end = 0
        // A column of ASCII bytes has one-byte lengths and valid text throughout: an item's
        // text is then copied here, its checks reduced to its lengths' and its keys' order.
        let ascii = ListState.isASCII(strings)
        do throws(CodecError) {
          while count < total {
            let f = try flags.byte()
            guard f <= ItemFlag.all else { break }
            let textFlags =
              (f & ItemFlag.title != 0 ? ItemText.hasTitle : 0)
              | (f & ItemFlag.fields != 0 ? ItemText.hasFields : 0)
            if textFlags != 0, ascii, let src = strings.base.baseAddress,
              let after = ItemText.canonicalASCII(
                flags: textFlags, in: src, at: strings.offset, end: strings.base.count)
            {
              let at = strings.offset
              let bytes = after &- at
              if bytes < room &- end {
                out[end] = textFlags
                UnsafeMutableRawPointer(out + (end &+ 1)).copyMemory(
                  from: src + at, byteCount: bytes)
                (content + count).initialize(
                  to: ContentRef(
                    offset: UInt32(truncatingIfNeeded: end),
                    length: UInt32(truncatingIfNeeded: bytes &+ 1)))
                end &+= bytes &+ 1
                strings.offset = after
                count &+= 1
                continue
              }
            }
            let extent = try ItemText.copy(
              flags: textFlags, from: &strings, into: out, capacity: room, at: &end)
            (content + count).initialize(
              to: extent.isEmpty
                ? ContentRef.none
                : ContentRef(
                  offset: UInt32(truncatingIfNeeded: extent.lowerBound),
                  length: UInt32(truncatingIfNeeded: extent.count)))
            count &+= 1
          }
        } catch {
          failure = (count, error)
        }
        written = end
      }
      (self.flags, self.strings, self.count, self.failure) = (flags, strings, count, failure)
    }
  }

  /// Whether the bytes left in `c` are all ASCII (read eight at a time).
  private static func isASCII(_ c: ByteSource) -> Bool {
    guard let base = c.base.baseAddress else { return true }
    var p = base + c.offset
    let end = base + c.base.count
    var any: UInt64 = 0
    while end - p >= 8 {
      any |= p.loadUnaligned(as: UInt64.self)
      p += 8
    }
    while p < end {
      any |= UInt64(p.load(as: UInt8.self))
      p += 1
    }
    return any & 0x8080_8080_8080_8080 == 0
  }

  /// Where item `i`'s entry starts in the entry column `refs`, and the column just after
  /// it: read again from the start, only to report a fault there.
  private static func entryAt(_ i: Int, of refs: ByteSource) -> (before: Int, after: ByteSource) {
    var c = refs
    var before = c.origin
    for _ in 0...i {
      before = c.origin + c.offset
      _ = try? c.zigzag()
    }
    return (before, c)
  }

  /// Reads up to `count` entries of an entry column (deltas from the entry before) into
  /// `out`, each checked against `limit` and read through `aliases`; returns how many were
  /// read and, when fewer than `count`, why.
  private static func decodeEntries(
    _ refs: inout ByteSource, into out: UnsafeMutablePointer<Int32>, count: Int, limit: Int,
    aliases: DefinitionAliases
  ) -> (Int, CodecError?) {
    var previous: Int64 = -1
    var n = 0
    // Entries read straight from the bytes, eight at a time, while ten remain and no alias
    // applies: a varint of at most eight bytes (its end found and its groups gathered
    // without a branch), in range. Anything else (a longer varint, an entry out of range,
    // the column's end) is left to the checked loop below, from the same entry.
    if aliases.map.isEmpty, let base = refs.base.baseAddress {
      var at = refs.offset
      let last = refs.base.count &- 10
      let bound = Int64(limit)
      while n < count, at <= last {
        let w = UInt64(littleEndian: (base + at).loadUnaligned(as: UInt64.self))
        let ends = ~w & 0x8080_8080_8080_8080
        guard ends != 0 else { break }
        let length = (ends.trailingZeroBitCount &+ 1) >> 3
        let v0 = w & ((1 << UInt64(length &* 8)) &- 1)
        var x = v0 & 0x7F
        x |= (v0 >> 1) & (0x7F << 7)
        x |= (v0 >> 2) & (0x7F << 14)
        x |= (v0 >> 3) & (0x7F << 21)
        x |= (v0 >> 4) & (0x7F << 28)
        x |= (v0 >> 5) & (0x7F << 35)
        x |= (v0 >> 6) & (0x7F << 42)
        x |= (v0 >> 7) & (0x7F << 49)
        let v = previous &+ 1 &+ Int64(bitPattern: (x >> 1) ^ (0 &- (x & 1)))
        guard v >= 0, v < bound else { break }
        (out + n).initialize(to: Int32(truncatingIfNeeded: v))
        previous = v
        n &+= 1
        at &+= length
      }
      refs.offset = at
    }
    do throws(CodecError) {
      while n < count {
        let v = previous &+ 1 &+ (try refs.zigzag())
        previous = v
        (out + n).initialize(to: try entryNumber(v, in: refs, limit: limit, aliases: aliases))
        n &+= 1
      }
    } catch {
      return (n, error)
    }
    return (n, nil)
  }
}

extension Forest {
  /// How many blocks `buildList` makes for a list of `m` items.
  static func blocks(forList m: Int) -> Int {
    let fill = BlockLayout.fanout * 3 / 4
    guard m > fill else { return m > 0 ? 1 : 0 }
    var level = (m &+ fill &- 1) / fill
    var total = level
    while level > 1 {
      level = (level &+ fill &- 1) / fill
      total &+= level
    }
    return total
  }

  /// The second pass of a load: links every item's children, then each section's root
  /// items, into B-trees. Items are in pre-order (children after their parent, in order),
  /// with their parents in `parents` and the number of each one's children in `start`
  /// (`nodes.count + 1` of them, the last 0), as the first pass counted them; a walk from
  /// the last handle down finds each child's totals final before its parent's list is
  /// built. - Complexity: O(items).
  mutating func linkLists(
    parents: UnsafeBufferPointer<Handle>, childCounts start: UnsafeMutableBufferPointer<Int32>
  ) {
    let n = nodes.count
    // Each parent's children, contiguous and in order: counted (by the first pass), then
    // placed from the last item down, so `start[p]..<start[p + 1]` ends up holding p's
    // children. Raw buffers: these loops run once per item and were bound by checks, not
    // work. Each count becomes the end of its parent's range.
    var total: Int32 = 0
    var needed = 0
    var longest = 0
    var roots = n
    for x in 0..<n {
      let count = start[x]
      needed &+= Self.blocks(forList: Int(count))
      longest = max(longest, Int(count))
      total &+= count
      roots &-= Int(count)
      start[x] = total
    }
    start[n] = total
    var children = [Handle](repeating: 0, count: n &- roots)
    var rootList = [Handle](repeating: 0, count: roots)
    children.withUnsafeMutableBufferPointer { kids in
      rootList.withUnsafeMutableBufferPointer { rootBuffer in
        var r = roots
        var x = n &- 1
        while x >= 0 {
          let p = parents[x]
          if p >= 0 {
            start[Int(p)] &-= 1
            kids[Int(start[Int(p)])] = Handle(truncatingIfNeeded: x)
          } else {
            r &-= 1
            rootBuffer[r] = Handle(truncatingIfNeeded: x)
          }
          x &-= 1
        }
      }
    }
    // Root items are in section order: each section's run of them is its list.
    var runs: [Int] = []
    runs.reserveCapacity(sectionOrder.count)
    var i = 0
    for s in sectionOrder {
      var j = i
      while j < rootList.count, nodes[Int(rootList[j])].section == s { j &+= 1 }
      needed &+= Self.blocks(forList: j &- i)
      longest = max(longest, j &- i)
      runs.append(j)
      i = j
    }
    // Every list's blocks, counted as `buildList` makes them, so that the arrays grow once.
    blocks.reserveCapacity(blocks.count &+ needed &+ Self.loadHeadroom(needed))
    let slotCount = (blocks.count &+ needed) &* BlockLayout.stride
    if slots.count < slotCount {
      slots.reserveCapacity(slotCount &+ Self.loadHeadroom(needed) &* BlockLayout.stride)
      slots.append(contentsOf: repeatElement(0, count: slotCount &- slots.count))
    }
    // The children's lists, built from the last item down (each child's totals are final
    // before its parent's list reads them), then the sections' root lists, into blocks
    // made here in `buildList`'s order.
    var next = blocks.count
    blocks.append(contentsOf: repeatElement(Block(leaf: true), count: needed))
    var scratch = [Handle](repeating: 0, count: max(1, Self.blocks(forList: longest)))
    var rootBlocks = [Handle](repeating: -1, count: runs.count)
    nodes.withUnsafeMutableBufferPointer { nodes in
      blocks.withUnsafeMutableBufferPointer { blocks in
        slots.withUnsafeMutableBufferPointer { slots in
          scratch.withUnsafeMutableBufferPointer { scratch in
            guard let nd = nodes.baseAddress, let bl = blocks.baseAddress,
              let sl = slots.baseAddress, let sc = scratch.baseAddress
            else { return }
            children.withUnsafeBufferPointer { kids in
              var x = n &- 1
              while x >= 0 {
                let from = Int(start[x])
                let to = Int(start[x &+ 1])
                if to > from {
                  let root = Self.buildList(
                    UnsafeBufferPointer(rebasing: kids[from..<to]), nodes: nd, blocks: bl,
                    slots: sl, scratch: sc, next: &next)
                  let list = bl[Int(root)]
                  nd[x].children = root
                  nd[x].cnt = 1 &+ list.cnt
                  nd[x].sel &+= list.sel
                  if nd[x].expanded { nd[x].vis = 1 &+ list.vis }
                  nd[x].height = list.height == UInt8.max ? list.height : list.height &+ 1
                }
                x &-= 1
              }
            }
            rootList.withUnsafeBufferPointer { all in
              var i = 0
              for (k, j) in runs.enumerated() where j > i {
                rootBlocks[k] = Self.buildList(
                  UnsafeBufferPointer(rebasing: all[i..<j]), nodes: nd, blocks: bl, slots: sl,
                  scratch: sc, next: &next)
                i = j
              }
            }
          }
        }
      }
    }
    assert(next == blocks.count, "blocks counted wrong")
    for (k, s) in sectionOrder.enumerated() {
      sections[Int(s)].roots = rootBlocks[k]
      visibleRows &+= Int(visSum(rootBlocks[k]))
    }
    assert(slots.count == blocks.count &* BlockLayout.stride, "blocks counted wrong")
  }

  /// `buildList(_:)` for a load: `items`' B-tree built into fresh blocks numbered from
  /// `next` (moved past them) in the same order, through raw pointers to the forest's
  /// arrays; `scratch` holds a level's blocks (room for the list's leaves).
  private static func buildList(
    _ items: UnsafeBufferPointer<Handle>, nodes nd: UnsafeMutablePointer<Node>,
    blocks bl: UnsafeMutablePointer<Block>, slots sl: UnsafeMutablePointer<Int32>,
    scratch sc: UnsafeMutablePointer<Handle>, next: inout Int
  ) -> Handle {
    let fill = BlockLayout.fanout * 3 / 4
    var level = 0
    var first = 0
    while first < items.count {
      let end = min(items.count, first &+ fill)
      let b = next
      next &+= 1
      var sums = Block(leaf: true)
      sums.count = Int32(truncatingIfNeeded: end &- first)
      let base = sl + b &* BlockLayout.stride
      for i in first..<end {
        let h = Int(items[i])
        base[i &- first] = Handle(truncatingIfNeeded: h)
        nd[h].block = Handle(truncatingIfNeeded: b)
        let node = nd[h]
        sums.add(size: 1, vis: node.vis, cnt: node.cnt, sel: node.sel, height: node.height)
      }
      bl[b] = sums
      sc[level] = Handle(truncatingIfNeeded: b)
      level &+= 1
      first = end
    }
    // Inner levels, grouped in place: group k is written at k after reading from k * fill.
    while level > 1 {
      var out = 0
      var first = 0
      while first < level {
        let end = min(level, first &+ fill)
        let b = next
        next &+= 1
        var sums = Block(leaf: false)
        sums.count = Int32(truncatingIfNeeded: end &- first)
        let base = sl + b &* BlockLayout.stride
        for j in first..<end {
          let c = Int(sc[j])
          base[j &- first] = Handle(truncatingIfNeeded: c)
          bl[c].parent = Handle(truncatingIfNeeded: b)
          let inner = bl[c]
          sums.add(
            size: inner.size, vis: inner.vis, cnt: inner.cnt, sel: inner.sel, height: inner.height)
        }
        bl[b] = sums
        sc[out] = Handle(truncatingIfNeeded: b)
        out &+= 1
        first = end
      }
      level = out
    }
    return sc[0]
  }

  /// Spare capacity for an array of `n` elements filled by a load: allocated, not touched
  /// until the fold after the load grows into it.
  static func loadHeadroom(_ n: Int) -> Int { n / 8 &+ 1024 }
}

extension Block {
  /// Adds an entry's totals to this block's sums (an item's own, size 1; a block's sums).
  @inline(__always) fileprivate mutating func add(
    size: Int32, vis: Int32, cnt: Int32, sel: Int32, height: UInt8
  ) {
    self.size &+= size
    self.vis &+= vis
    self.cnt &+= cnt
    self.sel &+= sel
    self.height = max(self.height, height)
  }
}
