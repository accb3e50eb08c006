"""MW3xx prompt-injection markers."""
