import ListTapeJSON

/// Why a JSON line is not an event: the protocol's *malformed* input.
public struct MalformedEvent: Error, Equatable, Sendable, CustomStringConvertible {
  /// What is wrong, e.g. `missing field "items"`.
  public var message: String

  public init(_ message: String) { self.message = message }

  public var description: String { message }
}

extension Event {
  /// Decodes one JSON Lines line; blank lines are the caller's business.
  package init(jsonLine bytes: UnsafeRawBufferPointer) throws(MalformedEvent) {
    let value: JSONValue
    do {
      value = try JSONParser.parse(bytes)
    } catch {
      throw MalformedEvent("invalid JSON at \(error)")
    }
    try self.init(json: value)
  }

  /// Decodes one JSON Lines line given as text.
  public init(jsonLine text: String) throws(MalformedEvent) {
    var text = text
    let result: Result<Event, MalformedEvent> = text.withUTF8 { utf8 in
      Result { () throws(MalformedEvent) in try Event(jsonLine: UnsafeRawBufferPointer(utf8)) }
    }
    self = try result.get()
  }

  /// Decodes an event from a parsed JSON value.
  package init(json: JSONValue) throws(MalformedEvent) {
    guard let object = json.objectValue else {
      throw MalformedEvent("expected a JSON object, found \(json.kindName)")
    }
    let f = Fields(object: object)
    guard let opValue = f.present("op") else { throw MalformedEvent("missing field \"op\"") }
    guard let op = opValue.stringValue else {
      throw MalformedEvent("field \"op\" must be a string, found \(opValue.kindName)")
    }
    let time: Int64?
    if let t = f.present("t") {
      guard let ms = t.intValue else {
        throw MalformedEvent("field \"t\" must be an integer (milliseconds), found \(t.kindName)")
      }
      time = ms
    } else {
      time = nil
    }
    self.init(try Self.operation(op, f), time: time)
  }

  private static func operation(_ op: String, _ f: Fields) throws(MalformedEvent) -> ListOperation {
    switch op {
    case "appendSections": return .appendSections(try f.ids("sections"))
    case "insertSections": return .insertSections(try f.ids("sections"), try f.anchor())
    case "deleteSections": return .deleteSections(try f.ids("sections"))
    case "moveSection": return .moveSection(try f.id("section"), try f.anchor())
    case "reloadSections": return .reloadSections(try f.ids("sections"))
    case "appendItems":
      return .appendItems(
        try f.nodes("items"), section: try f.optionalID("section"),
        parent: try f.optionalID("parent"))
    case "insertItems": return .insertItems(try f.nodes("items"), try f.anchor())
    case "deleteItems": return .deleteItems(try f.ids("items"))
    case "deleteAllItems": return .deleteAllItems
    case "moveItem": return .moveItem(try f.id("item"), try f.anchor())
    case "replaceChildren":
      return .replaceChildren(parent: try f.id("parent"), items: try f.nodes("items"))
    case "applySectionSnapshot":
      return .applySectionSnapshot(section: try f.id("section"), items: try f.nodes("items"))
    case "reloadItems": return .reloadItems(try f.ids("items"))
    case "reconfigureItems": return .reconfigureItems(try f.ids("items"))
    case "update":
      return .update(
        item: try f.id("item"), title: try f.optionalString("title"),
        fields: try f.optionalFields("fields"))
    case "expand": return .expand(try f.ids("items"))
    case "collapse": return .collapse(try f.ids("items"))
    case "select": return .select(try f.ids("items"))
    case "deselect": return .deselect(f.present("items") == nil ? nil : try f.ids("items"))
    case "configure": return .configure(multipleSelection: try f.bool("multipleSelection"))
    case "mark": return .mark(try f.string("label"))
    case "batch":
      guard let v = f.present("events") else { throw MalformedEvent("missing field \"events\"") }
      guard let list = v.arrayValue else {
        throw MalformedEvent("field \"events\" must be an array, found \(v.kindName)")
      }
      var events: [Event] = []
      events.reserveCapacity(list.count)
      for (i, e) in list.enumerated() {
        do {
          events.append(try Event(json: e))
        } catch {
          throw MalformedEvent("event \(i + 1) of the batch: \(error.message)")
        }
      }
      return .batch(events)
    default:
      throw MalformedEvent("unknown op \"\(op)\"")
    }
  }
}

/// Typed access to an event object's fields with the protocol's rules: `null` is absent,
/// identifiers are non-empty strings, wrong types are malformed.
private struct Fields {
  let object: JSONObject

