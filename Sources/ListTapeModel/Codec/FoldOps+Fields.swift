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
  /// The fields of event record `i`, or nil when it holds a whole `Event` (`wholeEvent`).
  package func fields(_ i: Int) -> FoldOpFields? {
    let kind = kind(i)
    let w = Int(starts[i]) &+ Self.header
    var f = FoldOpFields()
    switch kind {
    case Kind.whole:
      return nil
    case Kind.deselectAll:
      f.name = Int(EventCodes.deselect) &- 1
      return f
    case Int32(EventCodes.expand), Int32(EventCodes.collapse), Int32(EventCodes.select),
      Int32(EventCodes.deselect), Int32(EventCodes.reloadItems),
      Int32(EventCodes.reconfigureItems), Int32(EventCodes.deleteItems):
      f.idsStart = w &+ 1
      f.idsCount = Int(words[w])
      f.structural = kind == Int32(EventCodes.deleteItems)
    case Int32(EventCodes.moveItem):
      f.idsStart = w
      f.idsCount = 1
      f.anchor = words[w &+ 1]
      f.structural = true
    case Int32(EventCodes.insertItems):
      f.anchor = words[w]
      f.idsStart = w &+ 2
      f.idsCount = Int(words[w &+ 1])
      f.idsStride = 4
      f.structural = true
    case Int32(EventCodes.appendItems):
      f.section = words[w]
      f.parent = words[w &+ 1]
      f.idsStart = w &+ 3
      f.idsCount = Int(words[w &+ 2])
      f.idsStride = 4
      f.structural = true
    case Int32(EventCodes.update):
      f.idsStart = w
      f.idsCount = 1
    case Int32(EventCodes.mark):
      f.label = string(words[w]) ?? ""
    default:
      return nil
    }
    f.name = Int(kind) &- 1
    return f
  }

  /// The entry at word `k` of a record (`FoldOpFields.idsStart` and on).
  @inline(__always) package func entry(atWord k: Int) -> Int32 { words[k] }

  /// The event record `i` keeps whole (a batch, a section edit, …), or nil.
  package func wholeEvent(_ i: Int) -> Event? {
    kind(i) == Kind.whole ? events[Int(word(i, Self.header))] : nil
  }

  /// Record `i`'s time, nil when untimed.
  @inline(__always) package func time(_ i: Int) -> Int64? {
    let t = times[i]
    return t == Self.noTime ? nil : t
  }
}

extension FoldEntries {
  /// Whether entry `e` is within the fold's dictionary (whose entries all have text when
  /// the fold goes on entries: only a salvaged log's dictionary has holes).
  @inline(__always) package func hasText(_ e: Int32) -> Bool {
    e >= 0 && Int(e) < dictionary.count
  }

  /// Calls `body` with the UTF-8 bytes of entry `e`; throws when the fold has no such entry
  /// or cannot read it. An entry the fold already holds as a `String` (every entry of a log
  /// folded from its start) is read in place.
  package mutating func withText<R>(
    _ e: Int32, _ body: (UnsafeBufferPointer<UInt8>) -> R
  ) throws(CodecError) -> R {
    guard e >= 0, Int(e) < dictionary.count else {
      throw CodecError("reference to entry \(e) of \(dictionary.count)", offset: 0)
    }
    var text = dictionary.strings[Int(e)]
    if !text.isEmpty { return text.withUTF8(body) }
    return try dictionary.withText(Int(e)) { bytes throws(CodecError) in body(bytes) }
  }
}

extension ListOperation {
  /// The op's index in `allNames`.
  package var nameIndex: Int { Int(EventCodes.code(of: self)) &- 1 }
}
