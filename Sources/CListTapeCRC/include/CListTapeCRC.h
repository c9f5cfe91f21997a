#ifndef CLISTTAPECRC_H
#define CLISTTAPECRC_H

#include <stddef.h>
#include <stdint.h>

/// Whether this processor folds CRC-32 with carry-less multiplication (x86-64 with PCLMULQDQ
/// and SSE4.1); never on other architectures. Asks the processor: call once and keep it.
int listtape_crc32_folds(void);

/// zlib's CRC-32 of `count` bytes at `p` continuing from `crc`, by carry-less folding.
/// `count` is a multiple of 16 and at least 64; only when `listtape_crc32_folds()`.
uint32_t listtape_crc32_fold(uint32_t crc, const unsigned char *p, size_t count);

#endif
