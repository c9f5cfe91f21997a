/// Where and why reading stopped short of the end of the file.
public struct LogDamage: Sendable, Equatable, CustomStringConvertible {
  /// A torn tail has no readable frame after it; damage has.
  public enum Kind: Sendable, Equatable {
    /// Nothing readable follows: an interrupted write, a zero-filled or garbage tail.
    case tornTail
    /// A frame of this log follows the bad bytes: cutting there would lose data.
    case damaged
  }

  /// Torn tail or mid-file damage.
  public var kind: Kind
  /// Byte offset of the first bad frame.
  public var offset: UInt64
  /// Bytes from `offset` to the end of the file.
  public var bytesToEnd: UInt64
  /// The last event that reads back intact (0 if none).
  public var lastGoodEvent: UInt64
  /// What was wrong at `offset`.
  public var reason: DamageReason
  /// Offset of the next frame of this log that validates, if any.
  public var nextFrameOffset: UInt64?
  /// First event number held by (or following) that frame, if known.
  public var nextEvent: UInt64?

  /// The same in words, for people.
  public var description: String {
    switch kind {
    case .tornTail:
      return
        "torn tail at byte \(offset) (after event \(lastGoodEvent)), \(bytesToEnd) bytes: \(reason)"
    case .damaged:
      var s = "damaged frame at byte \(offset) (after event \(lastGoodEvent)): \(reason)"
      if let next = nextFrameOffset {
        s += "; next readable frame at byte \(next)"
        if let e = nextEvent { s += " (event \(e))" }
      }
      return s
    }
  }
}

/// Every failure of the log layer: a kind, the file, and where in it.
public struct LogError: Error, Sendable, CustomStringConvertible {
  /// The broad category, for exit codes and tests.
  public enum Kind: Sendable, Equatable {
    /// A system call failed (see `errno`).
    case io
    /// Another process holds the writer lock.
    case locked
    /// The file is not a ListTape log (wrong magic or header checksum).
    case notALog
    /// The file is shorter than its header.
    case incompleteHeader
    /// A major version or codec this build cannot read.
    case unsupportedVersion
    /// A frame is bad and readable data follows it (or it was met while decoding).
    case damaged
    /// A record or checkpoint exceeds the format's caps.
    case tooLarge
    /// An earlier write or fsync failed; the writer refuses to continue.
    case poisoned
    /// The writer was closed.
    case closed
    /// The target of a salvage already exists.
    case exists
  }

  /// The category of failure.
  public var kind: Kind
  /// The log file concerned.
  public var path: String
  /// Byte offset in the file, when known.
  public var offset: UInt64?
  /// The last event that reads back intact, when known.
  public var lastGoodEvent: UInt64?
  /// Damage details when the failure is a bad frame.
  public var damage: LogDamage?
  /// The system error number, when a system call failed.
  public var errno: Int32?
  /// One line saying what went wrong, without the path.
  public var message: String

  /// Creates an error; the module uses the static helpers.
  package init(
    _ kind: Kind, path: String, message: String, offset: UInt64? = nil,
    lastGoodEvent: UInt64? = nil, damage: LogDamage? = nil, errno: Int32? = nil
  ) {
    self.kind = kind
    self.path = path
    self.message = message
    self.offset = offset
    self.lastGoodEvent = lastGoodEvent
    self.damage = damage
    self.errno = errno
  }

  /// `<what> (<path>)`, the form the CLI prints after `listtape: error:`.
  public var description: String { "\(message) (\(path))" }

  static func damaged(_ d: LogDamage, path: String) -> LogError {
    LogError(
      .damaged, path: path, message: d.description, offset: d.offset,
      lastGoodEvent: d.lastGoodEvent, damage: d)
  }

  static func io(_ what: String, path: String, errno e: Int32, offset: UInt64? = nil) -> LogError {
    LogError(.io, path: path, message: "\(what): \(errnoText(e))", offset: offset, errno: e)
  }
}
