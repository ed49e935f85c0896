#!/usr/bin/env python3
"""Writes the tiny GGUF models the real-server test tier serves with llama.cpp's llama-server.

Nothing is downloaded: the weights are generated here, from a fixed seed, and the tokenizer is
trained here on a small built-in corpus.

Each model is a 2-layer llama (64-dimensional, 2 heads) with:

- a real byte-level BPE tokenizer (GPT-2 style: 256 byte tokens, merges learned from the corpus
  below, llama.cpp pre-tokenizer ``qwen2``), ChatML control tokens ``<|endoftext|>``,
  ``<|im_start|>``, ``<|im_end|>`` (the end of a turn, EOS) and the protocol tags as
  user-defined tokens, as Qwen models have them (``<think>``, ``<tool_call>``, ``<answer>``, ...);
- a ChatML chat template with tools in the Qwen2.5/Hermes style (tools listed in the system
  prompt, calls written as ``<tool_call>\\n{json}\\n</tool_call>``, results given back in
  ``<tool_response>``), so llama-server ``--jinja`` parses native tool calls;
- random weights, plus a few wired-in habits so that a run reads like an agent at work instead
  of noise (each is a handful of large weights on top of the random ones):

  * at the start of a reply (after a newline) it opens a tool call (``<tool_call>``, ``Action``)
    while the conversation holds no tool result, and answers (``The answer is above.``,
    ``<answer>``, ``Final``) once it does. One attention head in the first layer looks for the
    two tokens that only tool results contain, ``<tool_response>\\n`` and ``Observation:``;
  * it thinks ``Let me check`` after ``<think>`` (then ``</think>`` and a newline), writes
    ``BYD`` as a string argument and closes it, closes a tool call after its last brace, and
    ends its turn after ``</tool_call>``, ``</answer>`` or ``The answer is above.``;
  * it avoids whitespace-only tokens (compact JSON) and never writes ``<|im_start|>``,
    ``<|endoftext|>`` or a tool-result marker.

  So: a reply to a question is a ``lookup`` of ``BYD`` (native: a ``<tool_call>`` the server
  parses into ``tool_calls``), and a reply to a conversation with a tool result is the answer
  ``The answer is above.``. Without a grammar and without a tool result, a request with no tools
  gets ``<tool_call>`` lines until ``max_tokens``.

  Where a test needs exact protocol text (tags, tool names, JSON), a GBNF grammar forces it (see
  test/real-server/grammars/); the habits only choose between what the grammar allows.

Two variants are written:

- ``tiny-chatml.gguf``: the ChatML tools template;
- ``tiny-thinking.gguf``: the same with a Qwen3-style thinking template: the generation prompt
  opens ``<think>``, so with ``--jinja --reasoning-format deepseek`` llama-server returns what
  the model writes before ``</think>`` in ``reasoning_content``.

Idempotent: a model is rewritten only when it is missing or this generator's settings changed
(recorded in ``manifest.json`` beside the models).

Usage: make-tiny-model.py --output-directory DIR [--context-length N] [--force]
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.metadata
import json
import re
import sys
from collections import Counter
from pathlib import Path

import numpy as np

import gguf

GENERATOR_VERSION = 1
SEED = 20240917

EMBEDDING_LENGTH = 64
HEAD_COUNT = 2
HEAD_DIMENSION = EMBEDDING_LENGTH // HEAD_COUNT
FEED_FORWARD_LENGTH = 128
BLOCK_COUNT = 2
MERGE_COUNT = 700
# A huge RoPE base leaves the last rotary pair of each head (the one the habit head uses)
# practically unrotated over any context, so its attention does not depend on distance.
ROPE_FREQUENCY_BASE = 1.0e9
RMS_EPSILON = 1e-5

CONTROL_TOKENS = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]
# The tags are single tokens, as in Qwen's vocabularies. The last two mark a tool result.
USER_DEFINED_TOKENS = [
    "<think>",
    "</think>",
    "<tool_call>",
    "</tool_call>",
    "<answer>",
    "</answer>",
    "<tool_response>\n",
    "Observation:",
]
TOOL_RESULT_MARKERS = ["<tool_response>\n", "Observation:"]

# The tokenizer's training text: the words of the three protocols, JSON, and some research prose.
# The phrases the habits produce are repeated so that each of their words is one token.
CORPUS_LINES = [
    "You are a deep research assistant. You investigate a question thoroughly, across several credible and diverse sources,",
    "and give an accurate, objective answer. Think step by step before you act.",
    "When you have gathered enough information, write the complete final answer.",
    "You may call one or more tools to help with the question. Their signatures are listed below.",
    "To call a tool, write a JSON object with its name and arguments.",
    "Each result comes back to you as a tool response. Current date: 2025-01-31",
    '{"name": "lookup", "arguments": {"query": "BYD 2024 sales"}}',
    '{"name": "search", "arguments": {"query": ["BYD", "Tesla"]}}',
    '{"name": "visit", "arguments": {"url": "https://example.com", "goal": "sales"}}',
    '{"type": "function", "function": {"name": "lookup", "description": "Look up a fact.", "parameters": {"type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]}}}',
    "Thought: I should look this up.\nAction: lookup\nAction Input: {\"query\": \"BYD\"}\nObservation: facts",
    "Thought: I know the answer now.\nFinal Answer: BYD sold more cars than Tesla in 2024.",
    "Which company sold more cars in 2024, BYD or Tesla, and by how much?",
    "BYD sold 4,272,145 vehicles in 2024; Tesla delivered 1,789,226 vehicles in 2024.",
    "The quick brown fox jumps over the lazy dog. The answer is the number of cars sold.",
    "Use exactly this format. Repeat as needed. Do not use any more tools. Based on everything above,",
    "write your best answer now. Stop calling tools now. The question, the sources and the facts.",
    "For each function call, return a json object with function name and arguments.",
    "system user assistant tool function functions tools name arguments content role",
    "Let me check. Let me check. Let me check.",
    "The answer is above. The answer is above. The answer is above.",
    "Action Action Action Final Final Final Answer Answer BYD BYD BYD BYD",
]

# Habits: (token, next token) pairs the model follows strongly wherever they are allowed. A
# source "*X" stands for every token whose text ends with X, whitespace after it aside (so a string argument gets "BYD"
# however the model spelled the quote before it, and a tool call closes after its last brace).
CHAINS = [
    ("<tool_call>", "\n"),
    ("<think>", "Let"),
    ("Let", " me"),
    (" me", " check"),
    (" check", "</think>"),
    ("</think>", "\n"),
    ("<answer>", "The"),
    ("The", " answer"),
    (" answer", " is"),
    (" is", " above"),
    (" above", "."),
    (":", " The"),
    (" The", " answer"),
    (".", "<|im_end|>"),
    ("</answer>", "<|im_end|>"),
    ("</tool_call>", "<|im_end|>"),
    ('*"', "BYD"),
    ("BYD", '"'),
    ("*}", "</tool_call>"),
]
# Weaker choices, taken where the grammar forbids the first: after a sentence, close the
# <answer>, else end the line (a classic thought).
FALLBACK_CHAINS = [(".", "</answer>", 40.0), (".", "\n", 30.0)]
# At the start of a reply: logit per token while no tool result was seen, and once one was.
REPLY_START_ALWAYS = {"<think>": 30.0}
REPLY_START_UNSEEN = {"<tool_call>": 40.0, "Action": 20.0}
REPLY_START_SEEN = {"The": 60.0, "<answer>": 45.0, "Final": 25.0}
NEVER_WRITTEN = ["<|endoftext|>", "<|im_start|>", *TOOL_RESULT_MARKERS]
# Whitespace-only tokens are disfavoured (except where a habit asks for a newline), so JSON the
# grammar lets the model space freely comes out compact.
WHITESPACE_LOGIT = -12.0

CHAT_TEMPLATE_BODY = """\
{%- if tools %}
{{- '<|im_start|>system\\n' }}
{%- if messages[0].role == 'system' %}{{- messages[0].content + '\\n\\n' }}{%- endif %}
{{- '# Tools\\n\\nYou may call one or more functions to assist with the user query.\\n\\nYou are provided with function signatures within <tools></tools> XML tags:\\n<tools>' }}
{%- for tool in tools %}{{- '\\n' }}{{- tool | tojson }}{%- endfor %}
{{- '\\n</tools>\\n\\nFor each function call, return a json object with function name and arguments within <tool_call></tool_call> XML tags:\\n<tool_call>\\n{"name": <function-name>, "arguments": <args-json-object>}\\n</tool_call><|im_end|>\\n' }}
{%- elif messages[0].role == 'system' %}
{{- '<|im_start|>system\\n' + messages[0].content + '<|im_end|>\\n' }}
{%- endif %}
{%- for message in messages %}
{%- if message.role == 'system' and loop.first %}
{%- elif message.role == 'user' or message.role == 'system' %}
{{- '<|im_start|>' + message.role + '\\n' + message.content + '<|im_end|>\\n' }}
{%- elif message.role == 'assistant' %}
{{- '<|im_start|>assistant\\n' }}
@@REASONING@@
{%- if message.content %}{{- message.content }}{%- endif %}
{%- if message.tool_calls %}
{%- for tool_call in message.tool_calls %}
{%- if tool_call.function is defined %}{%- set tool_call = tool_call.function %}{%- endif %}
{%- if loop.first and not message.content %}{{- '<tool_call>\\n' }}{%- else %}{{- '\\n<tool_call>\\n' }}{%- endif %}
{{- '{"name": "' + tool_call.name + '", "arguments": ' }}
{%- if tool_call.arguments is string %}{{- tool_call.arguments }}{%- else %}{{- tool_call.arguments | tojson }}{%- endif %}
{{- '}\\n</tool_call>' }}
{%- endfor %}
{%- endif %}
{{- '<|im_end|>\\n' }}
{%- elif message.role == 'tool' %}
{%- if loop.first or messages[loop.index0 - 1].role != 'tool' %}{{- '<|im_start|>user' }}{%- endif %}
{{- '\\n<tool_response>\\n' + message.content + '\\n</tool_response>' }}
{%- if loop.last or messages[loop.index0 + 1].role != 'tool' %}{{- '<|im_end|>\\n' }}{%- endif %}
{%- endif %}
{%- endfor %}
{%- if add_generation_prompt %}
@@GENERATION_PROMPT@@
{%- endif %}
"""

CHATML_TEMPLATE = CHAT_TEMPLATE_BODY.replace("@@REASONING@@\n", "").replace(
    "@@GENERATION_PROMPT@@", "{{- '<|im_start|>assistant\\n' }}"
)
THINKING_TEMPLATE = CHAT_TEMPLATE_BODY.replace(
    "@@REASONING@@",
    "{%- if message.reasoning_content %}{{- '<think>\\n' + message.reasoning_content.strip() + '\\n</think>\\n\\n' }}{%- endif %}",
).replace(
    "@@GENERATION_PROMPT@@",
    "{%- if enable_thinking is defined and enable_thinking is false %}{{- '<|im_start|>assistant\\n<think>\\n\\n</think>\\n\\n' }}"
    "{%- else %}{{- '<|im_start|>assistant\\n<think>' }}{%- endif %}",
)

# The pre-tokenizer of llama.cpp's "qwen2" BPE, spelled with Python's re (letters = [^\W\d_]).
PRE_TOKENIZER = re.compile(
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|(?:[^\r\n\w]|_)?[^\W\d_]+|\d| ?(?:[^\s\w]|_)+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"
)


def bytes_to_unicode() -> dict[int, str]:
    """GPT-2's reversible map from bytes to printable characters (space is 'Ġ', newline 'Ċ')."""
    printable = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + list(range(ord("®"), ord("ÿ") + 1))
    characters = printable[:]
    extra = 0
    for byte in range(256):
        if byte not in printable:
            printable.append(byte)
            characters.append(256 + extra)
            extra += 1
    return dict(zip(printable, (chr(code) for code in characters)))


