/**
 * Real error responses of OpenAI-compatible model servers, status and JSON body as each server
 * sends them, with where each one comes from. The context-overflow table test classifies every
 * one, and the scripted model server answers with them, so both speak what the servers speak.
 *
 * Only files under `test/` and `benchmarks/` may import this module.
 */

/** One error response: HTTP status and the parsed JSON body. */
export interface ServerErrorResponse {
  /** Server family and version, e.g. "llama-server (llama.cpp b7000+)". */
  server: string;
  /** Where the body comes from (source file, documentation, or a capture). */
  source: string;
  status: number;
  body: unknown;
}

/** llama-server's body for a prompt that does not fit `n_ctx` (issue 8, captured from a real llama-server). */
export function llamaServerContextOverflowBody(promptTokens = 8199, contextTokens = 8192) {
  return {
    error: {
      code: 400,
      message: `request (${promptTokens} tokens) exceeds the available context size (${contextTokens} tokens), try increasing it`,
      type: 'exceed_context_size_error',
      n_prompt_tokens: promptTokens,
      n_ctx: contextTokens,
    },
  };
}

/** llama-server's 500 for a history tool call whose `arguments` is not JSON (common/chat.cpp `func_args_not_string`). */
export function llamaServerInvalidToolArgumentsBody(parseError: string) {
  return {
    error: {
      code: 500,
      message: `Failed to parse tool call arguments as JSON: [json.exception.parse_error.101] parse error: ${parseError}`,
      type: 'server_error',
    },
  };
}

