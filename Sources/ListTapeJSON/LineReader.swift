#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Splits JSON Lines input into lines, reading a file descriptor in large chunks.
///
/// Lines come without their `\n` (and without a `\r` before it); a last line without `\n`
/// is still a line. A line longer than `maxLineLength` is reported as `.tooLong` and skipped
/// without buffering it, so the reader never holds more than about `maxLineLength` plus one
/// chunk. The reader does not own or close the descriptor.
package struct LineReader {
  /// One line of input.
  package enum Line: Equatable, Sendable {
    /// A line's bytes, sharing storage with the reader's buffer until the next read.
    case text(number: Int, bytes: ArraySlice<UInt8>)
    /// A line longer than the cap; `length` counts its bytes before the `\n`.
    case tooLong(number: Int, length: Int)

    /// The 1-based line number.
    package var number: Int {
      switch self {
      case .text(let number, _), .tooLong(let number, _): return number
      }
    }
  }

  /// The default read size.
  package static let defaultChunkSize = 256 * 1024
  /// The default cap on a line's length in bytes.
  package static let defaultMaxLineLength = 16 * 1024 * 1024

  private enum Source {
    case descriptor(Int32)
    case memory([UInt8], offset: Int)
  }

  private var source: Source
  private let chunkSize: Int
  private var splitter: LineSplitter
  /// Where each read lands before the splitter takes it.
  private var chunk: [UInt8]
  private var atEndOfInput = false

  /// A reader of `fileDescriptor`, which stays open and owned by the caller.
  package init(
    fileDescriptor: Int32, chunkSize: Int = defaultChunkSize,
    maxLineLength: Int = defaultMaxLineLength
  ) {
    self.init(source: .descriptor(fileDescriptor), chunkSize: chunkSize, maxLength: maxLineLength)
  }

  /// A reader of bytes in memory, fed through the same chunked path (for tests).
  package init(
    bytes: [UInt8], chunkSize: Int = defaultChunkSize, maxLineLength: Int = defaultMaxLineLength
  ) {
    self.init(source: .memory(bytes, offset: 0), chunkSize: chunkSize, maxLength: maxLineLength)
  }

  private init(source: Source, chunkSize: Int, maxLength: Int) {
    self.source = source
    self.chunkSize = max(1, chunkSize)
    self.splitter = LineSplitter(maxLineLength: maxLength)
    self.chunk = [UInt8](repeating: 0, count: max(1, chunkSize))
  }

  /// The next line, or `nil` at the end of input.
  ///
  /// Throws only for read errors; after an over-long line, reading goes on with the next.
  package mutating func next() throws(LineReaderError) -> Line? {
    while true {
      if let line = splitter.next() { return line }
      if atEndOfInput { return splitter.finish() }
      let count = try readChunk()
      if count == 0 {
        atEndOfInput = true
      } else {
        chunk.withUnsafeBytes { splitter.append(UnsafeRawBufferPointer(rebasing: $0[..<count])) }
      }
    }
  }

  /// The next line if one is already buffered (no read, so no wait), else nil; `next()`
  /// then reads on.
  package mutating func nextBuffered() -> Line? {
    if let line = splitter.next() { return line }
    return atEndOfInput ? splitter.finish() : nil
  }

  /// The buffered bytes, so tests can check that long lines stay bounded.
  var bufferSize: Int { splitter.bufferSize + chunk.count }

  private mutating func readChunk() throws(LineReaderError) -> Int {
    switch source {
    case .memory(let bytes, let position):
      let taken = min(chunkSize, bytes.count - position)
      chunk.replaceSubrange(0..<taken, with: bytes[position..<(position + taken)])
      source = .memory(bytes, offset: position + taken)
      return taken
    case .descriptor(let descriptor):
      while true {
        let result = chunk.withUnsafeMutableBytes { raw -> Int in
          guard let base = raw.baseAddress else { return 0 }
          return read(descriptor, base, raw.count)
        }
        if result >= 0 {
          return result
        }
        let code = errno
        if code != EINTR {
          throw LineReaderError(code: code)
        }
      }
    }
  }
}

/// A failed `read(2)`.
package struct LineReaderError: Error, Equatable, Sendable, CustomStringConvertible {
  /// The `errno` value.
  package var code: Int32
  /// The system's text for `code`.
  package var message: String

  /// An error for `errno` value `code`, with the system's text for it.
  package init(code: Int32) {
    self.code = code
    if let text = strerror(code) {
      message = String(cString: text)
    } else {
      message = "error \(code)"
    }
  }

  /// `read failed: <system text>`.
  package var description: String {
    "read failed: \(message)"
  }
}
