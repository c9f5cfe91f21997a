import ListTapeModel
import ListTapeStore

/// A value of the state expression language.
public enum QueryValue: Equatable, Hashable, Sendable, CustomStringConvertible {
  /// A boolean: `visible(ID)`, comparisons, `and`, `or`, `not`.
  case bool(Bool)
  /// An integer: counts, levels, rows.
  case int(Int)
  /// A string: `parent(ID)` of an item that has one.
  case string(String)
  /// No value: `parent(ID)` of a root or absent item.
  case null

  /// The value as an expression spells it: `true`, `3`, `"mic"`, `null`.
  public var description: String {
    switch self {
    case .bool(let b): return b ? "true" : "false"
    case .int(let i): return String(i)
    case .string(let s): return "\"\(s)\""
    case .null: return "null"
    }
  }
}

/// A malformed expression: what is wrong and the 1-based column where it was found.
public struct QueryError: Error, Equatable, Sendable, CustomStringConvertible {
  /// The 1-based column of the expression where the problem was found.
  public var column: Int
  /// What is wrong there.
  public var message: String

  /// `column N: message`.
  public var description: String { "column \(column): \(message)" }
}

/// A parsed, type-checked state predicate such as
/// `visible("mic") and count(selected) == 0` (protocol section 4, EXPR).
public struct Query: Sendable, CustomStringConvertible {
  /// An id the expression names, with the place of its probe in an `Evaluation`.
  struct Ref: Sendable {
    let id: String
    let slot: Int
  }

  indirect enum Node: Sendable {
    case literal(QueryValue)
    case visible(Ref)
    case expanded(Ref)
    case selected(Ref)
    case exists(Ref)
    case countVisible(section: Ref?)
    case countItems
    case countSelected
    case countSections
    case level(Ref)
    case row(Ref)
    case parent(Ref)
    case not(Node)
    /// A chain of `and`s (or `or`s) as one node: `a or b or c ...` of any length stays one
    /// level deep, so evaluating or freeing it never recurses once per operand.
    case and([Node])
    case or([Node])
    case compare(String, Node, Node)
  }

  /// Static type of an expression; `stringOrNull` is `parent(ID)`.
  enum Kind: Equatable, Sendable {
    case bool, int, string, stringOrNull, null
  }

  let root: Node
  /// The ids the expression names, by slot.
  let ids: [String]
  /// The type the whole expression evaluates to.
  let kind: Kind
  /// The source text, for messages.
  public let description: String

  /// Whether the expression is a predicate (bisect needs one).
  public var isBoolean: Bool { kind == .bool }

  /// Parses and type-checks `text`; errors name the column.
  public init(_ text: String) throws(QueryError) {
    var p = QueryParser(text)
    let (node, kind) = try p.parseExpression()
    try p.expectEnd()
    root = node
    ids = p.ids
    self.kind = kind
    description = text
  }

  /// Evaluates the expression on a state (looking each id up; `Evaluation` asks many
  /// states of one fold for the price of one lookup).
  package func evaluate(_ state: ListState) -> QueryValue {
    var e = Evaluation(self)
    return e.evaluate(state)
  }

  /// Evaluates a boolean expression (false for any non-boolean result).
  package func holds(in state: ListState) -> Bool { evaluate(state) == .bool(true) }

