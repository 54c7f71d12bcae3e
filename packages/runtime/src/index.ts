// @pkgreg/runtime: where an admitted call runs (the `Runtime` seam and its local implementation on our
// memory and tasks) and both ends' shared parts of the tunnel (envelope, wire form, receiver, connect
// credential). Used by the edge (apps/mcp-edge) and by the local runtime users run (apps/local-runtime).

export {
  createLocalRuntime,
  type LocalRuntime,
  type LocalRuntimeOptions,
  type RuntimeSettings,
} from './local-runtime.js';
export type { Caller, Runtime } from './runtime.js';
export {
  CONNECT_AUDIENCE,
  CONNECT_TOKEN_LIFETIME_SECONDS,
  signConnectToken,
  verifyConnectToken,
} from './tunnel/connect-token.js';
export {
  bodySha256,
  ENVELOPE_HEADER,
  MAX_ENVELOPE_LIFETIME_SECONDS,
  signEnvelope,
  verifyEnvelope,
} from './tunnel/envelope.js';
export {
  type ForwardedCall,
  type ForwardReply,
  ForwardReplySchema,
  fromReply,
  parseFrame,
  TUNNEL_CONNECT_PATH,
  type TunnelCallFrame,
  TunnelCallFrameSchema,
  type TunnelReplyFrame,
  TunnelReplyFrameSchema,
} from './tunnel/forwarded-call.js';
export { createDbNonceStore, type NonceStore } from './tunnel/nonce-store.js';
export {
  createTunnelReceiver,
  type TunnelReceiver,
  type TunnelReceiverDeps,
  tunnelReceiverRoutes,
} from './tunnel/receiver.js';
