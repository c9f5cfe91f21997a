import ListTapeJSON

/// Why a JSON line is not an event: the protocol's *malformed* input.
package struct MalformedEvent: Error, Equatable, Sendable, CustomStringConvertible {
  /// What is wrong, e.g. `missing field "items"`.
  package var message: String

  package init(_ message: String) { self.message = message }

  package var description: String { message }
}

extension Event {
  /// Decodes one JSON Lines line; blank lines are the caller's business.
  package init(jsonLine bytes: UnsafeRawBufferPointer) throws(MalformedEvent) {
    if let event = FastEventLine.decode(bytes) {
      self = event
      return
    }
    try self.init(treeLine: bytes)
  }

  /// `init(jsonLine:)` through the JSON tree, for every line (the fast path's reference).
  package init(treeLine bytes: UnsafeRawBufferPointer) throws(MalformedEvent) {
    let value: JSONValue
    do {
      value = try JSONParser.parse(bytes)
    } catch {
      throw MalformedEvent("invalid JSON at \(error)")
    }
    try self.init(json: value)
  }

  /// Decodes one JSON Lines line given as text.
  package init(jsonLine text: String) throws(MalformedEvent) {
    var text = text
    let result: Result<Event, MalformedEvent> = text.withUTF8 { utf8 in
      Result { () throws(MalformedEvent) in try Event(jsonLine: UnsafeRawBufferPointer(utf8)) }
    }
    self = try result.get()
  }

  /// Decodes an event from a parsed JSON value. Nested batches are decoded with an explicit
  /// stack of open batches, never by recursion.
  package init(json: JSONValue) throws(MalformedEvent) {
    /// A batch whose events are being decoded.
    struct OpenBatch {
      let values: [JSONValue]
      /// How many of `values` were taken (the last taken is being decoded).
      var taken = 0
      var events: [Event] = []
      let time: Int64?
      let site: String?
    }
    var open: [OpenBatch] = []
    var value = json
    while true {
      // Decode one event object: a batch opens, anything else is complete.
      var complete: Event?
      do throws(MalformedEvent) {
        let (op, f, time, site) = try Self.header(value)
        if op == "batch" {
          guard let v = f.present("events") else {
            throw MalformedEvent("missing field \"events\"")
          }
          guard let list = v.arrayValue else {
            throw MalformedEvent("field \"events\" must be an array, found \(v.kindName)")
          }
          var batch = OpenBatch(values: list, time: time, site: site)
          batch.events.reserveCapacity(list.count)
          open.append(batch)
        } else {
          complete = Event(try Self.operation(op, f), time: time, site: site)
        }
      } catch {
        // Say where: the position inside every enclosing batch, outermost first.
        var location = ""
        for batch in open { location += "event \(batch.taken) of the batch: " }
        throw MalformedEvent(location + error.message)
      }
      // File completed events into their batches; a batch with nothing left completes too.
      while true {
        if let e = complete {
          guard !open.isEmpty else {
            self = e
            return
          }
          open[open.count - 1].events.append(e)
          complete = nil
        }
        let top = open.count - 1
        if open[top].taken < open[top].values.count {
          value = open[top].values[open[top].taken]
          open[top].taken += 1
          break
        }
        let batch = open.removeLast()
        complete = Event(.batch(batch.events), time: batch.time, site: batch.site)
      }
    }
  }

  /// An event object's fields, its `op`, its time and its site.
  private static func header(_ json: JSONValue) throws(MalformedEvent) -> (
    op: String, fields: Fields, time: Int64?, site: String?
  ) {
    guard let object = json.objectValue else {
      throw MalformedEvent("expected a JSON object, found \(json.kindName)")
    }
    let f = Fields(object: object)
    guard let opValue = f.present("op") else { throw MalformedEvent("missing field \"op\"") }
    guard let op = opValue.stringValue else {
      throw MalformedEvent("field \"op\" must be a string, found \(opValue.kindName)")
    }
    var ms: Int64?
    if let t = f.present("t") {
      let range = "from \(Int64.min + 1) to \(Int64.max)"
      guard let v = t.intValue else {
        // Digits beyond Int64 parse as a float (every double that large is a whole number):
        // say they are out of range, not a fraction.
        if case .double(let d) = t, d.magnitude >= 0x1p63 {
          throw MalformedEvent(
            "field \"t\" must be an integer (milliseconds) \(range), found one out of that range")
        }
        throw MalformedEvent("field \"t\" must be an integer (milliseconds), found \(t.kindName)")
      }
      // The one integer a log keeps as "no time" (`FoldOps.noTime`): recorded, it would read
      // back as an event without one.
      guard v != Int64.min else {
        throw MalformedEvent(
          "field \"t\" must be an integer (milliseconds) \(range), found \(v)")
      }
      ms = v
    }
    guard let s = f.present("site") else { return (op, f, ms, nil) }
    guard let site = s.stringValue else {
      throw MalformedEvent("field \"site\" must be a string, found \(s.kindName)")
    }
    guard !site.isEmpty else { throw MalformedEvent("field \"site\" must not be empty") }
    return (op, f, ms, site)
  }

