/// How a `ParquetWriter` cuts and encodes: the bounds that keep its memory and its pages
/// small however many rows it is given.
package struct ParquetOptions: Sendable {
  /// Rows per row group at most.
  package var rowGroupRows = 131_072
  /// Buffered value bytes that end a row group before `rowGroupRows` (long lists of ids).
  package var rowGroupBytes = 64 << 20
  /// Rows per data page at most.
  package var pageRows = 20_000
  /// Value bytes (as plain-encoded; a dictionary index counts 4) that end a data page early.
  package var pageBytes = 1 << 20
  /// A column chunk whose dictionary would take more than this is written plain. A row
  /// group's ids (100k UUIDs, 4 MB) fit: their indices and one copy of each id cost less
  /// to compress and store than every id written out (docs/performance.md, run 20).
  package var dictionaryBytes = 8 << 20
  /// The footer's `created_by`.
  package var createdBy = "listtape"
  /// The footer's key-value metadata.
  package var metadata: [(key: String, value: String)] = []

  package init() {}
}
