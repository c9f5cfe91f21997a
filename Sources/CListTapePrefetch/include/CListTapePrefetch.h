#ifndef CLISTTAPEPREFETCH_H
#define CLISTTAPEPREFETCH_H

/// Asks the cache for the line at `p` before the fold reads it (a hint: never faults).
static inline void listtape_prefetch(const void *p) { __builtin_prefetch(p, 0, 3); }

/// The same, for a line the fold is about to write.
static inline void listtape_prefetch_write(const void *p) { __builtin_prefetch(p, 1, 3); }

#endif
