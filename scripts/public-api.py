#!/usr/bin/env python3
"""The public API of a crate, one item per line, from nightly rustdoc's JSON output.

    scripts/public-api.py CRATE_JSON > CRATE/public-api.txt

Lists every public module, type, trait, function, constant, static and macro by path, with
struct fields, enum variants, and the public methods and trait impls of each type, functions
with their signatures: generic parameters with their bounds and where-clauses, `impl Trait`
arguments and results with their generic arguments (`impl FnMut(&RawRecord<'_>)`,
`impl Iterator<Item = u64>`), trait impls with the generics and bounds of the impl
(`impl<P: Send> Sync for CpuLocal<P>`), so that a change of a closure's signature or of a bound
shows in the diff. Auto traits and blanket impls are left out (they
change with the compiler, not with us). `make lint` regenerates the listing of each published
crate and fails if it differs from the checked-in one, so an API change shows in review as a
diff of that file (update it with `make public-api`).
"""
import json
import re
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

    def args(a):
        """Generic arguments of a path: `<T, 'a, N, Item = U, X: Bound>` or `(A, B) -> C`."""
        if not a:
            return ""
        if "parenthesized" in a:
            p = a["parenthesized"]
            out = p.get("output")
            return "(" + ", ".join(ty(x) for x in p["inputs"]) + ")" + (f" -> {ty(out)}" if out else "")
        if "angle_bracketed" not in a:
            return ""
        ab = a["angle_bracketed"]
        xs = []
        for x in ab["args"]:
            if not isinstance(x, dict):
                xs.append("_")
            elif "type" in x:
                xs.append(ty(x["type"]))
            elif "lifetime" in x:
                xs.append(x["lifetime"])
            else:
                xs.append(const_arg(x.get("const")))
        for c in ab.get("constraints", []):
            b = c.get("binding", {})
            name = c["name"] + args(c.get("args"))
            if "equality" in b:
                term = b["equality"]
                xs.append(f"{name} = " + (ty(term["type"]) if "type" in term else const_arg(term.get("constant"))))
            elif "constraint" in b:
                xs.append(f"{name}: {bounds(b['constraint'])}")
        return "<" + ", ".join(xs) + ">" if xs else ""

    def path(p):
        s = p.get("path") or p.get("name") or name_of(p.get("id"))
        return s.split("::")[-1] + args(p.get("args"))

    def hrtb(gp):
        return "for<" + ", ".join(g["name"] for g in gp) + "> " if gp else ""

    def bound(b):
        if "trait_bound" in b:
            tb = b["trait_bound"]
            m = {"maybe": "?", "maybe_const": "~const "}.get(tb.get("modifier"), "")
            return m + hrtb(tb.get("generic_params")) + path(tb["trait"])
        if "outlives" in b:
            return b["outlives"]
        if "use" in b:
            return "use<" + ", ".join(u if isinstance(u, str) else next(iter(u.values())) for u in b["use"]) + ">"
        return "?"

    def bounds(bs):
        return " + ".join(bound(b) for b in bs)

    def ty(t):
        if t is None:
            return "()"
        if not isinstance(t, dict):
            return str(t)
        (k, v), = t.items()
        if k == "resolved_path":
            return path(v)
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
            return "(" + ", ".join(ty(x) for x in v) + ("," if len(v) == 1 else "") + ")"
        if k == "impl_trait":
            return "impl " + bounds(v)
        if k == "qualified_path":
            tr = v.get("trait")
            base = f"<{ty(v['self_type'])} as {path(tr)}>" if tr else ty(v["self_type"])
            return base + "::" + v["name"] + args(v.get("args"))
        if k == "function_pointer":
            fs = v["sig"]
            h = v.get("header", {})
            q = "unsafe " if h.get("is_unsafe") else ""
            o = fs.get("output")
            return (hrtb(v.get("generic_params")) + q + "fn(" + ", ".join(ty(x) for _, x in fs["inputs"]) + ")"
                    + (f" -> {ty(o)}" if o else ""))
        if k == "dyn_trait":
            parts = [hrtb(x.get("generic_params")) + path(x["trait"]) for x in v["traits"]]
            if v.get("lifetime"):
                parts.append(v["lifetime"])
            return "dyn " + " + ".join(parts)
        return k

    def generics(g):
        """`<T: Bound, 'a, const N: usize>` and ` where ...` of an item (synthetic `impl Trait`
        parameters are shown in the signature instead)."""
        if not g:
            return "", ""
        ps = []
        for gp in g.get("params", []):
            kind = gp["kind"]
            if "lifetime" in kind:
                o = kind["lifetime"].get("outlives") or []
                ps.append(gp["name"] + (": " + " + ".join(o) if o else ""))
            elif "type" in kind:
                tk = kind["type"]
                if tk.get("is_synthetic"):
                    continue
                p = gp["name"]
                if tk.get("bounds"):
                    p += ": " + bounds(tk["bounds"])
                if tk.get("default"):
                    p += " = " + ty(tk["default"])
                ps.append(p)
            elif "const" in kind:
                ck = kind["const"]
                p = f"const {gp['name']}: {ty(ck['type'])}"
                if ck.get("default"):
                    p += f" = {ck['default']}"
                ps.append(p)
        ws = []
        for w in g.get("where_predicates", []):
            if "bound_predicate" in w:
                bp = w["bound_predicate"]
                ws.append(hrtb(bp.get("generic_params")) + ty(bp["type"]) + ": " + bounds(bp["bounds"]))
            elif "lifetime_predicate" in w:
                lp = w["lifetime_predicate"]
                ws.append(lp["lifetime"] + ": " + " + ".join(lp["outlives"]))
            elif "eq_predicate" in w:
                ep = w["eq_predicate"]
                rhs = ep["rhs"]
                ws.append(ty(ep["lhs"]) + " = " + (ty(rhs["type"]) if "type" in rhs else const_arg(rhs.get("constant"))))
        return ("<" + ", ".join(ps) + ">" if ps else ""), (" where " + ", ".join(ws) if ws else "")

    def sig(f):
        s = f["sig"] if "sig" in f else f["decl"]
        ins = ", ".join(f"{n}: {ty(t)}" for n, t in s["inputs"])
        o = s.get("output")
        h = f.get("header", {})
        q = ("const " if h.get("is_const") else "") + ("unsafe " if h.get("is_unsafe") else "")
        gp, wh = generics(f.get("generics"))
        return q, f"{gp}({ins})" + (f" -> {ty(o)}" if o else "") + wh

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
                gp, wh = generics(inner.get("generics"))
                sup = ": " + bounds(inner["bounds"]) if kind == "trait" and inner.get("bounds") else ""
                unsafe = "unsafe " if inner.get("is_unsafe") else ""
                out.add(f"{unsafe}{kind} {p}{gp}{sup}{wh}")
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
                        elif "assoc_type" in ti["inner"]:
                            at = ti["inner"]["assoc_type"]
                            b = ": " + bounds(at["bounds"]) if at.get("bounds") else ""
                            out.add(f"trait type {p}::{ti['name']}{b}")
                        elif "assoc_const" in ti["inner"]:
                            out.add(f"trait const {p}::{ti['name']}: {ty(ti['inner']['assoc_const']['type'])}")
                for iid in inner.get("impls", []):
                    im = index.get(str(iid), {}).get("inner", {}).get("impl")
                    if not im or im.get("is_synthetic") or im.get("blanket_impl"):
                        continue
                    tr = im.get("trait")
                    gp, wh = generics(im.get("generics"))
                    # The impl's header where it says more than the type's name: bounds, a
                    # where-clause, arguments other than the impl's own parameters
                    # (`impl<M: RingMemory> Producer<M, NoHooks>`, `impl<P: Send> Sync for
                    # CpuLocal<P>`), a negative impl.
                    elided = re.sub(r"<'_>|'_, ", "", ty(im["for"]))  # `Mapping<'_>`: no more than `Mapping`
                    plain = not wh and not im.get("is_negative") and elided == p.split("::")[-1] + (
                        "<" + ", ".join(g["name"] for g in im["generics"]["params"]) + ">" if im["generics"]["params"] else "")
                    plain = plain and all(not g["kind"].get("type", {}).get("bounds") and not g["kind"].get("lifetime", {}).get("outlives")
                                          for g in im["generics"]["params"])
                    if tr:
                        neg = "!" if im.get("is_negative") else ""
                        out.add(f"impl {neg}{tr['path']} for {p}" if plain else
                                f"impl{gp} {neg}{path(tr)} for {ty(im['for'])}{wh}   [{p}]")
                        continue
                    head = "" if plain else f"   [impl{gp} {ty(im['for'])}{wh}]"
                    for mid in im["items"]:
                        mi = index.get(str(mid))
                        if mi and mi.get("visibility") == "public":
                            (mk, minner), = mi["inner"].items()
                            if mk == "function":
                                q, s = sig(minner)
                                out.add(f"{q}fn {p}::{mi['name']}{s}{head}")
                            elif mk == "assoc_const":
                                out.add(f"const {p}::{mi['name']}: {ty(minner['type'])}{head}")
            elif kind in ("constant", "static"):
                t = inner.get("type")
                out.add(f"{kind} {p}: {ty(t)}")
            elif kind == "type_alias":
                gp, wh = generics(inner.get("generics"))
                out.add(f"type_alias {p}{gp} = {ty(inner.get('type'))}{wh}")
            elif kind in ("macro", "proc_macro"):
                out.add(f"{kind} {p}")

    root = d["root"]
    walk(root, index[str(root)]["name"])
    for line in sorted(out):
        print(line)


if __name__ == "__main__":
    main(sys.argv[1])
