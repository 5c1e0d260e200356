import { pathId } from '../../ids';
import type { ISSUER_ROUTES } from '../routes/issuers';
import { orgOf, type Operations } from '../operation';
import { issuerView } from '../views';

const issuerId = (params: Record<string, string>) => pathId(params, 'id', 'uuid', 'Issuer');

/** The federation service also validates issuer bodies by their schema: the operator CLI hands it bodies too. */
export const ISSUER_OPERATIONS: Operations<typeof ISSUER_ROUTES> = {
  listWorkloadIdentityIssuers: async ({ principal, deps }) => {
    const issuers = await deps.federation.listIssuers(orgOf(principal));
    return { data: issuers.map(issuerView), total_count: issuers.length };
  },
  createIssuer: async ({ principal, body, deps }) => ({ data: issuerView(await deps.federation.createIssuer(orgOf(principal), body)) }),
  getIssuer: async ({ principal, params, deps }) => ({ data: issuerView(await deps.federation.getIssuer(orgOf(principal), issuerId(params))) }),
  updateIssuer: async ({ principal, body, params, deps }) =>
    ({ data: issuerView(await deps.federation.updateIssuer(orgOf(principal), issuerId(params), body)) }),
  deleteIssuer: async ({ principal, params, deps }) => {
    await deps.federation.deleteIssuer(orgOf(principal), issuerId(params));
    return { deleted: true };
  },
};
