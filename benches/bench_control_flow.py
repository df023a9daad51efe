"""The control-flow families side by side (`make bench-control-flow`):
benches/side_by_side.py --suite phase-b --suite scoring.

The seed's Phase B (six cells) and the small-batch scoring pipeline (`score_labels`,
`score_logits`, `score_probabilities` at batch 1, 16 and 128) against eager, jit.script and
torch.compile; every option of side_by_side.py passes through:

    make bench-control-flow
    python benches/bench_control_flow.py --no-compile --rounds 4
"""

import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from side_by_side import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main(["--suite", "phase-b", "--suite", "scoring", *sys.argv[1:]]))
