/// Help text in swift-argument-parser's layout: OVERVIEW, USAGE, ARGUMENTS, OPTIONS,
/// SUBCOMMANDS, with labels in a 24-column gutter and text wrapped at 80 columns.
enum Help {
  static let width = 80
  static let gutter = 26

  static func text(for spec: CommandInfo) -> String {
    var out = "OVERVIEW: \(spec.abstract)\n"
    if !spec.discussion.isEmpty {
      out += "\n" + paragraphs(spec.discussion) + "\n"
    }
    out += "\n" + wrapped("USAGE: " + spec.usage) + "\n"
    if !spec.arguments.isEmpty {
      out += "\nARGUMENTS:\n"
      for a in spec.arguments {
        var help = a.help
        if !a.choices.isEmpty { help += " (values: \(a.choices.joined(separator: ", ")))" }
        out += entry("<\(a.name)>", help)
      }
    }
    out += "\nOPTIONS:\n"
    for o in spec.allOptions where !o.hidden {
      var help = o.help
      var notes: [String] = []
      if !o.choices.isEmpty { notes.append("values: \(o.choices.joined(separator: ", "))") }
      if let d = o.defaultText { notes.append("default: \(d)") }
      if !notes.isEmpty { help += " (\(notes.joined(separator: "; ")))" }
      out += entry(o.label, help)
    }
    return out
  }

  static func root(version: String) -> String {
    var out = "OVERVIEW: \(CLI.abstract)\n\n\(paragraphs(CLI.discussion))\n"
    out += "\nUSAGE: listtape <subcommand>\n"
    out += "\nOPTIONS:\n"
    out += entry("--version", "Show the version.")
    out += entry("-h, --help", "Show help information.")
    out += "\nSUBCOMMANDS:\n"
    for c in CLI.commands where !c.info.hidden {
      out += entry(c.info.name, c.info.abstract)
    }
    out += "\n  See 'listtape help <subcommand>' for detailed help.\n"
    return out
  }

  /// The three lines of a usage error: what is wrong, the usage, where to read more.
  static func usageError(_ message: String, command: String?) -> String {
    let spec = command.flatMap(CLI.command(named:))?.info
    let usage = spec?.usage ?? "listtape <subcommand>"
    let hint = spec.map { "listtape \($0.name) --help" } ?? "listtape --help"
    return "Error: \(message)\nUsage: \(usage)\n  See '\(hint)' for more information.\n"
  }

  /// One `  label   help` entry, with the help wrapped under the gutter.
  static func entry(_ label: String, _ help: String) -> String {
    let head = "  " + label
    let lines = wrap(help, width: width - gutter)
    var out = ""
    if head.count <= gutter - 2 {
      out = head + String(repeating: " ", count: gutter - head.count) + (lines.first ?? "") + "\n"
      for l in lines.dropFirst() { out += String(repeating: " ", count: gutter) + l + "\n" }
    } else {
      out = head + "\n"
      for l in lines { out += String(repeating: " ", count: gutter) + l + "\n" }
    }
    return out
  }

  /// A usage line wrapped at the full width, continuation lines under the command.
  static func wrapped(_ usage: String) -> String {
    let indent = String(repeating: " ", count: 7)
    let lines = wrap(usage, width: width)
    guard lines.count > 1 else { return usage }
    let rest = wrap(lines.dropFirst().joined(separator: " "), width: width - indent.count)
    return ([lines[0]] + rest.map { indent + $0 }).joined(separator: "\n")
  }

  /// Text wrapped at the full width, paragraph by paragraph.
  static func paragraphs(_ text: String) -> String {
    text.split(separator: "\n", omittingEmptySubsequences: false)
      .map { $0.isEmpty ? "" : wrap(String($0), width: width).joined(separator: "\n") }
      .joined(separator: "\n")
  }

  /// Greedy word wrap; words longer than `width` stay whole.
  static func wrap(_ text: String, width: Int) -> [String] {
    var lines: [String] = []
    var current = ""
    for word in text.split(separator: " ") {
      if current.isEmpty {
        current = String(word)
      } else if current.count + 1 + word.count <= width {
        current += " " + word
      } else {
        lines.append(current)
        current = String(word)
      }
    }
    if !current.isEmpty || lines.isEmpty { lines.append(current) }
    return lines
  }
}
