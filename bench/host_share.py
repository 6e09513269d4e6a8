#!/usr/bin/env python3
"""What a Windows / WSL2 host holds on the card at a launch's start, from a set of logs.

python3 bench/host_share.py BIN SET_DIR [--model DIR]

SET_DIR holds one JSON per public log: host, catalog_gpu, total_gib (the total the host reports:
Windows and WSL2 count the whole card, memory/gpu_catalog.json wddm_mib), free_gib and free_kind
(after_context: a server's or torch's read after the CUDA context; nvidia_smi_idle), or a share
derived in an earlier session (host_share_pct_derived), or "excluded" with its reason; "half"
(fit | aside) where assigned, else the logs sorted by id alternate (fit at even positions).

For each usable log the share is (the reported total - the CUDA context the plan charges for the
card, read from `BIN plan --gpu CARD` on Linux - the logged free) / the reported total; an idle
nvidia-smi reading carries no CUDA context, so none is charged there. The script prints both
halves and the fit half's 80th percentile (linear), the point memory/host_platform.cc uses.
"""
import json
import os
import subprocess
import sys

GIB = 1024.0 ** 3
HERE = os.path.dirname(os.path.abspath(__file__))


def plan_linux(binary, model, gpu):
    cmd = [binary, "plan", "--model", model, "--framework", "vllm", "--server-version", "0.11.0", "--gpu", gpu,
           "--format", "json"]
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode not in (0, 1):
        sys.exit(f"{' '.join(cmd)} failed: {p.stderr.strip()[-300:]}")
    led = json.loads(p.stdout)["ledger"][0]
    return led["total_bytes"] / GIB, led["free_at_init_bytes"] / GIB


def percentile(values, q):
    v = sorted(values)
    if not v:
        return float("nan")
    pos = (len(v) - 1) * q
    lo = int(pos)
    hi = min(lo + 1, len(v) - 1)
    return v[lo] + (v[hi] - v[lo]) * (pos - lo)


def main():
    if len(sys.argv) < 3:
        sys.exit("usage: host_share.py BIN SET_DIR [--model DIR]")
    binary, set_dir = sys.argv[1], sys.argv[2]
    model = sys.argv[sys.argv.index("--model") + 1] if "--model" in sys.argv else os.path.join(
        HERE, "..", "samples", "models", "llama-3.1-8b-instruct")
    logs = []
    for name in sorted(os.listdir(set_dir)):
        if name.endswith(".json"):
            logs.append(json.load(open(os.path.join(set_dir, name))))
    logs.sort(key=lambda l: l["id"])
    usable = []
    for l in logs:
        if l.get("excluded"):
            print(f"{l['id']:32} excluded: {l['excluded'][:90]}")
            continue
        linux_total, linux_free = plan_linux(binary, model, l["catalog_gpu"])
        context = linux_total - linux_free  # the CUDA context, NCCL and libraries the plan charges
        total = l.get("total_gib", linux_total)
        if "host_share_pct_derived" in l:
            share = l["host_share_pct_derived"] / 100
        elif l["free_kind"] == "nvidia_smi_idle":
            share = (total - l["free_gib"]) / total
        else:
            share = (total - context - l["free_gib"]) / total
        usable.append((l["id"], l["host"], share))
    halves = {l["id"]: l.get("half") for l in logs}
    fit = [u for i, u in enumerate(usable) if (halves[u[0]] or ("fit" if i % 2 == 0 else "aside")) == "fit"]
    aside = [u for u in usable if u not in fit]
    for title, rows in (("fit", fit), ("aside", aside)):
        print(f"\n{title} (n={len(rows)}):")
        for i, h, s in rows:
            print(f"  {i:32} {h:8} {s * 100:+6.1f}% of the card")
    shares = [s for _, _, s in fit]
    print(f"\nfit: n={len(shares)}, {min(shares) * 100:.1f}% to {max(shares) * 100:.1f}%, "
          f"median {percentile(shares, 0.5) * 100:.1f}%, 80th percentile {percentile(shares, 0.8) * 100:.1f}%")
    p80 = percentile(shares, 0.8)
    above = [i for i, _, s in aside if s > p80]
    print(f"aside: {len(above)} of {len(aside)} above the point ({', '.join(above) or 'none'})")


if __name__ == "__main__":
    main()
