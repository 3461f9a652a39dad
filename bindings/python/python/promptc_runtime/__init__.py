"""promptc for Python: compile an agent's system prompt and native tool definitions per
request, in-process, from a workspace of variants, components and tools loaded once.

    from promptc_runtime import Workspace
    workspace = Workspace.load("./prompts")
    result = workspace.compile(model={"id": "claude-sonnet-4-5", "provider": "anthropic"},
                               context={"cwd": project, "date": "2026-11-22", "rules_from": [project]})
    result.family, result.prompt, result.tool_definitions
"""

from ._native import CompileResult, Diagnostic, NotShown, PromptcError, Workspace, version

__version__: str = version()

__all__ = ["CompileResult", "Diagnostic", "NotShown", "PromptcError", "Workspace", "version", "__version__"]
