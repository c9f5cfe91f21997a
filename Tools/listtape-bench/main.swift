import Foundation

/// listtape-bench: the figures the issues name, measured; `--quick` for a smoke run.
let args = Array(CommandLine.arguments.dropFirst())
let quick = args.contains("--quick")
let selected = Set(args.filter { !$0.hasPrefix("--") })
func wants(_ name: String) -> Bool { selected.isEmpty || selected.contains(name) }

print("# listtape-bench (\(quick ? "quick" : "full") run)\n")
if wants("model") { ModelBench.run(quick: quick) }
