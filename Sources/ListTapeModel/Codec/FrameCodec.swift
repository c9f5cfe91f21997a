import ListTapeJSON

/// Format 2.0's event frames: a frame's events stored column by column (docs/log-format.md).
///
/// Writing happens in two steps because the log writer decides where frames end: the
/// recorder encodes each event as a *row* (`EventRowEncoder`: the event's parts as tokens,
/// identifiers already resolved to dictionary entries), and when the writer cuts a frame,
/// `FrameAssembler` turns its rows into columns, resolving what depends on the frame
/// (times as deltas, the ring of recent identifiers, definitions front-coded). Reading is
/// one step: `EventDecoder.decodeFrame` walks the columns.
package enum FrameLayout {
  /// Layout byte at the start of a 2.0 event frame payload whose events have no sites.
  static let version: UInt8 = 1
  /// Layout byte of a frame with sites coded alone (written before layout 3; still read).
  static let sitedVersion: UInt8 = 2
  /// Layout byte of a frame with sites coded by the model the segment's frames share
  /// (`SiteModel`): a site-run count after the dictionary base, and
  /// `columnCount + siteColumnCount` columns. A frame without sites keeps layout 1.
  static let modelVersion: UInt8 = 3
  /// Identifiers referenced lately in the frame, addressed by one byte.
  static let ringSize = 64
  /// A `refs` byte: below `ringSize` a ring slot; these two otherwise.
  static let refEntry: UInt8 = 64
  static let refDefine: UInt8 = 65

  // Columns, in payload order.
  static let ops = 0
  static let t0 = 1
  static let t1 = 2
  static let t2 = 3
  static let refs = 4
  static let age0 = 5
  static let age1 = 6
  static let age2 = 7
  static let kinds = 8
  static let uuids = 9
  static let deftext = 10
  static let misc = 11
  static let strings = 12
  static let columnCount = 13
  // Layouts 2 and 3: the sites. Layout 2: one byte per sited event, then the entries of
  // sites new to their op. Layout 3: the sites range-coded (`SiteModel`), then where the
  // events that define their site are.
  static let sites = 13
  static let siteEntries = 14
  static let siteDefinitions = 14
  static let siteColumnCount = 2
  /// A `sites` byte: below it, the position of the site in the frame's most-recently-used
  /// list of sites of the event's op code; this one, a site new to that list, whose entry
  /// follows in `siteEntries` (0: defined here, n: entry n − 1).
  static let siteNew: UInt8 = 255

  /// The segment a 2.0 event frame's payload belongs to (the event number its dictionary
  /// frame came before; 0: the log's start), read from its header; nil when the payload
  /// does not start like one.
  package static func segment(ofEventFrame payload: UnsafeRawBufferPointer) -> UInt64? {
    var head = ByteSource(payload)
    let v = try? head.byte()
    guard v == version || v == sitedVersion || v == modelVersion else { return nil }
    return try? head.varint()
  }
}

/// Each op code's sites used lately in a frame, most recent first (the writer's and the
/// reader's copies move alike, so a position names the same site in both).
struct SiteLists: Sendable {
  private var lists: [[Int32]] = []

  /// The position of `e` in op `code`'s list, moving it to the front; nil when absent.
  mutating func find(_ e: Int32, code: UInt8) -> Int? {
    guard !lists.isEmpty, let k = lists[Int(code)].firstIndex(of: e) else { return nil }
    use(at: k, code: code)
    return k
  }

  /// The site at position `k` of op `code`'s list, moved to the front; nil when absent.
  mutating func take(_ k: Int, code: UInt8) -> Int32? {
    guard !lists.isEmpty, k < lists[Int(code)].count else { return nil }
    let e = lists[Int(code)][k]
    use(at: k, code: code)
    return e
  }

  /// Puts `e` at the front of op `code`'s list, dropping its oldest beyond 255.
  mutating func add(_ e: Int32, code: UInt8) {
    if lists.isEmpty { lists = Array(repeating: [], count: Int(EventCodes.codeMask) + 1) }
    lists[Int(code)].insert(e, at: 0)
    if lists[Int(code)].count > Int(FrameLayout.siteNew) { lists[Int(code)].removeLast() }
  }

  /// Forgets every list (a new frame).
  mutating func removeAll() {
    for i in lists.indices { lists[i].removeAll(keepingCapacity: true) }
  }

  private mutating func use(at k: Int, code: UInt8) {
    guard k > 0 else { return }
    let e = lists[Int(code)].remove(at: k)
    lists[Int(code)].insert(e, at: 0)
  }
}

// MARK: - Rows

/// Tokens of a row (pending in the writer, never on disk).
enum RowToken {
  static let tag: UInt8 = 1
  static let time: UInt8 = 2
  static let varint: UInt8 = 3
  static let byte: UInt8 = 4
  static let ref: UInt8 = 5
  static let define: UInt8 = 6
  static let string: UInt8 = 7
  static let siteRef: UInt8 = 8
  static let siteDefine: UInt8 = 9
}

