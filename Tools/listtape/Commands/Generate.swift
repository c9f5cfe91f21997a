import ListTapeInvestigate
import ListTapeJSON
import ListTapeModel
import ListTapeSamples
import ListTapeStore

/// `listtape generate`: a deterministic large session as JSON Lines, for trying scale.
enum GenerateCommand: Command {
  static let spec = CommandSpec(
    name: "generate",
    abstract: "Write a deterministic large session as JSON Lines to standard output.",
    discussion: """
      The same --events and --seed always give the same lines. Pipe it into record: \
      listtape generate --events 1000000 | listtape record big.ltape
      """,
    options: [
      OptionSpec(name: "events", value: "n", help: "How many events.", defaultText: "1000000"),
      OptionSpec(name: "seed", value: "s", help: "The random seed.", defaultText: "1"),
      OptionSpec(
        name: "outline", value: "items",
        help: "Open with an outline of this many items built by appendItems (then edit it)."),
      OptionSpec(
        name: "shape", value: "short|path|uuid",
        help: "How item ids are spelled in the outline and later inserts.", defaultText: "short"),
      OptionSpec(
        name: "max-items", value: "n", help: "How large the list may grow.",
        defaultText: "100000"),
    ])

  static func run(_ invocation: Invocation) throws(CLIError) -> Int32 {
    let count = try invocation.int("events", in: 1...Int.max) ?? 1_000_000
    let seedText = invocation.value("seed") ?? "1"
    guard let seed = UInt64(seedText) else {
      throw invocation.usageError(
        "The value '\(seedText)' is invalid for '--seed <s>'; expected an unsigned integer")
    }
    let shapeText = invocation.value("shape") ?? "short"
    guard let shape = IdShape(rawValue: shapeText) else {
      throw invocation.usageError(
        "The value '\(shapeText)' is invalid for '--shape'; expected short, path or uuid")
    }
    let outline = try invocation.int("outline", in: 1...10_000_000)
    let maxItems = try invocation.int("max-items", in: 50...100_000_000) ?? 100_000
    if outline == nil && invocation.value("shape") != nil {
      throw invocation.usageError("--shape goes with --outline")
    }
    let opening: SampleSession.Opening =
      outline.map { .outline(items: $0, shape: shape) } ?? .seedApps
    var w = JSONWriter(reservingCapacity: 1 << 17)
    let out = invocation.out
    SampleSession.generate(events: count, seed: seed, maxItems: maxItems, opening: opening) {
      event in
      event.encode(to: &w)
      w.endLine()
      if w.bytes.count >= 1 << 16 {
        out.bytes(w.bytes)
        w.reset()
      }
    }
    out.bytes(w.bytes)
    return ExitCode.success
  }
}
