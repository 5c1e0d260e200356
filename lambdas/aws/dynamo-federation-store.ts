import { createHash } from 'node:crypto';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { randomId, systemClock, type Clock, type IdGenerator } from '../clock';
import { UnfinishedWriteError } from '../errors';
import {
  CountLimitReachedError,
  FEDERATION_LIMITS,
  IssuerUrlTakenError,
  byCreation,
  type CountedKind,
  type FederationStore,
} from '../federation/federation-store';
import type { FederationIssuer, FederationPolicy } from '../federation/types';
import { DynamoCountLimit } from './dynamo-count-limit';
import { AlreadyExistsError } from '../accounts/account-store';
import { DynamoItems, strip, type QueryInput } from './dynamo-items';
import { ABANDONED_PLACE_MS, abandonedAt, isAbandoned } from './dynamo-places';
import { BY_ORGANIZATION_INDEX } from './table-schemas';

/**
 * Issuers and policies in the policies table, one item per fact (docs/architecture.md, "Data
 * layout", lists the items, their keys and why). Issuer URLs are unique per organization through
 * a claim item keyed by the URL's hash; the number of issuers and policies of an organization is
 * bounded by a places item each ({@link DynamoCountLimit}).
 *
 * A URL claim belongs to one write, not to the issuer: it records the `claimId` of the write that
 * made it, and the issuer item (`urlClaimId`) the claim its URL relies on. A claim is deleted only
 * under a condition on that id: by the write that made it when that write did not commit, or by
 * the write that moved the issuer off the URL once it committed. Two writes of one issuer can
 * therefore never release each other's claim.
 */
export class DynamoFederationStore implements FederationStore {
  private readonly items: DynamoItems;
  private readonly places: Record<CountedKind, DynamoCountLimit>;

  /**
   * @param writersSince before this instant no writer still runs: a URL claim or limit place
   *   taken earlier that nothing relies on is reclaimed at once (the local runtime's start).
   */
  constructor(
    client: DynamoDBDocumentClient,
    private readonly tableName: string,
    private readonly clock: Clock = systemClock,
    private readonly newId: IdGenerator = randomId,
    private readonly writersSince?: Date,
  ) {
    this.items = new DynamoItems(client, tableName);
    this.places = {
      issuers: new DynamoCountLimit(
        client,
        tableName,
        { kind: 'issuers', keyOf: (org, id) => ({ pk: orgPk(org), sk: issuerSk(id) }), list: (org) => this.listIssuers(org) },
        clock,
        writersSince,
      ),
      policies: new DynamoCountLimit(
        client,
        tableName,
        { kind: 'policies', keyOf: (_org, id) => ({ pk: policyPk(id), sk: POLICY_SK }), list: (org) => this.listPolicies(org) },
        clock,
        writersSince,
      ),
    };
  }

  async getPolicy(policyId: string): Promise<FederationPolicy | undefined> {
    // Strongly consistent: a policy paused or deleted a moment ago refuses the next exchange (docs/reference.md#lifecycle).
    const item = await this.items.get<FederationPolicy>(policyPk(policyId), POLICY_SK);
    return item && policyOf(item);
  }

  async getIssuer(organizationId: string, issuerId: string): Promise<FederationIssuer | undefined> {
    return (await this.getIssuerItem(organizationId, issuerId))?.issuer;
  }

  async createIssuer(issuer: FederationIssuer, limit: number = FEDERATION_LIMITS.issuers): Promise<void> {
    await this.createCounted('issuers', issuer, limit, () => this.createClaimingUrl(issuer));
  }

