import Testing

@testable import ListTapeJSON

@Suite struct ParserValueTests {
  @Test func scalars() throws {
    #expect(try JSONParser.parse("null") == .null)
    #expect(try JSONParser.parse("true") == .bool(true))
    #expect(try JSONParser.parse(" false ") == .bool(false))
    #expect(try JSONParser.parse("42") == .int(42))
    #expect(try JSONParser.parse("-7") == .int(-7))
    #expect(try JSONParser.parse("2.5") == .double(2.5))
    #expect(try JSONParser.parse("\"hi\"") == .string("hi"))
  }

  @Test func containers() throws {
    let value = try JSONParser.parse(
      #" { "op" : "expand", "items": ["a", "b"], "t": 1764412345123, "e": {}, "z": [] } "#)
    let object = try #require(value.objectValue)
    #expect(object.keys == ["op", "items", "t", "e", "z"])
    #expect(object["op"] == .string("expand"))
    #expect(object["items"] == .array([.string("a"), .string("b")]))
    #expect(object["t"] == .int(1_764_412_345_123))
    #expect(object["e"] == .object(JSONObject()))
    #expect(object["z"] == .array([]))
    #expect(object["missing"] == nil)
    #expect(value["op"]?.stringValue == "expand")
    #expect(object.map(\.key) == object.keys)
  }

  @Test func keyOrderIsPreservedAndMatters() throws {
    let ab = try JSONParser.parse(#"{"a":1,"b":2}"#)
    let ba = try JSONParser.parse(#"{"b":2,"a":1}"#)
    #expect(ab != ba)
    #expect(ab.serialized() == #"{"a":1,"b":2}"#)
  }

  @Test func inputForms() throws {
    let text = #"{"k":[1,2.0]}"#
    let expected: JSONValue = ["k": [1, 2.0]]
    #expect(try JSONParser.parse(text) == expected)
    #expect(try JSONParser.parse(Substring("xx" + text).dropFirst(2)) == expected)
    #expect(try JSONParser.parse(Array(text.utf8)) == expected)
    #expect(try JSONParser.parse(Array(("  " + text).utf8)[2...]) == expected)
  }

  @Test(arguments: [
    ("0", JSONValue.int(0)),
    ("-0", .int(0)),
    ("1", .int(1)),
    ("1.0", .double(1)),
    ("1e3", .double(1000)),
    ("1E-2", .double(0.01)),
    ("-0.0", .double(-0.0)),
    ("0.1", .double(0.1)),
    ("123456789012345678", .int(123_456_789_012_345_678)),
    ("1234567890123456789", .int(1_234_567_890_123_456_789)),
    ("9223372036854775807", .int(.max)),
    ("-9223372036854775808", .int(.min)),
    ("9223372036854775808", .double(9_223_372_036_854_775_808)),
    ("-9223372036854775809", .double(-9.223_372_036_854_775_808e18)),
    ("100000000000000000000", .double(1e20)),
    ("1e-400", .double(0)),
  ])
  func numbers(text: String, expected: JSONValue) throws {
    #expect(try JSONParser.parse(text) == expected)
  }

  @Test func integersAndFloatsAreDistinct() throws {
    #expect(try JSONParser.parse("1").intValue == 1)
    #expect(try JSONParser.parse("1.0").intValue == nil)
    #expect(try JSONParser.parse("1e3").intValue == nil)
    #expect(try JSONParser.parse("9223372036854775808").intValue == nil)
  }

  @Test(arguments: [
    (#""\"\\\/\b\f\n\r\t""#, "\"\\/\u{8}\u{C}\n\r\t"),
    (#""\u00e9\u00E9""#, "éé"),
    (#""\uD83D\uDE00""#, "😀"),
    (#""\u0000""#, "\u{0}"),
    (#""a\nb€😀c""#, "a\nb€😀c"),
    (#""é€😀""#, "é€😀"),
    (#""""#, ""),
  ])
  func strings(text: String, expected: String) throws {
    #expect(try JSONParser.parse(text) == .string(expected))
  }

  @Test func depthCap() throws {
    let ok = String(repeating: "[", count: 512) + String(repeating: "]", count: 512)
    #expect(try JSONParser.parse(ok).arrayValue != nil)
    let deep = String(repeating: "[", count: 513) + String(repeating: "]", count: 513)
    #expect(throws: JSONParseError(column: 513, message: "nesting deeper than 512 levels")) {
      try JSONParser.parse(deep)
    }
    let hostile = String(repeating: #"{"a":["#, count: 100_000)
    #expect(throws: JSONParseError.self) { try JSONParser.parse(hostile) }
    #expect(throws: JSONParseError(column: 3, message: "nesting deeper than 2 levels")) {
      try JSONParser.parse("[[[]]]", maxDepth: 2)
    }
  }

  @Test func duplicateKeysInLargeObjects() throws {
    let members = (0..<40).map { #""k\#($0)":\#($0)"# }
    let unique = "{" + members.joined(separator: ",") + "}"
    #expect(try JSONParser.parse(unique).objectValue?.count == 40)
    let repeated = "{" + (members + [#""k3":0"#]).joined(separator: ",") + "}"
    let column = repeated.utf8.count - 6
    #expect(throws: JSONParseError(column: column, message: #"duplicate key "k3""#)) {
      try JSONParser.parse(repeated)
    }
  }
}

@Suite struct ParserErrorTests {
  @Test(arguments: [
    ("", 1, "expected value"),
    ("   ", 4, "expected value"),
    (#"{"a":1,}"#, 8, "trailing comma in object"),
    ("[1,]", 4, "trailing comma in array"),
    (#"{"a" 1}"#, 6, "expected ':' after key"),
    (#"{"a""#, 5, "expected ':' after key"),
    (#"{"a":1 "b":2}"#, 8, "expected ',' or '}' after object member"),
    (#"{"a":1"#, 7, "expected ',' or '}' after object member"),
    ("[1 2]", 4, "expected ',' or ']' after array element"),
    ("[1", 3, "expected ',' or ']' after array element"),
    ("[", 2, "expected value"),
    ("{", 2, "expected string key or '}'"),
    ("{1:2}", 2, "expected string key or '}'"),
    (#"{"a":1,2}"#, 8, "expected string key"),
    (#"{"a":}"#, 6, "expected value"),
    (#""abc"#, 1, "unterminated string"),
    (#"["x","abc\"]"#, 6, "unterminated string"),
    (#""\"#, 1, "unterminated string"),
    ("[\"a\tb\"]", 4, "control character U+0009 in string"),
    ("\"a\\n\nb\"", 5, "control character U+000A in string"),
    (#""\x""#, 2, #"invalid escape '\x'"#),
    (#""\u12G4""#, 2, #"invalid \u escape"#),
    (#""\u12""#, 2, #"invalid \u escape"#),
    (#""\uD800""#, 2, #"unpaired surrogate \uD800"#),
    (#""\uDC00""#, 2, #"unpaired surrogate \uDC00"#),
    (#""ab\uD800\u0041""#, 4, #"unpaired surrogate \uD800"#),
    ("01", 1, "leading zeros are not allowed"),
    ("-01", 2, "leading zeros are not allowed"),
    ("-", 2, "expected digit after '-'"),
    ("-Infinity", 2, "expected digit after '-'"),
    ("1.", 3, "expected digit after '.'"),
    ("1.e5", 3, "expected digit after '.'"),
    ("1e", 3, "expected digit in exponent"),
    ("1e+", 4, "expected digit in exponent"),
    ("1e400", 1, "number out of range"),
    ("-1e400", 1, "number out of range"),
    ("NaN", 1, "expected value"),
    (".5", 1, "expected value"),
    ("+1", 1, "expected value"),
    ("// comment", 1, "expected value"),
    ("[1] // comment", 5, "unexpected data after value"),
    ("tru", 1, "invalid literal, expected 'true'"),
    ("nul", 1, "invalid literal, expected 'null'"),
    ("fals e", 1, "invalid literal, expected 'false'"),
    ("nulls", 5, "unexpected data after value"),
    (#"{"a":1} x"#, 9, "unexpected data after value"),
    ("1 2", 3, "unexpected data after value"),
    (#"{"op":1,"op":2}"#, 9, #"duplicate key "op""#),
    (#"{"a\"b":1,"a\"b":2}"#, 11, #"duplicate key "a\"b""#),
  ])
  func rejects(text: String, column: Int, message: String) {
    #expect(throws: JSONParseError(column: column, message: message)) {
      try JSONParser.parse(text)
    }
  }

  @Test(
    arguments: [
      ([0x22, 0xC3, 0x22], 2),  // lead byte followed by a quote
      ([0x22, 0xFF, 0x22], 2),  // never valid
      ([0x22, 0xC0, 0x80, 0x22], 2),  // overlong NUL
      ([0x22, 0xE0, 0x80, 0x80, 0x22], 2),  // overlong three-byte
      ([0x22, 0xED, 0xA0, 0x80, 0x22], 2),  // encoded surrogate
      ([0x22, 0xF4, 0x90, 0x80, 0x80, 0x22], 2),  // above U+10FFFF
      ([0x22, 0x61, 0xE2, 0x82], 3),  // truncated at end
      ([0x22, 0x5C, 0x6E, 0x80, 0x22], 4),  // stray continuation after an escape
    ] as [([UInt8], Int)])
  func rejectsInvalidUTF8(bytes: [UInt8], column: Int) {
    #expect(throws: JSONParseError(column: column, message: "invalid UTF-8")) {
      try JSONParser.parse(bytes)
    }
  }

  @Test func rejectsNonASCIIOutsideStrings() {
    #expect(throws: JSONParseError(column: 2, message: "expected value")) {
      try JSONParser.parse([0x5B, 0xFF, 0x5D])
    }
  }

  @Test func descriptionNamesTheColumn() {
    let error = JSONParseError(column: 17, message: "expected ':' after key")
    #expect(error.description == "column 17: expected ':' after key")
  }
}