/// Encodes events as rows for a format 2.0 log, numbering each new identifier in `table`.
package struct EventRowEncoder: Sendable {
  /// The dictionary as written so far: ids and their entry numbers.
  package var table: IdTable

  /// An encoder with an empty dictionary (a new log).
  package init() { table = IdTable() }

  /// An encoder continuing with `table` (an existing log's dictionary).
  package init(table: IdTable) { self.table = table }

  /// Appends the row of `event` to `bytes`; refuses what a decoder would refuse
  /// (`CodecLimits`), leaving `bytes` and the dictionary unchanged.
  package mutating func encode(_ event: Event, into bytes: inout [UInt8]) throws(CodecError) {
    let (mark, start) = (table.mark, bytes.count)
    var sink = RowSink(table: IdTable(), out: ByteSink())
    swap(&sink.table, &table)
    swap(&sink.out.bytes, &bytes)
    defer {
      swap(&sink.table, &table)
      swap(&sink.out.bytes, &bytes)
    }
    sink.out.count(sink.table.count)
    do {
      try EventWalk.encode(event, &sink)
    } catch {
      // Refused part way (rare): the ids written so far are walked again, as far as the
      // refusal, and the entries they defined forgotten.
      var written = IdList()
      try? EventWalk.encode(event, &written)
      sink.table.rollBack(to: mark, added: written.ids)
      sink.out.bytes.removeSubrange(start...)
      throw error
    }
  }
}

/// The identifiers and sites of an event, in the order the row sink meets them.
private struct IdList: EventSink {
  var ids: [String] = []
  mutating func tag(_ code: UInt8, timed: Bool) {}
  mutating func time(_ t: Int64, nested: Bool) {}
  mutating func count(_ n: Int) {}
  mutating func flag(_ b: UInt8) {}
  mutating func id(_ s: String) { ids.append(s) }
  mutating func string(_ s: String) {}
  mutating func site(_ s: String) { ids.append(s) }
}

/// The row layout as an `EventSink`: a varint (entries defined before the row), then tokens.
private struct RowSink: EventSink {
  var table: IdTable
  var out: ByteSink

  mutating func tag(_ code: UInt8, timed: Bool) {
    out.byte(RowToken.tag)
    out.byte(timed ? code | 0x80 : code)
  }

  mutating func time(_ t: Int64, nested: Bool) {
    out.byte(nested ? RowToken.varint : RowToken.time)
    out.zigzag(t)
  }

  mutating func count(_ n: Int) {
    out.byte(RowToken.varint)
    out.count(n)
  }

  mutating func flag(_ b: UInt8) {
    out.byte(RowToken.byte)
    out.byte(b)
  }

  mutating func id(_ s: String) { entry(s, ref: RowToken.ref, define: RowToken.define) }

  mutating func string(_ s: String) {
    out.byte(RowToken.string)
    out.string(s)
  }

  /// A site is an entry of the dictionary as an identifier is, outside the ring.
  mutating func site(_ s: String) { entry(s, ref: RowToken.siteRef, define: RowToken.siteDefine) }

  /// `s` as its entry number, or as its text when new (then numbered in the table).
  private mutating func entry(_ s: String, ref: UInt8, define: UInt8) {
    if let e = table.number(of: s) {
      out.byte(ref)
      out.count(e)
    } else {
      out.byte(define)
      out.string(s)
      table.add(s)
    }
  }
}

// MARK: - Assembling a frame

