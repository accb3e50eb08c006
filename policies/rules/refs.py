"""MW508 protected ref: who may move which ref on the server (hooks/pre_receive.py).

The hook's own rule: findings about the push rather than about a file or a message. Its
checks live in the hook, which alone knows the authenticated pusher.
"""

from __future__ import annotations

from memwarden.model.findings import ERROR
from memwarden.policies.registry import COMMIT, Rule, register

register(Rule(
    "MW508", "protected-ref", ERROR,
    "A push moves a ref in a way the server trust model forbids: the pusher lacks the role, "
    "main does not fast-forward, or the ref, tag, note or config change is not allowed.",
    "The pusher's name comes from the server's authentication ([server] pusher_vars); commit "
    "author and committer fields can be typed by anyone, so they never decide who may move "
    "main, land bookkeeping, veto a proposal or tag a release. Refused: main moved by anyone "
    "but an owner or an apply pusher, rewound, deleted, or given a merge or a raw proposal "
    "commit; apply-made commits pushed by a non-apply pusher; a bound agent's proposal branch "
    "pushed or deleted by anyone but its pushers, owners and apply pushers, or holding "
    "non-proposal commits; tags from non-owners; lifecycle notes from anyone but owners and "
    "apply pushers, rewritten, or recording an owner's veto as someone else; refs outside "
    "main, proposals/*, tags, refs/notes/memwarden and [server] allow_refs; a memwarden.toml "
    "that does not load or that enforces with no owner left.",
    "GL_USER=mallory pushes main with a commit whose committer is 'memwarden-apply'",
    "GL_USER=ci (listed in [server] apply_pushers) pushes the commits `memwarden apply` made",
    COMMIT, None, None,
    "Push as the role the ref needs ([server] owners, apply_pushers, [agents.<id>] pushers), "
    "or send the change as a proposal branch; docs/server-hooks.md lists every rule."))
