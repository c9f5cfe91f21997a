/// Ids spelled out in UTF-8, back to back: a list of thousands of ids (a selection) held and
/// written as JSON without a `String` each.
package struct IDList: Sendable, Equatable {
  package private(set) var bytes: [UInt8] = []
  /// Where each id ends in `bytes`.
  package private(set) var ends: [UInt32] = []

  package init() {}

  package init(_ ids: [String]) {
    for id in ids { append(id) }
  }

  package var count: Int { ends.count }
  package var isEmpty: Bool { ends.isEmpty }

  package mutating func append(utf8: UnsafeBufferPointer<UInt8>) {
    bytes.append(contentsOf: utf8)
    ends.append(UInt32(truncatingIfNeeded: bytes.count))
  }

  package mutating func append(_ id: String) {
    var id = id
    id.withUTF8 { append(utf8: $0) }
  }

  /// Calls `body` with id `i`'s UTF-8 bytes.
  package func withID<R>(_ i: Int, _ body: (UnsafeBufferPointer<UInt8>) -> R) -> R {
    let lo = i == 0 ? 0 : Int(ends[i - 1])
    let hi = Int(ends[i])
    return bytes.withUnsafeBufferPointer { body(UnsafeBufferPointer(rebasing: $0[lo..<hi])) }
  }

  /// The ids as strings.
  package var strings: [String] {
    (0..<count).map { i in withID(i) { String(decoding: $0, as: UTF8.self) } }
  }
}