/// Turns a frame's rows into its columnar payload. Keeps its column buffers between frames.
package struct FrameAssembler: Sendable {
  var columns: [[UInt8]] = Array(
    repeating: [], count: FrameLayout.columnCount + FrameLayout.siteColumnCount)
  var definitions = DefinitionWriter()
  var ring: [Int32] = Array(repeating: -1, count: FrameLayout.ringSize)
  var sites = SiteLists()
  /// Layout 3: the model the segment's frames share, the segment it stands in, and the
  /// frame's sited events (op code, entry, place among the frame's definitions or -1),
  /// coded once the frame's definitions are counted.
  var model = SiteModel()
  var modelSegment: UInt64 = 0
  var sited: [(code: UInt8, entry: Int32, definition: Int32)] = []
  /// Whether sites are written in layout 3 (else layout 2, as writers before it did: kept
  /// for tests and for measuring one against the other).
  package var modelSites = true

  package init() {}

  /// Appends to `out` the payload of a frame holding `count` rows, each a LEB128 length and
  /// its bytes, in `rows`; the frame belongs to the segment that started at event
  /// `segment` (0: the log's start). `flushPoints` gets the payload offsets where columns
  /// start, so the compressor can give each column its own Huffman tables.
  package mutating func assemble(
    rows: UnsafeRawBufferPointer, count: Int, segment: UInt64, into out: inout [UInt8],
    flushPoints: inout [Int]
  ) throws(CodecError) {
    for i in columns.indices { columns[i].removeAll(keepingCapacity: true) }
    definitions.removeAll()
    for i in ring.indices { ring[i] = -1 }
    sites.removeAll()
    sited.removeAll(keepingCapacity: true)
    var lastDefiningSite = 0
    // The op code of the event whose parts are being read (its site follows its tag).
    var code: UInt8 = 0
    var ringNext = 0
    var defined = 0
    var lastTime: Int64 = 0
    var rowsSource = ByteSource(rows)
    var dictBase = -1

    func remember(_ e: Int32) {
      ring[ringNext] = e
      ringNext = (ringNext + 1) & (FrameLayout.ringSize - 1)
    }

    for _ in 0..<count {
      let length = try rowsSource.count()
      var row = ByteSource(
        UnsafeRawBufferPointer(rebasing: rows[rowsSource.offset..<rowsSource.offset + length]))
      rowsSource.offset += length
      let before = Int(try row.varint())
      if dictBase < 0 { dictBase = before }
      guard before == dictBase + defined else {
        throw row.fail("row expects \(before) entries, frame has \(dictBase + defined)")
      }
      while !row.isAtEnd {
        let token = try row.byte()
        switch token {
        case RowToken.tag:
          let tag = try row.byte()
          code = tag & EventCodes.codeMask
          columns[FrameLayout.ops].append(tag)
        case RowToken.time:
          let t = try row.zigzag()
          let d = ByteSink.zigzagged(t &- lastTime)
          lastTime = t
          columns[FrameLayout.t0].append(UInt8(truncatingIfNeeded: d))
          if d < 0xFF00 {
            columns[FrameLayout.t1].append(UInt8(truncatingIfNeeded: d >> 8))
          } else {
            columns[FrameLayout.t1].append(0xFF)
            ByteSink.appendVarint(d >> 8, to: &columns[FrameLayout.t2])
          }
        case RowToken.varint:
          ByteSink.appendVarint(try row.varint(), to: &columns[FrameLayout.misc])
        case RowToken.byte:
          columns[FrameLayout.misc].append(try row.byte())
        case RowToken.ref:
          let e = Int32(truncatingIfNeeded: try row.varint())
          let total = dictBase + defined
          guard e >= 0, Int(e) < total else {
            throw row.fail("reference to entry \(e) of \(total)")
          }
          if let slot = ring.firstIndex(of: e) {
            columns[FrameLayout.refs].append(UInt8(slot))
          } else {
            columns[FrameLayout.refs].append(FrameLayout.refEntry)
            let age = UInt64(total - 1 - Int(e))
            columns[FrameLayout.age0].append(UInt8(truncatingIfNeeded: age))
            columns[FrameLayout.age1].append(UInt8(truncatingIfNeeded: age >> 8))
            ByteSink.appendVarint(age >> 16, to: &columns[FrameLayout.age2])
            remember(e)
          }
        case RowToken.define:
          let n = try row.count()
          let text = UnsafeRawBufferPointer(rebasing: row.base[row.offset..<row.offset + n])
          row.offset += n
          columns[FrameLayout.refs].append(FrameLayout.refDefine)
          definitions.write(text)
          remember(Int32(truncatingIfNeeded: dictBase + defined))
          defined += 1
        case RowToken.siteRef:
          let e = Int32(truncatingIfNeeded: try row.varint())
          let total = dictBase + defined
          guard e >= 0, Int(e) < total else {
            throw row.fail("reference to entry \(e) of \(total)")
          }
          if modelSites {
            sited.append((code, e, -1))
          } else if let k = sites.find(e, code: code) {
            columns[FrameLayout.sites].append(UInt8(k))
          } else {
            columns[FrameLayout.sites].append(FrameLayout.siteNew)
            ByteSink.appendVarint(UInt64(e) + 1, to: &columns[FrameLayout.siteEntries])
            sites.add(e, code: code)
          }
        case RowToken.siteDefine:
          let n = try row.count()
          let text = UnsafeRawBufferPointer(rebasing: row.base[row.offset..<row.offset + n])
          row.offset += n
          let e = Int32(truncatingIfNeeded: dictBase + defined)
          if modelSites {
            // Where the events defining their site are: the sited event's place after the
            // previous one's, and the definition's place in the frame.
            let ordinal = sited.count
            ByteSink.appendVarint(
              UInt64(ordinal - lastDefiningSite), to: &columns[FrameLayout.siteDefinitions])
            ByteSink.appendVarint(UInt64(defined), to: &columns[FrameLayout.siteDefinitions])
            lastDefiningSite = ordinal
            sited.append((code, e, Int32(defined)))
          } else {
            columns[FrameLayout.sites].append(FrameLayout.siteNew)
            columns[FrameLayout.siteEntries].append(0)
            sites.add(e, code: code)
          }
          definitions.write(text)
          defined += 1
        case RowToken.string:
          let n = try row.count()
          ByteSink.appendVarint(UInt64(n), to: &columns[FrameLayout.strings])
          columns[FrameLayout.strings].append(
            contentsOf: UnsafeRawBufferPointer(rebasing: row.base[row.offset..<row.offset + n]))
          row.offset += n
        default:
          throw row.fail("unknown row token \(token)")
        }
      }
    }
    guard rowsSource.isAtEnd else { throw rowsSource.fail("bytes after the last row") }
    swap(&columns[FrameLayout.kinds], &definitions.kinds)
    swap(&columns[FrameLayout.uuids], &definitions.uuids)
    swap(&columns[FrameLayout.deftext], &definitions.text)
    defer {
      swap(&columns[FrameLayout.kinds], &definitions.kinds)
      swap(&columns[FrameLayout.uuids], &definitions.uuids)
      swap(&columns[FrameLayout.deftext], &definitions.text)
    }
    // Layout 1 unless an event has a site: a log without sites is what it always was.
    var siteRun: Int?
    if !sited.isEmpty {
      if segment != modelSegment || model.isFull {
        model.removeAll()
        modelSegment = segment
      }
      siteRun = model.coded
      let frame = SiteFrame(entries: max(dictBase, 0) + defined)
      var coder = RangeEncoder()
      swap(&coder.bytes, &columns[FrameLayout.sites])
      for s in sited {
        if s.definition >= 0 {
          model.define(s.entry, code: s.code)
        } else {
          model.encode(s.entry, code: s.code, frame: frame, into: &coder)
        }
      }
      coder.finish()
      swap(&coder.bytes, &columns[FrameLayout.sites])
    }
    let withSites = !columns[FrameLayout.sites].isEmpty
    let written = withSites ? columns.count : FrameLayout.columnCount
    out.append(
      siteRun != nil
        ? FrameLayout.modelVersion : withSites ? FrameLayout.sitedVersion : FrameLayout.version)
    ByteSink.appendVarint(segment, to: &out)
    ByteSink.appendVarint(UInt64(max(dictBase, 0)), to: &out)
    if let siteRun { ByteSink.appendVarint(UInt64(siteRun), to: &out) }
    for c in columns[..<written] { ByteSink.appendVarint(UInt64(c.count), to: &out) }
    for c in columns[..<written] {
      flushPoints.append(out.count)
      out.append(contentsOf: c)
    }
  }
}

