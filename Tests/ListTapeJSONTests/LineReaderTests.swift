import ListTapeSamples
import Testing

@testable import ListTapeJSON

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

@Suite struct LineReaderTests {
  /// Lines as `N:text` or `N:tooLong(L)`, read with the given chunk size and cap.
  private func lines(
    _ input: String, chunkSize: Int = LineReader.defaultChunkSize,
    maxLineLength: Int = LineReader.defaultMaxLineLength
  ) throws -> [String] {
    var reader = LineReader(
      bytes: Array(input.utf8), chunkSize: chunkSize, maxLineLength: maxLineLength)
    var result: [String] = []
    while let line = try reader.next() {
      switch line {
      case .text(let number, let bytes):
        result.append("\(number):" + String(decoding: bytes, as: UTF8.self))
      case .tooLong(let number, let length):
        result.append("\(number):tooLong(\(length))")
      }
    }
    #expect(try reader.next() == nil)
    return result
  }

  @Test(arguments: [1, 2, 3, 5, 8, 64, LineReader.defaultChunkSize])
  func splitting(chunkSize: Int) throws {
    #expect(try lines("", chunkSize: chunkSize) == [])
    #expect(try lines("a\nbc\n", chunkSize: chunkSize) == ["1:a", "2:bc"])
    #expect(try lines("a\r\nbc\r\n", chunkSize: chunkSize) == ["1:a", "2:bc"])
    #expect(try lines("a\nbc", chunkSize: chunkSize) == ["1:a", "2:bc"])
    #expect(try lines("a\r", chunkSize: chunkSize) == ["1:a"])
    #expect(try lines("\n\r\n\n", chunkSize: chunkSize) == ["1:", "2:", "3:"])
    #expect(try lines("a\rb\n", chunkSize: chunkSize) == ["1:a\rb"])
    #expect(try lines("é€\n😀", chunkSize: chunkSize) == ["1:é€", "2:😀"])
  }

  @Test(arguments: [1, 2, 3, 4, 7, 16, 1024])
  func overLongLines(chunkSize: Int) throws {
    let input = "12345\n123456\nab\n12345\r\n1234567890"
    #expect(
      try lines(input, chunkSize: chunkSize, maxLineLength: 5) == [
        "1:12345", "2:tooLong(6)", "3:ab", "4:12345", "5:tooLong(10)",
      ])
    #expect(
      try lines("123456\r\n\n", chunkSize: chunkSize, maxLineLength: 5) == [
        "1:tooLong(7)", "2:",
      ])
  }

  @Test func overLongLineStaysBounded() throws {
    let input = Array(String(repeating: "x", count: 100_000).utf8) + [0x0A, 0x61]
    var reader = LineReader(bytes: input, chunkSize: 64, maxLineLength: 100)
    #expect(try reader.next() == .tooLong(number: 1, length: 100_000))
    #expect(reader.bufferSize <= 100 + 1 + 64 * 2)
    #expect(try reader.next() == .text(number: 2, bytes: [0x61]))
    #expect(try reader.next() == nil)
  }

  @Test(arguments: [1, 2, 3, 4])
  func chunkBoundaries(seed: UInt64) throws {
    var random = SplitMix64(seed: seed)
    var input = ""
    var expected: [String] = []
    for number in 1...200 {
      let length = Int.random(in: 0...40, using: &random)
      let text = String(
        (0..<length).map { _ in
          Character(Unicode.Scalar(UInt8.random(in: 0x20...0x7E, using: &random)))
        })
      expected.append("\(number):\(text)")
      input += text + (Bool.random(using: &random) ? "\r\n" : "\n")
    }
    for chunkSize in [1, 2, 3, 5, 13, 41, 100, 4096] {
      #expect(try lines(input, chunkSize: chunkSize) == expected)
    }
  }

  @Test func readsFileDescriptor() throws {
    var fds: [Int32] = [0, 0]
    #expect(pipe(&fds) == 0)
    let text = Array("{\"op\":\"mark\"}\r\n\n[1]".utf8)
    let written = text.withUnsafeBytes { write(fds[1], $0.baseAddress, $0.count) }
    #expect(written == text.count)
    close(fds[1])
    defer { close(fds[0]) }
    var reader = LineReader(fileDescriptor: fds[0], chunkSize: 4)
    var values: [JSONValue] = []
    var numbers: [Int] = []
    while let line = try reader.next() {
      guard case .text(let number, let bytes) = line, !bytes.isEmpty else { continue }
      values.append(try JSONParser.parse(bytes))
      numbers.append(number)
    }
    #expect(values == [["op": "mark"], [1]])
    #expect(numbers == [1, 3])
  }

  @Test func readErrorsCarryErrno() {
    var reader = LineReader(fileDescriptor: -1)
    #expect(throws: LineReaderError(code: EBADF)) { try reader.next() }
    #expect(LineReaderError(code: EBADF).description.hasPrefix("read failed: "))
  }
}
