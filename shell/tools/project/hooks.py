"""The git hooks folders that apply to a project path: `<git dir>/hooks` and `core.hooksPath`.

A hook runs with the user's rights at their next commit, so a project tool never writes one.
`.git` is refused by name; a husky-style `core.hooksPath = .husky` names a folder outside it,
which only git knows of. It is asked through the git door (`shell.git.runner`) each time, of the
repository holding the path: a project may hold several, and a command may change the setting.
"""

from __future__ import annotations

from pathlib import Path

from shell.git.runner import Git, GitFailure


def hooks_folders(path: Path) -> list[Path]:
    """The real paths of the hooks folders of the git repository holding `path` (which need
    not exist yet); none outside a repository, or when git cannot say."""
    here = next((p for p in (path, *path.parents) if p.is_dir()), None)
    if here is None:
        return []
    git = Git(here)
    try:
        found = git.run(["rev-parse", "--show-toplevel", "--git-common-dir"], check=False)
        if found.code != 0:
            return []
        top, common = found.stdout.splitlines()[:2]
        # The runner's own `-c core.hooksPath=/dev/null` is there too, in the "command" scope.
        named = git.run(
            ["config", "--show-scope", "--type=path", "--get-all", "core.hooksPath"], check=False
        )
    except (GitFailure, ValueError):
        return []
    folders = [(here / common) / "hooks"]
    values = [
        value
        for scope, _, value in (line.partition("\t") for line in named.stdout.splitlines())
        if scope != "command" and value
    ]
    if values:
        folders.append(Path(top) / values[-1])  # the last one wins; a relative one is the top's
    return [folder.resolve() for folder in folders]
