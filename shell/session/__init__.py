"""The session: its record of counters (`record.py`), the store that keeps it and its transcript
across restarts and crashes (`store.py`), and the live conversation everyone holds
(`conversation.py`); a round a kill cut short answered in full (`repair.py`); text that can
always be written (`encodable.py`)."""
