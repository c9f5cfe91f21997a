/// One column of a flat Parquet table: a name, a value type and whether it may be null or
/// holds a list. Nested groups other than a list of values are not needed here.
package struct ParquetColumn: Sendable {
  /// The column's name in the schema (and in engines' SQL).
  package var name: String
  package var type: ValueType
  package var repetition: Repetition

  package init(_ name: String, _ type: ValueType, _ repetition: Repetition = .required) {
    self.name = name
    self.type = type
    self.repetition = repetition
  }

  /// What a column's values are, physically and logically.
  package enum ValueType: Sendable {
    /// INT64, DELTA_BINARY_PACKED.
    case int64
    /// INT64 annotated as a UTC timestamp in milliseconds, DELTA_BINARY_PACKED.
    case timestampMillis
    /// INT32, DELTA_BINARY_PACKED (counts that change by little from row to row).
    case int32
    /// BYTE_ARRAY annotated as UTF-8, dictionary-encoded while the chunk's dictionary stays
    /// small, plain otherwise.
    case string
    /// BOOLEAN, plain-encoded (bit-packed).
    case bool
  }

  /// Whether a row holds exactly one value, one value or null, or a list of values.
  package enum Repetition: Sendable {
    case required
    case optional
    /// A list of non-null values (possibly empty), as the standard three-level LIST
    /// structure: `required group NAME (LIST) { repeated group list { required … element } }`.
    case list
  }

  /// The greatest definition level of the leaf.
  var maxDefinition: Int {
    switch repetition {
    case .required: return 0
    case .optional, .list: return 1
    }
  }

  /// The greatest repetition level of the leaf.
  var maxRepetition: Int { repetition == .list ? 1 : 0 }

  /// The leaf's path in the schema.
  var path: [String] { repetition == .list ? [name, "list", "element"] : [name] }
}

/// Parquet's enumerations, as parquet.thrift numbers them.
enum ParquetEnum {
  enum PhysicalType: Int32 {
    case boolean = 0
    case int32 = 1
    case int64 = 2
    case byteArray = 6
  }

  enum Repetition: Int32 {
    case required = 0
    case optional = 1
    case repeated = 2
  }

  enum ConvertedType: Int32 {
    case utf8 = 0
    case list = 3
    case timestampMillis = 9
  }

  enum Encoding: Int32 {
    case plain = 0
    case rle = 3
    case deltaBinaryPacked = 5
    case rleDictionary = 8
  }

  enum PageType: Int32 {
    case dataPage = 0
    case dictionaryPage = 2
  }

  static let gzip: Int32 = 2
}

extension ParquetColumn.ValueType {
  var physical: ParquetEnum.PhysicalType {
    switch self {
    case .int64, .timestampMillis: return .int64
    case .int32: return .int32
    case .string: return .byteArray
    case .bool: return .boolean
    }
  }

  /// Whether values go through a dictionary while the column chunk is written.
  var usesDictionary: Bool {
    switch self {
    case .string: return true
    case .int64, .timestampMillis, .int32, .bool: return false
    }
  }
}
