import { readFileSync } from 'node:fs';
import { loadSeedSources, planCatalogImport, readCatalogFile, type ImportProblem } from '../catalog-import';
import type { CommandSpec } from '../command';
import { OperationError, UsageError } from '../errors';
import { plural, respond, table } from '../format';

function rejected(file: string, problems: readonly ImportProblem[]): OperationError {
  return new OperationError(
    `${file} was not imported (${plural(problems.length, 'problem')}); nothing was written:`,
    problems.map((problem) => `  ${problem.model}: ${problem.message}`),
  );
}

function readJsonFile(file: string): unknown {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    throw new UsageError(`cannot read ${file}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
  }
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new OperationError(`${file} is not valid JSON: ${(error as Error).message}`);
  }
}

/** `catalog import`, `catalog set-usage` and `catalog list`: the model catalog. */
export const catalogCommands: CommandSpec[] = [
  {
    group: 'catalog',
    name: 'import',
    summary: 'Import models into the catalog from a JSON file.',
    description: [
      'The file is either the public shape {"data": [models]} (like data/catalog-snapshot.json) or an array of ' +
        'catalog entries [{"model", "endpoints", "popularity", "weeklyTokens"}].',
      'Every model is checked first (required fields, pricing); one problem rejects the whole file and nothing is written.',
      'A model without endpoints in the file (public shape, or "endpoints" absent or empty) keeps its stored endpoints ' +
        'and usage figures when it is already in the catalog; a new one gets demo endpoints and figures derived ' +
        'from data/endpoints-excerpt.json and data/model-stats.json (demo data, not real provider policy).',
      'Models take the order of the file. Stored models absent from the file stay, unless --replace.',
    ],
    args: [{ name: 'file', help: 'path of the JSON file' }],
    options: {
      replace: { type: 'boolean', help: 'remove stored models that are absent from the file' },
    },
    parse(input) {
      const file = input.arg('file');
      const replace = input.flag('replace');
      // The whole file is checked before the catalog is even read.
      const { items, problems } = readCatalogFile(readJsonFile(file));
      if (problems.length > 0) throw rejected(file, problems);
      return async (ctx) => {
        const stored = await ctx.catalog.load();
        const { plan, problems: planProblems } = planCatalogImport(items, stored.entries, ctx.seedSources ?? (() => loadSeedSources()));
        if (planProblems.length > 0) throw rejected(file, planProblems);

        await ctx.catalog.putEntries(plan.entries);
        const removed = replace ? plan.absent : [];
        if (removed.length > 0) await ctx.catalog.remove(removed);

        const json = {
          imported: plan.entries.length,
          added: plan.added,
          updated: plan.updated,
          endpoints: { from_file: plan.endpoints.fromFile, kept: plan.endpoints.kept, derived: plan.endpoints.derived },
          removed,
          left_in_place: replace ? [] : plan.absent,
        };
        respond(ctx, input, json, () => [
          `Imported ${plural(plan.entries.length, 'model')} from ${file}: ${plan.added} new, ${plan.updated} updated.`,
          `Endpoints: ${plan.endpoints.fromFile} from the file, ${plan.endpoints.kept} kept from the catalog, ${plan.endpoints.derived} derived (demo data).`,
          replace
            ? `Removed ${plural(removed.length, 'model')} absent from the file.`
            : `Left ${plural(plan.absent.length, 'stored model')} absent from the file in place (--replace removes them).`,
        ]);
      };
    },
  },
  {
    group: 'catalog',
    name: 'set-usage',
    summary: "Set a model's usage figures.",
    description: ['The most-popular sort reads popularity, the top-weekly sort weekly tokens.'],
    args: [{ name: 'model-id', help: 'model id, e.g. anthropic/claude-sonnet-4.5' }],
    options: {
      popularity: { type: 'string', value: 'N', help: 'requests in the recent window' },
      'weekly-tokens': { type: 'string', value: 'N', help: 'tokens processed in the last week' },
    },
    parse(input) {
      const modelId = input.arg('model-id');
      const popularity = input.integer('popularity');
      const weeklyTokens = input.integer('weekly-tokens');
      if (popularity === undefined && weeklyTokens === undefined) {
        throw new UsageError('nothing to change: give --popularity or --weekly-tokens');
      }
      return async (ctx) => {
        if (!(await ctx.catalog.setUsage(modelId, { popularity, weeklyTokens }))) {
          throw new OperationError(`Model ${modelId} not found in the catalog`);
        }
        const changes = [
          ...(popularity === undefined ? [] : [`popularity ${popularity}`]),
          ...(weeklyTokens === undefined ? [] : [`weekly tokens ${weeklyTokens}`]),
        ];
        respond(ctx, input, { model: modelId, popularity, weekly_tokens: weeklyTokens }, () => [
          `Updated ${modelId}: ${changes.join(', ')}.`,
        ]);
      };
    },
  },
  {
    group: 'catalog',
    name: 'list',
    summary: 'List the catalog in its default order.',
    description: ['One line per model: id, number of endpoints, usage figures.'],
    options: {
      limit: { type: 'string', value: 'N', help: 'print only the first N models' },
    },
    parse(input) {
      const limit = input.integer('limit', 1);
      return async (ctx) => {
        const { entries } = await ctx.catalog.load();
        const shown = limit === undefined ? entries : entries.slice(0, limit);
        const json = {
          data: shown.map((e) => ({ id: e.model.id, endpoints: e.endpoints.length, popularity: e.popularity, weekly_tokens: e.weeklyTokens })),
          total_count: entries.length,
        };
        respond(ctx, input, json, () =>
          entries.length === 0
            ? ['The catalog is empty.']
            : [
                ...table(
                  ['ID', 'ENDPOINTS', 'POPULARITY', 'WEEKLY TOKENS'],
                  shown.map((e) => [e.model.id, String(e.endpoints.length), String(e.popularity), String(e.weeklyTokens)]),
                  [1, 2, 3],
                ),
                shown.length < entries.length ? `${shown.length} of ${plural(entries.length, 'model')}` : plural(entries.length, 'model'),
              ],
        );
      };
    },
  },
];
