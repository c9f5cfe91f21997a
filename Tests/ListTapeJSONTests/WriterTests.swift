import ListTapeSamples
import Testing

@testable import ListTapeJSON

@Suite struct WriterTests {
  @Test func streamingPlacesCommas() {
    var writer = JSONWriter()
    writer.beginObject()
    writer.key("op")
    writer.string("expand")
    writer.key("items")
    writer.beginArray()
    writer.string("a")
    writer.int(-12)
    writer.double(1.5)
    writer.bool(true)
    writer.null()
    writer.beginObject()
    writer.endObject()
    writer.beginArray()
    writer.endArray()
    writer.endArray()
    writer.key("t")
    writer.int(Int64.min)
    writer.endObject()
    #expect(
      writer.text
        == #"{"op":"expand","items":["a",-12,1.5,true,null,{},[]],"t":-9223372036854775808}"#)
  }

  @Test func jsonLines() {
    var writer = JSONWriter()
    writer.value(["a": 1])
    writer.endLine()
    writer.value([2])
    writer.endLine()
    #expect(writer.text == "{\"a\":1}\n[2]\n")
    writer.reset()
    writer.int(0)
    #expect(writer.text == "0")
  }

  @Test(arguments: [
    ("plain", #""plain""#),
    ("q\"b\\s/", #""q\"b\\s/""#),
    ("\n\r\t\u{8}\u{C}", #""\n\r\t\b\f""#),
    ("\u{0}\u{1}\u{1F}\u{7F}", "\"\\u0000\\u0001\\u001f\u{7F}\""),
    ("é€😀", "\"é€😀\""),
  ])
  func escaping(input: String, expected: String) throws {
    let text = JSONValue.string(input).serialized()
    #expect(text == expected)
    #expect(try JSONParser.parse(text) == .string(input))
  }

  @Test(arguments: [
    (1.0, "1.0"),
    (-0.0, "-0.0"),
    (0.1, "0.1"),
    (1e300, "1e+300"),
    (Double.leastNonzeroMagnitude, "5e-324"),
    (Double.infinity, "null"),
    (Double.nan, "null"),
  ])
  func doubles(value: Double, expected: String) {
    #expect(JSONValue.double(value).serialized() == expected)
  }

  @Test func pretty() {
    let value: JSONValue = [
      "event": 12, "sections": [["id": "main", "items": [], "tags": [:]]], "selected": ["mic"],
    ]
    let expected = """
      {
        "event": 12,
        "sections": [
          {
            "id": "main",
            "items": [],
            "tags": {}
          }
        ],
        "selected": [
          "mic"
        ]
      }
      """
    #expect(value.serialized(pretty: true) == expected)
    #expect(JSONValue.array([]).serialized(pretty: true) == "[]")
    #expect(JSONValue.int(3).serialized(pretty: true) == "3")
  }

  @Test func objectEditing() {
    var object: JSONObject = ["a": 1, "b": 2]
    object["a"] = 3
    object["c"] = 4
    object["b"] = nil
    #expect(object.keys == ["a", "c"])
    #expect(JSONValue.object(object).serialized() == #"{"a":3,"c":4}"#)
  }

  @Test(arguments: [1, 2, 3, 4])
  func roundTrip(seed: UInt64) throws {
    var random = SplitMix64(seed: seed)
    for _ in 0..<500 {
      let value = randomValue(depth: 0, using: &random)
      #expect(try JSONParser.parse(value.serialized()) == value)
      #expect(try JSONParser.parse(value.serialized(pretty: true)) == value)
    }
  }

  private func randomValue(depth: Int, using random: inout SplitMix64) -> JSONValue {
    let kinds = depth >= 4 ? 5 : 7
    switch Int.random(in: 0..<kinds, using: &random) {
    case 0: return .null
    case 1: return .bool(Bool.random(using: &random))
    case 2:
      let magnitude = Int.random(in: 0...3, using: &random)
      let bounds: [Int64] = [9, 1000, 1 << 40, .max]
      return .int(Int64.random(in: -bounds[magnitude]...bounds[magnitude], using: &random))
    case 3:
      var bits = random.next()
      while !Double(bitPattern: bits).isFinite {
        bits = random.next()
      }
      return .double(
        Bool.random(using: &random) ? Double(bitPattern: bits) : Double.random(in: -1e6...1e6))
    case 4: return .string(randomString(using: &random))
    case 5:
      let count = Int.random(in: 0...4, using: &random)
      return .array((0..<count).map { _ in randomValue(depth: depth + 1, using: &random) })
    default:
      var object = JSONObject()
      for _ in 0..<Int.random(in: 0...4, using: &random) {
        object[randomString(using: &random)] = randomValue(depth: depth + 1, using: &random)
      }
      return .object(object)
    }
  }

  private func randomString(using random: inout SplitMix64) -> String {
    let alphabet: [Character] = [
      "a", "b", "Z", "0", " ", "\"", "\\", "/", "\n", "\t", "\u{0}", "\u{1F}", "\u{7F}", "é",
      "€", "😀", "\u{FFFF}", "\u{10FFFF}",
    ]
    let length = Int.random(in: 0...12, using: &random)
    return String((0..<length).compactMap { _ in alphabet.randomElement(using: &random) })
  }
}

/// The eight-bytes-at-a-time escape check agrees with a byte-by-byte one for every byte
/// value at every place of a word and of the tail, beside bytes above 0x80 (whose borrows
/// could fool a word test).
@Test func theWordEscapeCheckAgreesWithBytes() {
  for length in [1, 7, 8, 9, 16, 19] {
    for filler in [UInt8(ascii: "a"), 0xC3, 0xFF, 0x21, 0x23, 0x5B, 0x5D] {
      for b in 0...255 {
        for at in 0..<length {
          var bytes = [UInt8](repeating: filler, count: length)
          bytes[at] = UInt8(b)
          let expected = !bytes.contains { $0 < 0x20 || $0 == 0x22 || $0 == 0x5C }
          let plain = bytes.withUnsafeBufferPointer { JSONEscape.isPlain($0) }
          #expect(plain == expected, "byte \(b) at \(at) of \(length) among \(filler)")
        }
      }
    }
  }
}
