import Testing

@testable import ListTapeModel

/// A compact state's load reads its structure, its entries and its text in passes side by
/// side; a state with two faults is refused for the first in item order, and at one item
/// in the builder's order of checks (flags, entry, text, level, duplicate), whichever pass
/// met it and whether the passes ran on one thread or two.
@Suite struct CompactLoadOrderTests {
  /// One fault of an item.
  enum Fault {
    case badFlags, badEntry, badText, skippedLevel, duplicate
  }

  /// A state of `count` root items of section "S", each titled "t" (and with `fields` as
  /// written, by item), with `faults` (item, kind) written into its columns, loaded: the
  /// state, or the error's message.
  func read(count: Int, _ faults: [(Int, Fault)], fields: [Int: [(String, String)]] = [:])
    throws -> Result<ListState, CodecError>
  {
    let (bytes, dictionary) = encode(count: count, faults, fields: fields)
    return Self.outcome {
      try bytes.withUnsafeBytes {
        try ListState(compact: $0, ids: dictionary, aliases: DefinitionAliases())
      }
    }
  }

  /// The state `load` makes, or its error.
  static func outcome(_ load: () throws -> ListState) -> Result<ListState, CodecError> {
    do {
      return .success(try load())
    } catch let error as CodecError {
      return .failure(error)
    } catch {
      return .failure(CodecError("not a codec error: \(error)", offset: -1))
    }
  }

  /// The compact state `read` loads, with its dictionary.
  func encode(count: Int, _ faults: [(Int, Fault)], fields: [Int: [(String, String)]] = [:])
    -> ([UInt8], IdSpace)
  {
    var dictionary = IdSpace()
    dictionary.append("S")
    for i in 0..<count { dictionary.append("i\(i)") }
    var levels = [Int](repeating: 0, count: count)
    var flags = [UInt8](repeating: ListState.ItemFlag.title, count: count)
    var entries = (0..<count).map { $0 + 1 }
    var titles = [[UInt8]](repeating: Array("t".utf8), count: count)
    var fieldBytes = [[UInt8]](repeating: [], count: count)
    for (i, f) in fields {
      flags[i] |= ListState.ItemFlag.fields
      var sink = ByteSink()
      sink.count(f.count)
      for (k, v) in f {
        sink.string(k)
        sink.string(v)
      }
      fieldBytes[i] = sink.bytes
    }
    for (i, fault) in faults {
      switch fault {
      case .badFlags: flags[i] = 0x80
      case .badEntry: entries[i] = count + 5
      case .badText: titles[i] = [0xFF]
      case .skippedLevel: levels[i] = 2
      case .duplicate: entries[i] = entries[i - 1]
      }
    }
    var sections = ByteSink()
    sections.count(0)
    sections.count(count)
    var levelColumn = ByteSink()
    for l in levels { levelColumn.count(l) }
    var refs = ByteSink()
    var previous = -1
    for e in entries {
      refs.zigzag(Int64(e - previous - 1))
      previous = e
    }
    var strings = ByteSink()
    for (i, t) in titles.enumerated() {
      strings.count(t.count)
      strings.bytes.append(contentsOf: t + fieldBytes[i])
    }
    let bytes = compactStateBytes(
      dictionaryCount: dictionary.count, sections: 1,
      columns: [sections.bytes, levelColumn.bytes, flags, refs.bytes, strings.bytes])
    return (bytes, dictionary)
  }

  /// The message of the error `read` met, or nil when the state loads.
  func load(count: Int, _ faults: [(Int, Fault)]) throws -> String? {
    switch try read(count: count, faults) {
    case .success(let state):
      #expect(state.numberOfAllItems == count)
      return nil
    case .failure(let error): return error.message
    }
  }

  /// Small states load on one thread; from 16,384 items the passes run on two.
  @Test(arguments: [40, 20_000])
  func theFirstFaultInItemOrderIsReported(count: Int) throws {
    #expect(try load(count: count, []) == nil)
    let dup = "duplicate item"
    let skip = "skips a level"
    let text = "invalid UTF-8"
    let entry = "entry \(count + 5) of"
    let cases: [([(Int, Fault)], String)] = [
      ([(3, .skippedLevel), (5, .duplicate)], skip),
      ([(3, .duplicate), (5, .skippedLevel)], dup),
      ([(4, .skippedLevel), (4, .duplicate)], skip),
      ([(4, .badText), (4, .duplicate)], text),
      ([(4, .badText), (4, .skippedLevel)], text),
      ([(4, .badEntry), (4, .badText)], entry),
      ([(4, .badFlags), (4, .badEntry)], "bad item flags"),
      ([(6, .badText), (4, .duplicate)], dup),
      ([(3, .badText), (4, .duplicate)], text),
      ([(7, .badEntry), (5, .skippedLevel)], skip),
      ([(5, .badEntry), (7, .skippedLevel)], entry),
      ([(count - 1, .duplicate)], "duplicate item \"i\(count - 2)\""),
      ([(count - 1, .badText)], text),
    ]
    for (faults, expected) in cases {
      let message = try load(count: count, faults)
      #expect(message?.contains(expected) == true, "\(faults): \(message ?? "loaded")")
    }
  }

