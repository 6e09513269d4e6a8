#!/usr/bin/env python3
# vLLM V1's dummy sampler run (v1/sample/sampler.py + ops/topk_topp_sampler.py forward_native,
# read in a 0.11 copy) replayed in PyTorch on the box: bytes per logit element at the peak.
import json, sys, torch
V = int(sys.argv[1]); rows_list = [int(x) for x in sys.argv[2].split(",")]
dev = torch.device("cuda")
out = []
for R in rows_list:
    torch.cuda.empty_cache(); torch.cuda.synchronize(); torch.cuda.reset_peak_memory_stats()
    base = torch.cuda.memory_allocated()
    logits16 = torch.randn(R, V, dtype=torch.bfloat16, device=dev)   # compute_logits output
    logits = logits16.to(torch.float32)
    greedy = logits.argmax(dim=-1)
    temp = torch.full((R,), 0.5, device=dev); logits.div_(temp.unsqueeze(1))
    k = torch.full((R,), V - 1, device=dev); p = torch.full((R,), 0.9, device=dev)
    s0 = torch.cuda.max_memory_allocated()
    logits_sort, logits_idx = logits.sort(dim=-1, descending=False)
    s1 = torch.cuda.max_memory_allocated()
    m = logits_sort.size(1) - k.to(torch.long)
    m = logits_sort.gather(1, m.unsqueeze(1)); m = logits_sort < m
    logits_sort.masked_fill_(m, -float("inf"))
    ps = logits_sort.softmax(dim=-1); ps = torch.cumsum(ps, dim=-1, out=ps)
    tp = ps <= 1 - p.unsqueeze(1); tp[:, -1] = False
    logits_sort.masked_fill_(tp, -float("inf"))
    logits2 = logits_sort.scatter(dim=-1, index=logits_idx, src=logits_sort)
    del logits_sort, logits_idx, m, ps, tp
    probs = logits2.softmax(dim=-1, dtype=torch.float32)
    q = torch.empty_like(probs); q.exponential_()
    sampled = probs.div_(q).argmax(dim=-1)
    torch.cuda.synchronize()
    peak = torch.cuda.max_memory_allocated() - base
    n = R * V
    out.append(dict(rows=R, vocab=V, peak_gib=peak / 2**30, bytes_per_elem=peak / n,
                    sort_peak_bytes_per_elem=(s1 - base) / n, before_sort_bytes_per_elem=(s0 - base) / n))
    del logits16, logits, greedy, logits2, probs, q, sampled
print(json.dumps(dict(torch=torch.__version__, results=out)))
