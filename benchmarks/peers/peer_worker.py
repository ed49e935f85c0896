"""What both peer workers share: the `lookup` tool's text, the environment they are given, and
how a worker runs until the benchmark stops it (SIGTERM), saying `ready` once it polls.

Environment (set by benchmarks/peers.ts): TEMPORAL_ADDRESS, PEER_TASK_QUEUE, OPENAI_BASE_URL,
OPENAI_API_KEY (the scripted model server's; never printed).
"""

import asyncio
import os
import signal

from temporalio.worker import Worker

MODEL = "scripted-model"
INSTRUCTIONS = "You are a research assistant. Call the lookup tool to find facts, then answer."


def lookup_text(query: str) -> str:
    """The same text as the project's test `lookup` tool (test/fakes/test-tools.ts)."""
    return f"Facts about {query}: BYD sold 4,272,145 vehicles in 2024; Tesla delivered 1,789,226."


def setting(name: str) -> str:
    value = os.environ.get(name)
    if not value:
        raise SystemExit(f"{name} is not set")
    return value


async def run_until_terminated(worker: Worker) -> None:
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, stop.set)
    async with worker:
        print("ready", flush=True)
        await stop.wait()
