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
}
