#!/usr/bin/env python3
"""What would sites cost with a model frames share through the dictionary? (an experiment,
not product code)

Issue 30 asks a session's few hundred sites to cost <= 2 % of its log. Today each 4,096-event
frame codes its sites alone (docs/log-format.md, "Sites"): ~3.2 bits an event, 7.8 %. Frames
must decode with nothing but their segment's dictionary as of `dict_base`, and the dictionary
is state every frame already shares, so a model may live there. The design estimated here:

- the dictionary keeps, for each context (the event's op, the site of the event before it in
  the frame), a list of the sites seen there, a new one appended where it is first written
  (a definition, as an identifier is);
- at a frame's start the writer re-sorts a context's list by how often each site came there
  so far, when that changes its order (a definition of ~14 bits each);
- each event codes its site's rank in its context's list, or an escape and the site's number
  (log2 of the sites so far), with per-frame adaptive frequencies per op (reset every frame,
  as a range coder's model would be), ranks from A-2 on sharing one symbol and followed by
  the rank in full;
- with the fallback, an escape is first coded against a second list per (op, file of the
  site before) (the screen the person is on), and only a site new there too costs its
  number; a mid-log restart makes every list be learnt again (printed both ways).

Costs are ideal code lengths (-log2 p), so a range coder would add a few bytes a frame.
Compare with 2 % of the log without sites (0.83 bits an event on the bench's short session).

Usage:
  listtape generate --events 1000000 --seed 14 --outline 100000 --shape short \\
    --max-items 110000 --sites 300 --site-model screens | site-model.py LOG_BYTES_WITHOUT_SITES
See docs/performance.md ("Issue 30: what sites cost a log").
"""
import collections
import json
import math
import sys

FRAME = 4096


def records(lines):
    """(op, site) of every event, batches' inner events included, in log order."""
    def walk(e):
        yield e['op'], e.get('site', '')
        for inner in e.get('events', []) if e['op'] == 'batch' else []:
            yield from walk(inner)
    for line in lines:
        yield from walk(json.loads(line))


def cost(recs, alphabet=4, reorder_bits=14, fallback=True, restart_at=()):
    """Ideal code length of the sites of `recs`. With `fallback`, a site new to its context
    is first looked for in the list of the context (op, file of the site before), as the
    screen the person is on; only a site new there too costs its number. `restart_at`:
    event indices where a dictionary restart makes every list be learnt again."""
    lists = {}
    file_lists = {}
    counts = collections.defaultdict(collections.Counter)
    numbers = {}
    bits = 0.0
    reorders = 0
    prev = None
    freq = file_freq = None

    def code(f, symbol, alphabet):
        seen = sum(f.values())
        f[symbol] += 1
        return -math.log2((f[symbol] - 1 + 0.5) / (seen + 0.5 * alphabet))

    def file_of(site):
        return site.split(':')[0] if site else None

    for k, (op, site) in enumerate(recs):
        if k in restart_at:
            lists, file_lists, numbers = {}, {}, {}
            counts = collections.defaultdict(collections.Counter)
        if k % FRAME == 0:
            for c, sites in lists.items():
                ordered = sorted(sites, key=lambda s: -counts[c][s])
                if ordered != sites:
                    lists[c] = ordered
                    reorders += 1
                    bits += reorder_bits
            freq = collections.defaultdict(collections.Counter)
            file_freq = collections.defaultdict(collections.Counter)
            prev = None
        c = (op, prev)
        sites = lists.setdefault(c, [])
        rank = sites.index(site) if site in sites else None
        bits += code(freq[op], 'escape' if rank is None else min(rank, alphabet - 2), alphabet)
        if rank is not None and rank >= alphabet - 2:
            bits += math.log2(max(2, len(sites)))
        if rank is None:
            found = False
            if fallback:
                screen = file_lists.setdefault((op, file_of(prev)), [])
                r = screen.index(site) if site in screen else None
                bits += code(file_freq[op], 'escape' if r is None else min(r, 2), 4)
                if r is not None and r >= 2:
                    bits += math.log2(max(2, len(screen)))
                if r is None:
                    screen.append(site)
                found = r is not None
            if not found:
                bits += math.log2(max(2, len(numbers) + 1))
            numbers.setdefault(site, len(numbers))
            sites.append(site)
        counts[c][site] += 1
        prev = site
    return bits, reorders


def main():
    log_bytes = int(sys.argv[1])
    recs = list(records(sys.stdin))
    n = len(recs)
    for fallback in (False, True):
        for restart in ((), (n // 2,)):
            bits, reorders = cost(recs, fallback=fallback, restart_at=restart)
            print(f'fallback {fallback!s:5}, restart {"mid-log" if restart else "none   "}: '
                  f'{bits / n:.3f} bits an event, {reorders} re-sorts; {bits / 8:.0f} bytes, '
                  f'{100 * bits / 8 / log_bytes:.2f} % of {log_bytes} bytes')


main()
