#!/usr/bin/env python3
"""How small could checkpoints get in columns? (an experiment, not product code)

Reads every CHECKPOINT frame of a ListTape log (format 1.0, see docs/log-format.md),
inflates it, parses the state encoding (docs/architecture.md: per item its level, flags,
id, title, fields, in pre-order), and re-encodes it column by column: levels, flags, id
prefixes, numeric id suffixes as zigzag deltas from the previous id with the same prefix,
other ids, strings. Each checkpoint is deflated at level 6 as one zlib stream with a
Z_BLOCK flush between columns. Prints today's bytes (level 3, as the writer stores them)
against the columnar bytes, and each column's share.

Usage: columnar-checkpoints.py LOG
See docs/performance.md ("What the size and seek bounds would take").
"""
import re
import struct
import sys
import zlib

data = open(sys.argv[1], 'rb').read()
offset = struct.unpack_from('<I', data, 12)[0]
checkpoints = []
while offset + 36 <= len(data):
    kind = data[offset + 4]
    length = struct.unpack_from('<I', data, offset + 16)[0]
    if kind == 2:
        checkpoints.append(zlib.decompress(data[offset + 36:offset + 36 + length]))
    offset += 36 + length


def read_varint(b, i):
    v = shift = 0
    while True:
        c = b[i]
        i += 1
        v |= (c & 127) << shift
        shift += 7
        if c < 128:
            return v, i


def read_string(b, i):
    n, i = read_varint(b, i)
    return b[i:i + n], i + n


def write_varint(out, v):
    while v >= 128:
        out.append((v & 127) | 128)
        v >>= 7
    out.append(v)


numbered = re.compile(rb'^(.*?)([1-9]\d{0,8})$')
today = columnar = 0
shares = {}
for cp in checkpoints:
    b = cp[9:]  # checkpoint version and last time
    i = 2  # state version, selection mode
    sections, i = read_varint(b, i)
    cols = {k: bytearray() for k in ['levels', 'flags', 'prefixes', 'numbers', 'other ids', 'strings']}
    last = {}
    for _ in range(sections):
        sid, i = read_string(b, i)
        count, i = read_varint(b, i)
        cols['strings'] += sid
        for _ in range(count):
            level, i = read_varint(b, i)
            flags = b[i]
            i += 1
            ident, i = read_string(b, i)
            cols['levels'].append(min(level, 255))
            cols['flags'].append(flags)
            m = numbered.match(ident)
            if m:
                prefix, number = m.group(1), int(m.group(2))
                cols['prefixes'].append(len(prefix))
                cols['prefixes'] += prefix
                delta = number - last.get(prefix, 0)
                last[prefix] = number
                write_varint(cols['numbers'], ((delta << 1) ^ (delta >> 63)) & ((1 << 64) - 1))
            else:
                cols['prefixes'].append(255)
                write_varint(cols['other ids'], len(ident))
                cols['other ids'] += ident
            if flags & 4:
                title, i = read_string(b, i)
                write_varint(cols['strings'], len(title))
                cols['strings'] += title
            if flags & 8:
                pairs, i = read_varint(b, i)
                write_varint(cols['strings'], pairs)
                for _ in range(2 * pairs):
                    s, i = read_string(b, i)
                    write_varint(cols['strings'], len(s))
                    cols['strings'] += s
    assert i == len(b)
    z = zlib.compressobj(6)
    out = b''
    for k in cols:
        out += z.compress(bytes(cols[k])) + z.flush(zlib.Z_BLOCK)
        shares[k] = shares.get(k, 0) + len(zlib.compress(bytes(cols[k]), 6))
    out += z.flush()
    today += len(zlib.compress(cp, 3))
    columnar += len(out)

print(f'{len(checkpoints)} checkpoints: {today:,} B today (level 3), {columnar:,} B in columns '
      f'({columnar / today:.2f} x)')
for k, v in shares.items():
    print(f'  {k}: {v:,} B')
