"""What the transcript shows: tool-call cards and their parts, diffs, receipts and other blocks."""
