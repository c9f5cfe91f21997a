import Foundation

/// An identifier type an app keys its data source by, spelled as a string in the log.
///
/// `String`, `Int`, `UUID` conform already; a `RawRepresentable` enum whose raw values
/// conform (`enum Section: String, ListIdentifier { case main, recents }`), and any
/// `LosslessStringConvertible` type, conform by declaring it. For another type, implement
/// the two members, or pass an `IdentifierCodec` to the store instead.
public protocol ListIdentifier: Hashable, Sendable {
  /// How the log spells this identifier.
  var listIdentifier: String { get }
  /// The identifier a log's spelling names, or nil when it names none.
  init?(listIdentifier: String)
}

extension ListIdentifier where Self: LosslessStringConvertible {
  /// The type's `description`.
  public var listIdentifier: String { description }
  /// The value whose `description` this is.
  public init?(listIdentifier: String) { self.init(listIdentifier) }
}

extension ListIdentifier where Self: RawRepresentable, RawValue: ListIdentifier {
  /// The raw value's spelling.
  public var listIdentifier: String { rawValue.listIdentifier }

  /// The case whose raw value is spelled so.
  public init?(listIdentifier: String) {
    guard let raw = RawValue(listIdentifier: listIdentifier) else { return nil }
    self.init(rawValue: raw)
  }
}

extension String: ListIdentifier {}

extension Int: ListIdentifier {}

extension UUID: ListIdentifier {
  /// The canonical upper-case form, `UUID().uuidString`.
  public var listIdentifier: String { uuidString }
  /// The UUID a `uuidString` spells.
  public init?(listIdentifier: String) { self.init(uuidString: listIdentifier) }
}

/// How a store spells one identifier type in the log and reads it back, for types that do
/// not conform to `ListIdentifier` (or should be spelled differently).
///
/// `decode` must invert `encode`: every value is checked as it is encoded, and one whose
/// spelling does not decode back to it stops the program there (a codec bug, like a
/// `Hashable` that breaks its laws). A log holding a spelling the codec cannot decode is
/// refused when the store opens it (`StoreError.undecodableIdentifier`); no id is dropped.
public struct IdentifierCodec<Value: Hashable>: Sendable {
  let encode: @Sendable (Value) -> String
  let decode: @Sendable (String) -> Value?
  /// Whether spellings are the values themselves (`String`), so nothing needs checking.
  let isIdentity: Bool

  /// A codec from its two directions; `decode` must invert `encode`.
  public init(
    encode: @escaping @Sendable (Value) -> String,
    decode: @escaping @Sendable (String) -> Value?
  ) {
    self.init(encode: encode, decode: decode, isIdentity: false)
  }

  init(
    encode: @escaping @Sendable (Value) -> String,
    decode: @escaping @Sendable (String) -> Value?, isIdentity: Bool
  ) {
    self.encode = encode
    self.decode = decode
    self.isIdentity = isIdentity
  }

  /// The log's spelling of `value`, checked to decode back to it.
  func spell(_ value: Value) -> String {
    let text = encode(value)
    if !isIdentity {
      let back = decode(text)
      precondition(
        back == value,
        "IdentifierCodec<\(Value.self)> spells \(value) as \"\(text)\", which decodes to "
          + "\(back.map { "\($0)" } ?? "nothing"): decode must invert encode")
    }
    return text
  }

  func spellAll(_ values: [Value]) -> [String] { values.map(spell) }

  /// The value a spelling in the state names. Every spelling there was checked (encoded
  /// here, or validated when the log was opened), so failing is a codec that changed its
  /// mind: it stops the program rather than dropping the id.
  func read(_ text: String) -> Value {
    guard let value = decode(text) else {
      preconditionFailure(
        "IdentifierCodec<\(Value.self)> cannot decode \"\(text)\", which it accepted before")
    }
    return value
  }

  func readAll(_ texts: [String]) -> [Value] { texts.map(read) }

  /// The first of `texts` that does not decode, if any.
  func firstUndecodable<S: Sequence<String>>(_ texts: S) -> String? {
    guard !isIdentity else { return nil }
    return texts.first { decode($0) == nil }
  }
}

extension IdentifierCodec where Value: ListIdentifier {
  /// The type's own spelling (`listIdentifier`).
  public static var standard: Self {
    Self(
      encode: { $0.listIdentifier }, decode: { Value(listIdentifier: $0) },
      isIdentity: Value.self == String.self)
  }
}
