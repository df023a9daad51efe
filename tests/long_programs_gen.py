"""Long and deep programs for the stack and compile-time checks of docs/reliability.md
("Long programs"): `python3 tests/long_programs_gen.py KIND N OUT` writes one function of
KIND at size N to OUT, for `rextio-torch check|dump-ir|emit OUT`.

KIND: chain (`return x.relu().relu()...`, N calls), binchain (`x + x + ...`), nestcall
(`torch.relu(torch.relu(...))`), parens, stmts (N statements `h = h.relu()`), ifs (N nested
`if`s), neg (`---x`), pow (`x ** 1.0 ** ...`)."""
import sys
kind, n, out = sys.argv[1], int(sys.argv[2]), sys.argv[3]
hdr = "import torch\nfrom rextio_torch.types import TensorF32Cpu2D\n\n"
sig = "def f(x: TensorF32Cpu2D) -> TensorF32Cpu2D:\n"
if kind == "chain":
    body = "    return x" + ".relu()" * n + "\n"
elif kind == "binchain":
    body = "    return " + " + ".join(["x"] * n) + "\n"
elif kind == "nestcall":
    body = "    return " + "torch.relu(" * n + "x" + ")" * n + "\n"
elif kind == "parens":
    body = "    return " + "(" * n + "x" + ")" * n + "\n"
elif kind == "stmts":
    body = "    h = x\n" + "    h = h.relu()\n" * n + "    return h\n"
elif kind == "ifs":
    body = "    h = x\n"
    for i in range(n):
        body += "    " * (i + 1) + "if h.sum() > 0.0:\n"
    body += "    " * (n + 1) + "h = h.relu()\n"
    body += "    return h\n"
elif kind == "neg":
    body = "    return " + "-" * n + "x\n"
elif kind == "pow":
    body = "    return x" + " ** 1.0" * n + "\n"
else:
    raise SystemExit(kind)
open(out, "w").write(hdr + sig + body)
