import type { Node } from 'constructs';
import { DEFAULT_SETTINGS, SETTINGS, SettingProblem, type SettingRow, type Settings } from '../lambdas/settings';

export { DEFAULT_SETTINGS };

/**
 * The deployment settings of one modelgate instance, as the CDK context (`modelgate:<name>` in
 * cdk.json or `-c`) and the `Modelgate` construct's props give them: the table of
 * lambdas/settings.ts, one row per setting with its environment variable, default and range.
 */
export type ModelgateSettings = Settings;

/** Settings the synth refuses: a value out of its range or form, or settings that do not go together. */
export class SettingsError extends Error {}

/** The context key of each setting, e.g. `modelgate:stageName`. */
export const contextKey = (name: keyof Settings): string => `modelgate:${name}`;

/** The context key that names an instance of the service: its stack and every physical name. */
export const INSTANCE_CONTEXT_KEY = contextKey('instance');
/** The instance's name when `modelgate:instance` is not given (`Modelgate`). */
export const DEFAULT_INSTANCE_NAME = DEFAULT_SETTINGS.instance;

/**
 * Reads every setting from the context once, applying defaults, and checks it. Values given on
 * the command line (`-c modelgate:wafTokenRateLimit=50`) arrive as strings, so numbers and maps
 * are also taken in their text form. An empty string is a setting left out.
 */
export function readSettingsFromContext(node: Node): Settings {
  const given = Object.fromEntries(
    Object.keys(SETTINGS).map((name) => {
      const value = node.tryGetContext(contextKey(name as keyof Settings)) as unknown;
      return [name, value === '' ? undefined : value];
    }),
  );
  const settings = validateSettings(given as Partial<Settings>);
  checkDomainSources(settings.domainName, { hostedZone: settings.hostedZoneId !== undefined, certificate: settings.certificateArn !== undefined });
  if ((settings.hostedZoneId === undefined) !== (settings.hostedZoneName === undefined)) {
    throw new SettingsError('modelgate:hostedZoneId and modelgate:hostedZoneName go together: give both or neither');
  }
  return settings;
}

/**
 * The settings given over the defaults for those left out (undefined), each read through its
 * row of the table: checked against its range and brought to its one form (trimmed maps of
 * lower-case hostnames, upper-case log level), frozen. The same ranges apply when a function
 * reads its environment at cold start (lambdas/config.ts), so a value the synth takes never
 * fails a cold start after deployment.
 */
export function validateSettings(given: Partial<Settings>): Settings {
  const settings: Record<string, unknown> = {};
  for (const [name, row] of Object.entries(SETTINGS) as [keyof Settings, SettingRow<unknown>][]) {
    const raw = given[name];
    try {
      settings[name] = raw === undefined ? row.default : row.kind.read(raw);
    } catch (error) {
      if (error instanceof SettingProblem) throw new SettingsError(`${contextKey(name)} ${error.message}`);
      throw error;
    }
  }
  return Object.freeze(settings) as unknown as Settings;
}

/**
 * A custom domain needs a hosted zone (a certificate and the DNS records are made there) or a
 * certificate, and neither means anything without the domain.
 */
export function checkDomainSources(domainName: string | undefined, given: { hostedZone: boolean; certificate: boolean }): void {
  if (domainName === undefined && (given.hostedZone || given.certificate)) {
    throw new SettingsError('modelgate:domainName must be set for a hosted zone or a certificate to be used');
  }
  if (domainName !== undefined && !given.hostedZone && !given.certificate) {
    throw new SettingsError(
      'modelgate:domainName needs a hosted zone (modelgate:hostedZoneId and modelgate:hostedZoneName: a certificate and DNS records are made in it) or modelgate:certificateArn (an existing certificate)',
    );
  }
}
