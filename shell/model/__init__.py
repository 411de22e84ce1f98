"""Talking to models: the client (`client.py`: streaming and retries), what a failure means
(`errors.py`), the reply (`reply.py`), and getting litellm ready (`loader.py`)."""

from __future__ import annotations

from shell.model.client import LLM
from shell.model.errors import ModelError
from shell.model.reply import ModelReply, ToolCallRequest

__all__ = ["LLM", "ModelError", "ModelReply", "ToolCallRequest"]
