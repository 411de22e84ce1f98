"""Cairn without the TUI: `cairn run`, `search`, `index`, `history`, `revert`, `remote`, `sync`,
`tools`.
"""
