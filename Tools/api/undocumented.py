"""Lists the public declarations of a symbol graph written without a doc comment (those the
compiler synthesized have no source location and are left out); exits 1 when there are any.

    python3 Tools/api/undocumented.py GRAPH.symbols.json...
"""
import json
import sys

bare = []
for path in sys.argv[1:]:
    graph = json.load(open(path))
    module = graph["module"]["name"]
    for symbol in graph["symbols"]:
        if symbol.get("accessLevel") == "public" and "location" in symbol \
                and "docComment" not in symbol:
            bare.append(f"{module}: {'.'.join(symbol['pathComponents'])}")
for name in bare:
    print(f"{name} is public but has no doc comment", file=sys.stderr)
sys.exit(1 if bare else 0)
