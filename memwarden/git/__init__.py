"""The one door to git: pygit2 for objects, the git CLI for transport, and the
working-tree and tree sources that checks read files from."""