  /**
   * The issuer and its URL's claim in one transaction: a concurrent create of the same URL finds
   * both or neither, so it is told the URL is taken, never that a write is unfinished. A claim
   * an earlier release left without its issuer is taken over once abandoned ({@link claimHolder}).
   */
  private async createClaimingUrl(issuer: FederationIssuer): Promise<void> {
    const claimId = this.newId();
    const key = { pk: orgPk(issuer.organizationId), sk: urlSk(issuer.issuerUrl) };
    const claim = { ...key, issuerId: issuer.id, issuerUrl: issuer.issuerUrl, claimId, claimedAt: this.clock.now().toISOString() };
    for (let attempt = 0; attempt < 3; attempt++) {
      const existing = await this.items.get<UrlClaim>(key.pk, key.sk);
      const holder = existing && (await this.claimHolder(issuer.organizationId, existing));
      if (holder === 'issuer') throw new IssuerUrlTakenError(issuer.issuerUrl);
      if (holder === 'unfinished-write') throw new UnfinishedWriteError(`The issuer_url ${issuer.issuerUrl} is held`, abandonedAt(Date.parse(existing!.claimedAt)));
      const outcome = await this.items.transact([
        { Put: { TableName: this.tableName, Item: claim, ...(existing ? sameClaim(existing) : { ConditionExpression: 'attribute_not_exists(pk)' }) } },
        { Put: { TableName: this.tableName, Item: issuerItem(issuer, claimId), ConditionExpression: 'attribute_not_exists(pk)' } },
      ]);
      if (outcome.written) return;
      if (outcome.failed.some((failed) => failed.index === 1)) throw new AlreadyExistsError(`issuer ${issuer.id}`);
      // The claim changed meanwhile: read what holds it now.
    }
    throw new IssuerUrlTakenError(issuer.issuerUrl);
  }

  async listIssuers(organizationId: string): Promise<FederationIssuer[]> {
    const items = await this.items.queryRecords<IssuerItem>({
      KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
      ExpressionAttributeValues: { ':pk': orgPk(organizationId), ':prefix': 'ISSUER#' },
      ConsistentRead: true,
    });
    return items.map(issuerOf).sort(byCreation);
  }

  async updateIssuer(next: FederationIssuer, expectedVersion: number): Promise<boolean> {
    const current = await this.getIssuerItem(next.organizationId, next.id);
    if (!current || current.issuer.version !== expectedVersion) return false;
    if (current.issuer.issuerUrl === next.issuerUrl) return this.putIfVersion(issuerItem(next, current.urlClaimId), expectedVersion);
    // The new URL is claimed before the issuer says it has it, and the old claim released
    // only after: a crash in between leaves a stale claim, never two issuers with one URL.
    // A claim held by another write of this issuer means it was changed meanwhile.
    const claimId = this.newId();
    if (!(await this.claimUrl(next, claimId))) return false;
    const written = await this.putIfVersion(issuerItem(next, claimId), expectedVersion);
    if (written) await this.releaseUrl(next.organizationId, current.issuer.issuerUrl, next.id, current.urlClaimId);
    else await this.releaseUrl(next.organizationId, next.issuerUrl, next.id, claimId);
    return written;
  }

  /**
   * Deletes the issuer at the version read, so the URL claim released after is the one the
   * deleted issuer relied on, then gives its place back.
   */
  async deleteIssuer(organizationId: string, issuerId: string): Promise<boolean> {
    let current = await this.getIssuerItem(organizationId, issuerId);
    for (let attempt = 0; attempt < 10 && current; attempt++) {
      const deleted = await this.items.write({
        Delete: {
          Key: { pk: orgPk(organizationId), sk: issuerSk(issuerId) },
          ConditionExpression: '#version = :version',
          ExpressionAttributeNames: { '#version': 'version' },
          ExpressionAttributeValues: { ':version': current.issuer.version },
        },
      });
      if (!deleted.written) {
        // Changed meanwhile: go on from the issuer as the condition found it.
        current = deleted.item && issuerRead(strip<IssuerItem>(deleted.item));
        continue;
      }
      await this.releaseUrl(organizationId, current.issuer.issuerUrl, issuerId, current.urlClaimId);
      await this.places.issuers.release(organizationId, issuerId);
      return true;
    }
    if (!current) return false;
    throw new Error(`issuer ${issuerId} kept changing while it was deleted`);
  }

  async createPolicy(policy: FederationPolicy, limit: number = FEDERATION_LIMITS.policies): Promise<void> {
    await this.createCounted('policies', policy, limit, () => this.items.create(policyItem(policy), `policy ${policy.id}`));
  }

