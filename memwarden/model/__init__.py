"""The memory repository's model: layout, memory files, entries, trailers, findings,
config, errors and times."""
