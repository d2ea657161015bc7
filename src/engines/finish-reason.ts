import type { FinishReason } from '../api/chat-types.js';

/**
 * The contract's finish reasons. Older TGI says `eos_token` or
 * `stop_sequence`, proxies in front of other APIs may say `max_tokens`; an
 * unknown reason is reported as `stop` so clients that switch on the OpenAI
 * values keep working.
 */
export function finishReasonOf(value: unknown): FinishReason | null {
  switch (value) {
    case 'stop':
    case 'length':
    case 'tool_calls':
    case 'content_filter':
    case 'function_call':
      return value;
    case null:
    case undefined:
    case '':
      return null;
    case 'max_tokens':
      return 'length';
    default:
      return typeof value === 'string' ? 'stop' : null;
  }
}
