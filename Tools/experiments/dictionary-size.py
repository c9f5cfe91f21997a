#!/usr/bin/env python3
"""How small could format 2.0's event frames get with ids stored once? (an experiment, not
product code)

Reads a session as JSON Lines (`listtape generate --outline 100000 --shape S ...`) and
encodes it the way the 2.0 candidates would: each frame of FRAME events column by column,
ids either among the last 64 referenced in the frame (a move-to-front list or a FIFO ring),
or a number into a per-log dictionary (written as its age, the distance back from the
newest entry, in byte planes), or defined there and then (UUID-shaped ids as 16 binary
bytes, other ids front-coded against the previous definition, or split into a prefix and
a trailing number written as a delta). Each frame is deflated as one zlib stream with a
Z_BLOCK flush between columns. Prints bytes per event per variant and per column.

Usage: dictionary-size.py SESSION.jsonl [EVENTS [FRAME [LEVEL]]]
"""
import json
import re
import sys
import zlib

PATH = sys.argv[1]
N = int(sys.argv[2]) if len(sys.argv) > 2 else 1000000
FRAME = int(sys.argv[3]) if len(sys.argv) > 3 else 4096
LEVEL = int(sys.argv[4]) if len(sys.argv) > 4 else 6

events = []
with open(PATH) as f:
    for i, line in enumerate(f):
        if i >= N:
            break
        events.append(json.loads(line))

UUID = re.compile(r'^[0-9A-F]{8}-[0-9A-F]{4}-[0-9A-F]{4}-[0-9A-F]{4}-[0-9A-F]{12}$')
NUMBERED = re.compile(r'^(.*?)([1-9][0-9]{0,17})$')
OPS = {}


def varint(b, v):
    while v >= 0x80:
        b.append((v & 0x7F) | 0x80)
        v >>= 7
    b.append(v)


def zz(v):
    return (v << 1) ^ (v >> 63)


NAMES = ['op', 't0', 't1', 't2', 'ref', 'age0', 'age1', 'age2', 'kind', 'uuid', 'deftext',
         'defnum', 'misc', 'str']


