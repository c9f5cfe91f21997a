import Foundation
import Testing

@testable import ListTapeParquet

@Suite struct WriterTests {
  func temporaryPath() -> String {
    NSTemporaryDirectory() + "listtape-parquet-\(UUID().uuidString).parquet"
  }

  /// The framing every reader checks first: PAR1 at both ends, the footer's length before
  /// the last one, and a footer that ends its struct.
  @Test func fileFraming() throws {
    let path = temporaryPath()
    defer { try? FileManager.default.removeItem(atPath: path) }
    var options = ParquetOptions()
    options.rowGroupRows = 3
    let w = try ParquetWriter(
      path: path,
      columns: [
        ParquetColumn("n", .int64), ParquetColumn("s", .string, .optional),
        ParquetColumn("l", .string, .list),
      ], options: options)
    for i in 0..<10 {
      w.append(0, int64: Int64(i))
      if i % 2 == 0 { w.append(1, string: "v\(i % 3)") } else { w.appendNull(1) }
      for k in 0..<(i % 3) { w.append(2, string: "e\(k)") }
      try w.endRow()
    }
    #expect(w.rowCount == 10)
    try w.close()
    let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
    #expect(Array(bytes.prefix(4)) == Array("PAR1".utf8))
    #expect(Array(bytes.suffix(4)) == Array("PAR1".utf8))
    let n = bytes.count
    let length =
      Int(bytes[n - 8]) | Int(bytes[n - 7]) << 8 | Int(bytes[n - 6]) << 16
      | Int(bytes[n - 5]) << 24
    #expect(length > 0 && length < n - 12)
    #expect(bytes[n - 9] == 0)  // the footer's STOP
  }

