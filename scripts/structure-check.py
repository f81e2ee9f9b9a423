#!/usr/bin/env python3
"""The shape of the code, checked in `make test` (issue 50): what no compiler or linter says.

1. No two files of a crate import each other (directly or around a longer loop): each file's
   `use` items and inline `crate::`/`super::`/`self::` paths are resolved to the file that
   defines what they name (through the re-exports of `lib.rs`/`mod.rs`), and the graph of
   files must have no cycle. A module root's `mod` lines and its re-exports of its own children
   are the module tree, not imports; test code (`#[cfg(test)]` modules, `*_tests.rs`, `tests/`)
   is left out. A cycle that is there by design is listed in ALLOWED_CYCLES with the reason.
2. No public item under two paths, and no two public items of one crate with one name: read
   from the checked-in public-API listings (`FOLDER/public-api.txt`, kept current by `make
   public-api-check` in CI). Constants in a namespace module of constants (`types::MMAP`,
   `sample_type::IP`, ...) may share a name with one in another such module; nothing else may.
3. No file over 800 lines outside tests and the simulator's engine; no function over 80 lines
   in the library code of core, data and linux (over 60 in the recorder, issue 53).
4. The "what you have -> what to call" table, one row per read tier, is the same in every
   crate's top doc and in README.md (TIER_TABLE_IN): the one way each tier is spelled.

Prints each finding and exits 1 if there is any; prints one summary line otherwise.
"""
import os
import re
import sys
from collections import defaultdict

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
# crate folder -> (source root, crate name as used in listings)
CRATES = {
    "core": "perfring",
    "data": "perfring_data",
    "linux": "perfring_linux",
    "record": "perfring_record",
    "sim": "perfring_sim",
}
LISTED = ["core", "data", "linux"]
# Cycles allowed by design: frozenset of files (relative to ROOT) -> why.
ALLOWED_CYCLES = {
    frozenset({"core/src/fences.rs", "core/src/loom.rs"}): (
        "fences.rs names the orderings and calls loom's fence; loom.rs's shim takes its "
        "orderings from fences.rs (see both module docs)"
    ),
}
MAX_FILE_LINES = 800
FILE_EXEMPT = {"sim/src/engine.rs"}
MAX_FN_LINES = {"core": 80, "data": 80, "linux": 80, "record": 60}

findings = []


