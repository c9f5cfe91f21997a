/// One column's values for the row group being filled: its levels, and its values as
/// plain integers, booleans or dictionary entry numbers.
struct ColumnBuffer {
  let column: ParquetColumn
  /// Definition level per entry (optional and list columns).
  var defs = Values<UInt8>()
  /// Repetition level per entry (list columns).
  var reps = Values<UInt8>()
  /// Non-null values of INT64, timestamp and INT32 columns.
  var int64s = Values<Int64>()
  /// Non-null values of BOOLEAN columns.
  var bools = Values<Bool>()
  /// Non-null values of string columns, as entries of `strings`.
  var indices = Values<UInt32>()
  var strings = ByteDictionary()
  /// Whether the row being filled has a list element yet.
  var rowHasElement = false
  /// The dictionary entry of each caller's key met since the keys were last forgotten, and
  /// its length, so that a known key costs one read (`ParquetRows.append(_:key:)`):
  /// (entry + 1) << 32 | length; 0 for a key not met.
  private var keyed: [UInt64] = []
  /// The keys `keyed` holds, which `forgetKeys` clears (not the whole array: many small
  /// logs exported one after another would clear it once each).
  private var keys: [Int] = []

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
    defs.removeAll()
    reps.removeAll()
    int64s.removeAll()
    bools.removeAll()
    indices.removeAll()
    strings.removeAll()
    forgetKeys()
  }

  /// Frees the values' storage (the buffer's owner, when it goes).
  func deallocate() {
    defs.deallocate()
    reps.deallocate()
    int64s.deallocate()
    bools.deallocate()
    indices.deallocate()
  }

  /// The dictionary entry the caller's `key` stands for in this chunk, if met, and the
  /// length of its string.
  @inline(__always) func entry(key: Int) -> (entry: UInt32, length: Int)? {
    guard key < keyed.count else { return nil }
    let v = keyed[key]
    guard v != 0 else { return nil }
    return (UInt32(truncatingIfNeeded: (v >> 32) &- 1), Int(v & 0xFFFF_FFFF))
  }

  /// Records that `key` stands for dictionary entry `entry`, of `length` bytes, until the
  /// keys are forgotten.
  mutating func remember(key: Int, entry: UInt32, length: Int) {
    if key >= keyed.count {
      keyed.append(contentsOf: repeatElement(0, count: max(key + 1, keyed.count * 2) - keyed.count))
    }
    if keyed[key] == 0 { keys.append(key) }
    keyed[key] = (UInt64(entry) + 1) << 32 | UInt64(UInt32(clamping: length))
  }

  /// Forgets every key (a new chunk, or the caller renumbered its strings).
  mutating func forgetKeys() {
    for k in keys { keyed[k] = 0 }
    keys.removeAll(keepingCapacity: true)
  }
}

/// A growable run of plain values behind one pointer: an append is a store and a count,
/// without the uniqueness check and retain of an `Array` (a row appends to 16 of them).
/// Copies share the storage; the owner calls `deallocate()` once.
struct Values<T: BitwiseCopyable>: RandomAccessCollection {
  private var base: UnsafeMutablePointer<T>?
  private(set) var count = 0
  private var capacity = 0

  var startIndex: Int { 0 }
  var endIndex: Int { count }

  subscript(i: Int) -> T {
    precondition(i >= 0 && i < count, "index out of range")
    // Safe: `base` is set whenever count > 0.
    return base.unsafelyUnwrapped[i]
  }

  @inline(__always) mutating func append(_ value: T) {
    if count == capacity { grow() }
    base.unsafelyUnwrapped[count] = value
    count &+= 1
  }

  /// Forgets the values, keeping the storage.
  mutating func removeAll() { count = 0 }

  func withUnsafeBufferPointer<R>(_ body: (UnsafeBufferPointer<T>) -> R) -> R {
    body(UnsafeBufferPointer(start: base, count: count))
  }

  func deallocate() { base?.deallocate() }

  private mutating func grow() {
    let bigger = Swift.max(1_024, capacity * 2)
    let new = UnsafeMutablePointer<T>.allocate(capacity: bigger)
    if let base {
      new.initialize(from: base, count: count)
      base.deallocate()
    }
    base = new
    capacity = bigger
  }
}
