import Foundation
import ListTapeLog
import ListTapeModel

/// How a ``ListStore`` records: durability, the buffer, the clock, data protection, and who
/// hears about faults.
public struct StoreOptions: Sendable {
  /// How often the log is forced to stable storage (besides `sync()` and `close()`).
  public var fsync: FsyncPolicy = .interval(seconds: 1)
  /// Events the buffer holds before it drops (each an `Event`, whatever its size).
  public var bufferCapacity = 16_384
  /// The wall clock stamped on events: milliseconds since the Unix epoch.
  public var clock: @Sendable () -> Int64 = { Recorder.now() }
  /// The data protection class of the log on Apple platforms (ignored elsewhere); see
  /// docs/apple.md for why the default is not `.complete`.
  public var fileProtection: FileProtection = .completeUntilFirstUserAuthentication
  /// Called on the calling thread, inside the call, with every fault a store call throws
  /// and the site of the call (the event is recorded by then): `{ assertionFailure("\($0)") }`
  /// stops a debug build at the edit that would have crashed UIKit. Nil by default.
  public var onFault: (@Sendable (StoreFault) -> Void)?
  /// Whether each event records the code that made it (its site: the editing call's
  /// `#fileID:#line #function`, docs/recording.md). A release build may not want its file
  /// and function names in a log it ships: set false, and events carry no site.
  public var recordsSites = true
  /// Called on the writer before each chunk it writes: tests use it to stall the "disk".
  var beforeWrite: (@Sendable () -> Void)?
  /// The file layer under the log's writer (tests put a simulated disk there).
  var files: any FileLayer = SystemFiles.shared
  /// Writer tuning replacing the tools' defaults (tests use tight checkpoint spacing).
  var writerOptions: LogWriterOptions?
  /// Sees the number of each event folded while opening (tests count them).
  var onFold: (@Sendable (Int) -> Void)?

  /// The defaults above.
  public init() {}

  /// The data protection class of a log file on Apple platforms (`FileProtectionType`).
  public enum FileProtection: Sendable, Equatable {
    /// Unreadable and unwritable from about ten seconds after the device locks: a store
    /// still recording then fails with EPERM.
    case complete
    /// Files open before the device locked stay writable.
    case completeUnlessOpen
    /// Usable from the first unlock after boot on: what iOS gives an app's files unless the
    /// app asks for more, so recording in the background keeps working.
    case completeUntilFirstUserAuthentication
    /// No protection.
    case none

    /// The same class as the log layer names it (every file written beside the log gets it).
    var protectionClass: ProtectionClass {
      switch self {
      case .complete: return .complete
      case .completeUnlessOpen: return .completeUnlessOpen
      case .completeUntilFirstUserAuthentication: return .completeUntilFirstUserAuthentication
      case .none: return .none
      }
    }
  }
}
