import ListTapeInvestigate
import ListTapeJSON
import ListTapeModel
import ListTapeSamples
import ListTapeStore

/// `listtape generate`: a deterministic large session as JSON Lines, for trying scale.
enum GenerateCommand: Command {
  struct Arguments: ParsableArguments {
    var events = 1_000_000
    var seed: UInt64 = 1
    var outline: Int?
    var shape: IdShape?
    var maxItems = 100_000
    var sites: Int?
    var siteModel: SampleSession.Sites.Model?
    var output: String?
    var force = false
  }

  static let spec = CommandSpec<Arguments>(
    name: "generate",
    abstract: "Write a deterministic large session as JSON Lines to standard output.",
    discussion: """
      The same --events and --seed always give the same lines. Pipe it into record: \
      listtape generate --events 1000000 | listtape record big.ltape. -o writes them to a \
      file instead (an existing one only with --force).
      """,
    options: [
      .option(\.events, "events", value: "n", help: "How many events.", valid: 1...Int.max),
      .option(\.seed, "seed", value: "s", help: "The random seed."),
      .option(
        \.outline, "outline", value: "items",
        help: "Open with an outline of this many items built by appendItems (then edit it).",
        valid: 1...10_000_000),
      .option(
        \.shape, "shape", value: "shape",
        help: "How item ids are spelled in the outline and later inserts (with --outline).",
        defaultText: IdShape.short.rawValue),
      .option(
        \.maxItems, "max-items", value: "n", help: "How large the list may grow.",
        valid: 50...100_000_000),
      .option(
        \.sites, "sites", value: "n",
        help: "Give every event a site drawn from n (the same events otherwise).",
        valid: 1...1_000_000),
      .option(
        \.siteModel, "site-model", value: "model",
        help: "How sites are drawn (with --sites): screens (each kind of edit made by one "
          + "function per screen, the person changing screens now and then) or uniform.",
        defaultText: SampleSession.Sites.Model.screens.rawValue),
      .output(\.output, value: "file", help: "Write the lines here ('-': standard output)."),
      .force(\.force),
    ])

  static func run(_ arguments: Arguments, _ io: IO) throws(CLIError) -> Int32 {
    if arguments.outline == nil && arguments.shape != nil {
      throw usageError("--shape goes with --outline")
    }
    if arguments.sites == nil && arguments.siteModel != nil {
      throw usageError("--site-model goes with --sites")
    }
    let sites = arguments.sites.map {
      SampleSession.Sites(count: $0, model: arguments.siteModel ?? .screens)
    }
    let opening: SampleSession.Opening =
      arguments.outline.map { .outline(items: $0, shape: arguments.shape ?? .short) } ?? .seedApps
    let output = try OutputFile.open(
      arguments.output ?? "-", force: arguments.force, content: .text, for: self)
    var w = JSONWriter(reservingCapacity: 1 << 17)
    // A write error stops the generator at once (throwing out of it): nothing more is made.
    do {
      try SampleSession.generate(
        events: arguments.events, seed: arguments.seed, maxItems: arguments.maxItems,
        opening: opening, sites: sites
      ) { event in
        event.encode(to: &w)
        w.endLine()
        if w.bytes.count >= 1 << 16 {
          try output.write(w.bytes)
          w.reset()
        }
      }
    } catch let error as CLIError {
      throw error
    } catch {
      throw .failure("\(error)", code: ExitCode.io)
    }
    try output.write(w.bytes)
    try output.commit()
    return ExitCode.success
  }
}

extension IdShape: ChoiceValue {}
extension SampleSession.Sites.Model: ChoiceValue {}
