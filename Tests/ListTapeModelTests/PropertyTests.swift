import Testing

@testable import ListTapeModel

/// Seeded random sessions, folded four ways (directly, through JSON, through the binary
/// codec, and by the naive reference), with the invariants checked after every event.
@Suite struct PropertyTests {
  static let eventsPerSeed = 10_000
  /// Full query comparison every this many events (and at every fault and at the end).
  static let checkEvery = 20

  @Test(arguments: [1, 2, 3, 0xDEAD_BEEF] as [UInt64])
  func randomSessionsAgree(seed: UInt64) throws {
    try Self.agree(seed: seed, deep: false, events: Self.eventsPerSeed)
  }

  /// Sessions whose chains of nested items reach the nesting limit: appends, inserts and
  /// replacements past level 255 fault, and so do moves that would take a subtree there.
  @Test(arguments: [4, 5] as [UInt64])
  func sessionsAtTheNestingLimitAgree(seed: UInt64) throws {
    try Self.agree(seed: seed, deep: true, events: 2_000)
  }

  static func agree(seed: UInt64, deep: Bool, events: Int) throws {
    var gen = EventGenerator(seed: seed, deep: deep)
    var model = ListState()
    var reference = Reference()
    var viaJSON = ListState()
    var viaBinary = ListState()
    var encoder = EventEncoder()
    var decoder = EventDecoder()
    var faults = 0
    var batches = 0
    var maxItems = 0
    var tooDeep = 0
    var deepest = 0

    for n in 1...events {
      let event = gen.event(reference)
      if case .batch = event.operation { batches += 1 }

      let fromJSON = try Event(jsonLine: event.jsonLine)
      try #require(fromJSON == event, "event \(n): JSON round trip \(event.jsonLine)")
      let record = try encoder.encode(event)
      let fromBinary = try decoder.decode(record, seq: encoder.nextSeq - 1)
      try #require(fromBinary == event, "event \(n): binary round trip")

      let before = model
      let modelFault = Self.fault { () throws(ListFault) in try model.apply(event) }
      let referenceFault = Self.fault { () throws(ListFault) in try reference.apply(event) }
      let jsonFault = Self.fault { () throws(ListFault) in try viaJSON.apply(fromJSON) }
      let binaryFault = Self.fault { () throws(ListFault) in try viaBinary.apply(fromBinary) }
      try #require(
        modelFault == referenceFault,
        "event \(n) \(event.jsonLine): model \(String(describing: modelFault)), reference \(String(describing: referenceFault))"
      )
      try #require(jsonFault == modelFault && binaryFault == modelFault, "event \(n)")

      let problems = invariantViolations(model)
      try #require(problems.isEmpty, "event \(n) \(event.jsonLine): \(problems)")

      if case .tooDeep = modelFault { tooDeep += 1 }
      if case .inBatch(_, _, .tooDeep) = modelFault { tooDeep += 1 }
      if modelFault != nil {
        faults += 1
        try #require(model == before, "event \(n): a fault changed the state")
        try #require(model.encoded() == before.encoded(), "event \(n): a fault changed the bytes")
      }
      maxItems = max(maxItems, model.numberOfAllItems)
      if deep {
        deepest = max(deepest, reference.sections.flatMap { $0.items.map(\.level) }.max() ?? 0)
      }
      if modelFault != nil || n % Self.checkEvery == 0 || n == events {
        try Self.compareAll(model, reference, viaJSON, viaBinary, event: n)
      }
    }
    // The run must have exercised what it claims to.
    #expect(faults > events / 20)
    #expect(batches > events / 25)
    #expect(maxItems > 40)
    if deep {
      #expect(tooDeep > 10)
      #expect(deepest == 255)
    }
  }

  static func fault(_ body: () throws(ListFault) -> Void) -> ListFault? {
    do {
      try body()
      return nil
    } catch {
      return error
    }
  }

  static func compareAll(
    _ model: ListState, _ reference: Reference, _ viaJSON: ListState, _ viaBinary: ListState,
    event n: Int
  ) throws {
    let diff = disagreements(model, reference, event: n)
    try #require(diff.isEmpty, "event \(n): \(diff)")
    let snap = snapshotDisagreements(model, reference)
    try #require(snap.isEmpty, "event \(n): \(snap)")
    try #require(viaJSON == model, "event \(n): JSON replay differs")
    try #require(viaBinary == model, "event \(n): binary replay differs")
    let restored = try ListState(encoded: model.encoded())
    try #require(restored == model, "event \(n): state codec round trip differs")
    try #require(restored.stateHash == model.stateHash)
    let restoredProblems = invariantViolations(restored)
    try #require(restoredProblems.isEmpty, "event \(n): decoded state: \(restoredProblems)")
  }
}
