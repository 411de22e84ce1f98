"""Tools the model calls: the protocol and toolbox, approvals, the workbench of project and MCP
tools, and results fitted to the window.
"""
