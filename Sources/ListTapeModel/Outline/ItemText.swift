/// Where an item's title and fields lie in its forest's text arena; `length` 0 when it has
/// neither. A plain value, so the state's arrays hold no reference per item.
struct ContentRef: Equatable {
  var offset: UInt32 = 0
  var length: UInt32 = 0

  static let none = ContentRef()
  var isNone: Bool { length == 0 }
}

/// An item's title and fields as bytes (what a state keeps, an index image stores and the
/// JSON writer prints without making a `String`): a flags byte (1 title, 2 fields), then the
/// title as a varint length and its UTF-8 bytes, then the fields as a varint count and each
/// key and value likewise, keys in `String` order (as every codec writes them). Canonical:
/// equal contents, equal bytes. After the flags byte it is what a checkpoint's strings
/// column holds for the item, so a checkpoint's text is copied, not decoded.
enum ItemText {
  static let hasTitle: UInt8 = 1
  static let hasFields: UInt8 = 2

  /// Appends the bytes of `title` and `fields` to `out`; nothing when both are nil.
  static func encode(title: String?, fields: [String: String]?, into out: inout [UInt8]) {
    guard title != nil || fields != nil else { return }
    out.append((title == nil ? 0 : hasTitle) | (fields == nil ? 0 : hasFields))
    if let title { appendString(title, &out) }
    if let fields {
      ByteSink.appendVarint(UInt64(fields.count), to: &out)
      for (k, v) in sortedFields(fields) {
        appendString(k, &out)
        appendString(v, &out)
      }
    }
  }

  /// The fields in the order of their keys.
  static func sortedFields(_ f: [String: String]) -> [(String, String)] {
    f.map { ($0.key, $0.value) }.sorted { a, b in a.0 < b.0 }
  }

  /// Copies an item's title and fields from `s` (a checkpoint's strings column, as
  /// `ByteSink.string` and `.fields` wrote them) as a blob into `out` at `end` (moved past
  /// it), checking them: bytes are copied as they are when the keys are ASCII and in order,
  /// else the fields are read and written again in canonical form (never longer). Returns
  /// the blob's extent (empty: neither). `out` has room for `capacity` bytes: the bytes
  /// left in `s` and a flags byte per item suffice, and a blob that would not fit throws.
  static func copy(
    flags: UInt8, from s: inout ByteSource, into out: UnsafeMutablePointer<UInt8>,
    capacity: Int, at end: inout Int
  ) throws(CodecError) -> Range<Int> {
    guard flags != 0 else { return end..<end }
    let start = end
    let from = s.offset
    if flags & hasTitle != 0 {
      let n = try s.count()
      try s.skipText(n)
    }
    var rewritten: [UInt8]?
    if flags & hasFields != 0 {
      let fieldsAt = s.offset
      let n = try s.count(minBytes: 2)
      var previous: UnsafeRawBufferPointer?
      var canonical = true
      for _ in 0..<n {
        let k = try s.count()
        let key = UnsafeRawBufferPointer(rebasing: s.base[s.offset..<s.offset &+ k])
        try s.skipText(k)
        let v = try s.count()
        try s.skipText(v)
        if canonical {
          let ascii = key.allSatisfy { $0 < 0x80 }
          if !ascii { canonical = false }
          if let p = previous, !p.lexicographicallyPrecedes(key) { canonical = false }
          previous = key
        }
      }
      if !canonical {
        // Read the fields again as strings (a later duplicate key wins) and write them in order.
        var blob = Array(UnsafeRawBufferPointer(rebasing: s.base[from..<fieldsAt]))
        var again = ByteSource(UnsafeRawBufferPointer(rebasing: s.base[fieldsAt..<s.offset]))
        let fields = try again.fields()
        ByteSink.appendVarint(UInt64(fields.count), to: &blob)
        for (k, v) in sortedFields(fields) {
          appendString(k, &blob)
          appendString(v, &blob)
        }
        rewritten = blob
      }
    }
    let bytes = rewritten.map { $0.count } ?? s.offset &- from
    guard bytes < capacity &- end else {
      throw s.fail("an item's text of \(bytes) bytes does not fit its state")
    }
    out[end] = flags
    if let rewritten {
      rewritten.withUnsafeBufferPointer {
        if let b = $0.baseAddress { (out + (end &+ 1)).update(from: b, count: bytes) }
      }
    } else if let b = s.base.baseAddress {
      (out + (end &+ 1)).update(
        from: (b + from).assumingMemoryBound(to: UInt8.self), count: bytes)
    }
    end &+= 1 &+ bytes
    return start..<end
  }

