/// The pre-order a compact state is written in, found without visiting a folded state's
/// scattered nodes item by item: one pass over `nodes` in handle order copies what the walk
/// needs (each item's children list, its flags byte) into arrays a fraction of their size,
/// then the walk reads those and the blocks.
extension Forest {
  /// Every item of the sections in display order, in pre-order; its level, a varint each
  /// (a compact state's levels column); and the checkpoint flags byte
  /// (`ListState.ItemFlag`) of every handle.
  func compactPreorder() -> (order: [Handle], levels: [UInt8], flags: [UInt8]) {
    let cap = nodes.count
    var kids = [Handle](repeating: -1, count: cap)
    var flags = [UInt8](repeating: 0, count: cap)
    nodes.withUnsafeBufferPointer { nodes in
      content.withUnsafeBufferPointer { content in
        text.withUnsafeBufferPointer { text in
          kids.withUnsafeMutableBufferPointer { kids in
            flags.withUnsafeMutableBufferPointer { flags in
              for h in 0..<cap {
                let n = nodes[h]
                kids[h] = n.children
                let c = content[h]
                let t = c.isNone ? 0 : text[Int(c.offset)]
                flags[h] =
                  (n.expanded ? ListState.ItemFlag.expanded : 0)
                  | (n.selected ? ListState.ItemFlag.selected : 0)
                  | (t & ItemText.hasTitle != 0 ? ListState.ItemFlag.title : 0)
                  | (t & ItemText.hasFields != 0 ? ListState.ItemFlag.fields : 0)
              }
            }
          }
        }
      }
    }
    // A block's entry count, its sign bit set for a leaf.
    let shape = [Int32](unsafeUninitializedCapacity: blocks.count) { shape, done in
      blocks.withUnsafeBufferPointer { blocks in
        for b in 0..<blocks.count {
          shape[b] = blocks[b].count | (blocks[b].leaf ? Int32.min : 0)
        }
      }
      done = blocks.count
    }
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
              sectionLoop: for sec in sectionOrder {
                let root = sections[Int(sec)].roots
                guard root >= 0 else { continue }
                stack.append((root, 0, 0))
                while let top = stack.last {
                  let s = shape[Int(top.block)]
                  let count = s & Int32.max
                  var i = top.next
                  let base = Int(top.block) &* BlockLayout.stride
                  if s >= 0 {
                    // An inner block: into its next entry.
                    if i == count {
                      stack.removeLast()
                    } else {
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
    return (order, levels, flags)
  }
}
