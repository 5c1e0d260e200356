import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import {
  eventOrderKey,
  InvalidCursorError,
  type ExchangeEvent,
  type ExchangeEventPage,
  type ExchangeEventQuery,
  type ExchangeEventStore,
} from '../federation/exchange-events';
import { putItem, queryPage, strip } from './dynamo-items';
import { BY_ORGANIZATION_INDEX } from './table-schemas';

/**
 * Exchange events in the policies table, one item per event, kept 30 days by TTL:
 *
 * | pk                        | sk           | gsi1pk          | gsi1sk       |
 * |---------------------------|--------------|-----------------|--------------|
 * | `EVENT#<org>#<policyId>`  | `<time>#<id>`| `EVENT#<org>`   | `<time>#<id>`|
 *
 * One policy's events are one item collection (strongly consistent, newest first); the
 * organization's are one partition of the by-organization index.
 */
export class DynamoExchangeEventStore implements ExchangeEventStore {
  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {}

  async record(event: ExchangeEvent): Promise<void> {
    const order = eventOrderKey(event);
    await putItem(this.client, this.tableName, { pk: policyPk(event.organizationId, event.policyId), sk: order, gsi1pk: orgPk(event.organizationId), gsi1sk: order, ...event });
  }

  async list({ organizationId, policyId, limit, cursor, now }: ExchangeEventQuery): Promise<ExchangeEventPage> {
    const nowSeconds = Math.floor(now.getTime() / 1000);
    const base = {
      TableName: this.tableName,
      ScanIndexForward: false,
      // DynamoDB deletes expired items late: an expired event is absent on read.
      FilterExpression: 'expiresAt > :now',
    };
    const query =
      policyId !== undefined
        ? {
            ...base,
            KeyConditionExpression: 'pk = :pk',
            ExpressionAttributeValues: { ':pk': policyPk(organizationId, policyId), ':now': nowSeconds },
            ConsistentRead: true,
          }
        : {
            ...base,
            IndexName: BY_ORGANIZATION_INDEX,
            KeyConditionExpression: 'gsi1pk = :pk',
            ExpressionAttributeValues: { ':pk': orgPk(organizationId), ':now': nowSeconds },
          };
    const startKey = cursor === undefined ? undefined : this.startKey(organizationId, policyId, decodeCursor(cursor));
    const { items, nextKey } = await queryPage(this.client, query, { limit, startKey });
    return {
      events: items.map((item) => strip<ExchangeEvent>(item)),
      nextCursor: nextKey ? encodeCursor({ order: String(nextKey.sk), policyId: String(nextKey.pk).split('#')[2] ?? '' }) : null,
    };
  }

  private startKey(organizationId: string, policyId: string | undefined, position: Cursor): Record<string, unknown> {
    const key = { pk: policyPk(organizationId, policyId ?? position.policyId), sk: position.order };
    return policyId !== undefined ? key : { ...key, gsi1pk: orgPk(organizationId), gsi1sk: position.order };
  }
}

const orgPk = (organizationId: string) => `EVENT#${organizationId}`;
const policyPk = (organizationId: string, policyId: string) => `EVENT#${organizationId}#${policyId}`;

interface Cursor {
  order: string;
  policyId: string;
}

function encodeCursor(cursor: Cursor): string {
  return Buffer.from(JSON.stringify([cursor.order, cursor.policyId]), 'utf8').toString('base64url');
}

/**
 * The cursor names a position only; the partition always comes from the caller's own
 * organization, so a crafted cursor cannot reach another organization's events.
 */
function decodeCursor(cursor: string): Cursor {
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    throw new InvalidCursorError();
  }
  if (
    !Array.isArray(parsed) ||
    parsed.length !== 2 ||
    typeof parsed[0] !== 'string' ||
    typeof parsed[1] !== 'string' ||
    !/^\d{4}-\d\d-\d\dT[\d:.]+Z#[A-Za-z0-9-]{1,64}$/.test(parsed[0]) ||
    !/^[A-Za-z0-9-]{1,100}$/.test(parsed[1])
  ) {
    throw new InvalidCursorError();
  }
  return { order: parsed[0], policyId: parsed[1] };
}
