"""Cairn without the TUI: the headless commands of `cairn` (`commands.HEADLESS`), one module per
family: `run`, `search` (and `index`), `dream`, `history` (and `revert`), `sync` (`remote`,
`sync`, `init --remote`), `tools`, `init`; the options they share in `options`.
"""
