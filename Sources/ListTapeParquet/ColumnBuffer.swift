/// One column's values for the row group being filled: its levels, and its values as
/// plain integers, booleans or dictionary entry numbers.
struct ColumnBuffer {
  let column: ParquetColumn
  /// Definition level per entry (optional and list columns).
  var defs: [UInt8] = []
  /// Repetition level per entry (list columns).
  var reps: [UInt8] = []
  /// Non-null values of INT64, timestamp and INT32 columns.
  var int64s: [Int64] = []
  /// Non-null values of BOOLEAN columns.
  var bools: [Bool] = []
  /// Non-null values of string columns, as entries of `strings`.
  var indices: [UInt32] = []
  var strings = ByteDictionary()
  /// Whether the row being filled has a list element yet.
  var rowHasElement = false
  /// The dictionary entry of each caller's key met since the keys were last forgotten:
  /// entry << 32 | `keyGeneration` (`ParquetRows.append(_:key:)`).
  private var keyed: [UInt64] = []
  private var keyGeneration: UInt32 = 1

  init(_ column: ParquetColumn) { self.column = column }

  /// Level entries (the page header's `num_values`), nulls and empty lists included.
  var entries: Int {
    column.repetition == .required ? values : defs.count
  }

  /// Non-null values.
  var values: Int {
    switch column.type {
    case .int64, .timestampMillis, .int32: return int64s.count
    case .bool: return bools.count
    case .string: return indices.count
    }
  }

  /// Bytes value `v` takes plain-encoded.
  func plainSize(_ v: Int) -> Int {
    switch column.type {
    case .int64, .timestampMillis: return 8
    case .int32: return 4
    case .bool: return 1
    case .string: return 4 + strings.length(Int(indices[v]))
    }
  }

  /// What the chunk's dictionary takes plain-encoded.
  var dictionaryBytes: Int {
    column.type == .string ? strings.plainBytes : 0
  }

  /// Empties the buffer for the next row group, keeping its storage.
  mutating func removeAll() {
    defs.removeAll(keepingCapacity: true)
    reps.removeAll(keepingCapacity: true)
    int64s.removeAll(keepingCapacity: true)
    bools.removeAll(keepingCapacity: true)
    indices.removeAll(keepingCapacity: true)
    strings.removeAll()
    forgetKeys()
  }

  /// The dictionary entry the caller's `key` stands for in this chunk, if met.
  @inline(__always) func entry(key: Int) -> UInt32? {
    guard key < keyed.count else { return nil }
    let v = keyed[key]
    return UInt32(truncatingIfNeeded: v) == keyGeneration
      ? UInt32(truncatingIfNeeded: v >> 32) : nil
  }

  /// Records that `key` stands for dictionary entry `entry` until the keys are forgotten.
  mutating func remember(key: Int, entry: UInt32) {
    if key >= keyed.count {
      keyed.append(contentsOf: repeatElement(0, count: max(key + 1, keyed.count * 2) - keyed.count))
    }
    keyed[key] = UInt64(entry) << 32 | UInt64(keyGeneration)
  }

  /// Forgets every key (a new chunk, or the caller renumbered its strings).
  mutating func forgetKeys() {
    keyGeneration &+= 1
    if keyGeneration == 0 {
      for k in keyed.indices { keyed[k] = 0 }
      keyGeneration = 1
    }
  }
}
