#!/usr/bin/env python3
"""Checks the library modules against iOS 16 / macOS 13 with the toolchain's own data.

What the compiler says the code references: every library module (Sources/*, Swift) is
type-checked again with the flags `swift build` used (.build/debug/description.json) and
`-dump-ast -dump-ast-format json`, which gives every declaration reference as a USR and
every type as a mangled name, with source offsets, `#available` conditions and
`@available` attributes.

What the toolchain says those symbols need: `swift-symbolgraph-extract` of Swift,
_Concurrency, Synchronization, _StringProcessing, Foundation, FoundationEssentials and
Dispatch. The Linux toolchain's stdlib carries its Apple availability (`@available(macOS
15.0, iOS 18.0, ...)`), so a reference to a declaration introduced after the deployment
target, outside an `if #available`, a `guard #available` or an `@available` declaration
that covers it, is reported. A module whose every top-level symbol is newer (Synchronization)
is reported where it is imported.

What neither can see: code in branches Linux does not compile (`#if canImport(Darwin)`),
and C functions, which come from Glibc here and from Darwin on Apple platforms (no Darwin
SDK on Linux). For those, the pattern list (unavailable-apis.txt) is matched against the
text of every line an Apple build compiles, with each `#if` evaluated for macOS and for
iOS (three-valued: `canImport(Glibc)` is false, `os(macOS)` true on macOS, `DEBUG` unknown).

  availability.py [--build DIR] [--tests] [MODULE_DIR...]
                    default: every Swift target in Sources; --tests adds every test target
                    (swift test on a Mac builds them for macOS 13), against the data only
  availability.py --self-test                     planted uses must be reported, exactly
"""

import bisect
import json
import os
import re
import subprocess
import sys
import tempfile

TARGETS = {"macOS": (13, 0), "iOS": (16, 0)}
PLATFORMS = tuple(TARGETS)
GRAPH_MODULES = ["Swift", "_Concurrency", "Synchronization", "_StringProcessing",
                 "Foundation", "FoundationEssentials", "Dispatch"]
HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
PATTERNS = os.path.join(HERE, "unavailable-apis.txt")


def version(text):
    parts = [int(p) for p in str(text).split(".") if p.isdigit()]
    return tuple((parts + [0, 0])[:2])


def shown(v):
    return "%d.%d" % v if v[1] else "%d" % v[0]


# ---- The toolchain's availability data ----------------------------------------------------