def strip_comments(text):
    """The code without comments and string/char literals (kept as empty quotes), line
    structure preserved."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
        elif text.startswith("/*", i):
            depth, i = 1, i + 2
            while i < n and depth:
                if text.startswith("/*", i):
                    depth, i = depth + 1, i + 2
                elif text.startswith("*/", i):
                    depth, i = depth - 1, i + 2
                else:
                    if text[i] == "\n":
                        out.append("\n")
                    i += 1
        elif c == '"' or (c == "r" and re.match(r'r#*"', text[i:i + 10]) and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_"))):
            if c == "r":
                m = re.match(r'r(#*)"', text[i:])
                end = '"' + m.group(1)
                j = text.find(end, i + len(m.group(0)))
                j = n if j < 0 else j + len(end)
            else:
                j = i + 1
                while j < n and text[j] != '"':
                    j += 2 if text[j] == "\\" else 1
                j += 1
            out.append('""' + "\n" * text.count("\n", i, j))
            i = j
        elif c == "'" and re.match(r"'(\\.|[^\\'])'", text[i:i + 12]) or re.match(r"'\\u\{[0-9a-fA-F]+\}'", text[i:i + 12]):
            m = re.match(r"'(\\u\{[0-9a-fA-F]+\}|\\.|[^\\'])'", text[i:])
            out.append("' '")
            i += len(m.group(0))
        else:
            out.append(c)
            i += 1
    return "".join(out)


def without_test_modules(code):
    """`code` with every `#[cfg(test)]`-gated item (a `mod tests { ... }` block) blanked."""
    out = code
    for m in list(re.finditer(r"#\[cfg\([^\]]*\btest\b[^\]]*\)\]\s*(pub(\([^)]*\))?\s*)?mod\s+\w+\s*\{", code)):
        start = m.start()
        depth, i = 0, m.end() - 1
        while i < len(code):
            if code[i] == "{":
                depth += 1
            elif code[i] == "}":
                depth -= 1
                if depth == 0:
                    break
            i += 1
        blank = "".join(ch if ch == "\n" else " " for ch in code[start:i + 1])
        out = out[:start] + blank + out[i + 1:]
    return out


class Crate:
    def __init__(self, folder):
        self.folder = folder
        self.src = os.path.join(ROOT, folder, "src")
        self.files = {}  # module path tuple -> file (relative to ROOT)
        self.code = {}  # file -> code without comments or tests
        self.test_files = set()
        roots = [p for p in ("lib.rs", "main.rs") if os.path.exists(os.path.join(self.src, p))]
        for r in roots:
            self.walk((), os.path.join(self.src, r), r == "lib.rs" or len(roots) == 1)

    def walk(self, path, file, is_root):
        rel = os.path.relpath(file, ROOT)
        if path in self.files:
            return
        self.files[path] = rel
        text = strip_comments(open(file).read())
        gated = {
            m.group(2)
            for m in re.finditer(r"#\[cfg\(([^\]]*\btest\b[^\]]*)\)\]\s*(?:#\[[^\]]*\]\s*)*mod\s+(\w+)\s*;", text)
        }
        self.code[rel] = without_test_modules(text)
        base = os.path.dirname(file)
        if not (is_root or os.path.basename(file) == "mod.rs"):
            base = os.path.join(base, os.path.splitext(os.path.basename(file))[0])
        for m in re.finditer(r"(?m)^\s*(?:#\[[^\]]*\]\s*)*(?:pub(?:\([^)]*\))?\s+)?mod\s+(\w+)\s*;", text):
            name = m.group(1)
            for cand in (os.path.join(base, name + ".rs"), os.path.join(base, name, "mod.rs")):
                if os.path.exists(cand):
                    if name in gated or name.endswith("_tests") or name == "tests":
                        self.test_files.add(os.path.relpath(cand, ROOT))
                    else:
                        self.walk(path + (name,), cand, False)
                    break

    def module_of(self, file):
        for p, f in self.files.items():
            if f == file:
                return p
        return None

    def is_root(self, file):
        b = os.path.basename(file)
        return b in ("lib.rs", "main.rs", "mod.rs")

    def reexports(self, file):
        """name -> child module path component, for `pub use child::...` lines of a root."""
        out = {}
        code = self.code[file]
        for m in re.finditer(r"pub(?:\([^)]*\))?\s+use\s+([^;]+);", code):
            for segs, alias in use_paths(m.group(1)):
                if len(segs) > 1 and segs[0] not in ("crate", "super", "self"):
                    out[alias or segs[-1]] = segs[0]
        return out

    def resolve(self, mod_path, segments):
        """The file that defines what `segments` (after a module path) names."""
        path = tuple(mod_path)
        i = 0
        while i < len(segments) and path + (segments[i],) in self.files:
            path = path + (segments[i],)
            i += 1
        file = self.files.get(path)
        if file is None:
            return None
        if i < len(segments) and self.is_root(file):
            child = self.reexports(file).get(segments[i])
            if child and path + (child,) in self.files:
                return self.resolve(path, [child] + segments[i + 1:] if child != segments[i] else segments[i:])
        return file


def imports(crate, file):
    """Files `file` refers to (by `use` or by path), as (file, how)."""
    mod_path = crate.module_of(file)
    code = crate.code[file]
    is_root = crate.is_root(file)
    out = set()
    # `use` trees.
    for m in re.finditer(r"(?m)^[ \t]*(pub(?:\([^)]*\))?\s+)?use\s+([^;]+);", code):
        public, tree = m.group(1), m.group(2)
        for path, _ in use_paths(tree):
            target = resolve_path(crate, mod_path, path, is_root and public is not None)
            if target:
                out.add(target)
    # Inline paths outside `use` items.
    body = re.sub(r"(?m)^[ \t]*(pub(?:\([^)]*\))?\s+)?use\s+[^;]+;", "", code)
    for m in re.finditer(r"\b((?:crate|super|self)(?:::\w+)+)", body):
        target = resolve_path(crate, mod_path, m.group(1).split("::"), False)
        if target:
            out.add(target)
    out.discard(file)
    return out


def use_paths(tree):
    """Every full path of a `use` tree: (segments, alias or None)."""
    tree = re.sub(r"\s+as\s+", "@", tree)
    tree = re.sub(r"\s+", "", tree)
    paths = []

    def go(prefix, t):
        depth, parts, cur = 0, [], ""
        for ch in t:
            if ch == "{":
                depth += 1
            elif ch == "}":
                depth -= 1
            if ch == "," and depth == 0:
                parts.append(cur)
                cur = ""
            else:
                cur += ch
        parts.append(cur)
        for p in parts:
            if not p:
                continue
            m = re.match(r"^(.*?)::\{(.*)\}$", p)
            if m:
                go(prefix + m.group(1).split("::"), m.group(2))
            elif p.startswith("{") and p.endswith("}"):
                go(prefix, p[1:-1])
            else:
                segs = p.split("::")
                alias = None
                if "@" in segs[-1]:
                    segs[-1], alias = segs[-1].split("@", 1)
                paths.append((prefix + segs, alias))

    go([], tree)
    return paths


def resolve_path(crate, mod_path, segs, root_reexport):
    if not segs:
        return None
    if segs[0] == "crate":
        base, rest = (), segs[1:]
    elif segs[0] == "super":
        base = tuple(mod_path)
        rest = segs
        while rest and rest[0] == "super":
            base = base[:-1]
            rest = rest[1:]
    elif segs[0] == "self":
        base, rest = tuple(mod_path), segs[1:]
    else:
        # A path relative to this module: a child module (`child::Item`).
        base, rest = tuple(mod_path), segs
        if (base + (rest[0],)) not in crate.files:
            return None
    if root_reexport and rest and (tuple(mod_path) + (rest[0],)) in crate.files and base == tuple(mod_path):
        return None  # a module root re-exporting its own child: the module tree
    if rest == ["*"] or not rest:
        return crate.files.get(base)
    return crate.resolve(base, [s for s in rest if s != "*"])


def check_cycles():
    for folder in CRATES:
        if not os.path.isdir(os.path.join(ROOT, folder, "src")):
            continue
        crate = Crate(folder)
        graph = {f: imports(crate, f) for f in crate.code if f not in crate.test_files}
        for scc in sccs(graph):
            if len(scc) < 2:
                continue
            if frozenset(scc) in ALLOWED_CYCLES:
                continue
            edges = sorted(f"{a} -> {b}" for a in scc for b in graph[a] if b in scc)
            findings.append(f"import cycle in {folder}: " + "; ".join(edges))


def sccs(graph):
    index, low, stack, on, out, counter = {}, {}, [], set(), [], [0]
    sys.setrecursionlimit(10000)

    def strong(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in graph.get(v, ()):
            if w not in graph:
                continue
            if w not in index:
                strong(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            out.append(comp)

    for v in graph:
        if v not in index:
            strong(v)
    return out


TOP_KINDS = ("struct", "enum", "trait", "fn", "type", "mod", "macro", "static", "constant", "union")


def check_listings():
    for folder in LISTED:
        listing = os.path.join(ROOT, folder, "public-api.txt")
        if not os.path.exists(listing):
            findings.append(f"{folder}/public-api.txt is missing: run make public-api")
            continue
        by_name = defaultdict(set)
        by_sig = defaultdict(set)
        for line in open(listing):
            line = line.strip()
            line = re.sub(r"^#\[[^\]]*\]\s*", "", line)
            m = re.match(r"^(?:pub\s+)?(?:const\s+|unsafe\s+|async\s+)*(\w+)\s+([\w:]+)(.*)$", line)
            if not m:
                continue
            kind, path, rest = m.groups()
            if kind not in TOP_KINDS:
                continue
            path = path.rstrip(":")
            segs = path.split("::")
            name = segs[-1]
            parent = segs[-2] if len(segs) > 1 else ""
            if parent[:1].isupper():
                continue  # an associated item: it follows its type
            by_name[(name, kind == "constant")].add((path, parent))
            if kind != "constant":
                by_sig[(kind, name, rest)].add(path)
        for (kind, name, rest), paths in sorted(by_sig.items()):
            if len(paths) > 1:
                findings.append(f"{folder}: {kind} {name} listed under {len(paths)} paths: " + ", ".join(sorted(paths)))
        for (name, is_const), entries in sorted(by_name.items()):
            if len(entries) < 2:
                continue
            if is_const and all(p and p[0].islower() and p != CRATES[folder] for _, p in entries):
                continue  # constants of namespace modules (types::MMAP beside attr_flags::MMAP)
            paths = sorted(p for p, _ in entries)
            if len({tuple(p.split("::")[:-1]) for p in paths}) > 1:
                findings.append(f"{folder}: the name {name} is used by {len(paths)} public items: " + ", ".join(paths))


def check_sizes():
    for folder in CRATES:
        src = os.path.join(ROOT, folder, "src")
        if not os.path.isdir(src):
            continue
        crate = Crate(folder)
        for dirpath, _, names in os.walk(src):
            for name in names:
                if not name.endswith(".rs"):
                    continue
                path = os.path.join(dirpath, name)
                rel = os.path.relpath(path, ROOT)
                if rel in crate.test_files or name.endswith("_tests.rs") or rel in FILE_EXEMPT:
                    continue
                text = open(path).read()
                lines = text.count("\n")
                if lines > MAX_FILE_LINES:
                    findings.append(f"{rel}: {lines} lines (at most {MAX_FILE_LINES} outside tests)")
                limit = MAX_FN_LINES.get(folder)
                if limit:
                    check_functions(rel, without_test_modules(strip_comments(text)), limit)


def check_functions(rel, code, limit):
    lines = code.split("\n")
    for m in re.finditer(r"(?m)^[ \t]*(?:pub(?:\([^)]*\))?\s+)?(?:const\s+)?(?:unsafe\s+)?(?:extern\s+\"\"\s+)?fn\s+(\w+)[^;{]*\{", code):
        start_line = code.count("\n", 0, m.start())
        depth, i = 0, m.end() - 1
        while i < len(code):
            if code[i] == "{":
                depth += 1
            elif code[i] == "}":
                depth -= 1
                if depth == 0:
                    break
            i += 1
        end_line = code.count("\n", 0, i)
        body = [l for l in lines[start_line:end_line + 1] if l.strip()]
        if len(body) > limit:
            findings.append(f"{rel}:{start_line + 1}: fn {m.group(1)} has {len(body)} lines (at most {limit})")


# Files whose docs carry the tier table; the first is the reference.
TIER_TABLE_IN = ["core/src/lib.rs", "core/src/record/mod.rs", "data/README.md", "linux/src/lib.rs", "README.md"]
TIER_TABLE_HEAD = "| what you have → what to call |"


def tier_table(rel):
    """The table's lines in `rel` (doc-comment markers removed), or None."""
    lines = [re.sub(r"^\s*//! ?", "", l) for l in open(os.path.join(ROOT, rel)).read().split("\n")]
    for i, line in enumerate(lines):
        if line.startswith(TIER_TABLE_HEAD):
            end = i
            while end < len(lines) and lines[end].startswith("|"):
                end += 1
            return lines[i:end]
    return None


