/** Lambda entry of the token exchange function; it reads as every entry does (catalog/entry.ts). */
import { KMSClient } from '@aws-sdk/client-kms';
import { randomId, systemClock } from '../../clock';
import { createIssuerKeySource } from '../../federation/issuer-keys';
import { traced } from '../../observability/tracing';
import { signerForRecord } from '../../wiring/signer-for-record';
import { lambdaEntry } from '../lambda-entry';
import { tokenExchangeDependencies } from './dependencies';
import { TOKEN_EXCHANGE_FUNCTION, createTokenExchangeHandler } from './handler';

// Fails the cold start when a table or setting the exchange relies on is not configured.
const { config, telemetry, context } = lambdaEntry('tokenExchange', TOKEN_EXCHANGE_FUNCTION);
// Signing keys are KMS keys named by their records, so a rotated key needs no redeploy.
const kms = traced(telemetry, new KMSClient({}));

/** The token exchange function's Lambda handler. */
export const handler = createTokenExchangeHandler(
  tokenExchangeDependencies(context, {
    ...config,
    issuerKeys: createIssuerKeySource({ clock: systemClock, allowLoopback: config.allowLoopbackIssuers }),
    signerForRecord: signerForRecord({ kms }),
    newId: randomId,
  }),
);
