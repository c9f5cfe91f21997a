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
}

#if canImport(Glibc)
@_silgen_name("mallopt") private func glibcMallopt(_ parameter: Int32, _ value: Int32) -> Int32
#endif
