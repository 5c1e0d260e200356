import type { KMSClient } from '@aws-sdk/client-kms';
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import middy from '@middy/core';
import type { CloudFormationCustomResourceEvent, Context } from 'aws-lambda';
import type { Clock } from '../../clock';
import type { FunctionRequirements } from '../../config';
import type { Telemetry } from '../../observability/telemetry';
import { traceHandler } from '../../observability/tracing';
import { kmsPublicJwk } from '../../aws/kms-signer';
import { SIGNING_KEY_REGISTRATION_PROPERTIES } from '../../signing/registration-properties';
import type { SigningKeyStore } from '../../signing/signer';
import { registerDeployedSigningKey, retireSigningKey, type DeployedKeyChange } from '../../signing/signing-key-registry';

/** Writes signing-key records to the keys table; the key's ARN comes with the event. */
export const SIGNING_KEY_REGISTRAR_FUNCTION = { tables: ['keys'] } as const satisfies FunctionRequirements;

/** What the registrar uses: the signing-key records and KMS. */
export interface SigningKeyRegistrarDeps {
  signingKeys: SigningKeyStore;
  /** Reads the key's public half (`kms:GetPublicKey`). */
  kms: KMSClient;
  clock: Clock;
  telemetry: Telemetry;
}

/** What the custom resource provider framework expects back. */
export interface RegistrarResponse {
  /** The kid: a new key ARN gives a new id, so CloudFormation later deletes the old one. */
  PhysicalResourceId: string;
  Data?: { Kid: string };
}

/**
 * The deploy-time registrar, behind `Custom::SigningKeyRegistration`:
 * - Create, Update: reads the key's public JWK from KMS and registers it; a new key ARN
 *   becomes the active signing key and retires the previous one, which stays published, while
 *   a redeploy naming the same key keeps a key rotated in since (`signing-key rotate`) active.
 * - Delete (stack deletion, or the old id after a key change): retires the key it registered.
 * A missing or empty key ARN fails the deployment with a message naming the property.
 */
export function createSigningKeyRegistrar(deps: SigningKeyRegistrarDeps) {
  const { logger } = deps.telemetry;
  const register = async (event: CloudFormationCustomResourceEvent): Promise<RegistrarResponse> => {
    if (event.RequestType === 'Delete') {
      const retired = await retireSigningKey(deps.signingKeys, event.PhysicalResourceId, deps.clock);
      logger.info('signing key deregistered', { kid: event.PhysicalResourceId, retired: retired !== undefined });
      return { PhysicalResourceId: event.PhysicalResourceId };
    }
    const property = SIGNING_KEY_REGISTRATION_PROPERTIES.signingKeyArn;
    const keyArn = event.ResourceProperties[property] as unknown;
    if (typeof keyArn !== 'string' || keyArn === '') {
      throw new Error(`${event.RequestType}: resource property ${property} must be the signing key's ARN`);
    }
    const { kid, publicJwk } = await kmsPublicJwk(deps.kms, keyArn);
    const result = await registerDeployedSigningKey(deps.signingKeys, { kid, keyRef: keyArn, publicJwk }, keyChange(event, property, keyArn), deps.clock);
    logger.info('signing key registered', {
      kid,
      keyArn,
      active: result.active.kid,
      changed: result.changed,
      retired: result.retired.map((r) => r.kid),
    });
    return { PhysicalResourceId: kid, Data: { Kid: kid } };
  };
  return middy<CloudFormationCustomResourceEvent, RegistrarResponse, Error, Context>()
    .use(injectLambdaContext(deps.telemetry.logger, { resetKeys: true, logEvent: false }))
    .use(traceHandler<CloudFormationCustomResourceEvent, RegistrarResponse>(deps.telemetry))
    .handler(register);
}

/** What the event says of the key: a new resource, another key than before, or the same key. */
function keyChange(event: CloudFormationCustomResourceEvent, property: string, keyArn: string): DeployedKeyChange {
  if (event.RequestType !== 'Update') return 'created';
  return event.OldResourceProperties[property] === keyArn ? 'unchanged' : 'changed';
}