  /// The expression asked of many states: each id it names keeps its `IdProbe`, so states
  /// of one fold are searched only in the ids defined since the last.
  package struct Evaluation: Sendable {
    package let query: Query
    var probes: [IdProbe]

    package init(_ query: Query) {
      self.query = query
      probes = query.ids.map(IdProbe.init)
    }

    /// The expression's value on `state`.
    package mutating func evaluate(_ state: ListState) -> QueryValue { eval(query.root, state) }

    /// Whether a boolean expression holds on `state`.
    package mutating func holds(in state: ListState) -> Bool { evaluate(state) == .bool(true) }

    mutating func eval(_ node: Node, _ s: ListState) -> QueryValue {
      switch node {
      case .literal(let v): return v
      case .visible(let r): return .bool(s.item(&probes[r.slot]).map(s.isVisible) ?? false)
      case .expanded(let r): return .bool(s.item(&probes[r.slot]).map(s.isExpanded) ?? false)
      case .selected(let r): return .bool(s.item(&probes[r.slot]).map(s.isSelected) ?? false)
      case .exists(let r): return .bool(s.item(&probes[r.slot]) != nil)
      case .countVisible(let section):
        if let r = section { return .int(s.section(&probes[r.slot]).map(s.numberOfItems) ?? 0) }
        return .int(s.numberOfItems)
      case .countItems: return .int(s.numberOfAllItems)
      case .countSelected: return .int(s.numberOfSelectedItems)
      case .countSections: return .int(s.numberOfSections)
      case .level(let r): return .int(s.item(&probes[r.slot]).map { s.level(of: $0) } ?? -1)
      case .row(let r): return .int(s.item(&probes[r.slot]).flatMap { s.row(of: $0) } ?? -1)
      case .parent(let r):
        return s.item(&probes[r.slot]).flatMap { s.parent(of: $0) }.map { .string($0) } ?? .null
      case .not(let a): return .bool(eval(a, s) != .bool(true))
      case .and(let operands):
        for a in operands where eval(a, s) != .bool(true) { return .bool(false) }
        return .bool(true)
      case .or(let operands):
        for a in operands where eval(a, s) == .bool(true) { return .bool(true) }
        return .bool(false)
      case .compare(let op, let a, let b):
        return .bool(Query.compare(op, eval(a, s), eval(b, s)))
      }
    }
  }

  static func compare(_ op: String, _ a: QueryValue, _ b: QueryValue) -> Bool {
    switch op {
    case "==": return a == b
    case "!=": return a != b
    default: break
    }
    let order: Bool?
    switch (a, b) {
    case (.int(let x), .int(let y)): order = ordered(op, x, y)
    case (.string(let x), .string(let y)): order = ordered(op, x, y)
    default: order = nil
    }
    return order ?? false
  }

  static func ordered<T: Comparable>(_ op: String, _ x: T, _ y: T) -> Bool {
    switch op {
    case "<": return x < y
    case "<=": return x <= y
    case ">": return x > y
    default: return x >= y
    }
  }
}

/// Recursive-descent parser: `or` < `and` < `not` < comparison < primary.
struct QueryParser {
  let chars: [Character]
  var i = 0
  var depth = 0
  /// The ids named so far, by slot.
  var ids: [String] = []

  init(_ text: String) { chars = Array(text) }

  /// Names `id` in the expression: the next slot.
  mutating func ref(_ id: String) -> Query.Ref {
    ids.append(id)
    return Query.Ref(id: id, slot: ids.count - 1)
  }

  func fail(_ message: String, at index: Int? = nil) -> QueryError {
    QueryError(column: (index ?? i) + 1, message: message)
  }

  mutating func skipSpace() {
    while i < chars.count, chars[i].isWhitespace { i += 1 }
  }

  mutating func peekWord() -> String? {
    skipSpace()
    var j = i
    while j < chars.count, chars[j].isLetter || chars[j] == "_" || (j > i && chars[j].isNumber) {
      j += 1
    }
    return j > i ? String(chars[i..<j]) : nil
  }

  mutating func expectEnd() throws(QueryError) {
    skipSpace()
    if i < chars.count { throw fail("unexpected \"\(chars[i])\" after the expression") }
  }

  mutating func parseExpression() throws(QueryError) -> (Query.Node, Query.Kind) {
    depth += 1
    defer { depth -= 1 }
    guard depth < 200 else { throw fail("expression nested too deeply") }
    let (lhs, lk) = try parseAnd()
    var operands = [lhs]
    while peekWord() == "or" {
      let at = i
      i += 2
      let (rhs, rk) = try parseAnd()
      try requireBool(lk, at: at, "or")
      try requireBool(rk, at: at, "or")
      operands.append(rhs)
    }
    return operands.count == 1 ? (lhs, lk) : (.or(operands), .bool)
  }

