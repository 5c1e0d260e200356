import { pathId } from '../../http/ids';
import { jsonBody } from '../../http/request';
import { json } from '../../http/responses';
import type { ISSUER_ROUTES } from '../routes/issuers';
import { orgOf, type Operations } from '../operation';
import { issuerView } from '../views';

const issuerId = (params: Record<string, string>) => pathId(params, 'id', 'uuid', 'Issuer');

/** The federation service validates issuer input itself: the operator CLI hands it the same bodies. */
export const ISSUER_OPERATIONS: Operations<typeof ISSUER_ROUTES> = {
  listWorkloadIdentityIssuers: async ({ principal, deps }) => {
    const issuers = await deps.federation.listIssuers(orgOf(principal));
    return json(200, { data: issuers.map(issuerView), total_count: issuers.length });
  },
  createIssuer: async ({ principal, event, deps }) => json(201, { data: issuerView(await deps.federation.createIssuer(orgOf(principal), jsonBody(event))) }),
  getIssuer: async ({ principal, params, deps }) => json(200, { data: issuerView(await deps.federation.getIssuer(orgOf(principal), issuerId(params))) }),
  updateIssuer: async ({ principal, event, params, deps }) =>
    json(200, { data: issuerView(await deps.federation.updateIssuer(orgOf(principal), issuerId(params), jsonBody(event))) }),
  deleteIssuer: async ({ principal, params, deps }) => {
    await deps.federation.deleteIssuer(orgOf(principal), issuerId(params));
    return json(200, { deleted: true });
  },
};
