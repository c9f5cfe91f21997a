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
  }
}
