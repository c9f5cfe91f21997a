import Foundation
import ListTapeInvestigate
import ListTapeStore
import ListTapeToolSupport

/// listtape-bench: the figures the issues name, measured. Pass `--quick` for a smoke run,
/// and names (model, log, replay, store, shapes) to run only some groups.
// Figures are for the tools as they run: with the allocator settings the CLI makes.
AllocatorTuning.keepFreedMemoryForReuse()
let args = Array(CommandLine.arguments.dropFirst())
if args.count == 2 && args[0] == "__replay-memory" {
  ReplayBench.replayMemory(args[1])
} else if args.count == 2 && args[0] == "__state-memory" {
  ReplayBench.stateMemory(args[1])
} else if args.count == 2 && args[0] == "__profile" {
  ProfileMode.run(args[1])
} else if (3...4).contains(args.count) && args[0] == "__fold" {
  ModelBench.foldOnly(
    items: Int(args[1]) ?? 1_000, locality: args[2] == "locality",
    hinted: args.count == 4 && args[3] == "hinted")
} else if args.count == 2 && args[0] == "__checkpoint-parts" {
  try CheckpointParts.run(args[1])
} else if args.count == 2 && args[0] == "__decoded-fold" {
  try DecodedFold.run(args[1])
} else if args.count == 2 && args[0] == "__fold-split" {
  try FoldSplit.run(args[1])
} else if (2...3).contains(args.count) && args[0] == "__absorb-split" {
  try AbsorbSplit.run(args[1], through: args.count == 3 ? Int(args[2]) : nil)
} else if args.count == 2 && args[0] == "__decode-only" {
  try DecodeOnly.run(args[1])
} else if args.count == 2 && args[0] == "__diff" {
  try InvestigateBench.diffParts(args[1])
} else if args.count == 3 && args[0] == "__find-memory" {
  InvestigateBench.findMemory(args[1], Int(args[2]) ?? 0)
} else if (2...3).contains(args.count) && args[0] == "__build" {
  ShapesBench.buildOnly(args[1], runs: args.count == 3 ? Int(args[2]) ?? 5 : 5)
} else if args.count == 3 && args[0] == "__diff" {
  try ShapesBench.diffOnly(args[1], at: Int(args[2]) ?? 1)
} else if (2...3).contains(args.count) && args[0] == "__index-ratio" {
  try IndexRatio.run(args[1], spacing: args.count == 3 ? Int(args[2]) : nil)
} else if (2...3).contains(args.count) && args[0] == "__state-load" {
  try SeekParts.loop(args[1], runs: args.count == 3 ? Int(args[2]) ?? 200 : 200)
} else if args.count == 2 && args[0] == "__encode-parts" {
  try EncodeParts.run(args[1])
} else if args.count == 3 && args[0] == "__image" {
  try SeekParts.image(args[1], to: args[2])
} else if (2...3).contains(args.count) && args[0] == "__deltas" {
  try DeltaShare.run(args[1], spacing: args.count == 3 ? Int(args[2]) ?? 49_152 : 49_152)
} else if (2...3).contains(args.count) && args[0] == "__noindex-parts" {
  try NoIndexParts.run(args[1], at: args.count == 3 ? Int(args[2]) : nil)
} else if args.count >= 2 && args[0] == "__deflate" {
  try DeflateBench.run(args[1], cuts: args.dropFirst(2).compactMap { Int($0) })
} else if (2...3).contains(args.count) && args[0] == "__seek-parts" {
  try SeekParts.run(args[1], samples: args.count == 3 ? Int(args[2]) ?? 21 : 21)
} else if args.count == 3 && args[0] == "__json" {
  try JSONParts.run(args[1], at: Int(args[2]) ?? 1)
} else if args.count == 2 && args[0] == "__fuzz-seeds" {
  try FuzzSeeds.write(args[1])
} else if args.count == 1 && args[0] == "__sizes" {
  ProfileMode.sizes()
} else if args.contains("--help") || args.contains("-h") {
  print(
    """
    OVERVIEW: Measures the figures ListTape promises (docs/performance.md).

    USAGE: listtape-bench [model] [log] [replay] [store] [investigate] [shapes] [format]
                          [fleet] [time] [time10m] [recovery] [sites] [--quick]

    OPTIONS:
      --quick   Smaller sizes, for a quick look (the figures are for full runs).

    time (issues 21, 28 and 29, through the CLI, on 1M-event sessions of three id shapes)
    and time10m (the 10M-event UUID log, or the one LISTTAPE_10M names) run only when
    named, and measure the previous release's binary side by side when LISTTAPE_BASE
    names it.
    """)
} else {
  let quick = args.contains("--quick")
  let selected = Set(args.filter { !$0.hasPrefix("--") })
  func wants(_ name: String) -> Bool { selected.isEmpty || selected.contains(name) }
  print(
    "# listtape-bench (\(quick ? "quick" : "full") run, \(ProcessInfo.processInfo.activeProcessorCount) cores)\n"
  )
  if wants("model") { ModelBench.run(quick: quick) }
  if wants("log") { LogBench.run() }
  if wants("replay") { ReplayBench.run(quick: quick) }
  if wants("store") { StoreBench.run(quick: quick) }
  if wants("investigate") { InvestigateBench.run(quick: quick) }
  if wants("shapes") { ShapesBench.run(quick: quick) }
  if wants("format") { FormatBench.run(quick: quick) }
  if wants("fleet") { FleetBench.run(quick: quick) }
  if selected.contains("time") { TimeBench.run(quick: quick) }
  if selected.contains("time10m") { TimeBench.run10M() }
  if wants("recovery") { RecoveryBench.run(quick: quick) }
  if wants("sites") { SiteBench.run(quick: quick) }
}
