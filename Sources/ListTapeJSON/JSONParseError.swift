/// Why a JSON text was rejected, and where.
package struct JSONParseError: Error, Equatable, Sendable, CustomStringConvertible {
  /// The 1-based byte column of the offending byte (the byte offset plus one for multi-line
  /// input).
  package var column: Int
  /// A short human message, such as `expected ':' after key`.
  package var message: String

  /// An error at `column` with `message`.
  package init(column: Int, message: String) {
    self.column = column
    self.message = message
  }

  /// `column N: message`.
  package var description: String {
    "column \(column): \(message)"
  }
}