// MARK: - Definitions

/// How new identifiers are written inside a frame or a dictionary restart: a kind byte
/// each; a UUID's 16 bytes in their own column; other text front-coded against the previous
/// text definition (bytes shared with it, then the rest).
struct DefinitionWriter {
  var kinds: [UInt8] = []
  var uuids: [UInt8] = []
  var text: [UInt8] = []
  var previousText: [UInt8] = []

  mutating func removeAll() {
    kinds.removeAll(keepingCapacity: true)
    uuids.removeAll(keepingCapacity: true)
    text.removeAll(keepingCapacity: true)
    previousText.removeAll(keepingCapacity: true)
  }

  mutating func write(_ id: UnsafeRawBufferPointer) {
    let units = id.assumingMemoryBound(to: UInt8.self)
    let (kind, hi, lo) = IdText.classify(units)
    kinds.append(kind)
    if kind != IdText.text {
      withUnsafeBytes(of: hi.bigEndian) { uuids.append(contentsOf: $0) }
      withUnsafeBytes(of: lo.bigEndian) { uuids.append(contentsOf: $0) }
      return
    }
    var shared = 0
    let limit = min(previousText.count, units.count)
    while shared < limit && previousText[shared] == units[shared] { shared += 1 }
    ByteSink.appendVarint(UInt64(shared), to: &text)
    ByteSink.appendVarint(UInt64(units.count - shared), to: &text)
    text.append(contentsOf: UnsafeRawBufferPointer(rebasing: id[shared...]))
    previousText.removeAll(keepingCapacity: true)
    previousText.append(contentsOf: units)
  }
}

/// Reads what `DefinitionWriter` wrote, validating every definition.
struct DefinitionReader {
  var kinds: ByteSource
  var uuids: ByteSource
  var text: ByteSource
  var previousText: [UInt8] = []

  init(kinds: ByteSource, uuids: ByteSource, text: ByteSource) {
    self.kinds = kinds
    self.uuids = uuids
    self.text = text
  }

  /// Definitions not yet read (one kind byte each).
  var remaining: Int { kinds.remaining }

  /// The first definition column not read to its end. Column by column, not a loop over an
  /// array of them: Embedded Swift compiled that loop differently from build to build (the
  /// viewer's module must build byte for byte the same).
  var leftover: CodecError? {
    if !kinds.isAtEnd { return kinds.fail("\(kinds.remaining) bytes left after the definitions") }
    if !uuids.isAtEnd { return uuids.fail("\(uuids.remaining) bytes left after the definitions") }
    if !text.isAtEnd { return text.fail("\(text.remaining) bytes left after the definitions") }
    return nil
  }

