#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The rows of one row group being filled, column by column, and their encoding: column
/// chunks of GZIP-compressed data pages (v1), dictionary-encoded where the chunk's
/// dictionary stays small, in memory, for a `ParquetWriter` to append to its file. Each
/// thread that makes rows has its own; only the file's append is shared.
package final class ParquetRows {
  package let columns: [ParquetColumn]
  private let options: ParquetOptions
  /// One buffer per column, behind a pointer: the per-value appends then need no
  /// exclusivity check of a class property.
  private let buffers: UnsafeMutablePointer<ColumnBuffer>
  private let compressor: GzipCompressor
  /// The file named in errors.
  private let path: String
  /// Rows in the row group being filled.
  package var count: Int { rowCount.pointee }
  /// The row count and the rows' value bytes (as plain-encoded), behind pointers: a row
  /// updates them without the exclusivity check of a class property.
  private let rowCount = UnsafeMutablePointer<Int>.allocate(capacity: 1)
  private let groupBytes = UnsafeMutablePointer<Int>.allocate(capacity: 1)
  /// The list columns, which `endRow` closes.
  private let listColumns: [Int]
  /// How each column's dictionary pages (2 c) and data pages (2 c + 1) are compressed.
  private var ways: [CompressionWay]

  init(columns: [ParquetColumn], options: ParquetOptions, path: String) throws(ParquetError) {
    self.columns = columns
    self.options = options
    compressor = GzipCompressor()
    self.path = path
    listColumns = columns.indices.filter { columns[$0].repetition == .list }
    ways = Array(repeating: CompressionWay(), count: 2 * columns.count)
    buffers = .allocate(capacity: columns.count)
    buffers.initialize(from: columns.map(ColumnBuffer.init), count: columns.count)
    groupBytes.initialize(to: 0)
    rowCount.initialize(to: 0)
  }

  deinit {
    for c in 0..<columns.count { buffers[c].deallocate() }
    buffers.deinitialize(count: columns.count)
    buffers.deallocate()
    groupBytes.deallocate()
    rowCount.deallocate()
  }

  /// Whether the row group is as large as the options allow: time to encode it.
  package var isFull: Bool {
    count >= options.rowGroupRows || groupBytes.pointee >= options.rowGroupBytes
  }

  // MARK: Values

  /// Column `c`'s value in this row: an INT64 or timestamp.
  package func append(_ c: Int, int64 value: Int64) {
    buffers[c].int64s.append(value)
    defined(c)
    groupBytes.pointee += 8
  }

  /// Column `c`'s value in this row: an INT32.
  package func append(_ c: Int, int32 value: Int32) {
    buffers[c].int64s.append(Int64(value))
    defined(c)
    groupBytes.pointee += 4
  }

  /// Column `c`'s value in this row: a boolean.
  package func append(_ c: Int, bool value: Bool) {
    buffers[c].bools.append(value)
    defined(c)
    groupBytes.pointee += 1
  }

  /// Column `c`'s value in this row (or, for a list column, its next element): a string.
  package func append(_ c: Int, string value: String) {
    var s = value
    s.withUTF8 { append(c, utf8: UnsafeRawBufferPointer($0)) }
  }

  /// Column `c`'s value in this row (or, for a list column, its next element): UTF-8 bytes.
  package func append(_ c: Int, utf8 bytes: UnsafeRawBufferPointer) {
    appendEntry(c, buffers[c].strings.index(of: bytes), bytes: bytes.count)
  }

  /// Column `c`'s value (or next element): the string the caller numbers `key` (from 0,
  /// below 2³¹), whose bytes it gives later, once per key and in key order, through
  /// `resolveKeys(_:)`: an append is a store and a bit, and the strings are read in the
  /// order they are kept (a log's dictionary) instead of the order rows meet them.
  package func append(_ c: Int, key: Int) {
    buffers[c].mark(key: key)
    appendEntry(c, UInt32(truncatingIfNeeded: key) | ColumnBuffer.unresolved, bytes: 0)
  }

  // MARK: Columns of many rows at once

  /// Column `c`'s values for the next `values.count` rows, a column at a time: INT64,
  /// timestamp or INT32 values (an INT32 column's must fit), null where `present` says so
  /// (an optional column). A caller that fills some columns this way fills every other
  /// column of those rows row by row (`endRow` counts the rows), and all of them before
  /// `isFull`'s row group is encoded.
  package func append(
    _ c: Int, int64s values: UnsafeBufferPointer<Int64>,
    present: UnsafeBufferPointer<Bool>? = nil
  ) {
    let width = columns[c].type == .int32 ? 4 : 8
    guard let present else {
      precondition(columns[c].repetition == .required, "\(columns[c].name) is not required")
      buffers[c].int64s.append(contentsOf: values)
      groupBytes.pointee += width * values.count
      return
    }
    precondition(columns[c].repetition == .optional, "\(columns[c].name) is not optional")
    precondition(present.count == values.count, "a presence per value")
    for (v, here) in zip(values, present) {
      buffers[c].defs.append(here ? 1 : 0)
      if here {
        buffers[c].int64s.append(v)
        groupBytes.pointee += width
      }
    }
  }

  /// Column `c`'s values for the next `values.count` rows, a column at a time (as
  /// `append(_:int64s:present:)`): booleans of a required column.
  package func append(_ c: Int, bools values: UnsafeBufferPointer<Bool>) {
    precondition(columns[c].repetition == .required, "\(columns[c].name) is not required")
    buffers[c].bools.append(contentsOf: values)
    groupBytes.pointee += values.count
  }

  /// Column `c`'s values for the next `keys.count` rows, a column at a time (as
  /// `append(_:int64s:present:)`): strings by the caller's keys (as `append(_:key:)`), and
  /// in an optional column null where a key is negative.
  package func append(_ c: Int, keys: UnsafeBufferPointer<Int32>) {
    let optional = columns[c].repetition == .optional
    precondition(optional || columns[c].repetition == .required, "\(columns[c].name) is a list")
    var values = 0
    for key in keys {
      // A required column's negative key traps in `mark(key:)`.
      if optional {
        buffers[c].defs.append(key >= 0 ? 1 : 0)
        if key < 0 { continue }
      }
      buffers[c].mark(key: Int(key))
      buffers[c].indices.append(UInt32(truncatingIfNeeded: key) | ColumnBuffer.unresolved)
      values &+= 1
    }
    groupBytes.pointee += 4 * values
  }

  /// Whether some column holds keys `resolveKeys(_:)` has not given the bytes of yet.
  package var hasUnresolvedKeys: Bool {
    (0..<columns.count).contains { buffers[$0].hasUnresolvedKeys }
  }

  /// Gives the bytes of every key appended since the last call: `text(column, key, &bytes)`
  /// appends key's string to `bytes`, for each column and key once, keys ascending. The
  /// caller calls it before its numbering changes and before the rows are encoded (a key
  /// met again afterwards is a new string, as after a dictionary restart: a string held
  /// under two keys takes two dictionary entries, which readers decode as any other).
  package func resolveKeys(_ text: (_ column: Int, _ key: Int, _ bytes: inout [UInt8]) -> Void) {
    for c in 0..<columns.count where buffers[c].hasUnresolvedKeys {
      groupBytes.pointee += buffers[c].resolve { key, bytes in text(c, key, &bytes) }
    }
  }

  @inline(__always) private func appendEntry(_ c: Int, _ i: UInt32, bytes: Int) {
    buffers[c].indices.append(i)
    groupBytes.pointee += 4 + bytes
    if buffers[c].column.repetition == .list {
      buffers[c].reps.append(buffers[c].rowHasElement ? 1 : 0)
      buffers[c].defs.append(1)
      buffers[c].rowHasElement = true
    } else {
      defined(c)
    }
  }

  /// Column `c` is null in this row (an optional column).
  package func appendNull(_ c: Int) {
    precondition(buffers[c].column.repetition == .optional, "\(columns[c].name) is not optional")
    buffers[c].defs.append(0)
  }

  @inline(__always) private func defined(_ c: Int) {
    if buffers[c].column.repetition == .optional { buffers[c].defs.append(1) }
  }

  /// Ends the row: a list column without elements holds an empty list.
  package func endRow() {
    for c in listColumns {
      if !buffers[c].rowHasElement {
        buffers[c].reps.append(0)
        buffers[c].defs.append(0)
      }
      buffers[c].rowHasElement = false
    }
    rowCount.pointee &+= 1
  }

  // MARK: Row groups

  /// The buffered rows as a row group (offsets from its first byte), and empty buffers for
  /// the next one.
  package func encode() throws(ParquetError) -> EncodedRowGroup {
    var out: [UInt8] = []
    var chunks: [ChunkMeta] = []
    let groupRows = count
    for c in 0..<columns.count {
      // A row without a value in some column, or a key without its string, would shift or
      // lose values: the caller's bug, not bad input.
      precondition(
        !buffers[c].hasUnresolvedKeys, "column \(columns[c].name) has keys without their strings")
      precondition(
        columns[c].repetition == .list || buffers[c].entries == groupRows,
        "column \(columns[c].name) has \(buffers[c].entries) values for \(groupRows) rows")
      chunks.append(try writeChunk(&buffers[c], c, rows: groupRows, into: &out))
      buffers[c].removeAll()
    }
    rowCount.pointee = 0
    groupBytes.pointee = 0
    return EncodedRowGroup(bytes: out, chunks: chunks, rows: Int64(groupRows))
  }

  /// Writes one column chunk: a dictionary page when the dictionary is small enough, then
  /// data pages of whole rows.
  private func writeChunk(
    _ b: inout ColumnBuffer, _ c: Int, rows: Int, into out: inout [UInt8]
  )
    throws(ParquetError) -> ChunkMeta
  {
    let column = b.column
    var meta = ChunkMeta(column: column, start: Int64(out.count))
    meta.values = Int64(b.entries)
    let dictionary = column.type.usesDictionary && b.dictionaryBytes <= options.dictionaryBytes
    if dictionary {
      var page: [UInt8] = []
      b.strings.appendPlain(to: &page)
      meta.dictionaryOffset = Int64(out.count)
      let count = b.strings.count
      try writePage(page, .dictionaryPage, 2 * c, meta: &meta, into: &out) { h in
        h.beginStruct(7)  // dictionary_page_header
        h.field(1, i32: Int32(count))
        h.field(2, i32: ParquetEnum.Encoding.plain.rawValue)
        h.endStruct()
      }
    }
    meta.dictionary = dictionary
    statistics(b, into: &meta)

    let maxDef = column.maxDefinition
    let isList = column.repetition == .list
    let entries = b.entries
    var entry = 0
    var value = 0
    let width =
      dictionary
      ? RLEHybrid.bitWidth(max(0, b.strings.count - 1))
      : 0
    // What a value costs the page's bound: an index (4 bytes, at most), or its plain size,
    // read per value only for strings written plain.
    let valueBytes: Int? =
      dictionary ? 4 : column.type == .string ? nil : b.plainSize(0)
    while entry < entries {
      // Whole rows until the page is full.
      let firstEntry = entry
      let firstValue = value
      var bytes = 0
      if let size = valueBytes, !isList {
        // A value per row at most, of one size: counted on the levels' bytes.
        let end = min(entries, entry + options.pageRows)
        if maxDef == 0 {
          entry = min(end, entry + (options.pageBytes + size - 1) / size)
          bytes = (entry - firstEntry) * size
          value = entry
        } else {
          b.defs.withUnsafeBufferPointer { defs in
            while entry < end && bytes < options.pageBytes {
              if defs[entry] == 1 {
                bytes += size
                value += 1
              }
              entry += 1
            }
          }
        }
      } else {
        var pageRows = 0
        while entry < entries && pageRows < options.pageRows && bytes < options.pageBytes {
          repeat {
            if maxDef == 0 || b.defs[entry] == 1 {
              bytes += valueBytes ?? b.plainSize(value)
              value += 1
            }
            entry += 1
          } while isList && entry < entries && b.reps[entry] != 0
          pageRows += 1
        }
      }
      var page: [UInt8] = []
      page.reserveCapacity(bytes + 64)
      if isList { Self.levels(b.reps, firstEntry..<entry, width: 1, into: &page) }
      if maxDef > 0 { Self.levels(b.defs, firstEntry..<entry, width: 1, into: &page) }
      if dictionary {
        page.append(UInt8(width))
        b.indices.withUnsafeBufferPointer { all in
          RLEHybrid.encode(
            UnsafeBufferPointer(rebasing: all[firstValue..<value]), width: width, into: &page)
        }
      } else {
        plainValues(b, firstValue..<value, into: &page)
      }
      if meta.dataOffset == nil { meta.dataOffset = Int64(out.count) }
      let count = entry - firstEntry
      let encoding = valueEncoding(column, dictionary: dictionary)
      try writePage(page, .dataPage, 2 * c + 1, meta: &meta, into: &out) { h in
        h.beginStruct(5)  // data_page_header
        h.field(1, i32: Int32(count))
        h.field(2, i32: encoding.rawValue)
        h.field(3, i32: ParquetEnum.Encoding.rle.rawValue)
        h.field(4, i32: ParquetEnum.Encoding.rle.rawValue)
        h.endStruct()
      }
    }
    if meta.dataOffset == nil {
      // A chunk of no rows still has one (empty) data page, as readers expect.
      meta.dataOffset = Int64(out.count)
      let encoding = valueEncoding(column, dictionary: dictionary)
      var page: [UInt8] = []
      if dictionary { page.append(UInt8(max(width, 1))) }
      if encoding == .deltaBinaryPacked { DeltaBinaryPacked.encode([], into: &page) }
      try writePage(page, .dataPage, 2 * c + 1, meta: &meta, into: &out) { h in
        h.beginStruct(5)
        h.field(1, i32: 0)
        h.field(2, i32: encoding.rawValue)
        h.field(3, i32: ParquetEnum.Encoding.rle.rawValue)
        h.field(4, i32: ParquetEnum.Encoding.rle.rawValue)
        h.endStruct()
      }
    }
    return meta
  }

  /// How a chunk's data pages hold their values.
  private func valueEncoding(_ column: ParquetColumn, dictionary: Bool) -> ParquetEnum.Encoding {
    if dictionary { return .rleDictionary }
    switch column.type {
    case .int64, .timestampMillis, .int32: return .deltaBinaryPacked
    case .string, .bool: return .plain
    }
  }

  /// A level sequence with its 4-byte length, as data pages v1 hold them.
  private static func levels(
    _ levels: Values<UInt8>, _ range: Range<Int>, width: Int, into page: inout [UInt8]
  ) {
    let at = page.count
    page.append(contentsOf: [0, 0, 0, 0])
    levels.withUnsafeBufferPointer { all in
      RLEHybrid.encode(UnsafeBufferPointer(rebasing: all[range]), width: width, into: &page)
    }
    let n = UInt32(truncatingIfNeeded: page.count - at - 4)
    for k in 0..<4 { page[at + k] = UInt8(truncatingIfNeeded: n >> (8 * UInt32(k))) }
  }

  private func plainValues(_ b: ColumnBuffer, _ range: Range<Int>, into page: inout [UInt8]) {
    switch b.column.type {
    case .int64, .timestampMillis, .int32:
      b.int64s.withUnsafeBufferPointer {
        DeltaBinaryPacked.encode(UnsafeBufferPointer(rebasing: $0[range]), into: &page)
      }
    case .string:
      for i in b.indices[range] {
        Self.appendLength(b.strings.length(Int(i)), to: &page)
        b.strings.withEntry(Int(i)) { page.append(contentsOf: $0) }
      }
    case .bool:
      var byte: UInt8 = 0
      var bit = 0
      for v in b.bools[range] {
        if v { byte |= 1 << UInt8(bit) }
        bit += 1
        if bit == 8 {
          page.append(byte)
          byte = 0
          bit = 0
        }
      }
      if bit > 0 { page.append(byte) }
    }
  }

  /// Null count, and the least and greatest value of integer columns.
  private func statistics(_ b: ColumnBuffer, into meta: inout ChunkMeta) {
    guard b.column.repetition != .list else { return }
    meta.nulls = Int64(b.column.repetition == .optional ? b.defs.count - b.values : 0)
    // One pass over the values in place (a generic `min()` and `max()` took two, through
    // the collection's checked subscript).
    let range: (lo: Int64, hi: Int64)? = b.int64s.withUnsafeBufferPointer { all in
      guard var lo = all.first else { return nil }
      var hi = lo
      for v in all {
        lo = Swift.min(lo, v)
        hi = Swift.max(hi, v)
      }
      return (lo, hi)
    }
    switch b.column.type {
    case .int64, .timestampMillis:
      if let (lo, hi) = range { meta.minMax = (Self.le(lo), Self.le(hi)) }
    case .int32:
      if let (lo, hi) = range {
        meta.minMax = (
          Self.le(Int32(truncatingIfNeeded: lo)), Self.le(Int32(truncatingIfNeeded: hi))
        )
      }
    case .string, .bool:
      break
    }
  }

  /// Compresses `page` (the way `ways[way]` says, tried again now and then) and appends
  /// its header (`body` adds the page-type-specific part) and the compressed bytes to
  /// `out`.
  private func writePage(
    _ page: [UInt8], _ type: ParquetEnum.PageType, _ way: Int, meta: inout ChunkMeta,
    into out: inout [UInt8], header body: (inout ThriftCompactWriter) -> Void
  ) throws(ParquetError) {
    // Parquet's sizes are 32-bit: only one row naming billions of ids could get there.
    guard page.count <= Int(Int32.max) / 2 else {
      throw ParquetError(
        path: path, what: "a page of \(page.count) bytes is past Parquet's size limit")
    }
    var huffmanOnly = false
    if page.count >= CompressionWay.triedFrom {
      if ways[way].pagesLeft == 0 {
        let suffices = compressor.huffmanSuffices(page)
        ways[way] = CompressionWay(
          huffmanOnly: suffices,
          pagesLeft: suffices ? CompressionWay.pagesPerTry : CompressionWay.pagesPerMatchingTry)
      }
      ways[way].pagesLeft = max(0, ways[way].pagesLeft - 1)
      huffmanOnly = ways[way].huffmanOnly
    }
    let sizes: (header: Int, compressed: Int) = compressor.compress(
      page, huffmanOnly: huffmanOnly
    ) { compressed in
      var h = ThriftCompactWriter()
      h.field(1, i32: type.rawValue)
      h.field(2, i32: Int32(page.count))
      h.field(3, i32: Int32(compressed.count))
      body(&h)
      let header = h.finish()
      out.append(contentsOf: header)
      out.append(contentsOf: compressed)
      return (header.count, compressed.count)
    }
    meta.uncompressed += Int64(sizes.header + page.count)
    meta.compressed += Int64(sizes.header + sizes.compressed)
  }

  private static func appendLE<T: FixedWidthInteger>(_ v: T, to out: inout [UInt8]) {
    var x = v.littleEndian
    withUnsafeBytes(of: &x) { out.append(contentsOf: $0) }
  }

  private static func appendLength(_ n: Int, to out: inout [UInt8]) {
    appendLE(UInt32(truncatingIfNeeded: n), to: &out)
  }

  private static func le<T: FixedWidthInteger>(_ v: T) -> [UInt8] {
    var out: [UInt8] = []
    appendLE(v, to: &out)
    return out
  }
}

