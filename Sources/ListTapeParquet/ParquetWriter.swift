#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Writes one Parquet file: row groups made by `ParquetRows` (its own `rows`, or those of
/// other threads, appended in turn), then the footer on `close()`. What is written is the
/// subset of the format (parquet.thrift) that flat tables with lists of strings need;
/// docs/fleet.md lists it.
///
/// One thread: `append…` values into `rows`, `endRow()`, `close()`. Several: each fills a
/// `makeRows()` of its own, encodes it when full, and appends the group under a lock.
package final class ParquetWriter {
  package let path: String
  package let columns: [ParquetColumn]
  private let options: ParquetOptions
  private var fd: Int32
  private var offset: Int64 = 0
  private var rowGroups: [RowGroupMeta] = []
  private var written: Int64 = 0
  /// The rows `append…` and `endRow()` fill.
  package let rows: ParquetRows

  /// Creates the file at `path`, which must not exist.
  package init(path: String, columns: [ParquetColumn], options: ParquetOptions = .init())
    throws(ParquetError)
  {
    let rows = try ParquetRows(columns: columns, options: options, path: path)
    let fd = path.withCString { open($0, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644) }
    guard fd >= 0 else { throw ParquetError(path: path, what: "cannot create", errno: errno) }
    self.path = path
    self.columns = columns
    self.options = options
    self.rows = rows
    self.fd = fd
    try write(Self.magic)
  }

  deinit { if fd >= 0 { _ = sysClose(fd) } }

  /// Rows for another thread to fill (and encode), with this file's columns and options.
  package func makeRows() throws(ParquetError) -> ParquetRows {
    try ParquetRows(columns: columns, options: options, path: path)
  }

  /// Rows in the file so far, and in `rows`.
  package var rowCount: Int64 { written + Int64(rows.count) }

  package func append(_ c: Int, int64 value: Int64) { rows.append(c, int64: value) }
  package func append(_ c: Int, int32 value: Int32) { rows.append(c, int32: value) }
  package func append(_ c: Int, bool value: Bool) { rows.append(c, bool: value) }
  package func append(_ c: Int, string value: String) { rows.append(c, string: value) }
  package func appendNull(_ c: Int) { rows.appendNull(c) }

  /// Ends the row of `rows`, and writes the row group when it is full.
  package func endRow() throws(ParquetError) {
    rows.endRow()
    if rows.isFull { try append(try rows.encode()) }
  }

  /// Appends an encoded row group (not thread-safe: callers on several threads lock).
  package func append(_ group: EncodedRowGroup) throws(ParquetError) {
    guard group.rows > 0 else { return }
    let base = offset
    try write(group.bytes)
    let chunks = group.chunks.map { $0.moved(by: base) }
    rowGroups.append(
      RowGroupMeta(
        chunks: chunks, rows: group.rows, fileOffset: base,
        uncompressed: chunks.reduce(0) { $0 + $1.uncompressed },
        compressed: chunks.reduce(0) { $0 + $1.compressed }))
    written += group.rows
  }

  /// Writes the last row group and the footer, and closes the file.
  package func close() throws(ParquetError) {
    if rows.count > 0 { try append(try rows.encode()) }
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
    w.field(3, i64: written)
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
