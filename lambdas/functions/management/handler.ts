import type { FunctionRequirements } from '../../config';
import { apiHandler } from '../../http/middleware';
import { createManagementApi, type ManagementDeps } from '../../management/management-api';
import type { Telemetry } from '../../observability/telemetry';
import { routesOf } from '../../routes';

/**
 * Keys, workspaces and guardrails live in the keys table; issuers, policies and exchange
 * events in the policies table; what keys spent, in the usage table. The policy tester counts
 * against the token endpoint's per-address counters in the rate counters table.
 */
export const MANAGEMENT_FUNCTION = {
  tables: ['keys', 'policies', 'usage', 'rateCounters'],
  // Access tokens are verified against the API base URL (docs/reference.md#access-tokens), their DPoP proofs on any
  // hostname the deployment serves; the policy tester shares the token endpoint's budget.
  settings: ['apiBaseUrl', 'accessTokenMaxLifetimeSeconds', 'regionalHostnames', 'exchangeRateLimit', 'exchangeRateWindowSeconds', 'corsAllowedOrigins'],
} as const satisfies FunctionRequirements;

/** What the management handler uses: its operations' dependencies, and what the API wrapper adds to every answer. */
export interface ManagementHandlerDeps extends ManagementDeps {
  /** Named by the challenge of every 401 (RFC 9728 §5.1). */
  resourceMetadataUrl: string;
  corsAllowedOrigins: readonly string[];
  telemetry: Telemetry;
}

/** The management API: `/keys`, `/key`, `/activity`, `/workspaces`, `/guardrails`, `/workload-identity/*`. */
export function createManagementHandler(deps: ManagementHandlerDeps) {
  const { resourceMetadataUrl, corsAllowedOrigins } = deps;
  return apiHandler(createManagementApi(routesOf('management'), deps), deps.telemetry, { resourceMetadataUrl, corsAllowedOrigins });
}
