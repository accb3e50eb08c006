"""The `memwarden` command line: one module per command or command group; main.py assembles them."""
