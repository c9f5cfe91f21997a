#ifndef LISTTAPE_CZLIB_SHIM_H
#define LISTTAPE_CZLIB_SHIM_H
#include <zlib.h>

/// deflateInit2 and inflateInit2 are macros, invisible to Swift: wrap them.
static inline int listtape_deflateInit2(z_streamp strm, int level, int method, int windowBits,
                                        int memLevel, int strategy) {
  return deflateInit2(strm, level, method, windowBits, memLevel, strategy);
}

static inline int listtape_inflateInit2(z_streamp strm, int windowBits) {
  return inflateInit2(strm, windowBits);
}

#endif
