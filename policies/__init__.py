"""memwarden.policies: the checks, one module per rule family, and the default policy pack."""
