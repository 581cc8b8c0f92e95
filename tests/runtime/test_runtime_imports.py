"""The runtime's public names import from the ADK-shaped paths without the distributed stack."""

import subprocess
import sys


def test_tools_agents_runners_and_apps_import_without_celery_fastapi_or_redis():
    code = (
        "import sys, runtime.tools, runtime.agents, runtime.agents.run_config, runtime.runners, runtime.apps\n"
        "print(','.join(sorted(m for m in ('celery', 'fastapi', 'redis') if m in sys.modules)))\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == ""


def test_public_names_are_exported_where_adk_has_them():
    from runtime.agents import (  # noqa: F401
        Agent,
        BaseAgent,
        CallbackContext,
        InvocationContext,
        LlmAgent,
        LoopAgent,
        ParallelAgent,
        ReadonlyContext,
        RunConfig,
        SequentialAgent,
        StreamingMode,
    )
    from runtime.agents.run_config import RunConfig as RC  # noqa: F401
    from runtime.agents.run_config import StreamingMode as SM
    from runtime.apps import App  # noqa: F401
    from runtime.runners import InMemoryRunner, Runner  # noqa: F401
    from runtime.tools import (  # noqa: F401
        AgentTool,
        BaseTool,
        FunctionTool,
        LongRunningFunctionTool,
        ToolContext,
        exit_loop,
        transfer_to_agent,
    )

    assert Agent is LlmAgent and RC is RunConfig and SM is StreamingMode
