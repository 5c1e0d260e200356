import type { Clock } from '../../clock';
import type { FunctionRequirements } from '../../config';
import { apiHandler } from '../../http/middleware';
import { json, rawJson } from '../../http/responses';
import type { Telemetry } from '../../observability/telemetry';
import { publishedKeys } from '../../oauth/jwks';
import { OPENAPI_DOCUMENT } from '../../openapi/document';
import { API_BASE_PATH } from '../../routes';
import type { SigningKeyStore } from '../../signing/signer';

/** SPEC 4.6: only the signing-key records of the keys table (IAM narrows it to them). */
export const JWKS_FUNCTION = { tables: ['keys'] } as const satisfies FunctionRequirements;

export interface JwksHandlerDeps {
  signingKeys: Pick<SigningKeyStore, 'list'>;
  clock: Clock;
  /** Retired keys stay published this long after retirement (SPEC 8). */
  accessTokenMaxLifetimeSeconds: number;
  telemetry: Telemetry;
}

const OPENAPI_PATH = `${API_BASE_PATH}/openapi.json`;
// The document never changes within a container: serialized once, at cold start.
const OPENAPI_BODY = JSON.stringify(OPENAPI_DOCUMENT);

/**
 * `GET /oauth/jwks` and `GET /openapi.json`: the public, cacheable documents of the API. Caches
 * may keep the key set briefly: a new key is published well before it signs.
 */
export function createJwksHandler(deps: JwksHandlerDeps) {
  return apiHandler(async (event) => {
    if (event.resource === OPENAPI_PATH) return rawJson(200, OPENAPI_BODY, { 'Cache-Control': 'public, max-age=300' });
    return json(200, publishedKeys(await deps.signingKeys.list(), deps.clock.now(), deps.accessTokenMaxLifetimeSeconds), {
      'Cache-Control': 'public, max-age=300',
    });
  }, deps.telemetry);
}
