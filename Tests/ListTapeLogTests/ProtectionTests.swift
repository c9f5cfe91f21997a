import Foundation
import Testing

@testable import ListTapeLog

/// The real file system, with data protection classes kept in memory (Linux has none) and
/// every class set recorded in order with the writes, so tests can see which file got which
/// class before its first byte.
final class ProtectingFiles: FileLayer, @unchecked Sendable {
  private let lock = NSLock()
  private var classes: [String: ProtectionClass] = [:]
  private var events: [String] = []

  init(_ classes: [String: ProtectionClass] = [:]) { self.classes = classes }

  var log: [String] { lock.withLock { events } }

  private func note(_ s: String) { lock.withLock { events.append(s) } }

  func open(_ path: String, _ flags: Int32) -> Posix.Opened {
    note("open \(path)")
    return SystemFiles.shared.open(path, flags)
  }
  func write(_ fd: Int32, _ bytes: UnsafeRawBufferPointer) -> Int32? {
    note("write \(fd)")
    return SystemFiles.shared.write(fd, bytes)
  }
  func truncate(_ fd: Int32, _ length: UInt64) -> Int32? {
    SystemFiles.shared.truncate(fd, length)
  }
  func sync(_ fd: Int32, _ kind: SyncKind) -> Int32? { SystemFiles.shared.sync(fd, kind) }
  func syncDirectory(of path: String) -> Int32? {
    note("syncDirectory \(path)")
    return SystemFiles.shared.syncDirectory(of: path)
  }
  func link(_ from: String, _ to: String) -> Int32? { SystemFiles.shared.link(from, to) }
  func unlink(_ path: String) -> Int32? { SystemFiles.shared.unlink(path) }
  func close(_ fd: Int32) -> Int32? { SystemFiles.shared.close(fd) }
  func protectionClass(of path: String) -> ProtectionClass? { lock.withLock { classes[path] } }
  func setProtectionClass(_ protection: ProtectionClass, of path: String) {
    note("protect \(path)")
    lock.withLock { classes[path] = protection }
  }
}

@Suite("Data protection of the files beside a log")
struct ProtectionTests {
  @Test("a new log gets its class under its temporary name, before its header is written")
  func newLogProtectedBeforeItsFirstByte() throws {
    let dir = TempDir()
    let path = dir.file("a.log")
    let files = ProtectingFiles()
    var options = LogWriterOptions()
    options.fsync = .never
    options.protection = .complete
    let w = try LogWriter.open(path: path, options: options, files: files)
    try w.close()
    let log = files.log
    let set = try #require(log.firstIndex { $0.hasPrefix("protect \(path).new-") })
    let firstWrite = try #require(log.firstIndex { $0.hasPrefix("write") })
    #expect(set < firstWrite)
    let temporary = String(log[set].dropFirst("protect ".count))
    #expect(files.protectionClass(of: temporary) == .complete)
  }

  @Test("a torn tail is saved aside with the log's class")
  func tailGetsTheLogsClass() throws {
    let dir = TempDir()
    let path = dir.file("a.log")
    var options = LogWriterOptions()
    options.fsync = .never
    let w = try LogWriter.open(path: path, options: options)
    try w.append([1, 2, 3])
    try w.close()
    let handle = try #require(FileHandle(forWritingAtPath: path))
    handle.seekToEndOfFile()
    handle.write(Data([0xF1, 0x46, 0x52]))
    try handle.close()
    let files = ProtectingFiles([path: .completeUnlessOpen])
    let again = try LogWriter.open(path: path, options: options, files: files)
    let saved = try #require(again.recovery?.savedTo)
    try again.close()
    #expect(files.protectionClass(of: saved) == .completeUnlessOpen)
  }

  @Test("salvage writes its output with the damaged log's class")
  func salvageGetsTheLogsClass() throws {
    let dir = TempDir()
    let path = dir.file("a.log")
    var options = LogWriterOptions()
    options.fsync = .never
    let w = try LogWriter.open(path: path, options: options)
    try w.append([1, 2, 3])
    try w.close()
    let files = ProtectingFiles([path: .complete])
    let out = dir.file("b.log")
    _ = try LogReader.salvage(from: path, to: out, files: files)
    let set = try #require(files.log.first { $0.hasPrefix("protect \(out).salvage-") })
    #expect(files.protectionClass(of: String(set.dropFirst("protect ".count))) == .complete)
  }
}
