/**
 * The token endpoint's form for one workload JWT (RFC 8693 §2.1): the token-exchange grant, a
 * JWT subject token and the federation policy it is exchanged under (docs/reference.md#the-token-exchange). Send it as
 * `application/x-www-form-urlencoded` (`new URLSearchParams(form)`).
 */
export function exchangeForm(subjectToken: string, policyId: string): Record<string, string> {
  return {
    grant_type: 'urn:ietf:params:oauth:grant-type:token-exchange',
    subject_token_type: 'urn:ietf:params:oauth:token-type:jwt',
    subject_token: subjectToken,
    federation_policy_id: policyId,
  };
}
