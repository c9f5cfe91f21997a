/// The live sections in display order: a B-tree of section handles whose blocks count the
/// handles below them, with each handle's leaf on record, so that inserting or removing a
/// section anywhere, finding a section's position and the section at a position cost
/// O(log sections × fan-out), and walking the order (along linked leaves) O(sections).
///
/// Inside a batch every insert and removal is logged with its position, and `rollBack()`
/// undoes them newest first: O(changes × log sections), never a copy of the order.
struct SectionOrder: Sequence {
  /// One block: a leaf holds section handles, an inner block holds blocks. Its entries live
  /// in `slots`, `fanout` per block.
  struct Block {
    var parent: Handle = -1
    var count: Int32 = 0
    /// Section handles below this block.
    var size: Int32 = 0
    /// Neighbouring leaves in order (leaves only; -1 at the ends).
    var previous: Handle = -1
    var next: Handle = -1
    var leaf: Bool

    init(leaf: Bool) { self.leaf = leaf }
  }

  /// A change made inside a batch, and what undoes it.
  enum Change {
    case inserted(Handle)
    case removed(Handle, at: Int)
  }

  static let fanout = 32

  private(set) var blocks: [Block] = []
  private(set) var slots: [Handle] = []
  private var freeBlocks: [Handle] = []
  private(set) var root: Handle = -1
  /// The first leaf in order (-1 when empty).
  private(set) var head: Handle = -1
  /// The leaf holding each section handle, -1 for handles not in the order.
  private(set) var leafOf: [Handle] = []
  /// Changes since `begin()`, nil outside a batch.
  private var changes: [Change]?

  init() {}

  /// Number of sections in the order. - Complexity: O(1).
  var count: Int { root < 0 ? 0 : Int(blocks[Int(root)].size) }

  var isEmpty: Bool { root < 0 }

  /// The last section, or nil. - Complexity: O(log sections).
  var last: Handle? {
    guard root >= 0 else { return nil }
    var b = root
    while !blocks[Int(b)].leaf { b = entry(b, Int(blocks[Int(b)].count) &- 1) }
    return entry(b, Int(blocks[Int(b)].count) &- 1)
  }

  @inline(__always) private func entry(_ b: Handle, _ i: Int) -> Handle {
    slots[Int(b) &* Self.fanout &+ i]
  }

  @inline(__always) private mutating func setEntry(_ b: Handle, _ i: Int, _ h: Handle) {
    slots[Int(b) &* Self.fanout &+ i] = h
  }

  /// Index of the entry holding `h` in block `b`. - Complexity: O(fan-out).
  private func entryIndex(of h: Handle, in b: Handle) -> Int {
    let base = Int(b) &* Self.fanout
    let n = Int(blocks[Int(b)].count)
    var i = 0
    while i < n && slots[base &+ i] != h { i &+= 1 }
    return i
  }

  // MARK: Queries

  /// Whether section `s` is in the order. - Complexity: O(1).
  func contains(_ s: Handle) -> Bool {
    s >= 0 && Int(s) < leafOf.count && leafOf[Int(s)] >= 0
  }

  /// Position of section `s`, or nil when it is not in the order.
  /// - Complexity: O(log sections × fan-out).
  func position(of s: Handle) -> Int? {
    guard contains(s) else { return nil }
    var b = leafOf[Int(s)]
    var r = entryIndex(of: s, in: b)
    var p = blocks[Int(b)].parent
    while p >= 0 {
      let base = Int(p) &* Self.fanout
      var i = base
      while slots[i] != b {
        r &+= Int(blocks[Int(slots[i])].size)
        i &+= 1
      }
      b = p
      p = blocks[Int(b)].parent
    }
    return r
  }

  /// The section at position `k` (0..<count). - Complexity: O(log sections × fan-out).
  subscript(k: Int) -> Handle {
    var b = root
    var k = Int32(truncatingIfNeeded: k)
    while !blocks[Int(b)].leaf {
      var i = 0
      while k >= blocks[Int(entry(b, i))].size {
        k &-= blocks[Int(entry(b, i))].size
        i &+= 1
      }
      b = entry(b, i)
    }
    return entry(b, Int(k))
  }

  /// Walks the leaves in order.
  struct Iterator: IteratorProtocol {
    let order: SectionOrder
    var leaf: Handle
    var index = 0

    mutating func next() -> Handle? {
      while leaf >= 0 {
        let block = order.blocks[Int(leaf)]
        if index < Int(block.count) {
          defer { index &+= 1 }
          return order.entry(leaf, index)
        }
        leaf = block.next
        index = 0
      }
      return nil
    }
  }

  func makeIterator() -> Iterator { Iterator(order: self, leaf: head) }

  var underestimatedCount: Int { count }

  // MARK: Edits

  /// Appends section `s` (not in the order). - Complexity: O(log sections).
  mutating func append(_ s: Handle) { insert(s, at: count) }

