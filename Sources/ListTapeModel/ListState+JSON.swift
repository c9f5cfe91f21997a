import ListTapeJSON

#if canImport(Dispatch) && !hasFeature(Embedded)
import Dispatch
#endif

extension ListState {
  /// Writes the state as protocol section 3's JSON: `event`, `sections` (each with `items`
  /// in pre-order and `visible`), then `selected` in display order, then what `more` adds
  /// to the object. Ids, titles and fields are written from the state's bytes (no `String`
  /// per item, no array per sibling list); compact output gathers `visible` and `selected`
  /// in the one walk that writes the items. With `drain`, the buffer is handed to it every
  /// megabyte or so and emptied (a large state streamed out). - Complexity: O(items),
  /// without recursion.
  package func writeJSON(
    event: Int, to w: inout JSONWriter, drain: (([UInt8]) -> Void)? = nil,
    more: (inout JSONWriter) -> Void = { _ in }
  ) {
    let f = forest
    let piece = 1 << 20
    w.reserve(drain == nil ? 64 &+ f.itemCount &* 96 : piece &+ 4096)
    w.beginObject()
    w.key(plain: "event")
    w.int(event)
    w.key(plain: "sections")
    w.beginArray()
    var stack: [PreorderFrame] = []
    var lists = ShownIDs()
    for s in f.sectionOrder {
      w.beginObject()
      w.key(plain: "id")
      f.ids.withText(Int(f.sections[Int(s)].entry)) { w.string(utf8: $0) }
      w.key(plain: "items")
      w.beginArray()
      if w.pretty {
        writeItems(section: s, to: &w, &stack)
        w.endArray()
        w.key(plain: "visible")
        w.beginArray()
        f.forEachPreorder(list: f.sections[Int(s)].roots, visibleOnly: true, &stack) { x, _, _ in
          f.withID(of: x) { w.string(utf8: $0) }
        }
      } else {
        lists.visible.reset()
        writeItemsCompact(section: s, to: &w, &lists, &stack, drain: drain, piece: piece)
        w.endArray()
        w.key(plain: "visible")
        w.beginArray()
        lists.visible.bytes.withUnsafeBytes { w.appendFragment($0) }
        if let drain, w.bytes.count >= piece { w.drain(drain) }
      }
      w.endArray()
      w.endObject()
    }
    w.endArray()
    w.key(plain: "selected")
    w.beginArray()
    if w.pretty {
      for x in f.selectedItems() { f.withID(of: x) { w.string(utf8: $0) } }
    } else {
      lists.selected.bytes.withUnsafeBytes { w.appendFragment($0) }
    }
    w.endArray()
    more(&w)
    w.endObject()
  }

  /// Writes section `s`'s items, each an object (`id`, `parent`, `level`, `expanded`, then
  /// `title` and `fields` when it has them), through the writer's own calls (pretty output).
  private func writeItems(section s: Handle, to w: inout JSONWriter, _ stack: inout [PreorderFrame])
  {
    let f = forest
    f.forEachPreorder(list: f.sections[Int(s)].roots, visibleOnly: false, &stack) { x, level, _ in
      let n = f.nodes[Int(x)]
      w.beginObject()
      w.key(plain: "id")
      f.withID(of: x) { w.string(utf8: $0) }
      w.key(plain: "parent")
      if n.parent >= 0 {
        f.withID(of: n.parent) { w.string(utf8: $0) }
      } else {
        w.null()
      }
      w.key(plain: "level")
      w.int(level)
      w.key(plain: "expanded")
      w.bool(n.expanded)
      f.withContent(x) { blob in
        guard !blob.isEmpty else { return }
        let parts = ItemText.parts(blob)
        if let title = parts.title {
          w.key(plain: "title")
          w.string(utf8: title.assumingMemoryBound(to: UInt8.self))
        }
        if parts.fields != nil {
          w.key(plain: "fields")
          w.beginObject()
          ItemText.forEachField(parts) { k, v in
            w.key(utf8: k.assumingMemoryBound(to: UInt8.self))
            w.string(utf8: v.assumingMemoryBound(to: UInt8.self))
          }
          w.endObject()
        }
      }
      w.endObject()
    }
  }

  /// `writeItems` for compact output, the same bytes written through a cursor over a
  /// scratch buffer (no capacity check per byte), handed to `drain` every `piece` bytes;
  /// the ids shown and those selected go to `lists` on the way (one walk for the arrays).
  private func writeItemsCompact(
    section s: Handle, to w: inout JSONWriter, _ lists: inout ShownIDs,
    _ stack: inout [PreorderFrame],
    drain: (([UInt8]) -> Void)?, piece: Int
  ) {
    #if canImport(Dispatch) && !hasFeature(Embedded)
    if let drain, forest.itemCount >= HalfItems.from {
      writeItemsInHalves(section: s, to: &w, &lists, &stack, drain: drain, piece: piece)
      return
    }
    #endif
    stack.removeAll(keepingCapacity: true)
    let root = forest.sections[Int(s)].roots
    if root >= 0 { stack.append(PreorderFrame(block: root, next: 0, level: 0, visible: true)) }
    CompactItems.write(
      forest, &stack, limit: Int.max, first: true, to: &w, lists: &lists, drain: drain,
      piece: piece)
  }

