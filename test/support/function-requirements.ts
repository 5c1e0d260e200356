import type { FunctionId } from '../../lambdas/routes';
import { CATALOG_FUNCTION } from '../../lambdas/handlers/catalog';
import { INFERENCE_FUNCTION } from '../../lambdas/handlers/inference';
import { JWKS_FUNCTION } from '../../lambdas/handlers/jwks';
import { MANAGEMENT_FUNCTION } from '../../lambdas/handlers/management';
import { SIGNING_KEY_REGISTRAR_FUNCTION } from '../../lambdas/handlers/signing-key-registrar';
import { TOKEN_EXCHANGE_FUNCTION } from '../../lambdas/handlers/token-exchange';

/**
 * Every function: its Lambda entry file, the construct id the stack gives it, and what it
 * declares it reads. The synth test checks the stack grants exactly that; the entry test
 * checks the cold start fails without it.
 */
export const FUNCTION_REQUIREMENTS = {
  catalog: { entry: 'catalog', construct: 'Catalog', requirements: CATALOG_FUNCTION },
  tokenExchange: { entry: 'token-exchange', construct: 'TokenExchange', requirements: TOKEN_EXCHANGE_FUNCTION },
  jwks: { entry: 'jwks', construct: 'Jwks', requirements: JWKS_FUNCTION },
  management: { entry: 'management', construct: 'Management', requirements: MANAGEMENT_FUNCTION },
  inference: { entry: 'inference', construct: 'Inference', requirements: INFERENCE_FUNCTION },
  signingKeyRegistrar: { entry: 'signing-key-registrar', construct: 'SigningKeyRegistrar', requirements: SIGNING_KEY_REGISTRAR_FUNCTION },
} as const satisfies Record<FunctionId | 'signingKeyRegistrar', unknown>;
