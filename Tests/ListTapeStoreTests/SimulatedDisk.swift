import Foundation
import ListTapeModel
import ListTapeSamples

@testable import ListTapeLog

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A disk for power-loss tests, put under the writer as its `FileLayer`.
///
/// Every operation goes to the real file (so readers in the same process see what a live
/// system would), and is also applied to a model that keeps, per file, the bytes that are
/// durable apart from the writes and truncations made since the last sync, plus whether the
/// directory entry is durable. After each operation it takes a snapshot of the model (arrays
/// are copy-on-write, so a snapshot costs what the next write changes). `crash(_:_:rng:)`
/// turns a snapshot into the files a power loss at that moment can leave: unsynced writes
/// dropped, kept in part, reordered at 512-byte or 4 KiB granularity, torn sectors filled
/// with zeros or garbage, entries of files created since the last directory sync missing.
///
/// Syncs are not passed to the real disk: the model is what the tests judge.
final class SimulatedDisk: FileLayer, @unchecked Sendable {
  /// What a `.barrier` sync means: durable (Linux, where it is `fdatasync`) or only an
  /// ordering point (Apple's `F_BARRIERFSYNC`: writes before it reach the disk before writes
  /// after it, but may still sit in the drive's cache).
  enum Semantics: Sendable, CustomStringConvertible {
    case linux
    case darwin

    var description: String { self == .linux ? "linux" : "darwin" }
  }

  /// A change not yet durable.
  enum Change {
    case write(offset: Int, bytes: [UInt8])
    case truncate(Int)
  }

  /// One file (an inode) as the model knows it.
  struct File {
    /// What survives any crash.
    var durable: [UInt8]
    /// Changes since the last full sync, in order; a Darwin barrier starts a new group, and a
    /// crash keeps whole groups before the one it tears.
    var unsynced: [[Change]] = [[]]
    /// What a reader of the live file sees.
    var current: [UInt8]
  }

  /// A directory entry: a name for a file, durable or not (created or linked since the
  /// last sync of its directory). Removals are modelled as immediate: the writer only
  /// removes temporary names, which a crash may or may not bring back to no harm.
  struct Entry {
    var inode: Int
    var durable: Bool
  }

  /// The model after one operation.
  struct Snapshot {
    /// Operations done before this snapshot was taken (1 for the first).
    var index: Int
    var inodes: [Int: File]
    var names: [String: Entry]
    /// What the operation was, for failure messages.
    var label: String
  }

  /// How a crash treats the unsynced changes of each file.
  enum CrashMode: CaseIterable, CustomStringConvertible {
    /// None of them reached the disk.
    case dropUnsynced
    /// All of them did.
    case keepAll
    /// The first k did, in order, the next one only up to a sector boundary (or with the
    /// file extended and the rest of the write unwritten, as zeros).
    case keepPrefix
    /// Each 512-byte sector independently holds its old or its new contents.
    case reorder512
    /// Each 4 KiB page independently holds its old or its new contents.
    case reorder4K
    /// As `reorder512`, and some changed sectors are torn: zero-filled.
    case tornZeros
    /// As `reorder512`, and some changed sectors are torn: filled with garbage.
    case tornGarbage

    var description: String {
      switch self {
      case .dropUnsynced: return "drop unsynced"
      case .keepAll: return "keep all"
      case .keepPrefix: return "keep a prefix"
      case .reorder512: return "reorder 512 B"
      case .reorder4K: return "reorder 4 KiB"
      case .tornZeros: return "torn sectors, zeros"
      case .tornGarbage: return "torn sectors, garbage"
      }
    }
  }

  let semantics: Semantics
  private let lock = NSLock()
  private var inodes: [Int: File] = [:]
  private var names: [String: Entry] = [:]
  private var open: [Int32: (inode: Int, path: String)] = [:]
  private var operations = 0
  private var taken: [Snapshot] = []
  private var threads: [String: Int32] = [:]
  /// Makes the next write to a path whose name ends with the suffix fail with the errno
  /// after writing half of its bytes (a short write, like a full disk).
  private var failing: (suffix: String, errno: Int32)?

  init(semantics: Semantics) {
    self.semantics = semantics
  }

  /// Every snapshot taken so far, in order.
  var snapshots: [Snapshot] { locked { taken } }

  /// Operations done so far: an acknowledgement made now holds from this snapshot on.
  var operationCount: Int { locked { operations } }

  /// The kernel thread id of a thread the writer started, by name (Linux only).
  func threadID(_ name: String) -> Int32? { locked { threads[name] } }

  /// Makes the next write to a file whose path ends with `suffix` come up short.
  func failNextWrite(to suffix: String, errno: Int32) {
    locked { failing = (suffix, errno) }
  }

  private func locked<R>(_ body: () -> R) -> R {
    lock.lock()
    defer { lock.unlock() }
    return body()
  }

