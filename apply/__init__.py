"""memwarden.apply: the proposal lifecycle (propose, gate, apply, retention)."""
