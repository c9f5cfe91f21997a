import Foundation
import ListTapeInvestigate
import ListTapeModel
import ListTapeRead
import ListTapeStore

/// The time-travel viewer: the list at event N, the event and its fault, a timeline bar
/// with marks and faults, and keys to move through the log.
final class ScrubViewer {
  /// What the screen shows at one event, computed once per move.
  struct Frame {
    var position: Int
    var event: Event?
    var fault: String?
    var previous: ListState?
    var state: ListState
    /// False for a state that is not the recorded one (after events lost in a salvage).
    var exact = true
    var diff: [String]?
    /// The list as text, built on first draw (a large list costs one pass per move, not
    /// one per redraw).
    var list: [String]?
  }

  enum Prompt {
    case jump, search
  }

  let timeline: Timeline
  let terminal: RawTerminal
  let style: Style
  let scan: ScrubScan
  var total: Int { timeline.eventCount }
  /// Positioned at the event before the one shown, so the shown event folds onto it.
  private var cursor: Cursor
  private var frame: Frame
  private var decoder = KeyDecoder()
  private var showDiff = false
  private var showHelp = false
  private var scroll = 0
  private var prompt: (kind: Prompt, text: String)?
  private var message: String?
  private var lastSearch: String?
  private var lastScanned = -1
  /// Following a log being recorded (`--follow`): nil when not, or once following stopped.
  private var follower: LogFollower?
  /// Why following ended the viewer: the log's path names another file or none.
  private(set) var followEnd: LogFollower.End?

  init(timeline: Timeline, terminal: RawTerminal, style: Style, at n: Int, follow: Bool = false)
    throws(StoreError)
  {
    self.timeline = timeline
    self.terminal = terminal
    self.style = style
    scan = ScrubScan(total: timeline.eventCount)
    cursor = Cursor(timeline)
    frame = Frame(position: 0, state: ListState())
    if follow { follower = LogFollower(timeline, from: timeline.eventCount + 1) }
    frame = try load(n)
    scan.start(path: timeline.path, follow: follow)
  }

  /// Runs until `q`, Ctrl-C, the end of input, or the end of a follow by the log's path.
  func run() {
    defer { scan.cancel() }
    draw()
    while true {
      let scanning = !scan.isDone
      let timeout = follower != nil ? Following.interval : scanning ? 200 : 1000
      guard let bytes = terminal.read(timeout: timeout) else { return }
      var dirty = terminal.takeResize()
      let scanned = scan.snapshot.scanned
      if scanned != lastScanned {
        lastScanned = scanned
        dirty = true
      }
      for key in decoder.feed(bytes) {
        if !handle(key) { return }
        dirty = true
      }
      if follower != nil {
        if pollLog() { dirty = true }
        if followEnd != nil { return }
      }
      if dirty { draw() }
    }
  }

  /// Reads what the recorder appended since the last look; true when the screen changes.
  /// The newest event stays shown while it is the one shown; an earlier one stays put.
  private func pollLog() -> Bool {
    guard let follower else { return false }
    let before = total
    do {
      try follower.poll()
    } catch {
      message = style.red("following stopped: \(Failures.message(error))")
      self.follower = nil
      return true
    }
    switch follower.state {
    case .ended(.damaged(let damage)):
      // The viewer stays on what was read; the warning is printed on the way out.
      message = style.red("following stopped: \(damage)")
      self.follower = nil
      return true
    case .ended(let end):
      followEnd = end
      return true
    case .following, .suspect:
      break
    }
    guard total > before else { return false }
    if frame.position == before {
      // The person did not move: the list stays scrolled where they put it.
      let kept = scroll
      go(total)
      scroll = kept
    }
    return true
  }

  // MARK: Moving

  private func load(_ n: Int) throws(StoreError) -> Frame {
    guard n > 0 else { return Frame(position: 0, state: ListState()) }
    if !timeline.gaps.isEmpty {
      // A salvaged log: each state from the point that restores it, or labelled as not the
      // recorded one (docs/cli.md, "Damaged logs"); never a decoding error.
      let previous = try timeline.exactState(at: n - 1).state
      let shown = try timeline.stateAndFault(at: n)
      return Frame(
        position: n, event: shown.event, fault: shown.fault?.description, previous: previous,
        state: shown.state, exact: shown.exactness.isExact)
    }
    try cursor.move(to: n - 1)
    let previous = cursor.state
    let event = try timeline.event(n)
    var state = previous
    var fault: String?
    do throws(ListFault) {
      try state.apply(event)
    } catch {
      fault = error.description
    }
    return Frame(position: n, event: event, fault: fault, previous: previous, state: state)
  }

