/** Lambda entry of the deploy-time signing-key registrar; it reads as every entry does (catalog/entry.ts). */
import { KMSClient } from '@aws-sdk/client-kms';
import { DynamoSigningKeyStore } from '../../aws/dynamo-signing-key-store';
import { traced } from '../../observability/tracing';
import { lambdaEntry } from '../lambda-entry';
import { SIGNING_KEY_REGISTRAR_FUNCTION, createSigningKeyRegistrar } from './handler';

const { config, telemetry, context } = lambdaEntry('signingKeyRegistrar', SIGNING_KEY_REGISTRAR_FUNCTION);

/** The signing-key registrar's Lambda handler, run by CloudFormation at deploy. */
export const handler = createSigningKeyRegistrar({
  signingKeys: new DynamoSigningKeyStore(context.documentClient, config.tables.keys),
  kms: traced(telemetry, new KMSClient({})),
  clock: context.clock,
  telemetry,
});