  /// Reads the next definition and appends its stored form (`IdText.store`) to `out`;
  /// a text that spells a canonical UUID is stored as one, so every id has one form.
  mutating func read(into out: inout IdSpace, indexing: Bool = true) throws(CodecError) {
    let kind = try kinds.byte()
    switch kind {
    case IdText.text:
      let shared = try text.varint()
      let rest = try text.varint()
      guard shared <= UInt64(previousText.count) else {
        throw text.fail("definition shares \(shared) bytes of \(previousText.count)")
      }
      guard rest <= UInt64(text.remaining) else {
        throw text.fail("definition of \(rest) bytes exceeds the \(text.remaining) left")
      }
      let total = Int(shared) + Int(rest)
      guard total > 0 else { throw text.fail("empty identifier") }
      guard total <= CodecLimits.maxStringBytes else { throw text.fail("identifier too long") }
      previousText.removeSubrange(Int(shared)...)
      previousText.append(
        contentsOf: UnsafeRawBufferPointer(
          rebasing: text.base[text.offset..<text.offset + Int(rest)]))
      text.offset += Int(rest)
      let valid = previousText.withUnsafeBufferPointer { UTF8Validation.isValid($0) }
      guard valid else { throw text.fail("invalid UTF-8 in identifier") }
      previousText.withUnsafeBufferPointer { utf8 in
        IdText.withStored(utf8) {
          if indexing { out.append(stored: $0) } else { out.appendUnindexed(stored: $0) }
        }
      }
    case IdText.uuidUpper, IdText.uuidLower:
      guard uuids.remaining >= 16 else { throw uuids.fail("truncated UUID definition") }
      withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 17) { form in
        form[0] = kind
        for i in 0..<16 { form[1 &+ i] = uuids.base[uuids.offset &+ i] }
        let stored = UnsafeRawBufferPointer(form)
        if indexing { out.append(stored: stored) } else { out.appendUnindexed(stored: stored) }
      }
      uuids.offset += 16
    default:
      throw kinds.fail("unknown identifier kind \(kind)")
    }
  }
}

/// A dictionary restart (format 2.0 DICT frame): every entry of the new dictionary.
package enum DictionaryPayload {
  static let version: UInt8 = 1

  /// The payload listing `ids` as the entries of a new dictionary, and its flush points.
  package static func encode(_ ids: [String]) -> (bytes: [UInt8], flushPoints: [Int]) {
    var w = DefinitionWriter()
    for id in ids {
      var id = id
      id.withUTF8 { w.write(UnsafeRawBufferPointer($0)) }
    }
    var out: [UInt8] = [version]
    ByteSink.appendVarint(UInt64(ids.count), to: &out)
    let columns = [w.kinds, w.uuids, w.text]
    for c in columns { ByteSink.appendVarint(UInt64(c.count), to: &out) }
    var points: [Int] = []
    for c in columns {
      points.append(out.count)
      out.append(contentsOf: c)
    }
    return (out, points)
  }

  /// The entries of a restart payload, in order.
  static func decode(_ p: UnsafeRawBufferPointer, into dictionary: inout IdSpace)
    throws(CodecError)
  {
    var head = ByteSource(p)
    let v = try head.byte()
    guard v == version else { throw head.fail("unknown dictionary layout \(v)") }
    let n = try head.count()
    let columns = try ColumnSplit.split(&head, count: 3)
    guard head.isAtEnd else { throw head.fail("bytes after the dictionary") }
    var r = DefinitionReader(kinds: columns[0], uuids: columns[1], text: columns[2])
    guard n == r.remaining else { throw head.fail("\(n) entries in \(r.remaining) kinds") }
    dictionary.removeAll()
    for _ in 0..<n { try r.read(into: &dictionary) }
    if let problem = r.leftover { throw problem }
  }
}

/// Splits a payload into columns after its header: `count` lengths, then the columns.
enum ColumnSplit {
  /// The `count` columns whose lengths `head` starts with, cut from the bytes after them;
  /// with `through`, only columns up to that one are there (the payload's prefix), and
  /// those after it are empty.
  static func split(_ head: inout ByteSource, count: Int, through: Int? = nil)
    throws(CodecError) -> [ByteSource]
  {
    var lengths: [Int] = []
    for _ in 0..<count {
      if through == nil {
        lengths.append(try head.count())
      } else {
        let n = try head.varint()
        guard n <= UInt64(Int32.max) else { throw head.fail("column of \(n) bytes") }
        lengths.append(Int(n))
      }
    }
    var out: [ByteSource] = []
    out.reserveCapacity(count)
    for (i, n) in lengths.enumerated() {
      if let through, i > through {
        out.append(ByteSource(UnsafeRawBufferPointer(start: nil, count: 0)))
        continue
      }
      guard n <= head.remaining else { throw head.fail("column of \(n) bytes exceeds the payload") }
      out.append(
        ByteSource(
          UnsafeRawBufferPointer(rebasing: head.base[head.offset..<head.offset + n]),
          origin: head.origin + head.offset))
      head.offset += n
    }
    return out
  }
}

// MARK: - Decoding a frame