  /// The operation `op` names, from its fields as `f` reads them (the JSON tree's `Fields`,
  /// or a line read in one pass, `FastEventLine`): the one table of which fields each op takes.
  static func operation<F: EventFields>(_ op: String, _ f: F) throws(MalformedEvent)
    -> ListOperation
  {
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
    case "deselect": return .deselect(f.has("items") ? try f.ids("items") : nil)
    case "configure": return .configure(multipleSelection: try f.bool("multipleSelection"))
    case "mark": return .mark(try f.string("label"))
    default:
      throw MalformedEvent("unknown op \"\(op)\"")
    }
  }
}

/// An event object's fields as `Event.operation` asks for them, by their JSON keys: each
/// accessor throws when the field is missing or of the wrong kind.
protocol EventFields {
  /// Whether the field is there (not `null`).
  func has(_ key: String) -> Bool
  /// A non-empty identifier.
  func id(_ key: String) throws(MalformedEvent) -> String
  func optionalID(_ key: String) throws(MalformedEvent) -> String?
  func string(_ key: String) throws(MalformedEvent) -> String
  func optionalString(_ key: String) throws(MalformedEvent) -> String?
  func bool(_ key: String) throws(MalformedEvent) -> Bool
  func ids(_ key: String) throws(MalformedEvent) -> [String]
  func optionalFields(_ key: String) throws(MalformedEvent) -> [String: String]?
  /// One of `before` and `after`.
  func anchor() throws(MalformedEvent) -> Anchor
  func nodes(_ key: String) throws(MalformedEvent) -> [OutlineNode]
}

/// Typed access to an event object's fields with the protocol's rules: `null` is absent,
/// identifiers are non-empty strings, wrong types are malformed.
private struct Fields: EventFields {
  let object: JSONObject

  func present(_ key: String) -> JSONValue? {
    guard let v = object[key], !v.isNull else { return nil }
    return v
  }

  func has(_ key: String) -> Bool { present(key) != nil }

  func require(_ key: String) throws(MalformedEvent) -> JSONValue {
    guard let v = present(key) else { throw MalformedEvent("missing field \"\(key)\"") }
    return v
  }

  func id(_ key: String) throws(MalformedEvent) -> String {
    try Self.identifier(try require(key)) { "field \"\(key)\"" }
  }

