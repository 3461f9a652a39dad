"""The package as an agent uses it (pytest)."""

import asyncio
import re
import shutil
from collections import UserDict, UserList
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from types import MappingProxyType
from typing import Any

import pytest

import promptc_runtime
from promptc_runtime import CompileResult, PromptcError, Workspace

REPO = Path(__file__).resolve().parents[3]
FAMILIES = ["generic", "next-gen", "native-next-gen", "xs", "gpt", "gemini"]


@pytest.fixture(scope="module")
def shipped() -> Workspace:
    return Workspace.load(REPO)


@pytest.fixture
def copy_of_shipped(tmp_path: Path) -> Path:
    for part in ["promptc.toml", "variants", "components", "partials", "tools", "examples/contexts"]:
        source = REPO / part
        if source.is_dir():
            shutil.copytree(source, tmp_path / part)
        else:
            shutil.copy(source, tmp_path / part)
    return tmp_path


def test_each_shipped_family_compiles_to_its_committed_prompt(shipped: Workspace) -> None:
    for family in FAMILIES:
        result = shipped.compile(family=family, context="basic")
        committed = (REPO / "examples/prompts" / family / "basic.md").read_text()
        assert isinstance(result, CompileResult)
        assert result.family == family
        assert result.prompt == committed, family
        assert result.sections and all("first_line" in tool["source"] for tool in result.tools)
        assert result.warnings == []


def test_a_results_parts_are_made_once_and_kept(shipped: Workspace) -> None:
    result = shipped.compile(family="native-next-gen", context="basic")
    assert result.sections is result.sections
    assert result.tool_definitions is result.tool_definitions
    assert [s["id"] for s in result.sections][0] == "agent_role"
    assert "CompileResult(family=\"native-next-gen\"" in repr(result)


def test_results_that_share_a_compiles_parts_are_each_the_callers_own(shipped: Workspace) -> None:
    def request(order: list[str]) -> dict[str, Any]:
        schema = {"type": "object", "properties": {field: {"type": "string"} for field in order}}
        server = {"name": "notes", "tools": [{"name": "add_note", "description": "Store a note.", "input_schema": schema}]}
        return {
            "family": "native-next-gen",
            "model": {"id": "claude-sonnet-4-5", "provider": "anthropic"},
            "context": {"cwd": "/srv/app", "date": "2026-11-22", "mcp_servers": [server]},
        }

    def fields(result: CompileResult) -> list[str]:
        assert result.tool_definitions is not None
        (tool,) = [tool for tool in result.tool_definitions if tool["name"] == "notes__add_note"]
        return list(tool["input_schema"]["properties"])

    first = shipped.compile(**request(["zeta", "alpha"]))
    second = shipped.compile(**request(["zeta", "alpha"]))
    pristine = repr((second.tool_definitions, second.sections, second.tools, second.inputs))
    # Changing one result's parts changes no other result's.
    assert first.tool_definitions is not None
    first.tool_definitions[0]["name"] = "changed"
    first.sections.pop()
    first.tools[0]["parameters"].clear()
    first.inputs.append("changed")
    third = shipped.compile(**request(["zeta", "alpha"]))
    for result in (second, third):
        assert repr((result.tool_definitions, result.sections, result.tools, result.inputs)) == pristine
    assert third.prompt is first.prompt  # one string: strings cannot change
    # Each result's data keeps the order its own request gave.
    assert fields(third) == ["zeta", "alpha"]
    assert fields(shipped.compile(**request(["alpha", "zeta"]))) == ["alpha", "zeta"]
    assert fields(shipped.compile(**request(["zeta", "alpha"]))) == ["zeta", "alpha"]


def test_a_model_id_routes_to_its_family(shipped: Workspace) -> None:
    def routed(id: str, provider: str) -> CompileResult:
        return shipped.compile(
            model={"id": id, "provider": provider},
            context={"cwd": "/srv/app", "date": "2026-11-22"},
        )

    assert routed("claude-sonnet-4-5", "anthropic").family == "next-gen"
    assert routed("claude-3-7-sonnet-20250219", "anthropic").family == "generic"
    assert routed("gemini-1.5-pro", "gemini").family == "gemini"
    gpt5 = routed("gpt-5", "openai")
    assert (gpt5.family, gpt5.version) == ("next-gen", "1.0.0")
    assert shipped.route(model={"id": "gpt-4.1"})["family"] == "gpt"