  mutating func parseAnd() throws(QueryError) -> (Query.Node, Query.Kind) {
    let (lhs, lk) = try parseNot()
    var operands = [lhs]
    while peekWord() == "and" {
      let at = i
      i += 3
      let (rhs, rk) = try parseNot()
      try requireBool(lk, at: at, "and")
      try requireBool(rk, at: at, "and")
      operands.append(rhs)
    }
    return operands.count == 1 ? (lhs, lk) : (.and(operands), .bool)
  }

  mutating func parseNot() throws(QueryError) -> (Query.Node, Query.Kind) {
    if peekWord() == "not" {
      let at = i
      i += 3
      depth += 1
      defer { depth -= 1 }
      guard depth < 200 else { throw fail("expression nested too deeply") }
      let (a, k) = try parseNot()
      try requireBool(k, at: at, "not")
      return (.not(a), .bool)
    }
    return try parseComparison()
  }

  func requireBool(_ k: Query.Kind, at: Int, _ op: String) throws(QueryError) {
    guard k == .bool else { throw fail("\"\(op)\" needs boolean operands", at: at) }
  }

  mutating func parseComparison() throws(QueryError) -> (Query.Node, Query.Kind) {
    let (lhs, lk) = try parsePrimary()
    skipSpace()
    let at = i
    guard let op = comparisonOperator() else { return (lhs, lk) }
    let (rhs, rk) = try parsePrimary()
    if op == "==" || op == "!=" {
      guard compatible(lk, rk) else {
        throw fail("cannot compare \(name(lk)) with \(name(rk))", at: at)
      }
    } else {
      let ints = lk == .int && rk == .int
      let strings = lk == .string && rk == .string
      guard ints || strings else {
        throw fail("\"\(op)\" needs two integers or two strings", at: at)
      }
    }
    return (.compare(op, lhs, rhs), .bool)
  }

  func compatible(_ a: Query.Kind, _ b: Query.Kind) -> Bool {
    func nullable(_ k: Query.Kind) -> Bool { k == .stringOrNull || k == .null }
    func stringy(_ k: Query.Kind) -> Bool { k == .string || k == .stringOrNull }
    if a == b { return true }
    if nullable(a) && nullable(b) { return true }
    if stringy(a) && stringy(b) { return true }
    return false
  }

  func name(_ k: Query.Kind) -> String {
    switch k {
    case .bool: return "a boolean"
    case .int: return "an integer"
    case .string: return "a string"
    case .stringOrNull: return "a string or null"
    case .null: return "null"
    }
  }

  mutating func comparisonOperator() -> String? {
    for op in ["==", "!=", "<=", ">=", "<", ">"] {
      let n = op.count
      if i + n <= chars.count, String(chars[i..<i + n]) == op {
        i += n
        return op
      }
    }
    return nil
  }

  mutating func parsePrimary() throws(QueryError) -> (Query.Node, Query.Kind) {
    skipSpace()
    guard i < chars.count else { throw fail("expected a value, found the end of the expression") }
    let c = chars[i]
    if c == "(" {
      i += 1
      let inner = try parseExpression()
      skipSpace()
      guard i < chars.count, chars[i] == ")" else { throw fail("expected \")\"") }
      i += 1
      return inner
    }
    if c == "\"" { return (.literal(.string(try parseString())), .string) }
    if c == "-" || c.isNumber {
      let start = i
      i += 1
      while i < chars.count, chars[i].isNumber { i += 1 }
      guard let n = Int(String(chars[start..<i])) else {
        throw fail("bad integer", at: start)
      }
      return (.literal(.int(n)), .int)
    }
    let start = i
    guard let word = peekWord() else { throw fail("unexpected \"\(c)\"") }
    i += word.count
    switch word {
    case "null": return (.literal(.null), .null)
    case "true": return (.literal(.bool(true)), .bool)
    case "false": return (.literal(.bool(false)), .bool)
    default: return try parseCall(word, at: start)
    }
  }