  func optionalID(_ key: String) throws(MalformedEvent) -> String? {
    guard let v = present(key) else { return nil }
    return try Self.identifier(v) { "field \"\(key)\"" }
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
      out.append(try Self.identifier(e) { "\"\(key)\"[\(i)]" })
    }
    return out
  }

  func optionalFields(_ key: String) throws(MalformedEvent) -> [String: String]? {
    guard let v = present(key) else { return nil }
    return try Self.stringMap(v) { "field \"\(key)\"" }
  }

  func anchor() throws(MalformedEvent) -> Anchor {
    let before = present("before")
    let after = present("after")
    switch (before, after) {
    case (.some, .some): throw MalformedEvent("both \"before\" and \"after\" given (need one)")
    case (nil, nil): throw MalformedEvent("missing field \"before\" or \"after\"")
    case (.some(let b), nil): return .before(try Self.identifier(b) { "field \"before\"" })
    case (nil, .some(let a)): return .after(try Self.identifier(a) { "field \"after\"" })
    }
  }

  func nodes(_ key: String) throws(MalformedEvent) -> [OutlineNode] {
    try Self.nodeList(try require(key), key: key)
  }

  /// A non-empty identifier string; `what` names the value in an error message.
  static func identifier(_ v: JSONValue, _ what: () -> String) throws(MalformedEvent) -> String {
    guard let s = v.stringValue else {
      throw MalformedEvent("\(what()) must be an identifier string, found \(v.kindName)")
    }
    guard !s.isEmpty else { throw MalformedEvent("\(what()) must be a non-empty identifier") }
    return s
  }

  /// An object of strings; `what` names the value in an error message.
  static func stringMap(_ v: JSONValue, _ what: () -> String) throws(MalformedEvent)
    -> [String: String]
  {
    guard let obj = v.objectValue else {
      throw MalformedEvent("\(what()) must be an object of strings, found \(v.kindName)")
    }
    var out: [String: String] = [:]
    for (k, value) in obj {
      guard let s = value.stringValue else {
        throw MalformedEvent("\(what()).\(k) must be a string, found \(value.kindName)")
      }
      out[k] = s
    }
    return out
  }

  /// A NODE list (the value of field `key`), subtrees included, decoded with an explicit
  /// stack of open lists. Error messages give the path, e.g. `"items"[0].children[1].id`,
  /// built only when there is an error.
  static func nodeList(_ v: JSONValue, key: String) throws(MalformedEvent) -> [OutlineNode] {
    /// A list of nodes being decoded, and the node whose children they are.
    struct OpenList {
      let values: [JSONValue]
      var taken = 0
      var nodes: [OutlineNode] = []
      let owner: OutlineNode?
    }
    guard let top = v.arrayValue else {
      throw MalformedEvent("field \"\(key)\" must be an array of items, found \(v.kindName)")
    }
    var open = [OpenList(values: top, owner: nil)]
    open[0].nodes.reserveCapacity(top.count)
    /// The path of the node taken last.
    func path() -> String {
      var p = "\"\(key)\""
      for (i, list) in open.enumerated() {
        p += (i == 0 ? "" : ".children") + "[\(list.taken - 1)]"
      }
      return p
    }
    while true {
      let t = open.count - 1
      if open[t].taken == open[t].values.count {
        let list = open.removeLast()
        guard var owner = list.owner else { return list.nodes }
        owner.children = list.nodes
        open[t - 1].nodes.append(owner)
        continue
      }
      let value = open[t].values[open[t].taken]
      open[t].taken += 1
      let (node, children) = try Self.node(value, path)
      if let children, !children.isEmpty {
        var list = OpenList(values: children, owner: node)
        list.nodes.reserveCapacity(children.count)
        open.append(list)
      } else {
        open[t].nodes.append(node)
      }
    }
  }

  /// One NODE without its children, and its `children` array when it has one.
  static func node(_ v: JSONValue, _ path: () -> String) throws(MalformedEvent) -> (
    OutlineNode, [JSONValue]?
  ) {
    if case .string = v { return (OutlineNode(try identifier(v, path)), nil) }
    guard let obj = v.objectValue else {
      throw MalformedEvent("\(path()) must be an identifier or an item object, found \(v.kindName)")
    }
    let f = Fields(object: obj)
    guard let idValue = f.present("id") else { throw MalformedEvent("\(path()) lacks \"id\"") }
    var n = OutlineNode(try identifier(idValue) { "\(path()).id" })
    if let t = f.present("title") {
      guard let s = t.stringValue else {
        throw MalformedEvent("\(path()).title must be a string, found \(t.kindName)")
      }
      n.title = s
    }
    if let fields = f.present("fields") { n.fields = try stringMap(fields) { "\(path()).fields" } }
    if let e = f.present("expanded") {
      guard let b = e.boolValue else {
        throw MalformedEvent("\(path()).expanded must be a boolean, found \(e.kindName)")
      }
      n.expanded = b
    }
    guard let c = f.present("children") else { return (n, nil) }
    guard let children = c.arrayValue else {
      throw MalformedEvent(
        "field \(path()).children must be an array of items, found \(c.kindName)")
    }
    return (n, children)
  }
}

// MARK: - Encoding

extension Event {
  /// The event as one compact JSON object (no newline); decoding it gives the same event.
  package var jsonLine: String {
    var w = JSONWriter()
    encode(to: &w)
    return w.text
  }

  /// Writes the event as a JSON object: `op` first, then its fields, then `t` and `site`.
  /// Nested batches are written with an explicit stack, never by recursion.
  package func encode(to w: inout JSONWriter) {
    var open: [(events: [Event], next: Int, time: Int64?, site: String?)] = []
    var current: Event? = self
    while true {
      if let e = current {
        current = nil
        w.beginObject()
        w.key("op")
        w.string(e.op)
        if case .batch(let events) = e.operation {
          w.key("events")
          w.beginArray()
          open.append((events, 0, e.time, e.site))
        } else {
          e.operation.encodeFields(to: &w)
          Self.encodeTimeAndSite(e.time, e.site, to: &w)
          w.endObject()
        }
      }
      guard let top = open.last else { return }
      if top.next < top.events.count {
        current = top.events[top.next]
        open[open.count - 1].next += 1
      } else {
        open.removeLast()
        w.endArray()
        Self.encodeTimeAndSite(top.time, top.site, to: &w)
        w.endObject()
      }
    }
  }

  private static func encodeTimeAndSite(_ time: Int64?, _ site: String?, to w: inout JSONWriter) {
    if let time {
      w.key("t")
      w.int(time)
    }
    if let site {
      w.key("site")
      w.string(site)
    }
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
    case .batch:
      // `Event.encode` writes batches.
      break
    }
  }
}

extension OutlineNode {
  /// Writes nodes as the protocol's NODE list: bare ids as strings, others as objects; with
  /// an explicit stack of open lists, never by recursion.
  static func encode(_ list: [OutlineNode], to w: inout JSONWriter) {
    w.beginArray()
    var open: [(nodes: [OutlineNode], next: Int)] = [(list, 0)]
    while let top = open.last {
      if top.next == top.nodes.count {
        open.removeLast()
        w.endArray()
        // A list of children ends its node's object too.
        if !open.isEmpty { w.endObject() }
        continue
      }
      let n = top.nodes[top.next]
      open[open.count - 1].next += 1
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
      let children = n.children
      if children.isEmpty {
        w.endObject()
      } else {
        w.key("children")
        w.beginArray()
        open.append((children, 0))
      }
    }
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