def test_native_tool_definitions_come_in_the_providers_shape(shipped: Workspace) -> None:
    result = shipped.compile(
        family="native-next-gen",
        model={"id": "claude-sonnet-4-5", "provider": "anthropic"},
        context="basic",
    )
    assert result.dialect == "anthropic"
    assert result.tool_definitions is not None
    names = [tool["name"] for tool in result.tool_definitions]
    documented = [tool["name"] for tool in result.tools]
    assert names[: len(documented)] == documented
    assert "github__create_issue" in names
    assert "input_schema" in result.tool_definitions[0]
    openai = shipped.compile(family="native-next-gen", context="basic", dialect="openai")
    assert openai.dialect == "openai"
    assert openai.tool_definitions != result.tool_definitions


def test_a_prompt_over_its_budget_raises_or_warns_as_asked(copy_of_shipped: Path) -> None:
    xs = copy_of_shipped / "variants/xs.toml"
    xs.write_text(xs.read_text().replace("max_prompt_tokens = 2000", "max_prompt_tokens = 50"))
    workspace = Workspace.load(copy_of_shipped)
    with pytest.raises(PromptcError) as raised:
        workspace.compile(family="xs", context="basic")
    assert any(d.code == "over-budget" and d.severity == "error" for d in raised.value.diagnostics)
    result = workspace.compile(family="xs", context="basic", over_budget="warn")
    assert result.prompt
    over = [w for w in result.warnings if w.code == "over-budget"]
    assert len(over) == 1 and over[0].severity == "warning"


def test_problems_past_the_first_thousand_are_counted_in_one_diagnostic(copy_of_shipped: Path) -> None:
    for file in range(11):
        keys = "".join(f"bogus_{key} = {key}\n" for key in range(100))
        (copy_of_shipped / f"tools/extra_{file}.toml").write_text(f'id = "extra_{file}"\ndescription = "x"\n{keys}')
    with pytest.raises(PromptcError) as raised:
        Workspace.load(copy_of_shipped)
    shown = [d for d in raised.value.diagnostics if d.not_shown is None]
    more = [d for d in raised.value.diagnostics if d.not_shown is not None]
    assert len(shown) == 1000 and all(d.code == "unknown-key" for d in shown)
    assert [d.code for d in more] == ["more-problems"]
    counted = more[0].not_shown
    assert counted is not None and (counted.errors, counted.warnings) == (100, 0)
    assert str(raised.value).endswith("(and 1099 more errors)")


def test_a_bad_workspace_raises_with_located_diagnostics(copy_of_shipped: Path, tmp_path: Path) -> None:
    (copy_of_shipped / "tools/read_file.toml").write_text('id = "read_file"\nbogus = 1\n')
    with pytest.raises(PromptcError) as raised:
        Workspace.load(copy_of_shipped)
    first = next(d for d in raised.value.diagnostics if d.severity == "error")
    assert first.file == "tools/read_file.toml"
    assert isinstance(first.line, int) and isinstance(first.column, int)
    assert str(raised.value).startswith(f"tools/read_file.toml:{first.line}:{first.column}: ")
    with pytest.raises(PromptcError) as empty:
        Workspace.load(tmp_path / "tools")
    assert empty.value.diagnostics[0].code == "not-a-workspace"


