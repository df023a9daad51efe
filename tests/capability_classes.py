"""Which eager ops change class (NaN, +-inf, +-0, sign) with ATen's or oneDNN's level: run
once per environment and compare the JSON it prints (docs/parity.md, "GELU", records the
result). Each op on special values as one-element tensors, as lengths 2, 37 and 1000, and for
the row ops one special value in a row of 40 random ones; one thread.

    for e in X=1 ATEN_CPU_CAPABILITY=avx2 ATEN_CPU_CAPABILITY=default ONEDNN_MAX_CPU_ISA=AVX2 \\
             ONEDNN_MAX_CPU_ISA=AVX ONEDNN_MAX_CPU_ISA=SSE41; do
        env $e .venv/bin/python tests/capability_classes.py > "classes_$e.json"; done
"""
import json, math, sys, torch
import torch.nn.functional as F
torch.set_num_threads(1)
F32 = torch.finfo(torch.float32)
sp = [math.inf, -math.inf, math.nan, 0.0, -0.0, 1e-40, -1e-40, 1e-45, F32.max, -F32.max, 3e38, -3e38,
      1.7014118e38, 100.0, -100.0, 88.8, -88.8, 89.0, -89.0, -103.0, -104.0, 20.0, -20.0, 9.5, -9.5,
      -6.0, -5.5, -5.45, -5.2, -5.06, -5.36, 0.5, 1.0, -1.0, 1e-7, -1e-7, 15.0, -15.0]
g = torch.Generator().manual_seed(1)
base = torch.tensor(sp, dtype=torch.float32)
def cls(t):
    out = []
    for v in t.flatten().tolist():
        if math.isnan(v): out.append("nan")
        elif math.isinf(v): out.append("+inf" if v > 0 else "-inf")
        elif v == 0: out.append("-0" if math.copysign(1, v) < 0 else "+0")
        else: out.append("+" if v > 0 else "-")
    return out
ops = {
 "exp": torch.exp, "tanh": torch.tanh, "sigmoid": torch.sigmoid, "silu": F.silu,
 "gelu": F.gelu, "gelu_tanh": lambda x: F.gelu(x, approximate="tanh"),
 "softmax": lambda x: torch.softmax(x.view(-1, x.shape[-1]), -1),
 "log_softmax": lambda x: torch.log_softmax(x.view(-1, x.shape[-1]), -1),
 "layer_norm": lambda x: F.layer_norm(x.view(-1, x.shape[-1]), (x.shape[-1],)),
}
res = {}
for name, f in ops.items():
    sig = []
    for n in (1, 2, 37, 1000):
        x = base.repeat(n // len(sp) + 1)[:n].clone() if n > 1 else base[:0]
        if n == 1:
            sig += [c for v in sp for c in cls(f(torch.tensor([v])))]
        else:
            x = base.repeat(30)[:n].clone()
            sig += cls(f(x))
    # rows with specials for softmax-like: each special in a row of randoms
    if name in ("softmax", "log_softmax", "layer_norm"):
        for v in sp:
            r = torch.randn(1, 40, generator=g); r[0, 7] = v
            sig += cls(f(r))
    res[name] = sig
print(json.dumps(res))
