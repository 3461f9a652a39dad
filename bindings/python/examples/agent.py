"""An agent's request loop, in short: load the prompt library once, then for each request
compile the system prompt and tool definitions for the model in hand and the user's project.
No network: where a real agent would call its model, this prints what it would send. Run it
with `python examples/agent.py` once the package is installed (`maturin develop`)."""

import sys
from pathlib import Path

from promptc_runtime import PromptcError, Workspace

REPO = Path(__file__).resolve().parents[3]
LIBRARY = REPO  # the shipped library sits at the repository's root
PROJECT = REPO / "examples/agent-project"

MODELS: list[dict[str, str]] = [
    {"id": "claude-sonnet-4-5", "provider": "anthropic"},
    {"id": "gpt-4.1", "provider": "openai"},
]


def main() -> int:
    workspace = Workspace.load(LIBRARY)
    for model in MODELS:
        try:
            result = workspace.compile(
                model=model,
                context={
                    "cwd": str(PROJECT),
                    "os": sys.platform,
                    "date": "2026-11-22",
                    "mode": "act",
                    "rules_from": [PROJECT],
                },
            )
        except PromptcError as error:
            for d in error.diagnostics:
                print(f"{d.file or '<request>'}:{d.line or 0}:{d.column or 0}: {d.message}", file=sys.stderr)
            return 1
        print(f"## {model['id']}: family {result.family} {result.version or ''}")
        print("\n".join(result.prompt.splitlines()[:3]))
        print("tools: " + ", ".join(tool["name"] for tool in result.tools))
        rules = next((s for s in result.sections if s["id"] == "user_instructions"), None)
        print(f"project rules in the prompt: {'yes' if rules and rules['included'] else 'no'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