class Availability:
    """USR -> {platform: introduced}, from the toolchain's symbol graphs."""

    def __init__(self, work):
        self.by_usr = {}
        self.newer_types = {}  # USR body of a nominal type -> (name, needs)
        self.newer_modules = {}  # module -> needs, when every top-level symbol is newer
        self.symbols = 0
        self.known = set()
        graphs = os.path.join(work, "graphs")
        os.makedirs(graphs, exist_ok=True)
        for module in GRAPH_MODULES:
            subprocess.run(["swift-symbolgraph-extract", "-module-name", module, "-target",
                            host_triple(), "-output-dir", graphs, "-minimum-access-level",
                            "public"], check=True, stdout=subprocess.DEVNULL)
        parents = {}
        defaults = {}  # requirement -> its default implementations
        top = {}
        kinds = {}
        for name in sorted(os.listdir(graphs)):
            with open(os.path.join(graphs, name)) as f:
                graph = json.load(f)
            owner = name.split("@")[0].split(".")[0]
            for s in graph["symbols"]:
                usr = s["identifier"]["precise"]
                # A protocol member copied into each conforming type: its own entry counts.
                if "::SYNTHESIZED::" in usr:
                    continue
                self.symbols += 1
                self.known.add(usr)
                needs = {}
                for a in s.get("availability", []):
                    if a.get("domain") in TARGETS and "introduced" in a:
                        i = a["introduced"]
                        needs[a["domain"]] = (i.get("major", 0), i.get("minor", 0))
                kinds[usr] = (s["kind"]["identifier"], ".".join(s["pathComponents"]))
                if needs:
                    self.by_usr[usr] = merge(self.by_usr.get(usr, {}), needs)
                if len(s["pathComponents"]) == 1 and "@" not in name:
                    top.setdefault(owner, []).append(usr)
            for r in graph["relationships"]:
                if "::SYNTHESIZED::" in r["source"]:
                    continue
                if r["kind"] == "memberOf":
                    parents[r["source"]] = r["target"]
                elif r["kind"] == "defaultImplementationOf":
                    defaults.setdefault(r["target"], []).append(r["source"])
        # A member is no older than its type.
        for usr in list(kinds):
            needs = dict(self.by_usr.get(usr, {}))
            p, seen = parents.get(usr), 0
            while p and seen < 16:
                needs = merge(needs, self.by_usr.get(p, {}))
                p, seen = parents.get(p), seen + 1
            if needs:
                self.by_usr[usr] = needs
        # A requirement newer than the target (`FixedWidthInteger.&*` became one in Swift 6)
        # is still callable where a default implementation is older: the compiler calls that.
        for requirement, implementations in defaults.items():
            if not self.newer(self.by_usr.get(requirement, {})):
                continue
            for implementation in implementations:
                if not self.newer(self.by_usr.get(implementation, {})):
                    self.by_usr[requirement] = self.by_usr.get(implementation, {})
                    break
        for usr, (kind, name) in kinds.items():
            needs = self.newer(self.by_usr.get(usr, {}))
            if needs and usr.startswith("s:") and kind in (
                    "swift.struct", "swift.class", "swift.enum", "swift.protocol"):
                self.newer_types[usr[2:]] = (name, needs)
        for module, usrs in top.items():
            all_needs = [self.newer(self.by_usr.get(u, {})) for u in usrs]
            if all_needs and all(all_needs):
                needs = {}
                for n in all_needs:
                    needs = {p: min(needs.get(p, n[p]), n[p]) for p in n}
                self.newer_modules[module] = needs

    @staticmethod
    def newer(needs):
        """The platforms where `needs` passes the deployment target."""
        return {p: v for p, v in needs.items() if v > TARGETS[p]}


def merge(a, b):
    out = dict(a)
    for p, v in b.items():
        out[p] = max(out.get(p, (0, 0)), v)
    return out


def host_triple():
    out = subprocess.run(["swiftc", "-print-target-info"], check=True, capture_output=True,
                         text=True).stdout
    return json.loads(out)["target"]["triple"]


# ---- #if for Apple platforms --------------------------------------------------------------

NOT_APPLE = {"Glibc", "Musl", "Android", "Bionic", "WinSDK", "ucrt", "WASILibc", "CRT"}
APPLE = {"Darwin", "Foundation", "Dispatch", "ObjectiveC", "os", "Synchronization",
         "FoundationEssentials", "_Concurrency", "Observation"}


def evaluate(condition, platform):
    """True, False or None (unknown) for a #if condition on `platform`."""
    tokens = re.findall(r"\|\||&&|!|\(|\)|[A-Za-z_][A-Za-z0-9_]*\([^()]*\)|[A-Za-z_]\w*",
                        condition)
    pos = [0]

    def peek():
        return tokens[pos[0]] if pos[0] < len(tokens) else None

    def take():
        pos[0] += 1
        return tokens[pos[0] - 1]

    def atom():
        t = take()
        if t == "!":
            v = atom()
            return None if v is None else not v
        if t == "(":
            v = disjunction()
            if peek() == ")":
                take()
            return v
        m = re.match(r"(\w+)\((.*)\)$", t)
        if not m:
            return {"true": True, "false": False, "SWIFT_PACKAGE": True}.get(t)
        fn, arg = m.group(1), m.group(2).strip()
        if fn == "os":
            return arg == platform or (arg == "Darwin")
        if fn == "canImport":
            name = arg.split(",")[0].strip()
            if name in NOT_APPLE:
                return False
            if name in APPLE or name.startswith("ListTape") or name.startswith("CListTape"):
                return True
            if name in ("UIKit",):
                return platform == "iOS"
            if name in ("AppKit",):
                return platform == "macOS"
            return None
        if fn == "hasFeature" and arg == "Embedded":
            return False
        return None

    def conjunction():
        v = atom()
        while peek() == "&&":
            take()
            w = atom()
            v = False if v is False or w is False else (None if v is None or w is None else True)
        return v

    def disjunction():
        v = conjunction()
        while peek() == "||":
            take()
            w = conjunction()
            v = True if v is True or w is True else (None if v is None or w is None else False)
        return v

    if not tokens:
        return None
    return disjunction()


