import { apiHandler } from '../http/middleware';
import { json } from '../http/responses';
import { publishedKeys } from '../oauth/jwks';
import { buildDependencies } from './dependencies';

const deps = buildDependencies(process.env, ['keys']);

/** SPEC 4.6. Caches may keep the set briefly: a new key is published well before it signs. */
export const handler = apiHandler(async () =>
  json(200, publishedKeys(await deps.signingKeys.list(), deps.clock.now(), deps.config.accessTokenMaxLifetimeSeconds), {
    'Cache-Control': 'public, max-age=300',
  }),
);
