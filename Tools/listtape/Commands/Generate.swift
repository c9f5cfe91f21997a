import ListTapeJSON
import ListTapeModel
import ListTapeReplay

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
    ])

  static func run(_ invocation: Invocation) throws(CLIError) -> Int32 {
    let count = try invocation.int("events", in: 1...Int.max) ?? 1_000_000
    let seedText = invocation.value("seed") ?? "1"
    guard let seed = UInt64(seedText) else {
      throw invocation.usageError(
        "The value '\(seedText)' is invalid for '--seed <s>'; expected an unsigned integer")
    }
    var w = JSONWriter(reservingCapacity: 1 << 17)
    let out = invocation.out
    SampleSession.generate(events: count, seed: seed) { event in
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