  private func took(_ label: String) {
    operations += 1
    taken.append(Snapshot(index: operations, inodes: inodes, names: names, label: label))
  }

  /// Runs `body` on the file open as `fd` under the lock; it returns the errno and, when it
  /// changed the disk, what it did, which takes a snapshot.
  private func onFile(
    _ fd: Int32, _ body: (inout File, _ inode: Int, _ name: String) -> (Int32?, did: String?)
  ) -> Int32? {
    locked {
      guard let (inode, path) = open[fd], var file = inodes[inode] else { return EBADF }
      let (e, did) = body(&file, inode, name(path))
      inodes[inode] = file
      if let did { took(did) }
      return e
    }
  }

  // MARK: FileLayer

  func open(_ path: String, _ flags: Int32) -> Posix.Opened {
    locked {
      let existed = FileManager.default.fileExists(atPath: path)
      let result = Posix.open(path, flags)
      guard case .success(let fd) = result else { return result }
      if let entry = names[path] {
        open[fd] = (entry.inode, path)
        return result
      }
      let inode = inodes.count
      // A file from before the test is durable as it is; a new one has no durable entry.
      let bytes = existed ? [UInt8](FileManager.default.contents(atPath: path) ?? Data()) : []
      inodes[inode] = File(durable: bytes, current: bytes)
      names[path] = Entry(inode: inode, durable: existed)
      open[fd] = (inode, path)
      if !existed { took("create \(name(path))") }
      return result
    }
  }

  func write(_ fd: Int32, _ bytes: UnsafeRawBufferPointer) -> Int32? {
    onFile(fd) { file, inode, name in
      var data = [UInt8](bytes)
      var failure: Int32?
      if let f = failing,
        names.contains(where: { $0.value.inode == inode && $0.key.hasSuffix(f.suffix) })
      {
        failing = nil
        failure = f.errno
        data = Array(data.prefix(data.count / 2))
      }
      if let e = data.withUnsafeBytes({ Posix.writeAll(fd, $0) }) { return (e, nil) }
      let offset = Int(lseek(fd, 0, SEEK_CUR)) - data.count
      Self.record(.write(offset: offset, bytes: data), in: &file)
      return (failure, "write \(data.count) B at \(offset) of \(name)")
    }
  }

  func truncate(_ fd: Int32, _ length: UInt64) -> Int32? {
    onFile(fd) { file, _, name in
      if let e = SystemFiles.shared.truncate(fd, length) { return (e, nil) }
      Self.record(.truncate(Int(length)), in: &file)
      return (nil, "truncate \(name) to \(length)")
    }
  }

  func sync(_ fd: Int32, _ kind: SyncKind) -> Int32? {
    onFile(fd) { file, _, name in
      if kind == .full || semantics == .linux {
        file.durable = file.current
        file.unsynced = [[]]
      } else if !(file.unsynced.last?.isEmpty ?? true) {
        file.unsynced.append([])
      }
      return (nil, "\(kind == .full ? "full sync" : "barrier") \(name)")
    }
  }

  /// Applies an unsynced change to what a live reader sees, and remembers it.
  private static func record(_ change: Change, in file: inout File) {
    apply(change, to: &file.current)
    file.unsynced[file.unsynced.count - 1].append(change)
  }

  func syncDirectory(of path: String) -> Int32? {
    locked {
      let dir = Posix.directory(of: path)
      for (p, entry) in names where Posix.directory(of: p) == dir && !entry.durable {
        names[p]?.durable = true
      }
      took("sync directory of \(name(path))")
      return nil
    }
  }

  func link(_ from: String, _ to: String) -> Int32? {
    locked {
      if let e = SystemFiles.shared.link(from, to) { return e }
      guard let entry = names[from] else { return nil }
      names[to] = Entry(inode: entry.inode, durable: false)
      took("link \(name(from)) to \(name(to))")
      return nil
    }
  }

  func unlink(_ path: String) -> Int32? {
    locked {
      if let e = SystemFiles.shared.unlink(path) { return e }
      names[path] = nil
      took("unlink \(name(path))")
      return nil
    }
  }

  func close(_ fd: Int32) -> Int32? {
    locked {
      open[fd] = nil
      return SystemFiles.shared.close(fd)
    }
  }

  func threadStarted(_ name: String) {
    #if os(Linux)
    // /proc/thread-self links to "<pid>/task/<tid>".
    if let target = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/thread-self"),
      let tid = target.split(separator: "/").last.flatMap({ Int32($0) })
    {
      locked { threads[name] = tid }
    }
    #endif
  }

  private func name(_ path: String) -> String {
    String(path.split(separator: "/").last ?? Substring(path))
  }

  // MARK: Crashing

