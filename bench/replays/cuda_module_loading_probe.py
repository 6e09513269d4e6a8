#!/usr/bin/env python3
"""What a torch process holds outside PyTorch's caching allocator with CUDA's modules loaded
lazily or eagerly (memory/README.md, "TGI's pool on every logged launch", task tgi3).

TGI calls torch.cuda.is_available() at import (utils/import_utils.py), before torch sets
CUDA_MODULE_LOADING=LAZY; drivers before R535 default to eager loading. This measures the
difference for torch and cuBLAS alone (TGI's own kernel libraries add to it):
  for m in LAZY EAGER; do CUDA_MODULE_LOADING=$m python3 cuda_module_loading_probe.py $m; done
Prints MiB outside the allocator after the context and after a few ops (GEMM fp16/bf16,
log_softmax, silu, layer_norm, gather, cumsum, sort, randperm, topk), and after a flash-attn
varlen call when flash_attn is installed.
"""
import os, sys, json
mode = sys.argv[1]
import torch
torch.cuda.init()
dev = torch.device('cuda')
tot = torch.cuda.get_device_properties(0).total_memory
def used():
    torch.cuda.synchronize(); f, t = torch.cuda.mem_get_info(); return t - f
r = {'mode': mode, 'env': os.environ.get('CUDA_MODULE_LOADING'), 'torch': torch.__version__, 'cuda': torch.version.cuda}
torch.zeros(1, device=dev); r['ctx_after_init'] = used() - torch.cuda.memory_reserved()
a = torch.randn(4096, 4096, device=dev, dtype=torch.float16); b = a @ a; c = torch.log_softmax(b, -1)
d = torch.nn.functional.silu(a) * a; e = torch.layer_norm(a, (4096,)); g = torch.gather(c, 1, torch.zeros(4096,1,dtype=torch.long,device=dev))
ab = a.bfloat16(); ab2 = ab @ ab; torch.cumsum(a, 0); torch.sort(a[0]); torch.randperm(128256, device=dev); torch.topk(a, 20)
r['after_ops_nonalloc'] = used() - torch.cuda.memory_reserved()
mods = []
for m in ['flash_attn_2_cuda', 'vllm._C', 'flashinfer', 'triton']:
    try:
        __import__(m); mods.append(m)
    except Exception as ex:
        pass
r['mods'] = mods
try:
    from flash_attn import flash_attn_varlen_func
    q = torch.randn(4096, 32, 128, device=dev, dtype=torch.float16)
    cu = torch.tensor([0, 4096], dtype=torch.int32, device=dev)
    flash_attn_varlen_func(q, q[:, :8], q[:, :8], cu, cu, 4096, 4096, causal=True)
    r['after_fa_nonalloc'] = used() - torch.cuda.memory_reserved()
except Exception as ex:
    r['fa_err'] = str(ex)[:100]
r = {k: (round(v / 2**20, 1) if isinstance(v, int) and k not in ('mode',) else v) for k, v in r.items()}
print(json.dumps(r))
