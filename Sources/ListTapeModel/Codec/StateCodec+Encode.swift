import ListTapeJSON

/// What a compact state's encoding reads of a state, in arrays indexed by handle: each
/// item's children list and flags byte (one pass over the nodes in handle order, so a
/// folded state's scattered nodes are not visited item by item in pre-order), each block's
/// shape, and the state's own slots, entries and text. The walk then reads arrays a fraction
/// of the nodes' size.
struct CompactSource: Sendable {
  /// Each handle's children list (its root block, -1 for none), and its flags byte
  /// (`ListState.ItemFlag`) without the title and fields bits, which the encoding takes
  /// from `content` and `text` (read here, each item's text would be a cache miss on the
  /// fold's thread when an index build copies the state).
  var kids: [Handle]
  var flags: [UInt8]
  /// Each block's entry count, its sign bit set for a leaf.
  var shape: [Int32]
  var slots: [Int32]
  var entryOf: [Int32]
  var content: [ContentRef]
  var text: [UInt8]
  /// The sections in display order: their entry, root block and item count.
  var sections: [(entry: Int32, roots: Handle, count: Int)]
  var itemCount: Int
  var allowsMultipleSelection: Bool

  /// The source of `state`'s encoding; with `copying`, the arrays it shares with the state
  /// are copied (for another thread, while the state goes on changing).
  init(_ state: ListState, copying: Bool) {
    let f = state.forest
    (kids, flags) = Self.kidsAndFlags(f.nodes)
    shape = Self.shapes(f.blocks)
    slots = copying ? Self.copy(f.slots) : f.slots
    entryOf = copying ? Self.copy(f.entryOf) : f.entryOf
    content = copying ? Self.copy(f.content) : f.content
    text = copying ? Self.copy(f.text) : f.text
    sections = f.sectionOrder.map { s in
      (f.sections[Int(s)].entry, f.sections[Int(s)].roots, f.itemCount(inSection: s))
    }
    itemCount = f.itemCount
    allowsMultipleSelection = state.allowsMultipleSelection
  }

  /// A copy of `a` of its own (not sharing its buffer).
  private static func copy<T>(_ a: [T]) -> [T] {
    [T](room: a.count) { to, n in
      a.withUnsafeBufferPointer { from in
        if let s = from.baseAddress { to.baseAddress?.initialize(from: s, count: from.count) }
      }
      n = a.count
    }
  }

  /// Items ahead in a leaf whose children list, then that list's first block, `preorder`
  /// asks for; and inner entries ahead whose block it asks for.
  static let kidsDistance: Int32 = 12
  static let blockDistance: Int32 = 6

  /// Each handle's children list and flags byte, in one pass over the nodes.
  private static func kidsAndFlags(_ nodes: [Node]) -> (kids: [Handle], flags: [UInt8]) {
    let cap = nodes.count
    var kids = [Handle](repeating: -1, count: cap)
    var flags = [UInt8](repeating: 0, count: cap)
    nodes.withUnsafeBufferPointer { nodes in
      kids.withUnsafeMutableBufferPointer { kids in
        flags.withUnsafeMutableBufferPointer { flags in
          for h in 0..<cap {
            let n = nodes[h]
            kids[h] = n.children
            flags[h] = ListState.itemFlags(n, text: 0)
          }
        }
      }
    }
    return (kids, flags)
  }

  /// Each block's entry count, its sign bit set for a leaf.
  private static func shapes(_ blocks: [Block]) -> [Int32] {
    var shape = [Int32](repeating: 0, count: blocks.count)
    blocks.withUnsafeBufferPointer { blocks in
      shape.withUnsafeMutableBufferPointer { shape in
        for b in 0..<blocks.count {
          shape[b] = blocks[b].count | (blocks[b].leaf ? Int32.min : 0)
        }
      }
    }
    return shape
  }

