"""MCP servers from the config (`[mcp.<name>]`), stdio or streamable HTTP, through the official
`mcp` SDK: their tools offered beside the built-in ones.

`hub.py` is the one door (`McpHub`: start, offer, servers, drain, aclose); `server.py` holds
one server's connection in a supervisor task and makes the calls; `tools.py` wraps a server's
tools as Cairn tools, whose arguments `schemas.py` validates without the network; `offer.py`
says which tools the window can hold; `results.py` turns a call's result into what the model
reads; `failures.py` says in one line why a server did not start or stopped; `spawn.py`
learns a stdio server's process (for its exit code). The SDK is imported inside the functions
that use it: it costs most of a second.
"""

from __future__ import annotations

from shell.tools.mcp.hub import McpHub

__all__ = ["McpHub"]
