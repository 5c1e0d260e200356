/**
 * The fields of a chat completion request the gateway types (SPEC 2.8), apart from the
 * request parser so the interface description can import them without the validators.
 */
export const ROLES = ['system', 'user', 'assistant', 'tool', 'developer'];

/** Sampling parameters of the chat-completion convention and their JSON types. */
export const NUMBER_PARAMETERS = ['temperature', 'top_p', 'min_p', 'top_a', 'frequency_penalty', 'presence_penalty', 'repetition_penalty'];
export const INTEGER_PARAMETERS = ['top_k', 'seed', 'top_logprobs'];
export const POSITIVE_INTEGER_PARAMETERS = ['max_tokens', 'max_completion_tokens'];
export const BOOLEAN_PARAMETERS = ['stream', 'logprobs', 'parallel_tool_calls', 'include_reasoning'];
