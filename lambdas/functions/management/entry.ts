/** Lambda entry of the management function; it reads as every entry does (catalog/entry.ts). */
import { systemClock } from '../../clock';
import { createIssuerKeySource } from '../../federation/issuer-keys';
import { lambdaEntry } from '../lambda-entry';
import { managementDependencies } from './dependencies';
import { MANAGEMENT_FUNCTION, createManagementHandler } from './handler';

const { config, context } = lambdaEntry('management', MANAGEMENT_FUNCTION);

/** The management function's Lambda handler. */
export const handler = createManagementHandler(
  managementDependencies(context, {
    // allowLoopbackIssuers is false on every deployed stage: loadConfig refuses the flag outside the local one.
    ...config,
    issuerKeys: createIssuerKeySource({ clock: systemClock, allowLoopback: config.allowLoopbackIssuers }),
  }),
);
