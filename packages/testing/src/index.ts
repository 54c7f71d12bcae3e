// @pkgreg/testing: local servers that speak the real protocols, for any package's tests (nothing of
// ours is mocked against them): an OIDC issuer with its JWKS and GitHub Actions' ID-token endpoint, an
// OpenID Connect identity provider for sign-in (panva's oidc-provider: authorization code with PKCE,
// automatic sign-in and consent) with `followRedirects` to walk its flow without a browser, a
// stand-in for GitHub's REST API (repositories, trees, blobs, tarballs, ETags, rate limits, account ids,
// user tokens and their permissions, renames) and its OAuth web flow with the user APIs a sign-in reads
// (profile, emails, organisation memberships), GitHub's webhook deliveries, an OpenAI-compatible
// embeddings endpoint, an OpenAI-compatible chat-completions stand-in for a model, an OTLP/HTTP receiver
// that collects traces, and the real registry-api (or another of our servers) started as a process.
// Beside them, the small helpers every suite needs once: a free port, waiting for background work,
// capturing what a logger wrote, and incompressible bytes that are the same on every run.

export {
  DEFAULT_CONCEPTS,
  type EmbeddingsBehaviour,
  type EmbeddingsServer,
  type EmbeddingsServerOptions,
  type SeenEmbeddingsRequest,
  startEmbeddingsServer,
} from './embeddings-server.js';
export {
  type FakeFile,
  FakeGitHub,
  type FakeOAuthApp,
  type FakeProfile,
  type FakeRepo,
  type FakeUser,
  type OAuthLoginChoice,
  type RateLimitScript,
  type RepoPermission,
  type SeenRequest,
} from './fake-github.js';
export {
  CookieJar,
  type FollowedRedirects,
  type FollowRedirectsOptions,
  followRedirects,
} from './follow-redirects.js';
export { freePort } from './free-port.js';
export {
  deepArray,
  faultsMode,
  fromSchema,
  fuzzAgent,
  fuzzRuns,
  HOSTILE_STRINGS,
  headerSafe,
  hostileJson,
  hostileString,
  type JsonSchema,
  openRawSocket,
  parseRawResponse,
  type RawRequest,
  type RawResponse,
  type RawSocket,
  type SchemaOptions,
  sendRaw,
  validish,
} from './fuzz.js';
export {
  type Delivery,
  deliverWebhook,
  pingEvent,
  pushEvent,
  signWebhook,
  type WebhookRepository,
} from './github-webhooks.js';
export { captureLogs, type LogCapture } from './log-capture.js';
export {
  type ModelAnswer,
  type ModelReply,
  type ModelRequest,
  type ModelStandIn,
  refineEachTitle,
  startModelStandIn,
} from './model-stand-in.js';
export {
  type ActionsClaims,
  type ActionsJobOptions,
  type ActionsRun,
  actionsClaims,
  type GitLabJob,
  gitlabClaims,
  type IssueOptions,
  type OidcIssuer,
  type SeenTokenRequest,
  startOidcIssuer,
} from './oidc-issuer.js';
export {
  type OidcLoginChoice,
  type OidcProvider,
  type OidcProviderClient,
  type OidcProviderOptions,
  type OidcProviderUser,
  type SeenOidcRequest,
  startOidcProvider,
} from './oidc-provider.js';
export {
  type AttributeValue,
  type OtlpReceiver,
  type ReceivedSpan,
  startOtlpReceiver,
} from './otlp-receiver.js';
export { pseudoRandomBytes } from './pseudo-random-bytes.js';
export { type RegistryProcess, type RegistryProcessOptions, startRegistry } from './registry-process.js';
export { type ServerProcess, type ServerProcessOptions, startServerProcess } from './server-process.js';
export { spansOfTrace } from './spans-of-trace.js';
export { until } from './until.js';
