import { FUNCTION_CONSTRUCT_IDS } from '../../local/function-principals';
import { CATALOG_FUNCTION } from '../../lambdas/functions/catalog/handler';
import { INFERENCE_FUNCTION } from '../../lambdas/functions/inference/handler';
import { JWKS_FUNCTION } from '../../lambdas/functions/jwks/handler';
import { MANAGEMENT_FUNCTION } from '../../lambdas/functions/management/handler';
import { SETTINGS_PAGE_FUNCTION } from '../../lambdas/functions/settings-page/handler';
import { SIGNING_KEY_REGISTRAR_FUNCTION } from '../../lambdas/functions/signing-key-registrar/handler';
import { TOKEN_EXCHANGE_FUNCTION } from '../../lambdas/functions/token-exchange/handler';
import { USAGE_ROLLUP_FUNCTION } from '../../lambdas/functions/usage-rollup/handler';
import type { StackFunctionId } from '../../local/function-principals';

/**
 * Every function: its Lambda entry file, the construct id the stack gives it, and what it
 * declares it reads. The synth test checks the stack grants exactly that; the entry test
 * checks the cold start fails without it.
 */
export const FUNCTION_REQUIREMENTS = {
  catalog: { entry: 'catalog', construct: FUNCTION_CONSTRUCT_IDS.catalog, requirements: CATALOG_FUNCTION },
  tokenExchange: { entry: 'token-exchange', construct: FUNCTION_CONSTRUCT_IDS.tokenExchange, requirements: TOKEN_EXCHANGE_FUNCTION },
  jwks: { entry: 'jwks', construct: FUNCTION_CONSTRUCT_IDS.jwks, requirements: JWKS_FUNCTION },
  management: { entry: 'management', construct: FUNCTION_CONSTRUCT_IDS.management, requirements: MANAGEMENT_FUNCTION },
  inference: { entry: 'inference', construct: FUNCTION_CONSTRUCT_IDS.inference, requirements: INFERENCE_FUNCTION },
  settingsPage: { entry: 'settings-page', construct: FUNCTION_CONSTRUCT_IDS.settingsPage, requirements: SETTINGS_PAGE_FUNCTION },
  signingKeyRegistrar: { entry: 'signing-key-registrar', construct: FUNCTION_CONSTRUCT_IDS.signingKeyRegistrar, requirements: SIGNING_KEY_REGISTRAR_FUNCTION },
  usageRollup: { entry: 'usage-rollup', construct: FUNCTION_CONSTRUCT_IDS.usageRollup, requirements: USAGE_ROLLUP_FUNCTION },
} as const satisfies Record<StackFunctionId, unknown>;
