/**
 * modelgate as a library for a CDK app of one's own: the `Modelgate` construct (one instance of
 * the service, with typed props mirroring every `modelgate:*` setting), the stack and app the
 * CLI deploys, and the settings' defaults and checks.
 */
export { Modelgate, type ModelgateProps } from './modelgate';
export { ModelgateStack, type ModelgateStackProps } from './modelgate-stack';
export { buildModelgateApp, type ModelgateAppOptions } from './app';
export { DEFAULT_SETTINGS, SettingsError, type ModelgateSettings } from './settings';
export { CustomDomain, type CustomDomainProps } from './constructs/custom-domain';
