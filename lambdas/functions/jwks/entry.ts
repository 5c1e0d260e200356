/** Lambda entry of the JWKS function; it reads as every entry does (catalog/entry.ts). */
import { lambdaEntry } from '../lambda-entry';
import { jwksDependencies } from './dependencies';
import { JWKS_FUNCTION, createJwksHandler } from './handler';

const { config, context } = lambdaEntry('jwks', JWKS_FUNCTION);

/** The JWKS function's Lambda handler. */
export const handler = createJwksHandler(jwksDependencies(context, config));