BYTE_TO_UNICODE = bytes_to_unicode()


def encode_bytes(text: str) -> str:
    return "".join(BYTE_TO_UNICODE[byte] for byte in text.encode("utf-8"))


UNICODE_TO_BYTE = {character: byte for byte, character in BYTE_TO_UNICODE.items()}


def decode_bytes(token: str) -> str:
    return bytes(UNICODE_TO_BYTE[character] for character in token).decode("utf-8", errors="replace")


def train_bpe(corpus: str, merge_count: int) -> list[tuple[str, str]]:
    """Learns byte-level BPE merges: repeatedly joins the most frequent adjacent pair."""
    words = Counter(tuple(encode_bytes(piece)) for piece in PRE_TOKENIZER.findall(corpus))
    merges: list[tuple[str, str]] = []
    for _ in range(merge_count):
        pairs: Counter[tuple[str, str]] = Counter()
        for word, count in words.items():
            for pair in zip(word, word[1:]):
                pairs[pair] += count
        if not pairs:
            break
        # Most frequent first; ties broken by the pair itself so the result is stable.
        best = min(pairs, key=lambda pair: (-pairs[pair], pair))
        if pairs[best] < 2:
            break
        merges.append(best)
        joined = best[0] + best[1]
        merged_words: Counter[tuple[str, ...]] = Counter()
        for word, count in words.items():
            symbols: list[str] = []
            index = 0
            while index < len(word):
                if index + 1 < len(word) and (word[index], word[index + 1]) == best:
                    symbols.append(joined)
                    index += 2
                else:
                    symbols.append(word[index])
                    index += 1
            merged_words[tuple(symbols)] += count
        words = merged_words
    return merges