/// The columns of one 2.0 event frame as an `EventSource`.
struct FrameSource: EventSource {
  var ops: ByteSource
  var t0: ByteSource
  var t1: ByteSource
  var t2: ByteSource
  var refs: ByteSource
  var age0: ByteSource
  var age1: ByteSource
  var age2: ByteSource
  var definitions: DefinitionReader
  var misc: ByteSource
  var strings: ByteSource
  /// The frame's layout, its sites columns (empty in layout 1; layout 3's second is
  /// `siteEntries`) and, in layout 2, each op's recent sites.
  var layout: UInt8 = FrameLayout.version
  var sites: ByteSource
  var siteEntries: ByteSource
  var siteLists = SiteLists()
  /// Layout 3: the segment's site model and whether it stands where the writer's did at
  /// this point (else the frame's sites are lost: their events keep their operations).
  var sync = SiteSync()
  var siteCoder: RangeDecoder?
  var siteFrame = SiteFrame(entries: 0)
  var siteBase = 0
  /// Sited events read so far, and the next one that defines its site (its place among
  /// them, and its definition's place in the frame; `Int.max` when none is left).
  var sitedRead = 0
  var nextDefining = Int.max
  var nextDefinition = 0
  /// The segment's dictionary as far as it is known: it may run ahead of this frame (loaded
  /// whole from an index file, or read past a stop), since an entry always names the same id.
  var dictionary = IdSpace()
  /// Entries defined before the event being read: the count references by age count back
  /// from, and the entry the next definition becomes.
  var defined = 0
  /// Where a definition that `dictionary` already holds is read, to be dropped.
  var reread = IdSpace()
  /// Duplicate definitions and the earlier entry each repeats (`EventDecoder.aliases`).
  var aliases = DefinitionAliases()
  var ring: [Int32] = []
  var ringNext = 0
  var lastTime: Int64 = 0
  /// Set when an identifier read since the flag was cleared is a hole in the dictionary.
  var touchedHole = false
  /// Whether new definitions are appended unchecked, to be entered in the dictionary's
  /// string table (and checked for repeats) together after the frame's events.
  var batched = false

  init(_ columns: [ByteSource]) {
    ops = columns[FrameLayout.ops]
    t0 = columns[FrameLayout.t0]
    t1 = columns[FrameLayout.t1]
    t2 = columns[FrameLayout.t2]
    refs = columns[FrameLayout.refs]
    age0 = columns[FrameLayout.age0]
    age1 = columns[FrameLayout.age1]
    age2 = columns[FrameLayout.age2]
    definitions = DefinitionReader(
      kinds: columns[FrameLayout.kinds], uuids: columns[FrameLayout.uuids],
      text: columns[FrameLayout.deftext])
    misc = columns[FrameLayout.misc]
    strings = columns[FrameLayout.strings]
    let none = ByteSource(UnsafeRawBufferPointer(start: nil, count: 0))
    sites = columns.count > FrameLayout.sites ? columns[FrameLayout.sites] : none
    siteEntries = columns.count > FrameLayout.siteEntries ? columns[FrameLayout.siteEntries] : none
    ring.reserveCapacity(FrameLayout.ringSize)
  }

  /// Starts reading the sites of the frame `head` describes when it is layout 3 (its
  /// entries defined before it, the model as `sync` holds it, the header's site run);
  /// whether it is.
  mutating func beginSites(_ head: FrameHeaderFields) throws(CodecError) -> Bool {
    guard head.layout == FrameLayout.modelVersion else { return false }
    layout = FrameLayout.modelVersion
    siteBase = head.dictBase
    siteFrame = SiteFrame(entries: head.dictBase &+ definitions.remaining)
    sync.begin(segment: head.segment, siteRun: head.siteRun)
    try readNextDefining(after: 0)
    return true
  }

  /// Reads where the next sited event that defines its site is, counted from `ordinal`.
  private mutating func readNextDefining(after ordinal: Int) throws(CodecError) {
    guard !siteEntries.isAtEnd else {
      nextDefining = Int.max
      return
    }
    let gap = try siteEntries.varint()
    let k = try siteEntries.varint()
    guard gap < UInt64(Int32.max), k < UInt64(siteFrame.entries &- siteBase) else {
      throw siteEntries.fail("site definition \(k) at \(gap) sited events after \(ordinal)")
    }
    nextDefining = ordinal &+ Int(gap)
    nextDefinition = Int(k)
  }

  /// Layout 3: the site of the next sited event: its entry (defining it when new), nil
  /// when the model does not stand where the writer's did (a salvaged or partly read log).
  mutating func modelSite(code: UInt8) throws(CodecError) -> Int32? {
    let ordinal = sitedRead
    sitedRead &+= 1
    if ordinal == nextDefining {
      let k = nextDefinition
      guard k == defined &- siteBase else {
        throw siteEntries.fail(
          "site defined as definition \(k) of the frame, read at \(defined - siteBase)")
      }
      try readNextDefining(after: ordinal)
      let raw = Int32(truncatingIfNeeded: defined)
      let e = try definition()
      if sync.live { sync.model.define(raw, code: code) }
      return e
    }
    guard ordinal < nextDefining else {
      throw siteEntries.fail("site definition for sited event \(nextDefining), already read")
    }
    guard sync.live else { return nil }
    var coder = try siteCoderOrNone()
    defer { siteCoder = coder }
    let raw = try sync.model.decode(code: code, frame: siteFrame, from: &coder)
    guard Int(raw) < defined else { throw sites.fail("site entry \(raw) of \(defined)") }
    return aliases.canonical(raw)
  }

  /// The frame's site decoder (started on first use).
  private mutating func siteCoderOrNone() throws(CodecError) -> RangeDecoder {
    if let siteCoder { return siteCoder }
    let c = try RangeDecoder(sites)
    siteCoder = c
    return c
  }

