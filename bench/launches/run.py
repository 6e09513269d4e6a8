#!/usr/bin/env python3
"""run.py BIN EVIDENCE_JSON [MODELS_DIR]: tptriage plan on each launch of an
evidence.json (samples/models format); prints a row per launch and the summary:
outcomes right, KV within 5%, > 5% optimistic, wrong outcome called certain.
A row with "flags_unknown" (its source does not show how the server was
launched, so the plan's inputs are not the launch's) is run and printed but its
KV pool is counted apart: "flags unknown" in the summary, with its errors.

run.py BIN --sets DIR...: each DIR's evidence.json and models/ in turn (its
summary line only), then POOLED: the same counts over every launch of them
(the issue's figure: KV within 5% and outcomes over all the launch sets)."""
import json, os, shlex, subprocess, sys


def measure(binp, evp, mdir, quiet=False):
    """Runs one set; prints its rows (unless quiet) and summary; returns the counts."""
    ev = json.load(open(evp))
    n = ok = kvn = kvw = opt = wc = rc_ = 0
    unknown = []
    say = (lambda *a: None) if quiet else print
    for r in ev["runs"]:
        n += 1
        args = ["plan", "--model", os.path.join(mdir, r["model"])] + shlex.split(r["args"]) + ["--format", "json"]
        p = subprocess.run([binp] + args, capture_output=True, text=True)
        lg = r["logged"]; out = lg["outcome"]
        if out == "refused":
            good = p.returncode == 2
            ok += good
            say(f"{r['id']:48s} refused  rc={p.returncode} {'ok' if good else 'WRONG'}")
            continue
        if p.returncode not in (0, 1):
            say(f"{r['id']:48s} NO ANSWER rc={p.returncode} {p.stdout[-300:]} {p.stderr[-300:]}")
            continue
        j = json.loads(p.stdout)
        fits = j["fits"]; fail = j.get("failure", "")
        certain = j.get("outcome_certain", True)
        if out == "starts": good = fits
        elif out == "fails": good = not fits
        elif out == "loads": good = fail != "weights_oom"
        else: good = False
        ok += good
        if not good and certain: wc += 1
        if good and certain: rc_ += 1
        kv = j.get("kv_tokens", 0); s = ""
        if "kv_tokens" in lg:
            lk = lg["kv_tokens"]
            e = (kv / lk - 1) * 100 if lk else 0
            if r.get("flags_unknown"):
                unknown.append(f"{e:+.1f}%")
            else:
                kvn += 1
                if abs(e) <= 5: kvw += 1
                if e > 5: opt += 1
            s = f"kv {kv} vs {lk} ({e:+.1f}%)" + (" [known miss]" if r.get("known_miss") else "") + (" [flags unknown]" if r.get("flags_unknown") else "")
        w = j["ledger"][0]["weights_bytes"] / 2**30 if j.get("ledger") else 0
        ws = f"w {w:.2f}" + (f" vs {lg['weights_per_rank_gib']:.2f}" if "weights_per_rank_gib" in lg else "")
        say(f"{r['id']:48s} {'fits' if fits else 'fails('+fail+')'}{'' if certain else '?'} vs {out} {'ok' if good else 'WRONG'}  {ws}  {s}")
    print(f"{prefix}SUMMARY launches {n}: outcomes right {ok}/{n}; KV within 5% {kvw}/{kvn}; >5% optimistic {opt}; wrong&certain {wc}; right&certain {rc_}"
          + (f"; flags unknown {len(unknown)} ({', '.join(unknown)})" if unknown else ""))

    return dict(n=n, ok=ok, kvn=kvn, kvw=kvw, opt=opt, wc=wc, rc=rc_, unknown=len(unknown))


binp = sys.argv[1]
if len(sys.argv) > 2 and sys.argv[2] == "--sets":
    tot = {}
    for d in sys.argv[3:]:
        prefix = os.path.basename(os.path.normpath(d)) + " "
        c = measure(binp, os.path.join(d, "evidence.json"), os.path.join(d, "models"), quiet=True)
        tot = {k: tot.get(k, 0) + v for k, v in c.items()}
    print(f"POOLED sets {len(sys.argv) - 3}, launches {tot['n']}: outcomes right {tot['ok']}/{tot['n']}; KV within 5% "
          f"{tot['kvw']}/{tot['kvn']} ({100 * tot['kvw'] / max(tot['kvn'], 1):.1f}%); >5% optimistic {tot['opt']}; "
          f"wrong&certain {tot['wc']}; right&certain {tot['rc']}; flags unknown {tot['unknown']}")
else:
    prefix = ""
    measure(binp, sys.argv[2], sys.argv[3] if len(sys.argv) > 3 else os.path.dirname(os.path.abspath(sys.argv[2])))
