/**
 * The AWS SDK for JavaScript warns, once per process on Node.js before 22, that its releases
 * after the first week of January 2027 will require Node.js 22. The functions run Node.js 24
 * in Lambda (`lib/constructs/service-function.ts`); on a developer's machine the notice is
 * about the local Node.js, repeated at every `npm start`, `npm run ops` and `npm run demo`,
 * and says nothing about the service. The local entry points call this first; a variable the
 * user set is kept.
 */
export function quietSdkNodeNotice(env: NodeJS.ProcessEnv = process.env): void {
  env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
}