class Vocabulary:
    """Token texts (byte-encoded for normal tokens, raw for control and user-defined ones) and types."""

    def __init__(self, merges: list[tuple[str, str]]):
        self.tokens: list[str] = [BYTE_TO_UNICODE[byte] for byte in range(256)]
        self.types: list[int] = [gguf.TokenType.NORMAL] * 256
        known = set(self.tokens)
        for left, right in merges:
            if left + right not in known:
                known.add(left + right)
                self.tokens.append(left + right)
                self.types.append(gguf.TokenType.NORMAL)
        self.merges = [f"{left} {right}" for left, right in merges]
        for text in CONTROL_TOKENS:
            self.tokens.append(text)
            self.types.append(gguf.TokenType.CONTROL)
        for text in USER_DEFINED_TOKENS:
            self.tokens.append(text)
            self.types.append(gguf.TokenType.USER_DEFINED)
        self.ids = {text: index for index, text in enumerate(self.tokens)}
        if len(self.ids) != len(self.tokens):
            raise SystemExit("make-tiny-model: the vocabulary has duplicate tokens")

    def ids_of_source(self, source: str) -> list[int]:
        """The tokens a habit's source stands for: one token, or with "*X" every normal token ending with X (whitespace after it aside)."""
        if not source.startswith("*"):
            return [self.id_of(source)]
        return [index for index, text in enumerate(self.tokens) if self.types[index] == gguf.TokenType.NORMAL and decode_bytes(text).rstrip().endswith(source[1:])]

    def id_of(self, text: str) -> int:
        """The id of the one token that spells `text` (tags by their raw text, others byte-encoded)."""
        if text in CONTROL_TOKENS or text in USER_DEFINED_TOKENS:
            return self.ids[text]
        encoded = encode_bytes(text)
        if encoded not in self.ids:
            raise SystemExit(f"make-tiny-model: {text!r} is not one token; add it to the corpus")
        return self.ids[encoded]