  private func go(_ n: Int) {
    let target = max(0, min(total, n))
    guard target != frame.position else { return }
    do {
      frame = try load(target)
      scroll = 0
    } catch {
      message = style.red("error: \(Failures.message(error))")
    }
  }

  /// Returns false to quit.
  private func handle(_ key: Key) -> Bool {
    if prompt != nil { return handlePrompt(key) }
    message = nil
    if showHelp {
      showHelp = false
      if key != .character("q") && key != .interrupt { return true }
    }
    switch key {
    case .right, .character("l"): go(frame.position + 1)
    case .left, .character("h"): go(frame.position - 1)
    case .pageDown: go(frame.position + 100)
    case .pageUp: go(frame.position - 100)
    case .home: go(0)
    case .end: go(total)
    case .down, .character("j"): scroll += 1
    case .up, .character("k"): scroll = max(0, scroll - 1)
    case .character("g"): prompt = (.jump, "")
    case .character("/"): prompt = (.search, "")
    case .character("n"):
      if let id = lastSearch { search(id) } else { message = "no search yet: press / first" }
    case .character("m"):
      jump(to: landmark(.mark, from: frame.position, forward: true), none: "no mark after")
    case .character("M"):
      jump(to: landmark(.mark, from: frame.position, forward: false), none: "no mark before")
    case .character("f"):
      jump(to: landmark(.fault, from: frame.position, forward: true), none: "no fault after")
    case .character("F"):
      jump(to: landmark(.fault, from: frame.position, forward: false), none: "no fault before")
    case .character("d"): showDiff.toggle()
    case .character("?"): showHelp = true
    case .character("q"), .interrupt: return false
    default: break
    }
    return true
  }

  private func handlePrompt(_ key: Key) -> Bool {
    guard let current = prompt else { return true }
    switch key {
    case .escape:
      prompt = nil
    case .interrupt:
      return false
    case .backspace:
      prompt?.text = String(current.text.dropLast())
    case .character(let c):
      prompt?.text.append(c)
    case .enter:
      prompt = nil
      let text = current.text.trimmingCharacters(in: .whitespaces)
      guard !text.isEmpty else { return true }
      switch current.kind {
      case .jump:
        do throws(CLIError) {
          let point: Point
          do throws(InvalidValue) {
            point = try Point.parse(text)
          } catch {
            throw CLIError.usage(error.message(text, "go to"), command: nil)
          }
          go(try resolve(point, in: timeline, for: ScrubCommand.self, option: "go to"))
        } catch {
          switch error {
          case .usage(let text, _), .failure(let text, _): message = style.red(text)
          }
        }
      case .search:
        lastSearch = text
        search(text)
      }
    default:
      break
    }
    return true
  }

  private func jump(to n: Int?, none: String) {
    if let n {
      go(n)
    } else {
      message = "\(none) event \(frame.position)"
    }
  }

  // MARK: Searching

  /// The next event after the current one that names `id`.
  private func search(_ id: String) {
    status("searching for \(id)…")
    var found: Int?
    do {
      try timeline.forEachEvent(from: frame.position + 1) { n, e in
        if e.operation.names(item: id) {
          found = n
          return false
        }
        return true
      }
    } catch {
      message = style.red("error: \(Failures.message(error))")
      return
    }
    if let found {
      go(found)
      message = "event \(found) touches \(id)  (n: next)"
    } else {
      message = "no event after \(frame.position) touches \"\(id)\""
    }
  }

  /// What m/M and f/F move between.
  private enum Landmark { case mark, fault }

  /// The next (or previous) mark or fault from event `p`: from the background scan's list
  /// as far as it is complete, else by reading the log.
  private func landmark(_ kind: Landmark, from p: Int, forward: Bool) -> Int? {
    let f = scan.snapshot
    let kept = kind == .mark ? f.marks.map(\.n) : f.faults.map(\.n)
    // The events through which the list is complete.
    let done = (kind == .mark ? f.truncatedMarks : f.truncatedFaults) ? (kept.last ?? 0) : f.scanned
    if forward {
      if let n = kept.first(where: { $0 > p }) { return n }
      guard done < total else { return nil }
      status("searching…")
      return find(kind, from: max(p, done) + 1, through: total, last: false)
    }
    if done + 1 < p {
      status("searching…")
      if let n = find(kind, from: done + 1, through: p - 1, last: true) { return n }
    }
    return kept.last { $0 < p }
  }

