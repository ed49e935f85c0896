"""The 10-step ReAct run through Pydantic AI's Temporal durable execution (TemporalAgent): each
model request and each `lookup` call an activity, Chat Completions against the scripted model
server (OPENAI_BASE_URL, OPENAI_API_KEY), the defaults of PydanticAIPlugin otherwise.
"""

import asyncio
import warnings

from pydantic_ai import Agent
from pydantic_ai.durable_exec.temporal import PydanticAIPlugin, PydanticAIWorkflow, TemporalAgent
from pydantic_ai.models.openai import OpenAIChatModel
from pydantic_ai.usage import UsageLimits
from temporalio import workflow
from temporalio.client import Client
from temporalio.worker import Worker

from peer_worker import INSTRUCTIONS, MODEL, lookup_text, run_until_terminated, setting

# TemporalAgent is deprecated in 2.68 in favour of the TemporalDurability capability; both run
# the same activities. The issue names TemporalAgent, so the benchmark measures it.
warnings.filterwarnings("ignore", category=DeprecationWarning)
warnings.filterwarnings("ignore", message=".*TemporalAgent.*")

agent = Agent(OpenAIChatModel(MODEL, provider="openai"), name="researcher", instructions=INSTRUCTIONS)


@agent.tool_plain
async def lookup(query: str) -> str:
    """Look up a fact. Returns a short text about the query."""
    return lookup_text(query)


temporal_agent = TemporalAgent(agent)


@workflow.defn
class PydanticAILookup(PydanticAIWorkflow):
    __pydantic_ai_agents__ = [temporal_agent]

    @workflow.run
    async def run(self, question: str, max_calls: int) -> str:
        result = await temporal_agent.run(question, usage_limits=UsageLimits(request_limit=max_calls))
        return str(result.output)


async def main() -> None:
    client = await Client.connect(setting("TEMPORAL_ADDRESS"), plugins=[PydanticAIPlugin()])
    worker = Worker(client, task_queue=setting("PEER_TASK_QUEUE"), workflows=[PydanticAILookup])
    await run_until_terminated(worker)


if __name__ == "__main__":
    asyncio.run(main())
