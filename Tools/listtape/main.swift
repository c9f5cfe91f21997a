import Foundation
import ListTapeInvestigate
import ListTapeStore
import ListTapeToolSupport

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

AllocatorTuning.keepFreedMemoryForReuse()
Terminal.widenOutputPipe()
let code = CLI.main(
  Array(CommandLine.arguments.dropFirst()), environment: ProcessInfo.processInfo.environment)
PartialOutputs.shared.beforeExit()
exit(code)
