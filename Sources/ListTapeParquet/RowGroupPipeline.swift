import Dispatch

/// Encodes full row groups on a second thread while the caller fills the next: the caller
/// hands its rows over when they are full and gets empty ones back (two sets, swapped), so
/// the pages' encoding and compression run beside the rows' making. Groups are appended in
/// the order they were handed over: the file is the same as with one thread.
///
/// `@unchecked Sendable`: `failure` changes only on the encoding queue and `spare` only on
/// the caller's thread; the caller reads `failure`, and reuses rows the queue had, only
/// after waiting for the queue.
package final class RowGroupPipeline: @unchecked Sendable {
  private let queue = DispatchQueue(label: "listtape.parquet.encode")
  private let group = DispatchGroup()
  /// Rows the queue is encoding, or has emptied for the caller's next group.
  private var spare: ParquetRows
  private var failure: ParquetError?
  private let append: (EncodedRowGroup) throws(ParquetError) -> Void

  /// `spare` is the second set of rows; `append` takes each encoded group, on the queue.
  package init(
    spare: ParquetRows, append: @escaping (EncodedRowGroup) throws(ParquetError) -> Void
  ) {
    self.spare = spare
    self.append = append
  }

  /// Queues `full` for encoding and returns empty rows to fill, waiting while the group
  /// handed over before is still being encoded. Throws the first failure of an earlier
  /// group's encoding or append.
  package func hand(_ full: ParquetRows) throws(ParquetError) -> ParquetRows {
    try finish()
    let empty = spare
    spare = full
    let handed = Handed(rows: full)
    queue.async(group: group) { [self] in
      do throws(ParquetError) {
        try append(try handed.rows.encode())
      } catch {
        failure = error
      }
    }
    return empty
  }

  /// Rows on their way to the queue, which alone uses them until `finish` returns.
  private struct Handed: @unchecked Sendable {
    let rows: ParquetRows
  }

  /// Waits until every group handed over is appended; throws the first failure.
  package func finish() throws(ParquetError) {
    group.wait()
    if let failure { throw failure }
  }
}
