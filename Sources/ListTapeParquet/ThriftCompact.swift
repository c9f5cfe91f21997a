/// Thrift's compact protocol, the write side only: what a Parquet footer and page headers
/// are made of (parquet.thrift). Fields are written in increasing id order within a struct,
/// as the protocol's delta-encoded field headers expect.
struct ThriftCompactWriter {
  /// Compact-protocol type codes.
  enum TType: UInt8 {
    case boolTrue = 1
    case boolFalse = 2
    case byte = 3
    case i16 = 4
    case i32 = 5
    case i64 = 6
    case double = 7
    case binary = 8
    case list = 9
    case set = 10
    case map = 11
    case `struct` = 12
  }

  private(set) var bytes: [UInt8] = []
  /// The last field id written in each open struct, innermost last.
  private var lastField: [Int16] = [0]

  init() {}

  // MARK: Fields

  mutating func field(_ id: Int16, i32 value: Int32) {
    header(id, .i32)
    zigzag(Int64(value))
  }

  mutating func field(_ id: Int16, i64 value: Int64) {
    header(id, .i64)
    zigzag(value)
  }

  mutating func field(_ id: Int16, bool value: Bool) {
    header(id, value ? .boolTrue : .boolFalse)
  }

  mutating func field(_ id: Int16, binary value: some Collection<UInt8>) {
    header(id, .binary)
    varint(UInt64(value.count))
    bytes.append(contentsOf: value)
  }

  mutating func field(_ id: Int16, string value: String) {
    field(id, binary: Array(value.utf8))
  }

  /// Opens a struct-valued field; close it with `endStruct()`.
  mutating func beginStruct(_ id: Int16) {
    header(id, .struct)
    lastField.append(0)
  }

  /// Closes a struct: its STOP byte.
  mutating func endStruct() {
    bytes.append(0)
    lastField.removeLast()
  }

  /// A list-valued field's header; the `count` elements follow (`element…` or
  /// `beginElement()`/`endStruct()` for structs).
  mutating func beginList(_ id: Int16, of type: TType, count: Int) {
    header(id, .list)
    if count < 15 {
      bytes.append(UInt8(count) << 4 | type.rawValue)
    } else {
      bytes.append(0xF0 | type.rawValue)
      varint(UInt64(count))
    }
  }

  mutating func element(i32 value: Int32) { zigzag(Int64(value)) }

  mutating func element(binary value: some Collection<UInt8>) {
    varint(UInt64(value.count))
    bytes.append(contentsOf: value)
  }

  /// Opens a struct that is a list element; close it with `endStruct()`.
  mutating func beginElement() { lastField.append(0) }

  /// Ends the top-level struct (the message itself).
  mutating func finish() -> [UInt8] {
    bytes.append(0)
    return bytes
  }

  // MARK: Encoding

  private mutating func header(_ id: Int16, _ type: TType) {
    let delta = Int(id) - Int(lastField[lastField.count - 1])
    if delta > 0 && delta <= 15 {
      bytes.append(UInt8(delta) << 4 | type.rawValue)
    } else {
      bytes.append(type.rawValue)
      zigzag(Int64(id))
    }
    lastField[lastField.count - 1] = id
  }

  private mutating func zigzag(_ value: Int64) {
    varint(UInt64(bitPattern: (value << 1) ^ (value >> 63)))
  }

  mutating func varint(_ value: UInt64) {
    var v = value
    while v >= 0x80 {
      bytes.append(UInt8(truncatingIfNeeded: v) | 0x80)
      v >>= 7
    }
    bytes.append(UInt8(v))
  }
}
