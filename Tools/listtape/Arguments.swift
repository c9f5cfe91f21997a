/// How a command declares what it takes. Each command has an `Arguments` struct whose
/// stored properties hold the parsed values with their defaults, and a `CommandSpec` that
/// binds every option and positional argument to one of those properties by key path. That
/// one declaration parses and validates the command line, prints the help, and writes the
/// shell completion, so commands read `arguments.json`, never an option by its name.

/// A type an option or a positional argument takes, parsed from one word.
protocol ArgumentValue: Sendable {
  /// The value `word` spells; throws what was expected instead.
  static func parse(_ word: String) throws(InvalidValue) -> Self
  /// The only values accepted, offered by completion and listed in help; empty for any.
  static var choices: [String] { get }
  /// How a value reads in help (`default: …`).
  var helpText: String { get }
}

extension ArgumentValue {
  static var choices: [String] { [] }
  var helpText: String { "\(self)" }
}

/// Why a word is not a value of an option's type.
struct InvalidValue: Error {
  /// What a valid value looks like: `The value 'x' is invalid for '--n <n>'; expected …`.
  var expected: String?
  /// For values with a grammar: `The expression for '--where <expr>' is malformed: …`.
  var malformed: (what: String, detail: String)?
  /// For numbers too large for any use: `The value '9999…' for '--at <point>' is out of
  /// range: …`.
  var outOfRange: String?

  init(expected: String? = nil) { self.expected = expected }

  init(malformed what: String, _ detail: String) { malformed = (what, detail) }

  init(outOfRange why: String) { outOfRange = why }

  /// The usage error's message for `word` given to the option or argument `label`.
  func message(_ word: String, _ label: String) -> String {
    if let malformed {
      return "The \(malformed.what) for '\(label)' is malformed: \(malformed.detail)"
    }
    if let outOfRange {
      return "The value '\(word)' for '\(label)' is out of range: \(outOfRange)"
    }
    var message = "The value '\(word)' is invalid for '\(label)'"
    if let expected { message += "; expected \(expected)" }
    return message
  }
}

/// A closed set of words, such as `--color always|never|auto`.
protocol ChoiceValue: ArgumentValue, CaseIterable, RawRepresentable<String> {}

extension ChoiceValue {
  static func parse(_ word: String) throws(InvalidValue) -> Self {
    guard let value = Self(rawValue: word) else {
      throw InvalidValue(expected: "one of: " + choices.joined(separator: ", "))
    }
    return value
  }

  static var choices: [String] { allCases.map(\.rawValue) }
  var helpText: String { rawValue }
}

extension String: ArgumentValue {
  static func parse(_ word: String) throws(InvalidValue) -> String { word }
  var helpText: String { self }
}

extension Int: ArgumentValue {
  static func parse(_ word: String) throws(InvalidValue) -> Int {
    guard let n = Int(word) else {
      if isDigits(word) { throw InvalidValue(outOfRange: "the largest is \(Int.max)") }
      throw InvalidValue(expected: "an integer")
    }
    return n
  }
}

extension UInt64: ArgumentValue {
  static func parse(_ word: String) throws(InvalidValue) -> UInt64 {
    guard let n = UInt64(word) else {
      if isDigits(word) { throw InvalidValue(outOfRange: "the largest is \(UInt64.max)") }
      throw InvalidValue(expected: "an unsigned integer")
    }
    return n
  }
}

/// Whether `word` is a number too long for an integer type rather than not a number.
func isDigits(_ word: String) -> Bool {
  let digits = word.hasPrefix("-") ? word.dropFirst() : Substring(word)
  return !digits.isEmpty && digits.allSatisfy { $0.isASCII && $0.isNumber }
}

// MARK: - Declarations