  #if canImport(Dispatch) && !hasFeature(Embedded)
  /// `writeItemsCompact` on two cores: the walk of the section's second half starts where
  /// the B-tree counts place its middle item and writes on another thread into a buffer of
  /// its own while this one writes (and drains) the first half, then hands it to `drain`
  /// after it; the same bytes as one pass.
  private func writeItemsInHalves(
    section s: Handle, to w: inout JSONWriter, _ lists: inout ShownIDs,
    _ stack: inout [PreorderFrame], drain: @escaping ([UInt8]) -> Void, piece: Int
  ) {
    let root = forest.sections[Int(s)].roots
    let count = Int(forest.cntSum(root))
    stack.removeAll(keepingCapacity: true)
    if root >= 0 { stack.append(PreorderFrame(block: root, next: 0, level: 0, visible: true)) }
    guard count >= HalfItems.sectionFrom else {
      CompactItems.write(
        forest, &stack, limit: Int.max, first: true, to: &w, lists: &lists, drain: drain,
        piece: piece)
      return
    }
    let mid = count / 2
    let tail = HalfItems(forest, forest.preorderStack(list: root, before: mid)).start()
    CompactItems.write(
      forest, &stack, limit: mid, first: true, to: &w, lists: &lists, drain: drain,
      piece: piece)
    let (json, shown) = tail.finish()
    w.drain(drain)
    for piece in json { drain(piece) }
    lists.append(shown)
  }
  #endif

  /// The state JSON as text (compact, or indented by two spaces when `pretty`).
  package func json(event: Int, pretty: Bool = false) -> String {
    var w = JSONWriter(pretty: pretty)
    writeJSON(event: event, to: &w)
    return w.text
  }
}

/// The ids a compact state's walk gathers beside its items, each array's values
/// comma-separated: those shown (one section's) and those selected (every section's so far).
struct ShownIDs {
  var visible = JSONWriter()
  var selected = JSONWriter()

  /// Appends the lists a later part of the same walk gathered.
  mutating func append(_ later: ShownIDs) {
    Self.append(later.visible, to: &visible)
    Self.append(later.selected, to: &selected)
  }

  private static func append(_ later: JSONWriter, to w: inout JSONWriter) {
    guard !later.bytes.isEmpty else { return }
    if !w.bytes.isEmpty { [UInt8(ascii: ",")].withUnsafeBytes { w.appendFragment($0) } }
    later.bytes.withUnsafeBytes { w.appendFragment($0) }
  }
}

/// One step of `Forest.forEachPreorder`'s walk: a B-tree block, its next entry, and the
/// outline level and visibility of the items it holds.
struct PreorderFrame {
  var block: Handle
  var next: Int32
  var level: Int32
  /// Whether the items of this list are shown (every ancestor expanded).
  var visible: Bool
}

extension Forest {
  /// Calls `body(item, level, visible)` on every item under the list whose root block is
  /// `root`, in depth-first pre-order (only those shown when `visibleOnly`), walking the
  /// B-tree blocks with `stack` (reused, emptied): no array per sibling list, no recursion.
  func forEachPreorder(
    list root: Handle, visibleOnly: Bool, _ stack: inout [PreorderFrame],
    _ body: (Handle, Int, Bool) -> Void
  ) {
    stack.removeAll(keepingCapacity: true)
    guard root >= 0 else { return }
    stack.append(PreorderFrame(block: root, next: 0, level: 0, visible: true))
    walkPreorder(&stack, visibleOnly: visibleOnly, limit: Int.max, body)
  }

  /// `forEachPreorder` going on from `stack` (where a walk stopped, or `preorderStack`),
  /// for at most `limit` items.
  func walkPreorder(
    _ stack: inout [PreorderFrame], visibleOnly: Bool, limit: Int,
    _ body: (Handle, Int, Bool) -> Void
  ) {
    var left = limit
    while left > 0, let top = stack.last {
      let block = blocks[Int(top.block)]
      if top.next == block.count {
        stack.removeLast()
        continue
      }
      stack[stack.count &- 1].next &+= 1
      let h = entry(top.block, Int(top.next))
      if !block.leaf {
        stack.append(PreorderFrame(block: h, next: 0, level: top.level, visible: top.visible))
        continue
      }
      body(h, Int(top.level), top.visible)
      left &-= 1
      let n = nodes[Int(h)]
      let shown = top.visible && n.expanded
      if n.children >= 0 && (!visibleOnly || shown) {
        stack.append(
          PreorderFrame(block: n.children, next: 0, level: top.level &+ 1, visible: shown))
      }
    }
  }