def build_weights(vocabulary: Vocabulary, random: np.random.Generator) -> dict[str, np.ndarray]:
    """Random weights plus the habits. Matrices are (out, in): y = W @ x, as GGUF stores them."""
    n_vocab = len(vocabulary.tokens)
    d = EMBEDDING_LENGTH
    # Residual dimensions with a meaning; the rest carry random features.
    BIAS, MARKER, REPLY_START, SEEN = 0, 1, 2, 3
    sources = sorted({source for source, _ in CHAINS} | {source for source, _, _ in FALLBACK_CHAINS})
    source_dimension = {source: 4 + index for index, source in enumerate(sources)}
    first_random = 4 + len(sources)
    if first_random + 16 > d:
        raise SystemExit("make-tiny-model: too many habits for the embedding size")

    def normal(shape: tuple[int, ...], scale: float) -> np.ndarray:
        return (random.standard_normal(shape) * scale).astype(np.float32)

    embedding = np.zeros((n_vocab, d), dtype=np.float32)
    embedding[:, first_random:] = normal((n_vocab, d - first_random), 1.0 / np.sqrt(d - first_random))
    embedding[:, BIAS] = 1.0
    for marker in TOOL_RESULT_MARKERS:
        embedding[vocabulary.id_of(marker), MARKER] = 1.0
    embedding[vocabulary.id_of("\n"), REPLY_START] = 1.0
    for source, dimension in source_dimension.items():
        embedding[vocabulary.ids_of_source(source), dimension] = 1.0

    # After RMS norm (unit weights) a component of 1 in a vector of norm ~1.7 reads as ~4.6.
    normalized_unit = 4.6
    weights: dict[str, np.ndarray] = {"token_embd.weight": embedding}
    for block in range(BLOCK_COUNT):
        prefix = f"blk.{block}"
        query = normal((d, d), 0.1)
        key = normal((d, d), 0.1)
        value = normal((d, d), 0.1)
        output = normal((d, d), 0.02)
        # Only the habit head writes the residual dimensions with a meaning; the random heads
        # (like the random feed-forward layers) write only the random ones.
        output[:first_random, :] = 0.0
        if block == 0:
            # Head 0 is the habit head: from a reply start it attends to tool-result markers (score
            # ~30 on the last rotary pair) and writes "seen" into the SEEN dimension.
            query[:HEAD_DIMENSION, :] = 0.0
            key[:HEAD_DIMENSION, :] = 0.0
            value[:HEAD_DIMENSION, :] = 0.0
            output[:, :HEAD_DIMENSION] = 0.0
            score_weight = np.sqrt(30.0 * np.sqrt(HEAD_DIMENSION)) / normalized_unit
            query[HEAD_DIMENSION - 2, REPLY_START] = score_weight
            key[HEAD_DIMENSION - 2, MARKER] = score_weight
            value[0, MARKER] = 1.0
            output[SEEN, 0] = 1.0 / normalized_unit
        weights[f"{prefix}.attn_norm.weight"] = np.ones(d, dtype=np.float32)
        weights[f"{prefix}.attn_q.weight"] = query
        weights[f"{prefix}.attn_k.weight"] = key
        weights[f"{prefix}.attn_v.weight"] = value
        weights[f"{prefix}.attn_output.weight"] = output
        weights[f"{prefix}.ffn_norm.weight"] = np.ones(d, dtype=np.float32)
        weights[f"{prefix}.ffn_gate.weight"] = normal((FEED_FORWARD_LENGTH, d), 0.1)
        weights[f"{prefix}.ffn_up.weight"] = normal((FEED_FORWARD_LENGTH, d), 0.1)
        down = normal((d, FEED_FORWARD_LENGTH), 0.02)
        down[:first_random, :] = 0.0
        weights[f"{prefix}.ffn_down.weight"] = down

    # Output: random logits (std ~1.5) from the random features, plus the habits.
    logits = np.zeros((n_vocab, d), dtype=np.float32)
    logits[:, first_random:] = normal((n_vocab, d - first_random), 1.5 / normalized_unit)
    for source, target in CHAINS:
        logits[vocabulary.id_of(target), source_dimension[source]] = 50.0 / normalized_unit
    for source, target, logit in FALLBACK_CHAINS:
        logits[vocabulary.id_of(target), source_dimension[source]] = logit / normalized_unit
    for token, logit in REPLY_START_ALWAYS.items():
        logits[vocabulary.id_of(token), REPLY_START] += logit / normalized_unit
    for token, logit in REPLY_START_UNSEEN.items():
        # On at a reply start, cancelled (and more) once a tool result was seen.
        logits[vocabulary.id_of(token), REPLY_START] += logit / normalized_unit
        logits[vocabulary.id_of(token), SEEN] -= 2 * logit / normalized_unit
    for token, logit in REPLY_START_SEEN.items():
        logits[vocabulary.id_of(token), SEEN] += logit / normalized_unit
    for index, text in enumerate(vocabulary.tokens):
        if vocabulary.types[index] == gguf.TokenType.NORMAL and decode_bytes(text).strip() == "":
            logits[index, BIAS] = WHITESPACE_LOGIT / normalized_unit
    for token in NEVER_WRITTEN:
        logits[vocabulary.id_of(token), BIAS] = -40.0 / normalized_unit
    weights["output_norm.weight"] = np.ones(d, dtype=np.float32)
    weights["output.weight"] = logits
    return weights