def run(ring_kind, def_kind):
    dictionary = {}
    order = []
    last_def = ['']
    last_num = {}
    totals = {k: 0 for k in NAMES}
    total = 0
    for start in range(0, len(events), FRAME):
        c = {k: bytearray() for k in NAMES}
        ring = []
        ring_next = [0]
        state = {'last': 0}

        def time(d):
            d = zz(d)
            c['t0'].append(d & 255)
            if d < 0xFF00:
                c['t1'].append(d >> 8)
            else:
                c['t1'].append(255)
                varint(c['t2'], d >> 8)

        def define(s):
            if UUID.match(s):
                c['kind'].append(1)
                c['uuid'].extend(bytes.fromhex(s.replace('-', '')))
            elif def_kind == 'front':
                prev = last_def[0]
                p = 0
                while p < min(len(prev), len(s), 255) and prev[p] == s[p]:
                    p += 1
                b = s[p:].encode()
                c['kind'].append(0)
                c['deftext'].append(p)
                varint(c['deftext'], len(b))
                c['deftext'].extend(b)
            else:
                m = NUMBERED.match(s)
                if m:
                    prefix, n = m.group(1).encode(), int(m.group(2))
                    prev = last_def[0].encode()
                    if prefix == prev:
                        c['kind'].append(2)
                    else:
                        c['kind'].append(3)
                        varint(c['deftext'], len(prefix))
                        c['deftext'].extend(prefix)
                    d = n - last_num.get(prefix, 0)
                    varint(c['defnum'], zz(d) & ((1 << 64) - 1))
                    last_num[prefix] = n
                    last_def[0] = m.group(1)
                    return
                b = s.encode()
                c['kind'].append(0)
                varint(c['deftext'], len(b))
                c['deftext'].extend(b)
            last_def[0] = s

        def ident(s):
            if s in ring:
                i = ring.index(s)
                c['ref'].append(i)
                if ring_kind == 'mtf':
                    ring.pop(i)
                    ring.insert(0, s)
                return
            if s in dictionary:
                c['ref'].append(64)
                age = len(order) - 1 - dictionary[s]
                c['age0'].append(age & 255)
                c['age1'].append(age >> 8 & 255)
                c['age2'].append(age >> 16)
            else:
                c['ref'].append(65)
                dictionary[s] = len(order)
                order.append(s)
                define(s)
            if ring_kind == 'mtf':
                ring.insert(0, s)
                if len(ring) > 64:
                    ring.pop()
            else:
                if len(ring) < 64:
                    ring.append(s)
                else:
                    ring[ring_next[0]] = s
                ring_next[0] = (ring_next[0] + 1) % 64

        def string(s):
            b = s.encode()
            varint(c['str'], len(b))
            c['str'].extend(b)

        def fields(f):
            varint(c['misc'], len(f))
            for k, v in sorted(f.items()):
                string(k)
                string(v)

        def nodes(lst):
            varint(c['misc'], len(lst))
            for n in lst:
                if isinstance(n, str):
                    c['misc'].append(0)
                    ident(n)
                    continue
                fl = (1 if 'title' in n else 0) | (2 if 'fields' in n else 0) \
                    | (4 if n.get('expanded') else 0) | (8 if n.get('children') else 0)
                c['misc'].append(fl)
                ident(n['id'])
                if 'title' in n:
                    string(n['title'])
                if 'fields' in n:
                    fields(n['fields'])
                if n.get('children'):
                    nodes(n['children'])

        def enc(e, nested):
            op = e['op']
            code = OPS.setdefault(op, len(OPS) + 1)
            c['op'].append(code | (0x80 if 't' in e else 0))
            if 't' in e:
                if nested:
                    varint(c['misc'], zz(e['t']))
                else:
                    time(e['t'] - state['last'])
                    state['last'] = e['t']
            if op in ('expand', 'collapse', 'select', 'deleteItems', 'reloadItems',
                      'reconfigureItems', 'appendSections', 'deleteSections', 'reloadSections'):
                lst = e.get('items', e.get('sections'))
                varint(c['misc'], len(lst))
                for x in lst:
                    ident(x)
            elif op == 'deselect':
                if 'items' in e:
                    c['misc'].append(1)
                    varint(c['misc'], len(e['items']))
                    for x in e['items']:
                        ident(x)
                else:
                    c['misc'].append(0)
            elif op == 'appendItems':
                fl = (1 if 'section' in e else 0) | (2 if 'parent' in e else 0)
                c['misc'].append(fl)
                if 'section' in e:
                    ident(e['section'])
                if 'parent' in e:
                    ident(e['parent'])
                nodes(e['items'])
            elif op == 'insertItems':
                a = 'after' if 'after' in e else 'before'
                c['misc'].append(1 if a == 'after' else 0)
                ident(e[a])
                nodes(e['items'])
            elif op == 'moveItem':
                ident(e['item'])
                a = 'after' if 'after' in e else 'before'
                c['misc'].append(1 if a == 'after' else 0)
                ident(e[a])
            elif op == 'replaceChildren':
                ident(e['parent'])
                nodes(e['items'])
            elif op == 'update':
                fl = (1 if 'title' in e else 0) | (2 if 'fields' in e else 0)
                c['misc'].append(fl)
                ident(e['item'])
                if 'title' in e:
                    string(e['title'])
                if 'fields' in e:
                    fields(e['fields'])
            elif op == 'mark':
                string(e['label'])
            elif op == 'batch':
                varint(c['misc'], len(e['events']))
                for x in e['events']:
                    enc(x, True)
            elif op == 'configure':
                c['misc'].append(1 if e['multipleSelection'] else 0)
            else:
                raise Exception(op)

        for e in events[start:start + FRAME]:
            enc(e, False)
        z = zlib.compressobj(LEVEL)
        out = b''
        for k in NAMES:
            if c[k]:
                out += z.compress(bytes(c[k])) + z.flush(zlib.Z_BLOCK)
                totals[k] += len(zlib.compress(bytes(c[k]), LEVEL)) - 6
        out += z.flush()
        total += len(out) + 36
    return total, totals, len(order)


for ring_kind in ('mtf', 'fifo'):
    for def_kind in ('front', 'number'):
        total, totals, ids = run(ring_kind, def_kind)
        print(f'{ring_kind:4} {def_kind:6}: {total:,} B, {total / len(events):.3f} B/event, '
              f'{ids:,} distinct ids')
        print('   ' + ', '.join(f'{k} {v / len(events):.3f}' for k, v in totals.items() if v > 0))
