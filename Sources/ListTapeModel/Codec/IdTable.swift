import ListTapeJSON

/// Maps identifiers to their entry numbers while writing (the encoder's half of the
/// dictionary): a writer or index builder assigns the next number to each new id.
///
/// Keyed by exact UTF-8 bytes in the model's own id table (`IdentifierIndex`: one probe,
/// short keys inline), which a writer consults for every identifier it writes.
package struct IdTable: Sendable {
  var numbers = IdentifierIndex()
  /// Entries defined so far.
  package private(set) var count = 0

  /// An empty table.
  package init() {}

  /// A table holding `dictionary`'s entries, numbered as there (an id listed twice maps to
  /// its later entry, as `add` leaves it).
  package init(_ dictionary: IdSpace) {
    numbers.reserveCapacity(dictionary.count)
    for e in 0..<dictionary.count {
      dictionary.withText(e) { text in
        let k = numbers.key(text)
        if case .present(let slot, _, _) = numbers.insert(k, Int32(truncatingIfNeeded: e)) {
          numbers.setHandle(inSlot: slot, Int32(truncatingIfNeeded: e))
        }
      }
      count += 1
    }
  }

  /// A restart's table: `ids` numbered in order (an id listed twice maps to its later
  /// entry, as `add` leaves it), and the aliases a reader's decoder finds in that listing
  /// (each repeat and the earlier entry it repeats). - Complexity: O(ids), one probe each.
  package static func listing(_ ids: [String]) -> (table: IdTable, aliases: DefinitionAliases) {
    var t = IdTable()
    var aliases = DefinitionAliases()
    t.numbers.reserveCapacity(ids.count)
    for var id in ids {
      let e = Int32(truncatingIfNeeded: t.count)
      id.withUTF8 { text in
        let k = t.numbers.key(text)
        if case .present(let slot, _, let first) = t.numbers.insert(k, e) {
          t.numbers.setHandle(inSlot: slot, e)
          aliases.note(e, aliases.canonical(first))
        }
      }
      t.count += 1
    }
    aliases.vetted = ids.count
    return (t, aliases)
  }

  /// The entry number of `id`, if defined.
  @inline(__always)
  package func number(of id: String) -> Int? { numbers[id].map { Int($0) } }

  /// The entry number of the id whose UTF-8 bytes are `bytes`, if defined.
  @inline(__always)
  package func number(ofBytes bytes: UnsafeBufferPointer<UInt8>) -> Int? {
    numbers.handle(numbers.key(bytes)).map { Int($0) }
  }

  /// Defines `id` as the next entry (or renumbers it, if a restart listed it twice);
  /// returns its number.
  @discardableResult
  package mutating func add(_ id: String) -> Int {
    numbers[id] = Int32(truncatingIfNeeded: count)
    count += 1
    return count - 1
  }

  /// Where the table stands, to go back to (`rollBack`).
  package struct Mark: Sendable {
    let count: Int
    let arena: Int
  }

  /// The table as it is now.
  package var mark: Mark { Mark(count: count, arena: numbers.arena.count) }

  /// Forgets the entries defined since `mark`, all among `added` (ids defined before the
  /// mark, and repeats, are passed over): an encoder undoes a refused event so.
  package mutating func rollBack(to mark: Mark, added: some Sequence<String>) {
    for id in added {
      if let e = numbers[id], Int(e) >= mark.count { numbers.remove(id) }
    }
    numbers.truncateArena(to: mark.arena)
    count = mark.count
  }

  /// Forgets every entry (a restart).
  package mutating func removeAll() {
    numbers = IdentifierIndex()
    count = 0
  }
}
