#!/usr/bin/env python3
"""The public API of a crate, one item per line, from nightly rustdoc's JSON output.

    scripts/public-api.py CRATE_JSON > CRATE/public-api.txt

Lists every public module, type, trait, function, constant, static and macro by path, with
struct fields, enum variants, and the public methods and trait impls of each type, functions
with their signatures rendered compactly. Auto traits and blanket impls are left out (they
change with the compiler, not with us). `make lint` regenerates the listing of each published
crate and fails if it differs from the checked-in one, so an API change shows in review as a
diff of that file (update it with `make public-api`).
"""
import json
import sys


def main(path):
    d = json.load(open(path))
    index = d["index"]
    paths = d["paths"]
    out = set()

    def name_of(id_):
        p = paths.get(str(id_))
        return "::".join(p["path"]) if p else index.get(str(id_), {}).get("name", "?")

    def const_arg(c):
        """A const generic argument: its expression (`SAMPLE_TYPE`, `{ A | B }`) as written."""
        return c.get("expr", "") if isinstance(c, dict) else str(c or "")

    def ty(t):
        if t is None:
            return "()"
        if not isinstance(t, dict):
            return str(t)
        (k, v), = t.items()
        if k == "resolved_path":
            args = v.get("args")
            s = v.get("path") or v.get("name") or name_of(v.get("id"))
            s = s.split("::")[-1]
            if args and "angle_bracketed" in args:
                a = [ty(x.get("type")) if "type" in x else (x.get("lifetime") or const_arg(x.get("const")))
                     for x in args["angle_bracketed"]["args"]]
                a += [f"{c['name']}={ty(c['binding'].get('equality', {}).get('type'))}"
                      for c in args["angle_bracketed"].get("constraints", []) if "binding" in c]
                if a:
                    s += "<" + ", ".join(a) + ">"
            return s
        if k == "primitive":
            return v
        if k == "generic":
            return v
        if k == "borrowed_ref":
            lt = (v.get("lifetime") or "") + " " if v.get("lifetime") else ""
            return "&" + lt + ("mut " if v.get("is_mutable") else "") + ty(v["type"])
        if k == "raw_pointer":
            return ("*mut " if v.get("is_mutable") else "*const ") + ty(v["type"])
        if k == "slice":
            return "[" + ty(v) + "]"
        if k == "array":
            return "[" + ty(v["type"]) + "; " + str(v["len"]) + "]"
        if k == "tuple":
            return "(" + ", ".join(ty(x) for x in v) + ")"
        if k == "impl_trait":
            return "impl " + " + ".join(b.get("trait_bound", {}).get("trait", {}).get("path", "?") for b in v)
        if k == "qualified_path":
            return ty(v["self_type"]) + "::" + v["name"]
        if k == "function_pointer":
            return "fn(..)"
        if k == "dyn_trait":
            return "dyn " + " + ".join(x["trait"]["path"] for x in v["traits"])
        return k

    def sig(f):
        s = f["sig"] if "sig" in f else f["decl"]
        ins = ", ".join(f"{n}: {ty(t)}" for n, t in s["inputs"])
        o = s.get("output")
        h = f.get("header", {})
        q = ("const " if h.get("is_const") else "") + ("unsafe " if h.get("is_unsafe") else "")
        return q, f"({ins})" + (f" -> {ty(o)}" if o else "")

    def walk(mod_id, prefix):
        m = index[str(mod_id)]
        for cid in m["inner"]["module"]["items"]:
            it = index.get(str(cid))
            if not it or it.get("visibility") != "public":
                continue
            item(cid, it, prefix)

    def item(cid, it, prefix, name=None):
        (kind, inner), = it["inner"].items()
        name = name or it.get("name")
        p = f"{prefix}::{name}" if name else prefix
        if True:
            if kind == "module":
                out.add(f"mod {p}")
                walk(cid, p)
            elif kind == "use":
                target = index.get(str(inner.get("id")))
                if target is None:
                    out.add(f"pub use {prefix}::{inner['name']} = {inner.get('source')}")
                elif inner.get("is_glob"):
                    walk(inner["id"], prefix)
                else:
                    item(inner["id"], target, prefix, inner["name"])
            elif kind == "function":
                q, s = sig(inner)
                out.add(f"{q}fn {p}{s}")
            elif kind in ("struct", "enum", "union", "trait"):
                out.add(f"{kind} {p}")
                if kind == "struct":
                    k = inner["kind"]
                    fields = k.get("plain", {}).get("fields", []) if isinstance(k, dict) else []
                    if isinstance(k, dict) and "tuple" in k:
                        fields = [x for x in k["tuple"] if x is not None]
                    for fid in fields:
                        fi = index.get(str(fid))
                        if fi and fi.get("visibility") == "public":
                            out.add(f"field {p}.{fi['name']}: {ty(fi['inner']['struct_field'])}")
                if kind == "enum":
                    attrs = " ".join(str(a) for a in it.get("attrs", []))
                    if "non_exhaustive" in attrs:
                        out.add(f"#[non_exhaustive] enum {p}")
                    for vid in inner["variants"]:
                        out.add(f"variant {p}::{index[str(vid)]['name']}")
                if kind == "trait":
                    for iid in inner["items"]:
                        ti = index[str(iid)]
                        if "function" in ti["inner"]:
                            q, s = sig(ti["inner"]["function"])
                            out.add(f"trait fn {p}::{ti['name']}{s}")
                for iid in inner.get("impls", []):
                    im = index.get(str(iid), {}).get("inner", {}).get("impl")
                    if not im or im.get("is_synthetic") or im.get("blanket_impl"):
                        continue
                    tr = im.get("trait")
                    if tr:
                        out.add(f"impl {tr['path']} for {p}")
                        continue
                    for mid in im["items"]:
                        mi = index.get(str(mid))
                        if mi and mi.get("visibility") == "public":
                            (mk, minner), = mi["inner"].items()
                            if mk == "function":
                                q, s = sig(minner)
                                out.add(f"{q}fn {p}::{mi['name']}{s}")
                            elif mk == "assoc_const":
                                out.add(f"const {p}::{mi['name']}: {ty(minner['type'])}")
            elif kind in ("constant", "static"):
                t = inner.get("type")
                out.add(f"{kind} {p}: {ty(t)}")
            elif kind in ("type_alias", "macro", "proc_macro"):
                out.add(f"{kind} {p}")

    root = d["root"]
    walk(root, index[str(root)]["name"])
    for line in sorted(out):
        print(line)


if __name__ == "__main__":
    main(sys.argv[1])
