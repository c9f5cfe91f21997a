/// A streaming JSON writer that appends UTF-8 to a byte buffer.
///
/// Commas and colons are placed for you; call the methods in document order
/// (`beginObject`, `key`, value, `key`, value, `endObject`). Misordered calls produce
/// invalid JSON rather than trapping. With `pretty`, containers are indented by two spaces.
package struct JSONWriter: Sendable {
  /// The JSON written so far, as UTF-8.
  package private(set) var bytes: [UInt8]
  /// Whether to indent nested containers with two spaces per level.
  package let pretty: Bool
  /// Whether the next value or key must be preceded by a comma.
  private var needsComma = false
  /// Whether a key was just written, so the next value follows its colon directly.
  private var afterKey = false
  private var depth = 0

  /// A writer with an empty buffer.
  package init(pretty: Bool = false, reservingCapacity capacity: Int = 0) {
    self.pretty = pretty
    bytes = []
    bytes.reserveCapacity(capacity)
  }

  /// The JSON written so far, as a string.
  package var text: String {
    String(decoding: bytes, as: UTF8.self)
  }

  /// Empties the buffer (keeping its capacity) to write the next document.
  package mutating func reset() {
    bytes.removeAll(keepingCapacity: true)
    needsComma = false
    afterKey = false
    depth = 0
  }

  /// Ends a JSON Lines record: appends `\n` so the next value starts a new document.
  package mutating func endLine() {
    bytes.append(ASCII.newline)
    needsComma = false
    afterKey = false
    depth = 0
  }

  /// Writes `null`.
  package mutating func null() {
    beforeValue()
    appendASCII("null")
    needsComma = true
  }

  /// Writes `true` or `false`.
  package mutating func bool(_ value: Bool) {
    beforeValue()
    appendASCII(value ? "true" : "false")
    needsComma = true
  }

  /// Writes an integer.
  package mutating func int(_ value: Int64) {
    beforeValue()
    DecimalText.append(value, to: &bytes)
    needsComma = true
  }

  /// Writes an integer.
  package mutating func int(_ value: Int) {
    int(Int64(value))
  }

  /// Writes a float in its shortest round-tripping form; infinities and NaN, which JSON
  /// cannot express, are written as `null`.
  package mutating func double(_ value: Double) {
    guard value.isFinite else {
      null()
      return
    }
    beforeValue()
    // Swift's description is the shortest text that parses back to the same value, and it
    // always has a '.' or an exponent, so it reads back as a float.
    bytes.append(contentsOf: value.description.utf8)
    needsComma = true
  }

  /// Writes a string, escaping `"`, `\` and control characters.
  package mutating func string(_ value: String) {
    beforeValue()
    appendQuoted(value)
    needsComma = true
  }

  /// Writes a string given as UTF-8 bytes (valid UTF-8: the caller checked it).
  package mutating func string(utf8: UnsafeBufferPointer<UInt8>) {
    beforeValue()
    appendQuoted(utf8)
    needsComma = true
  }

  /// Writes an object key given as UTF-8 bytes; the next call writes its value.
  package mutating func key(utf8: UnsafeBufferPointer<UInt8>) {
    beforeValue()
    appendQuoted(utf8)
    endKey()
  }

  /// Writes an object key that needs no escaping (a name of the format, written once per
  /// item of a large document); the next call writes its value.
  package mutating func key(plain name: StaticString) {
    beforeValue()
    bytes.append(ASCII.quote)
    name.withUTF8Buffer { bytes.append(contentsOf: $0) }
    bytes.append(ASCII.quote)
    endKey()
  }

  /// Makes room for `n` more bytes (a caller about to write a large document).
  package mutating func reserve(_ n: Int) {
    bytes.reserveCapacity(bytes.count &+ n)
  }

  /// Hands the bytes written so far to `sink` and forgets them, keeping the document's
  /// place (a large document streamed out in pieces, so its buffer stays small).
  package mutating func drain(_ sink: ([UInt8]) -> Void) {
    sink(bytes)
    bytes.removeAll(keepingCapacity: true)
  }

  /// Writes `json`, one JSON value already written (a quoted string), as the next value.
  package mutating func value(json: UnsafeRawBufferPointer) {
    beforeValue()
    bytes.append(contentsOf: json)
    needsComma = true
  }

  /// Appends bytes the caller wrote as whole values of the current container, separators
  /// included (compact documents only); the container then counts as non-empty.
  package mutating func appendFragment(_ raw: UnsafeRawBufferPointer) {
    guard !raw.isEmpty else { return }
    bytes.append(contentsOf: raw)
    needsComma = true
  }

  /// Appends `utf8` as a quoted JSON string inside a fragment (no separator before it).
  package mutating func appendQuotedFragment(_ utf8: UnsafeBufferPointer<UInt8>) {
    appendQuoted(utf8)
    needsComma = true
  }

  /// Writes an object key; the next call writes its value.
  package mutating func key(_ name: String) {
    beforeValue()
    appendQuoted(name)
    endKey()
  }

  /// Opens an object.
  package mutating func beginObject() {
    open(ASCII.openBrace)
  }

  /// Closes the innermost object.
  package mutating func endObject() {
    close(ASCII.closeBrace)
  }

  /// Opens an array.
  package mutating func beginArray() {
    open(ASCII.openBracket)
  }

  /// Closes the innermost array.
  package mutating func endArray() {
    close(ASCII.closeBracket)
  }

  /// Writes a whole value, keeping object key order.
  package mutating func value(_ value: JSONValue) {
    switch value {
    case .null: null()
    case .bool(let flag): bool(flag)
    case .int(let number): int(number)
    case .double(let number): double(number)
    case .string(let text): string(text)
    case .array(let elements):
      beginArray()
      for element in elements {
        self.value(element)
      }
      endArray()
    case .object(let object):
      beginObject()
      for entry in object.entries {
        key(entry.key)
        self.value(entry.value)
      }
      endObject()
    }
  }

  // MARK: - Private

  /// After a key's quoted name: the colon (and a space when pretty); its value comes next.
  private mutating func endKey() {
    bytes.append(ASCII.colon)
    if pretty {
      bytes.append(ASCII.space)
    }
    needsComma = false
    afterKey = true
  }

  private mutating func beforeValue() {
    if afterKey {
      afterKey = false
      return
    }
    if needsComma {
      bytes.append(ASCII.comma)
    }
    if pretty && depth > 0 {
      newlineAndIndent()
    }
  }

  private mutating func open(_ bracket: UInt8) {
    beforeValue()
    bytes.append(bracket)
    depth += 1
    needsComma = false
  }

  private mutating func close(_ bracket: UInt8) {
    depth -= 1
    // `needsComma` is false only when nothing was written since the opening bracket.
    if pretty && needsComma {
      newlineAndIndent()
    }
    bytes.append(bracket)
    needsComma = true
    afterKey = false
  }

  private mutating func newlineAndIndent() {
    bytes.append(ASCII.newline)
    for _ in 0..<(2 * max(depth, 0)) {
      bytes.append(ASCII.space)
    }
  }

  private mutating func appendASCII(_ text: StaticString) {
    text.withUTF8Buffer { bytes.append(contentsOf: $0) }
  }

  private mutating func appendQuoted(_ value: String) {
    var value = value
    value.withUTF8 { appendQuoted($0) }
  }

  private mutating func appendQuoted(_ utf8: UnsafeBufferPointer<UInt8>) {
    bytes.append(ASCII.quote)
    if JSONEscape.isPlain(utf8) {
      bytes.append(contentsOf: utf8)
      bytes.append(ASCII.quote)
      return
    }
    var runStart = 0
    for position in utf8.indices {
      let byte = utf8[position]
      guard byte < 0x20 || byte == ASCII.quote || byte == ASCII.backslash else { continue }
      bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[runStart..<position]))
      appendEscape(byte)
      runStart = position + 1
    }
    bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[runStart...]))
    bytes.append(ASCII.quote)
  }

  private mutating func appendEscape(_ byte: UInt8) {
    bytes.append(ASCII.backslash)
    switch byte {
    case ASCII.quote, ASCII.backslash: bytes.append(byte)
    case ASCII.newline: bytes.append(ASCII.lowerN)
    case ASCII.carriageReturn: bytes.append(ASCII.lowerR)
    case ASCII.tab: bytes.append(ASCII.lowerT)
    case 0x08: bytes.append(ASCII.lowerB)
    case 0x0C: bytes.append(ASCII.lowerF)
    default:
      let hexDigits: StaticString = "0123456789abcdef"
      bytes.append(ASCII.lowerU)
      bytes.append(ASCII.zero)
      bytes.append(ASCII.zero)
      hexDigits.withUTF8Buffer { digits in
        bytes.append(digits[Int(byte >> 4)])
        bytes.append(digits[Int(byte & 0x0F)])
      }
    }
  }
}