def test_a_bad_context_value_raises_located_in_the_context(shipped: Workspace) -> None:
    with pytest.raises(PromptcError) as raised:
        shipped.compile(context={"cwd": "/srv/app", "mode": "fly"})
    first = raised.value.diagnostics[0]
    assert (first.code, first.file, first.line) == ("invalid-value", "<context>", 3)
    assert "fly" in first.message
    with pytest.raises(PromptcError) as unknown:
        shipped.compile(context="nope")
    assert unknown.value.diagnostics[0].code == "unknown-context"
    with pytest.raises(PromptcError) as not_data:
        shipped.compile(context={"cwd": object()})
    assert not_data.value.diagnostics[0].code == "invalid-request"
    with pytest.raises(PromptcError) as misspelt:
        shipped.compile(familly="gpt")  # type: ignore[call-arg]
    assert misspelt.value.diagnostics[0].code == "invalid-request"
    assert "familly" in str(misspelt.value)


def nested_schema(levels: int) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "string"}
    for _ in range(levels):
        schema = {"type": "object", "properties": {"a": schema}}
    return schema


def refused(shipped: Workspace, **request: Any) -> Any:
    with pytest.raises(PromptcError) as raised:
        shipped.compile(**request)
    assert len(raised.value.diagnostics) == 1, raised.value.diagnostics
    diagnostic = raised.value.diagnostics[0]
    assert diagnostic.code == "invalid-request"
    return diagnostic


def test_a_request_nested_too_deep_or_holding_itself_is_refused_at_its_place(shipped: Workspace) -> None:
    context = {"cwd": "/srv/app", "date": "2026-11-22"}
    looped: dict[str, Any] = {"type": "object"}
    looped["properties"] = {"self": looped}
    for schema in (nested_schema(61), nested_schema(100_000), looped):
        server = {"name": "notes", "tools": [{"name": "add", "input_schema": schema}]}
        diagnostic = refused(shipped, family="xs", context={**context, "mcp_servers": [server]})
        assert re.match(
            r"invalid request: `context\.mcp_servers\[0\]\.tools\[0\]\.input_schema\.properties\.[a-z]+…` "
            r"nests lists and tables 128 levels deep",
            diagnostic.message,
        ), diagnostic.message
        assert diagnostic.help.startswith(
            "a request nests fewer than 128 levels: flatten or shorten `context.mcp_servers[0].tools[0]"
        ), diagnostic.help
    # A schema as deep as real ones compiles.
    server = {"name": "notes", "tools": [{"name": "add", "description": "Add.", "input_schema": nested_schema(10)}]}
    assert shipped.compile(family="xs", context={**context, "mcp_servers": [server]}).family == "xs"


def test_a_value_json_cannot_carry_as_written_is_refused_at_its_place(shipped: Workspace) -> None:
    context = {"cwd": "/srv/app", "date": "2026-11-22"}
    cases: list[tuple[dict[str, Any], str]] = [
        ({"set": {"LIMIT": float("nan")}}, "`set.LIMIT` is `nan`, a number"),
        ({"set": {"LIMIT": float("-inf")}}, "`set.LIMIT` is `-inf`, a number"),
        ({"context": {**context, "extra": {"big": 2**64}}}, "`context.extra.big` is `18446744073709551616`, a number"),
        ({"context": {**context, "extra": {"tags": {"a", "b"}}}}, "`context.extra.tags` is a value of kind `set`"),
        ({"context": {**context, "extra": {"a b": [1, object()]}}}, '`context.extra["a b"][1]` is a value of kind `object`'),
        ({"context": {**context, "extra": {1: "one"}}}, "`context.extra` has a key of kind `int`"),
        ({"context": {**context, "extra": {"ids": range(10**12)}}}, "`context.extra.ids` is a value of kind `range`"),
        ({"context": {**context, "extra": {"raw": b"bytes"}}}, "`context.extra.raw` is a value of kind `bytes`"),
        ({"context": {**context, "extra": {"m": MappingProxyType({"k": {1, 2}})}}}, "`context.extra.m.k` is a value of kind `set`"),
    ]
    for request, message in cases:
        diagnostic = refused(shipped, family="xs", **request)
        assert diagnostic.message.startswith(f"invalid request: {message}"), diagnostic.message
        assert diagnostic.help.startswith("a request holds data only"), diagnostic.help
    # A tuple is a list, a path its text; a mapping or a sequence of another kind (a read-only
    # view of a dict, a UserList) reads as a dict or a list.
    fine = shipped.compile(family="xs", context={**context, "extra": {"pair": (1, Path("/srv"))}})
    assert fine.family == "xs"
    as_dict = shipped.compile(family="xs", context=MappingProxyType({**context, "extra": UserDict({"tags": UserList(["a"])})}))
    as_plain = shipped.compile(family="xs", context={**context, "extra": {"tags": ["a"]}})
    assert as_dict.prompt == as_plain.prompt


