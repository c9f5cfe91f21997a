import ListTapeLog
import ListTapeModel

/// Why a store, a recorder or a timeline could not do what was asked, with the file and the
/// event number or byte offset concerned. Callers decide what each case means to them (the
/// command-line tool turns each into its message and exit code).
public enum StoreError: Error, Sendable {
  /// The log file failed: it cannot be opened, is not a log, is damaged where the work needs
  /// to read, is held by another recorder, or a read, write or sync failed.
  case log(LogError)
  /// A record that passed the log's checksums does not decode.
  case undecodableEvent(event: Int, CodecError, path: String)
  /// The checkpoint after `event` passed the log's checksums but does not decode.
  case undecodableCheckpoint(event: Int, CodecError, path: String)
  /// The dictionary frame that comes before `event` (format 2.0) passed the log's checksums
  /// but does not decode; or the dictionary a reopened log holds there is unusable.
  case undecodableDictionary(event: Int, CodecError, path: String)
  /// The seek point after `event` in the index file at `path` does not decode. The index is
  /// only a cache: seeks fall back to the log's own checkpoints.
  case undecodableIndex(event: Int, CodecError, path: String)
  /// Event `event` was not recorded: no reader could decode it (nested deeper than the
  /// protocol allows, strings or lists over the caps).
  case unrecordableEvent(event: Int, CodecError, path: String)
  /// The state after `event` could not be written as a checkpoint (an identifier the log's
  /// dictionary does not hold).
  case unrecordableCheckpoint(event: Int, CodecError, path: String)
  /// A log that cannot be rewritten whole (`upgrade`): reading stops at `damage`, or a
  /// salvage lost `lostEvents` events, so the events would not keep their numbers.
  case incompleteLog(path: String, damage: LogDamage?, lostEvents: Int)
  /// An event of a salvaged log that follows lost events: its back-references point into
  /// them, so nothing before the reset point `decodableFrom` decodes. Scans skip and count it.
  case afterGap(event: Int, decodableFrom: Int, path: String)
  /// An event number outside `lowest...last` (0 for states, 1 for events).
  case eventOutOfRange(Int, lowest: Int, last: Int, path: String)
  /// A new log would be written where a file already exists.
  case outputExists(path: String)
  /// A log path that cannot be used: empty, or relative while the working directory is `/`
  /// (an iOS app's, where nothing can be written).
  case unusablePath(String, workingDirectory: String)
  /// `ListStore.resume` was called while the store's log had not failed.
  case nothingToResume(path: String)
  /// A store keyed by the app's identifier types opened a log naming an identifier (this
  /// spelling) that its codecs cannot read: a log recorded with other identifiers.
  case undecodableIdentifier(String, path: String)
}