class Source:
    """A file's text, its lines, and which lines an Apple build may compile."""

    def __init__(self, path):
        self.path = path
        with open(path, "rb") as f:
            self.data = f.read()
        self.starts = [0] + [i + 1 for i, b in enumerate(self.data) if b == 10]
        self.text_lines = self.data.decode("utf-8", "replace").split("\n")
        # For each line, the platforms on which it may be compiled.
        self.active = []
        stack = []  # per #if: {platform: (this branch possible, an earlier branch certain)}
        for line in self.text_lines:
            s = line.strip()
            directive = re.match(r"#(if|elseif|else|endif)\b(.*)", s)
            if directive:
                kind, cond = directive.group(1), directive.group(2).split("//")[0]
                if kind == "if":
                    frame = {}
                    for p in PLATFORMS:
                        v = evaluate(cond, p)
                        frame[p] = (v is not False, v is True)
                    stack.append(frame)
                elif kind in ("elseif", "else") and stack:
                    frame = stack[-1]
                    for p in PLATFORMS:
                        _, taken = frame[p]
                        v = True if kind == "else" else evaluate(cond, p)
                        frame[p] = (not taken and v is not False, taken or v is True)
                elif kind == "endif" and stack:
                    stack.pop()
                self.active.append(set())
                continue
            self.active.append({p for p in PLATFORMS if all(f[p][0] for f in stack)})

    def line_of(self, offset):
        return bisect.bisect_right(self.starts, offset)

    def waived(self, line):
        return "// apple-api: " in self.text_lines[line - 1]


# ---- References, from the compiler ----------------------------------------------------------

TYPE_KEYS = {"type", "interface_type", "result", "type_usr", "thrown_type"}


class Walker:
    """Walks one file's JSON AST: every reference with its offset and the availability the
    code around it guarantees."""

    def __init__(self):
        self.refs = []  # (usr, offset, guaranteed)
        self.types = []  # (mangled, offset, guaranteed)
        self.imports = []  # (module, offset)

    def walk(self, node, offset, guaranteed):
        if isinstance(node, list):
            raised = guaranteed
            for item in node:
                self.walk(item, offset, raised)
                if isinstance(item, dict) and item.get("_kind") == "guard_stmt":
                    raised = raise_by_conditions(raised, item.get("conditions"))
            return
        if not isinstance(node, dict):
            return
        r = node.get("range")
        if isinstance(r, dict) and isinstance(r.get("start"), int):
            offset = r["start"]
        kind = node.get("_kind")
        attrs = node.get("attrs")
        if isinstance(attrs, list):
            for a in attrs:
                if isinstance(a, dict) and a.get("_kind") == "available_attr" \
                        and a.get("domain") in TARGETS and a.get("introduced"):
                    d = a["domain"]
                    guaranteed = dict(guaranteed)
                    guaranteed[d] = max(guaranteed[d], version(a["introduced"]))
        if kind == "import_decl":
            path = node.get("module_path") or []
            if path:
                self.imports.append((path[0], offset))
        usr = node.get("decl_usr")
        if isinstance(usr, str) and usr:
            self.refs.append((usr, offset, guaranteed))
        for key, value in node.items():
            if key in TYPE_KEYS and isinstance(value, str) and value.startswith("$s"):
                self.types.append((value, offset, guaranteed))
            elif key == "then_stmt" and kind == "if_stmt":
                self.walk(value, offset, raise_by_conditions(guaranteed, node.get("conditions")))
            elif isinstance(value, (dict, list)):
                self.walk(value, offset, guaranteed)


