/// An identifier as a hash key that compares by its exact Unicode scalars (its UTF-8 bytes).
///
/// Swift's `String` equality is canonical equivalence, so `"\u{E9}"` and `"e\u{301}"` would
/// be one id; the protocol's identifiers are JSON strings, distinct whenever their code
/// points differ, so the model never keys anything by a plain `String`.
package struct IdentifierKey: Hashable, Sendable {
  package let id: String

  package init(_ id: String) { self.id = id }

  package static func == (lhs: IdentifierKey, rhs: IdentifierKey) -> Bool {
    sameIdentifier(lhs.id, rhs.id)
  }

  package func hash(into hasher: inout Hasher) {
    var id = id
    id.withUTF8 { hasher.combine(bytes: UnsafeRawBufferPointer($0)) }
  }
}

/// Whether two identifiers are the same id (same Unicode scalars, not merely canonically
/// equivalent): their UTF-8 bytes compared a word at a time (a generic walk of the UTF-8
/// views costs tens of instructions per byte).
@inline(__always) func sameIdentifier(_ a: String, _ b: String) -> Bool {
  guard a.utf8.count == b.utf8.count else { return false }
  var a = a
  var b = b
  return a.withUTF8 { x in b.withUTF8 { y in IdentifierIndex.equal(x, y) } }
}
