"""The 10-step ReAct run through the OpenAI Agents SDK and its Temporal plugin
(temporalio-openai-agents): each model call is the plugin's activity, `lookup` an activity
through `activity_as_tool`. Chat Completions against the scripted model server; the SDK's trace
export to OpenAI is off (no network beside the two servers); everything else as the plugin sets it.
"""

import asyncio
from datetime import timedelta

from agents import Agent, OpenAIProvider, Runner, set_tracing_disabled
from temporalio import activity, workflow
from temporalio.client import Client
from temporalio.openai_agents import ModelActivityParameters, OpenAIAgentsPlugin
from temporalio.openai_agents.workflow import activity_as_tool
from temporalio.worker import Worker

from peer_worker import INSTRUCTIONS, MODEL, lookup_text, run_until_terminated, setting


@activity.defn
async def lookup(query: str) -> str:
    """Look up a fact. Returns a short text about the query."""
    return lookup_text(query)


@workflow.defn
class OpenAIAgentsLookup:
    @workflow.run
    async def run(self, question: str, max_calls: int) -> str:
        agent = Agent(
            name="Researcher",
            instructions=INSTRUCTIONS,
            model=MODEL,
            tools=[activity_as_tool(lookup, start_to_close_timeout=timedelta(seconds=30))],
        )
        result = await Runner.run(agent, input=question, max_turns=max_calls)
        return str(result.final_output)


async def main() -> None:
    set_tracing_disabled(True)
    provider = OpenAIProvider(
        base_url=setting("OPENAI_BASE_URL"), api_key=setting("OPENAI_API_KEY"), use_responses=False
    )
    plugin = OpenAIAgentsPlugin(
        model_params=ModelActivityParameters(start_to_close_timeout=timedelta(seconds=120)),
        model_provider=provider,
    )
    client = await Client.connect(setting("TEMPORAL_ADDRESS"), plugins=[plugin])
    worker = Worker(
        client,
        task_queue=setting("PEER_TASK_QUEUE"),
        workflows=[OpenAIAgentsLookup],
        activities=[lookup],
    )
    await run_until_terminated(worker)


if __name__ == "__main__":
    asyncio.run(main())