  func present(_ key: String) -> JSONValue? {
    guard let v = object[key], !v.isNull else { return nil }
    return v
  }

  func require(_ key: String) throws(MalformedEvent) -> JSONValue {
    guard let v = present(key) else { throw MalformedEvent("missing field \"\(key)\"") }
    return v
  }

  func id(_ key: String) throws(MalformedEvent) -> String {
    try Self.identifier(try require(key), "field \"\(key)\"")
  }

  func optionalID(_ key: String) throws(MalformedEvent) -> String? {
    guard let v = present(key) else { return nil }
    return try Self.identifier(v, "field \"\(key)\"")
  }

  func string(_ key: String) throws(MalformedEvent) -> String {
    let v = try require(key)
    guard let s = v.stringValue else {
      throw MalformedEvent("field \"\(key)\" must be a string, found \(v.kindName)")
    }
    return s
  }

  func optionalString(_ key: String) throws(MalformedEvent) -> String? {
    guard present(key) != nil else { return nil }
    return try string(key)
  }

  func bool(_ key: String) throws(MalformedEvent) -> Bool {
    let v = try require(key)
    guard let b = v.boolValue else {
      throw MalformedEvent("field \"\(key)\" must be a boolean, found \(v.kindName)")
    }
    return b
  }

  func ids(_ key: String) throws(MalformedEvent) -> [String] {
    let v = try require(key)
    guard let list = v.arrayValue else {
      throw MalformedEvent("field \"\(key)\" must be an array of identifiers, found \(v.kindName)")
    }
    var out: [String] = []
    out.reserveCapacity(list.count)
    for (i, e) in list.enumerated() {
      out.append(try Self.identifier(e, "\"\(key)\"[\(i)]"))
    }
    return out
  }

  func optionalFields(_ key: String) throws(MalformedEvent) -> [String: String]? {
    guard let v = present(key) else { return nil }
    return try Self.stringMap(v, "field \"\(key)\"")
  }

  func anchor() throws(MalformedEvent) -> Anchor {
    let before = present("before")
    let after = present("after")
    switch (before, after) {
    case (.some, .some): throw MalformedEvent("both \"before\" and \"after\" given (need one)")
    case (nil, nil): throw MalformedEvent("missing field \"before\" or \"after\"")
    case (.some(let b), nil): return .before(try Self.identifier(b, "field \"before\""))
    case (nil, .some(let a)): return .after(try Self.identifier(a, "field \"after\""))
    }
  }

  func nodes(_ key: String) throws(MalformedEvent) -> [OutlineNode] {
    let v = try require(key)
    return try Self.nodeList(v, "\"\(key)\"")
  }

  static func identifier(_ v: JSONValue, _ what: String) throws(MalformedEvent) -> String {
    guard let s = v.stringValue else {
      throw MalformedEvent("\(what) must be an identifier string, found \(v.kindName)")
    }
    guard !s.isEmpty else { throw MalformedEvent("\(what) must be a non-empty identifier") }
    return s
  }

  static func stringMap(_ v: JSONValue, _ what: String) throws(MalformedEvent) -> [String: String] {
    guard let obj = v.objectValue else {
      throw MalformedEvent("\(what) must be an object of strings, found \(v.kindName)")
    }
    var out: [String: String] = [:]
    for (k, value) in obj {
      guard let s = value.stringValue else {
        throw MalformedEvent("\(what).\(k) must be a string, found \(value.kindName)")
      }
      out[k] = s
    }
    return out
  }

  static func nodeList(_ v: JSONValue, _ path: String) throws(MalformedEvent) -> [OutlineNode] {
    guard let list = v.arrayValue else {
      throw MalformedEvent("field \(path) must be an array of items, found \(v.kindName)")
    }
    var out: [OutlineNode] = []
    out.reserveCapacity(list.count)
    for (i, e) in list.enumerated() { out.append(try node(e, "\(path)[\(i)]")) }
    return out
  }

