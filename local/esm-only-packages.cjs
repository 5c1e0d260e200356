// Lets the CommonJS build of the project load ESM-only packages under tsx: @middy/* export only
// an "import" condition, so require() cannot resolve them by name. This resolves them to their
// entry file, which Node (>= 20.19) loads through require(esm). Lambda bundles need none of this.
const Module = require('node:module');
const path = require('node:path');

const ESM_ONLY = /^@middy\/[a-z0-9-]+$/;
const nodeModules = path.join(__dirname, '..', 'node_modules');
const resolveFilename = Module._resolveFilename;

Module._resolveFilename = function resolveEsmOnly(request, ...rest) {
  if (ESM_ONLY.test(request)) return path.join(nodeModules, request, 'index.js');
  return resolveFilename.call(this, request, ...rest);
};
