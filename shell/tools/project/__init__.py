"""The project tools: read, list, search and edit the project folder's files, run commands.

Every path goes through `ProjectRoot` (confined to the project folder); edits and commands ask
first (`shell.tools.approvals`); big outputs are kept whole in `OutputStore` and read on with
`read_output` (`shell.tools.output`), or `read_file("output:<call id>")`. Commands run in
`Sandbox` where it works (`shell.tools.project.sandbox`).
"""

from __future__ import annotations

from shell.config import ToolSettings
from shell.tools.project.command import command_tool
from shell.tools.project.files import file_tools
from shell.tools.project.outputs import OutputStore
from shell.tools.project.root import ProjectRoot
from shell.tools.project.sandbox import Sandbox
from shell.tools.toolbox import Tool

__all__ = ["OutputStore", "ProjectRoot", "Sandbox", "project_tools"]


def project_tools(
    root: ProjectRoot, outputs: OutputStore, settings: ToolSettings, sandbox: Sandbox | None = None
) -> list[Tool]:
    """read_file, list_files, grep, edit_file, write_file and run_command, in `root` (commands
    confined by `sandbox`)."""
    return [*file_tools(root, outputs), command_tool(root, outputs, settings, sandbox=sandbox)]
