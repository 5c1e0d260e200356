import { createHash } from 'node:crypto';

/**
 * Ids derived from other ids (name-based UUIDs, version 5, RFC 9562 §5.5): the same input
 * always gives the same id, and no two inputs of one kind share one. Each kind has its own
 * namespace, a fixed UUID chosen for modelgate.
 */
const NAMESPACES = Object.freeze({
  defaultGuardrail: '3f9c1d2e-6b84-4a57-9e0d-5c7a21b8f4e6',
  keyAssignment: '8a4e7c10-2d5b-4f93-b6e1-0c9f3a7d5e28',
});

/** The version 5 UUID of `name` in `namespace` (RFC 9562 §5.5). */
export function nameBasedUuid(namespace: string, name: string): string {
  const hash = createHash('sha1').update(Buffer.from(namespace.replace(/-/g, ''), 'hex')).update(name, 'utf8').digest();
  const bytes = hash.subarray(0, 16);
  bytes[6] = (bytes[6]! & 0x0f) | 0x50;
  bytes[8] = (bytes[8]! & 0x3f) | 0x80;
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/**
 * The id of a workspace's default guardrail (public `Workspace.default_guardrail_id`): derived
 * from the workspace id, so every workspace has one before its guardrail exists.
 */
export function defaultGuardrailId(workspaceId: string): string {
  return nameBasedUuid(NAMESPACES.defaultGuardrail, workspaceId);
}

/** The id of one key's assignment to one guardrail (public `KeyAssignment.id`). */
export function keyAssignmentId(guardrailId: string, keyHash: string): string {
  return nameBasedUuid(NAMESPACES.keyAssignment, `${guardrailId}/${keyHash}`);
}
