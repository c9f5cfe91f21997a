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
/// not conform to `ListIdentifier` (or should be spelled differently). Decoding must invert
/// encoding; a spelling that decodes to nothing (a log recorded with other ids) is left out
/// of what the store hands back.
public struct IdentifierCodec<Value: Hashable>: Sendable {
  /// How the log spells a value.
  public var encode: @Sendable (Value) -> String
  /// The value a spelling names, or nil.
  public var decode: @Sendable (String) -> Value?

  /// A codec from its two directions; `decode` must invert `encode`.
  public init(
    encode: @escaping @Sendable (Value) -> String,
    decode: @escaping @Sendable (String) -> Value?
  ) {
    self.encode = encode
    self.decode = decode
  }

  func encodeAll(_ values: [Value]) -> [String] { values.map(encode) }

  func decodeAll(_ strings: [String]) -> [Value] { strings.compactMap(decode) }
}

extension IdentifierCodec where Value: ListIdentifier {
  /// The type's own spelling (`listIdentifier`).
  public static var standard: Self {
    Self(encode: { $0.listIdentifier }, decode: { Value(listIdentifier: $0) })
  }
}
