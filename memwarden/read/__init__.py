"""The read side: read, diff, search, context, entities, snapshot/restore and the Python API."""
