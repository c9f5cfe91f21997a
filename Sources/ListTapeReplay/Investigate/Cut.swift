import Foundation
import ListTapeModel

extension Timeline {
  /// Writes events 1...n, times included, to a new log at `output` (which must not exist),
  /// so a session can be branched from a past state and recorded onward.
  /// Returns the number of events written.
  @discardableResult
  public func cut(through n: Int, to output: String, fsync: FsyncMode = .interval)
    throws(ReplayError)
    -> Int
  {
    guard n >= 0 && n <= eventCount else {
      throw ReplayError(.usage, "event \(n) is out of range 0...\(eventCount) (\(path))")
    }
    guard !FileManager.default.fileExists(atPath: output) else {
      throw ReplayError(.usage, "\(output) already exists; cut writes a new log")
    }
    let recorder = try Recorder.open(path: output, fsync: fsync)
    var decoder = EventDecoder()
    var written = 0
    do throws(ReplayError) {
      try scanEvents(from: 1, through: n, decoder: &decoder) { (_, e) throws(ReplayError) in
        _ = try recorder.record(e)
        written += 1
        return true
      }
      try recorder.close()
    } catch {
      try? recorder.close()
      throw error
    }
    return written
  }
}
