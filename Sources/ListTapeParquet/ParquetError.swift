#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Why a Parquet file could not be written: the file, what failed, and the system's errno
/// when there is one.
package struct ParquetError: Error, Sendable, CustomStringConvertible {
  package var path: String
  package var what: String
  package var errno: Int32?

  package init(path: String, what: String, errno: Int32? = nil) {
    self.path = path
    self.what = what
    self.errno = errno
  }

  package var description: String {
    guard let errno, let text = strerror(errno) else { return "\(what) (\(path))" }
    return "\(what): \(String(cString: text)) (\(path))"
  }
}
