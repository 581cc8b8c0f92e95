"""InvocationContext: everything one invocation's agents share while it runs."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from google.genai import types

from ..errors import AgentNotFoundError, LlmCallsLimitExceededError
from ..events import Event
from ..events.pending_calls import PendingCalls
from ..plugins.plugin_manager import PluginManager
from .agent_tree import index_tree
from .run_config import RunConfig

if TYPE_CHECKING:
    from ..agents.base_agent import BaseAgent
    from ..apps import EventsCompactionConfig
    from ..artifacts import BaseArtifactService
    from ..auth import BaseCredentialService
    from ..sessions import BaseSessionService, Session
    from ..tools.tool_journal import BaseToolJournal
    from ..tracing import Span, SpanRecorder


@dataclass(kw_only=True, eq=False)
class InvocationRun:
    """Bookkeeping shared by every context of one run: committed events, pending calls, budgets.

    ``events`` holds this invocation's committed events in order (earlier runs included when resuming);
    ``pending`` maps a long-running call id to (call, branch) until a client answers it for good.
    """

    agents: dict[str, BaseAgent]
    events: list[Event] = field(default_factory=list)
    pending: PendingCalls = field(default_factory=PendingCalls)
    llm_calls: int = 0
    resumed: bool = False
    resumable: bool = False
    """Checkpoint workflow progress and pause on long-running calls (ADK's ResumabilityConfig)."""
    llm_end_events: bool = False
    """Also commit ``end_of_agent`` when an LlmAgent finishes (ADK's resumable event shape; resumption does
    not need it, an LlmAgent's progress is read from its own events)."""
    failed: bool = False
    """An agent of this run reported a failure as an error event: nothing else runs."""
    uncommitted: dict[tuple[str, str], Any] = field(default_factory=dict)
    """Tool answers computed but not yet committed, by (invocation_id, call_id); shared across runs of one
    Runner so a resumed run reuses them instead of repeating the side effect."""
    contents: dict[tuple[str, str | None], Any] = field(default_factory=dict)
    """The model contents built so far, per (agent name, branch): a ``flows.contents_cache.ContentsCache``.
    The Runner takes it from ``BaseSessionService.history_scratch``, so it may outlive the run."""
    spans: SpanRecorder | None = None
    """Records the run's agent, model and tool spans when the Runner has a span store (``runtime.tracing``)."""
    auth_configs: dict[str, Any] = field(default_factory=dict)
    """The full AuthConfig (client secret included) each tool call of this run asked a credential for, by call
    id: events carry them redacted (``runtime.auth.requests``)."""
    credentials: dict[str, Any] = field(default_factory=dict)
    """The users' credentials loaded for answered credential requests, by credential key: what
    ``ToolContext.get_auth_response`` returns. Only in memory, never committed."""
    agent_runs: dict[str, int] = field(default_factory=dict)
    """How many times each agent path (run id aside) started in this run: the run id of its next start
    (``desk@2`` once ``desk`` got the turn back from a transfer; see ``agents.paths``)."""

    def record(self, event: Event) -> None:
        """Note a committed event: history, and which long-running calls it opens or answers."""
        self.events.append(event)
        self.pending.note(event)
        if self.uncommitted and event.content is not None:
            for response in event.get_function_responses():
                self.uncommitted.pop((event.invocation_id, response.id), None)


@dataclass(kw_only=True, eq=False)
class InvocationContext:
    """The running invocation as one agent sees it. Child agents get a copy with their own ``agent``/``branch``;
    ``run`` is shared by all copies."""

    invocation_id: str
    agent: BaseAgent
    session: Session
    session_service: BaseSessionService
    artifact_service: BaseArtifactService | None = None
    tool_journal: BaseToolJournal | None = None
    credential_service: BaseCredentialService | None = None
    """Where users' credentials are kept (``runtime.auth``); None: a credential request parks, and only an
    answer carrying the token itself gives the tool a credential."""
    user_content: types.Content | None = None
    run_config: RunConfig = field(default_factory=RunConfig)
    branch: str | None = None
    end_invocation: bool = False
    plugin_manager: PluginManager = field(default_factory=PluginManager)
    """The Runner's plugins; agents, flows and tools call them through it."""
    events_compaction_config: EventsCompactionConfig | None = None
    """The app's events compaction: with a token threshold, LlmAgents compact before their model calls."""
    run: InvocationRun = None  # type: ignore[assignment]  # built in __post_init__ when not given
    span: Span | None = None
    """The span of the agent running in this context (the parent of its model and tool spans), when tracing."""
    node_path: str | None = None
    """Set when the agent runs as a workflow node (``wf@1/writer@1``): its model sees only this node run."""
    agent_path: str = ""
    """The ``nodeInfo.path`` of the running agent's events, as google-adk 2.13 derives it (``agents.paths``)."""
    node_input_content: types.Content | None = None
    """A workflow node agent's input (the previous node's output), shown to its model as the user's message."""

    def __post_init__(self) -> None:
        if self.run is None:  # a context made by hand (tests, custom tooling): index the agent's tree
            self.run = InvocationRun(agents=index_tree(self.agent.root_agent))

    @property
    def app_name(self) -> str:
        """The app the session belongs to."""
        return self.session.app_name

    @property
    def user_id(self) -> str:
        """The user the session belongs to."""
        return self.session.user_id

    def model_copy(self, *, update: dict[str, Any] | None = None) -> InvocationContext:
        """A copy with some fields replaced (the name mirrors ADK's pydantic context)."""
        return dataclasses.replace(self, **(update or {}))

    def for_agent(self, agent: BaseAgent, branch: str | None = None) -> InvocationContext:
        """The context ``agent`` runs in; ``branch`` defaults to the current one."""
        return dataclasses.replace(self, agent=agent, branch=branch if branch is not None else self.branch,
                                   end_invocation=False)

    def find_agent(self, name: str) -> BaseAgent:
        """The agent called ``name`` in this invocation's tree; AgentNotFoundError when absent."""
        agent = self.run.agents.get(name)
        if agent is None:
            raise AgentNotFoundError(f"Transfer target agent {name!r} not found.")
        return agent

    def halted(self) -> bool:
        """True when the invocation must not go on here: it failed, or it is paused in this branch."""
        return self.run.failed or self.is_paused()

    def increment_llm_call_count(self) -> None:
        """Count a model call; raise LlmCallsLimitExceededError past ``run_config.max_llm_calls``."""
        self.run.llm_calls += 1
        limit = self.run_config.max_llm_calls
        if limit > 0 and self.run.llm_calls > limit:
            raise LlmCallsLimitExceededError(f"Max number of llm calls limit of `{limit}` exceeded")

    def is_paused(self) -> bool:
        """True when a long-running call issued in this context's branch (or below) awaits its answer.

        A pending call pauses the invocation whether or not the runner is resumable: workflow agents stop
        there instead of going on to their next sub-agent."""
        if not self.run.pending:
            return False
        if self.branch is None:
            return True
        prefix = self.branch + "."
        return any(b == self.branch or (b or "").startswith(prefix) for _, b in self.run.pending.values())
