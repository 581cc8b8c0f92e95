"""Encryption of what a credential store keeps (Fernet: AES-128-CBC with an HMAC-SHA256, from ``cryptography``).

The key is ``AGENTQ_CREDENTIAL_KEY``: 32 random bytes, URL-safe base64 (44 characters). Make one with
``python -c "from cryptography.fernet import Fernet; print(Fernet.generate_key().decode())"``. Several keys,
comma-separated, rotate: the first encrypts, every one decrypts.
"""

from __future__ import annotations

import os

from cryptography.fernet import Fernet, InvalidToken, MultiFernet

from ..errors import CredentialError

KEY_VARIABLE = "AGENTQ_CREDENTIAL_KEY"

GENERATE_HINT = 'python -c "from cryptography.fernet import Fernet; print(Fernet.generate_key().decode())"'


class Sealer:
    """Encrypts and decrypts text with the deployment's credential key(s)."""

    def __init__(self, keys: str):
        parts = [part.strip() for part in keys.split(",") if part.strip()]
        if not parts:
            raise CredentialError(f"{KEY_VARIABLE} is empty; make a key with {GENERATE_HINT}")
        try:
            self._fernet = MultiFernet([Fernet(part.encode()) for part in parts])
        except (ValueError, TypeError):
            raise CredentialError(f"{KEY_VARIABLE} is not a Fernet key (32 bytes, URL-safe base64, 44 "
                                  f"characters); make one with {GENERATE_HINT}") from None

    @classmethod
    def from_env(cls, environ: dict[str, str] | None = None) -> Sealer | None:
        """The sealer of ``AGENTQ_CREDENTIAL_KEY``; None when it is not set; CredentialError when it is malformed."""
        keys = (os.environ if environ is None else environ).get(KEY_VARIABLE)
        return None if keys is None else cls(keys)

    def seal(self, text: str) -> str:
        """``text`` encrypted and authenticated (an ASCII token; a new random IV each time)."""
        return self._fernet.encrypt(text.encode()).decode("ascii")

    def open(self, token: str) -> str:
        """The text sealed in ``token``; CredentialError when it was sealed with another key or altered."""
        try:
            return self._fernet.decrypt(token.encode("ascii")).decode()
        except (InvalidToken, UnicodeError):
            raise CredentialError(f"a stored credential could not be decrypted with {KEY_VARIABLE} (another key "
                                  "sealed it, or it was altered)") from None