  /// The compact encoding with the state's entries written as they are; `missing` is the
  /// failure for an entry not below `dictionaryCount`.
  func encoded(
    segment: UInt64, dictionaryCount: Int, _ missing: (Int32) -> CodecError
  ) throws(CodecError) -> (bytes: [UInt8], flushPoints: [Int]) {
    try encoded(segment: segment, dictionaryCount: dictionaryCount, direct: true) {
      e throws(CodecError) in
      guard Int(e) < dictionaryCount else { throw missing(e) }
      return Int(e)
    }
  }

  /// The compact encoding with each entry written as `number` numbers it (`direct`: as
  /// it is, `number` only checking it).
  func encoded(
    segment: UInt64, dictionaryCount: Int, direct: Bool = false,
    number: (Int32) throws(CodecError) -> Int
  ) throws(CodecError) -> (bytes: [UInt8], flushPoints: [Int]) {
    var head = ByteSink()
    for s in sections {
      head.count(try number(s.entry))
      head.count(s.count)
    }
    // The items in pre-order with their levels, then a pass per column over them, each
    // written through a pointer into room sized once.
    let (order, levels) = preorder()
    let flags = [UInt8](room: order.count) { out, done in
      self.flags.withUnsafeBufferPointer { byHandle in
        content.withUnsafeBufferPointer { content in
          text.withUnsafeBufferPointer { text in
            for (i, x) in order.enumerated() {
              let c = content[Int(x)]
              out[i] =
                byHandle[Int(x)] | ListState.textFlags(c.isNone ? 0 : text[Int(c.offset)])
            }
          }
        }
      }
      done = order.count
    }
    let refs: [UInt8]
    if !direct {
      var sink = ByteSink()
      sink.bytes.reserveCapacity(order.count * 2)
      var previous = -1
      for x in order {
        let e = try number(entryOf[Int(x)])
        sink.zigzag(Int64(e - previous - 1))
        previous = e
      }
      refs = sink.bytes
    } else {
      var bad: Int32?
      refs = [UInt8](room: order.count &* 5) { out, done in
        entryOf.withUnsafeBufferPointer { entryOf in
          var previous: Int64 = -1
          var at = 0
          for x in order {
            let e = entryOf[Int(x)]
            if Int(e) >= dictionaryCount {
              bad = e
              break
            }
            var v = ByteSink.zigzagged(Int64(e) &- previous &- 1)
            while v >= 0x80 {
              out[at] = UInt8(truncatingIfNeeded: v) | 0x80
              at &+= 1
              v >>= 7
            }
            out[at] = UInt8(truncatingIfNeeded: v)
            at &+= 1
            previous = Int64(e)
          }
          done = at
        }
      }
      // Throws: the entry is past the dictionary.
      if let bad { _ = try number(bad) }
    }
    let strings = content.withUnsafeBufferPointer { content in
      text.withUnsafeBytes { text in
        var length = 0
        for x in order where content[Int(x)].length > 1 {
          length &+= Int(content[Int(x)].length) &- 1
        }
        return [UInt8](room: length) { out, done in
          var at = 0
          defer { done = at }
          guard let to = out.baseAddress, let from = text.baseAddress else { return }
          for x in order {
            let c = content[Int(x)]
            guard c.length > 1 else { continue }
            let n = Int(c.length) &- 1
            (to + at).initialize(
              from: (from + (Int(c.offset) &+ 1)).assumingMemoryBound(to: UInt8.self), count: n)
            at &+= n
          }
        }
      }
    }
    return ListState.compactLayout(
      segment: segment, dictionaryCount: dictionaryCount,
      allowsMultipleSelection: allowsMultipleSelection, sectionCount: sections.count,
      columns: [head.bytes, levels, flags, refs, strings])
  }

