#ifndef LISTTAPE_HINTS_H
#define LISTTAPE_HINTS_H

/// Asks the CPU to start loading the cache line at `p` for reading; no effect on results.
static inline void listtape_prefetch(const void *p) { __builtin_prefetch(p, 0, 3); }

#endif
