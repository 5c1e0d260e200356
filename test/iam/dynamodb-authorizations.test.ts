import { dynamoDbAuthorizations } from '../support/iam/dynamodb-authorizations';

const ENV = { account: '123456789012', region: 'us-east-1' };
const KEYS = 'arn:aws:dynamodb:us-east-1:123456789012:table/modelgate-keys';
const POLICIES = 'arn:aws:dynamodb:us-east-1:123456789012:table/modelgate-policies';

/** What IAM is asked for each DynamoDB request, as DynamoDB asks it (wire operation and body). */
describe('dynamoDbAuthorizations', () => {
  it('sets dynamodb:LeadingKeys to the partition key of the item a GetItem, PutItem, UpdateItem or DeleteItem names', () => {
    expect(dynamoDbAuthorizations('GetItem', { TableName: 'modelgate-keys', Key: { pk: { S: 'SIGNING_KEY' }, sk: { S: 'kid-1' } } }, ENV)).toEqual([
      { action: 'dynamodb:GetItem', resource: KEYS, context: { 'dynamodb:LeadingKeys': ['SIGNING_KEY'] } },
    ]);
    expect(dynamoDbAuthorizations('PutItem', { TableName: 'modelgate-policies', Item: { pk: { S: 'EVENT#org' }, sk: { S: 'e1' }, n: { N: '1' } } }, ENV)).toEqual([
      { action: 'dynamodb:PutItem', resource: POLICIES, context: { 'dynamodb:LeadingKeys': ['EVENT#org'] } },
    ]);
    expect(dynamoDbAuthorizations('UpdateItem', { TableName: 'modelgate-rate-counters', Key: { pk: { S: 'RATE#1.2.3.4' } } }, ENV)).toEqual([
      { action: 'dynamodb:UpdateItem', resource: 'arn:aws:dynamodb:us-east-1:123456789012:table/modelgate-rate-counters', context: { 'dynamodb:LeadingKeys': ['RATE#1.2.3.4'] } },
    ]);
  });

  it("takes a Query's leading key from the key condition's equality on the partition key, through name and value placeholders", () => {
    const query = {
      TableName: 'modelgate-keys',
      KeyConditionExpression: '#pk = :pk AND begins_with(#sk, :prefix)',
      ExpressionAttributeNames: { '#pk': 'pk', '#sk': 'sk' },
      ExpressionAttributeValues: { ':pk': { S: 'SIGNING_KEY' }, ':prefix': { S: 'KEY#' } },
    };
    expect(dynamoDbAuthorizations('Query', query, ENV)).toEqual([{ action: 'dynamodb:Query', resource: KEYS, context: { 'dynamodb:LeadingKeys': ['SIGNING_KEY'] } }]);
    // Written the other way round, and with a BETWEEN on the sort key.
    const reversed = { ...query, KeyConditionExpression: ':pk = pk AND sk BETWEEN :a AND :b', ExpressionAttributeValues: { ':pk': { S: 'ORG#1' } } };
    expect(dynamoDbAuthorizations('Query', reversed, ENV)[0]!.context).toEqual({ 'dynamodb:LeadingKeys': ['ORG#1'] });
    // The legacy KeyConditions parameter.
    const legacy = { TableName: 'modelgate-keys', KeyConditions: { pk: { ComparisonOperator: 'EQ', AttributeValueList: [{ S: 'ORG#2' }] } } };
    expect(dynamoDbAuthorizations('Query', legacy, ENV)[0]!.context).toEqual({ 'dynamodb:LeadingKeys': ['ORG#2'] });
  });

  it('targets <table>/index/<name> for an index Query, with the index partition key as the leading key', () => {
    const query = {
      TableName: 'modelgate-keys',
      IndexName: 'byOrganization',
      KeyConditionExpression: 'gsi1pk = :org',
      ExpressionAttributeValues: { ':org': { S: 'ORG#42' } },
    };
    expect(dynamoDbAuthorizations('Query', query, ENV)).toEqual([
      { action: 'dynamodb:Query', resource: `${KEYS}/index/byOrganization`, context: { 'dynamodb:LeadingKeys': ['ORG#42'] } },
    ]);
  });

  it('asks one authorization per table of a batch, with the distinct partition keys of that table only', () => {
    const batch = {
      RequestItems: {
        'modelgate-keys': { Keys: [{ pk: { S: 'SIGNING_KEY' }, sk: { S: 'a' } }, { pk: { S: 'SIGNING_KEY' }, sk: { S: 'b' } }, { pk: { S: 'KEY#x' }, sk: { S: 'c' } }] },
        'modelgate-policies': { Keys: [{ pk: { S: 'POLICY#p' }, sk: { S: 'd' } }] },
      },
    };
    expect(dynamoDbAuthorizations('BatchGetItem', batch, ENV)).toEqual([
      { action: 'dynamodb:BatchGetItem', resource: KEYS, context: { 'dynamodb:LeadingKeys': ['SIGNING_KEY', 'KEY#x'] } },
      { action: 'dynamodb:BatchGetItem', resource: POLICIES, context: { 'dynamodb:LeadingKeys': ['POLICY#p'] } },
    ]);
    const writes = {
      RequestItems: { 'modelgate-policies': [{ PutRequest: { Item: { pk: { S: 'EVENT#o' }, sk: { S: '1' } } } }, { DeleteRequest: { Key: { pk: { S: 'JTI#i' }, sk: { S: '2' } } } }] },
    };
    expect(dynamoDbAuthorizations('BatchWriteItem', writes, ENV)).toEqual([
      { action: 'dynamodb:BatchWriteItem', resource: POLICIES, context: { 'dynamodb:LeadingKeys': ['EVENT#o', 'JTI#i'] } },
    ]);
  });

  it('sets no leading key for a Scan, which names no partition', () => {
    expect(dynamoDbAuthorizations('Scan', { TableName: 'modelgate-keys', IndexName: 'byOrganization' }, ENV)).toEqual([
      { action: 'dynamodb:Scan', resource: `${KEYS}/index/byOrganization`, context: {} },
    ]);
  });
});
