extension JSONValue: ExpressibleByNilLiteral {
  /// `null`.
  package init(nilLiteral: ()) {
    self = .null
  }
}

extension JSONValue: ExpressibleByBooleanLiteral {
  /// A boolean.
  package init(booleanLiteral value: Bool) {
    self = .bool(value)
  }
}

extension JSONValue: ExpressibleByIntegerLiteral {
  /// An integer.
  package init(integerLiteral value: Int64) {
    self = .int(value)
  }
}

extension JSONValue: ExpressibleByFloatLiteral {
  /// A float.
  package init(floatLiteral value: Double) {
    self = .double(value)
  }
}

extension JSONValue: ExpressibleByStringLiteral {
  /// A string.
  package init(stringLiteral value: String) {
    self = .string(value)
  }
}

extension JSONValue: ExpressibleByArrayLiteral {
  /// An array.
  package init(arrayLiteral elements: JSONValue...) {
    self = .array(elements)
  }
}

extension JSONValue: ExpressibleByDictionaryLiteral {
  /// An object with members in literal order (a repeated key keeps its last value).
  package init(dictionaryLiteral elements: (String, JSONValue)...) {
    var object = JSONObject()
    for (key, value) in elements {
      object[key] = value
    }
    self = .object(object)
  }
}
