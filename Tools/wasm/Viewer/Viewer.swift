import ListTapeInvestigate
import ListTapeJSON
import ListTapeModel

/// Where a fold can start: the state after event `seq` in the state codec (the compact
/// layout of the log's checkpoints and of the CLI's index file, whose ids are entries of
/// the dictionary of `segment`, `defined` of them defined by then), the next frame to read
/// being `frame`, an events frame.
struct SeekPoint {
  var seq: Int
  var frame: Int
  var segment: UInt64
  var defined: Int
  var state: [UInt8]
  /// The site model the frames after the point are read with (layout 3 frames).
  var sites: SiteSync
}

/// The HTML viewer's reader: the page hands over the log's bytes (`PageLog` checks them as
/// the reader checks a file) and each frame's payload once it has inflated it; the module
/// decodes the frames with the model's decoder (`EventDecoder`, the CLI's) and folds their
/// records with the one reducer (`ListState.apply`), as `Timeline.fold` does.
///
/// Two folds: `view`, the state the page draws, and `pass`, the first fold of the whole
/// window, which the page runs in slices after its first paint; the pass finds the faults
/// and marks and keeps a seek point every `spacing` events, its state in the state codec
/// and each segment's dictionary once, as the CLI's index file keeps them. Until the pass
/// gets there, the view starts from the log's own checkpoints. It reads states back as rows
/// to draw or as the protocol's state JSON, each event's diff as `listtape diff` words it,
/// and events in the words of `listtape events`.
///
/// Calls pass pointers and lengths into linear memory; text comes back in one result buffer
/// (`lt_result`, `lt_result_length`) that the next call replaces.
struct Viewer {
  var log = PageLog()
  /// A salvaged log's recovery points: where a fold takes the log's checkpoint as the
  /// state (`Timeline.anchors`), as the CLI passed them.
  var anchors: Set<Int> = []
  var spacing = 65_536
  /// The last event of the window.
  var last = 0
  var points: [SeekPoint] = []
  /// The dictionaries of the segments the pass has left, and their aliases.
  var segments: [UInt64: (ids: IdSpace, aliases: DefinitionAliases)] = [:]
  /// Dictionaries of finished segments with their string table built, for the view's
  /// lookups by id after a jump (one table per segment, not one per jump).
  var indexed: [UInt64: IdSpace] = [:]
  /// String tables the view built (the page's timing report shows it).
  var tablesBuilt = 0
  /// Times the view started over from a seek point or checkpoint (the timing report's).
  var restores = 0
  /// The log's checkpoints (events folded, frame), for the view before the pass is there.
  var checkpoints: [(seq: Int, frame: Int)] = []
  var view = Cursor(state: ListState(), decoder: EventDecoder(), seq: 0, frame: 0)
  var pass = Cursor(state: ListState(), decoder: EventDecoder(), seq: 0, frame: 0)
  var passDone = false
  /// Copies of the view at the events just before it (kept by steps forward, and made
  /// when it stepped back past them), so that stepping back folds nothing: a step back
  /// restores a seek point once per `Self.recentCount` steps, not once per step.
  var recent: [Cursor] = []
  static let recentCount = 24
  var result = UnsafeMutableRawBufferPointer(start: nil, count: 0)
  /// The state before the last event folded with `diffing`, and what that event touched.
  var before: ListState?
  var touched = TouchedItems()
  /// Events of the blocks listed last (`EventBlock`).
  var blocks: [EventBlock] = []

  /// The outcome of folding one event, as the page and the checks read it.
  enum Outcome: Int32 {
    case applied = 0
    case fault = 1
    case malformed = 2
    case outOfRange = 3
    /// The log lost the event (a salvaged log): the state is unchanged.
    case lost = 4
    /// The log cannot be read this far (the reason in the result).
    case failed = 5
  }

  mutating func setResult(_ bytes: UnsafeRawBufferPointer) {
    result.deallocate()
    result = .allocate(byteCount: max(bytes.count, 1), alignment: 1)
    if let base = bytes.baseAddress, let to = result.baseAddress {
      to.copyMemory(from: base, byteCount: bytes.count)
    }
    result = UnsafeMutableRawBufferPointer(start: result.baseAddress, count: bytes.count)
  }

  mutating func setResult(_ bytes: [UInt8]) {
    bytes.withUnsafeBytes { setResult($0) }
  }

  mutating func setResult(_ text: String) {
    setResult(Array(text.utf8))
  }

  // MARK: Opening

