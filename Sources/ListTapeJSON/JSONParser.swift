/// A strict RFC 8259 parser working directly on UTF-8 bytes.
///
/// Rejects trailing commas, comments, `NaN`, leading zeros, raw control characters, lone
/// surrogates, invalid UTF-8, duplicate keys and anything after the value. Nesting is capped so
/// hostile input cannot overflow the stack.
package struct JSONParser {
  /// The default cap on nested arrays and objects.
  package static let defaultMaxDepth = 512

  private let base: UnsafePointer<UInt8>
  private let count: Int
  private let maxDepth: Int
  private var index = 0
  private var depth = 0
  /// Values of the arrays being parsed, shared so each array is allocated once at its size.
  private var valueStack: [JSONValue] = []
  /// Members of the objects being parsed, shared for the same reason.
  private var memberStack: [JSONObject.Entry] = []
  /// Decoded bytes of a string that contains escapes.
  private var scratch: [UInt8] = []

  private init(base: UnsafePointer<UInt8>, count: Int, maxDepth: Int) {
    self.base = base
    self.count = count
    self.maxDepth = maxDepth
  }

  /// Parses one JSON text from UTF-8 bytes.
  package static func parse(
    _ bytes: UnsafeRawBufferPointer, maxDepth: Int = defaultMaxDepth
  ) throws(JSONParseError) -> JSONValue {
    guard let raw = bytes.baseAddress, bytes.count > 0 else {
      throw JSONParseError(column: 1, message: "expected value")
    }
    var parser = JSONParser(
      base: raw.assumingMemoryBound(to: UInt8.self), count: bytes.count, maxDepth: maxDepth)
    return try parser.parseDocument()
  }

  /// Parses one JSON text from UTF-8 bytes.
  package static func parse(
    _ bytes: [UInt8], maxDepth: Int = defaultMaxDepth
  ) throws(JSONParseError) -> JSONValue {
    try bytes.withUnsafeBytes { raw in parseCatching(raw, maxDepth: maxDepth) }.get()
  }

  /// Parses one JSON text from UTF-8 bytes.
  package static func parse(
    _ bytes: ArraySlice<UInt8>, maxDepth: Int = defaultMaxDepth
  ) throws(JSONParseError) -> JSONValue {
    try bytes.withUnsafeBytes { raw in parseCatching(raw, maxDepth: maxDepth) }.get()
  }

  /// Parses one JSON text from a string.
  package static func parse(
    _ text: String, maxDepth: Int = defaultMaxDepth
  ) throws(JSONParseError) -> JSONValue {
    var text = text
    return try text.withUTF8 { utf8 in
      parseCatching(UnsafeRawBufferPointer(utf8), maxDepth: maxDepth)
    }.get()
  }

  /// Parses one JSON text from a substring.
  package static func parse(
    _ text: Substring, maxDepth: Int = defaultMaxDepth
  ) throws(JSONParseError) -> JSONValue {
    var text = text
    return try text.withUTF8 { utf8 in
      parseCatching(UnsafeRawBufferPointer(utf8), maxDepth: maxDepth)
    }.get()
  }

  /// Bridges typed throws through the standard library's untyped `withUnsafe…` methods.
  private static func parseCatching(
    _ bytes: UnsafeRawBufferPointer, maxDepth: Int
  ) -> Result<JSONValue, JSONParseError> {
    do {
      return .success(try parse(bytes, maxDepth: maxDepth))
    } catch {
      return .failure(error)
    }
  }

  // MARK: - Grammar

  private mutating func parseDocument() throws(JSONParseError) -> JSONValue {
    skipWhitespace()
    let value = try parseValue()
    skipWhitespace()
    if index != count {
      throw fail("unexpected data after value")
    }
    return value
  }

  private mutating func parseValue() throws(JSONParseError) -> JSONValue {
    guard index < count else { throw fail("expected value") }
    switch base[index] {
    case ASCII.quote: return .string(try parseString())
    case ASCII.openBrace: return try parseObject()
    case ASCII.openBracket: return try parseArray()
    case ASCII.lowerT:
      try expectLiteral("true")
      return .bool(true)
    case ASCII.lowerF:
      try expectLiteral("false")
      return .bool(false)
    case ASCII.lowerN:
      try expectLiteral("null")
      return .null
    case ASCII.minus, ASCII.zero...ASCII.nine: return try parseNumber()
    default: throw fail("expected value")
    }
  }

  private mutating func expectLiteral(_ word: StaticString) throws(JSONParseError) {
    let length = word.utf8CodeUnitCount
    let matches =
      count - index >= length
      && word.withUTF8Buffer { expected in
        for offset in 0..<length where base[index + offset] != expected[offset] {
          return false
        }
        return true
      }
    guard matches else { throw fail("invalid literal, expected '\(word)'") }
    index += length
  }

  private mutating func enterContainer() throws(JSONParseError) {
    depth += 1
    if depth > maxDepth {
      throw fail("nesting deeper than \(maxDepth) levels")
    }
    index += 1
    skipWhitespace()
  }

  private mutating func parseArray() throws(JSONParseError) -> JSONValue {
    try enterContainer()
    if index < count && base[index] == ASCII.closeBracket {
      index += 1
      depth -= 1
      return .array([])
    }
    let stackBase = valueStack.count
    while true {
      let value = try parseValue()
      valueStack.append(value)
      skipWhitespace()
      guard index < count else { throw fail("expected ',' or ']' after array element") }
      let byte = base[index]
      if byte == ASCII.comma {
        index += 1
        skipWhitespace()
        if index < count && base[index] == ASCII.closeBracket {
          throw fail("trailing comma in array")
        }
      } else if byte == ASCII.closeBracket {
        index += 1
        break
      } else {
        throw fail("expected ',' or ']' after array element")
      }
    }
    let elements = Array(valueStack[stackBase...])
    valueStack.removeLast(valueStack.count - stackBase)
    depth -= 1
    return .array(elements)
  }

  private mutating func parseObject() throws(JSONParseError) -> JSONValue {
    try enterContainer()
    if index < count && base[index] == ASCII.closeBrace {
      index += 1
      depth -= 1
      return .object(JSONObject())
    }
    let stackBase = memberStack.count
    // Built only for large objects, where a linear duplicate scan would be quadratic.
    var seenKeys: Set<String>?
    var expectation = "expected string key or '}'"
    while true {
      guard index < count && base[index] == ASCII.quote else { throw fail(expectation) }
      let keyStart = index
      let key = try parseString()
      if var seen = seenKeys {
        seenKeys = nil  // keep the set uniquely referenced while inserting
        guard seen.insert(key).inserted else { throw duplicateKey(key, at: keyStart) }
        seenKeys = seen
      } else {
        for entry in memberStack[stackBase...] where entry.key == key {
          throw duplicateKey(key, at: keyStart)
        }
        if memberStack.count - stackBase >= 16 {
          var seen = Set(memberStack[stackBase...].map { $0.key })
          seen.insert(key)
          seenKeys = seen
        }
      }
      skipWhitespace()
      guard index < count && base[index] == ASCII.colon else {
        throw fail("expected ':' after key")
      }
      index += 1
      skipWhitespace()
      let value = try parseValue()
      memberStack.append(JSONObject.Entry(key: key, value: value))
      skipWhitespace()
      guard index < count else { throw fail("expected ',' or '}' after object member") }
      let byte = base[index]
      if byte == ASCII.comma {
        index += 1
        skipWhitespace()
        if index < count && base[index] == ASCII.closeBrace {
          throw fail("trailing comma in object")
        }
        expectation = "expected string key"
      } else if byte == ASCII.closeBrace {
        index += 1
        break
      } else {
        throw fail("expected ',' or '}' after object member")
      }
    }
    let entries = Array(memberStack[stackBase...])
    memberStack.removeLast(memberStack.count - stackBase)
    depth -= 1
    return .object(JSONObject(entries: entries))
  }

  // MARK: - Strings

  /// Parses a string starting at its opening quote.
  private mutating func parseString() throws(JSONParseError) -> String {
    let quote = index
    index += 1
    let start = index
    // Fast path: no escapes, so the string is a slice of the input.
    while index < count {
      let byte = base[index]
      if byte == ASCII.quote {
        let text = String(
          decoding: UnsafeBufferPointer(start: base + start, count: index - start), as: UTF8.self)
        index += 1
        return text
      } else if byte == ASCII.backslash {
        return try parseEscapedString(quote: quote, start: start)
      } else if byte < 0x20 {
        throw controlCharacter(byte)
      } else if byte < 0x80 {
        index += 1
      } else {
        try skipUTF8Sequence()
      }
    }
    throw fail("unterminated string", at: quote)
  }

  /// Continues a string at its first backslash, decoding into `scratch`.
  private mutating func parseEscapedString(
    quote: Int, start: Int
  ) throws(JSONParseError) -> String {
    scratch.removeAll(keepingCapacity: true)
    scratch.append(contentsOf: UnsafeBufferPointer(start: base + start, count: index - start))
    while index < count {
      let byte = base[index]
      if byte == ASCII.quote {
        index += 1
        return String(decoding: scratch, as: UTF8.self)
      } else if byte == ASCII.backslash {
        try parseEscape(quote: quote)
      } else if byte < 0x20 {
        throw controlCharacter(byte)
      } else if byte < 0x80 {
        scratch.append(byte)
        index += 1
      } else {
        let sequenceStart = index
        try skipUTF8Sequence()
        scratch.append(
          contentsOf: UnsafeBufferPointer(start: base + sequenceStart, count: index - sequenceStart)
        )
      }
    }
    throw fail("unterminated string", at: quote)
  }

  /// Decodes the escape at `index` (a backslash) into `scratch`.
  private mutating func parseEscape(quote: Int) throws(JSONParseError) {
    guard index + 1 < count else { throw fail("unterminated string", at: quote) }
    let decoded: UInt8
    switch base[index + 1] {
    case ASCII.quote: decoded = ASCII.quote
    case ASCII.backslash: decoded = ASCII.backslash
    case ASCII.slash: decoded = ASCII.slash
    case ASCII.lowerB: decoded = 0x08
    case ASCII.lowerF: decoded = 0x0C
    case ASCII.lowerN: decoded = 0x0A
    case ASCII.lowerR: decoded = 0x0D
    case ASCII.lowerT: decoded = 0x09
    case ASCII.lowerU:
      try parseUnicodeEscape()
      return
    case let other:
      throw fail("invalid escape \(Self.describe(byte: other, prefix: "\\"))")
    }
    scratch.append(decoded)
    index += 2
  }

  /// Decodes `\uXXXX` (and its low surrogate, when it is a high one) into `scratch`.
  private mutating func parseUnicodeEscape() throws(JSONParseError) {
    let escapeStart = index
    guard let unit = hex4(at: index + 2) else { throw fail("invalid \\u escape") }
    index += 6
    var scalarValue = UInt32(unit)
    if 0xD800...0xDBFF ~= unit {
      guard index + 1 < count, base[index] == ASCII.backslash, base[index + 1] == ASCII.lowerU,
        let low = hex4(at: index + 2), 0xDC00...0xDFFF ~= low
      else {
        throw fail("unpaired surrogate \\u\(Self.hex(unit))", at: escapeStart)
      }
      index += 6
      scalarValue = 0x10000 + ((UInt32(unit) - 0xD800) << 10) + (UInt32(low) - 0xDC00)
    } else if 0xDC00...0xDFFF ~= unit {
      throw fail("unpaired surrogate \\u\(Self.hex(unit))", at: escapeStart)
    }
    guard let scalar = Unicode.Scalar(scalarValue) else {
      throw fail("invalid \\u escape", at: escapeStart)
    }
    scratch.append(contentsOf: scalar.utf8)
  }

  private func hex4(at position: Int) -> UInt16? {
    guard position + 4 <= count else { return nil }
    var value: UInt16 = 0
    for offset in 0..<4 {
      let byte = base[position + offset]
      let digit: UInt8
      switch byte {
      case ASCII.zero...ASCII.nine: digit = byte - ASCII.zero
      case ASCII.lowerA...ASCII.lowerF: digit = byte - ASCII.lowerA + 10
      case ASCII.upperA...ASCII.upperF: digit = byte - ASCII.upperA + 10
      default: return nil
      }
      value = value << 4 | UInt16(digit)
    }
    return value
  }

  /// Validates one multi-byte UTF-8 sequence at `index` (RFC 3629: no overlongs, no
  /// surrogates, nothing above U+10FFFF) and steps over it.
  private mutating func skipUTF8Sequence() throws(JSONParseError) {
    guard let length = UTF8Validation.sequenceLength(base, index, count) else {
      throw fail("invalid UTF-8")
    }
    index += length
  }

  // MARK: - Numbers

  private mutating func parseNumber() throws(JSONParseError) -> JSONValue {
    let start = index
    let negative = base[index] == ASCII.minus
    if negative {
      index += 1
    }
    let digitsStart = index
    guard index < count, Self.isDigit(base[index]) else {
      throw fail("expected digit after '-'")
    }
    if base[index] == ASCII.zero {
      index += 1
      if index < count && Self.isDigit(base[index]) {
        throw fail("leading zeros are not allowed", at: index - 1)
      }
    } else {
      skipDigits()
    }
    let digitsEnd = index
    var isInteger = true
    if index < count && base[index] == ASCII.dot {
      isInteger = false
      index += 1
      guard index < count, Self.isDigit(base[index]) else { throw fail("expected digit after '.'") }
      skipDigits()
    }
    if index < count && (base[index] == ASCII.lowerE || base[index] == ASCII.upperE) {
      isInteger = false
      index += 1
      if index < count && (base[index] == ASCII.plus || base[index] == ASCII.minus) {
        index += 1
      }
      guard index < count, Self.isDigit(base[index]) else {
        throw fail("expected digit in exponent")
      }
      skipDigits()
    }
    if isInteger, let value = integer(digitsStart..<digitsEnd, negative: negative) {
      return .int(value)
    }
    let text = String(
      decoding: UnsafeBufferPointer(start: base + start, count: index - start), as: UTF8.self)
    guard let value = Double(text), value.isFinite else {
      throw fail("number out of range", at: start)
    }
    return .double(value)
  }

  /// The digits as an `Int64`, or `nil` when they do not fit.
  private func integer(_ digits: Range<Int>, negative: Bool) -> Int64? {
    if digits.count <= 18 {
      var value: Int64 = 0
      for position in digits {
        value = value &* 10 &+ Int64(base[position] &- ASCII.zero)
      }
      return negative ? -value : value
    }
    var magnitude: UInt64 = 0
    for position in digits {
      let (product, overflow1) = magnitude.multipliedReportingOverflow(by: 10)
      let (sum, overflow2) = product.addingReportingOverflow(UInt64(base[position] &- ASCII.zero))
      if overflow1 || overflow2 { return nil }
      magnitude = sum
    }
    if negative {
      guard magnitude <= UInt64(Int64.max) + 1 else { return nil }
      return Int64(bitPattern: 0 &- magnitude)
    }
    guard magnitude <= UInt64(Int64.max) else { return nil }
    return Int64(magnitude)
  }

  private mutating func skipDigits() {
    while index < count && Self.isDigit(base[index]) {
      index += 1
    }
  }

  private static func isDigit(_ byte: UInt8) -> Bool {
    byte &- ASCII.zero < 10
  }

  // MARK: - Helpers

  private mutating func skipWhitespace() {
    while index < count {
      switch base[index] {
      case ASCII.space, ASCII.newline, ASCII.carriageReturn, ASCII.tab: index += 1
      default: return
      }
    }
  }

  private func fail(_ message: String, at position: Int? = nil) -> JSONParseError {
    JSONParseError(column: (position ?? index) + 1, message: message)
  }

  private func controlCharacter(_ byte: UInt8) -> JSONParseError {
    fail("control character U+\(Self.hex(UInt16(byte))) in string")
  }

  private func duplicateKey(_ key: String, at position: Int) -> JSONParseError {
    var writer = JSONWriter()
    writer.string(key)
    return fail("duplicate key \(writer.text)", at: position)
  }

  private static func hex(_ value: UInt16) -> String {
    let digits = String(value, radix: 16, uppercase: true)
    return String(repeating: "0", count: max(0, 4 - digits.count)) + digits
  }

  /// `'x'` for printable ASCII, else `byte 0xNN`, for messages.
  static func describe(byte: UInt8, prefix: String = "") -> String {
    if byte >= 0x21 && byte < 0x7F {
      return "'\(prefix)\(Character(Unicode.Scalar(byte)))'"
    }
    return "byte 0x\(String(hex(UInt16(byte)).dropFirst(2)))"
  }
}