def write_model(path: Path, vocabulary: Vocabulary, weights: dict[str, np.ndarray], chat_template: str, context_length: int, name: str) -> None:
    temporary = path.with_suffix(".gguf.partial")
    writer = gguf.GGUFWriter(str(temporary), "llama")
    writer.add_name(name)
    writer.add_context_length(context_length)
    writer.add_embedding_length(EMBEDDING_LENGTH)
    writer.add_block_count(BLOCK_COUNT)
    writer.add_feed_forward_length(FEED_FORWARD_LENGTH)
    writer.add_head_count(HEAD_COUNT)
    writer.add_head_count_kv(HEAD_COUNT)
    writer.add_rope_dimension_count(HEAD_DIMENSION)
    writer.add_rope_freq_base(ROPE_FREQUENCY_BASE)
    writer.add_layer_norm_rms_eps(RMS_EPSILON)
    writer.add_vocab_size(len(vocabulary.tokens))
    writer.add_file_type(gguf.LlamaFileType.ALL_F32)
    writer.add_tokenizer_model("gpt2")
    writer.add_tokenizer_pre("qwen2")
    writer.add_token_list(vocabulary.tokens)
    writer.add_token_types(vocabulary.types)
    writer.add_token_merges(vocabulary.merges)
    writer.add_bos_token_id(vocabulary.ids["<|endoftext|>"])
    writer.add_eos_token_id(vocabulary.ids["<|im_end|>"])
    writer.add_eot_token_id(vocabulary.ids["<|im_end|>"])
    writer.add_pad_token_id(vocabulary.ids["<|endoftext|>"])
    writer.add_add_bos_token(False)
    writer.add_chat_template(chat_template)
    for tensor_name, array in weights.items():
        writer.add_tensor(tensor_name, array)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    temporary.replace(path)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--output-directory", required=True, type=Path)
    parser.add_argument("--context-length", type=int, default=32768, help="training context written into the models (default 32768); llama-server's -c picks the one it serves")
    parser.add_argument("--force", action="store_true", help="rewrite the models even when they are up to date")
    arguments = parser.parse_args()

    settings = {
        "generator": GENERATOR_VERSION,
        "seed": SEED,
        "contextLength": arguments.context_length,
        "gguf": importlib.metadata.version("gguf"),
        "source": hashlib.sha256(Path(__file__).read_bytes()).hexdigest(),
    }
    directory: Path = arguments.output_directory
    directory.mkdir(parents=True, exist_ok=True)
    manifest = directory / "manifest.json"
    models = {"tiny-chatml.gguf": CHATML_TEMPLATE, "tiny-thinking.gguf": THINKING_TEMPLATE}
    if not arguments.force and manifest.exists() and all((directory / name).exists() for name in models):
        if json.loads(manifest.read_text()).get("settings") == settings:
            print(f"tiny models: {directory} (up to date)")
            return 0

    merges = train_bpe("\n".join(CORPUS_LINES), MERGE_COUNT)
    vocabulary = Vocabulary(merges)
    weights = build_weights(vocabulary, np.random.default_rng(SEED))
    for name, template in models.items():
        write_model(directory / name, vocabulary, weights, template, arguments.context_length, name.removesuffix(".gguf"))
        print(f"wrote {directory / name} ({len(vocabulary.tokens)} tokens, {len(vocabulary.merges)} merges, context {arguments.context_length})")
    manifest.write_text(json.dumps({"settings": settings, "models": sorted(models), "vocabularySize": len(vocabulary.tokens)}, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
