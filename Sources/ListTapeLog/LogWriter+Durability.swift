#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

extension Format {
  /// Frame flag bit 2, a sync point: when the frame was written, every byte before it had
  /// been synced (a full sync, or a barrier, which keeps it ahead of this frame on disk).
  /// Writers before format 1.0's power-loss work set it on a segment's first frame instead;
  /// read that way it only makes recovery refuse more, never cut more.
  static let flagSyncPoint = flagSegmentStart
}

extension LogWriter {
  /// Creates the log at `path` atomically: the header is written to a temporary name and
  /// synced, then linked to `path`, so that after a power loss `path` is either absent or a
  /// log with a complete header (a file created in place can come back as a zero-filled or
  /// garbage header that no writer can open again). Returns the locked descriptor, or nil
  /// when another process created `path` first.
  static func create(path: String, options: LogWriterOptions, files: any FileLayer)
    throws(LogError) -> Int32?
  {
    let syncing = options.fsync != .never
    var suffix = ""
    for b in randomUUID().prefix(6) { suffix += String(b, radix: 16) }
    let temporary = "\(path).new-\(suffix)"
    let fd: Int32
    switch files.open(temporary, O_RDWR | O_APPEND | O_CREAT | O_EXCL) {
    case .success(let f): fd = f
    case .failure(let e): throw .io("cannot create", path: path, errno: e)
    }
    // The class is set before any byte is written, and the link carries it to `path`.
    if let protection = options.protection { files.setProtectionClass(protection, of: temporary) }
    var linked = false
    do throws(LogError) {
      try lock(fd, path: path)
      _ = try WriterCore.initialize(
        fd: fd, path: path, options: options, syncing: syncing, files: files)
      if let e = files.link(temporary, path) {
        guard e == EEXIST else { throw .io("cannot create", path: path, errno: e) }
        _ = files.unlink(temporary)
        _ = files.close(fd)
        return nil
      }
      linked = true
      // Both entry changes go to disk with the one directory sync.
      _ = files.unlink(temporary)
      if syncing, let e = files.syncDirectory(of: path) {
        throw .io("cannot sync directory", path: path, errno: e)
      }
      return fd
    } catch {
      _ = files.unlink(linked ? path : temporary)
      _ = files.close(fd)
      throw error
    }
  }
}

extension FrameScan {
  /// Whether mid-file damage at `stop` can be what a power loss leaves, so that the writer
  /// may cut it as it cuts a torn tail: the valid prefix holds a sync point (the log was
  /// written by a writer that marks them) and no frame after the damage is one. A power
  /// loss only garbles bytes written since the last sync, and every frame written after a
  /// sync that covered the damaged bytes would carry the flag. When the damage is a 2.0
  /// log's first frame there is no prefix to ask, but every 2.0 writer marks sync points:
  /// the header counts as one (nothing was synced after it, as an interval log's first
  /// seconds leave it).
  /// - Complexity: O(frames before the damage) header reads, plus a resync over the rest.
  func isPowerLossShape(_ stop: LogDamage, headerLength: UInt64) throws(LogError) -> Bool {
    var sawSyncPoint = major >= 2 && stop.offset == headerLength
    var offset = headerLength
    while !sawSyncPoint && offset < stop.offset {
      guard case .ok(let h) = try check(at: offset, payload: false) else { return false }
      if h.flags & Format.flagSyncPoint != 0 {
        sawSyncPoint = true
        break
      }
      offset += h.frameLength
    }
    guard sawSyncPoint else { return false }
    var from = stop.offset + 1
    while let (at, h) = try findFrame(from: from) {
      if h.flags & Format.flagSyncPoint != 0 { return false }
      from = at + 1
    }
    return true
  }
}