  /// The first (or, with `last`, the last) mark or fault in `from...through`; faults are
  /// found by folding from the state before `from`.
  private func find(_ kind: Landmark, from: Int, through: Int, last: Bool) -> Int? {
    guard from <= through else { return nil }
    var found: Int?
    do throws(StoreError) {
      switch kind {
      case .mark:
        try timeline.forEachEvent(from: from, through: through) { n, e in
          guard !e.operation.markLabels.isEmpty else { return true }
          found = n
          return last
        }
      case .fault:
        _ = try timeline.forEachState(from: from, through: through) { ops, i, fault, _ in
          guard fault != nil else { return true }
          found = ops.seqs[i]
          return last
        }
      }
    } catch {
      message = style.red("error: \(Failures.message(error))")
      return nil
    }
    return found
  }

  /// Shows a one-line status at once (before a long search).
  private func status(_ text: String) {
    message = text
    draw()
  }

  // MARK: Drawing

  private func draw() {
    let (rows, columns) = terminal.size
    var lines = top(width: columns)
    let bodyHeight = max(0, rows - lines.count - 1)
    let body = bodyLines()
    scroll = max(0, min(scroll, max(0, body.count - bodyHeight)))
    lines += body.dropFirst(scroll).prefix(bodyHeight)
    while lines.count < rows - 1 { lines.append("") }
    lines.append(bottom(more: body.count > scroll + bodyHeight))
    var screen = "\u{1B}[H"
    for (i, line) in lines.prefix(rows).enumerated() {
      // Erase the rest of a short line only: with wrap off, the cursor stays on the last
      // column after a full line, and erasing there would blank its last character.
      let fitted = ScreenText.fit(line, width: columns)
      screen += fitted + "\u{1B}[0m" + (ScreenText.width(fitted) < columns ? "\u{1B}[K" : "")
      if i < rows - 1 { screen += "\r\n" }
    }
    terminal.write(screen)
  }

  private func top(width: Int) -> [String] {
    var lines = [
      Render.header(
        event: frame.position, of: total, event: frame.event, style: style, exact: frame.exact,
        site: false)
    ]
    if let event = frame.event {
      // The site goes first: a long description is cut at the screen's edge, the site not.
      let detail = Render.describe(event.operation)
      let site = event.site.map { Render.site($0, style: style) + "  " } ?? ""
      lines.append("  " + site + style.cyan(event.op) + (detail.isEmpty ? "" : "  " + detail))
    } else {
      lines.append("")
    }
    if let fault = frame.fault, let event = frame.event {
      lines.append(
        style.red("✗ fault: \(event.op): \(Visible.text(fault))") + style.dim(" · state unchanged"))
    } else {
      lines.append("")
    }
    lines.append(bar(width: width))
    lines.append(legend())
    lines.append("")
    return lines
  }

  /// One cell per slice of the log: `●` the current event, `✗` faults, `◆` marks, `·` not
  /// yet scanned; following, `»` in the last cell while newer events than the one shown
  /// are there.
  private func bar(width: Int) -> String {
    let f = scan.snapshot
    guard total > 0, width > 0 else { return style.dim(String(repeating: "─", count: width)) }
    let here =
      frame.position == 0 ? 0 : min(width - 1, scaled(frame.position - 1, width, total))
    var out = ""
    let newer = follower != nil && frame.position < total && here < width - 1
    for cell in 0..<width {
      if newer && cell == width - 1 {
        out += style.bold(style.yellow("»"))
        continue
      }
      // Events this cell covers, then the buckets they fall in.
      let first = scaled(cell, total, width) + 1
      let last = max(first, scaled(cell + 1, total, width))
      let buckets = f.bucket(first)...f.bucket(last)
      let faults = buckets.contains { f.faultBuckets[$0] > 0 }
      let marks = buckets.contains { f.markBuckets[$0] > 0 }
      if cell == here {
        out += style.enabled ? style.inverse(style.bold("●")) : "●"
      } else if faults {
        out += style.red("✗")
      } else if marks {
        out += style.yellow("◆")
      } else if first > f.scanned {
        out += style.dim("·")
      } else {
        out += style.dim("─")
      }
    }
    return out
  }

