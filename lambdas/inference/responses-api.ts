/**
 * What the Responses API adds to a completion (docs/api.md#the-responses-api): a continued
 * response's conversation read first, the response kept once answered, and the kept responses
 * read and deleted by id, each within the caller's organization.
 */
import type { Principal } from '../accounts/types';
import { InvalidInputError, NotFoundError } from '../errors';
import type { ResponseStore } from '../usage/stored-responses';
import { chatBodyOfResponses, inputItems } from './responses-request';
import { responseEcho, type ResponsesShape } from './responses-shape';

type Json = Record<string, unknown>;

/** A Responses request read: the chat body it means, and the conversation so far, which a kept response extends. */
export interface ResponsesRequest {
  chat: Json;
  /** The custom tools offered, by name: their calls are answered as custom tool calls. */
  customTools: ReadonlySet<string>;
  /** The continued response's items and this request's input. */
  items: Json[];
}

/**
 * The chat body of a Responses request, a continued response's items first. A response that is
 * not the organization's to continue (never kept, deleted, expired, another's) is OpenAI's 400
 * `previous_response_not_found`, which clients recover from by sending the whole conversation.
 */
export async function readResponsesRequest(body: Readonly<Json>, principal: Principal, store: Pick<ResponseStore, 'get'>): Promise<ResponsesRequest> {
  const previousId = body.previous_response_id;
  let previous: Json[] = [];
  if (typeof previousId === 'string') {
    const kept = await store.get(previousId, principal.organization.id);
    if (!kept) {
      throw new InvalidInputError(`Previous response with id '${previousId}' not found.`, { code: 'previous_response_not_found', param: 'previous_response_id' });
    }
    previous = kept.items;
  }
  return { ...chatBodyOfResponses(body, previous), items: [...previous, ...inputItems(body.input)] };
}

/**
 * Whether the response is kept: `store` unless it is false, and never where zero data retention
 * applies (the organization's privacy settings, a guardrail, or the request's `provider.zdr`).
 * The shape repeats the request's fields with it, and answers its custom tools' calls as such.
 */
export function decideKeeping(shape: ResponsesShape, request: ResponsesRequest, body: Readonly<Json>, principal: Principal, guardrails: readonly { enforceZdr: boolean }[]): boolean {
  const zdr = principal.organization.privacy.zeroDataRetentionOnly || guardrails.some((g) => g.enforceZdr) || (body.provider as Json | undefined)?.zdr === true;
  const keep = body.store !== false && !zdr;
  shape.echo(responseEcho(body, keep), request.customTools);
  return keep;
}

/**
 * What keeps an answered response: its conversation (the request's items, then its output).
 * False when it was not kept (too large, or the write failed, which is logged): the answer then
 * says `store: false`.
 */
export function keeper(
  request: ResponsesRequest,
  principal: Principal,
  at: Date,
  store: Pick<ResponseStore, 'put'>,
  onFailure: (error: Error) => void,
): (answer: Json) => Promise<boolean> {
  return async (answer) => {
    const output = Array.isArray(answer.output) ? (answer.output as Json[]) : [];
    try {
      const kept = await store.put({ id: String(answer.id), organizationId: principal.organization.id, createdAt: at.toISOString(), response: answer, items: [...request.items, ...output] });
      return kept === 'stored';
    } catch (error) {
      onFailure(error as Error);
      return false;
    }
  };
}

/** `GET /responses/{id}`: the organization's kept response, as it was answered. */
export async function keptResponse(id: string, principal: Principal, store: Pick<ResponseStore, 'get'>): Promise<Json> {
  const kept = await store.get(id, principal.organization.id);
  if (!kept) throw new NotFoundError(`Response with id '${id}' not found.`);
  return kept.response;
}

/** `DELETE /responses/{id}`: removes the organization's kept response; its continuation then is `previous_response_not_found`. */
export async function deleteKeptResponse(id: string, principal: Principal, store: Pick<ResponseStore, 'delete'>): Promise<Json> {
  if (!(await store.delete(id, principal.organization.id))) throw new NotFoundError(`Response with id '${id}' not found.`);
  return { id, object: 'response', deleted: true };
}