  /// The stack a walk of every item under the list whose root block is `root` holds just
  /// before it reaches the item at pre-order index `k`, found by the blocks' and items'
  /// counts: O(depth × fan-out), no item before it visited.
  func preorderStack(list root: Handle, before k: Int) -> [PreorderFrame] {
    guard root >= 0 else { return [] }
    var stack = [PreorderFrame(block: root, next: 0, level: 0, visible: true)]
    var k = Int32(truncatingIfNeeded: k)
    while let top = stack.last {
      let block = blocks[Int(top.block)]
      var i: Int32 = 0
      var found = false
      while i < block.count {
        let h = entry(top.block, Int(i))
        let size = block.leaf ? nodes[Int(h)].cnt : blocks[Int(h)].cnt
        if k < size {
          found = true
          if !block.leaf {
            stack[stack.count &- 1].next = i &+ 1
            stack.append(PreorderFrame(block: h, next: 0, level: top.level, visible: top.visible))
          } else if k == 0 {
            stack[stack.count &- 1].next = i
            return stack
          } else {
            // Inside item h's subtree: h itself comes first.
            let n = nodes[Int(h)]
            stack[stack.count &- 1].next = i &+ 1
            stack.append(
              PreorderFrame(
                block: n.children, next: 0, level: top.level &+ 1,
                visible: top.visible && n.expanded))
            k &-= 1
          }
          break
        }
        k &-= size
        i &+= 1
      }
      // Past the list's end: the walk from here visits nothing more.
      if !found {
        stack[stack.count &- 1].next = block.count
        return stack
      }
    }
    return stack
  }
}

/// Items of a section written as compact JSON in batches: the ids and texts of a batch are
/// touched first, so that their cache misses (ids are stored by entry, not in display
/// order) overlap instead of queueing one item at a time.
private struct CompactItems {
  static let size = 128
  var out: RawJSONOut
  let drain: (([UInt8]) -> Void)?
  let piece: Int
  var first = true
  /// The items to write: handle, level and visibility in the frame's fields.
  var batch: [PreorderFrame] = []
  /// The last parent written and its quoted id (siblings follow each other in pre-order,
  /// so most items repeat the parent before them); -1: none.
  var parent: Handle = -1
  var parentQuoted: [UInt8] = []
  /// Ids longer than this are quoted each time, not kept.
  static let keptParent = 256

  init(out: RawJSONOut, drain: (([UInt8]) -> Void)?, piece: Int) {
    self.out = out
    self.drain = drain
    self.piece = piece
    batch.reserveCapacity(Self.size)
  }

  mutating func write(_ f: Forest, _ w: inout JSONWriter, _ lists: inout ShownIDs) {
    var touched: UInt32 = 0
    for b in batch {
      let x = Int(b.block)
      touched &+= f.ids.touch(Int(f.entryOf[x]))
      let c = f.content[x]
      if !c.isNone { touched &+= UInt32(f.text[Int(c.offset)]) }
    }
    Self.keep(touched)
    for b in batch {
      let x = b.block
      let n = f.nodes[Int(x)]
      out.ensure(32, spillingInto: &w)
      if !first { out.byte(UInt8(ascii: ",")) }
      first = false
      out.ascii("{\"id\":")
      f.withID(of: x) {
        switch (b.visible, n.selected) {
        case (false, false): out.quoted($0, spillingInto: &w)
        case (true, false): out.quoted($0, spillingInto: &w, alsoInto: &lists.visible)
        case (false, true): out.quoted($0, spillingInto: &w, alsoInto: &lists.selected)
        case (true, true):
          out.quoted($0, spillingInto: &w, alsoInto: &lists.visible, and: &lists.selected)
        }
      }
      out.ensure(64, spillingInto: &w)
      if n.parent >= 0 {
        out.ascii(",\"parent\":")
        if n.parent != parent {
          parent = n.parent
          parentQuoted.removeAll(keepingCapacity: true)
          f.withID(of: n.parent) { id in
            guard id.count <= Self.keptParent else {
              parent = -1
              out.quoted(id, spillingInto: &w)
              return
            }
            out.ensure(RawJSONOut.quotedBound(id.count), spillingInto: &w)
            let start = out.count
            out.quoted(id)
            parentQuoted.append(contentsOf: UnsafeRawBufferPointer(rebasing: out.written[start...]))
          }
        } else {
          out.ensure(parentQuoted.count, spillingInto: &w)
          parentQuoted.withUnsafeBytes { out.raw($0) }
        }
        out.ensure(64, spillingInto: &w)
      } else {
        out.ascii(",\"parent\":null")
      }
      out.ascii(",\"level\":")
      out.int(Int(b.level))
      out.ascii(n.expanded ? ",\"expanded\":true" : ",\"expanded\":false")
      f.withContent(x) { blob in
        guard !blob.isEmpty else { return }
        let parts = ItemText.parts(blob)
        if let title = parts.title {
          out.ascii(",\"title\":")
          out.quoted(title.assumingMemoryBound(to: UInt8.self), spillingInto: &w)
          out.ensure(32, spillingInto: &w)
        }
        if parts.fields != nil {
          out.ascii(",\"fields\":{")
          var firstField = true
          ItemText.forEachField(parts) { k, v in
            out.ensure(8, spillingInto: &w)
            if !firstField { out.byte(UInt8(ascii: ",")) }
            firstField = false
            out.quoted(k.assumingMemoryBound(to: UInt8.self), spillingInto: &w)
            out.ensure(8, spillingInto: &w)
            out.byte(UInt8(ascii: ":"))
            out.quoted(v.assumingMemoryBound(to: UInt8.self), spillingInto: &w)
          }
          out.ensure(8, spillingInto: &w)
          out.byte(UInt8(ascii: "}"))
        }
      }
      out.byte(UInt8(ascii: "}"))
      if let drain, w.bytes.count >= piece { w.drain(drain) }
    }
    batch.removeAll(keepingCapacity: true)
  }

