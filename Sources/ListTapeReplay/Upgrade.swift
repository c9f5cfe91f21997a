import Foundation
import ListTapeLog
import ListTapeModel

/// What `Timeline.upgrade(to:)` wrote.
public struct UpgradeReport: Sendable, CustomStringConvertible {
  /// Events written (all of the log's).
  public var events: Int
  /// The format major version of the log read, and of the log written.
  public var fromFormat: Int
  public var toFormat: Int
  /// File sizes before and after.
  public var bytesBefore: Int
  public var bytesAfter: Int

  public var description: String {
    "\(events) events, format \(fromFormat).x → \(toFormat).0, \(bytesBefore) → \(bytesAfter) bytes"
  }
}

extension Timeline {
  /// Writes this log's events, times included (and missing times left missing), as a new
  /// log in the current format at `output`, which must not exist: the same events in the
  /// same order, so every state and fault is the same. Frames come out full, so a log
  /// recorded at a person's pace (a frame every few events) also gets smaller. The new
  /// log is written beside `output` and renamed into place once synced.
  ///
  /// A log that lost events (damaged, or salvaged with gaps) is refused: its events could
  /// not keep their numbers.
  public func upgrade(to output: String, progress: ((Int, Int) -> Void)? = nil)
    throws(ReplayError) -> UpgradeReport
  {
    if FileManager.default.fileExists(atPath: output) {
      throw ReplayError(.usage, "\(output) already exists; upgrade writes a new log")
    }
    if isDamaged, let note = damageNote {
      throw ReplayError(.damaged, "cannot upgrade a damaged log (salvage it first): \(note)")
    }
    if !reader.gaps.isEmpty {
      throw ReplayError(
        .damaged,
        "cannot upgrade a log that lost events in a salvage: their numbers would change (\(path))")
    }
    let temporary = "\(output).upgrade-\(getpid())"
    try? FileManager.default.removeItem(atPath: temporary)
    var options = Recorder.options(.interval)
    options.batchDelay = 1
    let recorder = try Recorder.open(path: temporary, options: options)
    var failure: ReplayError?
    var written = 0
    let total = eventCount
    var decoder = EventDecoder()
    do throws(ReplayError) {
      try forEachDecoded(from: 1, through: total, decoder: &decoder) { seq, event in
        do throws(ReplayError) {
          _ = try recorder.record(event, stampingTime: false)
        } catch {
          failure = error
          return false
        }
        written = seq
        if seq & 0xFFFF == 0 { progress?(seq, total) }
        return true
      }
      if let failure { throw failure }
      guard written == total, skippedAfterGaps == 0 else {
        throw ReplayError(.damaged, "read \(written) of \(total) events of \(path)")
      }
      try recorder.close()
    } catch {
      try? recorder.close()
      try? FileManager.default.removeItem(atPath: temporary)
      throw error
    }
    guard rename(temporary, output) == 0 else {
      let e = errno
      try? FileManager.default.removeItem(atPath: temporary)
      throw ReplayError(
        .io, "cannot rename \(temporary) to \(output): \(String(cString: strerror(e)))")
    }
    progress?(total, total)
    let size = (try? FileManager.default.attributesOfItem(atPath: output)[.size] as? Int) ?? 0
    return UpgradeReport(
      events: written, fromFormat: formatMajor, toFormat: recorder.formatMajor,
      bytesBefore: fileBytes, bytesAfter: size)
  }
}