  /// Checks every frame's numbering (all payloads are in) and sets both folds at the start
  /// of the log for a window ending at event `through`.
  mutating func prepare(through: Int) throws(ViewError) {
    if let problem = log.checkNumbering() { throw ViewError(message: problem) }
    guard through <= log.lastSeq else {
      throw ViewError(
        message: "the page's copy of the log ends at event \(log.lastSeq), before \(through)")
    }
    last = through
    var state = ListState()
    let decoder = EventDecoder(logID: log.logID)
    do throws(CodecError) {
      try state.adopt(decoder.dictionary, aliases: decoder.aliases)
    } catch {
      throw ViewError(message: "\(error)")
    }
    view = Cursor(state: state, decoder: decoder, seq: 0, frame: 0)
    pass = view
    pass.findings = Findings()
    pass.findings?.faults.beginArray()
    pass.findings?.marks.beginArray()
    points = [try point(of: pass)]
    for (f, frame) in log.frames.enumerated() where frame.header.type == Format.typeCheckpoint {
      checkpoints.append((Int(frame.header.firstSeq), f))
    }
  }

  /// The seek point at `cursor` (standing before an events frame).
  func point(of cursor: Cursor) throws(ViewError) -> SeekPoint {
    let d = cursor.decoder
    do throws(CodecError) {
      let bytes = try cursor.state.compactEncoded(segment: d.segment, dictionaryCount: d.defined)
      return SeekPoint(
        seq: cursor.seq, frame: cursor.frame, segment: d.segment, defined: d.defined,
        state: bytes.bytes, sites: d.sites)
    } catch {
      throw ViewError(message: "the state after event \(cursor.seq) does not encode: \(error)")
    }
  }

  /// Runs the first fold on through at most `events` more events (to the window's end);
  /// returns whether it is done.
  mutating func runPass(events: Int) throws(ViewError) -> Bool {
    guard !passDone else { return true }
    let target = min(last, pass.seq + max(events, 1))
    while true {
      let lastPoint = points.last?.seq ?? 0
      let stop = try pass.advance(
        through: target, in: log, anchors: anchors, pointFrom: lastPoint + spacing)
      for (segment, ids, aliases) in pass.retired { segments[segment] = (ids, aliases) }
      pass.retired.removeAll()
      guard stop == .pointDue else { break }
      points.append(try point(of: pass))
    }
    if pass.seq >= last {
      passDone = true
      pass.findings?.faults.endArray()
      pass.findings?.marks.endArray()
    }
    return passDone
  }

  // MARK: Seeking

  /// The dictionary and aliases of segment `segment` as far as the pass has read them.
  func ids(of segment: UInt64) -> (ids: IdSpace, aliases: DefinitionAliases)? {
    if pass.decoder.segment == segment { return (pass.decoder.dictionary, pass.decoder.aliases) }
    return segments[segment]
  }

  /// The dictionary and aliases of segment `segment` once the pass has read all of it (a
  /// segment it left, or any once it is done), or nil.
  func finishedIDs(of segment: UInt64) -> (ids: IdSpace, aliases: DefinitionAliases)? {
    passDone || segment != pass.decoder.segment ? ids(of: segment) : nil
  }

  /// The last seek point at or before event `n` (or whose frame is at or before `frame`).
  func point(atOrBefore n: Int, frame: Int = .max) -> SeekPoint? {
    var lo = 0
    var hi = points.count
    while lo < hi {
      let mid = (lo + hi) / 2
      if points[mid].seq <= n && points[mid].frame <= frame { lo = mid + 1 } else { hi = mid }
    }
    return lo > 0 ? points[lo - 1] : nil
  }

  /// A fold standing at seek point `p`: its state decoded (`ListState(compact:)`) with its
  /// segment's dictionary, which the decoder takes whole, as a seek from the index file does.
  func cursor(at p: SeekPoint) throws(ViewError) -> Cursor {
    let d = try decoder(at: p)
    let (ids, aliases) = (d.dictionary, d.aliases)
    var state: ListState?
    var failure: CodecError?
    p.state.withUnsafeBytes { b in
      do throws(CodecError) {
        state = try ListState(compact: b, ids: ids, aliases: aliases)
      } catch {
        failure = error
      }
    }
    guard let state else {
      throw ViewError(
        message:
          "the seek point at event \(p.seq) does not decode: \(failure.map { "\($0)" } ?? "")")
    }
    return Cursor(state: state, decoder: d, seq: p.seq, frame: p.frame)
  }

