/// An identifier as a hash key that compares by its exact Unicode scalars (its UTF-8 bytes).
///
/// Swift's `String` equality is canonical equivalence, so `"\u{E9}"` and `"e\u{301}"` would
/// be one id; the protocol's identifiers are JSON strings, distinct whenever their code
/// points differ, so the model never keys anything by a plain `String`.
package struct IdentifierKey: Hashable, Sendable {
  package let id: String

  package init(_ id: String) { self.id = id }

  package static func == (lhs: IdentifierKey, rhs: IdentifierKey) -> Bool {
    lhs.id.utf8.elementsEqual(rhs.id.utf8)
  }

  package func hash(into hasher: inout Hasher) {
    var id = id
    id.withUTF8 { hasher.combine(bytes: UnsafeRawBufferPointer($0)) }
  }
}

/// Whether two identifiers are the same id (same Unicode scalars, not merely canonically
/// equivalent).
@inline(__always) func sameIdentifier(_ a: String, _ b: String) -> Bool {
  a.utf8.elementsEqual(b.utf8)
}

/// A map from identifiers to handles, keyed by exact scalars (see `IdentifierKey`).
struct IdentifierIndex {
  private var storage: [IdentifierKey: Handle] = [:]

  subscript(id: String) -> Handle? {
    get { storage[IdentifierKey(id)] }
    set { storage[IdentifierKey(id)] = newValue }
  }

  var count: Int { storage.count }
  var capacity: Int { storage.capacity }
  mutating func reserveCapacity(_ n: Int) { storage.reserveCapacity(n) }
}
