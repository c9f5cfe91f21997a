// swift-tools-version: 6.0
import PackageDescription

let package = Package(
  name: "ListTape",
  platforms: [.macOS(.v13), .iOS(.v16)],
  products: [
    .library(name: "ListTapeModel", targets: ["ListTapeModel"]),
    .library(name: "ListTapeLog", targets: ["ListTapeLog"]),
    .library(name: "ListTapeReplay", targets: ["ListTapeReplay"]),
    .executable(name: "listtape", targets: ["listtape"]),
    .executable(name: "listtape-bench", targets: ["listtape-bench"]),
  ],
  targets: [
    .systemLibrary(
      name: "CZlib",
      pkgConfig: "zlib",
      providers: [.apt(["zlib1g-dev"]), .brew(["zlib"])]
    ),
    .target(name: "CListTapeHints"),
    .target(name: "ListTapeJSON"),
    .target(name: "ListTapeModel", dependencies: ["ListTapeJSON", "CListTapeHints"]),
    .target(name: "ListTapeLog", dependencies: ["CZlib"]),
    // Deterministic sessions for the bench, the tests and `listtape generate`; no product.
    .target(name: "ListTapeSamples", dependencies: ["ListTapeModel"]),
    .target(
      name: "ListTapeReplay",
      dependencies: ["ListTapeModel", "ListTapeLog", "ListTapeJSON"]
    ),
    .executableTarget(
      name: "listtape",
      dependencies: [
        "ListTapeReplay", "ListTapeModel", "ListTapeLog", "ListTapeJSON", "ListTapeSamples",
      ],
      path: "Tools/listtape"
    ),
    .executableTarget(
      name: "listtape-bench",
      dependencies: [
        "ListTapeReplay", "ListTapeModel", "ListTapeLog", "ListTapeJSON", "ListTapeSamples",
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
      dependencies: ["ListTapeReplay", "ListTapeModel"],
      path: "Tools/listtape-app-sim"
    ),
    // The JSON and log tests take only SplitMix64 from the model.
    .testTarget(name: "ListTapeJSONTests", dependencies: ["ListTapeJSON", "ListTapeModel"]),
    .testTarget(name: "ListTapeModelTests", dependencies: ["ListTapeModel", "ListTapeJSON"]),
    .testTarget(
      name: "ListTapeLogTests", dependencies: ["ListTapeLog", "ListTapeModel", "listtape-torture"]),
    .testTarget(
      name: "ListTapeReplayTests",
      dependencies: [
        "ListTapeReplay", "ListTapeModel", "ListTapeLog", "ListTapeJSON", "ListTapeSamples",
        "listtape-app-sim",
      ]
    ),
    .testTarget(
      name: "ListTapeCLITests",
      dependencies: ["listtape", "ListTapeModel", "ListTapeJSON", "ListTapeLog"]
    ),
  ],
  swiftLanguageModes: [.v6]
)
