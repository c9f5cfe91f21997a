import Foundation
import ListTapeLog
import ListTapeModel
import ListTapeStore

/// What `Timeline.upgrade(to:)` wrote.
package struct UpgradeReport: Sendable {
  /// Events written (all of the log's).
  package var events: Int
  /// The format major version of the log read, and of the log written.
  package var fromFormat: Int
  package var toFormat: Int
  /// File sizes before and after.
  package var bytesBefore: Int
  package var bytesAfter: Int
}

extension Timeline {
  /// Writes this log's events, times included (and missing times left missing), as a new
  /// log in the current format at `output`, which must not exist: the same events in the
  /// same order, so every state and fault is the same. Frames come out full, so a log
  /// recorded at a person's pace (a frame every few events) also gets smaller. The new
  /// log is written beside `output` and renamed into place once synced.
  ///
  /// A damaged log (a torn tail included: the events after it would vanish without a word)
  /// or one salvaged with gaps is refused; salvage or cut it first.
  package func upgrade(to output: String, progress: ((Int, Int) -> Void)? = nil)
    throws(StoreError) -> UpgradeReport
  {
    try upgrade(to: output, files: SystemFiles.shared, progress: progress)
  }

  /// `upgrade(to:progress:)` through `files` (tests watch the rename and the directory sync).
  package func upgrade(
    to output: String, files: any FileLayer, progress: ((Int, Int) -> Void)? = nil
  )
    throws(StoreError) -> UpgradeReport
  {
    if FileManager.default.fileExists(atPath: output) { throw .outputExists(path: output) }
    if let damage = self.damage {
      throw .incompleteLog(path: path, damage: damage, lostEvents: 0)
    }
    if !reader.gaps.isEmpty {
      let lost = reader.gaps.reduce(0) { $0 + Int($1.count) }
      throw .incompleteLog(path: path, damage: nil, lostEvents: lost)
    }
    let temporary = "\(output).upgrade-\(getpid())"
    try? FileManager.default.removeItem(atPath: temporary)
    var options = Recorder.options(.interval(seconds: 1))
    options.batchDelay = 1
    options.protection = files.protectionClass(of: path)
    let recorder = try Recorder.open(path: temporary, options: options, files: files)
    var failure: StoreError?
    var written = 0
    let total = eventCount
    var state = ListState()
    var decoder = startDecoder()
    let skipped = skippedAfterGaps
    do throws(StoreError) {
      try fold(&state, &decoder, from: 1, through: total, applying: false) { ops, i, _, s in
        let seq = ops.seqs[i]
        do throws(StoreError) {
          _ = try recorder.record(ops.event(i, s.ids), stampingTime: false)
        } catch {
          failure = error
          return false
        }
        written = seq
        if seq & 0xFFFF == 0 { progress?(seq, total) }
        return true
      }
      if let failure { throw failure }
      guard written == total, skippedAfterGaps == skipped else {
        throw .incompleteLog(path: path, damage: nil, lostEvents: total - written)
      }
      try recorder.close()
    } catch {
      try? recorder.close()
      try? FileManager.default.removeItem(atPath: temporary)
      throw error
    }
    if let e = files.rename(temporary, output) {
      try? FileManager.default.removeItem(atPath: temporary)
      throw .log(
        LogError(
          .io, path: output,
          message: "cannot rename \(temporary) into place: \(String(cString: strerror(e)))",
          errno: e))
    }
    // The new name survives a power loss only once the directory holding it is synced.
    if let e = files.syncDirectory(of: output) {
      throw .log(
        LogError(
          .io, path: output,
          message: "cannot sync the directory of \(output): \(String(cString: strerror(e)))",
          errno: e))
    }
    progress?(total, total)
    let size = (try? FileManager.default.attributesOfItem(atPath: output)[.size] as? Int) ?? 0
    return UpgradeReport(
      events: written, fromFormat: formatMajor, toFormat: recorder.formatMajor,
      bytesBefore: fileBytes, bytesAfter: size)
  }
}
