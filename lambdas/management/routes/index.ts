import type { ACTIVITY_ROUTES } from './activity';
import type { CURRENT_KEY_ROUTES } from './current-key';
import type { EVENT_ROUTES } from './events';
import type { GENERATION_ROUTES } from './generations';
import type { GUARDRAIL_ROUTES, KEY_ASSIGNMENT_ROUTES } from './guardrails';
import type { ISSUER_ROUTES } from './issuers';
import type { KEY_ROUTES } from './keys';
import type { POLICY_ROUTES } from './policies';
import type { WORKSPACE_BUDGET_ROUTES } from './workspace-budgets';
import type { WORKSPACE_CHANGE_ROUTES, WORKSPACE_ROUTES } from './workspaces';

/** The declaration of a route the management function serves. */
export type ManagementRoute = (
  | typeof ACTIVITY_ROUTES
  | typeof CURRENT_KEY_ROUTES
  | typeof EVENT_ROUTES
  | typeof GENERATION_ROUTES
  | typeof GUARDRAIL_ROUTES
  | typeof KEY_ASSIGNMENT_ROUTES
  | typeof ISSUER_ROUTES
  | typeof KEY_ROUTES
  | typeof POLICY_ROUTES
  | typeof WORKSPACE_BUDGET_ROUTES
  | typeof WORKSPACE_CHANGE_ROUTES
  | typeof WORKSPACE_ROUTES
)[number];
