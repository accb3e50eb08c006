"""MW3xx prompt injection: memory is data, never instructions.

Memory is loaded into an agent's context raw, so anything that *looks like* a role header,
a chat-template token, an instruction override, hidden text, an exfiltration link, an
encoded payload or a tool call can steer the next run (errors, MW301-MW308); text that
speaks to the model - a directive, a new persona, a request for its instructions, an
order to act on tools or people - is suspicious wherever it appears (warnings, MW309-MW312,
and MW313, a small learned scorer of the entries the patterns leave alone).

What is scanned. Every governed text kind except `config`: memwarden.toml is the human-owned
place where waivers live and legitimately names rules and fingerprints. Markdown and text
files (memory files, run reports, `_agent.md`, sources, logic pseudo code) are scanned raw,
fenced code blocks and inline code included: a marker that "only documents" an attack is
still read by the model. JSON files (`meta.json`, `registry.json`, `*.jsonl`, logic
`*.json`) are scanned string by string: each string literal is decoded (so `\\u202e` or a
`\\n# SYSTEM:` inside a value is seen as the model would see it) and reported at its place
in the file; the JSON structure itself (keys like "tool" next to "arguments" in a jsonl
observation log) is data, not a tool call. Files whose text is None (binary, not UTF-8,
too large) are skipped; other rules report them.

Agent contracts. The body of `agents/<slug>/_agent.md` *is* the agent's system prompt, so
role headers (MW301), persona phrases and the directive/persona warnings do not apply
there; everything else is checked.

Inline waivers are not allowed: a directive such as `<!-- memwarden: ignore MW303 -->`,
`noqa: MW305` or a bare `# noqa` in a governed file is itself an MW303 finding (an
instruction aimed at the checker); inside an HTML comment it is also an MW305 error.
Waivers live only in memwarden.toml, keyed by the finding's fingerprint: the sha256 of the
offending text itself, so a waiver survives the line moving.

Layout: tables.py (marker lists and trigger finders), markers.py (each family's patterns),
scanner.py (the passes), signals.py (the warning-level signals), scorer.py (MW313's gate,
entries and model), rules.py (registration).
"""

from __future__ import annotations

from memwarden.policies.rules.injection.common import CONTRACT, SCANNED_KINDS, Hit
from memwarden.policies.rules.injection.rules import file_findings, findings_for, scan
from memwarden.policies.rules.injection.scanner import warm

__all__ = ["CONTRACT", "SCANNED_KINDS", "Hit", "file_findings", "findings_for", "scan", "warm"]
