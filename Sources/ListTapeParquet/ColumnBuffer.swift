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
  /// The caller's keys appended since the last `resolve`, one bit each, and the words of
  /// `keys` that may have bits set.
  private var keys: [UInt64] = []
  private var lowWord = Int.max
  private var highWord = -1
  /// Where in `indices` the values since the last `resolve` begin.
  private var unresolvedFrom = Int.max
  /// Each key's dictionary entry, while `resolve` runs (kept for its storage).
  private var entryOfKey: [UInt32] = []

  /// An index in `indices` that holds a caller's key, not yet an entry of `strings`.
  static let unresolved: UInt32 = 1 << 31

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
  }

  /// Frees the values' storage (the buffer's owner, when it goes).
  func deallocate() {
    defs.deallocate()
    reps.deallocate()
    int64s.deallocate()
    bools.deallocate()
    indices.deallocate()
  }

  /// Whether values appended by key still wait for their strings.
  var hasUnresolvedKeys: Bool { unresolvedFrom != Int.max }

  /// Notes that the value about to be appended is the caller's `key`.
  @inline(__always) mutating func mark(key: Int) {
    precondition(key >= 0 && key < Int(Self.unresolved), "key \(key) out of range")
    let w = key &>> 6
    if w >= keys.count {
      keys.append(contentsOf: repeatElement(0, count: max(w + 1, keys.count * 2) - keys.count))
    }
    keys[w] |= 1 &<< UInt64(key & 63)
    if w < lowWord { lowWord = w }
    if w > highWord { highWord = w }
    if unresolvedFrom == Int.max { unresolvedFrom = indices.count }
  }

  /// Makes each key appended since the last call an entry of `strings` (`text(key, &bytes)`
  /// appends its bytes, keys ascending) and its values that entry's index; returns the
  /// bytes added.
  mutating func resolve(_ text: (_ key: Int, _ bytes: inout [UInt8]) -> Void) -> Int {
    guard hasUnresolvedKeys else { return 0 }
    let added = strings.plainBytes
    if entryOfKey.count < (highWord + 1) * 64 {
      entryOfKey = [UInt32](repeating: 0, count: (highWord + 1) * 64)
    }
    for w in lowWord...highWord {
      var bits = keys[w]
      keys[w] = 0
      while bits != 0 {
        let key = w &* 64 &+ bits.trailingZeroBitCount
        entryOfKey[key] = strings.appendUnhashed { text(key, &$0) }
        bits &= bits &- 1
      }
    }
    let from = unresolvedFrom
    entryOfKey.withUnsafeBufferPointer { entry in
      indices.withUnsafeMutableBufferPointer { all in
        for i in from..<all.count where all[i] & Self.unresolved != 0 {
          all[i] = entry[Int(all[i] & ~Self.unresolved)]
        }
      }
    }
    lowWord = Int.max
    highWord = -1
    unresolvedFrom = Int.max
    return strings.plainBytes - added
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

  /// Appends `values` in one copy.
  mutating func append(contentsOf values: UnsafeBufferPointer<T>) {
    guard let from = values.baseAddress, !values.isEmpty else { return }
    while count &+ values.count > capacity { grow() }
    (base.unsafelyUnwrapped + count).update(from: from, count: values.count)
    count &+= values.count
  }

  /// Forgets the values, keeping the storage.
  mutating func removeAll() { count = 0 }

  func withUnsafeBufferPointer<R>(_ body: (UnsafeBufferPointer<T>) -> R) -> R {
    body(UnsafeBufferPointer(start: base, count: count))
  }

  /// The values in place, to rewrite (copies share them).
  func withUnsafeMutableBufferPointer<R>(_ body: (UnsafeMutableBufferPointer<T>) -> R) -> R {
    body(UnsafeMutableBufferPointer(start: base, count: count))
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