extension JSONValue {
  /// The value as JSON text: compact by default, or indented by two spaces with `pretty`.
  ///
  /// Object keys keep their order.
  package func serialized(pretty: Bool = false) -> String {
    var writer = JSONWriter(pretty: pretty)
    writer.value(self)
    return writer.text
  }
}

/// An integer's decimal digits as ASCII appended to bytes: the JSON writer's way, and any
/// printer's that builds its text as bytes.
package enum DecimalText {
  /// Appends `value` in decimal, a minus sign first when it is negative.
  package static func append(_ value: Int64, to bytes: inout [UInt8]) {
    if value < 0 { bytes.append(ASCII.minus) }
    append(value.magnitude, to: &bytes)
  }

  /// Appends `value` in decimal (at most 20 digits).
  package static func append(_ value: UInt64, to bytes: inout [UInt8]) {
    var digits: (UInt64, UInt64, UInt64) = (0, 0, 0)
    var n = 0
    var v = value
    withUnsafeMutableBytes(of: &digits) { d in
      repeat {
        d[23 &- n] = ASCII.zero &+ UInt8(truncatingIfNeeded: v % 10)
        v /= 10
        n &+= 1
      } while v > 0
      bytes.append(contentsOf: UnsafeRawBufferPointer(rebasing: d[(24 &- n)...]))
    }
  }
}
