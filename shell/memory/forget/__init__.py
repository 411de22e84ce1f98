"""Forgetting a line: its tombstone (`tombstones`), the history purged of it (`purge`) and
`.cairn/` scrubbed of it (`state`). The command is `shell.forget`; the sync's side of it
`shell.sync.forgotten`."""