def raise_by_conditions(guaranteed, conditions):
    out = dict(guaranteed)
    for c in conditions or []:
        if isinstance(c, dict) and c.get("_kind") == "#available":
            for q in c.get("queries", []):
                if q.get("domain") in TARGETS and q.get("version"):
                    out[q["domain"]] = max(out[q["domain"]], version(q["version"]))
    return out


def json_documents(text):
    """The JSON objects in `text` (one per file), and whatever else it holds."""
    decoder = json.JSONDecoder()
    docs, other, i = [], [], 0
    while i < len(text):
        j = text.find("{\"_kind\":\"source_file\"", i)
        if j < 0:
            other.append(text[i:])
            break
        other.append(text[i:j])
        doc, i = decoder.raw_decode(text, j)
        docs.append(doc)
    return docs, "".join(other).strip()


def dump_ast(module, sources, args):
    """The compiler's JSON AST of `sources` as module `module`."""
    cmd = ["swiftc", "-dump-ast", "-dump-ast-format", "json", "-module-name", module] + args \
        + sources
    p = subprocess.run(cmd, capture_output=True, text=True)
    docs, other = json_documents(p.stdout + p.stderr)
    if p.returncode != 0 or len(docs) != len(sources):
        sys.exit("availability: could not type-check %s (exit %d):\n%s"
                 % (module, p.returncode, other[-4000:]))
    return docs


def build_args(build):
    """`module -> (sources, flags)` from the description `swift build` wrote."""
    with open(os.path.join(build, "description.json")) as f:
        description = json.load(f)
    out = {}
    drop_with_value = {"-index-store-path", "-emit-objc-header-path", "-j", "-output-file-map"}
    drop = {"-incremental", "-enable-batch-mode", "-serialize-diagnostics", "-parseable-output",
            "-emit-objc-header", "-g", "-enable-testing", "-Onone", "-wmo",
            "-whole-module-optimization"}
    for command in description["swiftCommands"].values():
        name = command.get("moduleName")
        if not name or not command.get("isLibrary"):
            continue
        flags, args, i = ["-I", command["importPath"]], command["otherArguments"], 0
        while i < len(args):
            a = args[i]
            if a in ("-Xcc", "-Xfrontend") and i + 1 < len(args):
                flags += args[i:i + 2]
                i += 2
                continue
            if a in drop_with_value:
                i += 2
                continue
            if a not in drop and not a.startswith("-j"):
                flags.append(a)
            i += 1
        sources = [s for s in command["sources"] if s.endswith(".swift")]
        out[name] = (sources, flags)
    return out


# ---- The check ------------------------------------------------------------------------------

def load_patterns():
    out = []
    with open(PATTERNS) as f:
        for line in f:
            line = line.rstrip("\n")
            if not line or line.startswith("#") or "\t" not in line:
                continue
            pattern, why = line.split("\t", 1)
            out.append((re.compile(pattern), why))
    return out


def code_lines(lines):
    """Each line without comments (string literals kept)."""
    out, block = [], 0
    for line in lines:
        s, i, instr = "", 0, False
        while i < len(line):
            c = line[i]
            if block:
                if line.startswith("*/", i):
                    block, i = block - 1, i + 2
                    continue
                if line.startswith("/*", i):
                    block, i = block + 1, i + 2
                    continue
                i += 1
                continue
            if instr:
                s += c
                if c == "\\" and i + 1 < len(line):
                    s, i = s + line[i + 1], i + 2
                    continue
                instr = c != '"'
                i += 1
                continue
            if c == '"':
                instr = True
            elif line.startswith("//", i):
                break
            elif line.startswith("/*", i):
                block, i = block + 1, i + 2
                continue
            s += c
            i += 1
        out.append(s)
    return out