/// The part of an option that help and completion read, whatever the command.
struct OptionInfo {
  var name: String
  var short: Character? = nil
  /// The value's placeholder in help text (`point` shows as `<point>`); nil for a flag.
  var value: String? = nil
  var help: String
  var defaultText: String? = nil
  /// The accepted values, checked when parsing and offered by shell completion.
  var choices: [String] = []
  /// Whether the value names a file (for completion).
  var isFile = false
  var hidden = false
  /// Whether the option may be given more than once (each value is kept).
  var repeats = false
  /// Whether the command line must give it (checked by the parser; usage shows it bare).
  var required = false

  /// `--at <point>` or `--json`.
  var synopsis: String {
    guard let value else { return "--\(name)" }
    return "--\(name) <\(value)>"
  }

  /// `-h, --help` or `--at <point>`.
  var label: String {
    guard let short else { return synopsis }
    return "-\(short), \(synopsis)"
  }
}

/// The part of a positional argument that help and completion read.
struct ArgumentInfo {
  var name: String
  var help: String
  var optional = false
  /// Whether it takes every remaining word (`<log> ...`).
  var variadic = false
  var choices: [String] = []
  var isFile = true

  var synopsis: String {
    let word = "<\(name)>" + (variadic ? " ..." : "")
    return optional ? "[\(word)]" : word
  }
}

/// One option of a command and the property of `Arguments` it sets.
struct OptionSpec<Arguments> {
  var info: OptionInfo
  /// The property it sets (each is set by one option or argument).
  let property: AnyKeyPath & Sendable
  /// Stores one occurrence's value (`nil` for a flag) into the arguments.
  let store: @Sendable (inout Arguments, String?) throws(InvalidValue) -> Void

  /// `--name`: sets a `Bool` property. A `required` flag is one a command insists on
  /// being spelt out (export's `--swift`, the only format so far).
  static func flag(
    _ property: WritableKeyPath<Arguments, Bool> & Sendable, _ name: String,
    short: Character? = nil,
    help: String, hidden: Bool = false, required: Bool = false
  ) -> Self {
    Self(
      info: OptionInfo(
        name: name, short: short, help: help, hidden: hidden, required: required),
      property: property
    ) { a, _ in
      a[keyPath: property] = true
    }
  }

  /// `--name <value>` that every command line must give: the parser refuses a line without
  /// it, so the property's initial value is never read.
  static func required<Value: ArgumentValue>(
    _ property: WritableKeyPath<Arguments, Value> & Sendable, _ name: String,
    short: Character? = nil,
    value: String, help: String, isFile: Bool = false
  ) -> Self {
    let info = OptionInfo(
      name: name, short: short, value: value, help: help, choices: Value.choices,
      isFile: isFile, required: true)
    return Self(info: info, property: property) { a, word throws(InvalidValue) in
      a[keyPath: property] = try Value.parse(word ?? "")
    }
  }

  /// `--name <value>` for an optional property, nil when the option is absent.
  static func option<Value: ArgumentValue>(
    _ property: WritableKeyPath<Arguments, Value?> & Sendable, _ name: String,
    short: Character? = nil,
    value: String, help: String, defaultText: String? = nil, isFile: Bool = false,
    hidden: Bool = false
  ) -> Self {
    let info = OptionInfo(
      name: name, short: short, value: value, help: help, defaultText: defaultText,
      choices: Value.choices, isFile: isFile, hidden: hidden)
    return Self(info: info, property: property) { a, word throws(InvalidValue) in
      a[keyPath: property] = try Value.parse(word ?? "")
    }
  }

  /// `--name <n>` for an optional integer, accepting only values in `valid`.
  static func option(
    _ property: WritableKeyPath<Arguments, Int?> & Sendable, _ name: String, value: String,
    help: String, defaultText: String? = nil, hidden: Bool = false, valid: ClosedRange<Int>
  ) -> Self {
    let info = OptionInfo(
      name: name, value: value, help: help, defaultText: defaultText, hidden: hidden)
    return Self(info: info, property: property) { a, word throws(InvalidValue) in
      a[keyPath: property] = try Self.parse(word ?? "", in: valid)
    }
  }

