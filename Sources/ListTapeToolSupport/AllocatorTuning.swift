#if canImport(Glibc)
import Glibc
#endif

/// Allocator settings for the command-line tools, which build and drop many large states in
/// one process (seeks, bisect, scrub, diff): freed memory stays in the heap for the next
/// state instead of going back to the system and faulting in again page by page. glibc only,
/// a no-op elsewhere; an app that embeds the library keeps its own allocator policy.
package enum AllocatorTuning {
  /// Allocations up to 32 MiB come from the heap, and up to 256 MiB of free memory at its top
  /// is kept (what that buys: docs/performance.md).
  package static func keepFreedMemoryForReuse() {
    #if canImport(Glibc)
    // <malloc.h> is not in the Glibc module: its values, fixed in glibc's ABI.
    let trimThreshold: Int32 = -1
    let mmapThreshold: Int32 = -3
    _ = glibcMallopt(mmapThreshold, 32 << 20)
    _ = glibcMallopt(trimThreshold, 256 << 20)
    #endif
  }

  /// For a command that loads one large state and exits (`show`, `diff`): every thread
  /// allocates from the one heap, which grows now by `room` bytes (reserved, not touched),
  /// so that what one thread frees another reuses and the heap is not grown step by step.
  /// No 2 MiB pages: on a host that hands freed memory back to its hypervisor they made a
  /// command run a few seconds after the last 1.3-1.6 × slower (docs/performance.md). Call
  /// before any other thread allocates.
  package static func growOneHeap(room: Int = 64 << 20) {
    #if canImport(Glibc)
    let topPad: Int32 = -2
    let arenaMax: Int32 = -8
    _ = glibcMallopt(arenaMax, 1)
    _ = glibcMallopt(topPad, Int32(clamping: room))
    // One allocation (below the mmap threshold) grows the heap by itself and the pad; freed,
    // it stays as the heap's top, where the next allocations are carved from. (Its size is
    // asked so that the compiler cannot drop the pair.)
    let grown = malloc(16 << 20)
    _ = glibcUsableSize(grown)
    free(grown)
    #endif
  }
}

#if canImport(Glibc)
@_silgen_name("mallopt") private func glibcMallopt(_ parameter: Int32, _ value: Int32) -> Int32
@_silgen_name("malloc_usable_size") private func glibcUsableSize(_ p: UnsafeMutableRawPointer?)
  -> Int
#endif
