import ListTapeJSON

/// The identifiers a format 2.0 log has defined since its last dictionary restart, by
/// entry number: each id's text is written once and referenced by number afterwards.
///
/// Entries are materialized as `String`s once and shared by every event that names them.
/// A bulk-loaded prefix (from an index file) stays in its stored form until an entry is
/// first used, so loading a dictionary is one copy whatever its size.
package struct IdDictionary: Sendable {
  /// Entry texts; "" for a bulk-loaded entry not yet materialized (ids are never empty).
  var strings: [String] = []
  /// Bulk-loaded entries in stored form (`IdText.store`), entry i ending at `storedEnds[i]`.
  var stored: [UInt8] = []
  var storedEnds: [UInt32] = []
  /// A random number naming this dictionary's numbering (0 until asked for): copies share
  /// it, a restart clears it. States keep handles by entry for one lineage
  /// (`Forest.entryHandles`).
  package private(set) var lineage: UInt64 = 0

  /// This dictionary's lineage, drawn on first use.
  package mutating func ensureLineage() -> UInt64 {
    if lineage == 0 { lineage = UInt64.random(in: 1...UInt64.max) }
    return lineage
  }

  /// An empty dictionary (a log's start, before any definition).
  package init() {}

  /// Entries defined so far.
  package var count: Int { strings.count }

  /// A dictionary of `ends.count` entries held in stored form, materialized on first use.
  /// Throws when the ends do not cut `stored` into non-empty entries.
  package init(stored: [UInt8], ends: [UInt32]) throws(CodecError) {
    var previous: UInt32 = 0
    for (i, end) in ends.enumerated() {
      guard end > previous, Int(end) <= stored.count else {
        throw CodecError("dictionary entry \(i) has a bad extent", offset: Int(previous))
      }
      previous = end
    }
    guard Int(previous) == stored.count else {
      throw CodecError("dictionary has trailing bytes", offset: Int(previous))
    }
    self.stored = stored
    self.storedEnds = ends
    self.strings = [String](repeating: "", count: ends.count)
  }

  /// The text of entry `e` (which must be below `count`).
  @inline(__always)
  package mutating func entry(_ e: Int) throws(CodecError) -> String {
    let s = strings[e]
    if !s.isEmpty { return s }
    guard let s = try materialize(e) else {
      throw CodecError("dictionary entry \(e) was lost with the events that defined it", offset: 0)
    }
    return s
  }

  /// The text of entry `e`, or nil when it is a hole (`appendHoles`).
  @inline(__always)
  mutating func entryOrHole(_ e: Int) throws(CodecError) -> String? {
    let s = strings[e]
    if !s.isEmpty { return s }
    return try materialize(e)
  }

  /// Calls `body` with the UTF-8 bytes of entry `e` (which must be below `count`) without
  /// keeping a `String` for it: a bulk-loaded entry is read from its stored form (a UUID
  /// spelt into a buffer on the stack), unchecked (the caller validates what it keeps).
  package mutating func withText<R>(
    _ e: Int, _ body: (UnsafeBufferPointer<UInt8>) throws(CodecError) -> R
  ) throws(CodecError) -> R {
    if strings[e].isEmpty, e < storedEnds.count {
      let start = e == 0 ? 0 : Int(storedEnds[e - 1])
      let end = Int(storedEnds[e])
      return try stored.withUnsafeBufferPointer { (all) throws(CodecError) -> R in
        let form = UnsafeBufferPointer(rebasing: all[start..<end])
        guard let kind = form.first else {
          throw CodecError("empty dictionary entry", offset: 0)
        }
        let text = UnsafeBufferPointer(rebasing: form[1...])
        switch kind {
        case IdText.text:
          guard !text.isEmpty else { throw CodecError("empty identifier", offset: 1) }
          return try body(text)
        case IdText.uuidUpper, IdText.uuidLower:
          guard text.count == 16 else {
            throw CodecError("UUID entry of \(text.count) bytes", offset: 1)
          }
          let raw = UnsafeRawBufferPointer(text)
          let hi = UInt64(bigEndian: raw.loadUnaligned(fromByteOffset: 0, as: UInt64.self))
          let lo = UInt64(bigEndian: raw.loadUnaligned(fromByteOffset: 8, as: UInt64.self))
          var spelt = IdText.UUIDText()
          spelt.spell(hi, lo, lower: kind == IdText.uuidLower)
          return try spelt.withBytes(body)
        default:
          throw CodecError("unknown identifier kind \(kind)", offset: 0)
        }
      }
    }
    var s = try entry(e)
    let result: Result<R, CodecError> = s.withUTF8 { bytes in
      Result { () throws(CodecError) -> R in try body(bytes) }
    }
    return try result.get()
  }

  /// Pads the dictionary to `n` entries whose text is unknown: the definitions of events
  /// lost before a frame of a salvaged log. Events naming them cannot be decoded.
  mutating func appendHoles(upTo n: Int) {
    while strings.count < n { strings.append("") }
  }

  private mutating func materialize(_ e: Int) throws(CodecError) -> String? {
    guard e < storedEnds.count else { return nil }
    let start = e == 0 ? 0 : Int(storedEnds[e - 1])
    let end = Int(storedEnds[e])
    let result: Result<String, CodecError> = stored.withUnsafeBytes { all in
      Result { () throws(CodecError) in
        try IdText.load(UnsafeRawBufferPointer(rebasing: all[start..<end]))
      }
    }
    let s = try result.get()
    strings[e] = s
    return s
  }

  /// Adds the next entry.
  @inline(__always)
  package mutating func append(_ id: String) { strings.append(id) }

  /// Drops entries from `n` on (a frame re-decoded from its start defines them again).
  package mutating func truncate(to n: Int) {
    guard n < strings.count else { return }
    strings.removeSubrange(n...)
    if n < storedEnds.count {
      storedEnds.removeSubrange(n...)
      stored.removeSubrange(Int(storedEnds.last ?? 0)...)
    }
  }

  /// Empties the dictionary (a restart).
  package mutating func removeAll() {
    lineage = 0
    strings.removeAll(keepingCapacity: true)
    stored.removeAll()
    storedEnds.removeAll()
  }

  /// Entries `from..<count`, materialized.
  package mutating func entries(from start: Int) throws(CodecError) -> [String] {
    var out: [String] = []
    out.reserveCapacity(max(0, count - start))
    for e in max(start, 0)..<count { out.append(try entry(e)) }
    return out
  }

  /// Appends the stored form of `id` (what an index file keeps for each entry) to `bytes`.
  package static func appendStored(_ id: String, to bytes: inout [UInt8]) {
    IdText.store(id, into: &bytes)
  }

  /// Every entry in stored form, with its end offsets (what an index file keeps).
  package mutating func storedForm(upTo n: Int) throws(CodecError) -> (
    bytes: [UInt8], ends: [UInt32]
  ) {
    var bytes: [UInt8] = []
    var ends: [UInt32] = []
    ends.reserveCapacity(n)
    for e in 0..<min(n, count) {
      IdText.store(try entry(e), into: &bytes)
      ends.append(UInt32(truncatingIfNeeded: bytes.count))
    }
    return (bytes, ends)
  }
}

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

  /// A table holding `dictionary`'s entries, numbered as there.
  package init(_ dictionary: inout IdDictionary) throws(CodecError) {
    numbers.reserveCapacity(dictionary.count)
    for e in 0..<dictionary.count { add(try dictionary.entry(e)) }
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

  /// Forgets every entry (a restart).
  package mutating func removeAll() {
    numbers = IdentifierIndex()
    count = 0
  }
}

