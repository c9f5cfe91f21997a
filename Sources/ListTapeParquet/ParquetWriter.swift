#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Writes one Parquet file row by row: a value for every column (`append…`), then
/// `endRow()`; `close()` writes the footer. Rows are buffered one row group at a time
/// (`ParquetOptions` bounds it), then written column by column as GZIP-compressed data
/// pages (v1), dictionary-encoded where the chunk's dictionary stays small. What is written
/// is the subset of the format (parquet.thrift) that flat tables with lists of strings need;
/// docs/fleet.md lists it.
package final class ParquetWriter {
  package let path: String
  package let columns: [ParquetColumn]
  private let options: ParquetOptions
  /// One buffer per column, behind a pointer: the per-value appends then need no
  /// exclusivity check of a class property.
  private let buffers: UnsafeMutablePointer<ColumnBuffer>
  private var fd: Int32
  private var offset: Int64 = 0
  private let compressor: GzipCompressor
  /// Rows in the row group being filled, and their value bytes (as plain-encoded).
  private var groupRows = 0
  private let groupBytes = UnsafeMutablePointer<Int>.allocate(capacity: 1)
  private var rowGroups: [RowGroupMeta] = []
  /// The list columns, which `endRow` closes.
  private let listColumns: [Int]
  private var totalRows: Int64 = 0

  /// Creates the file at `path`, which must not exist.
  package init(path: String, columns: [ParquetColumn], options: ParquetOptions = .init())
    throws(ParquetError)
  {
    guard let compressor = GzipCompressor(level: options.compressionLevel) else {
      throw ParquetError(path: path, what: "zlib could not set up a deflate stream")
    }
    let fd = path.withCString { open($0, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644) }
    guard fd >= 0 else { throw ParquetError(path: path, what: "cannot create", errno: errno) }
    self.path = path
    self.columns = columns
    self.options = options
    self.compressor = compressor
    self.fd = fd
    listColumns = columns.indices.filter { columns[$0].repetition == .list }
    buffers = .allocate(capacity: columns.count)
    buffers.initialize(from: columns.map(ColumnBuffer.init), count: columns.count)
    groupBytes.initialize(to: 0)
    try write(Self.magic)
  }

  deinit {
    if fd >= 0 { _ = sysClose(fd) }
    buffers.deinitialize(count: columns.count)
    buffers.deallocate()
    groupBytes.deallocate()
  }

  /// Rows appended so far.
  package var rows: Int64 { totalRows + Int64(groupRows) }

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
    let i = buffers[c].strings.index(of: bytes)
    buffers[c].indices.append(i)
    groupBytes.pointee += 4 + bytes.count
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

  /// Ends the row: a list column without elements holds an empty list; a row group that
  /// is full is written.
  package func endRow() throws(ParquetError) {
    for c in listColumns {
      if !buffers[c].rowHasElement {
        buffers[c].reps.append(0)
        buffers[c].defs.append(0)
      }
      buffers[c].rowHasElement = false
    }
    groupRows += 1
    if groupRows >= options.rowGroupRows || groupBytes.pointee >= options.rowGroupBytes {
      try flushRowGroup()
    }
  }

  /// Writes the last row group and the footer, and closes the file.
  package func close() throws(ParquetError) {
    if groupRows > 0 { try flushRowGroup() }
    var footer = ThriftCompactWriter()
    writeFileMetaData(&footer)
    let bytes = footer.finish()
    try write(bytes)
    var length = UInt32(bytes.count).littleEndian
    try write(withUnsafeBytes(of: &length) { Array($0) })
    try write(Self.magic)
    let fd = self.fd
    self.fd = -1
    guard sysClose(fd) == 0 else {
      throw ParquetError(path: path, what: "cannot close", errno: errno)
    }
  }

  // MARK: Row groups

  private func flushRowGroup() throws(ParquetError) {
    let start = offset
    var chunks: [ChunkMeta] = []
    for c in 0..<columns.count {
      // A row without a value in some column would shift every row after it: the
      // caller's bug, not bad input.
      precondition(
        columns[c].repetition == .list || buffers[c].entries == groupRows,
        "column \(columns[c].name) has \(buffers[c].entries) values for \(groupRows) rows")
      chunks.append(try writeChunk(&buffers[c], rows: groupRows))
      buffers[c].removeAll()
    }
    rowGroups.append(
      RowGroupMeta(
        chunks: chunks, rows: Int64(groupRows), fileOffset: start,
        uncompressed: chunks.reduce(0) { $0 + $1.uncompressed },
        compressed: chunks.reduce(0) { $0 + $1.compressed }))
    totalRows += Int64(groupRows)
    groupRows = 0
    groupBytes.pointee = 0
  }

  /// Writes one column chunk: a dictionary page when the dictionary is small enough, then
  /// data pages of whole rows.
  private func writeChunk(_ b: inout ColumnBuffer, rows: Int) throws(ParquetError) -> ChunkMeta {
    let column = b.column
    var meta = ChunkMeta(column: column, start: offset)
    meta.values = Int64(b.entries)
    let dictionary = column.type.usesDictionary && b.dictionaryBytes <= options.dictionaryBytes
    if dictionary {
      var page: [UInt8] = []
      page.reserveCapacity(b.dictionaryBytes)
      for i in 0..<b.strings.count {
        Self.appendLength(b.strings.length(i), to: &page)
        b.strings.withEntry(i) { page.append(contentsOf: $0) }
      }
      meta.dictionaryOffset = offset
      let count = b.strings.count
      try writePage(page, .dictionaryPage, meta: &meta) { h in
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
    while entry < entries {
      // Whole rows until the page is full.
      let firstEntry = entry
      let firstValue = value
      var pageRows = 0
      var bytes = 0
      while entry < entries && pageRows < options.pageRows && bytes < options.pageBytes {
        repeat {
          if maxDef == 0 || b.defs[entry] == 1 {
            bytes += b.plainSize(value)
            value += 1
          }
          entry += 1
        } while isList && entry < entries && b.reps[entry] != 0
        pageRows += 1
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
      if meta.dataOffset == nil { meta.dataOffset = offset }
      let count = entry - firstEntry
      let encoding = valueEncoding(column, dictionary: dictionary)
      try writePage(page, .dataPage, meta: &meta) { h in
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
      meta.dataOffset = offset
      let encoding = valueEncoding(column, dictionary: dictionary)
      var page: [UInt8] = []
      if dictionary { page.append(UInt8(max(width, 1))) }
      if encoding == .deltaBinaryPacked { DeltaBinaryPacked.encode([], into: &page) }
      try writePage(page, .dataPage, meta: &meta) { h in
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
    _ levels: [UInt8], _ range: Range<Int>, width: Int, into page: inout [UInt8]
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
      DeltaBinaryPacked.encode(b.int64s[range], into: &page)
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
    switch b.column.type {
    case .int64, .timestampMillis:
      if let lo = b.int64s.min(), let hi = b.int64s.max() {
        meta.minMax = (Self.le(lo), Self.le(hi))
      }
    case .int32:
      if let lo = b.int64s.min(), let hi = b.int64s.max() {
        meta.minMax = (
          Self.le(Int32(truncatingIfNeeded: lo)), Self.le(Int32(truncatingIfNeeded: hi))
        )
      }
    case .string, .bool:
      break
    }
  }

  /// Compresses `page`, writes its header (`body` adds the page-type-specific part) and
  /// the compressed bytes.
  private func writePage(
    _ page: [UInt8], _ type: ParquetEnum.PageType, meta: inout ChunkMeta,
    header body: (inout ThriftCompactWriter) -> Void
  ) throws(ParquetError) {
    let path = self.path
    // Parquet's sizes are 32-bit: only one row naming billions of ids could get there.
    guard page.count <= Int(Int32.max) / 2 else {
      throw ParquetError(
        path: path, what: "a page of \(page.count) bytes is past Parquet's size limit")
    }
    let written: Result<(Int, Int), ParquetError>? = compressor.compress(page) { compressed in
      var h = ThriftCompactWriter()
      h.field(1, i32: type.rawValue)
      h.field(2, i32: Int32(page.count))
      h.field(3, i32: Int32(compressed.count))
      body(&h)
      let header = h.finish()
      do throws(ParquetError) {
        try write(header)
        try write(compressed)
      } catch {
        return .failure(error)
      }
      return .success((header.count, compressed.count))
    }
    guard let written else {
      throw ParquetError(path: path, what: "zlib could not compress a page")
    }
    let (header, compressed) = try written.get()
    meta.uncompressed += Int64(header + page.count)
    meta.compressed += Int64(header + compressed)
  }

  // MARK: Footer

  private func writeFileMetaData(_ w: inout ThriftCompactWriter) {
    w.field(1, i32: 2)  // version
    w.beginList(
      2, of: .struct, count: 1 + columns.reduce(0) { $0 + ($1.repetition == .list ? 3 : 1) })
    w.beginElement()
    w.field(4, string: "schema")
    w.field(5, i32: Int32(columns.count))
    w.endStruct()
    for column in columns { Self.schemaElements(column, &w) }
    w.field(3, i64: rows)
    w.beginList(4, of: .struct, count: rowGroups.count)
    for group in rowGroups {
      w.beginElement()
      w.beginList(1, of: .struct, count: group.chunks.count)
      for chunk in group.chunks { Self.columnChunk(chunk, &w) }
      w.field(2, i64: group.uncompressed)
      w.field(3, i64: group.rows)
      w.field(5, i64: group.fileOffset)
      w.field(6, i64: group.compressed)
      w.endStruct()
    }
    if !options.metadata.isEmpty {
      w.beginList(5, of: .struct, count: options.metadata.count)
      for (key, value) in options.metadata {
        w.beginElement()
        w.field(1, string: key)
        w.field(2, string: value)
        w.endStruct()
      }
    }
    w.field(6, string: options.createdBy)
    // column_orders: every leaf sorts by its type's order, so min/max statistics hold.
    w.beginList(7, of: .struct, count: columns.count)
    for _ in columns {
      w.beginElement()
      w.beginStruct(1)
      w.endStruct()
      w.endStruct()
    }
  }

  private static func schemaElements(_ column: ParquetColumn, _ w: inout ThriftCompactWriter) {
    if column.repetition == .list {
      w.beginElement()
      w.field(3, i32: ParquetEnum.Repetition.required.rawValue)
      w.field(4, string: column.name)
      w.field(5, i32: 1)
      w.field(6, i32: ParquetEnum.ConvertedType.list.rawValue)
      w.beginStruct(10)
      w.beginStruct(3)  // LIST
      w.endStruct()
      w.endStruct()
      w.endStruct()
      w.beginElement()
      w.field(3, i32: ParquetEnum.Repetition.repeated.rawValue)
      w.field(4, string: "list")
      w.field(5, i32: 1)
      w.endStruct()
    }
    w.beginElement()
    w.field(1, i32: column.type.physical.rawValue)
    let repetition: ParquetEnum.Repetition =
      column.repetition == .optional ? .optional : .required
    w.field(3, i32: repetition.rawValue)
    w.field(4, string: column.repetition == .list ? "element" : column.name)
    switch column.type {
    case .string:
      w.field(6, i32: ParquetEnum.ConvertedType.utf8.rawValue)
      w.beginStruct(10)
      w.beginStruct(1)  // STRING
      w.endStruct()
      w.endStruct()
    case .timestampMillis:
      w.field(6, i32: ParquetEnum.ConvertedType.timestampMillis.rawValue)
      w.beginStruct(10)
      w.beginStruct(8)  // TIMESTAMP
      w.field(1, bool: true)  // isAdjustedToUTC
      w.beginStruct(2)  // unit
      w.beginStruct(1)  // MILLIS
      w.endStruct()
      w.endStruct()
      w.endStruct()
      w.endStruct()
    case .int64, .int32, .bool:
      break
    }
    w.endStruct()
  }

  private static func columnChunk(_ chunk: ChunkMeta, _ w: inout ThriftCompactWriter) {
    w.beginElement()
    w.field(2, i64: chunk.start)
    w.beginStruct(3)
    w.field(1, i32: chunk.column.type.physical.rawValue)
    let encodings: [ParquetEnum.Encoding] =
      chunk.dictionary
      ? [.plain, .rle, .rleDictionary]
      : chunk.column.type.physical == .int64 || chunk.column.type == .int32
        ? [.rle, .deltaBinaryPacked] : [.plain, .rle]
    w.beginList(2, of: .i32, count: encodings.count)
    for e in encodings { w.element(i32: e.rawValue) }
    let path = chunk.column.path
    w.beginList(3, of: .binary, count: path.count)
    for part in path { w.element(binary: Array(part.utf8)) }
    w.field(4, i32: ParquetEnum.gzip)
    w.field(5, i64: chunk.values)
    w.field(6, i64: chunk.uncompressed)
    w.field(7, i64: chunk.compressed)
    w.field(9, i64: chunk.dataOffset ?? chunk.start)
    if let d = chunk.dictionaryOffset { w.field(11, i64: d) }
    if let nulls = chunk.nulls {
      w.beginStruct(12)
      w.field(3, i64: nulls)
      if let (lo, hi) = chunk.minMax {
        w.field(5, binary: hi)
        w.field(6, binary: lo)
      }
      w.endStruct()
    }
    w.endStruct()
    w.endStruct()
  }

  // MARK: Bytes

  private static let magic: [UInt8] = Array("PAR1".utf8)

  private func write(_ bytes: [UInt8]) throws(ParquetError) {
    let failure: ParquetError? = bytes.withUnsafeBytes { b in
      do throws(ParquetError) {
        try write(b)
        return nil
      } catch {
        return error
      }
    }
    if let failure { throw failure }
  }

  private func write(_ bytes: UnsafeRawBufferPointer) throws(ParquetError) {
    guard var p = bytes.baseAddress else { return }
    var left = bytes.count
    while left > 0 {
      let n = sysWrite(fd, p, left)
      if n < 0 {
        if errno == EINTR { continue }
        throw ParquetError(path: path, what: "cannot write", errno: errno)
      }
      p += n
      left -= n
    }
    offset += Int64(bytes.count)
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

/// Where a column chunk went and what it holds, for the footer.
private struct ChunkMeta {
  let column: ParquetColumn
  let start: Int64
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
}

private struct RowGroupMeta {
  var chunks: [ChunkMeta]
  var rows: Int64
  var fileOffset: Int64
  var uncompressed: Int64
  var compressed: Int64
}

#if canImport(Glibc)
private let sysWrite = Glibc.write
private let sysClose = Glibc.close
#elseif canImport(Darwin)
private let sysWrite = Darwin.write
private let sysClose = Darwin.close
#endif