/** Context-length refusals of the server families users run, one or more bodies per family. */
export const CONTEXT_OVERFLOW_RESPONSES: ServerErrorResponse[] = [
  {
    server: 'OpenAI chat completions',
    source:
      'api.openai.com, the classic wording with code context_length_exceeded (also copied by LiteLLM and other gateways)',
    status: 400,
    body: {
      error: {
        message:
          "This model's maximum context length is 128000 tokens. However, your messages resulted in 130532 tokens. Please reduce the length of the messages.",
        type: 'invalid_request_error',
        param: 'messages',
        code: 'context_length_exceeded',
      },
    },
  },
  {
    server: 'OpenAI (newer models)',
    source: 'api.openai.com, the wording of the GPT-4.1 / GPT-5 generation',
    status: 400,
    body: {
      error: {
        message: 'Your input exceeds the context window of this model. Please adjust your input and try again.',
        type: 'invalid_request_error',
        param: 'input',
        code: 'context_length_exceeded',
      },
    },
  },
  {
    server: 'vLLM 0.10–0.11',
    source:
      'vllm/entrypoints/renderer.py `_create_tokens_prompt` (ValueError → 400 BadRequestError, nested ErrorResponse)',
    status: 400,
    body: {
      error: {
        message:
          "This model's maximum context length is 32768 tokens. However, your request has 40000 input tokens. Please reduce the length of the input messages.",
        type: 'BadRequestError',
        param: null,
        code: 400,
      },
    },
  },
  {
    server: 'vLLM 0.10–0.11, max_tokens too large',
    source: 'vllm/entrypoints/openai/serving_engine.py `_validate_input`',
    status: 400,
    body: {
      error: {
        message:
          "'max_tokens' or 'max_completion_tokens' is too large: 10000. This model's maximum context length is 32768 tokens and your request has 30000 input tokens (10000 > 32768 - 30000).",
        type: 'BadRequestError',
        param: null,
        code: 400,
      },
    },
  },
  {
    server: 'vLLM 2026',
    source:
      'vllm/renderers/params.py `_token_len_check` raises VLLMValidationError(parameter="input_tokens"); serve/exception_handling/error_response.py sends str(exc), which appends "(parameter=…, value=…)"',
    status: 400,
    body: {
      error: {
        message:
          "You passed 5000 input tokens and requested 1000 output tokens. However, the model's context length is only 4096 tokens, resulting in a maximum input length of 3096 tokens. Please reduce the length of the input prompt. (parameter=input_tokens, value=5000)",
        type: 'BadRequestError',
        param: 'input_tokens',
        code: 400,
      },
    },
  },
  {
    server: 'llama-server (llama.cpp, current)',
    source:
      'tools/server/server-context.cpp (ERROR_TYPE_EXCEED_CONTEXT_SIZE), server-task.cpp adds n_prompt_tokens and n_ctx; also sent for streaming requests',
    status: 400,
    body: llamaServerContextOverflowBody(),
  },
  {
    server: 'llama-server (llama.cpp, without context shift)',
    source:
      'tools/server/server-context.cpp, "input (%d tokens) is larger than the max context size (%d tokens). skipping"',
    status: 400,
    body: {
      error: {
        code: 400,
        message: 'input (9000 tokens) is larger than the max context size (8192 tokens). skipping',
        type: 'exceed_context_size_error',
        n_prompt_tokens: 9000,
        n_ctx: 8192,
      },
    },
  },
  {
    server: 'Ollama /v1 (context shift off)',
    source:
      'ollama llm/llama_server.go `completionPromptForRequest` (api.StatusError 400), wrapped by middleware/openai.go `writeError` with openai.NewError (type invalid_request_error for 400)',
    status: 400,
    body: {
      error: {
        message:
          'the prompt is longer than the context length currently available to the model; shorten the prompt, adjust the context length in settings, or use a model with a longer context length',
        type: 'invalid_request_error',
        param: null,
        code: null,
      },
    },
  },
  {
    server: 'Ollama /v1 (truncate off)',
    source:
      "ollama passes llama-server's own refusal through as a string (measured against Ollama 0.33 on /api/chat with truncate:false), then middleware/openai.go wraps it",
    status: 400,
    body: {
      error: {
        message: JSON.stringify(llamaServerContextOverflowBody(8889, 4096)),
        type: 'invalid_request_error',
        param: null,
        code: null,
      },
    },
  },
  {
    server: 'Ollama /v1 (embedding-style input check)',
    source: 'ollama server/routes.go and llm/llama_server.go: "the input length exceeds the context length"',
    status: 400,
    body: {
      error: {
        message: 'the input length exceeds the context length',
        type: 'invalid_request_error',
        param: null,
        code: null,
      },
    },
  },
  {
    server: 'TGI (text-generation-inference), total tokens',
    source:
      'router/src/validation.rs ValidationError::MaxTotalTokens, InferError::ValidationError → 422 with ErrorResponse { error, error_type: "validation" }',
    status: 422,
    body: {
      error:
        'Input validation error: `inputs` tokens + `max_new_tokens` must be <= 4096. Given: 4000 `inputs` tokens and 1000 `max_new_tokens`',
      error_type: 'validation',
    },
  },
  {
    server: 'TGI (text-generation-inference), input length',
    source: 'router/src/validation.rs ValidationError::InputLength → 422',
    status: 422,
    body: {
      error: 'Input validation error: `inputs` must have less than 1024 tokens. Given: 1872',
      error_type: 'validation',
    },
  },
  {
    server: 'SGLang / Together',
    source: "the wording these servers use, as quoted by several client libraries' overflow detectors",
    status: 400,
    body: {
      error: {
        message: "The input (250000 tokens) is longer than the model's context length (200000 tokens).",
        type: 'BadRequestError',
        param: null,
        code: 400,
      },
    },
  },
];

/** 400s that are not about the context: they must stay plain rejections. */
export const OTHER_REJECTIONS: ServerErrorResponse[] = [
  {
    server: 'OpenAI',
    source: 'api.openai.com, a bad sampling parameter',
    status: 400,
    body: {
      error: {
        message: "Invalid value for 'temperature': must be between 0 and 2.",
        type: 'invalid_request_error',
        param: 'temperature',
        code: 'invalid_value',
      },
    },
  },
  {
    server: 'vLLM',
    source: 'an unknown tool_choice; a BadRequestError that is not about length',
    status: 400,
    body: {
      error: {
        message: 'Invalid tool_choice: "required" requires tools',
        type: 'BadRequestError',
        param: null,
        code: 400,
      },
    },
  },
  {
    server: 'TGI',
    source: 'router/src/validation.rs ValidationError::TopP',
    status: 422,
    body: { error: 'Input validation error: `top_p` must be > 0.0 and < 1.0', error_type: 'validation' },
  },
  {
    server: 'llama-server',
    source: 'a request the template cannot render',
    status: 400,
    body: {
      error: {
        code: 400,
        message: 'Assistant response prefill is incompatible with enable_thinking.',
        type: 'invalid_request_error',
      },
    },
  },
];
