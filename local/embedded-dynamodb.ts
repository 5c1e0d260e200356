import type { AddressInfo } from 'node:net';
import type { DynamoDBClient, DynamoDBClientConfig } from '@aws-sdk/client-dynamodb';
import { createDynamoDbClient } from '../lambdas/aws/dynamo-client';
// dynalite ships no types; its factory returns an http.Server.
const dynalite = require('dynalite') as (options: Record<string, unknown>) => import('node:http').Server;

/** A running embedded DynamoDB: its endpoint URL, a client for it, and how to stop it. */
export interface EmbeddedDynamoDb {
  endpoint: string;
  client: DynamoDBClient;
  stop(): Promise<void>;
}

/** Credentials and region the embedded server accepts; nothing is sent to AWS. */
export const LOCAL_AWS_ENV = {
  AWS_REGION: 'local',
  AWS_ACCESS_KEY_ID: 'local',
  AWS_SECRET_ACCESS_KEY: 'local',
} as const;

/** A client of a local DynamoDB at `endpoint` (the embedded one, DynamoDB Local), as the operator reaches it: its region and credentials, with `config` over them. */
export function localDynamoDbClient(endpoint: string, config: DynamoDBClientConfig = {}): DynamoDBClient {
  return createDynamoDbClient({
    endpoint,
    region: LOCAL_AWS_ENV.AWS_REGION,
    credentials: { accessKeyId: LOCAL_AWS_ENV.AWS_ACCESS_KEY_ID, secretAccessKey: LOCAL_AWS_ENV.AWS_SECRET_ACCESS_KEY },
    ...config,
  });
}

/**
 * Starts dynalite, an in-process DynamoDB-compatible server, on a loopback port.
 * In memory by default; with `path` the data persists across restarts.
 */
export async function startEmbeddedDynamoDb(options: { port?: number; path?: string } = {}): Promise<EmbeddedDynamoDb> {
  const server = dynalite({ createTableMs: 0, deleteTableMs: 0, updateTableMs: 0, ...(options.path ? { path: options.path } : {}) });
  // The functions' clients keep up to 128 sockets each and reuse them after any pause: a server
  // that closed idle sockets after Node's default 5 s would race a client reusing one, and a
  // burst of such resets can exhaust the SDK's retry quota (ECONNRESET surfacing as a 500).
  server.keepAliveTimeout = 0;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  const endpoint = `http://127.0.0.1:${port}`;
  const client = localDynamoDbClient(endpoint);
  return {
    endpoint,
    client,
    stop: async () => {
      client.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
