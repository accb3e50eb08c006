"""MW2xx structure rules (frontmatter, schemas, contracts, entries, registry)."""
