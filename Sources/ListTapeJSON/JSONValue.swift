/// A parsed JSON value.
///
/// Integers are kept apart from floats because the protocol treats them differently:
/// `1` is `.int(1)`, while `1.0`, `1e3` and integers beyond `Int64` are `.double`.
package enum JSONValue: Equatable, Sendable {
  /// JSON `null`.
  case null
  /// JSON `true` or `false`.
  case bool(Bool)
  /// A number written without fraction or exponent that fits in `Int64`.
  case int(Int64)
  /// Any other number.
  case double(Double)
  /// A string.
  case string(String)
  /// An array.
  case array([JSONValue])
  /// An object, with its keys in input order.
  case object(JSONObject)
}

extension JSONValue {
  /// Whether the value is `null`.
  package var isNull: Bool {
    if case .null = self { return true }
    return false
  }

  /// The boolean, or `nil` for any other kind.
  package var boolValue: Bool? {
    if case .bool(let value) = self { return value }
    return nil
  }

  /// The integer, or `nil` for any other kind (doubles included).
  package var intValue: Int64? {
    if case .int(let value) = self { return value }
    return nil
  }

  /// The string, or `nil` for any other kind.
  package var stringValue: String? {
    if case .string(let value) = self { return value }
    return nil
  }

  /// The array, or `nil` for any other kind.
  package var arrayValue: [JSONValue]? {
    if case .array(let value) = self { return value }
    return nil
  }

  /// The object, or `nil` for any other kind.
  package var objectValue: JSONObject? {
    if case .object(let value) = self { return value }
    return nil
  }

  /// The member named `key` when this is an object, else `nil`.
  package subscript(key: String) -> JSONValue? {
    objectValue?[key]
  }

  /// A short name of the value's kind, for error messages ("string", "integer", …).
  package var kindName: String {
    switch self {
    case .null: return "null"
    case .bool: return "boolean"
    case .int: return "integer"
    case .double: return "float"
    case .string: return "string"
    case .array: return "array"
    case .object: return "object"
    }
  }
}
