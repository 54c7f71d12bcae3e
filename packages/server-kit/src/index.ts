export {
  createDelegationAssertions,
  DELEGATION_ALG,
  DELEGATION_LIFETIME_SECONDS,
  DELEGATION_TYP,
  type Delegation,
  type DelegationAssertions,
  type DelegationAssertionsOptions,
  type DelegationSigningKey,
  type KeptAssertion,
  type KeptAssertions,
  readActiveDelegationKey,
} from './delegation/delegation-assertions.js';
export { booleanFlag, commonEnvShape, httpServerEnvShape, parseEnv, port } from './env.js';
export { checkReadiness, healthRoutes, type ReadinessDeps } from './health.js';
export {
  type ClientErrorBody,
  closeServer,
  DEFAULT_SERVER_TIMEOUTS,
  errorMessageBody,
  listen,
  type ServerTimeouts,
  serverTimeouts,
} from './listen.js';
export { createLogger, type Logger } from './logger.js';
export {
  Counter,
  createHttpMetrics,
  createMetricsRegistry,
  createPoolMetrics,
  createQueueMetrics,
  createRedisMetrics,
  FastCounter,
  FastHistogram,
  Gauge,
  Histogram,
  type HistogramSeries,
  type HttpMetrics,
  JOB_BUCKETS,
  LATENCY_BUCKETS,
  type MetricsServer,
  metricsEnvShape,
  type PoolMetrics,
  type QueueLike,
  type RedisMetrics,
  Registry,
  setRejectReason,
  setRouteTemplate,
  startMetricsServer,
} from './metrics.js';
export {
  createOutageMonitor,
  type Dependency,
  dependencyOutageOf,
  OUTAGE_RETRY_AFTER_SECONDS,
  type OutageMonitor,
  outageMonitorOf,
  requestRedisOptions,
} from './outage.js';
export { type PeriodicTask, startPeriodic } from './periodic.js';
export {
  type NamedSchema,
  nameRequest,
  type OpenApiOptions,
  openApiPath,
  openApiPaths,
  type ParameterDoc,
  type RouteAccess,
  type RouteBody,
  type RouteHandlers,
  type RouteMethod,
  type RouteResponse,
  type RouteSpec,
  registerRoutes,
} from './route-table.js';
export { type Service, type ServiceEnv, startService } from './service.js';
export { onShutdown } from './shutdown.js';
export {
  annotateSpan,
  extractTraceContext,
  inJobSpan,
  injectTraceContext,
  inSpan,
  startTracing,
  type TraceCarrier,
  type Tracing,
  type TracingSettings,
  traceLogFields,
  traceRequests,
  tracingEnabled,
  tracingEnvShape,
  tracingSettings,
  withTraceHeaders,
} from './tracing.js';
