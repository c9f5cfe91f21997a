import ListTapeModel

/// A fault a store call threw, with the code that made the call: what
/// ``StoreOptions/onFault`` hears.
public struct StoreFault: Error, Equatable, Sendable, CustomStringConvertible {
  /// The fault, as the call threw it and as replaying the log reports it.
  public var fault: ListFault
  /// The calling code, as recorded on the event (`"Module/File.swift:142 function(_:)"`);
  /// nil when ``StoreOptions/recordsSites`` is off.
  public var site: String?

  /// A fault made at `site`.
  public init(_ fault: ListFault, site: String?) {
    self.fault = fault
    self.site = site
  }

  /// The fault, then where it was made: `no item "x" (at App/ListVC.swift:12 tap(_:))`.
  public var description: String {
    guard let site else { return fault.description }
    return "\(fault) (at \(site))"
  }
}
