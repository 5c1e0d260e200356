/** Lambda entry of the inference function; it reads as every entry does (catalog/entry.ts). */
import { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { randomId, systemClock } from '../../clock';
import { secretsManagerCredentials } from '../../aws/secrets-manager-credentials';
import { traced } from '../../observability/tracing';
import { USAGE_FIGURES_SECONDS } from '../../usage/usage';
import { lambdaEntry } from '../lambda-entry';
import { inferenceDependencies } from './dependencies';
import { INFERENCE_FUNCTION, createInferenceHandler } from './handler';

const { config, telemetry, context } = lambdaEntry('inference', INFERENCE_FUNCTION);

/** The inference function's Lambda handler, streaming its answers. */
export const handler = createInferenceHandler(
  inferenceDependencies(context, {
    ...config,
    usageFiguresSeconds: USAGE_FIGURES_SECONDS,
    credentials: secretsManagerCredentials(traced(telemetry, new SecretsManagerClient({})), config.providerCredentialsSecretArn, systemClock),
    newId: randomId,
    providers: { region: process.env.AWS_REGION },
  }),
);
