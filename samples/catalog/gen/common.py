"""Helpers for writing catalogue entries (samples/catalog/*.jsonl).

Each family's generator (sglang.py, vllm.py, ...) lists entries with E(...) and
writes its .jsonl with write(). The .jsonl files are the data the test reads;
these scripts only save typing (prefixes, common startup context). Run
`python3 samples/catalog/gen/all.py` after editing one.
"""
import json
import os

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.dirname(HERE)


def E(id, message, kind, root_cause, file, function, versions, level="raise", context=(), after=(),
      note=None, batch=1):
    """One catalogue entry.

    message: the text as the framework prints it (prefix included, may hold
    several lines: a traceback). context/after: lines printed before/after it
    that the meaning depends on (the startup phase reached). kind: the event
    kind the message line must yield (None: no event required). root_cause:
    the taxonomy id the whole excerpt must give ('none' for a harmless line).
    batch: 1 for the entries written with the first format and rule changes,
    2 for those written after them (the unseen set, samples/catalog/README.md).
    """
    e = {"id": id, "message": message, "kind": kind, "root_cause": root_cause,
         "source": {"file": file, "function": function, "versions": versions}, "level": level}
    if context:
        e["context"] = list(context)
    if after:
        e["after"] = list(after)
    if note:
        e["note"] = note
    if batch != 1:
        e["batch"] = batch
    return e


def write(name, entries):
    ids = set()
    path = os.path.join(OUT, name + ".jsonl")
    with open(path, "w", encoding="utf-8") as f:
        for e in entries:
            assert e["id"] not in ids, e["id"]
            ids.add(e["id"])
            f.write(json.dumps(e, ensure_ascii=False) + "\n")
    print(f"{path}: {len(entries)} entries")


def tb(*frames, exc, header="Traceback (most recent call last):", prefix=""):
    """A Python traceback: frames are (file, line, function, code)."""
    out = [prefix + header]
    for f, ln, fn, code in frames:
        out.append(f'  File "{f}", line {ln}, in {fn}')
        if code:
            out.append("    " + code)
    out.append(exc)
    return "\n".join(out)