  /// The files (path to contents; a missing path is a missing file) that a power loss at
  /// `snapshot` leaves under `mode`. With `loseEntries`, files whose directory entry is not
  /// durable are gone.
  static func crash(
    _ snapshot: Snapshot, _ mode: CrashMode, loseEntries: Bool, rng: inout SplitMix64
  ) -> [String: [UInt8]] {
    var contents: [Int: [UInt8]] = [:]
    var out: [String: [UInt8]] = [:]
    for (path, entry) in snapshot.names.sorted(by: { $0.key < $1.key }) {
      if loseEntries && !entry.durable { continue }
      guard let file = snapshot.inodes[entry.inode] else { continue }
      if contents[entry.inode] == nil { contents[entry.inode] = crash(file, mode, rng: &rng) }
      out[path] = contents[entry.inode]
    }
    return out
  }

  /// One file after a crash: the groups of changes before a random one are kept whole (they
  /// precede a barrier that reached the disk), that group is torn as `mode` says, the rest
  /// is lost.
  static func crash(_ file: File, _ mode: CrashMode, rng: inout SplitMix64) -> [UInt8] {
    var base = file.durable
    let groups = file.unsynced
    let torn = groups.count > 1 ? rng.below(groups.count) : 0
    for group in groups[..<torn] {
      for change in group { apply(change, to: &base) }
    }
    let changes = groups[torn]
    guard !changes.isEmpty else { return base }
    switch mode {
    case .dropUnsynced:
      return base
    case .keepAll:
      for change in changes { apply(change, to: &base) }
      return base
    case .keepPrefix:
      return keepPrefix(base, changes, rng: &rng)
    case .reorder512, .reorder4K, .tornZeros, .tornGarbage:
      return reorder(base, changes, mode, rng: &rng)
    }
  }

  /// The first k changes, then part of the next: a write kept up to a sector boundary of the
  /// file, with the file's size either matching what was kept or already covering the whole
  /// write (the rest of it unwritten, zeros).
  private static func keepPrefix(_ base: [UInt8], _ changes: [Change], rng: inout SplitMix64)
    -> [UInt8]
  {
    var out = base
    let k = rng.below(changes.count)
    for change in changes[..<k] { apply(change, to: &out) }
    guard case .write(let offset, let bytes) = changes[k] else { return out }
    let end = offset + bytes.count
    var cuts = [offset]
    var boundary = (offset / 512 + 1) * 512
    while boundary < end {
      cuts.append(boundary)
      boundary += 512
    }
    let cut = cuts[rng.below(cuts.count)]
    if cut > offset {
      apply(.write(offset: offset, bytes: Array(bytes[..<(cut - offset)])), to: &out)
    }
    if rng.chance(50), out.count < end {
      out += [UInt8](repeating: 0, count: end - out.count)
    }
    return out
  }

  /// Each block holds the contents it had before the changes or after them, independently;
  /// the size is any size the file had along the way. Torn modes then fill the changed bytes
  /// of some 512-byte sectors with zeros or garbage.
  private static func reorder(
    _ base: [UInt8], _ changes: [Change], _ mode: CrashMode, rng: inout SplitMix64
  ) -> [UInt8] {
    var after = base
    var sizes = [base.count]
    for change in changes {
      apply(change, to: &after)
      sizes.append(after.count)
    }
    let size = sizes[rng.below(sizes.count)]
    let block = mode == .reorder4K ? 4096 : 512
    var out = [UInt8](repeating: 0, count: size)
    var start = 0
    while start < size {
      let end = min(start + block, size)
      let useNew = rng.chance(50)
      for i in start..<end {
        if useNew {
          out[i] = i < after.count ? after[i] : (i < base.count ? base[i] : 0)
        } else {
          out[i] = i < base.count ? base[i] : 0
        }
      }
      // Powersafe overwrite (SQLite's default assumption): a torn sector damages only the
      // bytes being written in it, never durable bytes that share the sector.
      if mode == .tornZeros || mode == .tornGarbage, rng.chance(30) {
        for i in start..<end
        where (i < base.count ? base[i] : 0) != (i < after.count ? after[i] : 0) || i >= base.count
        {
          out[i] = mode == .tornZeros ? 0 : UInt8(truncatingIfNeeded: rng.next())
        }
      }
      start = end
    }
    return out
  }

  static func apply(_ change: Change, to bytes: inout [UInt8]) {
    switch change {
    case .write(let offset, let data):
      if bytes.count < offset + data.count {
        bytes += [UInt8](repeating: 0, count: offset + data.count - bytes.count)
      }
      bytes.replaceSubrange(offset..<(offset + data.count), with: data)
    case .truncate(let length):
      if length < bytes.count {
        bytes.removeSubrange(length...)
      } else {
        bytes += [UInt8](repeating: 0, count: length - bytes.count)
      }
    }
  }
}
