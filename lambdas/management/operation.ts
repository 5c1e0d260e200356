import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import type { Principal } from '../accounts/types';
import type { ManagementDeps } from './management-api';

/** What an operation of the management API gets once the caller may call it. */
export interface OperationRequest {
  /** The authenticated caller, with the access its route declares. */
  principal: Principal;
  event: APIGatewayProxyEvent;
  /** Path parameters, decoded. */
  params: Record<string, string>;
  deps: ManagementDeps;
}

/** The handler of one route: parse, call one domain function, format the reply (STYLE 1). */
export type Operation = (request: OperationRequest) => Promise<APIGatewayProxyResult>;

/** The handlers of a resource's routes, one per operation id its route file declares. */
export type Operations<Routes extends readonly { operationId: string }[]> = { readonly [Id in Routes[number]['operationId']]: Operation };

/** Every operation works on the caller's own organization only. */
export const orgOf = (principal: Principal): string => principal.organization.id;
