"""Output: reporters that turn findings into text, JSON, SARIF and GitHub annotations."""
