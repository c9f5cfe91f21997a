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
  /// A mark's label.
  package var label: String?
  /// Whether the event, when it applies, may add or remove items (and so change the
  /// deepest level).
  package var structural = false
}

extension FoldOps {
  /// The fields of top-level record `i`.
  package func fields(_ i: Int) -> FoldOpFields { fields(atWord: Int(starts[i])) }

  /// The fields of the record at word `start` (a batch's own: its events are records of
  /// their own, `batchRecords(atWord:)`).
  package func fields(atWord start: Int) -> FoldOpFields {
    let kind = kind(atWord: start)
    let w = start &+ Self.header
    var f = FoldOpFields()
    f.name = kind == Kind.deselectAll ? Int(EventCodes.deselect) &- 1 : Int(kind) &- 1
    switch kind {
    case Int32(EventCodes.expand), Int32(EventCodes.collapse), Int32(EventCodes.select),
      Int32(EventCodes.deselect), Int32(EventCodes.reloadItems),
      Int32(EventCodes.reconfigureItems), Int32(EventCodes.deleteItems),
      Int32(EventCodes.appendSections), Int32(EventCodes.deleteSections),
      Int32(EventCodes.reloadSections):
      f.idsStart = w &+ 1
      f.idsCount = Int(words[w])
      f.structural =
        kind == Int32(EventCodes.deleteItems) || kind == Int32(EventCodes.deleteSections)
    case Int32(EventCodes.insertSections):
      f.idsStart = w &+ 1
      f.idsCount = Int(words[w])
      f.anchor = words[w &+ 1 &+ f.idsCount]
    case Int32(EventCodes.moveItem), Int32(EventCodes.moveSection):
      f.idsStart = w
      f.idsCount = 1
      f.anchor = words[w &+ 1]
      f.structural = kind == Int32(EventCodes.moveItem)
    case Int32(EventCodes.insertItems):
      f.anchor = words[w]
      f.idsStart = w &+ 2
      f.idsCount = Int(words[w &+ 1])
      f.idsStride = 3
      f.structural = true
    case Int32(EventCodes.appendItems):
      f.section = words[w]
      f.parent = words[w &+ 1]
      f.idsStart = w &+ 3
      f.idsCount = Int(words[w &+ 2])
      f.idsStride = 3
      f.structural = true
    case Int32(EventCodes.replaceChildren), Int32(EventCodes.applySectionSnapshot):
      if kind == Int32(EventCodes.replaceChildren) {
        f.parent = words[w]
      } else {
        f.section = words[w]
      }
      f.idsStart = w &+ 2
      f.idsCount = Int(words[w &+ 1])
      f.idsStride = 3
      f.structural = true
    case Int32(EventCodes.deleteAllItems):
      f.structural = true
    case Int32(EventCodes.update):
      f.idsStart = w
      f.idsCount = 1
    case Int32(EventCodes.mark):
      f.label = text(words[w])
    default:
      break
    }
    return f
  }

  /// The records of the events of the batch record at word `start`, in order.
  package func batchRecords(atWord start: Int) -> [Int] {
    var out: [Int] = []
    var w = start &+ Self.header &+ 1
    let end = start &+ length(atWord: start)
    while w < end {
      out.append(w)
      w &+= length(atWord: w)
    }
    return out
  }

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
