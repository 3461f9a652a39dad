"""Per-request latency through the Python package, for the requests the Rust bench
(`cargo bench --bench runtime`) times with the library itself. Install the package with
`maturin develop --release` first: a debug build measures the debug build. Each figure is set
beside the library's own compile of the same request, timed in this process just after."""

import json
import time
from pathlib import Path
from typing import Any, Callable

from promptc_runtime import CompileResult, Workspace

REPO = Path(__file__).resolve().parents[3]
REQUESTS = json.loads((REPO / "bindings/bench/requests.json").read_text())
RUNS = 2000

# What an agent reads of each result: the prompt and the tool definitions; and, apart, every
# field.
READS: dict[str, Callable[[CompileResult], Any]] = {
    "prompt, tool definitions": lambda r: (r.family, r.prompt, r.tool_definitions),
    "every field": lambda r: (r.family, r.prompt, r.sections, r.tools, r.model, r.inputs, r.tool_definitions, r.warnings),
}


def main() -> None:
    workspace = Workspace.load(REPO)
    print(f"Python package compile, shipped library, warm ({RUNS} compiles each):")
    for read, use in READS.items():
        print(f" reading {read}:")
        for name, request in REQUESTS.items():
            for _ in range(RUNS // 10):
                use(workspace.compile(**request))
            samples = []
            for _ in range(RUNS):
                start = time.perf_counter_ns()
                use(workspace.compile(**request))
                samples.append((time.perf_counter_ns() - start) / 1000)
            samples.sort()
            median, p99 = samples[len(samples) // 2], samples[min(len(samples) - 1, len(samples) * 99 // 100)]
            library = workspace._bench_library_compile(RUNS, **request)
            print(
                f"  {name:<28} median {median:.0f} µs  p99 {p99:.0f} µs"
                f"  library alone {library:.0f} µs  ratio {median / library:.2f}"
            )


if __name__ == "__main__":
    main()
