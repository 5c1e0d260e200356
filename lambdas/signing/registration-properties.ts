/**
 * The properties of the `Custom::SigningKeyRegistration` resource, named once: the construct
 * (lib/constructs/signing-key-registration.ts) sends them and the registrar reads them, so
 * the two cannot drift apart.
 */
export const SIGNING_KEY_REGISTRATION_PROPERTIES = {
  /** ARN of the KMS key whose public half becomes the active signing-key record. */
  signingKeyArn: 'SigningKeyArn',
} as const;
