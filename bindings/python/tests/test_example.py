"""The example agent loop runs and prints what its docstring promises."""

import re
import subprocess
import sys
from pathlib import Path

EXAMPLE = Path(__file__).resolve().parents[1] / "examples/agent.py"


def test_the_example_agent_loop_compiles_for_two_models_and_the_project_rules() -> None:
    run = subprocess.run([sys.executable, str(EXAMPLE)], capture_output=True, text=True, check=False)
    assert run.returncode == 0, run.stderr
    assert re.search(r"^## claude-sonnet-4-5: family next-gen ", run.stdout, re.M)
    assert re.search(r"^## gpt-4\.1: family gpt ", run.stdout, re.M)
    assert re.search(r"^tools: execute_command, read_file, ", run.stdout, re.M)
    assert len(re.findall(r"^project rules in the prompt: yes$", run.stdout, re.M)) == 2, run.stdout