  /// `--name <value>` for a property with a default, which help shows unless
  /// `defaultText` says it in words.
  static func option<Value: ArgumentValue>(
    _ property: WritableKeyPath<Arguments, Value> & Sendable, _ name: String,
    short: Character? = nil,
    value: String, help: String, defaultText: String? = nil, isFile: Bool = false,
    hidden: Bool = false
  ) -> Self where Arguments: ParsableArguments {
    let initial = Arguments()[keyPath: property].helpText
    let info = OptionInfo(
      name: name, short: short, value: value, help: help, defaultText: defaultText ?? initial,
      choices: Value.choices, isFile: isFile, hidden: hidden)
    return Self(info: info, property: property) { a, word throws(InvalidValue) in
      a[keyPath: property] = try Value.parse(word ?? "")
    }
  }

  /// `--name <n>` for an integer with a default, accepting only values in `valid`.
  static func option(
    _ property: WritableKeyPath<Arguments, Int> & Sendable, _ name: String, value: String,
    help: String, defaultText: String? = nil, hidden: Bool = false, valid: ClosedRange<Int>
  ) -> Self where Arguments: ParsableArguments {
    let initial = Arguments()[keyPath: property].helpText
    let info = OptionInfo(
      name: name, value: value, help: help, defaultText: defaultText ?? initial, hidden: hidden)
    return Self(info: info, property: property) { a, word throws(InvalidValue) in
      a[keyPath: property] = try Self.parse(word ?? "", in: valid)
    }
  }

  /// `--name <value>`, given any number of times (at least once when `required`): every
  /// value, in order.
  static func repeating<Value: ArgumentValue>(
    _ property: WritableKeyPath<Arguments, [Value]> & Sendable, _ name: String,
    short: Character? = nil,
    value: String, help: String, isFile: Bool = false, required: Bool = false
  ) -> Self {
    let info = OptionInfo(
      name: name, short: short, value: value, help: help, choices: Value.choices,
      isFile: isFile, repeats: true, required: required)
    return Self(info: info, property: property) { a, word throws(InvalidValue) in
      a[keyPath: property].append(try Value.parse(word ?? ""))
    }
  }

  private static func parse(_ word: String, in valid: ClosedRange<Int>) throws(InvalidValue)
    -> Int
  {
    guard let n = Int(word), valid.contains(n) else {
      if isDigits(word) && Int(word) == nil {
        throw InvalidValue(outOfRange: "the largest is \(valid.upperBound)")
      }
      if valid.upperBound == Int.max {
        throw InvalidValue(expected: "an integer ≥ \(valid.lowerBound)")
      }
      throw InvalidValue(expected: "an integer in \(valid.lowerBound)...\(valid.upperBound)")
    }
    return n
  }
}

/// One positional argument and the property it sets.
struct ArgumentSpec<Arguments> {
  var info: ArgumentInfo
  /// The property it sets.
  let property: AnyKeyPath & Sendable
  let store: @Sendable (inout Arguments, [String]) throws(InvalidValue) -> Void

  /// A required argument.
  static func required<Value: ArgumentValue>(
    _ property: WritableKeyPath<Arguments, Value> & Sendable, _ name: String, help: String,
    isFile: Bool = true
  ) -> Self {
    let info = ArgumentInfo(name: name, help: help, choices: Value.choices, isFile: isFile)
    return Self(info: info, property: property) { a, words throws(InvalidValue) in
      a[keyPath: property] = try Value.parse(words.first ?? "")
    }
  }

  /// An argument that may be left out.
  static func optional<Value: ArgumentValue>(
    _ property: WritableKeyPath<Arguments, Value?> & Sendable, _ name: String, help: String,
    isFile: Bool = true
  ) -> Self {
    let info = ArgumentInfo(
      name: name, help: help, optional: true, choices: Value.choices, isFile: isFile)
    return Self(info: info, property: property) { a, words throws(InvalidValue) in
      a[keyPath: property] = try words.first.map { w throws(InvalidValue) in try Value.parse(w) }
    }
  }

