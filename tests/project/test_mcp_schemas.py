"""What an MCP server's schemas may make Cairn do: fetch nothing (a `$ref` to a URL, a remote
dialect), crash nothing (a schema nested too deep), and crowd the window only so far (a tool
too big for it, or too many together, is not offered, with the figures)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from shell.tools.mcp import McpHub
from shell.tools.toolbox import CallContext, Tool, ToolResult
from tests.fakes.schema_host import schema_host as counting_schema_host
from tests.project.test_mcp import by_name, fake, started


@pytest.fixture
async def hubs() -> AsyncIterator[list[McpHub]]:
    made: list[McpHub] = []
    yield made
    for hub in made:
        await hub.aclose()


@pytest.fixture
def schema_host() -> Iterator[tuple[str, list[str]]]:
    with counting_schema_host() as host:
        yield host


async def test_a_remote_ref_in_an_input_schema_is_never_fetched(
    tmp_path: Path, hubs: list[McpHub], schema_host: tuple[str, list[str]]
) -> None:
    url, hits = schema_host
    hub = await started(hubs, tmp_path, [fake("fake", "remote-ref", f"{url}/key.json")])
    result = await by_name(hub)["fake__lookup"].call({"key": "k"})
    assert result.error is not None and f"refers to {url}/key.json" in result.error
    assert "does not fetch" in result.error
    assert hits == []


@pytest.mark.filterwarnings("ignore::DeprecationWarning")  # jsonschema's, for the dialect
def test_a_schema_validator_never_retrieves(schema_host: tuple[str, list[str]]) -> None:
    from shell.tools.mcp.schemas import OfflineValidator
    from shell.tools.toolbox import ToolError

    url, hits = schema_host
    local = {"$defs": {"k": {"type": "string"}}, "properties": {"a": {"$ref": "#/$defs/k"}}}
    OfflineValidator(local).validate({"a": "fine"})
    meta = {"properties": {"a": {"$ref": "https://json-schema.org/draft/2020-12/schema"}}}
    OfflineValidator(meta).validate({"a": {"type": "string"}})  # shipped with jsonschema
    OfflineValidator({"$schema": f"{url}/dialect.json"}).validate({})  # a dialect is not fetched
    for schema in (
        {"$ref": f"{url}/root.json"},
        {"$id": f"{url}/base.json", "properties": {"a": {"$ref": "other.json"}}},
        {"properties": {"a": {"$dynamicRef": f"{url}/dynamic.json#x"}}},
        {"properties": {"a": {"items": {"$ref": f"{url}/deep.json"}}}},
        {"properties": {"a": {"$ref": "file:///etc/passwd"}}},
    ):
        with pytest.raises(ToolError, match="Cairn does not fetch"):
            OfflineValidator(schema).validate({"a": ["x"]})
    assert hits == []


def test_odd_names_and_schemas_are_made_valid() -> None:
    from shell.tools.mcp.schemas import object_schema
    from shell.tools.mcp.tools import tool_name

    taken: set[str] = set()
    first = tool_name("my server", "do.it/now", taken)
    assert first == "my_server__do_it_now"
    taken.add(first)
    second = tool_name("my server", "do it now", taken)
    assert second != first and len(second) <= 64
    assert len(tool_name("s" * 40, "t" * 40, set())) == 64
    assert object_schema({"type": "string"}) == {"type": "object", "properties": {}}
    assert object_schema({"type": "object", "properties": {"a": {"type": 3}}}) == {
        "type": "object",
        "properties": {},
    }
    assert object_schema({"type": "object"}) == {"type": "object", "properties": {}}
    deep: dict[str, object] = {"type": "string"}
    for _ in range(1_000):
        deep = {"type": "object", "properties": {"a": deep}}
    assert object_schema(deep) == {"type": "object", "properties": {}}


def test_tools_past_their_share_of_the_window_are_refused_with_the_figures() -> None:
    from shell.tools.mcp.offer import offered

    async def run(arguments: dict[str, object], context: CallContext) -> ToolResult:
        return ToolResult("")

    def tool(name: str, words: int) -> Tool:
        return Tool(name, " ".join(["word"] * words), {"type": "object"}, run, source="mcp:s")

    small = [tool(f"s__t{n}", 150) for n in range(8)]  # 185 to 193 tokens each
    ref = Tool("s__ref", "r", {"type": "object", "properties": {"a": {"$ref": "x.json"}}}, run)
    kept, [notice] = offered([("s", [*small, tool("s__big", 3_000), ref])], 20_000)
    assert kept == small
    assert notice.level == "warning"
    assert notice.message.startswith("MCP server s: 2 tools not offered. s__ref (refers to x")
    assert "x.json): an input schema that refers outside itself, which Cairn does not fetch; " in (
        notice.message
    )
    assert "; s__big (3,0" in notice.message
    assert notice.message.endswith(
        " tokens): over the 2,500 tokens one tool's schema may take (an eighth of the "
        "20,000-token window)."
    )

    kept, [notice] = offered([("a", small[:4]), ("b", small[4:])], 1_600)  # 800 for all
    assert kept == small[:4]
    assert notice.message == (
        "MCP server b: 4 tools not offered. s__t4 (193 tokens), s__t5 (193 tokens), "
        "s__t6 (193 tokens), s__t7 (193 tokens): past the 800 tokens all the tools' schemas "
        "may take together (half of the 1,600-token window)."
    )
    kept, notices = offered([("a", small[:4]), ("b", small[4:])], 1_600, taken=500)
    assert kept == small[:1] and [n.message[:14] for n in notices] == [
        "MCP server a: ",
        "MCP server b: ",
    ]
    assert offered([("a", small)], 200_000) == (small, [])

    far = {"type": "object", "properties": {"a": {"$ref": "http://x/" + "y" * 5_000}}}
    many = [Tool(f"m__t{n}", "m", far, run) for n in range(1_000)]
    [notice] = offered([("m", many)], 200_000)[1]
    assert notice.message.startswith("MCP server m: 1000 tools not offered. m__t0 (refers to")
    assert " and 990 more: an input schema" in notice.message and len(notice.message) < 2_000
