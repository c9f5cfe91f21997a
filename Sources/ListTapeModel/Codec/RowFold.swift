/// A recorder's fold of the rows it encodes (`EventRowEncoder`): the row already names every
/// identifier by its dictionary entry, so a state that follows the writer's dictionary folds
/// it as a reader folds the frame, and no id is looked up a second time.
extension ListState {
  /// Makes the state number its ids as the writer's dictionary does: `ids` listed by a
  /// restart (sections first, then items in pre-order, as `Recorder` writes one), whose
  /// repeats `aliases` names. Throws when `ids` lacks an id the state holds.
  package mutating func follow(restart ids: [String], aliases: DefinitionAliases)
    throws(CodecError)
  {
    var dictionary = IdSpace()
    for id in ids { dictionary.append(id) }
    try adopt(dictionary, aliases: aliases)
  }

  /// Entries the state's ids hold (a state following a writer holds the writer's count).
  package var idCount: Int { forest.ids.count }

  /// Lets a state that followed a log renumber its own ids again when dead ones pile up (a
  /// copy edited by string from now on, as the store's is).
  package mutating func numberOwnIDs() { forest.idsFollowLog = false }

  /// Folds the event whose row is `row` (one `EventRowEncoder.encode`), the state's ids
  /// being the writer's dictionary before it; `aliases` maps the dictionary's repeats to
  /// the entry each repeats, as a reader's decoder does. Returns the event's fault, nil when
  /// it applied. Throws when the row does not follow the state's ids (nothing applied).
  package mutating func apply(row: [UInt8], aliases: DefinitionAliases)
    throws(CodecError) -> ListFault?
  {
    let folded: Result<ListFault?, CodecError> = row.withUnsafeBytes { bytes in
      do throws(CodecError) {
        return .success(try apply(rowBytes: bytes, aliases: aliases))
      } catch {
        return .failure(error)
      }
    }
    return try folded.get()
  }

  private mutating func apply(rowBytes row: UnsafeRawBufferPointer, aliases: DefinitionAliases)
    throws(CodecError) -> ListFault?
  {
    var ops = FoldOps()
    swap(&ops, &forest.opScratch)
    defer {
      ops.removeAll()
      swap(&ops, &forest.opScratch)
    }
    var source = RowSource(row, aliases: aliases)
    let before = try source.start()
    guard before == forest.ids.count else {
      throw CodecError(
        "row expects \(before) dictionary entries, the state knows \(forest.ids.count)",
        offset: 0)
    }
    swap(&source.dictionary, &forest.ids)
    let decoded: Result<OpOutcome, CodecError>
    do throws(CodecError) {
      decoded = .success(try OpWalk.decode(&source, seq: 0, into: &ops))
    } catch {
      decoded = .failure(error)
    }
    swap(&source.dictionary, &forest.ids)
    if case .failure(let error) = decoded {
      forest.ids.truncate(to: before)
      throw error
    }
    guard source.isAtEnd else {
      forest.ids.truncate(to: before)
      throw source.fail("bytes after the row's event")
    }
    return try apply(ops, 0)
  }
}

/// One row's tokens as an `OpSource`: references are entries already, definitions are the
/// id's text, appended to `dictionary` (the state's ids, lent for the row).
struct RowSource: OpSource {
  var row: ByteSource
  var dictionary = IdSpace()
  var defined = 0
  var touchedHole = false
  let aliases: DefinitionAliases

  init(_ bytes: UnsafeRawBufferPointer, aliases: DefinitionAliases) {
    row = ByteSource(bytes)
    self.aliases = aliases
  }

  var isAtEnd: Bool { row.isAtEnd }

  /// Reads the row's head: the entries defined before it.
  mutating func start() throws(CodecError) -> Int {
    let n = try row.varint()
    guard n <= UInt64(Int32.max) else { throw row.fail("dictionary size \(n)") }
    defined = Int(n)
    return defined
  }

  @inline(__always) private mutating func expect(_ token: UInt8) throws(CodecError) {
    let t = try row.byte()
    guard t == token else { throw row.fail("row token \(t) where \(token) belongs") }
  }

  mutating func tag() throws(CodecError) -> UInt8 {
    try expect(RowToken.tag)
    return try row.byte()
  }

  mutating func time(nested: Bool) throws(CodecError) -> Int64 {
    try expect(nested ? RowToken.varint : RowToken.time)
    return try row.zigzag()
  }

  mutating func count(_ kind: CountKind) throws(CodecError) -> Int {
    try expect(RowToken.varint)
    let v = try row.varint()
    guard v <= UInt64(min(row.remaining, CodecLimits.maxCount)) else {
      throw row.fail("count \(v) exceeds what the row holds")
    }
    return Int(v)
  }

  mutating func flag() throws(CodecError) -> UInt8 {
    try expect(RowToken.byte)
    return try row.byte()
  }

  mutating func id() throws(CodecError) -> String { dictionary.text(Int(try entryRef())) }

  mutating func string() throws(CodecError) -> String {
    try expect(RowToken.string)
    return try row.string()
  }

  func fail(_ message: String) -> CodecError { row.fail(message) }

  @inline(__always)
  mutating func entryRef() throws(CodecError) -> Int32 {
    try entry(ref: RowToken.ref, define: RowToken.define)
  }

  mutating func site(code: UInt8) throws(CodecError) -> Int32? {
    try entry(ref: RowToken.siteRef, define: RowToken.siteDefine)
  }

  /// A reference (the earlier entry when it names a repeat) or a definition, appended.
  @inline(__always)
  private mutating func entry(ref: UInt8, define: UInt8) throws(CodecError) -> Int32 {
    let t = try row.byte()
    if t == ref {
      let e = try row.varint()
      guard e < UInt64(defined) else { throw row.fail("reference to entry \(e) of \(defined)") }
      return aliases.canonical(Int32(truncatingIfNeeded: e))
    }
    guard t == define else { throw row.fail("row token \(t) where an identifier belongs") }
    let n = try row.count()
    let e = Int32(truncatingIfNeeded: defined)
    _ = try row.withText(n) { text in
      IdText.withStored(text) { dictionary.append(stored: $0) }
    }
    defined &+= 1
    return e
  }
}