  /// The last argument, taking one or more words.
  static func variadic<Value: ArgumentValue>(
    _ property: WritableKeyPath<Arguments, [Value]> & Sendable, _ name: String, help: String,
    isFile: Bool = true
  ) -> Self {
    let info = ArgumentInfo(
      name: name, help: help, variadic: true, choices: Value.choices, isFile: isFile)
    return Self(info: info, property: property) { a, words throws(InvalidValue) in
      a[keyPath: property] = try words.map { w throws(InvalidValue) in try Value.parse(w) }
    }
  }
}

/// A command's arguments with their defaults, before the command line fills them in.
protocol ParsableArguments: Sendable {
  init()
}

/// What help, completion and usage errors read of a command, whatever its arguments.
struct CommandInfo {
  var name: String
  var abstract: String
  var discussion: String = ""
  var arguments: [ArgumentInfo] = []
  var options: [OptionInfo] = []
  var hidden = false

  /// The command's own options followed by the ones every command takes.
  var allOptions: [OptionInfo] { options + CommandInfo.standardOptions }

  static let colorOption = OptionInfo(
    name: "color", value: "when", help: "When to colour the output.", defaultText: "auto",
    choices: ColorChoice.choices)
  static let helpOption = OptionInfo(name: "help", short: "h", help: "Show help information.")
  static let standardOptions = [colorOption, helpOption]

  /// `listtape show <log> [--at <point>] [--json] [--all]`.
  var usage: String {
    var parts = ["listtape", name]
    parts += arguments.map(\.synopsis)
    for o in options where !o.hidden {
      let word = o.repeats ? "\(o.synopsis) ..." : o.synopsis
      parts.append(o.required ? word : "[\(word)]")
    }
    return parts.joined(separator: " ")
  }
}

/// A command's whole declaration: its help text, arguments and options.
struct CommandSpec<Arguments: ParsableArguments> {
  var name: String
  var abstract: String
  var discussion: String = ""
  var arguments: [ArgumentSpec<Arguments>] = []
  var options: [OptionSpec<Arguments>] = []
  var hidden = false

  var info: CommandInfo {
    CommandInfo(
      name: name, abstract: abstract, discussion: discussion, arguments: arguments.map(\.info),
      options: options.map(\.info), hidden: hidden)
  }
}

// MARK: - Parsing

/// A command line split by a command's declaration.
struct ParsedCommandLine<Arguments: ParsableArguments> {
  var arguments = Arguments()
  var color: ColorChoice?
  var wantsHelp = false

