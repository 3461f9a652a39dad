# Types of the native module (src/lib.rs); `mypy.stubtest` checks them against it in the tests.
import os
import pathlib
from typing import Any, Literal, Mapping, Optional, TypedDict, Union, final

from typing_extensions import NotRequired, Unpack

__all__ = ["Workspace", "CompileResult", "Diagnostic", "NotShown", "PromptcError", "version"]

Model = Mapping[str, str]
"""A model as its provider names it: `{"id": "claude-sonnet-4-5", "provider": "anthropic"}`."""

class SourceRange(TypedDict):
    """Lines of a workspace file."""

    file: str
    first_line: int
    last_line: int

class Section(TypedDict):
    """One section of the prompt: a component's output, or why it is empty."""

    id: str
    slot: str
    included: bool
    reason: NotRequired[str]
    template: NotRequired[str]
    source: NotRequired[SourceRange]
    text: str

class Parameter(TypedDict):
    name: str
    required: bool
    type: str
    instruction: str
    usage: str
    note: str
    schema: NotRequired[dict[str, Any]]

class Tool(TypedDict):
    """A tool the prompt documents."""

    id: str
    name: str
    spec: str
    source: SourceRange
    description: str
    parameters: list[Parameter]
    item: NotRequired[int]

Context = Union[Mapping[str, Any], str]
"""The context's fields as in a context file (`cwd`, `mode`, `mcp_servers`, `date`, …), or the
name of one of the workspace's contexts. Its `rules_from` folders are the caller's and may lie
anywhere (str or os.PathLike)."""

class Request(TypedDict, total=False):
    """What `compile`, `explain`, `stats` and `route` take, as keyword arguments; promptc
    refuses any other key."""

    model: Model
    """The model in hand: routing picks the family for it, and it becomes the context's."""
    context: Context
    family: str
    """Compile this family instead of the routed one."""
    variant: str
    """Compile this variant (an id or `family@version`) instead of the routed one; given alone, without `family`, `label` or `tag`."""
    label: str
    """Within the family, the version this label names."""
    tag: str
    """Within the family, only variants carrying this tag."""
    dialect: str
    """The provider shape of native tool definitions (`openai`, `openai-responses`, `anthropic`, `gemini`); for a variant without native tools, a `dialect-unused` warning."""
    set: Mapping[str, str]
    """Runtime placeholders that win over every other value."""
    over_budget: Literal["error", "warn"]
    """What a prompt over its variant's token budget is: a failure (`error`, the default), or the prompt with an `over-budget` warning (`warn`)."""

class PromptcError(Exception):
    """What every failing call raises: the first error in its message, all in `diagnostics`."""

    diagnostics: list[Diagnostic]

@final
class Diagnostic:
    """A problem, where it is and what would fix it. `file`, `line` and `column` are None for a
    problem of the request itself."""

    @property
    def severity(self) -> Literal["error", "warning"]: ...
    @property
    def code(self) -> str: ...
    @property
    def message(self) -> str: ...
    @property
    def help(self) -> Optional[str]: ...
    @property
    def file(self) -> Optional[str]: ...
    @property
    def line(self) -> Optional[int]: ...
    @property
    def column(self) -> Optional[int]: ...
    @property
    def end_line(self) -> Optional[int]: ...
    @property
    def end_column(self) -> Optional[int]: ...
    @property
    def notes(self) -> list[str]: ...
    @property
    def not_shown(self) -> Optional[NotShown]:
        """For a `more-problems` diagnostic: the problems past the first 1,000 of a run (or a
        file's first 100) it stands for, which have no diagnostic of their own."""

@final
class NotShown:
    """The errors and warnings a `more-problems` diagnostic counts."""

    @property
    def errors(self) -> int: ...
    @property
    def warnings(self) -> int: ...

@final
class CompileResult:
    """The compiled prompt and its parts: the data of `promptc build --format json`."""

    @property
    def family(self) -> str: ...
    @property
    def variant(self) -> str: ...
    @property
    def version(self) -> Optional[str]: ...
    @property
    def prompt(self) -> str: ...
    @property
    def sections(self) -> list[Section]: ...
    @property
    def tools(self) -> list[Tool]: ...
    @property
    def model(self) -> dict[str, Any]: ...
    @property
    def inputs(self) -> list[str]: ...
    @property
    def dialect(self) -> Optional[str]: ...
    @property
    def tool_definitions(self) -> Optional[list[dict[str, Any]]]: ...
    @property
    def warnings(self) -> list[Diagnostic]: ...

@final
class Workspace:
    """A workspace of variants, components and tools, loaded and validated once."""

    @staticmethod
    def load(dir: Union[str, os.PathLike[str]]) -> Workspace: ...
    def reload(self) -> None: ...
    @property
    def root(self) -> pathlib.Path: ...
    @property
    def warnings(self) -> list[Diagnostic]: ...
    def compile(self, **request: Unpack[Request]) -> CompileResult: ...
    def explain(self, **request: Unpack[Request]) -> dict[str, Any]: ...
    def stats(self, **request: Unpack[Request]) -> dict[str, Any]: ...
    def route(self, **request: Unpack[Request]) -> dict[str, Any]: ...
    def families(self) -> list[dict[str, Any]]: ...

def version() -> str: ...