  /// Every item of the sections in display order, in pre-order, and its level, a varint
  /// each (a compact state's levels column).
  private func preorder() -> (order: [Handle], levels: [UInt8]) {
    // The sections hold `itemCount` items: no more is written (a forest that broke its
    // counts gives a shorter walk, not a write past the room).
    let room = itemCount
    var order = [Handle](repeating: 0, count: room)
    var levels = [UInt8](repeating: 0, count: room &* 2)
    var written = 0
    var levelBytes = 0
    var stack: [(block: Handle, next: Int32, level: Int32)] = []
    kids.withUnsafeBufferPointer { kids in
      shape.withUnsafeBufferPointer { shape in
        slots.withUnsafeBufferPointer { slots in
          order.withUnsafeMutableBufferPointer { order in
            levels.withUnsafeMutableBufferPointer { levels in
              sectionLoop: for section in sections {
                guard section.roots >= 0 else { continue }
                stack.append((section.roots, 0, 0))
                while let top = stack.last {
                  let s = shape[Int(top.block)]
                  let count = s & Int32.max
                  var i = top.next
                  let base = Int(top.block) &* BlockLayout.stride
                  if s >= 0 {
                    // An inner block: into its next entry (and the one after is asked for).
                    if i == count {
                      stack.removeLast()
                    } else {
                      if i &+ 1 < count {
                        let b = Int(slots[base &+ Int(i) &+ 1])
                        prefetchLine(shape, b)
                        prefetchLine(slots, b &* BlockLayout.stride)
                      }
                      stack[stack.count &- 1].next = i &+ 1
                      stack.append((slots[base &+ Int(i)], 0, top.level))
                    }
                    continue
                  }
                  // A leaf: its items in order, until one has children to go into.
                  var into: Handle = -1
                  let level = top.level
                  while i < count {
                    guard written < room else { break sectionLoop }
                    // Items ahead in this leaf: their children lists, and the first block of
                    // a list nearer (each block's slots are a line of their own).
                    if i &+ Self.kidsDistance < count {
                      prefetchLine(kids, Int(slots[base &+ Int(i &+ Self.kidsDistance)]))
                    }
                    if i &+ Self.blockDistance < count {
                      let b = kids[Int(slots[base &+ Int(i &+ Self.blockDistance)])]
                      if b >= 0 {
                        prefetchLine(shape, Int(b))
                        prefetchLine(slots, Int(b) &* BlockLayout.stride)
                      }
                    }
                    let h = slots[base &+ Int(i)]
                    i &+= 1
                    order[written] = h
                    written &+= 1
                    if level < 0x80 {
                      levels[levelBytes] = UInt8(truncatingIfNeeded: level)
                      levelBytes &+= 1
                    } else {
                      levels[levelBytes] = UInt8(truncatingIfNeeded: level) | 0x80
                      levels[levelBytes &+ 1] = UInt8(truncatingIfNeeded: level >> 7)
                      levelBytes &+= 2
                    }
                    into = kids[Int(h)]
                    if into >= 0 { break }
                  }
                  if i == count && into < 0 {
                    stack.removeLast()
                  } else {
                    stack[stack.count &- 1].next = i
                  }
                  if into >= 0 { stack.append((into, 0, level &+ 1)) }
                }
              }
            }
          }
        }
      }
    }
    order.removeLast(room &- written)
    levels.removeLast(levels.count &- levelBytes)
    return (order, levels)
  }
}

/// A state's compact encoding to be made on another thread: what it reads, copied out of
/// the state (a tenth of the encoding's time), so that the fold goes on meanwhile and its
/// next writes find arrays of their own.
package struct CompactImage: Sendable {
  private let source: CompactSource

  /// What `state`'s compact encoding reads, copied; its ids are not.
  package init(_ state: ListState) { source = CompactSource(state, copying: true) }

  /// `ListState.compactEncoded(segment:dictionaryCount:)` of the state copied; an id with
  /// no entry below `dictionaryCount` is named by its entry number.
  package func encoded(segment: UInt64, dictionaryCount: Int) throws(CodecError) -> (
    bytes: [UInt8], flushPoints: [Int]
  ) {
    try source.encoded(segment: segment, dictionaryCount: dictionaryCount) {
      CodecError("identifier entry \($0) has no dictionary entry", offset: 0)
    }
  }
}
