"""Print a research run's live text from Python: a model call's words as the model streams them.

The worker that runs a model call serves its text at an unguessable URL (issue 32) and puts that
URL in the call's heartbeat details, so a client that describes the run finds it:

  1. describe the run; among its pending activities, the `callModel` one's first heartbeat detail
     is JSON such as {"modelCall": 2, "liveText": {"url": "http://127.0.0.1:41234/calls/<32 hex>"},
     "streamed": "<last 2,000 characters>", "streamedCharacters": 5210, ...};
  2. GET that URL: newline-delimited JSON, one object a line — {"call": 2, "kind": "reasoning" |
     "content" | "tool", "text": "..."} for each piece (from the start of the call), {"skipped": N}
     when N characters were dropped before you read them, {"end": "completed" | "failed"} last;
  3. when the URL cannot be reached (another machine, a firewall, REACT_AGENT_LIVE_TEXT_LISTEN=off),
     print the new part of "streamed" each time you describe the run (the worker sends it at most
     every 5 s).

It prints one JSON object a line on standard output: {"source": "direct", "worker": "host:port"} or
{"source": "heartbeat", "why": ...} when that changes, then {"call", "kind", "text"} for each piece
("kind": "tail" when it came from the heartbeat details), and ends when the run ends:

    python live_text.py <workflow-id>

Connection settings as for research_client.py (TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE, ...).
"""

from __future__ import annotations

import asyncio
import http.client
import json
import sys
import threading
import urllib.parse
from typing import Any

from temporalio.client import Client, WorkflowExecutionStatus
from temporalio.envconfig import ClientConfig

MAX_LINE_BYTES = 256 * 1024
CONNECT_TIMEOUT_SECONDS = 3


_printing = threading.Lock()


def emit(line: dict[str, Any]) -> None:
    """One JSON line on standard output (the reader threads and the describe loop both print)."""
    with _printing:
        print(json.dumps(line, ensure_ascii=False), flush=True)


def read_direct(url: str, done: threading.Event) -> str | None:
    """Reads one call's stream to its end; returns None when it ended, else why it could not be read."""
    parts = urllib.parse.urlsplit(url)
    connection_class = http.client.HTTPSConnection if parts.scheme == "https" else http.client.HTTPConnection
    connection = connection_class(parts.netloc, timeout=CONNECT_TIMEOUT_SECONDS)
    try:
        connection.request("GET", parts.path, headers={"accept": "application/x-ndjson"})
        response = connection.getresponse()
        if response.status == 404:
            return None  # the call ended before we connected
        if response.status != 200:
            return f"the worker answered {response.status}"
        # Connected: a call may stream quietly for a long time, so no read timeout from here on.
        if connection.sock is not None:
            connection.sock.settimeout(None)
        emit({"source": "direct", "worker": parts.netloc})
        while True:
            raw = response.readline(MAX_LINE_BYTES + 1)
            if not raw:
                return "the worker closed the stream early"
            if len(raw) > MAX_LINE_BYTES:
                return "a line longer than the limit"
            line = json.loads(raw)
            if "text" in line:
                emit({"call": line["call"], "kind": line["kind"], "text": line["text"]})
            elif "end" in line:
                return None
    except (OSError, ValueError, http.client.HTTPException) as error:
        return f"unreachable: {error}"
    finally:
        connection.close()
        done.set()


async def watch(client: Client, workflow_id: str) -> None:
    handle = client.get_workflow_handle(workflow_id)
    attempts: dict[str, tuple[int, str]] = {}  # activity id -> (attempt, "direct" | "heartbeat")
    printed: dict[str, int] = {}  # activity id -> characters of the tail printed
    readers: list[threading.Event] = []
    while True:
        description = await handle.describe()
        for activity in description.raw_description.pending_activities:
            if activity.activity_type.name != "callModel" or not activity.heartbeat_details.payloads:
                continue
            details = client.data_converter.payload_converter.from_payloads(
                list(activity.heartbeat_details.payloads)
            )[0]
            key, attempt = activity.activity_id, activity.attempt
            if key not in attempts or attempts[key][0] != attempt:
                url = (details.get("liveText") or {}).get("url")
                if url:
                    attempts[key] = (attempt, "direct")
                    done = threading.Event()
                    readers.append(done)
                    # Blocking reads in a thread; on failure this call falls back to the tail.
                    def run(url: str = url, key: str = key, attempt: int = attempt, done: threading.Event = done) -> None:
                        why = read_direct(url, done)
                        if why is not None:
                            emit({"source": "heartbeat", "why": why})
                            attempts[key] = (attempt, "heartbeat")

                    threading.Thread(target=run, daemon=True).start()
                    continue
                attempts[key] = (attempt, "heartbeat")
                emit({"source": "heartbeat", "why": "the worker serves none"})
                printed[key] = 0
            if attempts[key][1] == "heartbeat" and isinstance(details.get("streamed"), str):
                tail, total = details["streamed"], int(details.get("streamedCharacters", 0))
                new = total - printed.get(key, 0)
                if new > 0:
                    emit({"call": details.get("modelCall", 0), "kind": "tail", "text": tail[-new:]})
                    printed[key] = total
        if description.status != WorkflowExecutionStatus.RUNNING:
            for done in readers:
                await asyncio.to_thread(done.wait, 2)
            return
        streaming = any(not done.is_set() for done in readers)
        await asyncio.sleep(10 if streaming else 0.5)


async def main() -> None:
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    config = ClientConfig.load_client_connect_config()
    config.setdefault("target_host", "localhost:7233")
    client = await Client.connect(**config)
    await watch(client, sys.argv[1])


if __name__ == "__main__":
    asyncio.run(main())
