#!/usr/bin/env python3
"""How small could a columnar event frame get with zlib? (an experiment, not product code)

Reads a session as JSON Lines (`listtape generate`, or the bench's cached
$TMPDIR/listtape-bench/session.jsonl), encodes each frame of FRAME events column by column
(op tags, time deltas split into low/high bytes, move-to-front id references, literal id
prefixes, numeric id suffixes as small increments or 3 fixed bytes, counts and flags,
strings), deflates each frame as one zlib stream with a Z_BLOCK flush between columns (so
every column gets its own Huffman tables while the frame stays one standard stream), and
prints bytes per event, in total and per column (each column deflated alone).

Usage: columnar-size.py SESSION.jsonl [EVENTS [FRAME [LEVEL]]]
See docs/performance.md ("What the size bound would take").
"""
import json, zlib, sys, re
PATH=sys.argv[1]
N=int(sys.argv[2]) if len(sys.argv)>2 else 1000000
FR=int(sys.argv[3]) if len(sys.argv)>3 else 4096
LEVEL=int(sys.argv[4]) if len(sys.argv)>4 else 6
evs=[]
with open(PATH) as f:
    for i,line in enumerate(f):
        if i>=N: break
        evs.append(json.loads(line))
def varint(b,v):
    while v>=0x80: b.append((v&0x7f)|0x80); v>>=7
    b.append(v)
def zz(v): return (v<<1)^(v>>63)
OPS={}
idre=re.compile(r'^(.*?)([1-9]\d{0,8})$')
names=['op','t0','t1','t2','ref','lit','nflag','n0','n1','n2','misc','str']
tot={k:0 for k in names}; total_block=0
for start in range(0,len(evs),FR):
    c={k:bytearray() for k in names}
    ring=[]; st={'last':0,'maxn':{}}
    def tm(d):
        d=zz(d)
        if d<0xffff: c['t0'].append(d&255); c['t1'].append(d>>8)
        else: c['t0'].append(d&255); c['t1'].append(255); varint(c['t2'],d)
    def ident(s):
        if s in ring:
            i=ring.index(s); c['ref'].append(i); ring.pop(i); ring.insert(0,s); return
        c['ref'].append(255)
        m=idre.match(s)
        if m:
            p=m.group(1).encode(); n=int(m.group(2))
            c['lit'].append(len(p)+1); c['lit'].extend(p)
            mx=st['maxn'].get(p,0)
            if n>mx and n-mx<=250: c['nflag'].append(n-mx); st['maxn'][p]=n
            else:
                c['nflag'].append(0)
                c['n0'].append(n>>16 &255); c['n1'].append(n>>8&255); c['n2'].append(n&255)
                if n>=1<<24: raise Exception
                if n>mx: st['maxn'][p]=n
        else:
            b=s.encode(); c['lit'].append(0); varint(c['lit'],len(b)); c['lit'].extend(b)
        ring.insert(0,s)
        if len(ring)>64: ring.pop()
    def strg(s): b=s.encode(); varint(c['str'],len(b)); c['str'].extend(b)
    def fields(f):
        varint(c['str'],len(f))
        for k,v in sorted(f.items()): strg(k); strg(v)
    def nodes(lst):
        varint(c['misc'],len(lst))
        for n in lst:
            if isinstance(n,str): c['misc'].append(0); ident(n); continue
            fl=(1 if 'title' in n else 0)|(2 if 'fields' in n else 0)|(4 if n.get('expanded') else 0)|(8 if n.get('children') else 0)
            c['misc'].append(fl); ident(n['id'])
            if 'title' in n: strg(n['title'])
            if 'fields' in n: fields(n['fields'])
            if n.get('children'): nodes(n['children'])
    def enc(e,nested):
        op=e['op']; code=OPS.setdefault(op,len(OPS)+1)
        c['op'].append(code|(0x80 if 't' in e else 0))
        if 't' in e:
            if nested: varint(c['misc'],zz(e['t']))
            else: tm(e['t']-st['last']); st['last']=e['t']
        if op in('expand','collapse','select','deleteItems','reloadItems','reconfigureItems','appendSections','deleteSections','reloadSections'):
            l=e.get('items',e.get('sections')); varint(c['misc'],len(l)); [ident(x) for x in l]
        elif op=='deselect':
            if 'items' in e: c['misc'].append(1); varint(c['misc'],len(e['items'])); [ident(x) for x in e['items']]
            else: c['misc'].append(0)
        elif op=='appendItems':
            fl=(1 if 'section' in e else 0)|(2 if 'parent' in e else 0); c['misc'].append(fl)
            if 'section' in e: ident(e['section'])
            if 'parent' in e: ident(e['parent'])
            nodes(e['items'])
        elif op=='insertItems':
            a='after' if 'after' in e else 'before'; c['misc'].append(1 if a=='after' else 0); ident(e[a]); nodes(e['items'])
        elif op=='moveItem':
            ident(e['item']); a='after' if 'after' in e else 'before'; c['misc'].append(1 if a=='after' else 0); ident(e[a])
        elif op=='replaceChildren': ident(e['parent']); nodes(e['items'])
        elif op=='update':
            fl=(1 if 'title' in e else 0)|(2 if 'fields' in e else 0); c['misc'].append(fl); ident(e['item'])
            if 'title' in e: strg(e['title'])
            if 'fields' in e: fields(e['fields'])
        elif op=='mark': strg(e['label'])
        elif op=='batch':
            varint(c['misc'],len(e['events']))
            for x in e['events']: enc(x,True)
        elif op=='configure': c['misc'].append(1 if e['multipleSelection'] else 0)
        else: raise Exception(op)
    for e in evs[start:start+FR]: enc(e,False)
    # approximate Z_BLOCK per column: one stream, flush Z_BLOCK... use zlib compressobj with Z_FULL_FLUSH? use separate compress minus header
    co=zlib.compressobj(LEVEL)
    out=b''
    for k in names:
        out+=co.compress(bytes(c[k])); out+=co.flush(zlib.Z_BLOCK)
        tot[k]+=len(zlib.compress(bytes(c[k]),LEVEL))
    out+=co.flush()
    total_block+=len(out)
print('single stream with Z_BLOCK per column: B/event',total_block/len(evs))
for k in names: print(k, round(tot[k]/len(evs),3))