/// How one column's pages of one kind are compressed: by Huffman codes alone where they
/// do within 5 % as well as matching (bit-packed indices, hex ids), which costs a fraction
/// of the time; by matching otherwise (short and path-like ids, messages). Tried on a
/// sample of a page every `pagesPerTry` pages, as the data may change (another log), and
/// sooner after a try chose matching: a column's first pages can differ from the rest (a
/// session's first row group builds its outline, whose indices count up).
struct CompressionWay {
  var huffmanOnly = false
  /// Pages compressed this way before the next try; 0: try on the next page.
  var pagesLeft = 0
  /// Smaller pages are compressed by matching, untried: a try would cost more than it saves.
  static let triedFrom = 4 << 10
  static let pagesPerTry = 64
  static let pagesPerMatchingTry = 8
}

/// A row group encoded by `ParquetRows.encode()`: its bytes, and its chunks' metadata with
/// offsets from the group's first byte (`ParquetWriter.append` moves them to the file's).
package struct EncodedRowGroup: Sendable {
  var bytes: [UInt8]
  var chunks: [ChunkMeta]
  package var rows: Int64
}

/// Where a column chunk went and what it holds, for the footer.
struct ChunkMeta: Sendable {
  let column: ParquetColumn
  var start: Int64
  var values: Int64 = 0
  var dictionary = false
  var dictionaryOffset: Int64?
  var dataOffset: Int64?
  var uncompressed: Int64 = 0
  var compressed: Int64 = 0
  var nulls: Int64?
  var minMax: (min: [UInt8], max: [UInt8])?

  init(column: ParquetColumn, start: Int64) {
    self.column = column
    self.start = start
  }

  /// The same chunk `base` bytes further into the file.
  func moved(by base: Int64) -> ChunkMeta {
    var m = self
    m.start += base
    m.dictionaryOffset = dictionaryOffset.map { $0 + base }
    m.dataOffset = dataOffset.map { $0 + base }
    return m
  }
}
