"""`cairn acp`: Cairn's agent loop over the Agent Client Protocol, for Toad, Zed or any ACP
client, with the ACP's own Python SDK (`agent-client-protocol`).

- `updates`: what each of Cairn's events shows the client, as the protocol allows: streamed
  text, tool calls with their status, memory and lifecycle facts as the agent's thoughts.
- `agent`: the ACP agent: sessions (one Cairn `Agent` each), prompts, cancel, and the
  approvals asked of the client (`session/request_permission`).
"""