  static func node(_ v: JSONValue, _ path: String) throws(MalformedEvent) -> OutlineNode {
    if case .string = v { return OutlineNode(try identifier(v, path)) }
    guard let obj = v.objectValue else {
      throw MalformedEvent("\(path) must be an identifier or an item object, found \(v.kindName)")
    }
    let f = Fields(object: obj)
    guard let idValue = f.present("id") else { throw MalformedEvent("\(path) lacks \"id\"") }
    var n = OutlineNode(try identifier(idValue, "\(path).id"))
    if let t = f.present("title") {
      guard let s = t.stringValue else {
        throw MalformedEvent("\(path).title must be a string, found \(t.kindName)")
      }
      n.title = s
    }
    if let fields = f.present("fields") { n.fields = try stringMap(fields, "\(path).fields") }
    if let e = f.present("expanded") {
      guard let b = e.boolValue else {
        throw MalformedEvent("\(path).expanded must be a boolean, found \(e.kindName)")
      }
      n.expanded = b
    }
    if let c = f.present("children") { n.children = try nodeList(c, "\(path).children") }
    return n
  }
}

// MARK: - Encoding

extension Event {
  /// The event as one compact JSON object (no newline); decoding it gives the same event.
  public var jsonLine: String {
    var w = JSONWriter()
    encode(to: &w)
    return w.text
  }

  /// Writes the event as a JSON object: `op` first, then its fields, then `t`.
  package func encode(to w: inout JSONWriter) {
    w.beginObject()
    w.key("op")
    w.string(op)
    operation.encodeFields(to: &w)
    if let time {
      w.key("t")
      w.int(time)
    }
    w.endObject()
  }
}

extension ListOperation {
  fileprivate func encodeFields(to w: inout JSONWriter) {
    func ids(_ key: String, _ list: [String]) {
      w.key(key)
      w.beginArray()
      for id in list { w.string(id) }
      w.endArray()
    }
    func str(_ key: String, _ value: String) {
      w.key(key)
      w.string(value)
    }
    func anchor(_ a: Anchor) {
      switch a {
      case .before(let id): str("before", id)
      case .after(let id): str("after", id)
      }
    }
    func nodes(_ key: String, _ list: [OutlineNode]) {
      w.key(key)
      OutlineNode.encode(list, to: &w)
    }
    switch self {
    case .appendSections(let s), .deleteSections(let s), .reloadSections(let s): ids("sections", s)
    case .insertSections(let s, let a):
      ids("sections", s)
      anchor(a)
    case .moveSection(let s, let a):
      str("section", s)
      anchor(a)
    case .appendItems(let items, let section, let parent):
      nodes("items", items)
      if let section { str("section", section) }
      if let parent { str("parent", parent) }
    case .insertItems(let items, let a):
      nodes("items", items)
      anchor(a)
    case .deleteItems(let i), .reloadItems(let i), .reconfigureItems(let i), .expand(let i),
      .collapse(let i), .select(let i):
      ids("items", i)
    case .deleteAllItems: break
    case .moveItem(let item, let a):
      str("item", item)
      anchor(a)
    case .replaceChildren(let parent, let items):
      str("parent", parent)
      nodes("items", items)
    case .applySectionSnapshot(let section, let items):
      str("section", section)
      nodes("items", items)
    case .update(let item, let title, let fields):
      str("item", item)
      if let title { str("title", title) }
      if let fields {
        w.key("fields")
        OutlineNode.encodeFields(fields, to: &w)
      }
    case .deselect(let i): if let i { ids("items", i) }
    case .configure(let multiple):
      w.key("multipleSelection")
      w.bool(multiple)
    case .mark(let label): str("label", label)
    case .batch(let events):
      w.key("events")
      w.beginArray()
      for e in events { e.encode(to: &w) }
      w.endArray()
    }
  }
}

extension OutlineNode {
  /// Writes nodes as the protocol's NODE list: bare ids as strings, others as objects.
  static func encode(_ list: [OutlineNode], to w: inout JSONWriter) {
    w.beginArray()
    for n in list {
      if n.isBare {
        w.string(n.id)
        continue
      }
      w.beginObject()
      w.key("id")
      w.string(n.id)
      if let title = n.title {
        w.key("title")
        w.string(title)
      }
      if let fields = n.fields {
        w.key("fields")
        encodeFields(fields, to: &w)
      }
      if n.expanded {
        w.key("expanded")
        w.bool(true)
      }
      if !n.children.isEmpty {
        w.key("children")
        encode(n.children, to: &w)
      }
      w.endObject()
    }
    w.endArray()
  }

  /// Writes a string map with keys sorted, so equal maps always encode the same.
  static func encodeFields(_ fields: [String: String], to w: inout JSONWriter) {
    w.beginObject()
    for k in fields.keys.sorted() {
      w.key(k)
      w.string(fields[k] ?? "")
    }
    w.endObject()
  }
}
