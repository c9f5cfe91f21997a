// listtape-torture: a log writer meant to be killed, for the crash tests of ListTapeLog.
import Foundation
import ListTapeLog

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

let usage = """
  OVERVIEW: Append deterministic records to a ListTape log until killed (crash tests).

  USAGE: listtape-torture write <log> [--seed <n>] [--fsync never|interval|always]
                                       [--max-records <n>] [--format 1|2]
         listtape-torture fsize <log> <limit-bytes>

  SUBCOMMANDS:
    write   Open (recovering a torn tail), print "ready <events> [recovered <bytes>]",
            then append batches of records; after each batch is flushed (write() returned)
            print "ack <last seq>".
            Record N and the checkpoint after N depend only on the seed and N. After
            --max-records (default 5000) it waits to be killed. A new log is written in
            --format (default 1); in 2.0 a dictionary frame follows each checkpoint.
    fsize   Append under RLIMIT_FSIZE until a write fails; print "error <kind>" and then
            "then <kind>" for the next append (a poisoned writer must keep refusing).

  OPTIONS:
    -h, --help   Show this help.
  """

/// Seeded SplitMix64 step.
func mix(_ x: UInt64) -> UInt64 {
  var z = x &+ 0x9E37_79B9_7F4A_7C15
  z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
  z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
  return z ^ (z >> 31)
}

/// Record `seq` of the stream for `seed`: 5...40 bytes (the test computes the same).
func record(seed: UInt64, seq: UInt64) -> [UInt8] {
  var s = mix(seed ^ (seq &* 0x2545_F491_4F6C_DD1D))
  let n = 5 + Int(s % 36)
  var out = [UInt8]()
  out.reserveCapacity(n)
  for i in 0..<n {
    if i % 8 == 0 { s = mix(s) }
    out.append(UInt8(truncatingIfNeeded: s >> (8 * UInt64(i % 8))))
  }
  return out
}

/// The checkpoint after `seq` events: `seq` then 1...24 KiB of filler.
func checkpointBlob(seed: UInt64, seq: UInt64) -> [UInt8] {
  var out = withUnsafeBytes(of: seq.littleEndian) { Array($0) }
  let n = 1024 + Int(mix(seed ^ seq) % (23 * 1024))
  for i in 0..<n { out.append(UInt8(truncatingIfNeeded: (seq &+ UInt64(i / 7)) &* 131)) }
  return out
}

func say(_ line: String) {
  let bytes = Array((line + "\n").utf8)
  _ = bytes.withUnsafeBytes { write(1, $0.baseAddress, $0.count) }
}

func fail(_ message: String, code: Int32) -> Never {
  FileHandle.standardError.write(Data("Error: \(message)\n".utf8))
  if code == 64 {
    FileHandle.standardError.write(
      Data("Usage: listtape-torture write <log> [options]\nSee 'listtape-torture --help'\n".utf8))
  }
  exit(code)
}

func runWrite(_ args: [String]) {
  guard let path = args.first, !path.hasPrefix("-") else { fail("missing <log>", code: 64) }
  var seed: UInt64 = 1
  var maxRecords: UInt64 = 5000
  var options = LogWriterOptions()
  options.fsync = .never
  options.maxEventsBetweenCheckpoints = 900
  options.minCheckpointSpacingBytes = 0
  var i = 1
  while i < args.count {
    let flag = args[i]
    guard i + 1 < args.count else { fail("missing value for \(flag)", code: 64) }
    let value = args[i + 1]
    switch flag {
    case "--seed":
      guard let v = UInt64(value) else { fail("bad --seed \(value)", code: 64) }
      seed = v
    case "--max-records":
      guard let v = UInt64(value) else { fail("bad --max-records \(value)", code: 64) }
      maxRecords = v
    case "--format":
      guard let v = UInt16(value), v == 1 || v == 2 else { fail("bad --format \(value)", code: 64) }
      options.formatMajor = v
    case "--fsync":
      switch value {
      case "never": options.fsync = .never
      case "interval": options.fsync = .interval(seconds: 1)
      case "always": options.fsync = .always
      default: fail("bad --fsync \(value)", code: 64)
      }
    default: fail("unknown option \(flag)", code: 64)
    }
    i += 2
  }
  do {
    let w = try LogWriter.open(path: path, options: options)
    say("ready \(w.eventCount)" + (w.recovery.map { " recovered \($0.bytesCut)" } ?? ""))
    var batchSeed = mix(seed ^ w.eventCount)
    var written: UInt64 = 0
    while written < maxRecords {
      batchSeed = mix(batchSeed)
      let n = 1 + batchSeed % 200
      for _ in 0..<n {
        try w.append(record(seed: seed, seq: w.eventCount + 1))
        if w.checkpointDue {
          try w.appendCheckpoint(checkpointBlob(seed: seed, seq: w.eventCount))
          if w.formatMajor >= 2 {
            try w.appendDictionary(Array(checkpointBlob(seed: seed, seq: w.eventCount).prefix(64)))
          }
        }
      }
      written += n
      try w.flush()
      say("ack \(w.eventCount)")
    }
    while true { pause() }
  } catch {
    fail("\(error)", code: 74)
  }
}

func runFsize(_ args: [String]) {
  guard args.count == 2, let limit = UInt64(args[1]) else { fail("fsize <log> <limit>", code: 64) }
  signal(SIGXFSZ, SIG_IGN)
  var lim = rlimit()
  lim.rlim_cur = rlim_t(limit)
  lim.rlim_max = rlim_t.max
  #if canImport(Glibc)
  _ = setrlimit(__rlimit_resource_t(RLIMIT_FSIZE.rawValue), &lim)
  #else
  _ = setrlimit(RLIMIT_FSIZE, &lim)
  #endif
  var options = LogWriterOptions()
  options.fsync = .never
  options.maxEventsPerFrame = 50
  do {
    let w = try LogWriter.open(path: args[0], options: options)
    var seq: UInt64 = 0
    while true {
      seq += 1
      do {
        try w.append(record(seed: 9, seq: seq))
      } catch {
        say("error \(error.kind) at \(seq)")
        do {
          try w.append([1])
          say("then ok")
        } catch {
          say("then \(error.kind)")
        }
        exit(0)
      }
    }
  } catch {
    fail("\(error)", code: 74)
  }
}

let arguments = Array(CommandLine.arguments.dropFirst())
switch arguments.first {
case "write": runWrite(Array(arguments.dropFirst()))
case "fsize": runFsize(Array(arguments.dropFirst()))
case "-h", "--help", "help": print(usage)
case let other?: fail("unknown subcommand '\(other)'", code: 64)
case nil: fail("missing subcommand", code: 64)
}