def check_tier_tables():
    reference = tier_table(TIER_TABLE_IN[0])
    if reference is None:
        findings.append(f"{TIER_TABLE_IN[0]}: no tier table (a line starting {TIER_TABLE_HEAD!r})")
        return
    for rel in TIER_TABLE_IN[1:]:
        table = tier_table(rel)
        if table != reference:
            what = "has no tier table" if table is None else "has a tier table that differs from"
            findings.append(f"{rel} {what} {TIER_TABLE_IN[0]}'s")


def selftest():
    """Each check fails on a planted defect: a scratch tree with an import cycle, an item under
    two paths, a name used twice, an over-long file and function, and a tier table that
    differs. Exits 1 if a check misses its defect."""
    import tempfile
    global ROOT
    want = {
        "cycle": "import cycle in core",
        "two paths": "struct Thing listed under 2 paths",
        "clash": "the name Error is used by 2 public items",
        "long file": "core/src/b.rs: 801 lines",
        "long fn": "fn long has 82 lines",
        "tier table": "linux/src/lib.rs has a tier table that differs",
    }
    with tempfile.TemporaryDirectory() as tmp:
        def put(rel, text):
            os.makedirs(os.path.dirname(os.path.join(tmp, rel)), exist_ok=True)
            open(os.path.join(tmp, rel), "w").write(text)
        table = "\n".join(["//! " + TIER_TABLE_HEAD + " a |", "//! |---|---|", "//! | x | `.y()` |"])
        put("core/src/lib.rs", table + "\nmod a;\nmod b;\n")
        put("core/src/a.rs", "use crate::b::B;\npub struct A;\nfn long() {\n" + "    let _ = 1;\n" * 80 + "}\n")
        put("core/src/b.rs", "use crate::a::A;\npub struct B;\n" + "\n" * 799)
        put("core/src/record/mod.rs", table + "\n")
        put("data/README.md", table.replace("//! ", "") + "\n")
        put("linux/src/lib.rs", table.replace("`.y()`", "`.z()`") + "\n")
        put("README.md", table.replace("//! ", "") + "\n")
        put("core/public-api.txt", "struct perfring::Thing\nstruct perfring::x::Thing\nenum perfring::x::Error\nenum perfring::y::Error\n")
        put("data/public-api.txt", "")
        put("linux/public-api.txt", "")
        ROOT = tmp
        check_cycles()
        check_listings()
        check_sizes()
        check_tier_tables()
    missed = [k for k, w in want.items() if not any(w in f for f in findings)]
    for k in missed:
        print(f"structure-check --selftest: the {k} check missed its planted defect ({want[k]!r})")
    if missed:
        print("findings were:\n  " + "\n  ".join(findings))
        sys.exit(1)
    print(f"structure-check --selftest: each of the {len(want)} checks caught its planted defect")


def main():
    if sys.argv[1:] == ["--selftest"]:
        selftest()
        return
    check_cycles()
    check_listings()
    check_sizes()
    check_tier_tables()
    for f in findings:
        print(f)
    if findings:
        print(f"structure-check: {len(findings)} finding(s)")
        sys.exit(1)
    print("structure-check: no import cycle, no item under two paths or clashing name, no file or function over its limit, one tier table")


if __name__ == "__main__":
    main()
