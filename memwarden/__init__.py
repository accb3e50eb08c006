"""memwarden: governs a git repository that holds LLM agents' long-term memory."""

__version__ = "0.1.0"
