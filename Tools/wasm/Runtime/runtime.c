// What Embedded Swift's code expects from a C library, for wasm32 with no libc: an
// allocator, the mem* functions and a random source for Hasher seeds.
//
// The allocator hands out blocks in size classes (four per power of two, so at most 25%
// slack) from a bump pointer that grows linear memory, and keeps a free list per class.
// Freed blocks are reused for the same class; linear memory never shrinks.

#include <stddef.h>
#include <stdint.h>

#define HEADER 16u
#define CLASSES 112u
#define PAGE 65536u

extern unsigned char __heap_base;

static void *free_lists[CLASSES];
static uintptr_t bump;
static uintptr_t limit;

/// The class of a block of `size` bytes (header included) and that class's block size.
static unsigned class_of(size_t size, size_t *block) {
  if (size <= 32) {
    *block = 32;
    return 0;
  }
  unsigned k = 31u - (unsigned)__builtin_clz((unsigned)(size - 1));  // 2^k < size <= 2^(k+1)
  size_t base = (size_t)1 << k;
  size_t step = base >> 2 < 16 ? 16 : base >> 2;  // blocks stay multiples of 16
  size_t j = (size - base + step - 1) / step;  // 1...4 (1...2 below 64 bytes)
  *block = base + j * step;
  return (k - 5u) * 4u + (unsigned)j;
}

static void *carve(size_t block) {
  if (bump == 0) {
    bump = ((uintptr_t)&__heap_base + 15u) & ~(uintptr_t)15u;
    limit = __builtin_wasm_memory_size(0) * PAGE;
  }
  if (block > limit - bump) {
    size_t need = block - (limit - bump);
    size_t pages = (need + PAGE - 1) / PAGE;
    if (__builtin_wasm_memory_grow(0, pages) == (size_t)-1) return NULL;
    limit += pages * PAGE;
  }
  void *b = (void *)bump;
  bump += block;
  return b;
}

/// A block of at least `size` bytes whose user part starts `align` (a power of two, ≥ 16)
/// aligned; the 16 bytes before it record the class and the offset back to the block.
static void *allocate(size_t size, size_t align) {
  if (size > ((size_t)1 << 30) || align > ((size_t)1 << 16)) return NULL;
  size_t total = size + HEADER + (align > HEADER ? align : 0);
  size_t block;
  unsigned cls = class_of(total, &block);
  if (cls >= CLASSES) return NULL;
  unsigned char *b = free_lists[cls];
  if (b) {
    free_lists[cls] = *(void **)b;
  } else {
    b = carve(block);
    if (!b) return NULL;
  }
  uintptr_t user = ((uintptr_t)b + HEADER + align - 1) & ~(uintptr_t)(align - 1);
  uint32_t *h = (uint32_t *)(user - HEADER);
  h[0] = cls;
  h[1] = (uint32_t)(user - (uintptr_t)b);
  return (void *)user;
}

void *malloc(size_t size) { return allocate(size, HEADER); }

void free(void *p) {
  if (!p) return;
  uint32_t *h = (uint32_t *)((uintptr_t)p - HEADER);
  void *b = (void *)((uintptr_t)p - h[1]);
  unsigned cls = h[0];
  *(void **)b = free_lists[cls];
  free_lists[cls] = b;
}

int posix_memalign(void **out, size_t align, size_t size) {
  void *p = allocate(size, align < HEADER ? HEADER : align);
  if (!p) return 12;  // ENOMEM
  *out = p;
  return 0;
}

void *calloc(size_t n, size_t size) {
  if (size && n > ((size_t)1 << 30) / size) return NULL;
  void *p = malloc(n * size);
  if (p) __builtin_memset(p, 0, n * size);
  return p;
}

// With bulk memory enabled these builtins become memory.copy / memory.fill instructions.
void *memcpy(void *restrict d, const void *restrict s, size_t n) {
  return __builtin_memcpy(d, s, n);
}
void *memmove(void *d, const void *s, size_t n) { return __builtin_memmove(d, s, n); }
void *memset(void *d, int c, size_t n) { return __builtin_memset(d, c, n); }

