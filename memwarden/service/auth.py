"""Bearer JWTs for the service (PyJWT): keys from files or the environment, never the network.

The algorithm is the configured one only (`[service.auth] algorithm`): HS256 with a shared
secret, or RS256 / EdDSA with a public key; the token's own header never chooses it, so
`alg: none` and HS/RS confusion fail. `exp`, `sub`, `aud` and `iss` are required. Scopes
come from the `scope` claim (space-separated, OAuth style) or a `scopes`/`scp` list.
"""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path
from typing import Any

import jwt

from memwarden.model.errors import ConfigError
from memwarden.service.errors import Principal, ServiceError, make_principal

MIN_SECRET_BYTES = 32
MAX_TOKEN_CHARS = 8192


def _read_key(settings: dict[str, Any], env_key: str, file_key: str, what: str) -> str | None:
    name = settings.get(env_key) or ""
    if name and os.environ.get(name):
        return os.environ[name]
    path = settings.get(file_key) or ""
    if path:
        try:
            return Path(path).read_text("utf-8").strip()
        except OSError as exc:
            raise ConfigError(f"service.auth.{file_key}: cannot read {path} "
                              f"({exc.strerror})") from None
    return None


def verification_key(settings: dict[str, Any]) -> Any:
    """The key tokens are checked with, from `[service.auth]`; a ConfigError when none."""
    alg = settings["algorithm"]
    if alg == "HS256":
        secret = _read_key(settings, "secret_env", "secret_file", "secret")
        if not secret:
            raise ConfigError(f"service.auth: HS256 needs a secret: set ${settings['secret_env']}"
                              " or service.auth.secret_file")
        if len(secret.encode()) < MIN_SECRET_BYTES:
            raise ConfigError(f"service.auth: the HS256 secret must be at least "
                              f"{MIN_SECRET_BYTES} bytes")
        return secret
    pem = _read_key(settings, "public_key_env", "public_key_file", "public key")
    if not pem:
        raise ConfigError(f"service.auth: {alg} needs a public key: set "
                          "service.auth.public_key_file or public_key_env")
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import ed25519, rsa

    try:
        key = serialization.load_pem_public_key(pem.encode())
    except ValueError:
        raise ConfigError("service.auth: the public key is not a PEM public key") from None
    wanted = rsa.RSAPublicKey if alg == "RS256" else ed25519.Ed25519PublicKey
    if not isinstance(key, wanted):
        raise ConfigError(f"service.auth: the public key does not fit algorithm {alg}")
    return key


class Verifier:
    """Checks bearer tokens; remembers good ones until they expire (verifying costs more
    than a request)."""

    def __init__(self, settings: dict[str, Any], grants: dict[str, list[str]]) -> None:
        self.settings = settings
        self.algorithm = settings["algorithm"]
        self.key = verification_key(settings)
        self.grants = grants
        self._seen: dict[str, tuple[int, Principal, dict[str, Any]]] = {}
        self._lock = threading.Lock()

    def known(self, token: str) -> bool:
        """Whether `token` was verified before and has not expired (so checking it again
        costs no signature check)."""
        with self._lock:
            seen = self._seen.get(token)
        return seen is not None and seen[0] > time.time()

    def verify(self, token: str) -> tuple[Principal, dict[str, Any]]:
        """(principal, claims); ServiceError 401 when the token is not good."""
        now = time.time()
        with self._lock:
            seen = self._seen.get(token)
        if seen is not None and seen[0] > now:
            return seen[1], seen[2]
        if not token or len(token) > MAX_TOKEN_CHARS:
            raise _unauthorized("the bearer token is empty or too long")
        try:
            claims = jwt.decode(
                token, self.key, algorithms=[self.algorithm],
                audience=self.settings["audience"], issuer=self.settings["issuer"],
                leeway=int(self.settings.get("leeway_seconds", 0)),
                options={"require": ["exp", "sub", "aud", "iss"]})
        except jwt.ExpiredSignatureError:
            raise _unauthorized("the token has expired; get a new one") from None
        except jwt.InvalidTokenError as exc:
            raise _unauthorized(f"the token is not valid here ({exc})") from None
        sub = claims.get("sub")
        if not isinstance(sub, str) or not sub or len(sub) > 200:
            raise _unauthorized("the token's sub must be a non-empty string")
        principal = make_principal(sub, scopes_of(claims), self.grants)
        with self._lock:
            if len(self._seen) > 10_000:
                self._seen.clear()
            self._seen[token] = (int(claims["exp"]), principal, claims)
        return principal, claims


def scopes_of(claims: dict[str, Any]) -> set[str]:
    out: set[str] = set()
    scope = claims.get("scope")
    if isinstance(scope, str):
        out.update(scope.split())
    for name in ("scopes", "scp"):
        value = claims.get(name)
        if isinstance(value, list):
            out.update(v for v in value if isinstance(v, str))
        elif isinstance(value, str):
            out.update(value.split())
    return out


def _unauthorized(message: str) -> ServiceError:
    return ServiceError(401, "unauthorized", message)


def issue_token(settings: dict[str, Any], sub: str, scopes: list[str], ttl: int,
                signing_key: str | None = None, now: int | None = None) -> str:
    """A token for development (`memwarden token issue`). HS256 signs with the configured
    secret; RS256/EdDSA need the private key (PEM) in `signing_key`."""
    alg = settings["algorithm"]
    if alg == "HS256":
        key: Any = signing_key or verification_key(settings)
    else:
        if not signing_key:
            raise ConfigError(f"token issue: {alg} needs --key PRIVATE_KEY.pem")
        key = signing_key
    issued = int(time.time() if now is None else now)
    claims = {"sub": sub, "scope": " ".join(scopes), "aud": settings["audience"],
              "iss": settings["issuer"], "iat": issued, "exp": issued + ttl}
    return jwt.encode(claims, key, algorithm=alg)
