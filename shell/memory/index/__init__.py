"""The recall index: Markdown files → units (chunking) → MiniLM vectors (embed) → LanceDB tables
and a RAM matrix (store, vector_matrix), kept in step with the files (scan, writer, watch) by
`MemoryIndex` (memory_index)."""