  async listPolicies(organizationId: string, issuerId?: string): Promise<FederationPolicy[]> {
    // Global secondary indexes are eventually consistent: a list may lag a write briefly.
    const input: Omit<QueryInput, 'TableName'> =
      issuerId === undefined
        ? {
            IndexName: BY_ORGANIZATION_INDEX,
            KeyConditionExpression: 'gsi1pk = :pk',
            ExpressionAttributeValues: { ':pk': policiesGsiPk(organizationId) },
          }
        : {
            IndexName: BY_ORGANIZATION_INDEX,
            KeyConditionExpression: 'gsi1pk = :pk AND begins_with(gsi1sk, :issuer)',
            ExpressionAttributeValues: { ':pk': policiesGsiPk(organizationId), ':issuer': `${issuerId}#` },
          };
    const policies = await this.items.queryRecords<FederationPolicy>(input);
    return policies.map(policyOf).sort(byCreation);
  }

  async updatePolicy(next: FederationPolicy, expectedVersion: number): Promise<boolean> {
    return this.putIfVersion(policyItem(next), expectedVersion);
  }

  async deletePolicy(organizationId: string, policyId: string): Promise<boolean> {
    const deleted = await this.items.write({
      Delete: {
        Key: { pk: policyPk(policyId), sk: POLICY_SK },
        ConditionExpression: 'organizationId = :org',
        ExpressionAttributeValues: { ':org': organizationId },
      },
    });
    if (!deleted.written) return false;
    await this.places.policies.release(organizationId, policyId);
    return true;
  }

  /**
   * Takes a place under the organization's limit, then creates; a failed create gives the
   * place back. A create slow enough for its place to have been reclaimed meanwhile (see
   * {@link DynamoCountLimit.stillHeld}) removes what it wrote and is refused.
   */
  private async createCounted(kind: CountedKind, item: { organizationId: string; id: string }, limit: number, create: () => Promise<void>): Promise<void> {
    const places = this.places[kind];
    const takenAt = this.clock.now();
    if (!(await places.take(item.organizationId, item.id, limit))) throw new CountLimitReachedError(kind, limit);
    try {
      await create();
    } catch (error) {
      await places.release(item.organizationId, item.id);
      throw error;
    }
    if (await places.stillHeld(item.organizationId, item.id, takenAt)) return;
    if (kind === 'issuers') await this.deleteIssuer(item.organizationId, item.id);
    else await this.deletePolicy(item.organizationId, item.id);
    throw new CountLimitReachedError(kind, limit);
  }

  /**
   * Claims `issuer.issuerUrl` for the write `claimId` of `issuer.id`. False when another write
   * of the same issuer holds the URL; {@link IssuerUrlTakenError} when another issuer has it,
   * and {@link UnfinishedWriteError} when another issuer's write claimed it and has not (yet)
   * written the issuer. A claim that no issuer relies on (left by an interrupted write) is taken
   * over once it is older than {@link STALE_CLAIM_MS} (or at once when its writer is provably
   * gone); a younger one may belong to a write still in progress.
   */
  private async claimUrl(issuer: FederationIssuer, claimId: string): Promise<boolean> {
    const key = { pk: orgPk(issuer.organizationId), sk: urlSk(issuer.issuerUrl) };
    const claim = { ...key, issuerId: issuer.id, issuerUrl: issuer.issuerUrl, claimId, claimedAt: this.clock.now().toISOString() };
    let existing = await this.items.get<UrlClaim>(key.pk, key.sk);
    for (let attempt = 0; attempt < 3; attempt++) {
      const holder = existing && (await this.claimHolder(issuer.organizationId, existing));
      if (existing && holder !== 'none') {
        if (existing.issuerId === issuer.id) return false;
        if (holder === 'issuer') throw new IssuerUrlTakenError(issuer.issuerUrl);
        throw new UnfinishedWriteError(`The issuer_url ${issuer.issuerUrl} is held`, abandonedAt(Date.parse(existing.claimedAt)));
      }
      const condition = existing ? sameClaim(existing) : { ConditionExpression: 'attribute_not_exists(pk)' };
      const claimed = await this.items.write({ Put: { Item: claim, ...condition } });
      if (claimed.written) return true;
      // Claimed or released meanwhile: go on from the claim the condition found.
      existing = claimed.item && strip<UrlClaim>(claimed.item);
    }
    throw new IssuerUrlTakenError(issuer.issuerUrl);
  }

