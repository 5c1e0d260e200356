import { DynamoOpenCompletions } from '../aws/dynamo-open-completions';
import type { FunctionContext } from './context';

/** The open completions, as the inference function keeps them and the rollup records those that died. */
export function openCompletionsOf(context: FunctionContext<'usage'>): DynamoOpenCompletions {
  const { documentClient, tables, openShards, random, writersSince } = context;
  return new DynamoOpenCompletions(documentClient, tables.usage, {
    ...(openShards === undefined ? {} : { shards: openShards }),
    ...(random ? { random } : {}),
    ...(writersSince ? { writersSince } : {}),
  });
}
