"""The type stubs (_native.pyi) match the native module, and type-check the tests and the
example, which use the API as an agent would."""

import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parents[1]


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", *args], capture_output=True, text=True, cwd=HERE, check=False)


def test_the_stubs_match_the_module() -> None:
    checked = run("mypy.stubtest", "promptc_runtime", "--allowlist", "tests/stubtest-allowlist.txt")
    assert checked.returncode == 0, checked.stdout + checked.stderr


def test_the_tests_and_the_example_type_check_against_the_stubs() -> None:
    checked = run("mypy", "--strict", "--no-incremental", "tests", "examples")
    assert checked.returncode == 0, checked.stdout + checked.stderr
