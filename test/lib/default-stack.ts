import { App } from 'aws-cdk-lib';
import type { Template } from 'aws-cdk-lib/assertions';
import type { TableId } from '../../lambdas/aws/table-schemas';
import { readSettingsFromContext } from '../../lib/settings';
import { FUNCTION_CONSTRUCT_IDS } from '../../local/function-principals';
import { cdkJsonContext, logicalIdOf } from './template-helpers';

/** Construct id prefix of each function, as the stack names them. */
export const FUNCTION_PREFIX = FUNCTION_CONSTRUCT_IDS;

/** The settings cdk.json gives the stack `synthModelgate` synthesizes. */
export const settings = readSettingsFromContext(new App({ context: cdkJsonContext() }).node);

/** The logical id of a table of the schema module, as the stack's `Tables` construct names it. */
export const tableLogicalId = (template: Template, id: TableId): string =>
  logicalIdOf(template, 'AWS::DynamoDB::Table', `Tables${id[0]!.toUpperCase()}${id.slice(1)}Table`);