  /// Where the title and fields `flags` names end in `bytes` (from `at`, `end` bytes in
  /// all), when those bytes are ASCII (so every length is one byte and all text is valid)
  /// and read as `copy` would keep them as they are: every length within the bytes, keys
  /// in strictly increasing order. Nil otherwise, for `copy` to read them (and refuse or
  /// rewrite them).
  @inline(__always) static func canonicalASCII(
    flags: UInt8, in bytes: UnsafeRawPointer, at: Int, end: Int
  ) -> Int? {
    let b = bytes.assumingMemoryBound(to: UInt8.self)
    var p = at
    /// A length byte, then that many bytes: where they start, or nil past the end.
    @inline(__always) func string(_ p: inout Int) -> (start: Int, count: Int)? {
      guard p < end else { return nil }
      let n = Int(b[p])
      p &+= 1
      guard n <= end &- p else { return nil }
      defer { p &+= n }
      return (p, n)
    }
    if flags & hasTitle != 0 {
      guard string(&p) != nil else { return nil }
    }
    if flags & hasFields != 0 {
      guard p < end else { return nil }
      let count = Int(b[p])
      p &+= 1
      guard count <= (end &- p) / 2 else { return nil }
      var previous: (start: Int, count: Int)?
      for _ in 0..<count {
        guard let key = string(&p), string(&p) != nil else { return nil }
        if let previous {
          // Strictly increasing: the first differing byte is larger, or the key is longer.
          var i = 0
          let shared = min(previous.count, key.count)
          while i < shared, b[previous.start &+ i] == b[key.start &+ i] { i &+= 1 }
          let precedes =
            i < shared ? b[previous.start &+ i] < b[key.start &+ i] : previous.count < key.count
          guard precedes else { return nil }
        }
        previous = key
      }
    }
    return p
  }

  @inline(__always) static func appendString(_ s: String, _ out: inout [UInt8]) {
    ByteSink.appendVarint(UInt64(s.utf8.count), to: &out)
    out.append(contentsOf: s.utf8)
  }

  /// Reads a blob's parts: the title's bytes and the fields' (count, bytes after it).
  struct Parts {
    var title: UnsafeRawBufferPointer?
    var fieldCount = 0
    var fields: UnsafeRawBufferPointer?
  }

  /// The varint at `at` in `bytes` (trusted: written by `encode` or checked by `check`),
  /// moving `at` past it.
  @inline(__always) private static func trustedVarint(
    _ bytes: UnsafeRawBufferPointer, _ at: inout Int
  ) -> Int {
    var v = 0
    var shift = 0
    while at < bytes.count {
      let b = bytes[at]
      at &+= 1
      v |= Int(b & 0x7F) << shift
      if b < 0x80 { break }
      shift &+= 7
    }
    return v
  }

  /// The parts of a blob (trusted: written by `encode` or checked by `check`).
  static func parts(_ blob: UnsafeRawBufferPointer) -> Parts {
    var p = Parts()
    guard let flags = blob.first else { return p }
    var at = 1
    func varint() -> Int { trustedVarint(blob, &at) }
    if flags & hasTitle != 0 {
      let n = varint()
      p.title = UnsafeRawBufferPointer(rebasing: blob[at..<at &+ n])
      at &+= n
    }
    if flags & hasFields != 0 {
      p.fieldCount = varint()
      p.fields = UnsafeRawBufferPointer(rebasing: blob[at...])
    }
    return p
  }

  /// Calls `body` with each field's key and value bytes, in order.
  static func forEachField(
    _ parts: Parts, _ body: (UnsafeRawBufferPointer, UnsafeRawBufferPointer) -> Void
  ) {
    guard let f = parts.fields else { return }
    var at = 0
    func varint() -> Int { trustedVarint(f, &at) }
    for _ in 0..<parts.fieldCount {
      let k = varint()
      let key = UnsafeRawBufferPointer(rebasing: f[at..<at &+ k])
      at &+= k
      let n = varint()
      let value = UnsafeRawBufferPointer(rebasing: f[at..<at &+ n])
      at &+= n
      body(key, value)
    }
  }

