"""Every error the runtime raises, split by who must act.

- ``UsageError`` and subclasses: the caller sent something wrong; fix the input (HTTP 4xx).
- ``NotFoundError`` and subclasses: an id that does not exist (HTTP 404).
- ``ConflictError`` and subclasses: the request is valid but the current state refuses it (HTTP 409).
- ``RunError`` and subclasses: the agent run itself failed; recorded on the invocation.
- ``RetryableError`` and subclasses: a transient condition; try again later.
"""

from __future__ import annotations


class AgentqError(Exception):
    """Raised as the base of every agentq error; never raised directly."""


# --- the caller's mistake -------------------------------------------------------------------------


class UsageError(AgentqError, ValueError):
    """Raised when input is malformed or violates the API contract."""


class InvalidMessageError(UsageError):
    """Raised when a new message is empty or carries parts a user message may not carry."""


class InvalidStateValueError(UsageError):
    """Raised when a state value cannot be serialised to JSON."""


class InvalidAgentTreeError(UsageError):
    """Raised when an agent tree is malformed (duplicate names, an agent with two parents)."""


class InvalidAgentConfigError(UsageError):
    """Raised when an agent setting is given in the wrong place (tools or an instruction inside generate_content_config)."""


class TransferNotAllowedError(UsageError):
    """Raised when an agent transfers to itself, to an unrelated agent, or where its disallow_transfer_* flags forbid."""


class CredentialError(UsageError):
    """Raised when an OAuth authorization cannot complete: a bad, used or expired state, a provider's refusal, a
    failed code exchange or refresh, or a credential store without its encryption key."""


class PayloadTooLargeError(UsageError):
    """Raised when a request body or message exceeds the configured size limit."""


class ModelNotConfiguredError(UsageError):
    """Raised when a model backend has no credentials or endpoint to call (e.g. no GOOGLE_API_KEY for Gemini)."""


class NotSupportedYetError(AgentqError, ImportError):
    """Raised when code imports a name google-adk 2.13 exports that agentq does not provide yet.

    An ImportError, so ``from runtime.agents import X`` fails with this message (Python would replace an
    AttributeError's with a generic one), naming both the runtime path and ADK's.
    """

    def __init__(self, module: str, name: str):
        adk_module = "google.adk" + module.removeprefix("runtime")
        super().__init__(
            f"cannot import name {name!r} from {module!r}: {adk_module}.{name} is not supported by agentq yet",
            name=module,
        )


# --- unknown ids ----------------------------------------------------------------------------------


class NotFoundError(AgentqError, LookupError):
    """Raised when a named thing does not exist."""


class SessionNotFoundError(NotFoundError, ValueError):
    """Raised when a session id is unknown for the given app and user (also a ValueError, as in ADK)."""


class AppNotFoundError(NotFoundError):
    """Raised when an app name is not served by this process."""


class AgentNotFoundError(NotFoundError, ValueError):
    """Raised when a transfer or resume names an agent that is not in the tree (also a ValueError, as in ADK)."""


class InvocationNotFoundError(NotFoundError):
    """Raised when an invocation id is unknown."""


class FunctionCallNotFoundError(NotFoundError, ValueError):
    """Raised when a function response answers a call id that no invocation issued (also a ValueError)."""


# --- refused by the current state -----------------------------------------------------------------


class ConflictError(AgentqError):
    """Raised when the request is well formed but the current state refuses it."""


class StaleSessionError(ConflictError):
    """Raised when a writer appends to a session that changed since it was read."""


class FencedOutError(ConflictError):
    """Raised when a writer's fencing token is older than the session lease's current one."""


class CallNotPendingError(ConflictError):
    """Raised when a function response answers a call that is not pending (already answered, or never long-running)."""


class InvalidTransitionError(ConflictError):
    """Raised when an invocation cannot move from its current status to the requested one."""


# --- the run failed -------------------------------------------------------------------------------


class RunError(AgentqError):
    """Raised when an agent run fails for a reason that retrying will not fix."""


class LlmCallsLimitExceededError(RunError):
    """Raised when an invocation makes more model calls than ``RunConfig.max_llm_calls`` allows."""


class ModelError(RunError):
    """Raised when the model backend answers with a non-retryable error."""

    def __init__(self, message: str, *, code: str | None = None):
        super().__init__(message)
        self.code = code


class AgentRunFailedError(RunError):
    """Raised when an agent run as a tool (AgentTool) ends on an error event; ``code`` is that event's code."""

    def __init__(self, message: str, *, code: str | None = None):
        super().__init__(message)
        self.code = code


class InvocationTimeoutError(RunError):
    """Raised when an invocation runs past its wall-clock limit."""


class PoisonInvocationError(RunError):
    """Raised when an invocation's runs kept ending with their worker process gone (``AGENTQ_MAX_ATTEMPTS``)."""


class InvocationCancelledError(RunError):
    """Raised inside a run when its invocation was cancelled."""


# --- try again ------------------------------------------------------------------------------------


class RetryableError(AgentqError):
    """Raised when a transient condition stopped the work; the same request may succeed later."""


class RetryableModelError(RetryableError):
    """Raised when the model backend is overloaded or rate-limited (HTTP 429/503)."""

    def __init__(self, message: str, *, code: str | None = None):
        super().__init__(message)
        self.code = code


class SessionExistsError(ConflictError):
    """Raised when creating a session whose id is already taken."""
