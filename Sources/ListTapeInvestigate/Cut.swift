import Foundation
import ListTapeLog
import ListTapeModel
import ListTapeRead
import ListTapeStore

extension Timeline {
  /// Writes events 1...n, times included, to a new log at `output` (which must not exist),
  /// so a session can be branched from a past state and recorded onward. Event N of the new
  /// log is event N of this one: events a salvage lost stay a gap (`copyEvents`).
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
    do throws(StoreError) {
      let written = try copyEvents(through: n, into: recorder)
      try recorder.close()
      return written
    } catch {
      try? recorder.close()
      throw error
    }
  }
}