  @Test func anExistingFileIsNotOverwritten() throws {
    let path = temporaryPath()
    defer { try? FileManager.default.removeItem(atPath: path) }
    try Data("keep".utf8).write(to: URL(fileURLWithPath: path))
    #expect(throws: ParquetError.self) {
      _ = try ParquetWriter(path: path, columns: [ParquetColumn("n", .int64)])
    }
    #expect(try String(contentsOfFile: path, encoding: .utf8) == "keep")
  }

  /// Writes 1,000 rows of a string column and a list column into a new file, each string
  /// through `put` (the writer's rows, the column and the string); returns the file's bytes.
  func file(
    rowGroupRows: Int = 128, pipelined: Bool = false,
    _ put: (ParquetRows, Int, String) -> Void
  ) throws -> [UInt8] {
    let path = temporaryPath()
    defer { try? FileManager.default.removeItem(atPath: path) }
    var options = ParquetOptions()
    options.rowGroupRows = rowGroupRows
    let w = try ParquetWriter(
      path: path,
      columns: [ParquetColumn("s", .string, .optional), ParquetColumn("l", .string, .list)],
      options: options)
    var rows = w.rows
    let pipeline = RowGroupPipeline(spare: try w.makeRows()) { group throws(ParquetError) in
      try w.append(group)
    }
    for i in 0..<1_000 {
      let batch = i / 100
      let key = (i * 7) % 13
      if i % 5 == 4 {
        rows.appendNull(0)
      } else {
        put(rows, 0, "b\(batch)-s\(key)")
      }
      for k in 0..<(i % 4) { put(rows, 1, "b\(batch)-e\(k + key % 2)") }
      rows.endRow()
      if rows.isFull {
        if pipelined { rows = try pipeline.hand(rows) } else { try w.append(try rows.encode()) }
      }
    }
    try pipeline.finish()
    if rows !== w.rows && rows.count > 0 { try w.append(try rows.encode()) }
    try w.close()
    return [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
  }

  /// Values appended by key become, at `resolve`, entries holding the strings the caller
  /// gives for their keys: one entry per key and renumbering, in key order, among strings
  /// given by their bytes, across several renumberings of the same keys.
  @Test func keysResolveToTheStringsGivenForThem() {
    var b = ColumnBuffer(ParquetColumn("l", .string, .list))
    var random = SystemRandomNumberGenerator()
    var expected: [String] = []
    for numbering in 0..<4 {
      var keys = Set<Int>()
      let before = b.strings.count
      for _ in 0..<3_000 {
        if Int.random(in: 0..<5, using: &random) == 0 {
          var text = "given \(Int.random(in: 0..<50, using: &random))"
          let i = text.withUTF8 { b.strings.index(of: UnsafeRawBufferPointer($0)) }
          b.indices.append(i)
          expected.append(text)
        } else {
          // Keys far apart as well as near: the key words a resolve walks.
          let key =
            Bool.random(using: &random)
            ? Int.random(in: 0..<200, using: &random)
            : Int.random(in: 0..<200_000, using: &random)
          b.mark(key: key)
          b.indices.append(UInt32(key) | ColumnBuffer.unresolved)
          keys.insert(key)
          expected.append("n\(numbering)-k\(key)")
        }
      }
      #expect(b.hasUnresolvedKeys)
      var given: [Int] = []
      let added = b.resolve { key, bytes in
        given.append(key)
        bytes.append(contentsOf: Array("n\(numbering)-k\(key)".utf8))
      }
      #expect(!b.hasUnresolvedKeys)
      #expect(given == keys.sorted(), "each key once, ascending")
      #expect(b.strings.count >= before + keys.count)
      #expect(added == given.reduce(0) { $0 + 4 + "n\(numbering)-k\($1)".utf8.count })
      for (i, text) in expected.enumerated() {
        let entry = Int(b.indices[i])
        #expect(entry < b.strings.count)
        let got = b.strings.withEntry(entry) { String(decoding: $0, as: UTF8.self) }
        if got != text {
          Issue.record("value \(i): \(got), expected \(text)")
          return
        }
      }
    }
    // Nothing appended by key since: a resolve gives nothing and changes nothing.
    let count = b.strings.count
    #expect(b.resolve { _, _ in Issue.record("no key to resolve") } == 0)
    #expect(b.strings.count == count)
  }

  /// Columns filled many rows at a time (numbers, optional numbers with nulls, keys,
  /// booleans), beside columns filled row by row, make the same file as every value
  /// appended in its row.
  @Test func columnsFilledManyRowsAtATimeMakeTheSameFile() throws {
    func write(atATime: Int?) throws -> [UInt8] {
      let path = temporaryPath()
      defer { try? FileManager.default.removeItem(atPath: path) }
      var options = ParquetOptions()
      options.rowGroupRows = 300
      options.pageRows = 70
      let w = try ParquetWriter(
        path: path,
        columns: [
          ParquetColumn("n", .int64), ParquetColumn("m", .int32, .optional),
          ParquetColumn("k", .string), ParquetColumn("b", .bool),
          ParquetColumn("s", .string, .optional), ParquetColumn("l", .string, .list),
          ParquetColumn("o", .string, .optional),
        ], options: options)
      let rows = w.rows
      var n: [Int64] = []
      var m: [Int64] = []
      var present: [Bool] = []
      var k: [Int32] = []
      var b: [Bool] = []
      var o: [Int32] = []
      func flush() {
        n.withUnsafeBufferPointer { rows.append(0, int64s: $0) }
        m.withUnsafeBufferPointer { values in
          present.withUnsafeBufferPointer { rows.append(1, int64s: values, present: $0) }
        }
        k.withUnsafeBufferPointer { rows.append(2, keys: $0) }
        b.withUnsafeBufferPointer { rows.append(3, bools: $0) }
        o.withUnsafeBufferPointer { rows.append(6, keys: $0) }
        (n, m, present, k, b, o) = ([], [], [], [], [], [])
      }
      for i in 0..<1_000 {
        let value: Int32? = i % 4 == 1 ? nil : Int32(i % 300) - 150
        let key: Int32? = i % 5 == 2 ? nil : Int32(i % 11)
        if atATime != nil {
          n.append(Int64(i) * 7_919)
          m.append(Int64(value ?? 0))
          present.append(value != nil)
          k.append(Int32(i % 17))
          b.append(i % 3 == 0)
          o.append(key ?? -1)
        } else {
          rows.append(0, int64: Int64(i) * 7_919)
          if let value { rows.append(1, int32: value) } else { rows.appendNull(1) }
          rows.append(2, key: i % 17)
          rows.append(3, bool: i % 3 == 0)
          if let key { rows.append(6, key: Int(key)) } else { rows.appendNull(6) }
        }
        if i % 6 == 0 { rows.appendNull(4) } else { rows.append(4, string: "s\(i % 40)") }
        for e in 0..<(i % 3) { rows.append(5, string: "e\(e)") }
        rows.endRow()
        if let atATime, n.count == atATime || rows.isFull { flush() }
        if rows.isFull || i == 999 {
          if atATime != nil { flush() }
          rows.resolveKeys { _, key, bytes in bytes.append(contentsOf: Array("key \(key)".utf8)) }
          if rows.isFull { try w.append(try rows.encode()) }
        }
      }
      try w.close()
      return [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
    }
    let byRow = try write(atATime: nil)
    for atATime in [1, 37, 300] {
      #expect(try write(atATime: atATime) == byRow, "\(atATime) rows at a time")
    }
  }

  /// Row groups encoded on the pipeline's thread land in the file in the order handed over:
  /// the same bytes as encoding them on the caller's thread.
  @Test func pipelinedRowGroupsMakeTheSameFile() throws {
    let one = try file(rowGroupRows: 64) { rows, c, text in rows.append(c, string: text) }
    let two = try file(rowGroupRows: 64, pipelined: true) { rows, c, text in
      rows.append(c, string: text)
    }
    #expect(two == one)
  }
}

/// What engines read back: the same strings whichever way the writer was given them.
@Suite struct WriterReadBackTests {
  /// Writes 600 rows of an optional string and a list of strings to `path`; the caller
  /// numbers the 9 distinct strings anew every 100 rows (resolving its keys before), as a
  /// log's ids are renumbered by a dictionary restart, so a keyed writer meets each string
  /// under several keys in one row group.
  func write(_ path: String, keyed: Bool, dictionaryBytes: Int) throws {
    var options = ParquetOptions()
    options.dictionaryBytes = dictionaryBytes
    let w = try ParquetWriter(
      path: path,
      columns: [ParquetColumn("s", .string, .optional), ParquetColumn("l", .string, .list)],
      options: options)
    let rows = w.rows
    func put(_ c: Int, _ text: Int, batch: Int) {
      let t = "string \(text)"
      guard keyed else { return rows.append(c, string: t) }
      rows.append(c, key: (text + 4 * batch) % 9)
    }
    for i in 0..<600 {
      let batch = i / 100
      if i % 7 == 3 { rows.appendNull(0) } else { put(0, i % 9, batch: batch) }
      for k in 0..<(i % 4) { put(1, (i + k) % 9, batch: batch) }
      rows.endRow()
      if i % 100 == 99 {
        // Key k of this batch stands for string (k - 4 × batch) mod 9.
        rows.resolveKeys { _, key, bytes in
          bytes.append(contentsOf: Array("string \(((key - 4 * batch) % 9 + 9) % 9)".utf8))
        }
      }
    }
    #expect(!rows.hasUnresolvedKeys)
    try w.close()
  }

  @Test(.enabled(if: Self.hasPyarrow, "pyarrow is not installed (pip install pyarrow)"))
  func renumberedKeysAndPlainChunksReadBackAsGiven() throws {
    let dir = NSTemporaryDirectory() + "listtape-readback-\(UUID().uuidString)"
    try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: dir) }
    try write(dir + "/hashed.parquet", keyed: false, dictionaryBytes: 1 << 20)
    try write(dir + "/keyed.parquet", keyed: true, dictionaryBytes: 1 << 20)
    try write(dir + "/plain.parquet", keyed: true, dictionaryBytes: 0)
    let script = """
      import json, sys, pyarrow.parquet as pq
      out = {}
      for name in ['hashed', 'keyed', 'plain']:
          f = pq.ParquetFile(sys.argv[1] + '/' + name + '.parquet')
          c = f.metadata.row_group(0).column(1)
          out[name] = {'rows': f.read().to_pylist(), 'encodings': sorted(c.encodings)}
      print(json.dumps(out))
      """
    let read = try #require(try python(script, dir) as? [String: [String: Any]])
    let hashed = try #require(read["hashed"]?["rows"] as? [[String: Any]])
    #expect(hashed.count == 600)
    #expect(hashed[3]["s"] is NSNull)
    #expect(hashed[5]["s"] as? String == "string 5")
    #expect(hashed[7]["l"] as? [String] == ["string 7", "string 8", "string 0"])
    for name in ["keyed", "plain"] {
      let rows = try #require(read[name]?["rows"] as? [[String: Any]])
      #expect(NSArray(array: rows).isEqual(to: hashed), "\(name)")
    }
    #expect(read["keyed"]?["encodings"] as? [String] == ["PLAIN", "RLE", "RLE_DICTIONARY"])
    #expect(read["plain"]?["encodings"] as? [String] == ["PLAIN", "RLE"])
  }

  /// Pages cut small, by rows and by bytes, in every kind of column: required and optional
  /// numbers (cut by arithmetic and by one pass over the levels), dictionary indices,
  /// plain strings and a list; every value reads back in its row.
  @Test(.enabled(if: Self.hasPyarrow, "pyarrow is not installed (pip install pyarrow)"))
  func smallPagesReadBackRowByRow() throws {
    let path = NSTemporaryDirectory() + "listtape-pages-\(UUID().uuidString).parquet"
    defer { try? FileManager.default.removeItem(atPath: path) }
    var options = ParquetOptions()
    options.pageRows = 11
    options.pageBytes = 50
    options.rowGroupRows = 400
    let w = try ParquetWriter(
      path: path,
      columns: [
        ParquetColumn("n", .int64), ParquetColumn("m", .int32, .optional),
        ParquetColumn("d", .string), ParquetColumn("s", .string, .optional),
        ParquetColumn("b", .bool), ParquetColumn("l", .string, .list),
      ], options: options)
    for i in 0..<1_000 {
      w.append(0, int64: Int64(i) * 1_000_003)
      if i % 3 == 1 { w.appendNull(1) } else { w.append(1, int32: Int32(i % 97) - 40) }
      w.append(2, string: "d\(i % 13)")
      if i % 5 == 2 { w.appendNull(3) } else { w.append(3, string: "s\(i)") }
      w.append(4, bool: i % 7 == 0)
      for k in 0..<(i % 4) { w.append(5, string: "e\(i + k)") }
      try w.endRow()
    }
    try w.close()
    let script = """
      import json, sys, pyarrow.parquet as pq
      print(json.dumps(pq.read_table(sys.argv[1]).to_pylist()))
      """
    let rows = try #require(try python(script, path) as? [[String: Any]])
    #expect(rows.count == 1_000)
    var wrong: [Int] = []
    for (i, row) in rows.enumerated() {
      let m: Int? = i % 3 == 1 ? nil : i % 97 - 40
      let s: String? = i % 5 == 2 ? nil : "s\(i)"
      let good =
        row["n"] as? Int == i * 1_000_003 && row["m"] as? Int == m
        && (m != nil || row["m"] is NSNull) && row["d"] as? String == "d\(i % 13)"
        && row["s"] as? String == s && (s != nil || row["s"] is NSNull)
        && row["b"] as? Bool == (i % 7 == 0)
        && row["l"] as? [String] == (0..<(i % 4)).map { "e\(i + $0)" }
      if !good { wrong.append(i) }
    }
    #expect(wrong.isEmpty, "rows read back otherwise: \(wrong.prefix(10))")
  }

  /// Pages large enough to try Huffman codes alone: hex ids (which take them) and
  /// repetitive text (which does not) read back as written.
  @Test(.enabled(if: Self.hasPyarrow, "pyarrow is not installed (pip install pyarrow)"))
  func pagesCompressedEitherWayReadBack() throws {
    let path = NSTemporaryDirectory() + "listtape-ways-\(UUID().uuidString).parquet"
    defer { try? FileManager.default.removeItem(atPath: path) }
    let w = try ParquetWriter(
      path: path,
      columns: [ParquetColumn("hex", .string), ParquetColumn("text", .string)])
    var random = SystemRandomNumberGenerator()
    var hexes: [String] = []
    for i in 0..<30_000 {
      let hex = (0..<4).map { _ in String(random.next() as UInt64, radix: 16) }.joined()
      hexes.append(hex)
      w.append(0, string: hex)
      w.append(1, string: "Sources/App/Screen\(i % 50).swift:\(i % 700) row \(i)")
      try w.endRow()
    }
    try w.close()
    #expect(CompressionWay.triedFrom < 30_000 * 32)
    let gzip = GzipCompressor()
    #expect(gzip.huffmanSuffices(Array(hexes.joined().utf8)))
    #expect(!gzip.huffmanSuffices(Array(String(repeating: "row 1 row 2 ", count: 4_000).utf8)))
    let script = """
      import json, sys, pyarrow.parquet as pq
      t = pq.read_table(sys.argv[1])
      print(json.dumps([t.column('hex').to_pylist(), t.column('text').to_pylist()[-1]]))
      """
    let read = try #require(try python(script, path) as? [Any])
    #expect(read.first as? [String] == hexes)
    #expect(read.last as? String == "Sources/App/Screen49.swift:599 row 29999")
  }

  /// Runs a python3 script with one argument and reads its output as JSON.
  func python(_ script: String, _ argument: String) throws -> Any {
    let p = Process()
    p.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    p.arguments = ["python3", "-c", script, argument]
    let pipe = Pipe()
    p.standardOutput = pipe
    try p.run()
    let data = pipe.fileHandleForReading.readDataToEndOfFile()
    p.waitUntilExit()
    #expect(p.terminationStatus == 0)
    return try JSONSerialization.jsonObject(with: data)
  }

  static let hasPyarrow: Bool = {
    if let ci = ProcessInfo.processInfo.environment["CI"], !ci.isEmpty { return true }
    let p = Process()
    p.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    p.arguments = ["python3", "-c", "import pyarrow"]
    p.standardError = FileHandle.nullDevice
    guard (try? p.run()) != nil else { return false }
    p.waitUntilExit()
    return p.terminationStatus == 0
  }()
}