  /// Writes at most `limit` items of the walk going on from `stack` (a comma before the
  /// first unless `first`), handing the buffer to `drain` every `piece` bytes.
  static func write(
    _ f: Forest, _ stack: inout [PreorderFrame], limit: Int, first: Bool,
    to w: inout JSONWriter, lists: inout ShownIDs, drain: (([UInt8]) -> Void)?, piece: Int
  ) {
    let scratch = UnsafeMutableBufferPointer<UInt8>.allocate(capacity: 1 << 16)
    defer { scratch.deallocate() }
    var items = CompactItems(out: RawJSONOut(scratch), drain: drain, piece: piece)
    items.first = first
    f.walkPreorder(&stack, visibleOnly: false, limit: limit) { x, level, shown in
      items.batch.append(PreorderFrame(block: x, next: 0, level: Int32(level), visible: shown))
      if items.batch.count == CompactItems.size { items.write(f, &w, &lists) }
    }
    items.write(f, &w, &lists)
    items.out.spill(into: &w)
  }

  /// Keeps the loads that produced `value` (an opaque use).
  @inline(never) private static func keep(_ value: UInt32) {
    if value == 0x5EED_F00D { sink &+= 1 }
  }
  nonisolated(unsafe) private static var sink = 0
}

#if canImport(Dispatch) && !hasFeature(Embedded)
/// Part of a section's items written as compact JSON on a thread of its own: the bytes of
/// the items and the ids shown and selected, each a fragment to append after the part
/// before it.
private final class HalfItems: @unchecked Sendable {
  /// States with fewer items are written on one thread (a thread costs more than it saves),
  /// and so are sections with fewer items than `sectionFrom`.
  static let from = 32_768
  static let sectionFrom = 8192
  private let forest: Forest
  /// Where the walk of the items this thread writes starts (it writes to the walk's end).
  private var stack: [PreorderFrame]
  /// The items' bytes in pieces of about a megabyte: a fresh process faults each page of
  /// them in once, where one growing buffer is copied and faulted in again as it doubles.
  private var json: [[UInt8]] = []
  private var shown = ShownIDs()
  private let done = DispatchSemaphore(value: 0)

  init(_ forest: Forest, _ stack: [PreorderFrame]) {
    self.forest = forest
    self.stack = stack
  }

  /// Starts writing on another thread.
  func start() -> HalfItems {
    DispatchQueue.global(qos: .userInitiated).async { self.run() }
    return self
  }

  private func run() {
    let piece = 1 << 20
    var w = JSONWriter(reservingCapacity: piece &+ 4096)
    var lists = ShownIDs()
    var pieces: [[UInt8]] = []
    CompactItems.write(
      forest, &stack, limit: Int.max, first: false, to: &w, lists: &lists,
      drain: { pieces.append($0) }, piece: piece)
    pieces.append(w.bytes)
    json = pieces
    shown = lists
    done.signal()
  }

  /// Waits for the thread: the items' bytes in pieces (each item preceded by a comma),
  /// and the ids shown and selected (comma-separated, none before the first).
  func finish() -> (json: [[UInt8]], shown: ShownIDs) {
    done.wait()
    return (json, shown)
  }
}
#endif
