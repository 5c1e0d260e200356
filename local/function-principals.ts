import type { FunctionId } from '../lambdas/routes';

/** Every function of the stack: the API's functions, the deploy-time signing-key registrar and the scheduled usage rollup. */
export type StackFunctionId = FunctionId | 'signingKeyRegistrar' | 'usageRollup';

/**
 * Each function's construct id in the stack (lib/modelgate-stack.ts), which is also the access
 * key id its AWS clients present in the local runtime and the test suites: a request to a
 * stand-in names the function that sent it, and the test suites' IAM gate (test/support/iam/)
 * evaluates it against that function's role. A bundled entry gets it as `AWS_ACCESS_KEY_ID`.
 * Any other access key id (the operator's `local`) is not a function.
 */
export const FUNCTION_CONSTRUCT_IDS: Readonly<Record<StackFunctionId, string>> = {
  catalog: 'Catalog',
  tokenExchange: 'TokenExchange',
  jwks: 'Jwks',
  management: 'Management',
  inference: 'Inference',
  settingsPage: 'SettingsPage',
  signingKeyRegistrar: 'SigningKeyRegistrar',
  usageRollup: 'UsageRollup',
};

/** Nothing checks the secret locally: the access key id alone says who sent a request. */
const LOCAL_SECRET_ACCESS_KEY = 'local';

/** The static credentials of one function's AWS clients. */
export function functionCredentials(fn: StackFunctionId): { accessKeyId: string; secretAccessKey: string } {
  return { accessKeyId: FUNCTION_CONSTRUCT_IDS[fn], secretAccessKey: LOCAL_SECRET_ACCESS_KEY };
}