  /// Layout 3: moves the model past the sites of the events not read (from the next tag in
  /// `ops` to the frame's end), so that it stands where the writer's did after the frame.
  mutating func skipSites() throws(CodecError) {
    guard layout == FrameLayout.modelVersion, sync.live else { return }
    var coder = try siteCoderOrNone()
    defer { siteCoder = coder }
    while !ops.isAtEnd {
      let tag = try ops.byte()
      guard tag & EventCodes.sited != 0 else { continue }
      let ordinal = sitedRead
      sitedRead &+= 1
      guard ordinal <= nextDefining else {
        throw siteEntries.fail("site definition for sited event \(nextDefining), already read")
      }
      if ordinal == nextDefining {
        sync.model.define(
          Int32(truncatingIfNeeded: siteBase &+ nextDefinition), code: tag & EventCodes.codeMask)
        try readNextDefining(after: ordinal)
      } else {
        _ = try sync.model.decode(
          code: tag & EventCodes.codeMask, frame: siteFrame, from: &coder)
      }
    }
  }

  /// The entry of the site of an event of op `code`: a position in the op's recent sites,
  /// or an entry (defined here when new), possibly one whose definition was lost
  /// (`OpWalk` then keeps the event without its site).
  mutating func site(code: UInt8) throws(CodecError) -> Int32? {
    if layout == FrameLayout.modelVersion { return try modelSite(code: code) }
    let k = try sites.byte()
    if k != FrameLayout.siteNew {
      guard let e = siteLists.take(Int(k), code: code) else {
        throw sites.fail("reference to recent site \(k) of op \(code), not yet used")
      }
      return e
    }
    let v = try siteEntries.varint()
    let e: Int32
    if v == 0 {
      e = try definition()
    } else {
      guard v <= UInt64(defined) else {
        throw siteEntries.fail("site entry \(v - 1) of \(defined)")
      }
      e = aliases.canonical(Int32(truncatingIfNeeded: v &- 1))
    }
    siteLists.add(e, code: code)
    return e
  }

  mutating func tag() throws(CodecError) -> UInt8 { try ops.byte() }

  mutating func time(nested: Bool) throws(CodecError) -> Int64 {
    if nested { return try misc.zigzag() }
    var d = UInt64(try t0.byte())
    let b = try t1.byte()
    if b < 0xFF {
      d |= UInt64(b) << 8
    } else {
      let high = try t2.varint()
      guard high < 1 << 56 else { throw t2.fail("time delta overflows 64 bits") }
      d |= high << 8
    }
    let t = lastTime &+ Int64(bitPattern: (d >> 1) ^ (0 &- (d & 1)))
    lastTime = t
    return t
  }

  mutating func count(_ kind: CountKind) throws(CodecError) -> Int {
    let v = try misc.varint()
    let bound: Int
    switch kind {
    case .ids: bound = refs.remaining
    case .nodes: bound = min(misc.remaining, refs.remaining)
    case .fields: bound = strings.remaining / 2
    case .events: bound = ops.remaining
    }
    guard v <= UInt64(min(bound, CodecLimits.maxCount)) else {
      throw misc.fail("count \(v) exceeds what the frame holds")
    }
    return Int(v)
  }

  mutating func flag() throws(CodecError) -> UInt8 { try misc.byte() }

  @inline(__always)
  mutating func id() throws(CodecError) -> String {
    let e = Int(try entryRef())
    if dictionary.extent(e).isEmpty {
      touchedHole = true
      return "?"
    }
    return dictionary.text(e)
  }

  /// The entry of the next identifier reference (defining it when it is new), the earlier
  /// entry when it repeats one; flags a hole (`touchedHole`).
  @inline(__always)
  mutating func entryRef() throws(CodecError) -> Int32 {
    let r = try refs.byte()
    if r < FrameLayout.refEntry {
      guard Int(r) < ring.count else {
        throw refs.fail("reference to ring slot \(r) of \(ring.count)")
      }
      let e = ring[Int(r)]
      if dictionary.isHole(Int(e)) { touchedHole = true }
      return e
    }
    var e: Int32
    if r == FrameLayout.refEntry {
      let high = try age2.varint()
      guard high < 1 << 40 else { throw age2.fail("entry age overflows") }
      let age = Int(try age0.byte()) | Int(try age1.byte()) << 8 | Int(high) << 16
      guard age < defined else {
        throw age0.fail("reference to entry \(age) back of \(defined)")
      }
      e = Int32(truncatingIfNeeded: defined &- 1 &- age)
      if dictionary.isHole(Int(e)) { touchedHole = true }
      e = aliases.canonical(e)
    } else if r == FrameLayout.refDefine {
      e = try definition()
    } else {
      throw refs.fail("bad identifier reference \(r)")
    }
    if ring.count < FrameLayout.ringSize {
      ring.append(e)
    } else {
      ring[ringNext] = e
    }
    ringNext = (ringNext &+ 1) & (FrameLayout.ringSize &- 1)
    return e
  }

  /// Reads the next definition into the dictionary (or checks it against the entry the
  /// dictionary already holds there); returns the entry it names (an earlier one when it
  /// repeats an id).
  mutating func definition() throws(CodecError) -> Int32 {
    let e = defined
    defined &+= 1
    if e < dictionary.count {
      reread.removeAll(lineage: 0)
      try definitions.read(into: &reread)
      // A dictionary loaded whole (an index file's) must agree with the log it stands for.
      guard reread.same(0, as: e, in: dictionary) else {
        throw definitions.kinds.fail("definition of entry \(e) differs from the dictionary loaded")
      }
      return aliases.canonical(Int32(truncatingIfNeeded: e))
    }
    if batched {
      try definitions.read(into: &dictionary, indexing: false)
      return Int32(truncatingIfNeeded: e)
    }
    try definitions.read(into: &dictionary)
    return aliases.check(last: &dictionary)
  }

