import type { CommandSpec } from '../command';
import { catalogCommands } from './catalog';
import { copiesCommands } from './copies';
import { usageCommands } from './usage';
import { upstreamsCommands } from './upstreams';
import { issuerCommands, policyCommands } from './federation';
import { guardrailCommands } from './guardrail';
import { keyCommands } from './key';
import { orgCommands } from './org';
import { signingKeyCommands } from './signing-key';
import { userCommands } from './user';
import { workspaceCommands } from './workspace';

/** Command groups, in help order. */
export const GROUPS: readonly { name: string; summary: string; commands: readonly CommandSpec[] }[] = [
  { name: 'org', summary: 'organizations: plan, provider preferences, privacy', commands: orgCommands },
  { name: 'workspace', summary: "an organization's workspaces", commands: workspaceCommands },
  { name: 'user', summary: 'users, the owners of personal keys', commands: userCommands },
  { name: 'key', summary: 'API keys', commands: keyCommands },
  { name: 'guardrail', summary: 'guardrails on keys and workspaces', commands: guardrailCommands },
  { name: 'issuer', summary: 'workload identity: trusted identity providers', commands: issuerCommands },
  { name: 'policy', summary: 'workload identity: which tokens act as which key', commands: policyCommands },
  { name: 'catalog', summary: 'the model catalog', commands: catalogCommands },
  { name: 'signing-key', summary: 'the keys that sign access tokens', commands: signingKeyCommands },
  { name: 'usage', summary: 'usage records: fold closed days, rebuild the popularity figures', commands: usageCommands },
  { name: 'upstreams', summary: 'the inference upstreams: what each catalog endpoint is routed to', commands: upstreamsCommands },
  { name: 'copies', summary: 'the read copies of keys, organizations, workspaces and guardrails: check and repair', commands: copiesCommands },
];