  /**
   * What holds a claim: its issuer while that has the URL (whichever write made the claim), else
   * the write that made it while that may still run (young, and not provably gone: see
   * isAbandoned), else nothing.
   */
  private async claimHolder(organizationId: string, claim: UrlClaim): Promise<'issuer' | 'unfinished-write' | 'none'> {
    if ((await this.getIssuer(organizationId, claim.issuerId))?.issuerUrl === claim.issuerUrl) return 'issuer';
    return isAbandoned(Date.parse(claim.claimedAt), this.clock.now().getTime(), this.writersSince) ? 'none' : 'unfinished-write';
  }

  /**
   * Releases the claim `claimId` of this issuer, and no other: a claim from before claims
   * had ids is released by its issuer's write when that issuer's item names none.
   */
  private async releaseUrl(organizationId: string, issuerUrl: string, issuerId: string, claimId: string | undefined): Promise<void> {
    await this.items.write({
      Delete: { Key: { pk: orgPk(organizationId), sk: urlSk(issuerUrl) }, ...sameClaim({ issuerId, claimId }) },
    });
  }

  private async getIssuerItem(organizationId: string, issuerId: string): Promise<{ issuer: FederationIssuer; urlClaimId?: string } | undefined> {
    const item = await this.items.get<IssuerItem>(orgPk(organizationId), issuerSk(issuerId));
    return item && issuerRead(item);
  }

  private async putIfVersion(item: Record<string, unknown>, expectedVersion: number): Promise<boolean> {
    const { written } = await this.items.write({
      Put: {
        Item: item,
        ConditionExpression: '#version = :expected AND organizationId = :org',
        ExpressionAttributeNames: { '#version': 'version' },
        ExpressionAttributeValues: { ':expected': expectedVersion, ':org': item.organizationId },
      },
    });
    return written;
  }
}

/** How old a claim on an issuer URL whose issuer does not exist must be before it is taken over. */
export const STALE_CLAIM_MS = ABANDONED_PLACE_MS;

const POLICY_SK = 'POLICY';
const orgPk = (organizationId: string) => `ORG#${organizationId}`;
const issuerSk = (issuerId: string) => `ISSUER#${issuerId}`;
const urlSk = (issuerUrl: string) => `ISSUER_URL#${createHash('sha256').update(issuerUrl, 'utf8').digest('hex')}`;
const policyPk = (policyId: string) => `POLICY#${policyId}`;
const policiesGsiPk = (organizationId: string) => `${orgPk(organizationId)}#POLICIES`;

/** An issuer item: the issuer and the id of the URL claim it relies on (none before claims had ids). */
type IssuerItem = FederationIssuer & { urlClaimId?: string };

interface UrlClaim {
  issuerId: string;
  issuerUrl: string;
  claimId?: string;
  claimedAt: string;
}

function issuerItem(issuer: FederationIssuer, urlClaimId: string | undefined): Record<string, unknown> {
  return { pk: orgPk(issuer.organizationId), sk: issuerSk(issuer.id), ...issuer, urlClaimId };
}

/** An issuer item as read: the issuer, and the claim it relies on. */
function issuerRead(item: IssuerItem): { issuer: FederationIssuer; urlClaimId?: string } {
  return { issuer: issuerOf(item), urlClaimId: item.urlClaimId };
}

function issuerOf(item: IssuerItem): FederationIssuer {
  const { urlClaimId: _claim, ...issuer } = item;
  return issuer;
}

/** The condition that the stored claim is this one: same issuer, same write (or both from before claim ids). */
function sameClaim(claim: { issuerId: string; claimId?: string }) {
  return claim.claimId === undefined
    ? { ConditionExpression: 'issuerId = :issuer AND attribute_not_exists(claimId)', ExpressionAttributeValues: { ':issuer': claim.issuerId } }
    : { ConditionExpression: 'issuerId = :issuer AND claimId = :claim', ExpressionAttributeValues: { ':issuer': claim.issuerId, ':claim': claim.claimId } };
}

function policyItem(policy: FederationPolicy): Record<string, unknown> {
  return {
    pk: policyPk(policy.id),
    sk: POLICY_SK,
    gsi1pk: policiesGsiPk(policy.organizationId),
    gsi1sk: `${policy.issuerId}#${policy.createdAt}#${policy.id}`,
    ...policy,
  };
}

/** Policies written before DPoP have no `requireDpop`: they issue Bearer tokens unless a proof comes. */
function policyOf(item: FederationPolicy): FederationPolicy {
  return { ...item, requireDpop: item.requireDpop === true };
}
