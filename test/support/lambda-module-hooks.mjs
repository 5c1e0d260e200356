/**
 * ES module resolution hooks of test/support/lambda-process-runner.mjs: an import from inside
 * the function package resolves only to the package's own files, node built-ins and the AWS
 * SDK v3, which is what the Lambda Node.js runtime makes available to it.
 */
import { isBuiltin } from 'node:module';
import { sep } from 'node:path';
import { fileURLToPath } from 'node:url';

let taskRoot = '';

export function initialize(data) {
  taskRoot = data.taskRoot;
}

export async function resolve(specifier, context, nextResolve) {
  const parent = context.parentURL?.startsWith('file:') ? fileURLToPath(context.parentURL) : '';
  const fromPackage = parent.startsWith(taskRoot + sep);
  const bare = !/^(\.{0,2}\/|file:|data:|node:)/.test(specifier);
  if (fromPackage && bare && !isBuiltin(specifier) && !specifier.startsWith('@aws-sdk/')) {
    throw Object.assign(
      new Error(`Cannot find package '${specifier}' imported from ${parent} (not in the function package, and the Lambda runtime provides only the AWS SDK)`),
      { code: 'ERR_MODULE_NOT_FOUND' },
    );
  }
  return nextResolve(specifier, context);
}
