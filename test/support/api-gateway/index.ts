/** The API Gateway stand-in, built from the synthesized template. */

export { startApiGatewayStandIn, type ApiGatewayStandIn, type ApiGatewayStandInOptions, type GatewayRequestRecord } from './stand-in';
export { renderMockTemplate } from './mock-template';
