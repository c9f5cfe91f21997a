import ListTapeInvestigate
import ListTapeModel
import ListTapeStore

/// The demo's front end: a cursor over the visible rows and a status line; every action is
/// a call on the `ListStore`, and the screen is drawn from the store's state after it.
struct DemoApp {
  let scenario: Scenario
  let store: ListStore<String, String>
  let logPath: String
  let style: Style
  /// Events in the log before this run (the first gets `baseEvents + 1`).
  let baseEvents: Int
  /// The item under the cursor, kept by identity across edits.
  private(set) var cursor: String?
  /// The cursor's row index, used when its item disappears.
  private var cursorIndex = 0
  /// The first body line shown (when the list is taller than the screen).
  private var scroll = 0
  private(set) var status: String

  init(
    scenario: Scenario, store: ListStore<String, String>, logPath: String, style: Style,
    baseEvents: Int
  ) {
    self.scenario = scenario
    self.store = store
    self.logPath = logPath
    self.style = style
    self.baseEvents = baseEvents
    status = scenario.summary
    cursor = visibleRows().first?.id
  }

  /// Events in the log, this run's included.
  var eventCount: Int { baseEvents + store.acceptedEvents }

  /// Every visible row, section after section, as the cursor walks them.
  func visibleRows() -> [OutlineRow] {
    store.core.withState { state in
      state.sectionIdentifiers.flatMap { state.rows(inSection: $0, visibleOnly: true) ?? [] }
    }
  }

  // MARK: - Keys

  /// Handles one key; false when it asks to quit.
  mutating func handle(_ key: DemoAction, pageSize: Int) -> Bool {
    let rows = visibleRows()
    let index =
      cursor.flatMap { id in rows.firstIndex { $0.id == id } } ?? min(cursorIndex, rows.count - 1)
    let current = index >= 0 && index < rows.count ? rows[index] : nil
    switch key {
    case .quit:
      return false
    case .up: move(to: index - 1, in: rows)
    case .down: move(to: index + 1, in: rows)
    case .pageUp: move(to: index - max(1, pageSize), in: rows)
    case .pageDown: move(to: index + max(1, pageSize), in: rows)
    case .home: move(to: 0, in: rows)
    case .end: move(to: rows.count - 1, in: rows)
    case .activate:
      if let current { activate(current) }
    case .right:
      if let current, current.hasChildren, !current.expanded {
        report(edit { try $0.expand([current.id]) }, "expanded \(current.id)")
      }
    case .left:
      if let current, current.hasChildren, current.expanded {
        report(edit { try $0.collapse([current.id]) }, "collapsed \(current.id)")
      } else if let parent = current?.parent {
        cursor = parent
      }
    case .delete:
      if let current {
        report(edit { try $0.deleteItems([current.id]) }, "deleted \(current.id)")
      }
    case .other:
      break
    }
    settleCursor(previous: index)
    return true
  }

  private mutating func move(to index: Int, in rows: [OutlineRow]) {
    guard !rows.isEmpty else { return }
    let i = max(0, min(rows.count - 1, index))
    cursor = rows[i].id
    cursorIndex = i
  }

  /// Return or Space: expand or collapse a parent; on a leaf, pick it (form) or toggle its
  /// selection.
  private mutating func activate(_ row: OutlineRow) {
    if row.hasChildren {
      if row.expanded {
        report(edit { try $0.collapse([row.id]) }, "collapsed \(row.id)")
      } else {
        report(edit { try $0.expand([row.id]) }, "expanded \(row.id)")
      }
    } else if scenario.picksOptions, let parent = row.parent {
      let value = row.title ?? row.id
      // One atomic event, as the app would apply it: the title, then the collapse.
      let fault = edit {
        try $0.updateItem(parent, title: value)
        try $0.collapse([parent])
      }
      report(fault, "picked \"\(value)\" for \(parent)")
      if fault == nil { cursor = parent }
    } else if row.isSelected {
      store.deselect([row.id])
      report(nil, "deselected \(row.id)")
    } else {
      let id = row.id
      report(fault { () throws(ListFault) in try store.select([id]) }, "selected \(id)")
    }
  }

  /// Records the edits as one event; the fault it threw, if any.
  private func edit(_ body: (inout ListSnapshot<String, String>) throws -> Void) -> ListFault? {
    do {
      try store.perform(body)
      return nil
    } catch {
      return error as? ListFault
    }
  }