def test_rules_folders_of_the_caller_may_lie_outside_the_workspace(shipped: Workspace, tmp_path: Path) -> None:
    (tmp_path / "AGENTS.md").write_text("Run the linter before every commit.\n")
    result = shipped.compile(
        family="next-gen",
        context={"cwd": str(tmp_path), "date": "2026-11-22", "rules_from": [tmp_path]},
    )
    assert "Run the linter before every commit." in result.prompt


def test_compiles_on_threads_and_from_asyncio_agree_with_one_at_a_time(shipped: Workspace) -> None:
    models = ["claude-sonnet-4-5", "gpt-4.1", "gemini-1.5-pro", "qwen3-coder", "grok-4"]
    requests: list[dict[str, Any]] = [{"model": {"id": models[i % len(models)]}, "context": "basic"} for i in range(20)]
    alone = [(r.family, r.prompt) for r in (shipped.compile(**request) for request in requests)]
    with ThreadPoolExecutor(max_workers=4) as pool:
        threaded = list(pool.map(lambda request: shipped.compile(**request), requests))
    assert [(r.family, r.prompt) for r in threaded] == alone

    async def gather() -> list[CompileResult]:
        return await asyncio.gather(*(asyncio.to_thread(shipped.compile, **request) for request in requests))

    assert [(r.family, r.prompt) for r in asyncio.run(gather())] == alone


def test_reload_reads_changed_files_and_a_broken_change_keeps_the_last_good_load(copy_of_shipped: Path) -> None:
    workspace = Workspace.load(copy_of_shipped)
    before = workspace.compile(family="xs", context="basic").prompt
    (copy_of_shipped / "components/agent_role.md").write_text("You are Marlin, a careful coding agent.\n")
    assert workspace.compile(family="xs", context="basic").prompt == before
    workspace.reload()
    after = workspace.compile(family="xs", context="basic").prompt
    assert "You are Marlin" in after
    (copy_of_shipped / "promptc.toml").write_text("name = [\n")
    with pytest.raises(PromptcError):
        workspace.reload()
    assert workspace.compile(family="xs", context="basic").prompt == after


def test_a_workspace_loaded_by_a_relative_path_reloads_the_same_folder_after_a_chdir(
    copy_of_shipped: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(copy_of_shipped.parent)
    workspace = Workspace.load(copy_of_shipped.name)
    assert workspace.root == copy_of_shipped
    (copy_of_shipped / "components/agent_role.md").write_text("You are Marlin, a careful coding agent.\n")
    # An agent moves into the user's project, then reloads its library.
    monkeypatch.chdir(REPO)
    workspace.reload()
    assert workspace.root == copy_of_shipped
    assert "You are Marlin" in workspace.compile(family="xs", context="basic").prompt


def test_explain_stats_and_families_give_the_command_lines_json(shipped: Workspace) -> None:
    explanation = shipped.explain(family="gpt", context="basic")
    assert explanation["family"] == "gpt"
    assert any(item["included"] for item in explanation["components"])
    stats = shipped.stats(family="gpt", context="basic")
    assert stats["family"] == "gpt" and stats["tokens"] > 0 and "stable_prefix" in stats
    assert any(listing["family"] == "gemini" for listing in shipped.families())


def test_the_package_version_is_the_crates() -> None:
    cargo = (REPO / "Cargo.toml").read_text()
    section = cargo.split("[workspace.package]", 1)[1]
    crate = section.split('version = "', 1)[1].split('"', 1)[0]
    assert promptc_runtime.__version__ == crate