  /// A decoder standing at seek point `p`, holding its segment's dictionary as far as the
  /// pass has read it.
  func decoder(at p: SeekPoint) throws(ViewError) -> EventDecoder {
    guard let (ids, aliases) = ids(of: p.segment) else {
      throw ViewError(message: "no dictionary for the seek point at event \(p.seq)")
    }
    var d = EventDecoder(logID: log.logID)
    d.load(ids, aliases: aliases, segment: p.segment, defined: p.defined, before: p.seq + 1)
    d.sites = p.sites
    return d
  }

  /// The last dictionary frame before frame `f` (-1: none, the log's first segment), and
  /// the segment it begins.
  func restart(before f: Int) -> (frame: Int, segment: UInt64) {
    var k = f - 1
    while k >= 0 && log.frames[k].header.type != Format.typeDictionary { k -= 1 }
    return (k, k >= 0 ? UInt64(log.frames[k].header.firstSeq) : 0)
  }

  /// A decoder holding segment `segment`'s whole dictionary, standing before event `seq`,
  /// once the pass has finished the segment (each frame names the entries defined before
  /// it, and its definitions are checked against those held); nil before that, or in a log
  /// with gaps.
  /// Nil too when the events frame from frame `frame` on codes its sites against the site
  /// model of the frames before it (layout 3), which only reading them gives.
  func wholeDecoder(segment: UInt64, before seq: Int, frame: Int) -> EventDecoder? {
    guard !log.hasGaps, let (ids, aliases) = finishedIDs(of: segment) else { return nil }
    var g = frame
    while g < log.frames.count && log.frames[g].header.type != Format.typeEvents { g += 1 }
    if g < log.frames.count, let p = log.payload(g), EventDecoder.needsSiteModel(ofFrame: p) {
      return nil
    }
    var d = EventDecoder(logID: log.logID)
    d.load(ids, aliases: aliases, segment: segment, defined: ids.count, before: seq)
    return d
  }

  /// A decoder standing before frame `f`, from the log alone: the last dictionary frame
  /// before it (or the log's start), then the definitions of the events frames between.
  func logDecoder(before f: Int) throws(ViewError) -> EventDecoder {
    var d = EventDecoder(logID: log.logID)
    let k = restart(before: f).frame
    do throws(CodecError) {
      if k >= 0, let p = log.payload(k) {
        try d.restart(p, seq: Int(log.frames[k].header.firstSeq))
      }
      for g in (k + 1)..<max(k + 1, f) where log.frames[g].header.type == Format.typeEvents {
        guard let p = log.payload(g) else { continue }
        let h = log.frames[g].header
        _ = try d.skipFrame(p, firstSeq: Int(h.firstSeq), count: Int(h.eventCount))
      }
    } catch {
      throw ViewError(message: "the log's dictionary does not decode: \(error)")
    }
    return d
  }

  /// A fold standing at the log's checkpoint in frame `f`: with its segment's whole
  /// dictionary once the pass has finished the segment, else the dictionary read from the
  /// log (the frames of the segment before it read for their definitions).
  func cursor(atCheckpoint f: Int) throws(ViewError) -> Cursor {
    let seq = Int(log.frames[f].header.firstSeq)
    var d: EventDecoder
    if let whole = wholeDecoder(
      segment: restart(before: f).segment, before: seq + 1, frame: f + 1)
    {
      d = whole
    } else {
      d = try logDecoder(before: f)
    }
    guard let payload = log.payload(f) else {
      throw ViewError(message: "frame at byte \(log.frames[f].offset) was not inflated")
    }
    do throws(CodecError) {
      let state = try d.decodeCheckpoint(payload)
      return Cursor(state: state, decoder: d, seq: seq, frame: f + 1)
    } catch {
      throw ViewError(message: "the checkpoint at byte \(log.frames[f].offset): \(error)")
    }
  }

