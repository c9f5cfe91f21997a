/// A JSON object that keeps its members in insertion order.
///
/// Objects in the protocol are small, so members live in one array and lookups scan it;
/// that beats hashing for a handful of keys and keeps the order for output.
package struct JSONObject: Equatable, Sendable {
  /// One member of an object.
  @usableFromInline
  struct Entry: Equatable, Sendable {
    @usableFromInline var key: String
    @usableFromInline var value: JSONValue

    @usableFromInline
    init(key: String, value: JSONValue) {
      self.key = key
      self.value = value
    }
  }

  @usableFromInline
  var entries: [Entry]

  /// An empty object.
  package init() {
    entries = []
  }

  init(entries: [Entry]) {
    self.entries = entries
  }

  /// The keys, in order.
  package var keys: [String] {
    entries.map { $0.key }
  }

  /// The value of `key`, or `nil` when absent; setting `nil` removes the member.
  ///
  /// Setting an existing key replaces its value in place; a new key is appended.
  /// - Complexity: O(*n*) in the number of members.
  package subscript(key: String) -> JSONValue? {
    get {
      for entry in entries where entry.key == key {
        return entry.value
      }
      return nil
    }
    set {
      let index = entries.firstIndex { $0.key == key }
      switch (index, newValue) {
      case (let index?, let value?): entries[index].value = value
      case (let index?, nil): entries.remove(at: index)
      case (nil, let value?): entries.append(Entry(key: key, value: value))
      case (nil, nil): break
      }
    }
  }
}

extension JSONObject: RandomAccessCollection {
  /// A member as a key/value pair.
  package typealias Element = (key: String, value: JSONValue)

  /// The position of the first member.
  package var startIndex: Int { 0 }

  /// The position past the last member.
  package var endIndex: Int { entries.count }

  /// The member at `position`.
  package subscript(position: Int) -> Element {
    let entry = entries[position]
    return (entry.key, entry.value)
  }
}

extension JSONObject: ExpressibleByDictionaryLiteral {
  /// An object with these members in order; a repeated key keeps its first position and last
  /// value.
  package init(dictionaryLiteral elements: (String, JSONValue)...) {
    self.init()
    for (key, value) in elements {
      self[key] = value
    }
  }
}