  /// Reads every definition left (a frame whose events are skipped): those new to the
  /// dictionary are appended, then entered in its string table and checked for repeats in
  /// one batch, whose lookups overlap.
  mutating func remainingDefinitions() throws(CodecError) {
    while definitions.remaining > 0, defined < dictionary.count { _ = try definition() }
    let first = dictionary.count
    // Entered even when a definition fails: the table never misses an entry.
    defer { dictionary.indexAppended(from: first) { e, same in aliases.note(e, same) } }
    while definitions.remaining > 0 {
      defined &+= 1
      try definitions.read(into: &dictionary, indexing: false)
    }
  }

  mutating func string() throws(CodecError) -> String {
    let n = try strings.count()
    guard n <= CodecLimits.maxStringBytes else { throw strings.fail("string too long") }
    return try strings.text(n)
  }

  func fail(_ message: String) -> CodecError { ops.fail(message) }

  /// Whether every column was read to its end (layout 3's coded sites only when the model
  /// could read them).
  var leftover: CodecError? {
    for c in [ops, t0, t1, t2, refs, age0, age1, age2, misc, strings, siteEntries]
    where !c.isAtEnd {
      return c.fail("\(c.remaining) bytes left in a column after the frame's events")
    }
    if layout == FrameLayout.modelVersion {
      if nextDefining != Int.max {
        return siteEntries.fail("site definition for sited event \(nextDefining) of \(sitedRead)")
      }
      if sync.live, sitedRead > 0 {
        let coder = siteCoder ?? (try? RangeDecoder(sites))
        guard let coder, coder.isAtEnd else {
          return sites.fail("bytes left in the coded sites after the frame's events")
        }
      }
    } else if !sites.isAtEnd {
      return sites.fail("\(sites.remaining) bytes left in a column after the frame's events")
    }
    return definitions.leftover
  }
}

/// A 2.0 event frame's header: its segment, the entries defined before it, its columns.
struct FrameHeaderFields {
  var layout: UInt8
  var segment: UInt64
  var dictBase: Int
  /// Layout 3: sites the writer's model had coded before the frame (0: it started over).
  var siteRun: Int
  var columns: [ByteSource]

  /// The header of a frame whose payload is `payload`; with `prefix`, `payload` may be
  /// only its first `definitionsEnd(_:)` bytes: the columns after the definitions are then
  /// empty.
  init(_ payload: UnsafeRawBufferPointer, prefix: Bool = false) throws(CodecError) {
    var head = ByteSource(payload)
    let count: Int
    (layout, segment, dictBase, siteRun, count) = try Self.start(&head)
    // Layout 3's sites are read with the definitions (`definitionsEnd` asks for them).
    let through = prefix && layout != FrameLayout.modelVersion ? FrameLayout.deftext : nil
    columns = try ColumnSplit.split(&head, count: count, through: through)
    guard prefix || head.isAtEnd else {
      throw head.fail("\(head.remaining) bytes after the columns")
    }
  }

  /// The header's layout, segment and dictionary base, read from `head`; and how many
  /// column lengths follow.
  static func start(_ head: inout ByteSource) throws(CodecError) -> (
    layout: UInt8, segment: UInt64, dictBase: Int, siteRun: Int, columns: Int
  ) {
    let v = try head.byte()
    guard
      v == FrameLayout.version || v == FrameLayout.sitedVersion
        || v == FrameLayout.modelVersion
    else {
      throw head.fail("unknown event frame layout \(v)")
    }
    let segment = try head.varint()
    let base = try head.varint()
    guard base <= UInt64(Int32.max) else { throw head.fail("dictionary base \(base) out of range") }
    var run = 0
    if v == FrameLayout.modelVersion {
      let r = try head.varint()
      guard r <= UInt64(Int.max >> 1) else { throw head.fail("site run \(r) out of range") }
      run = Int(r)
    }
    let count =
      FrameLayout.columnCount + (v == FrameLayout.version ? 0 : FrameLayout.siteColumnCount)
    return (v, segment, Int(base), run, count)
  }

  /// How many bytes at the start of an event frame's payload hold its header and every
  /// column through its definitions (what a reader of definitions alone must inflate), read
  /// from the payload's first bytes `head`; nil when `head` does not hold the whole header.
  static func definitionsEnd(_ head: UnsafeRawBufferPointer) -> Int? {
    var h = ByteSource(head)
    guard let (layout, _, _, _, count) = try? start(&h) else { return nil }
    var through = 0
    for i in 0..<count {
      guard let n = try? h.varint(), n <= UInt64(Int32.max) else { return nil }
      // Layout 3: every column, since the site model reads its sites (from `ops` to the end).
      if i <= FrameLayout.deftext || layout == FrameLayout.modelVersion { through &+= Int(n) }
    }
    return h.offset &+ through
  }
}
