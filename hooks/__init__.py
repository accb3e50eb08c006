"""memwarden.hooks: git hook entry points.

pre-commit, commit-msg, prepare-commit-msg and the server-side pre-receive hook.
"""
