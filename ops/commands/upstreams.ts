import { checkUpstreams, probeUpstreams } from '../../lambdas/inference/upstream-check';
import { DEVELOPMENT_PROVIDER } from '../../lambdas/settings';
import { toErrorBody } from '../../lambdas/http/api-errors';
import type { CommandSpec } from '../command';
import { OperationError } from '../errors';
import { orDash, plural, respond, table } from '../format';

/** `upstreams check`: which catalog endpoints the inference upstreams can serve (docs/providers.md). */
export const upstreamsCommands: CommandSpec[] = [
  {
    group: 'upstreams',
    name: 'check',
    summary: 'List each catalog endpoint: routable, or why not (no upstream, no model id, no key).',
    description: [
      'Reads the inference upstreams as the inference function reads them: locally what the running service',
      'published in runtime.json, on a deployed stack INFERENCE_UPSTREAMS (the function\'s environment variable)',
      'with the keys of the secret PROVIDER_CREDENTIALS_SECRET_ARN names. Endpoints whose provider no entry',
      'serves answer 503; add "*": "development-echo" to serve the rest with the development provider.',
      'With --probe, sends a request of one token to each entry, through its first routable endpoint (of the',
      '--model models when given), and reports the status and latency; it bills what a one-token completion costs.',
    ],
    options: {
      model: { type: 'string', value: 'id', list: true, help: 'check only these catalog models' },
      probe: { type: 'boolean', help: 'send a one-token request to each configured upstream' },
      unroutable: { type: 'boolean', help: 'list only the endpoints that cannot be served' },
    },
    parse(input) {
      const probe = input.flag('probe');
      const onlyUnroutable = input.flag('unroutable');
      const models = input.list('model');
      return async (ctx) => {
        if (!ctx.upstreams) throw new OperationError('this target names no upstreams: set INFERENCE_UPSTREAMS as the inference function has it');
        const catalog = (await ctx.catalog.load()).entries;
        const entries = models ? catalog.filter((entry) => models.includes(entry.model.id)) : catalog;
        const unknown = (models ?? []).filter((id) => !catalog.some((entry) => entry.model.id === id));
        if (unknown.length > 0) throw new OperationError(`not in the catalog: ${unknown.join(', ')}`);
        const rows = await checkUpstreams(entries, ctx.upstreams.targets, ctx.upstreams.credentials, DEVELOPMENT_PROVIDER);
        // Each probe's status is what a completion would answer: 200, or its failure's (the API's error mapping).
        const probes = probe
          ? (await probeUpstreams(rows, entries, ctx.upstreams.options(), () => performance.now())).map(({ error, ...rest }) => ({
              ...rest,
              status: error === null ? 200 : toErrorBody(error).status,
              error: error?.message ?? null,
            }))
          : undefined;
        const shown = onlyUnroutable ? rows.filter((row) => row.problem !== null) : rows;
        const routable = rows.filter((row) => row.problem === null).length;
        const json = { data: shown, routable, total_count: rows.length, ...(probes ? { probes } : {}) };
        respond(ctx, input, json, () => [
          ...table(
            ['MODEL', 'PROVIDER', 'ENTRY', 'API', 'MODEL ID', 'ROUTABLE'],
            shown.map((row) => [row.model, row.tag, orDash(row.entry), orDash(row.api), orDash(row.modelId), row.problem === null ? 'yes' : `no: ${row.problem}`]),
          ),
          `${routable} of ${plural(rows.length, 'endpoint')} routable`,
          ...(probes
            ? ['', ...table(['ENTRY', 'THROUGH', 'STATUS', 'LATENCY MS', 'ERROR'], probes.map((p) => [p.entry, `${p.model} (${p.tag})`, String(p.status), String(p.latencyMs), orDash(p.error)]), [2, 3])]
            : []),
        ]);
      };
    },
  },
];
