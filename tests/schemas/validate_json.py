#!/usr/bin/env python3
"""validate_json.py SCHEMA FILE: check FILE against a JSON schema.

Exit 0 valid, 1 invalid (errors printed with their JSON path), 2 usage or
unreadable input, 77 when the jsonschema package is missing (CTest skip).
"""
import json
import sys

try:
    import jsonschema
except ImportError:
    print("validate_json.py: python3-jsonschema is not installed; skipping", file=sys.stderr)
    sys.exit(77)


def main(argv):
    if len(argv) != 3:
        print("usage: validate_json.py SCHEMA FILE", file=sys.stderr)
        return 2
    try:
        with open(argv[1], encoding="utf-8") as f:
            schema = json.load(f)
        with open(argv[2], encoding="utf-8") as f:
            doc = json.load(f)
    except (OSError, ValueError) as e:
        print(f"validate_json.py: {e}", file=sys.stderr)
        return 2
    cls = jsonschema.validators.validator_for(schema)
    cls.check_schema(schema)
    errors = sorted(cls(schema).iter_errors(doc), key=lambda e: list(e.absolute_path))
    for e in errors[:20]:
        path = "/".join(str(p) for p in e.absolute_path)
        print(f"{argv[2]}: /{path}: {e.message}", file=sys.stderr)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
