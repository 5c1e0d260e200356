/**
 * Lambda entry of the catalog function. Every entry in this folder is a composition root and
 * reads the same way (docs/architecture.md, "Functions, routes and grants"):
 *   1. configuration from the environment, naming exactly the tables and settings the function
 *      needs, so that a missing one fails the cold start, not a request;
 *   2. telemetry, then the AWS clients it uses, each built once and traced (steps 1 and 2 are
 *      `lambdaEntry`, lambda-entry.ts, for every function that reads DynamoDB);
 *   3. its dependencies (dependencies.ts), which the local runtime builds the same way;
 *   4. its handler factory (handler.ts).
 * Nothing else belongs here: no logic, no other module's wiring.
 */
import { USAGE_FIGURES_SECONDS } from '../../usage/usage';
import { lambdaEntry } from '../lambda-entry';
import { catalogDependencies } from './dependencies';
import { CATALOG_FUNCTION, createCatalogHandler } from './handler';

const { config, context } = lambdaEntry('catalog', CATALOG_FUNCTION);

/** The catalog function's Lambda handler. */
export const handler = createCatalogHandler(catalogDependencies(context, { ...config, usageFiguresSeconds: USAGE_FIGURES_SECONDS }));
