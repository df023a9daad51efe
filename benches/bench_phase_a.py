"""Phase A side by side (`make bench-python`): benches/side_by_side.py --suite phase-a.

Eager under no_grad and inference_mode, torch.jit.script, torch.compile (first call timed
separately, results checked) and the rextio-torch compiled callable, on the six Phase A
cells; every option of side_by_side.py passes through:

    make bench-python
    python benches/bench_phase_a.py --no-compile --json phase_a.json
"""

import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from side_by_side import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main(["--suite", "phase-a", *sys.argv[1:]]))
