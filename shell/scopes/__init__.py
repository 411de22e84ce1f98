"""Memory scopes: the global workspace (about the user, read in every project) and one
workspace per project, found from the project folder's real path.

A project scope is a full workspace of its own (git repo, MEMORY.md, daily notes, `.cairn/`);
what one scope may read of another is decided here and nowhere else (`shell.scopes.scopes`).
"""
