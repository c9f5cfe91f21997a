#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Splits bytes that arrive in pieces (a descriptor's or a socket's reads) into lines: the
/// one line-splitting rule of JSON Lines input, used by `LineReader` and by socket readers.
///
/// Lines come without `\n` (and without a `\r` before it); a line over the cap is reported as
/// `.tooLong` and skipped without being buffered, so memory stays near the cap plus one read.
/// What is left when the stream ends is handed out by `finish()`.
package struct LineSplitter {
  package let maxLineLength: Int
  private var buffer: [UInt8] = []
  /// Start of the current line in `buffer`.
  private var start = 0
  /// Where the newline search resumes, so a long line is scanned once.
  private var scanFrom = 0
  private var skipping = false
  private var skippedLength = 0
  /// Lines handed out so far (the next one is `lines + 1`).
  package private(set) var lines = 0

  package init(maxLineLength: Int = LineReader.defaultMaxLineLength) {
    self.maxLineLength = max(0, maxLineLength)
  }

  /// Appends bytes just read.
  package mutating func append(_ bytes: UnsafeRawBufferPointer) {
    if start > 0 && start >= buffer.count / 2 {
      buffer.removeSubrange(..<start)
      scanFrom -= start
      start = 0
    }
    buffer.append(contentsOf: bytes)
  }

  /// The next complete line, or nil until more bytes arrive.
  package mutating func next() -> LineReader.Line? {
    if let newline = findNewline() {
      return take(upTo: newline, consuming: newline + 1)
    }
    scanFrom = buffer.count
    // One byte over the cap is allowed for a `\r` before the newline.
    if skipping || buffer.count - start > maxLineLength + 1 {
      skipping = true
      skippedLength += buffer.count - start
      buffer.removeAll(keepingCapacity: false)
      start = 0
      scanFrom = 0
    }
    return nil
  }

  /// Bytes of the unfinished line, a skipped over-long part included.
  package var pendingLength: Int { skippedLength + buffer.count - start }

  /// The unfinished last line once the stream has ended (a file's last line without `\n`),
  /// or nil when nothing is pending.
  package mutating func finish() -> LineReader.Line? {
    guard skipping || start < buffer.count else { return nil }
    return take(upTo: buffer.count, consuming: buffer.count)
  }

  private mutating func take(upTo lineEnd: Int, consuming next: Int) -> LineReader.Line {
    let lineStart = start
    start = next
    scanFrom = next
    lines += 1
    if skipping {
      let length = skippedLength + (lineEnd - lineStart)
      skipping = false
      skippedLength = 0
      return .tooLong(number: lines, length: length)
    }
    var contentEnd = lineEnd
    if contentEnd > lineStart && buffer[contentEnd - 1] == ASCII.carriageReturn {
      contentEnd -= 1
    }
    if contentEnd - lineStart > maxLineLength {
      return .tooLong(number: lines, length: lineEnd - lineStart)
    }
    return .text(number: lines, bytes: buffer[lineStart..<contentEnd])
  }

  /// The buffer's size in bytes, so tests can check that long lines stay bounded.
  var bufferSize: Int { buffer.count }

  private func findNewline() -> Int? {
    guard scanFrom < buffer.count else { return nil }
    return buffer.withUnsafeBytes { raw -> Int? in
      guard let base = raw.baseAddress,
        let hit = memchr(base + scanFrom, Int32(ASCII.newline), raw.count - scanFrom)
      else { return nil }
      return base.distance(to: UnsafeRawPointer(hit))
    }
  }
}
