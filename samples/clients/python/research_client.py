"""Drive the durable ReAct research agent from Python with the Temporal Python SDK.

The agent's workflows and worker are TypeScript, but a client needs none of that code: it
starts workflows by their type name on the worker's task queue, passes plain JSON, and talks
to running workflows through their query and update names:

    workflow      researchAgent   input {"question": ..., "limits": {...}, ...}  (src/core/run-input.ts)
                  researchBatch   input {"input": "sha256:...", "questions": N, "rollouts": R, "output": DIR}
                                  (src/core/batch-contract.ts)
    query         progress        what a run (or a batch) is doing now
    update        injectMessage   {"text": ...}: a user message before the run's next model call
    update        finishNow       {"reason": ...}: stop researching and give the best answer now
    cancellation                  the run ends with termination "cancelled", every tool call answered

Every command prints JSON on standard output. Run it from the project root against
`npx react-agent server` and `npm run worker` (see ../README.md):

    python research_client.py run "Which company sold more cars in 2024, BYD or Tesla?"
    python research_client.py start "Which company ...?" --id my-run
    python research_client.py progress my-run
    python research_client.py inject my-run "Use 2024 deliveries, not production."
    python research_client.py finish my-run --reason "that is enough"
    python research_client.py cancel my-run
    python research_client.py result my-run
    python research_client.py batch questions.jsonl --output /tmp/my-batch --id my-batch
    python research_client.py progress my-batch

Connection settings come from Temporal's standard environment configuration (TEMPORAL_ADDRESS,
TEMPORAL_NAMESPACE, TEMPORAL_API_KEY, TEMPORAL_PROFILE, ~/.config/temporalio/temporal.toml),
as for the agent's own CLI; the task queue from REACT_AGENT_TASK_QUEUE (default "react-agent").
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import os
import sys
import uuid
from pathlib import Path
from typing import Any

from temporalio.client import Client, WorkflowFailureError, WorkflowHandle
from temporalio.envconfig import ClientConfig
from temporalio.exceptions import ApplicationError, FailureError

RESEARCH_AGENT = "researchAgent"
RESEARCH_BATCH = "researchBatch"
TASK_QUEUE = os.environ.get("REACT_AGENT_TASK_QUEUE", "react-agent")


async def connect() -> Client:
    """Connects as configured by TEMPORAL_* variables or the TOML profile (default localhost:7233)."""
    config = ClientConfig.load_client_connect_config()
    config.setdefault("target_host", "localhost:7233")
    return await Client.connect(**config)


# --- One research run -------------------------------------------------------------------------


async def start_run(client: Client, run_input: dict[str, Any], workflow_id: str) -> WorkflowHandle:
    """Starts `researchAgent` by its type name; the input is a plain dict, sent as JSON."""
    return await client.start_workflow(
        RESEARCH_AGENT,
        run_input,
        id=workflow_id,
        task_queue=TASK_QUEUE,
        # Shown as the run's summary in the Web UI, like runs started by `react-agent`.
        static_summary=str(run_input.get("question", ""))[:100] or None,
    )


async def progress(client: Client, workflow_id: str) -> dict[str, Any]:
    """The `progress` query: phase, modelCalls, toolCalls, remaining budgets, lastThought, ...

    A batch answers a query of the same name with its own counts (queued, running, done).
    """
    return await client.get_workflow_handle(workflow_id).query("progress")


async def inject_message(client: Client, workflow_id: str, text: str) -> dict[str, Any]:
    """The `injectMessage` update; returns {"modelCall": N}, the model call the text will precede.

    The workflow refuses the update (an error, nothing is added) when the text is empty or the
    run is already finishing.
    """
    return await client.get_workflow_handle(workflow_id).execute_update("injectMessage", {"text": text})


async def finish_now(client: Client, workflow_id: str, reason: str) -> dict[str, Any]:
    """The `finishNow` update: open tool calls are stopped and one last tool-less model call
    asks for the best answer from what is known. Returns {"modelCalls": N} made so far."""
    return await client.get_workflow_handle(workflow_id).execute_update("finishNow", {"reason": reason})


async def cancel(client: Client, workflow_id: str) -> dict[str, Any]:
    """Cancels a run. The run does not fail: it answers its open tool calls and returns a
    normal result whose termination is "cancelled"."""
    handle = client.get_workflow_handle(workflow_id)
    await handle.cancel()
    return await handle.result()


async def result(client: Client, workflow_id: str) -> dict[str, Any]:
    """Waits for the run's (or batch's) result: for a run, question, prediction, termination,
    iterations, toolCalls, usage, durationMs, ... (src/core/run-result.ts)."""
    return await client.get_workflow_handle(workflow_id).result()


# --- A batch of runs --------------------------------------------------------------------------


def store_batch_questions(transcript_dir: Path, items: list[dict[str, str]]) -> str:
    """Puts the questions into the agent's local transcript store and returns their reference.

    A batch's history carries a reference to its questions, not the questions. The local store
    is content-addressed: the blob `{"kind": "batch-input", "items": [...]}` lives at
    `<dir>/<first two hex digits>/<sha256>` and is referred to as `sha256:<hex>`. The workers
    must read the same directory (REACT_AGENT_TRANSCRIPT_DIR). With an s3:// store, use
    `react-agent batch` instead, or put the same blob at `<prefix>/<hex>` yourself.
    """
    blob = json.dumps({"kind": "batch-input", "items": items}, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    digest = hashlib.sha256(blob).hexdigest()
    path = transcript_dir / digest[:2] / digest
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        partial = path.with_name(f"{digest}.{uuid.uuid4()}.tmp")
        partial.write_bytes(blob)
        os.replace(partial, path)  # readers never see half a blob
    return f"sha256:{digest}"


def read_questions(path: Path) -> list[dict[str, str]]:
    """A JSONL file of {"question": ..., "answer": ...} lines (DeepResearch's format; answer optional)."""
    items = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        record = json.loads(line)
        if not isinstance(record.get("question"), str):
            raise SystemExit(f"{path}:{number}: a line needs a \"question\" string")
        item = {"question": record["question"]}
        if isinstance(record.get("answer"), str):
            item["answer"] = record["answer"]
        items.append(item)
    return items


async def start_batch(client: Client, items: list[dict[str, str]], output: Path, rollouts: int, concurrency: int, workflow_id: str) -> dict[str, Any]:
    """Starts `researchBatch`: every question `rollouts` times, each run a child `researchAgent`
    with the id `<batch id>/q<index>-r<rollout>`; lines go to `<output>/iter<rollout>.jsonl`."""
    transcript_dir = Path(os.environ.get("REACT_AGENT_TRANSCRIPT_DIR", ".data/transcripts"))
    batch_input = {
        "input": store_batch_questions(transcript_dir, items),
        "questions": len(items),
        "rollouts": rollouts,
        "concurrency": concurrency,
        "output": str(output.resolve()),  # absolute, and reachable by the workers
    }
    await client.start_workflow(RESEARCH_BATCH, batch_input, id=workflow_id, task_queue=TASK_QUEUE)
    return {"workflowId": workflow_id, **batch_input}


# --- Command line ------------------------------------------------------------------------------


def run_input_of(arguments: argparse.Namespace) -> dict[str, Any]:
    """The run's input: --input JSON as given (the workflow checks it), the question and --max-calls added."""
    run_input: dict[str, Any] = json.loads(arguments.input) if arguments.input else {}
    if arguments.question is not None:
        run_input["question"] = arguments.question
    if arguments.max_calls is not None:
        run_input.setdefault("limits", {})["maxModelCalls"] = arguments.max_calls
    return run_input


def failure_of(error: WorkflowFailureError) -> dict[str, Any]:
    """Why a workflow failed: the ApplicationError the workflow threw (type, message, nonRetryable)."""
    cause: BaseException | None = error.cause
    while isinstance(cause, FailureError) and not isinstance(cause, ApplicationError) and cause.cause is not None:
        cause = cause.cause
    if isinstance(cause, ApplicationError):
        return {"type": cause.type, "message": cause.message, "nonRetryable": cause.non_retryable}
    return {"type": type(cause).__name__, "message": str(cause)}


async def main(arguments: argparse.Namespace) -> int:
    client = await connect()
    command = arguments.command
    workflow_id = arguments.id or f"python-{'batch-' if command == 'batch' else ''}{uuid.uuid4()}"
    try:
        if command == "start":
            handle = await start_run(client, run_input_of(arguments), workflow_id)
            output: Any = {"workflowId": handle.id, "runId": handle.result_run_id}
        elif command == "run":
            handle = await start_run(client, run_input_of(arguments), workflow_id)
            output = {"workflowId": handle.id, "result": await handle.result()}
        elif command == "progress":
            output = await progress(client, workflow_id)
        elif command == "inject":
            output = await inject_message(client, workflow_id, arguments.text)
        elif command == "finish":
            output = await finish_now(client, workflow_id, arguments.reason)
        elif command == "cancel":
            output = await cancel(client, workflow_id)
        elif command == "result":
            output = await result(client, workflow_id)
        else:  # batch
            items = read_questions(Path(arguments.questions))
            output = await start_batch(client, items, Path(arguments.output), arguments.rollouts, arguments.concurrency, workflow_id)
    except WorkflowFailureError as error:
        # The workflow itself failed, e.g. ReactAgent.Run.InvalidInput for an input it refuses.
        print(json.dumps({"workflowId": workflow_id, "status": "failed", "failure": failure_of(error)}, indent=2))
        return 1
    print(json.dumps(output, indent=2, ensure_ascii=False))
    return 0


def parse_arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description="A Temporal Python client of the durable ReAct research agent.")
    commands = parser.add_subparsers(dest="command", required=True)
    for name, text in (("start", "start a run and print its id"), ("run", "start a run and wait for its result")):
        command = commands.add_parser(name, help=text)
        command.add_argument("question", nargs="?", help="the research question")
        command.add_argument("--id", help="workflow id (default: a new python-<uuid>)")
        command.add_argument("--max-calls", type=int, help="limits.maxModelCalls")
        command.add_argument("--input", help='the whole input as JSON, e.g. \'{"question": "...", "protocol": "native"}\'')
    commands.add_parser("progress", help="query a run's or a batch's progress").add_argument("id")
    inject = commands.add_parser("inject", help="add a user message before the next model call")
    inject.add_argument("id")
    inject.add_argument("text")
    finish = commands.add_parser("finish", help="ask the run for its best answer now")
    finish.add_argument("id")
    finish.add_argument("--reason", default="asked by the Python client")
    commands.add_parser("cancel", help="cancel a run and print its (cancelled) result").add_argument("id")
    commands.add_parser("result", help="wait for a run's or a batch's result").add_argument("id")
    batch = commands.add_parser("batch", help="start a batch over a JSONL file of questions")
    batch.add_argument("questions", help='JSONL file, one {"question": ..., "answer": ...} per line')
    batch.add_argument("--output", required=True, help="output directory of the iter<rollout>.jsonl files")
    batch.add_argument("--rollouts", type=int, default=1)
    batch.add_argument("--concurrency", type=int, default=8)
    batch.add_argument("--id", help="workflow id (default: a new python-batch-<uuid>)")
    return parser.parse_args()


if __name__ == "__main__":
    exit_code = asyncio.run(main(parse_arguments()))
    # The SDK's Rust core keeps threads that can abort CPython's teardown of a short-lived
    # client process after a long poll such as handle.result() ("Fatal Python error:
    # PyGILState_Release ... finalizing", temporalio/sdk-python issue 300). Everything is
    # printed and nothing is left to clean up, so leave without the teardown.
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(exit_code)
