"""`cairn mcp`: the workspace's memory offered to any agent over the Model Context Protocol.

Another agent (an MCP client) gets the tools Cairn's own model has (`memory_search`,
`memory_get`, `memory_append`, `memory_write`), the dream review (`dream_proposals`,
`dream_accept`, `dream_reject`) and the history (`memory_history`), and MEMORY.md and today's
note as resources. Everything passes the same doors as Cairn's own calls: the memory door
(confinement, the secrets policy, one commit per write, the cross-process lock), the search
pipeline, dreaming's review. Each write's commit names the client (`origin`), and the sync
pushes it like any other.

- `origin`: who a call comes from, as its commit says.
- `offer`: the tools offered, with what they tell a client's model.
- `review`: the dream review and the history as tools.
- `resources`: MEMORY.md and today's note.
- `server`: the SDK's server over those, on stdio.
- `http`: the same on streamable HTTP, on loopback, behind a token.
"""
