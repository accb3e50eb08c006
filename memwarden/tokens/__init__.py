"""Token counting with tiktoken's encodings, offline and hash-verified."""
