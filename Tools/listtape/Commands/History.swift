import ListTapeInvestigate
import ListTapeJSON
import ListTapeModel
import ListTapeRead
import ListTapeStore

/// `listtape history LOG --item ID`: every event that touched one item.
enum HistoryCommand: Command {
  struct Arguments: ParsableArguments {
    var log = ""
    var item = ""
    var json = false
  }

  static let spec = CommandSpec<Arguments>(
    name: "history",
    abstract: "List every event that touched an item, with the item before and after.",
    discussion: """
      Folds the whole log once and lists each event that named the item, or changed its \
      section, parent, level, expanded flag, visibility, selection, title or fields (a row \
      that moves only because rows above it changed is left out). Each event is followed by \
      the item before → after: its section and parent, level, visible row or hidden, flags, \
      title and fields; `absent` when it is not in the list. Events marked (indirect) \
      changed it without naming it; faulted events are marked with their reason.

      Exit status: 0 when some event touched the item, 1 when none did, 2 damaged log.
      """,
    arguments: [.log(\.log)],
    options: [
      .required(\.item, "item", value: "id", help: "The item's identifier."),
      .flag(\.json, "json", help: "Print JSON Lines: one object per event."),
    ])

  static func run(_ arguments: Arguments, _ io: IO) throws(CLIError) -> Int32 {
    let id = arguments.item
    let timeline = try openTimeline(arguments.log)
    warnIfDamaged(timeline)
    let json = arguments.json
    let out = io.out
    let style = io.style
    let total = timeline.eventCount
    let progress = Progress("scanning", events: total)
    let count = try replaying { () throws(StoreError) in
      try History.of(item: id, in: timeline, progress: progress.update) { entry in
        progress.finish()
        if json {
          out.bytes(
            JSONWriter.line { w in
              w.field("event", entry.event)
              w.recorded(entry.op)
              w.field("named", entry.named)
              w.field("reason", entry.fault?.description)
              w.key("before")
              write(entry.before, to: &w)
              w.key("after")
              write(entry.after, to: &w)
              if !entry.exact { w.field("exact", false) }
            })
        } else {
          var line = Render.event(entry.op, number: entry.event, style: style)
          if !entry.named { line += "  " + style.dim("(indirect)") }
          if let fault = entry.fault {
            line += "  " + style.red("fault: \(Visible.text(fault.description))")
          }
          if !entry.exact { line += "  " + style.yellow("(not the recorded state)") }
          out.line(line)
          out.line("    \(describe(entry.before)) → \(style.bold(describe(entry.after)))")
        }
      }
    }
    progress.finish()
    if !json {
      out.line(
        style.dim(
          count == 0
            ? "no event touched \(Visible.text(id)) in \(Render.plural(total, "event"))"
            : "\(Render.plural(count, "event")) touched \(Visible.text(id)) in "
              + Render.plural(total, "event")))
    }
    if timeline.readIncompletely { return ExitCode.damaged }
    return count > 0 ? ExitCode.success : ExitCode.notFound
  }

  /// `main › Communication · level 1 · row 3 · expanded · selected · "Mic" · [k=v]`.
  static func describe(_ item: ItemState?) -> String {
    guard let item else { return "absent" }
    var parts = [item.section + (item.parent.map { " › \($0)" } ?? "")]
    parts.append("level \(item.level)")
    parts.append(item.row.map { "row \($0)" } ?? "hidden")
    if item.expanded { parts.append("expanded") }
    if item.selected { parts.append("selected") }
    if let title = item.title { parts.append("\"\(title)\"") }
    if let fields = item.fields, !fields.isEmpty {
      parts.append(
        "[" + fields.keys.sorted().map { "\($0)=\(fields[$0] ?? "")" }.joined(separator: ", ")
          + "]")
    }
    return Visible.text(parts.joined(separator: " · "))
  }

  static func write(_ item: ItemState?, to w: inout JSONWriter) {
    guard let item else { return w.null() }
    w.beginObject()
    w.field("section", item.section)
    w.field("parent", item.parent)
    w.field("level", item.level)
    w.field("row", item.row)
    w.field("visible", item.visible)
    w.field("expanded", item.expanded)
    w.field("selected", item.selected)
    w.field("title", item.title)
    w.field("fields", item.fields)
    w.endObject()
  }
}