  /// Fields written out of key order with a key twice are kept in canonical form (the
  /// later value wins), and the items after them keep their own text.
  @Test(arguments: [40, 20_000])
  func fieldsOutOfOrderAreMadeCanonical(count: Int) throws {
    let state = try read(
      count: count, [],
      fields: [
        3: [("b", "2"), ("a", "1"), ("b", "3")], 5: [("k", "v")], 7: [("a", "1"), ("ab", "2")],
        8: [("ab", "1"), ("a", "2")], 9: [("a", "1"), ("a", "2")], 10: [("é", "1"), ("a", "2")],
      ]
    ).get()
    #expect(state.fields(of: "i7") == ["a": "1", "ab": "2"])
    #expect(state.fields(of: "i8") == ["a": "2", "ab": "1"])
    #expect(state.fields(of: "i9") == ["a": "2"])
    #expect(state.fields(of: "i10") == ["a": "2", "é": "1"])
    // Whatever path each item took, equal contents make equal states.
    let canonical = try read(
      count: count, [],
      fields: [
        3: [("a", "1"), ("b", "3")], 5: [("k", "v")], 7: [("a", "1"), ("ab", "2")],
        8: [("a", "2"), ("ab", "1")], 9: [("a", "2")], 10: [("a", "2"), ("é", "1")],
      ]
    ).get()
    #expect(state == canonical)
    #expect(state.fields(of: "i3") == ["a": "1", "b": "3"])
    #expect(state.title(of: "i3") == "t")
    #expect(state.fields(of: "i5") == ["k": "v"])
    #expect(state.title(of: "i4") == "t" && state.fields(of: "i4") == nil)
    #expect(state.title(of: "i\(count - 1)") == "t")
  }

  /// A state read in two parts (the bytes before `split`, then the rest handed over as a
  /// column still to come) loads as it does whole, fault for fault, wherever the parts
  /// split: at the last column's start (read side by side), or anywhere else (joined).
  @Test(arguments: [40, 20_000])
  func aStateInTwoPartsReadsAsItDoesWhole(count: Int) throws {
    let faults: [[(Int, Fault)]] = [
      [], [(4, .badText)], [(5, .badEntry)], [(count - 1, .duplicate)], [(3, .skippedLevel)],
      [(4, .badFlags)], [(count - 2, .badText), (count - 1, .badEntry)],
    ]
    for f in faults {
      let (bytes, ids) = encode(count: count, f)
      let whole = read(bytes, split: nil, ids)
      // The strings column is the last: one byte of length and a title byte per item.
      let last = bytes.count - 2 * count
      for split in [last, last - 1, last + 1, 3, 0, bytes.count] {
        let two = read(bytes, split: split, ids)
        switch (whole, two) {
        case (.success(let a), .success(let b)): #expect(a == b, "\(f), split at \(split)")
        case (.failure(let a), .failure(let b)):
          #expect(a == b, "\(f), split at \(split): \(a) against \(b)")
        default: Issue.record("\(f), split at \(split): \(whole) against \(two)")
        }
      }
    }
  }

  /// A last column that never comes, or comes short, is an error, not a crash or a wait.
  @Test(arguments: [40, 20_000])
  func aLastColumnThatDoesNotComeIsRefused(count: Int) throws {
    let (bytes, ids) = encode(count: count, [])
    let last = bytes.count - 2 * count
    for column in [nil, bytes[last..<bytes.count - 1]] as [ArraySlice<UInt8>?] {
      let result = bytes[..<last].withUnsafeBytes { head in
        Self.outcome {
          try ListState(
            compact: head,
            strings: CompactStrings(count: 2 * count) {
              column.map { c in c.withUnsafeBytes { UnsafeRawBufferPointer($0) } }
            }, ids: CompactIDs(ids), aliases: DefinitionAliases())
        }
      }
      guard case .failure(let error) = result else {
        Issue.record("loaded without its last column")
        continue
      }
      #expect(error.message.contains("did not inflate"), "\(error)")
    }
  }

  /// `bytes` loaded whole (`split` nil) or in two parts cut at `split`.
  func read(_ bytes: [UInt8], split: Int?, _ ids: IdSpace) -> Result<ListState, CodecError> {
    guard let split else {
      return Self.outcome {
        try bytes.withUnsafeBytes {
          try ListState(compact: $0, ids: ids, aliases: DefinitionAliases())
        }
      }
    }
    let tail = Array(bytes[split...])
    return tail.withUnsafeBytes { tail in
      bytes[..<split].withUnsafeBytes { head in
        Self.outcome {
          try ListState(
            compact: head, strings: CompactStrings(count: tail.count) { tail },
            ids: CompactIDs(ids), aliases: DefinitionAliases())
        }
      }
    }
  }
}
