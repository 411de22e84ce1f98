"""Citations of project files on memory lines: found, hashed at write time, checked at recall."""