  /// Makes the view's state the one after event `n`, folding on from the nearest of: the
  /// view itself, the last seek point before `n`, the log's last checkpoint before `n`
  /// (a log without gaps).
  /// - Complexity: a state decode and at most `spacing` events folded, once the pass has
  ///   passed `n`.
  mutating func seek(to n: Int) throws(ViewError) {
    let n = max(0, min(n, last))
    if n < view.seq, let kept = recent.last(where: { $0.seq <= n }), n - kept.seq < 64,
      n - kept.seq < n - (point(atOrBefore: n)?.seq ?? 0)
    {
      // Stepping back: from the copy kept nearest before n.
      view = kept
      _ = try view.advance(through: n, in: log, anchors: anchors)
      return
    }
    let back = n < view.seq && view.seq - n <= 2
    let here = view.seq <= n ? view.seq : -1
    let p = point(atOrBefore: n)
    var checkpoint: (seq: Int, frame: Int)?
    if !log.hasGaps, let c = checkpoints.last(where: { $0.seq <= n }) { checkpoint = c }
    let fromPoint = p?.seq ?? -1
    let fromCheckpoint = checkpoint?.seq ?? -1
    if here >= fromPoint && here >= fromCheckpoint {
    } else if let p, fromPoint >= fromCheckpoint {
      recent.removeAll()
      restores += 1
      view = try cursor(at: p)
    } else if let checkpoint {
      recent.removeAll()
      restores += 1
      view = try cursor(atCheckpoint: checkpoint.frame)
    }
    guard back else {
      _ = try view.advance(through: n, in: log, anchors: anchors)
      return
    }
    // A step back: keep a copy of the view at each of the events before n on the way,
    // with the ids' table that the diff's lookups need built once for them all.
    recent.removeAll()
    indexViewIDs()
    let from = max(view.seq, n - Self.recentCount)
    _ = try view.advance(through: from, in: log, anchors: anchors)
    while view.seq < n {
      recent.append(view)
      _ = try view.advance(through: view.seq + 1, in: log, anchors: anchors)
    }
  }

  /// Gives the view's state its ids' string table: the one built for its segment when its
  /// ids are that whole segment's (a segment the pass has finished), else built now and
  /// kept for the next jump in the same segment.
  mutating func indexViewIDs() {
    guard !view.state.ids.hasStringTable else { return }
    let segment = view.decoder.segment
    if let ids = indexed[segment], view.state.adoptIndexed(ids) { return }
    view.state.indexIDs()
    tablesBuilt += 1
    if let whole = finishedIDs(of: segment), whole.ids.count == view.state.ids.count {
      indexed[segment] = view.state.ids
    }
  }

  /// Keeps a copy of `cursor` standing before record `next` (the event after `cursor.seq`)
  /// among the recent ones, so that a step back after steps forward folds nothing. Its
  /// state is the one kept for the diff, so the copy costs no copy of the state.
  mutating func keep(_ cursor: Cursor, next: Int) {
    var kept = cursor
    kept.next = next
    recent.removeAll { $0.seq >= kept.seq }
    if recent.count >= Self.recentCount { recent.removeFirst() }
    recent.append(kept)
  }

  /// Folds event `n` onto the state after event `n - 1`; with `diffing`, keeps the state
  /// before it and what it touched for `diff(context:)`. The result holds a fault's words.
  mutating func step(to n: Int, diffing: Bool) throws(ViewError) -> Outcome {
    before = nil
    guard n >= 1 && n <= last else { return .outOfRange }
    try seek(to: n - 1)
    // The next event record, reading frames as needed (a restart folded on the way); a
    // checkpoint of event n or later before it means the log lost event n.
    while true {
      if view.next < view.ops.count {
        if view.ops.isEvent(view.next) { break }
        view.next += 1
        _ = try view.fold(view.next - 1)
        continue
      }
      guard view.frame < log.frames.count else { break }
      let h = log.frames[view.frame].header
      if h.type == Format.typeCheckpoint && Int(h.firstSeq) >= n { break }
      try view.read(view.frame, in: log, anchors: anchors)
      view.frame += 1
    }
    guard view.next < view.ops.count, view.ops.seqs[view.next] == n else {
      view.seq = n
      if diffing {
        before = view.state
        touched = TouchedItems()
      }
      _ = try view.advance(through: n, in: log, anchors: anchors)
      return .lost
    }
    let i = view.next
    view.next += 1
    if diffing {
      do throws(CodecError) {
        try view.state.follow(view.ops, i)
      } catch {
        throw ViewError(message: "event \(n) does not decode: \(error)")
      }
      // As `listtape diff` compares two close points: only where the event touched, which
      // it looks up by id (the table is built once; the fold keeps it up to date).
      indexViewIDs()
      before = view.state
      keep(view, next: i)
      touched = TouchedItems(limit: max(1_024, view.state.numberOfAllItems / 4))
      touched.note(view.ops.event(i, view.state.ids), before: view.state)
    }
    if let fault = try view.fold(i) {
      setResult("\(view.ops.event(i, view.state.ids).op): \(fault)")
      _ = try view.advance(through: n, in: log, anchors: anchors)
      return .fault
    }
    setResult([])
    _ = try view.advance(through: n, in: log, anchors: anchors)
    return .applied
  }
}