def needs_text(needs):
    return " / ".join("%s %s" % (p, shown(needs[p])) for p in PLATFORMS if p in needs)


def check(modules, data, patterns, root, tests=()):
    """Findings as (path, line, text), and counts for the summary. Test modules (`tests`)
    are checked against the toolchain's data only: the pattern list is about what an app
    links, and tests may spawn processes."""
    findings = set()
    referenced = set()
    for module, (sources, flags) in sorted(modules.items()):
        docs = dump_ast(module, sources, flags)
        for doc in docs:
            path = doc["filename"]
            if not os.path.isabs(path):
                path = os.path.join(os.getcwd(), path)
            source = Source(path)
            rel = os.path.relpath(path, root)
            walker = Walker()
            walker.walk(doc.get("items", []), 0, dict(TARGETS))

            def report(offset, guaranteed, needs, what):
                line = source.line_of(offset)
                if source.waived(line):
                    return
                missing = {p: v for p, v in needs.items()
                           if p in source.active[line - 1] and v > guaranteed[p]}
                if missing:
                    findings.add((rel, line, "%s needs %s (deployment target %s)"
                                  % (what, needs_text(missing), needs_text(TARGETS))))

            for usr, offset, guaranteed in walker.refs:
                referenced.add(usr)
                needs = data.newer(data.by_usr.get(usr, {}))
                if needs:
                    report(offset, guaranteed, needs, demangle_usr(usr))
            for mangled, offset, guaranteed in walker.types:
                for body, (name, needs) in data.newer_types.items():
                    if body in mangled:
                        report(offset, guaranteed, needs, name)
            for name, offset in walker.imports:
                if name in data.newer_modules:
                    report(offset, dict(TARGETS), data.newer_modules[name], "import " + name)
            for i, text in enumerate(code_lines(source.text_lines), start=1):
                if module in tests or not source.active[i - 1] or source.waived(i):
                    continue
                for pattern, why in patterns:
                    if pattern.search(text):
                        findings.add((rel, i, why))
    return findings, referenced


def demangle_usr(usr):
    if not usr.startswith("s:"):
        return usr
    p = subprocess.run(["swift-demangle", "--compact", "--simplified", "$s" + usr[2:]],
                       capture_output=True, text=True)
    return p.stdout.strip() or usr


def run(modules, root, work, tests=()):
    data = Availability(work)
    findings, referenced = check(modules, data, load_patterns(), root, tests)
    toolchain = [u for u in referenced if u in data.known]
    annotated = sum(1 for u in toolchain if u in data.by_usr)
    return findings, (len(toolchain), annotated, len(data.by_usr), data.symbols)


PLANTED = r'''
internal import Synchronization
import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

final class Planted: @unchecked Sendable {
  let lock = Mutex<Int>(0)
}

func planted(_ fd: Int32, _ bytes: [UInt8], _ d: Duration) async -> Int {
  let text: String? = .init(validating: bytes, as: UTF8.self)
  _ = bytes.indices(where: { $0 == 0 })
  _ = d.attoseconds
  #if canImport(Glibc) || os(macOS)
  _ = fdatasync(fd)
  #endif
  let task = Task(executorPreference: nil) { 1 }
  _ = signal(SIGPIPE, SIG_IGN)
  return (text?.count ?? 0) + (await task.value)
}

@available(macOS 15, iOS 18, *)
func guardedByAttribute(_ bytes: [UInt8]) -> Bool { String(validating: bytes, as: UTF8.self) != nil }

func guardedLookAlikes(_ fd: Int32, _ bytes: [UInt8], _ d: Duration) -> Int {
  // fdatasync(fd), String(validating:) and indices(where:) in a comment are fine
  _ = "a string that mentions fdatasync is not a call"
  #if canImport(Glibc)
  _ = fdatasync(fd)
  #elseif os(Linux)
  _ = malloc_trim(0)
  #endif
  #if !os(Linux) && !canImport(Glibc)
  _ = fsync(fd)
  #else
  _ = fdatasync(fd)
  #endif
  if #available(macOS 15, iOS 18, *) {
    _ = bytes.indices(where: { $0 == 0 })
    _ = d.attoseconds
  }
  guard #available(macOS 15, iOS 18, *) else { return 0 }
  _ = String(validating: bytes, as: UTF8.self)
  _ = Int(d.components.attoseconds)
  return 1
}
'''
# Each planted use, by line of PLANTED (1-based, the text starts with a newline).
EXPECTED = {
    2: "import Synchronization",
    11: "Mutex",
    15: "(validating:as:)",
    16: "indices(where:)",
    17: "attoseconds",
    19: "fdatasync",
    21: "executorPreference",
    22: "signal",
}