int memcmp(const void *a, const void *b, size_t n) {
  const unsigned char *x = a, *y = b;
  for (size_t i = 0; i < n; i++) {
    if (x[i] != y[i]) return x[i] < y[i] ? -1 : 1;
  }
  return 0;
}

size_t strlen(const char *s) {
  size_t n = 0;
  while (s[n]) n++;
  return n;
}

// Hasher seeds: SplitMix64 from a state the page may set (`lt_seed`) from
// crypto.getRandomValues before the first hash; a fixed start otherwise.
static uint64_t seed = 0x9E3779B97F4A7C15ull;

__attribute__((export_name("lt_seed"))) void listtape_seed(uint32_t lo, uint32_t hi) { seed ^= ((uint64_t)hi << 32) | lo; }

void arc4random_buf(void *buf, size_t n) {
  unsigned char *out = buf;
  while (n) {
    uint64_t z = (seed += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    for (int i = 0; i < 8 && n; i++, n--) *out++ = (unsigned char)(z >> (8 * i));
  }
}

int putchar(int c) { return c; }

// 128-bit multiply (Swift's multipliedFullWidth on 64-bit values), from 32-bit halves so
// it does not call itself.
static uint64_t mulhi64(uint64_t a, uint64_t b) {
  uint64_t a0 = (uint32_t)a, a1 = a >> 32, b0 = (uint32_t)b, b1 = b >> 32;
  uint64_t p00 = a0 * b0, p01 = a0 * b1, p10 = a1 * b0, p11 = a1 * b1;
  uint64_t mid = (p00 >> 32) + (uint32_t)p01 + (uint32_t)p10;
  return p11 + (p01 >> 32) + (p10 >> 32) + (mid >> 32);
}

__int128 __multi3(__int128 a, __int128 b) {
  uint64_t al = (uint64_t)a, ah = (uint64_t)((unsigned __int128)a >> 64);
  uint64_t bl = (uint64_t)b, bh = (uint64_t)((unsigned __int128)b >> 64);
  uint64_t hi = mulhi64(al, bl) + al * bh + ah * bl;
  return (__int128)(((unsigned __int128)hi << 64) | (al * bl));
}

// Double(String) for JSON numbers: the JSON parser hands over only its number syntax
// (-?digits[.digits][e±digits]), and the model reads no fractional numbers (it rejects
// them, and refuses infinite ones), so this computes the value from at most 19 significant
// digits with a power of ten; values past the double range become ±infinity.
const char *_swift_stdlib_strtod_clocale(const char *s, double *out) {
  const char *p = s;
  int negative = *p == '-';
  if (*p == '-' || *p == '+') p++;
  uint64_t mantissa = 0;
  int digits = 0, scale = 0, any = 0;
  for (; *p >= '0' && *p <= '9'; p++, any = 1) {
    if (digits < 19) {
      if (mantissa || *p != '0') digits++;
      mantissa = mantissa * 10 + (uint64_t)(*p - '0');
    } else {
      scale++;
    }
  }
  if (*p == '.') {
    for (p++; *p >= '0' && *p <= '9'; p++, any = 1) {
      if (digits < 19) {
        if (mantissa || *p != '0') digits++;
        mantissa = mantissa * 10 + (uint64_t)(*p - '0');
        scale--;
      }
    }
  }
  if (!any) return NULL;
  if (*p == 'e' || *p == 'E') {
    p++;
    int sign = 1, e = 0;
    if (*p == '-' || *p == '+') sign = *p++ == '-' ? -1 : 1;
    if (*p < '0' || *p > '9') return NULL;
    for (; *p >= '0' && *p <= '9'; p++) {
      if (e < 100000) e = e * 10 + (*p - '0');
    }
    scale += sign * e;
  }
  double v = (double)mantissa;
  if (v != 0) {
    double ten = 10;
    int n = scale < 0 ? -scale : scale;
    double factor = 1;
    for (; n && factor < 1e300; n--) factor *= ten;
    if (scale < 0) {
      v /= factor;
      for (; n && v != 0; n--) v /= ten;
    } else {
      v *= factor;
      for (; n && v < __builtin_inf(); n--) v *= ten;
    }
  }
  *out = negative ? -v : v;
  return p;
}
