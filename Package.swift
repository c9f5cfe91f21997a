// swift-tools-version: 6.0
import PackageDescription

// zlib: every Apple SDK ships libz, which the module map links as "z". pkg-config (or a
// Homebrew provider) could hand an iOS build macOS headers or a Homebrew dylib, so it is
// asked only on Linux (the manifest is evaluated on the host: a Mac never asks it).
#if os(Linux)
let zlib = Target.systemLibrary(
  name: "CListTapeZlib", pkgConfig: "zlib", providers: [.apt(["zlib1g-dev"])])
#else
let zlib = Target.systemLibrary(name: "CListTapeZlib")
#endif

let package = Package(
  name: "ListTape",
  platforms: [.macOS(.v13), .iOS(.v16)],
  products: [
    .library(name: "ListTapeModel", targets: ["ListTapeModel"]),
    .library(name: "ListTapeStore", targets: ["ListTapeStore"]),
    .library(name: "ListTapeRead", targets: ["ListTapeRead"]),
    .library(name: "ListTapeInvestigate", targets: ["ListTapeInvestigate"]),
    .executable(name: "listtape", targets: ["listtape"]),
    .executable(name: "listtape-bench", targets: ["listtape-bench"]),
  ],
  targets: [
    zlib,
    .target(name: "ListTapeJSON"),
    // Cache hints for the fold (a header of inline functions; the viewer's wasm build goes
    // without them).
    .target(name: "CListTapePrefetch"),
    .target(name: "ListTapeModel", dependencies: ["ListTapeJSON", "CListTapePrefetch"]),
    // Deflate writers of our own (Huffman codes alone, one-probe matching), faster than
    // zlib's levels for what the index and the Parquet export compress; any inflater reads
    // their output.
    .target(name: "ListTapeDeflate", dependencies: ["CListTapeZlib", "CListTapeCRC"]),
    // CRC-32 by carry-less multiplication where the processor has it (x86-64), for the log's
    // checks of every frame and the export's gzip pages; elsewhere zlib's.
    .target(name: "CListTapeCRC"),
    .target(
      name: "ListTapeLog", dependencies: ["CListTapeZlib", "ListTapeDeflate"]),
    // Deterministic sessions and the seeded generator (SplitMix64) for the bench, the tests
    // and `listtape generate`; no product.
    .target(name: "ListTapeSamples", dependencies: ["ListTapeModel"]),
    // What the command-line tools set for their own process (allocator tuning); no product,
    // so nothing an app links changes the process.
    .target(name: "ListTapeToolSupport"),
    // What an app links to record: the store, its differ, the recorder.
    .target(name: "ListTapeStore", dependencies: ["ListTapeModel", "ListTapeLog"]),
    // Reading a log back: the timeline (one fold of the log's records, seeks, the index
    // file, damaged logs), for apps that read logs and for the tools.
    .target(name: "ListTapeRead", dependencies: ["ListTapeStore", "ListTapeModel", "ListTapeLog"]),
    // The investigation tools: bisect, find, diff, diverge, history, cut, export, verify.
    .target(
      name: "ListTapeInvestigate",
      dependencies: ["ListTapeRead", "ListTapeStore", "ListTapeModel", "ListTapeLog"]),
    // Fleet export (issue 24): a Parquet writer of our own (package API only), and the
    // events and sessions tables of many logs written with it.
    .target(name: "ListTapeParquet", dependencies: ["ListTapeDeflate"]),
    .target(
      name: "ListTapeFleet",
      dependencies: [
        "ListTapeParquet", "ListTapeInvestigate", "ListTapeRead", "ListTapeStore", "ListTapeModel",
      ]),
    .executableTarget(
      name: "listtape",
      dependencies: [
        "ListTapeStore", "ListTapeRead", "ListTapeInvestigate", "ListTapeModel", "ListTapeLog",
        "ListTapeJSON", "ListTapeSamples", "ListTapeToolSupport", "ListTapeFleet",
        "ListTapeParquet",
      ],
      path: "Tools/listtape",
      // A release build on Linux links the Swift runtime and Foundation in: a one-shot
      // command starts without resolving a dozen shared libraries (docs/performance.md).
      swiftSettings: [
        .unsafeFlags(["-static-stdlib"], .when(platforms: [.linux], configuration: .release))
      ],
      linkerSettings: [
        .unsafeFlags(["-static-stdlib"], .when(platforms: [.linux], configuration: .release))
      ]
    ),
    .executableTarget(
      name: "listtape-bench",
      dependencies: [
        "ListTapeStore", "ListTapeRead", "ListTapeInvestigate", "ListTapeModel", "ListTapeLog",
        "ListTapeJSON", "ListTapeSamples", "ListTapeToolSupport", "ListTapeFleet",
        "ListTapeDeflate", "CListTapeZlib",
      ],
      path: "Tools/listtape-bench"
    ),
    .executableTarget(
      name: "listtape-torture",
      dependencies: ["ListTapeLog"],
      path: "Tools/listtape-torture"
    ),
    .executableTarget(
      name: "listtape-app-sim",
      dependencies: ["ListTapeStore", "ListTapeRead", "ListTapeModel", "ListTapeSamples"],
      path: "Tools/listtape-app-sim"
    ),
    // The JSON and log tests take only SplitMix64 from the samples.
    .testTarget(name: "ListTapeJSONTests", dependencies: ["ListTapeJSON", "ListTapeSamples"]),
    .testTarget(
      name: "ListTapeModelTests",
      dependencies: ["ListTapeModel", "ListTapeJSON", "ListTapeSamples"]),
    .testTarget(
      name: "ListTapeLogTests",
      dependencies: ["ListTapeLog", "ListTapeDeflate", "ListTapeSamples", "listtape-torture"]),
    .testTarget(
      name: "ListTapeStoreTests",
      dependencies: [
        "ListTapeStore", "ListTapeRead", "ListTapeInvestigate", "ListTapeModel", "ListTapeLog",
        "ListTapeSamples", "listtape-app-sim",
      ]
    ),
    .testTarget(
      name: "ListTapeInvestigateTests",
      dependencies: [
        "ListTapeInvestigate", "ListTapeRead", "ListTapeStore", "ListTapeModel", "ListTapeSamples",
      ]
    ),
    .testTarget(
      name: "ListTapeDeflateTests", dependencies: ["ListTapeDeflate", "ListTapeSamples"]),
    .testTarget(
      name: "ListTapeParquetTests",
      dependencies: ["ListTapeParquet", "ListTapeModel", "ListTapeSamples"]),
    .testTarget(
      name: "ListTapeCLITests",
      dependencies: [
        "listtape", "ListTapeModel", "ListTapeJSON", "ListTapeLog", "ListTapeSamples",
        "ListTapeStore", "ListTapeRead",
      ]
    ),
  ],
  swiftLanguageModes: [.v6]
)