  private func legend() -> String {
    let f = scan.snapshot
    var parts = [
      style.yellow("◆") + " " + Render.plural(f.markTotal, "mark"),
      style.red("✗") + " " + Render.plural(f.faultTotal, "fault"),
    ]
    if let failure = f.failure {
      parts.append(style.red("scan stopped: \(failure)"))
    } else if !scan.isDone {
      parts.append("scanning \(f.scanned * 100 / max(1, total))%")
    }
    if follower != nil {
      let newer = total - frame.position
      parts.append(
        newer > 0
          ? style.bold(style.yellow("» \(Render.plural(newer, "newer event")) (End)"))
          : "following")
    }
    if showDiff { parts.append(style.bold("diff from the previous event")) }
    return parts.joined(separator: "  ")
  }

  private func bodyLines() -> [String] {
    if showHelp { return Self.help }
    if showDiff {
      guard let previous = frame.previous else {
        return [style.dim("(event 0: nothing before it)")]
      }
      if frame.diff == nil {
        // One step: compared only where the event touched.
        var touched = TouchedItems()
        if let event = frame.event { touched.note(event, before: previous) }
        let diff = Differ.diff(
          previous, frame.state, touched: touched, context: 2, selectionLists: false)
        frame.diff = DiffText.lines(diff, context: 2, style: style)
      }
      let lines = frame.diff ?? []
      if lines.isEmpty { return [style.dim("(no change from event \(frame.position - 1))")] }
      return lines
    }
    if frame.list == nil { frame.list = Self.list(frame.state, style: style) }
    return frame.list ?? []
  }

  private func bottom(more: Bool) -> String {
    if let prompt {
      let label =
        prompt.kind == .jump ? "go to event (N, mark:LABEL, time:ISO8601): " : "search item id: "
      return style.bold(label) + prompt.text + "▏"
    }
    if let message { return message }
    let keys =
      "←/→ step  PgUp/PgDn ±100  g jump  m/M mark  f fault  / search  d diff  ? help  q quit"
    return style.dim(keys + (more ? "  ↓ more" : ""))
  }

  /// The list as `show` prints it (visible rows), one string per line.
  static func list(_ state: ListState, style: Style) -> [String] {
    var lines = [
      style.dim(
        [
          Render.plural(state.numberOfSections, "section"),
          Render.plural(state.numberOfAllItems, "item"),
          "\(Render.count(state.numberOfItems)) visible",
          "\(Render.count(state.numberOfSelectedItems)) selected",
          state.allowsMultipleSelection ? "multiple selection" : "single selection",
        ].joined(separator: " · "))
    ]
    if state.numberOfSections == 0 { return lines + ["", style.dim("(no sections)")] }
    for ref in state.sections {
      let rows = state.rows(in: ref, visibleOnly: true)
      let all = state.numberOfAllItems(in: ref)
      lines.append("")
      lines.append(
        style.bold(style.blue(Visible.text(state.id(of: ref)))) + "  "
          + style.dim("\(Render.plural(all, "item")), \(Render.count(rows.count)) visible"))
      if rows.isEmpty { lines.append(style.dim("  (empty)")) }
      for row in rows { lines.append(Render.row(row, style: style)) }
    }
    return lines
  }

  static let help = [
    "Keys",
    "",
    "  → l          next event              ← h          previous event",
    "  PgDn         100 events on           PgUp         100 events back",
    "  End          the last event          Home         event 0 (the empty list)",
    "  g            go to an event: N, mark:LABEL or time:ISO8601",
    "  m / M        next / previous mark    f / F        next / previous fault",
    "  /            next event that touches an item id (n repeats the search)",
    "  d            toggle the diff from the previous event",
    "  ↓ j / ↑ k    scroll the list         ?            this help",
    "  q Ctrl-C     quit",
    "",
    "The bar: ● the event shown, ✗ faults, ◆ marks, · not yet scanned,",
    "» newer events than the one shown (--follow; End goes to the newest).",
    "Press any key to go back.",
  ]
}