  /// Splits `words` (the words after the command name) by `spec` and fills in the
  /// arguments.
  ///
  /// Accepts `--name value`, `--name=value`, `-h`, and `--` to end options; the last of a
  /// repeated option wins unless it is declared to repeat. Help wins over every other
  /// problem.
  init(_ words: [String], spec: CommandSpec<Arguments>) throws(CLIError) {
    let info = spec.info
    func usage(_ message: String) -> CLIError { .usage(message, command: spec.name) }
    func invalid(_ error: InvalidValue, _ word: String, _ label: String) -> CLIError {
      usage(error.message(word, label))
    }
    let helpWords = words.prefix { $0 != "--" }
    wantsHelp = helpWords.contains { $0 == "--help" || $0 == "-h" }
    if wantsHelp { return }
    var positionals: [String] = []
    var seen = Set<Int>()
    var i = 0
    var onlyPositionals = false
    while i < words.count {
      let word = words[i]
      i += 1
      if onlyPositionals || word == "-" || !word.hasPrefix("-") {
        positionals.append(word)
        continue
      }
      if word == "--" {
        onlyPositionals = true
        continue
      }
      var name: Substring
      var inline: String? = nil
      let index: Int?
      if word.hasPrefix("--") {
        name = word.dropFirst(2)
        if let eq = name.firstIndex(of: "=") {
          inline = String(name[name.index(after: eq)...])
          name = name[..<eq]
        }
        index = info.allOptions.firstIndex { $0.name == name }
      } else {
        name = word.dropFirst()
        index = name.count == 1 ? info.allOptions.firstIndex { $0.short == name.first } : nil
      }
      guard let index else {
        if word.first == "-", word.dropFirst().allSatisfy(\.isNumber), !word.dropFirst().isEmpty {
          throw usage("Unexpected argument '\(word)'")
        }
        let names = info.allOptions.filter { !$0.hidden }.map { "--" + $0.name }
        let guess = word.hasPrefix("--") ? String(word.prefix { $0 != "=" }) : word
        throw usage("Unknown option '\(word)'" + didYouMean(String(guess), names))
      }
      let option = info.allOptions[index]
      seen.insert(index)
      var value: String?
      if option.value == nil {
        if inline != nil { throw usage("The flag '--\(option.name)' does not take a value") }
      } else if let inline {
        value = inline
      } else if i < words.count {
        value = words[i]
        i += 1
      } else {
        throw usage("Missing value for '\(option.synopsis)'")
      }
      if index >= spec.options.count {
        // --color; --help was handled above.
        do throws(InvalidValue) {
          color = try ColorChoice.parse(value ?? "")
        } catch {
          throw invalid(error, value ?? "", option.synopsis)
        }
        continue
      }
      do throws(InvalidValue) {
        try spec.options[index].store(&arguments, value)
      } catch {
        throw invalid(error, value ?? "", option.synopsis)
      }
    }
    let declared = spec.arguments
    let required = declared.filter { !$0.info.optional }.count
    let takesRest = declared.last?.info.variadic == true
    if positionals.count > declared.count && !takesRest {
      throw usage("Unexpected argument '\(positionals[declared.count])'")
    }
    if positionals.count < required {
      throw usage("Missing expected argument '<\(declared[positionals.count].info.name)>'")
    }
    if let missing = spec.options.indices.first(where: {
      spec.options[$0].info.required && !seen.contains($0)
    }) {
      throw usage("Missing expected argument '\(spec.options[missing].info.synopsis)'")
    }
    for (k, argument) in declared.enumerated() where k < positionals.count {
      let words =
        argument.info.variadic ? Array(positionals[k...]) : [positionals[k]]
      do throws(InvalidValue) {
        try argument.store(&arguments, words)
      } catch {
        throw invalid(error, words.first ?? "", "<\(argument.info.name)>")
      }
    }
  }
}

// MARK: - Suggestions

/// `. Did you mean '--json'?` when one candidate is a small edit away from `word`, else "".
func didYouMean(_ word: String, _ candidates: [String]) -> String {
  let limit = max(1, min(2, word.count / 3))
  let scored = candidates.map { (name: $0, distance: editDistance(word, $0)) }
    .filter { $0.distance <= limit }
  guard let best = scored.min(by: { $0.distance < $1.distance }) else { return "" }
  return ". Did you mean '\(best.name)'?"
}

/// Optimal string alignment distance: insertions, deletions, substitutions and swaps of
/// neighbours each count one.
func editDistance(_ a: String, _ b: String) -> Int {
  let a = Array(a)
  let b = Array(b)
  if a.isEmpty || b.isEmpty { return max(a.count, b.count) }
  var d = [[Int]](repeating: [Int](repeating: 0, count: b.count + 1), count: a.count + 1)
  for i in 0...a.count { d[i][0] = i }
  for j in 0...b.count { d[0][j] = j }
  for i in 1...a.count {
    for j in 1...b.count {
      let cost = a[i - 1] == b[j - 1] ? 0 : 1
      d[i][j] = min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost)
      if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
        d[i][j] = min(d[i][j], d[i - 2][j - 2] + 1)
      }
    }
  }
  return d[a.count][b.count]
}
