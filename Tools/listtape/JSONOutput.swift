import ListTapeJSON
import ListTapeModel

/// Shorthands for the objects `--json` prints: one `"key": value` pair per call.
extension JSONWriter {
  /// One JSON object on a line of its own, its members written by `body`.
  static func line(_ body: (inout JSONWriter) -> Void) -> [UInt8] {
    var w = JSONWriter()
    w.beginObject()
    body(&w)
    w.endObject()
    w.endLine()
    return w.bytes
  }

  /// An event the way every command's JSON gives it (docs/json.md): `"op"`, its op's
  /// name, `"site"`, the code that made it, then `"recorded"`, the whole event as
  /// `events --json` prints it; each `null` when there is none.
  mutating func recorded(_ event: Event?) {
    field("op", event?.op)
    field("site", event?.site)
    key("recorded")
    if let event { event.encode(to: &self) } else { null() }
  }

  /// An integer, or `null` when there is none.
  mutating func field<Integer: BinaryInteger>(_ key: String, _ value: Integer?) {
    self.key(key)
    if let value { int(Int64(value)) } else { null() }
  }

  mutating func field(_ key: String, _ value: Double) {
    self.key(key)
    double(value)
  }

  mutating func field(_ key: String, _ value: Bool) {
    self.key(key)
    bool(value)
  }

  /// A string, or `null` when there is none.
  mutating func field(_ key: String, _ value: String?) {
    self.key(key)
    if let value { string(value) } else { null() }
  }

  /// An item's fields as an object with sorted keys, or `null` when it has none.
  mutating func field(_ key: String, _ fields: [String: String]?) {
    self.key(key)
    guard let fields else { return null() }
    beginObject()
    for k in fields.keys.sorted() { field(k, fields[k]) }
    endObject()
  }
}
