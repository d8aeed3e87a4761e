#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Validate rseqdbg's JSON output against its schema in schemas/.

check_schema.py SCHEMA_DIR SCHEMA FILE...: each FILE is one JSON document (--lines: one per
line, as step and trace write them). Prints each violation and exits 1 when there is any, 2
when a file is not JSON at all. Works with python3-jsonschema 4.10 (Debian 12) and with the
versions since 4.18, which resolve references through the referencing library.
"""
import json
import os
import sys
import warnings

import jsonschema


def validator(schema_dir, name):
    store = {}
    for n in sorted(os.listdir(schema_dir)):
        if n.endswith(".json"):
            with open(os.path.join(schema_dir, n), encoding="utf-8") as f:
                store[n] = json.load(f)
    cls = jsonschema.Draft202012Validator
    for s in store.values():
        cls.check_schema(s)
    try:
        from referencing import Registry, Resource
    except ImportError:
        resolver = jsonschema.RefResolver(base_uri=name, referrer=store[name], store=store)
        return cls(store[name], resolver=resolver)
    registry = Registry().with_resources(
        (n, Resource.from_contents(s)) for n, s in store.items())
    return cls(store[name], registry=registry)


def main(argv):
    lines = "--lines" in argv
    args = [a for a in argv if a != "--lines"]
    if len(args) < 3:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    warnings.simplefilter("ignore", DeprecationWarning)
    v = validator(args[0], args[1])
    bad = docs = 0
    for path in args[2:]:
        with open(path, encoding="utf-8") as f:
            text = f.read()
        try:
            items = ([json.loads(l) for l in text.splitlines() if l.strip()] if lines
                     else [json.loads(text)])
        except ValueError as e:
            print(f"{path}: not JSON: {e}")
            return 2
        for i, doc in enumerate(items):
            docs += 1
            errors = list(v.iter_errors(doc))
            if not errors:
                continue
            bad += 1
            # The deepest error of the most relevant branch, not "valid under none of oneOf"
            e = jsonschema.exceptions.best_match(errors)
            where = "/".join(str(p) for p in e.absolute_path)
            print(f"{path}:{i + 1}: /{where}: {e.message[:400]}")
    print(f"{docs} documents, {bad} invalid by {args[1]}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
