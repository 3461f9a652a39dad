"""Per-request latency through the Python package, for the requests the Rust bench
(`cargo bench --bench runtime`) times with the library itself. Install the package with
`maturin develop --release` first: a debug build measures the debug build."""

import json
import time
from pathlib import Path

from promptc_runtime import Workspace

REPO = Path(__file__).resolve().parents[3]
REQUESTS = json.loads((REPO / "bindings/bench/requests.json").read_text())
RUNS = 2000


def main() -> None:
    workspace = Workspace.load(REPO)
    print(f"Python package compile, shipped library, warm ({RUNS} compiles each):")
    for name, request in REQUESTS.items():
        for _ in range(RUNS // 10):
            workspace.compile(**request)
        samples = []
        for _ in range(RUNS):
            start = time.perf_counter_ns()
            workspace.compile(**request)
            samples.append((time.perf_counter_ns() - start) / 1000)
        samples.sort()

        def at(p: int) -> float:
            return samples[min(len(samples) - 1, len(samples) * p // 100)]

        print(f"  {name:<28} median {at(50):.0f} µs  p99 {at(99):.0f} µs")


if __name__ == "__main__":
    main()
