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
/// are copy-on-write, so a snapshot costs what the next write changes). `crash(_:_:)` turns
/// a snapshot into the files a power loss at that moment can leave, one of a fixed list of
/// `CrashState`s (`states(at:)`): unsynced writes dropped or kept, the last one torn (cut
/// short, or its rest zeros or garbage) or reordered at 512-byte or 4 KiB granularity, an
/// earlier one lost while later ones survive; entries of files created since the last
/// directory sync missing in every other state.
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

  /// How a crash treats the unsynced changes of each file: the groups before the last
  /// barrier reached the disk whole (a barrier orders them first), and the last group (all
  /// the unsynced changes on Linux, where a barrier is a full sync) is left as follows.
  enum CrashState: Equatable, CustomStringConvertible {
    /// None of them reached the disk.
    case dropUnsynced
    /// All of them did.
    case keepAll
    /// All but the last write did; the last reached the disk up to the sector boundary
    /// nearest its middle, the file's size then ending there (`short`), or covering the
    /// whole write with the rest zeros (`zeros`) or garbage (`garbage`).
    case tornLast(Tear)
    /// All but the last write did; of the last, every other `block`-byte block of the file
    /// holds its new contents, the others their old ones.
    case reorderedLast(block: Int)
    /// All of them did but one 512-byte sector they changed, which holds its old contents:
    /// the disk wrote the sectors in another order (each whole, with every change the
    /// system held for it). The `index`-th changed sector from the file's start, or from
    /// its end (`fromEnd`).
    case lostSector(index: Int, fromEnd: Bool)

    enum Tear: Equatable {
      case short, zeros, garbage
    }

    var description: String {
      switch self {
      case .dropUnsynced: return "drop unsynced"
      case .keepAll: return "keep all"
      case .tornLast(let tear): return "last write torn (\(tear))"
      case .reorderedLast(let block): return "last write reordered by \(block) B"
      case .lostSector(let k, let fromEnd):
        return "changed sector \(k + 1) from the \(fromEnd ? "end" : "start") lost, the others kept"
      }
    }
  }

  /// Changed sectors lost one at a time from each end of a file's last group: at most this
  /// many from its start and as many from its end.
  static let lostSectorsPerEnd = 4

  /// The crash states of `snapshot`, a fixed list: dropped, kept, the last write torn three
  /// ways and reordered two ways, and each of the first and last `lostSectorsPerEnd`
  /// sectors the last group changed lost alone (one more than the changes leave lone: a
  /// group that changed one sector has no such state).
  static func states(at snapshot: Snapshot) -> [CrashState] {
    let sectors =
      snapshot.inodes.values.map { changedSectors($0.unsynced.last ?? []).count }
      .max() ?? 0
    var out: [CrashState] = [
      .dropUnsynced, .keepAll, .tornLast(.short), .tornLast(.zeros), .tornLast(.garbage),
      .reorderedLast(block: 512), .reorderedLast(block: 4096),
    ]
    guard sectors > 1 else { return out }
    let each = min(lostSectorsPerEnd, (sectors + 1) / 2)
    out += (0..<each).map { CrashState.lostSector(index: $0, fromEnd: false) }
    out += (0..<min(each, sectors - each)).map { CrashState.lostSector(index: $0, fromEnd: true) }
    return out
  }

  /// The 512-byte sectors `changes` wrote, in order.
  static func changedSectors(_ changes: [Change]) -> [Int] {
    var sectors = Set<Int>()
    for change in changes {
      if case .write(let offset, let bytes) = change, !bytes.isEmpty {
        sectors.formUnion((offset / 512)...((offset + bytes.count - 1) / 512))
      }
    }
    return sectors.sorted()
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
  /// `snapshot` leaves in `state`. With `loseEntries`, files whose directory entry is not
  /// durable are gone.
  static func crash(_ snapshot: Snapshot, _ state: CrashState, loseEntries: Bool)
    -> [String: [UInt8]]
  {
    var contents: [Int: [UInt8]] = [:]
    var out: [String: [UInt8]] = [:]
    for (path, entry) in snapshot.names.sorted(by: { $0.key < $1.key }) {
      if loseEntries && !entry.durable { continue }
      guard let file = snapshot.inodes[entry.inode] else { continue }
      if contents[entry.inode] == nil { contents[entry.inode] = crash(file, state) }
      out[path] = contents[entry.inode]
    }
    return out
  }

  /// One file after a crash in `state`.
  static func crash(_ file: File, _ state: CrashState) -> [UInt8] {
    var base = file.durable
    for group in file.unsynced.dropLast() {
      for change in group { apply(change, to: &base) }
    }
    let changes = file.unsynced.last ?? []
    guard !changes.isEmpty else { return base }
    switch state {
    case .dropUnsynced:
      return base
    case .keepAll:
      for change in changes { apply(change, to: &base) }
      return base
    case .lostSector(let k, let fromEnd):
      var all = base
      for change in changes { apply(change, to: &all) }
      let sectors = changedSectors(changes)
      guard k < sectors.count else { return all }  // this file changed fewer sectors
      let sector = fromEnd ? sectors[sectors.count - 1 - k] : sectors[k]
      for i in (sector * 512)..<min((sector + 1) * 512, all.count) {
        all[i] = i < base.count ? base[i] : 0
      }
      return all
    case .tornLast(let tear):
      for change in changes.dropLast() { apply(change, to: &base) }
      guard case .write(let offset, let bytes)? = changes.last else {
        if let last = changes.last { apply(last, to: &base) }
        return base
      }
      let end = offset + bytes.count
      // The sector boundary nearest the middle of the write (at least its start).
      let middle = max(offset, ((offset + bytes.count / 2) / 512) * 512)
      if middle > offset {
        apply(.write(offset: offset, bytes: Array(bytes[..<(middle - offset)])), to: &base)
      }
      switch tear {
      case .short:
        break  // an append ends at the tear; an overwrite keeps the file's size
      case .zeros:
        if base.count < end { base += [UInt8](repeating: 0, count: end - base.count) }
        for i in middle..<end { base[i] = 0 }
      case .garbage:
        if base.count < end { base += [UInt8](repeating: 0, count: end - base.count) }
        var rng = SplitMix64(seed: UInt64(offset))
        for i in middle..<end { base[i] = UInt8(truncatingIfNeeded: rng.next()) }
      }
      return base
    case .reorderedLast(let block):
      for change in changes.dropLast() { apply(change, to: &base) }
      var after = base
      if let last = changes.last { apply(last, to: &after) }
      // The size is the new one; each block holds its new or its old contents in turn.
      var out = after
      var start = 0
      while start < out.count {
        let end = min(start + block, out.count)
        if (start / block) % 2 == 1 {
          for i in start..<end { out[i] = i < base.count ? base[i] : 0 }
        }
        start = end
      }
      return out
    }
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