  mutating func parseString() throws(QueryError) -> String {
    let start = i
    i += 1
    var out = ""
    while i < chars.count {
      let c = chars[i]
      i += 1
      if c == "\"" { return out }
      if c == "\\" {
        guard i < chars.count else { break }
        let e = chars[i]
        i += 1
        switch e {
        case "n": out.append("\n")
        case "t": out.append("\t")
        case "r": out.append("\r")
        case "b": out.append("\u{8}")
        case "f": out.append("\u{C}")
        case "u": out.append(try parseUnicodeEscape(at: i - 2))
        default: out.append(e)
        }
      } else {
        out.append(c)
      }
    }
    throw fail("unterminated string", at: start)
  }

  /// `\\uXXXX` as JSON spells it (identifiers are JSON strings), a surrogate pair included.
  mutating func parseUnicodeEscape(at start: Int) throws(QueryError) -> Character {
    func hex() -> UInt32? {
      guard i + 4 <= chars.count, let v = UInt32(String(chars[i..<i + 4]), radix: 16) else {
        return nil
      }
      i += 4
      return v
    }
    guard let high = hex() else { throw fail("bad \\u escape", at: start) }
    var scalar = high
    if (0xD800...0xDBFF).contains(high) {
      guard i + 1 < chars.count, chars[i] == "\\", chars[i + 1] == "u" else {
        throw fail("bad \\u escape: a lone surrogate", at: start)
      }
      i += 2
      guard let low = hex(), (0xDC00...0xDFFF).contains(low) else {
        throw fail("bad \\u escape: a lone surrogate", at: start)
      }
      scalar = 0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00)
    }
    guard let u = Unicode.Scalar(scalar) else { throw fail("bad \\u escape", at: start) }
    return Character(u)
  }

  mutating func expect(_ c: Character, _ what: String) throws(QueryError) {
    skipSpace()
    guard i < chars.count, chars[i] == c else {
      throw fail("expected \(what)")
    }
    i += 1
  }

  mutating func idArgument(_ fn: String) throws(QueryError) -> Query.Ref {
    skipSpace()
    guard i < chars.count, chars[i] == "\"" else {
      throw fail("\(fn)() takes an item identifier string, like \(fn)(\"mic\")")
    }
    let id = try parseString()
    if id.isEmpty { throw fail("empty identifier", at: i - 2) }
    return ref(id)
  }

  mutating func parseCall(_ fn: String, at start: Int) throws(QueryError) -> (
    Query.Node, Query.Kind
  ) {
    let known = ["visible", "expanded", "selected", "exists", "count", "level", "row", "parent"]
    guard known.contains(fn) else {
      throw fail(
        "unknown function or keyword \"\(fn)\" (expected one of \(known.joined(separator: ", ")), null)",
        at: start)
    }
    try expect("(", "\"(\" after \(fn)")
    let result: (Query.Node, Query.Kind)
    switch fn {
    case "visible": result = (.visible(try idArgument(fn)), .bool)
    case "expanded": result = (.expanded(try idArgument(fn)), .bool)
    case "selected": result = (.selected(try idArgument(fn)), .bool)
    case "exists": result = (.exists(try idArgument(fn)), .bool)
    case "level": result = (.level(try idArgument(fn)), .int)
    case "row": result = (.row(try idArgument(fn)), .int)
    case "parent": result = (.parent(try idArgument(fn)), .stringOrNull)
    default: result = try parseCount()
    }
    try expect(")", "\")\" to close \(fn)(")
    return result
  }

  mutating func parseCount() throws(QueryError) -> (Query.Node, Query.Kind) {
    let at = i
    guard let what = peekWord() else {
      throw fail("count() takes visible, items, selected or sections")
    }
    i += what.count
    switch what {
    case "visible":
      skipSpace()
      if i < chars.count, chars[i] == "," {
        i += 1
        skipSpace()
        guard i < chars.count, chars[i] == "\"" else {
          throw fail("count(visible, SECTION) takes a section identifier string")
        }
        return (.countVisible(section: ref(try parseString())), .int)
      }
      return (.countVisible(section: nil), .int)
    case "items": return (.countItems, .int)
    case "selected": return (.countSelected, .int)
    case "sections": return (.countSections, .int)
    default:
      throw fail("count() takes visible, items, selected or sections, not \"\(what)\"", at: at)
    }
  }
}