  /// `Forest.update`'s merge on the bytes: the blob of `old` with `new`'s title when it has
  /// one and `new`'s fields merged into `old`'s key by key (`new`'s value wins), in
  /// canonical form. Nil when a key of either is not ASCII: `String` order is byte order
  /// only for ASCII, so the caller merges those as strings.
  static func merged(_ old: UnsafeRawBufferPointer, _ new: UnsafeRawBufferPointer) -> [UInt8]? {
    let o = parts(old)
    let n = parts(new)
    /// The fields of `p` as key and value bytes, nil when a key is not ASCII.
    func fields(_ p: Parts) -> [(key: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer)]? {
      var all: [(key: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer)] = []
      all.reserveCapacity(p.fieldCount)
      var ascii = true
      forEachField(p) { k, v in
        if ascii && !isASCII(k) { ascii = false }
        all.append((k, v))
      }
      return ascii ? all : nil
    }
    guard let of = fields(o), let nf = fields(n) else { return nil }
    let title = n.title ?? o.title
    let hasFields = o.fields != nil || n.fields != nil
    var out: [UInt8] = []
    out.reserveCapacity(old.count &+ new.count &+ 8)
    out.append((title == nil ? 0 : hasTitle) | (hasFields ? ItemText.hasFields : 0))
    func append(_ b: UnsafeRawBufferPointer) {
      ByteSink.appendVarint(UInt64(b.count), to: &out)
      out.append(contentsOf: b)
    }
    if let title { append(title) }
    guard hasFields else { return out }
    // Both lists are in key order: one merge pass, counting as it goes.
    var merged: [(key: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer)] = []
    merged.reserveCapacity(of.count &+ nf.count)
    var i = 0
    var j = 0
    while i < of.count || j < nf.count {
      if j == nf.count {
        merged.append(of[i])
        i &+= 1
      } else if i == of.count || nf[j].key.lexicographicallyPrecedes(of[i].key) {
        merged.append(nf[j])
        j &+= 1
      } else if of[i].key.lexicographicallyPrecedes(nf[j].key) {
        merged.append(of[i])
        i &+= 1
      } else {
        merged.append(nf[j])
        i &+= 1
        j &+= 1
      }
    }
    ByteSink.appendVarint(UInt64(merged.count), to: &out)
    for f in merged {
      append(f.key)
      append(f.value)
    }
    return out
  }

  /// Whether a field key is ASCII: then byte order is `String` order, and keys in
  /// increasing byte order are in the canonical order `encode` writes.
  @inline(__always) static func isASCII(_ key: UnsafeRawBufferPointer) -> Bool {
    key.allSatisfy { $0 < 0x80 }
  }

  static func string(_ bytes: UnsafeRawBufferPointer) -> String {
    String(decoding: bytes.assumingMemoryBound(to: UInt8.self), as: UTF8.self)
  }

  /// The title and fields a blob holds, as strings.
  static func decode(_ blob: UnsafeRawBufferPointer) -> (
    title: String?, fields: [String: String]?
  ) {
    let p = parts(blob)
    var fields: [String: String]?
    if p.fields != nil {
      var f: [String: String] = [:]
      forEachField(p) { k, v in f[string(k)] = string(v) }
      fields = f
    }
    return (p.title.map(string), fields)
  }

  /// Checks an untrusted blob (from a file): its flags, lengths and UTF-8, and that it ends
  /// where its parts do.
  static func check(_ blob: UnsafeRawBufferPointer) throws(CodecError) {
    var s = ByteSource(blob)
    let flags = try s.byte()
    guard flags != 0, flags & ~(hasTitle | hasFields) == 0 else {
      throw s.fail("bad item text flags \(flags)")
    }
    if flags & hasTitle != 0 { _ = try s.string() }
    if flags & hasFields != 0 { _ = try s.fields() }
    guard s.isAtEnd else { throw s.fail("\(s.remaining) bytes after an item's text") }
  }
}

extension Forest {
  /// Calls `body` with item `x`'s text blob (empty when it has no title or fields).
  @inline(__always) func withContent<R>(_ x: Handle, _ body: (UnsafeRawBufferPointer) -> R) -> R {
    let c = content[Int(x)]
    if c.isNone { return body(UnsafeRawBufferPointer(start: nil, count: 0)) }
    let r = Int(c.offset)..<Int(c.offset) &+ Int(c.length)
    return text.withUnsafeBytes { body(UnsafeRawBufferPointer(rebasing: $0[r])) }
  }

  /// Item `x`'s title.
  func title(of x: Handle) -> String? {
    withContent(x) { ItemText.parts($0).title.map(ItemText.string) }
  }

  /// Item `x`'s fields.
  func fields(of x: Handle) -> [String: String]? {
    withContent(x) { $0.isEmpty ? nil : ItemText.decode($0).fields }
  }

  /// Stores a blob in the text arena and returns where it lies.
  mutating func storeText(_ blob: UnsafeRawBufferPointer) -> ContentRef {
    guard !blob.isEmpty else { return .none }
    let ref = ContentRef(
      offset: UInt32(truncatingIfNeeded: text.count), length: UInt32(truncatingIfNeeded: blob.count)
    )
    text.append(contentsOf: blob)
    return ref
  }

  /// Stores `title` and `fields` in the text arena.
  mutating func storeText(title: String?, fields: [String: String]?) -> ContentRef {
    guard title != nil || fields != nil else { return .none }
    let start = text.count
    ItemText.encode(title: title, fields: fields, into: &text)
    return ContentRef(
      offset: UInt32(truncatingIfNeeded: start),
      length: UInt32(truncatingIfNeeded: text.count &- start))
  }
}
