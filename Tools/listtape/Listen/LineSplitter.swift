import ListTapeJSON

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Splits bytes that arrive in pieces (a socket's reads) into complete lines, as
/// `LineReader` does for a descriptor it may block on: lines come without `\n` (and without
/// a `\r` before it), a line over the cap is reported as `.tooLong` and skipped without being
/// buffered, and what is left when the stream ends is handed back by `finish()`, never as a
/// line: a stream that stops mid-line did not finish that line.
struct LineSplitter {
  let maxLineLength: Int
  private var buffer: [UInt8] = []
  /// Start of the current line in `buffer`.
  private var start = 0
  /// Where the newline search resumes, so a long line is scanned once.
  private var scanFrom = 0
  private var skipping = false
  private var skippedLength = 0
  /// Lines handed out so far (the next one is `lines + 1`).
  private(set) var lines = 0

  init(maxLineLength: Int = LineReader.defaultMaxLineLength) {
    self.maxLineLength = max(0, maxLineLength)
  }

  /// Appends bytes just read.
  mutating func append(_ bytes: UnsafeRawBufferPointer) {
    if start > 0 && start >= buffer.count / 2 {
      buffer.removeSubrange(..<start)
      scanFrom -= start
      start = 0
    }
    buffer.append(contentsOf: bytes)
  }

  /// The next complete line, or nil until more bytes arrive.
  mutating func next() -> LineReader.Line? {
    if let newline = findNewline() {
      let lineStart = start
      start = newline + 1
      scanFrom = start
      lines += 1
      if skipping {
        let length = skippedLength + (newline - lineStart)
        skipping = false
        skippedLength = 0
        return .tooLong(number: lines, length: length)
      }
      var end = newline
      if end > lineStart && buffer[end - 1] == 0x0D { end -= 1 }
      if end - lineStart > maxLineLength {
        return .tooLong(number: lines, length: newline - lineStart)
      }
      return .text(number: lines, bytes: buffer[lineStart..<end])
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

  /// What the stream left unfinished when it ended: the number the line would have had and
  /// its length so far, or nil when nothing (or only blanks) was pending.
  mutating func finish() -> (number: Int, length: Int)? {
    let rest = buffer[start...]
    defer {
      buffer.removeAll()
      start = 0
      scanFrom = 0
      skipping = false
      skippedLength = 0
    }
    if !skipping && LineRecorder.isBlank(rest) { return nil }
    return (lines + 1, skippedLength + rest.count)
  }

  private func findNewline() -> Int? {
    guard scanFrom < buffer.count else { return nil }
    return buffer.withUnsafeBytes { raw -> Int? in
      guard let base = raw.baseAddress,
        let hit = memchr(base + scanFrom, 0x0A, raw.count - scanFrom)
      else { return nil }
      return base.distance(to: UnsafeRawPointer(hit))
    }
  }
}
