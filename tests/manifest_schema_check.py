#!/usr/bin/python3
"""Validate golden/manifest.json against specs/golden-manifest.schema.json (Debian's
python3-jsonschema), plus what a schema cannot say: every flag a case uses is described once in
notes.flags, every bug class names described flags, every file is hashed, and result_notes explain
each non-'valid' result.  Prints SKIPPED (exit 0) when jsonschema is not importable."""
import json
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
try:
    import jsonschema
except ImportError as e:
    print(f"SKIPPED: manifest schema check needs Debian's python3-jsonschema ({e})")
    sys.exit(0)

m = json.load(open(os.path.join(ROOT, "golden", "manifest.json")))
schema = json.load(open(os.path.join(ROOT, m.get("json_schema", "specs/golden-manifest.schema.json"))))
jsonschema.Draft202012Validator.check_schema(schema)
jsonschema.Draft202012Validator(schema).validate(m)

errors = []
flags = m["notes"]["flags"]
used = set()
ids = set()
for c in m["cases"]:
    if c["id"] in ids:
        errors.append(f"{c['id']}: duplicate id")
    ids.add(c["id"])
    if not c["id"].startswith(c["op"] + "/"):
        errors.append(f"{c['id']}: id does not start with its op")
    for f in c["flags"]:
        used.add(f)
        if f not in flags:
            errors.append(f"{c['id']}: flag {f} not described in notes.flags")
    files = set(c["inputs"].values()) | {p for d in c["expected"].values() for p in d.values()}
    if files != set(c["sha256"]):
        errors.append(f"{c['id']}: sha256 does not list exactly the files it names")
    if set(c["result"]) != set(c["expected"]):
        errors.append(f"{c['id']}: result is not given for every expected dtype")
    for d, r in c["result"].items():
        if r != "valid" and d not in c.get("result_notes", {}):
            errors.append(f"{c['id']}: result {d} = {r} without a result_notes entry")
for f in flags:
    if f not in used:
        errors.append(f"flag {f} described but used by no case")
for b, v in m["notes"].get("bugs", {}).items():
    for f in v["flags"]:
        if f not in flags:
            errors.append(f"bug {b}: flag {f} not described")
for e in errors:
    print("manifest:", e)
if errors:
    sys.exit(1)
print(f"manifest: {len(m['cases'])} cases valid against {m.get('json_schema')} "
      f"({len(flags)} flags, {len(m['notes'].get('bugs', {}))} bug classes)")