def self_test():
    with tempfile.TemporaryDirectory() as work:
        path = os.path.join(work, "Planted.swift")
        with open(path, "w") as f:
            f.write(PLANTED)
        modules = {"Planted": ([path], ["-parse-as-library", "-swift-version", "6"])}
        findings, _ = run(modules, work, work)
    by_line = {}
    for _, line, text in findings:
        by_line.setdefault(line, []).append(text)
    problems = []
    for line, word in EXPECTED.items():
        if not any(word in t for t in by_line.get(line, [])):
            problems.append("line %d (%s) not reported" % (line, word))
    for line in sorted(set(by_line) - set(EXPECTED)):
        problems.append("line %d reported: %s" % (line, "; ".join(by_line[line])))
    if problems:
        print("availability self-test FAILED:\n  " + "\n  ".join(problems))
        for line in sorted(by_line):
            print("  %d: %s" % (line, "; ".join(by_line[line])))
        sys.exit(1)
    print("availability self-test: the %d planted uses are reported with file:line (import "
          "Synchronization, Mutex, String?.init(validating:as:), indices(where:), "
          "Duration.attoseconds, fdatasync in a mixed #if, Task(executorPreference:), "
          "signal); uses behind #available, guard #available, @available, Linux-only #if "
          "branches and comments are not" % len(EXPECTED))


def main(argv):
    if argv[:1] == ["--self-test"]:
        self_test()
        return
    build = os.path.join(ROOT, ".build", "debug")
    if argv[:1] == ["--build"]:
        build, argv = argv[1], argv[2:]
    with_tests = argv[:1] == ["--tests"]
    if with_tests:
        argv = argv[1:]
    os.chdir(ROOT)
    modules = build_args(build)
    sources_dir = os.path.join(ROOT, "Sources")
    wanted = [os.path.basename(os.path.normpath(a)) for a in argv] or sorted(
        m for m in modules if os.path.isdir(os.path.join(sources_dir, m)))
    tests = sorted(m for m in modules if with_tests
                   and os.path.isdir(os.path.join(ROOT, "Tests", m)))
    wanted += tests
    missing = [m for m in wanted if m not in modules]
    if missing:
        sys.exit("availability: %s not in %s/description.json; run swift build first"
                 % (", ".join(missing), build))
    with tempfile.TemporaryDirectory() as work:
        findings, counts = run({m: modules[m] for m in wanted}, ROOT, work, tests)
    for rel, line, text in sorted(findings):
        print("%s:%d: %s" % (rel, line, text))
    referenced, annotated, all_annotated, symbols = counts
    if findings:
        print("\n%d use(s) of APIs unavailable in an Apple build of the libraries" % len(findings))
        sys.exit(1)
    print("availability: %s reference %d symbols of the toolchain's modules, %d of them with "
          "Apple availability in its symbol graphs (which annotate %d of %d symbols): nothing "
          "newer than %s outside #available, and no listed pattern outside Linux-only code"
          % (", ".join(wanted), referenced, annotated, all_annotated, symbols,
             needs_text(TARGETS)))


if __name__ == "__main__":
    main(sys.argv[1:])
