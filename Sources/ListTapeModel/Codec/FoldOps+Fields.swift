/// What an operation record names, read in place for a table's row (`listtape export
/// --parquet`): its op, the entries of its ids, section, parent and anchor, its label and
/// time, without making its `Event` or a `String` per id.
package struct FoldOpFields {
  /// The protocol's op, as an index into `ListOperation.allNames`.
  package var name = 0
  /// Entries named by the event (-1: none).
  package var section: Int32 = -1
  package var parent: Int32 = -1
  package var anchor: Int32 = -1
  /// The ids the event lists, in order (inserted nodes in pre-order): the entries at words
  /// `idsStart`, `idsStart + idsStride`, … (`FoldOps.entry(atWord:)`), `idsCount` of them.
  package var idsStart = 0
  package var idsCount = 0
  package var idsStride = 1
  /// A mark's label, as the record's text number (-1: none; `FoldOps.label(_:)` reads it):
  /// no `String` here, so that the fields copy as plain words, once per exported row.
  package var labelText: Int32 = -1
  /// Whether the event, when it applies, may add or remove items (and so change the
  /// deepest level).
  package var structural = false
}

extension FoldOps {
  /// The fields of top-level record `i`.
  package func fields(_ i: Int) -> FoldOpFields { fields(atWord: Int(starts[i])) }

  /// The fields of the record at word `start`. A batch has no section, parent or anchor of
  /// its own: its ids are those of the events inside it (`batchRecords(atWord:)`).
  package func fields(atWord start: Int) -> FoldOpFields {
    let kind = kind(atWord: start)
    let w = start &+ Self.header
    var f = FoldOpFields()
    f.name = kind == Kind.deselectAll ? Int(EventCodes.deselect) &- 1 : Int(kind) &- 1
    func list(at k: Int) {
      f.idsStart = k &+ 1
      f.idsCount = Int(words[k])
    }
    func nodes(at k: Int) {
      f.idsStart = k &+ 1
      f.idsCount = Int(words[k])
      f.idsStride = 3
      f.structural = true
    }
    switch kind {
    case Int32(EventCodes.deleteSections), Int32(EventCodes.deleteItems):
      list(at: w)
      f.structural = true
    case Int32(EventCodes.appendSections), Int32(EventCodes.reloadSections),
      Int32(EventCodes.reloadItems), Int32(EventCodes.reconfigureItems),
      Int32(EventCodes.expand), Int32(EventCodes.collapse), Int32(EventCodes.select),
      Int32(EventCodes.deselect):
      list(at: w)
    case Int32(EventCodes.insertSections):
      list(at: w)
      f.anchor = words[w &+ 1 &+ f.idsCount]
    case Int32(EventCodes.moveSection):
      f.section = words[w]
      f.anchor = words[w &+ 1]
    case Int32(EventCodes.moveItem):
      f.idsStart = w
      f.idsCount = 1
      f.anchor = words[w &+ 1]
      f.structural = true
    case Int32(EventCodes.appendItems):
      f.section = words[w]
      f.parent = words[w &+ 1]
      nodes(at: w &+ 2)
    case Int32(EventCodes.insertItems):
      f.anchor = words[w]
      nodes(at: w &+ 1)
    case Int32(EventCodes.replaceChildren):
      f.parent = words[w]
      nodes(at: w &+ 1)
    case Int32(EventCodes.applySectionSnapshot):
      f.section = words[w]
      nodes(at: w &+ 1)
    case Int32(EventCodes.deleteAllItems), Int32(EventCodes.batch):
      f.structural = true
    case Int32(EventCodes.update):
      f.idsStart = w
      f.idsCount = 1
    case Int32(EventCodes.mark):
      f.labelText = words[w]
    default:
      break
    }
    return f
  }

  /// The label of a mark whose fields are `f`, nil for another record.
  package func label(_ f: FoldOpFields) -> String? {
    f.labelText >= 0 ? text(f.labelText) : nil
  }

  /// The records of the events of the batch record at word `start`, in order.
  package func batchRecords(atWord start: Int) -> [Int] {
    var out: [Int] = []
    var w = start &+ Self.header &+ 1
    let end = batchEnd(atWord: start)
    while w < end {
      out.append(w)
      w &+= length(atWord: w)
    }
    return out
  }

  /// Labels of the marks top-level record `i` sets (a batch's nested marks included), in
  /// order.
  package func markLabels(_ i: Int) -> [String] {
    var out: [String] = []
    var stack = [Int(starts[i])]
    while let w = stack.popLast() {
      if isBatch(atWord: w) {
        stack.append(contentsOf: batchRecords(atWord: w).reversed())
      } else if kind(atWord: w) == Int32(EventCodes.mark) {
        out.append(text(words[w &+ Self.header]))
      }
    }
    return out
  }

  /// The protocol's op name of top-level record `i`.
  package func name(_ i: Int) -> String { ListState.opName(self, atWord: Int(starts[i])) }

  /// Whether the record at word `w` is a batch.
  package func isBatch(atWord w: Int) -> Bool { kind(atWord: w) == Int32(EventCodes.batch) }

  /// Where top-level record `i` starts in the words.
  package func start(_ i: Int) -> Int { Int(starts[i]) }

  /// The entry at word `k` of a record (`FoldOpFields.idsStart` and on).
  @inline(__always) package func entry(atWord k: Int) -> Int32 { words[k] }
}

extension ListOperation {
  /// The op's index in `allNames`.
  package var nameIndex: Int { Int(EventCodes.code(of: self)) &- 1 }
}

extension FoldOps {
  /// The entry of the item top-level record `i` reads first (its first listed item, its
  /// item, anchor or parent), or -1 for records that name none: the fold's cache hints
  /// read it per record, so it reads two words where `fields(atWord:)` reads the record.
  @inline(__always) func firstEntry(_ i: Int) -> Int32 {
    let s = Int(starts[i])
    let head = words[s]
    let w = s &+ Self.header
    let end = min(s &+ Int(words[s &+ 1]), words.count)
    switch head & 0xFFFF {
    case Int32(EventCodes.expand), Int32(EventCodes.collapse), Int32(EventCodes.select),
      Int32(EventCodes.deselect), Int32(EventCodes.deleteItems):
      return w &+ 1 < end && words[w] > 0 ? words[w &+ 1] : -1
    case Int32(EventCodes.moveItem), Int32(EventCodes.update), Int32(EventCodes.insertItems),
      Int32(EventCodes.replaceChildren):
      return w < end ? words[w] : -1
    case Int32(EventCodes.appendItems):
      return (head >> 16) & 2 != 0 && w &+ 1 < end ? words[w &+ 1] : -1
    default:
      return -1
    }
  }
}
