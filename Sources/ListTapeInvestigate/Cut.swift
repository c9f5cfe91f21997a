import Foundation
import ListTapeLog
import ListTapeModel
import ListTapeRead
import ListTapeStore

extension Timeline {
  /// Writes events 1...n, times included, to a new log at `output` (which must not exist),
  /// so a session can be branched from a past state and recorded onward.
  /// Returns the number of events written.
  @discardableResult
  package func cut(
    through n: Int, to output: String, fsync: FsyncPolicy = .interval(seconds: 1)
  )
    throws(StoreError) -> Int
  {
    guard n >= 0 && n <= eventCount else {
      throw .eventOutOfRange(n, lowest: 0, last: eventCount, path: path)
    }
    guard !FileManager.default.fileExists(atPath: output) else {
      throw .outputExists(path: output)
    }
    let recorder = try Recorder.open(path: output, fsync: fsync)
    var ids = ListState()
    var decoder = startDecoder()
    var written = 0
    var failure: StoreError?
    do throws(StoreError) {
      try forEachEvent(from: 1, through: n, ids: &ids, decoder: &decoder) { _, e in
        do throws(StoreError) {
          _ = try recorder.record(e)
        } catch {
          failure = error
          return false
        }
        written += 1
        return true
      }
      if let failure { throw failure }
      try recorder.close()
    } catch {
      try? recorder.close()
      throw error
    }
    return written
  }
}
