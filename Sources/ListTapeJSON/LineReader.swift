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
public struct LineReader {
  /// One line of input.
  public enum Line: Equatable, Sendable {
    /// A line's bytes, sharing storage with the reader's buffer until the next read.
    case text(number: Int, bytes: ArraySlice<UInt8>)
    /// A line longer than the cap; `length` counts its bytes before the `\n`.
    case tooLong(number: Int, length: Int)

    /// The 1-based line number.
    public var number: Int {
      switch self {
      case .text(let number, _), .tooLong(let number, _): return number
      }
    }
  }

  /// The default read size.
  public static let defaultChunkSize = 256 * 1024
  /// The default cap on a line's length in bytes.
  public static let defaultMaxLineLength = 16 * 1024 * 1024

  private enum Source {
    case descriptor(Int32)
    case memory([UInt8], offset: Int)
  }

  private var source: Source
  private let chunkSize: Int
  private let maxLineLength: Int
  private var buffer: [UInt8] = []
  /// Start of the unconsumed bytes in `buffer`.
  private var start = 0
  /// End of the valid bytes in `buffer`.
  private var end = 0
  /// Where the newline search resumes, so a long line is scanned once.
  private var scanFrom = 0
  private var atEndOfInput = false
  /// Whether the current line went over the cap and is being skipped.
  private var skipping = false
  private var skippedLength = 0
  private var lineNumber = 0

  /// A reader of `fileDescriptor`, which stays open and owned by the caller.
  public init(
    fileDescriptor: Int32, chunkSize: Int = defaultChunkSize,
    maxLineLength: Int = defaultMaxLineLength
  ) {
    self.init(source: .descriptor(fileDescriptor), chunkSize: chunkSize, maxLength: maxLineLength)
  }

  /// A reader of bytes in memory, fed through the same chunked path (for tests).
  public init(
    bytes: [UInt8], chunkSize: Int = defaultChunkSize, maxLineLength: Int = defaultMaxLineLength
  ) {
    self.init(source: .memory(bytes, offset: 0), chunkSize: chunkSize, maxLength: maxLineLength)
  }

  private init(source: Source, chunkSize: Int, maxLength: Int) {
    self.source = source
    self.chunkSize = max(1, chunkSize)
    self.maxLineLength = max(0, maxLength)
  }

  /// The next line, or `nil` at the end of input.
  ///
  /// Throws only for read errors; after an over-long line, reading goes on with the next.
  public mutating func next() throws(LineReaderError) -> Line? {
    while true {
      if let newline = findNewline() {
        return takeLine(upTo: newline, consuming: newline + 1)
      }
      scanFrom = end
      // Allow one byte over the cap for a `\r` that may precede the newline.
      if skipping || end - start > maxLineLength + 1 {
        skipping = true
        skippedLength += end - start
        start = end
        scanFrom = end
      }
      if atEndOfInput {
        guard skipping || start < end else { return nil }
        return takeLine(upTo: end, consuming: end)
      }
      try refill()
    }
  }

  private mutating func takeLine(upTo lineEnd: Int, consuming next: Int) -> Line {
    let lineStart = start
    start = next
    scanFrom = next
    lineNumber += 1
    if skipping {
      let length = skippedLength + (lineEnd - lineStart)
      skipping = false
      skippedLength = 0
      return .tooLong(number: lineNumber, length: length)
    }
    var contentEnd = lineEnd
    if contentEnd > lineStart && buffer[contentEnd - 1] == ASCII.carriageReturn {
      contentEnd -= 1
    }
    if contentEnd - lineStart > maxLineLength {
      return .tooLong(number: lineNumber, length: lineEnd - lineStart)
    }
    return .text(number: lineNumber, bytes: buffer[lineStart..<contentEnd])
  }

  /// The buffer's size in bytes, so tests can check that long lines stay bounded.
  var bufferSize: Int { buffer.count }

  private func findNewline() -> Int? {
    guard scanFrom < end else { return nil }
    return buffer.withUnsafeBytes { raw -> Int? in
      guard let base = raw.baseAddress,
        let hit = memchr(base + scanFrom, Int32(ASCII.newline), end - scanFrom)
      else { return nil }
      return base.distance(to: UnsafeRawPointer(hit))
    }
  }

  /// Reads one more chunk after the pending bytes, compacting or growing the buffer first.
  private mutating func refill() throws(LineReaderError) {
    if buffer.count - end < chunkSize && start > 0 {
      let pending = end - start
      let from = start
      buffer.withUnsafeMutableBytes { raw in
        guard let base = raw.baseAddress else { return }
        _ = memmove(base, base + from, pending)
      }
      start = 0
      end = pending
      scanFrom -= from
    }
    if buffer.count - end < chunkSize {
      // Grow to what is needed, not by doubling, so a capped line stays near the cap.
      let needed = end + chunkSize
      buffer.reserveCapacity(needed)
      buffer.append(contentsOf: repeatElement(0, count: needed - buffer.count))
    }
    let count = try readChunk(into: end, count: chunkSize)
    if count == 0 {
      atEndOfInput = true
    }
    end += count
  }

  private mutating func readChunk(into offset: Int, count: Int) throws(LineReaderError) -> Int {
    switch source {
    case .memory(let bytes, let position):
      let taken = min(count, bytes.count - position)
      buffer.replaceSubrange(offset..<(offset + taken), with: bytes[position..<(position + taken)])
      source = .memory(bytes, offset: position + taken)
      return taken
    case .descriptor(let descriptor):
      while true {
        let result = buffer.withUnsafeMutableBytes { raw -> Int in
          guard let base = raw.baseAddress else { return 0 }
          return read(descriptor, base + offset, count)
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
public struct LineReaderError: Error, Equatable, Sendable, CustomStringConvertible {
  /// The `errno` value.
  public var code: Int32
  /// The system's text for `code`.
  public var message: String

  /// An error for `errno` value `code`, with the system's text for it.
  public init(code: Int32) {
    self.code = code
    if let text = strerror(code) {
      message = String(cString: text)
    } else {
      message = "error \(code)"
    }
  }

  /// `read failed: <system text>`.
  public var description: String {
    "read failed: \(message)"
  }
}