  /// The fault a store call threw, if any (it is recorded either way).
  private func fault(_ call: () throws(ListFault) -> Void) -> ListFault? {
    do {
      try call()
      return nil
    } catch {
      return error
    }
  }

  private mutating func report(_ fault: ListFault?, _ done: String) {
    if let fault {
      status = "fault (recorded): \(fault)"
    } else {
      status = done
    }
  }

  /// Keeps the cursor on a visible row: its item if still shown, else the row now at its
  /// old index.
  private mutating func settleCursor(previous: Int) {
    let rows = visibleRows()
    if let cursor, let i = rows.firstIndex(where: { $0.id == cursor }) {
      cursorIndex = i
      return
    }
    guard !rows.isEmpty else {
      cursor = nil
      cursorIndex = 0
      return
    }
    cursorIndex = max(0, min(rows.count - 1, previous))
    cursor = rows[cursorIndex].id
  }

  // MARK: - Screen

  /// One line of the list area, with the item it shows when it is a row.
  struct Line {
    var text: String
    var item: String?
  }

  /// The list as `listtape show` prints it after its header line: the summary, then each
  /// section's header and visible rows, in Render's style.
  func body() -> [Line] {
    store.core.withState { state in
      var lines: [Line] = []
      let sections = state.sectionIdentifiers
      var summary = [
        Render.plural(sections.count, "section"), Render.plural(state.numberOfAllItems, "item"),
        "\(Render.count(state.numberOfItems)) visible",
        "\(Render.count(state.numberOfSelectedItems)) selected",
      ]
      summary.append(state.allowsMultipleSelection ? "multiple selection" : "single selection")
      lines.append(Line(text: style.dim(summary.joined(separator: " · "))))
      if sections.isEmpty {
        lines.append(Line(text: ""))
        lines.append(Line(text: style.dim("(no sections)")))
      }
      for id in sections {
        lines.append(Line(text: ""))
        let rows = state.rows(inSection: id, visibleOnly: true) ?? []
        let visible = state.numberOfItems(inSection: id) ?? 0
        let total = state.allItems(inSection: id)?.count ?? rows.count
        lines.append(
          Line(
            text: style.bold(style.blue(id)) + "  "
              + style.dim("\(Render.plural(total, "item")), \(Render.count(visible)) visible")))
        if rows.isEmpty { lines.append(Line(text: style.dim("  (empty)"))) }
        for row in rows { lines.append(Line(text: Render.row(row, style: style), item: row.id)) }
      }
      return lines
    }
  }

  /// The whole screen: a title, the list (scrolled to keep the cursor in view) with a
  /// two-column cursor gutter, the status line and the keys.
  mutating func frame(rows height: Int, columns width: Int) -> String {
    let body = body()
    let listHeight = max(1, height - 3)
    if let at = body.firstIndex(where: { $0.item != nil && $0.item == cursor }) {
      if at < scroll { scroll = at }
      if at >= scroll + listHeight { scroll = at - listHeight + 1 }
    }
    scroll = max(0, min(scroll, max(0, body.count - listHeight)))
    var screen: [String] = []
    let title = " listtape demo \(scenario.name) · recording to \(logPath)"
    screen.append(style.inverse(clip(title, width)))
    for line in body.dropFirst(scroll).prefix(listHeight) {
      let here = line.item != nil && line.item == cursor
      screen.append((here ? style.bold(style.yellow(">")) + " " : "  ") + line.text)
    }
    while screen.count < height - 2 { screen.append("") }
    let more =
      body.count > listHeight
      ? " · lines \(scroll + 1)-\(min(body.count, scroll + listHeight)) of \(body.count)" : ""
    screen.append(clip("[event \(eventCount)] \(status)\(more)", width))
    let keys =
      scenario.picksOptions
      ? "↑↓/jk move · ⏎/space expand, collapse or pick · d delete · q quit"
      : "↑↓/jk move · ⏎/space expand, collapse or select · ←→ collapse/expand · d delete · q quit"
    screen.append(style.dim(clip(keys, width)))
    var out = ""
    for (i, line) in screen.prefix(height).enumerated() {
      out += "\u{1B}[\(i + 1);1H" + line + "\u{1B}[0m\u{1B}[K"
    }
    return out
  }

  /// At most `width` characters (plain text only).
  private func clip(_ text: String, _ width: Int) -> String {
    text.count <= width ? text : String(text.prefix(max(0, width - 1))) + "…"
  }
}
