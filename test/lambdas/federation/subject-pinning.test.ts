import { checkCondition } from '../../../lambdas/federation/condition';
import { isTrueForRandomSubject } from '../../../lambdas/federation/federation-validation';
import { namesAnOwner } from '../../../lambdas/federation/subject-pinning';

/** The shared-issuer rule's judgement of a condition: does it constrain `subject`, not just read it. */
describe('pinsSubject', () => {
  it.each([
    'subject == "repo:acme/api:ref:refs/heads/main"',
    '"repo:acme/api:ref:refs/heads/main" == subject',
    'subject in ["repo:acme/api:ref:refs/heads/main"]',
    'subject.startsWith("repo:acme/")',
    'subject.startsWith("organization:acme:")',
    '"deploy" in scopes && (token_type == "" && subject.startsWith("repo:acme/api:"))',
  ])('pins: %s', (source) => {
    expect(checkCondition(source).pinsSubject).toBe(true);
  });

  it.each([
    'subject.size() >= 0',
    'subject == subject',
    'true || subject == "x"',
    'subject == "x" || subject.size() > 0',
    'subject != "repo:acme/api:ref:refs/heads/main"',
    '!(subject != "repo:acme/api:ref:refs/heads/main")',
    'subject.startsWith("repo:")',
    'subject.startsWith("repo:acme")',
    'subject.startsWith(token_type)',
    'subject.contains("repo:acme/")',
    'subject.endsWith(":ref:refs/heads/main")',
    'subject in []',
    'subject in ["repo:acme/api", token_type]',
    'subject in audience',
    '[subject].exists(s, s == "repo:acme/api:ref:refs/heads/main")',
    'audience.exists(subject, subject == "x")',
  ])('does not pin: %s', (source) => {
    expect(checkCondition(source).pinsSubject).toBe(false);
  });

  it.each([
    ['repo:acme/', true],
    ['repo:acme/api:ref:', true],
    ['project_path:acme/', true],
    ['organization:acme:', true],
    ['repo:', false],
    ['repo:/', false],
    ['repo:acme', false],
    ['repo', false],
    ['acme/', false],
  ])('names an owner: %s → %s', (prefix, expected) => {
    expect(namesAnOwner(prefix)).toBe(expected);
  });
});

describe('isTrueForRandomSubject', () => {
  it('is true for a condition that lets any subject through, false for one that pins it or fails', () => {
    expect(isTrueForRandomSubject('true || subject == "x"', 'aud')).toBe(true);
    expect(isTrueForRandomSubject('subject.startsWith("repo:")', 'aud')).toBe(true);
    expect(isTrueForRandomSubject('subject.startsWith("repo:acme/")', 'aud')).toBe(false);
    expect(isTrueForRandomSubject('"aud" in audience && subject == "repo:acme/x"', 'aud')).toBe(false);
    expect(isTrueForRandomSubject('scopes[3] == "x"', 'aud')).toBe(false);
  });
});
