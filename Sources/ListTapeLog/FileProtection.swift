import Foundation

/// The data protection class of a file on Apple platforms (`FileProtectionType`): every file
/// written beside a log (its saved tail, its index, a salvaged or upgraded copy) gets the
/// log's class, so a log kept `.complete` never leaves its events readable in another file.
package enum ProtectionClass: Sendable, Equatable {
  case complete
  case completeUnlessOpen
  case completeUntilFirstUserAuthentication
  case none
}

extension FileLayer {
  /// The class of the file at `path` on Apple platforms; nil where files have none (Linux)
  /// or it cannot be read.
  package func protectionClass(of path: String) -> ProtectionClass? {
    ProtectionClass.current(of: path)
  }

  /// Sets the class of the file at `path`; a platform or file system without data
  /// protection leaves the file as it was.
  package func setProtectionClass(_ protection: ProtectionClass, of path: String) {
    protection.apply(to: path)
  }

  /// Gives the file at `path` the class of the log at `log` (nothing when it has none).
  package func protect(_ path: String, like log: String) {
    if let protection = protectionClass(of: log) { setProtectionClass(protection, of: path) }
  }
}

extension ProtectionClass {
  /// The class of the file at `path`, read through Foundation (Apple platforms only).
  static func current(of path: String) -> ProtectionClass? {
    #if canImport(Darwin)
    guard let attributes = try? FileManager.default.attributesOfItem(atPath: path),
      let type = attributes[.protectionKey] as? FileProtectionType
    else { return nil }
    switch type {
    case .complete: return .complete
    case .completeUnlessOpen: return .completeUnlessOpen
    case .completeUntilFirstUserAuthentication: return .completeUntilFirstUserAuthentication
    case .none: return ProtectionClass.none
    default: return nil
    }
    #else
    return nil
    #endif
  }

  /// Sets this class on the file at `path` (Apple platforms only; a refusal is ignored).
  package func apply(to path: String) {
    #if canImport(Darwin)
    let type: FileProtectionType
    switch self {
    case .complete: type = .complete
    case .completeUnlessOpen: type = .completeUnlessOpen
    case .completeUntilFirstUserAuthentication: type = .completeUntilFirstUserAuthentication
    case .none: type = .none
    }
    try? FileManager.default.setAttributes([.protectionKey: type], ofItemAtPath: path)
    #endif
  }
}
