/**
 * Lambda entry of the catalog function. Every entry in this folder is a composition root
 * and reads the same way:
 *   1. configuration from the environment, naming exactly the tables and settings the
 *      function needs (a missing one fails the cold start, not a request), each setting under
 *      its name of the table (lambdas/settings.ts), which the dependencies take as they are;
 *   2. telemetry, then the AWS clients it uses, each built once and traced (steps 1 and 2 are
 *      `lambdaEntry`, lambda-entry.ts, for every function that reads DynamoDB);
 *   3. the function's dependencies (dependencies.ts beside this file), which the local
 *      runtime (local/runtime.ts) builds the same way over local clients;
 *   4. its handler factory (handler.ts beside this file).
 * Nothing else belongs here: no logic, no other module's wiring.
 */
import { USAGE_FIGURES_SECONDS } from '../../usage/usage';
import { lambdaEntry } from '../lambda-entry';
import { catalogDependencies } from './dependencies';
import { CATALOG_FUNCTION, createCatalogHandler } from './handler';

const { config, context } = lambdaEntry('catalog', CATALOG_FUNCTION);

export const handler = createCatalogHandler(catalogDependencies(context, { ...config, usageFiguresSeconds: USAGE_FIGURES_SECONDS }));