/// Byte values of the ASCII characters JSON syntax uses.
enum ASCII {
  static let tab = UInt8(ascii: "\t")
  static let newline = UInt8(ascii: "\n")
  static let carriageReturn = UInt8(ascii: "\r")
  static let space = UInt8(ascii: " ")
  static let quote = UInt8(ascii: "\"")
  static let plus = UInt8(ascii: "+")
  static let comma = UInt8(ascii: ",")
  static let minus = UInt8(ascii: "-")
  static let dot = UInt8(ascii: ".")
  static let slash = UInt8(ascii: "/")
  static let zero = UInt8(ascii: "0")
  static let nine = UInt8(ascii: "9")
  static let colon = UInt8(ascii: ":")
  static let upperA = UInt8(ascii: "A")
  static let upperE = UInt8(ascii: "E")
  static let upperF = UInt8(ascii: "F")
  static let openBracket = UInt8(ascii: "[")
  static let backslash = UInt8(ascii: "\\")
  static let closeBracket = UInt8(ascii: "]")
  static let lowerA = UInt8(ascii: "a")
  static let lowerB = UInt8(ascii: "b")
  static let lowerE = UInt8(ascii: "e")
  static let lowerF = UInt8(ascii: "f")
  static let lowerN = UInt8(ascii: "n")
  static let lowerR = UInt8(ascii: "r")
  static let lowerT = UInt8(ascii: "t")
  static let lowerU = UInt8(ascii: "u")
  static let openBrace = UInt8(ascii: "{")
  static let closeBrace = UInt8(ascii: "}")
}
