import type { CopyKind } from './dynamo-read-replicas';

/**
 * Copies of a key: one key may be used 10,000 times a second (docs/architecture.md, "Data
 * layout"); each copy then takes 625 strongly consistent reads a second, a fifth of a partition's.
 */
export const KEY_COPIES = 16;
/**
 * Copies of an organization, and of each of its workspaces and guardrails: one organization may
 * make 50,000 requests a second over its keys; each copy then takes about 780 reads a second.
 */
export const ORGANIZATION_COPIES = 64;

/** How a key is copied: whole, {@link KEY_COPIES} times. */
export const KEY_KIND: CopyKind = { count: KEY_COPIES, withheld: [] };
/** How an organization is copied: whole, {@link ORGANIZATION_COPIES} times. */
export const ORGANIZATION_KIND: CopyKind = { count: ORGANIZATION_COPIES, withheld: [] };
/** How a workspace is copied: without its key count (and an earlier release's key places), which only management reads. */
export const WORKSPACE_KIND: CopyKind = { count: ORGANIZATION_COPIES, withheld: ['keyCount', 'keyHolds'] };
/** How a guardrail is copied: whole, {@link ORGANIZATION_COPIES} times. */
export const GUARDRAIL_KIND: CopyKind = { count: ORGANIZATION_COPIES, withheld: [] };

/** The kinds of items that have copies. */
export type CopiedKindName = 'key' | 'organization' | 'workspace' | 'guardrail';

/** The kind of copies the item `key` has; undefined for an item that has none (a user, a slug's claim, a copy). */
export function copiedKind(key: { pk: string; sk: string }): { name: CopiedKindName; kind: CopyKind } | undefined {
  if (key.pk.startsWith('APIKEY#') && key.sk === 'APIKEY') return { name: 'key', kind: KEY_KIND };
  if (!key.pk.startsWith('ORG#')) return undefined;
  if (key.sk === 'ORG') return { name: 'organization', kind: ORGANIZATION_KIND };
  if (key.sk.startsWith('WORKSPACE#')) return { name: 'workspace', kind: WORKSPACE_KIND };
  if (key.sk.startsWith('GUARDRAIL#')) return { name: 'guardrail', kind: GUARDRAIL_KIND };
  return undefined;
}