  /// Inserts section `s` (not in the order) at position `k` (0...count).
  /// - Complexity: O(log sections × fan-out).
  mutating func insert(_ s: Handle, at k: Int) {
    changes?.append(.inserted(s))
    if Int(s) >= leafOf.count {
      leafOf.append(contentsOf: repeatElement(-1, count: Int(s) &+ 1 &- leafOf.count))
    }
    if root < 0 {
      root = allocate(leaf: true)
      head = root
    }
    // Find the leaf and the entry index; appending follows the last entries.
    var b = root
    var k = k
    if k >= count {
      while !blocks[Int(b)].leaf { b = entry(b, Int(blocks[Int(b)].count) &- 1) }
      k = Int(blocks[Int(b)].count)
    } else {
      while !blocks[Int(b)].leaf {
        var i = 0
        while k > Int(blocks[Int(entry(b, i))].size) {
          k &-= Int(blocks[Int(entry(b, i))].size)
          i &+= 1
        }
        b = entry(b, i)
      }
    }
    openGap(b, at: k)
    setEntry(b, k, s)
    leafOf[Int(s)] = b
    var up = b
    while up >= 0 {
      blocks[Int(up)].size &+= 1
      up = blocks[Int(up)].parent
    }
    if Int(blocks[Int(b)].count) == Self.fanout { split(b) }
  }

  /// Removes section `s` if it is in the order. - Complexity: O(log sections × fan-out).
  mutating func remove(_ s: Handle) {
    guard contains(s) else { return }
    let b = leafOf[Int(s)]
    if changes != nil, let k = position(of: s) { changes?.append(.removed(s, at: k)) }
    leafOf[Int(s)] = -1
    var up = b
    while up >= 0 {
      blocks[Int(up)].size &-= 1
      up = blocks[Int(up)].parent
    }
    removeEntry(at: entryIndex(of: s, in: b), of: b)
  }

  /// Shifts entries `i..<count` of block `b` one place right.
  private mutating func openGap(_ b: Handle, at i: Int) {
    var k = Int(blocks[Int(b)].count)
    while k > i {
      setEntry(b, k, entry(b, k &- 1))
      k &-= 1
    }
    blocks[Int(b)].count &+= 1
  }

  /// Splits a full block in two, the upper half in a new block right after it.
  private mutating func split(_ b: Handle) {
    let leaf = blocks[Int(b)].leaf
    let half = Self.fanout / 2
    let c = allocate(leaf: leaf)
    var moved: Int32 = 0
    for i in half..<Self.fanout {
      let h = entry(b, i)
      setEntry(c, i &- half, h)
      if leaf {
        leafOf[Int(h)] = c
        moved &+= 1
      } else {
        blocks[Int(h)].parent = c
        moved &+= blocks[Int(h)].size
      }
    }
    blocks[Int(b)].count = Int32(half)
    blocks[Int(c)].count = Int32(Self.fanout &- half)
    blocks[Int(b)].size &-= moved
    blocks[Int(c)].size = moved
    if leaf {
      let after = blocks[Int(b)].next
      blocks[Int(c)].previous = b
      blocks[Int(c)].next = after
      if after >= 0 { blocks[Int(after)].previous = c }
      blocks[Int(b)].next = c
    }
    let up = blocks[Int(b)].parent
    if up < 0 {
      let r = allocate(leaf: false)
      blocks[Int(r)].count = 2
      blocks[Int(r)].size = blocks[Int(b)].size &+ moved
      setEntry(r, 0, b)
      setEntry(r, 1, c)
      blocks[Int(b)].parent = r
      blocks[Int(c)].parent = r
      root = r
    } else {
      // The parent's size already counts both halves.
      let i = entryIndex(of: b, in: up) &+ 1
      openGap(up, at: i)
      setEntry(up, i, c)
      blocks[Int(c)].parent = up
      if Int(blocks[Int(up)].count) == Self.fanout { split(up) }
    }
  }

  /// Removes entry `i` of block `b` (whose size was already taken off), dropping blocks that
  /// empty and roots left with a single inner child.
  private mutating func removeEntry(at i: Int, of b: Handle) {
    var b = b
    var i = i
    while true {
      let n = Int(blocks[Int(b)].count)
      for k in i..<(n &- 1) { setEntry(b, k, entry(b, k &+ 1)) }
      blocks[Int(b)].count &-= 1
      let up = blocks[Int(b)].parent
      guard n == 1 else { break }
      release(b)
      if up < 0 {
        root = -1
        head = -1
        return
      }
      i = entryIndex(of: b, in: up)
      b = up
    }
    while root >= 0 && !blocks[Int(root)].leaf && blocks[Int(root)].count == 1 {
      let only = entry(root, 0)
      release(root)
      blocks[Int(only)].parent = -1
      root = only
    }
  }

  private mutating func allocate(leaf: Bool) -> Handle {
    if let b = freeBlocks.popLast() {
      blocks[Int(b)] = Block(leaf: leaf)
      return b
    }
    blocks.append(Block(leaf: leaf))
    slots.append(contentsOf: repeatElement(-1, count: Self.fanout))
    return Handle(blocks.count &- 1)
  }

  /// Frees a block, unlinking a leaf from its neighbours.
  private mutating func release(_ b: Handle) {
    let block = blocks[Int(b)]
    if block.leaf {
      if block.previous >= 0 { blocks[Int(block.previous)].next = block.next }
      if block.next >= 0 { blocks[Int(block.next)].previous = block.previous }
      if head == b { head = block.next }
    }
    blocks[Int(b)] = Block(leaf: block.leaf)
    freeBlocks.append(b)
  }

  // MARK: Batches

  /// Starts logging changes so that `rollBack()` can undo them.
  mutating func begin() { changes = [] }

  /// Keeps every change since `begin()`.
  mutating func commit() { changes = nil }

  /// Undoes every change since `begin()`, newest first.
  mutating func rollBack() {
    guard let log = changes else { return }
    changes = nil
    for change in log.reversed() {
      switch change {
      case .inserted(let s): remove(s)
      case .removed(let s, let k): insert(s, at: k)
      }
    }
  }
}
