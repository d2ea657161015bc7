/**
 * Whether a model can take a request's content parts, from its catalog entry's
 * `supports`: an image needs `vision`. Audio and file parts have no catalog
 * capability; they go to the engine, which refuses what it cannot read (the
 * CPU engine takes text only).
 */
import type { ChatMessage } from './chat-types.js';
import { InvalidRequestError } from './errors.js';

/** The part of a catalog model this needs (structural, so src/api does not depend on the catalog). */
export interface ModelCapabilities {
  id: string;
  supports: ReadonlySet<string>;
}

/** `messages[i].content[j]` of the first image part, or undefined when there is none. */
export function firstImagePart(messages: readonly ChatMessage[]): string | undefined {
  for (let index = 0; index < messages.length; index++) {
    const content = messages[index]!.content;
    if (!Array.isArray(content)) continue;
    for (let partIndex = 0; partIndex < content.length; partIndex++) {
      if (content[partIndex]!.type === 'image_url') return `messages[${index}].content[${partIndex}]`;
    }
  }
  return undefined;
}

export function canTakeContent(messages: readonly ChatMessage[], model: ModelCapabilities): boolean {
  return model.supports.has('vision') || firstImagePart(messages) === undefined;
}

/** A 400 naming the first part the model cannot take. */
export function checkModelTakesContent(messages: readonly ChatMessage[], model: ModelCapabilities): void {
  if (model.supports.has('vision')) return;
  const part = firstImagePart(messages);
  if (part === undefined) return;
  throw new InvalidRequestError(
    `Invalid content for '${part}': the model '${model.id}' does not read images (its catalog entry does not list 'vision' in supports). Send text, or choose a model that supports vision.`,
    part,
    'unsupported_content',
  );
}
