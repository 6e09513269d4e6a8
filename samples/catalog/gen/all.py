"""Writes samples/catalog/<family>.jsonl: every entry of the family modules, grouped by the
first part of its id (sglang, vllm, torch, nccl, cuda, xid, tgi, trtllm, lmdeploy, ray, uvicorn)."""
import collections
import importlib
import sys

from common import write

groups = collections.OrderedDict()
for mod in ["sglang", "vllm", "torch_family", "nccl", "cuda", "servers", "batch2"]:
    for e in importlib.import_module(mod).entries:
        groups.setdefault(e["id"].split(".")[0], []).append(e)
for name, entries in groups.items():
    write(name, entries)
