"""The turn's loop: one model call, one round of tool calls, and cancellation."""
